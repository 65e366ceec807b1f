//! Pod status as the kubelet generates and syncs it [pkg/kubelet/status/generate.go,
//! status_manager.go]: the status for a runtime state, the conditions kubelet owns and their
//! order, the periodic sync that puts back a status someone else changed, and deleting a
//! stopped pod once its terminal status is in the API.

use crate::json::path;
use crate::json::{json, Value};

use crate::api::meta::{self, json_eq, str_at, Fields};
use crate::api::{ApiRequest, ObjectKey, StatusReason};
use crate::conditions::{self, Cond};
use crate::controllers::util::pods;
use crate::runtime::{Ctx, ReconcileAction, ReconcileError, Reconciler};
use crate::time::SimTime;

use super::container_runtime::{containers, format_pod, PodRuntime, Stage, Termination};
use super::Kubelet;

/// kubelet's status manager reconciles the API with its cached statuses this often.
pub const STATUS_SYNC_PERIOD_MS: u64 = 10_000;

/// Pod conditions kubelet owns [kubernetes pkg/kubelet/types/pod_status.go]. kube also lists
/// PodResizePending and PodResizeInProgress (and shares DisruptionTarget); Converge models none
/// of them.
pub(super) fn kubelet_owned(condition_type: &str) -> bool {
    matches!(
        condition_type,
        "PodScheduled" | "PodReadyToStartContainers" | "Initialized" | "ContainersReady" | "Ready"
    )
}

/// Whether two statuses are equal in what `needsReconcile` compares
/// (`isPodStatusByKubeletEqual`): everything, but of the conditions only those kubelet owns and
/// without their times. Compares in place; `owned_part(a) == owned_part(b)` (a test keeps them
/// equal) without copying either status, since kubelet asks on every Pod event.
pub(super) fn owned_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    let empty = Value::Object(crate::json::Map::new());
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, va)| {
                    y.field(k).is_some_and(|vb| {
                        if k == "conditions" {
                            owned_conditions_equal(va, vb)
                        } else {
                            json_eq(va, vb)
                        }
                    })
                })
        }
        _ => json_eq(a, b),
    }
}

fn owned_conditions_equal(a: &Value, b: &Value) -> bool {
    let (Some(x), Some(y)) = (a.as_array(), b.as_array()) else {
        return a == b;
    };
    let owned = |c: &&Value| kubelet_owned(str_at(c, path!("/type")));
    let (mut xs, mut ys) = (x.iter().filter(owned), y.iter().filter(owned));
    loop {
        match (xs.next(), ys.next()) {
            (None, None) => return true,
            (Some(c), Some(d)) if condition_equal_but_times(c, d) => {}
            _ => return false,
        }
    }
}

fn condition_equal_but_times(c: &Value, d: &Value) -> bool {
    let (Some(x), Some(y)) = (c.as_object(), d.as_object()) else {
        return c == d;
    };
    let kept = |k: &crate::json::Key| k != "lastTransitionTime" && k != "lastProbeTime";
    x.keys().filter(|k| kept(k)).count() == y.keys().filter(|k| kept(k)).count()
        && x.iter()
            .filter(|(k, _)| kept(k))
            .all(|(k, v)| y.get(k) == Some(v))
}

/// A status with only the conditions kubelet owns, without their times: what `needsReconcile`
/// compares (`isPodStatusByKubeletEqual` checks a condition's status, reason and message).
/// [`owned_equal`] compares it in place.
#[cfg(test)]
pub(super) fn owned_part(status: Option<&Value>) -> Value {
    let mut s = status.cloned().unwrap_or_else(|| json!({}));
    if let Some(list) = s.get_mut("conditions").and_then(Value::as_array_mut) {
        list.retain(|c| kubelet_owned(str_at(c, path!("/type"))));
        for c in list.iter_mut().filter_map(Value::as_object_mut) {
            c.remove("lastTransitionTime");
            c.remove("lastProbeTime");
        }
    }
    s
}

