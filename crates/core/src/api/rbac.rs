//! RBAC: the authorizer (kube's `plugin/pkg/auth/authorizer/rbac` rule matching, including the
//! exact `resource/subresource` rule) and the default policy, stored as real
//! `rbac.authorization.k8s.io/v1` objects. See `docs/rbac-policy.md` for the policy table.

use super::meta::JsonPointer;
use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::store::Store;
use super::types::{GroupResource, ObjectKey, Subresource};

/// The controller identities of the default policy.
pub mod principals {
    pub const ADMIN: &str = "admin";
    pub const DEPLOYMENT_CONTROLLER: &str =
        "system:serviceaccount:kube-system:deployment-controller";
    pub const REPLICASET_CONTROLLER: &str =
        "system:serviceaccount:kube-system:replicaset-controller";
    pub const JOB_CONTROLLER: &str = "system:serviceaccount:kube-system:job-controller";
    pub const STATEFUL_SET_CONTROLLER: &str =
        "system:serviceaccount:kube-system:statefulset-controller";
    pub const DAEMON_SET_CONTROLLER: &str =
        "system:serviceaccount:kube-system:daemon-set-controller";
    pub const ENDPOINTSLICE_CONTROLLER: &str =
        "system:serviceaccount:kube-system:endpointslice-controller";
    pub const POD_GC_CONTROLLER: &str = "system:serviceaccount:kube-system:pod-garbage-collector";
    pub const HPA_CONTROLLER: &str = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";
    pub const GARBAGE_COLLECTOR: &str =
        "system:serviceaccount:kube-system:generic-garbage-collector";
    pub const NAMESPACE_CONTROLLER: &str = "system:serviceaccount:kube-system:namespace-controller";
    pub const SCHEDULER: &str = "system:kube-scheduler";
    pub const DATABASE_CONTROLLER: &str =
        "system:serviceaccount:converge-system:database-controller";
    /// Internal writes of the API server itself (CRD status, clusterrole aggregation).
    pub const APISERVER: &str = "system:apiserver";

    /// The kubelet of `node`: `system:node:<node>`.
    pub fn kubelet(node: &str) -> String {
        format!("system:node:{node}")
    }
}

/// What is being asked: the attributes kube's authorizer sees.
#[derive(Clone, Debug)]
pub struct Attributes<'a> {
    pub user: &'a str,
    pub verb: &'a str,
    pub gr: &'a GroupResource,
    pub subresource: Option<Subresource>,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl Attributes<'_> {
    /// `deployments` or `deployments/status`: the string rules are matched against.
    pub fn resource_string(&self) -> String {
        match self.subresource {
            Some(sub) => format!("{}/{}", self.gr.resource, sub.as_str()),
            None => self.gr.resource.to_string(),
        }
    }
}

/// The groups a principal belongs to, derived from its name as kube's authenticators do.
pub fn groups_of(user: &str) -> Vec<String> {
    // The anonymous authenticator's user is in system:unauthenticated only
    // [apiserver pkg/authentication/request/anonymous].
    if user == "system:anonymous" {
        return vec!["system:unauthenticated".to_owned()];
    }
    let mut groups = Vec::new();
    if let Some(rest) = user.strip_prefix("system:serviceaccount:") {
        groups.push("system:serviceaccounts".to_owned());
        if let Some((ns, _)) = rest.split_once(':') {
            groups.push(format!("system:serviceaccounts:{ns}"));
        }
    } else if user.starts_with("system:node:") {
        groups.push("system:nodes".to_owned());
    }
    // `AuthenticatedGroupAdder` appends it after the authenticator's own groups.
    groups.push("system:authenticated".to_owned());
    groups
}

fn list_has(rule: &Value, key: &str, want: &str) -> bool {
    rule.get(key).and_then(Value::as_array).is_some_and(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .any(|x| x == want || x == "*")
    })
}

