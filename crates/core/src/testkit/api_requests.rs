//! The API server's properties under fuzzed requests: after each one, a refusal changes
//! nothing but the audit log, resourceVersion only moves forward, status and spec stay with
//! their subresource, and the garbage collector leaves no owner waiting for nothing. Also the
//! store helpers (snapshot, diff) the API tests share.

use crate::json::{json, Value};

use super::request_bytes::{decode_request, template, Bytes};
use crate::api::{ApiRequest, ApiServer, ObjectKey, Subresource, Verb};
use crate::time::SimTime;

/// The API server the request fuzzer starts from: the defaults plus one object of most kinds,
/// the Database CRD (with the status subresource) and a Database.
pub fn seeded_api_server() -> ApiServer {
    let mut api = ApiServer::new();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "databases.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "databases", "singular": "database", "kind": "Database",
                      "listKind": "DatabaseList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    let objects = [
        crd,
        template("apps/v1", "Deployment", "web"),
        template("v1", "ConfigMap", "cfg"),
        template("v1", "Pod", "p"),
        template("v1", "Service", "web"),
        template("example.com/v1", "Database", "orders"),
        template("v1", "Node", "node-1"),
        template("batch/v1", "Job", "orders"),
        template("apps/v1", "DaemonSet", "web"),
        template("apps/v1", "StatefulSet", "web"),
        template("discovery.k8s.io/v1", "EndpointSlice", "web"),
    ];
    for obj in objects {
        let Some(info) = api.resource_for(
            obj["apiVersion"].as_str().unwrap_or_default(),
            obj["kind"].as_str().unwrap_or_default(),
        ) else {
            panic!("seed kind unknown: {obj}");
        };
        let created = api.handle(SimTime::ZERO, ApiRequest::create("admin", info.gr, "", obj));
        assert!(created.is_ok(), "seed object refused: {created:?}");
    }
    api.drain_watch_events();
    api
}

/// Everything a client could observe in the store: every object printed, with the global
/// resourceVersion.
pub fn store_snapshot(api: &ApiServer) -> (u64, Vec<(ObjectKey, String)>) {
    let objects = api
        .objects()
        .map(|(k, v)| (k.clone(), serde_json::to_string(v).unwrap_or_default()))
        .collect();
    (api.resource_version(), objects)
}

/// How the store of `after` differs from the store of `before`, where `after` started as a clone
/// of `before`: keys added or whose object is no longer byte-identical, and keys removed.
///
/// Both stores are persistent maps of shared objects and a clone shares every object, so an
/// object a request did not rewrite is the very same allocation in both: a pointer comparison
/// settles it. Only an object at a new address is printed and compared byte for byte (field
/// order included), so a rewrite to identical bytes still counts as unchanged, as it would in
/// [`store_snapshot`]. The cost is one walk over the keys, not one print of every object.
pub fn store_diff(before: &ApiServer, after: &ApiServer) -> StoreDiff {
    let text = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let mut diff = StoreDiff::default();
    let mut old = before.objects().peekable();
    let mut new = after.objects().peekable();
    loop {
        match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some((ko, _)), Some((kn, _))) if ko < kn => {
                diff.removed.push((*ko).clone());
                old.next();
            }
            (Some(_), None) => {
                if let Some((k, _)) = old.next() {
                    diff.removed.push(k.clone());
                }
            }
            (Some((ko, vo)), Some((kn, vn))) if ko == kn => {
                if !std::ptr::eq(*vo, *vn) && text(vo) != text(vn) {
                    diff.changed.push((*kn).clone());
                }
                old.next();
                new.next();
            }
            (_, Some(_)) => {
                if let Some((k, _)) = new.next() {
                    diff.changed.push(k.clone());
                }
            }
        }
    }
    diff
}

/// What [`store_diff`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct StoreDiff {
    /// Keys present only after, or whose object's bytes changed.
    pub changed: Vec<ObjectKey>,
    /// Keys present only before.
    pub removed: Vec<ObjectKey>,
}

impl StoreDiff {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }
}

fn field<'a>(obj: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    obj.and_then(|o| o.get(key))
}

