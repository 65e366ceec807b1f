//! Create: kube's generic registry `Create` (name generation, server-set metadata, the kind's
//! defaults and validation, PrepareForCreate), the apiextensions controller's CRD install and
//! `POST pods/binding`.

use crate::api::meta::Fields;
use crate::json::path;
use std::sync::Arc;

use crate::json::{json, Value};

use super::admission::{default_service_account, default_tolerations_and_priority};
use super::errors::{already_exists, bad_request, conflict_with, invalid, not_found};
use super::kinds::{crd_resource_info, KindRules, ResourceInfo};
use super::meta::{self, is_deleting, meta_mut, meta_str, owner_uids};
use super::names::name_suffix;
use super::rbac::{self, principals};
use super::server::{status_success, ApiServer};
use super::strategy;
use super::types::{ApiError, ApiResult, GroupResource, ObjectKey, StatusReason, WatchEventType};
use super::validation::FieldError;
use crate::api::meta::JsonPointer;
use crate::time::SimTime;

/// Deterministic uid in UUID form, from a counter: `{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}` of
/// the counter's mix, written digit by digit (every object's create makes one; `format!` with
/// five padded fields cost about 2,800 instructions a call).
pub(super) fn make_uid(n: u64) -> String {
    let a = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D;
    let mut uid = String::with_capacity(36);
    // Each field fits its width, so the padding is the whole of `{:0Nx}`.
    for (prefix, value, digits) in [
        ("", u64::from((a >> 32) as u32), 8),
        ("-", u64::from((a >> 16) as u16), 4),
        ("-4", a & 0xfff, 3),
        ("-8", (n >> 48) & 0xfff, 3),
        ("-", n & 0xffff_ffff_ffff, 12),
    ] {
        uid.push_str(prefix);
        for place in (0..digits).rev() {
            let digit = ((value >> (4 * place)) & 0xf) as u32;
            uid.push(char::from_digit(digit, 16).expect("a hex digit"));
        }
    }
    uid
}