/// kube's `ResourceMatches`: `*` matches everything; `*/sub` matches any resource's `sub`;
/// otherwise the combined `resource/subresource` string must be listed exactly.
fn resource_matches(rule: &Value, combined: &str, sub: Option<&str>) -> bool {
    rule.field("resources")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter().filter_map(Value::as_str).any(|r| {
                r == "*" || r == combined || sub.is_some_and(|s| r.strip_prefix("*/") == Some(s))
            })
        })
}

/// Whether a rule lists `resourceNames` (an empty list lists none).
fn lists_names(rule: &Value) -> bool {
    rule.field("resourceNames")
        .and_then(Value::as_array)
        .is_some_and(|n| !n.is_empty())
}

fn rule_allows(rule: &Value, a: &Attributes<'_>, combined: &str) -> bool {
    let sub = a.subresource.map(Subresource::as_str);
    let names_ok = match rule.field("resourceNames").and_then(Value::as_array) {
        None => true,
        Some(names) if names.is_empty() => true,
        // rbac's `ResourceNameMatches`: the requested name among those listed, "" included
        // (a request without a name, a create or a list, matches a rule listing "").
        Some(names) => names.iter().any(|n| n.as_str() == Some(a.name)),
    };
    list_has(rule, "verbs", a.verb)
        && list_has(rule, "apiGroups", &a.gr.group)
        && resource_matches(rule, combined, sub)
        && names_ok
}

fn subject_matches(subject: &Value, user: &str, groups: &[String], binding_ns: &str) -> bool {
    let name = subject.field("name").and_then(Value::as_str).unwrap_or("");
    match subject.field("kind").and_then(Value::as_str).unwrap_or("") {
        "User" => name == user,
        "Group" => groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = subject
                .field("namespace")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .unwrap_or(binding_ns);
            // `user == format!("system:serviceaccount:{ns}:{name}")`, without the string.
            user.strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.strip_prefix(ns))
                .and_then(|rest| rest.strip_prefix(':'))
                == Some(name)
        }
        _ => false,
    }
}

/// The RBAC API group.
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn rbac(resource: &str) -> GroupResource {
    GroupResource::new(RBAC_GROUP, resource)
}

/// The rules of the role a binding references, or kube's lookup error when it is missing
/// (`clusterrole.rbac.authorization.k8s.io "x" not found`).
fn role_rules<'s>(
    store: &'s Store,
    binding: &Value,
    binding_ns: &str,
) -> Result<Vec<&'s Value>, String> {
    let kind = binding
        .at("/roleRef/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    let name = binding
        .at("/roleRef/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let (key, singular) = match kind {
        "ClusterRole" => (
            super::types::ObjectKey::new(rbac("clusterroles"), "", name),
            "clusterrole",
        ),
        "Role" => (
            super::types::ObjectKey::new(rbac("roles"), binding_ns, name),
            "role",
        ),
        _ => return Ok(Vec::new()),
    };
    match store.get(&key) {
        None => Err(format!(
            "{singular}.rbac.authorization.k8s.io \"{name}\" not found"
        )),
        Some(role) => Ok(role
            .field("rules")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().collect())
            .unwrap_or_default()),
    }
}

/// Whether the stored RBAC objects allow the request.
pub fn authorize(store: &Store, a: &Attributes<'_>) -> bool {
    check(store, a).is_ok()
}

/// Evaluates the request against every binding that names the user (ClusterRoleBindings, then
/// RoleBindings of the namespace). On denial, returns the role lookups that failed on the way,
/// which kube appends to its message (`: RBAC: ...`).
pub fn check(store: &Store, a: &Attributes<'_>) -> Result<(), Vec<String>> {
    check_names(store, a, false)
}

/// Whether a rule that lists no `resourceNames` allows the request, so that any name is
/// allowed: what the API server's memo keeps once for every name.
pub fn allows_every_name(store: &Store, a: &Attributes<'_>) -> bool {
    check_names(store, a, true).is_ok()
}

