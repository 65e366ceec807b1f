//! From an HTTP request line to what the API server should do, as kube-apiserver's handler
//! chain resolves it [apiserver pkg/endpoints/request/requestinfo.go `NewRequestInfo`, and the
//! REST handlers in pkg/endpoints/handlers]: the path names a discovery document or a resource
//! (group, version, optional namespace, name and subresource); the method and the query pick the
//! verb; the content type picks the patch type.

use crate::json::Value;

use crate::api::{
    errors::bad_request, ApiError, ApiRequest, ApiServer, GroupResource, PatchType, StatusReason,
    Subresource,
};

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathTarget {
    /// `/version`.
    Version,
    /// `/api`: the legacy group's versions.
    LegacyVersions,
    /// `/apis`: every named group.
    Groups,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`: the resources of one group version.
    GroupVersion { group: String, version: String },
    /// A resource, a collection or a subresource.
    Resource(ResourcePath),
}

/// `/apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    /// `None` for a cluster-scoped request or a list across namespaces.
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

impl ResourcePath {
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.resource)
    }
}

/// The query parameters the API server reads [apimachinery pkg/apis/meta/v1 `ListOptions`,
/// `DeleteOptions`, `GetOptions`, `PatchOptions`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub resource_version: Option<String>,
    pub watch: bool,
    pub allow_watch_bookmarks: bool,
    pub limit: Option<u64>,
    pub continue_token: Option<String>,
    pub timeout_seconds: Option<u64>,
    pub propagation_policy: Option<String>,
    pub grace_period_seconds: Option<i64>,
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub field_validation: Option<String>,
}

/// What one HTTP request asks of the server.
#[derive(Clone, Debug, PartialEq)]
pub enum Operation {
    /// A discovery document or `/version`: answered from the served resources.
    Discovery(PathTarget),
    /// A request for [`ApiServer::handle`].
    Request(ApiRequest),
    /// `GET ...?watch=true` on a collection (or `fieldSelector=metadata.name=` of one object).
    Watch(WatchRequest),
}

/// A watch, as `ListOptions` with `watch=true` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchRequest {
    pub principal: String,
    pub gr: GroupResource,
    /// Empty for every namespace (or a cluster-scoped resource).
    pub namespace: String,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    /// Events after this resourceVersion; `None` or `"0"`: start with the current objects.
    pub resource_version: Option<String>,
    pub allow_bookmarks: bool,
}

/// kube's answer for an unknown path.
fn not_found_path() -> ApiError {
    ApiError::new(
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

/// Splits a path into its segments, refusing empty, `.` and `..` segments as kube's
/// `requestinfo` does (they never name anything).
fn segments(path: &str) -> Result<Vec<String>, ApiError> {
    let trimmed = path.trim_end_matches('/');
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Err(not_found_path());
    };
    if rest.is_empty() {
        return Ok(Vec::new());
    }
    rest.split('/')
        .map(|s| {
            let decoded = percent_encoding::percent_decode_str(s).decode_utf8_lossy();
            if decoded.is_empty() || decoded == "." || decoded == ".." {
                Err(not_found_path())
            } else {
                Ok(decoded.into_owned())
            }
        })
        .collect()
}

/// What the path names [`NewRequestInfo`]: `/api/v1/...` is the legacy (core) group,
/// `/apis/<group>/<version>/...` a named one; after the version come an optional
/// `namespaces/<ns>`, the resource, the name and the subresource. `namespaces/<name>/status`
/// and `namespaces/<name>/finalize` are the Namespace's own subresources.
pub fn parse_path(path: &str) -> Result<PathTarget, ApiError> {
    let segs = segments(path)?;
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let (group, version, rest) = match s.as_slice() {
        ["version"] => return Ok(PathTarget::Version),
        ["api"] => return Ok(PathTarget::LegacyVersions),
        ["apis"] => return Ok(PathTarget::Groups),
        ["apis", group] => return Ok(PathTarget::Group((*group).to_owned())),
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(not_found_path()),
    };
    if rest.is_empty() {
        return Ok(PathTarget::GroupVersion {
            group: group.to_owned(),
            version: version.to_owned(),
        });
    }
    let owned = |v: &str| Some(v.to_owned());
    let (namespace, resource, name, subresource) = match rest {
        ["namespaces", ns, sub @ ("status" | "finalize")] if group.is_empty() => {
            (None, "namespaces", owned(ns), owned(sub))
        }
        ["namespaces", ns, resource] => (owned(ns), *resource, None, None),
        ["namespaces", ns, resource, name] => (owned(ns), *resource, owned(name), None),
        ["namespaces", ns, resource, name, sub] => (owned(ns), *resource, owned(name), owned(sub)),
        [resource] => (None, *resource, None, None),
        [resource, name] => (None, *resource, owned(name), None),
        [resource, name, sub] => (None, *resource, owned(name), owned(sub)),
        _ => return Err(not_found_path()),
    };
    Ok(PathTarget::Resource(ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace,
        resource: resource.to_owned(),
        name,
        subresource,
    }))
}

