//! metav1.Condition helpers with apimachinery's `SetStatusCondition` semantics.
//!
//! Stored objects hold their conditions as JSON (`status.conditions: [..]`), so the helpers work
//! on `Vec<serde_json::Value>` directly and keep every field they do not manage (for example a
//! Deployment condition's `lastUpdateTime`) and every entry's position. [`Condition`] is the typed
//! form a controller builds and passes in.
//!
//! Semantics follow `k8s.io/apimachinery/pkg/api/meta/conditions.go`:
//! - [`set_status_condition`] appends a missing type; for a present type it moves
//!   `lastTransitionTime` only when `status` changes, and overwrites reason, message and
//!   observedGeneration. It returns whether anything changed.
//! - [`remove_status_condition`] drops every entry of a type.
//! - [`find_status_condition`] and the `is_status_condition_*` predicates look only at the first
//!   entry of a type; an absent type is neither true nor false.
//!
//! Time is simulated: "now" is a [`SimTime`] argument, never the OS clock.

use std::fmt;

use serde_json::{Map, Value};

use crate::time::SimTime;

/// `True`, `False` or `Unknown`, case-sensitive as the API requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

impl ConditionStatus {
    /// The wire form: `"True"`, `"False"` or `"Unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }

    /// Parses the wire form; anything else (including `"true"`) is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "True" => Some(ConditionStatus::True),
            "False" => Some(ConditionStatus::False),
            "Unknown" => Some(ConditionStatus::Unknown),
            _ => None,
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A typed metav1.Condition.
///
/// `last_transition_time: None` plays the role of Go's zero time: [`set_status_condition`]
/// replaces it with "now" when the condition is added or its status changes.
/// `observed_generation: None` is Go's omitted zero; it compares equal to `Some(0)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    pub status: ConditionStatus,
    pub reason: String,
    pub message: String,
    pub observed_generation: Option<i64>,
    pub last_transition_time: Option<SimTime>,
}

impl Condition {
    /// A condition with the given type, status and reason, empty message, no observedGeneration
    /// and a transition time to be filled in by [`set_status_condition`].
    pub fn new(type_: &str, status: ConditionStatus, reason: &str, message: &str) -> Self {
        Condition {
            type_: type_.to_string(),
            status,
            reason: reason.to_string(),
            message: message.to_string(),
            observed_generation: None,
            last_transition_time: None,
        }
    }

    /// Sets `observedGeneration` (builder style).
    pub fn with_observed_generation(mut self, generation: i64) -> Self {
        self.observed_generation = Some(generation);
        self
    }

    /// The JSON form, with metav1.Condition's field order:
    /// `type, status, observedGeneration, lastTransitionTime, reason, message`.
    /// `observedGeneration` is omitted when `None`, `lastTransitionTime` when `None`.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), Value::String(self.type_.clone()));
        m.insert("status".into(), Value::String(self.status.as_str().into()));
        if let Some(g) = self.observed_generation {
            m.insert("observedGeneration".into(), Value::from(g));
        }
        if let Some(t) = self.last_transition_time {
            m.insert("lastTransitionTime".into(), Value::String(t.rfc3339()));
        }
        m.insert("reason".into(), Value::String(self.reason.clone()));
        m.insert("message".into(), Value::String(self.message.clone()));
        Value::Object(m)
    }

    /// Reads a condition from its JSON form. Needs a string `type` and a valid `status`;
    /// a missing reason or message reads as empty, an unparseable time as `None`.
    pub fn from_value(v: &Value) -> Option<Condition> {
        let type_ = v.get("type")?.as_str()?.to_string();
        let status = ConditionStatus::parse(v.get("status")?.as_str()?)?;
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Some(Condition {
            type_,
            status,
            reason: text("reason"),
            message: text("message"),
            observed_generation: v.get("observedGeneration").and_then(Value::as_i64),
            last_transition_time: v
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .and_then(SimTime::parse_rfc3339),
        })
    }
}

fn type_of(entry: &Value) -> Option<&str> {
    entry.get("type").and_then(Value::as_str)
}

fn status_of(entry: &Value) -> Option<&str> {
    entry.get("status").and_then(Value::as_str)
}

