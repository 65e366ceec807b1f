//! Unit tests of the EndpointSlice controller, each worked by hand from kube 1.32's
//! staging/src/k8s.io/endpointslice (`reconciler.go`, `utils.go`, `util/controller_utils.go`)
//! and pkg/controller/endpointslice (`endpointslice_tracker.go`).

use super::*;
use crate::api::WatchEvent;

fn svc(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default", "uid": "svc-uid",
            "creationTimestamp": "2025-01-01T00:00:00Z"},
        "spec": spec})
}

fn web() -> Value {
    svc(json!({"selector": {"app": "web"}, "clusterIP": "10.96.0.2",
        "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}))
}

/// A running pod `name` on `node` with IP `10.244.1.<n>`, Ready as given.
fn pod(name: &str, n: u8, ready: bool) -> Arc<Value> {
    Arc::new(json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("{name}-uid"),
            "labels": {"app": "web"}, "resourceVersion": "1"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c",
            "ports": [{"name": "http", "containerPort": 8080}]}]},
        "status": {"phase": "Running", "podIP": format!("10.244.1.{n}"),
            "podIPs": [{"ip": format!("10.244.1.{n}")}],
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
                "lastTransitionTime": "2025-01-01T00:00:05Z"}]},
    }))
}

fn node_cache() -> Informer {
    Informer::of(&[(
        nodes(),
        json!({"metadata": {"name": "node-1", "labels": {"topology.kubernetes.io/zone": "a"}}}),
    )])
}

fn names_of(eps: &Value) -> Vec<String> {
    eps.as_array()
        .into_iter()
        .flatten()
        .map(|e| str_at(e, "/targetRef/name").to_owned())
        .collect()
}

/// `podToEndpoint` for a ready, a not-ready and a terminating pod: serving is readiness,
/// terminating the deletion timestamp, ready serving and not terminating; the node's zone is
/// copied; the hostname only when the pod's subdomain names the Service.
#[test]
fn pod_to_endpoint_sets_kubes_three_conditions() {
    let node =
        json!({"metadata": {"name": "node-1", "labels": {"topology.kubernetes.io/zone": "a"}}});
    let ep = pod_to_endpoint(&pod("a", 2, true), Some(&node), &web(), "IPv4");
    assert_eq!(
        ep,
        json!({"addresses": ["10.244.1.2"],
            "conditions": {"ready": true, "serving": true, "terminating": false},
            "targetRef": {"kind": "Pod", "namespace": "default", "name": "a", "uid": "a-uid"},
            "nodeName": "node-1", "zone": "a"})
    );
    let ep = pod_to_endpoint(&pod("b", 3, false), None, &web(), "IPv4");
    assert_eq!(
        ep["conditions"],
        json!({"ready": false, "serving": false, "terminating": false})
    );
    let mut t = pod("c", 4, true).as_ref().clone();
    t["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:01:00Z");
    t["spec"]["hostname"] = json!("c");
    t["spec"]["subdomain"] = json!("web");
    let ep = pod_to_endpoint(&t, None, &web(), "IPv4");
    assert_eq!(
        ep["conditions"],
        json!({"ready": false, "serving": true, "terminating": true})
    );
    assert_eq!(ep["hostname"], "c");
    // publishNotReadyAddresses: ready whatever the pod.
    let mut publish = web();
    publish["spec"]["publishNotReadyAddresses"] = json!(true);
    let ep = pod_to_endpoint(&t, None, &publish, "IPv4");
    assert_eq!(ep["conditions"]["ready"], true);
    // An IPv6 slice takes none of an IPv4 pod's addresses.
    assert_eq!(
        pod_to_endpoint(&pod("a", 2, true), None, &web(), "IPv6")["addresses"],
        json!([])
    );
}

