//! `kubectl get -w` in the playground: after the first table, one row per change of a watched
//! object (its new state; a deleted object's last), in the order the changes were written, with
//! the column widths the first table set and widened as rows need (Go's tabwriter with
//! `RememberWidths`, which `kubectl get -w` prints through) [kubectl pkg/cmd/get/get.go
//! `watch`; go src/text/tabwriter `RememberWidths`]. Polled after each world step.

use std::collections::BTreeMap;

use crate::json::Value;

use crate::api::{GroupResource, ObjectKey, Selector};
use crate::engine::World;
use crate::rest::table::{self, IncludeObject};

use super::get::TableOptions;

const MIN_WIDTH: usize = 6;
const PADDING: usize = 3;

/// An open `get -w`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watch {
    pub gr: GroupResource,
    /// `None`: every namespace (`-A`), or a cluster-scoped resource.
    pub namespace: Option<String>,
    /// Only these names (`get -w deploy web`), or all.
    pub names: Vec<String>,
    pub selector: Option<String>,
    pub wide: bool,
    pub with_namespace: bool,
    pub with_kind: Option<String>,
    /// The objects seen, with their resourceVersions and last state.
    pub seen: BTreeMap<ObjectKey, (String, Value)>,
    /// The remembered column widths.
    pub widths: Vec<usize>,
    pub header_printed: bool,
    /// `rollout status` of this Deployment: a new line whenever its status line changes, until
    /// the rollout is done [kubectl pkg/cmd/rollout/rollout_status.go `Run`, which watches
    /// until the status viewer says done].
    pub rollout: Option<(ObjectKey, String)>,
    /// The exit code once the watch has ended by itself (a finished rollout).
    pub finished: Option<i32>,
}

fn rv(o: &Value) -> String {
    o.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

impl Watch {
    fn wanted(&self, key: &ObjectKey, obj: &Value) -> bool {
        if !self.names.is_empty() && !self.names.iter().any(|n| *n == key.name.as_str()) {
            return false;
        }
        match self.selector.as_deref().map(Selector::parse) {
            Some(Ok(s)) => s.matches_object(obj),
            Some(Err(_)) => false,
            None => true,
        }
    }

    /// Starts watching what the first table showed (its lines of cells), from the world it
    /// was printed from.
    pub fn start(mut self, world: &World, first_table: &[Vec<String>]) -> Watch {
        for (key, obj) in world.objects_of(&self.gr, self.namespace.as_deref()) {
            if self.wanted(key, obj) {
                self.seen.insert(key.clone(), (rv(obj), (**obj).clone()));
            }
        }
        for line in first_table {
            self.remember(line);
        }
        self
    }

    fn remember(&mut self, cells: &[String]) {
        for (i, c) in cells.iter().enumerate().take(cells.len().saturating_sub(1)) {
            let w = (c.chars().count() + PADDING).max(MIN_WIDTH);
            match self.widths.get_mut(i) {
                Some(old) => *old = (*old).max(w),
                None => self.widths.push(w),
            }
        }
    }

    fn line(&mut self, cells: Vec<String>) -> String {
        self.remember(&cells);
        let mut out = String::new();
        let last = cells.len().saturating_sub(1);
        for (i, c) in cells.iter().enumerate() {
            out.push_str(c);
            if i < last {
                for _ in c.chars().count()..self.widths[i] {
                    out.push(' ');
                }
            }
        }
        out.push('\n');
        out
    }

    /// `kubectl rollout status` that keeps waiting: `line` is what it printed first.
    pub fn rollout_status(key: ObjectKey, line: String) -> Watch {
        Watch {
            gr: key.gr.clone(),
            namespace: None,
            names: Vec::new(),
            selector: None,
            wide: false,
            with_namespace: false,
            with_kind: None,
            seen: BTreeMap::new(),
            widths: Vec::new(),
            header_printed: true,
            rollout: Some((key, line)),
            finished: None,
        }
    }

    fn poll_rollout(&mut self, world: &World) -> String {
        let Some((key, last)) = self.rollout.as_mut() else {
            return String::new();
        };
        let Some(obj) = world.object(key) else {
            self.finished = Some(1);
            return format!("error: deployments.apps \"{}\" not found\n", key.name);
        };
        match crate::rollout::rollout_status(obj, None) {
            Ok(s) => {
                if s.done {
                    self.finished = Some(0);
                }
                if s.message == *last {
                    return String::new();
                }
                *last = s.message.clone();
                s.message
            }
            Err(e) => {
                self.finished = Some(1);
                format!("error: {}\n", e.message)
            }
        }
    }

    /// The rows to print for what changed since the last poll.
    pub fn poll(&mut self, world: &World) -> String {
        if self.rollout.is_some() {
            return self.poll_rollout(world);
        }
        let mut changed: Vec<(u64, Value)> = Vec::new();
        let mut present = std::collections::BTreeSet::new();
        for (key, obj) in world.objects_of(&self.gr, self.namespace.as_deref()) {
            if !self.wanted(key, obj) {
                continue;
            }
            present.insert(key.clone());
            let v = rv(obj);
            if self.seen.get(key).map(|(r, _)| r) != Some(&v) {
                changed.push((v.parse().unwrap_or(0), (**obj).clone()));
                self.seen.insert(key.clone(), (v, (**obj).clone()));
            }
        }
        let gone: Vec<ObjectKey> = self
            .seen
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect();
        for k in gone {
            if let Some((_, last)) = self.seen.remove(&k) {
                // The DELETED event's object: the last state, at a later version.
                changed.push((u64::MAX, last));
            }
        }
        changed.sort_by_key(|(v, _)| *v);
        let mut out = String::new();
        for (_, obj) in changed {
            let t = table::table(
                &self.gr,
                std::slice::from_ref(&obj),
                Value::Null,
                world.now(),
                IncludeObject::Metadata,
                None,
            );
            let opts = TableOptions {
                wide: self.wide,
                with_namespace: self.with_namespace,
                with_kind: self.with_kind.clone(),
                no_headers: self.header_printed,
                show_labels: false,
            };
            let raw = super::get::table_cells(&t, &opts);
            self.header_printed = true;
            for cells in raw {
                out.push_str(&self.line(cells));
            }
        }
        out
    }
}
