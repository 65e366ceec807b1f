//! The kubelet's restart policies with images that exit: what a pod's status says after its
//! container exits 0 or 1 under `Never`, `OnFailure` and `Always` (kube's
//! `ShouldContainerBeRestarted` and `getPhase`, pkg/kubelet/container/helpers.go and
//! pkg/kubelet/kubelet_pods.go).

use crate::json::{json, Value};

use super::script::create_as;
use super::world::World;
use crate::api::meta::str_at;
use crate::api::ObjectKey;
use crate::conditions;
use crate::controllers::util::pods;
use crate::controllers::ImageBehaviour;
use crate::engine::ClusterConfig;

/// A world where alice created a bare pod `p` running `image` (which exits after 2 s with
/// `behaviour`) under `policy`, run for `ms`.
fn pod_after(policy: &str, behaviour: ImageBehaviour, ms: u64) -> Value {
    let mut config = ClusterConfig::default();
    config.env.images.insert("batch:1".into(), behaviour);
    let mut w = World::new(config);
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"restartPolicy": policy, "containers": [{"name": "main", "image": "batch:1"}]},
    });
    w.apply(create_as("alice", pods(), "default", pod));
    w.advance(ms);
    w.object(&ObjectKey::new(pods(), "default", "p"))
        .cloned()
        .unwrap_or_default()
}

fn condition(pod: &Value, type_: &str) -> (String, String) {
    let c = pod
        .get("status")
        .and_then(|s| conditions::find_condition(s, type_))
        .cloned()
        .unwrap_or_default();
    (str_at(&c, "/status").into(), str_at(&c, "/reason").into())
}

const COMPLETES: ImageBehaviour = ImageBehaviour::Completes { run_ms: 2_000 };
const CRASHES: ImageBehaviour = ImageBehaviour::Crashes { run_ms: 2_000 };

#[test]
fn a_container_that_exits_zero_under_never_leaves_the_pod_succeeded() {
    let pod = pod_after("Never", COMPLETES, 60_000);
    assert_eq!(str_at(&pod, "/status/phase"), "Succeeded");
    let c = pod.pointer("/status/containerStatuses/0").unwrap();
    assert_eq!(c["state"]["terminated"]["exitCode"], 0);
    assert_eq!(c["state"]["terminated"]["reason"], "Completed");
    assert_eq!(c["lastState"], json!({}));
    assert_eq!(c["restartCount"], 0);
    assert_eq!(
        (c["ready"].clone(), c["started"].clone()),
        (json!(false), json!(false))
    );
    // `generatePodReadyConditionForTerminalPhase` and its ContainersReady twin.
    let completed = ("False".to_owned(), "PodCompleted".to_owned());
    assert_eq!(condition(&pod, "Ready"), completed);
    assert_eq!(condition(&pod, "ContainersReady"), completed);
    // The sandbox is gone once the pod is terminal.
    assert_eq!(condition(&pod, "PodReadyToStartContainers").0, "False");
    // The container ran for its 2 s: started and finished 2 s apart.
    let t = &c["state"]["terminated"];
    let started = crate::time::parse_rfc3339_unix_ms(t["startedAt"].as_str().unwrap()).unwrap();
    let finished = crate::time::parse_rfc3339_unix_ms(t["finishedAt"].as_str().unwrap()).unwrap();
    assert_eq!(finished - started, 2_000);
}

#[test]
fn a_container_that_exits_one_under_never_leaves_the_pod_failed() {
    let pod = pod_after("Never", CRASHES, 60_000);
    assert_eq!(str_at(&pod, "/status/phase"), "Failed");
    let c = pod.pointer("/status/containerStatuses/0").unwrap();
    assert_eq!(c["state"]["terminated"]["exitCode"], 1);
    assert_eq!(c["state"]["terminated"]["reason"], "Error");
    assert_eq!(c["restartCount"], 0);
    assert_eq!(
        condition(&pod, "Ready"),
        ("False".to_owned(), "PodFailed".to_owned())
    );
}

#[test]
fn on_failure_restarts_a_failing_container_with_back_off() {
    let pod = pod_after("OnFailure", CRASHES, 60_000);
    assert_eq!(str_at(&pod, "/status/phase"), "Running");
    let c = pod.pointer("/status/containerStatuses/0").unwrap();
    assert!(c["restartCount"].as_u64().unwrap() >= 2, "{c}");
    assert_eq!(c["lastState"]["terminated"]["exitCode"], 1);
    assert_eq!(c["lastState"]["terminated"]["reason"], "Error");
}

