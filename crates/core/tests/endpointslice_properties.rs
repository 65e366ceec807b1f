//! The EndpointSlice controller under random histories (scaling, readiness probes failing and
//! passing, pods deleted, the Service's selector and publishNotReadyAddresses edited, time
//! passing): whenever the controller writes a slice, the slice lists no pod its cache does not
//! hold and selects, and no more ready endpoints than that cache has ready pods; every slice
//! keeps kube's condition rule and at most 100 endpoints, and no pod is listed twice; once
//! nothing happens for a while, the slices list exactly the selected pods that have an IP, with
//! the store's readiness.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use converge_core::api::{ApiRequest, GroupResource, PatchType};
use converge_core::engine::{informer::Informer, ClusterConfig, Input, World};
use converge_core::json::{json, Value};
use converge_core::runtime::ImageBehaviour;
use proptest::prelude::*;

fn deployments() -> GroupResource {
    GroupResource::new("apps", "deployments")
}
fn services() -> GroupResource {
    GroupResource::new("", "services")
}
fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}
fn endpointslices() -> GroupResource {
    GroupResource::new("discovery.k8s.io", "endpointslices")
}

#[derive(Clone, Debug)]
enum Op {
    Scale(u8),
    Probe(bool),
    DeletePod(u8),
    Selector(bool),
    Publish(bool),
    Wait(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..6u8).prop_map(Op::Scale),
        any::<bool>().prop_map(Op::Probe),
        (0..6u8).prop_map(Op::DeletePod),
        any::<bool>().prop_map(Op::Selector),
        any::<bool>().prop_map(Op::Publish),
        (1..20_000u16).prop_map(Op::Wait),
    ]
}

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

fn input(world: &World, op: &Op) -> Option<Input> {
    let patch = |gr: GroupResource, name: &str, body: Value| Input::Request {
        request: ApiRequest::patch("admin", gr, "default", name, PatchType::Merge, body),
    };
    Some(match op {
        Op::Scale(n) => patch(deployments(), "web", json!({"spec": {"replicas": n}})),
        Op::Probe(fails) => Input::SetImage {
            image: "web:1".into(),
            behaviour: if *fails {
                ImageBehaviour::ProbeFails
            } else {
                ImageBehaviour::Ok { pull_ms: 500 }
            },
        },
        Op::DeletePod(i) => {
            let names: Vec<String> = world
                .objects()
                .filter(|(k, _)| k.gr == pods())
                .map(|(k, _)| k.name.to_string())
                .collect();
            let name = names.get(usize::from(*i) % names.len().max(1))?.clone();
            Input::Request {
                request: ApiRequest::delete("admin", pods(), "default", &name),
            }
        }
        Op::Selector(web) => patch(
            services(),
            "web",
            json!({"spec": {"selector": {"app": if *web { "web" } else { "other" }}}}),
        ),
        Op::Publish(p) => patch(
            services(),
            "web",
            json!({"spec": {"publishNotReadyAddresses": p}}),
        ),
        Op::Wait(_) => return None,
    })
}

fn slices(world: &World) -> Vec<Value> {
    world
        .objects()
        .filter(|(k, _)| k.gr == endpointslices())
        .map(|(_, v)| v.as_ref().clone())
        .collect()
}

fn slice_rvs(world: &World) -> BTreeMap<String, String> {
    slices(world)
        .iter()
        .map(|s| {
            (
                str_at(s, "/metadata/name").to_owned(),
                str_at(s, "/metadata/resourceVersion").to_owned(),
            )
        })
        .collect()
}

fn pod_ready(p: &Value) -> bool {
    p.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| str_at(c, "/type") == "Ready" && str_at(c, "/status") == "True")
}

/// A view of pods and the Service: the store's, or the controller's cache.
struct View {
    selector: BTreeMap<String, String>,
    publish: bool,
    /// Selected pods that belong in a slice (an IP, not terminal): name -> (ready, terminating).
    pods: BTreeMap<String, (bool, bool)>,
}

