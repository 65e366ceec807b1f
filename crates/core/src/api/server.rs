//! [`ApiServer`]: the request pipeline (resolve the resource, authorize, decode, apply the
//! kind's strategy, check concurrency, validate, persist, emit a watch event, audit) and the
//! deletion machinery (finalizers, background garbage collection, CRD and namespace cleanup).

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
    pending: Vector<WatchEvent>,
    audit: Vector<AuditEntry>,
    /// uids of removed owners whose dependents the garbage collector must look at.
    gc_queue: OrdSet<String>,
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

fn set_or_remove(map: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    match v {
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
            },
            rbac_enforced: true,
            gc_mode: GcMode::Auto,
            in_gc: false,
        };
        let mut seed: Vec<Value> = INITIAL_NAMESPACES
            .iter()
            .map(|ns| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .collect();
        seed.extend(rbac::default_policy());
        for obj in seed {
            let req =
                ApiRequest::create(principals::APISERVER, GroupResource::new("", ""), "", obj);
            let saved = s.rbac_enforced;
            s.rbac_enforced = false;
            if let RequestBody::Object(body) = &req.body {
                if let Some(info) = s.kind_of(body) {
                    let _ = s.create(
                        SimTime::ZERO,
                        &info,
                        "",
                        body.clone(),
                        principals::APISERVER,
                    );
                }
            }
            s.rbac_enforced = saved;
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
    pub fn handle(&mut self, now: SimTime, req: ApiRequest) -> ApiResult {
        let checkpoint = self.state.clone();
        let target = self.target_key(&req);
        let rv_before = target
            .as_ref()
            .and_then(|k| self.state.store.get(k))
            .map_or(0, |o| rv_of(o));
        let result = self.dispatch(now, &req);
        let (code, message) = match &result {
            Ok(_) if req.verb == Verb::Create => (201, String::new()),
            Ok(_) => (200, String::new()),
            Err(e) => (e.code(), e.message.clone()),
        };
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
        self.state.audit.push_back(AuditEntry {
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
        });
        if let RequestBody::Object(v) | RequestBody::Patch(_, v) = req.body {
            if result.is_err() && super::decode::depth_exceeds(&v, MAX_DEPTH).is_some() {
                drop_deep(v);
            }
        }
        if result.is_ok() && self.gc_mode == GcMode::Auto && !self.in_gc && self.gc_pending() {
            self.collect_garbage(now);
        }
        result
    }

    /// Runs the garbage collector until nothing is left: every object whose ownerReferences
    /// all name removed owners is deleted (background propagation) by a DELETE request from
    /// [`principals::GARBAGE_COLLECTOR`], audited like any other. Returns how many
    /// delete requests it sent.
    pub fn collect_garbage(&mut self, now: SimTime) -> usize {
        let was = self.in_gc;
        self.in_gc = true;
        let mut sent = 0;
        while let Some(owner) = self.state.gc_queue.get_min().cloned() {
            self.state.gc_queue.remove(&owner);
            for key in self.state.store.dependents_of(&owner) {
                let Some(obj) = self.state.store.get(&key) else {
                    continue;
                };
                let orphaned = owner_uids(obj)
                    .iter()
                    .all(|u| !self.state.store.contains_uid(u));
                if !orphaned || is_deleting(obj) {
                    continue;
                }
                let uid = uid_of(obj).to_owned();
                let req = ApiRequest::delete_with_options(
                    principals::GARBAGE_COLLECTOR,
                    key.gr.clone(),
                    &key.namespace,
                    &key.name,
                    json!({"propagationPolicy": "Background", "preconditions": {"uid": uid}}),
                );
                let _ = self.handle(now, req);
                sent += 1;
            }
        }
        self.in_gc = was;
        sent
    }

    /// Watch events of every persisted write since the last drain, in order.
    pub fn drain_watch_events(&mut self) -> Vec<WatchEvent> {
        let events: Vec<WatchEvent> = self.state.pending.iter().cloned().collect();
        self.state.pending = Vector::new();
        events
    }

    /// Number of watch events waiting to be drained.
    pub fn pending_watch_events(&self) -> usize {
        self.state.pending.len()
    }

    /// The full audit log, oldest first.
    pub fn audit(&self) -> impl Iterator<Item = &AuditEntry> {
        self.state.audit.iter()
    }

    /// Number of audit entries.
    pub fn audit_len(&self) -> usize {
        self.state.audit.len()
    }

    /// Audit entries from index `from` on (for incremental display).
    pub fn audit_since(&self, from: usize) -> impl Iterator<Item = &AuditEntry> {
        self.state.audit.iter().skip(from)
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

    fn target_key(&self, req: &ApiRequest) -> Option<ObjectKey> {
        let info = self.state.registry.get(&req.gr)?;
        if info.rules == KindRules::Binding {
            let ns = self.request_namespace(info, req).ok()?;
            let name = match &req.body {
                RequestBody::Object(b) => meta_str(b, "name").to_owned(),
                _ => String::new(),
            };
            return Some(ObjectKey::new(GroupResource::new("", "pods"), &ns, &name));
        }
        let ns = self.request_namespace(info, req).ok()?;
        let name = if req.name.is_empty() {
            match &req.body {
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

    fn request_namespace(&self, info: &ResourceInfo, req: &ApiRequest) -> Result<String, ApiError> {
        if !info.namespaced {
            return Ok(String::new());
        }
        if !req.namespace.is_empty() || req.verb == Verb::List {
            return Ok(req.namespace.clone());
        }
        if let RequestBody::Object(b) = &req.body {
            let ns = meta_str(b, "namespace");
            if !ns.is_empty() {
                return Ok(ns.to_owned());
            }
        }
        Ok("default".to_owned())
    }

    fn dispatch(&mut self, now: SimTime, req: &ApiRequest) -> ApiResult {
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
        let ns = self.request_namespace(&info, req)?;
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
            if !rbac::authorize(&self.state.store, &attrs) {
                return Err(forbidden(&req.gr, authz_name, &rbac::denial_reason(&attrs)));
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
                let RequestBody::Object(body) = &req.body else {
                    return Err(bad_request(
                        "the body of a create request must be an object",
                    ));
                };
                check_body(body)?;
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
                let body_info = self.info_for_body(body)?;
                if body_info.gr != info.gr {
                    return Err(bad_request(format!(
                        "the API version in the data ({}) does not match the expected API version ({}) for kind {}",
                        body.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                        info.api_version(),
                        info.kind
                    )));
                }
                if info.rules == KindRules::Binding {
                    return self.bind(now, &ns, body, &req.principal);
                }
                self.create(now, &info, &ns, body.clone(), &req.principal)
            }
            Verb::Update => {
                let RequestBody::Object(body) = &req.body else {
                    return Err(bad_request(
                        "the body of an update request must be an object",
                    ));
                };
                check_body(body)?;
                let body_info = self.info_for_body(body)?;
                if body_info.gr != info.gr {
                    return Err(bad_request(format!(
                        "the API version in the data ({}) does not match the expected API version ({}) for kind {}",
                        body.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                        info.api_version(),
                        info.kind
                    )));
                }
                self.write(
                    now,
                    &info,
                    &ns,
                    &req.name,
                    body.clone(),
                    status,
                    &req.principal,
                )
            }
            Verb::Patch => {
                let RequestBody::Patch(pt, patch) = &req.body else {
                    return Err(bad_request("the body of a patch request must be a patch"));
                };
                check_body(patch)?;
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
                        json_patch::merge(&mut doc, patch);
                    }
                    PatchType::Json => {
                        let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                            .map_err(|e| bad_request(format!("invalid JSON patch: {e}")))?;
                        json_patch::patch(&mut doc, &ops).map_err(|e| {
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
                let options = match &req.body {
                    RequestBody::Object(o) => Some(o.clone()),
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
        object: Value,
        rv: u64,
    ) {
        self.state.pending.push_back(WatchEvent {
            event_type,
            key,
            object,
            resource_version: rv,
            time: now,
        });
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
        self.state.store.put(key.clone(), obj.clone());
        self.emit(now, event, key, obj.clone(), rv);
        obj
    }

    /// Removes an object for good: a fresh resourceVersion, a DELETED event, the owner queued
    /// for garbage collection, and kind-specific cleanup (CRD instances, namespace contents).
    fn remove(&mut self, now: SimTime, key: &ObjectKey) -> Option<Value> {
        let old = self.state.store.remove(key)?;
        let mut obj = (*old).clone();
        let rv = self.next_rv();
        meta_mut(&mut obj).insert("resourceVersion".into(), Value::from(rv.to_string()));
        let uid = uid_of(&obj).to_owned();
        self.emit(now, WatchEventType::Deleted, key.clone(), obj.clone(), rv);
        if !uid.is_empty() && !self.state.store.dependents_of(&uid).is_empty() {
            self.state.gc_queue.insert(uid);
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
            return Err(bad_request(
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
        let dangling: Vec<String> = owner_uids(&created)
            .into_iter()
            .filter(|u| !self.state.store.contains_uid(u))
            .collect();
        for u in dangling {
            self.state.gc_queue.insert(u);
        }
        Ok(created)
    }

    /// Server-side fields some kinds get on create (kube's registries and controllers that
    /// run inside the API server).
    fn prepare_create(&mut self, _now: SimTime, info: &ResourceInfo, obj: &mut Value) {
        match info.rules {
            KindRules::Pod => {
                obj["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
            }
            KindRules::Namespace => {
                obj["status"] = json!({"phase": "Active"});
            }
            KindRules::Service => {
                let ty = obj
                    .pointer("/spec/type")
                    .and_then(Value::as_str)
                    .unwrap_or("ClusterIP");
                let ip = obj
                    .pointer("/spec/clusterIP")
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
            "acceptedNames": obj.pointer("/spec/names").cloned().unwrap_or(json!({})),
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

    #[allow(clippy::too_many_arguments)]
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
        let Some(old) = self.state.store.get(&key).map(|o| (**o).clone()) else {
            return Err(not_found(gr, name));
        };
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
        } else if req_rv != meta_str(&old, "resourceVersion") {
            return Err(conflict(gr, name));
        }
        // Identity: uid may be omitted, not changed.
        let req_uid = meta_str(&new, "uid").to_owned();
        if !req_uid.is_empty() && req_uid != meta_str(&old, "uid") {
            let err =
                FieldError::invalid("metadata.uid", Value::from(req_uid), "field is immutable");
            return Err(self.invalid(info, name, &[err]));
        }
        let mut result = if status_write {
            self.status_result(info, &old, new)
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
            let old_meta = meta(&old).cloned().unwrap_or_default();
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
        if is_deleting(&old) {
            let before = finalizers(&old);
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
            strategy::validate_update(info, &old, &result, &mut errs);
        }
        if status_write || !info.status_subresource {
            strategy::validate_status(info, &result, &mut errs);
        }
        if !errs.is_empty() {
            return Err(self.invalid(info, name, &errs));
        }
        self.node_restriction(principal, info, &old, status_write)?;
        if !status_write && info.has_generation() && strategy::generation_bumps(info, &old, &result)
        {
            let g = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut result).insert("generation".into(), Value::from(g + 1));
        }
        if result == old {
            return Ok(old);
        }
        if is_deleting(&result) && finalizers(&result).is_empty() {
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
        let mut result = old.clone();
        if info.rules == KindRules::Custom {
            if let Some(o) = result.as_object_mut() {
                set_or_remove(o, "status", new.get("status"));
            }
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
            let labels = old.pointer("/metadata/labels").cloned();
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
                    .pointer("/spec/nodeName")
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
        let policy = options
            .and_then(|o| o.get("propagationPolicy"))
            .and_then(Value::as_str)
            .unwrap_or("Background");
        if !matches!(policy, "Background" | "Foreground" | "Orphan") {
            let err = FieldError::not_supported(
                "propagationPolicy",
                Value::from(policy),
                &["Foreground", "Background", "Orphan"],
            );
            return Err(invalid("DeleteOptions", "", "", "", &[err]));
        }
        if is_deleting(&old) {
            return Ok(old);
        }
        if policy == "Orphan" {
            self.orphan_dependents(now, &old);
        }
        if !finalizers(&old).is_empty() {
            let mut obj = old.clone();
            let m = meta_mut(&mut obj);
            m.insert("deletionTimestamp".into(), Value::from(now.rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), Value::from(0));
            if let Some(g) = m
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                m.insert("generation".into(), Value::from(g + 1));
            }
            return Ok(self.persist(now, key, obj, WatchEventType::Modified));
        }
        let uid = uid_of(&old).to_owned();
        self.remove(now, &key);
        Ok(status_success(gr, name, &uid))
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
            .pointer("/target/name")
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
            .pointer("/spec/nodeName")
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
        assert!(d.get("status").is_none());
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
}
