//! Namespaces (`v1`): the `kubernetes` finalizer and the Active phase
//! (pkg/registry/core/namespace/strategy.go).

use crate::json::{json, Value};

use super::super::validation::dns1123_label;
use super::common::{default_field, obj_mut};
use super::KindStrategy;

/// The `Namespace` strategy.
pub(crate) struct NamespaceStrategy;

impl KindStrategy for NamespaceStrategy {
    fn name_format(&self, name: &str) -> Vec<String> {
        dns1123_label(name)
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj_mut(obj, "spec") {
            default_field(spec, "finalizers", json!(["kubernetes"]));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value, _cluster_ips: &mut u64) {
        obj["status"] = json!({"phase": "Active"});
    }
}
