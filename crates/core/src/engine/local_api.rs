//! A minimal stand-in for the simulated API server (issue 3), used until branch `api` exposes
//! `ApiServer::handle`. It keeps the same method names so the swap is one `use` line.
//!
//! It implements what the engine and controllers rely on: create/get/list/update/patch/delete,
//! the status subresource, generation and resourceVersion rules, optimistic concurrency, watch
//! events, audit entries and cascading deletion of dependents. It does not implement RBAC or
//! validation; the real server does.

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

use std::sync::Arc;

use imbl::{OrdMap, OrdSet, Vector};
use serde_json::{json, Map, Value};

use crate::api::{
    ApiError, ApiRequest, ApiResult, AuditEntry, GroupResource, ObjectKey, PatchType, RequestBody,
    StatusReason, Subresource, Verb, WatchEvent, WatchEventType,
};
use crate::time::SimTime;

/// What the server knows about one resource type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    pub gr: GroupResource,
    pub api_version: String,
    pub kind: String,
    pub namespaced: bool,
    pub status_subresource: bool,
    /// Whether writes maintain `metadata.generation`.
    pub generation: bool,
    /// Deployments also bump generation on annotation changes.
    pub annotations_bump_generation: bool,
    /// Custom resources: everything outside metadata (and status with the subresource) counts.
    pub custom: bool,
}

impl ResourceInfo {
    fn builtin(group: &str, resource: &str, version: &str, kind: &str) -> Self {
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        ResourceInfo {
            gr: GroupResource::new(group, resource),
            api_version,
            kind: kind.to_owned(),
            namespaced: true,
            status_subresource: true,
            generation: true,
            annotations_bump_generation: false,
            custom: false,
        }
    }
}

/// The stand-in server. Cloning is cheap: objects are shared through persistent maps.
#[derive(Clone, Debug)]
pub struct ApiServer {
    objects: OrdMap<ObjectKey, Arc<Value>>,
    resources: OrdMap<GroupResource, ResourceInfo>,
    dependents: OrdMap<String, OrdSet<ObjectKey>>,
    resource_version: u64,
    uid_seq: u64,
    watch: Vec<WatchEvent>,
    audit: Vector<AuditEntry>,
}

impl Default for ApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl ApiServer {
    pub fn new() -> Self {
        let mut resources = OrdMap::new();
        let mut add = |info: ResourceInfo| {
            resources.insert(info.gr.clone(), info);
        };
        let mut dep = ResourceInfo::builtin("apps", "deployments", "v1", "Deployment");
        dep.annotations_bump_generation = true;
        add(dep);
        add(ResourceInfo::builtin(
            "apps",
            "replicasets",
            "v1",
            "ReplicaSet",
        ));
        add(ResourceInfo::builtin("", "pods", "v1", "Pod"));
        let mut node = ResourceInfo::builtin("", "nodes", "v1", "Node");
        node.namespaced = false;
        node.generation = false;
        add(node);
        let mut cm = ResourceInfo::builtin("", "configmaps", "v1", "ConfigMap");
        cm.status_subresource = false;
        cm.generation = false;
        add(cm);
        let mut svc = ResourceInfo::builtin("", "services", "v1", "Service");
        svc.generation = false;
        add(svc);
        add(ResourceInfo::builtin(
            "autoscaling",
            "horizontalpodautoscalers",
            "v2",
            "HorizontalPodAutoscaler",
        ));
        let mut db = ResourceInfo::builtin("example.com", "databases", "v1", "Database");
        db.custom = true;
        add(db);
        ApiServer {
            objects: OrdMap::new(),
            resources,
            dependents: OrdMap::new(),
            resource_version: 1,
            uid_seq: 0,
            watch: Vec::new(),
            audit: Vector::new(),
        }
    }

    /// Registers a custom resource type (as installing a CRD would).
    pub fn register_custom(
        &mut self,
        group: &str,
        resource: &str,
        version: &str,
        kind: &str,
        status_subresource: bool,
    ) {
        let mut info = ResourceInfo::builtin(group, resource, version, kind);
        info.custom = true;
        info.status_subresource = status_subresource;
        self.resources.insert(info.gr.clone(), info);
    }

    pub fn resource_for(&self, api_version: &str, kind: &str) -> Option<ResourceInfo> {
        self.resources
            .values()
            .find(|r| r.api_version == api_version && r.kind == kind)
            .cloned()
    }

