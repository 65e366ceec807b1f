//! Per-kind strategies, as kube's registry `strategy.go` files define them: typed decoding
//! checks (a wrong JSON type is a 400 naming the field), defaults, validation (create, update
//! and status) and the `metadata.generation` rules.

use super::meta::JsonPointer;
use serde_json::{json, Map, Value};

use super::kinds::{split_api_version, KindRules, ResourceInfo};
use super::validation::{
    dns1035_label, dns1123_label, dns1123_subdomain, go_quote, path_segment_name, push_all,
    qualified_name, validate_annotations, validate_builtin_conditions, validate_conditions,
    validate_labels, FieldError,
};

/// The simulator's cap on replica counts per object (kube's own limit is int32).
pub const MAX_REPLICAS: i64 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int32,
    Int64,
    Bool,
    Str,
    Object(&'static str),
    Array(&'static str),
    StrMap,
    StrList,
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_error(v: &Value, go_field: &str, go_type: &str) -> String {
    let what = match v {
        Value::Number(n) => format!("number {n}"),
        other => json_type_name(other).to_owned(),
    };
    format!("json: cannot unmarshal {what} into Go struct field {go_field} of type {go_type}")
}

fn check(v: &Value, ty: Ty, go_field: &str) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    let int_ok = |lo: i64, hi: i64| v.as_i64().is_some_and(|n| (lo..=hi).contains(&n));
    match ty {
        Ty::Int32 if !int_ok(i64::from(i32::MIN), i64::from(i32::MAX)) => {
            Err(type_error(v, go_field, "int32"))
        }
        Ty::Int64 if !int_ok(i64::MIN, i64::MAX) => Err(type_error(v, go_field, "int64")),
        Ty::Bool if !v.is_boolean() => Err(type_error(v, go_field, "bool")),
        Ty::Str if !v.is_string() => Err(type_error(v, go_field, "string")),
        Ty::Object(go) if !v.is_object() => Err(type_error(v, go_field, go)),
        Ty::Array(go) if !v.is_array() => Err(type_error(v, go_field, go)),
        Ty::StrMap => match v.as_object() {
            None => Err(type_error(v, go_field, "map[string]string")),
            Some(m) => m
                .values()
                .find(|x| !x.is_string() && !x.is_null())
                .map_or(Ok(()), |bad| Err(type_error(bad, go_field, "string"))),
        },
        Ty::StrList => match v.as_array() {
            None => Err(type_error(v, go_field, "[]string")),
            Some(a) => a
                .iter()
                .find(|x| !x.is_string())
                .map_or(Ok(()), |bad| Err(type_error(bad, go_field, "string"))),
        },
        _ => Ok(()),
    }
}

const META_TYPES: &[(&str, Ty, &str)] = &[
    ("/metadata", Ty::Object("v1.ObjectMeta"), "metadata"),
    ("/metadata/name", Ty::Str, "ObjectMeta.metadata.name"),
    (
        "/metadata/generateName",
        Ty::Str,
        "ObjectMeta.metadata.generateName",
    ),
    (
        "/metadata/namespace",
        Ty::Str,
        "ObjectMeta.metadata.namespace",
    ),
    (
        "/metadata/resourceVersion",
        Ty::Str,
        "ObjectMeta.metadata.resourceVersion",
    ),
    ("/metadata/uid", Ty::Str, "ObjectMeta.metadata.uid"),
    (
        "/metadata/generation",
        Ty::Int64,
        "ObjectMeta.metadata.generation",
    ),
    ("/metadata/labels", Ty::StrMap, "ObjectMeta.metadata.labels"),
    (
        "/metadata/annotations",
        Ty::StrMap,
        "ObjectMeta.metadata.annotations",
    ),
    (
        "/metadata/finalizers",
        Ty::StrList,
        "ObjectMeta.metadata.finalizers",
    ),
    (
        "/metadata/ownerReferences",
        Ty::Array("[]v1.OwnerReference"),
        "ObjectMeta.metadata.ownerReferences",
    ),
];

const WORKLOAD_STATUS_TYPES: &[(&str, Ty, &str)] = &[
    (
        "/status/observedGeneration",
        Ty::Int64,
        "observedGeneration",
    ),
    ("/status/replicas", Ty::Int32, "replicas"),
    ("/status/updatedReplicas", Ty::Int32, "updatedReplicas"),
    ("/status/readyReplicas", Ty::Int32, "readyReplicas"),
    ("/status/availableReplicas", Ty::Int32, "availableReplicas"),
    (
        "/status/unavailableReplicas",
        Ty::Int32,
        "unavailableReplicas",
    ),
    (
        "/status/fullyLabeledReplicas",
        Ty::Int32,
        "fullyLabeledReplicas",
    ),
    ("/status/conditions", Ty::Array("[]Condition"), "conditions"),
];

fn kind_types(rules: KindRules) -> &'static [(&'static str, Ty, &'static str)] {
    match rules {
        KindRules::Deployment => &[
            ("/spec", Ty::Object("v1.DeploymentSpec"), "Deployment.spec"),
            ("/spec/replicas", Ty::Int32, "DeploymentSpec.spec.replicas"),
            (
                "/spec/minReadySeconds",
                Ty::Int32,
                "DeploymentSpec.spec.minReadySeconds",
            ),
            (
                "/spec/revisionHistoryLimit",
                Ty::Int32,
                "DeploymentSpec.spec.revisionHistoryLimit",
            ),
            (
                "/spec/progressDeadlineSeconds",
                Ty::Int32,
                "DeploymentSpec.spec.progressDeadlineSeconds",
            ),
            ("/spec/paused", Ty::Bool, "DeploymentSpec.spec.paused"),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "DeploymentSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "DeploymentSpec.spec.template",
            ),
            (
                "/spec/template/metadata/labels",
                Ty::StrMap,
                "ObjectMeta.spec.template.metadata.labels",
            ),
            (
                "/spec/template/spec/containers",
                Ty::Array("[]v1.Container"),
                "PodSpec.spec.template.spec.containers",
            ),
            (
                "/spec/strategy",
                Ty::Object("v1.DeploymentStrategy"),
                "DeploymentSpec.spec.strategy",
            ),
            (
                "/spec/strategy/type",
                Ty::Str,
                "DeploymentStrategy.spec.strategy.type",
            ),
            (
                "/status",
                Ty::Object("v1.DeploymentStatus"),
                "Deployment.status",
            ),
        ],
        KindRules::ReplicaSet => &[
            ("/spec", Ty::Object("v1.ReplicaSetSpec"), "ReplicaSet.spec"),
            ("/spec/replicas", Ty::Int32, "ReplicaSetSpec.spec.replicas"),
            (
                "/spec/minReadySeconds",
                Ty::Int32,
                "ReplicaSetSpec.spec.minReadySeconds",
            ),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "ReplicaSetSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "ReplicaSetSpec.spec.template",
            ),
            (
                "/spec/template/metadata/labels",
                Ty::StrMap,
                "ObjectMeta.spec.template.metadata.labels",
            ),
            (
                "/spec/template/spec/containers",
                Ty::Array("[]v1.Container"),
                "PodSpec.spec.template.spec.containers",
            ),
            (
                "/status",
                Ty::Object("v1.ReplicaSetStatus"),
                "ReplicaSet.status",
            ),
        ],
        KindRules::Pod => &[
            ("/spec", Ty::Object("v1.PodSpec"), "Pod.spec"),
            (
                "/spec/containers",
                Ty::Array("[]v1.Container"),
                "PodSpec.spec.containers",
            ),
            ("/spec/nodeName", Ty::Str, "PodSpec.spec.nodeName"),
            ("/status", Ty::Object("v1.PodStatus"), "Pod.status"),
            ("/status/phase", Ty::Str, "PodStatus.status.phase"),
            (
                "/status/conditions",
                Ty::Array("[]v1.PodCondition"),
                "PodStatus.status.conditions",
            ),
        ],
        KindRules::Node => &[
            ("/spec", Ty::Object("v1.NodeSpec"), "Node.spec"),
            (
                "/spec/unschedulable",
                Ty::Bool,
                "NodeSpec.spec.unschedulable",
            ),
            (
                "/status/conditions",
                Ty::Array("[]v1.NodeCondition"),
                "NodeStatus.status.conditions",
            ),
        ],
        KindRules::ConfigMap => &[
            ("/data", Ty::StrMap, "ConfigMap.data"),
            ("/immutable", Ty::Bool, "ConfigMap.immutable"),
        ],
        KindRules::Service => &[
            ("/spec", Ty::Object("v1.ServiceSpec"), "Service.spec"),
            (
                "/spec/ports",
                Ty::Array("[]v1.ServicePort"),
                "ServiceSpec.spec.ports",
            ),
            ("/spec/type", Ty::Str, "ServiceSpec.spec.type"),
            ("/spec/selector", Ty::StrMap, "ServiceSpec.spec.selector"),
        ],
        KindRules::HorizontalPodAutoscaler => &[
            (
                "/spec",
                Ty::Object("v2.HorizontalPodAutoscalerSpec"),
                "HorizontalPodAutoscaler.spec",
            ),
            (
                "/spec/minReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerSpec.spec.minReplicas",
            ),
            (
                "/spec/maxReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerSpec.spec.maxReplicas",
            ),
            (
                "/spec/scaleTargetRef",
                Ty::Object("v2.CrossVersionObjectReference"),
                "HorizontalPodAutoscalerSpec.spec.scaleTargetRef",
            ),
            (
                "/spec/metrics",
                Ty::Array("[]v2.MetricSpec"),
                "HorizontalPodAutoscalerSpec.spec.metrics",
            ),
            (
                "/status/currentReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerStatus.status.currentReplicas",
            ),
            (
                "/status/desiredReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerStatus.status.desiredReplicas",
            ),
        ],
        KindRules::CustomResourceDefinition => &[
            (
                "/spec",
                Ty::Object("v1.CustomResourceDefinitionSpec"),
                "CustomResourceDefinition.spec",
            ),
            (
                "/spec/group",
                Ty::Str,
                "CustomResourceDefinitionSpec.spec.group",
            ),
            (
                "/spec/scope",
                Ty::Str,
                "CustomResourceDefinitionSpec.spec.scope",
            ),
            (
                "/spec/names",
                Ty::Object("v1.CustomResourceDefinitionNames"),
                "CustomResourceDefinitionSpec.spec.names",
            ),
            (
                "/spec/names/plural",
                Ty::Str,
                "CustomResourceDefinitionNames.spec.names.plural",
            ),
            (
                "/spec/names/kind",
                Ty::Str,
                "CustomResourceDefinitionNames.spec.names.kind",
            ),
            (
                "/spec/versions",
                Ty::Array("[]v1.CustomResourceDefinitionVersion"),
                "CustomResourceDefinitionSpec.spec.versions",
            ),
        ],
        KindRules::Rbac => &[
            ("/rules", Ty::Array("[]v1.PolicyRule"), "rules"),
            ("/subjects", Ty::Array("[]v1.Subject"), "subjects"),
            ("/roleRef", Ty::Object("v1.RoleRef"), "roleRef"),
        ],
        KindRules::ServiceAccount => &[(
            "/automountServiceAccountToken",
            Ty::Bool,
            "ServiceAccount.automountServiceAccountToken",
        )],
        KindRules::Namespace | KindRules::Binding | KindRules::Event | KindRules::Custom => &[],
    }
}

