//! CustomResourceDefinitions (`apiextensions.k8s.io/v1`): names, scope and versions
//! (apiextensions-apiserver pkg/apis/apiextensions/validation).

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::super::validation::{dns1035_label, dns1123_subdomain, push_all};
use super::common::{default_field, immutable, obj_mut};
use super::{KindStrategy, ResourceInfo};

/// The `CustomResourceDefinition` strategy.
pub(crate) struct CustomResourceDefinitionStrategy;

impl KindStrategy for CustomResourceDefinitionStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
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
        ]
    }

    fn has_generation(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
            let kind = names
                .field("kind")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let plural = names
                .field("plural")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let Some(kind) = kind {
                default_field(names, "listKind", json!(format!("{kind}List")));
            }
            if let Some(plural) = plural {
                let singular = names
                    .field("kind")
                    .and_then(Value::as_str)
                    .map_or(plural.clone(), str::to_lowercase);
                default_field(names, "singular", json!(singular));
            }
        }
    }

    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        validate_crd(obj, errs);
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        immutable(old, new, "/spec/group", "spec.group", errs);
        immutable(old, new, "/spec/names/plural", "spec.names.plural", errs);
        immutable(old, new, "/spec/scope", "spec.scope", errs);
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
                .filter(|v| v.field("storage").and_then(Value::as_bool) == Some(true))
                .count();
            if storage != 1 {
                errs.push(FieldError::invalid_raw(
                    "spec.versions",
                    Value::from(vs.clone()).to_string(),
                    "must have exactly one version marked as storage version",
                ));
            }
            for (i, v) in vs.iter().enumerate() {
                let vname = v.field("name").and_then(Value::as_str).unwrap_or("");
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
        let gr = super::super::types::GroupResource::new(group, plural);
        if super::Registry::is_builtin(&gr) {
            errs.push(FieldError::invalid(
                "spec.names.plural",
                json!(plural),
                "conflicts with a built-in resource",
            ));
        }
    }
}
