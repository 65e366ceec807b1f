//! Instances of CRD-defined kinds: schemaless here, so only metadata is typed; any change
//! outside metadata bumps the generation; updates need a resourceVersion
//! (apiextensions-apiserver pkg/registry/customresource/strategy.go).

use crate::api::meta::Fields;
use crate::json::Value;

use super::super::meta::JsonPointer;
use super::super::meta::{meta_mut, set_or_remove};
use super::super::validation::validate_conditions;
use super::super::validation::FieldError;
use super::KindStrategy;

/// The `CustomResource` strategy.
pub(crate) struct CustomResourceStrategy;

impl KindStrategy for CustomResourceStrategy {
    fn has_generation(&self) -> bool {
        true
    }

    fn allows_unconditional_update(&self) -> bool {
        false
    }

    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map(|m| {
                    m.keys()
                        .filter(|k| *k != "metadata")
                        .map(|k| k.to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut all = keys(old);
        all.extend(keys(new));
        all.iter().any(|k| old.get(k) != new.get(k))
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        if let Some(c) = obj.at("/status/conditions").and_then(Value::as_array) {
            validate_conditions(c, "status.conditions", errs);
        }
    }

    fn reset_fields_status(&self, old: &Value, new: Value) -> Value {
        let mut result = old.clone();
        if let Some(o) = result.as_object_mut() {
            set_or_remove(o, "status", new.field("status"));
        }
        let managed = new.at("/metadata/managedFields").cloned();
        set_or_remove(meta_mut(&mut result), "managedFields", managed.as_ref());
        result
    }
}
