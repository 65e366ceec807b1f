//! The kinds the server serves: the registry (which REST resources exist, their Kind, scope,
//! versions and whether they have a `/status` subresource; built-in kinds are fixed, custom
//! resources come and go with their CustomResourceDefinitions) and each kind's strategy, one
//! file per kind as kube's `pkg/registry/<group>/<kind>/strategy.go`, behind [`KindStrategy`].
//! [`KindRules::strategy`] is the one place that maps a kind to its rules.

mod binding;
pub(crate) mod common;
mod configmap;
mod controllerrevision;
mod crd;
mod custom;
pub mod daemonset;
mod deployment;
mod endpointslice;
mod event;
mod hpa;
pub mod job;
mod namespace;
mod node;
mod pod;
mod rbac;
mod replicaset;
mod service;
mod serviceaccount;
pub mod statefulset;
mod workload;

use super::meta::{json_eq, set_or_remove};
use super::typed::FieldTypes;
use super::validation::{dns1123_subdomain, FieldError};
use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};

use super::meta::JsonPointer;
use std::sync::Arc;

use crate::json::Value;
use imbl::OrdMap;

use super::types::GroupResource;

/// Which per-kind strategy (defaults, generation rules, validation) applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum KindRules {
    Deployment,
    ReplicaSet,
    Pod,
    Node,
    ConfigMap,
    /// `v1/ServiceAccount`: the identity a Pod runs as; admission checks it exists.
    ServiceAccount,
    Service,
    HorizontalPodAutoscaler,
    Namespace,
    CustomResourceDefinition,
    /// Role, ClusterRole, RoleBinding, ClusterRoleBinding.
    Rbac,
    /// `v1/Binding`: accepted by create only, never stored (it sets a pod's node).
    Binding,
    /// `v1/Event`: what controllers report about objects.
    Event,
    /// `batch/v1/Job`: pods run to completion.
    Job,
    /// An instance of a CRD-defined kind.
    Custom,
    /// `apps/v1` DaemonSet.
    DaemonSet,
    /// `apps/v1` ControllerRevision: a DaemonSet's (or StatefulSet's) template history.
    ControllerRevision,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `discovery.k8s.io/v1` EndpointSlice: a Service's endpoints.
    EndpointSlice,
}

/// What the server knows about one REST resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceInfo {
    pub gr: GroupResource,
    /// The Kind, e.g. `Deployment`.
    pub kind: String,
    /// Served versions, the preferred (storage) one first, e.g. `["v1"]`.
    pub versions: Vec<String>,
    pub namespaced: bool,
    /// Whether `/status` is served (and main-resource writes ignore status).
    pub status_subresource: bool,
    pub rules: KindRules,
}

impl ResourceInfo {
    /// The preferred `apiVersion`, e.g. `apps/v1` or `v1`.
    pub fn api_version(&self) -> String {
        let version = self.versions.first().map_or("v1", String::as_str);
        if self.gr.group.is_empty() {
            version.to_owned()
        } else {
            format!("{}/{}", self.gr.group, version)
        }
    }

    /// `Deployment.apps`, or `Pod` for the core group: the form kube's Invalid messages use.
    pub fn qualified_kind(&self) -> String {
        if self.gr.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.gr.group)
        }
    }

    /// Whether an update without `metadata.resourceVersion` is accepted (last write wins).
    /// Built-in strategies allow it; custom resources don't.
    pub fn allows_unconditional_update(&self) -> bool {
        self.rules.strategy().allows_unconditional_update()
    }

    /// Whether the kind's strategy sets `metadata.generation`.
    pub fn has_generation(&self) -> bool {
        self.rules.strategy().has_generation()
    }
}

/// A kind's rules, the parts of kube's `rest.RESTCreateStrategy`, `RESTUpdateStrategy` and
/// `ResetFieldsStrategy` the simulation has (plus the typed-decoding table kube gets from the Go
/// struct). Every method has the behaviour of a kind that has no such rule, so a kind states
/// only what it has.
pub(crate) trait KindStrategy: Sync {
    /// Fields typed decoding checks beyond metadata: JSON pointer, type, Go field name.
    fn field_types(&self) -> FieldTypes {
        &[]
    }

    /// Status fields typed decoding checks (after [`Self::field_types`]).
    fn status_types(&self) -> FieldTypes {
        &[]
    }

