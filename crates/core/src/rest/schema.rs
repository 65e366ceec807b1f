//! The OpenAPI v3 component schemas `converge serve` publishes, which `kubectl explain` reads:
//! the built-in kinds from `schemas.yaml` (kube's definition names, Converge's descriptions;
//! the shorthand is described there), and each served custom resource from its CRD's
//! `openAPIV3Schema`, as kube's apiextensions-apiserver publishes it
//! [apiextensions-apiserver pkg/controller/openapi/builder `BuildOpenAPIV3`: the definition
//! named by the reversed group, the version and the kind, `apiVersion`, `kind` and `metadata`
//! added, `x-kubernetes-group-version-kind` set].

use crate::api::meta::Fields;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use crate::json::{json, Map, Value};

use crate::api::{ApiServer, GroupResource, ObjectKey, ResourceInfo};

const SOURCE: &str = include_str!("schemas.yaml");
const REF_PREFIX: &str = "#/components/schemas/";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Every built-in definition by its full name, expanded to OpenAPI: read once, since every
/// group version's document (which kubectl also reads before each create, apply and replace)
/// draws on it.
pub fn builtin() -> &'static BTreeMap<String, Value> {
    static BUILTIN: OnceLock<BTreeMap<String, Value>> = OnceLock::new();
    BUILTIN.get_or_init(expand)
}

fn expand() -> BTreeMap<String, Value> {
    let source: Value = serde_yaml_ng::from_str(SOURCE).expect("schemas.yaml parses");
    let mut short: BTreeMap<String, String> = BTreeMap::new();
    for (package, defs) in source.as_object().into_iter().flatten() {
        for name in defs.as_object().into_iter().flatten().map(|(n, _)| n) {
            short.insert(name.to_string(), format!("{package}.{name}"));
        }
    }
    let mut out = BTreeMap::new();
    for (package, defs) in source.as_object().into_iter().flatten() {
        for (name, def) in defs.as_object().into_iter().flatten() {
            out.insert(format!("{package}.{name}"), definition(def, &short));
        }
    }
    out
}

fn reference(full: &str) -> Value {
    json!({"allOf": [{"$ref": format!("{REF_PREFIX}{full}")}]})
}

/// One `[type, description, enum?]` property, or a type as `[]T`'s or `map[string]T`'s element.
fn typed(ty: &str, short: &BTreeMap<String, String>) -> Value {
    if let Some(item) = ty.strip_prefix("[]") {
        json!({"type": "array", "items": typed(item, short)})
    } else if let Some(value) = ty.strip_prefix("map[string]") {
        json!({"type": "object", "additionalProperties": typed(value, short)})
    } else if let Some(full) = short.get(ty) {
        reference(full)
    } else {
        json!({ "type": ty })
    }
}

fn definition(def: &Value, short: &BTreeMap<String, String>) -> Value {
    let mut out = Map::new();
    if let Some(alternatives) = def.member("oneOf").as_array() {
        let types: Vec<Value> = alternatives.iter().map(|t| json!({ "type": t })).collect();
        out.insert("oneOf", Value::Array(types.into()));
    } else {
        out.insert(
            "type",
            def.field("t").cloned().unwrap_or_else(|| json!("object")),
        );
    }
    if let Some(f) = def.field("format") {
        out.insert("format", f.clone());
    }
    if let Some(d) = def.field("d") {
        out.insert("description", d.clone());
    }
    if let Some(r) = def.field("required") {
        out.insert("required", r.clone());
    }
    let mut props = Map::new();
    if let Some(gvk) = def.member("gvk").as_str() {
        let (gv, kind) = gvk.rsplit_once('/').unwrap_or(("", gvk));
        let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
        out.insert(
            "x-kubernetes-group-version-kind",
            json!([{"group": group, "kind": kind, "version": version}]),
        );
        standard_properties(&mut props);
    }
    for (name, p) in def.member("p").as_object().into_iter().flatten() {
        let ty = p[0].as_str().unwrap_or("object");
        let mut prop = typed(ty, short);
        if let Some(d) = p[1].as_str() {
            prop["description"] = json!(d);
        }
        if let Some(e) = p.get(2) {
            prop["enum"] = e.clone();
        }
        props.insert(name.clone(), prop);
    }
    if !props.is_empty() {
        out.insert("properties", Value::Object(props));
    }
    Value::Object(out)
}

/// `apiVersion`, `kind` and `metadata`, as every kind's schema lists them.
fn standard_properties(props: &mut Map) {
    props.insert(
        "apiVersion",
        json!({"type": "string", "description": "The version of the schema this object is written in, as group/version (apps/v1) or version alone for the core group (v1). The API server converts between the versions it serves."}),
    );
    props.insert(
        "kind",
        json!({"type": "string", "description": "The kind of object this is, in CamelCase. It names the schema together with apiVersion and cannot change."}),
    );
    let mut meta = reference(OBJECT_META);
    meta["description"] = json!("Standard object metadata: name, namespace, labels, annotations, and the fields the API server sets (uid, resourceVersion, generation, creationTimestamp).");
    props.insert("metadata", meta);
}

