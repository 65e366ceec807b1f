//! Data-driven scenario tests: each scenario's one-line-per-event trace is a snapshot
//! (`UPDATE_EXPECT=1 cargo test -p converge-core` rewrites them), plus assertions on the final
//! objects. A determinism test runs every scenario twice and compares the traces.

use expect_test::{expect_file, ExpectFile};
use serde_json::{json, Value};

use super::health::Health;
use super::report::StopReason;
use super::scenario::{create_as, deployment, patch_as, Outcome, Scenario};
use super::world::{Fault, Input, NodeSpec};
use crate::api::{GroupResource, ObjectKey};
use crate::controllers::declarative::{DeclarativeSpec, Step};
use crate::controllers::util::{self, configmaps, databases, deployments, hpas, str_at};
use crate::controllers::ImageBehaviour;

fn dep_key(name: &str) -> ObjectKey {
    ObjectKey::new(deployments(), "default", name)
}

fn get(out: &Outcome, key: &ObjectKey) -> Value {
    out.world.object(key).cloned().unwrap_or(Value::Null)
}

fn condition<'a>(obj: &'a Value, type_: &str) -> (&'a str, &'a str) {
    obj.get("status")
        .and_then(|s| util::find_condition(s, type_))
        .map(|c| (str_at(c, "/status"), str_at(c, "/reason")))
        .unwrap_or(("", ""))
}

fn check(scenario: &Scenario, snapshot: ExpectFile) -> Outcome {
    let out = scenario.run();
    snapshot.assert_eq(&out.world.trace_text());
    out
}

fn scale_up() -> Scenario {
    Scenario::new("scale up")
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

fn scale_down() -> Scenario {
    Scenario::new("scale down")
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

fn rolling_update() -> Scenario {
    Scenario::new("rolling update")
        .at(0, create_as("alice", deployments(), "default", deployment("default", "web", 4, "nginx:1.25")))
        .at(10_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
}

fn bad_image() -> Scenario {
    let mut d = deployment("default", "web", 2, "nginx:1.25");
    d["spec"]["progressDeadlineSeconds"] = json!(30);
    Scenario::new("bad image")
        .config(|c| {
            c.env.images.insert("nginx:does-not-exist".into(), ImageBehaviour::PullFails);
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .at(10_000, patch_as("alice", deployments(), "default", "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:does-not-exist", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})))
}

fn unschedulable() -> Scenario {
    let mut d = deployment("default", "big", 3, "nginx:1.25");
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("600m");
    Scenario::new("unschedulable pods")
        .config(|c| {
            c.nodes = vec![
                NodeSpec::new("node-1", "1", "2Gi"),
                NodeSpec::new("node-2", "1", "2Gi"),
            ];
        })
        .at(0, create_as("alice", deployments(), "default", d))
        .until(60_000)
}

fn crash_and_recovery() -> Scenario {
    Scenario::new("controller crash and recovery")
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

fn autoscaler() -> Scenario {
    let hpa = json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 6,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
        },
    });
    Scenario::new("autoscaler reacting to load")
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
        .at_least(20_000)
        .until(120_000)
}

fn database() -> Scenario {
    Scenario::new("custom resource convergence").at(
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

fn stale_cache() -> Scenario {
    Scenario::new("stale cache")
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

fn feedback_loop() -> Scenario {
    Scenario::new("naive controller feedback loop")
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

fn declarative() -> Scenario {
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
    Scenario::new("declarative custom controller")
        .config(|c| {
            c.controllers.declarative.push(spec);
            c.custom_resources.push(("example.com".into(), "caches".into(), "v1".into(), "Cache".into(), true));
        })
        .at(0, create_as("alice", GroupResource::new("example.com", "caches"), "default", json!({
            "apiVersion": "example.com/v1", "kind": "Cache", "metadata": {"name": "session"}, "spec": {},
        })))
}

fn all() -> Vec<Scenario> {
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
    ]
}

fn assert_deployment_done(out: &Outcome, name: &str, replicas: i64) {
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
            util::i64_at(&d, &format!("/status/{f}")),
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
    let pods = out
        .world
        .objects()
        .filter(|(k, _)| k.gr.resource == "pods")
        .count();
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
    assert!(out.world.objects().any(|(_, p)| {
        str_at(p, "/status/containerStatuses/0/state/waiting/reason") == "ImagePullBackOff"
    }));
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
        .and_then(|s| util::find_condition(s, "PodScheduled"))
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
    // 250m over pods requesting 100m at a 50 % target wants 5 pods.
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
    let mut w = super::world::World::new(s.config.clone());
    for (ms, input) in &s.inputs {
        w.schedule(crate::time::SimTime::from_ms(*ms), input.clone());
    }
    w.advance(12_000);
    let mut fork = w.clone();
    w.run_until_converged(100_000, 600_000);
    fork.run_until_converged(100_000, 600_000);
    assert_eq!(w.trace_text(), fork.trace_text());
}
