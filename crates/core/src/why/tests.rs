//! Chains worked by hand from the scenarios' traces (`converge run FILE`, lines numbered from
//! 1 as the hops print them), and the explanations tied to the decisions they explain.

use crate::json::{json, Value};

use super::{Chain, Hop, WhyError};
use crate::api::{GroupResource, ObjectKey, WatchEventType};
use crate::engine::provenance::{Cause, Origin, Root};
use crate::engine::World;
use crate::scenario::{Duration, FieldPath, RunOptions, Scenario, Until};
use crate::time::SimTime;

const SCALE_UP: &str = include_str!("../../../../tests/scenarios/scale-up.yaml");
const BAD_IMAGE: &str = include_str!("../../../../tests/scenarios/bad-image.yaml");
const FEEDBACK_LOOP: &str = include_str!("../../../../tests/scenarios/feedback-loop.yaml");

fn run(text: &str, until: &str) -> World {
    let scenario = Scenario::load(text).unwrap();
    let options = RunOptions {
        until: Some(Until::Time(Duration::parse(until).unwrap())),
        ..RunOptions::default()
    };
    scenario.run(&options).unwrap().run.world().clone()
}

fn why(world: &World, key: &ObjectKey, field: &str, at: Option<u64>) -> Chain {
    let path = FieldPath::parse(field).unwrap();
    world.why(key, &path, at.map(SimTime::from_ms)).unwrap()
}

fn deployment(name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("apps", "deployments"), "default", name)
}

/// The resourceVersions of the traces the chains below were read from (their line numbers are
/// named in the comments and checked by content, as a new controller's watch lines move them):
/// a cluster set-up that writes more (a new built-in controller's RBAC) shifts every later
/// resourceVersion by as much, so the tests read chains in the numbers of those traces.
#[derive(Clone, Copy, Debug)]
struct Shift {
    rv: u64,
}

/// The shift of `world`'s resourceVersions from the trace read by hand, where the scenario's
/// first object (`key`) was created as resourceVersion `rv`.
fn shift(world: &World, key: &ObjectKey, rv: u64) -> Shift {
    let create = world
        .provenance()
        .writes_of(key)
        .next()
        .expect("its create");
    Shift {
        rv: create.resource_version - rv,
    }
}

/// A hop as (time, what), spelled for comparing with the trace by eye, in the hand-read
/// trace's resourceVersions.
fn shape(hop: &Hop, shift: Shift) -> String {
    match hop {
        Hop::Write { write: w, .. } => format!(
            "{} write {} {} {} {} by {}",
            w.time,
            w.verb.as_str(),
            w.resource(),
            w.target(),
            w.code,
            w.principal
        ),
        Hop::Reconcile {
            time,
            controller,
            key,
            via,
            causes,
            ..
        } => {
            let via = match &causes[*via] {
                Cause::Watch {
                    event_type,
                    key,
                    resource_version,
                    ..
                } => format!(
                    "watch {event_type:?} {} rv={}",
                    key.name,
                    resource_version - shift.rv
                ),
                Cause::Requeue { ms, .. } => format!("requeue {ms}ms"),
                Cause::Backoff { ms, .. } => format!("backoff {ms}ms"),
                Cause::Restart { .. } => "restart".into(),
            };
            format!("{time} {controller} reconcile {} via {via}", key.name)
        }
        Hop::Repeat { period, times, .. } => format!("repeat {period} x{times}"),
    }
}

