//! Delete: preconditions, the propagation policy and the garbage collector's finalizers
//! (kube's `deletionFinalizersForGarbageCollection`), graceful deletion of Pods, and the final
//! removal with its kind-specific cleanup (a CRD's instances, a namespace's contents).

use crate::api::meta::Fields;
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::json::{json, Map, Value};

use super::errors::{conflict_with, invalid, not_found};
use super::gc::{FOREGROUND, ORPHAN};
use super::kinds::{crd_resource_info, KindRules, ResourceInfo};
use super::meta::{self, finalizers, is_deleting, meta_mut, meta_str, owner_uids};
use super::server::{status_success, ApiServer};
use super::types::{ApiResult, GroupResource, ObjectKey, WatchEventType};
use super::validation::FieldError;
use crate::api::meta::JsonPointer;
use crate::time::SimTime;

/// `BeforeDelete`'s first mark [apiserver pkg/registry/rest/delete.go]: `deletionTimestamp` at
/// `at`, `deletionGracePeriodSeconds`, and generation + 1 when the object has one.
pub(super) fn mark_deleting(m: &mut Map, at: SimTime, grace_seconds: i64) {
    m.insert("deletionTimestamp", Value::from(at.rfc3339()));
    m.insert("deletionGracePeriodSeconds", Value::from(grace_seconds));
    if let Some(g) = m
        .field("generation")
        .and_then(Value::as_i64)
        .filter(|g| *g > 0)
    {
        m.insert("generation", Value::from(g + 1));
    }
}

