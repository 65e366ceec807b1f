//! A kubelet for one Node: runs the Pods bound to it through simulated image pulls, container
//! start and readiness, and reports Pod status the way kubelet's status generation does
//! [kubernetes pkg/kubelet/status/generate.go, kuberuntime]: phase, the PodReadyToStartContainers,
//! Initialized, ContainersReady and Ready conditions, container states with ContainerCreating,
//! ErrImagePull/ImagePullBackOff and CrashLoopBackOff (back-off 10 s doubling to 5 min).
//!
//! Like kubelet's status manager [kubernetes pkg/kubelet/status/status_manager.go], it keeps the
//! status it last reported per Pod and is the source of truth for the parts it owns (phase,
//! container statuses, and the PodScheduled, PodReadyToStartContainers, Initialized,
//! ContainersReady and Ready conditions): its own changes are written at once (`syncBatch` on
//! change), and a different status written by someone else is put back at the next periodic sync
//! (`syncBatch(all)` every 10 s, `needsReconcile`), keeping conditions kubelet does not own.
//! The 10 s ticks count from t=0 (every kubelet starts with the world).

use std::sync::Arc;

use imbl::OrdMap;
use rand::Rng;
use serde_json::{json, Value};

use super::util::pods;
use super::{Ctx, ImageBehaviour, ReconcileAction, ReconcileError, Reconciler};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{
    ApiRequest, GroupResource, ObjectKey, PatchType, RequestBody, StatusReason, Subresource, Verb,
    WatchEvent, WatchEventType,
};
use crate::conditions::{self, Cond};
use crate::runtime::Informer;
use crate::time::SimTime;