/// Each hop names the trace line of what it is: a write the line of the reconcile or request
/// that sent it, a reconcile its own line, each queue cause the delivery or reconcile it came
/// from. (Checked by content: a new controller's watch lines move the numbers.)
fn assert_lines_name_their_hops(world: &World, hops: &[Hop]) {
    let line = |n: u64| world.trace()[n as usize].to_string();
    for hop in hops {
        match hop {
            Hop::Write { write, .. } => {
                let l = line(write.line);
                let sent = match &write.origin {
                    Origin::Reconcile { .. } => l.contains(" reconcile ") || l.contains(" events "),
                    Origin::Root(_) => l.contains(&format!("user:{} request", write.principal)),
                };
                assert!(sent && l.contains(&write.target()), "{write:?}: {l}");
            }
            Hop::Reconcile {
                line: n,
                controller,
                key,
                causes,
                ..
            } => {
                let l = line(*n);
                assert!(
                    l.contains(&format!(
                        "{controller} reconcile {}/{}",
                        key.namespace, key.name
                    )),
                    "{l}"
                );
                for c in causes {
                    let from = line(c.line());
                    let ok = match c {
                        Cause::Watch {
                            resource_version, ..
                        } => {
                            from.contains(&format!("{controller} watch "))
                                && from.contains(&format!(" rv={resource_version} "))
                        }
                        Cause::Requeue { .. } | Cause::Backoff { .. } => from.contains(&format!(
                            "{controller} reconcile {}/{}",
                            key.namespace, key.name
                        )),
                        Cause::Restart { .. } => from.contains(" fault restart "),
                    };
                    assert!(ok, "{c:?}: {from}");
                }
            }
            Hop::Repeat { .. } => {}
        }
    }
}

const DC: &str = "system:serviceaccount:kube-system:deployment-controller";
const RSC: &str = "system:serviceaccount:kube-system:replicaset-controller";

/// scale-up with 3 replicas scaled to 5 by alice at 10s (seed 1). From its trace:
/// - line 184, t=10.000s: `user:alice request -> patch deployments default/web 200` (rv 92);
/// - 186: the Deployment controller's watch of rv 92 queues default/web; 187 (10.005s) its
///   reconcile updates the ReplicaSet web-5cc4fd5dc8 (spec.replicas 5, rv 93);
/// - 190: the ReplicaSet controller's watch of rv 93 queues it; 194 (10.010s) it creates
///   pods web-5cc4fd5dc8-5d9kq (rv 96) and -qqkb9;
/// - 199: the scheduler's watch of rv 96 queues the pod; 207 (10.015s) it creates its binding
///   (rv 102);
/// - 216: kubelet/node-1's watch of rv 102 queues the pod; its reconciles at 10.020s (226,
///   requeue after 758ms), 10.778s (252, 300ms), 11.078s (268, 200ms) and 11.278s (290) patch
///   the pod's status, the last to Ready (rv 124);
/// - 294: the ReplicaSet controller's watch of rv 124; 296 (11.283s) it updates its status to
///   readyReplicas 5 (rv 125);
/// - 297: the Deployment controller's watch of rv 125; 299 (11.288s) it updates
///   deployments/status: readyReplicas 5, unchanged since up to 30s.
#[test]
fn ready_replicas_after_a_scale_reach_alices_patch_through_every_controller() {
    let text = SCALE_UP.replace("replicas: 1\n", "replicas: 3\n").replace(
        "patch: {spec: {replicas: 3}}",
        "patch: {spec: {replicas: 5}}",
    );
    let world = run(&text, "30s");
    let sh = shift(&world, &deployment("web"), 42);
    let chain = why(
        &world,
        &deployment("web"),
        "status.readyReplicas",
        Some(30_000),
    );
    assert_eq!(chain.value, json!(5));
    let shapes: Vec<String> = chain.hops.iter().map(|h| shape(h, sh)).collect();
    let want = [
        format!("t=11.288s write update deployments default/web 200 by {DC}"),
        "t=11.288s deployment-controller reconcile web via watch Modified web-5cc4fd5dc8 rv=125"
            .into(),
        format!("t=11.283s write update replicasets default/web-5cc4fd5dc8 200 by {RSC}"),
        "t=11.283s replicaset-controller reconcile web-5cc4fd5dc8 via watch Modified web-5cc4fd5dc8-5d9kq rv=124".into(),
        "t=11.278s write patch pods default/web-5cc4fd5dc8-5d9kq 200 by system:node:node-1".into(),
        "t=11.278s kubelet/node-1 reconcile web-5cc4fd5dc8-5d9kq via requeue 200ms".into(),
        "t=11.078s kubelet/node-1 reconcile web-5cc4fd5dc8-5d9kq via requeue 300ms".into(),
        "t=10.778s kubelet/node-1 reconcile web-5cc4fd5dc8-5d9kq via requeue 758ms".into(),
        "t=10.020s kubelet/node-1 reconcile web-5cc4fd5dc8-5d9kq via watch Modified web-5cc4fd5dc8-5d9kq rv=102".into(),
        "t=10.015s write create bindings default/web-5cc4fd5dc8-5d9kq 201 by system:kube-scheduler".into(),
        "t=10.015s scheduler reconcile web-5cc4fd5dc8-5d9kq via watch Added web-5cc4fd5dc8-5d9kq rv=96".into(),
        format!("t=10.010s write create pods default/web-5cc4fd5dc8-5d9kq 201 by {RSC}"),
        "t=10.010s replicaset-controller reconcile web-5cc4fd5dc8 via watch Modified web-5cc4fd5dc8 rv=93".into(),
        format!("t=10.005s write update replicasets default/web-5cc4fd5dc8 200 by {DC}"),
        "t=10.005s deployment-controller reconcile web via watch Modified web rv=92".into(),
        "t=10.000s write patch deployments default/web 200 by alice".into(),
    ];
    assert_eq!(shapes, want);
    assert_lines_name_their_hops(&world, &chain.hops);
    // The binding changed the pod, not a bindings object.
    let Hop::Write { write, .. } = &chain.hops[9] else {
        panic!("not a write: {:?}", chain.hops[9]);
    };
    assert_eq!(write.key.gr.resource.as_str(), "pods");
    assert_eq!(write.event_type, WatchEventType::Modified);
    assert_eq!(write.resource_version - sh.rv, 102);
    match &chain.root {
        Root::Request {
            principal,
            line,
            time,
            ..
        } => {
            assert_eq!(principal, "alice");
            assert_eq!(*time, SimTime::from_ms(10_000));
            assert!(world.trace()[*line as usize]
                .contains("user:alice request -> patch deployments default/web 200"));
        }
        other => panic!("root {other:?}"),
    }
    // The setter's decisions: the Deployment controller's Available rule with its inputs.
    let Hop::Write { explanations, .. } = &chain.hops[0] else {
        panic!("not a write");
    };
    let available = explanations
        .iter()
        .find(|e| e.subject == "Available")
        .unwrap();
    assert_eq!(
        available.to_string(),
        "Available=True: availableReplicas 5 >= minAvailable 4 (replicas 5 - maxUnavailable 1, 25% of 5 rounded down)"
    );
    // The ReplicaSet's count, explained where it was counted.
    let Hop::Write { explanations, .. } = &chain.hops[2] else {
        panic!("not a write");
    };
    let ready = explanations
        .iter()
        .find(|e| e.subject == "status.readyReplicas")
        .unwrap();
    assert_eq!(ready.value, "5");
    assert_eq!(ready.rule, "5 of the 5 active pods have Ready=True");
}

