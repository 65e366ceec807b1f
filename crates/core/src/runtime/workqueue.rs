//! client-go's rate-limited work queue over simulated time.
//!
//! Semantics [client-go util/workqueue queue.go, delaying_queue.go, default_rate_limiters.go]:
//! a key already waiting is not added twice; a key added while it is being processed is marked
//! dirty and re-queued once when `done` is called; one key is never handed out twice at once;
//! `add_after` keeps the earliest ready time; `add_rate_limited` backs off per key
//! exponentially (5 ms doubling, capped at 1000 s) until `forget`.

use imbl::{OrdMap, OrdSet, Vector};
use serde::{Deserialize, Serialize};

use crate::api::ObjectKey;
use crate::time::SimTime;

/// client-go's `DefaultItemBasedRateLimiter` base delay.
pub const BACKOFF_BASE_MS: u64 = 5;
/// client-go's `DefaultItemBasedRateLimiter` maximum delay.
pub const BACKOFF_MAX_MS: u64 = 1_000_000;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkQueue {
    queue: Vector<ObjectKey>,
    dirty: OrdSet<ObjectKey>,
    processing: OrdSet<ObjectKey>,
    waiting: OrdMap<ObjectKey, SimTime>,
    waiting_by_time: OrdSet<(SimTime, ObjectKey)>,
    failures: OrdMap<ObjectKey, u32>,
}

impl WorkQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keys ready to be handed out.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Keys waiting for a later time.
    pub fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    pub fn ready_keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.queue.iter()
    }

    pub fn add(&mut self, key: ObjectKey) {
        if self.dirty.contains(&key) {
            return;
        }
        self.dirty.insert(key.clone());
        if self.processing.contains(&key) {
            return;
        }
        self.queue.push_back(key);
    }

    /// Adds `key` once `at` is reached; an earlier pending time wins.
    pub fn add_after(&mut self, key: ObjectKey, at: SimTime, now: SimTime) {
        if at <= now {
            self.add(key);
            return;
        }
        if let Some(existing) = self.waiting.get(&key) {
            if *existing <= at {
                return;
            }
            self.waiting_by_time.remove(&(*existing, key.clone()));
        }
        self.waiting.insert(key.clone(), at);
        self.waiting_by_time.insert((at, key));
    }

    /// The per-key exponential delay for the next retry, counting this failure.
    pub fn when(&mut self, key: &ObjectKey) -> u64 {
        let failures = self.failures.get(key).copied().unwrap_or(0);
        self.failures
            .insert(key.clone(), failures.saturating_add(1));
        backoff_ms(failures)
    }

    /// [`Self::when`] with another exponential limiter: `base` ms doubling, capped at `max`.
    pub fn when_limited(&mut self, key: &ObjectKey, base: u64, max: u64) -> u64 {
        let failures = self.failures.get(key).copied().unwrap_or(0);
        self.failures
            .insert(key.clone(), failures.saturating_add(1));
        if failures >= 40 {
            return max;
        }
        base.saturating_mul(1u64 << failures).min(max)
    }

    pub fn add_rate_limited(&mut self, key: ObjectKey, now: SimTime) {
        let delay = self.when(&key);
        self.add_after(key, now.plus_ms(delay), now);
    }

    pub fn num_requeues(&self, key: &ObjectKey) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    pub fn forget(&mut self, key: &ObjectKey) {
        self.failures.remove(key);
    }

    /// Hands out the next ready key and marks it as processing.
    pub fn get(&mut self) -> Option<ObjectKey> {
        let key = self.queue.pop_front()?;
        self.dirty.remove(&key);
        self.processing.insert(key.clone());
        Some(key)
    }

    pub fn done(&mut self, key: &ObjectKey) {
        self.processing.remove(key);
        if self.dirty.contains(key) {
            self.queue.push_back(key.clone());
        }
    }

    /// The earliest time a waiting key becomes ready.
    pub fn next_ready_at(&self) -> Option<SimTime> {
        self.waiting_by_time.get_min().map(|(t, _)| *t)
    }

    /// Moves every waiting key whose time has come into the queue.
    pub fn promote(&mut self, now: SimTime) {
        while let Some((t, key)) = self.waiting_by_time.get_min().cloned() {
            if t > now {
                break;
            }
            self.waiting_by_time.remove(&(t, key.clone()));
            self.waiting.remove(&key);
            self.add(key);
        }
    }
}

/// 5 ms × 2^failures, capped at 1000 s.
pub fn backoff_ms(failures: u32) -> u64 {
    if failures >= 20 {
        return BACKOFF_MAX_MS;
    }
    (BACKOFF_BASE_MS << failures).min(BACKOFF_MAX_MS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::GroupResource;

    fn key(n: &str) -> ObjectKey {
        ObjectKey::new(GroupResource::new("apps", "deployments"), "default", n)
    }

    #[test]
    fn a_key_already_waiting_is_not_added_twice() {
        let mut q = WorkQueue::new();
        q.add(key("a"));
        q.add(key("a"));
        q.add(key("b"));
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn a_key_added_while_processing_is_requeued_once_on_done() {
        let mut q = WorkQueue::new();
        q.add(key("a"));
        let k = q.get().unwrap();
        q.add(key("a"));
        q.add(key("a"));
        assert_eq!(q.len(), 0, "never handed out twice at once");
        q.done(&k);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get(), Some(key("a")));
    }

    #[test]
    fn the_earliest_add_after_wins() {
        let mut q = WorkQueue::new();
        q.add_after(key("a"), SimTime(500), SimTime(0));
        q.add_after(key("a"), SimTime(100), SimTime(0));
        q.add_after(key("a"), SimTime(900), SimTime(0));
        assert_eq!(q.next_ready_at(), Some(SimTime(100)));
        q.promote(SimTime(99));
        assert!(q.is_empty());
        q.promote(SimTime(100));
        assert_eq!(q.len(), 1);
        assert_eq!(q.next_ready_at(), None);
    }

    #[test]
    fn backoff_doubles_from_five_ms_and_caps_at_a_thousand_seconds() {
        let mut q = WorkQueue::new();
        let delays: Vec<u64> = (0..4).map(|_| q.when(&key("a"))).collect();
        assert_eq!(delays, vec![5, 10, 20, 40]);
        assert_eq!(backoff_ms(17), 655_360);
        assert_eq!(backoff_ms(18), 1_000_000);
        assert_eq!(backoff_ms(40), 1_000_000);
        q.forget(&key("a"));
        assert_eq!(q.when(&key("a")), 5);
    }
}