    /// The container list typed decoding checks: JSON pointer and Go path.
    fn containers(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Why `metadata.name` is not a valid name for the kind (DNS-1123 subdomain by default).
    fn name_format(&self, name: &str) -> Vec<String> {
        dns1123_subdomain(name)
    }

    /// Whether the kind has `metadata.generation`.
    fn has_generation(&self) -> bool {
        false
    }

    /// Whether an update may omit `metadata.resourceVersion` (`AllowUnconditionalUpdate`).
    fn allows_unconditional_update(&self) -> bool {
        true
    }

    /// The scheme's defaults (`SetDefaults_<Kind>`).
    fn defaults(&self, _obj: &mut Value) {}

    /// Spec-side validation on create and update (`Validate`).
    fn validate(&self, _info: &ResourceInfo, _obj: &Value, _errs: &mut Vec<FieldError>) {}

    /// Status validation (`ValidateUpdate` of the status strategy, and any write of a kind
    /// without the subresource).
    fn validate_status(&self, _obj: &Value, _errs: &mut Vec<FieldError>) {}

    /// What a `/status` write may not do given the stored status (the status strategy's
    /// `ValidateUpdate`).
    fn validate_status_update(&self, _old: &Value, _new: &Value, _errs: &mut Vec<FieldError>) {}

    /// What an update may not change (`ValidateUpdate`).
    fn validate_update(
        &self,
        _info: &ResourceInfo,
        _old: &Value,
        _new: &Value,
        _errs: &mut Vec<FieldError>,
    ) {
    }

    /// Whether a main-resource update bumps `metadata.generation` (`PrepareForUpdate`); asked
    /// only of kinds that have one.
    fn generation_bumps(&self, _old: &Value, _new: &Value) -> bool {
        false
    }

    /// What a create settles once the object has its name and UID, before validation (the
    /// Job strategy's `generateSelectorIfNeeded`, which kube runs in `Validate`).
    fn generate_on_create(&self, _obj: &mut Value) {}

    /// Whether a DELETE without a propagation policy orphans the dependents
    /// (`DefaultGarbageCollectionPolicy` of `OrphanDependents`; batch/v1 Jobs).
    fn orphans_dependents_by_default(&self) -> bool {
        false
    }
    /// `PrepareForUpdate` beyond the generation: fields the server keeps or derives on a
    /// main-resource update, before validation.
    fn prepare_for_update(&self, _old: &Value, _new: &mut Value) {}

    /// `PrepareForCreate`: the status the object starts with, and fields the server allocates
    /// (`cluster_ips` counts the cluster IPs handed out).
    fn prepare_for_create(&self, _obj: &mut Value, _cluster_ips: &mut u64) {}

    /// The object a `/status` write produces: built-in kinds keep the stored spec and take the
    /// request's status and metadata.
    fn reset_fields_status(&self, old: &Value, new: Value) -> Value {
        keep_stored_spec(old, new)
    }
}

/// A built-in kind's status write: every top-level field but `metadata`, `status`,
/// `apiVersion` and `kind` comes from the stored object.
fn keep_stored_spec(old: &Value, new: Value) -> Value {
    let kept = |k: &str| matches!(k, "metadata" | "status" | "apiVersion" | "kind");
    // A status write that carries the stored spec as it is (the usual case: a client sends back
    // what it read) has nothing to take.
    if let (Some(r), Some(o)) = (new.as_object(), old.as_object()) {
        let holds_stored = r
            .iter()
            .filter(|(k, _)| !kept(k))
            .all(|(k, v)| o.get(k).is_some_and(|w| json_eq(v, w)))
            && o.iter()
                .filter(|(k, _)| !kept(k))
                .all(|(k, _)| r.get(k).is_some());
        if holds_stored {
            return new;
        }
    }
    let mut result = new;
    if let (Some(r), Some(o)) = (result.as_object_mut(), old.as_object()) {
        let keys: Vec<String> = r.keys().chain(o.keys()).map(|k| k.to_string()).collect();
        for k in keys {
            if !kept(&k) {
                set_or_remove(r, &k, o.get(&k));
            }
        }
    }
    result
}

impl KindRules {
    /// The kind's strategy.
    pub(crate) fn strategy(self) -> &'static dyn KindStrategy {
        match self {
            KindRules::Deployment => &deployment::DeploymentStrategy,
            KindRules::ReplicaSet => &replicaset::ReplicaSetStrategy,
            KindRules::Pod => &pod::PodStrategy,
            KindRules::Node => &node::NodeStrategy,
            KindRules::ConfigMap => &configmap::ConfigMapStrategy,
            KindRules::ServiceAccount => &serviceaccount::ServiceAccountStrategy,
            KindRules::Service => &service::ServiceStrategy,
            KindRules::HorizontalPodAutoscaler => &hpa::HorizontalPodAutoscalerStrategy,
            KindRules::Namespace => &namespace::NamespaceStrategy,
            KindRules::CustomResourceDefinition => &crd::CustomResourceDefinitionStrategy,
            KindRules::Rbac => &rbac::RbacObjectStrategy,
            KindRules::Binding => &binding::BindingStrategy,
            KindRules::Event => &event::EventStrategy,
            KindRules::Job => &job::JobStrategy,
            KindRules::Custom => &custom::CustomResourceStrategy,
            KindRules::DaemonSet => &daemonset::DaemonSetStrategy,
            KindRules::ControllerRevision => &controllerrevision::ControllerRevisionStrategy,
            KindRules::StatefulSet => &statefulset::StatefulSetStrategy,
            KindRules::EndpointSlice => &endpointslice::EndpointSliceStrategy,
        }
    }
}

