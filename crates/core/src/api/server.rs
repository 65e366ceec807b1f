//! [`ApiServer`]: the request pipeline (resolve the resource, authorize, decode, apply the
//! kind's strategy, check concurrency, validate, persist, emit a watch event, audit) and the
//! deletion machinery (finalizers, background garbage collection, CRD and namespace cleanup).

use super::meta::JsonPointer;
use std::collections::BTreeSet;
use std::sync::Arc;

use imbl::{OrdSet, Vector};
use serde_json::{json, Map, Value};

use super::decode::{check_body, drop_deep, MAX_DEPTH};
use super::errors::{
    already_exists, bad_request, conflict, conflict_with, forbidden, invalid, method_not_allowed,
    not_found, unknown_resource,
};
use super::kinds::{crd_resource_info, split_api_version, KindRules, Registry, ResourceInfo};
use super::rbac::{self, principals, Attributes};
use super::selector::Selector;
use super::store::{owner_uids, uid_of, Store};
use super::strategy;
use super::types::{
    ApiError, ApiRequest, ApiResult, AuditEntry, GroupResource, ObjectKey, PatchType, RequestBody,
    StatusReason, Subresource, Verb, WatchEvent, WatchEventType,
};
use super::validation::FieldError;
use crate::time::SimTime;

/// When dependents of deleted owners are garbage-collected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GcMode {
    /// Right after the request that removed the owner, as separate audited DELETE requests by
    /// [`principals::GARBAGE_COLLECTOR`] (the default).
    #[default]
    Auto,
    /// Only when the engine calls [`ApiServer::collect_garbage`] (to show the delay).
    Manual,
}

/// Everything a request may change; restored wholesale when a request fails, so refused
/// requests change nothing.
#[derive(Clone, Debug)]
struct State {
    store: Store,
    registry: Registry,
    rv: u64,
    uid_counter: u64,
    name_counter: u64,
    ip_counter: u64,
    // Shared entries: appending to a persistent vector copies its tail chunk, which must be
    // pointer copies, not deep copies of objects.
    pending: Vector<Arc<PendingEvent>>,
    audit: Vector<Arc<AuditEntry>>,
    /// uids the garbage collector must look at: removed owners (their dependents) and owners
    /// being deleted in the foreground.
    gc_queue: OrdSet<String>,
    /// Owners that just started deleting in the foreground: all their dependents are tried
    /// once, then only the blocking ones.
    gc_started: OrdSet<String>,
}

/// A watch event not yet drained: the event (its `object` left `Null`) and the object, shared
/// with the store rather than copied.
#[derive(Clone, Debug)]
struct PendingEvent {
    event: WatchEvent,
    object: Arc<Value>,
}

/// The simulated kube-apiserver. Cloning is O(1) (persistent maps and vectors), so the engine
/// may snapshot it after every step.
#[derive(Clone, Debug)]
pub struct ApiServer {
    state: State,
    rbac_enforced: bool,
    gc_mode: GcMode,
    in_gc: bool,
}

impl Default for ApiServer {
    fn default() -> Self {
        Self::new()
    }
}

/// The finalizer that holds an owner deleted with `propagationPolicy: Foreground` until its
/// dependents are gone.
pub const FOREGROUND: &str = "foregroundDeletion";
/// kube's `orphan` finalizer (`metav1.FinalizerOrphanDependents`).
pub const ORPHAN: &str = "orphan";

/// Namespaces that exist from the start.
pub const INITIAL_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "converge-system",
];

fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

fn meta_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    meta(obj)
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = json!({});
    }
    let map = obj.as_object_mut().expect("just made an object");
    let m = map.entry("metadata").or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    m.as_object_mut().expect("just made an object")
}

fn rv_of(obj: &Value) -> u64 {
    meta_str(obj, "resourceVersion").parse().unwrap_or(0)
}

fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn is_deleting(obj: &Value) -> bool {
    !meta_str(obj, "deletionTimestamp").is_empty()
}

/// Being deleted in the foreground: waiting for its dependents to go first.
fn waits_for_dependents(obj: &Value) -> bool {
    is_deleting(obj) && finalizers(obj).iter().any(|f| f == FOREGROUND)
}

/// `metadata.ownerReferences`, or none.
fn owner_refs(obj: &Value) -> &[Value] {
    obj.at("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The uid an ownerReference names.
fn ref_uid(r: &Value) -> Option<&str> {
    r.get("uid").and_then(Value::as_str)
}

/// Whether `refs` name `owner_uid` with `blockOwnerDeletion: true`.
fn blocks_owner_deletion(refs: &[Value], owner_uid: &str) -> bool {
    refs.iter().any(|r| {
        ref_uid(r) == Some(owner_uid) && r.get("blockOwnerDeletion") == Some(&Value::Bool(true))
    })
}

fn set_or_remove(map: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    match v {
        // Clients send back what they read, so the value is usually there already: compare
        // before copying (an insert over an equal value would change nothing, not even order).
        Some(v) if map.get(key) == Some(v) => {}
        Some(v) => {
            map.insert(key.to_owned(), v.clone());
        }
        None => {
            map.remove(key);
        }
    }
}

fn status_success(gr: &GroupResource, name: &str, uid: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": name, "group": gr.group, "kind": gr.resource, "uid": uid}})
}

/// Deterministic uid in UUID form, from a counter.
fn make_uid(n: u64) -> String {
    let a = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D;
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        (a & 0xfff) as u16,
        (n >> 48) as u16 & 0xfff,
        n & 0xffff_ffff_ffff
    )
}

/// kube's generateName suffix: 5 characters from its consonant-and-digit alphabet.
/// `BeforeDelete`'s first mark [apiserver pkg/registry/rest/delete.go]: `deletionTimestamp` at
/// `at`, `deletionGracePeriodSeconds`, and generation + 1 when the object has one.
fn mark_deleting(m: &mut Map<String, Value>, at: SimTime, grace_seconds: i64) {
    m.insert("deletionTimestamp".into(), Value::from(at.rfc3339()));
    m.insert(
        "deletionGracePeriodSeconds".into(),
        Value::from(grace_seconds),
    );
    if let Some(g) = m
        .get("generation")
        .and_then(Value::as_i64)
        .filter(|g| *g > 0)
    {
        m.insert("generation".into(), Value::from(g + 1));
    }
}

/// The `default` ServiceAccount of a namespace.
fn default_service_account(ns: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}})
}

fn name_suffix(n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n
        .wrapping_mul(0x2545_F491_4F6C_DD1D)
        .wrapping_add(0x1234_5678);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(x % ALPHABET.len() as u64) as usize] as char;
            x /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

