//! The wire-level vocabulary of the simulated API server: requests, responses, errors, watch
//! events and audit entries. These are the contract between the API server, the engine, the
//! controllers, the CLI and the web view; they mirror kube-apiserver's REST shapes.

use std::cell::RefCell;
use std::sync::Arc;

use crate::json::Value;
use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// The strings of an object's key (group, resource, namespace, name): up to 24 bytes are held
/// inline, so keys of a large world compare and clone without touching the heap, and an ordered
/// map's lookups do not chase a pointer per field (BENCHMARKS.md, "Object keys").
pub type Name = compact_str::CompactString;

/// Serializes [`SimTime`] as its integer milliseconds (works whether or not `SimTime` itself
/// implements serde's traits).
mod sim_time_ms {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::time::SimTime;

    pub fn serialize<S: Serializer>(t: &SimTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(t.as_ms())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimTime, D::Error> {
        u64::deserialize(d).map(SimTime::from_ms)
    }
}

/// A REST resource: API group (empty for the core group) and lower-case plural, e.g.
/// `apps`/`deployments`, ``/`pods`, `example.com`/`databases`.
///
/// Interned: every `GroupResource` with the same strings shares one allocation (a table per
/// thread, in [`GroupResource::new`] and deserialization), so the ordered maps' key
/// comparisons, which find the same resource on both sides almost always, answer `Equal` from
/// the pointers without comparing strings, and a key's clone copies a pointer. Order, equality
/// and hashing are the strings' (`GroupResourceParts`'): the pointers only shortcut them.
#[derive(Clone)]
pub struct GroupResource(Arc<GroupResourceParts>);

/// The strings of a [`GroupResource`], read through it (`gr.group`, `gr.resource`).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupResourceParts {
    pub group: Name,
    pub resource: Name,
}

thread_local! {
    /// The interned resources, sorted by their strings. A program names a few dozen; requests
    /// for unknown resources add theirs, up to [`INTERNED_PER_TABLE`].
    static INTERNED: RefCell<Vec<Arc<GroupResourceParts>>> = const { RefCell::new(Vec::new()) };
}

/// How many texts a thread's interning table ([`GroupResource`]'s, [`Namespace`]'s) holds:
/// beyond them (a `converge serve` client asking for ever new resources or namespaces) a new
/// one is an allocation of its own, equal and ordered by its strings as any other, so a table
/// neither grows without bound nor slows its inserts.
const INTERNED_PER_TABLE: usize = 4096;

/// The entry of `table` (sorted by `order`, the entry's order against the one wanted) that
/// `order` finds equal, else `make`'s, kept in the table while it has room.
fn intern<T: ?Sized>(
    table: &'static std::thread::LocalKey<RefCell<Vec<Arc<T>>>>,
    order: impl Fn(&T) -> std::cmp::Ordering,
    make: impl FnOnce() -> Arc<T>,
) -> Arc<T> {
    table.with(|table| {
        let mut table = table.borrow_mut();
        match table.binary_search_by(|t| order(t)) {
            Ok(i) => Arc::clone(&table[i]),
            Err(_) if table.len() >= INTERNED_PER_TABLE => make(),
            Err(i) => {
                let t = make();
                table.insert(i, Arc::clone(&t));
                t
            }
        }
    })
}

impl GroupResource {
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource(intern(
            &INTERNED,
            |p| {
                p.group
                    .as_str()
                    .cmp(group)
                    .then_with(|| p.resource.as_str().cmp(resource))
            },
            || {
                Arc::new(GroupResourceParts {
                    group: group.into(),
                    resource: resource.into(),
                })
            },
        ))
    }

    /// `v1/Event`'s resource, `events` in the core group.
    pub fn events() -> Self {
        crate::group_resource!("", "events")
    }

    /// Whether this is [`Self::events`].
    pub fn is_events(&self) -> bool {
        self.group.is_empty() && self.resource == "events"
    }

    /// `deployments.apps`, or `pods` for the core group: the form kube's messages use.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// A [`GroupResource`] of two constant strings, interned once per thread at the call site: a
