//! Typed reads of object metadata from unstructured objects, for the engine, controllers and
//! views: name, namespace, uid, resourceVersion, generation, labels, owner references.

use crate::json::path;
use crate::json::{json, Map, Pointer, Value};

/// RFC 6901 JSON pointer lookup: `Value::pointer`, by the name the engine's reads use, of a
/// pointer's text or of a [`crate::json::Path`] (`path!("/status/phase")`, read when compiled).
pub trait JsonPointer {
    fn at<'p>(&self, pointer: impl Into<Pointer<'p>>) -> Option<&Value>;
}

impl JsonPointer for Value {
    #[inline]
    fn at<'p>(&self, pointer: impl Into<Pointer<'p>>) -> Option<&Value> {
        self.at_pointer(pointer.into())
    }
}

/// `map.get(key)`: a JSON object's members are searched in order (`crate::json::Map`).
#[inline]
pub fn lookup<'a>(map: &'a Map, key: &str) -> Option<&'a Value> {
    map.get(key)
}

/// Member reads of unstructured objects, with `Value::get`'s and `value[key]`'s answers but
/// through [`lookup`]: the engine reads a few members of every object on every event.
pub trait Fields {
    /// `self.get(key)` for an object member (None for a missing key or a non-object).
    fn field(&self, key: &str) -> Option<&Value>;
    /// `&self[key]`: the member, or `Value::Null`.
    fn member(&self, key: &str) -> &Value;
}

static NULL: Value = Value::Null;

impl Fields for Value {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => lookup(map, key),
            _ => None,
        }
    }

    #[inline]
    fn member(&self, key: &str) -> &Value {
        self.field(key).unwrap_or(&NULL)
    }
}

impl Fields for Map {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        lookup(self, key)
    }

    #[inline]
    fn member(&self, key: &str) -> &Value {
        lookup(self, key).unwrap_or(&NULL)
    }
}

/// `a == b` for JSON values, with the same answer as `crate::json::Value`'s `PartialEq`, but
/// cheaper for the common case: `Value`'s map equality searches one map for every key of the
/// other, and the engine compares whole specs and statuses on every write (a no-op update, a
/// status kept as stored, a kubelet's last report). Two maps that are one allocation (a level
/// a write did not copy) are equal without a look. Objects are walked in step while their keys
/// come in the same order, which they almost always do (both sides were built by the same code
/// or copied from the same stored object); from the first key that differs in place, the rest
/// is looked up as `Value` does.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if Map::ptr_eq(x, y) {
                return true;
            }
            if x.len() != y.len() {
                return false;
            }
            for (i, ((ka, va), (kb, vb))) in x.iter().zip(y.iter()).enumerate() {
                if ka != kb {
                    // Keys are unique, so the keys matched so far are not among the rest.
                    return x
                        .iter()
                        .skip(i)
                        .all(|(k, v)| lookup(y, k).is_some_and(|w| json_eq(v, w)));
                }
                if !json_eq(va, vb) {
                    return false;
                }
            }
            true
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        _ => a == b,
    }
}

/// How many members of `m` are not `null`.
pub fn non_null_len(m: &crate::json::Map) -> usize {
    m.values().filter(|v| !v.is_null()).count()
}

/// JSON equality as typed equality sees it: an object member whose value is `null` decodes to
/// the field's zero value, as an absent one does (`Semantic.DeepEqual` of the decoded objects).
/// Nothing else is taken as absent: `0`, `""`, `{}` and `[]` can differ from an absent pointer.
pub fn semantic_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            non_null_len(x) == non_null_len(y)
                && x.iter()
                    .filter(|(_, v)| !v.is_null())
                    .all(|(k, v)| y.get(k).is_some_and(|w| semantic_eq(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| semantic_eq(v, w))
        }
        _ => a == b,
    }
}

/// [`json_eq`] of two optional values (`Option<&Value>`'s `==`).
pub fn json_eq_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => json_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// RFC 7386 JSON merge patch, exactly as `json_patch::merge` applies it (kube's
/// `jsonpatch.MergePatch` for `application/merge-patch+json`), but taking the patch by value:
/// its values move into the document instead of being copied (a kubelet's status patch carries
/// the whole status on every write).
pub fn merge_patch(doc: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *doc = patch;
        return;
    };
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Value::Object(map) = doc else {
        return;
    };
    for (key, value) in patch {
        if value.is_null() {
            // serde_json's `remove` (a swap_remove with `preserve_order`), as json_patch's.
            map.remove(key.as_str());
        } else {
            merge_patch(map.entry(key).or_insert(Value::Null), value);
        }
    }
}