/// apimachinery's `ErrFormatWrong`, for a quantity that does not match its grammar.
pub const QUANTITY_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// apimachinery's `ErrSuffix`, for a well-formed quantity with an unknown suffix (`192i`).
pub const QUANTITY_SUFFIX: &str = "unable to parse quantity's suffix";
/// apimachinery's `ErrNumeric`, for a quantity whose number does not parse (`.`).
pub const QUANTITY_NUMERIC: &str = "unable to parse numeric part of quantity";

/// Why `resource.ParseQuantity` refuses `text`, following its scanner: sign, digits, one
/// optional fraction, then a suffix (binary `Ki`..`Ei`, decimal `n`..`E`, or an exponent
/// `e3`/`E-2`). `None` when it parses.
pub fn quantity_error(text: &str) -> Option<&'static str> {
    let s = text.as_bytes();
    if s.is_empty() {
        return Some(QUANTITY_FORMAT_WRONG);
    }
    let mut pos = usize::from(matches!(s[0], b'-' | b'+'));
    let digits = |from: usize| from + s[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let num_end = digits(pos);
    let mut mantissa_digits = num_end - pos;
    pos = num_end;
    if s.get(pos) == Some(&b'.') {
        let denom_end = digits(pos + 1);
        mantissa_digits += denom_end - pos - 1;
        pos = denom_end;
    }
    let suffix_start = pos;
    pos += s[pos..]
        .iter()
        .take_while(|c| b"eEinumkKMGTP".contains(c))
        .count();
    if pos < s.len() && matches!(s[pos], b'-' | b'+') {
        pos += 1;
    }
    if digits(pos) != s.len() {
        return Some(QUANTITY_FORMAT_WRONG);
    }
    let suffix = &text[suffix_start..];
    let known = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || (suffix.len() > 1
        && matches!(suffix.as_bytes()[0], b'e' | b'E')
        && suffix[1..].parse::<i32>().is_ok());
    if !known {
        return Some(QUANTITY_SUFFIX);
    }
    if mantissa_digits == 0 {
        return Some(QUANTITY_NUMERIC);
    }
    None
}