/// A kind served without a listed schema: its envelope, so explain still names it.
fn envelope(info: &ResourceInfo, version: &str) -> Value {
    let mut props = Map::new();
    standard_properties(&mut props);
    json!({
        "type": "object",
        "description": format!("{} as Converge serves it; this server's schema does not list its fields.", info.kind),
        "properties": props,
        "x-kubernetes-group-version-kind": [{"group": info.gr.group.as_str(), "kind": info.kind, "version": version}],
    })
}

/// The definition name kube gives a custom resource: `com.example.v1.Database` for
/// `example.com/v1` `Database`.
fn custom_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The served CRD version's schema, as a component.
fn custom(server: &ApiServer, info: &ResourceInfo, version: &str) -> Option<Value> {
    let crds = GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions");
    let name = format!("{}.{}", info.gr.resource, info.gr.group);
    let crd = server.get(&ObjectKey::new(crds, "", &name))?;
    let served = crd
        .member("spec")
        .member("versions")
        .as_array()?
        .iter()
        .find(|v| v.member("name") == version)?;
    let mut schema = served.member("schema").member("openAPIV3Schema").clone();
    if !schema.is_object() {
        schema = json!({"type": "object"});
    }
    let mut props = schema
        .member("properties")
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut standard = Map::new();
    standard_properties(&mut standard);
    for (k, v) in standard {
        match props.get_mut(&k) {
            Some(existing) if k != "metadata" => {
                if existing.field("description").is_none() {
                    existing["description"] = v.member("description").clone();
                }
            }
            _ => {
                props.insert(k, v);
            }
        }
    }
    schema["properties"] = Value::Object(props);
    schema["x-kubernetes-group-version-kind"] =
        json!([{"group": info.gr.group.as_str(), "kind": info.kind, "version": version}]);
    Some(schema)
}

/// The `$ref`s a schema names, anywhere in it.
fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.field("$ref").and_then(Value::as_str) {
                if let Some(name) = r.strip_prefix(REF_PREFIX) {
                    out.insert(name.to_owned());
                }
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// The component schemas of one group version: each kind served there and every definition
/// they reach.
pub fn components<'a>(
    server: &ApiServer,
    kinds: impl Iterator<Item = &'a ResourceInfo>,
    version: &str,
) -> Map {
    let all = builtin();
    let mut out = Map::new();
    let mut wanted = BTreeSet::new();
    for info in kinds {
        let gvk_matches = |def: &Value| {
            def.member("x-kubernetes-group-version-kind")[0]
                == json!({"group": info.gr.group.as_str(), "kind": info.kind, "version": version})
        };
        if let Some((name, _)) = all.iter().find(|(_, d)| gvk_matches(d)) {
            wanted.insert(name.clone());
        } else if let Some(schema) = custom(server, info, version) {
            refs(&schema, &mut wanted);
            out.insert(custom_name(&info.gr.group, version, &info.kind), schema);
        } else {
            let name = if info.gr.group.is_empty() {
                format!("io.k8s.api.core.{version}.{}", info.kind)
            } else {
                custom_name(&info.gr.group, version, &info.kind)
            };
            let schema = envelope(info, version);
            refs(&schema, &mut wanted);
            out.insert(name, schema);
        }
    }
    while let Some(name) = wanted.pop_first() {
        if out.contains_key(&name) {
            continue;
        }
        if let Some(def) = all.get(&name) {
            refs(def, &mut wanted);
            out.insert(name, def.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves_and_every_short_name_is_unique() {
        let source: Value = serde_yaml_ng::from_str(SOURCE).expect("parses");
        let mut names = BTreeSet::new();
        for (_, defs) in source.as_object().unwrap() {
            for (name, _) in defs.as_object().unwrap() {
                assert!(names.insert(name.clone()), "{name} is defined twice");
            }
        }
        let all = builtin();
        for (name, def) in all {
            let mut r = BTreeSet::new();
            refs(def, &mut r);
            for target in r {
                assert!(all.contains_key(&target), "{name} names {target}");
            }
            for (field, p) in def["properties"].as_object().into_iter().flatten() {
                assert!(
                    p.get("description").is_some(),
                    "{name}.{field} has no description"
                );
            }
        }
    }

    #[test]
    fn a_kind_gets_the_standard_fields_and_its_group_version_kind() {
        let all = builtin();
        let d = &all["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            d["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        assert_eq!(
            d["properties"]["metadata"]["allOf"][0]["$ref"],
            json!(format!("{REF_PREFIX}{OBJECT_META}"))
        );
        let spec = &all["io.k8s.api.apps.v1.DeploymentSpec"];
        assert_eq!(spec["properties"]["replicas"]["type"], json!("integer"));
        assert_eq!(
            spec["properties"]["strategy"]["allOf"][0]["$ref"],
            json!(format!("{REF_PREFIX}io.k8s.api.apps.v1.DeploymentStrategy"))
        );
        let status = &all["io.k8s.api.apps.v1.DeploymentStatus"];
        assert_eq!(
            status["properties"]["conditions"]["items"]["allOf"][0]["$ref"],
            json!(format!(
                "{REF_PREFIX}io.k8s.api.apps.v1.DeploymentCondition"
            ))
        );
    }

    #[test]
    fn custom_resources_are_named_by_the_reversed_group() {
        assert_eq!(
            custom_name("example.com", "v1", "Database"),
            "com.example.v1.Database"
        );
    }
}
