//! A controller's informer cache: the objects it has been told about through watch events,
//! possibly behind the API server (deliveries arrive after a configurable latency).
//!
//! Indexes are maintained incrementally on every delivery, so reconcilers never scan the whole
//! cache: objects by controller owner uid, and per owner the counts of active and ready pods.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::Value;
use imbl::{OrdMap, OrdSet};

use crate::api::meta;
use crate::api::{GroupResource, ObjectKey, WatchEvent, WatchEventType};
use crate::conditions;

/// Pod counts for one owner, maintained as deliveries arrive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodCounts {
    /// Pods not terminating and not in a terminal phase.
    pub active: u64,
    /// Active pods with `Ready=True`.
    pub ready: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Informer {
    #[serde(with = "crate::engine::checkpoint::shared_map")]
    objects: OrdMap<ObjectKey, Arc<Value>>,
    by_owner: OrdMap<String, OrdSet<ObjectKey>>,
    pod_counts: OrdMap<String, PodCounts>,
    /// Highest resourceVersion applied.
    pub last_resource_version: u64,
}

/// Whether a pod counts toward its ReplicaSet's replicas.
pub fn pod_is_active(pod: &Value) -> bool {
    let phase = meta::str_at(pod, "/status/phase");
    !meta::is_terminating(pod) && phase != "Succeeded" && phase != "Failed"
}

/// Whether a pod's `Ready` condition is `True`.
pub fn pod_is_ready(pod: &Value) -> bool {
    conditions::status_conditions(pod)
        .is_some_and(|c| conditions::is_status_condition_true(c, "Ready"))
}

impl Informer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<Value>> {
        self.objects.get(key)
    }

    /// Objects of one resource, in key order (a range scan, not a full scan).
    pub fn list<'a>(&'a self, gr: &'a GroupResource) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        let start = ObjectKey::new(gr.clone(), "", "");
        self.objects
            .range(start..)
            .take_while(move |(k, _)| &k.gr == gr)
            .map(|(_, v)| v)
    }

    /// Objects whose controller owner has this uid.
    pub fn owned_by<'a>(&'a self, owner_uid: &str) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        self.by_owner
            .get(owner_uid)
            .into_iter()
            .flat_map(|set| set.iter())
            .filter_map(|k| self.objects.get(k))
    }

    pub fn pod_counts(&self, owner_uid: &str) -> PodCounts {
        self.pod_counts.get(owner_uid).copied().unwrap_or_default()
    }

    /// Applies one watch event. Returns false for an event older than what the cache holds.
    pub fn apply(&mut self, ev: &WatchEvent, object: &Arc<Value>) -> bool {
        self.apply_replacing(ev, object).is_some()
    }

    /// [`Self::apply`], answering with the version the cache held before (`Some(None)` when it
    /// held none), or `None` for an event older than what the cache holds: one lookup of the
    /// key where a `get` before `apply` would make another.
    pub fn apply_replacing(
        &mut self,
        ev: &WatchEvent,
        object: &Arc<Value>,
    ) -> Option<Option<Arc<Value>>> {
        let old = self.objects.get(&ev.key).cloned();
        if let Some(old) = &old {
            if ev.resource_version <= meta::resource_version(old) {
                return None;
            }
        }
        self.last_resource_version = self.last_resource_version.max(ev.resource_version);
        if ev.event_type != WatchEventType::Deleted {
            match &old {
                // Most updates keep the controller owner and the pod's counts (a status write):
                // taking the key out of the indexes and putting it back would change nothing
                // but copy the persistent maps' paths.
                Some(old) if Self::same_index_entry(&ev.key, old, object) => {}
                Some(old) => {
                    self.unindex(&ev.key, old);
                    self.index(&ev.key, object);
                }
                None => self.index(&ev.key, object),
            }
            self.objects.insert(ev.key.clone(), object.clone());
        } else if old.is_some() {
            if let Some(old) = self.objects.remove(&ev.key) {
                self.unindex(&ev.key, &old);
            }
        }
        Some(old)
    }

    /// Whether `old` and `new` have the same place in the indexes: the same controller owner
    /// (or none) and, for a Pod, the same active and ready contributions to its counts.
    fn same_index_entry(key: &ObjectKey, old: &Value, new: &Value) -> bool {
        let owner = |o| meta::controller_of(o).map(|(_, _, uid)| uid);
        match (owner(old), owner(new)) {
            (None, None) => true,
            (Some(a), Some(b)) if a == b => {
                if key.gr.resource != "pods" || !key.gr.group.is_empty() {
                    return true;
                }
                let counted = |p: &Value| {
                    let active = pod_is_active(p);
                    (active, active && pod_is_ready(p))
                };
                counted(old) == counted(new)
            }
            _ => false,
        }
    }

    /// Replaces the whole cache with a fresh list (a restart's initial sync).
    pub fn replace<'a>(&mut self, objects: impl Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)>) {
        *self = Informer::new();
        for (k, v) in objects {
            self.last_resource_version = self.last_resource_version.max(meta::resource_version(v));
            self.index(k, v);
            self.objects.insert(k.clone(), v.clone());
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.objects.keys()
    }

    fn index(&mut self, key: &ObjectKey, obj: &Value) {
        let Some((_, _, owner)) = meta::controller_of(obj) else {
            return;
        };
        let owner = owner.to_owned();
        self.by_owner
            .entry(owner.clone())
            .or_default()
            .insert(key.clone());
        if key.gr.resource == "pods" && key.gr.group.is_empty() && pod_is_active(obj) {
            let counts = self.pod_counts.entry(owner).or_default();
            counts.active += 1;
            if pod_is_ready(obj) {
                counts.ready += 1;
            }
        }
    }

    fn unindex(&mut self, key: &ObjectKey, obj: &Value) {
        let Some((_, _, owner)) = meta::controller_of(obj) else {
            return;
        };
        if let Some(set) = self.by_owner.get_mut(owner) {
            set.remove(key);
            if set.is_empty() {
                self.by_owner.remove(owner);
            }
        }
        if key.gr.resource == "pods" && key.gr.group.is_empty() && pod_is_active(obj) {
            if let Some(counts) = self.pod_counts.get_mut(owner) {
                counts.active = counts.active.saturating_sub(1);
                if pod_is_ready(obj) {
                    counts.ready = counts.ready.saturating_sub(1);
                }
            }
        }
    }
}
