//! Status conditions, the one place controllers read and write them: apimachinery's
//! `meta` condition helpers and the per-controller setters kube's controllers really use.
//!
//! Stored objects hold their conditions as JSON (`status.conditions: [..]`), so everything here
//! works on `crate::json::Value` and keeps every field it does not manage and every entry's
//! position (except where a kube setter itself reorders, as `SetDeploymentCondition` does).
//!
//! - Readers, as `k8s.io/apimachinery/pkg/api/meta/conditions.go`: [`find_status_condition`]
//!   and [`is_status_condition_true`] look only at the first entry of a type; an absent type is
//!   neither true nor false. [`find_condition`] and [`remove_condition`] are the same on a
//!   `status` object.
//! - Setters, one per semantics kube has: [`set_status_condition`] (metav1.Condition,
//!   `meta.SetStatusCondition`), [`set_deployment_condition`] (`deploymentutil`),
//!   [`set_pod_condition`] (the kubelet's and scheduler's pod conditions) and
//!   [`set_hpa_condition`] (the autoscaler's `setConditionInList`).
//!
//! Time is simulated: "now" is a [`SimTime`] argument, never the OS clock.

use crate::api::meta::Fields;
use crate::json::path;
use crate::json::{json, Value};

use crate::api::meta::str_at;
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
}

fn type_of(entry: &Value) -> Option<&str> {
    entry.field("type").and_then(Value::as_str)
}

fn status_of(entry: &Value) -> Option<&str> {
    entry.field("status").and_then(Value::as_str)
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
    obj.field("status")?.field("conditions")?.as_array()
}

/// [`find_status_condition`] on a `status` object's `conditions`.
pub fn find_condition<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    find_status_condition(status.field("conditions")?.as_array()?, type_)
}

/// [`remove_status_condition`] on a `status` object's `conditions`.
pub fn remove_condition(status: &mut Value, type_: &str) -> bool {
    status
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
        .is_some_and(|list| remove_status_condition(list, type_))
}

/// A condition to set; `status` is `True`, `False` or `Unknown`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cond<'a> {
    pub type_: &'a str,
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
}

fn conditions_mut(status: &mut Value) -> Option<&mut Vec<Value>> {
    let obj = status.as_object_mut()?;
    let entry = obj.entry("conditions").or_insert_with(|| json!([]));
    if !entry.is_array() {
        *entry = json!([]);
    }
    entry.as_array_mut()
}

/// apimachinery `meta.SetStatusCondition` [apimachinery pkg/api/meta/conditions.go] on
/// `status.conditions` (metav1.Condition with observedGeneration), for custom resources:
/// lastTransitionTime only moves when status changes; entries keep their position. Returns
/// whether anything changed.
///
/// Fields are compared as JSON, not as Go's typed struct, so an entry another client wrote
/// without a reason or message (Go's zero value) gains the field; the traces depend on it.
pub fn set_status_condition(
    status: &mut Value,
    cond: Cond<'_>,
    observed_generation: i64,
    now: SimTime,
) -> bool {
    let Some(list) = conditions_mut(status) else {
        return false;
    };
    let now_s = now.rfc3339();
    if let Some(existing) = list
        .iter_mut()
        .find(|c| str_at(c, path!("/type")) == cond.type_)
    {
        let mut changed = false;
        let status_differs = str_at(existing, path!("/status")) != cond.status;
        let mut put = |field: &str, v: Value, changed: &mut bool| {
            if existing.get(field) != Some(&v) {
                existing[field] = v;
                *changed = true;
            }
        };
        if status_differs {
            put("lastTransitionTime", json!(now_s), &mut changed);
        }
        put("status", json!(cond.status), &mut changed);
        put("reason", json!(cond.reason), &mut changed);
        put("message", json!(cond.message), &mut changed);
        put(
            "observedGeneration",
            json!(observed_generation),
            &mut changed,
        );
        return changed;
    }
    list.push(json!({
        "type": cond.type_,
        "status": cond.status,
        "observedGeneration": observed_generation,
        "lastTransitionTime": now_s,
        "reason": cond.reason,
        "message": cond.message,
    }));
    true
}

