//! The simulated container runtime under one kubelet [pkg/kubelet/kuberuntime]: image pulls
//! and their errors as containerd reports them, container start, readiness, exits with the
//! CrashLoopBackOff back-off, and termination with preStop hooks.

use crate::api::meta::Fields;
use crate::json::path;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::Value;
use rand::Rng;

use crate::api::meta::{str_at, JsonPointer};
use crate::runtime::{Ctx, EventNote, EventType, ImageBehaviour, ObjectRef};
use crate::time::SimTime;

use super::prober::{self, Probe};
use super::status::go_duration;
use super::{
    Kubelet, BACKOFF_EXPIRY_MS, BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, ERR_IMAGE_PULL_VISIBLE_MS,
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Stage {
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
    /// The container runs; it is ready at `ready_at` (without a readiness probe) or when its
    /// probe says so (`prober`), and exits at `exit_at` if its image exits (with
    /// `PodRuntime::exit_code`).
    Running {
        ready_at: Option<SimTime>,
        exit_at: Option<SimTime>,
    },
    Ready {
        exit_at: Option<SimTime>,
    },
    /// The container exited at `finished` with `code` and its restart policy does not restart
    /// it: the pod is terminal (Succeeded or Failed) and stays until someone deletes it.
    Exited {
        finished: SimTime,
        code: i32,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct PodRuntime {
    pub(super) stage: Stage,
    /// Each container's pull time in the current (or last) pull, in container order.
    pub(super) pulls: Vec<u64>,
    pub(super) restarts: u64,
    /// The image-pull back-off (kubelet's `imageBackOff`).
    pub(super) backoff_ms: u64,
    /// The container-restart back-off entry (kubelet's `backOff`, keyed per container): 0 while
    /// there is none, so the first exit restarts at once.
    pub(super) crash_backoff_ms: u64,
    /// When that entry last moved (`Backoff.Next`'s `lastUpdate`).
    pub(super) crash_backoff_at: SimTime,
    /// When the running container instance started.
    pub(super) instance_started: SimTime,
    /// The code the running instance exits with, if its image exits.
    pub(super) exit_code: i32,
    /// The last exited instance that was restarted, for `lastState.terminated`.
    pub(super) last_termination: Option<Termination>,
    pub(super) pod_ip: String,
    /// The status last written (kubelet's cached status); None before the first write.
    pub(super) reported: Option<Reported>,
    /// When the periodic sync will put back a status someone else changed.
    pub(super) status_sync_at: Option<SimTime>,
    /// The readiness probe's worker, for a pod with a readiness probe.
    pub(super) probe: Option<Probe>,
}

/// kubelet's cached status: a Pod whose `status` is exactly the status last written, members
/// in the same order. Usually the Pod the API server stored with it (or the informer's copy),
/// shared, so a kubelet holds a pointer per Pod rather than a second copy of every status, and
/// a runtime's clone on every reconcile copies no JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Reported(#[serde(with = "crate::engine::checkpoint::shared")] Arc<Value>);

impl Reported {
    /// The status `status`, shared with `pod` when `pod`'s status is the same value with its
    /// members in the same order (what kubelet builds its next status from), else kept alone.
    pub(super) fn of(status: Value, pod: Option<&Arc<Value>>) -> Reported {
        match pod {
            Some(p) if p.field("status").is_some_and(|s| same_in_order(s, &status)) => {
                Reported(Arc::clone(p))
            }
            _ => {
                let mut alone = crate::json::Map::new();
                alone.insert("status", status);
                Reported(Arc::new(Value::Object(alone)))
            }
        }
    }

    pub(super) fn status(&self) -> &Value {
        self.0.field("status").unwrap_or(&Value::Null)
    }
}

impl PartialEq for Reported {
    fn eq(&self, other: &Reported) -> bool {
        self.status() == other.status()
    }
}

impl Eq for Reported {}

/// Equal JSON with every object's members in the same order.
fn same_in_order(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // A level the two share is the same without looking (a status built from the last
        // one keeps the levels it did not change).
        (Value::Object(x), Value::Object(y)) if crate::json::Map::ptr_eq(x, y) => true,
        (Value::Array(x), Value::Array(y)) if crate::json::List::ptr_eq(x, y) => true,
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same_in_order(va, vb))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_in_order(p, q))
        }
        _ => a == b,
    }
}

