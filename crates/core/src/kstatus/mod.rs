//! kstatus: the health verdict (`status.Compute`) of sigs.k8s.io/cli-utils/pkg/kstatus.
//!
//! [`compute`] reads one object (as stored: JSON) and returns what kstatus returns for it: a
//! status (InProgress, Failed, Current or Terminating), a message, and the abnormal-true
//! `Reconciling`/`Stalled` condition kstatus would add. The order of checks, the reasons and the
//! messages are kstatus' own (`pkg/kstatus/status/{status,generic,core,util}.go`):
//!
//! 1. generic checks (`generic`): deletionTimestamp, generation vs observedGeneration, and
//!    `Reconciling`/`Stalled` conditions the object already carries;
//! 2. the per-kind rules (`kinds`), looked up by `group/Kind` (`Kind` alone for the core group);
//! 3. for other kinds, the first `Ready` condition; otherwise Current, "Resource is current".
//!
//! Field reads follow kstatus' helpers: a number counts only if it is a JSON integer, a string
//! only if it is a JSON string; anything else falls back to the rule's default. Where kstatus
//! returns an error (a wrongly typed generation, conditions that are not a list of objects, an
//! unknown Pod phase) [`compute`] returns a [`KstatusError`]; kstatus' pollers then report the
//! status `Unknown` with the error text as message.
//!
//! Time is an argument: the Pod rule "unschedulable for more than 15 s" compares
//! `creationTimestamp` with `now_unix_ms`; core never reads the clock.

mod generic;
mod kinds;

use crate::api::meta::Fields;
use std::fmt;

use crate::json::{Map, Value};

use crate::runtime::Explanation;

/// The statuses [`compute`] returns. (kstatus' pollers add NotFound and Unknown, which belong to
/// whoever reads objects from a cluster, not to this computation.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    InProgress,
    Failed,
    Current,
    Terminating,
}

impl Status {
    /// `"InProgress"`, `"Failed"`, `"Current"` or `"Terminating"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::InProgress => "InProgress",
            Status::Failed => "Failed",
            Status::Current => "Current",
            Status::Terminating => "Terminating",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The two abnormal-true condition types kstatus produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KstatusConditionType {
    /// Present (and True) while the object is InProgress.
    Reconciling,
    /// Present (and True) when the object is Failed.
    Stalled,
}

impl KstatusConditionType {
    pub fn as_str(self) -> &'static str {
        match self {
            KstatusConditionType::Reconciling => "Reconciling",
            KstatusConditionType::Stalled => "Stalled",
        }
    }
}

/// A condition as kstatus' `status.Condition`: its status is always `True`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KstatusCondition {
    pub type_: KstatusConditionType,
    pub reason: String,
    pub message: String,
}

impl KstatusCondition {
    /// The JSON form kstatus' `Condition` marshals to: `type`, `status`, then `reason` and
    /// `message`, each omitted when empty (`omitempty`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("type", Value::String(self.type_.as_str().into()));
        m.insert("status", Value::String("True".into()));
        if !self.reason.is_empty() {
            m.insert("reason", Value::String(self.reason.as_str().into()));
        }
        if !self.message.is_empty() {
            m.insert("message", Value::String(self.message.as_str().into()));
        }
        Value::Object(m)
    }
}

/// What [`compute`] found: kstatus' `status.Result`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KstatusResult {
    pub status: Status,
    pub message: String,
    /// One `Reconciling` condition when InProgress, one `Stalled` when Failed, else none.
    pub conditions: Vec<KstatusCondition>,
}

impl KstatusResult {
    /// The conditions as a JSON array, as kstatus marshals them.
    pub fn conditions_value(&self) -> Value {
        Value::Array(self.conditions.iter().map(|c| c.to_value()).collect())
    }

    fn current(message: impl Into<String>) -> Self {
        KstatusResult {
            status: Status::Current,
            message: message.into(),
            conditions: Vec::new(),
        }
    }

    fn in_progress(reason: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        KstatusResult {
            status: Status::InProgress,
            message: message.clone(),
            conditions: vec![KstatusCondition {
                type_: KstatusConditionType::Reconciling,
                reason: reason.into(),
                message,
            }],
        }
    }

    fn failed(reason: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        KstatusResult {
            status: Status::Failed,
            message: message.clone(),
            conditions: vec![KstatusCondition {
                type_: KstatusConditionType::Stalled,
                reason: reason.into(),
                message,
            }],
        }
    }
}

/// kstatus could not compute a status; the text is the one kstatus' error would carry where we
/// know it (accessor errors, "unknown phase X").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct KstatusError {
    pub message: String,
}

impl KstatusError {
    fn new(message: impl Into<String>) -> Self {
        KstatusError {
            message: message.into(),
        }
    }
}

/// kstatus' `status.Compute` for one object. `now_unix_ms` is "now" in Unix milliseconds.
pub fn compute(obj: &Value, now_unix_ms: i64) -> Result<KstatusResult, KstatusError> {
    decide(obj, now_unix_ms).map(|(res, _)| res)
}

