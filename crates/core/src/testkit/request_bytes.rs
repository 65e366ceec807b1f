//! Fuzz bytes read as API requests: a principal, a resource, a name and a verb picked from
//! small tables, and bodies built from a valid template of the kind plus a few edits, so most
//! requests get past decoding and exercise the server's rules.

use crate::json::{json, Value};

use crate::api::{ApiRequest, ApiServer, GroupResource, ObjectKey, PatchType, Subresource, Verb};
use crate::parse;

/// Reads decisions from fuzz bytes; past the end every read is 0.
pub(super) struct Bytes<'a> {
    pub(super) data: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    fn pick<T: Copy>(&mut self, options: &[T]) -> T {
        options[usize::from(self.byte()) % options.len()]
    }

    pub(super) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A length-prefixed chunk of the remaining bytes.
    fn chunk(&mut self) -> &'a [u8] {
        let len = usize::from(self.byte()) * 4;
        let (head, rest) = self.data.split_at(len.min(self.data.len()));
        self.data = rest;
        head
    }
}

const PRINCIPALS: &[&str] = &[
    "alice",
    "admin",
    "mallory",
    "system:serviceaccount:kube-system:deployment-controller",
    "system:kube-scheduler",
    "system:node:node-1",
];

const RESOURCES: &[(&str, &str, &str, &str)] = &[
    // group, resource, apiVersion, kind
    ("apps", "deployments", "apps/v1", "Deployment"),
    ("apps", "replicasets", "apps/v1", "ReplicaSet"),
    ("", "pods", "v1", "Pod"),
    ("", "configmaps", "v1", "ConfigMap"),
    ("", "services", "v1", "Service"),
    ("", "namespaces", "v1", "Namespace"),
    ("", "nodes", "v1", "Node"),
    ("example.com", "databases", "example.com/v1", "Database"),
    (
        "autoscaling",
        "horizontalpodautoscalers",
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
    ),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
    ),
    ("batch", "jobs", "batch/v1", "Job"),
    ("apps", "daemonsets", "apps/v1", "DaemonSet"),
    ("apps", "statefulsets", "apps/v1", "StatefulSet"),
    (
        "discovery.k8s.io",
        "endpointslices",
        "discovery.k8s.io/v1",
        "EndpointSlice",
    ),
];

const NAMES: &[&str] = &[
    "web", "cfg", "orders", "p", "new", "default", "node-1", "Bad_Name", "",
];
const NAMESPACES: &[&str] = &["default", "kube-system", "", "nope"];

/// Field paths the request bodies edit, and the values put there.
const PATHS: &[&[&str]] = &[
    &["spec", "replicas"],
    &["spec", "selector"],
    &["spec", "selector", "matchLabels", "app"],
    &["spec", "template", "metadata", "labels"],
    &["spec", "template", "spec", "containers"],
    &["spec", "template", "spec", "containers", "0", "image"],
    &[
        "spec",
        "template",
        "spec",
        "containers",
        "0",
        "resources",
        "requests",
        "cpu",
    ],
    &["spec", "strategy", "rollingUpdate", "maxSurge"],
    &["spec", "paused"],
    &["spec", "version"],
    &["status", "replicas"],
    &["status", "observedGeneration"],
    &["status", "conditions"],
    &["status", "phase"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "labels", "app"],
    &["metadata", "annotations"],
    &["metadata", "resourceVersion"],
    &["metadata", "uid"],
    &["metadata", "generation"],
    &["metadata", "finalizers"],
    &["metadata", "ownerReferences"],
    &["metadata", "deletionTimestamp"],
    &["metadata"],
    &["spec"],
    &["data", "k"],
    &["apiVersion"],
    &["kind"],
    &["spec", "updateStrategy", "rollingUpdate", "maxSurge"],
    &["spec", "updateStrategy", "type"],
    &["spec", "template", "spec", "nodeSelector"],
    &["status", "numberReady"],
    &["spec", "updateStrategy", "rollingUpdate", "partition"],
    &["spec", "podManagementPolicy"],
    &["status", "currentRevision"],
    &["addressType"],
    &["endpoints"],
    &["endpoints", "0", "addresses"],
    &["endpoints", "0", "conditions", "ready"],
    &["endpoints", "0", "nodeName"],
    &["ports"],
    &["ports", "0", "protocol"],
    &["ports", "0", "name"],
    &["spec", "publishNotReadyAddresses"],
];