/// [`check`]; with `any_name`, only rules that do not look at the name count.
fn check_names(store: &Store, a: &Attributes<'_>, any_name: bool) -> Result<(), Vec<String>> {
    let groups = groups_of(a.user);
    let combined = a.resource_string();
    let mut errors = Vec::new();
    let mut allowed_by = |binding: &Value, binding_ns: &str| -> bool {
        let subjects = binding.field("subjects").and_then(Value::as_array);
        let bound = subjects.is_some_and(|s| {
            s.iter()
                .any(|s| subject_matches(s, a.user, &groups, binding_ns))
        });
        if !bound {
            return false;
        }
        match role_rules(store, binding, binding_ns) {
            Ok(rules) => rules
                .iter()
                .filter(|r| !any_name || !lists_names(r))
                .any(|r| rule_allows(r, a, &combined)),
            Err(e) => {
                errors.push(e);
                false
            }
        }
    };
    let crbs = rbac("clusterrolebindings");
    if store.range(&crbs, Some("")).any(|(_, b)| allowed_by(b, "")) {
        return Ok(());
    }
    if !a.namespace.is_empty() {
        let rbs = rbac("rolebindings");
        let allowed = store
            .range(&rbs, Some(a.namespace))
            .any(|(_, b)| allowed_by(b, a.namespace));
        if allowed {
            return Ok(());
        }
    }
    Err(errors)
}

/// Whether any Role or ClusterRole has a rule limited to `resourceNames`: only then does an
/// authorization decision depend on the object's name.
pub fn names_matter(store: &Store) -> bool {
    let limited = |(_, role): (&ObjectKey, &std::sync::Arc<Value>)| {
        role.field("rules")
            .and_then(Value::as_array)
            .is_some_and(|rules| rules.iter().any(lists_names))
    };
    let (roles, cluster_roles) = (rbac("roles"), rbac("clusterroles"));
    store.range(&roles, None).any(limited) || store.range(&cluster_roles, None).any(limited)
}

/// kube's denial message with the lookup errors appended as its RBAC authorizer does:
/// `...: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found` (several: `[a, b]`).
pub fn denial_reason_with_errors(a: &Attributes<'_>, errors: &[String]) -> String {
    let base = denial_reason(a);
    match errors {
        [] => base,
        [one] => format!("{base}: RBAC: {one}"),
        many => format!("{base}: RBAC: [{}]", many.join(", ")),
    }
}

/// kube's denial reason: `User "alice" cannot update resource "deployments/status" in API
/// group "apps" in the namespace "default"` (or `at the cluster scope`).
pub fn denial_reason(a: &Attributes<'_>) -> String {
    let scope = if a.namespace.is_empty() {
        "at the cluster scope".to_owned()
    } else {
        format!("in the namespace \"{}\"", a.namespace)
    };
    format!(
        "User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {}",
        a.user,
        a.verb,
        a.resource_string(),
        a.gr.group,
        scope
    )
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// kube's bootstrap `eventsRule`: every controller may record Events.
fn events_rule() -> Value {
    rule(
        &["", "events.k8s.io"],
        &["events"],
        &["create", "update", "patch"],
    )
}

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

fn cluster_role(name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "rules": rules})
}

fn binding(name: &str, role: &str, subjects: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects})
}

fn user(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name})
}

fn group(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name})
}

fn service_account(ns: &str, name: &str) -> Value {
    json!({"kind": "ServiceAccount", "name": name, "namespace": ns})
}