    pub fn resource_info(&self, gr: &GroupResource) -> Option<&ResourceInfo> {
        self.resources.get(gr)
    }

    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(key).map(|v| v.as_ref())
    }

    /// The stored object, shared.
    pub fn get_shared(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        self.objects.get(key).cloned()
    }

    pub fn objects(&self) -> impl Iterator<Item = (&ObjectKey, &Value)> {
        self.objects.iter().map(|(k, v)| (k, v.as_ref()))
    }

    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    pub fn audit(&self) -> &Vector<AuditEntry> {
        &self.audit
    }

    pub fn drain_watch_events(&mut self) -> Vec<WatchEvent> {
        std::mem::take(&mut self.watch)
    }

    pub fn handle(&mut self, now: SimTime, req: ApiRequest) -> ApiResult {
        let name_for_audit = if req.name.is_empty() {
            body_name(&req.body)
        } else {
            req.name.clone()
        };
        let key = ObjectKey::new(req.gr.clone(), &req.namespace, &name_for_audit);
        let rv_before = self.rv_of(&key);
        let result = self.dispatch(now, &req);
        let rv_after = self.rv_of(&key);
        let (code, message) = match &result {
            Ok(_) => (
                if req.verb == Verb::Create { 201 } else { 200 },
                String::new(),
            ),
            Err(e) => (e.code(), e.message.clone()),
        };
        self.audit.push_back(AuditEntry {
            time: now,
            principal: req.principal.clone(),
            verb: req.verb,
            gr: req.gr.clone(),
            subresource: req.subresource,
            namespace: req.namespace.clone(),
            name: name_for_audit,
            code,
            message,
            rv_before,
            rv_after,
        });
        result
    }

    fn rv_of(&self, key: &ObjectKey) -> u64 {
        self.objects
            .get(key)
            .and_then(|o| o.pointer("/metadata/resourceVersion"))
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    fn dispatch(&mut self, now: SimTime, req: &ApiRequest) -> ApiResult {
        let Some(info) = self.resources.get(&req.gr).cloned() else {
            return Err(err(
                StatusReason::NotFound,
                format!(
                    "the server could not find the requested resource ({})",
                    req.gr.qualified()
                ),
                &req.name,
                &req.gr,
            ));
        };
        if req.subresource == Some(Subresource::Status) && !info.status_subresource {
            return Err(not_found(&req.gr, &req.name));
        }
        match req.verb {
            Verb::Get => {
                let key = ObjectKey::new(req.gr.clone(), &req.namespace, &req.name);
                self.objects
                    .get(&key)
                    .map(|v| v.as_ref().clone())
                    .ok_or_else(|| not_found(&req.gr, &req.name))
            }
            Verb::List => {
                let items: Vec<Value> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| {
                        k.gr == req.gr && (req.namespace.is_empty() || k.namespace == req.namespace)
                    })
                    .map(|(_, v)| v.as_ref().clone())
                    .collect();
                Ok(json!({"apiVersion": "v1", "kind": "List", "items": items}))
            }
            Verb::Create => self.create(now, req, &info),
            Verb::Update | Verb::Patch => self.update(now, req, &info),
            Verb::Delete => {
                let key = ObjectKey::new(req.gr.clone(), &req.namespace, &req.name);
                let Some(obj) = self.objects.get(&key).cloned() else {
                    return Err(not_found(&req.gr, &req.name));
                };
                self.delete_cascade(now, &key);
                Ok(obj.as_ref().clone())
            }
        }
    }

    fn create(&mut self, now: SimTime, req: &ApiRequest, info: &ResourceInfo) -> ApiResult {
        let RequestBody::Object(body) = &req.body else {
            return Err(bad_request("create needs an object body"));
        };
        let mut obj = body.clone();
        let name = body_name(&req.body);
        if name.is_empty() {
            return Err(invalid(
                &req.gr,
                &info.kind,
                &name,
                "metadata.name",
                "Required value: name or generateName is required",
            ));
        }
        let key = ObjectKey::new(req.gr.clone(), &req.namespace, &name);
        if self.objects.contains_key(&key) {
            return Err(err(
                StatusReason::AlreadyExists,
                format!("{} \"{name}\" already exists", req.gr.qualified()),
                &name,
                &req.gr,
            ));
        }
        if obj
            .pointer("/metadata/resourceVersion")
            .is_some_and(|v| !v.is_null() && v != "")
        {
            return Err(bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        self.uid_seq += 1;
        let uid = format!("00000000-0000-4000-8000-{:012x}", self.uid_seq);
        let Some(meta) = obj
            .as_object_mut()
            .map(|o| o.entry("metadata").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
        else {
            return Err(bad_request("object has no metadata"));
        };
        meta.insert("uid".into(), json!(uid));
        meta.insert("creationTimestamp".into(), json!(now.rfc3339()));
        if info.namespaced {
            meta.insert("namespace".into(), json!(req.namespace));
        }
        if info.generation {
            meta.insert("generation".into(), json!(1));
        }
        if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), json!(info.api_version));
            o.insert("kind".into(), json!(info.kind));
            if info.status_subresource {
                o.remove("status");
            }
            if req.gr.resource == "pods" && req.gr.group.is_empty() {
                // The pod strategy's PrepareForCreate: phase Pending and the QoS class.
                let (cpu, mem) = crate::controllers::util::pod_requests(body);
                let qos = if cpu == 0 && mem == 0 {
                    "BestEffort"
                } else {
                    "Burstable"
                };
                o.insert(
                    "status".into(),
                    json!({"phase": "Pending", "qosClass": qos}),
                );
            }
        }
        self.persist(now, key, obj, WatchEventType::Added)
    }

    fn update(&mut self, now: SimTime, req: &ApiRequest, info: &ResourceInfo) -> ApiResult {
        let key = ObjectKey::new(req.gr.clone(), &req.namespace, &req.name);
        let Some(stored) = self.objects.get(&key).cloned() else {
            return Err(not_found(&req.gr, &req.name));
        };
        let mut incoming = match &req.body {
            RequestBody::Object(v) => v.clone(),
            RequestBody::Patch(PatchType::Merge, p) => {
                let mut doc = stored.as_ref().clone();
                json_patch::merge(&mut doc, p);
                doc
            }
            RequestBody::Patch(PatchType::Json, p) => {
                let mut doc = stored.as_ref().clone();
                let patch: json_patch::Patch = serde_json::from_value(p.clone())
                    .map_err(|e| bad_request(&format!("invalid JSON patch: {e}")))?;
                json_patch::patch(&mut doc, &patch).map_err(|e| {
                    err(
                        StatusReason::Invalid,
                        format!(
                            "the server rejected our request due to an error in our request: {e}"
                        ),
                        &req.name,
                        &req.gr,
                    )
                })?;
                doc
            }
            RequestBody::None => return Err(bad_request("update needs a body")),
        };
        let stored_rv = stored
            .pointer("/metadata/resourceVersion")
            .cloned()
            .unwrap_or(Value::Null);
        match incoming.pointer("/metadata/resourceVersion") {
            Some(rv) if !rv.is_null() && rv != "" && *rv != stored_rv => {
                return Err(err(
                    StatusReason::Conflict,
                    format!(
                        "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                        req.gr.qualified(),
                        req.name
                    ),
                    &req.name,
                    &req.gr,
                ));
            }
            _ => {}
        }
        let status_write = req.subresource == Some(Subresource::Status);
        let mut next = stored.as_ref().clone();
        if status_write {
            set_field(&mut next, "status", incoming.get("status").cloned());
            if !info.custom {
                let ann = incoming.pointer("/metadata/annotations").cloned();
                if let Some(m) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                    match ann {
                        Some(a) => m.insert("annotations".into(), a),
                        None => m.remove("annotations"),
                    };
                }
            }
        } else {
            if info.status_subresource {
                set_field(&mut incoming, "status", stored.get("status").cloned());
            }
            // Server-owned metadata is kept from storage.
            if let (Some(m), Some(sm)) = (
                incoming.get_mut("metadata").and_then(Value::as_object_mut),
                stored.get("metadata").and_then(Value::as_object),
            ) {
                for f in [
                    "uid",
                    "creationTimestamp",
                    "generation",
                    "namespace",
                    "name",
                ] {
                    match sm.get(f) {
                        Some(v) => m.insert(f.into(), v.clone()),
                        None => m.remove(f),
                    };
                }
                if sm.contains_key("deletionTimestamp") {
                    m.insert("deletionTimestamp".into(), sm["deletionTimestamp"].clone());
                }
            }
            if let Some(o) = incoming.as_object_mut() {
                o.insert("apiVersion".into(), json!(info.api_version));
                o.insert("kind".into(), json!(info.kind));
            }
            next = incoming;
            if info.generation && generation_changes(info, &stored, &next) {
                let g = stored
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    + 1;
                if let Some(m) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.insert("generation".into(), json!(g));
                }
            }
        }
        set_rv(&mut next, &stored_rv);
        if next == *stored {
            return Ok(next);
        }
        self.persist(now, key, next, WatchEventType::Modified)
    }

    fn persist(
        &mut self,
        now: SimTime,
        key: ObjectKey,
        mut obj: Value,
        event_type: WatchEventType,
    ) -> ApiResult {
        self.resource_version += 1;
        let rv = self.resource_version;
        set_rv(&mut obj, &json!(rv.to_string()));
        if let Some(old) = self.objects.get(&key).cloned() {
            self.unindex(&key, &old);
        }
        self.index(&key, &obj);
        let shared = Arc::new(obj);
        self.objects.insert(key.clone(), shared.clone());
        self.watch.push(WatchEvent {
            event_type,
            key,
            object: shared.as_ref().clone(),
            resource_version: rv,
            time: now,
        });
        Ok(shared.as_ref().clone())
    }

    fn delete_cascade(&mut self, now: SimTime, key: &ObjectKey) {
        let Some(obj) = self.objects.remove(key) else {
            return;
        };
        self.unindex(key, &obj);
        self.resource_version += 1;
        let mut last = obj.as_ref().clone();
        set_rv(&mut last, &json!(self.resource_version.to_string()));
        self.watch.push(WatchEvent {
            event_type: WatchEventType::Deleted,
            key: key.clone(),
            object: last,
            resource_version: self.resource_version,
            time: now,
        });
        let uid = uid_of(&obj);
        if let Some(children) = self.dependents.remove(&uid) {
            for child in children {
                self.delete_cascade(now, &child);
            }
        }
    }

    fn index(&mut self, key: &ObjectKey, obj: &Value) {
        for owner in owner_uids(obj) {
            self.dependents
                .entry(owner)
                .or_default()
                .insert(key.clone());
        }
    }

    fn unindex(&mut self, key: &ObjectKey, obj: &Value) {
        for owner in owner_uids(obj) {
            if let Some(set) = self.dependents.get_mut(&owner) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(&owner);
                }
            }
        }
    }
}

