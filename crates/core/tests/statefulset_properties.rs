//! The StatefulSet controller's status under random histories (scaling, template edits,
//! partition and policy edits, pods deleted by a user, time passing): after every world step,
//! status never claims more ready Pods than exist, nor more available than ready, nor more
//! current or updated than created, and observedGeneration never runs ahead of generation;
//! once nothing happens for a while, every ordinal exists, is ready, and every Pod at or above
//! the partition is at the update revision.

mod common;

use converge_core::api::{ApiRequest, GroupResource, ObjectKey, PatchType};
use converge_core::engine::{ClusterConfig, Input, World};
use converge_core::json::{json, Value};
use proptest::prelude::*;

fn statefulsets() -> GroupResource {
    GroupResource::new("apps", "statefulsets")
}

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

#[derive(Clone, Debug)]
enum Op {
    Scale(u8),
    Image(u8),
    Partition(u8),
    OnDelete(bool),
    DeletePod(u8),
    Wait(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..5u8).prop_map(Op::Scale),
        (0..3u8).prop_map(Op::Image),
        (0..4u8).prop_map(Op::Partition),
        any::<bool>().prop_map(Op::OnDelete),
        (0..5u8).prop_map(Op::DeletePod),
        (1..20_000u16).prop_map(Op::Wait),
    ]
}

fn input(op: &Op) -> Option<Input> {
    let patch = |body: Value| Input::Request {
        request: ApiRequest::patch(
            "admin",
            statefulsets(),
            "default",
            "db",
            PatchType::Merge,
            body,
        ),
    };
    Some(match op {
        Op::Scale(n) => patch(json!({"spec": {"replicas": n}})),
        Op::Image(i) => patch(json!({"spec": {"template": {"spec": {"containers": [
            {"name": "db", "image": format!("postgres:{}", 15 + i)}]}}}})),
        Op::Partition(p) => patch(json!({"spec": {"updateStrategy": {
            "type": "RollingUpdate", "rollingUpdate": {"partition": p}}}})),
        Op::OnDelete(true) => {
            patch(json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}}))
        }
        Op::OnDelete(false) => patch(
            json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}}}),
        ),
        Op::DeletePod(i) => Input::Request {
            request: ApiRequest::delete("admin", pods(), "default", &format!("db-{i}")),
        },
        Op::Wait(_) => return None,
    })
}

fn ready(pod: &Value) -> bool {
    pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
        && pod
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

fn key() -> ObjectKey {
    ObjectKey::new(statefulsets(), "default", "db")
}

/// The set's pods in `objects` (the store, or the controller's cache).
fn owned<'a>(objects: impl Iterator<Item = (&'a ObjectKey, &'a Value)>, uid: &str) -> Vec<Value> {
    objects
        .filter(|(k, _)| k.gr == pods())
        .map(|(_, v)| v)
        .filter(|p| {
            p.pointer("/metadata/ownerReferences/0/uid")
                .and_then(Value::as_str)
                == Some(uid)
        })
        .cloned()
        .collect()
}

fn rv(world: &World) -> String {
    common::rv_of(world, &key())
}

/// `fresh`: the status was just written, so it must not claim more than the controller's
/// cache held; `settled`: nothing is in flight, so the store agrees and the rollout is done.
fn check(world: &World, fresh: bool, settled: bool) -> Result<(), TestCaseError> {
    let Some(set) = world.object(&key()) else {
        return Ok(());
    };
    let uid = set["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let n = |f: &str| set["status"][f].as_i64().unwrap_or(0);
    if fresh {
        let cache = world
            .cache("statefulset-controller")
            .expect("the controller runs");
        let seen = owned(
            cache
                .keys()
                .filter_map(|k| cache.get(k).map(|v| (k, v.as_ref()))),
            &uid,
        );
        let ready_seen = seen.iter().filter(|p| ready(p)).count() as i64;
        prop_assert!(
            n("readyReplicas") <= ready_seen && n("replicas") <= seen.len() as i64,
            "status {} but the controller saw {} pods, {ready_seen} ready",
            set["status"],
            seen.len()
        );
    }
    if settled {
        let stored = owned(world.objects().map(|(k, v)| (k, v.as_ref())), &uid);
        let want = set["spec"]["replicas"].as_i64().unwrap_or(1);
        let mut names: Vec<String> = stored
            .iter()
            .map(|p| {
                p["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        names.sort();
        let mut expected: Vec<String> = (0..want).map(|i| format!("db-{i}")).collect();
        expected.sort();
        prop_assert_eq!(
            &names,
            &expected,
            "settled with the wrong pods: {}",
            set["status"]
        );
        prop_assert!(stored.iter().all(ready), "settled with unready pods");
        prop_assert_eq!(n("readyReplicas"), want);
        prop_assert_eq!(n("replicas"), want);
        let update = set["status"]["updateRevision"].as_str().unwrap_or_default();
        let on_delete = set["spec"]["updateStrategy"]["type"] == "OnDelete";
        let partition = set["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .unwrap_or(0);
        if !on_delete {
            for p in &stored {
                let ord: i64 = p["metadata"]["labels"]["apps.kubernetes.io/pod-index"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(-1);
                if ord >= partition {
                    prop_assert_eq!(
                        p["metadata"]["labels"]["controller-revision-hash"].as_str(),
                        Some(update),
                        "{} not updated behind partition {}",
                        p["metadata"]["name"],
                        partition
                    );
                }
            }
        }
    }
    prop_assert!(n("availableReplicas") <= n("readyReplicas"));
    prop_assert!(n("readyReplicas") <= n("replicas"));
    prop_assert!(n("currentReplicas") <= n("replicas"));
    prop_assert!(n("updatedReplicas") <= n("replicas"));
    let generation = set["metadata"]["generation"].as_i64().unwrap_or(0);
    prop_assert!(
        n("observedGeneration") <= generation,
        "observedGeneration {} ahead of generation {generation}",
        n("observedGeneration")
    );
    Ok(())
}

fn world() -> World {
    let mut config = ClusterConfig::default();
    config.controllers.statefulset = true;
    let mut w = World::new(config);
    let set = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:15"}]}}}});
    let (created, _) = w.request(ApiRequest::create("admin", statefulsets(), "default", set));
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
    fn stateful_set_status_never_claims_more_than_exists(ops in prop::collection::vec(op(), 1..8)) {
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
        run_for(&mut w, 90_000)?;
        check(&w, false, true)?;
    }
}