/// Adds or updates the condition of `new.type_` in `conditions`; returns whether anything changed.
///
/// - Absent type: `new` is appended, with `lastTransitionTime = now` if it had none.
/// - Present, different status: status is overwritten and `lastTransitionTime` becomes
///   `new.last_transition_time`, or `now` if that is `None`.
/// - Present, same status: `lastTransitionTime` is kept, whatever `new` carries.
/// - reason, message and observedGeneration are overwritten when they differ.
///
/// The entry keeps its position and any other fields it has.
pub fn set_status_condition(conditions: &mut Vec<Value>, new: Condition, now: SimTime) -> bool {
    let Some(existing) = conditions
        .iter_mut()
        .find(|c| type_of(c) == Some(new.type_.as_str()) && c.is_object())
    else {
        let mut new = new;
        new.last_transition_time.get_or_insert(now);
        conditions.push(new.to_value());
        return true;
    };
    let Some(entry) = existing.as_object_mut() else {
        return false; // unreachable: the finder only matches objects
    };
    let mut changed = false;
    if entry.get("status").and_then(Value::as_str) != Some(new.status.as_str()) {
        entry.insert("status".into(), Value::String(new.status.as_str().into()));
        let at = new.last_transition_time.unwrap_or(now);
        entry.insert("lastTransitionTime".into(), Value::String(at.rfc3339()));
        changed = true;
    }
    for (key, value) in [("reason", &new.reason), ("message", &new.message)] {
        let current = entry.get(key).and_then(Value::as_str).unwrap_or_default();
        if current != value {
            entry.insert(key.into(), Value::String(value.clone()));
            changed = true;
        }
    }
    let current_gen = entry
        .get("observedGeneration")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let new_gen = new.observed_generation.unwrap_or(0);
    if current_gen != new_gen {
        match new.observed_generation {
            Some(g) => entry.insert("observedGeneration".into(), Value::from(g)),
            None => entry.remove("observedGeneration"),
        };
        changed = true;
    }
    changed
}

/// Removes every condition of `type_`; returns whether any was removed.
pub fn remove_status_condition(conditions: &mut Vec<Value>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| type_of(c) != Some(type_));
    conditions.len() != before
}

/// The first condition of `type_`, as stored.
pub fn find_status_condition<'a>(conditions: &'a [Value], type_: &str) -> Option<&'a Value> {
    conditions.iter().find(|c| type_of(c) == Some(type_))
}

/// Whether the first condition of `type_` has status `True`.
pub fn is_status_condition_true(conditions: &[Value], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, ConditionStatus::True)
}

/// Whether the first condition of `type_` has status `False`.
pub fn is_status_condition_false(conditions: &[Value], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, ConditionStatus::False)
}

/// Whether the first condition of `type_` has the given status.
pub fn is_status_condition_present_and_equal(
    conditions: &[Value],
    type_: &str,
    status: ConditionStatus,
) -> bool {
    find_status_condition(conditions, type_).and_then(status_of) == Some(status.as_str())
}

/// The object's `status.conditions` array, or `None` when absent or not an array.
pub fn status_conditions(obj: &Value) -> Option<&Vec<Value>> {
    obj.get("status")?.get("conditions")?.as_array()
}

/// The object's `status.conditions` array for writing, created (with `status`) when absent.
/// Returns `None` when `obj`, `status` or `status.conditions` has the wrong JSON type.
pub fn status_conditions_mut(obj: &mut Value) -> Option<&mut Vec<Value>> {
    let status = obj
        .as_object_mut()?
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if status.is_null() {
        *status = Value::Object(Map::new());
    }
    let conditions = status
        .as_object_mut()?
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if conditions.is_null() {
        *conditions = Value::Array(Vec::new());
    }
    conditions.as_array_mut()
}

