//! Data-driven scenario tests: each scenario's one-line-per-event trace is a snapshot
//! (`UPDATE_EXPECT=1 cargo test -p converge-core` rewrites them), plus assertions on the final
//! objects. A determinism test runs every scenario twice and compares the traces.

use crate::json::{json, Value};
use expect_test::{expect_file, ExpectFile};

use super::health::Health;
use super::report::StopReason;
use super::script::{create_as, deployment, patch_as, Script, ScriptResult};
use super::world::{Fault, Input, NodeSpec};
use crate::api::meta::{self, str_at};
use crate::api::{ApiRequest, GroupResource, ObjectKey, PatchType, Verb};
use crate::conditions;
use crate::controllers::declarative::{DeclarativeSpec, Step};
use crate::controllers::util::{self, configmaps, databases, deployments, hpas};
use crate::controllers::ImageBehaviour;

fn dep_key(name: &str) -> ObjectKey {
    ObjectKey::new(deployments(), "default", name)
}

fn get(out: &ScriptResult, key: &ObjectKey) -> Value {
    out.world.object(key).cloned().unwrap_or(Value::Null)
}

fn condition<'a>(obj: &'a Value, type_: &str) -> (&'a str, &'a str) {
    obj.get("status")
        .and_then(|s| conditions::find_condition(s, type_))
        .map(|c| (str_at(c, "/status"), str_at(c, "/reason")))
        .unwrap_or(("", ""))
}

fn check(scenario: &Script, snapshot: ExpectFile) -> ScriptResult {
    let out = scenario.run();
    snapshot.assert_eq(&out.world.trace_text());
    out
}

fn scale_up() -> Script {
    Script::new("scale up")
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 1, "nginx:1.25"),
            ),
        )
        .at(
            10_000,
            patch_as(
                "alice",
                deployments(),
                "default",
                "web",
                json!({"spec": {"replicas": 3}}),
            ),
        )
}

fn scale_down() -> Script {
    Script::new("scale down")
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 4, "nginx:1.25"),
            ),
        )
        .at(
            10_000,
            patch_as(
                "alice",
                deployments(),
                "default",
                "web",
                json!({"spec": {"replicas": 1}}),
            ),
        )
}

fn rolling_update() -> Script {
    Script::new("rolling update")
        .at(0, create_as("alice", deployments(), "default", deployment("default", "web", 4, "nginx:1.25")))
        .at(10_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
}

fn bad_image() -> Script {
    let mut d = deployment("default", "web", 2, "nginx:1.25");
    d["spec"]["progressDeadlineSeconds"] = json!(30);
    Script::new("bad image")
        .config(|c| {
            c.env.images.insert("nginx:does-not-exist".into(), ImageBehaviour::PullFails);
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .at(10_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:does-not-exist", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
}

fn unschedulable() -> Script {
    let mut d = deployment("default", "big", 3, "nginx:1.25");
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("600m");
    Script::new("unschedulable pods")
        .config(|c| {
            c.nodes = vec![
                NodeSpec::new("node-1", "1", "2Gi"),
                NodeSpec::new("node-2", "1", "2Gi"),
            ];
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .until(60_000)
}

fn crash_and_recovery() -> Script {
    Script::new("controller crash and recovery")
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 2, "nginx:1.25"),
            ),
        )
        .at(
            8_000,
            Input::Fault {
                fault: Fault::CrashController {
                    controller: "replicaset-controller".into(),
                },
            },
        )
        .at(
            9_000,
            patch_as(
                "alice",
                deployments(),
                "default",
                "web",
                json!({"spec": {"replicas": 4}}),
            ),
        )
        .at(
            20_000,
            Input::Fault {
                fault: Fault::RestartController {
                    controller: "replicaset-controller".into(),
                },
            },
        )
}

fn autoscaler() -> Script {
    let hpa = json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 6,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
        },
    });
    Script::new("autoscaler reacting to load")
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 2, "nginx:1.25"),
            ),
        )
        .at(0, create_as("alice", hpas(), "default", hpa))
        .at(
            5_000,
            Input::SetLoad {
                target: "default/web".into(),
                millicores: 250,
            },
        )
        .at_least(90_000)
        .until(120_000)
}

fn database() -> Script {
    Script::new("custom resource convergence").at(
        0,
        create_as(
            "alice",
            databases(),
            "default",
            json!({
                "apiVersion": "example.com/v1", "kind": "Database",
                "metadata": {"name": "orders", "namespace": "default"},
                "spec": {"replicas": 2, "version": "16"},
            }),
        ),
    )
}

fn stale_cache() -> Script {
    Script::new("stale cache")
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 2, "nginx:1.25"),
            ),
        )
        .at(
            8_000,
            Input::Fault {
                fault: Fault::WatchLatency {
                    controller: Some("deployment-controller".into()),
                    ms: 3_000,
                },
            },
        )
        .at(
            9_000,
            patch_as(
                "alice",
                deployments(),
                "default",
                "web",
                json!({"spec": {"replicas": 3}}),
            ),
        )
        .at(
            9_500,
            patch_as(
                "alice",
                deployments(),
                "default",
                "web",
                json!({"spec": {"replicas": 5}}),
            ),
        )
}

fn feedback_loop() -> Script {
    Script::new("naive controller feedback loop")
        .config(|c| c.controllers.naive = Some(databases()))
        .at(
            0,
            create_as(
                "alice",
                databases(),
                "default",
                json!({
                    "apiVersion": "example.com/v1", "kind": "Database",
                    "metadata": {"name": "loop", "namespace": "default"},
                    "spec": {"replicas": 1},
                }),
            ),
        )
}