fn rv_of(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Sends up to 16 requests decoded from `data` to a seeded API server and checks after each:
/// a refused request leaves the store byte-identical (objects and resourceVersion), adds
/// exactly one audit entry and no watch event; a read changes nothing; resourceVersion never
/// goes backwards, no object is ahead of it and watch events carry increasing resourceVersions
/// above the previous one; main-resource writes keep the stored status and `/status` writes
/// keep the stored spec, where the kind has the subresource.
pub fn check_api_requests(data: &[u8]) {
    // Built (and checked) once: cloning is O(1), and building it was a fifth of every execution.
    static SEEDED: std::sync::OnceLock<ApiServer> = std::sync::OnceLock::new();
    let mut api = SEEDED
        .get_or_init(|| {
            let api = seeded_api_server();
            for (key, obj) in api.objects() {
                assert_not_ahead(&api, key, obj);
            }
            api
        })
        .clone();
    let mut b = Bytes { data };
    let mut now = SimTime::ZERO;
    for _ in 0..16 {
        if b.is_empty() {
            break;
        }
        now = now.plus_ms(1000);
        let req = decode_request(&mut b, &api);
        check_one_request(&mut api, now, req);
    }
}

fn assert_not_ahead(api: &ApiServer, key: &ObjectKey, obj: &Value) {
    assert!(
        rv_of(obj) <= api.resource_version(),
        "{key:?} has a resourceVersion above the server's {}",
        api.resource_version()
    );
}

fn check_one_request(api: &mut ApiServer, now: SimTime, req: ApiRequest) {
    // The server before the request: an O(1) clone sharing every stored object.
    let before = api.clone();
    let info = api.resource_info(&req.gr);
    let key = ObjectKey::new(req.gr.clone(), &req.namespace, &req.name);
    let verb = req.verb;
    let subresource = req.subresource;
    let sent = req.clone();
    let described = move || format!("{sent:?}");

    let result = api.handle(now, req);
    let (rv_before, rv_after) = (before.resource_version(), api.resource_version());
    assert!(
        rv_after >= rv_before,
        "resourceVersion went backwards: {rv_before} -> {rv_after} on {}",
        described()
    );
    let diff = store_diff(&before, api);
    // Unchanged objects were not ahead of the older, smaller resourceVersion either (checked
    // when they were written, or on the seeded server), so only the changed ones need a look.
    for k in &diff.changed {
        if let Some(obj) = api.get(k) {
            assert_not_ahead(api, k, obj);
        }
    }
    match &result {
        Err(e) => {
            assert!(
                diff.is_empty() && rv_after == rv_before,
                "refused request ({} {}) changed the store ({diff:?}): {}",
                e.code(),
                e.message,
                described()
            );
            assert_eq!(
                api.audit_len(),
                before.audit_len() + 1,
                "one audit entry per refusal"
            );
            assert_eq!(
                api.pending_watch_events(),
                before.pending_watch_events(),
                "no watch event"
            );
            assert!(!e.message.is_empty(), "a refusal has a message");
        }
        Ok(_) if matches!(verb, Verb::Get | Verb::List) => {
            assert!(
                diff.is_empty() && rv_after == rv_before,
                "a read changed the store ({diff:?}): {}",
                described()
            );
        }
        Ok(_) => {
            let target_after = api.get(&key);
            let has_status = info.as_ref().is_some_and(|i| {
                i.status_subresource && i.gr.resource != "customresourcedefinitions"
            });
            if has_status && matches!(verb, Verb::Update | Verb::Patch) && target_after.is_some() {
                let (kept, what) = match subresource {
                    None => ("status", "a main-resource write changed status"),
                    Some(Subresource::Status) => ("spec", "a /status write changed spec"),
                    Some(Subresource::Scale) => ("status", "a /scale write changed status"),
                };
                assert_eq!(
                    field(before.get(&key), kept),
                    field(target_after, kept),
                    "{what}: {}",
                    described()
                );
            }
        }
    }
    assert_no_owner_waits_for_nothing(api, &described);
    let mut last = rv_before;
    for (ev, _, _) in api.drain_shared_watch_events() {
        assert!(
            ev.resource_version > last,
            "watch event resourceVersion {} not above {last}",
            ev.resource_version
        );
        last = ev.resource_version;
    }
    assert!(last <= rv_after, "a watch event is ahead of the server");
}

/// The garbage collector never leaves an object waiting for its dependents
/// (`foregroundDeletion`) when none blocks it, nor holding the `orphan` finalizer (dependents
/// are orphaned at once).
fn assert_no_owner_waits_for_nothing(api: &ApiServer, described: &dyn Fn() -> String) {
    for (k, o) in api.objects() {
        assert!(
            !deleting_with(o, crate::api::ORPHAN),
            "{k:?} is held by orphan: {}",
            described()
        );
        if deleting_with(o, crate::api::FOREGROUND) {
            assert!(
                !blocking_dependents(api, k).is_empty(),
                "{k:?} waits with no blocking dependent: {}",
                described()
            );
        }
    }
}

/// Whether `obj` is being deleted and holds `finalizer`.
pub fn deleting_with(obj: &Value, finalizer: &str) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
        && obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|x| x == finalizer))
}

