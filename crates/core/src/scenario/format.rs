//! The scenario file format, version `converge.dev/v1`: plain serde structs that read from and
//! write to JSON or YAML with the same field names. Unknown fields are refused
//! (`deny_unknown_fields`) so a typo never silently does nothing.

use std::fmt;

use crate::json::Value;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The only `apiVersion` this build writes; every version listed in
/// [`super::SUPPORTED_VERSIONS`] loads.
pub const API_VERSION: &str = "converge.dev/v1";
pub const KIND: &str = "Scenario";

/// One scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scenario {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// How long `converge run` runs by default: `converged` or a duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
    #[serde(default)]
    pub cluster: Cluster,
    /// How container images behave from t=0 (the default: every image pulls and runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbac: Option<Rbac>,
    /// Kubernetes objects created at t=0 by `admin`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<TimedRequest>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    /// A narrated lesson over this scenario (optional; added within v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<Lesson>,
}

fn default_seed() -> u64 {
    1
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The simulated cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cluster {
    #[serde(default = "default_nodes")]
    pub nodes: Vec<Node>,
    /// Watch delivery latency of every controller's informer (default 5ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_latency: Option<Duration>,
    /// Controllers that do not run, by name (`horizontal-pod-autoscaler`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_controllers: Vec<String>,
    /// Runs the naive controller that copies status into spec on this resource
    /// (`databases.example.com`): the feedback-loop lesson.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naive_controller: Option<String>,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            nodes: default_nodes(),
            watch_latency: None,
            disabled_controllers: Vec::new(),
            naive_controller: None,
        }
    }
}

fn default_nodes() -> Vec<Node> {
    (1..=3)
        .map(|i| Node {
            name: format!("node-{i}"),
            cpu: Quantity("4".into()),
            memory: Quantity("8Gi".into()),
            pods: default_pods(),
        })
        .collect()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Node {
    pub name: String,
    pub cpu: Quantity,
    pub memory: Quantity,
    #[serde(default = "default_pods")]
    pub pods: u64,
}

fn default_pods() -> u64 {
    110
}

/// A Kubernetes quantity written as a string (`500m`, `8Gi`) or a plain number (`4`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Quantity(pub String);

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct QuantityVisitor;
        impl serde::de::Visitor<'_> for QuantityVisitor {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity such as 4, 500m or 8Gi")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Quantity, E> {
                let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
                if digits.is_empty() || digits.parse::<f64>().map_or(true, |v| v < 0.0) {
                    return Err(E::custom(format!(
                        "invalid quantity {s:?}: expected a quantity such as 4, 500m or 8Gi"
                    )));
                }
                Ok(Quantity(s.to_owned()))
            }
            fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<Quantity, E> {
                Ok(Quantity(u.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<Quantity, E> {
                self.visit_str(&i.to_string())
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Quantity, E> {
                self.visit_str(&f.to_string())
            }
        }
        d.deserialize_any(QuantityVisitor)
    }
}

/// How an image behaves when a kubelet pulls and runs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageRule {
    pub image: String,
    pub behaviour: ImageBehaviourName,
    /// For `ok`: how long the pull takes (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_time: Option<Duration>,
    /// For `crashes` and `completes`: how long the container runs before exiting with code 1
    /// or 0 (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_time: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ImageBehaviourName {
    Ok,
    PullFails,
    Crashes,
    Completes,
    ProbeFails,
}

