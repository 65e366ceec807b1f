//! The kubelet's restart policies with images that exit: what a pod's status says after its
//! container exits 0 or 1 under `Never`, `OnFailure` and `Always` (kube's
//! `ShouldContainerBeRestarted` and `getPhase`, pkg/kubelet/container/helpers.go and
//! pkg/kubelet/kubelet_pods.go).

use serde_json::{json, Value};

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
