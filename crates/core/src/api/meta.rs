//! Typed reads of object metadata from unstructured objects, for the engine, controllers and
//! views: name, namespace, uid, resourceVersion, generation, labels, owner references.

use serde_json::{json, Map, Value};

fn meta_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.name` (empty if absent).
pub fn name(obj: &Value) -> &str {
    meta_str(obj, "name")
}

/// `metadata.namespace` (empty for cluster-scoped objects).
pub fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace")
}

/// `metadata.uid` (empty if absent).
pub fn uid(obj: &Value) -> &str {
    meta_str(obj, "uid")
}

/// `metadata.resourceVersion` as the server's counter value (0 if absent).
pub fn resource_version(obj: &Value) -> u64 {
    meta_str(obj, "resourceVersion").parse().unwrap_or(0)
}

/// `metadata.generation` (0 for kinds without one).
pub fn generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `metadata.deletionTimestamp`, if the object is being deleted.
pub fn deletion_timestamp(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
}

/// `metadata.labels` (None if absent).
pub fn labels(obj: &Value) -> Option<&Map<String, Value>> {
    obj.pointer("/metadata/labels").and_then(Value::as_object)
}

/// `metadata.annotations[key]`.
pub fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The owner reference with `controller: true`, if any.
pub fn controller_ref(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// An ownerReference naming `owner` (as controllers set on what they create).
pub fn owner_reference(owner: &Value, controller: bool) -> Value {
    json!({
        "apiVersion": owner.get("apiVersion").cloned().unwrap_or(Value::Null),
        "kind": owner.get("kind").cloned().unwrap_or(Value::Null),
        "name": name(owner),
        "uid": uid(owner),
        "controller": controller,
        "blockOwnerDeletion": controller,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_reads_tolerate_missing_fields() {
        let o = json!({"metadata": {"name": "web", "resourceVersion": "42", "generation": 3,
            "ownerReferences": [{"uid": "x"}, {"uid": "y", "controller": true}]}});
        assert_eq!(
            (
                name(&o),
                namespace(&o),
                resource_version(&o),
                generation(&o)
            ),
            ("web", "", 42, 3)
        );
        assert_eq!(controller_ref(&o).unwrap()["uid"], "y");
        let empty = json!(null);
        assert_eq!(
            (name(&empty), resource_version(&empty), generation(&empty)),
            ("", 0, 0)
        );
        assert!(labels(&empty).is_none() && deletion_timestamp(&empty).is_none());
    }

    #[test]
    fn owner_references_name_the_owner() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "uid": "u1"}});
        let r = owner_reference(&d, true);
        assert_eq!(
            r,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1", "controller": true, "blockOwnerDeletion": true})
        );
    }
}