/// `FindPort`: a named targetPort is the container port of that name and protocol (then a
/// restartable init container's); a number is itself; a name the pod lacks drops the port.
#[test]
fn target_ports_resolve_by_name_and_protocol() {
    let p = json!({"spec": {
        "containers": [{"ports": [{"name": "http", "containerPort": 8080},
            {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}],
        "initContainers": [{"restartPolicy": "Always", "ports": [{"name": "proxy", "containerPort": 15001}]},
            {"ports": [{"name": "setup", "containerPort": 9}]}]}});
    let port = |target: Value, protocol: &str| {
        find_port(&p, &json!({"targetPort": target, "protocol": protocol}))
    };
    assert_eq!(port(json!("http"), "TCP"), Some(8080));
    assert_eq!(port(json!("dns"), "UDP"), Some(53));
    assert_eq!(port(json!("dns"), "TCP"), None);
    assert_eq!(port(json!("proxy"), "TCP"), Some(15001));
    assert_eq!(port(json!("setup"), "TCP"), None);
    assert_eq!(port(json!(9090), "TCP"), Some(9090));
    let svc = svc(
        json!({"ports": [{"name": "a", "port": 80, "targetPort": "http", "protocol": "TCP"},
        {"name": "b", "port": 81, "targetPort": "missing", "protocol": "TCP"}]}),
    );
    assert_eq!(
        endpoint_ports(&svc, &p),
        vec![json!({"name": "a", "protocol": "TCP", "port": 8080})]
    );
}

/// `podEndpointsChanged`: readiness, IPs and any update of a terminating pod change the
/// endpoint; labels, hostname and subdomain change the membership; a resourceVersion alone
/// changes nothing.
#[test]
fn which_pod_updates_matter() {
    let a = pod("a", 2, true);
    let mut b = a.as_ref().clone();
    b["metadata"]["resourceVersion"] = json!("2");
    assert_eq!(pod_endpoints_changed(&a, &b), (false, false));
    let not_ready = pod("a", 2, false);
    assert_eq!(pod_endpoints_changed(&a, &not_ready), (true, false));
    let other_ip = pod("a", 3, true);
    assert_eq!(pod_endpoints_changed(&a, &other_ip), (true, false));
    let mut relabelled = a.as_ref().clone();
    relabelled["metadata"]["labels"]["tier"] = json!("fe");
    assert_eq!(pod_endpoints_changed(&a, &relabelled), (false, true));
    let mut terminating = a.as_ref().clone();
    terminating["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:01:00Z");
    assert_eq!(
        pod_endpoints_changed(&terminating, &terminating),
        (true, false)
    );
    // ShouldPodBeInEndpoints: no IP or a terminal phase keeps a pod out.
    let mut no_ip = a.as_ref().clone();
    no_ip["status"] = json!({"phase": "Pending"});
    assert!(!should_pod_be_in_endpoints(&no_ip, true));
    let mut done = a.as_ref().clone();
    done["status"]["phase"] = json!("Succeeded");
    assert!(!should_pod_be_in_endpoints(&done, true));
    assert!(should_pod_be_in_endpoints(&terminating, true));
    assert!(!should_pod_be_in_endpoints(&terminating, false));
}

/// `getAddressTypesForService`: ipFamilies first, then the cluster IP's family; a headless
/// Service without families stands for the API server's IPv4 default.
#[test]
fn address_types_follow_the_services_families() {
    assert_eq!(address_types(&web()), ["IPv4"]);
    let dual = svc(json!({"ipFamilies": ["IPv6", "IPv4"], "clusterIP": "fd00::1"}));
    assert_eq!(address_types(&dual), ["IPv4", "IPv6"]);
    assert_eq!(
        address_types(&svc(json!({"clusterIP": "fd00::10"}))),
        ["IPv6"]
    );
    assert_eq!(address_types(&svc(json!({"clusterIP": "None"}))), ["IPv4"]);
}

/// `reconcileByPortMapping` with 2 endpoints per slice: 5 pods fill two new slices and a third
/// with one; then, with pod `b` gone, only its slice is updated, and the one left over when a
/// sixth and seventh pod arrive goes where it fits exactly (`getSliceToFill`) before a new
/// slice is made.
#[test]
fn endpoints_are_packed_at_most_max_per_slice() {
    let cache = node_cache();
    let svc = web();
    let five: Vec<Arc<Value>> = ["a", "b", "c", "d", "e"]
        .iter()
        .enumerate()
        .map(|(i, n)| pod(n, i as u8 + 2, true))
        .collect();
    let (plan, errs) = plan_address_type(&cache, &svc, &five, &[], "IPv4", 2);
    assert!(errs.is_empty());
    assert!(plan.update.is_empty() && plan.delete.is_empty());
    let made: Vec<Vec<String>> = plan
        .create
        .iter()
        .map(|s| names_of(&s["endpoints"]))
        .collect();
    assert_eq!(made, [vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
    for s in &plan.create {
        assert_eq!(
            s["ports"],
            json!([{"name": "http", "protocol": "TCP", "port": 8080}])
        );
        assert_eq!(s["metadata"]["generateName"], "web-");
    }
    // The slices as the server stored them.
    let stored: Vec<Arc<Value>> = plan
        .create
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut s = s.clone();
            s["metadata"]["name"] = json!(format!("web-{i}"));
            s["metadata"]["uid"] = json!(format!("slice-{i}"));
            Arc::new(s)
        })
        .collect();
    let without_b: Vec<Arc<Value>> = five
        .iter()
        .filter(|p| meta::name(p) != "b")
        .cloned()
        .collect();
    let (plan, _) = plan_address_type(&cache, &svc, &without_b, &stored, "IPv4", 2);
    assert!(plan.create.is_empty() && plan.delete.is_empty());
    assert_eq!(plan.update.len(), 1);
    assert_eq!(meta::name(&plan.update[0]), "web-0");
    assert_eq!(names_of(&plan.update[0]["endpoints"]), ["a"]);
    // web-2 holds one endpoint: one new pod fills it exactly.
    let mut six = five.clone();
    six.push(pod("f", 7, true));
    let (plan, _) = plan_address_type(&cache, &svc, &six, &stored, "IPv4", 2);
    assert!(plan.create.is_empty());
    assert_eq!(plan.update.len(), 1);
    assert_eq!(meta::name(&plan.update[0]), "web-2");
    assert_eq!(names_of(&plan.update[0]["endpoints"]), ["e", "f"]);
}

/// A readiness change updates the endpoint in place; nothing changed means no write; a
/// Service that selects nothing (or pods without IPs) gets the placeholder, kept when the
/// only slice already is one.
#[test]
fn changed_endpoints_are_updated_and_an_empty_service_keeps_its_placeholder() {
    let cache = node_cache();
    let svc = web();
    let (plan, _) = plan_address_type(&cache, &svc, &[pod("a", 2, true)], &[], "IPv4", 100);
    let mut slice = plan.create[0].clone();
    slice["metadata"]["name"] = json!("web-x");
    slice["metadata"]["uid"] = json!("slice-x");
    let stored = vec![Arc::new(slice)];
    let (plan, _) = plan_address_type(&cache, &svc, &[pod("a", 2, true)], &stored, "IPv4", 100);
    assert_eq!(plan, Plan::default(), "no change, no write");
    let (plan, _) = plan_address_type(&cache, &svc, &[pod("a", 2, false)], &stored, "IPv4", 100);
    assert_eq!(plan.update.len(), 1);
    assert_eq!(
        plan.update[0]["endpoints"][0]["conditions"],
        json!({"ready": false, "serving": false, "terminating": false})
    );
    // No pods: the slice goes and a placeholder is to be created (finalize turns the pair
    // into an update of web-x).
    let (plan, _) = plan_address_type(&cache, &svc, &[], &stored, "IPv4", 100);
    assert_eq!(plan.delete.len(), 1);
    assert_eq!(plan.create.len(), 1);
    assert_eq!(plan.create[0]["endpoints"], Value::Null);
    assert_eq!(plan.create[0]["ports"], Value::Null);
    let mut placeholder = plan.create[0].clone();
    placeholder["metadata"]["name"] = json!("web-p");
    let (plan, _) = plan_address_type(&cache, &svc, &[], &[Arc::new(placeholder)], "IPv4", 100);
    assert_eq!(plan, Plan::default(), "the placeholder stays");
}

/// A pod on a node the cache does not have is skipped with kube's error (and so a retry),
/// unless the Service publishes not-ready addresses.
#[test]
fn a_pod_on_a_missing_node_is_skipped_with_an_error() {
    let empty = Informer::new();
    let (plan, errs) = plan_address_type(&empty, &web(), &[pod("a", 2, true)], &[], "IPv4", 100);
    assert_eq!(
        errs,
        ["skipping Pod a for Service default/web: Node node-1 Not Found"]
    );
    assert_eq!(plan.create.len(), 1, "the placeholder");
    assert_eq!(plan.create[0]["endpoints"], Value::Null);
    let mut publish = web();
    publish["spec"]["publishNotReadyAddresses"] = json!(true);
    let (plan, errs) = plan_address_type(&empty, &publish, &[pod("a", 2, true)], &[], "IPv4", 100);
    assert!(errs.is_empty());
    assert_eq!(names_of(&plan.create[0]["endpoints"]), ["a"]);
}

/// Slices not owned by the Service (a Service of the same name recreated) are deleted, and the
/// labels mirror the Service's: reserved keys are the controller's, a headless Service gets the
/// headless label.
#[test]
fn foreign_slices_go_and_labels_mirror_the_service() {
    let cache = node_cache();
    let mut foreign = new_endpoint_slice(&web(), &[], "IPv4");
    foreign["metadata"]["name"] = json!("web-old");
    foreign["metadata"]["ownerReferences"][0]["uid"] = json!("other-uid");
    let (plan, _) = plan_address_type(
        &cache,
        &web(),
        &[pod("a", 2, true)],
        &[Arc::new(foreign)],
        "IPv4",
        100,
    );
    assert_eq!(plan.delete.len(), 1);
    assert_eq!(plan.create.len(), 1);
    let mut headless = web();
    headless["spec"]["clusterIP"] = json!("None");
    headless["metadata"]["labels"] = json!({"team": "a", "kubernetes.io/service-name": "spoofed"});
    let s = new_endpoint_slice(&headless, &[], "IPv4");
    assert_eq!(
        s["metadata"]["labels"],
        json!({"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
            "kubernetes.io/service-name": "web", "service.kubernetes.io/headless": "", "team": "a"})
    );
}

/// The EndpointSliceTracker: a slice the controller wrote is not synced again when its own
/// write comes back, is stale while the cache holds an older generation, and its expected
/// deletion is not a reason to sync.
#[test]
fn the_tracker_skips_own_writes_and_spots_a_stale_cache() {
    let mut c = EndpointSliceController::new();
    let key = ObjectKey::new(services(), "default", "web");
    let slice = |generation: i64| {
        Arc::new(
            json!({"metadata": {"name": "web-x", "namespace": "default", "uid": "u",
            "generation": generation,
            "labels": {LABEL_SERVICE_NAME: "web", LABEL_MANAGED_BY: CONTROLLER_NAME}}}),
        )
    };
    assert!(c.should_sync(&slice(1)), "untracked");
    c.track(&slice(2), 2);
    assert!(!c.should_sync(&slice(2)));
    assert!(c.should_sync(&slice(3)), "someone else wrote it");
    assert!(c.stale_slices(&key, &[slice(1)]));
    assert!(!c.stale_slices(&key, &[slice(2)]));
    assert!(c.stale_slices(&key, &[]), "a tracked slice is missing");
    c.track(&slice(2), DELETION_EXPECTED);
    assert!(c.stale_slices(&key, &[slice(2)]), "still listed");
    assert!(!c.stale_slices(&key, &[]));
    assert!(c.handle_deletion(&slice(2)), "expected");
    c.track(&slice(2), 2);
    assert!(!c.handle_deletion(&slice(2)), "not expected: resync");
}

/// `ComputeEndpointLastChangeTriggerTime`: the Service's creation first, then the earliest
/// Ready transition the last sync had not seen, and nothing when nothing changed.
#[test]
fn trigger_times_are_the_earliest_unseen_change() {
    let mut c = EndpointSliceController::new();
    let key = ObjectKey::new(services(), "default", "web");
    let at = |name: &str, t: &str| {
        let mut p = pod(name, 2, true).as_ref().clone();
        p["status"]["conditions"][0]["lastTransitionTime"] = json!(t);
        Arc::new(p)
    };
    let first = c.trigger_time(&key, &web(), &[at("a", "2025-01-01T00:00:05Z")]);
    assert_eq!(first.map(|t| t.1), Some("2025-01-01T00:00:00Z".into()));
    let pods = [
        at("a", "2025-01-01T00:00:09Z"),
        at("b", "2025-01-01T00:00:07Z"),
    ];
    let next = c.trigger_time(&key, &web(), &pods);
    assert_eq!(next.map(|t| t.1), Some("2025-01-01T00:00:07Z".into()));
    assert_eq!(c.trigger_time(&key, &web(), &pods), None);
}

/// `utilerrors.NewAggregate`: one error as is, several in brackets.
#[test]
fn errors_aggregate_as_kubes() {
    assert_eq!(aggregate(&["a".into()]), "a");
    assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
}

/// `GetServicesToUpdateOnPodChange` through the handler: a label change that moves a pod from
/// one Service to another queues both (the disjunctive union); a readiness change queues the
/// pod's Service at once (batch period 0); the controller's own slice write queues nothing.
#[test]
fn pod_and_slice_events_queue_the_right_services() {
    let mut other = web();
    other["metadata"]["name"] = json!("api");
    other["spec"]["selector"] = json!({"app": "api"});
    let cache = Informer::of(&[(services(), web()), (services(), other)]);
    let mut c = EndpointSliceController::new();
    let ev = |t: WatchEventType, gr: GroupResource, name: &str| WatchEvent {
        event_type: t,
        key: std::sync::Arc::new(ObjectKey::new(gr, "default", name)),
        object: Value::Null,
        resource_version: 2,
        time: crate::time::SimTime::ZERO,
    };
    let a = pod("a", 2, true);
    let mut moved = a.as_ref().clone();
    moved["metadata"]["labels"]["app"] = json!("api");
    moved["metadata"]["resourceVersion"] = json!("2");
    let keys = c.keys_after(
        &ev(WatchEventType::Modified, pods(), "a"),
        Some(&a),
        &Arc::new(moved),
        &cache,
    );
    let names: Vec<&str> = keys.iter().map(|(k, _)| k.name.as_str()).collect();
    assert_eq!(names, ["api", "web"]);
    let mut unready = pod("a", 2, false).as_ref().clone();
    unready["metadata"]["resourceVersion"] = json!("2");
    let keys = c.keys_after(
        &ev(WatchEventType::Modified, pods(), "a"),
        Some(&a),
        &Arc::new(unready),
        &cache,
    );
    assert_eq!(keys, [(ObjectKey::new(services(), "default", "web"), 0)]);
    let slice = Arc::new(json!({"metadata": {"name": "web-x", "namespace": "default",
        "uid": "u", "generation": 1,
        "labels": {LABEL_SERVICE_NAME: "web", LABEL_MANAGED_BY: CONTROLLER_NAME}}}));
    let added = ev(WatchEventType::Added, endpointslices(), "web-x");
    assert_eq!(
        c.keys_after(&added, None, &slice, &cache),
        [(ObjectKey::new(services(), "default", "web"), 1000)],
        "untracked: synced after endpointSliceChangeMinSyncDelay"
    );
    c.track(&slice, 1);
    assert!(c.keys_after(&added, None, &slice, &cache).is_empty());
}