/// kube's bootstrap role and binding of the DaemonSet controller
/// [plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go
/// `daemon-set-controller`], rules in kube's order. Not part of [`default_policy`]: the engine
/// creates them with the controller, so a cluster without it keeps its resourceVersions.
pub fn daemon_set_controller_policy() -> Vec<Value> {
    let name = "system:controller:daemon-set-controller";
    vec![
        cluster_role(
            name,
            vec![
                rule(&["extensions", "apps"], &["daemonsets"], READ),
                rule(&["extensions", "apps"], &["daemonsets/status"], &["update"]),
                rule(
                    &["extensions", "apps"],
                    &["daemonsets/finalizers"],
                    &["update"],
                ),
                rule(&[""], &["nodes"], &["list", "watch"]),
                rule(
                    &[""],
                    &["pods"],
                    &["list", "watch", "create", "delete", "patch"],
                ),
                rule(&[""], &["pods/binding"], &["create"]),
                rule(
                    &["apps"],
                    &["controllerrevisions"],
                    &[
                        "get", "list", "watch", "create", "delete", "update", "patch",
                    ],
                ),
                events_rule(),
            ],
        ),
        binding(
            name,
            name,
            vec![service_account("kube-system", "daemon-set-controller")],
        ),
    ]
}

/// kube's bootstrap role and binding of the StatefulSet controller [controller_policy.go
/// `statefulset-controller`], rules in kube's order, created by the engine with the controller.
pub fn stateful_set_controller_policy() -> Vec<Value> {
    let name = "system:controller:statefulset-controller";
    vec![
        cluster_role(
            name,
            vec![
                rule(&[""], &["pods"], &["list", "watch"]),
                rule(&["apps"], &["statefulsets"], READ),
                rule(&["apps"], &["statefulsets/status"], &["update"]),
                rule(&["apps"], &["statefulsets/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["get", "create", "delete", "update", "patch"],
                ),
                rule(
                    &["apps"],
                    &["controllerrevisions"],
                    &[
                        "get", "create", "delete", "update", "patch", "list", "watch",
                    ],
                ),
                rule(&[""], &["persistentvolumeclaims"], &["get", "create"]),
                rule(&[""], &["persistentvolumeclaims"], &["update", "delete"]),
                events_rule(),
            ],
        ),
        binding(
            name,
            name,
            vec![service_account("kube-system", "statefulset-controller")],
        ),
    ]
}

/// kube's bootstrap role and binding of the EndpointSlice controller [controller_policy.go
/// `endpointslice-controller`], rules in kube's order; created by the engine with the controller.
/// The `services/finalizers` update lets it set `blockOwnerDeletion` on the slices it owns.
pub fn endpoint_slice_controller_policy() -> Vec<Value> {
    let name = "system:controller:endpointslice-controller";
    vec![
        cluster_role(
            name,
            vec![
                rule(&[""], &["services", "pods", "nodes"], READ),
                rule(&[""], &["services/finalizers"], &["update"]),
                rule(
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                    &["get", "list", "create", "update", "delete"],
                ),
                events_rule(),
            ],
        ),
        binding(
            name,
            name,
            vec![service_account("kube-system", "endpointslice-controller")],
        ),
    ]
}

/// kube's bootstrap role and binding of the pod garbage collector [controller_policy.go
/// `pod-garbage-collector`], created by the engine with the controller.
pub fn pod_gc_controller_policy() -> Vec<Value> {
    let name = "system:controller:pod-garbage-collector";
    vec![
        cluster_role(
            name,
            vec![
                rule(&[""], &["pods"], &["list", "watch", "delete"]),
                rule(&[""], &["nodes"], READ),
                rule(&[""], &["pods/status"], &["patch"]),
            ],
        ),
        binding(
            name,
            name,
            vec![service_account("kube-system", "pod-garbage-collector")],
        ),
    ]
}

/// The name of the ClusterRole users get; custom resources are added to it when their CRD is
/// created (as kube's clusterrole aggregation does for `edit`).
pub const USER_ROLE: &str = "converge:spec-editor";

/// The default policy: ClusterRoles first, then ClusterRoleBindings. Controller roles follow
/// kube's bootstrap policy (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`).
pub fn default_policy() -> Vec<Value> {
    let workloads = [
        "deployments",
        "replicasets",
        "daemonsets",
        "statefulsets",
        "pods",
        "configmaps",
        "services",
        "serviceaccounts",
        "horizontalpodautoscalers",
        "jobs",
    ];
    vec![
        cluster_role("cluster-admin", vec![rule(&["*"], &["*"], &["*"])]),
        cluster_role(
            USER_ROLE,
            vec![
                rule(&["", "apps", "autoscaling", "batch"], &workloads, WRITE),
                rule(
                    &["apiextensions.k8s.io"],
                    &["customresourcedefinitions"],
                    WRITE,
                ),
                rule(&["*"], &["*/status"], READ),
                // kube's `view` aggregation reads revisions (`kubectl rollout history`).
                rule(&["apps"], &["controllerrevisions"], READ),
                // kube's `view` aggregation reads EndpointSlices too.
                rule(&["discovery.k8s.io"], &["endpointslices"], READ),
                // kube's `edit` role scales workloads through `/scale` (`kubectl scale`).
                rule(
                    &["apps"],
                    &[
                        "deployments/scale",
                        "replicasets/scale",
                        "statefulsets/scale",
                    ],
                    &["get", "patch", "update"],
                ),
                rule(&[""], &["nodes", "namespaces", "events"], READ),
            ],
        ),
        cluster_role(
            "system:controller:deployment-controller",
            vec![
                events_rule(),
                rule(
                    &["apps"],
                    &["deployments"],
                    &["get", "list", "watch", "update"],
                ),
                rule(
                    &["apps"],
                    &["deployments/status", "deployments/finalizers"],
                    &["update"],
                ),
                rule(
                    &["apps"],
                    &["replicasets"],
                    &[
                        "create", "delete", "get", "list", "patch", "update", "watch",
                    ],
                ),
                rule(&[""], &["pods"], &["get", "list", "update", "watch"]),
            ],
        ),
        cluster_role(
            "system:controller:replicaset-controller",
            vec![
                events_rule(),
                rule(
                    &["apps"],
                    &["replicasets"],
                    &["get", "list", "watch", "update"],
                ),
                rule(
                    &["apps"],
                    &["replicasets/status", "replicasets/finalizers"],
                    &["update"],
                ),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "list", "patch", "watch"],
                ),
            ],
        ),
        // plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go, job-controller.
        cluster_role(
            "system:controller:job-controller",
            vec![
                rule(
                    &["batch"],
                    &["jobs"],
                    &["get", "list", "watch", "update", "patch"],
                ),
                rule(&["batch"], &["jobs/status"], &["update"]),
                rule(&["batch"], &["jobs/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["list", "watch", "create", "delete", "patch"],
                ),
                events_rule(),
            ],
        ),
        cluster_role(
            "system:controller:horizontal-pod-autoscaler",
            vec![
                events_rule(),
                rule(&["autoscaling"], &["horizontalpodautoscalers"], READ),
                rule(
                    &["autoscaling"],
                    &["horizontalpodautoscalers/status"],
                    &["update"],
                ),
                rule(&["*"], &["*/scale"], &["get", "update"]),
                rule(&[""], &["pods"], &["list"]),
            ],
        ),
        cluster_role(
            "system:controller:generic-garbage-collector",
            vec![
                events_rule(),
                rule(
                    &["*"],
                    &["*"],
                    &["get", "list", "watch", "patch", "update", "delete"],
                ),
            ],
        ),
        cluster_role(
            "system:controller:namespace-controller",
            vec![
                events_rule(),
                rule(
                    &["*"],
                    &["*"],
                    &["get", "list", "watch", "delete", "deletecollection"],
                ),
                rule(
                    &[""],
                    &["namespaces", "namespaces/finalize", "namespaces/status"],
                    &["get", "list", "watch", "update", "delete"],
                ),
            ],
        ),
        cluster_role(
            "system:kube-scheduler",
            vec![
                events_rule(),
                rule(&[""], &["pods"], &["get", "list", "watch", "delete"]),
                rule(&[""], &["bindings", "pods/binding"], &["create"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&[""], &["nodes", "namespaces"], READ),
            ],
        ),
        cluster_role(
            "system:node",
            vec![
                events_rule(),
                rule(
                    &[""],
                    &["pods"],
                    &["get", "list", "watch", "create", "delete"],
                ),
                rule(&[""], &["pods/status"], &["update", "patch"]),
                rule(
                    &[""],
                    &["nodes"],
                    &[
                        "get", "list", "watch", "create", "update", "patch", "delete",
                    ],
                ),
                rule(&[""], &["nodes/status"], &["update", "patch"]),
                rule(&["", "apps"], &["configmaps", "services"], READ),
            ],
        ),
        cluster_role(
            "converge:database-controller",
            vec![
                events_rule(),
                rule(
                    &["*"],
                    &["databases"],
                    &["get", "list", "watch", "update", "patch"],
                ),
                rule(
                    &["*"],
                    &["databases/status", "databases/finalizers"],
                    &["update", "patch"],
                ),
                rule(
                    &["", "apps"],
                    &["pods", "services", "configmaps", "deployments"],
                    WRITE,
                ),
            ],
        ),
        binding(
            "cluster-admin",
            "cluster-admin",
            vec![group("system:masters"), user("admin")],
        ),
        binding(
            "converge:spec-editors",
            USER_ROLE,
            vec![user("alice"), user("bob"), user("app")],
        ),
        binding(
            "system:controller:deployment-controller",
            "system:controller:deployment-controller",
            vec![service_account("kube-system", "deployment-controller")],
        ),
        binding(
            "system:controller:replicaset-controller",
            "system:controller:replicaset-controller",
            vec![service_account("kube-system", "replicaset-controller")],
        ),
        binding(
            "system:controller:job-controller",
            "system:controller:job-controller",
            vec![service_account("kube-system", "job-controller")],
        ),
        binding(
            "system:controller:horizontal-pod-autoscaler",
            "system:controller:horizontal-pod-autoscaler",
            vec![service_account("kube-system", "horizontal-pod-autoscaler")],
        ),
        binding(
            "system:controller:generic-garbage-collector",
            "system:controller:generic-garbage-collector",
            vec![service_account("kube-system", "generic-garbage-collector")],
        ),
        binding(
            "system:controller:namespace-controller",
            "system:controller:namespace-controller",
            vec![service_account("kube-system", "namespace-controller")],
        ),
        binding(
            "system:kube-scheduler",
            "system:kube-scheduler",
            vec![user("system:kube-scheduler")],
        ),
        binding("system:node", "system:node", vec![group("system:nodes")]),
        binding(
            "converge:database-controller",
            "converge:database-controller",
            vec![service_account("converge-system", "database-controller")],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::ObjectKey;

    fn store_with_policy() -> Store {
        let mut s = Store::default();
        for obj in default_policy() {
            let res = if obj["kind"] == "ClusterRole" {
                "clusterroles"
            } else {
                "clusterrolebindings"
            };
            let name = obj["metadata"]["name"].as_str().unwrap().to_owned();
            s.put(ObjectKey::new(rbac(res), "", &name), obj);
        }
        s
    }

    fn allowed(s: &Store, user: &str, verb: &str, group: &str, res: &str, status: bool) -> bool {
        let gr = GroupResource::new(group, res);
        authorize(
            s,
            &Attributes {
                user,
                verb,
                gr: &gr,
                subresource: status.then_some(Subresource::Status),
                namespace: "default",
                name: "x",
            },
        )
    }

    #[test]
    fn users_write_spec_but_not_status() {
        let s = store_with_policy();
        assert!(allowed(&s, "alice", "update", "apps", "deployments", false));
        assert!(!allowed(&s, "alice", "update", "apps", "deployments", true));
        assert!(allowed(&s, "alice", "get", "apps", "deployments", true));
        assert!(!allowed(&s, "mallory", "get", "apps", "deployments", false));
    }

    #[test]
    fn controllers_write_the_status_of_what_they_own() {
        let s = store_with_policy();
        let dc = principals::DEPLOYMENT_CONTROLLER;
        assert!(allowed(&s, dc, "update", "apps", "deployments", true));
        assert!(!allowed(&s, dc, "patch", "apps", "deployments", true));
        assert!(allowed(&s, dc, "create", "apps", "replicasets", false));
        assert!(!allowed(&s, dc, "update", "apps", "replicasets", true));
        let rc = principals::REPLICASET_CONTROLLER;
        assert!(allowed(&s, rc, "update", "apps", "replicasets", true));
        assert!(allowed(&s, rc, "create", "", "pods", false));
        assert!(!allowed(&s, rc, "update", "", "pods", true));
        assert!(allowed(&s, "system:node:n1", "update", "", "pods", true));
        assert!(!allowed(&s, "system:node:n1", "update", "", "pods", false));
        assert!(allowed(
            &s,
            principals::SCHEDULER,
            "create",
            "",
            "bindings",
            false
        ));
        assert!(allowed(&s, "admin", "update", "apps", "deployments", true));
    }

    #[test]
    fn star_slash_status_matches_any_status_but_resource_slash_star_does_not() {
        let r = rule(&["apps"], &["*/status"], &["update"]);
        let gr = GroupResource::new("apps", "deployments");
        let a = Attributes {
            user: "u",
            verb: "update",
            gr: &gr,
            subresource: Some(Subresource::Status),
            namespace: "",
            name: "",
        };
        assert!(rule_allows(&r, &a, &a.resource_string()));
        let r = rule(&["apps"], &["deployments/*"], &["update"]);
        assert!(!rule_allows(&r, &a, &a.resource_string()));
        let r = rule(&["apps"], &["deployments"], &["update"]);
        assert!(!rule_allows(&r, &a, &a.resource_string()));
    }

    #[test]
    fn a_binding_to_a_missing_role_is_reported_in_the_denial() {
        let mut s = store_with_policy();
        s.remove(&ObjectKey::new(rbac("clusterroles"), "", USER_ROLE));
        let gr = GroupResource::new("apps", "deployments");
        let a = Attributes {
            user: "alice",
            verb: "get",
            gr: &gr,
            subresource: None,
            namespace: "default",
            name: "web",
        };
        let errs = check(&s, &a).unwrap_err();
        assert_eq!(
            denial_reason_with_errors(&a, &errs),
            "User \"alice\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"default\": RBAC: clusterrole.rbac.authorization.k8s.io \"converge:spec-editor\" not found"
        );
        let mallory = Attributes {
            user: "mallory",
            ..a.clone()
        };
        assert_eq!(
            check(&s, &mallory),
            Err(vec![]),
            "only bindings naming the user count"
        );
    }

    #[test]
    fn denial_reasons_read_like_kube() {
        let gr = GroupResource::new("apps", "deployments");
        let a = Attributes {
            user: "alice",
            verb: "update",
            gr: &gr,
            subresource: Some(Subresource::Status),
            namespace: "default",
            name: "web",
        };
        assert_eq!(
            denial_reason(&a),
            "User \"alice\" cannot update resource \"deployments/status\" in API group \"apps\" in the namespace \"default\""
        );
        let nodes = GroupResource::new("", "nodes");
        let a = Attributes {
            user: "bob",
            verb: "delete",
            gr: &nodes,
            subresource: None,
            namespace: "",
            name: "n",
        };
        assert_eq!(
            denial_reason(&a),
            "User \"bob\" cannot delete resource \"nodes\" in API group \"\" at the cluster scope"
        );
    }
}