/// RBAC overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rbac {
    /// `false` switches RBAC enforcement off: every principal may do everything.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enforce: bool,
    /// Extra Roles, ClusterRoles, RoleBindings, ClusterRoleBindings, created by `admin` at t=0
    /// before `objects`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<Value>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A fault at a time: exactly one of the optional fields is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FaultEntry {
    /// A name for `causedBy: {fault: <id>}` expectations (added within v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub at: Duration,
    /// The controller stops taking work; its informer keeps queueing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// The controller process dies: queue and cache are lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<String>,
    /// A crashed controller starts again and re-lists everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_latency: Option<WatchLatency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_failures: Option<ApiFailures>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub clear_api_failures: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_failure: Option<ImagePullFailure>,
    /// An image changes behaviour from this time on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageRule>,
    /// The simulated CPU demand of a Deployment, which the autoscaler reads as its metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
    /// Switches RBAC enforcement on or off from this time on (added within v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbac: Option<RbacSwitch>,
    /// A node joins the cluster (added within v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_node: Option<Node>,
    /// A node leaves the cluster: its kubelet stops and its Node is deleted (added within v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_node: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RbacSwitch {
    /// `false`: every principal may do everything, as with `rbac.enforce: false`.
    pub enforce: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WatchLatency {
    /// One controller, or every controller when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    pub delay: Duration,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApiFailures {
    /// Only this principal's requests fail; anyone's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    pub count: u32,
    /// 409, 500 or 503.
    pub code: u16,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImagePullFailure {
    pub node: String,
    #[serde(default = "yes")]
    pub failing: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Load {
    /// A Deployment: `deployments/default/web`.
    pub target: String,
    /// Total CPU demand, e.g. `250m` or `1`.
    pub cpu: Quantity,
}

/// The API verbs an action may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionVerb {
    Get,
    List,
    Create,
    Update,
    Patch,
    Delete,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchKind {
    /// `application/merge-patch+json`.
    #[default]
    Merge,
    /// `application/json-patch+json`: a list of operations.
    Json,
}

/// A request sent at a time, as a principal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimedRequest {
    /// A name for expectations (`action: <id>`) and `bodyFrom` to refer to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub at: Duration,
    /// The principal (default `alice`).
    #[serde(rename = "as", default = "default_principal")]
    pub principal: String,
    pub verb: ActionVerb,
    /// `deployments/default/web`, optionally `/status`; `nodes/node-1` for cluster-scoped
    /// resources; `resource.group/...` to name a group.
    pub target: String,
    /// The object for create and update (delete: `DeleteOptions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// For update: start from the object an earlier action (by id) read or wrote, as a client
    /// holding a copy would (its resourceVersion included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_from: Option<String>,
    /// For patch: the patch; for update with `bodyFrom`: a merge patch applied to the copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub patch_type: PatchKind,
}

fn default_principal() -> String {
    "alice".into()
}

/// The kstatus verdicts an expectation can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KstatusName {
    InProgress,
    Failed,
    Current,
    Terminating,
}

impl KstatusName {
    pub fn as_str(self) -> &'static str {
        match self {
            KstatusName::InProgress => "InProgress",
            KstatusName::Failed => "Failed",
            KstatusName::Current => "Current",
            KstatusName::Terminating => "Terminating",
        }
    }
}

/// One assertion. On an object (`target`): `at` a time or `within` a duration (counted from
/// `after`, default 0s), one of `kstatus`, `field` + `equals`, `condition` (+ `status`, `reason`,
/// `message`) or `exists`. On an action's response (`action`): `code` and/or `message`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expectation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kstatus: Option<KstatusName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// `equals: null` is kept as `Some(Null)`: "absent or null".
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub equals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// With `field`, `count` or `requests`: the number observed is at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    /// ... and at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    /// With `field`: the value (a string as it is, anything else as JSON) matches this regular
    /// expression (regex-lite syntax), for messages with generated parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// With `within`: the check holds at every moment of the window, not just once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always: Option<bool>,
    /// With `within`: the check holds at no moment of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never: Option<bool>,
    /// Instead of `target`: how many objects there are of a resource (in a namespace), chosen by
    /// label selector and/or owner; with `equals`, `atLeast`, `atMost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountSpec>,
    /// Instead of `target`: how many requests the API server answered that match (all of them
    /// up to the moment checked, or, in a window with `after`, since its start); with `equals`,
    /// `atLeast`, `atMost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestMatch>,
    /// Instead of `target`: how many times the cluster's components reported matching Events
    /// (each Event counts its `count`, or its series' count); with `equals`, `atLeast`, `atMost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EventsSpec>,
    /// With `field`: the field's value at that moment traces back (`converge why`) to this
    /// action, fault or controller (added within v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<CausedBy>,
}

/// What a field's value traces back to: exactly one of an action's id, a fault's id, or a
/// controller that the chain passes through.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CausedBy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
}

/// The Events an expectation counts: about one object (`about: deployments/default/web`) or any
/// object of a resource in a namespace (`pods/default`), with a `reason`, a `type` (Normal or
/// Warning), a reporting component (`source`: `kubelet`, `default-scheduler`, ...), and a
/// `message` given exactly or as a regular expression (`matches`). Every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EventsSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
}

/// The objects an expectation counts: `target` names a resource and, for a namespaced one, its
/// namespace (`pods/default`); `selector` is a label selector in kubectl's syntax
/// (`app=web,tier!=db`); `owner` a target whose direct dependents are counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CountSpec {
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// A narrated lesson: ordered steps that advance when their state holds, and a closing
/// question that checks the reader saw the point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Lesson {
    pub title: String,
    /// One or two sentences: the idea of the model this lesson makes visible.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    pub steps: Vec<LessonStep>,
    pub check: LessonCheck,
}

