//! Node, Service, EndpointSlice and Event rows [printers.go `printNode`, `printService`,
//! `printEndpointSlice`, `printEvent`].

use crate::api::meta::Fields;
use std::collections::BTreeSet;

use crate::json::{json, Value};

use super::{format_labels, n, or_none, since};
use crate::api::meta::{self, str_at};
use crate::time::SimTime;

pub(super) fn node_cells(node: &Value, now: SimTime) -> Vec<Value> {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().rev().find(|c| str_at(c, "/type") == "Ready"));
    let mut status = vec![match ready {
        Some(c) if str_at(c, "/status") == "True" => "Ready",
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
            .and_then(|a| a.iter().find(|x| str_at(x, "/type") == ty))
            .map_or("<none>".to_owned(), |x| str_at(x, "/address").to_owned())
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
        json!(str_at(node, "/status/nodeInfo/kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(unknown(str_at(node, "/status/nodeInfo/osImage"))),
        json!(unknown(str_at(node, "/status/nodeInfo/kernelVersion"))),
        json!(unknown(str_at(
            node,
            "/status/nodeInfo/containerRuntimeVersion"
        ))),
    ]
}
pub(super) fn service_cells(svc: &Value, now: SimTime) -> Vec<Value> {
    let ty = str_at(svc, "/spec/type");
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
                    if str_at(i, "/ip").is_empty() {
                        str_at(i, "/hostname")
                    } else {
                        str_at(i, "/ip")
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
        "ExternalName" => str_at(svc, "/spec/externalName").to_owned(),
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
                format!("{}:{node_port}/{}", n(p, "/port"), str_at(p, "/protocol"))
            } else {
                format!("{}/{}", n(p, "/port"), str_at(p, "/protocol"))
            }
        })
        .collect();
    vec![
        json!(meta::name(svc)),
        json!(ty),
        json!(or_none(str_at(svc, "/spec/clusterIPs/0"))),
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
pub(super) fn event_cells(ev: &Value, now: SimTime) -> Vec<Value> {
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
    if ev.field("series").is_some_and(|v| !v.is_null()) {
        last = since(
            ev.pointer("/series/lastObservedTime")
                .and_then(Value::as_str),
            now,
        );
        count = n(ev, "/series/count");
    } else if count == 0 {
        count = 1;
    }
    let kind = str_at(ev, "/involvedObject/kind").to_lowercase();
    let object = match str_at(ev, "/involvedObject/name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let component = meta::event_source(ev);
    let instance = match str_at(ev, "/source/host") {
        "" => str_at(ev, "/reportingInstance"),
        h => h,
    };
    let source = if instance.is_empty() {
        component.to_owned()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(str_at(ev, "/type")),
        json!(str_at(ev, "/reason")),
        json!(object),
        json!(str_at(ev, "/involvedObject/fieldPath")),
        json!(source),
        json!(str_at(ev, "/message").trim()),
        json!(first),
        json!(count),
        json!(meta::name(ev)),
    ]
}

/// `printEndpointSlice`: the address type, then `formatDiscoveryPorts` and
/// `formatDiscoveryEndpoints`, each the first three entries and `+ N more...`.
pub(super) fn endpointslice_cells(slice: &Value, now: SimTime) -> Vec<Value> {
    let items = |key: &str| {
        slice
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    // A port's number, else its name, else `*`.
    let ports: Vec<String> = items("ports")
        .iter()
        .map(
            |p| match (p.field("port").and_then(Value::as_i64), p.field("name")) {
                (Some(n), _) => n.to_string(),
                (None, Some(Value::String(name))) => name.to_string(),
                _ => "*".to_owned(),
            },
        )
        .collect();
    let addresses: Vec<String> = items("endpoints")
        .iter()
        .flat_map(|e| {
            e.field("addresses")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .map(|a| a.as_str().unwrap_or("").to_owned())
        .collect();
    vec![
        json!(meta::name(slice)),
        json!(str_at(slice, "/addressType")),
        json!(list_with_more(&ports)),
        json!(list_with_more(&addresses)),
        json!(since(
            slice
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
    ]
}

/// `listWithMoreString` with kube's maximum of 3: `a,b,c + 2 more...`, `<unset>` when empty.
fn list_with_more(all: &[String]) -> String {
    const MAX: usize = 3;
    let shown = all[..all.len().min(MAX)].join(",");
    if all.len() > MAX {
        format!("{shown} + {} more...", all.len() - MAX)
    } else if shown.is_empty() {
        "<unset>".to_owned()
    } else {
        shown
    }
}
