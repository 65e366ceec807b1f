//! Deployment and ReplicaSet rows [printers.go `printDeployment`, `printReplicaSet`].

use serde_json::{json, Value};

use super::{containers, n, or_none, since};
use crate::api::meta;
use crate::api::selector::label_selector_string as selector_string;
use crate::time::SimTime;

pub(super) fn deployment_cells(d: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(d, "/spec/template/spec/containers");
    let replicas = d
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    vec![
        json!(meta::name(d)),
        json!(format!("{}/{replicas}", n(d, "/status/readyReplicas"))),
        json!(n(d, "/status/updatedReplicas")),
        json!(n(d, "/status/availableReplicas")),
        json!(since(
            d.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector_string(d.pointer("/spec/selector")).unwrap_or_else(|| "<invalid>".into())),
    ]
}
pub(super) fn replicaset_cells(rs: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(rs, "/spec/template/spec/containers");
    let selector = match selector_string(rs.pointer("/spec/selector")) {
        None => "<error>".to_owned(),
        Some(sel) => or_none(&sel),
    };
    vec![
        json!(meta::name(rs)),
        json!(rs
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)),
        json!(n(rs, "/status/replicas")),
        json!(n(rs, "/status/readyReplicas")),
        json!(since(
            rs.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector),
    ]
}