#[test]
fn on_failure_lets_a_container_that_exits_zero_complete_the_pod() {
    let pod = pod_after("OnFailure", COMPLETES, 60_000);
    assert_eq!(str_at(&pod, "/status/phase"), "Succeeded");
    let c = pod.pointer("/status/containerStatuses/0").unwrap();
    assert_eq!(c["state"]["terminated"]["reason"], "Completed");
}

#[test]
fn always_restarts_even_a_container_that_exits_zero() {
    // kube backs a completed container off like a failed one: `Back-off restarting failed
    // container`, with lastState `Completed`.
    let pod = pod_after("Always", COMPLETES, 60_000);
    assert_eq!(str_at(&pod, "/status/phase"), "Running");
    let c = pod.pointer("/status/containerStatuses/0").unwrap();
    assert!(c["restartCount"].as_u64().unwrap() >= 2, "{c}");
    assert_eq!(c["lastState"]["terminated"]["exitCode"], 0);
    assert_eq!(c["lastState"]["terminated"]["reason"], "Completed");
}

#[test]
fn a_deleted_terminal_pod_goes_at_once() {
    let mut config = ClusterConfig::default();
    config.env.images.insert("batch:1".into(), COMPLETES);
    let mut w = World::new(config);
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "batch:1"}]},
    });
    w.apply(create_as("alice", pods(), "default", pod));
    w.advance(30_000);
    let key = ObjectKey::new(pods(), "default", "p");
    assert_eq!(
        str_at(w.object(&key).unwrap(), "/status/phase"),
        "Succeeded"
    );
    // CheckGracefulDelete: a terminal pod is deleted with no grace, so it is gone at once.
    let r = w.apply(super::Input::Request {
        request: crate::api::ApiRequest::delete("alice", pods(), "default", "p"),
    });
    assert_eq!(r.events[0].requests[0].code, 200);
    assert!(w.object(&key).is_none());
}

/// A world at t=30 s (the kubelets are older than a probe period, so probes start at once)
/// where alice created pod `r` with a readiness probe.
fn probed_pod(probe: crate::json::Value) -> World {
    let mut config = ClusterConfig::default();
    config
        .env
        .images
        .insert("web:1".into(), ImageBehaviour::Ok { pull_ms: 1_000 });
    let mut w = World::new(config);
    w.advance(30_000);
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "web:1", "readinessProbe": probe}]},
    });
    w.apply(create_as("alice", pods(), "default", pod));
    w
}

fn pod_r(w: &World) -> Value {
    w.object(&ObjectKey::new(pods(), "default", "r"))
        .cloned()
        .unwrap_or_default()
}

fn unix(v: &Value, ptr: &str) -> i64 {
    crate::time::parse_rfc3339_unix_ms(str_at(v, ptr)).unwrap_or_else(|| panic!("{ptr} in {v}"))
}

#[test]
fn a_readiness_probe_makes_the_pod_ready_at_the_first_tick_past_its_initial_delay() {
    let probe =
        json!({"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": 5, "periodSeconds": 2});
    let mut w = probed_pod(probe);
    w.advance(5_000);
    let pod = pod_r(&w);
    assert_eq!(str_at(&pod, "/status/phase"), "Running");
    assert_eq!(
        condition(&pod, "Ready").0,
        "False",
        "not before initialDelaySeconds"
    );
    w.advance(10_000);
    let pod = pod_r(&w);
    assert_eq!(condition(&pod, "Ready").0, "True");
    // Ticks every 2 s from the kubelet taking the pod: ready at the first tick at least 5
    // whole seconds after the container started.
    let started = unix(&pod, "/status/containerStatuses/0/state/running/startedAt");
    let ready = pod
        .get("status")
        .and_then(|s| conditions::find_condition(s, "Ready"))
        .map(|c| unix(c, "/lastTransitionTime"))
        .unwrap_or_default();
    assert!(
        (5_000..8_000).contains(&(ready - started)),
        "ready {} s after start",
        (ready - started) / 1000
    );
}

