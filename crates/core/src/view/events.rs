//! The Events of one object, as `kubectl describe` lists them [kubectl pkg/describe
//! `DescribeEvents`]: Type, Reason, Age (`<last> (x<count> over <first>)` when repeated), From
//! and Message, oldest first by `lastTimestamp`.

use crate::api::meta::Fields;
use std::sync::Arc;

use crate::json::Value;

use crate::api::meta::{event_source, str_at};
use crate::api::{GroupResource, ObjectKey};
use crate::engine::World;
use crate::time::{since, SimTime};

#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    /// `Normal` or `Warning`.
    pub type_: String,
    pub reason: String,
    /// `12s`, or `3s (x4 over 50s)`.
    pub age: String,
    /// The reporting component: `kubelet`, `default-scheduler`, `deployment-controller`.
    pub from: String,
    pub message: String,
}

/// `translateTimestampSince` / `translateMicroTimestampSince`.
fn age(ts: &str, now: SimTime) -> String {
    since(Some(ts), now)
}

/// The Events about the object at `key` (its uid as stored), as describe's `searchEvents` finds
/// them (by involvedObject name, namespace and uid) and `DescribeEvents` prints them.
pub fn events_of(world: &World, key: &ObjectKey, now: SimTime) -> Vec<EventRow> {
    let Some(obj) = world.object(key) else {
        return Vec::new();
    };
    let uid = str_at(obj, "/metadata/uid");
    let ns = if key.namespace.is_empty() {
        "default"
    } else {
        key.namespace.as_str()
    };
    // Event names start with the object's name and a dot, so they sit together in the store.
    let events = GroupResource::events();
    let from = ObjectKey::new(events.clone(), ns, &format!("{}.", key.name));
    let to = ObjectKey::new(events, ns, &format!("{}/", key.name));
    let mut found: Vec<&Arc<Value>> = world
        .objects_in(from..to)
        .map(|(_, ev)| ev)
        .filter(|ev| {
            str_at(ev, "/involvedObject/name") == key.name
                && str_at(ev, "/involvedObject/namespace") == key.namespace
                && str_at(ev, "/involvedObject/uid") == uid
        })
        .collect();
    // SortableEvents: by lastTimestamp only (events.k8s.io events have none and come first);
    // a stable sort, where kube's is not.
    found.sort_by_key(|ev| SimTime::parse_rfc3339(str_at(ev, "/lastTimestamp")));
    found
        .into_iter()
        .map(|ev| {
            let event_time = str_at(ev, "/eventTime");
            let first = if event_time.is_empty() {
                age(str_at(ev, "/firstTimestamp"), now)
            } else {
                age(event_time, now)
            };
            let series = ev.field("series").filter(|s| !s.is_null());
            let count = ev.field("count").and_then(Value::as_i64).unwrap_or(0);
            let age = match series {
                Some(s) => format!(
                    "{} (x{} over {first})",
                    age(str_at(s, "/lastObservedTime"), now),
                    s.field("count").and_then(Value::as_i64).unwrap_or(0)
                ),
                None if count > 1 => format!(
                    "{} (x{count} over {first})",
                    age(str_at(ev, "/lastTimestamp"), now)
                ),
                None => first,
            };
            let from = event_source(ev);
            EventRow {
                type_: str_at(ev, "/type").to_owned(),
                reason: str_at(ev, "/reason").to_owned(),
                age,
                from: from.to_owned(),
                message: str_at(ev, "/message").trim().to_owned(),
            }
        })
        .collect()
}
