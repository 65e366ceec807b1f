//! Update: kube's generic registry `Update` for the main resource and for `/status`, two
//! separate paths as kube's two REST storages are. Both check the target (names, admission,
//! optimistic concurrency, identity) and finish the same way (server-owned metadata, the kind's
//! defaults and validation, no-op detection, deletion once the last finalizer goes); in between,
//! a main-resource write keeps the stored status and may bump `metadata.generation`, a status
//! write keeps the stored spec (the kind's `ResetFieldsStatus`).

use crate::api::meta::Fields;
use crate::json::path;
use std::sync::Arc;

use crate::json::{Map, Value};

use super::errors::{bad_request, conflict, invalid, not_found};
use super::kinds::{crd_resource_info, KindRules, ResourceInfo};
use super::meta::{
    finalizers, is_deleting, meta_mut, meta_str, object_meta, same_metadata, set_or_remove,
};
use super::server::ApiServer;
use super::strategy;
use super::types::{ApiResult, ObjectKey, Subresource, WatchEventType};
use super::validation::{go_quote, FieldError};
use crate::api::meta::JsonPointer;
use crate::time::SimTime;

impl ApiServer {
    /// `PUT` (or a patch) of the main resource: status stays as stored when the kind has the
    /// subresource, and a change the kind's rule counts bumps `metadata.generation`.
    pub(super) fn update(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        mut new: Value,
        principal: &str,
    ) -> ApiResult {
        let (key, old) = self.write_target(info, ns, name, &new, principal, None)?;
        if info.status_subresource {
            if let Some(o) = new.as_object_mut() {
                set_or_remove(o, "status", old.field("status"));
            }
        }
        let mut result = self.keep_server_metadata(info, name, &old, new)?;
        strategy::apply_defaults(info, &mut result);
        info.rules.strategy().prepare_for_update(&old, &mut result);
        let mut errs = Vec::new();
        // Stored metadata passed when it was written; the same allocation is not read again.
        if !same_metadata(&old, &result) {
            strategy::validate_metadata(info, &result, &mut errs);
        }
        strategy::validate_spec(info, &result, &mut errs);
        strategy::validate_update(info, &old, &result, &mut errs);
        if !info.status_subresource {
            strategy::validate_status(info, &result, &mut errs);
        }
        if !errs.is_empty() {
            return Err(self.invalid(info, name, &errs));
        }
        if info.has_generation() && strategy::generation_bumps(info, &old, &result) {
            let g = old
                .at(path!("/metadata/generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut result).insert("generation", Value::from(g + 1));
        }
        self.commit_update(now, info, key, &old, result)
    }

    /// `PUT` (or a patch) of `/status`: the request's status and metadata over the stored spec.
    pub(super) fn update_status(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        new: Value,
        principal: &str,
    ) -> ApiResult {
        let status = Some(Subresource::Status);
        let (key, old) = self.write_target(info, ns, name, &new, principal, status)?;
        let result = strategy::status_result(info, &old, new);
        let mut result = self.keep_server_metadata(info, name, &old, result)?;
        if !strategy::defaulted_as_stored(&old, &result) {
            strategy::apply_defaults(info, &mut result);
        }
        let mut errs = Vec::new();
        if !same_metadata(&old, &result) {
            strategy::validate_metadata(info, &result, &mut errs);
        }
        strategy::validate_status(info, &result, &mut errs);
        strategy::validate_status_update(info, &old, &result, &mut errs);
        if !errs.is_empty() {
            return Err(self.invalid(info, name, &errs));
        }
        self.commit_update(now, info, key, &old, result)
    }

    /// What both paths check before anything changes, in kube's order: typed decoding, the
    /// object exists, the body names the same object, admission (before the storage layer's
    /// concurrency check), `resourceVersion`, and an unchanged uid.
    fn write_target(
        &self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        new: &Value,
        principal: &str,
        subresource: Option<Subresource>,
    ) -> Result<(ObjectKey, Arc<Value>), super::types::ApiError> {
        let gr = &info.gr;
        let key = ObjectKey::new(gr.clone(), ns, name);
        let stored = self.state.store.get(&key).cloned();
        strategy::type_check(info, new, stored.as_deref()).map_err(bad_request)?;
        if new
            .field("metadata")
            .is_some_and(|m| !m.is_object() && !m.is_null())
        {
            return Err(bad_request("metadata must be an object"));
        }
        let Some(old) = stored else {
            return Err(not_found(gr, name));
        };
        let body_name = meta_str(new, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = meta_str(new, "namespace");
        if info.namespaced && !body_ns.is_empty() && body_ns != ns {
            return Err(bad_request("the namespace of the provided object does not match the namespace sent on the request"));
        }
        self.node_restriction(principal, info, &old, subresource)?;
        let req_rv = meta_str(new, "resourceVersion");
        if req_rv.is_empty() {
            if !info.allows_unconditional_update() {
                let err = FieldError::invalid(
                    "metadata.resourceVersion",
                    Value::from(0),
                    "must be specified for an update",
                );
                return Err(invalid(
                    &gr.qualified(),
                    &gr.group,
                    &gr.resource,
                    name,
                    &[err],
                ));
            }
        } else if req_rv != meta_str(&old, "resourceVersion") {
            return Err(conflict(gr, name));
        }
        // Identity: uid may be omitted, not changed.
        let req_uid = meta_str(new, "uid");
        if !req_uid.is_empty() && req_uid != meta_str(&old, "uid") {
            let err = FieldError::invalid(
                "metadata.uid",
                Value::from(req_uid.to_owned()),
                "field is immutable",
            );
            return Err(self.invalid(info, name, &[err]));
        }
        Ok((key, old))
    }

    /// Server-owned metadata always comes from the stored object; a terminating object takes
    /// no new finalizers.
    fn keep_server_metadata(
        &self,
        info: &ResourceInfo,
        name: &str,
        old: &Value,
        mut result: Value,
    ) -> Result<Value, super::types::ApiError> {
        // The stored metadata itself, with its resourceVersion: nothing to take from it.
        if same_metadata(old, &result)
            && object_meta(old).is_some_and(|m| m.field("resourceVersion").is_some())
        {
            return Ok(result);
        }
        let empty = Map::new();
        let old_meta = object_meta(old).unwrap_or(&empty);
        let m = meta_mut(&mut result);
        for k in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            set_or_remove(m, k, old_meta.field(k));
        }
        m.insert(
            "resourceVersion",
            old_meta
                .field("resourceVersion")
                .cloned()
                .unwrap_or(Value::Null),
        );
        if is_deleting(old) {
            let before = finalizers(old);
            let added: Vec<String> = finalizers(&result)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                let list: Vec<String> = added.iter().map(|f| go_quote(f)).collect();
                let err = FieldError::forbidden(
                    "metadata.finalizers",
                    format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}", list.join(", ")),
                );
                return Err(self.invalid(info, name, &[err]));
            }
        }
        Ok(result)
    }

    /// Stores a validated update: nothing for a no-op, removal when the last finalizer went
    /// (`ShouldDeleteDuringUpdate`), else a new resourceVersion and a MODIFIED event.
    fn commit_update(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        key: ObjectKey,
        old: &Arc<Value>,
        result: Value,
    ) -> ApiResult {
        if super::meta::json_eq(&result, old) {
            return Ok(Arc::clone(old));
        }
        // No grace period may be pending (a terminating Pod stays until its kubelet deletes it).
        let no_grace_left = result
            .at(path!("/metadata/deletionGracePeriodSeconds"))
            .and_then(Value::as_i64)
            .is_none_or(|g| g == 0);
        if is_deleting(&result) && finalizers(&result).is_empty() && no_grace_left {
            self.queue_graph_changes(old, &result);
            return Ok(self.remove_as(now, &key, result).unwrap_or_default());
        }
        let saved = self.persist(now, key, result, WatchEventType::Modified);
        if info.rules == KindRules::CustomResourceDefinition {
            if let Some(new_info) = crd_resource_info(&saved) {
                self.state.registry.insert(new_info);
            }
        }
        Ok(saved)
    }
}
