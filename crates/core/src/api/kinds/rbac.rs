//! Role, ClusterRole, RoleBinding and ClusterRoleBinding (`rbac.authorization.k8s.io/v1`):
//! rules, subjects and the immutable roleRef (pkg/apis/rbac/validation).

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::path_segment_name;
use super::super::validation::FieldError;
use super::{KindStrategy, ResourceInfo};

/// The `RbacObject` strategy.
pub(crate) struct RbacObjectStrategy;

impl KindStrategy for RbacObjectStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/rules", Ty::Array("[]v1.PolicyRule"), "rules"),
            ("/subjects", Ty::Array("[]v1.Subject"), "subjects"),
            ("/roleRef", Ty::Object("v1.RoleRef"), "roleRef"),
        ]
    }

    fn name_format(&self, name: &str) -> Vec<String> {
        path_segment_name(name)
    }

    fn validate(&self, info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        validate_rbac(info, obj, errs);
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        if info.kind.ends_with("Binding") && old.field("roleRef") != new.field("roleRef") {
            errs.push(FieldError::invalid_raw(
                "roleRef",
                new.field("roleRef")
                    .map_or_else(|| "null".to_owned(), Value::to_string),
                "cannot change roleRef",
            ));
        }
    }
}

fn validate_rbac(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    match info.kind.as_str() {
        "Role" | "ClusterRole" => {
            if let Some(rules) = obj.field("rules").and_then(Value::as_array) {
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
            if let Some(subjects) = obj.field("subjects").and_then(Value::as_array) {
                for (i, s) in subjects.iter().enumerate() {
                    let k = s.field("kind").and_then(Value::as_str).unwrap_or("");
                    if !matches!(k, "ServiceAccount" | "User" | "Group") {
                        errs.push(FieldError::not_supported(
                            format!("subjects[{i}].kind"),
                            json!(k),
                            &["ServiceAccount", "User", "Group"],
                        ));
                    }
                    if s.field("name")
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