/// Before alice's scale readyReplicas was 3, set while the three pods started at t=0; at 10s
/// the value is unchanged, so the chain starts at that older write, not at 10s.
#[test]
fn an_unchanged_value_points_at_the_write_that_last_changed_it() {
    let text = SCALE_UP.replace("replicas: 1\n", "replicas: 3\n");
    let world = run(&text, "30s");
    let at_10 = why(
        &world,
        &deployment("web"),
        "status.readyReplicas",
        Some(10_000),
    );
    assert_eq!(at_10.value, json!(3));
    let Hop::Write { write, .. } = &at_10.hops[0] else {
        panic!("not a write");
    };
    assert!(write.time < SimTime::from_ms(10_000), "{:?}", write.time);
    // The value before that write differed, the value after is 3.
    let before = write
        .before
        .as_deref()
        .and_then(|b| b.pointer("/status/readyReplicas"));
    assert_ne!(before, Some(&json!(3)));
    assert_eq!(
        write
            .after
            .as_deref()
            .and_then(|a| a.pointer("/status/readyReplicas")),
        Some(&json!(3))
    );
    // Its root is the admin's create of the Deployment at t=0 (a scenario object).
    assert!(
        matches!(&at_10.root, Root::Request { principal, .. } if principal == "admin"),
        "{:?}",
        at_10.root
    );
}

