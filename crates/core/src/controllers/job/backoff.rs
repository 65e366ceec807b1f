//! The Job controller's pod-failure back-off [kubernetes pkg/controller/job/backoff_utils.go]:
//! how many pods failed since the last success and when the last one finished, and how long a
//! replacement waits (10 s doubling per failure, capped at 10 min).

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::Value;

use crate::api::meta::{str_at, JsonPointer};
use crate::conditions;
use crate::time::parse_rfc3339_unix_ms;

/// `DefaultJobPodFailureBackOff`.
pub const POD_FAILURE_BACKOFF_MS: u64 = 10_000;
/// `MaxJobPodFailureBackOff`.
pub const MAX_POD_FAILURE_BACKOFF_MS: u64 = 600_000;

/// kube's `backoffRecord` for one Job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackoffRecord {
    pub failures_after_last_success: u32,
    /// When the last counted failure finished, in Unix ms.
    pub last_failure_unix_ms: Option<i64>,
}

impl BackoffRecord {
    /// `newBackoffRecord`: the stored record moved on by the pods newly seen finished.
    pub fn next(
        stored: Option<&BackoffRecord>,
        succeeded: &[Arc<Value>],
        failed: &[Arc<Value>],
    ) -> Self {
        let mut record = stored.copied().unwrap_or_default();
        let mut succeeded: Vec<i64> = succeeded.iter().map(|p| finished_unix_ms(p)).collect();
        let mut failed: Vec<i64> = failed.iter().map(|p| finished_unix_ms(p)).collect();
        succeeded.sort_unstable();
        failed.sort_unstable();
        match (succeeded.last(), failed.last()) {
            (None, None) => {}
            (None, Some(&last)) => {
                record.failures_after_last_success += failed.len() as u32;
                record.last_failure_unix_ms = Some(last);
            }
            (Some(_), None) => record = BackoffRecord::default(),
            (Some(&last_success), Some(_)) => {
                record = BackoffRecord::default();
                for &t in failed.iter().rev() {
                    if t <= last_success {
                        break;
                    }
                    record.last_failure_unix_ms.get_or_insert(t);
                    record.failures_after_last_success += 1;
                }
            }
        }
        record
    }

    /// `getRemainingTimeForFailuresCount`: how long a new pod still waits at `now_unix_ms`.
    pub fn remaining_ms(&self, now_unix_ms: i64) -> u64 {
        let Some(last) = self.last_failure_unix_ms else {
            return 0;
        };
        if self.failures_after_last_success == 0 {
            return 0;
        }
        let mut backoff = POD_FAILURE_BACKOFF_MS;
        for _ in 1..self.failures_after_last_success {
            backoff *= 2;
            if backoff >= MAX_POD_FAILURE_BACKOFF_MS {
                backoff = MAX_POD_FAILURE_BACKOFF_MS;
                break;
            }
        }
        let elapsed = now_unix_ms - last;
        if elapsed < 0 {
            return backoff;
        }
        backoff.saturating_sub(elapsed as u64)
    }
}

/// `getFinishedTime`: the last container's finish when every container has terminated, else
/// when Ready turned False, else the deletion's start, else the pod's creation.
pub fn finished_unix_ms(pod: &Value) -> i64 {
    let time = |ptr: &str| parse_rfc3339_unix_ms(str_at(pod, ptr));
    containers_finished(pod)
        .or_else(|| {
            pod.field("status")
                .and_then(|s| conditions::find_condition(s, "Ready"))
                .filter(|c| str_at(c, "/status") == "False")
                .and_then(|c| parse_rfc3339_unix_ms(str_at(c, "/lastTransitionTime")))
        })
        .or_else(|| {
            let grace = pod
                .at("/metadata/deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            time("/metadata/deletionTimestamp").map(|t| t - grace * 1000)
        })
        .or_else(|| time("/metadata/creationTimestamp"))
        .unwrap_or(0)
}

/// `getFinishTimeFromContainers` / `latestFinishTime`: none unless every container status is
/// terminated with a finish time.
fn containers_finished(pod: &Value) -> Option<i64> {
    let statuses = pod
        .at("/status/containerStatuses")
        .and_then(Value::as_array)?;
    let mut latest: Option<i64> = None;
    for c in statuses {
        let t = parse_rfc3339_unix_ms(str_at(c, "/state/terminated/finishedAt"))?;
        latest = Some(latest.map_or(t, |l| l.max(t)));
    }
    latest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn pod_finished_at(t: &str) -> Arc<Value> {
        Arc::new(json!({"status": {"containerStatuses": [
            {"state": {"terminated": {"finishedAt": t}}}
        ]}}))
    }

    #[test]
    fn the_delay_doubles_from_ten_seconds_to_ten_minutes() {
        let delays: Vec<u64> = (1..=8)
            .map(|n| {
                BackoffRecord {
                    failures_after_last_success: n,
                    last_failure_unix_ms: Some(0),
                }
                .remaining_ms(0)
                    / 1000
            })
            .collect();
        assert_eq!(delays, vec![10, 20, 40, 80, 160, 320, 600, 600]);
        let r = BackoffRecord {
            failures_after_last_success: 2,
            last_failure_unix_ms: Some(1_000),
        };
        assert_eq!(r.remaining_ms(6_000), 15_000);
        assert_eq!(r.remaining_ms(30_000), 0);
    }

    #[test]
    fn failures_count_from_the_last_success() {
        let failed = [
            pod_finished_at("2025-01-01T00:00:10Z"),
            pod_finished_at("2025-01-01T00:00:30Z"),
        ];
        let first = BackoffRecord::next(None, &[], &failed);
        assert_eq!(first.failures_after_last_success, 2);
        let success = [pod_finished_at("2025-01-01T00:00:20Z")];
        let mixed = BackoffRecord::next(Some(&first), &success, &failed);
        // Only the failure after the success counts.
        assert_eq!(mixed.failures_after_last_success, 1);
        assert_eq!(
            mixed.last_failure_unix_ms,
            parse_rfc3339_unix_ms("2025-01-01T00:00:30Z")
        );
        assert_eq!(
            BackoffRecord::next(Some(&first), &success, &[]),
            BackoffRecord::default()
        );
    }

    #[test]
    fn a_pod_still_running_a_container_finished_when_ready_went_false() {
        let pod = json!({
            "metadata": {"creationTimestamp": "2025-01-01T00:00:00Z"},
            "status": {
                "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2025-01-01T00:00:07Z"}],
                "containerStatuses": [{"state": {"running": {}}}],
            }
        });
        assert_eq!(
            Some(finished_unix_ms(&pod)),
            parse_rfc3339_unix_ms("2025-01-01T00:00:07Z")
        );
    }
}