/// Reads the query string (`application/x-www-form-urlencoded`). Unknown parameters are
/// ignored, as kube's decoder ignores them; a malformed number is a 400 naming it.
pub fn parse_query(query: &str) -> Result<Query, ApiError> {
    let mut q = Query::default();
    let number = |k: &str, v: &str| -> Result<i64, ApiError> {
        v.parse::<i64>()
            .map_err(|_| bad_request(format!("invalid value for {k}: {v:?} is not an integer")))
    };
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        let v = v.into_owned();
        match &*k {
            "labelSelector" => q.label_selector = Some(v),
            "fieldSelector" => q.field_selector = Some(v),
            "resourceVersion" => q.resource_version = Some(v),
            "watch" => q.watch = parse_bool(&k, &v)?,
            "allowWatchBookmarks" => q.allow_watch_bookmarks = parse_bool(&k, &v)?,
            "limit" => q.limit = Some(number(&k, &v)?.max(0) as u64),
            "continue" => q.continue_token = Some(v),
            "timeoutSeconds" => q.timeout_seconds = Some(number(&k, &v)?.max(0) as u64),
            "propagationPolicy" => q.propagation_policy = Some(v),
            "gracePeriodSeconds" => q.grace_period_seconds = Some(number(&k, &v)?),
            "dryRun" => q.dry_run = !v.is_empty(),
            "fieldManager" => q.field_manager = Some(v),
            "fieldValidation" => q.field_validation = Some(v),
            _ => {}
        }
    }
    Ok(q)
}

/// A boolean query parameter as Go's `strconv.ParseBool` reads it (`true`, `True`, `1`, `t`,
/// ...), which kube's query decoder uses; anything else is a 400 naming the parameter.
fn parse_bool(key: &str, v: &str) -> Result<bool, ApiError> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" | "" => Ok(false),
        _ => Err(bad_request(format!(
            "invalid value for {key}: {v:?} is not a boolean"
        ))),
    }
}

/// The patch type a `Content-Type` names [apimachinery pkg/types/patch.go]. Server-side apply
/// is not built yet: a clear 415 says so rather than a wrong merge.
pub fn patch_type(content_type: &str) -> Result<PatchType, ApiError> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => Err(unsupported_media(
            "server-side apply is not simulated yet; use client-side apply or a merge patch",
        )),
        other => Err(unsupported_media(&format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json; got {other:?}"
        ))),
    }
}

fn unsupported_media(message: &str) -> ApiError {
    ApiError::new(StatusReason::UnsupportedMediaType, message)
}

/// The request body as JSON (kubectl sends JSON; YAML is read too, through the manifest reader).
fn body_value(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(bad_request("the request has no body"));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => Ok(v),
        Err(json_err) => {
            let text = std::str::from_utf8(body)
                .map_err(|_| bad_request("the request body is neither JSON nor YAML text"))?;
            match crate::api::parse_manifests(text) {
                Ok(mut docs) if docs.len() == 1 => Ok(docs.remove(0)),
                _ => Err(bad_request(format!(
                    "couldn't get version/kind; json parse error: {json_err}"
                ))),
            }
        }
    }
}

