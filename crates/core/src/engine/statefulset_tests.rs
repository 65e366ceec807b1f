//! The StatefulSet controller in a running cluster, each expectation worked by hand from kube
//! 1.32's pkg/controller/statefulset: ordered creation, the partitioned rolling update, the
//! scale-down order, and the Parallel policy.

use crate::json::{json, Value};

use super::script::{create_as, patch_as};
use super::world::World;
use crate::api::meta::{self, str_at};
use crate::api::{GroupResource, ObjectKey};
use crate::controllers::daemonset::controllerrevisions;
use crate::controllers::statefulset::identity::{POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL};
use crate::controllers::statefulset::statefulsets;
use crate::controllers::util::pods;
use crate::engine::ClusterConfig;
use crate::time::parse_rfc3339_unix_ms;

fn set(replicas: i64, image: &str, extra: Value) -> Value {
    let mut s = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas, "serviceName": "nginx",
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}}}});
    if let (Some(spec), Some(extra)) = (s["spec"].as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    s
}

fn world() -> World {
    let mut config = ClusterConfig::default();
    config.controllers.statefulset = true;
    World::new(config)
}

fn the_set(w: &World) -> Value {
    w.object(&ObjectKey::new(statefulsets(), "default", "web"))
        .cloned()
        .unwrap_or_default()
}

/// The set's pods by name.
fn set_pods(w: &World) -> Vec<Value> {
    let mut out: Vec<Value> = w
        .objects()
        .filter(|(k, _)| k.gr == pods())
        .map(|(_, p)| p.as_ref().clone())
        .filter(|p| meta::name(p).starts_with("web-"))
        .collect();
    out.sort_by(|a, b| meta::name(a).cmp(meta::name(b)));
    out
}

/// Messages of the Events about the set, oldest first.
fn set_events(w: &World) -> Vec<String> {
    let mut evs: Vec<&Value> = w
        .objects()
        .filter(|(k, _)| k.gr == GroupResource::events())
        .map(|(_, e)| e.as_ref())
        .filter(|e| str_at(e, "/involvedObject/kind") == "StatefulSet")
        .collect();
    evs.sort_by_key(|e| {
        (
            str_at(e, "/firstTimestamp").to_owned(),
            str_at(e, "/metadata/resourceVersion")
                .parse::<u64>()
                .unwrap_or(0),
        )
    });
    evs.iter()
        .map(|e| format!("{} {}", str_at(e, "/reason"), str_at(e, "/message")))
        .collect()
}

fn ms(v: &Value, ptr: &str) -> i64 {
    parse_rfc3339_unix_ms(str_at(v, ptr)).unwrap_or_else(|| panic!("no time at {ptr} in {v}"))
}

fn ready_at(pod: &Value) -> i64 {
    let c = pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(c["status"], "True", "{} not ready", meta::name(pod));
    ms(&c, "/lastTransitionTime")
}

