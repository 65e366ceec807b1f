//! A controller's informer cache: the objects it has been told about through watch events,
//! possibly behind the API server (deliveries arrive after a configurable latency).
//!
//! Indexes are maintained incrementally on every delivery, so reconcilers never scan the whole
//! cache: objects by controller owner uid, and per owner the counts of active and ready pods.

use crate::json::path;
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
    /// Under the store's keys (shared, as the watch events carry them).
    objects: OrdMap<Arc<ObjectKey>, Arc<Value>>,
    by_owner: OrdMap<String, OrdSet<Arc<ObjectKey>>>,
    pod_counts: OrdMap<String, PodCounts>,
    /// Highest resourceVersion applied.
    pub last_resource_version: u64,
}

/// Whether a pod counts toward its ReplicaSet's replicas.
pub fn pod_is_active(pod: &Value) -> bool {
    let phase = meta::str_at(pod, path!("/status/phase"));
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

    /// The objects of `gr` in namespace `ns`, in name order (a lister's `Pods(ns).List`): a
    /// range of the cache's ordered keys, not a scan of every namespace.
    pub fn list_in<'a>(
        &'a self,
        gr: &'a GroupResource,
        ns: &'a str,
    ) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        let start = ObjectKey::new(gr.clone(), ns, "");
        self.objects
            .range(start..)
            .take_while(move |(k, _)| &k.gr == gr && k.namespace == ns)
            .map(|(_, v)| v)
    }

    /// Objects whose controller owner has this uid.
    ///
    /// The owner's keys are in the cache's order, so for more than a few of them this walks the
    /// cache from the first one alongside, one step per object, instead of looking each key up
    /// from the root: a ReplicaSet's 960 pods cost one ordered walk, not 960 descents. The walk
    /// may take at most four steps per key (plus a few): past that (an owner's few objects far
    /// apart among many others) the remaining keys are looked up. Either way the answer is the
    /// owner's objects in key order.
    pub fn owned_by<'a>(&'a self, owner_uid: &str) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        const WALK_FROM: usize = 16;
        let set = self.by_owner.get(owner_uid);
        let len = set.map_or(0, OrdSet::len);
        let mut keys = set.into_iter().flat_map(OrdSet::iter).peekable();
        let mut walk = match (len >= WALK_FROM, set.and_then(OrdSet::get_min)) {
            (true, Some(first)) => Some(self.objects.range(first.clone()..)),
            _ => None,
        };
        let mut budget = 4 * len + WALK_FROM;
        let mut pending: Option<(&'a Arc<ObjectKey>, &'a Arc<Value>)> = None;
        std::iter::from_fn(move || loop {
            let key = *keys.peek()?;
            let Some(steps) = walk.as_mut().filter(|_| budget > 0) else {
                keys.next();
                match self.objects.get(key) {
                    Some(v) => return Some(v),
                    None => continue,
                }
            };
            // The walk ran out: no object at or after `key` is cached, so neither is any later key.
            let (k, v) = pending.take().or_else(|| steps.next())?;
            budget -= 1;
            match k.cmp(key) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => {
                    keys.next();
                    return Some(v);
                }
                // `key` is not cached; `k` may be the next key's.
                std::cmp::Ordering::Greater => {
                    keys.next();
                    pending = Some((k, v));
                }
            }
        })
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
        if ev.event_type != WatchEventType::Deleted {
            // An update replaces the held version in place: one walk of the map, where a
            // lookup and then an insert would make two.
            if let Some(held) = self.objects.get_mut(&ev.key) {
                if ev.resource_version <= meta::resource_version(held) {
                    return None;
                }
                let old = std::mem::replace(held, object.clone());
                self.last_resource_version = self.last_resource_version.max(ev.resource_version);
                // Most updates keep the controller owner and the pod's counts (a status write):
                // taking the key out of the indexes and putting it back would change nothing
                // but copy the persistent maps' paths.
                if !Self::same_index_entry(&ev.key, &old, object) {
                    self.unindex(&ev.key, &old);
                    self.index(&ev.key, object);
                }
                return Some(Some(old));
            }
            self.last_resource_version = self.last_resource_version.max(ev.resource_version);
            self.index(&ev.key, object);
            self.objects.insert(Arc::clone(&ev.key), object.clone());
            return Some(None);
        }
        let old = self.objects.get(&ev.key).cloned();
        if let Some(old) = &old {
            if ev.resource_version <= meta::resource_version(old) {
                return None;
            }
        }
        self.last_resource_version = self.last_resource_version.max(ev.resource_version);
        if old.is_some() {
            if let Some(old) = self.objects.remove(&ev.key) {
                self.unindex(&ev.key, &old);
            }
        }
        Some(old)
    }

    /// Whether `old` and `new` have the same place in the indexes: the same controller owner
    /// (or none) and, for a Pod, the same active and ready contributions to its counts.
    fn same_index_entry(key: &ObjectKey, old: &Value, new: &Value) -> bool {
        let counts_kept = || {
            if key.gr.resource != "pods" || !key.gr.group.is_empty() {
                return true;
            }
            let counted = |p: &Value| {
                let active = pod_is_active(p);
                (active, active && pod_is_ready(p))
            };
            counted(old) == counted(new)
        };
        // A write that leaves the owner references alone keeps their list shared (as the
        // server's writes do): the same controller, found without reading it.
        fn refs(o: &Value) -> Option<&crate::json::List> {
            match o.path(crate::json::path!("/metadata/ownerReferences")) {
                Some(Value::Array(list)) => Some(list),
                _ => None,
            }
        }
        if let (Some(a), Some(b)) = (refs(old), refs(new)) {
            if crate::json::List::ptr_eq(a, b) {
                return counts_kept();
            }
        }
        let owner = |o| meta::controller_of(o).map(|(_, _, uid)| uid);
        match (owner(old), owner(new)) {
            (None, None) => true,
            (Some(a), Some(b)) if a == b => counts_kept(),
            _ => false,
        }
    }

    /// Replaces the whole cache with a fresh list (a restart's initial sync).
    pub fn replace<'a>(
        &mut self,
        objects: impl Iterator<Item = (&'a Arc<ObjectKey>, &'a Arc<Value>)>,
    ) {
        *self = Informer::new();
        for (k, v) in objects {
            self.last_resource_version = self.last_resource_version.max(meta::resource_version(v));
            self.index(k, v);
            self.objects.insert(Arc::clone(k), v.clone());
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.objects.keys().map(|k| k.as_ref())
    }

    fn index(&mut self, key: &Arc<ObjectKey>, obj: &Value) {
        let Some((_, _, owner)) = meta::controller_of(obj) else {
            return;
        };
        let owner = owner.to_owned();
        self.by_owner
            .entry(owner.clone())
            .or_default()
            .insert(Arc::clone(key));
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

#[cfg(test)]
impl Informer {
    /// A cache told of `objects` as ADDED events with resourceVersions 1, 2, ... (for tests).
    pub(crate) fn of(objects: &[(GroupResource, Value)]) -> Informer {
        let mut inf = Informer::new();
        for (rv, (gr, obj)) in (1..).zip(objects) {
            let ev = WatchEvent {
                event_type: WatchEventType::Added,
                key: Arc::new(ObjectKey::new(
                    gr.clone(),
                    meta::namespace(obj),
                    meta::name(obj),
                )),
                object: obj.clone(),
                resource_version: rv,
                time: crate::time::SimTime::ZERO,
            };
            inf.apply(&ev, &Arc::new(obj.clone()));
        }
        inf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;
    use proptest::prelude::*;

    fn pod(name: &str, owner: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                "uid": owner, "controller": true}]}})
    }

    fn pods_gr() -> GroupResource {
        GroupResource::new("", "pods")
    }

    fn event(event_type: WatchEventType, obj: &Value, rv: u64) -> WatchEvent {
        WatchEvent {
            event_type,
            key: Arc::new(ObjectKey::new(
                pods_gr(),
                meta::namespace(obj),
                meta::name(obj),
            )),
            object: obj.clone(),
            resource_version: rv,
            time: crate::time::SimTime::ZERO,
        }
    }

    proptest! {
        /// `owned_by` answers what looking each of the owner's keys up would: whether it walks
        /// (many keys) or looks up (few keys, or keys far apart among other owners' objects),
        /// and after deletions.
        #[test]
        fn owned_by_gives_the_owners_objects_in_key_order(
            owners in proptest::collection::vec(0u8..4, 1..400),
            deleted in proptest::collection::vec(any::<bool>(), 400),
            phantom in proptest::collection::vec(0u8..4, 0..60),
        ) {
            let mut inf = Informer::new();
            let mut rv = 0;
            let objs: Vec<Value> = owners
                .iter()
                .enumerate()
                .map(|(i, o)| pod(&format!("p{i:04}"), &format!("rs-{o}")))
                .collect();
            for obj in &objs {
                rv += 1;
                inf.apply(&event(WatchEventType::Added, obj, rv), &Arc::new(obj.clone()));
            }
            for (obj, gone) in objs.iter().zip(&deleted) {
                if *gone {
                    rv += 1;
                    inf.apply(&event(WatchEventType::Deleted, obj, rv), &Arc::new(obj.clone()));
                }
            }
            // Keys an index could hold without the object (it never does): the walk skips them.
            for (i, o) in phantom.iter().enumerate() {
                let key = ObjectKey::new(pods_gr(), "default", &format!("p{:04}x", i * 7));
                inf.by_owner.entry(format!("rs-{o}")).or_default().insert(Arc::new(key));
            }
            for o in 0..4 {
                let uid = format!("rs-{o}");
                let owned = |p: &&Arc<Value>| meta::controller_of(p).is_some_and(|(_, _, u)| u == uid);
                let want: Vec<&str> = inf.objects.values().filter(owned).map(|p| meta::name(p)).collect();
                let got: Vec<&str> = inf.owned_by(&uid).map(|p| meta::name(p)).collect();
                prop_assert_eq!(got, want);
            }
        }
    }

    /// An owner with a few objects among many others': the walk's budget runs out and the rest
    /// are looked up, with every object still found.
    #[test]
    fn owned_by_finds_objects_far_apart() {
        let mut inf = Informer::new();
        for i in 0..2000 {
            let owner = if i % 100 == 0 { "sparse" } else { "dense" };
            let obj = pod(&format!("p{i:05}"), owner);
            inf.apply(
                &event(WatchEventType::Added, &obj, i + 1),
                &Arc::new(obj.clone()),
            );
        }
        let sparse: Vec<String> = inf
            .owned_by("sparse")
            .map(|p| meta::name(p).to_owned())
            .collect();
        let want: Vec<String> = (0..2000).step_by(100).map(|i| format!("p{i:05}")).collect();
        assert_eq!(sparse, want);
        assert_eq!(inf.owned_by("dense").count(), 1980);
        assert_eq!(inf.owned_by("none").count(), 0);
    }
}