/// The typed decoding of each container: an object, `name` and `image` strings, `resources`
/// an object whose `requests` and `limits` map resource names to quantities.
fn check_containers(obj: &Value, ptr: &str, go_path: &str) -> Result<(), String> {
    let Some(Value::Array(containers)) = obj.at(ptr) else {
        return Ok(());
    };
    for c in containers {
        check(c, Ty::Object("v1.Container"), &format!("PodSpec.{go_path}"))?;
        let go = |field: &str| format!("Container.{go_path}.{field}");
        for (field, ty) in [
            ("name", Ty::Str),
            ("image", Ty::Str),
            ("resources", Ty::Object("v1.ResourceRequirements")),
        ] {
            if let Some(v) = c.get(field) {
                check(v, ty, &go(field))?;
            }
        }
        for list in ["requests", "limits"] {
            let Some(v) = c.at(&format!("/resources/{list}")) else {
                continue;
            };
            let go_field = format!("ResourceRequirements.{go_path}.resources.{list}");
            check(v, Ty::Object("v1.ResourceList"), &go_field)?;
            for q in v.as_object().into_iter().flat_map(|m| m.values()) {
                let text = match q {
                    Value::Null => continue,
                    Value::String(s) => s.trim().to_owned(),
                    other => other.to_string(),
                };
                if let Some(e) = quantity_error(&text) {
                    return Err(e.to_owned());
                }
            }
        }
    }
    Ok(())
}

/// Typed decoding: a value of the wrong JSON type in a field the kind defines is refused as
/// kube's decoder refuses it (400, naming the Go field). Custom resources are schemaless here,
/// so only their metadata is typed.
pub fn type_check(info: &ResourceInfo, obj: &Value) -> Result<(), String> {
    let workload = matches!(info.rules, KindRules::Deployment | KindRules::ReplicaSet);
    let status_types: &[(&str, Ty, &str)] = if workload { WORKLOAD_STATUS_TYPES } else { &[] };
    // kube's decoder error around the field's own message.
    let undecodable = |e: String| {
        let (_, version) = split_api_version(
            obj.get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("v1"),
        );
        format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {e}",
            kind = info.kind
        )
    };
    for (ptr, ty, go) in META_TYPES
        .iter()
        .chain(kind_types(info.rules))
        .chain(status_types)
    {
        if let Some(v) = obj.at(ptr) {
            check(v, *ty, go).map_err(undecodable)?;
        }
    }
    let containers = match info.rules {
        KindRules::Deployment | KindRules::ReplicaSet => Some((
            "/spec/template/spec/containers",
            "spec.template.spec.containers",
        )),
        KindRules::Pod => Some(("/spec/containers", "spec.containers")),
        _ => None,
    };
    if let Some((ptr, go_path)) = containers {
        check_containers(obj, ptr, go_path).map_err(undecodable)?;
    }
    Ok(())
}

fn obj_mut<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let map = v.as_object_mut()?;
    let entry = map.entry(key.to_owned()).or_insert_with(|| json!({}));
    if entry.is_null() {
        *entry = json!({});
    }
    entry.as_object_mut()
}

fn default_field(map: &mut Map<String, Value>, key: &str, value: Value) {
    let missing = map.get(key).is_none_or(Value::is_null);
    if missing {
        map.insert(key.to_owned(), value);
    }
}

fn default_pod_spec(spec: &mut Value) {
    let Some(s) = spec.as_object_mut() else {
        return;
    };
    default_field(s, "restartPolicy", json!("Always"));
    default_field(s, "terminationGracePeriodSeconds", json!(30));
    default_field(s, "dnsPolicy", json!("ClusterFirst"));
    default_field(s, "securityContext", json!({}));
    default_field(s, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(cs) = s.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                let image = c.get("image").and_then(Value::as_str).unwrap_or("");
                let tag = image.rsplit('/').next().unwrap_or("");
                let pull = if !tag.contains(':') || tag.ends_with(":latest") {
                    "Always"
                } else {
                    "IfNotPresent"
                };
                default_field(c, "imagePullPolicy", json!(pull));
                default_field(c, "terminationMessagePath", json!("/dev/termination-log"));
                default_field(c, "terminationMessagePolicy", json!("File"));
                default_field(c, "resources", json!({}));
                // SetDefaults_ContainerPort.
                if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        default_field(p, "protocol", json!("TCP"));
                    }
                }
                // SetDefaults_Probe and SetDefaults_HTTPGetAction.
                for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                    let Some(pr) = c.get_mut(probe).and_then(Value::as_object_mut) else {
                        continue;
                    };
                    default_field(pr, "timeoutSeconds", json!(1));
                    default_field(pr, "periodSeconds", json!(10));
                    default_field(pr, "successThreshold", json!(1));
                    default_field(pr, "failureThreshold", json!(3));
                    if let Some(get) = pr.get_mut("httpGet").and_then(Value::as_object_mut) {
                        default_field(get, "path", json!("/"));
                        default_field(get, "scheme", json!("HTTP"));
                    }
                }
            }
        }
    }
}

/// What `SetDefaults_Pod` adds to a Pod and not to a template [pkg/apis/core/v1/defaults.go]:
/// requests default to the limits a container sets without requests, and
/// `enableServiceLinks: true`.
fn default_pod_only(spec: &mut Value) {
    let Some(s) = spec.as_object_mut() else {
        return;
    };
    for list in ["containers", "initContainers"] {
        let Some(cs) = s.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in cs.iter_mut() {
            let Some(limits) = c
                .at("/resources/limits")
                .and_then(Value::as_object)
                .cloned()
            else {
                continue;
            };
            let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
                continue;
            };
            let requests = res.entry("requests").or_insert_with(|| json!({}));
            if let Some(r) = requests.as_object_mut() {
                for (k, v) in limits {
                    r.entry(k).or_insert(v);
                }
            }
        }
    }
    default_field(s, "enableServiceLinks", json!(true));
}