impl ApiServer {
    /// A server with the built-in kinds, the initial namespaces and the default RBAC policy
    /// (`docs/rbac-policy.md`). The set-up writes are neither audited nor left as pending watch
    /// events: the world starts "already listed".
    pub fn new() -> Self {
        let mut s = ApiServer {
            state: State {
                store: Store::default(),
                registry: Registry::builtin(),
                rv: 0,
                uid_counter: 0,
                name_counter: 0,
                ip_counter: 0,
                pending: Vector::new(),
                audit: Vector::new(),
                gc_queue: OrdSet::new(),
                gc_started: OrdSet::new(),
            },
            rbac_enforced: true,
            gc_mode: GcMode::Auto,
            in_gc: false,
        };
        let mut seed: Vec<Value> = INITIAL_NAMESPACES
            .iter()
            .map(|ns| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .collect();
        // kube's serviceaccounts-controller gives every namespace its `default` account.
        seed.extend(
            INITIAL_NAMESPACES
                .iter()
                .map(|ns| default_service_account(ns)),
        );
        seed.extend(rbac::default_policy());
        // Set-up writes go straight to the create strategy: no authorization, no audit.
        for obj in seed {
            if let Some(info) = s.kind_of(&obj) {
                let ns = meta_str(&obj, "namespace").to_owned();
                let created = s.create(SimTime::ZERO, &info, &ns, obj, principals::APISERVER);
                debug_assert!(created.is_ok(), "seed object refused: {created:?}");
            }
        }
        s.state.pending = Vector::new();
        s.state.audit = Vector::new();
        s
    }

    fn kind_of(&self, body: &Value) -> Option<ResourceInfo> {
        let av = body.get("apiVersion")?.as_str()?;
        let kind = body.get("kind")?.as_str()?;
        self.state.registry.for_kind(av, kind).cloned()
    }

    /// Turns RBAC enforcement on (the default) or off. With it off every principal may do
    /// everything, which shows what status spoofing would do.
    pub fn set_rbac_enforced(&mut self, enforced: bool) {
        self.rbac_enforced = enforced;
    }

    pub fn rbac_enforced(&self) -> bool {
        self.rbac_enforced
    }

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

    /// Handles one request with every rule applied: authorization, decoding, the kind's
    /// strategy, optimistic concurrency, validation, persistence, the watch event and the audit
    /// entry. A refused request changes nothing but the audit log.
    pub fn handle(&mut self, now: SimTime, mut req: ApiRequest) -> ApiResult {
        let checkpoint = self.state.clone();
        // The body moves into the pipeline (no deep copy); the rest of the request stays for
        // the audit entry.
        let body = std::mem::replace(&mut req.body, RequestBody::None);
        let target = self.target_key(&req, &body);
        let rv_before = target
            .as_ref()
            .and_then(|k| self.state.store.get(k))
            .map_or(0, |o| rv_of(o));
        let too_deep = match &body {
            RequestBody::Object(v) | RequestBody::Patch(_, v) => {
                super::decode::depth_exceeds(v, MAX_DEPTH).is_some()
            }
            RequestBody::None => false,
        };
        let result = if too_deep {
            let err = match &body {
                RequestBody::Object(v) | RequestBody::Patch(_, v) => check_body(v).err(),
                RequestBody::None => None,
            };
            if let RequestBody::Object(v) | RequestBody::Patch(_, v) = body {
                drop_deep(v);
            }
            Err(err.unwrap_or_else(|| bad_request("object nesting is too deep")))
        } else {
            self.dispatch(now, &req, body)
        };
        let (code, message) = super::types::response_status(req.verb, &result);
        if result.is_err() {
            self.state = checkpoint;
        }
        let name = if req.name.is_empty() {
            result
                .as_ref()
                .ok()
                .map(|v| meta_str(v, "name").to_owned())
                .filter(|n| !n.is_empty())
                .or_else(|| target.as_ref().map(|k| k.name.clone()))
                .unwrap_or_default()
        } else {
            req.name.clone()
        };
        let namespace = target
            .as_ref()
            .map_or_else(|| req.namespace.clone(), |k| k.namespace.clone());
        let key_after = target.map(|k| ObjectKey {
            name: name.clone(),
            ..k
        });
        let rv_after = key_after
            .as_ref()
            .and_then(|k| self.state.store.get(k))
            .map_or(0, |o| rv_of(o));
        self.state.audit.push_back(Arc::new(AuditEntry {
            time: now,
            principal: req.principal.clone(),
            verb: req.verb,
            gr: req.gr.clone(),
            subresource: req.subresource,
            namespace,
            name,
            code,
            message,
            rv_before,
            rv_after,
        }));
        if result.is_ok() && self.gc_mode == GcMode::Auto && !self.in_gc && self.gc_pending() {
            self.collect_garbage(now);
        }
        result
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
    fn attempt_to_delete(&mut self, now: SimTime, key: &ObjectKey) -> usize {
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
        let uid = uid_of(&obj).to_owned();
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
    fn unblock_references(&mut self, now: SimTime, key: &ObjectKey, obj: &Value) -> usize {
        let mut refs = owner_refs(obj).to_vec();
        let mut changed = false;
        for r in &mut refs {
            if r.get("blockOwnerDeletion") == Some(&Value::Bool(true)) {
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
    fn gc_patch(&mut self, now: SimTime, key: &ObjectKey, read: &Value, field: &str, value: Value) {
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
    fn foreground_step(
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

    /// Watch events of every persisted write since the last drain, in order.
    pub fn drain_watch_events(&mut self) -> Vec<WatchEvent> {
        self.drain_shared_watch_events()
            .into_iter()
            .map(|(event, object)| WatchEvent {
                object: Arc::unwrap_or_clone(object),
                ..event
            })
            .collect()
    }

    /// [`Self::drain_watch_events`] without copying objects: each event (its `object` left
    /// `Null`) with the object as stored, shared.
    pub fn drain_shared_watch_events(&mut self) -> Vec<(WatchEvent, Arc<Value>)> {
        let pending = std::mem::take(&mut self.state.pending);
        pending
            .into_iter()
            .map(|e| {
                let e = Arc::unwrap_or_clone(e);
                (e.event, e.object)
            })
            .collect()
    }

    /// Number of watch events waiting to be drained.
    pub fn pending_watch_events(&self) -> usize {
        self.state.pending.len()
    }

    /// The full audit log, oldest first.
    pub fn audit(&self) -> impl Iterator<Item = &AuditEntry> {
        self.state.audit.iter().map(AsRef::as_ref)
    }

    /// Number of audit entries.
    pub fn audit_len(&self) -> usize {
        self.state.audit.len()
    }

    /// Audit entries from index `from` on (for incremental display).
    pub fn audit_since(&self, from: usize) -> impl Iterator<Item = &AuditEntry> {
        self.state.audit.iter().skip(from).map(AsRef::as_ref)
    }

    /// Direct read of a stored object: no RBAC, no audit (for the UI, kstatus and tests).
    pub fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.state.store.get(key).map(AsRef::as_ref)
    }

    /// Every stored object, ordered by key.
    pub fn objects(&self) -> impl Iterator<Item = (&ObjectKey, &Value)> {
        self.state.store.iter().map(|(k, v)| (k, v.as_ref()))
    }

    /// Stored objects of one resource in one namespace (`Some`) or all (`None`), ordered by
    /// key: a direct read without RBAC or audit, served by a range scan.
    pub fn list_objects<'a>(
        &'a self,
        gr: &'a GroupResource,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Value)> + 'a {
        self.state
            .store
            .range(gr, namespace)
            .map(|(k, v)| (k, v.as_ref()))
    }

    /// Keys of the objects whose ownerReferences name `owner_uid`.
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<ObjectKey> {
        self.state.store.dependents_of(owner_uid)
    }

    /// The stored object with this uid, if any.
    pub fn key_for_uid(&self, uid: &str) -> Option<&ObjectKey> {
        self.state.store.key_for_uid(uid)
    }

    pub fn object_count(&self) -> usize {
        self.state.store.len()
    }

    /// The resource serving `apiVersion`/`kind`, e.g. (`apps/v1`, `Deployment`).
    pub fn resource_for(&self, api_version: &str, kind: &str) -> Option<ResourceInfo> {
        self.state.registry.for_kind(api_version, kind).cloned()
    }

    pub fn resource_info(&self, gr: &GroupResource) -> Option<ResourceInfo> {
        self.state.registry.get(gr).cloned()
    }

    /// Every served resource (built-in and custom), ordered by group and resource.
    pub fn resources(&self) -> impl Iterator<Item = &ResourceInfo> {
        self.state.registry.iter()
    }

    /// The global resourceVersion counter: the resourceVersion of the latest persisted write.
    pub fn resource_version(&self) -> u64 {
        self.state.rv
    }

    /// The key a manifest would be stored under (namespace defaulted to `default` for
    /// namespaced kinds), or why it can't be.
    pub fn key_for_manifest(&self, manifest: &Value) -> Result<ObjectKey, ApiError> {
        let info = self.info_for_body(manifest)?;
        let ns = if info.namespaced {
            let ns = meta_str(manifest, "namespace");
            if ns.is_empty() {
                "default"
            } else {
                ns
            }
        } else {
            ""
        };
        Ok(ObjectKey::new(
            info.gr.clone(),
            ns,
            meta_str(manifest, "name"),
        ))
    }

    /// A create request for a pasted manifest, its resource found from `apiVersion`/`kind`.
    pub fn create_request_for(
        &self,
        principal: &str,
        manifest: Value,
    ) -> Result<ApiRequest, ApiError> {
        let info = self.info_for_body(&manifest)?;
        let ns = if info.namespaced {
            meta_str(&manifest, "namespace").to_owned()
        } else {
            String::new()
        };
        Ok(ApiRequest::create(
            principal,
            info.gr.clone(),
            &ns,
            manifest,
        ))
    }

    /// A `kubectl apply`-like request for a manifest: a create if the object doesn't exist,
    /// else a merge patch of the manifest (without `status` and server-set metadata) onto it.
    pub fn apply_request_for(
        &self,
        principal: &str,
        manifest: Value,
    ) -> Result<ApiRequest, ApiError> {
        let key = self.key_for_manifest(&manifest)?;
        if key.name.is_empty() || self.state.store.get(&key).is_none() {
            return self.create_request_for(principal, manifest);
        }
        let mut patch = manifest;
        if let Some(o) = patch.as_object_mut() {
            o.remove("status");
        }
        let m = meta_mut(&mut patch);
        for k in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            m.remove(k);
        }
        Ok(ApiRequest::patch(
            principal,
            key.gr,
            &key.namespace,
            &key.name,
            PatchType::Merge,
            patch,
        ))
    }

    fn info_for_body(&self, body: &Value) -> Result<ResourceInfo, ApiError> {
        let Some(obj) = body.as_object() else {
            return Err(bad_request(format!(
                "a manifest must be an object, found {body}"
            )));
        };
        let short = || {
            let s = body.to_string();
            if s.len() > 120 {
                format!(
                    "{}...",
                    &s[..s
                        .char_indices()
                        .take_while(|(i, _)| *i < 120)
                        .last()
                        .map_or(0, |(i, c)| i + c.len_utf8())]
                )
            } else {
                s
            }
        };
        let av = match obj.get("apiVersion") {
            Some(Value::String(s)) if !s.is_empty() => s.as_str(),
            Some(Value::String(_)) | None => {
                return Err(bad_request(format!(
                    "Object 'apiVersion' is missing in '{}'",
                    short()
                )))
            }
            Some(other) => {
                return Err(bad_request(format!(
                    "json: cannot unmarshal {} into Go struct field .apiVersion of type string",
                    other
                )))
            }
        };
        let kind = match obj.get("kind") {
            Some(Value::String(s)) if !s.is_empty() => s.as_str(),
            Some(Value::String(_)) | None => {
                return Err(bad_request(format!(
                    "Object 'Kind' is missing in '{}'",
                    short()
                )))
            }
            Some(other) => {
                return Err(bad_request(format!(
                    "json: cannot unmarshal {} into Go struct field .kind of type string",
                    other
                )))
            }
        };
        self.state
            .registry
            .for_kind(av, kind)
            .cloned()
            .ok_or_else(|| {
                let (group, version) = split_api_version(av);
                bad_request(format!(
                    "no matches for kind \"{kind}\" in version \"{}\"",
                    if group.is_empty() {
                        version.to_owned()
                    } else {
                        format!("{group}/{version}")
                    }
                ))
            })
    }

    fn target_key(&self, req: &ApiRequest, body: &RequestBody) -> Option<ObjectKey> {
        let info = self.state.registry.get(&req.gr)?;
        if info.rules == KindRules::Binding {
            let ns = self.request_namespace(info, req, body).ok()?;
            let name = match body {
                RequestBody::Object(b) => meta_str(b, "name").to_owned(),
                _ => String::new(),
            };
            return Some(ObjectKey::new(GroupResource::new("", "pods"), &ns, &name));
        }
        let ns = self.request_namespace(info, req, body).ok()?;
        let name = if req.name.is_empty() {
            match body {
                RequestBody::Object(b) if req.verb == Verb::Create => {
                    meta_str(b, "name").to_owned()
                }
                _ => String::new(),
            }
        } else {
            req.name.clone()
        };
        Some(ObjectKey::new(req.gr.clone(), &ns, &name))
    }

    fn request_namespace(
        &self,
        info: &ResourceInfo,
        req: &ApiRequest,
        body: &RequestBody,
    ) -> Result<String, ApiError> {
        if !info.namespaced {
            return Ok(String::new());
        }
        if !req.namespace.is_empty() || req.verb == Verb::List {
            return Ok(req.namespace.clone());
        }
        if let RequestBody::Object(b) = body {
            let ns = meta_str(b, "namespace");
            if !ns.is_empty() {
                return Ok(ns.to_owned());
            }
        }
        Ok("default".to_owned())
    }

    fn dispatch(&mut self, now: SimTime, req: &ApiRequest, body: RequestBody) -> ApiResult {
        let info = self
            .state
            .registry
            .get(&req.gr)
            .cloned()
            .ok_or_else(unknown_resource)?;
        if req.subresource.is_some() {
            if !info.status_subresource {
                return Err(unknown_resource());
            }
            if matches!(req.verb, Verb::Create | Verb::List | Verb::Delete) {
                return Err(method_not_allowed(req.verb.as_str(), &req.gr));
            }
        }
        if info.rules == KindRules::Binding && req.verb != Verb::Create {
            return Err(method_not_allowed(req.verb.as_str(), &req.gr));
        }
        let ns = self.request_namespace(&info, req, &body)?;
        let authz_name = if req.verb == Verb::Create {
            ""
        } else {
            req.name.as_str()
        };
        if self.rbac_enforced {
            let attrs = Attributes {
                user: &req.principal,
                verb: req.verb.as_str(),
                gr: &req.gr,
                subresource: req.subresource,
                namespace: &ns,
                name: authz_name,
            };
            if let Err(lookup_errors) = rbac::check(&self.state.store, &attrs) {
                let reason = rbac::denial_reason_with_errors(&attrs, &lookup_errors);
                return Err(forbidden(&req.gr, authz_name, &reason));
            }
        }
        if req.verb != Verb::Create && req.verb != Verb::List && req.name.is_empty() {
            return Err(bad_request("resource name may not be empty"));
        }
        let status = req.subresource == Some(Subresource::Status);
        match req.verb {
            Verb::Get => {
                let key = ObjectKey::new(req.gr.clone(), &ns, &req.name);
                self.state
                    .store
                    .get(&key)
                    .map(|o| (**o).clone())
                    .ok_or_else(|| not_found(&req.gr, &req.name))
            }
            Verb::List => self.list(&info, &ns, req.label_selector.as_deref()),
            Verb::Create => {
                let RequestBody::Object(body) = body else {
                    return Err(bad_request(
                        "the body of a create request must be an object",
                    ));
                };
                check_body(&body)?;
                if let Some(b) = body.as_object() {
                    let body_ns = b
                        .get("metadata")
                        .and_then(|m| m.get("namespace"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    if info.namespaced && !body_ns.is_empty() && body_ns != ns {
                        return Err(bad_request("the namespace of the provided object does not match the namespace sent on the request"));
                    }
                }
                let body_info = self.info_for_body(&body)?;
                if body_info.gr != info.gr {
                    return Err(bad_request(format!(
                        "the API version in the data ({}) does not match the expected API version ({}) for kind {}",
                        body.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                        info.api_version(),
                        info.kind
                    )));
                }
                if info.rules == KindRules::Binding {
                    return self.bind(now, &ns, &body, &req.principal);
                }
                self.create(now, &info, &ns, body, &req.principal)
            }
            Verb::Update => {
                let RequestBody::Object(body) = body else {
                    return Err(bad_request(
                        "the body of an update request must be an object",
                    ));
                };
                check_body(&body)?;
                let body_info = self.info_for_body(&body)?;
                if body_info.gr != info.gr {
                    return Err(bad_request(format!(
                        "the API version in the data ({}) does not match the expected API version ({}) for kind {}",
                        body.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                        info.api_version(),
                        info.kind
                    )));
                }
                self.write(now, &info, &ns, &req.name, body, status, &req.principal)
            }
            Verb::Patch => {
                let RequestBody::Patch(pt, patch) = body else {
                    return Err(bad_request("the body of a patch request must be a patch"));
                };
                check_body(&patch)?;
                let key = ObjectKey::new(req.gr.clone(), &ns, &req.name);
                let Some(stored) = self.state.store.get(&key) else {
                    return Err(not_found(&req.gr, &req.name));
                };
                let mut doc = (**stored).clone();
                match pt {
                    PatchType::Merge => {
                        if !patch.is_object() {
                            return Err(bad_request(format!(
                                "the merge patch must be a JSON object, found {patch}"
                            )));
                        }
                        json_patch::merge(&mut doc, &patch);
                    }
                    PatchType::Json => {
                        let ops: json_patch::Patch = serde_json::from_value(patch)
                            .map_err(|e| bad_request(format!("invalid JSON patch: {e}")))?;
                        // `doc` is a copy, dropped on error, so nothing needs undoing; and
                        // json_patch::patch panics when it cannot undo (a `move` onto the
                        // prefix of its `from` cannot be moved back; found by the fuzzer).
                        json_patch::patch_unsafe(&mut doc, &ops).map_err(|e| {
                            ApiError::new(
                                StatusReason::Invalid,
                                format!("the server rejected our request due to an error in our request: {e}"),
                            )
                        })?;
                    }
                }
                check_body(&doc)?;
                if !doc.is_object() {
                    return Err(bad_request("the patched document is not an object"));
                }
                self.write(now, &info, &ns, &req.name, doc, status, &req.principal)
            }
            Verb::Delete => {
                let options = match body {
                    RequestBody::Object(o) => Some(o),
                    _ => None,
                };
                self.delete(now, &info, &ns, &req.name, options.as_ref())
            }
        }
    }

    fn list(&self, info: &ResourceInfo, ns: &str, selector: Option<&str>) -> ApiResult {
        let sel = match selector {
            Some(s) => Selector::parse(s).map_err(bad_request)?,
            None => Selector::default(),
        };
        let scope = if info.namespaced && !ns.is_empty() {
            Some(ns)
        } else {
            None
        };
        let items: Vec<Value> = self
            .state
            .store
            .range(&info.gr, scope)
            .filter(|(_, o)| sel.matches_object(o))
            .map(|(_, o)| (**o).clone())
            .collect();
        Ok(json!({
            "apiVersion": info.api_version(),
            "kind": format!("{}List", info.kind),
            "metadata": {"resourceVersion": self.state.rv.to_string()},
            "items": items,
        }))
    }

    fn next_rv(&mut self) -> u64 {
        self.state.rv += 1;
        self.state.rv
    }

    fn emit(
        &mut self,
        now: SimTime,
        event_type: WatchEventType,
        key: ObjectKey,
        object: Arc<Value>,
        rv: u64,
    ) {
        self.state.pending.push_back(Arc::new(PendingEvent {
            event: WatchEvent {
                event_type,
                key,
                object: Value::Null,
                resource_version: rv,
                time: now,
            },
            object,
        }));
    }

    /// Persists `obj` under `key` with a fresh resourceVersion and emits the watch event.
    fn persist(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        mut obj: Value,
        event: WatchEventType,
    ) -> Value {
        let rv = self.next_rv();
        meta_mut(&mut obj).insert("resourceVersion".into(), Value::from(rv.to_string()));
        if let Some(old) = self.state.store.get(&key).cloned() {
            self.queue_graph_changes(&old, &obj);
        }
        let obj = Arc::new(obj);
        self.state.store.put_shared(key.clone(), Arc::clone(&obj));
        self.emit(now, event, key, Arc::clone(&obj), rv);
        Arc::unwrap_or_clone(obj)
    }

    /// What kube's garbage collector reacts to when an object changes (its graph builder's
    /// update handling): an owner deleting in the foreground is looked at again when a
    /// dependent stops blocking it (the reference is removed or no longer has
    /// `blockOwnerDeletion: true`); a newly referenced owner that does not exist has its
    /// dependents collected; an object that starts waiting for its dependents is processed.
    fn queue_graph_changes(&mut self, old: &Value, new: &Value) {
        if waits_for_dependents(new) && !waits_for_dependents(old) {
            let uid = uid_of(new);
            if !uid.is_empty() {
                self.state.gc_queue.insert(uid.to_owned());
                self.state.gc_started.insert(uid.to_owned());
            }
        }
        let (before, after) = (
            old.at("/metadata/ownerReferences"),
            new.at("/metadata/ownerReferences"),
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

    /// Removes an object for good: a fresh resourceVersion, a DELETED event, the owner queued
    /// for garbage collection, and kind-specific cleanup (CRD instances, namespace contents).
    fn remove(&mut self, now: SimTime, key: &ObjectKey) -> Option<Value> {
        let old = self.state.store.remove(key)?;
        let mut obj = (*old).clone();
        let rv = self.next_rv();
        meta_mut(&mut obj).insert("resourceVersion".into(), Value::from(rv.to_string()));
        let uid = uid_of(&obj).to_owned();
        let obj = Arc::new(obj);
        self.emit(
            now,
            WatchEventType::Deleted,
            key.clone(),
            Arc::clone(&obj),
            rv,
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
        Some(Arc::unwrap_or_clone(obj))
    }

    fn invalid(&self, info: &ResourceInfo, name: &str, errs: &[FieldError]) -> ApiError {
        invalid(
            &info.qualified_kind(),
            &info.gr.group,
            &info.kind,
            name,
            errs,
        )
    }

    fn create(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        mut obj: Value,
        principal: &str,
    ) -> ApiResult {
        strategy::type_check(info, &obj).map_err(bad_request)?;
        if obj
            .get("metadata")
            .is_some_and(|m| !m.is_object() && !m.is_null())
        {
            return Err(bad_request("metadata must be an object"));
        }
        if !meta_str(&obj, "resourceVersion").is_empty() {
            // kube's storage layer refuses this with a plain error, which the handler turns
            // into a 500.
            return Err(ApiError::new(
                StatusReason::InternalError,
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let mut name = meta_str(&obj, "name").to_owned();
        if name.is_empty() {
            let prefix = meta_str(&obj, "generateName").to_owned();
            if !prefix.is_empty() {
                loop {
                    self.state.name_counter += 1;
                    let candidate = format!("{prefix}{}", name_suffix(self.state.name_counter));
                    let key = ObjectKey::new(info.gr.clone(), ns, &candidate);
                    if self.state.store.get(&key).is_none() {
                        name = candidate;
                        break;
                    }
                }
            }
        }
        if info.namespaced {
            let ns_key = ObjectKey::new(GroupResource::new("", "namespaces"), "", ns);
            match self.state.store.get(&ns_key) {
                None => return Err(not_found(&GroupResource::new("", "namespaces"), ns)),
                Some(n) if is_deleting(n) => {
                    return Err(forbidden(
                        &info.gr,
                        &name,
                        &format!("unable to create new content in namespace {ns} because it is being terminated"),
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some(node) = principal.strip_prefix("system:node:") {
            if info.rules == KindRules::Node && name != node {
                return Err(forbidden(
                    &info.gr,
                    &name,
                    &format!("node \"{node}\" is not allowed to modify node \"{name}\""),
                ));
            }
        }
        let key = ObjectKey::new(info.gr.clone(), ns, &name);
        if !name.is_empty() && self.state.store.get(&key).is_some() {
            return Err(already_exists(&info.gr, &name));
        }
        self.state.uid_counter += 1;
        let uid = make_uid(self.state.uid_counter);
        {
            let m = meta_mut(&mut obj);
            if !name.is_empty() {
                m.insert("name".into(), Value::from(name.clone()));
            }
            if info.namespaced {
                m.insert("namespace".into(), Value::from(ns));
            } else {
                m.remove("namespace");
            }
            m.insert("uid".into(), Value::from(uid));
            m.insert("creationTimestamp".into(), Value::from(now.rfc3339()));
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
            if info.has_generation() {
                m.insert("generation".into(), Value::from(1));
            } else {
                m.remove("generation");
            }
        }
        if info.status_subresource {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
        strategy::apply_defaults(info, &mut obj);
        if info.rules == KindRules::Pod {
            self.admit_service_account(info, ns, &name, &mut obj)?;
        }
        let mut errs = Vec::new();
        strategy::validate_metadata(info, &obj, &mut errs);
        strategy::validate_spec(info, &obj, &mut errs);
        strategy::validate_status(info, &obj, &mut errs);
        if !errs.is_empty() {
            return Err(self.invalid(info, &name, &errs));
        }
        self.prepare_create(now, info, &mut obj);
        let created = self.persist(now, key, obj, WatchEventType::Added);
        if info.rules == KindRules::CustomResourceDefinition {
            self.install_crd(now, &created, principal);
        }
        if info.rules == KindRules::Namespace && principal != principals::APISERVER {
            // The serviceaccounts-controller's work, done with the namespace (not audited).
            let sa = default_service_account(meta_str(&created, "name"));
            if let Some(sa_info) = self.kind_of(&sa) {
                let ns = meta_str(&created, "name").to_owned();
                let _ = self.create(now, &sa_info, &ns, sa, principals::APISERVER);
            }
        }
        let dangling: Vec<String> = owner_uids(&created)
            .into_iter()
            .filter(|u| !self.state.store.contains_uid(u))
            .collect();
        for u in dangling {
            self.state.gc_queue.insert(u);
        }
        Ok(created)
    }

    /// kube's ServiceAccount admission [plugin/pkg/admission/serviceaccount/admission.go]: a Pod
    /// runs as `default` unless it names an account; the account must exist in its namespace;
    /// unless token automounting is off (on the Pod or the account), the Pod gets the projected
    /// `kube-api-access-<suffix>` volume (token, CA bundle, namespace) mounted read-only into every
    /// container. The suffix is drawn from the pod's name here (kube draws it at random).
    fn admit_service_account(
        &self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        pod: &mut Value,
    ) -> Result<(), ApiError> {
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let account = spec
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
            .unwrap_or("default")
            .to_owned();
        let key = ObjectKey::new(GroupResource::new("", "serviceaccounts"), ns, &account);
        let Some(sa) = self.state.store.get(&key) else {
            return Err(forbidden(
                &info.gr,
                name,
                &format!(
                    "error looking up service account {ns}/{account}: serviceaccount {} not found",
                    crate::api::validation::go_quote(&account)
                ),
            ));
        };
        spec.insert("serviceAccountName".into(), json!(account));
        spec.insert("serviceAccount".into(), json!(account));
        let automount = spec
            .get("automountServiceAccountToken")
            .and_then(Value::as_bool)
            .or_else(|| {
                sa.get("automountServiceAccountToken")
                    .and_then(Value::as_bool)
            })
            .unwrap_or(true);
        if !automount {
            return Ok(());
        }
        const MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
        let mounted = |c: &Value| {
            c.get("volumeMounts")
                .and_then(Value::as_array)
                .is_some_and(|ms| {
                    ms.iter()
                        .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(MOUNT))
                })
        };
        let volume = format!(
            "kube-api-access-{}",
            name_suffix(u64::from(crate::controllers::util::fnv32a(
                format!("{ns}/{name}").as_bytes()
            )))
        );
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if let Some(list) = volumes.as_array_mut() {
            list.push(json!({"name": volume, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]}}));
        }
        for list in ["initContainers", "containers"] {
            let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for c in cs.iter_mut().filter(|c| !mounted(c)) {
                if let Some(c) = c.as_object_mut() {
                    let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
                    if let Some(ms) = mounts.as_array_mut() {
                        ms.push(json!({"name": volume, "readOnly": true, "mountPath": MOUNT}));
                    }
                }
            }
        }
        Ok(())
    }

    /// Server-side fields some kinds get on create (kube's registries and controllers that
    /// run inside the API server).
    fn prepare_create(&mut self, _now: SimTime, info: &ResourceInfo, obj: &mut Value) {
        match info.rules {
            KindRules::Pod => {
                // Mutating admission on create [plugin/pkg/admission]: DefaultTolerationSeconds
                // tolerates not-ready and unreachable nodes for 300 s (unless the pod already
                // tolerates them), Priority sets the default priority 0 with its preemption
                // policy when no class is named.
                if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
                    if let Some(list) = tolerations.as_array_mut() {
                        for key in [
                            "node.kubernetes.io/not-ready",
                            "node.kubernetes.io/unreachable",
                        ] {
                            let tolerated = list.iter().any(|t| {
                                let k = t.get("key").and_then(Value::as_str).unwrap_or("");
                                let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
                                (k == key || k.is_empty())
                                    && (effect == "NoExecute" || effect.is_empty())
                            });
                            if !tolerated {
                                list.push(json!({"key": key, "operator": "Exists",
                                    "effect": "NoExecute", "tolerationSeconds": 300}));
                            }
                        }
                    }
                    if spec.get("priorityClassName").is_none() {
                        spec.entry("priority").or_insert(json!(0));
                        spec.entry("preemptionPolicy")
                            .or_insert(json!("PreemptLowerPriority"));
                    }
                }
                let qos = strategy::qos_class(obj);
                obj["status"] = json!({"phase": "Pending", "qosClass": qos});
            }
            KindRules::Namespace => {
                obj["status"] = json!({"phase": "Active"});
            }
            // PrepareForCreate resets status to the kind's empty Go struct, which prints every
            // field without omitempty [k8s.io/api apps/v1 types.go]: ReplicaSetStatus.replicas
            // has none, every DeploymentStatus field has it.
            KindRules::ReplicaSet => {
                obj["status"] = json!({"replicas": 0});
            }
            KindRules::Deployment => {
                obj["status"] = json!({});
            }
            KindRules::Service => {
                let ty = obj
                    .at("/spec/type")
                    .and_then(Value::as_str)
                    .unwrap_or("ClusterIP");
                let ip = obj
                    .at("/spec/clusterIP")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if ty != "ExternalName" && ip.is_empty() {
                    self.state.ip_counter += 1;
                    let n = self.state.ip_counter;
                    let ip = format!("10.96.{}.{}", (n / 250) % 256, n % 250 + 1);
                    obj["spec"]["clusterIP"] = json!(ip);
                    obj["spec"]["clusterIPs"] = json!([ip]);
                }
                obj["status"] = json!({"loadBalancer": {}});
            }
            _ => {}
        }
    }

    /// Registers a new CRD's resource, marks the CRD Established (as kube's apiextensions
    /// controllers do), and adds the resource to the users' role (as clusterrole aggregation
    /// does for `edit`).
    fn install_crd(&mut self, now: SimTime, crd: &Value, _principal: &str) {
        let Some(info) = crd_resource_info(crd) else {
            return;
        };
        self.state.registry.insert(info.clone());
        let key = ObjectKey::new(
            GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
            "",
            meta_str(crd, "name"),
        );
        let mut obj = crd.clone();
        let t = now.rfc3339();
        obj["status"] = json!({
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": t},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": t},
            ],
            "acceptedNames": obj.at("/spec/names").cloned().unwrap_or(json!({})),
            "storedVersions": info.versions.first().map(|v| vec![v.clone()]).unwrap_or_default(),
        });
        self.persist(now, key, obj, WatchEventType::Modified);
        let role_key = ObjectKey::new(
            GroupResource::new("rbac.authorization.k8s.io", "clusterroles"),
            "",
            rbac::USER_ROLE,
        );
        if let Some(role) = self.state.store.get(&role_key) {
            let mut role = (**role).clone();
            let rule = json!({"apiGroups": [info.gr.group], "resources": [info.gr.resource], "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]});
            if let Some(rules) = role.get_mut("rules").and_then(Value::as_array_mut) {
                if !rules.contains(&rule) {
                    rules.push(rule);
                    self.persist(now, role_key, role, WatchEventType::Modified);
                }
            }
        }
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the request's parts, already resolved by dispatch"
    )]
    fn write(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        mut new: Value,
        status_write: bool,
        principal: &str,
    ) -> ApiResult {
        let gr = &info.gr;
        strategy::type_check(info, &new).map_err(bad_request)?;
        if new
            .get("metadata")
            .is_some_and(|m| !m.is_object() && !m.is_null())
        {
            return Err(bad_request("metadata must be an object"));
        }
        let key = ObjectKey::new(gr.clone(), ns, name);
        let Some(old_arc) = self.state.store.get(&key).cloned() else {
            return Err(not_found(gr, name));
        };
        let old: &Value = &old_arc;
        let body_name = meta_str(&new, "name").to_owned();
        if !body_name.is_empty() && body_name != name {
            return Err(bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = meta_str(&new, "namespace").to_owned();
        if info.namespaced && !body_ns.is_empty() && body_ns != ns {
            return Err(bad_request("the namespace of the provided object does not match the namespace sent on the request"));
        }
        // Admission (kube runs it before the storage layer's concurrency check).
        self.node_restriction(principal, info, old, status_write)?;
        // Optimistic concurrency.
        let req_rv = meta_str(&new, "resourceVersion").to_owned();
        if req_rv.is_empty() {
            if !info.allows_unconditional_update() {
                let err = FieldError::invalid(
                    "metadata.resourceVersion",
                    Value::from(0),
                    "must be specified for an update",
                );
                return Err(invalid(
                    &gr.qualified(),
                    &gr.group,
                    &gr.resource,
                    name,
                    &[err],
                ));
            }
        } else if req_rv != meta_str(old, "resourceVersion") {
            return Err(conflict(gr, name));
        }
        // Identity: uid may be omitted, not changed.
        let req_uid = meta_str(&new, "uid").to_owned();
        if !req_uid.is_empty() && req_uid != meta_str(old, "uid") {
            let err =
                FieldError::invalid("metadata.uid", Value::from(req_uid), "field is immutable");
            return Err(self.invalid(info, name, &[err]));
        }
        let mut result = if status_write {
            self.status_result(info, old, new)
        } else {
            if info.status_subresource {
                if let Some(o) = new.as_object_mut() {
                    set_or_remove(o, "status", old.get("status"));
                }
            }
            new
        };
        // Server-owned metadata always comes from the stored object.
        {
            let empty = Map::new();
            let old_meta = meta(old).unwrap_or(&empty);
            let m = meta_mut(&mut result);
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            ] {
                set_or_remove(m, k, old_meta.get(k));
            }
            m.insert(
                "resourceVersion".into(),
                old_meta
                    .get("resourceVersion")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
        }
        if is_deleting(old) {
            let before = finalizers(old);
            let added: Vec<String> = finalizers(&result)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                let list: Vec<String> = added
                    .iter()
                    .map(|f| super::validation::go_quote(f))
                    .collect();
                let err = FieldError::forbidden(
                    "metadata.finalizers",
                    format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}", list.join(", ")),
                );
                return Err(self.invalid(info, name, &[err]));
            }
        }
        strategy::apply_defaults(info, &mut result);
        let mut errs = Vec::new();
        strategy::validate_metadata(info, &result, &mut errs);
        if !status_write {
            strategy::validate_spec(info, &result, &mut errs);
            strategy::validate_update(info, old, &result, &mut errs);
        }
        if status_write || !info.status_subresource {
            strategy::validate_status(info, &result, &mut errs);
        }
        if !errs.is_empty() {
            return Err(self.invalid(info, name, &errs));
        }
        if !status_write && info.has_generation() && strategy::generation_bumps(info, old, &result)
        {
            let g = old
                .at("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut result).insert("generation".into(), Value::from(g + 1));
        }
        if result == *old {
            return Ok(old.clone());
        }
        // `ShouldDeleteDuringUpdate`: the last finalizer gone, and no grace period pending (a
        // terminating Pod stays until its kubelet deletes it).
        let no_grace_left = result
            .at("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .is_none_or(|g| g == 0);
        if is_deleting(&result) && finalizers(&result).is_empty() && no_grace_left {
            self.queue_graph_changes(old, &result);
            self.state.store.put(key.clone(), result);
            let removed = self.remove(now, &key).unwrap_or_default();
            return Ok(removed);
        }
        let saved = self.persist(now, key, result, WatchEventType::Modified);
        if info.rules == KindRules::CustomResourceDefinition {
            if let Some(new_info) = crd_resource_info(&saved) {
                self.state.registry.insert(new_info);
            }
        }
        Ok(saved)
    }

    /// The object a `/status` write produces: built-in kinds take the request's status and
    /// metadata but keep the stored spec (Deployments also keep their labels); custom resources
    /// keep everything stored except status.
    fn status_result(&self, info: &ResourceInfo, old: &Value, new: Value) -> Value {
        if info.rules == KindRules::Custom {
            let mut result = old.clone();
            if let Some(o) = result.as_object_mut() {
                set_or_remove(o, "status", new.get("status"));
            }
            let managed = new.at("/metadata/managedFields").cloned();
            set_or_remove(meta_mut(&mut result), "managedFields", managed.as_ref());
            return result;
        }
        let mut result = new;
        if let (Some(r), Some(o)) = (result.as_object_mut(), old.as_object()) {
            let keys: Vec<String> = r.keys().chain(o.keys()).cloned().collect();
            for k in keys {
                if !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind") {
                    set_or_remove(r, &k, o.get(&k));
                }
            }
        }
        if info.rules == KindRules::Deployment {
            let labels = old.at("/metadata/labels").cloned();
            set_or_remove(meta_mut(&mut result), "labels", labels.as_ref());
        }
        result
    }

    /// kube's NodeRestriction admission: a kubelet may only write its own Node and the status
    /// of pods bound to it.
    fn node_restriction(
        &self,
        principal: &str,
        info: &ResourceInfo,
        old: &Value,
        status_write: bool,
    ) -> Result<(), ApiError> {
        let Some(node) = principal.strip_prefix("system:node:") else {
            return Ok(());
        };
        let name = meta_str(old, "name");
        match info.rules {
            KindRules::Pod if status_write => {
                let bound = old
                    .at("/spec/nodeName")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if bound != node {
                    return Err(forbidden(&info.gr, name, &format!("node \"{node}\" can only update pod status for pods with spec.nodeName set to itself")));
                }
            }
            KindRules::Node if name != node => {
                return Err(forbidden(
                    &info.gr,
                    name,
                    &format!("node \"{node}\" is not allowed to modify node \"{name}\""),
                ));
            }
            _ => {}
        }
        Ok(())
    }

    fn delete(
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
        if let Some(pre) = options.and_then(|o| o.get("preconditions")) {
            if let Some(uid) = pre.get("uid").and_then(Value::as_str) {
                if uid != uid_of(&old) {
                    return Err(conflict_with(
                        gr,
                        name,
                        &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        uid_of(&old)
                    ),
                    ));
                }
            }
            if let Some(rv) = pre.get("resourceVersion").and_then(Value::as_str) {
                if rv != meta_str(&old, "resourceVersion") {
                    return Err(conflict_with(gr, name, &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        meta_str(&old, "resourceVersion")
                    )));
                }
            }
        }
        let explicit = options
            .and_then(|o| o.get("propagationPolicy"))
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
        let orphan = explicit.map_or(first_gc.is_some_and(|f| f == ORPHAN), |p| p == "Orphan");
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
            return Ok(old);
        }
        if kept.is_empty() {
            let uid = uid_of(&old).to_owned();
            if deleting {
                let mut obj = old;
                meta_mut(&mut obj).insert("finalizers".into(), json!([]));
                self.state.store.put(key.clone(), obj);
            }
            self.remove(now, &key);
            return Ok(status_success(gr, name, &uid));
        }
        let mut obj = old;
        let m = meta_mut(&mut obj);
        if !same {
            m.insert("finalizers".into(), json!(kept));
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
    fn delete_pod(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        old: Value,
        (kept, same): (Vec<String>, bool),
        options: Option<&Value>,
    ) -> ApiResult {
        let requested = options
            .and_then(|o| o.get("gracePeriodSeconds"))
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
                    return Ok(obj);
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
                m.insert("deletionTimestamp".into(), Value::from(moved.rfc3339()));
                m.insert("deletionGracePeriodSeconds".into(), Value::from(period));
                return Ok(self.write_deleting_pod(now, key, obj, period == 0 && kept.is_empty()));
            }
            // Deleting with no grace left (finalizers): as for any other kind.
            if kept.is_empty() {
                meta_mut(&mut obj).insert("finalizers".into(), json!([]));
                self.state.store.put(key.clone(), obj);
                return Ok(self.remove(now, &key).unwrap_or_default());
            }
            if same {
                return Ok(obj);
            }
            meta_mut(&mut obj).insert("finalizers".into(), json!(kept));
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
            meta_mut(&mut obj).insert("finalizers".into(), json!(kept));
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
    fn write_deleting_pod(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        obj: Value,
        remove_now: bool,
    ) -> Value {
        let written = self.persist(now, key.clone(), obj, WatchEventType::Modified);
        if remove_now {
            return self.remove(now, &key).unwrap_or(written);
        }
        written
    }

    /// `propagationPolicy: Orphan`: dependents lose their ownerReference to the owner.
    fn orphan_dependents(&mut self, now: SimTime, owner: &Value) {
        let uid = uid_of(owner).to_owned();
        for key in self.state.store.dependents_of(&uid) {
            let Some(dep) = self.state.store.get(&key).map(|o| (**o).clone()) else {
                continue;
            };
            let mut dep = dep;
            if let Some(refs) = meta_mut(&mut dep)
                .get_mut("ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid.as_str()));
            }
            self.persist(now, key, dep, WatchEventType::Modified);
        }
    }

    /// `POST bindings`: sets the pod's node and its PodScheduled condition.
    fn bind(&mut self, now: SimTime, ns: &str, body: &Value, _principal: &str) -> ApiResult {
        let pod_name = meta_str(body, "name").to_owned();
        let node = body
            .at("/target/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let pods = GroupResource::new("", "pods");
        let mut errs = Vec::new();
        if pod_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
        if node.is_empty() {
            errs.push(FieldError::required("target.name", ""));
        }
        if !errs.is_empty() {
            return Err(invalid("Binding", "", "Binding", &pod_name, &errs));
        }
        let key = ObjectKey::new(pods.clone(), ns, &pod_name);
        let Some(mut pod) = self.state.store.get(&key).map(|o| (**o).clone()) else {
            return Err(not_found(&pods, &pod_name));
        };
        let binding_gr = GroupResource::new("", "pods/binding");
        if is_deleting(&pod) {
            return Err(conflict_with(
                &binding_gr,
                &pod_name,
                &format!("pod {pod_name} is being deleted, cannot be assigned to a host"),
            ));
        }
        let current = pod
            .at("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !current.is_empty() {
            return Err(conflict_with(
                &binding_gr,
                &pod_name,
                &format!("pod {pod_name} is already assigned to node \"{current}\""),
            ));
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("nodeName".into(), Value::from(node));
        }
        let cond = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now.rfc3339()});
        let status = pod
            .as_object_mut()
            .map(|o| o.entry("status").or_insert_with(|| json!({})));
        if let Some(Value::Object(st)) = status {
            let conds = st.entry("conditions").or_insert_with(|| json!([]));
            if let Some(list) = conds.as_array_mut() {
                match list
                    .iter_mut()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
                {
                    Some(c) => *c = cond,
                    None => list.push(cond),
                }
            }
        }
        let uid = uid_of(&pod).to_owned();
        self.persist(now, key, pod, WatchEventType::Modified);
        Ok(status_success(&pods, &pod_name, &uid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ALICE: &str = "alice";
    const T0: SimTime = SimTime(1_000);

    fn deployments() -> GroupResource {
        GroupResource::new("apps", "deployments")
    }

    fn deployment(name: &str, replicas: i64) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
        })
    }

    fn dkey(name: &str) -> ObjectKey {
        ObjectKey::new(deployments(), "default", name)
    }

    fn server_with_web() -> ApiServer {
        let mut s = ApiServer::new();
        s.handle(
            T0,
            ApiRequest::create(ALICE, deployments(), "default", deployment("web", 3)),
        )
        .unwrap();
        s
    }

    #[test]
    fn a_new_server_has_namespaces_and_the_default_policy_but_no_history() {
        let s = ApiServer::new();
        assert!(s
            .get(&ObjectKey::new(
                GroupResource::new("", "namespaces"),
                "",
                "default"
            ))
            .is_some());
        let crb = GroupResource::new("rbac.authorization.k8s.io", "clusterrolebindings");
        assert!(s.get(&ObjectKey::new(crb, "", "cluster-admin")).is_some());
        assert_eq!(s.audit().count(), 0);
        assert_eq!(s.pending_watch_events(), 0);
        assert_eq!(s.resource_version() as usize, s.object_count());
    }

    #[test]
    fn create_sets_server_fields_and_defaults() {
        let mut s = ApiServer::new();
        let rv0 = s.resource_version();
        let d = s
            .handle(
                T0,
                ApiRequest::create(ALICE, deployments(), "default", deployment("web", 3)),
            )
            .unwrap();
        assert_eq!(d["metadata"]["generation"], 1);
        assert_eq!(d["metadata"]["resourceVersion"], (rv0 + 1).to_string());
        assert_eq!(d["metadata"]["creationTimestamp"], "2025-01-01T00:00:01Z");
        assert_eq!(d["metadata"]["namespace"], "default");
        assert_eq!(d["metadata"]["uid"].as_str().unwrap().len(), 36);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        // PrepareForCreate resets status to the empty DeploymentStatus, which prints as {}.
        assert_eq!(d["status"], json!({}));
        assert_eq!(s.get(&dkey("web")), Some(&d));
        let events = s.drain_watch_events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event_type, WatchEventType::Added);
        assert_eq!(events[0].resource_version, rv0 + 1);
        let audit: Vec<&AuditEntry> = s.audit().collect();
        assert_eq!(audit.len(), 1);
        assert_eq!(
            (audit[0].code, audit[0].rv_before, audit[0].rv_after),
            (201, 0, rv0 + 1)
        );
        assert_eq!(audit[0].name, "web");
    }

    fn ok(s: &mut ApiServer, req: ApiRequest) -> Value {
        match s.handle(T0, req) {
            Ok(v) => v,
            Err(e) => panic!("unexpected refusal: {}", e.message),
        }
    }

    fn err(s: &mut ApiServer, req: ApiRequest) -> ApiError {
        let before: Vec<(ObjectKey, Value)> =
            s.objects().map(|(k, v)| (k.clone(), v.clone())).collect();
        let rv = s.resource_version();
        let pending = s.pending_watch_events();
        let e = s.handle(T0, req).expect_err("request should be refused");
        let after: Vec<(ObjectKey, Value)> =
            s.objects().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(before, after, "a refused request changed the store");
        assert_eq!(rv, s.resource_version());
        assert_eq!(pending, s.pending_watch_events());
        let last = s.audit().last().unwrap();
        assert_eq!(last.code, e.code());
        assert_eq!(last.message, e.message);
        e
    }

    fn web(s: &ApiServer) -> Value {
        s.get(&dkey("web")).unwrap().clone()
    }

    fn put(s: &mut ApiServer, principal: &str, obj: Value) -> ApiResult {
        s.handle(
            T0,
            ApiRequest::update(principal, deployments(), "default", "web", obj),
        )
    }

    fn put_status(s: &mut ApiServer, principal: &str, obj: Value) -> ApiResult {
        s.handle(
            T0,
            ApiRequest::update_status(principal, deployments(), "default", "web", obj),
        )
    }

    const DC: &str = principals::DEPLOYMENT_CONTROLLER;

    #[test]
    fn spec_changes_bump_generation_and_label_changes_do_not() {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["metadata"]["labels"]["team"] = json!("a");
        let d = put(&mut s, ALICE, d).unwrap();
        assert_eq!(d["metadata"]["generation"], 1);
        let mut d2 = d.clone();
        d2["spec"]["replicas"] = json!(5);
        let d2 = put(&mut s, ALICE, d2).unwrap();
        assert_eq!(d2["metadata"]["generation"], 2);
        let mut d3 = d2.clone();
        d3["metadata"]["annotations"] = json!({"note": "x"});
        d3["metadata"]["generation"] = json!(40);
        let d3 = put(&mut s, ALICE, d3).unwrap();
        assert_eq!(
            d3["metadata"]["generation"], 3,
            "annotations bump; clients can't set it"
        );
    }

    #[test]
    fn main_resource_writes_silently_keep_the_stored_status() {
        let mut s = server_with_web();
        let mut st = web(&s);
        st["status"] = json!({"replicas": 3, "observedGeneration": 1});
        put_status(&mut s, DC, st).unwrap();
        let mut spoof = web(&s);
        spoof["status"] = json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3});
        spoof["spec"]["replicas"] = json!(4);
        let d = put(&mut s, ALICE, spoof).unwrap();
        assert_eq!(d["status"], json!({"replicas": 3, "observedGeneration": 1}));
        assert_eq!(d["spec"]["replicas"], 4);
    }

    #[test]
    fn status_writes_keep_spec_and_labels_but_take_annotations() {
        let mut s = server_with_web();
        let mut st = web(&s);
        st["spec"]["replicas"] = json!(99);
        st["metadata"]["labels"]["sneaky"] = json!("label");
        st["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
        st["status"] = json!({"replicas": 0, "observedGeneration": 1});
        let d = put_status(&mut s, DC, st).unwrap();
        assert_eq!(d["spec"]["replicas"], 3);
        assert!(d["metadata"]["labels"].get("sneaky").is_none());
        assert_eq!(
            d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            "1"
        );
        assert_eq!(
            d["metadata"]["generation"], 1,
            "status writes never bump generation"
        );
        assert_eq!(d["status"]["observedGeneration"], 1);
    }

    #[test]
    fn no_op_writes_keep_the_resource_version_and_emit_nothing() {
        let mut s = server_with_web();
        s.drain_watch_events();
        let rv = s.resource_version();
        let cur = web(&s);
        let d = put(&mut s, ALICE, cur).unwrap();
        assert_eq!(d["metadata"]["resourceVersion"], rv.to_string());
        ok(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Merge,
                json!({}),
            ),
        );
        assert_eq!(s.resource_version(), rv);
        assert!(s.drain_watch_events().is_empty());
        let last = s.audit().last().unwrap();
        assert_eq!((last.code, last.rv_before, last.rv_after), (200, rv, rv));
    }

    #[test]
    fn a_stale_resource_version_is_a_conflict_with_kubes_message() {
        let mut s = server_with_web();
        let stale = web(&s);
        let mut fresh = web(&s);
        fresh["spec"]["replicas"] = json!(4);
        put(&mut s, ALICE, fresh).unwrap();
        let mut stale2 = stale.clone();
        stale2["spec"]["replicas"] = json!(7);
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", stale2),
        );
        assert_eq!(e.code(), 409);
        assert_eq!(e.reason, StatusReason::Conflict);
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
        );
        assert_eq!(
            (
                e.details_name.as_str(),
                e.details_group.as_str(),
                e.details_kind.as_str()
            ),
            ("web", "apps", "deployments")
        );
    }

    #[test]
    fn deployments_accept_unconditional_updates_last_write_wins() {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        d["spec"]["replicas"] = json!(6);
        let d = put(&mut s, ALICE, d).unwrap();
        assert_eq!(d["spec"]["replicas"], 6);
    }

    #[test]
    fn patches_apply_to_the_stored_object() {
        let mut s = server_with_web();
        let d = ok(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Merge,
                json!({"spec": {"replicas": 2}}),
            ),
        );
        assert_eq!(
            (
                d["spec"]["replicas"].clone(),
                d["metadata"]["generation"].clone()
            ),
            (json!(2), json!(2))
        );
        let d = ok(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Json,
                json!([{"op": "replace", "path": "/spec/replicas", "value": 1}, {"op": "add", "path": "/metadata/labels/tier", "value": "web"}]),
            ),
        );
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(d["metadata"]["labels"]["tier"], "web");
        let e = err(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Json,
                json!([{"op": "test", "path": "/spec/replicas", "value": 9}, {"op": "replace", "path": "/spec/replicas", "value": 9}]),
            ),
        );
        assert_eq!(e.code(), 422);
        let e = err(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Json,
                json!({"op": "nope"}),
            ),
        );
        assert_eq!(e.code(), 400);
        let e = err(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Merge,
                json!({"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 2}}),
            ),
        );
        assert_eq!(e.code(), 409);
        let e = err(
            &mut s,
            ApiRequest::patch(
                ALICE,
                deployments(),
                "default",
                "nope",
                PatchType::Merge,
                json!({}),
            ),
        );
        assert_eq!(e.message, "deployments.apps \"nope\" not found");
    }

    #[test]
    fn status_patches_by_the_controller_work_and_by_users_are_forbidden() {
        let mut s = server_with_web();
        let e = err(
            &mut s,
            ApiRequest::patch_status(
                ALICE,
                deployments(),
                "default",
                "web",
                PatchType::Merge,
                json!({"status": {"readyReplicas": 3}}),
            ),
        );
        assert_eq!(e.code(), 403);
        assert_eq!(
            e.message,
            "deployments.apps \"web\" is forbidden: User \"alice\" cannot patch resource \"deployments/status\" in API group \"apps\" in the namespace \"default\""
        );
        let cur = web(&s);
        let e = err(&mut s, put_status_req(ALICE, cur));
        assert_eq!(
            e.message,
            "deployments.apps \"web\" is forbidden: User \"alice\" cannot update resource \"deployments/status\" in API group \"apps\" in the namespace \"default\""
        );
        assert_eq!(
            (e.details_group.as_str(), e.details_kind.as_str()),
            ("apps", "deployments")
        );
        let d = ok(
            &mut s,
            ApiRequest::patch_status(
                "admin",
                deployments(),
                "default",
                "web",
                PatchType::Merge,
                json!({"status": {"replicas": 3}, "spec": {"replicas": 1}}),
            ),
        );
        assert_eq!(d["status"]["replicas"], 3);
        assert_eq!(d["spec"]["replicas"], 3);
    }

    fn put_status_req(principal: &str, obj: Value) -> ApiRequest {
        ApiRequest::update_status(principal, deployments(), "default", "web", obj)
    }

    #[test]
    fn status_spoofing_succeeds_when_rbac_is_switched_off() {
        let mut s = server_with_web();
        s.set_rbac_enforced(false);
        let mut spoof = web(&s);
        spoof["status"] = json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3});
        let d = put_status(&mut s, "app", spoof).unwrap();
        assert_eq!(d["status"]["availableReplicas"], 3);
        s.set_rbac_enforced(true);
        let cur = web(&s);
        assert!(put_status(&mut s, "app", cur).is_err());
    }

    #[test]
    fn unknown_principals_may_not_even_read() {
        let mut s = server_with_web();
        let e = err(
            &mut s,
            ApiRequest::get("mallory", deployments(), "default", "web"),
        );
        assert_eq!(e.message, "deployments.apps \"web\" is forbidden: User \"mallory\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"default\"");
        let e = err(
            &mut s,
            ApiRequest::list("mallory", GroupResource::new("", "nodes"), "", None),
        );
        assert_eq!(e.message, "nodes is forbidden: User \"mallory\" cannot list resource \"nodes\" in API group \"\" at the cluster scope");
        let e = err(
            &mut s,
            ApiRequest::create("mallory", deployments(), "default", deployment("x", 1)),
        );
        assert_eq!(e.message, "deployments.apps is forbidden: User \"mallory\" cannot create resource \"deployments\" in API group \"apps\" in the namespace \"default\"");
    }

    #[test]
    fn validation_errors_use_kubes_shape_and_join_several() {
        let mut s = ApiServer::new();
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", deployment("web", -1)),
        );
        assert_eq!(e.code(), 422);
        assert_eq!(e.message, "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0");
        assert_eq!(
            e.causes,
            vec![(
                "spec.replicas".to_owned(),
                "Invalid value: -1: must be greater than or equal to 0".to_owned()
            )]
        );
        let mut d = deployment("web", 20_000);
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", d),
        );
        assert_eq!(
            e.message,
            "Deployment.apps \"web\" is invalid: [spec.replicas: Invalid value: 20000: must be less than or equal to 10000 (the simulator's per-object replica cap), spec.template.spec.containers[0].image: Required value]"
        );
    }

    #[test]
    fn bad_input_is_refused_with_a_clear_message_and_no_change() {
        let mut s = ApiServer::new();
        let mut d = deployment("web", 1);
        d["spec"]["replicas"] = json!("three");
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", d),
        );
        assert_eq!(e.code(), 400);
        assert!(
            e.message
                .contains("DeploymentSpec.spec.replicas of type int32"),
            "{}",
            e.message
        );
        let mut d = deployment("web", 1);
        d.as_object_mut().unwrap().remove("apiVersion");
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", d),
        );
        assert!(
            e.message.starts_with("Object 'apiVersion' is missing in '"),
            "{}",
            e.message
        );
        let mut d = deployment("web", 1);
        d["apiVersion"] = json!("apps/v9");
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", d),
        );
        assert_eq!(
            e.message,
            "no matches for kind \"Deployment\" in version \"apps/v9\""
        );
        let e = err(
            &mut s,
            ApiRequest::create(
                ALICE,
                GroupResource::new("example.com", "widgets"),
                "default",
                json!({}),
            ),
        );
        assert_eq!(
            e.message,
            "the server could not find the requested resource"
        );
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", deployment("Web_1", 1)),
        );
        assert!(e.message.starts_with("Deployment.apps \"Web_1\" is invalid: metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain"), "{}", e.message);
        let mut deep = json!(1);
        for _ in 0..150 {
            deep = json!({"x": deep});
        }
        let mut d = deployment("web", 1);
        d["spec"]["template"]["metadata"]["annotations"] = deep;
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", d),
        );
        assert!(e.message.contains("nesting is too deep"));
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", json!("just a string")),
        );
        assert_eq!(e.code(), 400);
        let mut d = deployment("web", 1);
        d["metadata"]["resourceVersion"] = json!("5");
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", d),
        );
        assert_eq!(
            e.message,
            "resourceVersion should not be set on objects to be created"
        );
        assert_eq!(
            e.code(),
            500,
            "kube's storage error surfaces as an internal error"
        );
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "nowhere", deployment("web", 1)),
        );
        assert_eq!(e.message, "namespaces \"nowhere\" not found");
    }

    #[test]
    fn huge_documents_are_refused_by_size() {
        let mut s = ApiServer::new();
        let cms = GroupResource::new("", "configmaps");
        let big = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"k": "x".repeat(4 * 1024 * 1024)}});
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, cms.clone(), "default", big),
        );
        assert_eq!(
            (e.code(), e.message.as_str()),
            (400, "Request entity too large: limit is 3145728")
        );
        let over = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "over"}, "data": {"k": "x".repeat(1024 * 1024 + 1)}});
        let e = err(&mut s, ApiRequest::create(ALICE, cms, "default", over));
        assert_eq!(
            e.message,
            "ConfigMap \"over\" is invalid: data: Too long: may not be more than 1048576 bytes"
        );
    }

    #[test]
    fn creating_twice_is_already_exists() {
        let mut s = server_with_web();
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", deployment("web", 1)),
        );
        assert_eq!(e.message, "deployments.apps \"web\" already exists");
        assert_eq!(e.code(), 409);
    }

    #[test]
    fn the_selector_is_immutable() {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["spec"]["selector"] = json!({"matchLabels": {"app": "web", "v": "2"}});
        d["spec"]["template"]["metadata"]["labels"]["v"] = json!("2");
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", d),
        );
        assert!(e.message.ends_with("spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"v\":\"2\"}}: field is immutable"), "{}", e.message);
    }

    #[test]
    fn get_and_list_filter_by_namespace_and_labels() {
        let mut s = server_with_web();
        ok(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", deployment("api", 1)),
        );
        ok(
            &mut s,
            ApiRequest::create("admin", deployments(), "kube-system", deployment("dns", 1)),
        );
        let l = ok(
            &mut s,
            ApiRequest::list(ALICE, deployments(), "default", None),
        );
        assert_eq!(l["kind"], "DeploymentList");
        assert_eq!(l["items"].as_array().unwrap().len(), 2);
        assert_eq!(
            l["metadata"]["resourceVersion"],
            s.resource_version().to_string()
        );
        let l = ok(
            &mut s,
            ApiRequest::list(ALICE, deployments(), "", Some("app in (web, dns)")),
        );
        let names: Vec<&str> = l["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["web", "dns"]);
        let e = err(
            &mut s,
            ApiRequest::list(ALICE, deployments(), "", Some("app in web")),
        );
        assert_eq!(e.code(), 400);
        let g = ok(
            &mut s,
            ApiRequest::get(ALICE, deployments(), "default", "web"),
        );
        assert_eq!(&g, s.get(&dkey("web")).unwrap());
        let e = err(
            &mut s,
            ApiRequest::get(ALICE, deployments(), "default", "nope"),
        );
        assert_eq!(
            (e.code(), e.message.as_str()),
            (404, "deployments.apps \"nope\" not found")
        );
    }

    #[test]
    fn deletion_without_finalizers_removes_and_emits_deleted() {
        let mut s = server_with_web();
        s.drain_watch_events();
        let r = ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert_eq!(r["status"], "Success");
        assert!(s.get(&dkey("web")).is_none());
        let ev = s.drain_watch_events();
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].event_type, WatchEventType::Deleted);
        assert_eq!(ev[0].resource_version, s.resource_version());
        assert_eq!(
            ev[0].object["metadata"]["resourceVersion"],
            s.resource_version().to_string()
        );
        let e = err(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert_eq!(e.code(), 404);
    }

    #[test]
    fn finalizers_hold_a_deleted_object_until_removed() {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
        put(&mut s, ALICE, d).unwrap();
        let later = SimTime(5_000);
        let d = s
            .handle(
                later,
                ApiRequest::delete(ALICE, deployments(), "default", "web"),
            )
            .unwrap();
        assert_eq!(d["metadata"]["deletionTimestamp"], "2025-01-01T00:00:05Z");
        assert_eq!(d["metadata"]["deletionGracePeriodSeconds"], 0);
        assert_eq!(d["metadata"]["generation"], 2);
        let again = s
            .handle(
                later,
                ApiRequest::delete(ALICE, deployments(), "default", "web"),
            )
            .unwrap();
        assert_eq!(again, d, "deleting again changes nothing");
        let mut more = d.clone();
        more["metadata"]["finalizers"] = json!(["example.com/cleanup", "other/x"]);
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", more),
        );
        assert_eq!(e.message, "Deployment.apps \"web\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"other/x\"}");
        let mut cleared = d.clone();
        cleared["metadata"]["deletionTimestamp"] = json!(null);
        cleared["metadata"]["finalizers"] = json!([]);
        s.drain_watch_events();
        ok(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", cleared),
        );
        assert!(s.get(&dkey("web")).is_none());
        let ev = s.drain_watch_events();
        assert_eq!(
            ev.iter().map(|e| e.event_type).collect::<Vec<_>>(),
            [WatchEventType::Deleted]
        );
    }

    fn replicaset_owned_by(owner: &Value, name: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "labels": {"app": "web"}, "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    }

    fn pod_owned_by(owner: &Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": format!("{}-", owner["metadata"]["name"].as_str().unwrap()), "labels": {"app": "web"}, "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"], "controller": true}]},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}})
    }

    /// Reads replica set `name`, edits it and writes it back as the Deployment controller.
    fn edit_replicaset(s: &mut ApiServer, name: &str, edit: impl FnOnce(&mut Value)) {
        let mut rs = s.get(&rskey(name)).unwrap().clone();
        edit(&mut rs);
        ok(
            s,
            ApiRequest::update(DC, replicasets(), "default", name, rs),
        );
    }

    /// Alice's DELETE of Deployment `web` with this propagationPolicy.
    fn delete_web(s: &mut ApiServer, policy: &str) -> Value {
        ok(
            s,
            ApiRequest::delete_with_options(
                ALICE,
                deployments(),
                "default",
                "web",
                json!({ "propagationPolicy": policy }),
            ),
        )
    }

    /// Creates a replica set as the Deployment controller.
    fn create_rs(s: &mut ApiServer, rs: Value) -> Value {
        ok(s, ApiRequest::create(DC, replicasets(), "default", rs))
    }

    /// A pod of `rs`, created by the ReplicaSet controller.
    fn create_pod_of(s: &mut ApiServer, rs: &Value) -> Value {
        ok(
            s,
            ApiRequest::create(
                principals::REPLICASET_CONTROLLER,
                pods(),
                "default",
                pod_owned_by(rs),
            ),
        )
    }

    fn replicasets() -> GroupResource {
        GroupResource::new("apps", "replicasets")
    }

    fn pods() -> GroupResource {
        GroupResource::new("", "pods")
    }

    #[test]
    fn deleting_an_owner_garbage_collects_its_dependents_in_cascade() {
        let mut s = server_with_web();
        let d = web(&s);
        let rs = create_rs(&mut s, replicaset_owned_by(&d, "web-abc"));
        let pod = create_pod_of(&mut s, &rs);
        assert!(pod["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("web-abc-"));
        assert_eq!(
            s.dependents_of(d["metadata"]["uid"].as_str().unwrap())
                .len(),
            1
        );
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert_eq!(s.list_objects(&replicasets(), Some("default")).count(), 0);
        assert_eq!(s.list_objects(&pods(), None).count(), 0);
        let gc: Vec<&AuditEntry> = s
            .audit()
            .filter(|a| a.principal == principals::GARBAGE_COLLECTOR)
            .collect();
        assert_eq!(gc.len(), 2);
        assert_eq!(
            (gc[0].verb, gc[0].gr.resource.as_str(), gc[0].code),
            (Verb::Delete, "replicasets", 200)
        );
        assert_eq!(gc[1].gr.resource, "pods");
    }

    #[test]
    fn manual_gc_leaves_orphans_until_collected() {
        let mut s = server_with_web();
        s.set_gc_mode(GcMode::Manual);
        let d = web(&s);
        create_rs(&mut s, replicaset_owned_by(&d, "web-abc"));
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert!(s.gc_pending());
        assert_eq!(s.list_objects(&replicasets(), None).count(), 1);
        assert_eq!(s.collect_garbage(T0), 1);
        assert_eq!(s.list_objects(&replicasets(), None).count(), 0);
        assert!(!s.gc_pending());
    }

    #[test]
    fn an_owner_that_still_exists_keeps_its_dependents() {
        let mut s = server_with_web();
        let d = web(&s);
        let mut rs = replicaset_owned_by(&d, "web-abc");
        rs["metadata"]["ownerReferences"].as_array_mut().unwrap().push(json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "still-here"}));
        rs["metadata"]["ownerReferences"][1]["uid"] = json!(
            s.get(&ObjectKey::new(
                GroupResource::new("", "namespaces"),
                "",
                "default"
            ))
            .unwrap()["metadata"]["uid"]
        );
        create_rs(&mut s, rs);
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert_eq!(s.list_objects(&replicasets(), None).count(), 1);
    }

    #[test]
    fn orphan_propagation_strips_owner_references() {
        let mut s = server_with_web();
        let d = web(&s);
        create_rs(&mut s, replicaset_owned_by(&d, "web-abc"));
        delete_web(&mut s, "Orphan");
        let rs = s
            .get(&ObjectKey::new(replicasets(), "default", "web-abc"))
            .unwrap();
        assert_eq!(rs["metadata"]["ownerReferences"], json!([]));
    }

    #[test]
    fn foreground_deletion_removes_dependents_first_and_the_owner_last() {
        let mut s = server_with_web();
        let d = web(&s);
        let rs = create_rs(&mut s, replicaset_owned_by(&d, "web-abc"));
        create_pod_of(&mut s, &rs);
        s.drain_watch_events();
        s.set_gc_mode(GcMode::Manual);
        let held = delete_web(&mut s, "Foreground");
        assert_eq!(held["metadata"]["finalizers"], json!([FOREGROUND]));
        assert!(s.get(&dkey("web")).is_some());
        assert!(s.collect_garbage(T0) >= 3);
        assert!(s.get(&dkey("web")).is_none());
        assert_eq!(s.object_count(), ApiServer::new().object_count());
        let order: Vec<(WatchEventType, String)> = s
            .drain_watch_events()
            .into_iter()
            .map(|e| (e.event_type, e.key.gr.resource))
            .collect();
        use WatchEventType::{Deleted, Modified};
        assert_eq!(order.first(), Some(&(Modified, "deployments".to_owned())));
        assert_eq!(order.last(), Some(&(Deleted, "deployments".to_owned())));
        let pod_deleted = order
            .iter()
            .position(|e| *e == (Deleted, "pods".to_owned()))
            .unwrap();
        let rs_deleted = order
            .iter()
            .position(|e| *e == (Deleted, "replicasets".to_owned()))
            .unwrap();
        assert!(pod_deleted < rs_deleted);
    }

    /// Deletes `web` in the foreground, leaving `web-abc` (blocking per `block`) held
    /// by a finalizer of its own so it stays while terminating.
    fn foreground_with_held_dependent(block: bool) -> ApiServer {
        let mut s = server_with_web();
        let d = web(&s);
        let mut rs = replicaset_owned_by(&d, "web-abc");
        rs["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = json!(block);
        rs["metadata"]["finalizers"] = json!(["example.com/hold"]);
        create_rs(&mut s, rs);
        delete_web(&mut s, "Foreground");
        s
    }

    fn rskey(name: &str) -> ObjectKey {
        ObjectKey::new(replicasets(), "default", name)
    }

    #[test]
    fn a_blocking_dependent_holds_a_foreground_deletion_until_it_is_gone() {
        let mut s = foreground_with_held_dependent(true);
        let rs = s.get(&rskey("web-abc")).unwrap().clone();
        assert!(
            is_deleting(&rs),
            "the garbage collector deleted the dependent"
        );
        assert_eq!(
            s.get(&dkey("web")).unwrap()["metadata"]["finalizers"],
            json!([FOREGROUND])
        );
        let mut released = rs.clone();
        released["metadata"]["finalizers"] = json!([]);
        ok(
            &mut s,
            ApiRequest::update(DC, replicasets(), "default", "web-abc", released),
        );
        assert!(s.get(&rskey("web-abc")).is_none());
        assert!(s.get(&dkey("web")).is_none());
        // kube's garbage collector removes its finalizer with a merge patch.
        let last = s.audit().last().unwrap().clone();
        assert_eq!(
            (
                last.principal.as_str(),
                last.verb,
                last.gr.resource.as_str()
            ),
            (principals::GARBAGE_COLLECTOR, Verb::Patch, "deployments")
        );
    }

    #[test]
    fn a_dependent_that_drops_its_blocking_reference_releases_the_owner() {
        let mut s = foreground_with_held_dependent(true);
        edit_replicaset(&mut s, "web-abc", |r| {
            r["metadata"]["ownerReferences"] = json!([]);
        });
        assert!(
            s.get(&dkey("web")).is_none(),
            "the owner still waits for a dependent it no longer has"
        );
        assert!(s.get(&rskey("web-abc")).is_some());
    }

    #[test]
    fn a_dependent_that_stops_blocking_releases_the_owner() {
        let mut s = foreground_with_held_dependent(true);
        edit_replicaset(&mut s, "web-abc", |r| {
            r["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = json!(false);
        });
        assert!(s.get(&dkey("web")).is_none());
    }

    #[test]
    fn a_dependent_without_block_owner_deletion_does_not_hold_the_owner() {
        let s = foreground_with_held_dependent(false);
        assert!(s.get(&dkey("web")).is_none());
        // Still deleted, and terminating on its own finalizer.
        assert!(is_deleting(s.get(&rskey("web-abc")).unwrap()));
    }

    #[test]
    fn a_last_write_that_drops_the_finalizer_and_the_reference_releases_the_owner() {
        let mut s = foreground_with_held_dependent(true);
        edit_replicaset(&mut s, "web-abc", |r| {
            r["metadata"]["finalizers"] = json!([]);
            r["metadata"]["ownerReferences"] = json!([]);
        });
        assert!(s.get(&rskey("web-abc")).is_none());
        assert!(s.get(&dkey("web")).is_none());
    }

    #[test]
    fn owners_that_block_each_other_are_both_deleted() {
        let mut s = server_with_web();
        let a = web(&s);
        let b = create_rs(&mut s, replicaset_owned_by(&a, "web-abc"));
        let mut a = a;
        a["metadata"]["ownerReferences"] = json!([super::super::meta::owner_reference(&b, true)]);
        put(&mut s, ALICE, a).unwrap();
        delete_web(&mut s, "Foreground");
        assert!(
            s.get(&dkey("web")).is_none(),
            "the deployment waits for ever"
        );
        assert!(
            s.get(&rskey("web-abc")).is_none(),
            "the replica set waits for ever"
        );
        // The garbage collector made the replica set's reference non-blocking first.
        assert!(s
            .audit()
            .any(|a| a.principal == principals::GARBAGE_COLLECTOR
                && a.verb == Verb::Patch
                && a.gr.resource == "replicasets"));
    }

    #[test]
    fn a_waiting_owner_retries_only_the_dependents_that_block_it() {
        let mut s = foreground_with_held_dependent(true);
        let d = s.get(&dkey("web")).unwrap().clone();
        // A second dependent, created while the owner waits, then made non-blocking: kube
        // looks at the owner again but retries only the dependents that still block it.
        create_rs(&mut s, replicaset_owned_by(&d, "web-def"));
        edit_replicaset(&mut s, "web-def", |r| {
            r["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = json!(false);
        });
        assert!(!is_deleting(s.get(&rskey("web-def")).unwrap()));
        assert!(s.get(&dkey("web")).is_some());
        // Once the owner goes, it is collected like any orphan.
        edit_replicaset(&mut s, "web-abc", |r| {
            r["metadata"]["finalizers"] = json!([]);
        });
        assert!(s.get(&dkey("web")).is_none());
        assert!(s.get(&rskey("web-def")).is_none());
    }

    #[test]
    fn a_second_delete_with_background_stops_waiting_for_dependents() {
        let mut s = foreground_with_held_dependent(true);
        // Foreground again changes nothing (no second finalizer).
        let again = delete_web(&mut s, "Foreground");
        assert_eq!(again["metadata"]["finalizers"], json!([FOREGROUND]));
        delete_web(&mut s, "Background");
        assert!(s.get(&dkey("web")).is_none());
        assert!(is_deleting(s.get(&rskey("web-abc")).unwrap()));
    }

    /// `web` with these finalizers, and `web-abc` owned by it (blocking).
    fn web_with_finalizers_and_dependent(fins: Value) -> ApiServer {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["metadata"]["finalizers"] = fins;
        put(&mut s, ALICE, d.clone()).unwrap();
        let d = web(&s);
        create_rs(&mut s, replicaset_owned_by(&d, "web-abc"));
        s
    }

    #[test]
    fn a_user_set_orphan_finalizer_orphans_the_dependents_on_delete() {
        let mut s = web_with_finalizers_and_dependent(json!(["orphan"]));
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert!(s.get(&dkey("web")).is_none(), "the orphan finalizer stayed");
        let rs = s.get(&rskey("web-abc")).unwrap();
        assert!(!is_deleting(rs));
        assert_eq!(rs["metadata"]["ownerReferences"], json!([]));
    }

    #[test]
    fn an_explicit_background_delete_drops_a_user_set_foreground_finalizer() {
        let mut s = web_with_finalizers_and_dependent(json!(["foregroundDeletion"]));
        delete_web(&mut s, "Background");
        assert!(s.get(&dkey("web")).is_none());
        assert!(
            s.get(&rskey("web-abc")).is_none(),
            "collected in the background"
        );
    }

    #[test]
    fn the_garbage_collector_orphans_through_a_dependents_orphan_finalizer() {
        let mut s = server_with_web();
        let d = web(&s);
        let mut rs = replicaset_owned_by(&d, "web-abc");
        rs["metadata"]["finalizers"] = json!(["orphan"]);
        let rs = create_rs(&mut s, rs);
        create_pod_of(&mut s, &rs);
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert!(
            s.get(&rskey("web-abc")).is_none(),
            "the replica set is stuck"
        );
        let gr = pods();
        let left: Vec<&Value> = s.list_objects(&gr, None).map(|(_, p)| p).collect();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0]["metadata"]["ownerReferences"], json!([]));
    }

    #[test]
    fn orphan_and_foreground_finalizers_cannot_be_both_set() {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["metadata"]["finalizers"] = json!(["orphan", "foregroundDeletion"]);
        let e = put(&mut s, ALICE, d).unwrap_err();
        assert_eq!(
            e.message,
            "Deployment.apps \"web\" is invalid: metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set"
        );
    }

    #[test]
    fn a_dependent_with_an_owner_left_only_loses_the_reference_to_the_removed_one() {
        let mut s = server_with_web();
        let d = web(&s);
        let ns = s
            .get(&ObjectKey::new(
                GroupResource::new("", "namespaces"),
                "",
                "default",
            ))
            .unwrap()
            .clone();
        let mut rs = replicaset_owned_by(&d, "web-abc");
        let kept = json!({"apiVersion": "v1", "kind": "Namespace", "name": "default",
            "uid": ns["metadata"]["uid"]});
        rs["metadata"]["ownerReferences"]
            .as_array_mut()
            .unwrap()
            .push(kept.clone());
        create_rs(&mut s, rs);
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        let rs = s.get(&rskey("web-abc")).unwrap();
        assert!(!is_deleting(rs));
        assert_eq!(rs["metadata"]["ownerReferences"], json!([kept]));
    }

    #[test]
    fn an_update_that_names_a_missing_owner_gets_the_object_collected() {
        let mut s = server_with_web();
        let d = web(&s);
        create_rs(&mut s, replicaset_owned_by(&d, "web-abc"));
        edit_replicaset(&mut s, "web-abc", |r| {
            r["metadata"]["ownerReferences"][0]["uid"] = json!("no-such-owner");
        });
        assert!(s.get(&rskey("web-abc")).is_none());
        let last = s.audit().last().unwrap().clone();
        assert_eq!(
            (last.principal.as_str(), last.verb),
            (principals::GARBAGE_COLLECTOR, Verb::Delete)
        );
    }

    /// A pod named `name`, on `node` when it is not empty.
    fn pod_on(s: &mut ApiServer, name: &str, node: &str) -> ObjectKey {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        if !node.is_empty() {
            pod["spec"]["nodeName"] = json!(node);
        }
        ok(s, ApiRequest::create(ALICE, pods(), "default", pod));
        s.drain_watch_events();
        ObjectKey::new(pods(), "default", name)
    }

    fn events(s: &mut ApiServer) -> Vec<WatchEventType> {
        s.drain_watch_events()
            .into_iter()
            .map(|e| e.event_type)
            .collect()
    }

    /// Worked from BeforeDelete, CheckGracefulDelete and updateForGracefulDeletionAndFinalizers:
    /// a scheduled pod is marked for deletion 30 s ahead (terminationGracePeriodSeconds' default)
    /// and stays, written once (MODIFIED); the answer is the Pod.
    #[test]
    fn deleting_a_scheduled_pod_marks_it_for_deletion_after_its_grace_period() {
        let mut s = ApiServer::new();
        let key = pod_on(&mut s, "p", "node-1");
        let answer = ok(&mut s, ApiRequest::delete(ALICE, pods(), "default", "p"));
        assert_eq!(answer["kind"], "Pod");
        assert_eq!(
            answer["metadata"]["deletionTimestamp"],
            "2025-01-01T00:00:31Z"
        );
        assert_eq!(answer["metadata"]["deletionGracePeriodSeconds"], 30);
        assert_eq!(s.get(&key), Some(&answer));
        assert_eq!(events(&mut s), vec![WatchEventType::Modified]);
        // A second DELETE without a shorter grace changes nothing.
        let again = ok(&mut s, ApiRequest::delete(ALICE, pods(), "default", "p"));
        assert_eq!(again, answer);
        assert_eq!(events(&mut s), vec![]);
        // A status write does not remove it, though it has no finalizers.
        let mut st = answer.clone();
        st["status"]["phase"] = json!("Succeeded");
        ok(
            &mut s,
            ApiRequest::update_status("admin", pods(), "default", "p", st),
        );
        assert!(s.get(&key).is_some());
        // Shorter: the timestamp moves by the difference (T+31 - 30 + 5), then 0 removes it.
        let shorter = ok(
            &mut s,
            ApiRequest::delete_with_options(
                ALICE,
                pods(),
                "default",
                "p",
                json!({"gracePeriodSeconds": 5}),
            ),
        );
        assert_eq!(
            shorter["metadata"]["deletionTimestamp"],
            "2025-01-01T00:00:06Z"
        );
        assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 5);
        s.drain_watch_events();
        ok(
            &mut s,
            ApiRequest::delete_with_options(
                ALICE,
                pods(),
                "default",
                "p",
                json!({"gracePeriodSeconds": 0}),
            ),
        );
        assert!(s.get(&key).is_none());
        assert_eq!(
            events(&mut s),
            vec![WatchEventType::Modified, WatchEventType::Deleted]
        );
    }

    #[test]
    fn a_pod_on_no_node_is_deleted_at_once_and_a_negative_grace_is_one_second() {
        let mut s = ApiServer::new();
        let key = pod_on(&mut s, "p", "");
        let answer = ok(&mut s, ApiRequest::delete(ALICE, pods(), "default", "p"));
        assert_eq!(answer["kind"], "Pod");
        assert!(s.get(&key).is_none());
        assert_eq!(
            events(&mut s),
            vec![WatchEventType::Modified, WatchEventType::Deleted]
        );
        let key = pod_on(&mut s, "q", "node-1");
        let answer = ok(
            &mut s,
            ApiRequest::delete_with_options(
                ALICE,
                pods(),
                "default",
                "q",
                json!({"gracePeriodSeconds": -5}),
            ),
        );
        assert_eq!(answer["metadata"]["deletionGracePeriodSeconds"], 1);
        assert!(s.get(&key).is_some());
    }

    /// What a real 1.32 cluster adds to every Pod [core/v1 defaults.go SetDefaults_Pod,
    /// SetDefaults_ContainerPort, SetDefaults_Probe; admission DefaultTolerationSeconds,
    /// Priority; PrepareForCreate's qos.GetPodQOS], and not to a Deployment's template.
    #[test]
    fn created_pods_get_the_defaults_and_admission_a_real_cluster_adds() {
        let mut s = ApiServer::new();
        let container = json!({"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
            "readinessProbe": {"httpGet": {"port": 80}},
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}});
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [container.clone()]}});
        let p = ok(&mut s, ApiRequest::create(ALICE, pods(), "default", pod));
        let c = &p["spec"]["containers"][0];
        assert_eq!(
            c["resources"]["requests"],
            json!({"cpu": "500m", "memory": "128Mi"})
        );
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(
            c["readinessProbe"],
            json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(p["spec"]["enableServiceLinks"], true);
        assert_eq!(
            p["spec"]["tolerations"],
            json!([
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ])
        );
        assert_eq!(
            (
                p["spec"]["priority"].clone(),
                p["spec"]["preemptionPolicy"].clone()
            ),
            (json!(0), json!("PreemptLowerPriority"))
        );
        assert_eq!(p["status"]["qosClass"], "Guaranteed");
        let mut burstable = container.clone();
        burstable["resources"] = json!({"requests": {"cpu": "100m"}});
        let q = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"},
            "spec": {"containers": [burstable]}});
        let q = ok(&mut s, ApiRequest::create(ALICE, pods(), "default", q));
        assert_eq!(q["status"]["qosClass"], "Burstable");
        let mut plain = container;
        plain.as_object_mut().unwrap().remove("resources");
        let r = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "r"},
            "spec": {"containers": [plain]}});
        let r = ok(&mut s, ApiRequest::create(ALICE, pods(), "default", r));
        assert_eq!(r["status"]["qosClass"], "BestEffort");
        let d = ok(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", deployment("web", 1)),
        );
        assert!(d["spec"]["template"]["spec"]
            .get("enableServiceLinks")
            .is_none());
        assert!(d["spec"]["template"]["spec"].get("tolerations").is_none());
    }

    /// Worked from the ServiceAccount admission plugin (admission.go `Admit`,
    /// `getServiceAccount`, `mountServiceAccountToken`) and `NewForbidden`'s message.
    #[test]
    fn pods_run_as_an_existing_service_account_with_its_token_mounted() {
        let mut s = ApiServer::new();
        let pod = |name: &str, extra: Value| {
            let mut p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}});
            if let (Some(spec), Some(extra)) = (p["spec"].as_object_mut(), extra.as_object()) {
                spec.extend(extra.clone());
            }
            p
        };
        let p = ok(
            &mut s,
            ApiRequest::create(ALICE, pods(), "default", pod("p", json!({}))),
        );
        assert_eq!(p["spec"]["serviceAccountName"], "default");
        assert_eq!(p["spec"]["serviceAccount"], "default");
        let volume = p["spec"]["volumes"][0]["name"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(
            volume.starts_with("kube-api-access-") && volume.len() == 21,
            "{volume}"
        );
        assert!(volume[16..]
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)));
        assert_eq!(
            p["spec"]["volumes"][0]["projected"]["sources"][0],
            json!({"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}})
        );
        assert_eq!(
            p["spec"]["containers"][0]["volumeMounts"],
            json!([{"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
        );
        let e = err(
            &mut s,
            ApiRequest::create(
                ALICE,
                pods(),
                "default",
                pod("q", json!({"serviceAccountName": "missing"})),
            ),
        );
        assert_eq!(e.code(), 403);
        assert_eq!(
            e.message,
            "pods \"q\" is forbidden: error looking up service account default/missing: serviceaccount \"missing\" not found"
        );
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "missing"},
            "automountServiceAccountToken": false});
        ok(
            &mut s,
            ApiRequest::create(
                ALICE,
                GroupResource::new("", "serviceaccounts"),
                "default",
                sa,
            ),
        );
        let q = ok(
            &mut s,
            ApiRequest::create(
                ALICE,
                pods(),
                "default",
                pod("q", json!({"serviceAccountName": "missing"})),
            ),
        );
        assert!(
            q["spec"].get("volumes").is_none(),
            "the account turns automounting off"
        );
        // A namespace created later gets its own default account.
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
        ok(
            &mut s,
            ApiRequest::create("admin", GroupResource::new("", "namespaces"), "", ns),
        );
        ok(
            &mut s,
            ApiRequest::create(ALICE, pods(), "team", pod("r", json!({}))),
        );
    }

    #[test]
    fn delete_preconditions_are_checked() {
        let mut s = server_with_web();
        let e = err(
            &mut s,
            ApiRequest::delete_with_options(
                ALICE,
                deployments(),
                "default",
                "web",
                json!({"preconditions": {"uid": "other"}}),
            ),
        );
        assert_eq!(e.code(), 409);
        assert!(e
            .message
            .contains("Precondition failed: UID in precondition: other"));
    }

    fn node(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    }

    #[test]
    fn the_scheduler_binds_pods_and_kubelets_write_only_their_pods_status() {
        let mut s = ApiServer::new();
        ok(
            &mut s,
            ApiRequest::create("admin", GroupResource::new("", "nodes"), "", node("node-1")),
        );
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let p = ok(&mut s, ApiRequest::create(ALICE, pods(), "default", pod));
        assert_eq!(p["status"]["phase"], "Pending");
        let e = err(&mut s, ApiRequest::bind(ALICE, "default", "p", "node-1"));
        assert_eq!(e.code(), 403);
        let r = ok(
            &mut s,
            ApiRequest::bind(principals::SCHEDULER, "default", "p", "node-1"),
        );
        assert_eq!(r["status"], "Success");
        let p = s
            .get(&ObjectKey::new(pods(), "default", "p"))
            .unwrap()
            .clone();
        assert_eq!(p["spec"]["nodeName"], "node-1");
        assert_eq!(p["status"]["conditions"][0]["type"], "PodScheduled");
        let e = err(
            &mut s,
            ApiRequest::bind(principals::SCHEDULER, "default", "p", "node-2"),
        );
        assert_eq!(e.message, "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"node-1\"");
        let mut st = p.clone();
        st["status"]["phase"] = json!("Running");
        let e = err(
            &mut s,
            ApiRequest::update_status(
                &principals::kubelet("node-2"),
                pods(),
                "default",
                "p",
                st.clone(),
            ),
        );
        assert_eq!(e.message, "pods \"p\" is forbidden: node \"node-2\" can only update pod status for pods with spec.nodeName set to itself");
        let p2 = ok(
            &mut s,
            ApiRequest::update_status(&principals::kubelet("node-1"), pods(), "default", "p", st),
        );
        assert_eq!(p2["status"]["phase"], "Running");
        let mut spec = p2.clone();
        spec["spec"]["nodeName"] = json!("node-2");
        let e = err(
            &mut s,
            ApiRequest::update("admin", pods(), "default", "p", spec),
        );
        assert!(e.message.contains("pod updates may not change fields"));
    }

    #[test]
    fn services_get_a_cluster_ip_and_configmaps_have_no_status_subresource() {
        let mut s = ApiServer::new();
        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}});
        let v = ok(
            &mut s,
            ApiRequest::create(ALICE, GroupResource::new("", "services"), "default", svc),
        );
        assert_eq!(v["spec"]["clusterIP"], "10.96.0.2");
        assert_eq!(v["spec"]["ports"][0]["targetPort"], 80);
        assert!(v["metadata"].get("generation").is_none());
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}});
        let cms = GroupResource::new("", "configmaps");
        ok(
            &mut s,
            ApiRequest::create(ALICE, cms.clone(), "default", cm.clone()),
        );
        let e = err(
            &mut s,
            ApiRequest::update_status(ALICE, cms, "default", "c", cm),
        );
        assert_eq!(e.code(), 404);
    }

    fn crd(with_status: bool) -> Value {
        let mut v = json!({"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
        if with_status {
            v["subresources"] = json!({"status": {}});
        }
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "databases.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "databases", "singular": "database", "kind": "Database"},
                "versions": [v]}})
    }

    fn databases() -> GroupResource {
        GroupResource::new("example.com", "databases")
    }

    fn db(name: &str) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": name}, "spec": {"size": 1}, "unknownTopLevel": {"kept": true}})
    }

    const DBC: &str = principals::DATABASE_CONTROLLER;

    fn crds() -> GroupResource {
        GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions")
    }

    #[test]
    fn a_crd_registers_its_kind_and_users_may_write_its_spec() {
        let mut s = ApiServer::new();
        let c = ok(&mut s, ApiRequest::create(ALICE, crds(), "", crd(true)));
        assert_eq!(c["metadata"]["generation"], 1);
        let stored = s
            .get(&ObjectKey::new(crds(), "", "databases.example.com"))
            .unwrap();
        assert_eq!(stored["status"]["conditions"][1]["type"], "Established");
        let info = s.resource_for("example.com/v1", "Database").unwrap();
        assert!(info.status_subresource && info.namespaced);
        let d = ok(
            &mut s,
            ApiRequest::create(ALICE, databases(), "default", db("db1")),
        );
        assert_eq!(d["unknownTopLevel"], json!({"kept": true}));
        assert_eq!(d["metadata"]["generation"], 1);
        let e = err(
            &mut s,
            ApiRequest::update_status(ALICE, databases(), "default", "db1", d.clone()),
        );
        assert_eq!(e.code(), 403);
        let mut st = d.clone();
        st["status"] = json!({"phase": "Ready"});
        st["spec"]["size"] = json!(5);
        st["metadata"]["labels"] = json!({"sneaky": "x"});
        let d2 = ok(
            &mut s,
            ApiRequest::update_status(DBC, databases(), "default", "db1", st),
        );
        assert_eq!(d2["status"]["phase"], "Ready");
        assert_eq!(d2["spec"]["size"], 1);
        assert!(
            d2["metadata"].get("labels").is_none(),
            "custom /status keeps all stored metadata"
        );
        assert_eq!(d2["metadata"]["generation"], 1);
        let mut main = d2.clone();
        main["status"] = json!({"phase": "Spoofed"});
        let d3 = ok(
            &mut s,
            ApiRequest::update(ALICE, databases(), "default", "db1", main),
        );
        assert_eq!(d3["status"]["phase"], "Ready");
        assert_eq!(
            d3["metadata"]["generation"], 1,
            "a silently dropped status edit doesn't bump"
        );
        let mut top = d3.clone();
        top["unknownTopLevel"] = json!({"kept": false});
        let d4 = ok(
            &mut s,
            ApiRequest::update(ALICE, databases(), "default", "db1", top),
        );
        assert_eq!(
            d4["metadata"]["generation"], 2,
            "anything outside metadata bumps"
        );
    }

    #[test]
    fn custom_resources_require_a_resource_version_on_update() {
        let mut s = ApiServer::new();
        ok(&mut s, ApiRequest::create(ALICE, crds(), "", crd(true)));
        let mut d = ok(
            &mut s,
            ApiRequest::create(ALICE, databases(), "default", db("db1")),
        );
        d["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, databases(), "default", "db1", d),
        );
        assert_eq!(e.message, "databases.example.com \"db1\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update");
        ok(
            &mut s,
            ApiRequest::patch(
                ALICE,
                databases(),
                "default",
                "db1",
                PatchType::Merge,
                json!({"spec": {"size": 2}}),
            ),
        );
    }

    #[test]
    fn without_the_status_subresource_status_is_an_ordinary_field() {
        let mut s = ApiServer::new();
        ok(&mut s, ApiRequest::create(ALICE, crds(), "", crd(false)));
        let mut d = db("db1");
        d["status"] = json!({"phase": "New"});
        let d = ok(&mut s, ApiRequest::create(ALICE, databases(), "default", d));
        assert_eq!(d["status"]["phase"], "New");
        let mut d2 = d.clone();
        d2["status"]["phase"] = json!("Ready");
        let d2 = ok(
            &mut s,
            ApiRequest::update(ALICE, databases(), "default", "db1", d2),
        );
        assert_eq!(d2["metadata"]["generation"], 2);
        let e = err(
            &mut s,
            ApiRequest::update_status("admin", databases(), "default", "db1", d2),
        );
        assert_eq!(
            (e.code(), e.message.as_str()),
            (404, "the server could not find the requested resource")
        );
    }

    #[test]
    fn custom_resource_conditions_are_validated_as_metav1_conditions() {
        let mut s = ApiServer::new();
        ok(&mut s, ApiRequest::create(ALICE, crds(), "", crd(true)));
        let mut d = ok(
            &mut s,
            ApiRequest::create(ALICE, databases(), "default", db("db1")),
        );
        d["status"] = json!({"conditions": [{"type": "Ready", "status": "true", "reason": "Up", "lastTransitionTime": "2025-01-01T00:00:00Z"}]});
        let e = err(
            &mut s,
            ApiRequest::update_status(DBC, databases(), "default", "db1", d),
        );
        assert_eq!(e.message, "Database.example.com \"db1\" is invalid: status.conditions[0].status: Unsupported value: \"true\": supported values: \"True\", \"False\", \"Unknown\"");
    }

    #[test]
    fn deleting_a_crd_removes_its_instances_and_kind() {
        let mut s = ApiServer::new();
        ok(&mut s, ApiRequest::create(ALICE, crds(), "", crd(true)));
        ok(
            &mut s,
            ApiRequest::create(ALICE, databases(), "default", db("db1")),
        );
        ok(
            &mut s,
            ApiRequest::delete(ALICE, crds(), "", "databases.example.com"),
        );
        assert!(s.resource_for("example.com/v1", "Database").is_none());
        assert_eq!(s.list_objects(&databases(), None).count(), 0);
        let e = err(
            &mut s,
            ApiRequest::create(ALICE, databases(), "default", db("db2")),
        );
        assert_eq!(e.code(), 404);
    }

    #[test]
    fn snapshots_are_cheap_and_independent() {
        let mut s = server_with_web();
        let snap = s.clone();
        ok(
            &mut s,
            ApiRequest::delete(ALICE, deployments(), "default", "web"),
        );
        assert!(snap.get(&dkey("web")).is_some());
        assert!(s.get(&dkey("web")).is_none());
        assert_eq!(snap.audit().count() + 1, s.audit().count());
    }

    #[test]
    fn manifests_become_create_requests() {
        let mut s = ApiServer::new();
        let objs = crate::api::parse_manifests("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: kube-system\ndata:\n  a: b\n").unwrap();
        let req = s.create_request_for("admin", objs[0].clone()).unwrap();
        assert_eq!(req.namespace, "kube-system");
        ok(&mut s, req);
        let key = s.key_for_manifest(&objs[0]).unwrap();
        assert_eq!(key.path(), "configmaps/kube-system/cfg");
        assert!(s.get(&key).is_some());
        let e = s
            .create_request_for("admin", json!({"kind": "Pod"}))
            .unwrap_err();
        assert!(e.message.starts_with("Object 'apiVersion' is missing"));
    }

    #[test]
    fn audit_entries_record_refusals_with_their_codes() {
        let mut s = server_with_web();
        let _ = s.handle(T0, put_status_req(ALICE, web(&s)));
        let a = s.audit().last().unwrap();
        assert_eq!(
            (a.code, a.subresource, a.verb, a.principal.as_str()),
            (403, Some(Subresource::Status), Verb::Update, "alice")
        );
        assert_eq!((a.namespace.as_str(), a.name.as_str()), ("default", "web"));
        assert_eq!(a.rv_before, a.rv_after);
    }

    #[test]
    fn rbac_objects_added_at_runtime_take_effect() {
        let mut s = server_with_web();
        assert!(s.handle(T0, put_status_req("carol", web(&s))).is_err());
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "status-writer"},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments/status"], "verbs": ["update"]}]});
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "carol"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "status-writer"},
            "subjects": [{"kind": "User", "name": "carol"}]});
        ok(
            &mut s,
            ApiRequest::create(
                "admin",
                GroupResource::new("rbac.authorization.k8s.io", "roles"),
                "default",
                role,
            ),
        );
        ok(
            &mut s,
            ApiRequest::create(
                "admin",
                GroupResource::new("rbac.authorization.k8s.io", "rolebindings"),
                "default",
                binding,
            ),
        );
        let cur = web(&s);
        ok(&mut s, put_status_req("carol", cur));
    }

    #[test]
    fn controllers_record_events_and_users_read_them() {
        let mut s = ApiServer::new();
        let ev = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default"},
            "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-1 to 3", "type": "Normal"});
        let events = GroupResource::new("", "events");
        ok(
            &mut s,
            ApiRequest::create(DC, events.clone(), "default", ev),
        );
        let l = ok(
            &mut s,
            ApiRequest::list(ALICE, events.clone(), "default", None),
        );
        assert_eq!(l["items"][0]["reason"], "ScalingReplicaSet");
        let bad = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "x"}});
        let e = err(&mut s, ApiRequest::create(DC, events, "default", bad));
        assert_eq!(e.message, "Event \"x\" is invalid: [involvedObject.kind: Required value, involvedObject.name: Required value]");
    }

    #[test]
    fn replicaset_and_pod_generations_follow_spec_only() {
        let mut s = server_with_web();
        let d = web(&s);
        let rs = create_rs(&mut s, replicaset_owned_by(&d, "web-1"));
        let mut rs2 = rs.clone();
        rs2["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "2"});
        let rs2 = ok(
            &mut s,
            ApiRequest::update(DC, replicasets(), "default", "web-1", rs2),
        );
        assert_eq!(
            rs2["metadata"]["generation"], 1,
            "ReplicaSet annotations don't bump"
        );
        let mut rs3 = rs2.clone();
        rs3["spec"]["replicas"] = json!(4);
        let rs3 = ok(
            &mut s,
            ApiRequest::update(DC, replicasets(), "default", "web-1", rs3),
        );
        assert_eq!(rs3["metadata"]["generation"], 2);
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}});
        let p = ok(&mut s, ApiRequest::create(ALICE, pods(), "default", pod));
        assert_eq!(p["metadata"]["generation"], 1);
        let mut p2 = p.clone();
        p2["spec"]["containers"][0]["image"] = json!("nginx:2");
        let p2 = ok(
            &mut s,
            ApiRequest::update(ALICE, pods(), "default", "p", p2),
        );
        assert_eq!(p2["metadata"]["generation"], 2);
    }

    #[test]
    fn kinds_without_generation_never_get_one() {
        let mut s = ApiServer::new();
        let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "generation": 7},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5},
            "status": {"currentReplicas": 9}});
        let hpas = GroupResource::new("autoscaling", "horizontalpodautoscalers");
        let h = ok(
            &mut s,
            ApiRequest::create(ALICE, hpas.clone(), "default", hpa),
        );
        assert!(h["metadata"].get("generation").is_none());
        assert!(h.get("status").is_none(), "create drops status");
        assert_eq!(h["spec"]["minReplicas"], 1);
        let mut h2 = h.clone();
        h2["spec"]["maxReplicas"] = json!(6);
        let h2 = ok(
            &mut s,
            ApiRequest::update(ALICE, hpas.clone(), "default", "web", h2),
        );
        assert!(h2["metadata"].get("generation").is_none());
        let mut st = h2.clone();
        st["status"] = json!({"currentReplicas": 2, "desiredReplicas": 3});
        let h3 = ok(
            &mut s,
            ApiRequest::update_status(principals::HPA_CONTROLLER, hpas, "default", "web", st),
        );
        assert_eq!(h3["status"]["desiredReplicas"], 3);
    }

    #[test]
    fn the_same_requests_give_the_same_world() {
        let run = || {
            let mut s = server_with_web();
            let d = web(&s);
            let rs = create_rs(&mut s, replicaset_owned_by(&d, "web-1"));
            for _ in 0..3 {
                create_pod_of(&mut s, &rs);
            }
            ok(
                &mut s,
                ApiRequest::delete(ALICE, deployments(), "default", "web"),
            );
            let objects: Vec<(ObjectKey, Value)> =
                s.objects().map(|(k, v)| (k.clone(), v.clone())).collect();
            let audit: Vec<AuditEntry> = s.audit().cloned().collect();
            (objects, audit, s.drain_watch_events())
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b);
        let uid = a.2[0].object["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_owned();
        let parts: Vec<usize> = uid.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
    }

    #[test]
    fn generated_names_are_unique() {
        let mut s = ApiServer::new();
        let mut names = std::collections::BTreeSet::new();
        for _ in 0..50 {
            let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "web-"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
            let p = ok(&mut s, ApiRequest::create(ALICE, pods(), "default", pod));
            let name = p["metadata"]["name"].as_str().unwrap().to_owned();
            assert_eq!(name.len(), "web-".len() + 5);
            assert!(names.insert(name));
        }
        let e = err(
            &mut s,
            ApiRequest::create(
                ALICE,
                pods(),
                "default",
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}),
            ),
        );
        assert_eq!(e.message, "Pod \"\" is invalid: [metadata.name: Required value: name or generateName is required, spec.containers: Required value]");
    }

    #[test]
    fn identity_fields_cannot_change_on_update() {
        let mut s = server_with_web();
        let mut d = web(&s);
        d["metadata"]["uid"] = json!("not-the-uid");
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", d),
        );
        assert_eq!(e.message, "Deployment.apps \"web\" is invalid: metadata.uid: Invalid value: \"not-the-uid\": field is immutable");
        let mut d = web(&s);
        d["metadata"]["name"] = json!("other");
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", d),
        );
        assert_eq!(
            e.message,
            "the name of the object (other) does not match the name on the URL (web)"
        );
        let mut d = web(&s);
        d["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z");
        d["metadata"].as_object_mut().unwrap().remove("uid");
        d["metadata"]["labels"]["x"] = json!("y");
        let d = put(&mut s, ALICE, d).unwrap();
        assert_eq!(d["metadata"]["creationTimestamp"], "2025-01-01T00:00:01Z");
        assert_eq!(d["metadata"]["uid"], web(&s)["metadata"]["uid"]);
        let mut d = web(&s);
        d["metadata"]["labels"]["bad key!"] = json!("v");
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, deployments(), "default", "web", d),
        );
        assert!(e.message.starts_with("Deployment.apps \"web\" is invalid: metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters"), "{}", e.message);
    }

    #[test]
    fn editing_a_crd_can_turn_the_status_subresource_on() {
        let mut s = ApiServer::new();
        let c = ok(&mut s, ApiRequest::create(ALICE, crds(), "", crd(false)));
        assert!(
            !s.resource_for("example.com/v1", "Database")
                .unwrap()
                .status_subresource
        );
        let mut c2 = s
            .get(&ObjectKey::new(crds(), "", "databases.example.com"))
            .unwrap()
            .clone();
        c2["spec"]["versions"][0]["subresources"] = json!({"status": {}});
        let c2 = ok(
            &mut s,
            ApiRequest::update(ALICE, crds(), "", "databases.example.com", c2),
        );
        assert_eq!(c2["metadata"]["generation"], 2);
        assert_eq!(c["metadata"]["generation"], 1);
        assert!(
            s.resource_for("example.com/v1", "Database")
                .unwrap()
                .status_subresource
        );
        let mut c3 = c2.clone();
        c3["spec"]["group"] = json!("other.com");
        let e = err(
            &mut s,
            ApiRequest::update(ALICE, crds(), "", "databases.example.com", c3),
        );
        assert!(
            e.message
                .contains("spec.group: Invalid value: \"other.com\": field is immutable"),
            "{}",
            e.message
        );
    }

    #[test]
    fn kubelets_may_only_modify_their_own_node() {
        let mut s = ApiServer::new();
        let nodes = GroupResource::new("", "nodes");
        ok(
            &mut s,
            ApiRequest::create(
                &principals::kubelet("node-1"),
                nodes.clone(),
                "",
                node("node-1"),
            ),
        );
        let e = err(
            &mut s,
            ApiRequest::create(
                &principals::kubelet("node-1"),
                nodes.clone(),
                "",
                node("node-2"),
            ),
        );
        assert_eq!(e.message, "nodes \"node-2\" is forbidden: node \"node-1\" is not allowed to modify node \"node-2\"");
        let mut n = s
            .get(&ObjectKey::new(nodes.clone(), "", "node-1"))
            .unwrap()
            .clone();
        n["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        ok(
            &mut s,
            ApiRequest::update_status(
                &principals::kubelet("node-1"),
                nodes.clone(),
                "",
                "node-1",
                n.clone(),
            ),
        );
        let e = err(
            &mut s,
            ApiRequest::update_status(&principals::kubelet("node-2"), nodes, "", "node-1", n),
        );
        assert_eq!(e.code(), 403);
    }

    #[test]
    fn deleting_a_namespace_removes_its_contents() {
        let mut s = server_with_web();
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
        let nss = GroupResource::new("", "namespaces");
        ok(&mut s, ApiRequest::create("admin", nss.clone(), "", ns));
        ok(
            &mut s,
            ApiRequest::create("admin", deployments(), "team-a", deployment("x", 1)),
        );
        ok(&mut s, ApiRequest::delete("admin", nss, "", "team-a"));
        assert_eq!(s.list_objects(&deployments(), Some("team-a")).count(), 0);
        assert_eq!(s.list_objects(&deployments(), Some("default")).count(), 1);
    }
}
