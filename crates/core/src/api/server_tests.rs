//! The API server's request pipeline, tested through `ApiServer::handle` as clients use it.

use super::*;
use crate::json::json;

use crate::api::gc::FOREGROUND;
use crate::api::meta::is_deleting;

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
    assert_eq!(s.get(&dkey("web")), Some(&*d));
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
        Ok(v) => std::sync::Arc::unwrap_or_clone(v),
        Err(e) => panic!("unexpected refusal: {}", e.message),
    }
}

fn err(s: &mut ApiServer, req: ApiRequest) -> ApiError {
    let before: Vec<(ObjectKey, Value)> =
        s.objects().map(|(k, v)| (k.clone(), v.clone())).collect();
    let rv = s.resource_version();
    let pending = s.pending_watch_events();
    let e = s.handle(T0, req).expect_err("request should be refused");
    let after: Vec<(ObjectKey, Value)> = s.objects().map(|(k, v)| (k.clone(), v.clone())).collect();
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

/// The answer as a client holds it (its own copy).
fn owned(r: ApiResult) -> Result<Value, ApiError> {
    r.map(std::sync::Arc::unwrap_or_clone)
}

fn put(s: &mut ApiServer, principal: &str, obj: Value) -> Result<Value, ApiError> {
    owned(s.handle(
        T0,
        ApiRequest::update(principal, deployments(), "default", "web", obj),
    ))
}

fn put_status(s: &mut ApiServer, principal: &str, obj: Value) -> Result<Value, ApiError> {
    owned(s.handle(
        T0,
        ApiRequest::update_status(principal, deployments(), "default", "web", obj),
    ))
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
fn a_patched_document_is_measured_on_its_own() {
    // A small patch that copies a large member makes a document over the limit: refused by
    // size, as kube's decoder refuses the patched bytes, before validation sees it.
    let mut s = ApiServer::new();
    let cms = GroupResource::new("", "configmaps");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "x".repeat(900 * 1024)}});
    ok(
        &mut s,
        ApiRequest::create(ALICE, cms.clone(), "default", cm),
    );
    let copies = json!([
        {"op": "copy", "from": "/data/a", "path": "/data/b"},
        {"op": "copy", "from": "/data/a", "path": "/data/c"},
        {"op": "copy", "from": "/data/a", "path": "/data/d"},
    ]);
    let e = err(
        &mut s,
        ApiRequest::patch(ALICE, cms, "default", "cm", PatchType::Json, copies),
    );
    assert_eq!(
        (e.code(), e.message.as_str()),
        (400, "Request entity too large: limit is 3145728")
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
    let d = owned(s.handle(
        later,
        ApiRequest::delete(ALICE, deployments(), "default", "web"),
    ))
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
    assert_eq!(*again, d, "deleting again changes nothing");
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
    rs["metadata"]["ownerReferences"]
        .as_array_mut()
        .unwrap()
        .push(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "still-here"}),
        );
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
    assert_eq!(rs["metadata"]["ownerReferences"], Value::Null, "omitempty");
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
        .map(|e| (e.event_type, e.key.gr.resource.to_string()))
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
    assert_eq!(rs["metadata"]["ownerReferences"], Value::Null, "omitempty");
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
    assert_eq!(
        left[0]["metadata"]["ownerReferences"],
        Value::Null,
        "omitempty"
    );
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
    // The same request again is answered from the memo of allowed decisions; removing the
    // binding invalidates it.
    let cur = web(&s);
    ok(&mut s, put_status_req("carol", cur));
    ok(
        &mut s,
        ApiRequest::delete(
            "admin",
            GroupResource::new("rbac.authorization.k8s.io", "rolebindings"),
            "default",
            "carol",
        ),
    );
    let cur = web(&s);
    let e = err(&mut s, put_status_req("carol", cur));
    assert_eq!(e.reason, StatusReason::Forbidden, "{}", e.message);
}