/// Splits `apps/v1` into (`apps`, `v1`) and `v1` into (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// All served resources; cheap to clone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Registry {
    by_gr: OrdMap<GroupResource, Arc<ResourceInfo>>,
    by_kind: OrdMap<(String, String), GroupResource>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Registry {
    /// The built-in kinds.
    pub fn builtin() -> Self {
        let mut r = Registry {
            by_gr: OrdMap::new(),
            by_kind: OrdMap::new(),
        };
        let table: &[(&str, &str, &str, &str, bool, bool, KindRules)] = &[
            (
                "apps",
                "deployments",
                "Deployment",
                "v1",
                true,
                true,
                KindRules::Deployment,
            ),
            (
                "apps",
                "replicasets",
                "ReplicaSet",
                "v1",
                true,
                true,
                KindRules::ReplicaSet,
            ),
            (
                "apps",
                "daemonsets",
                "DaemonSet",
                "v1",
                true,
                true,
                KindRules::DaemonSet,
            ),
            (
                "apps",
                "statefulsets",
                "StatefulSet",
                "v1",
                true,
                true,
                KindRules::StatefulSet,
            ),
            (
                "apps",
                "controllerrevisions",
                "ControllerRevision",
                "v1",
                true,
                false,
                KindRules::ControllerRevision,
            ),
            ("", "pods", "Pod", "v1", true, true, KindRules::Pod),
            ("", "nodes", "Node", "v1", false, true, KindRules::Node),
            (
                "",
                "configmaps",
                "ConfigMap",
                "v1",
                true,
                false,
                KindRules::ConfigMap,
            ),
            (
                "",
                "serviceaccounts",
                "ServiceAccount",
                "v1",
                true,
                false,
                KindRules::ServiceAccount,
            ),
            (
                "",
                "services",
                "Service",
                "v1",
                true,
                true,
                KindRules::Service,
            ),
            (
                "",
                "namespaces",
                "Namespace",
                "v1",
                false,
                true,
                KindRules::Namespace,
            ),
            (
                "",
                "bindings",
                "Binding",
                "v1",
                true,
                false,
                KindRules::Binding,
            ),
            ("", "events", "Event", "v1", true, false, KindRules::Event),
            (
                "discovery.k8s.io",
                "endpointslices",
                "EndpointSlice",
                "v1",
                true,
                false,
                KindRules::EndpointSlice,
            ),
            ("batch", "jobs", "Job", "v1", true, true, KindRules::Job),
            (
                "autoscaling",
                "horizontalpodautoscalers",
                "HorizontalPodAutoscaler",
                "v2",
                true,
                true,
                KindRules::HorizontalPodAutoscaler,
            ),
            (
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "CustomResourceDefinition",
                "v1",
                false,
                true,
                KindRules::CustomResourceDefinition,
            ),
            (
                "rbac.authorization.k8s.io",
                "roles",
                "Role",
                "v1",
                true,
                false,
                KindRules::Rbac,
            ),
            (
                "rbac.authorization.k8s.io",
                "clusterroles",
                "ClusterRole",
                "v1",
                false,
                false,
                KindRules::Rbac,
            ),
            (
                "rbac.authorization.k8s.io",
                "rolebindings",
                "RoleBinding",
                "v1",
                true,
                false,
                KindRules::Rbac,
            ),
            (
                "rbac.authorization.k8s.io",
                "clusterrolebindings",
                "ClusterRoleBinding",
                "v1",
                false,
                false,
                KindRules::Rbac,
            ),
        ];
        for &(group, resource, kind, version, namespaced, status, rules) in table {
            r.insert(ResourceInfo {
                gr: GroupResource::new(group, resource),
                kind: kind.to_owned(),
                versions: vec![version.to_owned()],
                namespaced,
                status_subresource: status,
                rules,
            });
        }
        r
    }

    /// Adds or replaces a resource (a replaced one's old Kind no longer resolves).
    pub fn insert(&mut self, info: ResourceInfo) {
        if let Some(old) = self.by_gr.get(&info.gr).cloned() {
            self.by_kind
                .remove(&(old.gr.group.to_string(), old.kind.clone()));
        }
        self.by_kind.insert(
            (info.gr.group.to_string(), info.kind.clone()),
            info.gr.clone(),
        );
        self.by_gr.insert(info.gr.clone(), Arc::new(info));
    }

    pub fn remove(&mut self, gr: &GroupResource) {
        if let Some(info) = self.by_gr.remove(gr) {
            self.by_kind
                .remove(&(info.gr.group.to_string(), info.kind.clone()));
        }
    }

    pub fn get(&self, gr: &GroupResource) -> Option<&ResourceInfo> {
        self.by_gr.get(gr).map(Arc::as_ref)
    }

    /// Looks a kind up by `apiVersion` and `kind`; the version must be served.
    pub fn for_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceInfo> {
        let (group, version) = split_api_version(api_version);
        let gr = self.by_kind.get(&(group.to_owned(), kind.to_owned()))?;
        let info = self.get(gr)?;
        info.versions.iter().any(|v| v == version).then_some(info)
    }

    /// Every served resource, ordered by group and resource.
    pub fn iter(&self) -> impl Iterator<Item = &ResourceInfo> {
        self.by_gr.values().map(Arc::as_ref)
    }

    /// Whether `gr` is one of the fixed built-in resources.
    pub fn is_builtin(gr: &GroupResource) -> bool {
        Self::builtin().by_gr.contains_key(gr)
    }
}