/// bad-image, from its trace: the Deployment is created at t=0 (line 8); its reconcile at
/// 0.010s (line 25) asks to be requeued after 30.990s, the initial rollout's progress deadline
/// (30s after lastUpdateTime 0, plus the controller's 1s margin), so the key waits for 31.000s.
/// alice's patch at 10s (line 136) sets the image nginx:does-not-exist; its watch (line 138)
/// queues the reconcile at 10.005s (line 139) that writes Progressing=True/ReplicaSetUpdated
/// with lastUpdateTime 10s. The reconciles at 10.010s (147), 10.015s (159) and 10.025s (178)
/// ask for 41.000s, later than the waiting 31.000s, so the queue keeps 31.000s: those requests
/// ride on it (coalesced). At 31.000s (line 220) the deadline timer fires, no writes, requeue
/// after 10s (lastUpdateTime 10s + 30s + 1s). At 41.000s (line 221) that timer fires and, the
/// new pod never pulling its image, the reconcile writes Progressing=False/
/// ProgressDeadlineExceeded: 31s since lastUpdateTime, more than progressDeadlineSeconds 30.
#[test]
fn progress_deadline_exceeded_reaches_the_deadline_timer_and_the_bad_image() {
    let world = run(BAD_IMAGE, "70s");
    let sh = shift(&world, &deployment("web"), 42);
    let chain = why(
        &world,
        &deployment("web"),
        "status.conditions[type=Progressing].reason",
        None,
    );
    assert_eq!(chain.value, json!("ProgressDeadlineExceeded"));
    let shapes: Vec<String> = chain.hops.iter().map(|h| shape(h, sh)).collect();
    assert_eq!(
        shapes,
        [
            format!("t=41.000s write update deployments default/web 200 by {DC}"),
            "t=41.000s deployment-controller reconcile web via requeue 10000ms".into(),
            "t=31.000s deployment-controller reconcile web via requeue 30990ms".into(),
            "t=0.010s deployment-controller reconcile web via watch Added web-5cc4fd5dc8 rv=43"
                .into(),
            format!("t=0.005s write create replicasets default/web-5cc4fd5dc8 201 by {DC}"),
            "t=0.005s deployment-controller reconcile web via watch Added web rv=42".into(),
            "t=0.000s write create deployments default/web 201 by admin".into(),
        ]
    );
    assert_lines_name_their_hops(&world, &chain.hops);
    // The 31s wake coalesced the 41s requests asked after alice's patch.
    let Hop::Reconcile {
        causes, trigger, ..
    } = &chain.hops[2]
    else {
        panic!("not a reconcile");
    };
    assert_eq!(causes.len(), 7);
    assert!(
        matches!(causes[*trigger], Cause::Requeue { time, ms: 30_990, .. } if time == SimTime::from_ms(10)),
        "{:?}",
        causes[*trigger]
    );
    assert!(causes.iter().any(
        |c| matches!(c, Cause::Requeue { time, ms: 30_990, .. } if *time == SimTime::from_ms(10_010))
    ));
    // The setter decided by the deadline rule, reading the condition's lastUpdateTime.
    let Hop::Write { explanations, .. } = &chain.hops[0] else {
        panic!("not a write");
    };
    let progressing = explanations
        .iter()
        .find(|e| e.subject == "Progressing")
        .unwrap();
    assert_eq!(progressing.value, "False");
    assert_eq!(
        progressing.rule,
        "no progress since lastUpdateTime 2025-01-01T00:00:10Z (31.000s ago) > progressDeadlineSeconds 30"
    );
    // That input's chain: set at 10.005s because of alice's patch of the image.
    assert_eq!(chain.inputs.len(), 1);
    let input = &chain.inputs[0];
    assert_eq!(
        input.field,
        "status.conditions[type=Progressing].lastUpdateTime"
    );
    assert_eq!(input.value, json!("2025-01-01T00:00:10Z"));
    let shapes: Vec<String> = input.hops.iter().map(|h| shape(h, sh)).collect();
    assert_eq!(
        shapes,
        [
            format!("t=10.005s write update deployments default/web 200 by {DC}"),
            "t=10.005s deployment-controller reconcile web via watch Modified web rv=78".into(),
            "t=10.000s write patch deployments default/web 200 by alice".into(),
        ]
    );
    assert_lines_name_their_hops(&world, &input.hops);
    let Some(Hop::Write { write, .. }) = input.hops.last() else {
        panic!("no write last");
    };
    let image = write
        .after
        .as_deref()
        .and_then(|d| d.pointer("/spec/template/spec/containers/0/image"));
    assert_eq!(image, Some(&json!("nginx:does-not-exist")));
    assert!(matches!(&input.root, Root::Request { principal, time, .. }
        if principal == "alice" && *time == SimTime::from_ms(10_000)));
    assert!(matches!(&chain.root, Root::Request { principal, .. } if principal == "admin"));
}

