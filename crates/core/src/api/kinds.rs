//! The kind registry: which REST resources the server serves, their Kind, scope, versions and
//! whether they have a `/status` subresource. Built-in kinds are fixed; custom resources are
//! added and removed as CustomResourceDefinitions are created and deleted.

use super::meta::JsonPointer;
use std::sync::Arc;

use imbl::OrdMap;
use serde_json::Value;

use super::types::GroupResource;

/// Which per-kind strategy (defaults, generation rules, validation) applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
    /// An instance of a CRD-defined kind.
    Custom,
}

/// What the server knows about one REST resource.
#[derive(Clone, Debug, PartialEq, Eq)]
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
        self.rules != KindRules::Custom
    }

    /// Whether the kind's strategy sets `metadata.generation`.
    pub fn has_generation(&self) -> bool {
        matches!(
            self.rules,
            KindRules::Deployment
                | KindRules::ReplicaSet
                | KindRules::Pod
                | KindRules::CustomResourceDefinition
                | KindRules::Custom
        )
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
#[derive(Clone, Debug)]
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
                .remove(&(old.gr.group.clone(), old.kind.clone()));
        }
        self.by_kind
            .insert((info.gr.group.clone(), info.kind.clone()), info.gr.clone());
        self.by_gr.insert(info.gr.clone(), Arc::new(info));
    }

    pub fn remove(&mut self, gr: &GroupResource) {
        if let Some(info) = self.by_gr.remove(gr) {
            self.by_kind
                .remove(&(info.gr.group.clone(), info.kind.clone()));
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
    let spec = crd.get("spec")?;
    let group = spec.get("group")?.as_str()?;
    let names = spec.get("names")?;
    let plural = names.get("plural")?.as_str()?;
    let kind = names.get("kind")?.as_str()?;
    let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
    let versions = spec.get("versions")?.as_array()?;
    let mut served: Vec<String> = Vec::new();
    let mut status = false;
    for v in versions {
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
        let is_storage = v.get("storage").and_then(Value::as_bool).unwrap_or(false);
        if is_storage {
            served.insert(0, name.to_owned());
            status = v.at("/subresources/status").is_some_and(Value::is_object);
        } else if v.get("served").and_then(Value::as_bool).unwrap_or(true) {
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
        let crd = serde_json::json!({
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
