//! Bounded snapshot history for scrubbing back and forking: worlds are cheap to clone.

use std::collections::VecDeque;

use super::world::World;

#[derive(Clone, Debug)]
pub struct History {
    capacity: usize,
    entries: VecDeque<(u64, World)>,
}

impl History {
    pub fn new(capacity: usize) -> Self {
        History {
            capacity: capacity.max(1),
            entries: VecDeque::new(),
        }
    }

    /// Records the world after a step; the oldest snapshot goes when full.
    pub fn push(&mut self, world: &World) {
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back((world.steps(), world.clone()));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The snapshot taken after step `step`, if still held.
    pub fn at(&self, step: u64) -> Option<&World> {
        self.entries
            .iter()
            .find(|(s, _)| *s == step)
            .map(|(_, w)| w)
    }

    /// A new world continuing from step `step`; later snapshots are dropped.
    pub fn fork(&mut self, step: u64) -> Option<World> {
        let pos = self.entries.iter().position(|(s, _)| *s == step)?;
        self.entries.truncate(pos + 1);
        self.entries.back().map(|(_, w)| w.clone())
    }

    pub fn steps(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|(s, _)| *s)
    }
}