/// feedback-loop, from its trace to 100ms: the naive controller patches spec from status every
/// 10ms (lines 29, 54, 84, ..., 142: ten patches, generation 1 -> 11). Its patch at 0.100s
/// (line 142) was queued by its watch (line 140) of rv 79, the Database controller's status
/// write at 0.095s (line 137), queued by that controller's watch (line 135) of rv 78, the
/// naive patch at 0.090s (line 134): a loop of four hops, round again for each patch down to
/// 0.030s (seven more times, the last reconcile at 0.025s). The patch at 0.020s (line 54) was
/// queued by rv 54, the status write at 0.015s (line 40), whose reconcile consumed four
/// deliveries: rv 48 (its own status write at 0.010s, an echo), rv 50 and 51 (the Deployment
/// controller's status writes of loop-db) and rv 53 (the naive patch at 0.010s); the chain
/// follows rv 50, the first that is not an echo: line 27, the Deployment controller's reconcile
/// of loop-db, queued by the ADDED of loop-db (rv 46), which the Database controller created
/// at 0.005s (line 19) for the admin's create of the Database at t=0 (line 10).
#[test]
fn the_feedback_loops_generation_bumps_reach_the_status_writes_that_fed_them() {
    let world = run(FEEDBACK_LOOP, "100ms");
    let key = ObjectKey::new(
        GroupResource::new("example.com", "databases"),
        "default",
        "loop",
    );
    let sh = shift(&world, &key, 44);
    let chain = why(&world, &key, "metadata.generation", None);
    assert_eq!(chain.value, json!(11));
    let naive = "system:serviceaccount:default:naive-controller";
    let db = "system:serviceaccount:converge-system:database-controller";
    let shapes: Vec<String> = chain.hops.iter().map(|h| shape(h, sh)).collect();
    assert_eq!(
        shapes,
        [
            format!("t=0.100s write patch databases default/loop 200 by {naive}"),
            "t=0.100s naive-controller reconcile loop via watch Modified loop rv=79".into(),
            format!("t=0.095s write update databases default/loop 200 by {db}"),
            "t=0.095s database-controller reconcile loop via watch Modified loop rv=78".into(),
            "repeat 4 x7".into(),
            format!("t=0.020s write patch databases default/loop 200 by {naive}"),
            "t=0.020s naive-controller reconcile loop via watch Modified loop rv=54".into(),
            format!("t=0.015s write update databases default/loop 200 by {db}"),
            "t=0.015s database-controller reconcile loop via watch Modified loop-db rv=50".into(),
            format!("t=0.010s write update deployments default/loop-db 200 by {DC}"),
            "t=0.010s deployment-controller reconcile loop-db via watch Added loop-db rv=46".into(),
            format!("t=0.005s write create deployments default/loop-db 201 by {db}"),
            "t=0.005s database-controller reconcile loop via watch Added loop rv=44".into(),
            "t=0.000s write create databases default/loop 201 by admin".into(),
        ]
    );
    assert_lines_name_their_hops(&world, &chain.hops);
    // The status writes are the status subresource's: they never bump generation themselves.
    let Hop::Write { write, .. } = &chain.hops[2] else {
        panic!("not a write");
    };
    assert_eq!(write.subresource, Some(crate::api::Subresource::Status));
    assert!(matches!(chain.hops[4], Hop::Repeat { until, .. } if until == SimTime::from_ms(25)));
    // At 0.015s the echo of its own write was the trigger and was passed over.
    let Hop::Reconcile {
        causes,
        trigger,
        via,
        ..
    } = &chain.hops[8]
    else {
        panic!("not a reconcile");
    };
    let rvs: Vec<u64> = causes
        .iter()
        .filter_map(|c| match c {
            Cause::Watch {
                resource_version, ..
            } => Some(*resource_version - sh.rv),
            _ => None,
        })
        .collect();
    assert_eq!(rvs, [48, 50, 51, 53]);
    assert_eq!((*trigger, *via), (0, 1));
    assert!(
        matches!(&chain.root, Root::Request { principal, line, .. } if principal == "admin"
            && world.trace()[*line as usize].contains("user:admin request -> create databases default/loop"))
    );
}

