//! Properties of the simulated Job controller over generated Jobs (completions, parallelism,
//! backoffLimit, restart policy, an image that exits 0 or 1 after a while): sampled as the
//! cluster runs, the Job's status never claims more ready pods than exist or more finished pods
//! than were created; in the end every Job is Complete or Failed, with nothing left uncounted,
//! nothing terminating and no pod still holding the tracking finalizer.

use converge_core::api::{ApiRequest, GroupResource, ObjectKey};
use converge_core::controllers::ImageBehaviour;
use converge_core::engine::{ClusterConfig, Input, World};
use converge_core::json::{json, Value};
use proptest::prelude::*;

fn jobs() -> GroupResource {
    GroupResource::new("batch", "jobs")
}

fn job_pods(w: &World) -> Vec<Value> {
    w.objects()
        .filter(|(k, _)| k.gr.resource == "pods")
        .map(|(_, p)| p.as_ref().clone())
        .filter(|p| p.pointer("/metadata/labels/job-name") == Some(&json!("j")))
        .collect()
}

fn created_pods(w: &World) -> usize {
    w.trace()
        .iter()
        .filter(|l| l.contains("job-controller reconcile"))
        .map(|l| l.matches("create pods default/j-").count())
        .sum()
}

fn int(v: &Value, ptr: &str) -> i64 {
    v.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn holds(job: &Value, t: &str) -> Option<String> {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == t && c["status"] == "True")
        .map(|c| c["reason"].as_str().unwrap_or("").to_owned())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn job_status_stays_within_what_exists_and_every_job_finishes(
        seed in 1u64..1_000,
        completions in 1i64..4,
        parallelism in 1i64..3,
        backoff_limit in 0i64..3,
        never in any::<bool>(),
        exits_zero in any::<bool>(),
        run_ms in 500u64..4_000,
    ) {
        let mut config = ClusterConfig { seed, ..ClusterConfig::default() };
        let behaviour = if exits_zero {
            ImageBehaviour::Completes { run_ms }
        } else {
            ImageBehaviour::Crashes { run_ms }
        };
        config.env.images.insert("work:1".into(), behaviour);
        let mut w = World::new(config);
        let job = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {
                "completions": completions, "parallelism": parallelism, "backoffLimit": backoff_limit,
                "template": {"spec": {
                    "restartPolicy": if never { "Never" } else { "OnFailure" },
                    "containers": [{"name": "main", "image": "work:1",
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                }},
            },
        });
        let r = w.apply(Input::Request { request: ApiRequest::create("alice", jobs(), "default", job) });
        prop_assert_eq!(r.events[0].requests[0].code, 201);
        let key = ObjectKey::new(jobs(), "default", "j");
        for _ in 0..200 {
            w.advance(2_000);
            let job = w.object(&key).cloned().unwrap_or_default();
            let pods = job_pods(&w);
            prop_assert!(
                int(&job, "/status/ready") <= pods.len() as i64,
                "ready {} with {} pods", int(&job, "/status/ready"), pods.len()
            );
            let finished = int(&job, "/status/succeeded") + int(&job, "/status/failed");
            prop_assert!(
                finished <= created_pods(&w) as i64,
                "{} finished of {} created", finished, created_pods(&w)
            );
            prop_assert!(int(&job, "/status/active") <= parallelism);
            if holds(&job, "Complete").is_some() || holds(&job, "Failed").is_some() {
                break;
            }
        }
        let job = w.object(&key).cloned().unwrap_or_default();
        match (holds(&job, "Complete"), holds(&job, "Failed")) {
            (Some(reason), None) => {
                prop_assert_eq!(reason, "CompletionsReached");
                prop_assert!(int(&job, "/status/succeeded") >= completions);
                prop_assert!(exits_zero);
            }
            (None, Some(reason)) => {
                prop_assert_eq!(reason, "BackoffLimitExceeded");
                prop_assert!(!exits_zero);
            }
            other => prop_assert!(false, "the Job did not finish: {:?}\n{}", other, job),
        }
        prop_assert_eq!(&job["status"]["uncountedTerminatedPods"], &json!({}));
        prop_assert_eq!(int(&job, "/status/terminating"), 0);
        // One batch period later every pod's finalizer is off.
        w.advance(2_000);
        for p in job_pods(&w) {
            let fins = p.pointer("/metadata/finalizers").cloned().unwrap_or(json!([]));
            prop_assert!(!fins.to_string().contains("job-tracking"), "{}", p);
        }
    }
}
