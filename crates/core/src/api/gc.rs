//! The garbage collector, as kube's runs beside the API server: dependents of removed owners
//! are deleted (or lose their dangling ownerReferences), owners deleting in the foreground wait
//! for the dependents that block them, and `orphan` deletion strips references. It sends its
//! writes through [`ApiServer::handle`] as [`principals::GARBAGE_COLLECTOR`], so they are audited
//! like anyone's.

use crate::api::meta::Fields;
use crate::json::path;
use crate::json::{json, Value};
use serde::{Deserialize, Serialize};

use super::meta::JsonPointer;

use super::meta::{self, finalizers, is_deleting, meta_mut, meta_str, owner_refs, ref_uid};
use super::rbac::principals;
use super::server::ApiServer;
use super::types::{ApiRequest, ObjectKey, PatchType, WatchEventType};
use crate::time::SimTime;

/// When dependents of deleted owners are garbage-collected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum GcMode {
    /// Right after the request that removed the owner, as separate audited DELETE requests by
    /// [`principals::GARBAGE_COLLECTOR`] (the default).
    #[default]
    Auto,
    /// Only when the engine calls [`ApiServer::collect_garbage`] (to show the delay).
    Manual,
}

/// The finalizer that holds an owner deleted with `propagationPolicy: Foreground` until its
/// dependents are gone.
pub const FOREGROUND: &str = "foregroundDeletion";
/// kube's `orphan` finalizer (`metav1.FinalizerOrphanDependents`).
pub const ORPHAN: &str = "orphan";

/// Being deleted in the foreground: waiting for its dependents to go first.
pub(super) fn waits_for_dependents(obj: &Value) -> bool {
    is_deleting(obj) && finalizers(obj).iter().any(|f| f == FOREGROUND)
}

/// Whether `refs` name `owner_uid` with `blockOwnerDeletion: true`.
pub(super) fn blocks_owner_deletion(refs: &[Value], owner_uid: &str) -> bool {
    refs.iter().any(|r| {
        ref_uid(r) == Some(owner_uid) && r.field("blockOwnerDeletion") == Some(&Value::Bool(true))
    })
}

impl ApiServer {
    /// Chooses when garbage collection runs (see [`GcMode`]).
    pub fn set_gc_mode(&mut self, mode: GcMode) {
        self.gc_mode = mode;
    }

    pub fn gc_mode(&self) -> GcMode {
        self.gc_mode
    }

    /// Whether some removed owner still has dependents to collect.
    pub fn gc_pending(&self) -> bool {
        !self.state.gc_queue.is_empty()
    }

    /// Runs the garbage collector until its queue is empty, as kube's garbage collector does
    /// for each queued uid (`attemptToDeleteItem`): the dependents of a removed owner are
    /// deleted, or lose their reference to it when another owner still exists; an owner being
    /// deleted in the foreground has its dependents deleted and loses its `foregroundDeletion`
    /// finalizer once no dependent with `blockOwnerDeletion` is left. Every step is a request
    /// from [`principals::GARBAGE_COLLECTOR`], audited like any other. Returns how many
    /// requests it sent.
    pub fn collect_garbage(&mut self, now: SimTime) -> usize {
        let was = self.in_gc;
        self.in_gc = true;
        let mut sent = 0;
        while let Some(uid) = self.state.gc_queue.get_min().cloned() {
            self.state.gc_queue.remove(&uid);
            let first = self.state.gc_started.remove(&uid).is_some();
            match self.state.store.key_for_uid(&uid).cloned() {
                Some(owner_key) => sent += self.foreground_step(now, &uid, &owner_key, first),
                None => {
                    for key in self.state.store.dependents_of(&uid) {
                        sent += self.attempt_to_delete(now, &key);
                    }
                }
            }
        }
        self.in_gc = was;
        sent
    }

