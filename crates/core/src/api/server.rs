//! [`ApiServer`]: kube-apiserver's request pipeline. [`ApiServer::handle`] resolves the resource,
//! authorizes ([`super::rbac`]), decodes and dispatches by verb to the handlers beside it
//! ([`super::create`], [`super::update`], [`super::delete`], which run [`super::admission`] and
//! the kind's [`super::strategy`]), persists to the [`super::store`], leaves the watch event and
//! the audit entry ([`super::watch`]) and runs the garbage collector ([`super::gc`]). A refused
//! request is rolled back whole.

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::json::{json, Value};
use imbl::{OrdMap, OrdSet, Vector};

use super::admission::default_service_account;
use super::decode::{check_measured, drop_deep, measure_body};
use super::errors::{
    bad_request, forbidden, invalid, method_not_allowed, not_found, unknown_resource,
};
use super::gc::GcMode;
use super::kinds::{KindRules, Registry, ResourceInfo};
use super::meta::{meta_mut, meta_str, resource_version};
use super::rbac::{self, principals, Attributes};
use super::selector::Selector;
use super::store::Store;
use super::types::{
    ApiError, ApiRequest, ApiResult, AuditEntry, GroupResource, ObjectKey, PatchType, RequestBody,
    StatusReason, Subresource, Verb, WatchEventType,
};
use super::validation::FieldError;
use super::watch::PendingEvent;
use crate::time::SimTime;

/// Everything a request may change; restored wholesale when a request fails, so refused
/// requests change nothing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct State {
    pub(super) store: Store,
    pub(super) registry: Registry,
    pub(super) rv: u64,
    pub(super) uid_counter: u64,
    pub(super) name_counter: u64,
    pub(super) ip_counter: u64,
    // Shared entries: appending to a persistent vector copies its tail chunk, which must be
    // pointer copies, not deep copies of objects.
    pub(super) pending: Vector<Arc<PendingEvent>>,
    pub(super) audit: Vector<Arc<AuditEntry>>,
    /// uids the garbage collector must look at: removed owners (their dependents) and owners
    /// being deleted in the foreground.
    pub(super) gc_queue: OrdSet<String>,
    /// Owners that just started deleting in the foreground: all their dependents are tried
    /// once, then only the blocking ones.
    pub(super) gc_started: OrdSet<String>,
    /// Every Event's lease: it expires `EVENT_TTL_MS` after its last write (kube-apiserver's
    /// `--event-ttl`, an etcd lease renewed on every write), by key and in expiry order.
    /// Both hold the store's own key (shared), not a copy each.
    pub(super) event_leases: OrdMap<Arc<ObjectKey>, SimTime>,
    pub(super) lease_order: OrdSet<(SimTime, Arc<ObjectKey>)>,
}

/// kube-apiserver's `--event-ttl` default, 1 h.
pub const EVENT_TTL_MS: u64 = 3_600_000;

/// The simulated kube-apiserver. Cloning is O(1) (persistent maps and vectors), so the engine
/// may snapshot it after every step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ApiServer {
    pub(super) state: State,
    pub(super) rbac_enforced: bool,
    pub(super) gc_mode: GcMode,
    pub(super) in_gc: bool,
    /// Authorization decisions that allowed, for the RBAC objects as they are.
    authz: AuthzMemo,
    /// The object each resource last stored anew (a create): what the next one's levels are
    /// shared with where identical ([`ApiServer::persist`]). Memory only: nothing reads it, so
    /// a checkpoint does not keep it.
    #[serde(skip)]
    last_created: OrdMap<GroupResource, Arc<Value>>,
    /// Set by [`ApiServer::keep_no_audit`]: the audit entries let go so far. Each top-level
    /// request then starts the log afresh, keeping only its own entries (and those of the
    /// garbage collection it sets off) for the engine to read after it; `audit_len` counts
    /// both. `None`, and absent from a checkpoint, when the whole log is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) audit_unkept: Option<u64>,
    /// The state as the request being handled found it: what a refused request goes back
    /// to. Let go at the request's first write ([`ApiServer::committed`]), after which no
    /// request fails, so that its writes no longer copy the paths they change to keep the
    /// old version for a rollback nobody will ask for. `None` between requests.
    #[serde(skip)]
    checkpoint: Option<State>,
}