/// The Deployment controller's `SetDeploymentCondition` [pkg/controller/deployment/util
/// deployment_util.go]: same type, status and reason is no change at all; otherwise the old
/// entry is removed and the new one appended with lastUpdateTime now, keeping
/// lastTransitionTime when the status is unchanged.
pub fn set_deployment_condition(status: &mut Value, cond: Cond<'_>, now: SimTime) {
    let Some(list) = conditions_mut(status) else {
        return;
    };
    let now_s = now.rfc3339();
    let mut transition = now_s.clone();
    if let Some(pos) = list
        .iter()
        .position(|c| str_at(c, path!("/type")) == cond.type_)
    {
        let old = &list[pos];
        if str_at(old, path!("/status")) == cond.status
            && str_at(old, path!("/reason")) == cond.reason
        {
            return;
        }
        if str_at(old, path!("/status")) == cond.status {
            transition = str_at(old, path!("/lastTransitionTime")).to_owned();
        }
        list.remove(pos);
    }
    list.push(json!({
        "type": cond.type_,
        "status": cond.status,
        "lastUpdateTime": now_s,
        "lastTransitionTime": transition,
        "reason": cond.reason,
        "message": cond.message,
    }));
}

/// A pod condition (no observedGeneration, lastProbeTime null), as the kubelet's status
/// manager (`updateLastTransitionTime`, pkg/kubelet/status/status_manager.go) and the
/// scheduler (`podutil.UpdatePodCondition`, pkg/api/v1/pod/util.go) write them: the entry is
/// replaced in place and lastTransitionTime moves only when status changes; an empty reason or
/// message is omitted.
pub fn set_pod_condition(status: &mut Value, cond: Cond<'_>, now: SimTime) {
    // The kubelet sets every condition on every status sync, most as they are: an entry that
    // is already what this would write (its time kept) is left alone, shared and not copied.
    let current = status
        .field("conditions")
        .and_then(Value::as_array)
        .and_then(|list| {
            list.iter()
                .find(|c| str_at(c, path!("/type")) == cond.type_)
        });
    if current.is_some_and(|c| written_as(c, &cond)) {
        return;
    }
    let Some(list) = conditions_mut(status) else {
        return;
    };
    let now_s = now.rfc3339();
    let mut entry = json!({
        "type": cond.type_,
        "status": cond.status,
        "lastProbeTime": null,
        "lastTransitionTime": now_s,
    });
    if !cond.reason.is_empty() {
        entry["reason"] = json!(cond.reason);
    }
    if !cond.message.is_empty() {
        entry["message"] = json!(cond.message);
    }
    if let Some(existing) = list
        .iter_mut()
        .find(|c| str_at(c, path!("/type")) == cond.type_)
    {
        if str_at(existing, path!("/status")) == cond.status {
            entry["lastTransitionTime"] = existing.member("lastTransitionTime").clone();
        }
        *existing = entry;
    } else {
        list.push(entry);
    }
}

/// Whether `entry` is what [`set_pod_condition`] writes for `cond` when the status is
/// unchanged: the same members in the same order, the transition time whatever it was.
fn written_as(entry: &Value, cond: &Cond<'_>) -> bool {
    enum Is<'a> {
        Text(&'a str),
        Null,
        Any,
    }
    let Some(m) = entry.as_object() else {
        return false;
    };
    let members = [
        Some(("type", Is::Text(cond.type_))),
        Some(("status", Is::Text(cond.status))),
        Some(("lastProbeTime", Is::Null)),
        Some(("lastTransitionTime", Is::Any)),
        (!cond.reason.is_empty()).then_some(("reason", Is::Text(cond.reason))),
        (!cond.message.is_empty()).then_some(("message", Is::Text(cond.message))),
    ];
    let want = members.iter().flatten();
    m.len() == want.clone().count()
        && m.iter().zip(want).all(|((k, v), (key, is))| {
            &**k == *key
                && match is {
                    Is::Text(t) => v.as_str() == Some(*t),
                    Is::Null => v.is_null(),
                    Is::Any => true,
                }
        })
}

