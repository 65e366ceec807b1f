//! Services (`v1`): type, ports and the cluster IP allocated on create
//! (pkg/registry/core/service).

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::dns1035_label;
use super::super::validation::FieldError;
use super::common::{default_field, obj_mut};
use super::{KindStrategy, ResourceInfo};

/// The `Service` strategy.
pub(crate) struct ServiceStrategy;

impl KindStrategy for ServiceStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/spec", Ty::Object("v1.ServiceSpec"), "Service.spec"),
            (
                "/spec/ports",
                Ty::Array("[]v1.ServicePort"),
                "ServiceSpec.spec.ports",
            ),
            ("/spec/type", Ty::Str, "ServiceSpec.spec.type"),
            ("/spec/selector", Ty::StrMap, "ServiceSpec.spec.selector"),
        ]
    }

    fn name_format(&self, name: &str) -> Vec<String> {
        dns1035_label(name)
    }

    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        default_field(spec, "type", json!("ClusterIP"));
        default_field(spec, "sessionAffinity", json!("None"));
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                default_field(p, "protocol", json!("TCP"));
                if let Some(port) = p.field("port").cloned() {
                    default_field(p, "targetPort", port);
                }
            }
        }
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
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
                    let port = p.field("port").and_then(Value::as_i64).unwrap_or(0);
                    if !(1..=65535).contains(&port) {
                        errs.push(FieldError::invalid(
                            format!("spec.ports[{i}].port"),
                            json!(port),
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                    if ps.len() > 1
                        && p.field("name")
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

    fn prepare_for_create(&self, obj: &mut Value, cluster_ips: &mut u64) {
        let ty = obj
            .at("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        let ip = obj
            .at("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if ty != "ExternalName" && ip.is_empty() {
            *cluster_ips += 1;
            let n = *cluster_ips;
            let ip = format!("10.96.{}.{}", (n / 250) % 256, n % 250 + 1);
            obj["spec"]["clusterIP"] = json!(ip);
            obj["spec"]["clusterIPs"] = json!([ip]);
        }
        obj["status"] = json!({"loadBalancer": {}});
    }
}
