//! Nodes (`v1`), cluster-scoped, written by their kubelets (pkg/registry/core/node/strategy.go).

use crate::json::Value;

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::validate_builtin_conditions;
use super::super::validation::FieldError;
use super::KindStrategy;

/// The `Node` strategy.
pub(crate) struct NodeStrategy;

impl KindStrategy for NodeStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
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
        ]
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        if let Some(c) = obj.at("/status/conditions").and_then(Value::as_array) {
            validate_builtin_conditions(c, "status.conditions", errs);
        }
    }
}