/// The autoscaler's conditions, kube's `setConditionInList` [pkg/controller/podautoscaler
/// horizontal.go]: updated in place (the transition time moves only when the status changes),
/// or appended; reason and message are always overwritten.
pub fn set_hpa_condition(
    status: &mut Value,
    type_: &str,
    s: &str,
    reason: &str,
    message: &str,
    now: SimTime,
) {
    if !status.field("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) else {
        return;
    };
    let pos = match list.iter().position(|c| str_at(c, path!("/type")) == type_) {
        Some(i) => i,
        None => {
            list.push(json!({"type": type_, "status": "", "lastTransitionTime": now.rfc3339()}));
            list.len() - 1
        }
    };
    let c = &mut list[pos];
    if str_at(c, path!("/status")) != s {
        c["lastTransitionTime"] = json!(now.rfc3339());
    }
    c["status"] = json!(s);
    c["reason"] = json!(reason);
    c["message"] = json!(message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_condition_already_written_stays_and_any_other_is_rewritten() {
        let ready = |reason| Cond {
            type_: "Ready",
            status: "True",
            reason,
            message: "",
        };
        let (t0, t1) = (SimTime::from_ms(1_000), SimTime::from_ms(9_000));
        let mut status = json!({"phase": "Running"});
        set_pod_condition(&mut status, ready(""), t0);
        let first = status.to_string();
        set_pod_condition(&mut status, ready(""), t1);
        assert_eq!(status.to_string(), first, "unchanged, its time kept");
        // A reason now: rewritten, the time still kept (the status did not change).
        set_pod_condition(&mut status, ready("Up"), t1);
        let at = t0.rfc3339();
        assert_eq!(
            status["conditions"][0].to_string(),
            format!(
                r#"{{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"{at}","reason":"Up"}}"#
            )
        );
        // Another writer's order, or a member this one does not write: rewritten in its own.
        for other in [
            json!({"status": "True", "type": "Ready", "lastProbeTime": null, "lastTransitionTime": at}),
            json!({"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": at, "observedGeneration": 1}),
            json!({"type": "Ready", "status": "True", "lastProbeTime": "x", "lastTransitionTime": at}),
        ] {
            let mut status = json!({"conditions": [other]});
            set_pod_condition(&mut status, ready(""), t1);
            assert_eq!(
                status["conditions"][0].to_string(),
                format!(
                    r#"{{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"{at}"}}"#
                )
            );
        }
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
    fn set_status_condition_keeps_transition_time_when_status_is_unchanged() {
        let mut status = json!({});
        let c = |s| Cond {
            type_: "Ready",
            status: s,
            reason: "R",
            message: "",
        };
        assert!(set_status_condition(&mut status, c("False"), 1, SimTime(0)));
        assert!(!set_status_condition(
            &mut status,
            c("False"),
            1,
            SimTime(5000)
        ));
        assert_eq!(
            str_at(&status, "/conditions/0/lastTransitionTime"),
            "2025-01-01T00:00:00Z"
        );
        assert!(set_status_condition(
            &mut status,
            c("True"),
            2,
            SimTime(5000)
        ));
        assert_eq!(
            str_at(&status, "/conditions/0/lastTransitionTime"),
            "2025-01-01T00:00:05Z"
        );
    }

    #[test]
    fn deployment_conditions_are_appended_after_replacement() {
        let mut status = json!({});
        let c = |t, r| Cond {
            type_: t,
            status: "True",
            reason: r,
            message: "",
        };
        set_deployment_condition(
            &mut status,
            c("Progressing", "NewReplicaSetCreated"),
            SimTime(0),
        );
        set_deployment_condition(
            &mut status,
            c("Available", "MinimumReplicasAvailable"),
            SimTime(0),
        );
        set_deployment_condition(
            &mut status,
            c("Progressing", "ReplicaSetUpdated"),
            SimTime(1000),
        );
        assert_eq!(str_at(&status, "/conditions/0/type"), "Available");
        assert_eq!(str_at(&status, "/conditions/1/reason"), "ReplicaSetUpdated");
        assert_eq!(
            str_at(&status, "/conditions/1/lastTransitionTime"),
            "2025-01-01T00:00:00Z"
        );
    }
}
