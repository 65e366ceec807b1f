//! Strategic merge patch (`application/strategic-merge-patch+json`), as apimachinery applies it
//! to built-in kinds [apimachinery pkg/util/strategicpatch/patch.go `StrategicMergePatch`]:
//! maps merge key by key (`null` removes one); a list whose Go field has
//! `patchStrategy:"merge"` merges its elements by the field's `patchMergeKey` (containers by
//! name, container ports by containerPort, conditions by type, ...), a list without one is
//! replaced; the directives `$patch` (`delete`, `replace`, `merge`), `$setElementOrder/<list>`,
//! `$retainKeys` and `$deleteFromPrimitiveList/<list>` are honoured. `kubectl apply` and
//! `kubectl edit` send these. The merge keys come from k8s.io/api's struct tags.

use crate::api::meta::Fields;
use crate::json::{Map, Value};

/// How a list field merges: by a key of its elements, as a set of primitives, or replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListStrategy {
    Key(&'static str),
    Primitives,
    Replace,
}

/// The strategy of list `field` whose parent is at `path` (field names from the root, list
/// elements not named), for resource `resource` [k8s.io/api core/v1, apps/v1 types.go tags].
fn list_strategy(resource: &str, path: &[String], field: &str) -> ListStrategy {
    let parent = path.last().map(String::as_str).unwrap_or("");
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "schedulingGates" => ListStrategy::Key("name"),
        "ports" if resource == "services" && parent == "spec" => ListStrategy::Key("port"),
        "ports"
            if matches!(
                parent,
                "containers" | "initContainers" | "ephemeralContainers"
            ) =>
        {
            ListStrategy::Key("containerPort")
        }
        "volumeMounts" => ListStrategy::Key("mountPath"),
        "volumeDevices" => ListStrategy::Key("devicePath"),
        "hostAliases" => ListStrategy::Key("ip"),
        "topologySpreadConstraints" => ListStrategy::Key("topologyKey"),
        "conditions" if parent == "status" => ListStrategy::Key("type"),
        "addresses" if resource == "nodes" && parent == "status" => ListStrategy::Key("type"),
        "ownerReferences" if parent == "metadata" => ListStrategy::Key("uid"),
        "finalizers" if parent == "metadata" => ListStrategy::Primitives,
        _ => ListStrategy::Replace,
    }
}

/// The merge key of list `field` under `path`, if its elements merge by one (what
/// `kubectl apply` needs to compute a three-way patch).
pub fn merge_key(resource: &str, path: &[String], field: &str) -> Option<&'static str> {
    match list_strategy(resource, path, field) {
        ListStrategy::Key(k) => Some(k),
        _ => None,
    }
}

const SET_ORDER: &str = "$setElementOrder/";
const DELETE_FROM: &str = "$deleteFromPrimitiveList/";

/// Why a patch cannot apply (kube answers these with 400/422 and the message).
fn bad(message: impl Into<String>) -> String {
    message.into()
}

/// Applies `patch` to `doc` (an object of `resource`, e.g. `deployments`).
pub fn apply(resource: &str, doc: &mut Value, patch: &Value) -> Result<(), String> {
    let Value::Object(p) = patch else {
        return Err(bad("strategic merge patch must be a JSON object"));
    };
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    merge_map(resource, &mut Vec::new(), doc, p)
}

fn merge_map(
    resource: &str,
    path: &mut Vec<String>,
    doc: &mut Value,
    patch: &Map,
) -> Result<(), String> {
    match patch.field("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut replaced = patch.clone();
            replaced.remove("$patch");
            *doc = Value::Object(replaced);
            return Ok(());
        }
        Some("delete") => {
            *doc = Value::Null;
            return Ok(());
        }
        Some("merge") | None => {}
        Some(other) => return Err(bad(format!("unknown patch type found: {other}"))),
    }
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Some(target) = doc.as_object_mut() else {
        return Ok(());
    };
    if let Some(retain) = patch.field("$retainKeys") {
        let keep: Vec<&str> = retain
            .as_array()
            .ok_or_else(|| bad("$retainKeys must be a list of strings"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        target.retain(|k, _| keep.contains(&k.as_str()) || patch.contains_key(k));
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            if let Some(list) = key.strip_prefix(DELETE_FROM) {
                if let (Some(Value::Array(items)), Some(gone)) =
                    (target.get_mut(list), value.as_array())
                {
                    items.retain(|i| !gone.contains(i));
                }
            }
            continue;
        }
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(sub) => {
                path.push(key.to_string());
                let slot = target.entry(key.clone()).or_insert(Value::Null);
                let result = merge_map(resource, path, slot, sub);
                path.pop();
                result?;
                if target.get(key).is_some_and(Value::is_null) {
                    target.remove(key);
                }
            }
            Value::Array(items) => {
                let strategy = list_strategy(resource, path, key);
                let order = patch
                    .get(&format!("{SET_ORDER}{key}"))
                    .and_then(Value::as_array);
                path.push(key.to_string());
                let slot = target
                    .entry(key.clone())
                    .or_insert(Value::Array(Vec::new().into()));
                let result = merge_list(resource, path, slot, items, strategy, order);
                path.pop();
                result?;
            }
            other => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
    // An order given for a list the patch does not otherwise change still reorders it.
    for (key, order) in patch {
        let Some(list) = key.strip_prefix(SET_ORDER) else {
            continue;
        };
        if patch.contains_key(list) {
            continue;
        }
        let strategy = list_strategy(resource, path, list);
        if let (Some(Value::Array(items)), Some(order)) = (target.get_mut(list), order.as_array()) {
            reorder(items, order, strategy);
        }
    }
    Ok(())
}

fn key_of<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_object().and_then(|m| m.get(key))
}

