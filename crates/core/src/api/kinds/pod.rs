//! Pods (`v1`), as kube's pkg/registry/core/pod/strategy.go, pkg/apis/core/v1/defaults.go and
//! pkg/apis/core/validation define them, and the pod-spec rules workload templates share.

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::super::validation::{dns1123_label, push_all, validate_builtin_conditions};
use super::common::default_field;
use super::{KindStrategy, ResourceInfo};

/// The `Pod` strategy.
pub(crate) struct PodStrategy;

impl KindStrategy for PodStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
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
        ]
    }

    fn containers(&self) -> Option<(&'static str, &'static str)> {
        Some(("/spec/containers", "spec.containers"))
    }

    fn has_generation(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            default_pod_spec(spec);
            default_pod_only(spec);
        }
    }

    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        validate_pod_spec(obj.field("spec"), "spec", errs);
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        if let Some(c) = obj.at("/status/conditions").and_then(Value::as_array) {
            validate_builtin_conditions(c, "status.conditions", errs);
        }
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        let strip = |v: &Value| -> Value {
            let mut s = v.field("spec").cloned().unwrap_or(Value::Null);
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

    fn prepare_for_create(&self, obj: &mut Value, _cluster_ips: &mut u64) {
        // PrepareForCreate: status starts Pending with the pod's QoS class.
        let qos = qos_class(obj);
        obj["status"] = json!({"phase": "Pending", "qosClass": qos});
    }
}

pub(super) fn default_pod_spec(spec: &mut Value) {
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
                let image = c.field("image").and_then(Value::as_str).unwrap_or("");
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
                        crate::api::quantity::cpu_millis(l) == crate::api::quantity::cpu_millis(q)
                    }
                    (_, Some(l), Some(q)) => {
                        crate::api::quantity::memory_bytes(l)
                            == crate::api::quantity::memory_bytes(q)
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

pub(super) fn validate_pod_spec(spec: Option<&Value>, field: &str, errs: &mut Vec<FieldError>) {
    let containers = spec
        .and_then(|s| s.field("containers"))
        .and_then(Value::as_array);
    let Some(containers) = containers.filter(|c| !c.is_empty()) else {
        errs.push(FieldError::required(format!("{field}.containers"), ""));
        return;
    };
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        let path = format!("{field}.containers[{i}]");
        let name = c.field("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        } else {
            push_all(errs, &format!("{path}.name"), name, dns1123_label(name));
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
            }
            names.push(name);
        }
        if c.field("image")
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
