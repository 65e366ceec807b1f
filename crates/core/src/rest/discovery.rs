//! Discovery, as kube-apiserver serves it to clients that find resources before using them
//! (kubectl's RESTMapper, client-go's discovery client): `/version`, `/api`, `/apis`, and one
//! `APIResourceList` per group version [apiserver pkg/endpoints/discovery: `legacyRootAPIHandler`,
//! `rootAPIsHandler`, `APIVersionHandler`]. Built from the resources the server serves at the
//! moment, so a CRD's resource appears once the CRD exists. `/api` and `/apis` answer in the
//! aggregated form (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`, every group's resources
//! in one document [apiserver pkg/endpoints/discovery/aggregated]) when the client asks for it,
//! as kubectl 1.32 does first; otherwise in the legacy form, and each group version has its
//! `APIResourceList` either way.

use crate::json::{json, Value};

use super::route::PathTarget;
use crate::api::{errors::unknown_resource, ApiError, ApiServer, GroupResource, ResourceInfo};
use crate::KUBERNETES_VERSION;

/// The document a discovery path names.
pub fn document(server: &ApiServer, target: &PathTarget) -> Result<Value, ApiError> {
    match target {
        PathTarget::Version => Ok(version()),
        PathTarget::LegacyVersions => Ok(json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
        })),
        PathTarget::Groups => Ok(json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": groups(server).iter().map(|(g, vs)| group_json(g, vs)).collect::<Vec<_>>(),
        })),
        PathTarget::Group(name) => groups(server)
            .iter()
            .find(|(g, _)| g == name)
            .map(|(g, vs)| {
                let mut doc = group_json(g, vs);
                doc["kind"] = json!("APIGroup");
                doc["apiVersion"] = json!("v1");
                doc
            })
            .ok_or_else(unknown_resource),
        PathTarget::GroupVersion { group, version } => resource_list(server, group, version),
        PathTarget::Resource(_) => Err(unknown_resource()),
    }
}

/// The media type of an aggregated discovery answer; client-go reads the document as one only
/// when the response says so.
pub const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether `accept` asks for aggregated discovery v2 (client-go's `AcceptV2`), with its
/// parameters in any order.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|media| {
        let mut parts = media.split(';').map(str::trim);
        parts.next() == Some("application/json") && {
            let params: Vec<&str> = parts.collect();
            ["g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"]
                .iter()
                .all(|p| params.contains(p))
        }
    })
}

/// `/api` (`legacy`) or `/apis` in the aggregated form: one `APIGroupDiscovery` per group (the
/// core group's name is `""`), each version with its resources and their subresources.
pub fn aggregated(server: &ApiServer, legacy: bool) -> Value {
    let named = groups(server);
    let list: Vec<(String, Vec<String>)> = if legacy {
        vec![(String::new(), vec!["v1".to_owned()])]
    } else {
        named
    };
    let items: Vec<Value> = list
        .iter()
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let mut infos: Vec<&ResourceInfo> = server
                        .resources()
                        .filter(|i| i.gr.group == *group && i.versions.contains(version))
                        .filter(|i| i.gr.resource != "bindings")
                        .collect();
                    infos.sort_by(|a, b| a.gr.resource.cmp(&b.gr.resource));
                    let resources: Vec<Value> = infos
                        .iter()
                        .map(|i| aggregated_resource(server, i, version))
                        .collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// One `APIResourceDiscovery` (`convertAPIResource`'s input).
fn aggregated_resource(server: &ApiServer, info: &ResourceInfo, version: &str) -> Value {
    let (short, categories) = names(server, info);
    let kind = |group: &str, version: &str, kind: &str| json!({"group": group, "version": version, "kind": kind});
    let mut subresources = Vec::new();
    if info.gr == GroupResource::new("", "pods") {
        subresources.push(json!({"subresource": "binding",
            "responseKind": kind("", "v1", "Binding"), "verbs": ["create"]}));
    }
    if crate::api::has_scale(info) {
        subresources.push(json!({"subresource": "scale",
            "responseKind": kind("autoscaling", "v1", "Scale"), "verbs": ["get", "patch", "update"]}));
    }
    if info.status_subresource {
        subresources.push(json!({"subresource": "status",
            "responseKind": kind(&info.gr.group, version, &info.kind), "verbs": ["get", "patch", "update"]}));
    }
    let mut r = json!({
        "resource": info.gr.resource,
        "responseKind": kind(&info.gr.group, version, &info.kind),
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.kind.to_lowercase(),
        "verbs": VERBS,
    });
    if !short.is_empty() {
        r["shortNames"] = json!(short);
    }
    if !categories.is_empty() {
        r["categories"] = json!(categories);
    }
    if !subresources.is_empty() {
        r["subresources"] = json!(subresources);
    }
    r
}

/// `/version`: the Kubernetes release modelled, marked as Converge's.
pub fn version() -> Value {
    let minor = KUBERNETES_VERSION.split('.').nth(1).unwrap_or("0");
    json!({
        "major": "1",
        "minor": minor,
        "gitVersion": format!("v{KUBERNETES_VERSION}.0+converge"),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "converge",
        "platform": "converge/simulated",
    })
}

/// Named groups and their served versions (preferred first), ordered as kube orders them:
/// built-in groups by name, then custom ones by name.
fn groups(server: &ApiServer) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for info in server.resources().filter(|i| !i.gr.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == info.gr.group) {
            Some((_, versions)) => {
                for v in &info.versions {
                    if !versions.contains(v) {
                        versions.push(v.clone());
                    }
                }
            }
            None => out.push((info.gr.group.to_string(), info.versions.clone())),
        }
    }
    out
}