fn merge_list(
    resource: &str,
    path: &mut Vec<String>,
    slot: &mut Value,
    items: &[Value],
    strategy: ListStrategy,
    order: Option<&Vec<Value>>,
) -> Result<(), String> {
    let replace = items
        .iter()
        .any(|i| key_of(i, "$patch").and_then(Value::as_str) == Some("replace"));
    if replace || strategy == ListStrategy::Replace || !slot.is_array() {
        let kept: Vec<Value> = items
            .iter()
            .filter(|i| key_of(i, "$patch").is_none())
            .cloned()
            .collect();
        *slot = Value::Array(kept.into());
        return Ok(());
    }
    let Some(current) = slot.as_array_mut() else {
        return Ok(());
    };
    match strategy {
        ListStrategy::Primitives => {
            for i in items {
                if !current.contains(i) {
                    current.push(i.clone());
                }
            }
        }
        ListStrategy::Key(mk) => {
            for item in items {
                let Some(k) = key_of(item, mk).cloned() else {
                    return Err(bad(format!(
                        "map: {item} does not contain declared merge key: {mk}"
                    )));
                };
                let at = current.iter().position(|c| key_of(c, mk) == Some(&k));
                let deleting = key_of(item, "$patch").and_then(Value::as_str) == Some("delete");
                match (at, deleting) {
                    (Some(i), true) => {
                        current.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => {
                        if let Value::Object(sub) = item {
                            merge_map(resource, path, &mut current[i], sub)?;
                        }
                    }
                    (None, false) => {
                        let mut fresh = Value::Object(Map::new());
                        if let Value::Object(sub) = item {
                            merge_map(resource, path, &mut fresh, sub)?;
                        }
                        current.push(fresh);
                    }
                }
            }
        }
        ListStrategy::Replace => {}
    }
    if let Some(order) = order {
        reorder(current, order, strategy);
    }
    Ok(())
}

/// `$setElementOrder`: elements named in `order` come first, in that order; the rest keep
/// their relative order after them.
fn reorder(items: &mut [Value], order: &[Value], strategy: ListStrategy) {
    let rank = |v: &Value| -> usize {
        order
            .iter()
            .position(|o| match strategy {
                ListStrategy::Key(mk) => key_of(o, mk).is_some() && key_of(o, mk) == key_of(v, mk),
                _ => o == v,
            })
            .unwrap_or(usize::MAX)
    };
    items.sort_by_key(rank);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn deployment() -> Value {
        json!({"metadata": {"name": "web", "finalizers": ["a"]},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [
                {"name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}]},
                {"name": "log", "image": "busybox"}]}}}})
    }

    #[test]
    fn containers_merge_by_name_and_their_ports_by_container_port() {
        let mut d = deployment();
        apply(
            "deployments",
            &mut d,
            &json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "nginx"}, {"name": "log"}],
            "containers": [{"name": "nginx", "image": "nginx:1.16.1",
                "ports": [{"containerPort": 443}]}]}}}}),
        )
        .expect("applies");
        let c = &d["spec"]["template"]["spec"]["containers"];
        assert_eq!(c[0]["image"], json!("nginx:1.16.1"));
        assert_eq!(
            c[0]["ports"],
            json!([{"containerPort": 80}, {"containerPort": 443}])
        );
        assert_eq!(c[1]["name"], json!("log"));
    }

    #[test]
    fn directives_delete_replace_and_nulls_work_as_apimachinerys() {
        let mut d = deployment();
        apply(
            "deployments",
            &mut d,
            &json!({"metadata": {"finalizers": ["b"]},
            "spec": {"replicas": null, "template": {"spec": {"containers": [
                {"name": "log", "$patch": "delete"}]}}}}),
        )
        .expect("applies");
        assert_eq!(d["metadata"]["finalizers"], json!(["a", "b"]));
        assert!(d["spec"].get("replicas").is_none());
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        apply(
            "deployments",
            &mut d,
            &json!({"spec": {"template": {"$patch": "replace", "spec": {}}}}),
        )
        .expect("applies");
        assert_eq!(d["spec"]["template"], json!({"spec": {}}));
        let e = apply(
            "deployments",
            &mut d,
            &json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
        );
        assert!(e
            .expect_err("no merge key")
            .contains("does not contain declared merge key: name"));
    }

    #[test]
    fn lists_without_a_strategy_are_replaced() {
        let mut pod = json!({"spec": {"tolerations": [{"key": "a"}], "containers": [{"name": "c", "args": ["x", "y"]}]}});
        apply(
            "pods",
            &mut pod,
            &json!({"spec": {"tolerations": [{"key": "b"}],
            "containers": [{"name": "c", "args": ["z"]}]}}),
        )
        .expect("applies");
        assert_eq!(pod["spec"]["tolerations"], json!([{"key": "b"}]));
        assert_eq!(pod["spec"]["containers"][0]["args"], json!(["z"]));
    }
}
