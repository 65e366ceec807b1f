//! Small helpers the kinds' strategies share: defaulting a field, and the range and
//! immutability checks with kube's messages.

use crate::json::{json, Map, Value};

use super::super::meta::{Fields, JsonPointer};
use super::super::validation::FieldError;

/// Where a workload kind (Deployment, ReplicaSet, Job, DaemonSet) keeps its pod template's
/// containers, for typed decoding: JSON pointer and Go path.
pub(super) const TEMPLATE_CONTAINERS: (&str, &str) = (
    "/spec/template/spec/containers",
    "spec.template.spec.containers",
);

/// The simulator's cap on replica counts per object (kube's own limit is int32).
pub const MAX_REPLICAS: i64 = 10_000;

pub(super) fn obj_mut<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map> {
    let map = v.as_object_mut()?;
    let entry = map.entry(key.to_owned()).or_insert_with(|| json!({}));
    if entry.is_null() {
        *entry = json!({});
    }
    entry.as_object_mut()
}

/// The object at `key` in a map, created (or replacing a null) when missing.
pub(super) fn map_mut<'a>(m: &'a mut Map, key: &str) -> Option<&'a mut Map> {
    let e = m.entry(key.to_owned()).or_insert_with(|| json!({}));
    if e.is_null() {
        *e = json!({});
    }
    e.as_object_mut()
}

pub(super) fn default_field(map: &mut Map, key: &str, value: Value) {
    let missing = map.field(key).is_none_or(Value::is_null);
    if missing {
        map.insert(key.to_owned(), value);
    }
}

pub(super) fn nonneg(obj: &Value, ptr: &str, field: &str, errs: &mut Vec<FieldError>) {
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

pub(super) fn replicas_in_range(obj: &Value, ptr: &str, field: &str, errs: &mut Vec<FieldError>) {
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

/// A field that may not change on update, with kube's `field is immutable`.
pub(super) fn immutable(
    old: &Value,
    new: &Value,
    ptr: &str,
    field: &str,
    errs: &mut Vec<FieldError>,
) {
    let (o, n) = (old.at(ptr), new.at(ptr));
    if o != n {
        let shown = n.map_or_else(|| "null".to_owned(), Value::to_string);
        errs.push(FieldError::invalid_raw(field, shown, "field is immutable"));
    }
}
