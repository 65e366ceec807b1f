//! The DaemonSet controller's status under random histories (template edits, strategy edits,
//! taints, nodes joining and leaving, time passing): after every world step, status never
//! claims more ready Pods than the DaemonSet has, nor more available than ready, nor more
//! current than desired, and observedGeneration never runs ahead of generation; once nothing
//! happens for a while, every eligible node runs an updated, available pod.

mod common;

use converge_core::api::{ApiRequest, GroupResource, ObjectKey, PatchType};
use converge_core::engine::{ClusterConfig, Fault, Input, NodeSpec, World};
use converge_core::json::{json, Value};
use proptest::prelude::*;

fn daemonsets() -> GroupResource {
    GroupResource::new("apps", "daemonsets")
}

#[derive(Clone, Debug)]
enum Op {
    Image(u8),
    Strategy(u8),
    Taint(u8, bool),
    AddNode(u8),
    RemoveNode(u8),
    MinReady(u8),
    Wait(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3u8).prop_map(Op::Image),
        (0..4u8).prop_map(Op::Strategy),
        (1..5u8, any::<bool>()).prop_map(|(n, e)| Op::Taint(n, e)),
        (4..7u8).prop_map(Op::AddNode),
        (1..7u8).prop_map(Op::RemoveNode),
        (0..3u8).prop_map(Op::MinReady),
        (1..20_000u16).prop_map(Op::Wait),
    ]
}

fn input(op: &Op) -> Option<Input> {
    let patch = |gr: GroupResource, ns: &str, name: &str, body: Value| Input::Request {
        request: ApiRequest::patch("admin", gr, ns, name, PatchType::Merge, body),
    };
    Some(match op {
        Op::Image(i) => patch(
            daemonsets(),
            "default",
            "agent",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": format!("agent:{i}")}]}}}}),
        ),
        Op::Strategy(s) => {
            let ru = match s {
                0 => json!({"maxUnavailable": 1, "maxSurge": 0}),
                1 => json!({"maxUnavailable": 0, "maxSurge": 1}),
                2 => json!({"maxUnavailable": "50%", "maxSurge": 0}),
                _ => json!({"maxUnavailable": 0, "maxSurge": "100%"}),
            };
            patch(
                daemonsets(),
                "default",
                "agent",
                json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": ru}}}),
            )
        }
        Op::Taint(n, no_execute) => patch(
            GroupResource::new("", "nodes"),
            "",
            &format!("node-{n}"),
            json!({"spec": {"taints": [{"key": "dedicated", "value": "x",
                "effect": if *no_execute { "NoExecute" } else { "NoSchedule" }}]}}),
        ),
        Op::AddNode(n) => Input::Fault {
            fault: Fault::AddNode {
                node: NodeSpec::new(&format!("node-{n}"), "4", "8Gi"),
            },
        },
        Op::RemoveNode(n) => Input::Fault {
            fault: Fault::RemoveNode {
                node: format!("node-{n}"),
            },
        },
        Op::MinReady(s) => patch(
            daemonsets(),
            "default",
            "agent",
            json!({"spec": {"minReadySeconds": s}}),
        ),
        Op::Wait(_) => return None,
    })
}

fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// The DaemonSet's pods in `objects` (the store, or the controller's cache): (all, ready).
fn owned<'a>(objects: impl Iterator<Item = (&'a ObjectKey, &'a Value)>, uid: &str) -> (i64, i64) {
    let pods: Vec<&Value> = objects
        .filter(|(k, _)| k.gr == GroupResource::new("", "pods"))
        .map(|(_, v)| v)
        .filter(|p| {
            p.pointer("/metadata/ownerReferences/0/uid")
                .and_then(Value::as_str)
                == Some(uid)
        })
        .collect();
    (
        pods.len() as i64,
        pods.iter().filter(|p| ready(p)).count() as i64,
    )
}

fn ds_key() -> ObjectKey {
    ObjectKey::new(daemonsets(), "default", "agent")
}

fn rv(world: &World) -> String {
    common::rv_of(world, &ds_key())
}

/// `fresh`: the status was just written, so it must not claim more ready pods than the
/// controller's cache held; `settled`: nothing is in flight, so not more than the store holds.
fn check(world: &World, fresh: bool, settled: bool) -> Result<(), TestCaseError> {
    let Some(ds) = world.object(&ds_key()) else {
        return Ok(());
    };
    let uid = ds["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let n = |f: &str| ds["status"][f].as_i64().unwrap_or(0);
    if fresh {
        let cache = world
            .cache("daemonset-controller")
            .expect("the controller runs");
        let (all, ready) = owned(
            cache
                .keys()
                .filter_map(|k| cache.get(k).map(|v| (k, v.as_ref()))),
            &uid,
        );
        prop_assert!(
            n("numberReady") <= ready && n("currentNumberScheduled") <= all,
            "status {} but the controller saw {all} pods, {ready} ready",
            ds["status"]
        );
    }
    if settled {
        let (all, ready) = owned(world.objects().map(|(k, v)| (k, v.as_ref())), &uid);
        prop_assert!(
            n("numberReady") <= ready && n("currentNumberScheduled") <= all,
            "settled status {} but {all} pods exist, {ready} ready",
            ds["status"]
        );
        // Every rollout finishes: each eligible node runs an updated, available pod.
        prop_assert!(
            n("updatedNumberScheduled") == n("desiredNumberScheduled")
                && n("numberAvailable") == n("desiredNumberScheduled"),
            "settled but not rolled out: {}",
            ds["status"]
        );
    }
    prop_assert!(n("numberAvailable") <= n("numberReady"));
    prop_assert!(n("currentNumberScheduled") <= n("desiredNumberScheduled"));
    prop_assert!(n("updatedNumberScheduled") <= n("currentNumberScheduled"));
    let generation = ds["metadata"]["generation"].as_i64().unwrap_or(0);
    prop_assert!(
        n("observedGeneration") <= generation,
        "observedGeneration {} ahead of generation {generation}",
        n("observedGeneration")
    );
    Ok(())
}

fn world() -> World {
    let mut config = ClusterConfig::default();
    config.controllers.daemonset = true;
    config.controllers.pod_gc = true;
    config.nodes = (1..=3)
        .map(|i| NodeSpec::new(&format!("node-{i}"), "4", "8Gi"))
        .collect();
    let mut w = World::new(config);
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "agent:0"}]}}}});
    let (created, _) = w.request(ApiRequest::create("admin", daemonsets(), "default", ds));
    assert!(created.is_ok(), "{created:?}");
    w
}

/// Steps the world until `ms` of simulated time have passed, checking after every step.
fn run_for(world: &mut World, ms: u64) -> Result<(), TestCaseError> {
    common::run_for(world, ms, rv, check)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 100, ..ProptestConfig::default() })]

    #[test]
    fn daemon_set_status_never_claims_more_than_exists(ops in prop::collection::vec(op(), 1..8)) {
        let mut w = world();
        run_for(&mut w, 3_000)?;
        for op in &ops {
            match op {
                Op::Wait(ms) => run_for(&mut w, u64::from(*ms))?,
                _ => {
                    if let Some(i) = input(op) {
                        w.apply(i);
                    }
                    check(&w, false, false)?;
                    run_for(&mut w, 2_000)?;
                }
            }
        }
        // Long enough for the pod garbage collector (up to 60 s) and every rollout to finish.
        run_for(&mut w, 90_000)?;
        check(&w, false, true)?;
    }
}