fn value_from(b: &mut Bytes) -> Value {
    match b.byte() % 16 {
        0 => Value::Null,
        1 => json!(-1),
        2 => json!(0),
        3 => json!(3),
        4 => json!(10_001),
        5 => json!(i64::MAX),
        6 => json!(1.5),
        7 => json!("web"),
        8 => json!("100m"),
        9 => json!(""),
        10 => json!(true),
        11 => json!([]),
        12 => json!({}),
        13 => json!([{"type": "Ready", "status": "True", "reason": "Ok", "message": "",
                      "lastTransitionTime": "2025-01-01T00:00:00Z"},
                     {"type": "Ready", "status": "Maybe", "reason": "", "message": "",
                      "lastTransitionTime": "2025-01-01T00:00:00Z"}]),
        14 => json!({"app": "web"}),
        _ => {
            // Raw text from the fuzz bytes, as a string or (when it parses) a document.
            let chunk = b.chunk();
            let text = String::from_utf8_lossy(chunk).into_owned();
            match parse::parse_documents(&text) {
                Ok(mut docs) => docs.swap_remove(0),
                Err(_) => Value::String(text.into()),
            }
        }
    }
}

fn set_path(target: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        *target = value;
        return;
    };
    let mut cur = target;
    for seg in parents {
        cur = match cur {
            Value::Array(a) => match seg.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            Value::Object(m) => m.entry(seg.to_string()).or_insert_with(|| json!({})),
            _ => return,
        };
    }
    match cur {
        Value::Object(m) => {
            m.insert(last.to_string(), value);
        }
        Value::Array(a) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = value;
            }
        }
        _ => {}
    }
}

/// A body for `kind` named `name`: a valid object, then up to 4 edits from the fuzz bytes.
fn body_from(b: &mut Bytes, api_version: &str, kind: &str, name: &str) -> Value {
    let mut body = template(api_version, kind, name);
    for _ in 0..b.byte() % 5 {
        let path = b.pick(PATHS);
        let value = value_from(b);
        set_path(&mut body, path, value);
    }
    body
}