    /// kube's `attemptToDeleteItem` for one dependent: with an existing owner left, only the
    /// references to removed owners and to owners deleting in the foreground are dropped;
    /// otherwise the object is deleted, in the foreground when an owner waits for it and it
    /// has dependents of its own.
    pub(super) fn attempt_to_delete(&mut self, now: SimTime, key: &ObjectKey) -> usize {
        let Some(obj) = self.state.store.get(key).cloned() else {
            return 0;
        };
        if is_deleting(&obj) {
            return 0;
        }
        let refs = owner_refs(&obj);
        if refs.is_empty() {
            return 0;
        }
        let (mut solid, mut gone) = (false, Vec::new());
        let mut waiting = false;
        for r in refs {
            let uid = ref_uid(r).unwrap_or("");
            match self.state.store.get_by_uid(uid) {
                None => gone.push(uid.to_owned()),
                Some(owner) if waits_for_dependents(owner) => {
                    waiting = true;
                    gone.push(uid.to_owned());
                }
                Some(_) => solid = true,
            }
        }
        let uid = meta::uid(&obj).to_owned();
        if solid {
            if gone.is_empty() {
                return 0;
            }
            let kept: Vec<&Value> = refs
                .iter()
                .filter(|r| !gone.iter().any(|g| ref_uid(r) == Some(g)))
                .collect();
            self.gc_patch(now, key, &obj, "ownerReferences", json!(kept));
            return 1;
        }
        let dependents: Vec<ObjectKey> = self
            .state
            .store
            .dependents_of(&uid)
            .into_iter()
            .filter(|d| d != key)
            .collect();
        let mut sent = 0;
        let policy = if waiting && !dependents.is_empty() {
            // An owner and a dependent that wait for each other would wait for ever: kube
            // first makes this object's references non-blocking when one of its dependents
            // is itself waiting.
            let cycle = dependents
                .iter()
                .filter_map(|d| self.state.store.get(d))
                .any(|d| waits_for_dependents(d));
            if cycle {
                sent += self.unblock_references(now, key, &obj);
            }
            "Foreground"
        } else if finalizers(&obj).iter().any(|f| f == ORPHAN) {
            "Orphan"
        } else if finalizers(&obj).iter().any(|f| f == FOREGROUND) {
            "Foreground"
        } else {
            "Background"
        };
        // With the resourceVersion it read, as kube's collector deletes (after its own
        // unblocking patch, the version that patch wrote: kube would get a conflict and retry).
        let rv = self
            .state
            .store
            .get(key)
            .map_or_else(String::new, |o| meta_str(o, "resourceVersion").to_owned());
        let req = ApiRequest::delete_with_options(
            principals::GARBAGE_COLLECTOR,
            key.gr.clone(),
            &key.namespace,
            &key.name,
            json!({"propagationPolicy": policy,
                "preconditions": {"uid": uid, "resourceVersion": rv}}),
        );
        // A refusal (the object changed meanwhile) is audited like any request.
        let _ = self.handle(now, req);
        sent + 1
    }

    /// Sets `blockOwnerDeletion: false` on every blocking reference of `obj` (kube's
    /// `unblockOwnerReferences` patch), so the owners waiting for it are looked at again.
    pub(super) fn unblock_references(
        &mut self,
        now: SimTime,
        key: &ObjectKey,
        obj: &Value,
    ) -> usize {
        let mut refs = owner_refs(obj).to_vec();
        let mut changed = false;
        for r in &mut refs {
            if r.field("blockOwnerDeletion") == Some(&Value::Bool(true)) {
                r["blockOwnerDeletion"] = Value::Bool(false);
                changed = true;
            }
        }
        if !changed {
            return 0;
        }
        self.gc_patch(now, key, obj, "ownerReferences", json!(refs));
        1
    }

    /// The garbage collector's merge patch of one metadata field, with the resourceVersion it
    /// read (kube's `deleteOwnerRefJSONMergePatch`, `removeFinalizer`). A refusal (the object
    /// changed meanwhile) is audited like any request.
    pub(super) fn gc_patch(
        &mut self,
        now: SimTime,
        key: &ObjectKey,
        read: &Value,
        field: &str,
        value: Value,
    ) {
        let patch = json!({"metadata": {field: value,
            "resourceVersion": meta_str(read, "resourceVersion")}});
        let req = ApiRequest::patch(
            principals::GARBAGE_COLLECTOR,
            key.gr.clone(),
            &key.namespace,
            &key.name,
            PatchType::Merge,
            patch,
        );
        let _ = self.handle(now, req);
    }