/// kubelet's initial image-pull and container-restart back-off.
pub const BACKOFF_INITIAL_MS: u64 = 10_000;
/// kubelet's maximum back-off (`MaxContainerBackOff`).
pub const BACKOFF_MAX_MS: u64 = 300_000;
/// How long ErrImagePull shows before the next sync reports ImagePullBackOff.
const ERR_IMAGE_PULL_VISIBLE_MS: u64 = 1_000;
/// A back-off entry older than this at a container's exit is forgotten, so a container that ran
/// for more than ten minutes restarts at once again (client-go `flowcontrol.Backoff` hasExpired:
/// `eventTime - lastUpdate > 2 * maxDuration`, the kubelet's `MaxContainerBackOff` of 5 min).
const BACKOFF_EXPIRY_MS: u64 = 2 * BACKOFF_MAX_MS;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// Pulling images until `until`.
    Pulling {
        until: SimTime,
    },
    /// The pull failed; ErrImagePull is shown until `until`, then ImagePullBackOff.
    PullFailed {
        until: SimTime,
    },
    /// Waiting out the image pull back-off.
    PullBackOff {
        until: SimTime,
    },
    Starting {
        until: SimTime,
    },
    Running {
        ready_at: SimTime,
        crash_at: Option<SimTime>,
    },
    Ready {
        crash_at: Option<SimTime>,
    },
    CrashBackOff {
        until: SimTime,
    },
    /// The pod is being deleted: preStop hooks run until `until`, then the containers stop on
    /// SIGTERM. `running` and `ready` are what they were when the kill began.
    Stopping {
        until: SimTime,
        running: bool,
        ready: bool,
    },
    /// Every container has stopped (at `finished`); the terminal status is reported and the pod
    /// deleted for good.
    Stopped {
        finished: SimTime,
        running: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct PodRuntime {
    stage: Stage,
    restarts: u64,
    /// The image-pull back-off (kubelet's `imageBackOff`).
    backoff_ms: u64,
    /// The container-restart back-off entry (kubelet's `backOff`, keyed per container): 0 while
    /// there is none, so the first exit restarts at once.
    crash_backoff_ms: u64,
    /// When that entry last moved (`Backoff.Next`'s `lastUpdate`).
    crash_backoff_at: SimTime,
    /// When the running container instance started.
    instance_started: SimTime,
    /// The last exited instance: (startedAt, finishedAt), for `lastState.terminated`.
    last_termination: Option<(SimTime, SimTime)>,
    pod_ip: String,
    /// The status last written (kubelet's cached status); None before the first write.
    reported: Option<Value>,
    /// When the periodic sync will put back a status someone else changed.
    status_sync_at: Option<SimTime>,
}

/// kubelet's status manager reconciles the API with its cached statuses this often.
pub const STATUS_SYNC_PERIOD_MS: u64 = 10_000;

/// Pod conditions kubelet owns [kubernetes pkg/kubelet/types/pod_status.go]. kube also lists
/// PodResizePending and PodResizeInProgress (and shares DisruptionTarget); Converge models none
/// of them.
fn kubelet_owned(condition_type: &str) -> bool {
    matches!(
        condition_type,
        "PodScheduled" | "PodReadyToStartContainers" | "Initialized" | "ContainersReady" | "Ready"
    )
}

/// A status with only the conditions kubelet owns, without their times: what `needsReconcile`
/// compares (`isPodStatusByKubeletEqual` checks a condition's status, reason and message).
fn owned_part(status: Option<&Value>) -> Value {
    let mut s = status.cloned().unwrap_or_else(|| json!({}));
    if let Some(list) = s.get_mut("conditions").and_then(Value::as_array_mut) {
        list.retain(|c| kubelet_owned(str_at(c, "/type")));
        for c in list.iter_mut().filter_map(Value::as_object_mut) {
            c.remove("lastTransitionTime");
            c.remove("lastProbeTime");
        }
    }
    s
}

/// The first periodic status sync at or after `now`.
fn next_status_sync(now: SimTime) -> SimTime {
    SimTime::from_ms(now.as_ms().div_ceil(STATUS_SYNC_PERIOD_MS) * STATUS_SYNC_PERIOD_MS)
}

#[derive(Clone, Debug)]
pub struct Kubelet {
    node: String,
    node_index: u32,
    pods: OrdMap<ObjectKey, PodRuntime>,
    next_ip: u32,
}

fn containers(pod: &Value) -> Vec<(String, String)> {
    pod.at("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        str_at(c, "/name").to_owned(),
                        str_at(c, "/image").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn next_backoff(current: u64) -> u64 {
    if current == 0 {
        BACKOFF_INITIAL_MS
    } else {
        (current * 2).min(BACKOFF_MAX_MS)
    }
}

impl Kubelet {
    pub fn new(node: &str, node_index: u32) -> Self {
        Kubelet {
            node: node.to_owned(),
            node_index,
            pods: OrdMap::new(),
            next_ip: 0,
        }
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    fn start(&mut self, pod: &Value, ctx: &mut Ctx<'_>) -> PodRuntime {
        self.next_ip += 1;
        let pod_ip = format!("10.244.{}.{}", self.node_index, (self.next_ip % 250) + 2);
        let pull = self.pull_ms(pod, ctx);
        PodRuntime {
            stage: Stage::Pulling {
                until: ctx.now.plus_ms(pull),
            },
            restarts: 0,
            backoff_ms: 0,
            crash_backoff_ms: 0,
            crash_backoff_at: ctx.now,
            instance_started: ctx.now,
            last_termination: None,
            pod_ip,
            reported: None,
            status_sync_at: None,
        }
    }

    fn pull_ms(&self, pod: &Value, ctx: &mut Ctx<'_>) -> u64 {
        let mut total = 0;
        for (_, image) in containers(pod) {
            total += match ctx.env.images.get(&image) {
                Some(ImageBehaviour::Ok { pull_ms }) => *pull_ms,
                _ => {
                    let t = &ctx.env.kubelet;
                    if t.pull_max_ms > t.pull_min_ms {
                        ctx.rng.random_range(t.pull_min_ms..=t.pull_max_ms)
                    } else {
                        t.pull_min_ms
                    }
                }
            };
        }
        total
    }

    fn failing_image(&self, pod: &Value, ctx: &Ctx<'_>) -> Option<String> {
        containers(pod).into_iter().map(|(_, i)| i).find(|i| {
            ctx.env.pull_failing_nodes.contains(&self.node)
                || matches!(ctx.env.images.get(i), Some(ImageBehaviour::PullFails))
        })
    }

    /// What the container runtime answers a failed pull of `image` with (containerd's CRI
    /// errors, with the reference normalised as containerd prints it): the image is not found,
    /// or, with the node's pulls failing, its registry cannot be reached.
    fn pull_error(&self, image: &str, ctx: &Ctx<'_>) -> String {
        let reference = normalized_image(image);
        if ctx.env.pull_failing_nodes.contains(&self.node)
            && !matches!(ctx.env.images.get(image), Some(ImageBehaviour::PullFails))
        {
            let (host, path, tag) = registry_parts(&reference);
            format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{reference}\": \
                 failed to resolve reference \"{reference}\": failed to do request: Head \
                 \"https://{host}/v2/{path}/manifests/{tag}\": dial tcp: lookup {host}: i/o timeout"
            )
        } else {
            format!(
                "rpc error: code = NotFound desc = failed to pull and unpack image \"{reference}\": \
                 failed to resolve reference \"{reference}\": {reference}: not found"
            )
        }
    }

    fn crash_after(&self, pod: &Value, ctx: &Ctx<'_>) -> Option<u64> {
        containers(pod)
            .iter()
            .find_map(|(_, i)| match ctx.env.images.get(i) {
                Some(ImageBehaviour::Crashes { run_ms }) => Some(*run_ms),
                _ => None,
            })
    }

    fn ready_delay_ms(pod: &Value, ctx: &Ctx<'_>) -> u64 {
        let probe_delay = pod
            .at("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.at("/readinessProbe/initialDelaySeconds"))
            .filter_map(Value::as_u64)
            .max();
        match probe_delay {
            Some(s) => s * 1000 + ctx.env.kubelet.ready_ms,
            None => ctx.env.kubelet.ready_ms,
        }
    }

    /// Advances the runtime through every transition due by `now`.
    fn advance(&self, rt: &mut PodRuntime, pod: &Value, ctx: &mut Ctx<'_>) {
        loop {
            let now = ctx.now;
            let next = match rt.stage.clone() {
                Stage::Pulling { until } if until <= now => {
                    if self.failing_image(pod, ctx).is_some() {
                        rt.backoff_ms = next_backoff(rt.backoff_ms);
                        Stage::PullFailed {
                            until: until.plus_ms(ERR_IMAGE_PULL_VISIBLE_MS),
                        }
                    } else {
                        rt.backoff_ms = 0;
                        Stage::Starting {
                            until: until.plus_ms(ctx.env.kubelet.start_ms),
                        }
                    }
                }
                Stage::PullFailed { until } if until <= now => Stage::PullBackOff {
                    until: until.plus_ms(rt.backoff_ms.saturating_sub(ERR_IMAGE_PULL_VISIBLE_MS)),
                },
                Stage::PullBackOff { until } if until <= now => {
                    let pull = self.pull_ms(pod, ctx);
                    Stage::Pulling {
                        until: until.plus_ms(pull),
                    }
                }
                Stage::Starting { until } if until <= now => self.run(rt, until, pod, ctx),
                Stage::CrashBackOff { until } if until <= now => {
                    // The back-off has passed: `doBackOff` calls `Backoff.Next` (doubling, up to
                    // 5 min) and the container starts again.
                    rt.crash_backoff_ms = next_backoff(rt.crash_backoff_ms);
                    rt.crash_backoff_at = until;
                    rt.restarts += 1;
                    self.run(rt, until, pod, ctx)
                }
                Stage::Running { ready_at, crash_at }
                    if crash_at.is_some_and(|c| c <= now && c <= ready_at) =>
                {
                    self.exited(rt, crash_at.unwrap_or(now), pod, ctx)
                }
                Stage::Running { ready_at, crash_at } if ready_at <= now => {
                    Stage::Ready { crash_at }
                }
                Stage::Ready { crash_at: Some(c) } if c <= now => self.exited(rt, c, pod, ctx),
                Stage::Stopping { until, running, .. } if until <= now => Stage::Stopped {
                    finished: until,
                    running,
                },
                _ => return,
            };
            rt.stage = next;
        }
    }

    /// The pod got a deletionTimestamp: kube's `SyncTerminatingPod` -> `killPod` ->
    /// `killContainer` [pkg/kubelet/kubelet.go, kuberuntime_container.go]. Each container's
    /// preStop hook runs within the grace period (`deletionGracePeriodSeconds`), then SIGTERM
    /// stops it; the simulated containers exit on SIGTERM (after the kubelet timing's
    /// `stop_ms`), with code 0.
    fn terminate(&self, rt: &mut PodRuntime, pod: &Value, ctx: &Ctx<'_>) {
        let now = ctx.now;
        if matches!(rt.stage, Stage::Stopping { .. } | Stage::Stopped { .. }) {
            return;
        }
        let running = matches!(rt.stage, Stage::Running { .. } | Stage::Ready { .. });
        let ready = matches!(rt.stage, Stage::Ready { .. });
        let grace_ms = pod
            .at("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            * 1000;
        // The hook is cut off when the grace period runs out; SIGTERM then stops the container
        // in `stop_ms` (the simulated containers never need SIGKILL).
        let stop_ms = if running {
            pre_stop_ms(pod).min(grace_ms) + ctx.env.kubelet.stop_ms
        } else {
            0
        };
        rt.stage = Stage::Stopping {
            until: now.plus_ms(stop_ms),
            running,
            ready,
        };
    }

    /// A container instance starts running at `at`.
    fn run(&self, rt: &mut PodRuntime, at: SimTime, pod: &Value, ctx: &Ctx<'_>) -> Stage {
        rt.instance_started = at;
        Stage::Running {
            ready_at: at.plus_ms(Self::ready_delay_ms(pod, ctx)),
            crash_at: self.crash_after(pod, ctx).map(|ms| at.plus_ms(ms)),
        }
    }

    /// The container exited at `at` (restartPolicy Always). kube's `doBackOff`
    /// [pkg/kubelet/kuberuntime/kuberuntime_manager.go]: `Backoff.IsInBackOffSince(key,
    /// finishedAt)` is false with no entry yet (or one expired), so `Backoff.Next` creates a 10 s
    /// entry and the container starts again at once; from the second exit on the entry holds it
    /// in CrashLoopBackOff for the entry's current length, counted from the exit.
    fn exited(&self, rt: &mut PodRuntime, at: SimTime, pod: &Value, ctx: &Ctx<'_>) -> Stage {
        rt.last_termination = Some((rt.instance_started, at));
        let expired = rt.crash_backoff_ms == 0
            || at.as_ms().saturating_sub(rt.crash_backoff_at.as_ms()) > BACKOFF_EXPIRY_MS;
        if expired {
            rt.crash_backoff_ms = BACKOFF_INITIAL_MS;
            rt.crash_backoff_at = at;
            rt.restarts += 1;
            self.run(rt, at, pod, ctx)
        } else {
            Stage::CrashBackOff {
                until: at.plus_ms(rt.crash_backoff_ms),
            }
        }
    }

    fn next_wake(rt: &PodRuntime) -> Option<SimTime> {
        match rt.stage {
            Stage::Pulling { until }
            | Stage::PullFailed { until }
            | Stage::PullBackOff { until }
            | Stage::Starting { until }
            | Stage::CrashBackOff { until }
            | Stage::Stopping { until, .. } => Some(until),
            Stage::Stopped { .. } => None,
            Stage::Running { ready_at, crash_at } => {
                Some(crash_at.map_or(ready_at, |c| c.min(ready_at)))
            }
            Stage::Ready { crash_at } => crash_at,
        }
    }

    /// The Pod status kubelet would report for this runtime state: built on the status it last
    /// reported (else the API's), with the API's conditions that kubelet does not own.
    fn status(&self, rt: &PodRuntime, pod: &Value, ctx: &Ctx<'_>) -> Value {
        let now = ctx.now;
        let api = pod.get("status");
        let mut status = match &rt.reported {
            Some(r) => {
                let mut base = r.clone();
                let foreign: Vec<Value> = api
                    .and_then(|s| s.get("conditions"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|c| !kubelet_owned(str_at(c, "/type")))
                    .cloned()
                    .collect();
                // kube's `mergePodStatus`: the conditions kubelet does not own come first.
                if let Some(list) = base.get_mut("conditions").and_then(Value::as_array_mut) {
                    list.retain(|c| kubelet_owned(str_at(c, "/type")));
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
            Stage::Stopped { running: true, .. } => "Succeeded",
            Stage::Stopped { running: false, .. } => "Failed",
            _ if started => "Running",
            _ => "Pending",
        };
        let image = self.failing_image(pod, ctx).unwrap_or_default();
        // The last exit, kept by the runtime [kuberuntime convertToAPIContainerStatuses]; a
        // ContainerState is a struct in k8s.io/api, so an empty one still prints as `{}`.
        let last_state = match rt.last_termination {
            Some((started, finished)) => json!({"terminated": {
                "exitCode": 1,
                "reason": "Error",
                "startedAt": started.rfc3339(),
                "finishedAt": finished.rfc3339(),
            }}),
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
                        "back-off {} restarting failed container={name} pod={}_{}({})",
                        go_duration(rt.crash_backoff_ms),
                        meta::name(pod),
                        meta::namespace(pod),
                        meta::uid(pod)
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
        statuses.sort_by(|a, b| str_at(a, "/name").cmp(str_at(b, "/name")));
        let unready: Vec<&str> = if ready {
            Vec::new()
        } else {
            names.iter().map(|(n, _)| n.as_str()).collect()
        };
        let not_ready_msg = format!("containers with unready status: [{}]", unready.join(" "));
        let sandbox = if matches!(rt.stage, Stage::Pulling { .. })
            && rt.restarts == 0
            && previous_statuses == 0
            || matches!(rt.stage, Stage::Stopped { .. })
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
                reason: "",
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
        status["containerStatuses"] = Value::Array(statuses);
        order_conditions(&mut status);
        status
    }
}

/// An image reference as containerd prints it, normalised like distribution/reference's
/// `ParseNormalizedNamed` + `TagNameOnly`: a name without a registry is on docker.io, a
/// one-part docker.io name is under `library/`, and no tag or digest means `:latest`.
pub fn normalized_image(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let (domain, rest) = match name.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first.to_owned(), rest.to_owned())
        }
        _ => ("docker.io".to_owned(), name.to_owned()),
    };
    let rest = if domain == "docker.io" && !rest.contains('/') {
        format!("library/{rest}")
    } else {
        rest
    };
    let last = rest.rsplit('/').next().unwrap_or_default();
    let tagged = last.contains(':');
    match digest {
        Some(d) => format!("{domain}/{rest}@{d}"),
        None if tagged => format!("{domain}/{rest}"),
        None => format!("{domain}/{rest}:latest"),
    }
}

/// The registry host, repository path and tag (or digest) of a normalised reference; Docker
/// Hub's registry host is registry-1.docker.io.
fn registry_parts(reference: &str) -> (String, String, String) {
    let (domain, rest) = reference
        .split_once('/')
        .unwrap_or(("docker.io", reference));
    let host = if domain == "docker.io" {
        "registry-1.docker.io".to_owned()
    } else {
        domain.to_owned()
    };
    let (path, tag) = match rest.split_once('@') {
        Some((p, d)) => (p.to_owned(), d.to_owned()),
        None => match rest.rsplit_once(':') {
            Some((p, t)) if !t.contains('/') => (p.to_owned(), t.to_owned()),
            _ => (rest.to_owned(), "latest".to_owned()),
        },
    };
    (host, path, tag)
}

/// kubelet orders conditions PodReadyToStartContainers, Initialized, Ready, ContainersReady,
/// PodScheduled.
fn order_conditions(status: &mut Value) {
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
                .position(|t| *t == str_at(c, "/type"))
                .unwrap_or(ORDER.len())
        });
    }
}

/// Go's `time.Duration` string for whole seconds and minutes (`10s`, `1m20s`, `5m0s`).
pub fn go_duration(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Reconciler for Kubelet {
    fn name(&self) -> String {
        format!("kubelet/{}", self.node)
    }

    fn principal(&self) -> String {
        crate::api::principals::kubelet(&self.node)
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == pods()
    }

    fn accepts(&self, _gr: &GroupResource, obj: &Value) -> bool {
        str_at(obj, "/spec/nodeName") == self.node
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.event_type == WatchEventType::Deleted {
            self.pods.remove(&ev.key);
            return Vec::new();
        }
        // Our own status writes come back as events: a sync is needed for a spec change, a new
        // deletionTimestamp, or when someone else changed the status kubelet owns (put back at
        // the periodic sync).
        let newly_deleting =
            meta::is_terminating(new) && old.is_some_and(|o| !meta::is_terminating(o));
        if !newly_deleting && old.is_some_and(|o| o.get("spec") == new.get("spec")) {
            let foreign = self.pods.get(&ev.key).is_some_and(|rt| {
                rt.reported.is_some()
                    && owned_part(rt.reported.as_ref()) != owned_part(new.get("status"))
            });
            if !foreign {
                return Vec::new();
            }
        }
        vec![ev.key.clone()]
    }

    fn reset(&mut self) {
        self.pods = OrdMap::new();
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(pod) = ctx.cache.get(key).cloned() else {
            self.pods.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        let mut rt = match self.pods.get(key) {
            Some(rt) => rt.clone(),
            None => self.start(&pod, ctx),
        };
        self.advance(&mut rt, &pod, ctx);
        if meta::is_terminating(&pod) {
            self.terminate(&mut rt, &pod, ctx);
            self.advance(&mut rt, &pod, ctx);
        }
        let status = self.status(&rt, &pod, ctx);
        let mut wake = Self::next_wake(&rt);
        let mut diverged = Some(&status) != pod.get("status");
        if diverged
            && rt.reported.as_ref() == Some(&status)
            && owned_part(Some(&status)) == owned_part(pod.get("status"))
        {
            // Someone else changed only what the status manager does not compare (a
            // condition's times): left alone, as kube's `needsReconcile` leaves it.
            diverged = false;
        } else if diverged && rt.reported.as_ref() == Some(&status) {
            // Only someone else's write differs from what kubelet reported: its status manager
            // writes the truth back at the next periodic sync.
            let due = *rt.status_sync_at.get_or_insert(next_status_sync(ctx.now));
            if due > ctx.now {
                wake = Some(wake.map_or(due, |w| w.min(due)));
                self.pods.insert(key.clone(), rt);
                return Ok(requeue(wake, ctx.now));
            }
        }
        rt.status_sync_at = None;
        if !diverged {
            rt.reported = Some(status.clone());
        }
        self.pods.insert(key.clone(), rt);
        if diverged {
            let req = ApiRequest {
                principal: self.principal(),
                verb: Verb::Patch,
                gr: pods(),
                namespace: key.namespace.clone(),
                name: key.name.clone(),
                subresource: Some(Subresource::Status),
                body: RequestBody::Patch(PatchType::Merge, json!({ "status": status })),
                label_selector: None,
            };
            match ctx.send(req) {
                Ok(_) => {
                    if let Some(rt) = self.pods.get_mut(key) {
                        rt.reported = Some(status);
                    }
                }
                Err(e) if e.reason == StatusReason::NotFound => {
                    self.pods.remove(key);
                    return Ok(ReconcileAction::AwaitChange);
                }
                Err(e) => return Err(e.into()),
            }
        }
        if matches!(
            self.pods.get(key).map(|r| &r.stage),
            Some(Stage::Stopped { .. })
        ) {
            return self.delete_stopped(key, &pod, ctx);
        }
        Ok(requeue(wake, ctx.now))
    }
}

impl Kubelet {
    /// The status manager's last step for a stopped pod [pkg/kubelet/status/status_manager.go
    /// syncPod, canBeDeleted]: once its terminal status is in the API, DELETE it with grace 0
    /// and a UID precondition (a pod of the same name created since is left alone).
    fn delete_stopped(
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

/// How long the pod's preStop hooks take, the longest container's: a `sleep` action
/// (`PodLifecycleSleepAction`, on in 1.32) or an exec of `sleep N` (as `sh -c "sleep N"` too);
/// other hooks (httpGet, other commands) take no simulated time.
fn pre_stop_ms(pod: &Value) -> u64 {
    pod.at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.at("/lifecycle/preStop"))
        .map(|hook| {
            if let Some(s) = hook.at("/sleep/seconds").and_then(Value::as_u64) {
                return s * 1000;
            }
            let words: Vec<&str> = hook
                .at("/exec/command")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .flat_map(str::split_whitespace)
                .collect();
            words
                .windows(2)
                .find(|w| w[0] == "sleep" || w[0].ends_with("/sleep"))
                .and_then(|w| w[1].parse::<u64>().ok())
                .map_or(0, |s| s * 1000)
        })
        .max()
        .unwrap_or(0)
}

fn requeue(wake: Option<SimTime>, now: SimTime) -> ReconcileAction {
    match wake {
        Some(t) => ReconcileAction::RequeueAfter {
            ms: t.as_ms().saturating_sub(now.as_ms()).max(1),
        },
        None => ReconcileAction::AwaitChange,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_loop_back_off_doubles_from_ten_seconds_to_five_minutes() {
        let mut b = 0;
        let seq: Vec<u64> = (0..7)
            .map(|_| {
                b = next_backoff(b);
                b / 1000
            })
            .collect();
        assert_eq!(seq, vec![10, 20, 40, 80, 160, 300, 300]);
    }

    /// distribution/reference's normalisation, as containerd prints references in its errors.
    #[test]
    fn image_references_are_normalised_as_containerd_prints_them() {
        for (image, reference) in [
            ("nginx", "docker.io/library/nginx:latest"),
            ("nginx:nope", "docker.io/library/nginx:nope"),
            ("example/crasher:1", "docker.io/example/crasher:1"),
            ("quay.io/org/app:v2", "quay.io/org/app:v2"),
            ("localhost/app", "localhost/app:latest"),
            ("registry:5000/app", "registry:5000/app:latest"),
            ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
        ] {
            assert_eq!(normalized_image(image), reference, "{image}");
        }
        assert_eq!(
            registry_parts("docker.io/library/nginx:1.27"),
            (
                "registry-1.docker.io".to_owned(),
                "library/nginx".to_owned(),
                "1.27".to_owned()
            )
        );
        assert_eq!(
            registry_parts("registry:5000/app:latest"),
            (
                "registry:5000".to_owned(),
                "app".to_owned(),
                "latest".to_owned()
            )
        );
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
    }
}
