//! Watch streams, as kube-apiserver's watch cache serves them [apiserver pkg/storage/cacher
//! `cacheWatcher`, pkg/endpoints/handlers/watch.go]: a watch sees the events of one resource
//! (in one namespace or all), filtered by its label and field selectors, where an object that
//! starts matching arrives as ADDED and one that stops matching leaves as DELETED; each frame
//! is one `{"type": ..., "object": ...}` JSON document per line. A watch from a resourceVersion
//! older than the server's history ends with kube's 410 `Expired` ERROR frame.

use std::collections::BTreeSet;

use crate::json::{json, Value};

use super::fields::FieldSelector;
use super::route::WatchRequest;
use crate::api::{
    ApiError, ApiServer, GroupResource, ObjectKey, Selector, StatusReason, WatchEvent,
    WatchEventType,
};

/// One open watch: what it selects and which objects it has shown as present.
#[derive(Clone, Debug)]
pub struct WatchFilter {
    gr: GroupResource,
    namespace: String,
    labels: Selector,
    fields: FieldSelector,
    seen: BTreeSet<ObjectKey>,
    pub allow_bookmarks: bool,
}

/// Where a watch starts [`ListOptions.resourceVersion` semantics for watch].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchStart {
    /// Unset or `"0"`: every current object as ADDED, then what follows.
    Current,
    /// Events after this resourceVersion.
    After(u64),
}

impl WatchFilter {
    /// The filter for `req`; bad selectors are kube's 400.
    pub fn new(req: &WatchRequest) -> Result<(WatchFilter, WatchStart), ApiError> {
        let labels = match &req.label_selector {
            Some(s) => Selector::parse(s).map_err(crate::api::errors::bad_request)?,
            None => Selector::default(),
        };
        let fields = match &req.field_selector {
            Some(s) => FieldSelector::parse(s, &req.gr)?,
            None => FieldSelector::default(),
        };
        let start = match req.resource_version.as_deref() {
            None | Some("") | Some("0") => WatchStart::Current,
            Some(rv) => WatchStart::After(rv.parse().map_err(|_| {
                crate::api::errors::bad_request(format!(
                    "invalid resource version {rv:?}: it is not an integer"
                ))
            })?),
        };
        Ok((
            WatchFilter {
                gr: req.gr.clone(),
                namespace: req.namespace.clone(),
                labels,
                fields,
                seen: BTreeSet::new(),
                allow_bookmarks: req.allow_bookmarks,
            },
            start,
        ))
    }

    fn selects(&self, key: &ObjectKey, object: &Value) -> bool {
        key.gr == self.gr
            && (self.namespace.is_empty() || key.namespace == self.namespace)
            && self.labels.matches_object(object)
            && self.fields.matches(&self.gr, object)
    }

    fn in_scope(&self, key: &ObjectKey) -> bool {
        key.gr == self.gr && (self.namespace.is_empty() || key.namespace == self.namespace)
    }

    /// ADDED frames for the objects that exist now (a watch from `Current`).
    pub fn initial(&mut self, server: &ApiServer) -> Vec<Value> {
        let scope = (!self.namespace.is_empty()).then_some(self.namespace.as_str());
        let gr = self.gr.clone();
        let mut frames = Vec::new();
        for (key, object) in server.list_objects(&gr, scope) {
            if self.selects(key, object) {
                self.seen.insert(key.clone());
                frames.push(frame("ADDED", object));
            }
        }
        frames
    }

    /// The frame this watch shows for `event` (its object given separately, as the server
    /// drains it), if any.
    pub fn frame(&mut self, event: &WatchEvent, object: &Value) -> Option<Value> {
        if !self.in_scope(&event.key) {
            return None;
        }
        let matches = self.selects(&event.key, object);
        let was = self.seen.contains(&*event.key);
        let kind = match (event.event_type, was, matches) {
            (WatchEventType::Deleted, true, _) => {
                self.seen.remove(&*event.key);
                "DELETED"
            }
            (WatchEventType::Deleted, false, _) => return None,
            (_, false, true) => {
                self.seen.insert(ObjectKey::clone(&event.key));
                "ADDED"
            }
            (_, true, true) => "MODIFIED",
            (_, true, false) => {
                self.seen.remove(&*event.key);
                "DELETED"
            }
            (_, false, false) => return None,
        };
        Some(frame(kind, object))
    }

    /// Records that an object the watch's first list showed is present (a watch from a
    /// resourceVersion continues a list the client already has).
    pub fn assume_present(&mut self, server: &ApiServer) {
        let scope = (!self.namespace.is_empty()).then_some(self.namespace.as_str());
        let gr = self.gr.clone();
        let keys: Vec<ObjectKey> = server
            .list_objects(&gr, scope)
            .filter(|(k, o)| self.selects(k, o))
            .map(|(k, _)| k.clone())
            .collect();
        self.seen.extend(keys);
    }

