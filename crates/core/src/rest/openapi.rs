//! The OpenAPI v3 documents kubectl reads before it creates, applies or replaces an object
//! [cli-runtime pkg/resource/query_param_verifier_v3.go `supportsQueryParamV3`]: the root
//! (`/openapi/v3`, one entry per group version, keys without a leading slash as kube's
//! `gvToAPIPath` writes them) and per group version a PATCH operation per kind that lists the
//! `fieldValidation` parameter, so kubectl leaves validation to the server, and the component
//! schemas `kubectl explain` reads ([`schema`]). No strategic-merge request body is advertised,
//! so kubectl computes apply patches from its compiled-in types, as it does for built-in kinds
//! [kubectl pkg/cmd/apply/patcher.go `gvkSupportsPatchOpenAPIV3`].

use crate::json::{json, Map, Value};

use super::schema;
use crate::api::{ApiServer, ResourceInfo};
use crate::KUBERNETES_VERSION;

/// `api/v1` or `apis/<group>/<version>`: a group version's key in `/openapi/v3`, and its paths'
/// prefix after the leading slash.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The served group versions, in registry order.
fn group_versions(server: &ApiServer) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for info in server.resources() {
        for v in &info.versions {
            let gv = (info.gr.group.to_string(), v.clone());
            if !out.contains(&gv) {
                out.push(gv);
            }
        }
    }
    out
}

/// A stable tag for a group version's document, as kube's `?hash=` lets clients cache it: it
/// changes when the kinds served there change (a CRD added or removed).
fn hash(server: &ApiServer, group: &str, version: &str) -> String {
    let names: Vec<&str> = server
        .resources()
        .filter(|i| i.gr.group == group && i.versions.iter().any(|v| v == version))
        .map(|i| i.kind.as_str())
        .collect();
    let h = names
        .join(",")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{h:016X}")
}

/// `/openapi/v3`.
pub fn root(server: &ApiServer) -> Value {
    let mut paths = Map::new();
    for (g, v) in group_versions(server) {
        let url = format!(
            "/openapi/v3/{}?hash={}",
            gv_path(&g, &v),
            hash(server, &g, &v)
        );
        paths.insert(gv_path(&g, &v), json!({"serverRelativeURL": url}));
    }
    json!({"paths": paths})
}

fn patch_path(info: &ResourceInfo, version: &str) -> String {
    let prefix = format!("/{}", gv_path(&info.gr.group, version));
    if info.namespaced {
        format!(
            "{prefix}/namespaces/{{namespace}}/{}/{{name}}",
            info.gr.resource
        )
    } else {
        format!("{prefix}/{}/{{name}}", info.gr.resource)
    }
}

/// `/openapi/v3/<api/v1 | apis/<group>/<version>>`, or `None` for a group version not served.
pub fn group_version(server: &ApiServer, path: &str) -> Option<Value> {
    let (g, v) = group_versions(server)
        .into_iter()
        .find(|(g, v)| gv_path(g, v) == path)?;
    let mut paths = Map::new();
    let kinds: Vec<&ResourceInfo> = server
        .resources()
        .filter(|i| i.gr.group == g && i.versions.contains(&v) && i.gr.resource != "bindings")
        .collect();
    for info in &kinds {
        paths.insert(
            patch_path(info, &v),
            json!({"patch": {
                "operationId": format!("patch{}", info.kind),
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": {"group": g, "version": v, "kind": info.kind},
                "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "OK"}},
            }}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (Converge)", "version": format!("v{KUBERNETES_VERSION}.0")},
        "paths": paths,
        "components": {"schemas": schema::components(server, kinds.into_iter(), &v)},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_patch_operation_that_takes_field_validation() {
        let s = ApiServer::new();
        let r = root(&s);
        let url = r["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .expect("apps/v1 is listed");
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
        let doc = group_version(&s, "apis/apps/v1").expect("served");
        let op = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(
            op["x-kubernetes-group-version-kind"]["kind"],
            json!("Deployment")
        );
        assert_eq!(op["parameters"][0]["name"], json!("fieldValidation"));
        let core = group_version(&s, "api/v1").expect("served");
        assert!(core["paths"].get("/api/v1/nodes/{name}").is_some());
        assert!(group_version(&s, "apis/example.com/v1").is_none());
    }
}