/// The Pod's QoS class, set once at create [pkg/apis/core/helper/qos GetPodQOS]: Guaranteed when
/// every container limits CPU and memory and requests exactly that (requests defaulted from
/// limits), BestEffort when no container requests or limits anything, else Burstable.
pub fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> = pod
        .at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let quantity = |c: &Value, part: &str, r: &str| {
        c.at(&format!("/resources/{part}/{r}"))
            .filter(|q| !q.is_null())
            .cloned()
    };
    let any = containers.iter().any(|c| {
        ["requests", "limits"].iter().any(|part| {
            c.at(&format!("/resources/{part}"))
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        })
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = quantity(c, "limits", r);
            let request = quantity(c, "requests", r);
            limit.is_some()
                && match (r, &limit, &request) {
                    (&"cpu", Some(l), Some(q)) => {
                        crate::controllers::util::cpu_millis(l)
                            == crate::controllers::util::cpu_millis(q)
                    }
                    (_, Some(l), Some(q)) => {
                        crate::controllers::util::memory_bytes(l)
                            == crate::controllers::util::memory_bytes(q)
                    }
                    _ => false,
                }
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Applies kube's defaults for the kind (apps/v1 `defaults.go`, core/v1 `defaults.go`).
/// `spec.minReadySeconds` defaults to 0, which kube omits from the serialized object, so it is
/// left absent here too.
pub fn apply_defaults(info: &ResourceInfo, obj: &mut Value) {
    match info.rules {
        KindRules::Deployment => {
            let Some(spec) = obj_mut(obj, "spec") else {
                return;
            };
            default_field(spec, "replicas", json!(1));
            default_field(spec, "revisionHistoryLimit", json!(10));
            default_field(spec, "progressDeadlineSeconds", json!(600));
            let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
            if let Some(st) = strategy.as_object_mut() {
                default_field(st, "type", json!("RollingUpdate"));
                if st.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                    let ru = st.entry("rollingUpdate").or_insert_with(|| json!({}));
                    if let Some(ru) = ru.as_object_mut() {
                        default_field(ru, "maxSurge", json!("25%"));
                        default_field(ru, "maxUnavailable", json!("25%"));
                    }
                }
            }
            if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
                default_pod_spec(t);
            }
        }
        KindRules::ReplicaSet => {
            let Some(spec) = obj_mut(obj, "spec") else {
                return;
            };
            default_field(spec, "replicas", json!(1));
            if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
                default_pod_spec(t);
            }
        }
        KindRules::Pod => {
            if let Some(spec) = obj.get_mut("spec") {
                default_pod_spec(spec);
                default_pod_only(spec);
            }
        }
        KindRules::Service => {
            let Some(spec) = obj_mut(obj, "spec") else {
                return;
            };
            default_field(spec, "type", json!("ClusterIP"));
            default_field(spec, "sessionAffinity", json!("None"));
            if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                    default_field(p, "protocol", json!("TCP"));
                    if let Some(port) = p.get("port").cloned() {
                        default_field(p, "targetPort", port);
                    }
                }
            }
        }
        KindRules::HorizontalPodAutoscaler => {
            let Some(spec) = obj_mut(obj, "spec") else {
                return;
            };
            default_field(spec, "minReplicas", json!(1));
        }
        KindRules::Namespace => {
            if let Some(spec) = obj_mut(obj, "spec") {
                default_field(spec, "finalizers", json!(["kubernetes"]));
            }
        }
        KindRules::CustomResourceDefinition => {
            let Some(spec) = obj_mut(obj, "spec") else {
                return;
            };
            if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
                let kind = names.get("kind").and_then(Value::as_str).map(str::to_owned);
                let plural = names
                    .get("plural")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if let Some(kind) = kind {
                    default_field(names, "listKind", json!(format!("{kind}List")));
                }
                if let Some(plural) = plural {
                    let singular = names
                        .get("kind")
                        .and_then(Value::as_str)
                        .map_or(plural.clone(), str::to_lowercase);
                    default_field(names, "singular", json!(singular));
                }
            }
        }
        KindRules::Node
        | KindRules::ConfigMap
        | KindRules::ServiceAccount
        | KindRules::Rbac
        | KindRules::Binding
        | KindRules::Event
        | KindRules::Custom => {}
    }
}

/// Whether an update from `old` to `new` bumps `metadata.generation` (main-resource writes
/// only; `/status` writes never bump).
pub fn generation_bumps(info: &ResourceInfo, old: &Value, new: &Value) -> bool {
    let differs = |k: &str| old.get(k) != new.get(k);
    match info.rules {
        KindRules::Deployment => {
            differs("spec") || old.at("/metadata/annotations") != new.at("/metadata/annotations")
        }
        KindRules::ReplicaSet | KindRules::Pod | KindRules::CustomResourceDefinition => {
            differs("spec")
        }
        KindRules::Custom => {
            let keys = |v: &Value| -> Vec<String> {
                v.as_object()
                    .map(|m| m.keys().filter(|k| *k != "metadata").cloned().collect())
                    .unwrap_or_default()
            };
            let mut all = keys(old);
            all.extend(keys(new));
            all.iter().any(|k| differs(k))
        }
        _ => false,
    }
}

fn nonneg(obj: &Value, ptr: &str, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = obj.at(ptr).and_then(Value::as_i64) {
        if n < 0 {
            errs.push(FieldError::invalid(
                field,
                json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
}

fn replicas_in_range(obj: &Value, ptr: &str, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = obj.at(ptr).and_then(Value::as_i64) {
        if n < 0 {
            errs.push(FieldError::invalid(
                field,
                json!(n),
                "must be greater than or equal to 0",
            ));
        } else if n > MAX_REPLICAS {
            errs.push(FieldError::invalid(
                field,
                json!(n),
                format!("must be less than or equal to {MAX_REPLICAS} (the simulator's per-object replica cap)"),
            ));
        }
    }
}

/// Go's `%#v` of an empty `v1.LabelSelector`, as kube prints it.
fn go_label_selector(sel: &Value) -> String {
    let labels = match sel.get("matchLabels") {
        Some(Value::Object(m)) => go_string_map(Some(m)),
        _ => "map[string]string(nil)".to_owned(),
    };
    let exprs = match sel.get("matchExpressions") {
        Some(Value::Array(a)) if a.is_empty() => "[]v1.LabelSelectorRequirement{}".to_owned(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
}

/// Go's `%#v` of a `map[string]string`, as kube prints template labels.
fn go_string_map(m: Option<&Map<String, Value>>) -> String {
    let mut entries: Vec<(String, String)> = m
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
        .collect();
    format!("map[string]string{{{}}}", body.join(", "))
}

fn validate_pod_spec(spec: Option<&Value>, field: &str, errs: &mut Vec<FieldError>) {
    let containers = spec
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    let Some(containers) = containers.filter(|c| !c.is_empty()) else {
        errs.push(FieldError::required(format!("{field}.containers"), ""));
        return;
    };
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        let path = format!("{field}.containers[{i}]");
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        } else {
            push_all(errs, &format!("{path}.name"), name, dns1123_label(name));
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
            }
            names.push(name);
        }
        if c.get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .is_empty()
        {
            errs.push(FieldError::required(format!("{path}.image"), ""));
        }
        // ValidateResourceRequirements: quantities are never negative.
        for list in ["requests", "limits"] {
            let Some(m) = c
                .at(&format!("/resources/{list}"))
                .and_then(Value::as_object)
            else {
                continue;
            };
            for (resource, q) in m {
                let text = match q {
                    Value::String(s) => s.trim().to_owned(),
                    Value::Number(n) => n.to_string(),
                    _ => continue,
                };
                if text.starts_with('-') && text.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
                    errs.push(FieldError::invalid(
                        format!("{path}.resources.{list}[{resource}]"),
                        json!(text),
                        "must be greater than or equal to 0",
                    ));
                }
            }
        }
    }
}

fn validate_int_or_percent(
    v: Option<&Value>,
    field: &str,
    errs: &mut Vec<FieldError>,
) -> Option<bool> {
    let v = v?;
    if let Some(n) = v.as_i64() {
        if n < 0 {
            errs.push(FieldError::invalid(
                field,
                json!(n),
                "must be greater than or equal to 0",
            ));
        }
        return Some(n == 0);
    }
    if let Some(s) = v.as_str() {
        let digits = s
            .strip_suffix('%')
            .filter(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()));
        return match digits {
            Some(d) => Some(d.trim_start_matches('0').is_empty()),
            None => {
                errs.push(FieldError::invalid(
                    field,
                    json!(s),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ));
                None
            }
        };
    }
    errs.push(FieldError::invalid(
        field,
        v.clone(),
        "must be an integer or percentage (e.g '5%')",
    ));
    None
}

fn validate_selector_and_template(obj: &Value, errs: &mut Vec<FieldError>) {
    let selector = obj.at("/spec/selector");
    match selector {
        None | Some(Value::Null) => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) => {
            let empty = sel
                .get("matchLabels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
                && sel
                    .get("matchExpressions")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
            if empty {
                // kube says "for deployment" for ReplicaSets too.
                errs.push(FieldError::invalid_raw(
                    "spec.selector",
                    go_label_selector(sel),
                    "empty selector is invalid for deployment",
                ));
            } else {
                if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
                    validate_labels(ml, "spec.selector.matchLabels", errs);
                }
                match super::selector::Selector::from_label_selector(sel) {
                    Err(e) => {
                        errs.push(FieldError::invalid_raw("spec.selector", sel.to_string(), e))
                    }
                    Ok(s) => {
                        let labels = obj
                            .at("/spec/template/metadata/labels")
                            .and_then(Value::as_object);
                        if !s.matches(labels) {
                            errs.push(FieldError::invalid_raw(
                                "spec.template.metadata.labels",
                                go_string_map(labels),
                                "`selector` does not match template `labels`",
                            ));
                        }
                    }
                }
            }
        }
    }
    if let Some(labels) = obj
        .at("/spec/template/metadata/labels")
        .and_then(Value::as_object)
    {
        validate_labels(labels, "spec.template.metadata.labels", errs);
    }
    match obj.at("/spec/template") {
        None | Some(Value::Null) => errs.push(FieldError::required("spec.template", "")),
        Some(t) => {
            validate_pod_spec(t.get("spec"), "spec.template.spec", errs);
            let restart = t
                .at("/spec/restartPolicy")
                .and_then(Value::as_str)
                .unwrap_or("Always");
            if restart != "Always" {
                errs.push(FieldError::not_supported(
                    "spec.template.spec.restartPolicy",
                    json!(restart),
                    &["Always"],
                ));
            }
        }
    }
}

