//! From the API server's answer to the HTTP response kube-apiserver sends
//! [apiserver pkg/endpoints/handlers: create.go, update.go, patch.go, delete.go, get.go]:
//! 201 for a create, 202 for a delete that is not finished (graceful or held by finalizers),
//! a `metav1.Status` body with the error's code for a refusal; a list filtered by its field
//! selector and cut into pages by `limit`/`continue`.

use crate::api::meta::Fields;
use crate::json::{json, Value};
use base64::Engine as _;

use super::fields::FieldSelector;
use super::route::Query;
use crate::api::{errors::bad_request, meta, ApiError, ApiRequest, ApiResult, ApiServer, Verb};

/// An HTTP status code and a JSON body.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub status: u16,
    pub body: Value,
}

impl Response {
    /// A refusal: the error's code and its `metav1.Status`.
    pub fn error(e: &ApiError) -> Response {
        Response {
            status: e.code(),
            body: e.to_status(),
        }
    }
}

/// The response to `req` answered with `result`, read against the server after the request
/// (a delete answers 202 while the object is still there).
pub fn response(
    server: &ApiServer,
    req: &ApiRequest,
    result: ApiResult,
    query: &Query,
) -> Response {
    let body = match result {
        Ok(body) => std::sync::Arc::unwrap_or_clone(body),
        Err(e) => return Response::error(&e),
    };
    match req.verb {
        Verb::Create => Response { status: 201, body },
        Verb::Delete => {
            let key = crate::api::ObjectKey::new(req.gr.clone(), &req.namespace, &req.name);
            let status = if server.get(&key).is_some() { 202 } else { 200 };
            Response { status, body }
        }
        Verb::List => match page(req, body, query) {
            Ok(body) => Response { status: 200, body },
            Err(e) => Response::error(&e),
        },
        Verb::Get | Verb::Update | Verb::Patch => Response { status: 200, body },
    }
}

/// The continue token: where the next page starts, opaque to clients as kube's is.
fn continue_token(rv: &str, after: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({"rv": rv, "start": after}).to_string())
}

fn read_token(token: &str) -> Result<String, ApiError> {
    let invalid =
        || bad_request("continue key is not valid: the token was not issued by this server");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| invalid())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    v.field("start")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(invalid)
}

/// `namespace/name`, the order lists come in.
fn sort_key(item: &Value) -> String {
    format!("{}/{}", meta::namespace(item), meta::name(item))
}

/// Applies the field selector, then `continue` and `limit` [`ListOptions`]: a page of at most
/// `limit` items after the token's position, with `metadata.continue` and
/// `metadata.remainingItemCount` when more remain.
fn page(req: &ApiRequest, mut list: Value, query: &Query) -> Result<Value, ApiError> {
    let fields = match &query.field_selector {
        Some(s) => FieldSelector::parse(s, &req.gr)?,
        None => FieldSelector::default(),
    };
    let start = query
        .continue_token
        .as_deref()
        .map(read_token)
        .transpose()?;
    let rv = list
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) else {
        return Ok(list);
    };
    items.retain(|i| fields.matches(&req.gr, i));
    if let Some(start) = &start {
        items.retain(|i| sort_key(i) > *start);
    }
    let limit = query.limit.filter(|l| *l > 0).map(|l| l as usize);
    if let Some(limit) = limit.filter(|l| items.len() > *l) {
        let remaining = items.len() - limit;
        items.truncate(limit);
        let last = items.last().map(sort_key).unwrap_or_default();
        list["metadata"]["continue"] = json!(continue_token(&rv, &last));
        list["metadata"]["remainingItemCount"] = json!(remaining);
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::GroupResource;
    use crate::time::SimTime;

    fn cm(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn lists_come_in_pages_with_kubes_continue_and_remaining_count() {
        let mut s = ApiServer::new();
        let gr = GroupResource::new("", "configmaps");
        for n in ["a", "b", "c"] {
            let req = ApiRequest::create("admin", gr.clone(), "default", cm(n));
            let result = s.handle(SimTime::ZERO, req.clone());
            assert_eq!(response(&s, &req, result, &Query::default()).status, 201);
        }
        let list = ApiRequest::list("admin", gr.clone(), "default", None);
        let first = response(
            &s,
            &list,
            s.clone().handle(SimTime::ZERO, list.clone()),
            &Query {
                limit: Some(2),
                ..Query::default()
            },
        );
        assert_eq!(first.body["items"].as_array().map(Vec::len), Some(2));
        assert_eq!(first.body["metadata"]["remainingItemCount"], json!(1));
        let token = first.body["metadata"]["continue"]
            .as_str()
            .expect("a token")
            .to_owned();
        let second = response(
            &s,
            &list,
            s.clone().handle(SimTime::ZERO, list.clone()),
            &Query {
                limit: Some(2),
                continue_token: Some(token),
                ..Query::default()
            },
        );
        assert_eq!(second.body["items"][0]["metadata"]["name"], json!("c"));
        assert!(second.body["metadata"].get("continue").is_none());
        let bad = response(
            &s,
            &list,
            s.clone().handle(SimTime::ZERO, list.clone()),
            &Query {
                continue_token: Some("!!".into()),
                ..Query::default()
            },
        );
        assert_eq!(bad.status, 400);
    }

    #[test]
    fn refusals_carry_their_status_and_deletes_in_progress_answer_202() {
        let mut s = ApiServer::new();
        let gr = GroupResource::new("", "configmaps");
        let mut held = cm("held");
        held["metadata"]["finalizers"] = json!(["example.com/hold"]);
        s.handle(
            SimTime::ZERO,
            ApiRequest::create("admin", gr.clone(), "default", held),
        )
        .expect("created");
        let del = ApiRequest::delete("admin", gr.clone(), "default", "held");
        let result = s.handle(SimTime::ZERO, del.clone());
        assert_eq!(response(&s, &del, result, &Query::default()).status, 202);
        let again = ApiRequest::create("admin", gr, "default", cm("held"));
        let result = s.handle(SimTime::ZERO, again.clone());
        let r = response(&s, &again, result, &Query::default());
        assert_eq!(r.status, 409);
        assert_eq!(r.body["reason"], json!("AlreadyExists"));
    }
}