fn generation_changes(info: &ResourceInfo, old: &Value, new: &Value) -> bool {
    if info.custom {
        let strip = |v: &Value| -> Map<String, Value> {
            let mut m = v.as_object().cloned().unwrap_or_default();
            m.remove("metadata");
            m.remove("apiVersion");
            m.remove("kind");
            if info.status_subresource {
                m.remove("status");
            }
            m
        };
        return strip(old) != strip(new);
    }
    if old.get("spec") != new.get("spec") {
        return true;
    }
    info.annotations_bump_generation
        && old.pointer("/metadata/annotations") != new.pointer("/metadata/annotations")
}

fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn uid_of(obj: &Value) -> String {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn set_field(obj: &mut Value, field: &str, value: Option<Value>) {
    if let Some(o) = obj.as_object_mut() {
        match value {
            Some(v) => o.insert(field.into(), v),
            None => o.remove(field),
        };
    }
}

fn set_rv(obj: &mut Value, rv: &Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if rv.is_null() {
            m.remove("resourceVersion");
        } else {
            m.insert("resourceVersion".into(), rv.clone());
        }
    }
}

fn body_name(body: &RequestBody) -> String {
    match body {
        RequestBody::Object(v) => v
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

fn err(reason: StatusReason, message: String, name: &str, gr: &GroupResource) -> ApiError {
    ApiError {
        reason,
        message,
        details_name: name.to_owned(),
        details_group: gr.group.clone(),
        details_kind: gr.resource.clone(),
        causes: Vec::new(),
    }
}

fn not_found(gr: &GroupResource, name: &str) -> ApiError {
    err(
        StatusReason::NotFound,
        format!("{} \"{name}\" not found", gr.qualified()),
        name,
        gr,
    )
}

fn bad_request(message: &str) -> ApiError {
    ApiError {
        reason: StatusReason::BadRequest,
        message: message.to_owned(),
        details_name: String::new(),
        details_group: String::new(),
        details_kind: String::new(),
        causes: Vec::new(),
    }
}

fn invalid(gr: &GroupResource, kind: &str, name: &str, field: &str, detail: &str) -> ApiError {
    ApiError {
        reason: StatusReason::Invalid,
        message: format!(
            "{kind}.{} \"{name}\" is invalid: {field}: {detail}",
            gr.group
        ),
        details_name: name.to_owned(),
        details_group: gr.group.clone(),
        details_kind: kind.to_owned(),
        causes: vec![(field.to_owned(), detail.to_owned())],
    }
}