/// One step: what to do, what to watch, and the state that completes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LessonStep {
    /// What to do (`Press Next event until the clock passes 10s.`).
    pub text: String,
    /// What to look at while doing it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub watch: String,
    /// The object the playground selects for this step (`deployments/default/web`); default:
    /// the first object `until` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// The step is done once every predicate holds at the same moment.
    pub until: Vec<Predicate>,
}

/// A state predicate: an expectation's assertion without a time (`target` and one of `kstatus`,
/// `field` + `equals`, `condition`, `exists`), or `request`: the API server answered a matching
/// request since the step began (from the scenario's actions, a controller, or the reader).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Predicate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kstatus: Option<KstatusName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub equals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestMatch>,
}

/// A request the API server answered: `target` as in actions (the name may be left out to
/// match any), optionally the principal, verb and response code.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequestMatch {
    #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<ActionVerb>,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// The closing question: the reader picks one of `choices`; `answer` is the index of the right
/// one (from 0) and `explanation` is shown after answering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LessonCheck {
    pub question: String,
    pub choices: Vec<String>,
    pub answer: usize,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub explanation: String,
}

fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// When `converge run` stops by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// Every action fired, every expectation decided, and the world converged.
    Converged,
    /// Exactly this simulated time.
    Time(Duration),
}

impl Until {
    /// `converged`, or a duration such as `30s`, `2m`, `1500ms`.
    pub fn parse(s: &str) -> Result<Until, String> {
        if s == "converged" {
            return Ok(Until::Converged);
        }
        Duration::parse(s)
            .map(Until::Time)
            .map_err(|e| format!("{e}; or `converged`"))
    }
}

impl fmt::Display for Until {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Until::Converged => f.write_str("converged"),
            Until::Time(d) => d.fmt(f),
        }
    }
}

impl Serialize for Until {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Until {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Until::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The longest time a scenario may name: 24 hours of simulated time (periodic controllers make
/// longer runs slow for nothing).
pub const MAX_MS: u64 = 24 * 3_600_000;

/// A simulated duration or time since the scenario start, in milliseconds. Written `1500ms`,
/// `10s`, `1.5s`, `2m`, `1h`, combinations such as `1m30s`, or `0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Duration {
    pub fn ms(self) -> u64 {
        self.0
    }

    pub fn parse(s: &str) -> Result<Duration, String> {
        let t = s.trim();
        if t.starts_with('-') {
            return Err(format!(
                "negative time {t:?}: times count from the scenario start, 0s"
            ));
        }
        if t == "0" {
            return Ok(Duration(0));
        }
        let bad = || {
            format!("invalid duration {t:?}: expected a duration such as 1500ms, 30s, 1.5s or 2m")
        };
        if t.is_empty() {
            return Err(bad());
        }
        let mut total: f64 = 0.0;
        let mut rest = t;
        while !rest.is_empty() {
            let num_len = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .ok_or_else(bad)?;
            if num_len == 0 {
                return Err(bad());
            }
            let n: f64 = rest[..num_len].parse().map_err(|_| bad())?;
            rest = &rest[num_len..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            let factor = match &rest[..unit_len] {
                "ms" => 1.0,
                "s" => 1000.0,
                "m" => 60_000.0,
                "h" => 3_600_000.0,
                _ => return Err(bad()),
            };
            rest = &rest[unit_len..];
            total += n * factor;
        }
        if !total.is_finite() || total > MAX_MS as f64 {
            return Err(format!(
                "{t:?} is longer than a scenario may run (24h of simulated time)"
            ));
        }
        Ok(Duration(total.round() as u64))
    }
}

impl fmt::Display for Duration {
    /// The canonical spelling: `0s`, `1500ms`, `30s`, `2m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        if ms.is_multiple_of(60_000) && ms > 0 {
            write!(f, "{}m", ms / 60_000)
        } else if ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{ms}ms")
        }
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    /// A visitor rather than an untagged enum, so errors point at the value itself.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct DurationVisitor;
        impl serde::de::Visitor<'_> for DurationVisitor {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as 1500ms, 30s, 1.5s or 2m")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Duration, E> {
                Duration::parse(s).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<Duration, E> {
                if u == 0 {
                    Ok(Duration(0))
                } else {
                    Err(E::custom(format!("{u} has no unit: write {u}ms or {u}s")))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<Duration, E> {
                if i < 0 {
                    Err(E::custom(format!(
                        "negative time {i}: times count from the scenario start, 0s"
                    )))
                } else {
                    self.visit_u64(i.unsigned_abs())
                }
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Duration, E> {
                if f < 0.0 {
                    Err(E::custom(format!(
                        "negative time {f}: times count from the scenario start, 0s"
                    )))
                } else {
                    Err(E::custom(format!("{f} has no unit: write {f}s")))
                }
            }
        }
        d.deserialize_any(DurationVisitor)
    }
}
