//! From a pasted manifest to a request: the resource its `apiVersion`/`kind` name (with kube's
//! decoder messages when they are missing or unknown), the key it would be stored under, and the
//! create or `kubectl apply`-like patch that writes it.

use crate::api::meta::Fields;
use crate::json::Value;

use super::errors::bad_request;
use super::kinds::{split_api_version, ResourceInfo};
use super::meta::{meta_mut, meta_str};
use super::server::ApiServer;
use super::types::{ApiError, ApiRequest, ObjectKey, PatchType};

impl ApiServer {
    /// The key a manifest would be stored under (namespace defaulted to `default` for
    /// namespaced kinds), or why it can't be.
    pub fn key_for_manifest(&self, manifest: &Value) -> Result<ObjectKey, ApiError> {
        let info = self.info_for_body(manifest)?;
        let ns = if info.namespaced {
            let ns = meta_str(manifest, "namespace");
            if ns.is_empty() {
                "default"
            } else {
                ns
            }
        } else {
            ""
        };
        Ok(ObjectKey::new(
            info.gr.clone(),
            ns,
            meta_str(manifest, "name"),
        ))
    }

    /// A create request for a pasted manifest, its resource found from `apiVersion`/`kind`.
    pub fn create_request_for(
        &self,
        principal: &str,
        manifest: Value,
    ) -> Result<ApiRequest, ApiError> {
        let info = self.info_for_body(&manifest)?;
        let ns = if info.namespaced {
            meta_str(&manifest, "namespace").to_owned()
        } else {
            String::new()
        };
        Ok(ApiRequest::create(
            principal,
            info.gr.clone(),
            &ns,
            manifest,
        ))
    }

    /// A `kubectl apply`-like request for a manifest: a create if the object doesn't exist,
    /// else a merge patch of the manifest (without `status` and server-set metadata) onto it.
    pub fn apply_request_for(
        &self,
        principal: &str,
        manifest: Value,
    ) -> Result<ApiRequest, ApiError> {
        let key = self.key_for_manifest(&manifest)?;
        if key.name.is_empty() || self.state.store.get(&key).is_none() {
            return self.create_request_for(principal, manifest);
        }
        let mut patch = manifest;
        if let Some(o) = patch.as_object_mut() {
            o.remove("status");
        }
        let m = meta_mut(&mut patch);
        for k in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            m.remove(k);
        }
        Ok(ApiRequest::patch(
            principal,
            key.gr,
            &key.namespace,
            &key.name,
            PatchType::Merge,
            patch,
        ))
    }

    pub(super) fn info_for_body(&self, body: &Value) -> Result<ResourceInfo, ApiError> {
        let Some(obj) = body.as_object() else {
            return Err(bad_request(format!(
                "a manifest must be an object, found {body}"
            )));
        };
        let short = || {
            let s = body.to_string();
            if s.len() > 120 {
                format!(
                    "{}...",
                    &s[..s
                        .char_indices()
                        .take_while(|(i, _)| *i < 120)
                        .last()
                        .map_or(0, |(i, c)| i + c.len_utf8())]
                )
            } else {
                s
            }
        };
        let av = match obj.field("apiVersion") {
            Some(Value::String(s)) if !s.is_empty() => s.as_str(),
            Some(Value::String(_)) | None => {
                return Err(bad_request(format!(
                    "Object 'apiVersion' is missing in '{}'",
                    short()
                )))
            }
            Some(other) => {
                return Err(bad_request(format!(
                    "json: cannot unmarshal {} into Go struct field .apiVersion of type string",
                    other
                )))
            }
        };
        let kind = match obj.field("kind") {
            Some(Value::String(s)) if !s.is_empty() => s.as_str(),
            Some(Value::String(_)) | None => {
                return Err(bad_request(format!(
                    "Object 'Kind' is missing in '{}'",
                    short()
                )))
            }
            Some(other) => {
                return Err(bad_request(format!(
                    "json: cannot unmarshal {} into Go struct field .kind of type string",
                    other
                )))
            }
        };
        self.state
            .registry
            .for_kind(av, kind)
            .cloned()
            .ok_or_else(|| {
                let (group, version) = split_api_version(av);
                bad_request(format!(
                    "no matches for kind \"{kind}\" in version \"{}\"",
                    if group.is_empty() {
                        version.to_owned()
                    } else {
                        format!("{group}/{version}")
                    }
                ))
            })
    }

    pub(super) fn kind_of(&self, body: &Value) -> Option<ResourceInfo> {
        let av = body.field("apiVersion")?.as_str()?;
        let kind = body.field("kind")?.as_str()?;
        self.state.registry.for_kind(av, kind).cloned()
    }
}