#[test]
fn a_failing_probe_takes_the_pod_out_of_ready_after_the_failure_threshold() {
    let probe = json!({"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5});
    let mut w = probed_pod(probe);
    w.advance(20_000);
    assert_eq!(condition(&pod_r(&w), "Ready").0, "True");
    w.apply(super::Input::SetImage {
        image: "web:1".into(),
        behaviour: ImageBehaviour::ProbeFails,
    });
    // failureThreshold 3 (the default): the third failed probe, 10-15 s later, turns it.
    w.advance(9_000);
    assert_eq!(
        condition(&pod_r(&w), "Ready").0,
        "True",
        "two failures are not enough"
    );
    w.advance(7_000);
    let pod = pod_r(&w);
    assert_eq!(
        condition(&pod, "Ready"),
        ("False".to_owned(), "ContainersNotReady".to_owned())
    );
    assert_eq!(str_at(&pod, "/status/phase"), "Running");
    let unhealthy: Vec<Value> = w
        .objects()
        .filter(|(k, _)| k.gr.is_events())
        .map(|(_, e)| e.as_ref().clone())
        .filter(|e| str_at(e, "/reason") == "Unhealthy")
        .collect();
    assert_eq!(
        unhealthy.len(),
        1,
        "one Event, counted up by the correlator"
    );
    assert_eq!(
        str_at(&unhealthy[0], "/message"),
        "Readiness probe failed: HTTP probe failed with statuscode: 503"
    );
    assert_eq!(str_at(&unhealthy[0], "/type"), "Warning");
    assert!(unhealthy[0]["count"].as_i64().unwrap_or(0) >= 3);
    // The probe passes again: one success (successThreshold 1) makes it ready.
    w.apply(super::Input::SetImage {
        image: "web:1".into(),
        behaviour: ImageBehaviour::Ok { pull_ms: 1_000 },
    });
    w.advance(6_000);
    assert_eq!(condition(&pod_r(&w), "Ready").0, "True");
}

#[test]
fn failing_readiness_probes_take_a_deployment_below_minimum_availability() {
    let mut config = ClusterConfig::default();
    config
        .env
        .images
        .insert("web:1".into(), ImageBehaviour::Ok { pull_ms: 1_000 });
    let mut w = World::new(config);
    let mut d = super::script::deployment("default", "web", 2, "web:1");
    d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] =
        json!({"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5});
    w.apply(create_as(
        "alice",
        crate::controllers::util::deployments(),
        "default",
        d,
    ));
    w.advance(60_000);
    let key = ObjectKey::new(crate::controllers::util::deployments(), "default", "web");
    let dep = w.object(&key).cloned().unwrap_or_default();
    assert_eq!(dep["status"]["availableReplicas"], 2);
    w.apply(super::Input::SetImage {
        image: "web:1".into(),
        behaviour: ImageBehaviour::ProbeFails,
    });
    w.advance(30_000);
    let dep = w.object(&key).cloned().unwrap_or_default();
    // maxUnavailable 25% of 2 rounds down to 0: both must be available.
    assert_eq!(
        condition(&dep, "Available"),
        ("False".to_owned(), "MinimumReplicasUnavailable".to_owned())
    );
    assert_eq!(dep["status"].get("availableReplicas"), None);
    assert_eq!(dep["status"]["unavailableReplicas"], 2);
}

/// A Pod deleted and made again under its name on another node, before the deletion has
/// reached the first node's kubelet. That kubelet watches `spec.nodeName=<node>`, and kube's
/// cacher sends a watcher an event only when the object or its previous version matches (a new
/// object has none), so it hears nothing of the new Pod: only the new node's kubelet writes it.
/// (Asking the first kubelet's cache instead, which still held the old Pod, sent it the new one,
/// which it then tried to run and was refused by the node restriction.)
#[test]
fn a_pod_made_again_on_another_node_reaches_only_that_nodes_kubelet() {
    let mut config = ClusterConfig::default();
    config.env.images.insert("batch:1".into(), COMPLETES);
    let mut w = World::new(config);
    let pod = |node: Option<&str>| {
        let mut p = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "batch:1"}]},
        });
        if let Some(node) = node {
            p["spec"]["nodeName"] = json!(node);
        }
        p
    };
    w.apply(create_as("alice", pods(), "default", pod(None)));
    w.advance(30_000);
    let key = ObjectKey::new(pods(), "default", "p");
    let first = str_at(w.object(&key).unwrap(), "/spec/nodeName").to_owned();
    let other = ["node-1", "node-2", "node-3"]
        .into_iter()
        .find(|n| *n != first)
        .unwrap();
    // Succeeded, so deleted at once; made again in the same millisecond.
    let r = w.apply(super::Input::Request {
        request: crate::api::ApiRequest::delete("alice", pods(), "default", "p"),
    });
    assert_eq!(r.events[0].requests[0].code, 200);
    let from = w.api().audit_len();
    w.apply(create_as("alice", pods(), "default", pod(Some(other))));
    w.advance(30_000);
    let kubelets: std::collections::BTreeSet<(String, u16)> = w
        .api()
        .audit_since(from)
        .filter(|e| e.name == "p" && e.principal.starts_with("system:node:"))
        .map(|e| (e.principal.to_string(), e.code))
        .collect();
    let writer = crate::api::principals::kubelet(other);
    assert!(
        kubelets
            .iter()
            .all(|(who, code)| *who == writer && *code < 400),
        "{kubelets:?}"
    );
    assert!(!kubelets.is_empty());
    assert_eq!(
        str_at(w.object(&key).unwrap(), "/status/phase"),
        "Succeeded"
    );
}
