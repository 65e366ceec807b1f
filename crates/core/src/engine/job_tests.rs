//! The Job controller, each test worked by hand from kube 1.32's pkg/controller/job: what the
//! Job's status, conditions, pods and Events are after a run (the trace snapshot of the first
//! is in `snapshots/job_completes.trace`).

use crate::json::{json, Value};
use expect_test::expect_file;

use super::script::create_as;
use super::world::{Input, World};
use crate::api::meta::{self, str_at};
use crate::api::{ApiRequest, GroupResource, ObjectKey};
use crate::controllers::util::{jobs, pods};
use crate::controllers::ImageBehaviour;
use crate::engine::ClusterConfig;
use crate::time::parse_rfc3339_unix_ms;

fn job(name: &str, image: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["template"] = json!({
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": image}],
        }
    });
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    })
}

fn world(images: &[(&str, ImageBehaviour)]) -> World {
    let mut config = ClusterConfig::default();
    for (image, b) in images {
        config.env.images.insert((*image).into(), b.clone());
    }
    World::new(config)
}

fn the_job(w: &World, name: &str) -> Value {
    w.object(&ObjectKey::new(jobs(), "default", name))
        .cloned()
        .unwrap_or_default()
}

fn job_pods(w: &World, name: &str) -> Vec<Value> {
    let mut out: Vec<Value> = w
        .objects()
        .filter(|(k, _)| k.gr == pods())
        .map(|(_, p)| p.as_ref().clone())
        .filter(|p| str_at(p, "/metadata/labels/job-name") == name)
        .collect();
    out.sort_by_key(|p| str_at(p, "/metadata/creationTimestamp").to_owned());
    out
}

/// (type, status, reason, message) of each condition, in order.
fn conditions(job: &Value) -> Vec<(String, String, String, String)> {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                str_at(c, "/type").into(),
                str_at(c, "/status").into(),
                str_at(c, "/reason").into(),
                str_at(c, "/message").into(),
            )
        })
        .collect()
}

fn cond(t: &str, reason: &str, message: &str) -> (String, String, String, String) {
    (t.into(), "True".into(), reason.into(), message.into())
}

/// (reason, message) of every Event about the Job, oldest first.
fn job_events(w: &World, name: &str) -> Vec<(String, String)> {
    let mut evs: Vec<&Value> = w
        .objects()
        .filter(|(k, _)| k.gr == GroupResource::events())
        .map(|(_, e)| e.as_ref())
        .filter(|e| {
            str_at(e, "/involvedObject/kind") == "Job" && str_at(e, "/involvedObject/name") == name
        })
        .collect();
    evs.sort_by_key(|e| str_at(e, "/firstTimestamp").to_owned());
    evs.iter()
        .map(|e| (str_at(e, "/reason").into(), str_at(e, "/message").into()))
        .collect()
}

fn unix(v: &Value, ptr: &str) -> i64 {
    parse_rfc3339_unix_ms(str_at(v, ptr)).unwrap_or_else(|| panic!("no time at {ptr} in {v}"))
}

const DONE: &str = "Reached expected number of succeeded pods";