fn view(svc: Option<&Value>, all_pods: Vec<&Value>) -> View {
    let selector: BTreeMap<String, String> = svc
        .and_then(|s| s.pointer("/spec/selector"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let publish = svc
        .and_then(|s| s.pointer("/spec/publishNotReadyAddresses"))
        .and_then(Value::as_bool)
        == Some(true);
    let pods = all_pods
        .into_iter()
        .filter(|p| {
            !selector.is_empty()
                && selector
                    .iter()
                    .all(|(k, v)| str_at(p, &format!("/metadata/labels/{k}")) == v)
                && !str_at(p, "/status/podIP").is_empty()
                && !matches!(str_at(p, "/status/phase"), "Succeeded" | "Failed")
        })
        .map(|p| {
            (
                str_at(p, "/metadata/name").to_owned(),
                (
                    pod_ready(p),
                    p.pointer("/metadata/deletionTimestamp").is_some(),
                ),
            )
        })
        .collect();
    View {
        selector,
        publish,
        pods,
    }
}

fn cache_view(cache: &Informer) -> View {
    let (svc_gr, pod_gr) = (services(), pods());
    let svc = cache
        .list(&svc_gr)
        .find(|s| str_at(s, "/metadata/name") == "web");
    view(
        svc.map(|s| s.as_ref()),
        cache.list(&pod_gr).map(|p| p.as_ref()).collect(),
    )
}

fn store_view(world: &World) -> View {
    let svc = world
        .objects()
        .find(|(k, _)| k.gr == services())
        .map(|(_, v)| v.as_ref());
    view(
        svc,
        world
            .objects()
            .filter(|(k, _)| k.gr == pods())
            .map(|(_, p)| p.as_ref())
            .collect(),
    )
}

/// Each endpoint: (pod, ready, serving, terminating).
fn endpoints(world: &World) -> Vec<(String, bool, bool, bool)> {
    slices(world)
        .iter()
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .map(|e| {
            let c = |k: &str| e["conditions"][k].as_bool().unwrap_or(false);
            (
                str_at(&e, "/targetRef/name").to_owned(),
                c("ready"),
                c("serving"),
                c("terminating"),
            )
        })
        .collect()
}

/// `fresh`: a slice was just written, from the controller's cache; `settled`: nothing is in
/// flight, so the slices match the store.
fn check(world: &World, fresh: bool, settled: bool) -> Result<(), TestCaseError> {
    let eps = endpoints(world);
    for s in slices(world) {
        let n = s["endpoints"].as_array().map_or(0, Vec::len);
        prop_assert!(n <= 100, "{n} endpoints in one slice");
    }
    let mut seen = BTreeSet::new();
    for (pod, ..) in &eps {
        prop_assert!(seen.insert(pod.clone()), "{pod} listed twice");
    }
    let check_against = |v: View, what: &str| -> Result<(), TestCaseError> {
        let ready_pods = v.pods.values().filter(|(r, t)| *r && !*t).count();
        let ready_eps = eps.iter().filter(|e| e.1).count();
        if !v.publish {
            prop_assert!(
                ready_eps <= ready_pods,
                "{ready_eps} ready endpoints, {ready_pods} ready pods in the {what}"
            );
        }
        for (pod, ready, serving, terminating) in &eps {
            let Some((pod_ready, pod_terminating)) = v.pods.get(pod) else {
                return Err(TestCaseError::fail(format!(
                    "endpoint of {pod}, which the {what} does not hold as selected by {:?}",
                    v.selector
                )));
            };
            prop_assert_eq!(
                (serving, terminating),
                (pod_ready, pod_terminating),
                "{}",
                pod
            );
            prop_assert_eq!(*ready, v.publish || (*serving && !*terminating), "{}", pod);
        }
        Ok(())
    };
    if fresh {
        let cache = world
            .cache("endpointslice-controller")
            .expect("the controller runs");
        check_against(cache_view(cache), "controller's cache")?;
    }
    if settled {
        let v = store_view(world);
        let listed: BTreeSet<String> = eps.iter().map(|e| e.0.clone()).collect();
        let wanted: BTreeSet<String> = v.pods.keys().cloned().collect();
        prop_assert_eq!(listed, wanted, "settled slices list the selected pods");
        check_against(v, "store")?;
    }
    Ok(())
}

fn world() -> World {
    let mut config = ClusterConfig::default();
    config.controllers.endpointslice = true;
    config
        .env
        .images
        .insert("web:1".into(), ImageBehaviour::Ok { pull_ms: 500 });
    let mut w = World::new(config);
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "web:1",
                    "ports": [{"name": "http", "containerPort": 8080}],
                    "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 2, "failureThreshold": 1},
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}});
    let svc = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}});
    for (gr, body) in [(deployments(), d), (services(), svc)] {
        let (created, _) = w.request(ApiRequest::create("admin", gr, "default", body));
        assert!(created.is_ok(), "{created:?}");
    }
    w
}

/// Steps the world until `ms` of simulated time have passed, checking after every step.
fn run_for(world: &mut World, ms: u64) -> Result<(), TestCaseError> {
    common::run_for(world, ms, slice_rvs, check)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 100, ..ProptestConfig::default() })]

    #[test]
    fn slices_never_list_more_ready_endpoints_than_ready_selected_pods(ops in prop::collection::vec(op(), 1..8)) {
        let mut w = world();
        run_for(&mut w, 3_000)?;
        for op in &ops {
            match op {
                Op::Wait(ms) => run_for(&mut w, u64::from(*ms))?,
                _ => {
                    if let Some(i) = input(&w, op) {
                        w.apply(i);
                    }
                    check(&w, false, false)?;
                    run_for(&mut w, 2_000)?;
                }
            }
        }
        // Long enough for deleted pods to go and replacements to start and settle.
        run_for(&mut w, 60_000)?;
        check(&w, false, true)?;
    }
}
