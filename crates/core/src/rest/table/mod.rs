//! Server-side printing: the `meta.k8s.io/v1` Table `kubectl get` asks for
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), with kube 1.32's columns and cell
//! rules per kind [kubernetes pkg/printers/internalversion/printers.go `AddHandlers` and the
//! `print<Kind>` functions; apiserver pkg/registry/rest/table.go `NewDefaultTableConvertor`;
//! apiextensions-apiserver pkg/registry/customresource/tableconvertor]. The server always
//! prints the wide cells; kubectl hides priority-1 columns unless `-o wide`. Column
//! descriptions are Converge's own one-line summaries (kube sends its API docs there; no client
//! shows them).

use crate::api::meta::Fields;
use crate::json::{json, Value};

use crate::api::meta::{self, str_at};
use crate::api::GroupResource;
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

mod cluster;
mod columns;
mod custom;
mod hpa;
mod pod;
mod workloads;

use cluster::{endpointslice_cells, event_cells, node_cells, service_cells};
use columns::{columns, NAME};
use custom::custom_table;
use hpa::hpa_cells;
use pod::pod_cells;
use workloads::{
    controllerrevision_cells, daemonset_cells, deployment_cells, job_cells, replicaset_cells,
    statefulset_cells,
};

/// One column: name, type, format, priority (1 = wide only), description.
type Column = (&'static str, &'static str, &'static str, u8, &'static str);

pub use crate::time::human_duration;

pub(super) use crate::time::since;

/// An integer at a JSON pointer, 0 when absent (Go's zero value, as the printers read it).
pub(super) fn n(obj: &Value, ptr: &str) -> i64 {
    meta::i64_at(obj, ptr).unwrap_or(0)
}

pub(super) fn or_none(v: &str) -> String {
    if v.is_empty() {
        "<none>".into()
    } else {
        v.to_owned()
    }
}

/// `layoutContainerCells`: names and images joined by commas, in spec order.
pub(super) fn containers(obj: &Value, ptr: &str) -> (String, String) {
    let list = obj
        .pointer(ptr)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = list.iter().map(|c| str_at(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| str_at(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// `labels.FormatLabels`: `k=v` strings sorted whole, or `<none>`.
pub(super) fn format_labels(m: Option<&Value>) -> String {
    let mut parts: Vec<String> = m
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    parts.sort();
    or_none(&parts.join(","))
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
        ("batch", "jobs") => plain(job_cells(obj, now)),
        ("apps", "daemonsets") => plain(daemonset_cells(obj, now)),
        ("apps", "statefulsets") => plain(statefulset_cells(obj, now)),
        ("apps", "controllerrevisions") => plain(controllerrevision_cells(obj, now)),
        ("", "pods") => pod_cells(obj, now),
        ("", "nodes") => plain(node_cells(obj, now)),
        ("", "namespaces") => plain(vec![
            json!(meta::name(obj)),
            json!(str_at(obj, "/status/phase")),
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
                .field("secrets")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            plain(vec![json!(meta::name(obj)), json!(secrets), age()])
        }
        ("", "services") => plain(service_cells(obj, now)),
        ("discovery.k8s.io", "endpointslices") => plain(endpointslice_cells(obj, now)),
        ("autoscaling", "horizontalpodautoscalers") => plain(hpa_cells(obj, now)),
        ("", "events") => plain(event_cells(obj, now)),
        _ => plain(vec![
            json!(meta::name(obj)),
            json!(str_at(obj, "/metadata/creationTimestamp")),
        ]),
    }
}

pub(super) fn column_json(c: &Column) -> Value {
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

pub(super) fn row(
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
            "metadata": obj.field("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    };
    let mut r = json!({"cells": cells, "object": object});
    if let Some(c) = conditions {
        r["conditions"] = c;
    }
    r
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

    fn column_names(t: &Value) -> Vec<&str> {
        t["columnDefinitions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["name"].as_str().unwrap_or(""))
            .collect()
    }

    /// `printDaemonSet` and `printControllerRevision`, column by column.
    #[test]
    fn daemon_sets_print_their_counts_and_node_selector_and_revisions_their_controller() {
        let ds = json!({"metadata": {"name": "agent", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"spec": {"nodeSelector": {"zone": "b", "disk": "ssd"},
                    "containers": [{"name": "a", "image": "agent:1"}]}}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                "updatedNumberScheduled": 1, "numberAvailable": 2}});
        let t = table(
            &GroupResource::new("apps", "daemonsets"),
            &[ds],
            json!({}),
            at(90),
            IncludeObject::None,
            None,
        );
        let names = column_names(&t);
        assert_eq!(
            names,
            [
                "Name",
                "Desired",
                "Current",
                "Ready",
                "Up-to-date",
                "Available",
                "Node Selector",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!([
                "agent",
                3,
                3,
                2,
                1,
                2,
                "disk=ssd,zone=b",
                "90s",
                "a",
                "agent:1",
                "app=agent"
            ])
        );
        let cr = json!({"metadata": {"name": "agent-6b9856c5df", "creationTimestamp": "2025-01-01T00:00:00Z",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": true}]},
            "data": {}, "revision": 2});
        let t = table(
            &GroupResource::new("apps", "controllerrevisions"),
            &[cr],
            json!({}),
            at(90),
            IncludeObject::None,
            None,
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["agent-6b9856c5df", "daemonset.apps/agent", 2, "90s"])
        );
    }

    /// `printEndpointSlice`: `formatDiscoveryPorts` shows a port's number (else its name, else
    /// `*`), `formatDiscoveryEndpoints` every address of every endpoint, each the first three
    /// and `+ N more...`; an empty list is `<unset>`.
    #[test]
    fn endpoint_slices_print_the_first_three_ports_and_addresses() {
        let gr = GroupResource::new("discovery.k8s.io", "endpointslices");
        let slice = json!({"metadata": {"name": "web-abcde", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": 8080}, {"name": "metrics"}, {}, {"port": 9}],
            "endpoints": [{"addresses": ["10.244.1.2", "10.244.1.3"]},
                {"addresses": ["10.244.2.2"]}, {"addresses": ["10.244.3.2", "10.244.3.3"]}]});
        let t = table(&gr, &[slice], json!({}), at(30), IncludeObject::None, None);
        let names = column_names(&t);
        assert_eq!(names, ["Name", "AddressType", "Ports", "Endpoints", "Age"]);
        assert_eq!(
            t["rows"][0]["cells"],
            json!([
                "web-abcde",
                "IPv4",
                "8080,metrics,* + 1 more...",
                "10.244.1.2,10.244.1.3,10.244.2.2 + 2 more...",
                "30s"
            ])
        );
        let placeholder = json!({"metadata": {"name": "web-p", "creationTimestamp": "2025-01-01T00:00:00Z"},
            "addressType": "IPv4", "ports": null, "endpoints": null});
        let t = table(
            &gr,
            &[placeholder],
            json!({}),
            at(30),
            IncludeObject::None,
            None,
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["web-p", "IPv4", "<unset>", "<unset>", "30s"])
        );
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