/// The other objects that name `k` as owner with `blockOwnerDeletion: true`, read from their
/// ownerReferences (a check independent of the garbage collector's own helpers).
pub fn blocking_dependents(api: &ApiServer, k: &ObjectKey) -> Vec<ObjectKey> {
    let Some(uid) = api
        .get(k)
        .and_then(|o| o.pointer("/metadata/uid"))
        .and_then(Value::as_str)
    else {
        return Vec::new();
    };
    api.dependents_of(uid)
        .into_iter()
        .filter(|d| d != k)
        .filter(|d| {
            api.get(d)
                .and_then(|o| o.pointer("/metadata/ownerReferences"))
                .and_then(Value::as_array)
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::GroupResource;

    fn deployment_key() -> ObjectKey {
        ObjectKey::new(GroupResource::new("apps", "deployments"), "default", "web")
    }

    #[test]
    fn store_diff_names_written_created_and_deleted_objects_and_nothing_else() {
        let before = seeded_api_server();
        assert!(store_diff(&before, &before.clone()).is_empty());

        let mut api = before.clone();
        let deployments = GroupResource::new("apps", "deployments");
        let mut body = template("apps/v1", "Deployment", "web");
        body["spec"]["replicas"] = json!(3);
        let updated = api.handle(
            SimTime::ZERO,
            ApiRequest::update("admin", deployments.clone(), "default", "web", body),
        );
        assert!(updated.is_ok(), "{updated:?}");
        let created = api.handle(
            SimTime::ZERO,
            ApiRequest::create(
                "admin",
                deployments.clone(),
                "default",
                template("apps/v1", "Deployment", "new"),
            ),
        );
        assert!(created.is_ok(), "{created:?}");
        let configmaps = GroupResource::new("", "configmaps");
        let deleted = api.handle(
            SimTime::ZERO,
            ApiRequest::delete("admin", configmaps.clone(), "default", "cfg"),
        );
        assert!(deleted.is_ok(), "{deleted:?}");

        let diff = store_diff(&before, &api);
        assert_eq!(
            diff.changed,
            // In key order, as the store lists them.
            [
                ObjectKey::new(deployments, "default", "new"),
                deployment_key()
            ]
        );
        assert_eq!(diff.removed, [ObjectKey::new(configmaps, "default", "cfg")]);
    }

    #[test]
    fn a_refused_write_leaves_every_stored_object_shared_with_the_server_before_it() {
        let before = seeded_api_server();
        let mut api = before.clone();
        let refused = api.handle(
            SimTime::ZERO,
            ApiRequest::update(
                "mallory",
                GroupResource::new("apps", "deployments"),
                "default",
                "web",
                template("apps/v1", "Deployment", "web"),
            ),
        );
        assert!(refused.is_err(), "{refused:?}");
        assert!(before
            .objects()
            .zip(api.objects())
            .all(|((ka, va), (kb, vb))| ka == kb && std::ptr::eq(va, vb)));
        assert!(store_diff(&before, &api).is_empty());
    }
}
