//! A StatefulSet's revision history in ControllerRevisions [pkg/controller/statefulset
//! stateful_set_utils.go `getPatch`, `newRevision`, `nextRevision`; stateful_set_control.go
//! `getStatefulSetRevisions`, `truncateHistory`; pkg/controller/history controller_history.go
//! `NewControllerRevision`, `HashControllerRevision`, `ControllerRevisionName`,
//! `CreateControllerRevision`, `UpdateControllerRevision`, `FindEqualRevisions`,
//! `SortControllerRevisions`].

use crate::api::meta::Fields;
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::json::{json, Value};

use super::identity::{pod_revision, template_labels};
use super::SET_REF;
use crate::api::meta::{self, JsonPointer};
use crate::api::names::{fnv32, safe_encode};
use crate::api::{ApiRequest, StatusReason};
use crate::controllers::daemonset::{controllerrevisions, revision_of};
use crate::controllers::util::sort_keys;
use crate::kubectl::encode::compact_json;
use crate::runtime::{client, Ctx, ReconcileError};

/// `history.ControllerRevisionHashLabel`: the revision's data hash, on the revision itself.
pub const HISTORY_HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// `getPatch`: `{"spec":{"template":{...,"$patch":"replace"}}}`, the template as the v1 codec
/// encodes it (an ObjectMeta's zero `creationTimestamp` is `null`), keys in Go's map order.
pub fn revision_data(set: &Value) -> Value {
    let mut template = set.at("/spec/template").cloned().unwrap_or(json!({}));
    if let Some(m) = template.as_object_mut() {
        let metadata = m.entry("metadata").or_insert_with(|| json!({}));
        if let Some(md) = metadata.as_object_mut() {
            md.entry("creationTimestamp").or_insert(Value::Null);
        }
        m.insert("$patch", json!("replace"));
    }
    sort_keys(&json!({"spec": {"template": template}}))
}

/// `HashControllerRevision` with the collision count as its probe: FNV-1 over the data's JSON
/// bytes (Go's `json.Marshal`) and the count's decimal digits, safe-encoded.
pub fn revision_hash(data: &Value, collision_count: i64) -> String {
    let mut bytes = compact_json(data).into_bytes();
    bytes.extend_from_slice(collision_count.to_string().as_bytes());
    safe_encode(&fnv32(&bytes).to_string())
}

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub fn revision_name(prefix: &str, hash: &str) -> String {
    let mut p = prefix.to_owned();
    p.truncate(223);
    format!("{p}-{hash}")
}

/// `SortControllerRevisions`: by revision, ties by creation time, then name.
pub fn sort_revisions(revisions: &mut [Arc<Value>]) {
    revisions.sort_by(|a, b| {
        revision_of(a)
            .cmp(&revision_of(b))
            .then_with(|| {
                meta::str_at(a, "/metadata/creationTimestamp")
                    .cmp(meta::str_at(b, "/metadata/creationTimestamp"))
            })
            .then_with(|| meta::name(a).cmp(meta::name(b)))
    });
}

/// `newRevision`: the revision object `NewControllerRevision` builds (template labels plus
/// the hash label, the set as controller, the set's annotations), named for `collision_count`.
pub fn new_revision(set: &Value, revision: i64, collision_count: i64) -> Value {
    let data = revision_data(set);
    let hash = revision_hash(&data, collision_count);
    let mut labels = template_labels(set);
    labels.insert(HISTORY_HASH_LABEL, json!(hash));
    let mut metadata = json!({
        "name": revision_name(meta::name(set), &hash),
        "namespace": meta::namespace(set),
        "labels": labels,
    });
    if let Some(a) = set
        .at("/metadata/annotations")
        .filter(|a| a.as_object().is_some_and(|m| !m.is_empty()))
    {
        metadata["annotations"] = a.clone();
    }
    metadata["ownerReferences"] = json!([meta::owner_reference(set, true)]);
    json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata,
        "data": data, "revision": revision})
}

/// `EqualRevision`: the hash labels differ only when the data does, so equal data decides.
fn equal(a: &Value, b: &Value) -> bool {
    a.field("data") == b.field("data")
}

/// The set's revisions (`ListRevisions`, claimed by controllerRef), sorted.
pub fn list(ctx: &Ctx<'_>, set: &Value) -> Vec<Arc<Value>> {
    let (ns, uid) = (meta::namespace(set), meta::uid(set));
    let mut out: Vec<Arc<Value>> = ctx
        .cache
        .list(&controllerrevisions())
        .filter(|r| meta::namespace(r) == ns)
        .filter(|r| {
            meta::controller_of(r).is_some_and(|(kind, _, u)| kind == SET_REF.1 && u == uid)
        })
        .cloned()
        .collect();
    sort_revisions(&mut out);
    out
}

