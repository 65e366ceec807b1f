//! What kubectl's client side does before it prints: discovery read into a RESTMapper (short
//! names, singular names, kinds, `resource.group`, categories such as `all`)
//! [apimachinery pkg/api/meta/restmapper.go; client-go discovery/cached/memory
//! `ShortcutExpander`], and HTTP requests sent to the served cluster as kubectl sends them,
//! answered by [`rest::Session`](crate::rest::session::Session) exactly as `converge serve`
//! answers the real kubectl.

use crate::api::meta::Fields;
use crate::json::Value;

use crate::rest::discovery;
use crate::rest::session::{HttpRequest, Reply, Session};

/// One resource as discovery describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub subresources: Vec<String>,
}

impl Mapping {
    /// `deployment.apps`, `pod`: the name kubectl prints before `/name`.
    pub fn kind_prefix(&self) -> String {
        if self.group.is_empty() {
            self.kind.to_lowercase()
        } else {
            format!("{}.{}", self.kind.to_lowercase(), self.group)
        }
    }

    /// `deployments.apps`, `pods`: the name the API server's messages use.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The collection path, in `namespace` for a namespaced resource (all namespaces if empty).
    pub fn collection_path(&self, namespace: &str) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        if self.namespaced && !namespace.is_empty() {
            format!("{base}/namespaces/{namespace}/{}", self.resource)
        } else {
            format!("{base}/{}", self.resource)
        }
    }

    pub fn object_path(&self, namespace: &str, name: &str) -> String {
        format!("{}/{}", self.collection_path(namespace), name)
    }
}

/// The RESTMapper built from the aggregated discovery documents, in their order (the core
/// group first, then the groups as `/apis` lists them).
#[derive(Clone, Debug, Default)]
pub struct Mapper {
    pub mappings: Vec<Mapping>,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

impl Mapper {
    pub fn discover(session: &Session) -> Mapper {
        let api = session.world().api();
        let mut mappings = Vec::new();
        for doc in [
            discovery::aggregated(api, true),
            discovery::aggregated(api, false),
        ] {
            for group in doc.member("items").as_array().into_iter().flatten() {
                let name = group
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let Some(version) = group.member("versions").as_array().and_then(|v| v.first())
                else {
                    continue;
                };
                let v = version.member("version").as_str().unwrap_or("v1");
                for r in version.member("resources").as_array().into_iter().flatten() {
                    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    mappings.push(Mapping {
                        group: name.to_owned(),
                        version: v.to_owned(),
                        resource: s("resource"),
                        singular: s("singularResource"),
                        kind: r
                            .pointer("/responseKind/kind")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        namespaced: r.member("scope") == "Namespaced",
                        short_names: strings(r, "shortNames"),
                        categories: strings(r, "categories"),
                        subresources: r
                            .member("subresources")
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|s| s.member("subresource").as_str().map(str::to_owned))
                            .collect(),
                    });
                }
            }
        }
        Mapper { mappings }
    }

    /// The resource a user typed (`deploy`, `deployments.apps`, `Deployment`,
    /// `deployments.v1.apps`), or kubectl's error.
    pub fn resolve(&self, typed: &str) -> Result<&Mapping, String> {
        let lower = typed.to_lowercase();
        let (res, group) = match lower.split_once('.') {
            Some((r, g)) => (r.to_owned(), Some(g.to_owned())),
            None => (lower.clone(), None),
        };
        let group_matches = |m: &Mapping| match &group {
            None => true,
            Some(g) => *g == m.group || *g == format!("{}.{}", m.version, m.group),
        };
        let found = self
            .mappings
            .iter()
            .filter(|m| group_matches(m))
            .find(|m| m.resource == res || m.singular == res || m.kind.to_lowercase() == res)
            .or_else(|| {
                self.mappings
                    .iter()
                    .filter(|m| group_matches(m))
                    .find(|m| m.short_names.contains(&res))
            });
        found.ok_or_else(|| format!("the server doesn't have a resource type \"{res}\""))
    }