/// A container instance that exited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Termination {
    pub(super) started: SimTime,
    pub(super) finished: SimTime,
    pub(super) code: i32,
}

impl Termination {
    /// The `ContainerStateTerminated` the runtime reports for it: `Completed` for code 0, else
    /// `Error` (the reasons containerd's CRI gives an exited container).
    pub(super) fn state(&self) -> Value {
        crate::json::json!({"terminated": {
            "exitCode": self.code,
            "reason": if self.code == 0 { "Completed" } else { "Error" },
            "startedAt": self.started.rfc3339(),
            "finishedAt": self.finished.rfc3339(),
        }})
    }
}

/// The pod's `spec.restartPolicy` (the API server defaults it to `Always`).
pub(super) fn restart_policy(pod: &Value) -> &str {
    match str_at(pod, path!("/spec/restartPolicy")) {
        "" => "Always",
        p => p,
    }
}

pub(super) fn containers(pod: &Value) -> Vec<(String, String)> {
    pod.at(path!("/spec/containers"))
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        str_at(c, path!("/name")).to_owned(),
                        str_at(c, path!("/image")).to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn next_backoff(current: u64) -> u64 {
    if current == 0 {
        BACKOFF_INITIAL_MS
    } else {
        (current * 2).min(BACKOFF_MAX_MS)
    }
}

impl Kubelet {
    pub(super) fn start(&mut self, pod: &Value, ctx: &mut Ctx<'_>) -> PodRuntime {
        self.next_ip += 1;
        let pod_ip = format!("10.244.{}.{}", self.node_index, (self.next_ip % 250) + 2);
        let pulls = self.pull_ms(pod, ctx);
        record_pulling(pod, ctx);
        let probe = Probe::for_pod(pod, ctx);
        PodRuntime {
            stage: Stage::Pulling {
                until: ctx.now.plus_ms(pulls.iter().sum()),
            },
            pulls,
            restarts: 0,
            backoff_ms: 0,
            crash_backoff_ms: 0,
            crash_backoff_at: ctx.now,
            instance_started: ctx.now,
            exit_code: 0,
            last_termination: None,
            pod_ip,
            reported: None,
            status_sync_at: None,
            probe,
        }
    }

    /// How long each container's image takes to pull, in container order (pulled one after
    /// another: the kubelet's serialized image puller).
    pub(super) fn pull_ms(&self, pod: &Value, ctx: &mut Ctx<'_>) -> Vec<u64> {
        let mut pulls = Vec::new();
        for (_, image) in containers(pod) {
            pulls.push(match ctx.env.images.get(&image) {
                Some(ImageBehaviour::Ok { pull_ms }) => *pull_ms,
                _ => {
                    let t = &ctx.env.kubelet;
                    if t.pull_max_ms > t.pull_min_ms {
                        ctx.rng.random_range(t.pull_min_ms..=t.pull_max_ms)
                    } else {
                        t.pull_min_ms
                    }
                }
            });
        }
        pulls
    }

    pub(super) fn failing_image(&self, pod: &Value, ctx: &Ctx<'_>) -> Option<String> {
        containers(pod).into_iter().map(|(_, i)| i).find(|i| {
            ctx.env.pull_failing_nodes.contains(&self.node)
                || matches!(ctx.env.images.get(i), Some(ImageBehaviour::PullFails))
        })
    }

    /// What the container runtime answers a failed pull of `image` with (containerd's CRI
    /// errors, with the reference normalised as containerd prints it): the image is not found,
    /// or, with the node's pulls failing, its registry cannot be reached.
    pub(super) fn pull_error(&self, image: &str, ctx: &Ctx<'_>) -> String {
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

    /// When the pod's container instance exits and with what code: the first container whose
    /// image exits decides (the simulated containers of a pod run and exit together).
    pub(super) fn exit_after(&self, pod: &Value, ctx: &Ctx<'_>) -> Option<(u64, i32)> {
        containers(pod)
            .iter()
            .find_map(|(_, i)| ctx.env.images.get(i).and_then(ImageBehaviour::exit))
    }

    /// Advances the runtime through every transition and probe due by `now`, in time order.
    pub(super) fn advance(&self, rt: &mut PodRuntime, pod: &Value, ctx: &mut Ctx<'_>) {
        loop {
            let now = ctx.now;
            let probe_at = rt.probe.as_ref().map(|p| p.next_at).filter(|t| *t <= now);
            if let Some(at) = probe_at {
                if stage_due(&rt.stage).is_none_or(|s| at < s) {
                    prober::tick(rt, at, pod, ctx);
                    continue;
                }
            }
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
                    rt.pulls = self.pull_ms(pod, ctx);
                    Stage::Pulling {
                        until: until.plus_ms(rt.pulls.iter().sum()),
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
                Stage::Running { ready_at, exit_at }
                    if exit_at.is_some_and(|c| c <= now && ready_at.is_none_or(|r| c <= r)) =>
                {
                    self.exited(rt, exit_at.unwrap_or(now), pod, ctx)
                }
                Stage::Running {
                    ready_at: Some(r),
                    exit_at,
                } if r <= now => Stage::Ready { exit_at },
                Stage::Ready { exit_at: Some(c) } if c <= now => self.exited(rt, c, pod, ctx),
                Stage::Stopping { until, running, .. } if until <= now => Stage::Stopped {
                    finished: until,
                    running,
                },
                _ => return,
            };
            self.record_transition(&rt.stage, &next, rt, pod, ctx);
            rt.stage = next;
        }
    }

    /// The kubelet's events for one runtime transition [pkg/kubelet/images/image_manager.go
    /// `EnsureImageExists`, kuberuntime_container.go `startContainer`, kuberuntime_manager.go
    /// `doBackOff`], on each container (`involvedObject.fieldPath: spec.containers{<name>}`).
    fn record_transition(
        &self,
        from: &Stage,
        to: &Stage,
        rt: &PodRuntime,
        pod: &Value,
        ctx: &mut Ctx<'_>,
    ) {
        let failing = self.failing_image(pod, ctx);
        let restarted = matches!(
            from,
            Stage::CrashBackOff { .. } | Stage::Running { .. } | Stage::Ready { .. }
        );
        for (i, (name, image)) in containers(pod).into_iter().enumerate() {
            let mut events: Vec<(EventType, &str, String)> = Vec::new();
            let fails = failing.as_deref() == Some(image.as_str());
            match (from, to) {
                (Stage::Pulling { .. }, Stage::PullFailed { .. }) if fails => {
                    let err = self.pull_error(&image, ctx);
                    events.push((
                        EventType::Warning,
                        "Failed",
                        format!("Failed to pull image \"{image}\": {err}"),
                    ));
                    events.push((EventType::Warning, "Failed", "Error: ErrImagePull".into()));
                }
                (Stage::PullFailed { .. }, Stage::PullBackOff { .. }) if fails => {
                    events.push((
                        EventType::Normal,
                        "BackOff",
                        format!("Back-off pulling image \"{image}\""),
                    ));
                    events.push((
                        EventType::Warning,
                        "Failed",
                        "Error: ImagePullBackOff".into(),
                    ));
                }
                (Stage::PullBackOff { .. }, Stage::Pulling { .. }) => {
                    events.push((
                        EventType::Normal,
                        "Pulling",
                        format!("Pulling image \"{image}\""),
                    ));
                }
                (Stage::Pulling { .. }, Stage::Starting { .. }) => {
                    let took = rt.pulls.get(i).copied().unwrap_or(0);
                    let waited: u64 = rt.pulls.iter().take(i + 1).sum();
                    events.push((
                        EventType::Normal,
                        "Pulled",
                        format!(
                            "Successfully pulled image \"{image}\" in {} ({} including waiting). \
                             Image size: {} bytes.",
                            go_duration(took),
                            go_duration(waited),
                            image_size_bytes(&image)
                        ),
                    ));
                }
                (_, Stage::Running { .. }) => {
                    if restarted {
                        events.push((
                            EventType::Normal,
                            "Pulled",
                            format!("Container image \"{image}\" already present on machine"),
                        ));
                    }
                    events.push((
                        EventType::Normal,
                        "Created",
                        format!("Created container {name}"),
                    ));
                    events.push((
                        EventType::Normal,
                        "Started",
                        format!("Started container {name}"),
                    ));
                }
                (_, Stage::CrashBackOff { .. }) => {
                    events.push((
                        EventType::Warning,
                        "BackOff",
                        format!(
                            "Back-off restarting failed container {name} in pod {}",
                            format_pod(pod)
                        ),
                    ));
                }
                _ => {}
            }
            for (event_type, reason, message) in events {
                record_container(pod, &name, event_type, reason, message, ctx);
            }
        }
    }

    /// The pod got a deletionTimestamp: kube's `SyncTerminatingPod` -> `killPod` ->
    /// `killContainer` [pkg/kubelet/kubelet.go, kuberuntime_container.go]. Each container's
    /// preStop hook runs within the grace period (`deletionGracePeriodSeconds`), then SIGTERM
    /// stops it; the simulated containers exit on SIGTERM (after the kubelet timing's
    /// `stop_ms`), with code 0.
    pub(super) fn terminate(&self, rt: &mut PodRuntime, pod: &Value, ctx: &mut Ctx<'_>) {
        let now = ctx.now;
        // A terminal pod has nothing left to stop: the status manager deletes it
        // (`canBeDeleted`), see the reconcile.
        if matches!(
            rt.stage,
            Stage::Stopping { .. } | Stage::Stopped { .. } | Stage::Exited { .. }
        ) {
            return;
        }
        let running = matches!(rt.stage, Stage::Running { .. } | Stage::Ready { .. });
        if running {
            // killContainer's event, before the preStop hook runs.
            for (name, _) in containers(pod) {
                let message = format!("Stopping container {name}");
                record_container(pod, &name, EventType::Normal, "Killing", message, ctx);
            }
        }
        let ready = matches!(rt.stage, Stage::Ready { .. });
        let grace_ms = pod
            .at(path!("/metadata/deletionGracePeriodSeconds"))
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
    pub(super) fn run(
        &self,
        rt: &mut PodRuntime,
        at: SimTime,
        pod: &Value,
        ctx: &Ctx<'_>,
    ) -> Stage {
        rt.instance_started = at;
        let exit = self.exit_after(pod, ctx);
        rt.exit_code = exit.map_or(0, |(_, code)| code);
        // With a readiness probe, the new instance is ready when its probe says so.
        let ready_at = match rt.probe.as_mut() {
            Some(p) => {
                p.restart();
                None
            }
            None => Some(at.plus_ms(ctx.env.kubelet.ready_ms)),
        };
        Stage::Running {
            ready_at,
            exit_at: exit.map(|(ms, _)| at.plus_ms(ms)),
        }
    }

    /// The container exited at `at` with `rt.exit_code`. Whether it starts again is the pod's
    /// restart policy's [pkg/kubelet/container/helpers.go `ShouldContainerBeRestarted`]: Never
    /// never, OnFailure for a non-zero code, Always always; not restarted, the pod is terminal.
    /// Restarted, kube's `doBackOff` [pkg/kubelet/kuberuntime/kuberuntime_manager.go] decides
    /// when: `Backoff.IsInBackOffSince(key, finishedAt)` is false with no entry yet (or one
    /// expired), so `Backoff.Next` creates a 10 s entry and the container starts again at once;
    /// from the second exit on the entry holds it in CrashLoopBackOff for the entry's current
    /// length, counted from the exit.
    pub(super) fn exited(
        &self,
        rt: &mut PodRuntime,
        at: SimTime,
        pod: &Value,
        ctx: &Ctx<'_>,
    ) -> Stage {
        let code = rt.exit_code;
        let restart = match restart_policy(pod) {
            "Never" => false,
            "OnFailure" => code != 0,
            _ => true,
        };
        if !restart {
            return Stage::Exited { finished: at, code };
        }
        rt.last_termination = Some(Termination {
            started: rt.instance_started,
            finished: at,
            code,
        });
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

    /// The next stage transition or probe.
    pub(super) fn next_wake(rt: &PodRuntime) -> Option<SimTime> {
        let probe = match rt.stage {
            Stage::Exited { .. } | Stage::Stopped { .. } => None,
            _ => rt.probe.as_ref().map(|p| p.next_at),
        };
        match (stage_due(&rt.stage), probe) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// When the stage moves on by itself.
fn stage_due(stage: &Stage) -> Option<SimTime> {
    match *stage {
        Stage::Pulling { until }
        | Stage::PullFailed { until }
        | Stage::PullBackOff { until }
        | Stage::Starting { until }
        | Stage::CrashBackOff { until }
        | Stage::Stopping { until, .. } => Some(until),
        Stage::Stopped { .. } | Stage::Exited { .. } => None,
        Stage::Running { ready_at, exit_at } => match (ready_at, exit_at) {
            (Some(r), Some(e)) => Some(r.min(e)),
            (r, e) => r.or(e),
        },
        Stage::Ready { exit_at } => exit_at,
    }
}

/// An event about one of the pod's containers, from the kubelet's recorder.
pub(super) fn record_container(
    pod: &Value,
    container: &str,
    event_type: EventType,
    reason: &str,
    message: String,
    ctx: &mut Ctx<'_>,
) {
    let regarding = ObjectRef::to(pod, "v1", "Pod").container(container);
    ctx.record(EventNote::new(regarding, event_type, reason, message));
}

/// `Pulling image "<image>"` for every container of a pod whose pulls begin.
fn record_pulling(pod: &Value, ctx: &mut Ctx<'_>) {
    for (name, image) in containers(pod) {
        let message = format!("Pulling image \"{image}\"");
        record_container(pod, &name, EventType::Normal, "Pulling", message, ctx);
    }
}

/// `format.Pod`: `<name>_<namespace>(<uid>)`.
pub(super) fn format_pod(pod: &Value) -> String {
    format!(
        "{}_{}({})",
        crate::api::meta::name(pod),
        crate::api::meta::namespace(pod),
        crate::api::meta::uid(pod)
    )
}

/// The simulated size of an image, for the `Pulled` event: the simulation pulls no bytes, so
/// each normalised reference gets a size between 5 MB and 150 MB from an FNV-1a hash of it
/// (the same reference, the same size, everywhere).
pub(super) fn image_size_bytes(image: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in normalized_image(image).bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    5_000_000 + h % 145_000_000
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
pub(super) fn registry_parts(reference: &str) -> (String, String, String) {
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

/// How long the pod's preStop hooks take, the longest container's: a `sleep` action
/// (`PodLifecycleSleepAction`, on in 1.32) or an exec of `sleep N` (as `sh -c "sleep N"` too);
/// other hooks (httpGet, other commands) take no simulated time.
pub(super) fn pre_stop_ms(pod: &Value) -> u64 {
    pod.at(path!("/spec/containers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.at(path!("/lifecycle/preStop")))
        .map(|hook| {
            if let Some(s) = hook.at(path!("/sleep/seconds")).and_then(Value::as_u64) {
                return s * 1000;
            }
            let words: Vec<&str> = hook
                .at(path!("/exec/command"))
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
}