fn declarative() -> Script {
    let spec = DeclarativeSpec {
        name: "cache-controller".into(),
        principal: "system:serviceaccount:default:cache-controller".into(),
        parent: GroupResource::new("example.com", "caches"),
        parent_kind: "Cache".into(),
        steps: vec![
            Step::CreateChild {
                resource: configmaps(),
                object: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "{{name}}-settings"}, "data": {"maxmemory": "64mb"}}),
            },
            Step::CreateChild {
                resource: deployments(),
                object: deployment("", "{{name}}-redis", 1, "redis:7"),
            },
            Step::WaitReady {
                resource: deployments(),
                name: "{{name}}-redis".into(),
            },
            Step::SetCondition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: "ChildrenReady".into(),
                message: "redis for {{name}} is ready".into(),
            },
        ],
    };
    Script::new("declarative custom controller")
        .config(|c| {
            c.controllers.declarative.push(spec);
            c.custom_resources.push(("example.com".into(), "caches".into(), "v1".into(), "Cache".into(), true));
        })
        .at(0, create_as("alice", GroupResource::new("example.com", "caches"), "default", json!({
            "apiVersion": "example.com/v1", "kind": "Cache", "metadata": {"name": "session"}, "spec": {},
        })))
}

fn all() -> Vec<Script> {
    vec![
        scale_up(),
        scale_down(),
        rolling_update(),
        bad_image(),
        unschedulable(),
        crash_and_recovery(),
        autoscaler(),
        database(),
        stale_cache(),
        feedback_loop(),
        declarative(),
        recreate(),
        paused_rollout(),
        crash_loop(),
        api_failures(),
        proportional(),
    ]
}

fn assert_deployment_done(out: &ScriptResult, name: &str, replicas: i64) {
    let d = get(out, &dep_key(name));
    assert_eq!(
        d.pointer("/status/observedGeneration"),
        d.pointer("/metadata/generation")
    );
    for f in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(
            meta::i64_at(&d, &format!("/status/{f}")),
            Some(replicas),
            "{f} of {d}"
        );
    }
    assert_eq!(
        condition(&d, "Available"),
        ("True", "MinimumReplicasAvailable")
    );
    assert_eq!(
        condition(&d, "Progressing"),
        ("True", "NewReplicaSetAvailable")
    );
}