fn validate_workload_status(obj: &Value, errs: &mut Vec<FieldError>) {
    let n = |k: &str| obj.at(&format!("/status/{k}")).and_then(Value::as_i64);
    for k in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "fullyLabeledReplicas",
        "unavailableReplicas",
        "observedGeneration",
        "collisionCount",
    ] {
        nonneg(obj, &format!("/status/{k}"), &format!("status.{k}"), errs);
    }
    let replicas = n("replicas").unwrap_or(0);
    for k in [
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "fullyLabeledReplicas",
    ] {
        if let Some(v) = n(k) {
            if v > replicas {
                errs.push(FieldError::invalid(
                    format!("status.{k}"),
                    json!(v),
                    "cannot be greater than status.replicas",
                ));
            }
        }
    }
    if let (Some(a), Some(r)) = (n("availableReplicas"), n("readyReplicas")) {
        if a > r {
            errs.push(FieldError::invalid(
                "status.availableReplicas",
                json!(a),
                "cannot be greater than readyReplicas",
            ));
        }
    }
    if let Some(c) = obj.at("/status/conditions").and_then(Value::as_array) {
        validate_builtin_conditions(c, "status.conditions", errs);
    }
}

fn validate_name(info: &ResourceInfo, name: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
        return;
    }
    let msgs = match info.rules {
        KindRules::Namespace => dns1123_label(name),
        KindRules::Service => dns1035_label(name),
        KindRules::Rbac => path_segment_name(name),
        _ => dns1123_subdomain(name),
    };
    push_all(errs, "metadata.name", name, msgs);
}

/// Validates `metadata` (name per kind, labels, annotations, finalizers, ownerReferences).
pub fn validate_metadata(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    let meta = obj.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    validate_name(info, name, errs);
    if let Some(labels) = meta
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
    {
        validate_labels(labels, "metadata.labels", errs);
    }
    if let Some(ann) = meta
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
    {
        validate_annotations(ann, "metadata.annotations", errs);
    }
    if let Some(fins) = meta
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
    {
        let names: Vec<&str> = fins.iter().filter_map(Value::as_str).collect();
        for f in &names {
            push_all(errs, "metadata.finalizers", f, qualified_name(f));
        }
        // apimachinery's ValidateFinalizers: the garbage collector's two finalizers conflict.
        if names.contains(&super::ORPHAN) && names.contains(&super::FOREGROUND) {
            let list: Vec<String> = names.iter().map(|f| go_quote(f)).collect();
            errs.push(FieldError::invalid_raw(
                "metadata.finalizers",
                format!("[]string{{{}}}", list.join(", ")),
                "finalizer orphan and foregroundDeletion cannot be both set",
            ));
        }
    }
    if let Some(refs) = meta
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
    {
        let mut controllers = Vec::new();
        for r in refs {
            for (k, what) in [
                ("apiVersion", "version"),
                ("kind", "kind"),
                ("name", "name"),
                ("uid", "uid"),
            ] {
                let v = r.get(k).and_then(Value::as_str).unwrap_or("");
                if v.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("metadata.ownerReferences.{k}"),
                        json!(v),
                        format!("{what} must not be empty"),
                    ));
                }
            }
            if r.get("controller").and_then(Value::as_bool) == Some(true) {
                controllers.push(
                    r.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                );
            }
        }
        if controllers.len() > 1 {
            errs.push(FieldError::invalid_raw(
                "metadata.ownerReferences",
                Value::from(refs.clone()).to_string(),
                format!(
                    "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                    controllers.join(" and ")
                ),
            ));
        }
    }
}

fn is_valid_config_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 253
        && k != "."
        && k != ".."
        && !k.starts_with("..")
        && k.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Spec-side validation for the kind (create and update).
