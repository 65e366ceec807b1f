//! The `/scale` subresource of Deployments and ReplicaSets, as kube's `ScaleREST` serves it
//! [pkg/registry/apps/deployment/storage/storage.go `ScaleREST`, `scaleFromDeployment`]: an
//! `autoscaling/v1` Scale whose `spec.replicas` is the object's, `status.replicas` its
//! observed count and `status.selector` its selector as a string. A write changes only the
//! object's `spec.replicas`, through the main-resource update (generation rule, validation,
//! concurrency on the Scale's resourceVersion). `kubectl scale` and autoscalers use it, with
//! RBAC on `deployments/scale`.

use std::sync::Arc;

use crate::json::{json, Value};

use super::errors::{bad_request, conflict, not_found};
use super::kinds::ResourceInfo;
use super::meta::{self, JsonPointer};
use super::server::ApiServer;
use super::types::{ApiRequest, ApiResult, ObjectKey, PatchType, RequestBody, Verb};
use crate::time::SimTime;

/// Whether the resource has a scale subresource.
pub(crate) fn has_scale(info: &ResourceInfo) -> bool {
    info.gr.group == "apps"
        && matches!(
            info.gr.resource.as_str(),
            "deployments" | "replicasets" | "statefulsets"
        )
}

/// The Scale of `obj`.
fn scale_of(obj: &Value) -> Value {
    let m = |k: &str| {
        obj.at(&format!("/metadata/{k}"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": m("name"), "namespace": m("namespace"), "uid": m("uid"),
            "resourceVersion": m("resourceVersion"), "creationTimestamp": m("creationTimestamp")},
        "spec": {"replicas": obj.at("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)},
        "status": {"replicas": obj.at("/status/replicas").and_then(Value::as_i64).unwrap_or(0),
            "selector": super::selector::label_selector_string(obj.at("/spec/selector")).unwrap_or_default()},
    })
}

impl ApiServer {
    /// GET, PUT or PATCH of `/scale` (already authorized as `<resource>/scale`).
    pub(super) fn scale(
        &mut self,
        now: SimTime,
        info: &ResourceInfo,
        ns: &str,
        req: &ApiRequest,
        body: RequestBody,
    ) -> ApiResult {
        let (name, verb, principal) = (req.name.as_str(), req.verb, req.principal.as_str());
        let key = ObjectKey::new(info.gr.clone(), ns, name);
        let Some(stored) = self.state.store.get(&key).cloned() else {
            return Err(not_found(&info.gr, name));
        };
        let current = scale_of(&stored);
        let wanted = match (verb, body) {
            (Verb::Get, _) => return Ok(Arc::new(current)),
            (Verb::Update, RequestBody::Object(scale)) => scale,
            (Verb::Patch, RequestBody::Patch(pt, patch)) => {
                let mut doc = current.clone();
                match pt {
                    PatchType::Merge | PatchType::Strategic => {
                        crate::api::meta::merge_patch(&mut doc, patch)
                    }
                    PatchType::Json => {
                        let ops: json_patch::Patch = crate::json::from_value(patch)
                            .map_err(|e| bad_request(format!("invalid JSON patch: {e}")))?;
                        crate::json::patch_unsafe(&mut doc, &ops)
                            .map_err(|e| bad_request(format!("the patch does not apply: {e}")))?;
                    }
                }
                doc
            }
            _ => {
                return Err(bad_request(
                    "the body of a scale request must be a Scale or a patch",
                ))
            }
        };
        let rv = meta::str_at(&wanted, "/metadata/resourceVersion");
        if !rv.is_empty() && rv != meta::str_at(&stored, "/metadata/resourceVersion") {
            return Err(conflict(&info.gr, name));
        }
        let Some(replicas) = wanted.at("/spec/replicas").and_then(Value::as_i64) else {
            return Err(bad_request("the Scale has no integer spec.replicas"));
        };
        let mut object = (*stored).clone();
        object["spec"]["replicas"] = json!(replicas);
        let updated = self.update(now, info, ns, name, object, principal)?;
        Ok(Arc::new(scale_of(&updated)))
    }
}
