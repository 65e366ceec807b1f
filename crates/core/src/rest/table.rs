//! Server-side printing: the `meta.k8s.io/v1` Table `kubectl get` asks for
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), with kube 1.32's columns and cell
//! rules per kind [kubernetes pkg/printers/internalversion/printers.go `AddHandlers` and the
//! `print<Kind>` functions; apiserver pkg/registry/rest/table.go `NewDefaultTableConvertor`;
//! apiextensions-apiserver pkg/registry/customresource/tableconvertor]. The server always
//! prints the wide cells; kubectl hides priority-1 columns unless `-o wide`. Column
//! descriptions are Converge's own one-line summaries (kube sends its API docs there; no client
//! shows them).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::api::{meta, GroupResource};
use crate::time::SimTime;

/// `includeObject` [`metav1.TableOptions`]: what each row carries besides its cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    /// The default: a `PartialObjectMetadata` with the object's whole metadata.
    #[default]
    Metadata,
    Object,
}

impl IncludeObject {
    /// Reads the query parameter; anything else is kube's 400.
    pub fn parse(v: Option<&str>) -> Result<IncludeObject, String> {
        match v {
            None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
            Some("None") => Ok(IncludeObject::None),
            Some("Object") => Ok(IncludeObject::Object),
            Some(other) => Err(format!(
                "unable to convert to Table: includeObject={other:?} is not one of None, Metadata, Object"
            )),
        }
    }
}

/// One column: name, type, format, priority (1 = wide only), description.
type Column = (&'static str, &'static str, &'static str, u8, &'static str);

const NAME: Column = ("Name", "string", "name", 0, "The object's name.");
const AGE: Column = ("Age", "string", "", 0, "Time since the object was created.");