    /// One garbage-collector pass over an owner being deleted in the foreground: delete its
    /// dependents, and once none that blocks its deletion (`blockOwnerDeletion: true`) is left,
    /// remove its `foregroundDeletion` finalizer so it goes away last (kube's
    /// `processDeletingDependentsItem`).
    pub(super) fn foreground_step(
        &mut self,
        now: SimTime,
        owner_uid: &str,
        owner_key: &ObjectKey,
        first: bool,
    ) -> usize {
        let Some(owner) = self.state.store.get(owner_key) else {
            return 0;
        };
        if !waits_for_dependents(owner) {
            return 0;
        }
        // Every dependent is tried once, when the owner starts waiting (kube's
        // `processTransitions`); later passes retry only the ones that block it.
        let mut sent = 0;
        for key in self.state.store.dependents_of(owner_uid) {
            let retry = first
                || self.state.store.get(&key).is_some_and(|d| {
                    blocks_owner_deletion(owner_refs(d), owner_uid) && !waits_for_dependents(d)
                });
            if &key != owner_key && retry {
                sent += self.attempt_to_delete(now, &key);
            }
        }
        let blocked = self
            .state
            .store
            .dependents_of(owner_uid)
            .iter()
            .filter(|k| *k != owner_key)
            .filter_map(|k| self.state.store.get(k))
            .any(|d| blocks_owner_deletion(owner_refs(d), owner_uid));
        if blocked {
            // Queued again when a blocking dependent is removed or stops blocking.
            return sent;
        }
        let Some(owner) = self.state.store.get(owner_key).cloned() else {
            return sent;
        };
        let kept: Vec<String> = finalizers(&owner)
            .into_iter()
            .filter(|f| f != FOREGROUND)
            .collect();
        // kube's patch sends `null` for an empty list, which removes the field.
        let kept = if kept.is_empty() {
            Value::Null
        } else {
            json!(kept)
        };
        self.gc_patch(now, owner_key, &owner, "finalizers", kept);
        sent + 1
    }

    /// What kube's garbage collector reacts to when an object changes (its graph builder's
    /// update handling): an owner deleting in the foreground is looked at again when a
    /// dependent stops blocking it (the reference is removed or no longer has
    /// `blockOwnerDeletion: true`); a newly referenced owner that does not exist has its
    /// dependents collected; an object that starts waiting for its dependents is processed.
    pub(super) fn queue_graph_changes(&mut self, old: &Value, new: &Value) {
        if waits_for_dependents(new) && !waits_for_dependents(old) {
            let uid = meta::uid(new);
            if !uid.is_empty() {
                self.state.gc_queue.insert(uid.to_owned());
                self.state.gc_started.insert(uid.to_owned());
            }
        }
        let (before, after) = (
            old.at(path!("/metadata/ownerReferences")),
            new.at(path!("/metadata/ownerReferences")),
        );
        if before == after {
            return;
        }
        let (before, after) = (owner_refs(old), owner_refs(new));
        for uid in before.iter().filter_map(ref_uid) {
            let unblocked =
                blocks_owner_deletion(before, uid) && !blocks_owner_deletion(after, uid);
            let owner_waits = self
                .state
                .store
                .get_by_uid(uid)
                .is_some_and(|o| waits_for_dependents(o));
            if unblocked && owner_waits {
                self.state.gc_queue.insert(uid.to_owned());
            }
        }
        for uid in after.iter().filter_map(ref_uid) {
            let named_before = before.iter().any(|r| ref_uid(r) == Some(uid));
            if !named_before && !self.state.store.contains_uid(uid) {
                self.state.gc_queue.insert(uid.to_owned());
            }
        }
    }

    /// `propagationPolicy: Orphan`: dependents lose their ownerReference to the owner.
    pub(super) fn orphan_dependents(&mut self, now: SimTime, owner: &Value) {
        let uid = meta::uid(owner).to_owned();
        for key in self.state.store.dependents_of(&uid) {
            let Some(dep) = self.state.store.get(&key).map(|o| (**o).clone()) else {
                continue;
            };
            let mut dep = dep;
            if let Some(refs) = meta_mut(&mut dep)
                .get_mut("ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| r.field("uid").and_then(Value::as_str) != Some(uid.as_str()));
            }
            self.persist(now, key, dep, WatchEventType::Modified);
        }
    }
}