/// [`set_status_condition`] on an object's `status.conditions`, created when absent.
/// Returns false, changing nothing, when `status` or `status.conditions` has the wrong JSON type.
pub fn set_object_condition(obj: &mut Value, new: Condition, now: SimTime) -> bool {
    match status_conditions_mut(obj) {
        Some(conditions) => set_status_condition(conditions, new, now),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T0: SimTime = SimTime(0);
    const T5: SimTime = SimTime(5_000);
    const T9: SimTime = SimTime(9_000);

    fn ready(status: ConditionStatus, reason: &str) -> Condition {
        Condition::new("Ready", status, reason, "")
    }

    #[test]
    fn adding_a_missing_type_appends_it_stamped_with_now() {
        let mut conds = vec![json!({"type": "Available", "status": "True"})];
        assert!(set_status_condition(
            &mut conds,
            ready(ConditionStatus::False, "Starting"),
            T5
        ));
        assert_eq!(conds.len(), 2);
        assert_eq!(
            conds[1],
            json!({"type": "Ready", "status": "False", "lastTransitionTime": "2025-01-01T00:00:05Z",
                   "reason": "Starting", "message": ""})
        );
    }

    #[test]
    fn adding_keeps_a_supplied_transition_time() {
        let mut conds = vec![];
        let mut c = ready(ConditionStatus::True, "Up");
        c.last_transition_time = Some(T9);
        set_status_condition(&mut conds, c, T5);
        assert_eq!(conds[0]["lastTransitionTime"], "2025-01-01T00:00:09Z");
    }

    #[test]
    fn a_status_change_moves_the_transition_time_and_keeps_the_position() {
        let mut conds = vec![
            ready(ConditionStatus::False, "Starting").to_value(),
            json!({"type": "Other", "status": "True"}),
        ];
        conds[0]["lastTransitionTime"] = json!(T0.rfc3339());
        assert!(set_status_condition(
            &mut conds,
            ready(ConditionStatus::True, "Up"),
            T5
        ));
        assert_eq!(conds[0]["type"], "Ready");
        assert_eq!(conds[0]["status"], "True");
        assert_eq!(conds[0]["reason"], "Up");
        assert_eq!(conds[0]["lastTransitionTime"], "2025-01-01T00:00:05Z");
        assert_eq!(conds[1]["type"], "Other");
    }

    #[test]
    fn a_status_change_uses_the_supplied_transition_time_when_given() {
        let mut conds = vec![ready(ConditionStatus::False, "Starting").to_value()];
        let mut c = ready(ConditionStatus::True, "Up");
        c.last_transition_time = Some(T9);
        set_status_condition(&mut conds, c, T5);
        assert_eq!(conds[0]["lastTransitionTime"], "2025-01-01T00:00:09Z");
    }

    #[test]
    fn the_same_status_keeps_the_transition_time_even_if_another_is_supplied() {
        let mut first = ready(ConditionStatus::True, "Up");
        first.last_transition_time = Some(T0);
        let mut conds = vec![first.to_value()];
        let mut c = ready(ConditionStatus::True, "StillUp");
        c.last_transition_time = Some(T9);
        assert!(set_status_condition(&mut conds, c, T5));
        assert_eq!(conds[0]["lastTransitionTime"], "2025-01-01T00:00:00Z");
        assert_eq!(conds[0]["reason"], "StillUp");
    }

    #[test]
    fn an_identical_condition_is_no_change() {
        let mut first = ready(ConditionStatus::True, "Up").with_observed_generation(3);
        first.last_transition_time = Some(T0);
        let mut conds = vec![first.to_value()];
        let before = conds.clone();
        let again = ready(ConditionStatus::True, "Up").with_observed_generation(3);
        assert!(!set_status_condition(&mut conds, again, T5));
        assert_eq!(conds, before);
    }

    #[test]
    fn message_and_observed_generation_changes_count_as_changes() {
        let mut conds = vec![ready(ConditionStatus::True, "Up").to_value()];
        let mut c = ready(ConditionStatus::True, "Up");
        c.message = "all good".into();
        assert!(set_status_condition(&mut conds, c.clone(), T5));
        assert_eq!(conds[0]["message"], "all good");
        assert!(set_status_condition(
            &mut conds,
            c.clone().with_observed_generation(2),
            T5
        ));
        assert_eq!(conds[0]["observedGeneration"], 2);
        assert!(set_status_condition(&mut conds, c, T5));
        assert!(conds[0].get("observedGeneration").is_none());
    }

    #[test]
    fn observed_generation_zero_equals_absent() {
        let mut conds = vec![ready(ConditionStatus::True, "Up").to_value()];
        let c = ready(ConditionStatus::True, "Up").with_observed_generation(0);
        assert!(!set_status_condition(&mut conds, c, T5));
    }

    #[test]
    fn unmanaged_fields_survive_an_update() {
        let mut conds = vec![json!({"type": "Progressing", "status": "True",
            "lastUpdateTime": "2025-01-01T00:00:00Z", "reason": "A", "message": "m"})];
        let c = Condition::new("Progressing", ConditionStatus::True, "B", "m");
        assert!(set_status_condition(&mut conds, c, T5));
        assert_eq!(conds[0]["lastUpdateTime"], "2025-01-01T00:00:00Z");
        assert_eq!(conds[0]["reason"], "B");
    }

    #[test]
    fn remove_drops_every_entry_of_the_type() {
        let mut conds = vec![
            json!({"type": "Ready", "status": "True"}),
            json!({"type": "Other", "status": "True"}),
            json!({"type": "Ready", "status": "False"}),
        ];
        assert!(remove_status_condition(&mut conds, "Ready"));
        assert_eq!(conds, vec![json!({"type": "Other", "status": "True"})]);
        assert!(!remove_status_condition(&mut conds, "Ready"));
    }

    #[test]
    fn predicates_look_only_at_the_first_entry_of_a_type() {
        let conds = vec![
            json!({"type": "Ready", "status": "False"}),
            json!({"type": "Ready", "status": "True"}),
        ];
        assert_eq!(
            find_status_condition(&conds, "Ready"),
            Some(&json!({"type": "Ready", "status": "False"}))
        );
        assert!(is_status_condition_false(&conds, "Ready"));
        assert!(!is_status_condition_true(&conds, "Ready"));
        assert!(!is_status_condition_true(&conds, "Absent"));
        assert!(!is_status_condition_false(&conds, "Absent"));
        assert!(is_status_condition_present_and_equal(
            &conds,
            "Ready",
            ConditionStatus::False
        ));
        assert!(!is_status_condition_present_and_equal(
            &conds,
            "Ready",
            ConditionStatus::Unknown
        ));
    }

    #[test]
    fn typed_conditions_round_trip_through_json() {
        let mut c = Condition::new("Ready", ConditionStatus::Unknown, "Checking", "wait")
            .with_observed_generation(7);
        c.last_transition_time = Some(T9);
        let v = c.to_value();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"type":"Ready","status":"Unknown","observedGeneration":7,"lastTransitionTime":"2025-01-01T00:00:09Z","reason":"Checking","message":"wait"}"#
        );
        assert_eq!(Condition::from_value(&v), Some(c));
        assert_eq!(
            Condition::from_value(&json!({"type": "Ready", "status": "true"})),
            None
        );
    }

    #[test]
    fn set_object_condition_writes_into_status_conditions() {
        let mut obj = json!({"kind": "Widget", "status": {"phase": "x"}});
        assert!(set_object_condition(
            &mut obj,
            ready(ConditionStatus::True, "Up"),
            T5
        ));
        assert_eq!(obj["status"]["conditions"][0]["reason"], "Up");
        assert_eq!(obj["status"]["phase"], "x");
        let mut bad = json!({"status": {"conditions": 3}});
        assert!(!set_object_condition(
            &mut bad,
            ready(ConditionStatus::True, "Up"),
            T5
        ));
        assert_eq!(bad, json!({"status": {"conditions": 3}}));
    }

    #[test]
    fn status_conditions_mut_creates_the_array_when_absent() {
        let mut obj = json!({"kind": "Widget"});
        let conds = status_conditions_mut(&mut obj).unwrap();
        set_status_condition(conds, ready(ConditionStatus::True, "Up"), T0);
        assert_eq!(status_conditions(&obj).map(Vec::len), Some(1));
        let mut bad = json!({"status": "oops"});
        assert!(status_conditions_mut(&mut bad).is_none());
    }
}
