//! Unit tests of the DaemonSet controller, each worked by hand from kube 1.32's
//! daemon_controller.go, update.go and daemon/util/daemonset_util.go.

use super::*;

fn t(s: u64) -> String {
    SimTime::from_ms(s * 1000).rfc3339()
}

fn node(name: &str, labels: Value, spec: Value) -> Arc<Value> {
    Arc::new(json!({"metadata": {"name": name, "labels": labels}, "spec": spec}))
}

fn ds(spec_extra: Value) -> Value {
    let mut d = json!({
        "metadata": {"name": "agent", "namespace": "default", "uid": "ds-uid", "generation": 1,
            "annotations": {"deprecated.daemonset.template.generation": "1"}},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "agent:1"}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        }
    });
    if let (Some(s), Some(extra)) = (d["spec"].as_object_mut(), spec_extra.as_object()) {
        for (k, v) in extra {
            s.insert(k.clone(), v.clone());
        }
    }
    d
}

/// A daemon pod on `node` carrying `hash`, created at `created` s, Ready since `ready` s.
fn pod(name: &str, node: &str, hash: &str, created: u64, ready: Option<u64>) -> Arc<Value> {
    Arc::new(json!({
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": t(created),
            "labels": {"app": "agent", "controller-revision-hash": hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": true}]},
        "spec": {"nodeName": node},
        "status": {"phase": "Running", "conditions": [{"type": "Ready",
            "status": if ready.is_some() { "True" } else { "False" },
            "lastTransitionTime": t(ready.unwrap_or(created))}]},
    }))
}

fn on_nodes(pods: &[Arc<Value>]) -> BTreeMap<String, Vec<Arc<Value>>> {
    let mut m: BTreeMap<String, Vec<Arc<Value>>> = BTreeMap::new();
    for p in pods {
        m.entry(target_node_name(p).unwrap())
            .or_default()
            .push(p.clone());
    }
    m
}

/// `NodeShouldRunDaemonPod`, case by case: the cordon is not looked at (the daemon pod
/// tolerates it), a NoSchedule taint keeps new pods off but lets running ones stay, a NoExecute
/// taint removes them, a selector miss or another template nodeName rules the node out, and
/// the default not-ready toleration admits a not-ready node.
#[test]
fn which_nodes_should_run_a_daemon_pod() {
    let d = ds(json!({}));
    assert_eq!(
        node_should_run(&node("a", json!({}), json!({})), &d),
        (true, true)
    );
    assert_eq!(
        node_should_run(&node("a", json!({}), json!({"unschedulable": true})), &d),
        (true, true)
    );
    let taint =
        |effect: &str| json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": effect}]});
    assert_eq!(
        node_should_run(&node("a", json!({}), taint("NoSchedule")), &d),
        (false, true)
    );
    assert_eq!(
        node_should_run(&node("a", json!({}), taint("NoExecute")), &d),
        (false, false)
    );
    assert_eq!(
        node_should_run(&node("a", json!({}), taint("PreferNoSchedule")), &d),
        (true, true)
    );
    let not_ready =
        json!({"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]});
    assert_eq!(
        node_should_run(&node("a", json!({}), not_ready), &d),
        (true, true)
    );
    let mut selective = d.clone();
    selective["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    assert_eq!(
        node_should_run(&node("a", json!({"disk": "hdd"}), json!({})), &selective),
        (false, false)
    );
    assert_eq!(
        node_should_run(&node("a", json!({"disk": "ssd"}), json!({})), &selective),
        (true, true)
    );
    let mut pinned = d.clone();
    pinned["spec"]["template"]["spec"]["nodeName"] = json!("b");
    assert_eq!(
        node_should_run(&node("a", json!({}), json!({})), &pinned),
        (false, false)
    );
    let mut tolerant = d;
    tolerant["spec"]["template"]["spec"]["tolerations"] =
        json!([{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]);
    assert_eq!(
        node_should_run(&node("a", json!({}), taint("NoSchedule")), &tolerant),
        (true, true)
    );
}

/// `CreatePodTemplate` + `ReplaceDaemonSetPodNodeNameNodeAffinity` + `GetPodFromTemplate`.
#[test]
fn a_daemon_pod_is_pinned_to_its_node_and_labelled_with_the_revision() {
    let mut d = ds(json!({}));
    d["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "Exists"}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [{"key": "y", "operator": "Exists"}]}}]}});
    d["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]);
    let p = daemon_pod(&d, "node-2", "abc123");
    assert_eq!(p["metadata"]["generateName"], json!("agent-"));
    assert!(p["metadata"].get("name").is_none());
    assert_eq!(
        p["metadata"]["labels"],
        json!({"app": "agent", "controller-revision-hash": "abc123", "pod-template-generation": "1"})
    );
    let keys: Vec<&crate::json::Key> = p["metadata"]["labels"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["app", "controller-revision-hash", "pod-template-generation"]
    );
    assert_eq!(
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        json!({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]})
    );
    assert!(p["spec"]["affinity"]["nodeAffinity"]
        ["preferredDuringSchedulingIgnoredDuringExecution"]
        .is_array());
    let tolerations = p["spec"]["tolerations"].as_array().unwrap();
    // The matching unschedulable toleration is replaced in place (its tolerationSeconds goes),
    // the other five are appended in kube's order.
    assert_eq!(tolerations.len(), 6);
    assert_eq!(
        tolerations[0],
        json!({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"})
    );
    let keys: Vec<&str> = tolerations[1..].iter().map(|t| str_at(t, "/key")).collect();
    assert_eq!(
        keys,
        [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure",
            "node.kubernetes.io/pid-pressure"
        ]
    );
    assert_eq!(target_node_name(&p).as_deref(), Some("node-2"));
    let mut host = d;
    host["spec"]["template"]["spec"]["hostNetwork"] = json!(true);
    let p = daemon_pod(&host, "n", "h");
    assert_eq!(p["spec"]["tolerations"].as_array().unwrap().len(), 7);
}

#[test]
fn a_pod_is_updated_by_hash_or_by_template_generation() {
    let p = pod("p", "n", "new", 0, None);
    assert!(is_pod_updated(&p, "new", None));
    assert!(!is_pod_updated(&p, "other", None));
    let mut g = p.as_ref().clone();
    g["metadata"]["labels"]["pod-template-generation"] = json!("3");
    assert!(is_pod_updated(&g, "other", Some(3)));
    assert!(!is_pod_updated(&g, "", Some(2)));
}

/// `updateDaemonSetStatus` worked by hand: node-1 runs an available current pod, node-2 an old
/// ready one, node-3 none; node-4 does not match the selector but has a pod (misscheduled).
/// desired 3, current 2, ready 2, available 2, updated 1, misscheduled 1, unavailable 1.
#[test]
fn status_counts_follow_the_oldest_pod_per_node() {
    let mut d = ds(json!({}));
    d["spec"]["template"]["spec"]["nodeSelector"] = json!({"role": "worker"});
    let worker = json!({"role": "worker"});
    let nodes = vec![
        node("node-1", worker.clone(), json!({})),
        node("node-2", worker.clone(), json!({})),
        node("node-3", worker, json!({})),
        node("node-4", json!({}), json!({})),
    ];
    let pods = vec![
        pod("a", "node-1", "new", 0, Some(1)),
        pod("b", "node-2", "old", 0, Some(1)),
        // A younger pod on node-2 does not count: the oldest decides.
        pod("c", "node-2", "new", 5, None),
        pod("d", "node-4", "new", 0, Some(1)),
    ];
    let c = status_counts(
        &d,
        &nodes,
        &on_nodes(&pods),
        "new",
        SimTime::from_ms(10_000),
    );
    assert_eq!(
        c,
        StatusCounts {
            desired: 3,
            current: 2,
            misscheduled: 1,
            ready: 2,
            updated: 1,
            available: 2,
            unavailable: 1,
        }
    );
    // minReadySeconds 5: ready since 1 s is available only after 6 s (strictly).
    d["spec"]["minReadySeconds"] = json!(5);
    let at = |s: u64| {
        status_counts(
            &d,
            &nodes,
            &on_nodes(&pods),
            "new",
            SimTime::from_ms(s * 1000),
        )
    };
    assert_eq!(at(6).available, 0);
    assert_eq!(at(7).available, 2);
}

#[test]
fn status_is_printed_in_go_field_order_without_zero_optional_counts() {
    let c = StatusCounts {
        desired: 3,
        current: 3,
        ready: 0,
        ..StatusCounts::default()
    };
    let s = daemon_set_status(&json!({"status": {"collisionCount": 1}}), &c, 2);
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        r#"{"currentNumberScheduled":3,"numberMisscheduled":0,"desiredNumberScheduled":3,"numberReady":0,"observedGeneration":2,"collisionCount":1}"#
    );
}

fn three_nodes() -> Vec<Arc<Value>> {
    (1..=3)
        .map(|i| node(&format!("node-{i}"), json!({}), json!({})))
        .collect()
}

fn plan(d: &Value, pods: &[Arc<Value>]) -> RollingPlan {
    rolling_update_plan(
        d,
        &three_nodes(),
        on_nodes(pods),
        "new",
        SimTime::from_ms(100_000),
        |_| {},
    )
}

/// `rollingUpdate` without surge: with maxUnavailable 1 and every old pod available, exactly
/// one old pod goes; an unavailable new pod uses up the budget; an unavailable old pod is
/// replaced whatever the budget.
#[test]
fn rolling_update_deletes_within_max_unavailable() {
    let d = ds(json!({}));
    let old_all = vec![
        pod("p1", "node-1", "old", 0, Some(1)),
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert_eq!(plan(&d, &old_all).delete, ["p1"]);
    let new_unready = vec![
        pod("n1", "node-1", "new", 50, None),
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert!(plan(&d, &new_unready).delete.is_empty());
    let old_broken = vec![
        pod("n1", "node-1", "new", 50, None),
        pod("p2", "node-2", "old", 0, None),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert_eq!(plan(&d, &old_broken).delete, ["p2"]);
    // A node that should run a pod but has none counts as unavailable.
    let missing = vec![
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert!(plan(&d, &missing).delete.is_empty());
    // 50% of 3 rounds up to 2.
    let mut half = ds(json!({}));
    half["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!("50%");
    assert_eq!(plan(&half, &old_all).delete, ["p1", "p2"]);
    // The visit order is kube's map walk: the shuffle decides which pod goes first.
    let reversed = rolling_update_plan(
        &d,
        &three_nodes(),
        on_nodes(&old_all),
        "new",
        SimTime::from_ms(100_000),
        |o| o.reverse(),
    );
    assert_eq!(reversed.delete, ["p3"]);
}

/// `rollingUpdate` with surge: maxSurge 1 creates one new pod beside an available old one;
/// once the new pod is available the old one goes; an unavailable old pod gets its new pod
/// at once, beyond the surge budget.
#[test]
fn rolling_update_with_surge_creates_before_it_deletes() {
    let mut d = ds(json!({}));
    d["spec"]["updateStrategy"]["rollingUpdate"] = json!({"maxUnavailable": 0, "maxSurge": 1});
    let old_all = vec![
        pod("p1", "node-1", "old", 0, Some(1)),
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert_eq!(
        plan(&d, &old_all),
        RollingPlan {
            delete: vec![],
            create: vec!["node-1".into()]
        }
    );
    let surged = vec![
        pod("p1", "node-1", "old", 0, Some(1)),
        pod("n1", "node-1", "new", 50, Some(60)),
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, None),
    ];
    assert_eq!(
        plan(&d, &surged),
        RollingPlan {
            delete: vec!["p1".into()],
            create: vec!["node-3".into(), "node-2".into()]
        }
    );
    let waiting = vec![
        pod("p1", "node-1", "old", 0, Some(1)),
        pod("n1", "node-1", "new", 50, None),
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert_eq!(plan(&d, &waiting), RollingPlan::default());
}

/// `updatedDesiredNodeCounts`: a configuration with neither surge nor unavailability (which
/// validation refuses) falls back to maxUnavailable 1.
#[test]
fn zero_surge_and_zero_unavailable_fall_back_to_one() {
    let mut d = ds(json!({}));
    d["spec"]["updateStrategy"]["rollingUpdate"] = json!({"maxUnavailable": 0, "maxSurge": 0});
    let old_all = vec![
        pod("p1", "node-1", "old", 0, Some(1)),
        pod("p2", "node-2", "old", 0, Some(1)),
        pod("p3", "node-3", "old", 0, Some(1)),
    ];
    assert_eq!(plan(&d, &old_all).delete, ["p1"]);
    // node-3 without a pod already uses the one unavailable slot: nothing more goes.
    assert!(plan(&d, &old_all[..2]).delete.is_empty());
    assert_eq!(scaled_value(Some(&json!("50%")), 3, true), Some(2));
    assert_eq!(scaled_value(Some(&json!("50%")), 3, false), Some(1));
    assert_eq!(scaled_value(Some(&json!(2)), 3, true), Some(2));
    assert_eq!(scaled_value(Some(&json!("x")), 3, true), None);
}

/// `getPatch`: Go marshals the map with sorted keys, `$patch` first.
#[test]
fn the_revision_data_replaces_the_template_with_sorted_keys() {
    let d = ds(json!({}));
    let p = history_patch(&d);
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"image":"agent:1","name":"a"}]}}}}"#
    );
}

#[test]
fn node_updates_that_only_refresh_heartbeats_are_ignored() {
    let a = json!({"metadata": {"name": "n", "resourceVersion": "1"}, "status": {"conditions": [
        {"type": "Ready", "status": "True", "lastHeartbeatTime": t(0)}]}});
    let mut b = a.clone();
    b["metadata"]["resourceVersion"] = json!("2");
    b["status"]["conditions"][0]["lastHeartbeatTime"] = json!(t(10));
    assert!(should_ignore_node_update(&a, &b));
    let mut c = b.clone();
    c["status"]["conditions"][0]["status"] = json!("False");
    assert!(!should_ignore_node_update(&a, &c));
    let mut d = b;
    d["metadata"]["labels"] = json!({"x": "y"});
    assert!(!should_ignore_node_update(&a, &d));
}

#[test]
fn failed_pod_back_off_doubles_from_one_second_to_fifteen_minutes() {
    let mut c = DaemonSetController::new();
    let now = SimTime::from_ms(1_000_000);
    assert_eq!(c.in_backoff("k", now), None);
    c.backoff_next("k", now);
    assert_eq!(c.in_backoff("k", now), Some(1000));
    assert_eq!(c.in_backoff("k", SimTime::from_ms(1_001_000)), None);
    c.backoff_next("k", SimTime::from_ms(1_001_000));
    assert_eq!(c.in_backoff("k", SimTime::from_ms(1_001_000)), Some(2000));
    for _ in 0..20 {
        c.backoff_next("k", SimTime::from_ms(1_001_000));
    }
    assert_eq!(
        c.in_backoff("k", SimTime::from_ms(1_001_000)),
        Some(15 * 60 * 1000)
    );
}