fn columns(gr: &GroupResource) -> Option<&'static [Column]> {
    Some(match (gr.group.as_str(), gr.resource.as_str()) {
        ("apps", "deployments") => &[
            NAME,
            ("Ready", "string", "", 0, "Ready pods / desired pods."),
            (
                "Up-to-date",
                "string",
                "",
                0,
                "Pods with the current template.",
            ),
            (
                "Available",
                "string",
                "",
                0,
                "Pods available for minReadySeconds.",
            ),
            AGE,
            (
                "Containers",
                "string",
                "",
                1,
                "Container names in the template.",
            ),
            (
                "Images",
                "string",
                "",
                1,
                "Container images in the template.",
            ),
            ("Selector", "string", "", 1, "The pod label selector."),
        ],
        ("apps", "replicasets") => &[
            NAME,
            ("Desired", "integer", "", 0, "spec.replicas."),
            ("Current", "integer", "", 0, "status.replicas."),
            ("Ready", "integer", "", 0, "status.readyReplicas."),
            AGE,
            (
                "Containers",
                "string",
                "",
                1,
                "Container names in the template.",
            ),
            (
                "Images",
                "string",
                "",
                1,
                "Container images in the template.",
            ),
            ("Selector", "string", "", 1, "The pod label selector."),
        ],
        ("", "pods") => &[
            NAME,
            ("Ready", "string", "", 0, "Ready containers / containers."),
            ("Status", "string", "", 0, "The pod's aggregate status."),
            (
                "Restarts",
                "string",
                "",
                0,
                "Container restarts, and when the last was.",
            ),
            AGE,
            ("IP", "string", "", 1, "The pod's IP."),
            ("Node", "string", "", 1, "The node the pod is bound to."),
            (
                "Nominated Node",
                "string",
                "",
                1,
                "status.nominatedNodeName.",
            ),
            (
                "Readiness Gates",
                "string",
                "",
                1,
                "Readiness gates that hold / gates.",
            ),
        ],
        ("", "nodes") => &[
            NAME,
            (
                "Status",
                "string",
                "",
                0,
                "Ready condition and schedulability.",
            ),
            ("Roles", "string", "", 0, "node-role.kubernetes.io labels."),
            AGE,
            ("Version", "string", "", 0, "The kubelet's version."),
            ("Internal-IP", "string", "", 1, "The InternalIP address."),
            ("External-IP", "string", "", 1, "The ExternalIP address."),
            ("OS-Image", "string", "", 1, "status.nodeInfo.osImage."),
            (
                "Kernel-Version",
                "string",
                "",
                1,
                "status.nodeInfo.kernelVersion.",
            ),
            (
                "Container-Runtime",
                "string",
                "",
                1,
                "status.nodeInfo.containerRuntimeVersion.",
            ),
        ],
        ("", "namespaces") => &[
            NAME,
            ("Status", "string", "", 0, "The namespace's phase."),
            AGE,
        ],
        ("", "configmaps") => &[NAME, ("Data", "string", "", 0, "Number of data keys."), AGE],
        ("", "serviceaccounts") => &[
            NAME,
            ("Secrets", "string", "", 0, "Number of listed secrets."),
            AGE,
        ],
        ("", "services") => &[
            NAME,
            ("Type", "string", "", 0, "spec.type."),
            ("Cluster-IP", "string", "", 0, "The cluster IP."),
            (
                "External-IP",
                "string",
                "",
                0,
                "External IPs or load balancer ingress.",
            ),
            ("Port(s)", "string", "", 0, "port[:nodePort]/protocol."),
            AGE,
            ("Selector", "string", "", 1, "The pod label selector."),
        ],
        ("autoscaling", "horizontalpodautoscalers") => &[
            NAME,
            ("Reference", "string", "", 0, "The scale target."),
            (
                "Targets",
                "string",
                "",
                0,
                "Current / target metric values.",
            ),
            ("MinPods", "string", "", 0, "spec.minReplicas."),
            ("MaxPods", "string", "", 0, "spec.maxReplicas."),
            ("Replicas", "string", "", 0, "status.currentReplicas."),
            AGE,
        ],
        ("", "events") => &[
            (
                "Last Seen",
                "string",
                "",
                0,
                "When the event last happened.",
            ),
            ("Type", "string", "", 0, "Normal or Warning."),
            ("Reason", "string", "", 0, "Why the event was recorded."),
            ("Object", "string", "", 0, "The object the event is about."),
            ("Subobject", "string", "", 1, "involvedObject.fieldPath."),
            (
                "Source",
                "string",
                "",
                1,
                "The reporting component (and host).",
            ),
            ("Message", "string", "", 0, "What happened."),
            (
                "First Seen",
                "string",
                "",
                1,
                "When the event first happened.",
            ),
            ("Count", "string", "", 1, "How often it happened."),
            ("Name", "string", "name", 1, "The event's name."),
        ],
        _ => return None,
    })
}

