//! Pod rows [printers.go `printPod`]: READY, the STATUS reason (init containers, sidecars,
//! terminating pods), RESTARTS with the age of the last restart, and the wide cells.

use crate::api::meta::Fields;
use std::collections::BTreeSet;

use crate::json::{json, Value};

use super::{human_duration, n, or_none, since};
use crate::api::meta::{self, str_at};
use crate::time::SimTime;

/// The later of two RFC 3339 times.
pub(super) fn later(a: Option<SimTime>, b: Option<&str>) -> Option<SimTime> {
    let b = b.and_then(SimTime::parse_rfc3339);
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}
/// `printPod`: READY, STATUS (with init containers, sidecars and terminating pods), RESTARTS
/// with the age of the last restart, and the wide cells.
pub(super) fn pod_cells(pod: &Value, now: SimTime) -> (Vec<Value>, Option<Value>) {
    let init_specs = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let sidecars: BTreeSet<&str> = init_specs
        .iter()
        .filter(|c| str_at(c, "/restartPolicy") == "Always")
        .map(|c| str_at(c, "/name"))
        .collect();
    let total = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
        + sidecars.len();
    let mut ready = 0usize;
    let mut restarts = 0i64;
    let mut last_restart: Option<SimTime> = None;
    let mut sidecar_restarts = 0i64;
    let mut last_sidecar_restart: Option<SimTime> = None;
    let mut reason = match str_at(pod, "/status/reason") {
        "" => str_at(pod, "/status/phase").to_owned(),
        r => r.to_owned(),
    };
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        reason = "SchedulingGated".into();
    }
    let conditions = match str_at(pod, "/status/phase") {
        "Succeeded" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]),
        ),
        "Failed" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
        ),
        _ => None,
    };
    let mut initializing = false;
    let init_statuses = pod
        .pointer("/status/initContainerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, cs) in init_statuses.iter().enumerate() {
        let last_finished = cs
            .pointer("/lastState/terminated/finishedAt")
            .and_then(Value::as_str);
        restarts += n(cs, "/restartCount");
        last_restart = later(last_restart, last_finished);
        let sidecar = sidecars.contains(str_at(cs, "/name"));
        if sidecar {
            sidecar_restarts += n(cs, "/restartCount");
            last_sidecar_restart = later(last_sidecar_restart, last_finished);
        }
        let terminated = cs.pointer("/state/terminated").filter(|t| !t.is_null());
        if terminated.is_some_and(|t| n(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar && cs.field("started").and_then(Value::as_bool) == Some(true) {
            if cs.field("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        let waiting = str_at(cs, "/state/waiting/reason");
        reason = if let Some(t) = terminated {
            if !str_at(t, "/reason").is_empty() {
                format!("Init:{}", str_at(t, "/reason"))
            } else if n(t, "/signal") != 0 {
                format!("Init:Signal:{}", n(t, "/signal"))
            } else {
                format!("Init:ExitCode:{}", n(t, "/exitCode"))
            }
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            format!("Init:{waiting}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }
    let condition_true = |t: &str| {
        pod.pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| str_at(c, "/type") == t))
            .is_some_and(|c| str_at(c, "/status") == "True")
    };
    if !initializing || condition_true("Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        let statuses = pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for cs in statuses.iter().rev() {
            restarts += n(cs, "/restartCount");
            last_restart = later(
                last_restart,
                cs.pointer("/lastState/terminated/finishedAt")
                    .and_then(Value::as_str),
            );
            let waiting = str_at(cs, "/state/waiting/reason");
            let terminated = cs.pointer("/state/terminated").filter(|t| !t.is_null());
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if let Some(t) = terminated {
                reason = if !str_at(t, "/reason").is_empty() {
                    str_at(t, "/reason").to_owned()
                } else if n(t, "/signal") != 0 {
                    format!("Signal:{}", n(t, "/signal"))
                } else {
                    format!("ExitCode:{}", n(t, "/exitCode"))
                };
            } else if cs.field("ready").and_then(Value::as_bool) == Some(true)
                && cs.pointer("/state/running").is_some_and(|r| !r.is_null())
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true("Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    let deleting = meta::deletion_timestamp(pod).is_some();
    if deleting && str_at(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && !matches!(str_at(pod, "/status/phase"), "Succeeded" | "Failed") {
        reason = "Terminating".into();
    }
    let restarts_text = match last_restart {
        Some(t) if restarts != 0 => format!(
            "{restarts} ({} ago)",
            human_duration(now.as_ms() as i64 - t.as_ms() as i64)
        ),
        _ => restarts.to_string(),
    };
    let gates = pod
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let gates_text = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let held = gates
            .iter()
            .filter(|g| condition_true(str_at(g, "/conditionType")))
            .count();
        format!("{held}/{}", gates.len())
    };
    let cells = vec![
        json!(meta::name(pod)),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_text),
        json!(since(
            pod.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(or_none(str_at(pod, "/status/podIPs/0/ip"))),
        json!(or_none(str_at(pod, "/spec/nodeName"))),
        json!(or_none(str_at(pod, "/status/nominatedNodeName"))),
        json!(gates_text),
    ];
    (cells, conditions)
}
