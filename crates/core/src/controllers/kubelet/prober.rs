//! Readiness probes [kubernetes 1.32 pkg/kubelet/prober/worker.go]: one worker per pod with a
//! `readinessProbe` (the first container that has one: the simulated containers share one
//! readiness), started when the kubelet takes the pod, probing every `periodSeconds` from then
//! (after a random part of a period while the kubelet itself started less than a period ago).
//! The readiness starts as failed; a running container is not probed before
//! `initialDelaySeconds` (whole seconds since it started); a result takes effect after
//! `successThreshold` equal successes or `failureThreshold` equal failures in a row; each failed
//! probe records a Warning `Unhealthy` Event. A probe fails while the container's image has the
//! `probeFails` behaviour.

use crate::api::meta::Fields;
use crate::json::Value;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::api::meta::{str_at, JsonPointer};
use crate::runtime::{Ctx, EventType, ImageBehaviour};
use crate::time::SimTime;

use super::container_runtime::{record_container, PodRuntime, Stage};

/// How the probe reaches the container, for the failure message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Handler {
    Http,
    Tcp { port: String },
    Exec,
    Grpc,
}

/// One readiness worker's state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Probe {
    container: String,
    handler: Handler,
    period_ms: u64,
    initial_delay_s: u64,
    success_threshold: u32,
    failure_threshold: u32,
    /// The next tick.
    pub(super) next_at: SimTime,
    /// The last result and how many times in a row it came.
    last: Option<bool>,
    run: u32,
}

impl Probe {
    /// The worker for `pod`, if a container has a readiness probe (`AddPod`), its first tick
    /// at `now`, or a random part of a period later while the kubelet (which starts with the
    /// world, at 0) is younger than a period (`worker.run`).
    pub(super) fn for_pod(pod: &Value, ctx: &mut Ctx<'_>) -> Option<Probe> {
        let containers = pod.at("/spec/containers").and_then(Value::as_array)?;
        let (c, probe) = containers
            .iter()
            .find_map(|c| c.field("readinessProbe").map(|p| (c, p)))?;
        let int = |k: &str, d: u64| probe.get(k).and_then(Value::as_u64).unwrap_or(d);
        let handler = if probe.field("httpGet").is_some() {
            Handler::Http
        } else if let Some(t) = probe.field("tcpSocket") {
            let port = match t.field("port") {
                Some(Value::String(s)) => s.to_string(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            Handler::Tcp { port }
        } else if probe.field("grpc").is_some() {
            Handler::Grpc
        } else {
            Handler::Exec
        };
        let period_ms = int("periodSeconds", 10).max(1) * 1000;
        let now = ctx.now;
        let first = if now.as_ms() < period_ms {
            now.plus_ms(ctx.rng.random_range(0..period_ms))
        } else {
            now
        };
        Some(Probe {
            container: str_at(c, "/name").to_owned(),
            handler,
            period_ms,
            initial_delay_s: int("initialDelaySeconds", 0),
            success_threshold: int("successThreshold", 1).max(1) as u32,
            failure_threshold: int("failureThreshold", 3).max(1) as u32,
            next_at: first,
            last: None,
            run: 0,
        })
    }

    /// A new container instance: its readiness starts as failed again.
    pub(super) fn restart(&mut self) {
        self.last = None;
        self.run = 0;
    }

    /// The failure message kube's prober gives for this handler, against `pod_ip`.
    fn failure(&self, pod_ip: &str) -> String {
        let output = match &self.handler {
            Handler::Http => "HTTP probe failed with statuscode: 503".to_owned(),
            Handler::Tcp { port } => {
                format!("dial tcp {pod_ip}:{port}: connect: connection refused")
            }
            Handler::Exec => String::new(),
            Handler::Grpc => "service unhealthy (responded with \"NOT_SERVING\")".to_owned(),
        };
        format!("Readiness probe failed: {output}")
    }
}

/// Whether a probe of this pod's containers fails now (an image with `probeFails`).
fn probe_fails(pod: &Value, ctx: &Ctx<'_>) -> bool {
    pod.at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            matches!(
                ctx.env.images.get(str_at(c, "/image")),
                Some(ImageBehaviour::ProbeFails)
            )
        })
}

/// The readiness the kubelet reports for the pod: `Ready` stage or a Stopping pod that was.
fn set_ready(rt: &mut PodRuntime, ready: bool) {
    rt.stage = match rt.stage.clone() {
        Stage::Running { exit_at, .. } if ready => Stage::Ready { exit_at },
        Stage::Ready { exit_at } if !ready => Stage::Running {
            ready_at: None,
            exit_at,
        },
        Stage::Stopping { until, running, .. } => Stage::Stopping {
            until,
            running,
            ready,
        },
        other => other,
    };
}

/// One tick of the worker at `at` (`doProbe`).
pub(super) fn tick(rt: &mut PodRuntime, at: SimTime, pod: &Value, ctx: &mut Ctx<'_>) {
    let Some(mut p) = rt.probe.take() else {
        return;
    };
    p.next_at = at.plus_ms(p.period_ms);
    let running = match rt.stage {
        // The worker stops with the pod.
        Stage::Exited { .. } | Stage::Stopped { .. } => return,
        Stage::Running { .. } | Stage::Ready { .. } | Stage::Stopping { running: true, .. } => true,
        _ => false,
    };
    if !running {
        set_ready(rt, false);
        rt.probe = Some(p);
        return;
    }
    let since_s = at.as_ms().saturating_sub(rt.instance_started.as_ms()) / 1000;
    if since_s < p.initial_delay_s {
        rt.probe = Some(p);
        return;
    }
    let ok = !probe_fails(pod, ctx);
    if p.last == Some(ok) {
        p.run += 1;
    } else {
        p.last = Some(ok);
        p.run = 1;
    }
    if !ok {
        let message = p.failure(&rt.pod_ip);
        record_container(
            pod,
            &p.container,
            EventType::Warning,
            "Unhealthy",
            message,
            ctx,
        );
    }
    let below = if ok {
        p.run < p.success_threshold
    } else {
        p.run < p.failure_threshold
    };
    if !below {
        set_ready(rt, ok);
    }
    rt.probe = Some(p);
}
