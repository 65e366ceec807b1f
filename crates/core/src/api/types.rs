//! The wire-level vocabulary of the simulated API server: requests, responses, errors, watch
//! events and audit entries. These are the contract between the API server, the engine, the
//! controllers, the CLI and the web view; they mirror kube-apiserver's REST shapes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::time::SimTime;

/// A REST resource: API group (empty for the core group) and lower-case plural, e.g.
/// `apps`/`deployments`, ``/`pods`, `example.com`/`databases`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupResource {
    pub group: String,
    pub resource: String,
}

impl GroupResource {
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.to_owned(),
            resource: resource.to_owned(),
        }
    }

    /// `deployments.apps`, or `pods` for the core group: the form kube's messages use.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// Identifies one stored object. `namespace` is empty for cluster-scoped objects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectKey {
    pub gr: GroupResource,
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(gr: GroupResource, namespace: &str, name: &str) -> Self {
        ObjectKey {
            gr,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// `deployments/default/web` (namespaced) or `nodes/node-1` (cluster-scoped); the form
    /// scenario files use to name targets.
    pub fn path(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}/{}", self.gr.resource, self.name)
        } else {
            format!("{}/{}/{}", self.gr.resource, self.namespace, self.name)
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    Get,
    List,
    Create,
    Update,
    Patch,
    Delete,
}

impl Verb {
    /// The RBAC verb, as kube's authorizer names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subresource {
    Status,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    #[serde(rename = "merge")]
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    #[serde(rename = "json")]
    Json,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RequestBody {
    None,
    Object(Value),
    Patch(PatchType, Value),
}

/// One API request, as a client (user, controller, kubelet) sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiRequest {
    /// The authenticated user name, e.g. `alice` or
    /// `system:serviceaccount:kube-system:deployment-controller`.
    pub principal: String,
    pub verb: Verb,
    pub gr: GroupResource,
    /// Empty for cluster-scoped resources (and for list across all namespaces).
    pub namespace: String,
    /// Empty for create (taken from the body) and list.
    pub name: String,
    pub subresource: Option<Subresource>,
    pub body: RequestBody,
    /// For list: a label selector in kube's string form (`app=web,tier!=db`).
    pub label_selector: Option<String>,
}

/// kube's `metav1.StatusReason` values the simulator produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatusReason {
    NotFound,
    AlreadyExists,
    Conflict,
    Forbidden,
    Invalid,
    BadRequest,
    MethodNotAllowed,
    InternalError,
    ServiceUnavailable,
}

impl StatusReason {
    pub fn code(self) -> u16 {
        match self {
            StatusReason::NotFound => 404,
            StatusReason::AlreadyExists | StatusReason::Conflict => 409,
            StatusReason::Forbidden => 403,
            StatusReason::Invalid => 422,
            StatusReason::BadRequest => 400,
            StatusReason::MethodNotAllowed => 405,
            StatusReason::InternalError => 500,
            StatusReason::ServiceUnavailable => 503,
        }
    }
}

/// A refused request: kube's `metav1.Status` failure, with the exact message a real API server
/// sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub reason: StatusReason,
    pub message: String,
    /// `details.name`, `details.group`, `details.kind` (kube puts the plural resource in `kind`
    /// for Conflict/Forbidden, the Kind for Invalid).
    pub details_name: String,
    pub details_group: String,
    pub details_kind: String,
    /// For Invalid: one entry per field error, `(field, message)`.
    pub causes: Vec<(String, String)>,
}

impl ApiError {
    pub fn code(&self) -> u16 {
        self.reason.code()
    }
}

/// The server's answer: the object (or list) on success, the failure otherwise.
pub type ApiResult = Result<Value, ApiError>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum WatchEventType {
    Added,
    Modified,
    Deleted,
}

/// One watch event, emitted for every persisted write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchEvent {
    pub event_type: WatchEventType,
    pub key: ObjectKey,
    /// The object after the write (for DELETED: its last state).
    pub object: Value,
    pub resource_version: u64,
    /// When the write was persisted.
    pub time: SimTime,
}

/// One audit log entry; every request, allowed or refused, gets one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub time: SimTime,
    pub principal: String,
    pub verb: Verb,
    pub gr: GroupResource,
    pub subresource: Option<Subresource>,
    pub namespace: String,
    pub name: String,
    pub code: u16,
    /// Empty on success; kube's message on refusal.
    pub message: String,
    /// The object's resourceVersion before and after (0 when absent).
    pub rv_before: u64,
    pub rv_after: u64,
}