/// reference count where [`GroupResource::new`] searches the table. For the helpers such as
/// `pods()`, which every controller's `watches` calls on every watch event; each use adds a
/// thread-local to the wasm, so not for call sites that run rarely.
#[macro_export]
macro_rules! group_resource {
    ($group:expr, $resource:expr) => {{
        ::std::thread_local! {
            static INTERNED: $crate::api::GroupResource =
                $crate::api::GroupResource::new($group, $resource);
        }
        INTERNED.with(::std::clone::Clone::clone)
    }};
}

impl std::ops::Deref for GroupResource {
    type Target = GroupResourceParts;

    fn deref(&self) -> &GroupResourceParts {
        &self.0
    }
}

impl PartialEq for GroupResource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for GroupResource {}

impl PartialOrd for GroupResource {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for GroupResource {
    /// Inline for the pointer compare, which answers nearly every call (the keys a lookup
    /// meets are mostly of its own resource); the texts are compared out of line.
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            std::cmp::Ordering::Equal
        } else {
            Self::cmp_texts(&self.0, &other.0)
        }
    }
}

impl GroupResource {
    /// The parts' derived order, a word at a time (a store's B-tree compares a Pod's key with
    /// Events' on its way down).
    #[inline(never)]
    fn cmp_texts(a: &GroupResourceParts, b: &GroupResourceParts) -> std::cmp::Ordering {
        cmp_bytes(a.group.as_bytes(), b.group.as_bytes())
            .then_with(|| cmp_bytes(a.resource.as_bytes(), b.resource.as_bytes()))
    }
}

impl std::hash::Hash for GroupResource {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl std::fmt::Debug for GroupResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupResource")
            .field("group", &self.group)
            .field("resource", &self.resource)
            .finish()
    }
}

impl Serialize for GroupResource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for GroupResource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parts = GroupResourceParts::deserialize(d)?;
        Ok(GroupResource::new(&parts.group, &parts.resource))
    }
}

/// A namespace's name, interned: every key in one namespace holds the same text, so two keys'
/// namespaces compare as two pointers (the stores' B-trees compare keys a dozen times a lookup,
/// nearly always within one namespace), and a key holds one word, not a 24-byte string. Equal,
/// ordered and hashed as its text; a text interned on another thread is a different pointer
/// and compares by its bytes.
#[derive(Clone)]
pub struct Namespace(Arc<str>);

thread_local! {
    static NAMESPACES: RefCell<Vec<Arc<str>>> = const { RefCell::new(Vec::new()) };
}