    /// Marks `key` as not shown (created after the client's list).
    pub fn forget(&mut self, key: &ObjectKey) {
        self.seen.remove(key);
    }

    /// Marks `key` as shown when the watch selects `object` (it existed at the client's list).
    pub fn remember(&mut self, key: &ObjectKey, object: &Value) {
        if self.selects(key, object) {
            self.seen.insert(key.clone());
        }
    }

    pub fn group_resource(&self) -> &GroupResource {
        &self.gr
    }

    /// A BOOKMARK frame at `resource_version` (only when the client asked for bookmarks).
    pub fn bookmark(&self, server: &ApiServer, resource_version: u64) -> Option<Value> {
        if !self.allow_bookmarks {
            return None;
        }
        let info = server.resource_info(&self.gr)?;
        Some(json!({"type": "BOOKMARK", "object": {
            "kind": info.kind,
            "apiVersion": info.api_version(),
            "metadata": {"resourceVersion": resource_version.to_string()},
        }}))
    }
}

fn frame(kind: &str, object: &Value) -> Value {
    json!({"type": kind, "object": object})
}

/// The 410 a watch from a resourceVersion older than the retained history gets
/// [apiserver pkg/storage/errors.go `NewTooLargeResourceVersionError`/cacher
/// `errors.NewResourceExpired`]: `too old resource version: <asked> (<oldest kept>)`.
pub fn expired(asked: u64, oldest: u64) -> ApiError {
    ApiError::new(
        StatusReason::Expired,
        format!("too old resource version: {asked} ({oldest})"),
    )
}

/// The ERROR frame that carries a Status (kube ends a watch it cannot continue with one).
pub fn error_frame(e: &ApiError) -> Value {
    json!({"type": "ERROR", "object": e.to_status()})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ApiRequest;
    use crate::time::SimTime;

    fn pod(name: &str, app: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    }

    fn watch(labels: Option<&str>, rv: Option<&str>) -> (WatchFilter, WatchStart) {
        WatchFilter::new(&WatchRequest {
            principal: "admin".into(),
            gr: GroupResource::new("", "pods"),
            namespace: "default".into(),
            label_selector: labels.map(Into::into),
            field_selector: None,
            resource_version: rv.map(Into::into),
            allow_bookmarks: true,
        })
        .expect("valid")
    }

    #[test]
    fn objects_entering_and_leaving_the_selector_are_added_and_deleted() {
        let mut s = ApiServer::new();
        let pods = GroupResource::new("", "pods");
        s.handle(
            SimTime::ZERO,
            ApiRequest::create("admin", pods.clone(), "default", pod("a", "web")),
        )
        .expect("created");
        s.drain_watch_events();
        let (mut w, start) = watch(Some("app=web"), None);
        assert_eq!(start, WatchStart::Current);
        let first = w.initial(&s);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0]["type"], json!("ADDED"));
        let relabel = json!({"metadata": {"labels": {"app": "db"}}});
        s.handle(
            SimTime::ZERO,
            ApiRequest::patch(
                "admin",
                pods.clone(),
                "default",
                "a",
                crate::api::PatchType::Merge,
                relabel,
            ),
        )
        .expect("patched");
        s.handle(
            SimTime::ZERO,
            ApiRequest::create("admin", pods.clone(), "default", pod("b", "web")),
        )
        .expect("created");
        let kinds: Vec<String> = s
            .drain_watch_events()
            .iter()
            .filter_map(|e| w.frame(e, &e.object))
            .map(|f| f["type"].as_str().unwrap_or("").to_owned())
            .collect();
        assert_eq!(kinds, ["DELETED", "ADDED"]);
        let mark = w.bookmark(&s, 42).expect("asked for bookmarks");
        assert_eq!(mark["object"]["metadata"]["resourceVersion"], json!("42"));
    }

    #[test]
    fn bad_versions_and_expired_ones_are_kubes_errors() {
        let (_, start) = watch(None, Some("17"));
        assert_eq!(start, WatchStart::After(17));
        let e = WatchFilter::new(&WatchRequest {
            principal: "admin".into(),
            gr: GroupResource::new("", "pods"),
            namespace: String::new(),
            label_selector: None,
            field_selector: None,
            resource_version: Some("x".into()),
            allow_bookmarks: false,
        })
        .expect_err("refused");
        assert_eq!(e.code(), 400);
        let gone = expired(3, 120);
        assert_eq!(gone.code(), 410);
        assert_eq!(error_frame(&gone)["object"]["reason"], json!("Expired"));
        assert_eq!(gone.message, "too old resource version: 3 (120)");
    }
}