/// Which of kstatus' rules decided a verdict, for [`compute_explained`].
enum Decider {
    Generic,
    Kind(String),
    Ready,
    None,
}

/// The verdict and the rule that decided it: the generic properties, the kind's rule, the
/// Ready condition, or none applied. One code path decides for [`compute`] and
/// [`compute_explained`]; only the latter writes the explanation (the engine asks for every
/// object it is told of).
fn decide(obj: &Value, now_unix_ms: i64) -> Result<(KstatusResult, Decider), KstatusError> {
    if !obj.is_object() {
        return Err(KstatusError::new("object is not a JSON object"));
    }
    if let Some(res) = generic::check_generic_properties(obj)? {
        return Ok((res, Decider::Generic));
    }
    let kind = group_kind_key(obj);
    if let Some(rule) = kinds::rule_for(&kind) {
        return rule(obj, now_unix_ms).map(|res| (res, Decider::Kind(kind)));
    }
    if let Some(res) = generic::check_ready_condition(obj)? {
        return Ok((res, Decider::Ready));
    }
    Ok((KstatusResult::current("Resource is current"), Decider::None))
}

/// [`compute`] and the explanation of its verdict: which of kstatus' rules decided it (the
/// generic properties, the kind's rule, the Ready condition, or none applied) and that rule's
/// message.
pub fn compute_explained(
    obj: &Value,
    now_unix_ms: i64,
) -> Result<(KstatusResult, Explanation), KstatusError> {
    let (res, decider) = decide(obj, now_unix_ms)?;
    let rule = match decider {
        Decider::Generic => "generic rule (deletion, observedGeneration)".to_owned(),
        Decider::Kind(kind) => format!("the {kind} rule"),
        Decider::Ready => "the Ready condition".to_owned(),
        Decider::None => "no rule applies".to_owned(),
    };
    let why = Explanation::new(
        "kstatus",
        res.status.as_str(),
        format!("{rule}: {}", res.message),
    );
    Ok((res, why))
}

/// [`compute`] at a simulated time (the engine's and the web view's clock).
pub fn compute_at(obj: &Value, now: crate::time::SimTime) -> Result<KstatusResult, KstatusError> {
    compute(obj, now.unix_ms())
}

/// `group/Kind`, or `Kind` for the core group, from apiVersion and kind. An apiVersion with more
/// than one `/` does not parse in apimachinery, which then yields an empty GroupVersionKind.
fn group_kind_key(obj: &Value) -> String {
    let api_version = get_str(obj, &["apiVersion"], "");
    let kind = get_str(obj, &["kind"], "");
    let group = match api_version.split_once('/') {
        None => "",
        Some((group, version)) if !version.contains('/') => group,
        Some(_) => return String::new(),
    };
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

/// The object's `kind`, or empty.
fn kind_of(obj: &Value) -> &str {
    get_str(obj, &["kind"], "")
}

/// The value at `path`, walking only through JSON objects.
fn lookup<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(obj, |v, key| v.as_object()?.field(key))
}

/// kstatus' `GetIntField`: the value if it is a JSON integer, else `default`.
fn get_int(obj: &Value, path: &[&str], default: i64) -> i64 {
    lookup(obj, path).and_then(Value::as_i64).unwrap_or(default)
}

/// kstatus' `GetStringField`: the value if it is a JSON string, else `default`.
fn get_str<'a>(obj: &'a Value, path: &[&str], default: &'a str) -> &'a str {
    lookup(obj, path).and_then(Value::as_str).unwrap_or(default)
}

/// kstatus' `GetBoolField`: the value if it is a JSON bool, else `default`.
fn get_bool(obj: &Value, path: &[&str], default: bool) -> bool {
    lookup(obj, path)
        .and_then(Value::as_bool)
        .unwrap_or(default)
}

/// apimachinery's `NestedInt64`: absent is `None`; present but not an integer is an accessor error.
fn nested_int64(obj: &Value, path: &[&str]) -> Result<Option<i64>, String> {
    match lookup(obj, path) {
        None => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| accessor_error(path, v, "int64")),
    }
}

/// apimachinery's `NestedString`: absent is `None`; present but not a string is an accessor error.
fn nested_string<'a>(obj: &'a Value, path: &[&str]) -> Result<Option<&'a str>, String> {
    match lookup(obj, path) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| accessor_error(path, v, "string")),
    }
}