/// The requests RBAC allowed since the RBAC objects last changed (`Store::rbac_writes`): the
/// same attributes against the same policy get the same answer, so the policy is not walked
/// again. Names are part of a request's attributes only when some rule lists `resourceNames`,
/// and only for a request no rule without them allows.
/// Refusals are not kept (their message names what the lookup missed). Bounded by the distinct
/// (user, verb, resource, namespace) a policy sees; cleared on every RBAC write.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct AuthzMemo {
    /// The `rbac_writes` it holds for; `None` until first used and after a rollback.
    valid_for: Option<u64>,
    names_matter: bool,
    allowed: BTreeSet<String>,
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

pub(super) fn status_success(gr: &GroupResource, name: &str, uid: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": name, "group": gr.group, "kind": gr.resource, "uid": uid}})
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
                event_leases: OrdMap::new(),
                lease_order: OrdSet::new(),
            },
            rbac_enforced: true,
            gc_mode: GcMode::Auto,
            in_gc: false,
            authz: AuthzMemo::default(),
            last_created: OrdMap::new(),
            audit_unkept: None,
            checkpoint: None,
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

    /// From now on keeps the audit log only as long as the engine reads it: each request's
    /// entries until the next request (`converge check` of a scenario no expectation of which
    /// counts requests). [`Self::audit_len`] still counts every entry, [`Self::audit`] and
    /// [`Self::audit_since`] give the ones kept. Nothing else changes.
    pub fn keep_no_audit(&mut self) {
        self.audit_unkept.get_or_insert(0);
    }

    /// Turns RBAC enforcement on (the default) or off. With it off every principal may do
    /// everything, which shows what status spoofing would do.
    pub fn set_rbac_enforced(&mut self, enforced: bool) {
        self.rbac_enforced = enforced;
    }

    pub fn rbac_enforced(&self) -> bool {
        self.rbac_enforced
    }

    /// The authorization step on its own: whether `principal` may `verb` (an RBAC verb, so
    /// also `watch`) the resource, with kube's 403 when not. Always allowed with RBAC off.
    pub fn authorize(
        &self,
        principal: &str,
        verb: &str,
        gr: &GroupResource,
        subresource: Option<Subresource>,
        namespace: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        if !self.rbac_enforced {
            return Ok(());
        }
        self.decide(&Attributes {
            user: principal,
            verb,
            gr,
            subresource,
            namespace,
            name,
        })
    }

    /// The policy walk behind [`Self::authorize`], with kube's 403 when it refuses.
    fn decide(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        rbac::check(&self.state.store, attrs).map_err(|lookup_errors| {
            let reason = rbac::denial_reason_with_errors(attrs, &lookup_errors);
            forbidden(attrs.gr, attrs.name, &reason)
        })
    }

    /// [`Self::authorize`] for a request being handled, answered from the memo of allowed
    /// decisions when the same attributes were allowed under the same RBAC objects.
    fn authorize_request(&mut self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        if !self.rbac_enforced {
            return Ok(());
        }
        let memo = &mut self.authz;
        let writes = self.state.store.rbac_writes();
        if memo.valid_for != Some(writes) {
            *memo = AuthzMemo {
                valid_for: Some(writes),
                names_matter: rbac::names_matter(&self.state.store),
                allowed: BTreeSet::new(),
            };
        }
        // Joined by `concat` rather than `format!`: the key is built for every request.
        let memo_key = |name: &str| {
            [
                attrs.user,
                "\0",
                attrs.verb,
                "\0",
                &attrs.gr.group,
                "\0",
                &attrs.gr.resource,
                "\0",
                attrs.subresource.map_or("", Subresource::as_str),
                "\0",
                attrs.namespace,
                "\0",
                name,
            ]
            .concat()
        };
        // The key without a name holds a decision for every name. Without a rule listing
        // `resourceNames` that is every decision (only such a list makes rbac's
        // `ResourceNameMatches` read the name); with one, only a decision a rule without the
        // list allows, so the memo keeps it once rather than once per name (every Event and Pod
        // has its own).
        let unnamed = memo_key("");
        if memo.allowed.contains(&unnamed) {
            return Ok(());
        }
        if !memo.names_matter {
            self.decide(attrs)?;
            self.authz.allowed.insert(unnamed);
            return Ok(());
        }
        // A named decision is kept under its name. A request without a name (a create, a
        // list) that only a listed name allows (a rule listing "") is not kept: its key
        // would be the one for every name.
        let named = (!attrs.name.is_empty()).then(|| memo_key(attrs.name));
        if named.as_ref().is_some_and(|k| memo.allowed.contains(k)) {
            return Ok(());
        }
        if rbac::allows_every_name(&self.state.store, attrs) {
            self.authz.allowed.insert(unnamed);
            return Ok(());
        }
        self.decide(attrs)?;
        if let Some(key) = named {
            self.authz.allowed.insert(key);
        }
        Ok(())
    }

    /// Handles one request with every rule applied: authorization, decoding, the kind's
    /// strategy, optimistic concurrency, validation, persistence, the watch event and the audit
    /// entry. A refused request changes nothing but the audit log.
    pub fn handle(&mut self, now: SimTime, mut req: ApiRequest) -> ApiResult {
        if let (Some(unkept), false) = (&mut self.audit_unkept, self.in_gc) {
            *unkept += self.state.audit.len() as u64;
            self.state.audit = Vector::new();
        }
        // A request handled within another (the garbage collector's) keeps its own; the
        // outer one's comes back after it.
        let outer = self.checkpoint.replace(self.state.clone());
        // The body moves into the pipeline (no deep copy); the rest of the request stays for
        // the audit entry.
        let body = std::mem::replace(&mut req.body, RequestBody::None);
        let target = self.target_key(&req, &body);
        let rv_before = target
            .as_ref()
            .and_then(|k| self.state.store.get(k))
            .map_or(0, |o| resource_version(o));
        // The body's depth and size bound, in one walk: judged here for depth, later for size.
        let measured = match &body {
            RequestBody::Object(v) | RequestBody::Patch(_, v) => Some(measure_body(v)),
            RequestBody::None => None,
        };
        let result = if measured == Some(Err(())) {
            let err = match &body {
                RequestBody::Object(v) | RequestBody::Patch(_, v) => {
                    check_measured(v, Err(())).err()
                }
                RequestBody::None => None,
            };
            if let RequestBody::Object(v) | RequestBody::Patch(_, v) = body {
                drop_deep(v);
            }
            Err(err.unwrap_or_else(|| bad_request("object nesting is too deep")))
        } else {
            self.dispatch(now, &req, body, measured)
        };
        let (code, message) = super::types::response_status(req.verb, &result);
        let checkpoint = std::mem::replace(&mut self.checkpoint, outer);
        if result.is_err() {
            // Every refusal comes before the request's first write.
            debug_assert!(checkpoint.is_some(), "a request failed after it wrote");
            if let Some(checkpoint) = checkpoint {
                // When the refused request wrote RBAC objects, the write count goes back with
                // them, and what the memo learnt since may not hold. Otherwise the policy is
                // the one the memo holds for (a conflict, a refusal, a missing object: most
                // errors).
                let rbac_written = self.state.store.rbac_writes() != checkpoint.store.rbac_writes();
                self.state = checkpoint;
                if rbac_written {
                    self.authz.valid_for = None;
                }
            }
        }
        let name = if req.name.is_empty() {
            result
                .as_ref()
                .ok()
                .map(|v| meta_str(v, "name").to_owned())
                .filter(|n| !n.is_empty())
                .or_else(|| target.as_ref().map(|k| k.name.to_string()))
                .unwrap_or_default()
        } else {
            req.name.clone()
        };
        let namespace = target
            .as_ref()
            .map_or_else(|| req.namespace.clone(), |k| k.namespace.to_string());
        let key_after = target.map(|k| ObjectKey {
            name: name.as_str().into(),
            ..k
        });
        let rv_after = key_after
            .as_ref()
            .and_then(|k| self.state.store.get(k))
            .map_or(0, |o| resource_version(o));
        self.state.audit.push_back(Arc::new(AuditEntry {
            time: now,
            principal: req.principal.as_str().into(),
            verb: req.verb,
            gr: req.gr.clone(),
            subresource: req.subresource,
            namespace: namespace.into(),
            name: name.into(),
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

    /// Direct read of a stored object: no RBAC, no audit (for the UI, kstatus and tests).
    pub fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.state.store.get(key).map(AsRef::as_ref)
    }

    /// The store itself, for direct reads (no RBAC, no audit) of the objects as stored.
    pub fn store(&self) -> &super::store::Store {
        &self.state.store
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

    pub(super) fn target_key(&self, req: &ApiRequest, body: &RequestBody) -> Option<ObjectKey> {
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

    pub(super) fn request_namespace(
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

    /// Serves one request; `measured` is its body's [`measure_body`], where the caller took it.
    pub(super) fn dispatch(
        &mut self,
        now: SimTime,
        req: &ApiRequest,
        body: RequestBody,
        measured: Option<Result<usize, ()>>,
    ) -> ApiResult {
        let check_body = |v: &Value| check_measured(v, measured.unwrap_or_else(|| measure_body(v)));
        let info = self
            .state
            .registry
            .get(&req.gr)
            .cloned()
            .ok_or_else(unknown_resource)?;
        if let Some(sub) = req.subresource {
            let served = match sub {
                Subresource::Status => info.status_subresource,
                Subresource::Scale => super::scale::has_scale(&info),
            };
            if !served {
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
        self.authorize_request(&Attributes {
            user: &req.principal,
            verb: req.verb.as_str(),
            gr: &req.gr,
            subresource: req.subresource,
            namespace: &ns,
            name: authz_name,
        })?;
        if req.verb != Verb::Create && req.verb != Verb::List && req.name.is_empty() {
            return Err(bad_request("resource name may not be empty"));
        }
        if req.subresource == Some(Subresource::Scale) {
            return self.scale(now, &info, &ns, req, body);
        }
        let status = req.subresource == Some(Subresource::Status);
        match req.verb {
            Verb::Get => {
                let key = ObjectKey::new(req.gr.clone(), &ns, &req.name);
                self.state
                    .store
                    .get(&key)
                    .cloned()
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
                        .field("metadata")
                        .and_then(|m| m.field("namespace"))
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
                        body.field("apiVersion").and_then(Value::as_str).unwrap_or(""),
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
                        body.field("apiVersion").and_then(Value::as_str).unwrap_or(""),
                        info.api_version(),
                        info.kind
                    )));
                }
                if status {
                    self.update_status(now, &info, &ns, &req.name, body, &req.principal)
                } else {
                    self.update(now, &info, &ns, &req.name, body, &req.principal)
                }
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
                        super::meta::merge_patch(&mut doc, patch);
                    }
                    PatchType::Strategic => {
                        if info.rules == KindRules::Custom {
                            return Err(ApiError::new(
                                StatusReason::UnsupportedMediaType,
                                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                            ));
                        }
                        super::strategic::apply(&info.gr.resource, &mut doc, &patch)
                            .map_err(bad_request)?;
                    }
                    PatchType::Json => {
                        let ops: json_patch::Patch = crate::json::from_value(patch)
                            .map_err(|e| bad_request(format!("invalid JSON patch: {e}")))?;
                        // `doc` is a copy, dropped on error, so nothing needs undoing; and
                        // json_patch::patch panics when it cannot undo (a `move` onto the
                        // prefix of its `from` cannot be moved back; found by the fuzzer).
                        crate::json::patch_unsafe(&mut doc, &ops).map_err(|e| {
                            ApiError::new(
                                StatusReason::Invalid,
                                format!("the server rejected our request due to an error in our request: {e}"),
                            )
                        })?;
                    }
                }
                // The patched document is a new body: measured on its own.
                check_measured(&doc, measure_body(&doc))?;
                if !doc.is_object() {
                    return Err(bad_request("the patched document is not an object"));
                }
                if status {
                    self.update_status(now, &info, &ns, &req.name, doc, &req.principal)
                } else {
                    self.update(now, &info, &ns, &req.name, doc, &req.principal)
                }
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

    pub(super) fn list(&self, info: &ResourceInfo, ns: &str, selector: Option<&str>) -> ApiResult {
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
        Ok(Arc::new(json!({
            "apiVersion": info.api_version(),
            "kind": format!("{}List", info.kind),
            "metadata": {"resourceVersion": self.state.rv.to_string()},
            "items": items,
        })))
    }

    pub(super) fn next_rv(&mut self) -> u64 {
        self.state.rv += 1;
        self.state.rv
    }

    /// Marks the request being handled as one that succeeds: it is about to write, and no
    /// request fails after its first write (each checks everything before it), so the state
    /// it started from is let go. Its writes then change the persistent maps in place where
    /// nothing else shares them, instead of copying each path for a rollback.
    pub(super) fn committed(&mut self) {
        self.checkpoint = None;
    }

    /// Persists `obj` under `key` with a fresh resourceVersion and emits the watch event.
    pub(super) fn persist(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        mut obj: Value,
        event: WatchEventType,
    ) -> Arc<Value> {
        self.committed();
        let rv = self.next_rv();
        let m = meta_mut(&mut obj);
        m.insert("resourceVersion", Value::from(rv.to_string()));
        // ObjectMeta's lists are omitempty: an emptied one is not stored (a pod whose last
        // finalizer came off, a dependent orphaned from its last owner).
        for list in ["finalizers", "ownerReferences"] {
            if m.field(list)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                m.remove(list);
            }
        }
        let old = self.state.store.get(&key).cloned();
        if let Some(old) = &old {
            self.queue_graph_changes(old, &obj);
        }
        let events = key.gr.is_events();
        // What this write built anew (a kubelet's status, a new Event) was grown by inserts;
        // it is stored at its length. The levels it shares with the version before are left
        // as they are, so this costs only the new levels (`json::Map::compact`). A new level
        // identical to the same level of the version before (a condition the kubelet wrote
        // again), or for a create of the resource's last new object (a sibling Pod's
        // tolerations, volumes and resources), is that level, shared.
        let created = old.is_none();
        obj.compact_like_last(
            old.as_ref()
                .or_else(|| self.last_created.get(&key.gr))
                .map(AsRef::as_ref),
        );
        let obj = Arc::new(obj);
        if created {
            self.last_created.insert(key.gr.clone(), Arc::clone(&obj));
        }
        let shared_key = self.state.store.put_shared(key.clone(), Arc::clone(&obj));
        if events {
            self.drop_lease(&key);
            let expiry = now.plus_ms(EVENT_TTL_MS);
            self.state
                .event_leases
                .insert(Arc::clone(&shared_key), expiry);
            self.state
                .lease_order
                .insert((expiry, Arc::clone(&shared_key)));
        }
        self.emit(now, event, shared_key, Arc::clone(&obj), rv, old);
        obj
    }

    pub(super) fn drop_lease(&mut self, key: &ObjectKey) {
        if let Some((shared, old)) = self.state.event_leases.remove_with_key(key) {
            self.state.lease_order.remove(&(old, shared));
        }
    }

    /// When the next Event's lease runs out.
    pub fn next_event_expiry(&self) -> Option<SimTime> {
        self.state.lease_order.get_min().map(|(t, _)| *t)
    }

    /// Deletes the Events whose leases ran out by `now`, as etcd does when a lease expires: a
    /// DELETED watch event each, no request and no audit entry. Returns their keys.
    pub fn expire_events(&mut self, now: SimTime) -> Vec<ObjectKey> {
        let mut gone = Vec::new();
        while let Some((t, key)) = self.state.lease_order.get_min().cloned() {
            if t > now {
                break;
            }
            self.drop_lease(&key);
            if self.remove(t, &key).is_some() {
                gone.push((*key).clone());
            }
        }
        gone
    }

    pub(super) fn invalid(&self, info: &ResourceInfo, name: &str, errs: &[FieldError]) -> ApiError {
        invalid(
            &info.qualified_kind(),
            &info.gr.group,
            &info.kind,
            name,
            errs,
        )
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
