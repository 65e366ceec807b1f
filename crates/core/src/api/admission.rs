//! Admission, the plugins kube runs between authorization and storage: NamespaceLifecycle (no
//! new content in a missing or terminating namespace), NodeRestriction (a kubelet writes only its
//! own Node and the status of pods bound to it), ServiceAccount (a Pod runs as an account that
//! exists, with its token volume), DefaultTolerationSeconds and Priority.

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::meta::JsonPointer;

use super::errors::{forbidden, not_found};
use super::kinds::{KindRules, ResourceInfo};
use super::meta::{is_deleting, meta_str};
use super::names::{fnv32a, name_suffix};
use super::server::ApiServer;
use super::types::{ApiError, GroupResource, ObjectKey, Subresource};

impl ApiServer {
    /// Validating admission on create: NamespaceLifecycle, then NodeRestriction for Nodes.
    pub(super) fn admit_create(
        &self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        principal: &str,
    ) -> Result<(), ApiError> {
        if info.namespaced {
            let ns_key = ObjectKey::new(GroupResource::new("", "namespaces"), "", ns);
            match self.state.store.get(&ns_key) {
                None => return Err(not_found(&GroupResource::new("", "namespaces"), ns)),
                Some(n) if is_deleting(n) => {
                    return Err(forbidden(
                        &info.gr,
                        name,
                        &format!("unable to create new content in namespace {ns} because it is being terminated"),
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some(node) = principal.strip_prefix("system:node:") {
            if info.rules == KindRules::Node && name != node {
                return Err(forbidden(
                    &info.gr,
                    name,
                    &format!("node \"{node}\" is not allowed to modify node \"{name}\""),
                ));
            }
        }
        Ok(())
    }

    /// kube's NodeRestriction admission: a kubelet may only write its own Node and the status
    /// of pods bound to it.
    pub(super) fn node_restriction(
        &self,
        principal: &str,
        info: &ResourceInfo,
        old: &Value,
        subresource: Option<Subresource>,
    ) -> Result<(), ApiError> {
        let Some(node) = principal.strip_prefix("system:node:") else {
            return Ok(());
        };
        let name = meta_str(old, "name");
        match info.rules {
            KindRules::Pod if subresource == Some(Subresource::Status) => {
                let bound = old
                    .at("/spec/nodeName")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if bound != node {
                    return Err(forbidden(&info.gr, name, &format!("node \"{node}\" can only update pod status for pods with spec.nodeName set to itself")));
                }
            }
            KindRules::Node if name != node => {
                return Err(forbidden(
                    &info.gr,
                    name,
                    &format!("node \"{node}\" is not allowed to modify node \"{name}\""),
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// kube's ServiceAccount admission [plugin/pkg/admission/serviceaccount/admission.go]: a Pod
    /// runs as `default` unless it names an account; the account must exist in its namespace;
    /// unless token automounting is off (on the Pod or the account), the Pod gets the projected
    /// `kube-api-access-<suffix>` volume (token, CA bundle, namespace) mounted read-only into every
    /// container. The suffix is drawn from the pod's name here (kube draws it at random).
    pub(super) fn admit_service_account(
        &self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        pod: &mut Value,
    ) -> Result<(), ApiError> {
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let account = spec
            .field("serviceAccountName")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
            .unwrap_or("default")
            .to_owned();
        let key = ObjectKey::new(GroupResource::new("", "serviceaccounts"), ns, &account);
        let Some(sa) = self.state.store.get(&key) else {
            return Err(forbidden(
                &info.gr,
                name,
                &format!(
                    "error looking up service account {ns}/{account}: serviceaccount {} not found",
                    crate::api::validation::go_quote(&account)
                ),
            ));
        };
        spec.insert("serviceAccountName", json!(account));
        spec.insert("serviceAccount", json!(account));
        let automount = spec
            .field("automountServiceAccountToken")
            .and_then(Value::as_bool)
            .or_else(|| {
                sa.field("automountServiceAccountToken")
                    .and_then(Value::as_bool)
            })
            .unwrap_or(true);
        if !automount {
            return Ok(());
        }
        const MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
        let mounted = |c: &Value| {
            c.field("volumeMounts")
                .and_then(Value::as_array)
                .is_some_and(|ms| {
                    ms.iter()
                        .any(|m| m.field("mountPath").and_then(Value::as_str) == Some(MOUNT))
                })
        };
        let volume = format!(
            "kube-api-access-{}",
            name_suffix(u64::from(fnv32a(format!("{ns}/{name}").as_bytes())))
        );
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if let Some(list) = volumes.as_array_mut() {
            list.push(json!({"name": volume, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]}}));
        }
        for list in ["initContainers", "containers"] {
            let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for c in cs.iter_mut().filter(|c| !mounted(c)) {
                if let Some(c) = c.as_object_mut() {
                    let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
                    if let Some(ms) = mounts.as_array_mut() {
                        ms.push(json!({"name": volume, "readOnly": true, "mountPath": MOUNT}));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Mutating admission of a new Pod [plugin/pkg/admission]: DefaultTolerationSeconds tolerates
/// not-ready and unreachable nodes for 300 s (unless the pod already tolerates them), Priority
/// sets the default priority 0 with its preemption policy when no class is named.
pub(super) fn default_tolerations_and_priority(pod: &mut Value) {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
        if let Some(list) = tolerations.as_array_mut() {
            for key in [
                "node.kubernetes.io/not-ready",
                "node.kubernetes.io/unreachable",
            ] {
                let tolerated = list.iter().any(|t| {
                    let k = t.field("key").and_then(Value::as_str).unwrap_or("");
                    let effect = t.field("effect").and_then(Value::as_str).unwrap_or("");
                    (k == key || k.is_empty()) && (effect == "NoExecute" || effect.is_empty())
                });
                if !tolerated {
                    list.push(json!({"key": key, "operator": "Exists",
                        "effect": "NoExecute", "tolerationSeconds": 300}));
                }
            }
        }
        if spec.field("priorityClassName").is_none() {
            spec.entry("priority").or_insert(json!(0));
            spec.entry("preemptionPolicy")
                .or_insert(json!("PreemptLowerPriority"));
        }
    }
}

/// The `default` ServiceAccount of a namespace.
pub(super) fn default_service_account(ns: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}})
}