#[test]
fn bad_questions_are_refused_with_what_is_wrong() {
    let world = run(SCALE_UP, "20s");
    let path = FieldPath::parse("status.readyReplicas").unwrap();
    let err = world.why(&deployment("nope"), &path, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "deployments default/nope does not exist at t=20.000s"
    );
    let absent = FieldPath::parse("status.nothing").unwrap();
    let err = world.why(&deployment("web"), &absent, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "status.nothing is not set on deployments default/web at t=20.000s"
    );
    let err = world
        .why(&deployment("web"), &path, Some(SimTime::from_ms(25_000)))
        .unwrap_err();
    assert!(matches!(err, WhyError::Future { .. }), "{err}");
    // Before its create the object did not exist.
    let early = run(SCALE_UP, "20s");
    let pod_gr = GroupResource::new("", "pods");
    let first_pod = early
        .objects_of(&pod_gr, Some("default"))
        .next()
        .map(|(k, _)| k.clone())
        .unwrap();
    let err = early
        .why(
            &first_pod,
            &FieldPath::parse("metadata.name").unwrap(),
            Some(SimTime::ZERO),
        )
        .unwrap_err();
    assert!(matches!(err, WhyError::UnknownObject { .. }), "{err}");
}

/// Every reconcile of every gallery scenario was queued by something the engine recorded, and
/// every write the provenance holds changed what its record says it changed.
#[test]
fn every_reconcile_has_a_recorded_cause_in_every_gallery_scenario() {
    for entry in crate::scenario::gallery::GALLERY {
        let scenario = Scenario::load(entry.text).unwrap();
        let outcome = scenario.run(&RunOptions::default()).unwrap();
        let world = outcome.run.world();
        let prov = world.provenance();
        for rec in prov.reconciles() {
            assert!(
                !rec.causes.is_empty(),
                "{}: line {} has no cause",
                entry.id,
                rec.line + 1
            );
            assert!(
                rec.trigger < rec.causes.len(),
                "{}: line {}",
                entry.id,
                rec.line + 1
            );
            let line = &world.trace()[rec.line as usize];
            assert!(
                line.contains(&format!("{} reconcile", rec.controller)),
                "{}: {line}",
                entry.id
            );
            for c in &rec.causes {
                assert!(
                    c.line() <= rec.line,
                    "{}: a cause after its reconcile",
                    entry.id
                );
            }
        }
        for (key, _) in world.objects() {
            for w in prov.writes_of(key) {
                let line = &world.trace()[w.line as usize];
                assert!(
                    line.contains(&w.target()) || line.contains("event-ttl"),
                    "{}: {line} vs {}",
                    entry.id,
                    w.target()
                );
                // An event's write is its reconcile's too, sent after it by the broadcaster.
                if let Origin::Reconcile { line } = w.origin {
                    let rec = prov.reconcile(line).unwrap();
                    assert!(
                        rec.writes.contains(&w.resource_version) || w.key.gr.resource == "events",
                        "{}: {:?}",
                        entry.id,
                        w
                    );
                }
            }
        }
        // And `why` answers for every object's metadata.name.
        for (key, _) in world.objects() {
            let chain = why(world, key, "metadata.name", None);
            assert_eq!(chain.value, json!(key.name.as_str()));
        }
    }
}

fn written_condition(obj: &Value, type_: &str) -> Option<String> {
    let c = obj
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    Some(c["status"].as_str()?.to_owned())
}