impl Namespace {
    pub fn new(text: &str) -> Self {
        Namespace(intern(
            &NAMESPACES,
            |t| cmp_bytes(t.as_bytes(), text.as_bytes()),
            || Arc::from(text),
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Namespace {
    fn default() -> Self {
        Namespace::new("")
    }
}

impl std::ops::Deref for Namespace {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Namespace {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Namespace {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Namespace {
    fn from(text: &str) -> Self {
        Namespace::new(text)
    }
}

impl From<&String> for Namespace {
    fn from(text: &String) -> Self {
        Namespace::new(text)
    }
}

impl From<String> for Namespace {
    fn from(text: String) -> Self {
        Namespace::new(&text)
    }
}

impl From<&Name> for Namespace {
    fn from(text: &Name) -> Self {
        Namespace::new(text)
    }
}

impl PartialEq for Namespace {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for Namespace {}

impl PartialEq<str> for Namespace {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Namespace {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Namespace {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<Name> for Namespace {
    fn eq(&self, other: &Name) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<Namespace> for str {
    fn eq(&self, other: &Namespace) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Namespace> for &str {
    fn eq(&self, other: &Namespace) -> bool {
        *self == &*other.0
    }
}

impl PartialOrd for Namespace {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Namespace {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            std::cmp::Ordering::Equal
        } else {
            cmp_bytes(self.0.as_bytes(), other.0.as_bytes())
        }
    }
}

impl std::hash::Hash for Namespace {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl std::fmt::Debug for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for Namespace {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Namespace {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Namespace::new(&Name::deserialize(d)?))
    }
}

/// Identifies one stored object. `namespace` is empty for cluster-scoped objects.
///
/// Ordered by resource, namespace, then name, each as its string (a derived `Ord`'s order).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ObjectKey {
    pub gr: GroupResource,
    pub namespace: Namespace,
    pub name: Name,
}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ObjectKey {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.gr
            .cmp(&other.gr)
            .then_with(|| self.namespace.cmp(&other.namespace))
            .then_with(|| cmp_bytes(self.name.as_bytes(), other.name.as_bytes()))
    }
}

/// `a.cmp(b)` (byte-wise lexicographic), a word at a time in place of a `memcmp` call. The
/// stores' and caches' B-trees compare keys a dozen times per lookup; their namespaces and names
/// are a few dozen bytes and share long prefixes (`default`, `web-7d4b9c8f6-`), where the call
/// cost more than the comparing (natively a libc call per string; in wasm a byte loop).
///
/// Equal words are told apart by a plain compare; only the first word that differs is looked
/// into, at its first differing byte (read little-endian, the lowest set bit of the two words'
/// difference: wasm has no byte swap, so reading every word big-endian cost a dozen
/// instructions a word there). The last word is the one ending at the shorter length,
/// overlapping bytes already found equal, so its first difference is the first difference of
/// all; strings shorter than eight bytes take two overlapping halves.
#[inline]
fn cmp_bytes(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        s[at..at + N].try_into().expect("N bytes")
    }
    /// The order of two little-endian words by their first differing byte.
    #[inline]
    fn first_difference(x: u64, y: u64) -> std::cmp::Ordering {
        if x == y {
            return std::cmp::Ordering::Equal;
        }
        let shift = (x ^ y).trailing_zeros() & !7;
        ((x >> shift) as u8).cmp(&((y >> shift) as u8))
    }
    let n = a.len().min(b.len());
    let ord = if n >= 8 {
        let w = |s: &[u8], at| u64::from_le_bytes(word(s, at));
        let mut at = 0;
        loop {
            let at_end = at + 8 >= n;
            if at_end {
                at = n - 8;
            }
            let (x, y) = (w(a, at), w(b, at));
            if x != y {
                break first_difference(x, y);
            }
            if at_end {
                break std::cmp::Ordering::Equal;
            }
            at += 8;
        }
    } else if n >= 4 {
        let w = |s: &[u8], at| u64::from(u32::from_le_bytes(word(s, at)));
        // The two halves in one word, the first half's bytes first.
        let (x, y) = (w(a, 0) | w(a, n - 4) << 32, w(b, 0) | w(b, n - 4) << 32);
        first_difference(x, y)
    } else if n >= 2 {
        let w = |s: &[u8], at| u64::from(u16::from_le_bytes(word(s, at)));
        let (x, y) = (w(a, 0) | w(a, n - 2) << 16, w(b, 0) | w(b, n - 2) << 16);
        first_difference(x, y)
    } else if n == 1 {
        a[0].cmp(&b[0])
    } else {
        std::cmp::Ordering::Equal
    };
    ord.then(a.len().cmp(&b.len()))
}

impl ObjectKey {
    pub fn new(gr: GroupResource, namespace: &str, name: &str) -> Self {
        ObjectKey {
            gr,
            namespace: namespace.into(),
            name: name.into(),
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
    /// `autoscaling/v1` Scale of a Deployment or ReplicaSet: its `spec.replicas`.
    Scale,
}

impl Subresource {
    /// The path segment and RBAC name: `status`, `scale`.
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Scale => "scale",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    #[serde(rename = "merge")]
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    #[serde(rename = "json")]
    Json,
    /// `application/strategic-merge-patch+json`: merge keys per list (built-in kinds only).
    #[serde(rename = "strategic")]
    Strategic,
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
    /// No valid credentials (401).
    Unauthorized,
    /// A watch from a resourceVersion the server no longer has (410).
    Expired,
    RequestEntityTooLarge,
    UnsupportedMediaType,
    InternalError,
    ServiceUnavailable,
    /// The request did not complete in time (504).
    Timeout,
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
            StatusReason::Unauthorized => 401,
            StatusReason::Expired => 410,
            StatusReason::RequestEntityTooLarge => 413,
            StatusReason::UnsupportedMediaType => 415,
            StatusReason::InternalError => 500,
            StatusReason::ServiceUnavailable => 503,
            StatusReason::Timeout => 504,
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

    /// Whether this is NamespaceLifecycle's refusal in a terminating namespace (kube's
    /// `HasStatusCause(err, NamespaceTerminatingCause)`; the simulation's errors carry no status
    /// causes but Invalid's, so the message tells).
    pub fn namespace_terminating(&self) -> bool {
        self.reason == StatusReason::Forbidden
            && self.message.ends_with("because it is being terminated")
    }
}

/// The server's answer: the object (or list) on success, the failure otherwise.
pub type ApiResult = Result<std::sync::Arc<Value>, ApiError>;

/// The HTTP status code and message an answer to `verb` carries: 201 for a created object,
/// 200 for any other success, the error's own code and message otherwise (audit entries and
/// the engine's request records both show it).
pub fn response_status(verb: Verb, result: &ApiResult) -> (u16, String) {
    match result {
        Ok(_) if verb == Verb::Create => (201, String::new()),
        Ok(_) => (200, String::new()),
        Err(e) => (e.code(), e.message.clone()),
    }
}

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
    /// The store's own key, shared: the informers' and the world's maps hold it, not a copy
    /// each (serialized as the key).
    pub key: Arc<ObjectKey>,
    /// The object after the write (for DELETED: its last state).
    pub object: Value,
    pub resource_version: u64,
    /// When the write was persisted.
    #[serde(with = "sim_time_ms")]
    pub time: SimTime,
}

/// One audit log entry; every request, allowed or refused, gets one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    #[serde(with = "sim_time_ms")]
    pub time: SimTime,
    // Names, inline up to 24 bytes: the log holds one entry per request.
    pub principal: Name,
    pub verb: Verb,
    pub gr: GroupResource,
    pub subresource: Option<Subresource>,
    pub namespace: Name,
    pub name: Name,
    pub code: u16,
    /// Empty on success; kube's message on refusal.
    pub message: String,
    /// The object's resourceVersion before and after (0 when absent).
    pub rv_before: u64,
    pub rv_after: u64,
}

/// Request builders: one per verb and subresource, the way a typed client offers them.
impl ApiRequest {
    fn base(principal: &str, verb: Verb, gr: GroupResource, namespace: &str, name: &str) -> Self {
        ApiRequest {
            principal: principal.to_owned(),
            verb,
            gr,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            subresource: None,
            body: RequestBody::None,
            label_selector: None,
        }
    }

    /// `POST`: create `body` in `namespace` (empty: the body's namespace, else `default`, for
    /// namespaced kinds; ignored for cluster-scoped ones). The name comes from the body
    /// (`metadata.name`, or `metadata.generateName` plus a server-chosen suffix).
    pub fn create(principal: &str, gr: GroupResource, namespace: &str, body: Value) -> Self {
        let mut r = Self::base(principal, Verb::Create, gr, namespace, "");
        r.body = RequestBody::Object(body);
        r
    }

    /// `GET` one object.
    pub fn get(principal: &str, gr: GroupResource, namespace: &str, name: &str) -> Self {
        Self::base(principal, Verb::Get, gr, namespace, name)
    }

    /// `GET .../status`.
    pub fn get_status(principal: &str, gr: GroupResource, namespace: &str, name: &str) -> Self {
        let mut r = Self::base(principal, Verb::Get, gr, namespace, name);
        r.subresource = Some(Subresource::Status);
        r
    }

    /// `LIST` in one namespace (empty: all namespaces, or a cluster-scoped resource), optionally
    /// filtered by a label selector in kube's string form (`app=web,tier in (a,b),!canary`).
    pub fn list(
        principal: &str,
        gr: GroupResource,
        namespace: &str,
        label_selector: Option<&str>,
    ) -> Self {
        let mut r = Self::base(principal, Verb::List, gr, namespace, "");
        r.label_selector = label_selector.map(str::to_owned);
        r
    }

    /// `PUT`: replace the main resource (status is ignored when the kind has a status
    /// subresource).
    pub fn update(
        principal: &str,
        gr: GroupResource,
        namespace: &str,
        name: &str,
        body: Value,
    ) -> Self {
        let mut r = Self::base(principal, Verb::Update, gr, namespace, name);
        r.body = RequestBody::Object(body);
        r
    }

    /// `PUT .../status`: replace the status (spec and most metadata are ignored).
    pub fn update_status(
        principal: &str,
        gr: GroupResource,
        namespace: &str,
        name: &str,
        body: Value,
    ) -> Self {
        let mut r = Self::update(principal, gr, namespace, name, body);
        r.subresource = Some(Subresource::Status);
        r
    }

    /// `PATCH` the main resource with a merge patch or a JSON patch.
    pub fn patch(
        principal: &str,
        gr: GroupResource,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: Value,
    ) -> Self {
        let mut r = Self::base(principal, Verb::Patch, gr, namespace, name);
        r.body = RequestBody::Patch(patch_type, patch);
        r
    }

    /// `PATCH .../status`.
    pub fn patch_status(
        principal: &str,
        gr: GroupResource,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: Value,
    ) -> Self {
        let mut r = Self::patch(principal, gr, namespace, name, patch_type, patch);
        r.subresource = Some(Subresource::Status);
        r
    }

    /// `DELETE` with background propagation (dependents are garbage-collected afterwards).
    pub fn delete(principal: &str, gr: GroupResource, namespace: &str, name: &str) -> Self {
        Self::base(principal, Verb::Delete, gr, namespace, name)
    }

    /// `DELETE` with `DeleteOptions` (`propagationPolicy: Orphan|Background|Foreground`,
    /// `preconditions: {uid, resourceVersion}`).
    pub fn delete_with_options(
        principal: &str,
        gr: GroupResource,
        namespace: &str,
        name: &str,
        options: Value,
    ) -> Self {
        let mut r = Self::base(principal, Verb::Delete, gr, namespace, name);
        r.body = RequestBody::Object(options);
        r
    }

    /// The scheduler's binding: `POST /api/v1/namespaces/{ns}/bindings` with a `v1/Binding`
    /// whose target is the node. The server sets the pod's `spec.nodeName` and its
    /// `PodScheduled=True` condition, as kube's binding REST does.
    pub fn bind(principal: &str, namespace: &str, pod: &str, node: &str) -> Self {
        Self::create(
            principal,
            GroupResource::new("", "bindings"),
            namespace,
            crate::json::json!({
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": pod, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            }),
        )
    }

    /// The same request sent by another principal.
    pub fn as_principal(mut self, principal: &str) -> Self {
        self.principal = principal.to_owned();
        self
    }
}

impl ApiError {
    /// A refusal with no details (used for request-level errors such as BadRequest).
    pub fn new(reason: StatusReason, message: impl Into<String>) -> Self {
        ApiError {
            reason,
            message: message.into(),
            details_name: String::new(),
            details_group: String::new(),
            details_kind: String::new(),
            causes: Vec::new(),
        }
    }

    /// kube's `metav1.Status` failure object for this error, as the API server sends it.
    pub fn to_status(&self) -> Value {
        let mut details = crate::json::Map::new();
        if !self.details_name.is_empty() {
            details.insert("name", Value::from(self.details_name.clone()));
        }
        if !self.details_group.is_empty() {
            details.insert("group", Value::from(self.details_group.clone()));
        }
        if !self.details_kind.is_empty() {
            details.insert("kind", Value::from(self.details_kind.clone()));
        }
        if !self.causes.is_empty() {
            let causes: Vec<Value> = self
                .causes
                .iter()
                .map(|(field, message)| crate::json::json!({"field": field, "message": message}))
                .collect();
            details.insert("causes", Value::from(causes));
        }
        let mut status = crate::json::json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": format!("{:?}", self.reason),
            "code": self.code(),
        });
        if !details.is_empty() {
            status["details"] = Value::Object(details);
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The strings' order, equality and hash, whatever the pointers: `GroupResource`'s
    /// comparisons only shortcut them.
    fn strings(gr: &GroupResource) -> (String, String) {
        (gr.group.to_string(), gr.resource.to_string())
    }

    fn hash_of(gr: &GroupResource) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        BuildHasherDefault::<DefaultHasher>::default().hash_one(gr)
    }

    #[test]
    fn equal_resources_share_one_allocation_and_serialize_as_before() {
        let a = GroupResource::new("apps", "deployments");
        let b = crate::group_resource!("apps", "deployments");
        let c: GroupResource = crate::json::from_value(
            crate::json::json!({"group": "apps", "resource": "deployments"}),
        )
        .unwrap();
        assert!(Arc::ptr_eq(&a.0, &b.0) && Arc::ptr_eq(&a.0, &c.0));
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"group":"apps","resource":"deployments"}"#
        );
        assert_eq!(
            format!("{a:?}"),
            r#"GroupResource { group: "apps", resource: "deployments" }"#
        );
    }

    /// Past the thread's table, a namespace is a text of its own that still equals and orders
    /// as its text, and the table stops growing; it prints as a `str` does, padding included.
    #[test]
    fn namespaces_past_the_table_answer_as_their_texts() {
        let first = Namespace::new("a");
        for i in 0..INTERNED_PER_TABLE + 10 {
            Namespace::new(&format!("ns-{i:05}"));
        }
        assert_eq!(NAMESPACES.with(|t| t.borrow().len()), INTERNED_PER_TABLE);
        let late = Namespace::new("zz-late");
        let late_again = Namespace::new("zz-late");
        assert!(!Arc::ptr_eq(&late.0, &late_again.0), "not interned");
        assert_eq!(late, late_again);
        assert!(first < late && late > Namespace::new("ns-00001"));
        assert!(
            Arc::ptr_eq(&Namespace::new("a").0, &first.0),
            "still interned"
        );
        assert_eq!(format!("[{:>4}]", Namespace::new("ab")), "[  ab]");
    }

    /// The same bound on the resources' table: past it a resource is an allocation of its own
    /// that equals and orders as its strings.
    #[test]
    fn resources_past_the_table_answer_as_their_strings() {
        let pods = GroupResource::new("", "pods");
        for i in 0..INTERNED_PER_TABLE + 10 {
            GroupResource::new("example.com", &format!("r{i:05}"));
        }
        assert_eq!(INTERNED.with(|t| t.borrow().len()), INTERNED_PER_TABLE);
        let late = GroupResource::new("zz.example.com", "late");
        let late_again = GroupResource::new("zz.example.com", "late");
        assert!(!Arc::ptr_eq(&late.0, &late_again.0), "not interned");
        assert_eq!(late, late_again);
        assert!(pods < late);
        assert!(
            Arc::ptr_eq(&GroupResource::new("", "pods").0, &pods.0),
            "still interned"
        );
    }

    proptest! {
        #[test]
        fn order_equality_and_hash_are_the_strings(
            g1 in "[a-c.]{0,3}", r1 in "[a-c]{0,3}", g2 in "[a-c.]{0,3}", r2 in "[a-c]{0,3}",
        ) {
            let (a, b) = (GroupResource::new(&g1, &r1), GroupResource::new(&g2, &r2));
            // Not interned: built from the strings directly, as another thread's table would.
            let b_alone = GroupResource(Arc::new(GroupResourceParts {
                group: g2.as_str().into(),
                resource: r2.as_str().into(),
            }));
            for other in [&b, &b_alone] {
                prop_assert_eq!(a.cmp(other), strings(&a).cmp(&strings(other)));
                prop_assert_eq!(a == *other, strings(&a) == strings(other));
                if a == *other {
                    prop_assert_eq!(hash_of(&a), hash_of(other));
                }
            }
        }

        /// A namespace and a key order, equal and hash as their texts, interned or not (a
        /// namespace interned on another thread is another pointer).
        #[test]
        fn namespaces_and_keys_answer_as_their_texts(
            n1 in "[a-c\u{0}]{0,9}", n2 in "[a-c\u{0}]{0,9}", m1 in "[a-c]{0,9}", m2 in "[a-c]{0,9}",
        ) {
            let a = Namespace::new(&n1);
            let alone = Namespace(Arc::from(n2.as_str()));
            for b in [Namespace::new(&n2), alone] {
                prop_assert_eq!(a.cmp(&b), n1.cmp(&n2));
                prop_assert_eq!(a == b, n1 == n2);
                prop_assert_eq!(a.as_str(), n1.as_str());
                if a == b {
                    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
                    let h = BuildHasherDefault::<DefaultHasher>::default();
                    prop_assert_eq!(h.hash_one(&a), h.hash_one(&b));
                    prop_assert_eq!(h.hash_one(&a), h.hash_one(Name::from(n1.as_str())));
                }
                let gr = GroupResource::new("", "pods");
                let ka = ObjectKey { gr: gr.clone(), namespace: a.clone(), name: m1.as_str().into() };
                let kb = ObjectKey { gr, namespace: b, name: m2.as_str().into() };
                prop_assert_eq!(ka.cmp(&kb), (&n1, &m1).cmp(&(&n2, &m2)));
                prop_assert_eq!(ka == kb, (&n1, &m1) == (&n2, &m2));
            }
        }

        /// `cmp_bytes` is the slices' order for any bytes: two bytes changed at any places
        /// (the first difference decides, not a later one in the same word), either way, at
        /// every length around the word steps.
        #[test]
        fn byte_order_is_the_slices_order(
            a in proptest::collection::vec(any::<u8>(), 0..40),
            at in 0usize..40,
            by in any::<u8>(),
            later in 1usize..8,
            by_later in any::<u8>(),
            cut in 0usize..41,
        ) {
            let mut b = a.clone();
            for (i, v) in [(at, by), (at + later, by_later)] {
                if let Some(x) = b.get_mut(i) {
                    *x = v;
                }
            }
            b.truncate(cut.max(at.min(b.len())));
            prop_assert_eq!(cmp_bytes(&a, &b), a.cmp(&b));
            prop_assert_eq!(cmp_bytes(&b, &a), b.cmp(&a));
            prop_assert_eq!(cmp_bytes(&a, &a), std::cmp::Ordering::Equal);
        }

        /// Keys order as the tuple of their strings: what a derived `Ord` gave. Names mix
        /// lengths around the eight-byte steps, shared prefixes, NUL and bytes above 0x7f.
        #[test]
        fn keys_order_as_their_strings(
            r1 in "[ab]{1,2}", n1 in "[a\\x00\\xff-]{0,9}", m1 in "(web-7d4b9c8f6-|x)?[a\\x00\\xff-]{0,20}",
            r2 in "[ab]{1,2}", n2 in "[a\\x00\\xff-]{0,9}", m2 in "(web-7d4b9c8f6-|x)?[a\\x00\\xff-]{0,20}",
        ) {
            let a = ObjectKey::new(GroupResource::new("", &r1), &n1, &m1);
            let b = ObjectKey::new(GroupResource::new("", &r2), &n2, &m2);
            let strings = |k: &ObjectKey| {
                (k.gr.resource.to_string(), k.namespace.to_string(), k.name.to_string())
            };
            prop_assert_eq!(a.cmp(&b), strings(&a).cmp(&strings(&b)));
            prop_assert_eq!(a.cmp(&b) == std::cmp::Ordering::Equal, a == b);
            prop_assert_eq!(b.cmp(&a), a.cmp(&b).reverse());
        }
    }
}