impl ApiServer {
    pub(super) fn create(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        mut obj: Value,
        principal: &str,
    ) -> ApiResult {
        strategy::type_check(info, &obj, None).map_err(bad_request)?;
        if obj
            .field("metadata")
            .is_some_and(|m| !m.is_object() && !m.is_null())
        {
            return Err(bad_request("metadata must be an object"));
        }
        if !meta_str(&obj, "resourceVersion").is_empty() {
            // kube's storage layer refuses this with a plain error, which the handler turns
            // into a 500.
            return Err(ApiError::new(
                StatusReason::InternalError,
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let mut name = meta_str(&obj, "name").to_owned();
        if name.is_empty() {
            let prefix = meta_str(&obj, "generateName").to_owned();
            if !prefix.is_empty() {
                loop {
                    self.state.name_counter += 1;
                    let candidate = format!("{prefix}{}", name_suffix(self.state.name_counter));
                    let key = ObjectKey::new(info.gr.clone(), ns, &candidate);
                    if self.state.store.get(&key).is_none() {
                        name = candidate;
                        break;
                    }
                }
            }
        }
        self.admit_create(info, ns, &name, principal)?;
        let key = ObjectKey::new(info.gr.clone(), ns, &name);
        if !name.is_empty() && self.state.store.get(&key).is_some() {
            return Err(already_exists(&info.gr, &name));
        }
        self.state.uid_counter += 1;
        let uid = make_uid(self.state.uid_counter);
        {
            let m = meta_mut(&mut obj);
            if !name.is_empty() {
                m.insert("name", Value::from(name.clone()));
            }
            if info.namespaced {
                m.insert("namespace", Value::from(ns));
            } else {
                m.remove("namespace");
            }
            m.insert("uid", Value::from(uid));
            m.insert("creationTimestamp", Value::from(now.rfc3339()));
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
            if info.has_generation() {
                m.insert("generation", Value::from(1));
            } else {
                m.remove("generation");
            }
        }
        if info.status_subresource {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
        strategy::apply_defaults(info, &mut obj);
        if info.rules == KindRules::Pod {
            self.admit_service_account(info, ns, &name, &mut obj)?;
        }
        strategy::generate_on_create(info, &mut obj);
        let mut errs = Vec::new();
        strategy::validate_metadata(info, &obj, &mut errs);
        strategy::validate_spec(info, &obj, &mut errs);
        strategy::validate_status(info, &obj, &mut errs);
        if !errs.is_empty() {
            return Err(self.invalid(info, &name, &errs));
        }
        if info.rules == KindRules::Pod {
            default_tolerations_and_priority(&mut obj);
        }
        strategy::prepare_for_create(info, &mut obj, &mut self.state.ip_counter);
        let created = self.persist(now, key, obj, WatchEventType::Added);
        if info.rules == KindRules::CustomResourceDefinition {
            self.install_crd(now, &created, principal);
        }
        if info.rules == KindRules::Namespace && principal != principals::APISERVER {
            // The serviceaccounts-controller's work, done with the namespace (not audited).
            let sa = default_service_account(meta_str(&created, "name"));
            if let Some(sa_info) = self.kind_of(&sa) {
                let ns = meta_str(&created, "name").to_owned();
                let _ = self.create(now, &sa_info, &ns, sa, principals::APISERVER);
            }
        }
        let dangling: Vec<String> = owner_uids(&created)
            .into_iter()
            .filter(|u| !self.state.store.contains_uid(u))
            .collect();
        for u in dangling {
            self.state.gc_queue.insert(u);
        }
        Ok(created)
    }

    /// Registers a new CRD's resource, marks the CRD Established (as kube's apiextensions
    /// controllers do), and adds the resource to the users' role (as clusterrole aggregation
    /// does for `edit`).
    pub(super) fn install_crd(&mut self, now: SimTime, crd: &Value, _principal: &str) {
        let Some(info) = crd_resource_info(crd) else {
            return;
        };
        self.state.registry.insert(info.clone());
        let key = ObjectKey::new(
            GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
            "",
            meta_str(crd, "name"),
        );
        let mut obj = crd.clone();
        let t = now.rfc3339();
        obj["status"] = json!({
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": t},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": t},
            ],
            "acceptedNames": obj.at(path!("/spec/names")).cloned().unwrap_or(json!({})),
            "storedVersions": info.versions.first().map(|v| vec![v.clone()]).unwrap_or_default(),
        });
        self.persist(now, key, obj, WatchEventType::Modified);
        let role_key = ObjectKey::new(
            GroupResource::new("rbac.authorization.k8s.io", "clusterroles"),
            "",
            rbac::USER_ROLE,
        );
        if let Some(role) = self.state.store.get(&role_key) {
            let mut role = (**role).clone();
            let rule = json!({"apiGroups": [info.gr.group], "resources": [info.gr.resource], "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]});
            if let Some(rules) = role.get_mut("rules").and_then(Value::as_array_mut) {
                if !rules.contains(&rule) {
                    rules.push(rule);
                    self.persist(now, role_key, role, WatchEventType::Modified);
                }
            }
        }
    }

    /// `POST bindings`: sets the pod's node and its PodScheduled condition.
    pub(super) fn bind(
        &mut self,
        now: SimTime,
        ns: &str,
        body: &Value,
        _principal: &str,
    ) -> ApiResult {
        let pod_name = meta_str(body, "name").to_owned();
        let node = body
            .at(path!("/target/name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let pods = GroupResource::new("", "pods");
        let mut errs = Vec::new();
        if pod_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
        if node.is_empty() {
            errs.push(FieldError::required("target.name", ""));
        }
        if !errs.is_empty() {
            return Err(invalid("Binding", "", "Binding", &pod_name, &errs));
        }
        let key = ObjectKey::new(pods.clone(), ns, &pod_name);
        let Some(mut pod) = self.state.store.get(&key).map(|o| (**o).clone()) else {
            return Err(not_found(&pods, &pod_name));
        };
        let binding_gr = GroupResource::new("", "pods/binding");
        if is_deleting(&pod) {
            return Err(conflict_with(
                &binding_gr,
                &pod_name,
                &format!("pod {pod_name} is being deleted, cannot be assigned to a host"),
            ));
        }
        let current = pod
            .at(path!("/spec/nodeName"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if !current.is_empty() {
            return Err(conflict_with(
                &binding_gr,
                &pod_name,
                &format!("pod {pod_name} is already assigned to node \"{current}\""),
            ));
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("nodeName", Value::from(node));
        }
        let cond = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now.rfc3339()});
        let status = pod
            .as_object_mut()
            .map(|o| o.entry("status").or_insert_with(|| json!({})));
        if let Some(Value::Object(st)) = status {
            let conds = st.entry("conditions").or_insert_with(|| json!([]));
            if let Some(list) = conds.as_array_mut() {
                match list
                    .iter_mut()
                    .find(|c| c.field("type").and_then(Value::as_str) == Some("PodScheduled"))
                {
                    Some(c) => *c = cond,
                    None => list.push(cond),
                }
            }
        }
        let uid = meta::uid(&pod).to_owned();
        self.persist(now, key, pod, WatchEventType::Modified);
        Ok(Arc::new(status_success(&pods, &pod_name, &uid)))
    }
}

#[cfg(test)]
mod tests {
    use super::make_uid;
    use proptest::prelude::*;

    proptest! {
        /// The digits written one by one are `format!`'s, for any counter.
        #[test]
        fn uids_are_the_padded_hex_fields(n in any::<u64>()) {
            let a = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D;
            let expected = format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                (a >> 32) as u32,
                (a >> 16) as u16,
                (a & 0xfff) as u16,
                (n >> 48) as u16 & 0xfff,
                n & 0xffff_ffff_ffff
            );
            prop_assert_eq!(make_uid(n), expected);
        }
    }

    #[test]
    fn uids_are_36_characters_and_distinct() {
        for n in [0, 1, 2, 1 << 16, 1 << 48, u64::MAX] {
            assert_eq!(make_uid(n).len(), 36, "{n}");
        }
        assert_eq!(make_uid(1), make_uid(1));
        assert_ne!(make_uid(1), make_uid(2));
    }
}