/// For every write of a decided field in the gallery and a few more scenarios, the decision
/// the write carries (the latest explanation of that subject before it) says the value it
/// wrote: Deployment Available/Progressing, ReplicaSet counts, HPA conditions and
/// desiredReplicas.
#[test]
fn each_explanation_matches_the_decision_written() {
    let files = [
        SCALE_UP,
        BAD_IMAGE,
        include_str!("../../../../tests/scenarios/rolling-update.yaml"),
        include_str!("../../../../tests/scenarios/scale-down.yaml"),
        include_str!("../../../../tests/scenarios/autoscaler.yaml"),
    ];
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for text in files {
        let world = Scenario::load(text)
            .unwrap()
            .run(&RunOptions::default())
            .unwrap()
            .run
            .world()
            .clone();
        let prov = world.provenance();
        let keys: Vec<ObjectKey> = world.objects().map(|(k, _)| k.clone()).collect();
        for key in keys {
            for w in prov.writes_of(&key) {
                let Some(after) = w.after.as_deref() else {
                    continue;
                };
                if w.subresource != Some(crate::api::Subresource::Status) {
                    continue;
                }
                let explained = prov.explanations_of(w);
                let said = |subject: &str| {
                    explained
                        .iter()
                        .find(|e| e.subject == subject)
                        .map(|e| e.value.clone())
                };
                // A decision the write carries says what it wrote; a value the write changed
                // has a decision.
                let mut check = |subject: &str, written: Option<String>, before: Option<String>| {
                    if said(subject).is_none() && written == before {
                        return;
                    }
                    assert_eq!(said(subject), written, "{subject} of {key:?} at {}", w.time);
                    *checked.entry(subject.to_owned()).or_default() += 1;
                };
                let before = w.before.as_deref().unwrap_or(&Value::Null);
                match key.gr.resource.as_str() {
                    "deployments" => {
                        for c in ["Available", "Progressing"] {
                            check(c, written_condition(after, c), written_condition(before, c));
                        }
                    }
                    "replicasets" => {
                        for f in ["replicas", "readyReplicas", "availableReplicas"] {
                            let n = |o: &Value| {
                                let n = o.pointer(&format!("/status/{f}")).and_then(Value::as_i64);
                                Some(n.unwrap_or(0).to_string())
                            };
                            check(&format!("status.{f}"), n(after), n(before));
                        }
                    }
                    "horizontalpodautoscalers" => {
                        for c in ["AbleToScale", "ScalingActive", "ScalingLimited"] {
                            let cond = |o: &Value| {
                                o.pointer("/status/conditions")
                                    .and_then(Value::as_array)
                                    .and_then(|l| l.iter().find(|x| x["type"] == c))
                                    .map(|x| {
                                        format!(
                                            "{}/{}",
                                            x["status"].as_str().unwrap_or(""),
                                            x["reason"].as_str().unwrap_or("")
                                        )
                                    })
                            };
                            check(c, cond(after), cond(before));
                        }
                        let n = |o: &Value| {
                            o.pointer("/status/desiredReplicas")
                                .and_then(Value::as_i64)
                                .map(|n| n.to_string())
                        };
                        check("desiredReplicas", n(after), n(before));
                    }
                    _ => {}
                }
            }
        }
    }
    for subject in [
        "Available",
        "Progressing",
        "status.replicas",
        "status.readyReplicas",
        "status.availableReplicas",
        "AbleToScale",
        "ScalingActive",
        "ScalingLimited",
        "desiredReplicas",
    ] {
        assert!(
            checked.get(subject).copied().unwrap_or(0) > 0,
            "{subject} never checked: {checked:?}"
        );
    }
}

/// kstatus' explanation is its verdict, from the same computation, for every object of every
/// gallery scenario.
#[test]
fn the_kstatus_explanation_is_its_verdict() {
    let mut rules = std::collections::BTreeSet::new();
    for entry in crate::scenario::gallery::GALLERY {
        let world = Scenario::load(entry.text)
            .unwrap()
            .run(&RunOptions::default())
            .unwrap()
            .run
            .world()
            .clone();
        for (_, obj) in world.objects() {
            let now = world.now().unix_ms();
            let Ok(res) = crate::kstatus::compute(obj, now) else {
                continue;
            };
            let (again, why) = crate::kstatus::compute_explained(obj, now).unwrap();
            assert_eq!(again, res);
            assert_eq!(why.subject, "kstatus");
            assert_eq!(why.value, res.status.as_str());
            assert!(why.rule.ends_with(&res.message), "{}", why.rule);
            rules.insert(why.rule.split(':').next().unwrap_or("").to_owned());
        }
    }
    assert!(rules.contains("the apps/Deployment rule"), "{rules:?}");
}