impl ApiServer {
    pub(super) fn delete(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        options: Option<&Value>,
    ) -> ApiResult {
        let gr = &info.gr;
        let key = ObjectKey::new(gr.clone(), ns, name);
        let Some(old) = self.state.store.get(&key).map(|o| (**o).clone()) else {
            return Err(not_found(gr, name));
        };
        if let Some(pre) = options.and_then(|o| o.field("preconditions")) {
            if let Some(uid) = pre.field("uid").and_then(Value::as_str) {
                if uid != meta::uid(&old) {
                    return Err(conflict_with(
                        gr,
                        name,
                        &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        meta::uid(&old)
                    ),
                    ));
                }
            }
            if let Some(rv) = pre.field("resourceVersion").and_then(Value::as_str) {
                if rv != meta_str(&old, "resourceVersion") {
                    return Err(conflict_with(gr, name, &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        meta_str(&old, "resourceVersion")
                    )));
                }
            }
        }
        let explicit = options
            .and_then(|o| o.field("propagationPolicy"))
            .and_then(Value::as_str);
        let policy = explicit.unwrap_or("Background");
        if !matches!(policy, "Background" | "Foreground" | "Orphan") {
            let err = FieldError::not_supported(
                "propagationPolicy",
                Value::from(policy),
                &["Foreground", "Background", "Orphan"],
            );
            return Err(invalid("DeleteOptions", "", "", "", &[err]));
        }
        // kube's registry works the garbage collector's finalizers out again on every DELETE
        // (`deletionFinalizersForGarbageCollection`): an explicit policy wins, then a GC
        // finalizer already there, then the default (Background). Dependents are orphaned at
        // once here (kube's collector does it through the `orphan` finalizer), so `orphan`
        // never stays.
        let fins = finalizers(&old);
        let first_gc = fins.iter().find(|f| *f == ORPHAN || *f == FOREGROUND);
        // `shouldOrphanDependents`: then the kind's default (batch/v1 Jobs orphan).
        let default_orphan = info.rules.strategy().orphans_dependents_by_default();
        let orphan = explicit.map_or(first_gc.map_or(default_orphan, |f| f == ORPHAN), |p| {
            p == "Orphan"
        });
        let foreground = explicit.map_or(
            !fins.iter().any(|f| f == ORPHAN) && fins.iter().any(|f| f == FOREGROUND),
            |p| p == "Foreground",
        );
        let old = if orphan {
            self.orphan_dependents(now, &old);
            // The object may name itself as owner: read it again.
            self.state.store.get(&key).map_or(old, |o| Value::clone(o))
        } else {
            old
        };
        let mut kept: Vec<String> = fins
            .iter()
            .filter(|f| *f != ORPHAN && *f != FOREGROUND)
            .cloned()
            .collect();
        if foreground {
            kept.push(FOREGROUND.to_owned());
        }
        let same = fins.iter().collect::<BTreeSet<_>>() == kept.iter().collect::<BTreeSet<_>>();
        let deleting = is_deleting(&old);
        if info.rules == KindRules::Pod {
            return self.delete_pod(now, key, old, (kept, same), options);
        }
        if deleting && same {
            return Ok(Arc::new(old));
        }
        if kept.is_empty() {
            let uid = meta::uid(&old).to_owned();
            if deleting {
                let mut obj = old;
                meta_mut(&mut obj).insert("finalizers", json!([]));
                self.remove_as(now, &key, obj);
            } else {
                self.remove(now, &key);
            }
            return Ok(Arc::new(status_success(gr, name, &uid)));
        }
        let mut obj = old;
        let m = meta_mut(&mut obj);
        if !same {
            m.insert("finalizers", json!(kept));
        }
        if !deleting {
            mark_deleting(m, now, 0);
        }
        // persist() queues an owner that starts waiting for its dependents.
        Ok(self.persist(now, key, obj, WatchEventType::Modified))
    }

    /// Graceful deletion of a Pod [apiserver pkg/registry/rest/delete.go BeforeDelete,
    /// generic/registry/store.go Delete and updateForGracefulDeletionAndFinalizers, kubernetes
    /// pkg/registry/core/pod/strategy.go CheckGracefulDelete]. The first DELETE sets
    /// `deletionTimestamp = now + grace` and `deletionGracePeriodSeconds` (the request's
    /// `gracePeriodSeconds`, else `spec.terminationGracePeriodSeconds`; 0 for a pod on no node
    /// or already Succeeded/Failed; a negative one is 1) and writes the pod (MODIFIED). It is
    /// removed at once only with a grace of 0 and no finalizers left; otherwise its kubelet stops
    /// it and deletes it with grace 0. A later DELETE may only shorten the grace. The answer is
    /// the Pod (the pod registry's `ReturnDeletedObject`).
    pub(super) fn delete_pod(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        old: Value,
        (kept, same): (Vec<String>, bool),
        options: Option<&Value>,
    ) -> ApiResult {
        let requested = options
            .and_then(|o| o.field("gracePeriodSeconds"))
            .and_then(Value::as_i64)
            // BeforeDelete: a negative grace period is taken as 1 s.
            .map(|g| if g < 0 { 1 } else { g });
        let mut obj = old;
        if is_deleting(&obj) {
            let current = obj
                .at("/metadata/deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if current > 0 {
                // Pending graceful deletion: only a shorter grace moves it; finalizers cannot
                // change through DeleteOptions any more.
                let Some(period) = requested.filter(|p| *p < current) else {
                    return Ok(Arc::new(obj));
                };
                let ts = obj
                    .at("/metadata/deletionTimestamp")
                    .and_then(Value::as_str)
                    .and_then(SimTime::parse_rfc3339)
                    .unwrap_or(now);
                let moved = SimTime::from_ms(
                    (ts.as_ms() + period as u64 * 1000).saturating_sub(current as u64 * 1000),
                );
                let m = meta_mut(&mut obj);
                m.insert("deletionTimestamp", Value::from(moved.rfc3339()));
                m.insert("deletionGracePeriodSeconds", Value::from(period));
                return Ok(self.write_deleting_pod(now, key, obj, period == 0 && kept.is_empty()));
            }
            // Deleting with no grace left (finalizers): as for any other kind.
            if kept.is_empty() {
                meta_mut(&mut obj).insert("finalizers", json!([]));
                return Ok(self.remove_as(now, &key, obj).unwrap_or_default());
            }
            if same {
                return Ok(Arc::new(obj));
            }
            meta_mut(&mut obj).insert("finalizers", json!(kept));
            return Ok(self.persist(now, key, obj, WatchEventType::Modified));
        }
        // CheckGracefulDelete.
        let on_node = obj
            .at("/spec/nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let finished = matches!(
            obj.at("/status/phase").and_then(Value::as_str),
            Some("Succeeded" | "Failed")
        );
        let mut period = requested.unwrap_or_else(|| {
            obj.at("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        });
        if !on_node || finished {
            period = 0;
        }
        if period < 0 {
            period = 1;
        }
        if !same {
            meta_mut(&mut obj).insert("finalizers", json!(kept));
        }
        mark_deleting(
            meta_mut(&mut obj),
            now.plus_ms(period as u64 * 1000),
            period,
        );
        Ok(self.write_deleting_pod(now, key, obj, period == 0 && kept.is_empty()))
    }

    /// `updateForGracefulDeletionAndFinalizers`' outcome for a pod: it is written (MODIFIED),
    /// then removed in the same request when `remove_now` (no grace and no finalizer left).
    pub(super) fn write_deleting_pod(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        obj: Value,
        remove_now: bool,
    ) -> Arc<Value> {
        let written = self.persist(now, key.clone(), obj, WatchEventType::Modified);
        if remove_now {
            return self.remove(now, &key).unwrap_or(written);
        }
        written
    }

    /// Removes an object for good: a fresh resourceVersion, a DELETED event, the owner queued
    /// for garbage collection, and kind-specific cleanup (CRD instances, namespace contents).
    pub(super) fn remove(&mut self, now: SimTime, key: &ObjectKey) -> Option<Arc<Value>> {
        self.remove_after(now, key, None)
    }

    /// [`Self::remove`] announcing `last` as the object's last version (its finalizers
    /// emptied): `last` is put in the store only for the removal to take, and the watch event's
    /// version before is the one stored until then, which the watch announced.
    pub(super) fn remove_as(
        &mut self,
        now: SimTime,
        key: &ObjectKey,
        last: Value,
    ) -> Option<Arc<Value>> {
        let announced = self.state.store.get(key).cloned();
        self.state.store.put(key.clone(), last);
        self.remove_after(now, key, announced)
    }

    /// [`Self::remove`], with `announced` (when given) as the event's version before.
    fn remove_after(
        &mut self,
        now: SimTime,
        key: &ObjectKey,
        announced: Option<Arc<Value>>,
    ) -> Option<Arc<Value>> {
        self.committed();
        let (held_key, old) = self.state.store.remove(key)?;
        let before = announced.unwrap_or_else(|| Arc::clone(&old));
        self.drop_lease(key);
        let mut obj = (*old).clone();
        let rv = self.next_rv();
        meta_mut(&mut obj).insert("resourceVersion", Value::from(rv.to_string()));
        let uid = meta::uid(&obj).to_owned();
        let obj = Arc::new(obj);
        self.emit(
            now,
            WatchEventType::Deleted,
            held_key,
            Arc::clone(&obj),
            rv,
            Some(before),
        );
        if !uid.is_empty() && !self.state.store.dependents_of(&uid).is_empty() {
            self.state.gc_queue.insert(uid);
        }
        for owner in owner_uids(&obj) {
            let waiting = self
                .state
                .store
                .get_by_uid(&owner)
                .is_some_and(|o| finalizers(o).iter().any(|f| f == FOREGROUND));
            if waiting {
                self.state.gc_queue.insert(owner);
            }
        }
        match self.state.registry.get(&key.gr).map(|i| i.rules) {
            Some(KindRules::CustomResourceDefinition) => {
                if let Some(info) = crd_resource_info(&obj) {
                    let keys: Vec<ObjectKey> = self
                        .state
                        .store
                        .range(&info.gr, None)
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in keys {
                        self.remove(now, &k);
                    }
                    self.state.registry.remove(&info.gr);
                }
            }
            Some(KindRules::Namespace) => {
                let grs: Vec<GroupResource> = self
                    .state
                    .registry
                    .iter()
                    .filter(|i| i.namespaced)
                    .map(|i| i.gr.clone())
                    .collect();
                for gr in grs {
                    let keys: Vec<ObjectKey> = self
                        .state
                        .store
                        .range(&gr, Some(&key.name))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in keys {
                        self.remove(now, &k);
                    }
                }
            }
            _ => {}
        }
        Some(obj)
    }
}
