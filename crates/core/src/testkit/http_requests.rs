//! The `http_requests` fuzz target's properties: raw bytes decoded as HTTP requests (method,
//! path, query, content type, accept, body) and answered by a served cluster
//! ([`crate::rest::session::Session`]) must never panic; every refusal is a `metav1.Status`
//! whose `code` is the HTTP status; a watch opens or ends with an ERROR frame; and the world's
//! store keeps its invariants after each request (resourceVersions rise, nothing loses its uid).

use crate::json::Value;

use crate::api::ApiRequest;
use crate::engine::{ClusterConfig, World};
use crate::rest::session::{HttpRequest, Reply, Session};

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
const PRINCIPALS: &[&str] = &["admin", "alice", "app", "mallory", "system:anonymous"];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "",
];
const ACCEPTS: &[&str] = &[
    "application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    "",
];

/// A small served cluster with one Deployment, so paths can name real objects.
fn session() -> Session {
    let mut world = World::new(ClusterConfig::default());
    let deployment = crate::engine::script::deployment("default", "web", 2, "nginx:1.27");
    let _ = world.request(ApiRequest::create(
        "admin",
        crate::api::GroupResource::new("apps", "deployments"),
        "default",
        deployment,
    ));
    world.run_until_converged(20_000, 120_000);
    Session::new(world)
}

/// One request per record: a selector byte, then NUL-separated path, query and body (missing
/// parts are empty).
pub fn check_http_requests(data: &[u8]) {
    let mut s = session();
    for record in data.split(|b| *b == 0xFF).take(16) {
        let Some((&sel, rest)) = record.split_first() else {
            continue;
        };
        let mut parts = rest.splitn(3, |b| *b == 0);
        let text = |p: Option<&[u8]>| String::from_utf8_lossy(p.unwrap_or_default()).into_owned();
        let path = text(parts.next());
        let query = text(parts.next());
        let body = parts.next().unwrap_or_default().to_vec();
        let pick =
            |list: &[&'static str], shift: u32| list[(usize::from(sel) >> shift) % list.len()];
        let req = HttpRequest {
            principal: pick(PRINCIPALS, 0),
            method: pick(METHODS, 2),
            path: &path,
            query: &query,
            content_type: pick(CONTENT_TYPES, 4),
            accept: pick(ACCEPTS, 6),
            body: &body,
        };
        let rv_before = s.world().api().resource_version();
        match s.serve(req) {
            Reply::Json(r) => {
                assert!((200..600).contains(&r.status), "status {}", r.status);
                if r.status >= 400 {
                    assert_eq!(r.body.get("kind").and_then(Value::as_str), Some("Status"));
                    assert_eq!(
                        r.body.get("code").and_then(Value::as_u64),
                        Some(u64::from(r.status)),
                        "{}",
                        r.body
                    );
                }
            }
            Reply::Text { status, .. } => assert_eq!(status, 200),
            Reply::JsonAs { body, .. } => {
                assert_eq!(body["kind"], "APIGroupDiscoveryList", "{body}");
            }
            Reply::Watch(mut w) => {
                if w.finished {
                    assert_eq!(
                        w.initial.last().and_then(|f| f["type"].as_str()),
                        Some("ERROR")
                    );
                }
                let _ = s.frames(&mut w);
            }
        }
        assert!(s.world().api().resource_version() >= rv_before);
        for (key, obj) in s.world().api().objects() {
            assert!(
                !crate::api::meta::uid(obj).is_empty(),
                "{} lost its uid",
                key.path()
            );
        }
    }
}