/// `.a.b accessor error: <v> is of the type <T>, expected <E>`, as unstructured's helpers say it.
fn accessor_error(path: &[&str], v: &Value, expected: &str) -> String {
    format!(
        ".{} accessor error: {} is of the type {}, expected {}",
        path.join("."),
        go_value(v),
        go_type(v),
        expected
    )
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (maps print with sorted keys, as Go does).
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&crate::json::Key> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_value(&m[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// One entry of `status.conditions` as kstatus reads it (`BasicCondition`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct BasicCondition<'a> {
    type_: &'a str,
    status: &'a str,
    reason: &'a str,
    message: &'a str,
}

/// kstatus' `GetObjectWithConditions`: `status.conditions` converted to typed conditions.
/// Absent or null pieces read as empty; wrongly typed ones are an error, as the unstructured
/// converter's are. The texts are the object's own (every object the engine is told of is read
/// here, a Pod's five conditions each time).
fn conditions_of(obj: &Value) -> Result<Vec<BasicCondition<'_>>, KstatusError> {
    let status = match obj.field("status") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(m)) => m,
        Some(other) => return Err(convert_error("status", "object", other)),
    };
    let items = match status.field("conditions") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(convert_error("status.conditions", "array", other)),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let fields = match item {
                Value::Null => return Ok(BasicCondition::default()),
                Value::Object(m) => m,
                other => {
                    return Err(convert_error(
                        &format!("status.conditions[{i}]"),
                        "object",
                        other,
                    ))
                }
            };
            let text = |key: &str| match fields.field(key) {
                None | Some(Value::Null) => Ok(""),
                Some(Value::String(s)) => Ok(s.as_str()),
                Some(other) => Err(convert_error(
                    &format!("status.conditions[{i}].{key}"),
                    "string",
                    other,
                )),
            };
            Ok(BasicCondition {
                type_: text("type")?,
                status: text("status")?,
                reason: text("reason")?,
                message: text("message")?,
            })
        })
        .collect()
}

fn convert_error(path: &str, expected: &str, found: &Value) -> KstatusError {
    KstatusError::new(format!(
        "{path}: expected {expected}, found {}",
        json_type_name(found)
    ))
}

/// A JSON type in words: `null`, `a boolean`, `an integer`, `a number`, `a string`, ….
pub(crate) fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn group_kind_key_drops_the_version_and_the_core_group() {
        let key = |api: &str| group_kind_key(&json!({"apiVersion": api, "kind": "X"}));
        assert_eq!(key("apps/v1"), "apps/X");
        assert_eq!(key("v1"), "X");
        assert_eq!(key("a/b/c"), "");
        assert_eq!(group_kind_key(&json!({"kind": "Pod"})), "Pod");
    }

    #[test]
    fn only_json_integers_count_as_numbers() {
        let obj = json!({"spec": {"a": 3, "b": 3.0, "c": "3", "d": null}});
        assert_eq!(get_int(&obj, &["spec", "a"], 1), 3);
        assert_eq!(get_int(&obj, &["spec", "b"], 1), 1);
        assert_eq!(get_int(&obj, &["spec", "c"], 1), 1);
        assert_eq!(get_int(&obj, &["spec", "d"], 1), 1);
        assert_eq!(get_int(&obj, &["spec", "a", "deeper"], 7), 7);
    }

    #[test]
    fn accessor_errors_read_like_apimachinery_ones() {
        let obj = json!({"metadata": {"generation": "2"}});
        assert_eq!(
            nested_int64(&obj, &["metadata", "generation"]),
            Err(
                ".metadata.generation accessor error: 2 is of the type string, expected int64"
                    .into()
            )
        );
        assert_eq!(
            go_value(&json!({"b": [1, 2.5], "a": null})),
            "map[a:<nil> b:[1 2.5]]"
        );
    }

    #[test]
    fn malformed_conditions_are_an_error() {
        let err = |v: Value| compute(&v, 0).unwrap_err().message;
        assert_eq!(
            err(json!({"kind": "X", "status": {"conditions": {"type": "Ready"}}})),
            "status.conditions: expected array, found an object"
        );
        assert_eq!(
            err(json!({"kind": "X", "status": {"conditions": [{"type": 1}]}})),
            "status.conditions[0].type: expected string, found an integer"
        );
        assert_eq!(
            err(json!({"kind": "X", "status": "ok"})),
            "status: expected object, found a string"
        );
    }

    #[test]
    fn compute_at_uses_the_simulated_clock() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"creationTimestamp": "2025-01-01T00:00:10Z"},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}});
        let at = |ms| compute_at(&pod, crate::time::SimTime(ms)).unwrap().status;
        assert_eq!(at(24_999), Status::InProgress);
        assert_eq!(at(25_000), Status::Failed);
    }

    #[test]
    fn a_non_object_is_an_error() {
        assert!(compute(&json!([1]), 0).is_err());
    }

    #[test]
    fn conditions_marshal_like_kstatus_with_empty_fields_omitted() {
        let res = KstatusResult::in_progress("", "");
        assert_eq!(
            res.conditions_value(),
            json!([{"type": "Reconciling", "status": "True"}])
        );
        let res = KstatusResult::failed("R", "m");
        assert_eq!(
            serde_json::to_string(&res.conditions_value()).unwrap(),
            r#"[{"type":"Stalled","status":"True","reason":"R","message":"m"}]"#
        );
    }
}