#[test]
fn a_job_whose_pod_exits_zero_completes() {
    let mut w = world(&[("batch:1", ImageBehaviour::Completes { run_ms: 5_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job("pi", "batch:1", json!({})),
    ));
    w.advance(60_000);
    let j = the_job(&w, "pi");
    // SetDefaults_Job and generateSelector.
    assert_eq!(j["spec"]["completions"], 1);
    assert_eq!(j["spec"]["parallelism"], 1);
    assert_eq!(j["spec"]["backoffLimit"], 6);
    assert_eq!(j["spec"]["completionMode"], "NonIndexed");
    assert_eq!(j["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
    let uid = meta::uid(&j).to_owned();
    assert_eq!(
        j["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(j["metadata"]["labels"]["job-name"], "pi");
    assert_eq!(
        j["spec"]["template"]["metadata"]["labels"]["controller-uid"],
        uid
    );
    // SuccessCriteriaMet, then Complete with the same reason; completionTime is Complete's.
    assert_eq!(
        conditions(&j),
        vec![
            cond("SuccessCriteriaMet", "CompletionsReached", DONE),
            cond("Complete", "CompletionsReached", DONE),
        ]
    );
    let status = &j["status"];
    assert_eq!(status["succeeded"], 1);
    assert_eq!(status.get("active"), None, "active is omitempty");
    assert_eq!(
        (status["ready"].clone(), status["terminating"].clone()),
        (json!(0), json!(0))
    );
    assert_eq!(status["uncountedTerminatedPods"], json!({}));
    assert_eq!(
        status["completionTime"],
        status["conditions"][1]["lastTransitionTime"]
    );
    // The pod stays, Succeeded and without the tracking finalizer.
    let ps = job_pods(&w, "pi");
    assert_eq!(ps.len(), 1);
    assert_eq!(str_at(&ps[0], "/status/phase"), "Succeeded");
    assert_eq!(ps[0]["metadata"].get("finalizers"), None);
    assert!(meta::name(&ps[0]).starts_with("pi-"));
    assert_eq!(
        ps[0]["metadata"]["ownerReferences"][0]["kind"],
        json!("Job")
    );
    // Completion is seen one batch period after the pod's last update, at the earliest.
    let finished = unix(
        &ps[0],
        "/status/containerStatuses/0/state/terminated/finishedAt",
    );
    assert!(unix(&j, "/status/completionTime") >= finished + 1_000);
    let pod_name = meta::name(&ps[0]).to_owned();
    assert_eq!(
        job_events(&w, "pi"),
        vec![
            (
                "SuccessfulCreate".into(),
                format!("Created pod: {pod_name}")
            ),
            ("Completed".into(), "Job completed".into()),
        ]
    );
    expect_file!["snapshots/job_completes.trace"].assert_eq(&w.trace_text());
}

#[test]
fn the_finishing_sync_writes_uncounted_then_removes_the_finalizer_then_counts() {
    let mut w = world(&[("batch:1", ImageBehaviour::Completes { run_ms: 5_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job("pi", "batch:1", json!({})),
    ));
    w.advance(60_000);
    // trackJobStatusAndRemoveFinalizers: PUT status (uncounted + SuccessCriteriaMet), PATCH the
    // pod, PUT status (counted + Complete), all in one reconcile.
    let line = w
        .trace()
        .iter()
        .find(|l| l.contains("job-controller reconcile") && l.contains("patch pods"))
        .map(|l| l.to_string())
        .expect("a reconcile that removes the finalizer");
    let writes: Vec<&str> = line
        .split("-> ")
        .nth(1)
        .unwrap_or("")
        .split(", ")
        .map(|w| w.rsplit_once(' ').map_or(w, |(a, _)| a))
        .collect();
    let pod = job_pods(&w, "pi").remove(0);
    assert_eq!(
        writes,
        vec![
            "update jobs/status default/pi".to_owned(),
            format!("patch pods default/{}", meta::name(&pod)),
            "update jobs/status default/pi".to_owned(),
        ]
    );
}

#[test]
fn failures_past_the_backoff_limit_fail_the_job_after_backing_off() {
    let mut w = world(&[("crash:1", ImageBehaviour::Crashes { run_ms: 2_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job("flaky", "crash:1", json!({"backoffLimit": 2})),
    ));
    w.advance(300_000);
    let j = the_job(&w, "flaky");
    let reason = "BackoffLimitExceeded";
    let message = "Job has reached the specified backoff limit";
    assert_eq!(
        conditions(&j),
        vec![
            cond("FailureTarget", reason, message),
            cond("Failed", reason, message)
        ]
    );
    // failed > backoffLimit: three pods failed; a Failed Job has no completionTime.
    assert_eq!(j["status"]["failed"], 3);
    assert_eq!(j["status"].get("completionTime"), None);
    assert_eq!(j["status"].get("succeeded"), None);
    let ps = job_pods(&w, "flaky");
    assert_eq!(ps.len(), 3);
    for p in &ps {
        assert_eq!(str_at(p, "/status/phase"), "Failed");
    }
    // Each replacement waits 10 s, then 20 s, after the last failure's finishedAt.
    let finish = |p: &Value| unix(p, "/status/containerStatuses/0/state/terminated/finishedAt");
    let created = |p: &Value| unix(p, "/metadata/creationTimestamp");
    assert_eq!(created(&ps[1]) - finish(&ps[0]), 10_000);
    assert_eq!(created(&ps[2]) - finish(&ps[1]), 20_000);
    let events = job_events(&w, "flaky");
    assert_eq!(events.last(), Some(&(reason.into(), message.into())));
    assert_eq!(
        events
            .iter()
            .filter(|(r, _)| r == "SuccessfulCreate")
            .count(),
        3
    );
}

#[test]
fn an_active_deadline_fails_the_job_and_deletes_its_running_pod() {
    let mut w = world(&[("slow:1", ImageBehaviour::Completes { run_ms: 120_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job("slow", "slow:1", json!({"activeDeadlineSeconds": 10})),
    ));
    // startTime reads back at second resolution, so the deadline falls 10 s after its second.
    w.advance(9_900);
    assert!(
        conditions(&the_job(&w, "slow")).is_empty(),
        "not before the deadline"
    );
    w.advance(50_000);
    let j = the_job(&w, "slow");
    let reason = "DeadlineExceeded";
    let message = "Job was active longer than specified deadline";
    assert_eq!(
        conditions(&j),
        vec![
            cond("FailureTarget", reason, message),
            cond("Failed", reason, message)
        ]
    );
    // The deadline counts from startTime: FailureTarget comes exactly 10 s later.
    assert_eq!(
        unix(&j, "/status/conditions/0/lastTransitionTime") - unix(&j, "/status/startTime"),
        10_000
    );
    // The deleted pod counts as failed (isPodFailed: deleted before it succeeded).
    assert_eq!(j["status"]["failed"], 1);
    assert_eq!(j["status"]["terminating"], 0);
    let events: Vec<String> = job_events(&w, "slow").into_iter().map(|(r, _)| r).collect();
    assert_eq!(events, vec!["SuccessfulCreate", "SuccessfulDelete", reason]);
    assert!(job_pods(&w, "slow").is_empty(), "the killed pod is gone");
}

#[test]
fn parallelism_bounds_the_active_pods_until_completions_succeed() {
    let mut w = world(&[("batch:1", ImageBehaviour::Completes { run_ms: 3_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job(
            "work",
            "batch:1",
            json!({"completions": 5, "parallelism": 2}),
        ),
    ));
    let mut most_active = 0;
    for _ in 0..120 {
        w.advance(1_000);
        let active = job_pods(&w, "work")
            .iter()
            .filter(|p| !matches!(str_at(p, "/status/phase"), "Succeeded" | "Failed"))
            .count();
        most_active = most_active.max(active);
    }
    assert_eq!(most_active, 2);
    let j = the_job(&w, "work");
    assert_eq!(j["status"]["succeeded"], 5);
    assert_eq!(conditions(&j)[1].0, "Complete");
    assert_eq!(job_pods(&w, "work").len(), 5);
}

#[test]
fn restart_policy_always_is_refused_as_kube_refuses_it() {
    let mut w = world(&[]);
    let mut j = job("bad", "batch:1", json!({}));
    j["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("restartPolicy");
    let r = w.apply(create_as("alice", jobs(), "default", j));
    let req = &r.events[0].requests[0];
    assert_eq!(req.code, 422);
    assert!(
        req.message.contains(
            "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
        ),
        "{}",
        req.message
    );
}

#[test]
fn deleting_a_job_without_a_policy_orphans_its_pods_and_frees_their_finalizers() {
    let mut w = world(&[("slow:1", ImageBehaviour::Completes { run_ms: 120_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job("slow", "slow:1", json!({})),
    ));
    w.advance(5_000);
    assert_eq!(job_pods(&w, "slow").len(), 1);
    let r = w.apply(Input::Request {
        request: ApiRequest::delete("alice", jobs(), "default", "slow"),
    });
    assert_eq!(r.events[0].requests[0].code, 200);
    w.advance(5_000);
    // batch/v1's default garbage-collection policy orphans; the orphan sync takes the finalizer.
    let ps = job_pods(&w, "slow");
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0]["metadata"].get("ownerReferences"), None);
    assert_eq!(ps[0]["metadata"].get("finalizers"), None);
    assert_eq!(str_at(&ps[0], "/status/phase"), "Running");
}

#[test]
fn a_suspended_job_deletes_its_pods_and_says_so() {
    let mut w = world(&[("slow:1", ImageBehaviour::Completes { run_ms: 120_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job("slow", "slow:1", json!({})),
    ));
    w.advance(5_000);
    let patch = ApiRequest::patch(
        "alice",
        jobs(),
        "default",
        "slow",
        crate::api::PatchType::Merge,
        json!({"spec": {"suspend": true}}),
    );
    w.apply(Input::Request { request: patch });
    w.advance(10_000);
    let j = the_job(&w, "slow");
    assert_eq!(
        conditions(&j),
        vec![cond("Suspended", "JobSuspended", "Job suspended")]
    );
    assert_eq!(j["status"].get("active"), None);
    assert!(job_pods(&w, "slow").is_empty());
    let events: Vec<String> = job_events(&w, "slow").into_iter().map(|(r, _)| r).collect();
    assert_eq!(
        events,
        vec!["SuccessfulCreate", "SuccessfulDelete", "Suspended"]
    );
}

#[test]
fn kube_1_32_refuses_the_back_off_status_with_ready_pods_above_active() {
    // parallelism 2, pods that fail 1 s after they start: the first fails while the second
    // (pulled later) is ready. While the replacement waits out the back-off, manageJob reports
    // 0 active with 1 ready, and 1.32's status strategy (RejectMoreReadyThanActivePods) refuses
    // that write (kubernetes#139428): the sync fails and is retried. The Job still ends Failed.
    let mut w = world(&[("crash:1", ImageBehaviour::Crashes { run_ms: 1_000 })]);
    w.apply(create_as(
        "alice",
        jobs(),
        "default",
        job(
            "pair",
            "crash:1",
            json!({"completions": 2, "parallelism": 2, "backoffLimit": 3}),
        ),
    ));
    w.advance(300_000);
    let refused: Vec<String> = w
        .trace()
        .iter()
        .filter(|l| {
            l.contains("job-controller reconcile")
                && l.contains("update jobs/status default/pair 422")
        })
        .map(|l| l.to_string())
        .collect();
    assert!(!refused.is_empty(), "no refused back-off write");
    assert!(
        refused[0].contains("cannot set more ready pods than active"),
        "{}",
        refused[0]
    );
    let j = the_job(&w, "pair");
    assert_eq!(
        conditions(&j).last().map(|c| c.2.clone()),
        Some("BackoffLimitExceeded".to_owned())
    );
    assert_eq!(j["status"]["failed"], 4);
}

#[test]
fn a_selector_other_than_the_generated_one_is_refused() {
    let mut w = world(&[]);
    let mut j = job(
        "pick",
        "batch:1",
        json!({"selector": {"matchLabels": {"app": "x"}}}),
    );
    j["spec"]["template"]["metadata"] = json!({"labels": {"app": "x"}});
    let r = w.apply(create_as("alice", jobs(), "default", j));
    let req = &r.events[0].requests[0];
    assert_eq!(req.code, 422);
    assert!(
        req.message.contains("spec.selector: Invalid value: "),
        "{}",
        req.message
    );
    assert!(
        req.message.contains("`selector` not auto-generated"),
        "{}",
        req.message
    );
}