/// What `getStatefulSetRevisions` settles.
pub struct Revisions {
    pub current: Arc<Value>,
    pub update: Arc<Value>,
    pub collision_count: i64,
}

/// `getStatefulSetRevisions`: the update revision is the newest revision when it matches the
/// template, an older matching one renumbered to the next revision (a rollback), or a new one
/// (`CreateControllerRevision`, which bumps the collision count on a name taken by other data);
/// the current revision is `status.currentRevision`'s, or the update revision.
pub fn current_and_update(
    ctx: &mut Ctx<'_>,
    principal: &str,
    set: &Value,
    revisions: &[Arc<Value>],
) -> Result<Revisions, ReconcileError> {
    let mut collision_count = meta::i64_at(set, "/status/collisionCount").unwrap_or(0);
    let next = revisions.last().map_or(1, |r| revision_of(r) + 1);
    let wanted = new_revision(set, next, collision_count);
    let equal_revs: Vec<&Arc<Value>> = revisions.iter().filter(|r| equal(r, &wanted)).collect();
    let update = match (equal_revs.last(), revisions.last()) {
        (Some(eq), Some(last)) if equal(last, eq) => last.clone(),
        (Some(eq), _) => {
            // UpdateControllerRevision: the same object at the next revision number.
            let mut body = eq.as_ref().clone();
            body["revision"] = json!(next);
            ctx.send(client::update_object(
                principal,
                controllerrevisions(),
                body,
            ))?
        }
        (None, _) => create(ctx, principal, set, wanted, &mut collision_count)?,
    };
    let status_current = meta::str_at(set, "/status/currentRevision");
    let current = revisions
        .iter()
        .find(|r| meta::name(r) == status_current)
        .cloned()
        .unwrap_or_else(|| update.clone());
    Ok(Revisions {
        current,
        update,
        collision_count,
    })
}

/// `CreateControllerRevision`: a name taken by a revision with the same data is that
/// revision; taken by other data, the count goes up and the name is hashed anew.
fn create(
    ctx: &mut Ctx<'_>,
    principal: &str,
    set: &Value,
    mut revision: Value,
    collision_count: &mut i64,
) -> Result<Arc<Value>, ReconcileError> {
    let ns = meta::namespace(set).to_owned();
    loop {
        let hash = revision_hash(revision.member("data"), *collision_count);
        let name = revision_name(meta::name(set), &hash);
        revision["metadata"]["name"] = json!(name);
        match ctx.send(ApiRequest::create(
            principal,
            controllerrevisions(),
            &ns,
            revision.clone(),
        )) {
            Err(e) if e.reason == StatusReason::AlreadyExists => {
                let existing = ctx.send(ApiRequest::get(
                    principal,
                    controllerrevisions(),
                    &ns,
                    &name,
                ))?;
                if existing.field("data") == revision.field("data") {
                    return Ok(existing);
                }
                *collision_count += 1;
            }
            other => return other.map_err(Into::into),
        }
    }
}

/// `truncateHistory`: revisions that are neither current, update nor carried by a pod go,
/// oldest first, until `revisionHistoryLimit` remain (a negative limit keeps all).
pub fn truncate(
    ctx: &mut Ctx<'_>,
    principal: &str,
    set: &Value,
    pods: &[Arc<Value>],
    revisions: &[Arc<Value>],
    live: &[&str],
) -> Result<(), ReconcileError> {
    let mut keep: BTreeSet<&str> = live.iter().copied().collect();
    keep.extend(pods.iter().map(|p| pod_revision(p)));
    let history: Vec<&Arc<Value>> = revisions
        .iter()
        .filter(|r| !keep.contains(meta::name(r)))
        .collect();
    let limit = meta::i64_at(set, "/spec/revisionHistoryLimit").unwrap_or(10);
    if limit < 0 || history.len() as i64 <= limit {
        return Ok(());
    }
    for r in &history[..history.len() - limit as usize] {
        ctx.send(ApiRequest::delete(
            principal,
            controllerrevisions(),
            meta::namespace(r),
            meta::name(r),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revision_holds_the_template_as_a_replace_patch_and_is_named_by_its_hash() {
        let set = json!({"metadata": {"name": "web", "namespace": "default", "uid": "u"},
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
        let data = revision_data(&set);
        assert_eq!(
            compact_json(&data),
            r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx","name":"c"}]}}}}"#
        );
        let r = new_revision(&set, 1, 0);
        let hash = revision_hash(&data, 0);
        assert_eq!(r["metadata"]["name"], format!("web-{hash}"));
        assert_eq!(r["metadata"]["labels"][HISTORY_HASH_LABEL], hash);
        assert_eq!(r["metadata"]["labels"]["app"], "web");
        // A collision count hashes to another name.
        assert_ne!(revision_hash(&data, 1), hash);
        assert_eq!(revision_name(&"x".repeat(300), "h").len(), 225);
    }
}