/// The first periodic status sync at or after `now`.
pub(super) fn next_status_sync(now: SimTime) -> SimTime {
    SimTime::from_ms(now.as_ms().div_ceil(STATUS_SYNC_PERIOD_MS) * STATUS_SYNC_PERIOD_MS)
}

impl Kubelet {
    /// The Pod status kubelet would report for this runtime state: built on the status it last
    /// reported (else the API's), with the API's conditions that kubelet does not own.
    pub(super) fn status(&self, rt: &PodRuntime, pod: &Value, ctx: &Ctx<'_>) -> Value {
        let now = ctx.now;
        let api = pod.get("status");
        let mut status = match &rt.reported {
            Some(r) => {
                let mut base = r.status().clone();
                let foreign: Vec<Value> = api
                    .and_then(|s| s.get("conditions"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|c| !kubelet_owned(str_at(c, path!("/type"))))
                    .cloned()
                    .collect();
                // kube's `mergePodStatus`: the conditions kubelet does not own come first.
                if let Some(list) = base.get_mut("conditions").and_then(Value::as_array_mut) {
                    list.retain(|c| kubelet_owned(str_at(c, path!("/type"))));
                    let owned = std::mem::replace(list, foreign);
                    list.extend(owned);
                }
                base
            }
            None => api.cloned().unwrap_or_else(|| json!({})),
        };
        let names: Vec<(String, String)> = containers(pod);
        let started = !matches!(
            rt.stage,
            Stage::Pulling { .. }
                | Stage::PullFailed { .. }
                | Stage::PullBackOff { .. }
                | Stage::Starting { .. }
        ) || rt.restarts > 0;
        let ready = matches!(
            rt.stage,
            Stage::Ready { .. } | Stage::Stopping { ready: true, .. }
        );
        // `getPhase` for a terminal pod: Succeeded when every container exited 0.
        let phase = match rt.stage {
            Stage::Stopped { running: true, .. } | Stage::Exited { code: 0, .. } => "Succeeded",
            Stage::Stopped { running: false, .. } | Stage::Exited { .. } => "Failed",
            _ if started => "Running",
            _ => "Pending",
        };
        let image = self.failing_image(pod, ctx).unwrap_or_default();
        // The last exit, kept by the runtime [kuberuntime convertToAPIContainerStatuses]; a
        // ContainerState is a struct in k8s.io/api, so an empty one still prints as `{}`.
        let last_state = match rt.last_termination {
            Some(t) => t.state(),
            None => json!({}),
        };
        let state = |name: &str| -> Value {
            match &rt.stage {
                Stage::Pulling { .. } | Stage::Starting { .. } => {
                    json!({"waiting": {"reason": "ContainerCreating"}})
                }
                Stage::PullFailed { .. } => json!({"waiting": {
                    "reason": "ErrImagePull",
                    "message": self.pull_error(&image, ctx),
                }}),
                // Since 1.32 the message carries the last pull's error [kubernetes #127918,
                // pkg/kubelet/images/image_manager.go EnsureImageExists: `Back-off pulling image
                // %q: %s` with `ErrImagePull: <error>`].
                Stage::PullBackOff { .. } => json!({"waiting": {
                    "reason": "ImagePullBackOff",
                    "message": format!(
                        "Back-off pulling image \"{image}\": ErrImagePull: {}",
                        self.pull_error(&image, ctx)
                    ),
                }}),
                Stage::CrashBackOff { .. } => json!({"waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": format!(
                        "back-off {} restarting failed container={name} pod={}",
                        go_duration(rt.crash_backoff_ms),
                        format_pod(pod)
                    ),
                }}),
                Stage::Running { .. }
                | Stage::Ready { .. }
                | Stage::Stopping { running: true, .. } => {
                    json!({"running": {"startedAt": rt.instance_started.rfc3339()}})
                }
                Stage::Stopping { running: false, .. } => {
                    json!({"waiting": {"reason": "ContainerCreating"}})
                }
                Stage::Exited { finished, code } => Termination {
                    started: rt.instance_started,
                    finished: *finished,
                    code: *code,
                }
                .state(),
                Stage::Stopped {
                    finished,
                    running: true,
                } => json!({"terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": rt.instance_started.rfc3339(),
                    "finishedAt": finished.rfc3339(),
                }}),
                // The last exit, when the container had run before the kill.
                Stage::Stopped { running: false, .. } if rt.last_termination.is_some() => {
                    last_state.clone()
                }
                // Never started: what kubelet reports for a container it cannot find in a
                // terminal pod [kubelet_pods.go convertToAPIContainerStatuses].
                Stage::Stopped { running: false, .. } => json!({"terminated": {
                    "exitCode": 137,
                    "reason": "ContainerStatusUnknown",
                    "message": "The container could not be located when the pod was terminated",
                }}),
            }
        };
        let previous_statuses = status
            .get("containerStatuses")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        // Each in k8s.io/api core/v1 ContainerStatus field order, and sorted by container name
        // as kube's `SortedContainerStatuses` orders them.
        let mut statuses: Vec<Value> = names
            .iter()
            .map(|(name, image)| {
                json!({
                    "name": name,
                    "state": state(name),
                    "lastState": last_state,
                    "ready": ready,
                    "restartCount": rt.restarts,
                    "image": image,
                    "imageID": "",
                    "started": matches!(
                        rt.stage,
                        Stage::Running { .. } | Stage::Ready { .. } | Stage::Stopping { running: true, .. }
                    ),
                })
            })
            .collect();
        statuses.sort_by(|a, b| str_at(a, path!("/name")).cmp(str_at(b, path!("/name"))));
        let unready: Vec<&str> = if ready {
            Vec::new()
        } else {
            names.iter().map(|(n, _)| n.as_str()).collect()
        };
        let not_ready_msg = format!("containers with unready status: [{}]", unready.join(" "));
        let sandbox = if matches!(rt.stage, Stage::Pulling { .. })
            && rt.restarts == 0
            && previous_statuses == 0
            || matches!(rt.stage, Stage::Stopped { .. } | Stage::Exited { .. })
        {
            // No sandbox yet, or none any more once the pod has stopped.
            "False"
        } else {
            "True"
        };
        conditions::set_pod_condition(
            &mut status,
            Cond {
                type_: "PodReadyToStartContainers",
                status: sandbox,
                reason: "",
                message: "",
            },
            now,
        );
        conditions::set_pod_condition(
            &mut status,
            Cond {
                type_: "Initialized",
                status: "True",
                // `GeneratePodInitializedCondition`: a Succeeded pod is initialized because it
                // completed.
                reason: if phase == "Succeeded" {
                    "PodCompleted"
                } else {
                    ""
                },
                message: "",
            },
            now,
        );
        let (s, r, m) = if ready {
            ("True", "", "")
        } else if phase == "Succeeded" {
            // `generateContainersReadyConditionForTerminalPhase` [pkg/kubelet/status/generate.go].
            ("False", "PodCompleted", "")
        } else if phase == "Failed" {
            ("False", "PodFailed", "")
        } else {
            ("False", "ContainersNotReady", not_ready_msg.as_str())
        };
        conditions::set_pod_condition(
            &mut status,
            Cond {
                type_: "Ready",
                status: s,
                reason: r,
                message: m,
            },
            now,
        );
        conditions::set_pod_condition(
            &mut status,
            Cond {
                type_: "ContainersReady",
                status: s,
                reason: r,
                message: m,
            },
            now,
        );
        status["phase"] = json!(phase);
        let host_ip = format!("192.168.0.{}", self.node_index + 10);
        status["hostIP"] = json!(host_ip);
        status["hostIPs"] = json!([{ "ip": host_ip }]);
        status["podIP"] = json!(rt.pod_ip);
        status["podIPs"] = json!([{ "ip": rt.pod_ip }]);
        if status.get("startTime").is_none() {
            status["startTime"] = json!(now.rfc3339());
        }
        status["containerStatuses"] = Value::Array(statuses.into());
        order_conditions(&mut status);
        status
    }
}