/// `duration.HumanDuration` [apimachinery pkg/util/duration]: at most two units, coarser as
/// the duration grows.
pub fn human_duration(ms: i64) -> String {
    let seconds = ms / 1000;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        let y = hours / 24 / 365;
        return if dy == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{dy}d")
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// `translateTimestampSince`: `<unknown>` without a time, else the age at `now`.
fn since(ts: Option<&str>, now: SimTime) -> String {
    match ts.and_then(SimTime::parse_rfc3339) {
        Some(t) => human_duration(now.as_ms() as i64 - t.as_ms() as i64),
        None => "<unknown>".into(),
    }
}

fn s<'a>(obj: &'a Value, ptr: &str) -> &'a str {
    obj.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn n(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(v: &str) -> String {
    if v.is_empty() {
        "<none>".into()
    } else {
        v.to_owned()
    }
}

/// `layoutContainerCells`: names and images joined by commas, in spec order.
fn containers(obj: &Value, ptr: &str) -> (String, String) {
    let list = obj
        .pointer(ptr)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = list.iter().map(|c| s(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| s(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// `LabelSelectorAsSelector(...).String()`: requirements sorted by key, joined by commas;
/// `None` when the selector is invalid.
fn selector_string(sel: Option<&Value>) -> Option<String> {
    let Some(sel) = sel.filter(|v| !v.is_null()) else {
        return Some(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = s(e, "/key").to_owned();
        let mut values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match s(e, "/operator") {
            "In" => format!("{k} in ({})", values.join(",")),
            "NotIn" => format!("{k} notin ({})", values.join(",")),
            "Exists" => k.clone(),
            "DoesNotExist" => format!("!{k}"),
            _ => return None,
        };
        reqs.push((k, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        reqs.into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `labels.FormatLabels`: `k=v` strings sorted whole, or `<none>`.
fn format_labels(m: Option<&Value>) -> String {
    let mut parts: Vec<String> = m
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    parts.sort();
    or_none(&parts.join(","))
}

fn deployment_cells(d: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(d, "/spec/template/spec/containers");
    let replicas = d
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    vec![
        json!(meta::name(d)),
        json!(format!("{}/{replicas}", n(d, "/status/readyReplicas"))),
        json!(n(d, "/status/updatedReplicas")),
        json!(n(d, "/status/availableReplicas")),
        json!(since(
            d.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector_string(d.pointer("/spec/selector")).unwrap_or_else(|| "<invalid>".into())),
    ]
}

fn replicaset_cells(rs: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(rs, "/spec/template/spec/containers");
    let selector = match selector_string(rs.pointer("/spec/selector")) {
        None => "<error>".to_owned(),
        Some(sel) => or_none(&sel),
    };
    vec![
        json!(meta::name(rs)),
        json!(rs
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)),
        json!(n(rs, "/status/replicas")),
        json!(n(rs, "/status/readyReplicas")),
        json!(since(
            rs.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector),
    ]
}

/// The later of two RFC 3339 times.
fn later(a: Option<SimTime>, b: Option<&str>) -> Option<SimTime> {
    let b = b.and_then(SimTime::parse_rfc3339);
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// `printPod`: READY, STATUS (with init containers, sidecars and terminating pods), RESTARTS
/// with the age of the last restart, and the wide cells.
fn pod_cells(pod: &Value, now: SimTime) -> (Vec<Value>, Option<Value>) {
    let init_specs = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let sidecars: BTreeSet<&str> = init_specs
        .iter()
        .filter(|c| s(c, "/restartPolicy") == "Always")
        .map(|c| s(c, "/name"))
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
    let mut reason = match s(pod, "/status/reason") {
        "" => s(pod, "/status/phase").to_owned(),
        r => r.to_owned(),
    };
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        reason = "SchedulingGated".into();
    }
    let conditions = match s(pod, "/status/phase") {
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
        let sidecar = sidecars.contains(s(cs, "/name"));
        if sidecar {
            sidecar_restarts += n(cs, "/restartCount");
            last_sidecar_restart = later(last_sidecar_restart, last_finished);
        }
        let terminated = cs.pointer("/state/terminated").filter(|t| !t.is_null());
        if terminated.is_some_and(|t| n(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar && cs.get("started").and_then(Value::as_bool) == Some(true) {
            if cs.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        let waiting = s(cs, "/state/waiting/reason");
        reason = if let Some(t) = terminated {
            if !s(t, "/reason").is_empty() {
                format!("Init:{}", s(t, "/reason"))
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
            .and_then(|cs| cs.iter().find(|c| s(c, "/type") == t))
            .is_some_and(|c| s(c, "/status") == "True")
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
            let waiting = s(cs, "/state/waiting/reason");
            let terminated = cs.pointer("/state/terminated").filter(|t| !t.is_null());
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if let Some(t) = terminated {
                reason = if !s(t, "/reason").is_empty() {
                    s(t, "/reason").to_owned()
                } else if n(t, "/signal") != 0 {
                    format!("Signal:{}", n(t, "/signal"))
                } else {
                    format!("ExitCode:{}", n(t, "/exitCode"))
                };
            } else if cs.get("ready").and_then(Value::as_bool) == Some(true)
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
    if deleting && s(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && !matches!(s(pod, "/status/phase"), "Succeeded" | "Failed") {
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
            .filter(|g| condition_true(s(g, "/conditionType")))
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
        json!(or_none(s(pod, "/status/podIPs/0/ip"))),
        json!(or_none(s(pod, "/spec/nodeName"))),
        json!(or_none(s(pod, "/status/nominatedNodeName"))),
        json!(gates_text),
    ];
    (cells, conditions)
}

fn node_cells(node: &Value, now: SimTime) -> Vec<Value> {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().rev().find(|c| s(c, "/type") == "Ready"));
    let mut status = vec![match ready {
        Some(c) if s(c, "/status") == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let mut roles = BTreeSet::new();
    for (k, v) in meta::labels(node).into_iter().flatten() {
        if let Some(role) = k
            .strip_prefix("node-role.kubernetes.io/")
            .filter(|r| !r.is_empty())
        {
            roles.insert(role.to_owned());
        } else if k == "kubernetes.io/role" && v.as_str().is_some_and(|r| !r.is_empty()) {
            roles.insert(v.as_str().unwrap_or("").to_owned());
        }
    }
    let address = |ty: &str| {
        node.pointer("/status/addresses")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find(|x| s(x, "/type") == ty))
            .map_or("<none>".to_owned(), |x| s(x, "/address").to_owned())
    };
    let unknown = |v: &str| {
        if v.is_empty() {
            "<unknown>".to_owned()
        } else {
            v.to_owned()
        }
    };
    vec![
        json!(meta::name(node)),
        json!(status.join(",")),
        json!(or_none(&roles.into_iter().collect::<Vec<_>>().join(","))),
        json!(since(
            node.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(s(node, "/status/nodeInfo/kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(unknown(s(node, "/status/nodeInfo/osImage"))),
        json!(unknown(s(node, "/status/nodeInfo/kernelVersion"))),
        json!(unknown(s(node, "/status/nodeInfo/containerRuntimeVersion"))),
    ]
}

fn service_cells(svc: &Value, now: SimTime) -> Vec<Value> {
    let ty = s(svc, "/spec/type");
    let external: Vec<&str> = svc
        .pointer("/spec/externalIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let external_ip = match ty {
        "ClusterIP" | "NodePort" => or_none(&external.join(",")),
        "LoadBalancer" => {
            let lb: BTreeSet<&str> = svc
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|i| {
                    if s(i, "/ip").is_empty() {
                        s(i, "/hostname")
                    } else {
                        s(i, "/ip")
                    }
                })
                .collect();
            let mut all: Vec<&str> = lb.into_iter().collect();
            if !external.is_empty() {
                all.extend(external);
                all.join(",")
            } else if all.is_empty() {
                "<pending>".to_owned()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => s(svc, "/spec/externalName").to_owned(),
        _ => "<unknown>".to_owned(),
    };
    let ports: Vec<String> = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let node_port = n(p, "/nodePort");
            if node_port > 0 {
                format!("{}:{node_port}/{}", n(p, "/port"), s(p, "/protocol"))
            } else {
                format!("{}/{}", n(p, "/port"), s(p, "/protocol"))
            }
        })
        .collect();
    vec![
        json!(meta::name(svc)),
        json!(ty),
        json!(or_none(s(svc, "/spec/clusterIPs/0"))),
        json!(external_ip),
        json!(or_none(&ports.join(","))),
        json!(since(
            svc.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(format_labels(svc.pointer("/spec/selector"))),
    ]
}

/// `formatHPAMetrics`: each spec metric with the status metric at the same position, at most
/// two shown.
fn hpa_targets(hpa: &Value) -> String {
    let specs = hpa
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = hpa
        .pointer("/status/currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let q = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "<nil>".to_owned(),
    };
    let entries: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let status = statuses.get(i);
            match s(spec, "/type") {
                ty @ ("Resource" | "ContainerResource") => {
                    let field = if ty == "Resource" {
                        "resource"
                    } else {
                        "containerResource"
                    };
                    let src = &spec[field];
                    let cur_src = status.map(|st| &st[field]).filter(|v| !v.is_null());
                    if let Some(avg) = src.pointer("/target/averageValue").filter(|v| !v.is_null())
                    {
                        let cur = cur_src.map_or("<unknown>".to_owned(), |c| {
                            q(c.pointer("/current/averageValue"))
                        });
                        format!("{}: {cur}/{}", s(src, "/name"), q(Some(avg)))
                    } else {
                        let cur = cur_src
                            .and_then(|c| {
                                c.pointer("/current/averageUtilization")
                                    .and_then(Value::as_i64)
                            })
                            .map_or("<unknown>".to_owned(), |u| format!("{u}%"));
                        let target = src
                            .pointer("/target/averageUtilization")
                            .and_then(Value::as_i64)
                            .map_or("<auto>".to_owned(), |u| format!("{u}%"));
                        format!("{}: {cur}/{target}", s(src, "/name"))
                    }
                }
                "Pods" => {
                    let cur = status
                        .map(|st| &st["pods"])
                        .filter(|v| !v.is_null())
                        .map_or("<unknown>".to_owned(), |p| {
                            q(p.pointer("/current/averageValue"))
                        });
                    format!("{cur}/{}", q(spec.pointer("/pods/target/averageValue")))
                }
                ty @ ("Object" | "External") => {
                    let field = if ty == "Object" { "object" } else { "external" };
                    let cur_src = status.map(|st| &st[field]).filter(|v| !v.is_null());
                    if let Some(avg) = spec
                        .pointer(&format!("/{field}/target/averageValue"))
                        .filter(|v| !v.is_null())
                    {
                        let cur = cur_src
                            .and_then(|c| {
                                c.pointer("/current/averageValue").filter(|v| !v.is_null())
                            })
                            .map_or("<unknown>".to_owned(), |v| q(Some(v)));
                        format!("{cur}/{} (avg)", q(Some(avg)))
                    } else {
                        let cur = cur_src
                            .map_or("<unknown>".to_owned(), |c| q(c.pointer("/current/value")));
                        format!(
                            "{cur}/{}",
                            q(spec.pointer(&format!("/{field}/target/value")))
                        )
                    }
                }
                _ => "<unknown type>".to_owned(),
            }
        })
        .collect();
    if entries.len() > 2 {
        format!(
            "{}, {} + {} more...",
            entries[0],
            entries[1],
            entries.len() - 2
        )
    } else {
        entries.join(", ")
    }
}

fn hpa_cells(hpa: &Value, now: SimTime) -> Vec<Value> {
    let min = hpa
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or("<unset>".to_owned(), |m| m.to_string());
    vec![
        json!(meta::name(hpa)),
        json!(format!(
            "{}/{}",
            s(hpa, "/spec/scaleTargetRef/kind"),
            s(hpa, "/spec/scaleTargetRef/name")
        )),
        json!(hpa_targets(hpa)),
        json!(min),
        json!(n(hpa, "/spec/maxReplicas")),
        json!(n(hpa, "/status/currentReplicas")),
        json!(since(
            hpa.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
    ]
}

fn event_cells(ev: &Value, now: SimTime) -> Vec<Value> {
    let ts = |p: &str| {
        ev.pointer(p)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
    };
    let first = match ts("/firstTimestamp").or_else(|| ts("/eventTime")) {
        Some(t) => since(Some(t), now),
        None => "<unknown>".to_owned(),
    };
    let mut last = match ts("/lastTimestamp") {
        Some(t) => since(Some(t), now),
        None => first.clone(),
    };
    let mut count = n(ev, "/count");
    if ev.get("series").is_some_and(|v| !v.is_null()) {
        last = since(
            ev.pointer("/series/lastObservedTime")
                .and_then(Value::as_str),
            now,
        );
        count = n(ev, "/series/count");
    } else if count == 0 {
        count = 1;
    }
    let kind = s(ev, "/involvedObject/kind").to_lowercase();
    let object = match s(ev, "/involvedObject/name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let component = match s(ev, "/source/component") {
        "" => s(ev, "/reportingController"),
        c => c,
    };
    let instance = match s(ev, "/source/host") {
        "" => s(ev, "/reportingInstance"),
        h => h,
    };
    let source = if instance.is_empty() {
        component.to_owned()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(s(ev, "/type")),
        json!(s(ev, "/reason")),
        json!(object),
        json!(s(ev, "/involvedObject/fieldPath")),
        json!(source),
        json!(s(ev, "/message").trim()),
        json!(first),
        json!(count),
        json!(meta::name(ev)),
    ]
}

fn cells(gr: &GroupResource, obj: &Value, now: SimTime) -> (Vec<Value>, Option<Value>) {
    let age = || {
        json!(since(
            obj.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        ))
    };
    let plain = |c: Vec<Value>| (c, None);
    match (gr.group.as_str(), gr.resource.as_str()) {
        ("apps", "deployments") => plain(deployment_cells(obj, now)),
        ("apps", "replicasets") => plain(replicaset_cells(obj, now)),
        ("", "pods") => pod_cells(obj, now),
        ("", "nodes") => plain(node_cells(obj, now)),
        ("", "namespaces") => plain(vec![
            json!(meta::name(obj)),
            json!(s(obj, "/status/phase")),
            age(),
        ]),
        ("", "configmaps") => {
            let count = |k: &str| obj.get(k).and_then(Value::as_object).map_or(0, |m| m.len());
            plain(vec![
                json!(meta::name(obj)),
                json!(count("data") + count("binaryData")),
                age(),
            ])
        }
        ("", "serviceaccounts") => {
            let secrets = obj
                .get("secrets")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            plain(vec![json!(meta::name(obj)), json!(secrets), age()])
        }
        ("", "services") => plain(service_cells(obj, now)),
        ("autoscaling", "horizontalpodautoscalers") => plain(hpa_cells(obj, now)),
        ("", "events") => plain(event_cells(obj, now)),
        _ => plain(vec![
            json!(meta::name(obj)),
            json!(s(obj, "/metadata/creationTimestamp")),
        ]),
    }
}

fn column_json(c: &Column) -> Value {
    json!({"name": c.0, "type": c.1, "format": c.2, "description": c.4, "priority": c.3})
}

/// The Table for `objects` of resource `gr` (a list's items, or one object), with the list's
/// metadata (`resourceVersion`, `continue`, `remainingItemCount`). `custom_columns` are a CRD
/// version's `additionalPrinterColumns` for a custom resource (`None` for built-in kinds).
pub fn table(
    gr: &GroupResource,
    objects: &[Value],
    list_meta: Value,
    now: SimTime,
    include: IncludeObject,
    custom_columns: Option<&[Value]>,
) -> Value {
    let (defs, rows): (Vec<Value>, Vec<Value>) = match (columns(gr), custom_columns) {
        (Some(cols), _) => (
            cols.iter().map(column_json).collect(),
            objects
                .iter()
                .map(|o| row(cells(gr, o, now), o, include))
                .collect(),
        ),
        (None, Some(extra)) => custom_table(extra, objects, now, include),
        (None, None) => (
            vec![
                column_json(&NAME),
                column_json(&("Created At", "date", "", 0, "When the object was created.")),
            ],
            objects
                .iter()
                .map(|o| row(cells(gr, o, now), o, include))
                .collect(),
        ),
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": defs,
        "rows": rows,
    })
}

fn row(
    (cells, conditions): (Vec<Value>, Option<Value>),
    obj: &Value,
    include: IncludeObject,
) -> Value {
    let object = match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Object => obj.clone(),
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    };
    let mut r = json!({"cells": cells, "object": object});
    if let Some(c) = conditions {
        r["conditions"] = c;
    }
    r
}

/// A custom resource's table: `Name`, then the CRD's columns (or `Age` when it declares none);
/// each cell is the first match of the column's JSONPath (`.a.b`, `.a[0].b`), typed by the
/// column's type, `null` when nothing matches.
fn custom_table(
    extra: &[Value],
    objects: &[Value],
    now: SimTime,
    include: IncludeObject,
) -> (Vec<Value>, Vec<Value>) {
    let default_age = [
        json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
        "description": "Time since the object was created."}),
    ];
    let extra = if extra.is_empty() {
        &default_age[..]
    } else {
        extra
    };
    let mut defs = vec![column_json(&NAME)];
    for c in extra {
        let description = match s(c, "/description") {
            "" => format!(
                "Custom resource definition column (in JSONPath format): {}",
                s(c, "/jsonPath")
            ),
            d => d.to_owned(),
        };
        defs.push(
            json!({"name": s(c, "/name"), "type": s(c, "/type"), "format": s(c, "/format"),
            "description": description, "priority": n(c, "/priority")}),
        );
    }
    let rows = objects
        .iter()
        .map(|o| {
            let mut cells = vec![json!(meta::name(o))];
            for c in extra {
                let found = json_path_first(o, s(c, "/jsonPath"));
                cells.push(match (s(c, "/type"), found) {
                    (_, None) => Value::Null,
                    ("string", Some(Value::String(v))) => json!(v),
                    ("string", Some(v)) => json!(v.to_string()),
                    ("integer", Some(v)) => v
                        .as_i64()
                        .or_else(|| v.as_f64().map(|f| f as i64))
                        .map_or(Value::Null, |i| json!(i)),
                    ("number", Some(v)) => v.as_f64().map_or(Value::Null, |f| json!(f)),
                    ("boolean", Some(Value::Bool(b))) => json!(b),
                    ("date", Some(Value::String(t))) => match SimTime::parse_rfc3339(t) {
                        Some(t) => json!(human_duration(now.as_ms() as i64 - t.as_ms() as i64)),
                        None if t.is_empty() => json!("<unknown>"),
                        None => json!("<invalid>"),
                    },
                    _ => Value::Null,
                });
            }
            row((cells, None), o, include)
        })
        .collect();
    (defs, rows)
}

/// The first value a simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`) finds.
fn json_path_first<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for part in path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
    {
        let (field, index) = match part.split_once('[') {
            Some((f, rest)) => (f, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        if !field.is_empty() {
            cur = cur.get(field)?;
        }
        if let Some(i) = index {
            cur = cur.get(i)?;
        }
    }
    (!cur.is_null()).then_some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_apimachinerys_table() {
        let s = 1000;
        let m = 60 * s;
        let h = 60 * m;
        let d = 24 * h;
        for (ms, text) in [
            (0, "0s"),
            (-1500, "0s"),
            (-2000, "<invalid>"),
            (59 * s, "59s"),
            (119 * s, "119s"),
            (2 * m, "2m"),
            (2 * m + 5 * s, "2m5s"),
            (9 * m + 59 * s, "9m59s"),
            (10 * m + 30 * s, "10m"),
            (179 * m, "179m"),
            (3 * h, "3h"),
            (3 * h + 30 * m, "3h30m"),
            (8 * h + 30 * m, "8h"),
            (47 * h + 59 * m, "47h"),
            (48 * h, "2d"),
            (53 * h, "2d5h"),
            (8 * d, "8d"),
            (729 * d + 23 * h, "729d"),
            (730 * d, "2y"),
            (731 * d, "2y1d"),
            (8 * 365 * d, "8y"),
            (10 * 365 * d, "10y"),
        ] {
            assert_eq!(human_duration(ms), text, "{ms} ms");
        }
    }

    fn at(secs: u64) -> SimTime {
        SimTime::from_ms(secs * 1000)
    }

    #[test]
    fn deployments_print_ready_up_to_date_available_and_the_wide_cells() {
        let d = json!({"metadata": {"name": "web", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"tier": "fe", "app": "web"}},
                "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        let t = table(
            &GroupResource::new("apps", "deployments"),
            &[d],
            json!({"resourceVersion": "9"}),
            at(300),
            IncludeObject::Metadata,
            None,
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!([
                "web",
                "2/3",
                3,
                2,
                "5m",
                "nginx,log",
                "nginx:1.27,busybox",
                "app=web,tier=fe"
            ])
        );
        assert_eq!(t["columnDefinitions"][5]["priority"], json!(1));
        assert_eq!(
            t["rows"][0]["object"]["kind"],
            json!("PartialObjectMetadata")
        );
    }

    #[test]
    fn pod_status_follows_kubes_printer() {
        let pod = |status: Value| {
            json!({"metadata": {"name": "p", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "app"}], "nodeName": "node-1"}, "status": status})
        };
        let row = |p: Value| pod_cells(&p, at(100)).0;
        let crash = row(pod(
            json!({"phase": "Running", "podIPs": [{"ip": "10.244.1.5"}], "containerStatuses": [{
            "name": "app", "ready": false, "restartCount": 5,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2025-01-01T00:01:15Z"}}}]}),
        ));
        assert_eq!(
            crash[1..4],
            [
                json!("0/1"),
                json!("CrashLoopBackOff"),
                json!("5 (25s ago)")
            ]
        );
        assert_eq!(crash[5..7], [json!("10.244.1.5"), json!("node-1")]);
        let running = row(pod(
            json!({"phase": "Running", "containerStatuses": [{"name": "app", "ready": true,
            "restartCount": 0, "state": {"running": {"startedAt": "2025-01-01T00:00:05Z"}}}]}),
        ));
        assert_eq!(running[1..4], [json!("1/1"), json!("Running"), json!("0")]);
        let mut terminating = pod(json!({"phase": "Running"}));
        terminating["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:01:00Z");
        assert_eq!(row(terminating)[2], json!("Terminating"));
        let pending = row(pod(json!({"phase": "Pending"})));
        assert_eq!(pending[1..4], [json!("0/1"), json!("Pending"), json!("0")]);
        let mut init = pod(json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 0}}},
            {"name": "b", "state": {"waiting": {"reason": "PodInitializing"}}}]}));
        init["spec"]["initContainers"] = json!([{"name": "a"}, {"name": "b"}]);
        assert_eq!(row(init)[2], json!("Init:1/2"));
    }

    #[test]
    fn nodes_hpas_and_unknown_kinds_print_as_kube_does() {
        let node = json!({"metadata": {"name": "node-1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.32.0"}}});
        let c = node_cells(&node, at(0));
        assert_eq!(
            c[1..3],
            [json!("Ready,SchedulingDisabled"), json!("control-plane")]
        );
        assert_eq!(c[7], json!("<unknown>"));
        let hpa = json!({"metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 10, "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]}, "status": {"currentReplicas": 2}});
        assert_eq!(
            hpa_cells(&hpa, at(0))[1..6],
            [
                json!("Deployment/web"),
                json!("cpu: <unknown>/80%"),
                json!("1"),
                json!(10),
                json!(2)
            ]
        );
        let t = table(
            &GroupResource::new("rbac.authorization.k8s.io", "roles"),
            &[json!({"metadata": {"name": "r", "creationTimestamp": "2025-01-01T00:00:00Z"}})],
            json!({}),
            at(9),
            IncludeObject::None,
            None,
        );
        assert_eq!(t["columnDefinitions"][1]["name"], json!("Created At"));
        assert_eq!(t["rows"][0]["cells"], json!(["r", "2025-01-01T00:00:00Z"]));
        assert_eq!(t["rows"][0]["object"], Value::Null);
    }

    #[test]
    fn custom_resources_print_their_crds_columns_or_age() {
        let db = json!({"metadata": {"name": "orders", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"engine": "postgres", "replicas": 3}});
        let cols = [
            json!({"name": "Engine", "type": "string", "jsonPath": ".spec.engine"}),
            json!({"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "priority": 1}),
            json!({"name": "Phase", "type": "string", "jsonPath": ".status.phase"}),
        ];
        let gr = GroupResource::new("example.com", "databases");
        let t = table(
            &gr,
            std::slice::from_ref(&db),
            json!({}),
            at(60),
            IncludeObject::Metadata,
            Some(&cols),
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["orders", "postgres", 3, null])
        );
        assert_eq!(
            t["columnDefinitions"][1]["description"],
            json!("Custom resource definition column (in JSONPath format): .spec.engine")
        );
        let plain = table(
            &gr,
            &[db],
            json!({}),
            at(60),
            IncludeObject::Metadata,
            Some(&[]),
        );
        assert_eq!(plain["rows"][0]["cells"], json!(["orders", "60s"]));
    }
}