/// A valid object of each fuzzed kind.
pub fn template(api_version: &str, kind: &str, name: &str) -> Value {
    let meta = json!({"name": name, "namespace": "default", "labels": {"app": "web"}});
    let spec = match kind {
        "Deployment" | "ReplicaSet" => json!({
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}),
        "DaemonSet" => json!({
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}},
            "updateStrategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}}),
        "StatefulSet" => json!({
            "replicas": 2,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}),
        "Pod" => json!({"containers": [{"name": "app", "image": "nginx:1.25"}]}),
        "Job" => json!({
            "completions": 2, "parallelism": 1, "backoffLimit": 1,
            "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "app", "image": "busybox:1.36"}]}}}),
        "Service" => json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}),
        "Database" => json!({"replicas": 1, "version": "16"}),
        "HorizontalPodAutoscaler" => json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5}),
        "CustomResourceDefinition" => {
            return json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                              "listKind": "WidgetList"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        }
        "ConfigMap" => {
            return json!({"apiVersion": api_version, "kind": kind, "metadata": meta,
                          "data": {"k": "v"}});
        }
        "Namespace" | "Node" => {
            return json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
        }
        "EndpointSlice" => {
            let mut meta = meta;
            meta["labels"] = json!({"kubernetes.io/service-name": "web"});
            return json!({"apiVersion": api_version, "kind": kind, "metadata": meta,
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["10.244.1.2"],
                    "conditions": {"ready": true, "serving": true, "terminating": false},
                    "nodeName": "node-1",
                    "targetRef": {"kind": "Pod", "namespace": "default", "name": "p"}}],
                "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]});
        }
        _ => json!({}),
    };
    json!({"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec})
}

/// One request from the bytes. `api` is read only to adopt an existing object.
pub(super) fn decode_request(b: &mut Bytes, api: &ApiServer) -> ApiRequest {
    let principal = b.pick(PRINCIPALS);
    let (group, resource, api_version, kind) = b.pick(RESOURCES);
    let gr = GroupResource::new(group, resource);
    let namespace = b.pick(NAMESPACES);
    let name = b.pick(NAMES);
    let status = b.byte().is_multiple_of(4);
    let mut req = match b.byte() % 8 {
        0 => ApiRequest::get(principal, gr, namespace, name),
        1 => ApiRequest::list(principal, gr, namespace, None),
        2 | 3 => {
            let body = body_from(b, api_version, kind, name);
            ApiRequest::create(principal, gr, namespace, body)
        }
        4 => {
            let body = body_from(b, api_version, kind, name);
            ApiRequest::update(principal, gr, namespace, name, body)
        }
        5 => {
            let mut patch = json!({});
            for _ in 0..=b.byte() % 3 {
                let path = b.pick(PATHS);
                let value = value_from(b);
                set_path(&mut patch, path, value);
            }
            ApiRequest::patch(principal, gr, namespace, name, PatchType::Merge, patch)
        }
        6 => {
            let mut ops = Vec::new();
            for _ in 0..=b.byte() % 3 {
                let op = b.pick(&["add", "remove", "replace", "test", "move", "copy"]);
                let path = format!("/{}", b.pick(PATHS).join("/"));
                let from = format!("/{}", b.pick(PATHS).join("/"));
                ops.push(json!({"op": op, "path": path, "from": from, "value": value_from(b)}));
            }
            ApiRequest::patch(principal, gr, namespace, name, PatchType::Json, json!(ops))
        }
        // A DELETE with a propagationPolicy (or none, or an unsupported one), or an update
        // that gives the object an owner: the garbage collector's inputs.
        _ => match b.byte() % 8 {
            6 | 7 => {
                let fresh = template(api_version, kind, name);
                adopt(
                    b,
                    api,
                    principal,
                    ObjectKey::new(gr, namespace, name),
                    fresh,
                )
            }
            n => {
                let options = match n {
                    0 | 1 => json!({}),
                    2 => json!({"propagationPolicy": "Background"}),
                    3 => json!({"propagationPolicy": "Foreground"}),
                    4 => json!({"propagationPolicy": "Orphan"}),
                    _ => json!({"propagationPolicy": "Sideways"}),
                };
                ApiRequest::delete_with_options(principal, gr, namespace, name, options)
            }
        },
    };
    if status && matches!(req.verb, Verb::Get | Verb::Update | Verb::Patch) {
        req.subresource = Some(Subresource::Status);
    }
    req
}

/// An update of the stored object (or a fresh template, when there is none) whose
/// ownerReferences name another stored object, with `blockOwnerDeletion` from the bytes.
fn adopt(
    b: &mut Bytes,
    api: &ApiServer,
    principal: &str,
    key: ObjectKey,
    fresh: Value,
) -> ApiRequest {
    let mut body = api.get(&key).cloned().unwrap_or(fresh);
    let owners: Vec<&Value> = api.objects().map(|(_, o)| o).collect();
    if !owners.is_empty() {
        let owner = owners[usize::from(b.byte()) % owners.len()];
        let block = b.byte().is_multiple_of(2);
        let mut r = crate::api::meta::owner_reference(owner, block);
        r["controller"] = json!(false);
        set_path(&mut body, &["metadata", "ownerReferences"], json!([r]));
    }
    ApiRequest::update(principal, key.gr, &key.namespace, &key.name, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::StatusReason;
    use crate::time::SimTime;

    /// The committed EndpointSlice seeds of `fuzz/corpus/api_requests` decode to what their
    /// names say, and the seeded server answers them with kube's validation.
    #[test]
    #[allow(
        clippy::result_large_err,
        reason = "ApiResult, the API contract type, carries kube's full error by value"
    )]
    fn the_endpoint_slice_seeds_reach_endpoint_slice_validation() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/api_requests");
        let answer = |seed: &str| {
            let data = std::fs::read(root.join(seed)).unwrap_or_default();
            let mut api = super::super::api_requests::seeded_api_server();
            let req = decode_request(&mut Bytes { data: &data }, &api);
            assert_eq!(req.gr.resource, "endpointslices", "{seed}");
            api.handle(SimTime::ZERO, req)
        };
        assert!(answer("seed-endpointslice-create").is_ok());
        let invalid = |seed: &str| {
            let e = answer(seed).expect_err(seed);
            assert_eq!(e.reason, StatusReason::Invalid, "{seed}: {}", e.message);
            e.message
        };
        let m = invalid("seed-endpointslice-no-address-type");
        assert!(m.contains("addressType: Required value"), "{m}");
        assert!(
            m.contains("endpoints[0].addresses: Required value: must contain at least 1 address"),
            "{m}"
        );
        let m = invalid("seed-endpointslice-address-type-immutable");
        assert!(
            m.contains("addressType: Invalid value: \"web\": field is immutable"),
            "{m}"
        );
        let m = invalid("seed-endpointslice-bad-protocol");
        assert!(
            m.contains("ports[0].protocol: Unsupported value: \"web\""),
            "{m}"
        );
    }
}