fn revisions(w: &World) -> Vec<(String, i64)> {
    let mut out: Vec<(String, i64)> = w
        .objects()
        .filter(|(k, _)| k.gr == controllerrevisions())
        .map(|(_, r)| {
            (
                meta::name(r).to_owned(),
                r["revision"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    out.sort_by_key(|r| r.1);
    out
}

fn revision_of(p: &Value) -> String {
    str_at(p, &format!("/metadata/labels/{REVISION_LABEL}")).to_owned()
}

#[test]
fn ordered_ready_creates_each_pod_after_its_predecessor_is_ready() {
    let mut w = world();
    w.apply(create_as(
        "alice",
        statefulsets(),
        "default",
        set(3, "nginx:1.27", json!({})),
    ));
    w.advance(60_000);
    let ps = set_pods(&w);
    assert_eq!(
        ps.iter().map(meta::name).collect::<Vec<_>>(),
        ["web-0", "web-1", "web-2"]
    );
    // processReplica returns after each create and waits for Running and Ready.
    for pair in ps.windows(2) {
        assert!(
            ms(&pair[1], "/metadata/creationTimestamp") >= ready_at(&pair[0]),
            "{} was created before {} was ready",
            meta::name(&pair[1]),
            meta::name(&pair[0])
        );
    }
    let revs = revisions(&w);
    assert_eq!(revs.len(), 1);
    let (rev, number) = &revs[0];
    assert_eq!(*number, 1);
    assert!(rev.starts_with("web-"));
    for (i, p) in ps.iter().enumerate() {
        assert_eq!(revision_of(p), *rev);
        assert_eq!(p["metadata"]["labels"][POD_NAME_LABEL], meta::name(p));
        assert_eq!(p["metadata"]["labels"][POD_INDEX_LABEL], i.to_string());
        assert_eq!(p["spec"]["hostname"], meta::name(p));
        assert_eq!(p["spec"]["subdomain"], "nginx");
    }
    let s = the_set(&w);
    assert_eq!(
        s["status"],
        json!({"observedGeneration": 1, "replicas": 3, "readyReplicas": 3,
            "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": rev,
            "updateRevision": rev, "collisionCount": 0, "availableReplicas": 3})
    );
    assert_eq!(
        set_events(&w),
        [
            "SuccessfulCreate create Pod web-0 in StatefulSet web successful",
            "SuccessfulCreate create Pod web-1 in StatefulSet web successful",
            "SuccessfulCreate create Pod web-2 in StatefulSet web successful",
        ]
    );
    let status = crate::rollout::rollout_status(&s, None).unwrap();
    assert_eq!(
        status.message,
        "partitioned roll out complete: 3 new pods have been updated...\n"
    );
}

#[test]
fn a_partition_keeps_lower_ordinals_at_the_current_revision_until_it_is_lowered() {
    let mut w = world();
    w.apply(create_as(
        "alice",
        statefulsets(),
        "default",
        set(3, "nginx:1.27", json!({})),
    ));
    w.advance(60_000);
    let old_rev = revisions(&w)[0].0.clone();
    w.apply(patch_as(
        "alice",
        statefulsets(),
        "default",
        "web",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}},
            "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}}),
    ));
    w.advance(60_000);
    let revs = revisions(&w);
    assert_eq!(revs.len(), 2);
    let new_rev = revs[1].0.clone();
    assert_eq!(revs[1].1, 2);
    let ps = set_pods(&w);
    assert_eq!(
        ps.iter().map(revision_of).collect::<Vec<_>>(),
        [old_rev.clone(), old_rev.clone(), new_rev.clone()]
    );
    let s = the_set(&w);
    assert_eq!(s["status"]["currentRevision"], old_rev.as_str());
    assert_eq!(s["status"]["updateRevision"], new_rev.as_str());
    assert_eq!(
        (
            s["status"]["currentReplicas"].clone(),
            s["status"]["updatedReplicas"].clone()
        ),
        (json!(2), json!(1))
    );
    assert_eq!(
        crate::rollout::rollout_status(&s, None).unwrap().message,
        "partitioned roll out complete: 1 new pods have been updated...\n"
    );
    // Partition 0: web-1, then web-0, each once its successor is back and healthy.
    w.apply(patch_as(
        "alice",
        statefulsets(),
        "default",
        "web",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    ));
    w.advance(120_000);
    let ps = set_pods(&w);
    assert!(ps.iter().all(|p| revision_of(p) == new_rev));
    let s = the_set(&w);
    assert_eq!(s["status"]["currentRevision"], new_rev.as_str());
    assert_eq!(s["status"]["updateRevision"], new_rev.as_str());
    assert_eq!(s["status"]["currentReplicas"], 3);
    let deletes: Vec<String> = set_events(&w)
        .into_iter()
        .filter(|e| e.starts_with("SuccessfulDelete"))
        .collect();
    assert_eq!(
        deletes,
        [
            "SuccessfulDelete delete Pod web-2 in StatefulSet web successful",
            "SuccessfulDelete delete Pod web-1 in StatefulSet web successful",
            "SuccessfulDelete delete Pod web-0 in StatefulSet web successful",
        ]
    );
    let web0 = &ps[0];
    let web1 = &ps[1];
    assert!(ms(web0, "/metadata/creationTimestamp") >= ready_at(web1));
}

#[test]
fn scale_down_removes_the_highest_ordinal_first_and_waits_for_it_to_go() {
    let mut w = world();
    w.apply(create_as(
        "alice",
        statefulsets(),
        "default",
        set(3, "nginx:1.27", json!({})),
    ));
    w.advance(60_000);
    w.apply(patch_as(
        "alice",
        statefulsets(),
        "default",
        "web",
        json!({"spec": {"replicas": 1}}),
    ));
    w.advance(120_000);
    assert_eq!(
        set_pods(&w)
            .iter()
            .map(|p| meta::name(p).to_owned())
            .collect::<Vec<_>>(),
        ["web-0"]
    );
    let deletes: Vec<String> = set_events(&w)
        .into_iter()
        .filter(|e| e.starts_with("SuccessfulDelete"))
        .collect();
    assert_eq!(
        deletes,
        [
            "SuccessfulDelete delete Pod web-2 in StatefulSet web successful",
            "SuccessfulDelete delete Pod web-1 in StatefulSet web successful",
        ]
    );
    // web-1's delete waited for web-2's graceful termination: one delete per sync, and a
    // terminating condemned pod blocks.
    let trace: Vec<String> = w
        .trace()
        .iter()
        .filter(|l| l.contains("statefulset-controller reconcile") && l.contains("delete pods"))
        .map(|l| l.to_string())
        .collect();
    assert_eq!(trace.len(), 2, "{trace:#?}");
    assert_eq!(the_set(&w)["status"]["replicas"], 1);
}

#[test]
fn parallel_creates_every_pod_in_one_sync() {
    let mut w = world();
    w.apply(create_as(
        "alice",
        statefulsets(),
        "default",
        set(3, "nginx:1.27", json!({"podManagementPolicy": "Parallel"})),
    ));
    w.advance(60_000);
    let ps = set_pods(&w);
    assert_eq!(ps.len(), 3);
    let created: Vec<i64> = ps
        .iter()
        .map(|p| ms(p, "/metadata/creationTimestamp"))
        .collect();
    assert!(created.iter().all(|c| *c == created[0]), "{created:?}");
    assert_eq!(the_set(&w)["status"]["readyReplicas"], 3);
}