#[test]
fn scaling_up_converges_to_three_ready_replicas() {
    let out = check(&scale_up(), expect_file!["snapshots/scale_up.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 3);
    assert_eq!(
        get(&out, &dep_key("web")).pointer("/metadata/generation"),
        Some(&json!(2))
    );
}

#[test]
fn scaling_down_removes_pods_and_reports_one_replica() {
    let out = check(&scale_down(), expect_file!["snapshots/scale_down.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 1);
    let pods = count_of(&out.world, "pods");
    assert_eq!(pods, 1);
}

#[test]
fn a_rolling_update_replaces_every_pod_and_bumps_the_revision() {
    let out = check(
        &rolling_update(),
        expect_file!["snapshots/rolling_update.trace"],
    );
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 4);
    let d = get(&out, &dep_key("web"));
    assert_eq!(
        str_at(
            &d,
            "/metadata/annotations/deployment.kubernetes.io~1revision"
        ),
        "2"
    );
    let images: Vec<String> = out
        .world
        .objects()
        .filter(|(k, _)| k.gr.resource == "pods")
        .map(|(_, p)| str_at(p, "/spec/containers/0/image").to_owned())
        .collect();
    assert_eq!(images, vec!["nginx:1.26"; 4]);
}

#[test]
fn a_bad_image_ends_in_progress_deadline_exceeded() {
    let out = check(&bad_image(), expect_file!["snapshots/bad_image.trace"]);
    let d = get(&out, &dep_key("web"));
    assert_eq!(
        condition(&d, "Progressing"),
        ("False", "ProgressDeadlineExceeded")
    );
    assert_eq!(out.world.health(&dep_key("web")), Some(Health::Failed));
    // 1.32's message carries the last pull's error [kubernetes #127918, image_manager.go], and
    // that error is containerd's, with the reference normalised.
    let not_found = "rpc error: code = NotFound desc = failed to pull and unpack image \
        \"docker.io/library/nginx:does-not-exist\": failed to resolve reference \
        \"docker.io/library/nginx:does-not-exist\": docker.io/library/nginx:does-not-exist: not found";
    assert!(out.world.objects().any(|(_, p)| {
        str_at(p, "/status/containerStatuses/0/state/waiting/reason") == "ImagePullBackOff"
            && str_at(p, "/status/containerStatuses/0/state/waiting/message")
                == format!(
                    "Back-off pulling image \"nginx:does-not-exist\": ErrImagePull: {not_found}"
                )
    }));
}

/// Most beginners' pods request nothing. kube scores them as 100m CPU / 200Mi each
/// (`NonMissingContainerRequests`), so LeastAllocated spreads them by free share: on a 2-CPU,
/// 4 GiB node beside an 8-CPU, 16 GiB one, the big node takes pods until its score falls to the
/// small node's 95 (about four pods to one). Scoring raw requests, every node scored the same
/// and all 20 went to node-1.
#[test]
fn request_less_pods_spread_by_the_schedulers_default_requests() {
    let mut d = deployment("default", "web", 20, "nginx:1.25");
    if let Some(c) = d
        .pointer_mut("/spec/template/spec/containers/0")
        .and_then(Value::as_object_mut)
    {
        c.remove("resources");
    }
    let s = Script::new("request-less pods")
        .config(|c| {
            c.nodes = vec![
                NodeSpec::new("node-1", "2", "4Gi"),
                NodeSpec::new("node-2", "8", "16Gi"),
            ];
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .until(120_000);
    let out = s.run();
    let on = |node: &str| {
        out.world
            .objects()
            .filter(|(k, p)| k.gr.resource == "pods" && str_at(p, "/spec/nodeName") == node)
            .count()
    };
    let (small, big) = (on("node-1"), on("node-2"));
    assert_eq!(small + big, 20);
    assert!((3..=5).contains(&small), "node-1 has {small}, node-2 {big}");
}

/// Graceful deletion, worked from the pod registry and the kubelet [pod/strategy.go
/// CheckGracefulDelete, rest/delete.go BeforeDelete, kubelet SyncTerminatingPod, status_manager.go
/// canBeDeleted, replica_set.go updatePod]: scaling 3 -> 1 at 10 s marks two pods for deletion 30 s
/// ahead; they are Terminating while their kubelets stop them, no longer counted by the
/// ReplicaSet; each kubelet then reports the terminal phase (Succeeded: the containers exited 0
/// on SIGTERM) and deletes its pod with grace 0.
#[test]
fn scaled_down_pods_terminate_gracefully_before_their_kubelet_deletes_them() {
    let d = deployment("default", "web", 3, "nginx:1.25");
    let s = Script::new("graceful scale-down")
        .at(0, create_as("alice", deployments(), "default", d))
        .at(
            10_000,
            patch_as(
                "alice",
                deployments(),
                "default",
                "web",
                json!({"spec": {"replicas": 1}}),
            ),
        );
    let mut w = scheduled(&s);
    w.advance(10_200);
    let pods: Vec<(ObjectKey, Value)> = w
        .objects()
        .filter(|(k, _)| k.gr.resource == "pods")
        .map(|(k, p)| (k.clone(), p.as_ref().clone()))
        .collect();
    assert_eq!(pods.len(), 3, "the two scaled-down pods are still there");
    let terminating: Vec<&(ObjectKey, Value)> = pods
        .iter()
        .filter(|(_, p)| p.pointer("/metadata/deletionTimestamp").is_some())
        .collect();
    assert_eq!(terminating.len(), 2);
    for (k, p) in &terminating {
        assert_eq!(
            p["metadata"]["deletionTimestamp"],
            json!("2025-01-01T00:00:40Z")
        );
        assert_eq!(p["metadata"]["deletionGracePeriodSeconds"], json!(30));
        assert_eq!(
            str_at(p, "/status/phase"),
            "Running",
            "still running while it stops"
        );
        assert_eq!(w.health(k), Some(Health::Terminating));
    }
    let rs = first_of(&w, "replicasets");
    assert_eq!(
        rs["status"]["replicas"],
        json!(1),
        "terminating pods are not counted"
    );
    w.advance(2_000);
    assert_eq!(count_of(&w, "pods"), 1);
    for (k, _) in &terminating {
        let by_kubelet: Vec<(Verb, bool, u16)> = w
            .api()
            .audit()
            .filter(|a| a.name == k.name && a.principal.starts_with("system:node:"))
            .map(|a| (a.verb, a.subresource.is_some(), a.code))
            .collect();
        let last_two = &by_kubelet[by_kubelet.len() - 2..];
        assert_eq!(
            last_two,
            [(Verb::Patch, true, 200), (Verb::Delete, false, 200)],
            "{}",
            k.name
        );
    }
}

#[test]
fn pods_that_fit_nowhere_are_marked_unschedulable_with_kubes_message() {
    let out = check(
        &unschedulable(),
        expect_file!["snapshots/unschedulable.trace"],
    );
    let pending: Vec<&Value> = out
        .world
        .objects()
        .filter(|(k, p)| k.gr.resource == "pods" && str_at(p, "/spec/nodeName").is_empty())
        .map(|(_, p)| p.as_ref())
        .collect();
    assert_eq!(pending.len(), 1);
    let c = pending[0]
        .get("status")
        .and_then(|s| conditions::find_condition(s, "PodScheduled"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(str_at(&c, "/reason"), "Unschedulable");
    assert_eq!(
        str_at(&c, "/message"),
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    );
}

#[test]
fn a_crashed_replicaset_controller_catches_up_after_restart() {
    let out = check(
        &crash_and_recovery(),
        expect_file!["snapshots/crash_and_recovery.trace"],
    );
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 4);
}

#[test]
fn the_autoscaler_raises_replicas_when_load_rises() {
    let out = check(&autoscaler(), expect_file!["snapshots/autoscaler.trace"]);
    let d = get(&out, &dep_key("web"));
    // 250m over pods requesting 100m at a 50 % target wants 5 pods: 4 at 30 s (the scale-up
    // limit, 2 × 2), then 5 at 60 s, once the 2 new pods have been ready for a metric window.
    assert_eq!(d.pointer("/spec/replicas"), Some(&json!(5)));
    let hpa = get(&out, &ObjectKey::new(hpas(), "default", "web"));
    assert_eq!(hpa.pointer("/status/desiredReplicas"), Some(&json!(5)));
    assert_eq!(
        condition(&hpa, "ScalingActive"),
        ("True", "ValidMetricFound")
    );
    assert_deployment_done(&out, "web", 5);
}

#[test]
fn a_database_converges_to_ready_with_its_children() {
    let out = check(&database(), expect_file!["snapshots/database.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    let db = get(&out, &ObjectKey::new(databases(), "default", "orders"));
    assert_eq!(condition(&db, "Ready"), ("True", "Available"));
    assert_eq!(condition(&db, "Reconciling"), ("", ""));
    assert_eq!(db.pointer("/status/observedGeneration"), Some(&json!(1)));
    assert_deployment_done(&out, "orders-db", 2);
}

#[test]
fn a_stale_deployment_cache_still_converges_on_the_latest_spec() {
    let out = check(&stale_cache(), expect_file!["snapshots/stale_cache.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 5);
    assert!(out
        .world
        .trace()
        .iter()
        .any(|l| l.contains("(stale, ignored)") || l.contains(" 409")));
}

#[test]
fn a_naive_controller_writing_spec_from_status_is_reported_as_a_feedback_loop() {
    let out = check(
        &feedback_loop(),
        expect_file!["snapshots/feedback_loop.trace"],
    );
    assert_eq!(out.stop, StopReason::FeedbackLoop);
    assert!(out
        .world
        .trace()
        .iter()
        .any(|l| l.contains("engine feedback-loop databases default/loop")));
}

#[test]
fn a_declarative_controller_creates_children_waits_and_sets_ready() {
    let out = check(&declarative(), expect_file!["snapshots/declarative.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    let cache = get(
        &out,
        &ObjectKey::new(
            GroupResource::new("example.com", "caches"),
            "default",
            "session",
        ),
    );
    assert_eq!(condition(&cache, "Ready"), ("True", "ChildrenReady"));
    assert_deployment_done(&out, "session-redis", 1);
}

#[test]
fn every_scenario_gives_the_same_trace_twice() {
    for s in all() {
        let a = s.run().world.trace_text();
        let b = s.run().world.trace_text();
        assert!(a == b, "scenario {} is not deterministic", s.name);
    }
}

#[test]
fn a_clone_taken_mid_run_replays_the_same_future() {
    let s = rolling_update();
    let mut w = scheduled(&s);
    w.advance(12_000);
    let mut fork = w.clone();
    w.run_until_converged(100_000, 600_000);
    fork.run_until_converged(100_000, 600_000);
    assert_eq!(w.trace_text(), fork.trace_text());
}

fn recreate() -> Script {
    let mut d = deployment("default", "web", 3, "nginx:1.25");
    d["spec"]["strategy"] = json!({"type": "Recreate"});
    Script::new("recreate")
        .at(0, create_as("alice", deployments(), "default", d))
        .at(10_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
}

fn paused_rollout() -> Script {
    Script::new("pause and resume")
        .at(0, create_as("alice", deployments(), "default", deployment("default", "web", 2, "nginx:1.25")))
        .at(10_000, patch_as("alice", deployments(), "default", "web", json!({"spec": {"paused": true}})))
        .at(11_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
        .at(20_000, patch_as("alice", deployments(), "default", "web", json!({"spec": {"paused": false}})))
}

fn crash_loop() -> Script {
    let mut d = deployment("default", "web", 1, "example/crasher:1");
    d["spec"]["progressDeadlineSeconds"] = json!(60);
    Script::new("crash loop")
        .config(|c| {
            c.env.images.insert(
                "example/crasher:1".into(),
                ImageBehaviour::Crashes { run_ms: 2_000 },
            );
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .at_least(90_000)
        .until(120_000)
}

fn api_failures() -> Script {
    Script::new("pod creation failures")
        .at(
            0,
            Input::Fault {
                fault: Fault::ApiFailures {
                    principal: Some(
                        "system:serviceaccount:kube-system:replicaset-controller".into(),
                    ),
                    count: 3,
                    code: 500,
                },
            },
        )
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 2, "nginx:1.25"),
            ),
        )
}

fn proportional() -> Script {
    let mut d = deployment("default", "web", 10, "nginx:1.25");
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.25");
    Script::new("proportional scaling mid-rollout")
        .config(|c| {
            c.env.images.insert("nginx:slow".into(), ImageBehaviour::Ok { pull_ms: 20_000 });
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .at(10_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:slow", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
        .at(11_000, patch_as("alice", deployments(), "default", "web", json!({"spec": {"replicas": 20}})))
}

#[test]
fn recreate_scales_the_old_replica_set_to_zero_before_the_new_one_starts() {
    let out = check(&recreate(), expect_file!["snapshots/recreate.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 3);
    let trace = out.world.trace_text();
    let old_down = trace
        .find("reconcile default/web -> update replicasets")
        .unwrap_or(usize::MAX);
    assert!(old_down < usize::MAX);
}

#[test]
fn a_paused_deployment_waits_and_reports_deployment_paused() {
    let s = paused_rollout();
    let mut w = scheduled(&s);
    w.advance(15_000);
    let d = w.object(&dep_key("web")).cloned().unwrap_or_default();
    assert_eq!(
        condition(&d, "Progressing"),
        ("Unknown", "DeploymentPaused")
    );
    let replica_sets = count_of(&w, "replicasets");
    assert_eq!(replica_sets, 1, "no new ReplicaSet while paused");
    let out = check(&s, expect_file!["snapshots/paused_rollout.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 2);
}

#[test]
fn a_crashing_container_goes_into_crash_loop_back_off() {
    let out = check(&crash_loop(), expect_file!["snapshots/crash_loop.trace"]);
    let pod = first_of(&out.world, "pods");
    assert_eq!(
        str_at(&pod, "/status/containerStatuses/0/state/waiting/reason"),
        "CrashLoopBackOff"
    );
    assert!(meta::i64_at(&pod, "/status/containerStatuses/0/restartCount").unwrap_or(0) >= 1);
    // The pod was Ready once, so the rollout completed; now the pod is Failed (CrashLoop) and
    // the Deployment waits on readiness (kstatus InProgress "Ready: 0/1").
    let pod_key = out
        .world
        .objects()
        .find(|(k, _)| k.gr.resource == "pods")
        .map(|(k, _)| k.clone());
    assert_eq!(
        pod_key.and_then(|k| out.world.health(&k)),
        Some(Health::Failed)
    );
    let d = get(&out, &dep_key("web"));
    assert_eq!(
        condition(&d, "Available"),
        ("False", "MinimumReplicasUnavailable")
    );
}

/// kube's `doBackOff` with client-go's `Backoff`, worked by hand for a container that runs 2 s
/// and exits (it first runs at 1.207 s): the first exit restarts at once (no back-off entry yet;
/// `Next` makes one of 10 s), the second waits 10 s at restartCount 1, then 20 s at 2 and 40 s
/// at 3, each counted from the exit. `lastState.terminated` keeps the exited instance's times.
#[test]
fn the_first_crash_restarts_at_once_and_back_off_starts_at_the_second() {
    let s = crash_loop();
    let mut w = scheduled(&s);
    let container = first_container;
    w.advance(3_000);
    assert_eq!(
        container(&w)["lastState"],
        json!({}),
        "no exit yet: an empty ContainerState"
    );
    w.advance(1_000); // t = 4 s: exited at 3.207 s, running again at once
    let c = container(&w);
    assert_eq!(c["restartCount"], json!(1));
    assert_eq!(
        c["state"]["running"]["startedAt"],
        json!("2025-01-01T00:00:03Z")
    );
    assert_eq!(
        c["lastState"],
        json!({"terminated": {"exitCode": 1, "reason": "Error",
            "startedAt": "2025-01-01T00:00:01Z", "finishedAt": "2025-01-01T00:00:03Z"}})
    );
    let waiting = |c: &Value| {
        (
            str_at(c, "/state/waiting/reason").to_owned(),
            str_at(c, "/state/waiting/message")
                .split(" restarting")
                .next()
                .unwrap_or_default()
                .to_owned(),
            c["restartCount"].clone(),
        )
    };
    for (at_ms, back_off, restarts) in [
        (6_000, "back-off 10s", 1),  // second exit at 5.207 s
        (18_000, "back-off 20s", 2), // restarted at 15.207 s, exited at 17.207 s
        (40_000, "back-off 40s", 3), // restarted at 37.207 s, exited at 39.207 s
    ] {
        w.advance(at_ms - w.now().as_ms());
        assert_eq!(
            waiting(&container(&w)),
            (
                "CrashLoopBackOff".to_owned(),
                back_off.to_owned(),
                json!(restarts)
            ),
            "at {at_ms} ms"
        );
    }
    w.advance(16_000); // t = 56 s: not restarted before 39.207 + 40 s
    assert_eq!(
        str_at(&container(&w), "/state/waiting/reason"),
        "CrashLoopBackOff"
    );
    w.advance(24_000); // t = 80 s: restarted at 79.207 s
    let c = container(&w);
    assert_eq!(c["restartCount"], json!(4));
    assert_eq!(
        c["state"]["running"]["startedAt"],
        json!("2025-01-01T00:01:19Z")
    );
}

/// client-go's `hasExpired` (kubelet's `HasExpiredFunc`): a back-off entry whose last move is
/// more than 600 s before an exit is forgotten, so a container that runs 11 minutes between
/// exits restarts at once every time and never shows CrashLoopBackOff.
#[test]
fn a_back_off_entry_expires_after_ten_minutes_of_running() {
    let mut d = deployment("default", "web", 1, "example/slow-crasher:1");
    d["spec"]["progressDeadlineSeconds"] = json!(6000);
    let s = Script::new("slow crash")
        .config(|c| {
            c.env.images.insert(
                "example/slow-crasher:1".into(),
                ImageBehaviour::Crashes { run_ms: 660_000 },
            );
        })
        .at(0, create_as("alice", deployments(), "default", d));
    let mut w = scheduled(&s);
    let container = first_container;
    // Exits at about 661 s and 1,321 s: both restart at once.
    w.advance(1_330_000);
    let c = container(&w);
    assert_eq!(c["restartCount"], json!(2));
    assert!(c["state"].get("running").is_some(), "{c}");
}

/// A template that names a missing ServiceAccount: the admission plugin refuses every pod, and
/// the ReplicaSet reports it as kube's `calculateStatus` does (ReplicaFailure True,
/// FailedCreate, the refusal's message) without any injected fault.
#[test]
fn a_missing_service_account_shows_as_replica_failure() {
    let mut d = deployment("default", "web", 2, "nginx:1.25");
    d["spec"]["template"]["spec"]["serviceAccountName"] = json!("robot");
    let s = Script::new("missing service account")
        .at(0, create_as("alice", deployments(), "default", d))
        .until(10_000);
    let out = s.run();
    let rs = first_of(&out.world, "replicasets");
    let c = rs
        .get("status")
        .and_then(|st| conditions::find_condition(st, "ReplicaFailure"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (str_at(&c, "/status"), str_at(&c, "/reason")),
        ("True", "FailedCreate")
    );
    let message = str_at(&c, "/message");
    assert!(message.starts_with("pods \"web-"), "{message}");
    assert!(
        message.ends_with("\" is forbidden: error looking up service account default/robot: serviceaccount \"robot\" not found"),
        "{message}"
    );
    assert_eq!(count_of(&out.world, "pods"), 0);
}

/// `SortedContainerStatuses`: a pod's container statuses come sorted by name, whatever the
/// spec's order; the Ready message lists unready containers in spec order.
#[test]
fn container_statuses_are_sorted_by_name() {
    let mut d = deployment("default", "web", 1, "nginx:1.25");
    let second = json!({"name": "app", "image": "nginx:1.25"});
    d["spec"]["template"]["spec"]["containers"][0]["name"] = json!("web");
    if let Some(cs) = d
        .pointer_mut("/spec/template/spec/containers")
        .and_then(Value::as_array_mut)
    {
        cs.push(second);
    }
    let s = Script::new("two containers")
        .at(0, create_as("alice", deployments(), "default", d))
        .until(5_000);
    let out = s.run();
    let pod = first_of(&out.world, "pods");
    let names: Vec<&str> = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| str_at(c, "/name"))
        .collect();
    assert_eq!(names, ["app", "web"]);
}

/// Recreate, worked from recreate.go and syncRolloutStatus: while the old pods terminate there is
/// no new ReplicaSet yet (oldPodsRunning holds it back). Progressing keeps its last value: with
/// no new ReplicaSet, replicas and updatedReplicas are both 0, so `isCompleteDeployment` holds
/// with the NewReplicaSetAvailable reason still set and the condition is not rewritten. Once the
/// last old pod is gone the new ReplicaSet comes.
#[test]
fn recreate_waits_for_terminating_pods_before_the_new_replica_set() {
    let s = recreate();
    let mut w = scheduled(&s);
    w.advance(10_300);
    let rs_count = |w: &super::world::World| count_of(w, "replicasets");
    let terminating = w
        .objects()
        .filter(|(k, p)| {
            k.gr.resource == "pods" && p.pointer("/metadata/deletionTimestamp").is_some()
        })
        .count();
    assert_eq!(terminating, 3, "the old pods are terminating");
    assert_eq!(rs_count(&w), 1, "no new ReplicaSet while old pods run");
    let d = first_of(&w, "deployments");
    let c = d
        .get("status")
        .and_then(|st| conditions::find_condition(st, "Progressing"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(str_at(&c, "/reason"), "NewReplicaSetAvailable");
    assert!(str_at(&c, "/message").starts_with("ReplicaSet \"web-"));
    w.advance(1_000);
    assert_eq!(
        rs_count(&w),
        2,
        "the new ReplicaSet once the old pods are gone"
    );
}

/// `cleanupDeployment` and `SetNewReplicaSetAnnotations`, worked from sync.go and
/// deployment_util.go: old ReplicaSets beyond `revisionHistoryLimit` go by
/// revision, not by age. Images v1 -> v2 -> v3, back to v1 (its ReplicaSet, the oldest, becomes
/// revision 4), then v4, with a limit of 2: the old ones are then v2 (rev 2), v3 (rev 3) and v1
/// (rev 4), one too many, so v2's ReplicaSet goes and v1's stays, though it was created first.
#[test]
fn old_replica_sets_are_cleaned_up_by_revision() {
    let mut d = deployment("default", "web", 1, "nginx:1.21");
    d["spec"]["revisionHistoryLimit"] = json!(2);
    let image = |tag: &str| {
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": format!("nginx:{tag}"),
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})
    };
    let s = Script::new("cleanup by revision")
        .at(0, create_as("alice", deployments(), "default", d))
        .at(
            20_000,
            patch_as("alice", deployments(), "default", "web", image("1.22")),
        )
        .at(
            40_000,
            patch_as("alice", deployments(), "default", "web", image("1.23")),
        )
        .at(
            60_000,
            patch_as("alice", deployments(), "default", "web", image("1.21")),
        )
        .at(
            80_000,
            patch_as("alice", deployments(), "default", "web", image("1.24")),
        )
        .until(110_000);
    let out = s.run();
    let mut kept: Vec<(String, String, String)> = out
        .world
        .objects()
        .filter(|(k, _)| k.gr.resource == "replicasets")
        .map(|(_, rs)| {
            let ann = |k: &str| {
                str_at(
                    rs,
                    &format!("/metadata/annotations/deployment.kubernetes.io~1{k}"),
                )
                .to_owned()
            };
            (
                str_at(rs, "/spec/template/spec/containers/0/image").to_owned(),
                ann("revision"),
                ann("revision-history"),
            )
        })
        .collect();
    kept.sort();
    // SetNewReplicaSetAnnotations: rolled back to, v1's ReplicaSet keeps its old revision 1 in
    // revision-history.
    let row = |i: &str, r: &str, h: &str| (i.to_owned(), r.to_owned(), h.to_owned());
    assert_eq!(
        kept,
        [
            row("nginx:1.21", "4", "1"),
            row("nginx:1.23", "3", ""),
            row("nginx:1.24", "5", "")
        ]
    );
}

#[test]
fn failed_pod_creations_set_replica_failure_until_they_succeed() {
    let out = check(
        &api_failures(),
        expect_file!["snapshots/api_failures.trace"],
    );
    assert_eq!(out.stop, StopReason::Converged);
    assert!(out
        .world
        .trace()
        .iter()
        .any(|l| l.contains("injected fault")));
    assert!(out.world.trace().iter().any(|l| l.contains("retry after")));
    assert_deployment_done(&out, "web", 2);
}

#[test]
fn scaling_mid_rollout_spreads_new_replicas_proportionally() {
    let s = proportional();
    let mut w = scheduled(&s);
    w.advance(11_500);
    let mut sizes: Vec<i64> = w
        .objects()
        .filter(|(k, _)| k.gr.resource == "replicasets")
        .map(|(_, rs)| meta::i64_at(rs, "/spec/replicas").unwrap_or(0))
        .collect();
    sizes.sort();
    // 10 replicas, surge 3: old 8 + new 5 = 13 (max-replicas 13); to 20 replicas + surge 5 = 25.
    assert_eq!(sizes.iter().sum::<i64>(), 25, "{sizes:?}");
    let out = check(&s, expect_file!["snapshots/proportional.trace"]);
    assert_eq!(out.stop, StopReason::Converged);
    assert_deployment_done(&out, "web", 20);
}

#[test]
fn a_paused_controller_leaves_its_queue_waiting_until_resumed() {
    let s = Script::new("paused controller")
        .at(
            0,
            Input::Fault {
                fault: Fault::PauseController {
                    controller: "deployment-controller".into(),
                },
            },
        )
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 1, "nginx:1.25"),
            ),
        );
    let mut w = scheduled(&s);
    w.advance(5_000);
    assert_eq!(w.queue_len("deployment-controller"), Some((1, 0)));
    assert!(!w.is_converged());
    w.apply(Input::Fault {
        fault: Fault::ResumeController {
            controller: "deployment-controller".into(),
        },
    });
    let r = w.run_until_converged(100_000, 600_000);
    assert_eq!(r.stop, Some(StopReason::Converged));
}

#[test]
fn history_keeps_a_bounded_number_of_snapshots_and_forks_from_any() {
    let s = scale_up();
    let mut w = scheduled(&s);
    let mut h = super::history::History::new(5);
    for _ in 0..8 {
        w.step();
        h.push(&w);
    }
    assert_eq!(h.len(), 5);
    let steps: Vec<u64> = h.steps().collect();
    let fork = h.fork(steps[1]).map(|f| f.trace().len());
    assert_eq!(fork, Some(w.trace().len() - 3));
    assert_eq!(h.len(), 2);
}

#[test]
fn step_reports_carry_requests_and_changed_fields() {
    let mut w = super::world::World::new(Default::default());
    let r = w.apply(create_as(
        "alice",
        deployments(),
        "default",
        deployment("default", "web", 2, "nginx:1.25"),
    ));
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].lane, "user:alice");
    assert_eq!(r.events[0].requests[0].code, 201);
    // The Deployment controller's first reconcile creates the ReplicaSet and writes status.
    let mut reconcile = None;
    for _ in 0..20 {
        let r = w.step();
        if let Some(e) = r
            .events
            .iter()
            .find(|e| e.lane == "deployment-controller" && !e.requests.is_empty())
        {
            reconcile = Some(e.clone());
            break;
        }
    }
    let e = reconcile.unwrap_or_else(|| panic!("no reconcile"));
    assert!(e.line.contains("create replicasets default/web-"));
    let status_change = e
        .changes
        .iter()
        .find(|c| c.key == dep_key("web"))
        .map(|c| {
            c.fields()
                .iter()
                .map(|f| f.path.clone())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert!(
        status_change.iter().any(|p| p.starts_with("/status")),
        "{status_change:?}"
    );
    assert!(
        status_change.iter().any(|p| p == "/metadata/annotations"),
        "the revision annotation is written with status"
    );
}

/// A default cluster where alice has just created Deployment web (1 replica).
/// A world with the scenario's inputs scheduled, not yet run.
fn scheduled(s: &Script) -> super::world::World {
    let mut w = super::world::World::new(s.config.clone());
    for (ms, input) in &s.inputs {
        w.schedule(crate::time::SimTime::from_ms(*ms), input.clone());
    }
    w
}

/// The first object of `resource` (null when there is none).
fn first_of(w: &super::world::World, resource: &str) -> Value {
    w.objects()
        .find(|(k, _)| k.gr.resource == resource)
        .map(|(_, o)| o.as_ref().clone())
        .unwrap_or_default()
}

/// How many objects of `resource` there are.
fn count_of(w: &super::world::World, resource: &str) -> usize {
    w.objects()
        .filter(|(k, _)| k.gr.resource == resource)
        .count()
}

/// The first pod's first container status (null without a pod).
fn first_container(w: &super::world::World) -> Value {
    first_of(w, "pods")
        .pointer("/status/containerStatuses/0")
        .cloned()
        .unwrap_or_default()
}

fn world_with_web() -> super::world::World {
    let mut w = super::world::World::new(Default::default());
    w.apply(create_as(
        "alice",
        deployments(),
        "default",
        deployment("default", "web", 1, "nginx:1.25"),
    ));
    w
}

#[test]
fn a_user_cannot_write_status_but_the_controller_can() {
    let mut w = world_with_web();
    let mut req = ApiRequest::patch(
        "app",
        deployments(),
        "default",
        "web",
        PatchType::Merge,
        json!({"status": {"readyReplicas": 9}}),
    );
    req.subresource = Some(crate::api::Subresource::Status);
    let r = w.apply(Input::Request { request: req });
    assert_eq!(r.events[0].requests[0].code, 403);
    assert!(r.events[0]
        .line
        .ends_with("patch deployments/status default/web 403"));
}

#[test]
fn the_scheduler_forgets_assumed_pods_once_its_cache_sees_them_bound() {
    let out = scale_up().run();
    match out.world.controller("scheduler") {
        Some(crate::controllers::Controller::Scheduler(s)) => {
            assert_eq!((s.assumed_count(), s.pending_count()), (0, 0));
        }
        _ => panic!("no scheduler"),
    }
}

#[test]
fn kubelet_leaves_a_foreign_change_to_a_conditions_times_alone_but_puts_back_its_status() {
    // kube's status manager (`needsReconcile` -> `isPodStatusByKubeletEqual`) compares the
    // conditions kubelet owns by status, reason and message, not by their times.
    let mut w = world_with_web();
    w.run_until_converged(10_000, 120_000);
    let pod_key = w
        .objects()
        .map(|(k, _)| k.clone())
        .find(|k| k.gr == util::pods())
        .expect("the Deployment made a pod");
    let forge = |w: &mut super::world::World, ready: &str, time: &str| {
        let pod = w.object(&pod_key).cloned().unwrap_or_default();
        let mut conditions = pod["status"]["conditions"].clone();
        for c in conditions.as_array_mut().into_iter().flatten() {
            if c["type"] == "Ready" {
                c["status"] = json!(ready);
                c["lastTransitionTime"] = json!(time);
            }
        }
        let mut req = ApiRequest::patch(
            "admin",
            util::pods(),
            "default",
            &pod_key.name,
            PatchType::Merge,
            json!({"status": {"conditions": conditions}}),
        );
        req.subresource = Some(crate::api::Subresource::Status);
        let r = w.apply(Input::Request { request: req });
        assert_eq!(r.events[0].requests[0].code, 200);
    };
    let ready = |w: &super::world::World| {
        let pod = w.object(&pod_key).cloned().unwrap_or_default();
        let c = conditions::find_condition(&pod["status"], "Ready")
            .cloned()
            .unwrap_or_default();
        (
            str_at(&c, "/status").to_owned(),
            str_at(&c, "/lastTransitionTime").to_owned(),
        )
    };
    let (_, kubelet_time) = ready(&w);

    forge(&mut w, "True", "2030-01-01T00:00:00Z");
    w.advance(30_000);
    assert_eq!(
        ready(&w),
        ("True".to_owned(), "2030-01-01T00:00:00Z".to_owned())
    );

    forge(&mut w, "False", "2030-01-01T00:00:00Z");
    w.advance(30_000);
    assert_eq!(ready(&w), ("True".to_owned(), kubelet_time));
}

/// A DaemonSet on three nodes, one tainted `dedicated=gpu:NoSchedule` (no pod there), rolled
/// to a new image one node at a time (maxUnavailable 1), then a fourth node joins and gets its
/// pod; node-2 leaves and the pod garbage collector removes its pod.
fn daemon_set() -> Script {
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "agent:1",
                    "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}}]}}}});
    let ds_gr = crate::controllers::daemonset::daemonsets();
    Script::new("daemon set")
        .config(|c| {
            c.controllers.daemonset = true;
            c.controllers.pod_gc = true;
        })
        .at(
            0,
            patch_as(
                "admin",
                util::nodes(),
                "",
                "node-3",
                json!({"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}),
            ),
        )
        .at(0, create_as("alice", ds_gr.clone(), "default", ds))
        .at(
            10_000,
            patch_as(
                "alice",
                ds_gr,
                "default",
                "agent",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}}}),
            ),
        )
        .at(
            30_000,
            Input::Fault {
                fault: Fault::AddNode {
                    node: NodeSpec::new("node-4", "4", "8Gi"),
                },
            },
        )
        .at(
            40_000,
            Input::Fault {
                fault: Fault::RemoveNode {
                    node: "node-2".into(),
                },
            },
        )
        // The orphaned pod keeps the world looking settled; the collector acts at 60 s and 100 s.
        .at_least(110_000)
        .until(120_000)
}

#[test]
fn a_daemon_set_runs_one_pod_per_eligible_node_and_rolls_node_by_node() {
    let out = check(&daemon_set(), expect_file!["snapshots/daemon_set.trace"]);
    let key = ObjectKey::new(
        crate::controllers::daemonset::daemonsets(),
        "default",
        "agent",
    );
    let ds = get(&out, &key);
    // node-1 and node-4 remain eligible; node-3's taint keeps the pod off; node-2 is gone.
    assert_eq!(
        ds["status"],
        json!({"currentNumberScheduled": 2, "numberMisscheduled": 0, "desiredNumberScheduled": 2,
            "numberReady": 2, "observedGeneration": 2, "updatedNumberScheduled": 2, "numberAvailable": 2})
    );
    let verdict = crate::kstatus::compute_at(&ds, out.world.now()).unwrap();
    assert_eq!(verdict.status.as_str(), "Current");
    let rollout = crate::rollout::rollout_status(&ds, None).unwrap();
    assert_eq!(
        rollout.message,
        "daemon set \"agent\" successfully rolled out\n"
    );
    let pods: Vec<&Value> = out
        .world
        .objects()
        .filter(|(k, _)| k.gr == util::pods())
        .map(|(_, v)| v.as_ref())
        .collect();
    let mut nodes: Vec<&str> = pods.iter().map(|p| str_at(p, "/spec/nodeName")).collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["node-1", "node-4"]);
    for p in &pods {
        assert_eq!(
            str_at(p, "/spec/containers/0/image"),
            "agent:2",
            "{}",
            meta::name(p)
        );
    }
    // Two revisions: the first template and the second.
    let revisions = out
        .world
        .objects()
        .filter(|(k, _)| k.gr == crate::controllers::daemonset::controllerrevisions())
        .count();
    assert_eq!(revisions, 2);
    let trace = out.world.trace_text();
    assert!(trace.contains("create nodes node-4 201"));
    assert!(trace.contains("pod-garbage-collector reconcile"));
}

/// A surge rollout with minReadySeconds: each new pod must stay ready for 2 s before its old
/// pod goes (`podsShouldBeOnNode`'s surge rule), and the controller must wake up for that
/// (`updatePod`'s delayed enqueue); the rollout finishes on every node.
#[test]
fn a_surging_daemon_set_rollout_waits_for_availability_and_finishes() {
    let ds_gr = crate::controllers::daemonset::daemonsets();
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "minReadySeconds": 2,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}});
    let out = Script::new("surging daemon set")
        .config(|c| c.controllers.daemonset = true)
        .at(0, create_as("alice", ds_gr.clone(), "default", ds))
        .at(
            10_000,
            patch_as(
                "alice",
                ds_gr.clone(),
                "default",
                "agent",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}}}),
            ),
        )
        .at_least(40_000)
        .until(60_000)
        .run();
    let ds = get(&out, &ObjectKey::new(ds_gr, "default", "agent"));
    assert_eq!(
        ds["status"]["updatedNumberScheduled"],
        json!(3),
        "{}",
        ds["status"]
    );
    assert_eq!(ds["status"]["numberAvailable"], json!(3));
    let images: Vec<&str> = out
        .world
        .objects()
        .filter(|(k, _)| k.gr == util::pods())
        .map(|(_, p)| str_at(p, "/spec/containers/0/image"))
        .collect();
    assert_eq!(images, ["agent:2"; 3]);
    // One old pod deleted per node, each once its replacement was available.
    let trace = out.world.trace_text();
    let deletes = trace
        .lines()
        .filter(|l| l.contains("daemonset-controller reconcile") && l.contains("delete pods"))
        .count();
    assert_eq!(deletes, 3);
}

/// A joining node with a name already in the cluster is refused (409) and the existing node's
/// kubelet keeps running its pods; a node that is gone can join again under its name.
#[test]
fn a_node_name_already_in_the_cluster_does_not_join_twice() {
    let out = Script::new("node joins twice")
        .at(
            0,
            create_as(
                "alice",
                deployments(),
                "default",
                deployment("default", "web", 3, "nginx:1.25"),
            ),
        )
        .at(
            5_000,
            Input::Fault {
                fault: Fault::AddNode {
                    node: NodeSpec::new("node-1", "4", "8Gi"),
                },
            },
        )
        .at_least(10_000)
        .until(20_000)
        .run();
    let trace = out.world.trace_text();
    assert!(
        trace.contains("user:admin request -> create nodes node-1 409"),
        "{trace}"
    );
    let running = out
        .world
        .objects()
        .filter(|(k, _)| k.gr == util::pods())
        .filter(|(_, p)| str_at(p, "/status/phase") == "Running")
        .count();
    assert_eq!(running, 3);
    assert_eq!(
        out.world.controller_state("kubelet/node-1"),
        Some(&super::world::RunState::Running)
    );
}