/// `metadata.<key>` as a string (empty if absent or not a string).
pub fn meta_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.field("metadata")
        .and_then(|m| m.field(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.name` (empty if absent).
pub fn name(obj: &Value) -> &str {
    str_at(obj, path!("/metadata/name"))
}

/// `metadata.namespace` (empty for cluster-scoped objects).
pub fn namespace(obj: &Value) -> &str {
    str_at(obj, path!("/metadata/namespace"))
}

/// `metadata.uid` (empty if absent).
pub fn uid(obj: &Value) -> &str {
    str_at(obj, path!("/metadata/uid"))
}

/// `metadata.resourceVersion` as the server's counter value (0 if absent).
pub fn resource_version(obj: &Value) -> u64 {
    str_at(obj, path!("/metadata/resourceVersion"))
        .parse()
        .unwrap_or(0)
}

/// `metadata.generation` (0 for kinds without one).
pub fn generation(obj: &Value) -> i64 {
    obj.at(path!("/metadata/generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `metadata.deletionTimestamp`, if the object is being deleted.
pub fn deletion_timestamp(obj: &Value) -> Option<&str> {
    obj.at(path!("/metadata/deletionTimestamp"))
        .and_then(Value::as_str)
}

/// `metadata.labels` (None if absent).
pub fn labels(obj: &Value) -> Option<&Map> {
    obj.at(path!("/metadata/labels")).and_then(Value::as_object)
}

/// `metadata.annotations[key]`.
pub fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.at(path!("/metadata/annotations"))
        .and_then(|a| a.field(key))
        .and_then(Value::as_str)
}

/// The owner reference with `controller: true`, if any.
pub fn controller_ref(obj: &Value) -> Option<&Value> {
    obj.at(path!("/metadata/ownerReferences"))
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.field("controller").and_then(Value::as_bool) == Some(true))
}

/// An ownerReference naming `owner` (as controllers set on what they create).
pub fn owner_reference(owner: &Value, controller: bool) -> Value {
    json!({
        "apiVersion": owner.field("apiVersion").cloned().unwrap_or(Value::Null),
        "kind": owner.field("kind").cloned().unwrap_or(Value::Null),
        "name": name(owner),
        "uid": uid(owner),
        "controller": controller,
        "blockOwnerDeletion": controller,
    })
}

/// `metadata` as a map, if the object has one.
pub fn object_meta(obj: &Value) -> Option<&Map> {
    obj.field("metadata").and_then(Value::as_object)
}

/// Whether two objects' `metadata` is one allocation: a write that carries the stored
/// metadata as it is (a kubelet's status update) changed none of it.
pub fn same_metadata(a: &Value, b: &Value) -> bool {
    object_meta(a)
        .zip(object_meta(b))
        .is_some_and(|(x, y)| Map::ptr_eq(x, y))
}

/// `metadata`, created (and the object made an object) when missing: for the server's writes.
pub fn meta_mut(obj: &mut Value) -> &mut Map {
    if !obj.is_object() {
        *obj = json!({});
    }
    let map = obj.as_object_mut().expect("just made an object");
    let m = map.entry("metadata").or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    m.as_object_mut().expect("just made an object")
}

/// The strings of the list at a JSON pointer (non-strings skipped; empty when absent).
pub fn str_list_at<'p>(obj: &Value, pointer: impl Into<Pointer<'p>>) -> Vec<String> {
    obj.at(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    str_list_at(obj, path!("/metadata/finalizers"))
}

/// Whether `metadata.deletionTimestamp` is set (the object is being deleted).
pub fn is_deleting(obj: &Value) -> bool {
    !str_at(obj, path!("/metadata/deletionTimestamp")).is_empty()
}

/// `metadata.ownerReferences`, or none.
pub fn owner_refs(obj: &Value) -> &[Value] {
    obj.at(path!("/metadata/ownerReferences"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The uid an ownerReference names.
pub fn ref_uid(r: &Value) -> Option<&str> {
    r.field("uid").and_then(Value::as_str)
}

/// `metadata.ownerReferences[*].uid` of an object.
pub fn owner_uids(obj: &Value) -> Vec<String> {
    owner_refs(obj)
        .iter()
        .filter_map(ref_uid)
        .map(str::to_owned)
        .collect()
}

/// Sets `key` to `v`, or removes it for `None`.
pub fn set_or_remove(map: &mut Map, key: &str, v: Option<&Value>) {
    match v {
        // Clients send back what they read, so the value is usually there already: compare
        // before copying (an insert over an equal value would change nothing, not even order).
        Some(v) if lookup(map, key).is_some_and(|have| json_eq(have, v)) => {}
        Some(v) => {
            map.insert(key.to_owned(), v.clone());
        }
        None => {
            map.remove(key);
        }
    }
}

/// The string at a JSON pointer, empty when absent or not a string: controllers read optional
/// fields the way Go reads a zero value.
/// The component that reported an Event: `source.component`, or, for an events.k8s.io Event
/// (which has no source), its reporting controller, spelled `reportingComponent` in core/v1.
/// kubectl's describe and table and the `source` field selector all read it so.
pub fn event_source(ev: &Value) -> &str {
    match str_at(ev, path!("/source/component")) {
        "" => str_at(ev, path!("/reportingComponent")),
        c => c,
    }
}

pub fn str_at<'a, 'p>(obj: &'a Value, pointer: impl Into<Pointer<'p>>) -> &'a str {
    obj.at(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The integer at a JSON pointer.
pub fn i64_at<'p>(obj: &Value, pointer: impl Into<Pointer<'p>>) -> Option<i64> {
    obj.at(pointer).and_then(Value::as_i64)
}

/// Whether the object is being deleted: `metadata.deletionTimestamp` present and not null
/// (Go's `DeletionTimestamp != nil`; unlike [`deletion_timestamp`] any non-null value counts).
pub fn is_terminating(obj: &Value) -> bool {
    obj.at(path!("/metadata/deletionTimestamp"))
        .is_some_and(|t| !t.is_null())
}

/// The controller owner reference ([`controller_ref`]) as (kind, name, uid).
pub fn controller_of(obj: &Value) -> Option<(&str, &str, &str)> {
    fn member<'a>(r: &'a Value, key: &str) -> &'a str {
        r.field(key).and_then(Value::as_str).unwrap_or_default()
    }
    controller_ref(obj).map(|r| (member(r, "kind"), member(r, "name"), member(r, "uid")))
}

/// The controller owner reference's kind alone: what the informers' filters ask of every Pod
/// event, without reading its name and uid.
pub fn controller_kind(obj: &Value) -> Option<&str> {
    controller_ref(obj).map(|r| r.field("kind").and_then(Value::as_str).unwrap_or_default())
}

/// A JSON object's string values as an ordered map (non-string values are skipped).
pub fn string_map(v: Option<&Value>) -> std::collections::BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.to_string(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.labels` as an ordered map (empty if absent), for selector matching.
pub fn label_map(obj: &Value) -> std::collections::BTreeMap<String, String> {
    string_map(obj.at(path!("/metadata/labels")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_agrees_with_serde_json_pointer() {
        let mut big = Map::new();
        for i in 0..20 {
            big.insert(format!("k{i}"), json!(i));
        }
        let o = json!({
            "metadata": {"name": "web", "a/b": 1, "m~n": 2, "": 3},
            "list": [10, {"x": [true]}],
            "big": big,
            "scalar": 5,
        });
        for p in [
            "",
            "/",
            "/metadata",
            "/metadata/name",
            "/metadata/a~1b",
            "/metadata/m~0n",
            "/metadata/a/b",
            "/metadata/",
            "/list/0",
            "/list/1/x/0",
            "/list/01",
            "/list/+1",
            "/list/2",
            "/list/-",
            "/big/k7",
            "/big/k19",
            "/big/k20",
            "/scalar/x",
            "no-slash",
            "/missing",
            "/list/1/x/0/deeper",
        ] {
            assert_eq!(
                o.at(p).cloned().map(crate::json::into_serde),
                crate::json::into_serde(o.clone()).pointer(p).cloned(),
                "pointer {p:?}"
            );
        }
    }

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