/// The custom resource a CRD object defines: group, names, scope, served versions (storage
/// version first) and whether the storage version enables `subresources.status`.
pub fn crd_resource_info(crd: &Value) -> Option<ResourceInfo> {
    let spec = crd.field("spec")?;
    let group = spec.field("group")?.as_str()?;
    let names = spec.field("names")?;
    let plural = names.field("plural")?.as_str()?;
    let kind = names.field("kind")?.as_str()?;
    let namespaced = spec.field("scope").and_then(Value::as_str) != Some("Cluster");
    let versions = spec.field("versions")?.as_array()?;
    let mut served: Vec<String> = Vec::new();
    let mut status = false;
    for v in versions {
        let name = v.field("name").and_then(Value::as_str).unwrap_or_default();
        let is_storage = v.field("storage").and_then(Value::as_bool).unwrap_or(false);
        if is_storage {
            served.insert(0, name.to_owned());
            status = v.at("/subresources/status").is_some_and(Value::is_object);
        } else if v.field("served").and_then(Value::as_bool).unwrap_or(true) {
            served.push(name.to_owned());
        }
    }
    Some(ResourceInfo {
        gr: GroupResource::new(group, plural),
        kind: kind.to_owned(),
        versions: served,
        namespaced,
        status_subresource: status,
        rules: KindRules::Custom,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_kinds_resolve_by_api_version_and_kind() {
        let r = Registry::builtin();
        let d = r.for_kind("apps/v1", "Deployment").unwrap();
        assert_eq!(d.gr, GroupResource::new("apps", "deployments"));
        assert!(d.status_subresource && d.namespaced);
        assert_eq!(d.qualified_kind(), "Deployment.apps");
        assert_eq!(r.for_kind("v1", "Pod").unwrap().qualified_kind(), "Pod");
        assert!(r.for_kind("apps/v1beta1", "Deployment").is_none());
        assert!(r.for_kind("v1", "Deployment").is_none());
        assert!(
            !r.get(&GroupResource::new("", "configmaps"))
                .unwrap()
                .status_subresource
        );
        assert_eq!(
            r.for_kind("autoscaling/v2", "HorizontalPodAutoscaler")
                .unwrap()
                .api_version(),
            "autoscaling/v2"
        );
    }

    #[test]
    fn a_crd_defines_its_resource_with_or_without_status() {
        let crd = crate::json::json!({
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "databases", "kind": "Database"},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}}]}
        });
        let info = crd_resource_info(&crd).unwrap();
        assert_eq!(info.gr.qualified(), "databases.example.com");
        assert!(info.status_subresource);
        assert!(!info.allows_unconditional_update());
        let mut plain = crd.clone();
        plain["spec"]["versions"][0]
            .as_object_mut()
            .unwrap()
            .remove("subresources");
        assert!(!crd_resource_info(&plain).unwrap().status_subresource);
    }
}
