//! The helpers of kube's staging/src/k8s.io/endpointslice `utils.go` and
//! `util/controller_utils.go`: which Services a pod belongs to, whether a pod change matters,
//! the endpoint and ports for a pod, and the slice a Service starts with.

use crate::api::meta::Fields;
use std::collections::{BTreeMap, BTreeSet};

use crate::json::{json, Map, Value};

use super::{
    services, CONTROLLER_NAME, LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_ZONE,
};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::validation::Ip;
use crate::api::ObjectKey;
use crate::runtime::informer::{pod_is_ready, Informer};

/// `None` too: the API server stores it as protobuf, which does not keep an empty map.
pub fn service_selector(svc: &Value) -> Option<BTreeMap<String, String>> {
    let m = meta::string_map(svc.at("/spec/selector"));
    (!m.is_empty()).then_some(m)
}

/// Whether `svc`'s selector selects `labels` (`labels.ValidatedSetSelector(...).Matches`).
pub(super) fn selects(svc: &Value, labels: &BTreeMap<String, String>) -> bool {
    service_selector(svc).is_some_and(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

pub(super) fn service_key(svc: &Value) -> ObjectKey {
    ObjectKey::new(services(), meta::namespace(svc), meta::name(svc))
}

/// `GetPodServiceMemberships`: the Services of the pod's namespace that select its labels.
pub(super) fn memberships(cache: &Informer, pod: &Value) -> BTreeSet<ObjectKey> {
    let labels = meta::label_map(pod);
    let ns = meta::namespace(pod);
    cache
        .list(&services())
        .filter(|s| meta::namespace(s) == ns && selects(s, &labels))
        .map(|s| service_key(s))
        .collect()
}

/// `podEndpointsChanged`: (the endpoint may have changed, the pod's Service membership may
/// have). kube compares the deletion timestamps as pointers, and two decoded pods never share
/// one: any update of a terminating pod counts as a change.
pub fn pod_endpoints_changed(old: &Value, new: &Value) -> (bool, bool) {
    let spec = |p: &Value, k: &str| str_at(p, &format!("/spec/{k}")).to_owned();
    let labels_changed = meta::labels(old) != meta::labels(new)
        || spec(old, "hostname") != spec(new, "hostname")
        || spec(old, "subdomain") != spec(new, "subdomain");
    let deletion = |p: &Value| meta::deletion_timestamp(p).is_some();
    if deletion(old) || deletion(new) {
        return (true, labels_changed);
    }
    if pod_is_ready(old) != pod_is_ready(new) {
        return (true, labels_changed);
    }
    let ips = |p: &Value| -> Vec<String> {
        p.at("/status/podIPs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|i| str_at(i, "/ip").to_owned())
            .collect()
    };
    (ips(old) != ips(new), labels_changed)
}

/// `ShouldPodBeInEndpoints`: not terminal, has an IP, and not terminating unless asked.
pub fn should_pod_be_in_endpoints(pod: &Value, include_terminating: bool) -> bool {
    if matches!(str_at(pod, "/status/phase"), "Succeeded" | "Failed") {
        return false;
    }
    let no_ips = pod
        .at("/status/podIPs")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if str_at(pod, "/status/podIP").is_empty() && no_ips {
        return false;
    }
    include_terminating || meta::deletion_timestamp(pod).is_none()
}

/// `isServiceIPSet`.
pub(super) fn service_ip_set(svc: &Value) -> bool {
    !matches!(str_at(svc, "/spec/clusterIP"), "" | "None")
}

/// `getAddressTypesForService`: the families in `spec.ipFamilies`, else the cluster IP's. A
/// headless Service without families would get both; kube's API server never stores one (it
/// defaults `ipFamilies` to the cluster's, IPv4 here), so IPv4 stands for that default.
pub fn address_types(svc: &Value) -> Vec<&'static str> {
    let families = meta::str_list_at(svc, "/spec/ipFamilies");
    let mut types: Vec<&'static str> = Vec::new();
    for f in &families {
        match f.as_str() {
            "IPv4" if !types.contains(&"IPv4") => types.push("IPv4"),
            "IPv6" if !types.contains(&"IPv6") => types.push("IPv6"),
            _ => {}
        }
    }
    if types.is_empty() {
        let v6 = Ip::parse(str_at(svc, "/spec/clusterIP")).is_some_and(Ip::is_v6);
        types.push(if service_ip_set(svc) && v6 {
            "IPv6"
        } else {
            "IPv4"
        });
    }
    types.sort_unstable();
    types
}

/// `getEndpointAddresses`: the pod IPs of the address type. kube re-prints each in canonical
/// form; the kubelets here only report canonical addresses, so they are kept as written.
pub(super) fn endpoint_addresses(pod: &Value, address_type: &str) -> Vec<Value> {
    pod.at("/status/podIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|i| str_at(i, "/ip"))
        .filter(|ip| Ip::parse(ip).is_some_and(|ip| ip.is_v6() == (address_type == "IPv6")))
        .map(|ip| json!(ip))
        .collect()
}

/// `podToEndpoint`: serving is the pod's readiness, terminating its deletion, and ready is
/// serving and not terminating, or anything with `publishNotReadyAddresses`.
pub fn pod_to_endpoint(
    pod: &Value,
    node: Option<&Value>,
    svc: &Value,
    address_type: &str,
) -> Value {
    let serving = pod_is_ready(pod);
    let terminating = meta::deletion_timestamp(pod).is_some();
    let publish = svc
        .at("/spec/publishNotReadyAddresses")
        .and_then(Value::as_bool)
        == Some(true);
    let ready = publish || (serving && !terminating);
    let mut ep = Map::new();
    ep.insert(
        "addresses",
        Value::Array(endpoint_addresses(pod, address_type).into()),
    );
    ep.insert(
        "conditions",
        json!({"ready": ready, "serving": serving, "terminating": terminating}),
    );
    // ShouldSetHostname.
    let hostname = str_at(pod, "/spec/hostname");
    if !hostname.is_empty()
        && str_at(pod, "/spec/subdomain") == meta::name(svc)
        && meta::namespace(pod) == meta::namespace(svc)
    {
        ep.insert("hostname", json!(hostname));
    }
    ep.insert(
        "targetRef",
        json!({"kind": "Pod", "namespace": meta::namespace(pod), "name": meta::name(pod), "uid": meta::uid(pod)}),
    );
    let node_name = str_at(pod, "/spec/nodeName");
    if !node_name.is_empty() {
        ep.insert("nodeName", json!(node_name));
    }
    let zone = node.map_or("", |n| {
        n.at("/metadata/labels")
            .and_then(|l| l.get(LABEL_ZONE))
            .and_then(Value::as_str)
            .unwrap_or("")
    });
    if !zone.is_empty() {
        ep.insert("zone", json!(zone));
    }
    Value::Object(ep)
}

/// `FindPort`: a numeric targetPort as is; a named one is the container port of that name and
/// the service port's protocol (in the containers, then in restartable init containers).
pub fn find_port(pod: &Value, svc_port: &Value) -> Option<i64> {
    let protocol = svc_port
        .field("protocol")
        .and_then(Value::as_str)
        .unwrap_or("TCP");
    match svc_port.field("targetPort") {
        Some(Value::String(name)) => {
            let named = |c: &Value| {
                c.field("ports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|p| {
                        str_at(p, "/name") == name
                            && p.field("protocol").and_then(Value::as_str).unwrap_or("TCP")
                                == protocol
                    })
                    .and_then(|p| p.field("containerPort").and_then(Value::as_i64))
            };
            let list = |k: &str| {
                pod.at(&format!("/spec/{k}"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            list("containers").iter().find_map(named).or_else(|| {
                list("initContainers")
                    .iter()
                    .filter(|c| str_at(c, "/restartPolicy") == "Always")
                    .find_map(named)
            })
        }
        Some(v) => v.as_i64(),
        // An unset IntOrString is the integer 0.
        None => Some(0),
    }
}

/// `getEndpointPorts`: one EndpointPort per service port whose target port the pod has.
pub fn endpoint_ports(svc: &Value, pod: &Value) -> Vec<Value> {
    let ports: Vec<Value> = svc
        .at("/spec/ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ports
        .iter()
        .filter_map(|sp| {
            let port = find_port(pod, sp)?;
            let mut p = Map::new();
            p.insert("name", json!(str_at(sp, "/name")));
            p.insert(
                "protocol",
                json!(sp
                    .field("protocol")
                    .and_then(Value::as_str)
                    .unwrap_or("TCP")),
            );
            p.insert("port", json!(port));
            if let Some(app) = sp.field("appProtocol").filter(|v| v.is_string()) {
                p.insert("appProtocol", app.clone());
            }
            Some(Value::Object(p))
        })
        .collect()
}

/// `NewPortMapKey`: the ports in a fixed order, as one string.
pub(super) fn port_map_key(ports: &[Value]) -> String {
    let mut each: Vec<String> = ports.iter().map(Value::to_string).collect();
    each.sort();
    each.join(",")
}

pub(super) fn sorted_ports(mut ports: Vec<Value>) -> Vec<Value> {
    ports.sort_by_key(|p| p.to_string());
    ports
}

/// `setEndpointSliceLabels`: the Service's labels without the reserved ones, the headless
/// label when the Service has no cluster IP, and the service name and managed-by labels; true
/// when the slice's unreserved labels differ from the Service's.
pub(super) fn slice_labels(slice: Option<&Value>, svc: &Value) -> (Map, bool) {
    let reserved = |k: &str| matches!(k, LABEL_SERVICE_NAME | LABEL_MANAGED_BY | LABEL_HEADLESS);
    let unreserved = |o: Option<&Value>| -> BTreeMap<String, String> {
        o.map(meta::label_map)
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| !reserved(k))
            .collect()
    };
    let svc_labels = unreserved(Some(svc));
    let changed = unreserved(slice) != svc_labels;
    let mut labels: BTreeMap<String, String> = svc_labels;
    if !service_ip_set(svc) {
        labels.insert(LABEL_HEADLESS.into(), String::new());
    }
    labels.insert(LABEL_SERVICE_NAME.into(), meta::name(svc).to_owned());
    labels.insert(LABEL_MANAGED_BY.into(), CONTROLLER_NAME.into());
    (
        labels.into_iter().map(|(k, v)| (k, json!(v))).collect(),
        changed,
    )
}

/// A list as the API server stores it: an empty one is `null` (protobuf keeps no empty list).
pub(super) fn stored_list(items: Vec<Value>) -> Value {
    if items.is_empty() {
        Value::Null
    } else {
        Value::Array(items.into())
    }
}

/// `newEndpointSlice`: an empty slice for the Service, named by the server from
/// `getEndpointSlicePrefix`.
pub fn new_endpoint_slice(svc: &Value, ports: &[Value], address_type: &str) -> Value {
    let name = meta::name(svc);
    // getEndpointSlicePrefix: `<name>-` when that is a valid prefix (a trailing dash is
    // checked as a letter).
    let prefix = if crate::api::validation::dns1123_subdomain(&format!("{name}a")).is_empty() {
        format!("{name}-")
    } else {
        name.to_owned()
    };
    let (labels, _) = slice_labels(None, svc);
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "generateName": prefix,
            "namespace": meta::namespace(svc),
            "labels": labels,
            "ownerReferences": [meta::owner_reference(svc, true)],
        },
        "addressType": address_type,
        "endpoints": Value::Null,
        "ports": stored_list(ports.to_vec()),
    })
}

/// `ownedBy`.
pub(super) fn owned_by(slice: &Value, svc: &Value) -> bool {
    meta::owner_refs(slice).iter().any(|o| {
        meta::ref_uid(o) == Some(meta::uid(svc))
            && str_at(o, "/kind") == "Service"
            && str_at(o, "/apiVersion") == "v1"
    })
}

pub(super) fn endpoints_of(slice: &Value) -> Vec<Value> {
    slice
        .field("endpoints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// What `hashEndpoint` hashes: sorted addresses, hostname, the target's namespace and name.
pub(super) type EndpointHash = (Vec<String>, String, String, String);

/// `hashEndpoint`.
pub(super) fn endpoint_hash(ep: &Value) -> EndpointHash {
    let mut addresses: Vec<String> = meta::str_list_at(ep, "/addresses");
    addresses.sort();
    (
        addresses,
        str_at(ep, "/hostname").to_owned(),
        str_at(ep, "/targetRef/namespace").to_owned(),
        str_at(ep, "/targetRef/name").to_owned(),
    )
}

/// `EndpointsEqualBeyondHash`: node, zone, the three conditions and the target (its
/// resourceVersion aside).
pub(super) fn endpoints_equal_beyond_hash(a: &Value, b: &Value) -> bool {
    let target = |e: &Value| {
        let mut t = e.field("targetRef").cloned().unwrap_or(Value::Null);
        if let Some(m) = t.as_object_mut() {
            m.remove("resourceVersion");
        }
        t
    };
    [
        "/nodeName",
        "/zone",
        "/conditions/ready",
        "/conditions/serving",
        "/conditions/terminating",
    ]
    .iter()
    .all(|p| a.at(p).filter(|v| !v.is_null()) == b.at(p).filter(|v| !v.is_null()))
        && target(a) == target(b)
}