/// kubelet orders conditions PodReadyToStartContainers, Initialized, Ready, ContainersReady,
/// PodScheduled.
pub(super) fn order_conditions(status: &mut Value) {
    const ORDER: [&str; 5] = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ];
    if let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        list.sort_by_key(|c| {
            ORDER
                .iter()
                .position(|t| *t == str_at(c, path!("/type")))
                .unwrap_or(ORDER.len())
        });
    }
}

/// A `time.Duration` truncated to milliseconds, as Go prints it (`1.234s`, `850ms`, `1m2.5s`).
pub fn go_duration(ms: u64) -> String {
    if ms == 0 {
        return "0s".into();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let (h, m, s, frac) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let secs = if frac == 0 {
        format!("{s}s")
    } else {
        format!("{s}.{}s", format!("{frac:03}").trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => secs,
        (0, m) => format!("{m}m{secs}"),
        (h, m) => format!("{h}h{m}m{secs}"),
    }
}

impl Kubelet {
    /// The status manager's last step for a stopped pod [pkg/kubelet/status/status_manager.go
    /// syncPod, canBeDeleted]: once its terminal status is in the API, DELETE it with grace 0
    /// and a UID precondition (a pod of the same name created since is left alone).
    pub(super) fn delete_stopped(
        &mut self,
        key: &ObjectKey,
        pod: &Value,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let req = ApiRequest::delete_with_options(
            &self.principal(),
            pods(),
            &key.namespace,
            &key.name,
            json!({"gracePeriodSeconds": 0, "preconditions": {"uid": meta::uid(pod)}}),
        );
        match ctx.send(req) {
            Ok(_) => Ok(ReconcileAction::AwaitChange),
            Err(e) if matches!(e.reason, StatusReason::NotFound | StatusReason::Conflict) => {
                self.pods.remove(key);
                Ok(ReconcileAction::AwaitChange)
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_equal_agrees_with_comparing_owned_parts() {
        let cond = |t: &str, st: &str, at: &str| json!({"type": t, "status": st, "lastTransitionTime": at});
        let statuses = [
            None,
            Some(json!({})),
            Some(json!(null)),
            Some(json!({"phase": "Running"})),
            Some(json!({"phase": "Running", "conditions": [cond("Ready", "True", "a")]})),
            Some(json!({"phase": "Running", "conditions": [cond("Ready", "True", "b")]})),
            Some(json!({"phase": "Running", "conditions": [cond("Ready", "False", "a")]})),
            Some(
                json!({"phase": "Running", "conditions": [cond("Ready", "True", "a"), cond("Custom", "True", "a")]}),
            ),
            Some(
                json!({"phase": "Running", "conditions": [cond("Custom", "False", "c"), cond("Ready", "True", "b")]}),
            ),
            Some(json!({"phase": "Running", "conditions": []})),
            Some(json!({"phase": "Running", "conditions": "odd"})),
            Some(json!({"conditions": [cond("Ready", "True", "a")], "phase": "Running"})),
            Some(json!({"phase": "Pending", "conditions": [cond("Ready", "True", "a")]})),
            Some(
                json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "reason": "x"}]}),
            ),
        ];
        for a in &statuses {
            for b in &statuses {
                assert_eq!(
                    owned_equal(a.as_ref(), b.as_ref()),
                    owned_part(a.as_ref()) == owned_part(b.as_ref()),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn periodic_status_syncs_fall_on_ten_second_ticks() {
        assert_eq!(next_status_sync(SimTime::from_ms(41_005)).as_ms(), 50_000);
        assert_eq!(next_status_sync(SimTime::from_ms(50_000)).as_ms(), 50_000);
    }

    #[test]
    fn durations_print_like_go() {
        assert_eq!(go_duration(10_000), "10s");
        assert_eq!(go_duration(80_000), "1m20s");
        assert_eq!(go_duration(300_000), "5m0s");
        assert_eq!(go_duration(1_234), "1.234s");
        assert_eq!(go_duration(1_500), "1.5s");
        assert_eq!(go_duration(850), "850ms");
        assert_eq!(go_duration(62_500), "1m2.5s");
        assert_eq!(go_duration(3_600_000), "1h0m0s");
        assert_eq!(go_duration(0), "0s");
    }
}