fn group_json(group: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    json!({
        "name": group,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// The verbs a resource serves here (`deletecollection` is not simulated).
const VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// kube's short names and categories for the built-in resources the simulation has
/// [pkg/registry/*/storage `ShortNames`, `Categories`].
fn builtin_names(gr: &GroupResource) -> (&'static [&'static str], &'static [&'static str]) {
    const ALL: &[&str] = &["all"];
    match (gr.group.as_str(), gr.resource.as_str()) {
        ("apps", "deployments") => (&["deploy"], ALL),
        ("apps", "replicasets") => (&["rs"], ALL),
        ("batch", "jobs") => (&[], ALL),
        ("apps", "daemonsets") => (&["ds"], ALL),
        ("apps", "statefulsets") => (&["sts"], ALL),
        ("", "pods") => (&["po"], ALL),
        ("", "services") => (&["svc"], ALL),
        ("", "nodes") => (&["no"], &[]),
        ("", "namespaces") => (&["ns"], &[]),
        ("", "configmaps") => (&["cm"], &[]),
        ("", "serviceaccounts") => (&["sa"], &[]),
        ("", "events") => (&["ev"], &[]),
        ("autoscaling", "horizontalpodautoscalers") => (&["hpa"], ALL),
        ("apiextensions.k8s.io", "customresourcedefinitions") => (&["crd", "crds"], &[]),
        _ => (&[], &[]),
    }
}

/// Short names and categories a CRD declares in `spec.names`.
fn crd_names(server: &ApiServer, gr: &GroupResource) -> (Vec<String>, Vec<String>) {
    let key = crate::api::ObjectKey::new(
        GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
        "",
        &format!("{}.{}", gr.resource, gr.group),
    );
    let list = |crd: &Value, field: &str| {
        crate::api::meta::str_list_at(crd, &format!("/spec/names/{field}"))
    };
    server
        .get(&key)
        .map(|crd| (list(crd, "shortNames"), list(crd, "categories")))
        .unwrap_or_default()
}

/// The resource's short names and categories: kube's for built-in kinds, the CRD's otherwise.
fn names(server: &ApiServer, info: &ResourceInfo) -> (Vec<String>, Vec<String>) {
    if crate::api::kinds::Registry::is_builtin(&info.gr) {
        let (s, c) = builtin_names(&info.gr);
        (
            s.iter().map(|x| (*x).to_owned()).collect(),
            c.iter().map(|x| (*x).to_owned()).collect(),
        )
    } else {
        crd_names(server, &info.gr)
    }
}

fn resource_json(server: &ApiServer, info: &ResourceInfo) -> Vec<Value> {
    let (short, categories) = names(server, info);
    let singular = info.kind.to_lowercase();
    if info.gr.resource == "bindings" {
        return vec![
            json!({"name": "bindings", "singularName": "binding", "namespaced": true,
            "kind": "Binding", "verbs": ["create"]}),
        ];
    }
    let mut main = json!({
        "name": info.gr.resource,
        "singularName": singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": VERBS,
    });
    if !short.is_empty() {
        main["shortNames"] = json!(short);
    }
    if !categories.is_empty() {
        main["categories"] = json!(categories);
    }
    let mut out = vec![main];
    if info.gr == GroupResource::new("", "pods") {
        out.push(
            json!({"name": "pods/binding", "singularName": "", "namespaced": true,
            "kind": "Binding", "verbs": ["create"]}),
        );
    }
    if crate::api::has_scale(info) {
        out.push(json!({
            "name": format!("{}/scale", info.gr.resource),
            "singularName": "",
            "namespaced": info.namespaced,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        }));
    }
    if info.status_subresource {
        out.push(json!({
            "name": format!("{}/status", info.gr.resource),
            "singularName": "",
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `/api/v1` or `/apis/<group>/<version>`: the resources served there, by name.
fn resource_list(server: &ApiServer, group: &str, version: &str) -> Result<Value, ApiError> {
    let mut infos: Vec<&ResourceInfo> = server
        .resources()
        .filter(|i| i.gr.group == group && i.versions.iter().any(|v| v == version))
        .collect();
    if infos.is_empty() {
        return Err(unknown_resource());
    }
    infos.sort_by(|a, b| a.gr.resource.cmp(&b.gr.resource));
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Ok(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": infos.iter().flat_map(|i| resource_json(server, i)).collect::<Vec<_>>(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ApiRequest;
    use crate::rest::route::parse_path;
    use crate::time::SimTime;

    fn doc(server: &ApiServer, path: &str) -> Value {
        document(server, &parse_path(path).expect("path")).expect("served")
    }

    #[test]
    fn aggregated_discovery_lists_every_group_with_its_resources_and_subresources() {
        let s = ApiServer::new();
        assert!(wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(wants_aggregated(
            "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io"
        ));
        assert!(!wants_aggregated("application/json"));
        assert!(!wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ));
        let core = aggregated(&s, true);
        assert_eq!(core["kind"], "APIGroupDiscoveryList");
        assert_eq!(core["apiVersion"], "apidiscovery.k8s.io/v2");
        let items = core["items"].as_array().expect("items");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["metadata"]["name"], "");
        let v1 = &items[0]["versions"][0];
        assert_eq!(
            (v1["version"].as_str(), v1["freshness"].as_str()),
            (Some("v1"), Some("Current"))
        );
        let pods = v1["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["resource"] == "pods")
            .expect("pods");
        assert_eq!(pods["scope"], "Namespaced");
        assert_eq!(
            pods["responseKind"],
            json!({"group": "", "version": "v1", "kind": "Pod"})
        );
        let subs: Vec<&str> = pods["subresources"]
            .as_array()
            .expect("subresources")
            .iter()
            .filter_map(|r| r["subresource"].as_str())
            .collect();
        assert_eq!(subs, ["binding", "status"]);
        let named = aggregated(&s, false);
        let apps = named["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|g| g["metadata"]["name"] == "apps")
            .expect("apps");
        let deploy = apps["versions"][0]["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["resource"] == "deployments")
            .expect("deployments");
        assert_eq!(deploy["shortNames"], json!(["deploy"]));
        assert_eq!(
            deploy["subresources"][0],
            json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]})
        );
        assert_eq!(deploy["subresources"][1]["subresource"], "status");
    }

    #[test]
    fn the_legacy_and_named_groups_list_what_the_server_serves() {
        let s = ApiServer::new();
        assert_eq!(doc(&s, "/api")["versions"], json!(["v1"]));
        let groups = doc(&s, "/apis");
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert!(
            names.contains(&"apps") && names.contains(&"autoscaling"),
            "{names:?}"
        );
        assert_eq!(
            doc(&s, "/apis/apps")["preferredVersion"]["groupVersion"],
            json!("apps/v1")
        );
        let apps = doc(&s, "/apis/apps/v1");
        let deploy = apps["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["name"] == "deployments")
            .expect("deployments are served")
            .clone();
        assert_eq!(deploy["kind"], json!("Deployment"));
        assert_eq!(deploy["shortNames"], json!(["deploy"]));
        assert_eq!(deploy["categories"], json!(["all"]));
        assert!(apps["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .any(|r| r["name"] == "deployments/status"));
        assert_eq!(
            document(&s, &parse_path("/apis/example.com/v1").expect("path")).map_err(|e| e.code()),
            Err(404)
        );
    }

    #[test]
    fn a_crds_resource_is_discovered_once_it_exists() {
        let mut s = ApiServer::new();
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "databases.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "databases", "kind": "Database", "shortNames": ["db"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}}}]}});
        let gr = GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions");
        s.handle(SimTime::ZERO, ApiRequest::create("admin", gr, "", crd))
            .expect("created");
        let list = doc(&s, "/apis/example.com/v1");
        assert_eq!(list["resources"][0]["name"], json!("databases"));
        assert_eq!(list["resources"][0]["shortNames"], json!(["db"]));
        assert_eq!(list["resources"][1]["name"], json!("databases/status"));
    }

    #[test]
    fn the_version_names_the_modelled_release() {
        assert_eq!(version()["minor"], json!("32"));
        assert_eq!(version()["gitVersion"], json!("v1.32.0+converge"));
    }
}