pub fn validate_spec(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    match info.rules {
        KindRules::Deployment => {
            replicas_in_range(obj, "/spec/replicas", "spec.replicas", errs);
            validate_selector_and_template(obj, errs);
            let st_type = obj
                .at("/spec/strategy/type")
                .and_then(Value::as_str)
                .unwrap_or("RollingUpdate");
            let ru = obj
                .at("/spec/strategy/rollingUpdate")
                .filter(|v| !v.is_null());
            match st_type {
                "Recreate" => {
                    if ru.is_some() {
                        errs.push(FieldError::forbidden(
                            "spec.strategy.rollingUpdate",
                            "may not be specified when strategy `type` is 'Recreate'",
                        ));
                    }
                }
                "RollingUpdate" => {
                    let surge0 = validate_int_or_percent(
                        ru.and_then(|r| r.get("maxSurge")),
                        "spec.strategy.rollingUpdate.maxSurge",
                        errs,
                    );
                    let mu = ru.and_then(|r| r.get("maxUnavailable"));
                    let unavail0 = validate_int_or_percent(
                        mu,
                        "spec.strategy.rollingUpdate.maxUnavailable",
                        errs,
                    );
                    if let Some(pct) = mu
                        .and_then(Value::as_str)
                        .and_then(|s| s.strip_suffix('%'))
                        .and_then(|d| d.parse::<u64>().ok())
                    {
                        if pct > 100 {
                            errs.push(FieldError::invalid(
                                "spec.strategy.rollingUpdate.maxUnavailable",
                                mu.cloned().unwrap_or_default(),
                                "must not be greater than 100%",
                            ));
                        }
                    }
                    if surge0 == Some(true) && unavail0 == Some(true) {
                        errs.push(FieldError::invalid(
                            "spec.strategy.rollingUpdate.maxUnavailable",
                            mu.cloned().unwrap_or_default(),
                            "may not be 0 when `maxSurge` is 0",
                        ));
                    }
                }
                other => errs.push(FieldError::not_supported(
                    "spec.strategy.type",
                    json!(other),
                    &["Recreate", "RollingUpdate"],
                )),
            }
            nonneg(obj, "/spec/minReadySeconds", "spec.minReadySeconds", errs);
            nonneg(
                obj,
                "/spec/revisionHistoryLimit",
                "spec.revisionHistoryLimit",
                errs,
            );
            nonneg(
                obj,
                "/spec/progressDeadlineSeconds",
                "spec.progressDeadlineSeconds",
                errs,
            );
            let min_ready = obj
                .at("/spec/minReadySeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if let Some(pd) = obj
                .at("/spec/progressDeadlineSeconds")
                .and_then(Value::as_i64)
            {
                if pd >= 0 && pd <= min_ready {
                    errs.push(FieldError::invalid(
                        "spec.progressDeadlineSeconds",
                        json!(pd),
                        "must be greater than minReadySeconds",
                    ));
                }
            }
        }
        KindRules::ReplicaSet => {
            replicas_in_range(obj, "/spec/replicas", "spec.replicas", errs);
            nonneg(obj, "/spec/minReadySeconds", "spec.minReadySeconds", errs);
            validate_selector_and_template(obj, errs);
        }
        KindRules::Pod => validate_pod_spec(obj.get("spec"), "spec", errs),
        KindRules::ConfigMap => {
            let mut total = 0usize;
            for key in ["data", "binaryData"] {
                if let Some(data) = obj.get(key).and_then(Value::as_object) {
                    for (k, v) in data {
                        if !is_valid_config_key(k) {
                            errs.push(FieldError::invalid(
                                format!("{key}[{k}]"),
                                json!(k),
                                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                            ));
                        }
                        total += k.len() + v.as_str().map_or(0, str::len);
                    }
                }
            }
            if total > 1024 * 1024 {
                errs.push(FieldError::too_long("data", 1024 * 1024));
            }
        }
        KindRules::Service => {
            let ty = obj
                .at("/spec/type")
                .and_then(Value::as_str)
                .unwrap_or("ClusterIP");
            if !matches!(
                ty,
                "ClusterIP" | "ExternalName" | "LoadBalancer" | "NodePort"
            ) {
                errs.push(FieldError::not_supported(
                    "spec.type",
                    json!(ty),
                    &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
                ));
            }
            let headless = obj.at("/spec/clusterIP").and_then(Value::as_str) == Some("None");
            let ports = obj.at("/spec/ports").and_then(Value::as_array);
            match ports {
                Some(ps) if !ps.is_empty() => {
                    for (i, p) in ps.iter().enumerate() {
                        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
                        if !(1..=65535).contains(&port) {
                            errs.push(FieldError::invalid(
                                format!("spec.ports[{i}].port"),
                                json!(port),
                                "must be between 1 and 65535, inclusive",
                            ));
                        }
                        if ps.len() > 1
                            && p.get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .is_empty()
                        {
                            errs.push(FieldError::required(format!("spec.ports[{i}].name"), ""));
                        }
                    }
                }
                _ if ty == "ExternalName" || headless => {}
                _ => errs.push(FieldError::required("spec.ports", "")),
            }
        }
        KindRules::HorizontalPodAutoscaler => {
            for k in ["kind", "name"] {
                if obj
                    .at(&format!("/spec/scaleTargetRef/{k}"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
                {
                    errs.push(FieldError::required(format!("spec.scaleTargetRef.{k}"), ""));
                }
            }
            let min = obj
                .at("/spec/minReplicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            if min < 1 {
                errs.push(FieldError::invalid(
                    "spec.minReplicas",
                    json!(min),
                    "must be greater than or equal to 1",
                ));
            }
            match obj.at("/spec/maxReplicas").and_then(Value::as_i64) {
                None => errs.push(FieldError::required("spec.maxReplicas", "")),
                Some(max) if max < 1 => errs.push(FieldError::invalid("spec.maxReplicas", json!(max), "must be greater than or equal to 1")),
                Some(max) if max > MAX_REPLICAS => errs.push(FieldError::invalid(
                    "spec.maxReplicas",
                    json!(max),
                    format!("must be less than or equal to {MAX_REPLICAS} (the simulator's per-object replica cap)"),
                )),
                Some(max) if max < min => errs.push(FieldError::invalid("spec.maxReplicas", json!(max), "must be greater than or equal to `minReplicas`")),
                Some(_) => {}
            }
        }
        KindRules::CustomResourceDefinition => validate_crd(obj, errs),
        KindRules::Rbac => validate_rbac(info, obj, errs),
        KindRules::Event => {
            for k in ["kind", "name"] {
                let v = obj
                    .at(&format!("/involvedObject/{k}"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if v.is_empty() {
                    errs.push(FieldError::required(format!("involvedObject.{k}"), ""));
                }
            }
        }
        KindRules::Node
        | KindRules::Namespace
        | KindRules::ServiceAccount
        | KindRules::Binding
        | KindRules::Custom => {}
    }
}

fn validate_crd(obj: &Value, errs: &mut Vec<FieldError>) {
    let s = |p: &str| obj.at(p).and_then(Value::as_str).unwrap_or("");
    let group = s("/spec/group");
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        push_all(errs, "spec.group", group, dns1123_subdomain(group));
        if !group.contains('.') {
            errs.push(FieldError::invalid(
                "spec.group",
                json!(group),
                "should be a domain with at least one dot",
            ));
        }
    }
    let plural = s("/spec/names/plural");
    if plural.is_empty() {
        errs.push(FieldError::required("spec.names.plural", ""));
    } else {
        push_all(errs, "spec.names.plural", plural, dns1035_label(plural));
    }
    if s("/spec/names/kind").is_empty() {
        errs.push(FieldError::required("spec.names.kind", ""));
    }
    let scope = s("/spec/scope");
    if !matches!(scope, "Cluster" | "Namespaced") {
        errs.push(FieldError::not_supported(
            "spec.scope",
            json!(scope),
            &["Cluster", "Namespaced"],
        ));
    }
    let name = s("/metadata/name");
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    match obj.at("/spec/versions").and_then(Value::as_array) {
        Some(vs) if !vs.is_empty() => {
            let storage = vs
                .iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .count();
            if storage != 1 {
                errs.push(FieldError::invalid_raw(
                    "spec.versions",
                    Value::from(vs.clone()).to_string(),
                    "must have exactly one version marked as storage version",
                ));
            }
            for (i, v) in vs.iter().enumerate() {
                let vname = v.get("name").and_then(Value::as_str).unwrap_or("");
                if vname.is_empty() {
                    errs.push(FieldError::required(format!("spec.versions[{i}].name"), ""));
                } else {
                    push_all(
                        errs,
                        &format!("spec.versions[{i}].name"),
                        vname,
                        dns1035_label(vname),
                    );
                }
            }
        }
        _ => errs.push(FieldError::invalid(
            "spec.versions",
            Value::Null,
            "must have exactly one version marked as storage version",
        )),
    }
    if !plural.is_empty() && !group.is_empty() {
        let gr = super::types::GroupResource::new(group, plural);
        if super::kinds::Registry::is_builtin(&gr) {
            errs.push(FieldError::invalid(
                "spec.names.plural",
                json!(plural),
                "conflicts with a built-in resource",
            ));
        }
    }
}

fn validate_rbac(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    match info.kind.as_str() {
        "Role" | "ClusterRole" => {
            if let Some(rules) = obj.get("rules").and_then(Value::as_array) {
                for (i, r) in rules.iter().enumerate() {
                    let list = |k: &str| {
                        r.get(k)
                            .and_then(Value::as_array)
                            .is_some_and(|a| !a.is_empty())
                    };
                    if !list("verbs") {
                        errs.push(FieldError::required(
                            format!("rules[{i}].verbs"),
                            "verbs must contain at least one value",
                        ));
                    }
                    if list("nonResourceURLs") {
                        continue;
                    }
                    if !list("resources") {
                        errs.push(FieldError::required(
                            format!("rules[{i}].resources"),
                            "resource rules must supply at least one resource",
                        ));
                    }
                    if !list("apiGroups") {
                        errs.push(FieldError::required(
                            format!("rules[{i}].apiGroups"),
                            "resource rules must supply at least one api group",
                        ));
                    }
                }
            }
        }
        _ => {
            let kinds: &[&str] = if info.kind == "RoleBinding" {
                &["ClusterRole", "Role"]
            } else {
                &["ClusterRole"]
            };
            let rk = obj
                .at("/roleRef/kind")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !kinds.contains(&rk) {
                errs.push(FieldError::not_supported("roleRef.kind", json!(rk), kinds));
            }
            if obj
                .at("/roleRef/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                errs.push(FieldError::required("roleRef.name", ""));
            }
            let ag = obj
                .at("/roleRef/apiGroup")
                .and_then(Value::as_str)
                .unwrap_or("");
            if ag != "rbac.authorization.k8s.io" {
                errs.push(FieldError::not_supported(
                    "roleRef.apiGroup",
                    json!(ag),
                    &["rbac.authorization.k8s.io"],
                ));
            }
            if let Some(subjects) = obj.get("subjects").and_then(Value::as_array) {
                for (i, s) in subjects.iter().enumerate() {
                    let k = s.get("kind").and_then(Value::as_str).unwrap_or("");
                    if !matches!(k, "ServiceAccount" | "User" | "Group") {
                        errs.push(FieldError::not_supported(
                            format!("subjects[{i}].kind"),
                            json!(k),
                            &["ServiceAccount", "User", "Group"],
                        ));
                    }
                    if s.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .is_empty()
                    {
                        errs.push(FieldError::required(format!("subjects[{i}].name"), ""));
                    }
                }
            }
        }
    }
}

/// Status-side validation for the kind (status writes, and any write of a kind without the
/// subresource).
pub fn validate_status(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    match info.rules {
        KindRules::Deployment | KindRules::ReplicaSet => validate_workload_status(obj, errs),
        KindRules::Pod | KindRules::Node => {
            if let Some(c) = obj.at("/status/conditions").and_then(Value::as_array) {
                validate_builtin_conditions(c, "status.conditions", errs);
            }
        }
        KindRules::HorizontalPodAutoscaler => {
            nonneg(
                obj,
                "/status/currentReplicas",
                "status.currentReplicas",
                errs,
            );
            nonneg(
                obj,
                "/status/desiredReplicas",
                "status.desiredReplicas",
                errs,
            );
        }
        KindRules::Custom => {
            if let Some(c) = obj.at("/status/conditions").and_then(Value::as_array) {
                validate_conditions(c, "status.conditions", errs);
            }
        }
        _ => {}
    }
}

/// Fields that may not change on update (beyond metadata identity, checked by the server).
pub fn validate_update(info: &ResourceInfo, old: &Value, new: &Value, errs: &mut Vec<FieldError>) {
    let immutable = |ptr: &str, field: &str, errs: &mut Vec<FieldError>| {
        let (o, n) = (old.at(ptr), new.at(ptr));
        if o != n {
            let shown = n.map_or_else(|| "null".to_owned(), Value::to_string);
            errs.push(FieldError::invalid_raw(field, shown, "field is immutable"));
        }
    };
    match info.rules {
        KindRules::Deployment | KindRules::ReplicaSet => {
            immutable("/spec/selector", "spec.selector", errs)
        }
        KindRules::CustomResourceDefinition => {
            immutable("/spec/group", "spec.group", errs);
            immutable("/spec/names/plural", "spec.names.plural", errs);
            immutable("/spec/scope", "spec.scope", errs);
        }
        KindRules::Rbac
            if info.kind.ends_with("Binding") && old.get("roleRef") != new.get("roleRef") =>
        {
            errs.push(FieldError::invalid_raw(
                "roleRef",
                new.get("roleRef")
                    .map_or_else(|| "null".to_owned(), Value::to_string),
                "cannot change roleRef",
            ));
        }
        KindRules::Pod => {
            let strip = |v: &Value| -> Value {
                let mut s = v.get("spec").cloned().unwrap_or(Value::Null);
                if let Some(m) = s.as_object_mut() {
                    for k in [
                        "activeDeadlineSeconds",
                        "tolerations",
                        "terminationGracePeriodSeconds",
                    ] {
                        m.remove(k);
                    }
                    for list in ["containers", "initContainers"] {
                        if let Some(cs) = m.get_mut(list).and_then(Value::as_array_mut) {
                            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                                c.remove("image");
                            }
                        }
                    }
                }
                s
            };
            if strip(old) != strip(new) {
                errs.push(FieldError::forbidden(
                    "spec",
                    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
                ));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::kinds::Registry;

    fn info(api_version: &str, kind: &str) -> ResourceInfo {
        Registry::builtin()
            .for_kind(api_version, kind)
            .unwrap()
            .clone()
    }

    #[test]
    fn deployment_defaults_match_apps_v1() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}});
        apply_defaults(&info("apps/v1", "Deployment"), &mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        );
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert!(d["spec"].get("minReadySeconds").is_none());
    }

    #[test]
    fn recreate_deployments_get_no_rolling_update_defaults() {
        let mut d = json!({"spec": {"strategy": {"type": "Recreate"}}});
        apply_defaults(&info("apps/v1", "Deployment"), &mut d);
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn wrong_types_are_named_like_kubes_decoder() {
        let d =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "three"}});
        assert_eq!(
            type_check(&info("apps/v1", "Deployment"), &d).unwrap_err(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let d = json!({"metadata": {"labels": {"a": 1}}});
        assert!(type_check(&info("v1", "Pod"), &d)
            .unwrap_err()
            .contains("ObjectMeta.metadata.labels of type string"));
        let d = json!({"spec": {"replicas": 1.5}});
        assert!(type_check(&info("apps/v1", "ReplicaSet"), &d)
            .unwrap_err()
            .contains("number 1.5"));
        let d = json!({"spec": {"replicas": 3_000_000_000i64}});
        assert!(type_check(&info("apps/v1", "ReplicaSet"), &d).is_err());
    }

    #[test]
    fn deployment_generation_follows_spec_and_annotations_only() {
        let i = info("apps/v1", "Deployment");
        let a = json!({"metadata": {"labels": {"x": "1"}}, "spec": {"replicas": 1}});
        let mut b = a.clone();
        b["metadata"]["labels"]["x"] = json!("2");
        assert!(!generation_bumps(&i, &a, &b));
        b["metadata"]["annotations"] = json!({"note": "y"});
        assert!(generation_bumps(&i, &a, &b));
        let mut c = a.clone();
        c["spec"]["replicas"] = json!(2);
        assert!(generation_bumps(&i, &a, &c));
        let rs = info("apps/v1", "ReplicaSet");
        assert!(!generation_bumps(&rs, &a, &b));
    }

    #[test]
    fn custom_resources_bump_on_anything_outside_metadata() {
        let mut i = info("apps/v1", "Deployment");
        i.rules = KindRules::Custom;
        let a = json!({"metadata": {"labels": {}}, "spec": {"x": 1}});
        let mut b = a.clone();
        b["metadata"]["labels"]["new"] = json!("1");
        assert!(!generation_bumps(&i, &a, &b));
        b["status"] = json!({"phase": "Ready"});
        assert!(generation_bumps(&i, &a, &b));
        let mut c = a.clone();
        c["extra"] = json!(true);
        assert!(generation_bumps(&i, &a, &c));
    }

    fn errors(kind: (&str, &str), obj: &Value) -> Vec<String> {
        let i = info(kind.0, kind.1);
        let mut errs = Vec::new();
        validate_metadata(&i, obj, &mut errs);
        validate_spec(&i, obj, &mut errs);
        validate_status(&i, obj, &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    fn deployment(replicas: i64) -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    }

    #[test]
    fn replicas_must_be_non_negative_and_below_the_cap() {
        assert!(errors(("apps/v1", "Deployment"), &deployment(3)).is_empty());
        assert_eq!(
            errors(("apps/v1", "Deployment"), &deployment(-1)),
            ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            errors(("apps/v1", "Deployment"), &deployment(20_000)),
            ["spec.replicas: Invalid value: 20000: must be less than or equal to 10000 (the simulator's per-object replica cap)"]
        );
    }

    #[test]
    fn selector_must_match_template_labels() {
        let mut d = deployment(1);
        d["spec"]["template"]["metadata"]["labels"] = json!({"app": "api", "tier": "x"});
        assert_eq!(
            errors(("apps/v1", "Deployment"), &d),
            ["spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"api\", \"tier\":\"x\"}: `selector` does not match template `labels`"]
        );
        let mut d = deployment(1);
        d["spec"]["selector"] = json!({});
        assert_eq!(
            errors(("apps/v1", "Deployment"), &d)[0],
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
        );
        let mut d = deployment(1);
        d["spec"].as_object_mut().unwrap().remove("selector");
        assert_eq!(
            errors(("apps/v1", "Deployment"), &d),
            ["spec.selector: Required value"]
        );
    }

    #[test]
    fn rolling_update_parameters_are_checked() {
        let mut d = deployment(1);
        d["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}});
        assert_eq!(errors(("apps/v1", "Deployment"), &d), ["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": may not be 0 when `maxSurge` is 0"]);
        d["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {}});
        assert_eq!(errors(("apps/v1", "Deployment"), &d), ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]);
        d["spec"]["strategy"] = json!({"type": "Rolling"});
        assert_eq!(errors(("apps/v1", "Deployment"), &d), ["spec.strategy.type: Unsupported value: \"Rolling\": supported values: \"Recreate\", \"RollingUpdate\""]);
        d["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": "x%"}});
        assert_eq!(errors(("apps/v1", "Deployment"), &d).len(), 1);
    }

    #[test]
    fn invalid_names_and_missing_containers_are_reported_together() {
        let d = json!({"metadata": {"name": "Web_1"}, "spec": {"containers": []}});
        let errs = errors(("v1", "Pod"), &d);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].starts_with(
            "metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain"
        ));
        assert_eq!(errs[1], "spec.containers: Required value");
    }

    #[test]
    fn workload_status_counts_are_consistent() {
        let mut d = deployment(1);
        d["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": -1});
        let errs = errors(("apps/v1", "Deployment"), &d);
        assert_eq!(
            errs,
            [
                "status.availableReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
            ]
        );
    }

    #[test]
    fn hpa_bounds_are_validated() {
        let h = json!({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 5, "maxReplicas": 2}});
        assert_eq!(errors(("autoscaling/v2", "HorizontalPodAutoscaler"), &h), ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]);
    }

    #[test]
    fn crd_names_must_agree_with_group_and_plural() {
        let crd = json!({"metadata": {"name": "dbs.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "databases", "kind": "Database"}, "versions": [{"name": "v1", "served": true, "storage": true}]}});
        assert_eq!(errors(("apiextensions.k8s.io/v1", "CustomResourceDefinition"), &crd), ["metadata.name: Invalid value: \"dbs.example.com\": must be spec.names.plural+\".\"+spec.group"]);
    }

    #[test]
    fn pod_spec_is_immutable_except_images() {
        let i = info("v1", "Pod");
        let old = json!({"spec": {"containers": [{"name": "c", "image": "a"}]}});
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = json!("b");
        let mut errs = Vec::new();
        validate_update(&i, &old, &new, &mut errs);
        assert!(errs.is_empty());
        new["spec"]["nodeName"] = json!("n1");
        validate_update(&i, &old, &new, &mut errs);
        assert!(errs[0]
            .to_string()
            .starts_with("spec: Forbidden: pod updates may not change fields other than"));
    }
}

#[cfg(test)]
mod quantity_tests {
    use super::{quantity_error, QUANTITY_FORMAT_WRONG, QUANTITY_NUMERIC, QUANTITY_SUFFIX};

    #[test]
    fn quantities_parse_as_apimachinery_parses_them() {
        for ok in [
            "1", "100m", "64Mi", "1.5", "2Gi", "1e3", "1E-2", "+1", "-1", "0", "1.", ".5", "5k",
        ] {
            assert_eq!(quantity_error(ok), None, "{ok}");
        }
        for bad in ["", "lots", "1.5.5", "64Mx", "1 Gi", "0x10", "true"] {
            assert_eq!(quantity_error(bad), Some(QUANTITY_FORMAT_WRONG), "{bad}");
        }
        for bad in ["192i", "1mi", "5KK", "1e"] {
            assert_eq!(quantity_error(bad), Some(QUANTITY_SUFFIX), "{bad}");
        }
        assert_eq!(quantity_error("."), Some(QUANTITY_NUMERIC));
        assert_eq!(quantity_error("Mi"), Some(QUANTITY_NUMERIC));
    }
}