    /// The resources of a category (`all`), in discovery order.
    pub fn category(&self, name: &str) -> Vec<&Mapping> {
        self.mappings
            .iter()
            .filter(|m| m.categories.iter().any(|c| c == name))
            .collect()
    }
}

/// The Accept header `kubectl get` sends for server-side printing.
pub const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// An answer: the HTTP status and the JSON body.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// What kubectl's `checkErr` prints for a refusal [kubectl pkg/cmd/util/helpers.go]: an
    /// Invalid Status as `The Kind "name" is invalid: field: detail` (one line per cause,
    /// `* `-prefixed, when there are several; `statusCausesToAggrError` drops repeats), any
    /// other as `StandardErrorMessage` does, `Error from server (Reason): message`.
    pub fn error_line(&self) -> String {
        let message = self
            .body
            .member("message")
            .as_str()
            .unwrap_or("")
            .to_owned();
        if self.body.member("reason") == "Invalid" {
            let details = self.body.member("details");
            if !details.is_object() {
                return "The request is invalid".into();
            }
            let (kind, name) = (
                details.member("kind").as_str().unwrap_or(""),
                details.member("name").as_str().unwrap_or(""),
            );
            let mut s = if kind.is_empty() && name.is_empty() {
                "The request is invalid".to_owned()
            } else {
                format!(
                    "The {kind} {} is invalid",
                    crate::api::validation::go_quote(name)
                )
            };
            let mut causes: Vec<String> = Vec::new();
            for c in details.member("causes").as_array().into_iter().flatten() {
                let line = format!(
                    "{}: {}",
                    c.member("field").as_str().unwrap_or(""),
                    c.member("message").as_str().unwrap_or("")
                );
                if !causes.contains(&line) {
                    causes.push(line);
                }
            }
            match causes.as_slice() {
                [] => {}
                [one] => s = format!("{s}: {one}"),
                many => {
                    s.push_str(": ");
                    for c in many {
                        s.push_str(&format!("* {c}\n"));
                    }
                    // The caller ends the message with its own newline.
                    s.pop();
                }
            }
            return s;
        }
        match self.body.member("reason").as_str() {
            Some(reason) if !reason.is_empty() => {
                format!("Error from server ({reason}): {message}")
            }
            _ => format!("Error from server: {message}"),
        }
    }
}

/// One request: method, path, query string, content type, accept, body.
#[derive(Clone, Debug, Default)]
pub struct Call<'a> {
    pub method: &'a str,
    pub path: String,
    pub query: String,
    pub content_type: &'a str,
    pub accept: &'a str,
    pub body: Vec<u8>,
}

impl<'a> Call<'a> {
    pub fn get(path: String, query: String, accept: &'a str) -> Call<'a> {
        Call {
            method: "GET",
            path,
            query,
            content_type: "",
            accept,
            body: Vec::new(),
        }
    }

    pub fn with_body(
        method: &'a str,
        path: String,
        query: String,
        content_type: &'a str,
        body: &Value,
    ) -> Call<'a> {
        Call {
            method,
            path,
            query,
            content_type,
            accept: "application/json",
            body: body.to_string().into_bytes(),
        }
    }
}

/// Sends one request as `principal`.
pub fn send(session: &mut Session, principal: &str, call: Call<'_>) -> Answer {
    let reply = session.serve(HttpRequest {
        principal,
        method: call.method,
        path: &call.path,
        query: &call.query,
        content_type: call.content_type,
        accept: call.accept,
        body: &call.body,
    });
    match reply {
        Reply::Json(r) => Answer {
            status: r.status,
            body: r.body,
        },
        Reply::JsonAs { body, .. } => Answer { status: 200, body },
        Reply::Text { status, body } => Answer {
            status,
            body: Value::String(body.into()),
        },
        Reply::Watch(_) => Answer {
            status: 500,
            body: crate::json::json!({"message": "a watch was opened where a request was meant"}),
        },
    }
}

/// A query string from pairs, encoded as Go's `url.Values.Encode` does.
pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}