/// A Role named after `user` letting them `verbs` Deployments limited to `names` (an empty
/// list limits nothing), and its binding to them.
fn grant_deployments(s: &mut ApiServer, user: &str, verbs: Value, names: Value) {
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": user},
        "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": verbs, "resourceNames": names}]});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": user},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": user},
        "subjects": [{"kind": "User", "name": user}]});
    for (resource, body) in [("roles", role), ("rolebindings", binding)] {
        ok(
            s,
            ApiRequest::create(
                "admin",
                GroupResource::new("rbac.authorization.k8s.io", resource),
                "default",
                body,
            ),
        );
    }
}

#[test]
fn a_rule_limited_to_resource_names_makes_the_name_count() {
    let mut s = server_with_web();
    grant_deployments(&mut s, "dave", json!(["get"]), json!(["web"]));
    ok(
        &mut s,
        ApiRequest::get("dave", deployments(), "default", "web"),
    );
    let e = err(
        &mut s,
        ApiRequest::get("dave", deployments(), "default", "db"),
    );
    assert_eq!(e.reason, StatusReason::Forbidden, "{}", e.message);
}

/// rbac's `ResourceNameMatches` compares the requested name with each listed one, "" too: a
/// rule listing "" lets a request without a name through (a list), and that decision is not
/// kept as one for every name.
#[test]
fn a_rule_listing_the_empty_name_allows_a_request_without_one_and_no_other() {
    let mut s = server_with_web();
    grant_deployments(&mut s, "dave", json!(["get", "list"]), json!([""]));
    let l = ok(
        &mut s,
        ApiRequest::list("dave", deployments(), "default", None),
    );
    assert_eq!(l["items"][0]["metadata"]["name"], "web");
    assert!(s.authz.allowed.is_empty(), "{:?}", s.authz.allowed);
    let e = err(
        &mut s,
        ApiRequest::get("dave", deployments(), "default", "web"),
    );
    assert_eq!(e.reason, StatusReason::Forbidden, "{}", e.message);
}

/// With a rule limited to names in the policy, a decision a rule without names allows is kept
/// once for every name; one only a named rule allows is kept for its name alone.
#[test]
fn the_authorization_memo_keeps_a_name_free_decision_once() {
    let mut s = server_with_web();
    for name in ["db", "api"] {
        ok(
            &mut s,
            ApiRequest::create(ALICE, deployments(), "default", deployment(name, 1)),
        );
    }
    // dave may get the Deployment web; erin may get any.
    grant_deployments(&mut s, "dave", json!(["get"]), json!(["web"]));
    grant_deployments(&mut s, "erin", json!(["get"]), json!([]));
    let get = |user: &str, name: &str| ApiRequest::get(user, deployments(), "default", name);
    ok(&mut s, get("dave", "web"));
    for name in ["web", "db", "api"] {
        ok(&mut s, get("erin", name));
    }
    assert!(s.authz.names_matter);
    let mut kept: Vec<String> = s
        .authz
        .allowed
        .iter()
        .map(|k| k.replace('\0', "|"))
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        [
            "dave|get|apps|deployments||default|web",
            "erin|get|apps|deployments||default|",
        ]
    );
    // The named decision holds for its name alone.
    ok(&mut s, get("dave", "web"));
    let e = err(&mut s, get("dave", "db"));
    assert_eq!(e.reason, StatusReason::Forbidden, "{}", e.message);
    // A refusal that wrote no RBAC object leaves the memo holding.
    let e = err(&mut s, get("erin", "gone"));
    assert_eq!(e.reason, StatusReason::NotFound, "{}", e.message);
    ok(&mut s, get("dave", "web"));
    assert_eq!(s.authz.allowed.len(), 2);
    assert_eq!(s.authz.valid_for, Some(s.state.store.rbac_writes()));
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
    assert_eq!(
        e.message,
        "nodes \"node-2\" is forbidden: node \"node-1\" is not allowed to modify node \"node-2\""
    );
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