/// What `method` on `path` with `query` and `body` asks of the server, as `principal`.
/// Subresources other than `status` and `binding`, and verbs the simulation does not serve,
/// answer kube's errors (404 for an unknown resource, 405 for a verb a resource lacks).
pub fn operation(
    server: &ApiServer,
    principal: &str,
    method: &str,
    target: PathTarget,
    query: &Query,
    content_type: &str,
    body: &[u8],
) -> Result<Operation, ApiError> {
    let path = match target {
        PathTarget::Resource(p) => p,
        other => {
            if method != "GET" && method != "HEAD" {
                return Err(method_not_allowed(method));
            }
            return Ok(Operation::Discovery(other));
        }
    };
    let gr = path.group_resource();
    let info = server
        .resource_info(&gr)
        .filter(|i| i.versions.contains(&path.version))
        .ok_or_else(not_found_path)?;
    if !info.namespaced && path.namespace.is_some() {
        return Err(not_found_path());
    }
    let namespace = path.namespace.clone().unwrap_or_default();
    let subresource = match path.subresource.as_deref() {
        None => None,
        Some("status") if info.status_subresource => Some(Subresource::Status),
        Some("scale") => Some(Subresource::Scale),
        Some("binding") if gr == GroupResource::new("", "pods") && method == "POST" => {
            let mut binding = body_value(body)?;
            if let Some(m) = binding.get_mut("metadata").and_then(Value::as_object_mut) {
                m.entry("name")
                    .or_insert_with(|| Value::from(path.name.clone().unwrap_or_default()));
            }
            let mut req = ApiRequest::create(
                principal,
                GroupResource::new("", "bindings"),
                &namespace,
                binding,
            );
            req.namespace = namespace;
            return Ok(Operation::Request(req));
        }
        Some(
            sub @ ("log"
            | "exec"
            | "attach"
            | "portforward"
            | "proxy"
            | "eviction"
            | "ephemeralcontainers"
            | "resize"),
        ) => {
            return Err(ApiError::new(
                StatusReason::NotFound,
                format!(
                    "{}/{sub} is not simulated by Converge (there are no containers to reach)",
                    gr.qualified()
                ),
            ))
        }
        Some(_) => return Err(not_found_path()),
    };
    let name = path.name.clone().unwrap_or_default();
    let with_sub = |mut r: ApiRequest| {
        r.subresource = subresource;
        r
    };
    let req = match (method, path.name.is_some()) {
        ("GET" | "HEAD", true) => with_sub(ApiRequest::get(principal, gr, &namespace, &name)),
        ("GET" | "HEAD", false) if query.watch => {
            return Ok(Operation::Watch(WatchRequest {
                principal: principal.to_owned(),
                gr,
                namespace,
                label_selector: query.label_selector.clone(),
                field_selector: query.field_selector.clone(),
                resource_version: query.resource_version.clone(),
                allow_bookmarks: query.allow_watch_bookmarks,
            }))
        }
        ("GET" | "HEAD", false) => {
            let mut r =
                ApiRequest::list(principal, gr, &namespace, query.label_selector.as_deref());
            r.namespace = namespace;
            r
        }
        ("POST", false) => ApiRequest::create(principal, gr, &namespace, body_value(body)?),
        ("PUT", true) => with_sub(ApiRequest::update(
            principal,
            gr,
            &namespace,
            &name,
            body_value(body)?,
        )),
        ("PATCH", true) => {
            let pt = patch_type(content_type)?;
            with_sub(ApiRequest::patch(
                principal,
                gr,
                &namespace,
                &name,
                pt,
                body_value(body)?,
            ))
        }
        ("DELETE", true) => {
            let mut options = if body.iter().all(u8::is_ascii_whitespace) {
                crate::json::json!({})
            } else {
                body_value(body)?
            };
            if let Some(o) = options.as_object_mut() {
                if let Some(p) = &query.propagation_policy {
                    o.entry("propagationPolicy")
                        .or_insert_with(|| Value::from(p.clone()));
                }
                if let Some(g) = query.grace_period_seconds {
                    o.entry("gracePeriodSeconds")
                        .or_insert_with(|| Value::from(g));
                }
            }
            ApiRequest::delete_with_options(principal, gr, &namespace, &name, options)
        }
        ("DELETE", false) => {
            return Err(ApiError::new(
                StatusReason::MethodNotAllowed,
                "deletecollection is not simulated by Converge yet; delete objects by name",
            ))
        }
        (m, _) => return Err(method_not_allowed(m)),
    };
    Ok(Operation::Request(req))
}

fn method_not_allowed(method: &str) -> ApiError {
    ApiError::new(
        StatusReason::MethodNotAllowed,
        format!("the server does not allow this method on the requested resource ({method})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Verb;

    fn res(
        group: &str,
        ns: Option<&str>,
        resource: &str,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> PathTarget {
        PathTarget::Resource(ResourcePath {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(Into::into),
            resource: resource.into(),
            name: name.map(Into::into),
            subresource: sub.map(Into::into),
        })
    }

    #[test]
    fn paths_resolve_as_kubes_request_info_resolves_them() {
        assert_eq!(parse_path("/version"), Ok(PathTarget::Version));
        assert_eq!(parse_path("/api"), Ok(PathTarget::LegacyVersions));
        assert_eq!(parse_path("/apis/"), Ok(PathTarget::Groups));
        assert_eq!(
            parse_path("/apis/apps"),
            Ok(PathTarget::Group("apps".into()))
        );
        assert_eq!(
            parse_path("/apis/apps/v1"),
            Ok(PathTarget::GroupVersion {
                group: "apps".into(),
                version: "v1".into()
            })
        );
        assert_eq!(
            parse_path("/apis/apps/v1/namespaces/default/deployments/web/status"),
            Ok(res(
                "apps",
                Some("default"),
                "deployments",
                Some("web"),
                Some("status")
            ))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/default/pods"),
            Ok(res("", Some("default"), "pods", None, None))
        );
        assert_eq!(
            parse_path("/api/v1/nodes/node-1"),
            Ok(res("", None, "nodes", Some("node-1"), None))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/team-a"),
            Ok(res("", None, "namespaces", Some("team-a"), None))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/team-a/status"),
            Ok(res("", None, "namespaces", Some("team-a"), Some("status")))
        );
        assert_eq!(
            parse_path("/api/v1/pods"),
            Ok(res("", None, "pods", None, None))
        );
        for bad in [
            "",
            "/healthz/x",
            "/api/v1/namespaces/default/pods/a/b/c",
            "/api/v1/../x",
            "/apis/apps/v1/x//y",
        ] {
            assert_eq!(parse_path(bad).map_err(|e| e.code()), Err(404), "{bad}");
        }
    }

    #[test]
    fn query_parameters_are_decoded_and_bad_numbers_named() {
        let q = parse_query(
            "labelSelector=app%3Dweb%2Ctier%21%3Ddb&watch=true&limit=500&resourceVersion=12",
        )
        .expect("parses");
        assert_eq!(q.label_selector.as_deref(), Some("app=web,tier!=db"));
        assert!(q.watch);
        assert_eq!(q.limit, Some(500));
        assert_eq!(q.resource_version.as_deref(), Some("12"));
        assert!(parse_query("watch=True").expect("Go's ParseBool").watch);
        assert!(!parse_query("watch=false").expect("parses").watch);
        assert_eq!(parse_query("watch=maybe").map_err(|e| e.code()), Err(400));
        let e = parse_query("limit=lots").expect_err("refused");
        assert_eq!(e.code(), 400);
        assert!(e.message.contains("limit"), "{}", e.message);
    }

    #[test]
    fn methods_and_content_types_pick_the_verb_and_patch_type() {
        let s = ApiServer::new();
        let op = |m: &str, p: &str, ct: &str, body: &str| {
            let target = parse_path(p).expect("path");
            let (path, query) = p.split_once('?').unwrap_or((p, ""));
            let _ = path;
            operation(
                &s,
                "alice",
                m,
                target,
                &parse_query(query).expect("query"),
                ct,
                body.as_bytes(),
            )
        };
        let Ok(Operation::Request(r)) = op(
            "GET",
            "/apis/apps/v1/namespaces/default/deployments",
            "",
            "",
        ) else {
            panic!("a list")
        };
        assert_eq!((r.verb, r.namespace.as_str()), (Verb::List, "default"));
        let Ok(Operation::Request(r)) = op(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/web/status",
            "application/merge-patch+json",
            "{\"status\":{}}",
        ) else {
            panic!("a patch")
        };
        assert_eq!(
            (r.verb, r.subresource),
            (Verb::Patch, Some(Subresource::Status))
        );
        let e = op(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/web",
            "application/apply-patch+yaml",
            "{}",
        )
        .expect_err("not built yet");
        assert_eq!(e.code(), 415);
        assert_eq!(
            op("GET", "/apis/apps/v2/deployments", "", "").map_err(|e| e.code()),
            Err(404)
        );
        assert_eq!(
            op("GET", "/api/v1/namespaces/default/nodes", "", "").map_err(|e| e.code()),
            Err(404)
        );
        assert_eq!(
            op("GET", "/api/v1/namespaces/default/pods/p/log", "", "").map_err(|e| e.code()),
            Err(404)
        );
        assert_eq!(
            op(
                "POST",
                "/apis/apps/v1/namespaces/default/deployments",
                "application/json",
                "{oops"
            )
            .map_err(|e| e.code()),
            Err(400)
        );
    }
}
