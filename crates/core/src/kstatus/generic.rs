//! kstatus' generic checks (`generic.go`) and the Ready fallback for unknown kinds (`status.go`).

use crate::json::Value;

use super::{
    conditions_of, kind_of, nested_int64, nested_string, KstatusCondition, KstatusConditionType,
    KstatusError, KstatusResult, Status,
};

/// Deletion, then generation vs observedGeneration, then `Reconciling`/`Stalled` conditions.
/// `None` when none of them decides.
pub(super) fn check_generic_properties(obj: &Value) -> Result<Option<KstatusResult>, KstatusError> {
    let deletion = nested_string(obj, &["metadata", "deletionTimestamp"]).map_err(|e| {
        KstatusError::new(format!(
            "looking up metadata.deletionTimestamp from resource: {e}"
        ))
    })?;
    if deletion.is_some_and(|t| !t.is_empty()) {
        return Ok(Some(KstatusResult {
            status: Status::Terminating,
            message: "Resource scheduled for deletion".into(),
            conditions: Vec::new(),
        }));
    }

    if let Some(res) = check_generation(obj)? {
        return Ok(Some(res));
    }

    for cond in conditions_of(obj)? {
        let (type_, status) = match (cond.type_, cond.status) {
            ("Reconciling", "True") => (KstatusConditionType::Reconciling, Status::InProgress),
            ("Stalled", "True") => (KstatusConditionType::Stalled, Status::Failed),
            _ => continue,
        };
        return Ok(Some(KstatusResult {
            status,
            message: cond.message.to_owned(),
            conditions: vec![KstatusCondition {
                type_,
                reason: cond.reason.to_owned(),
                message: cond.message.to_owned(),
            }],
        }));
    }
    Ok(None)
}

/// InProgress while `metadata.generation` and `status.observedGeneration` are both present and
/// differ. A missing generation skips the check without looking at observedGeneration.
fn check_generation(obj: &Value) -> Result<Option<KstatusResult>, KstatusError> {
    let generation = nested_int64(obj, &["metadata", "generation"]).map_err(|e| {
        KstatusError::new(format!("looking up metadata.generation from resource: {e}"))
    })?;
    let Some(generation) = generation else {
        return Ok(None);
    };
    let observed = nested_int64(obj, &["status", "observedGeneration"]).map_err(|e| {
        KstatusError::new(format!(
            "looking up status.observedGeneration from resource: {e}"
        ))
    })?;
    match observed {
        Some(observed) if observed != generation => {
            let message = format!(
                "{} generation is {generation}, but latest observed generation is {observed}",
                kind_of(obj)
            );
            Ok(Some(KstatusResult::in_progress(
                "LatestGenerationNotObserved",
                message,
            )))
        }
        _ => Ok(None),
    }
}

/// DaemonSet's stricter check: both generation fields must be present.
pub(super) fn check_generation_set(obj: &Value) -> Result<Option<KstatusResult>, KstatusError> {
    let generation = nested_int64(obj, &["metadata", "generation"]).map_err(|e| {
        KstatusError::new(format!("looking up metadata.generation from resource: {e}"))
    })?;
    if generation.is_none() {
        let message = format!("{} metadata.generation not found", kind_of(obj));
        return Ok(Some(KstatusResult::in_progress("NoGeneration", message)));
    }
    let observed = nested_int64(obj, &["status", "observedGeneration"]).map_err(|e| {
        KstatusError::new(format!(
            "looking up status.observedGeneration from resource: {e}"
        ))
    })?;
    if observed.is_none() {
        let message = format!("{} status.observedGeneration not found", kind_of(obj));
        return Ok(Some(KstatusResult::in_progress(
            "NoObservedGeneration",
            message,
        )));
    }
    Ok(None)
}

/// For kinds without rules: the first `Ready` condition with status True, False or Unknown.
pub(super) fn check_ready_condition(obj: &Value) -> Result<Option<KstatusResult>, KstatusError> {
    for cond in conditions_of(obj)? {
        if cond.type_ != "Ready" {
            continue;
        }
        match cond.status {
            "True" => return Ok(Some(KstatusResult::current("Resource is Ready"))),
            "False" | "Unknown" => {
                return Ok(Some(KstatusResult::in_progress(cond.reason, cond.message)))
            }
            _ => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::{compute, KstatusResult, Status};
    use crate::json::{json, Value};

    fn widget(metadata: Value, status: Value) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": metadata, "status": status})
    }

    fn run(obj: &Value) -> KstatusResult {
        compute(obj, 0).unwrap()
    }

    #[test]
    fn a_deletion_timestamp_means_terminating() {
        let res = run(&widget(
            json!({"name": "w", "deletionTimestamp": "2025-01-01T00:00:00Z", "generation": 2}),
            json!({"observedGeneration": 1}),
        ));
        assert_eq!(res.status, Status::Terminating);
        assert_eq!(res.message, "Resource scheduled for deletion");
        assert!(res.conditions.is_empty());
    }

    #[test]
    fn an_empty_deletion_timestamp_is_ignored() {
        let res = run(&widget(json!({"deletionTimestamp": ""}), json!({})));
        assert_eq!(res.status, Status::Current);
    }

    #[test]
    fn a_non_string_deletion_timestamp_is_an_error() {
        let err = compute(&widget(json!({"deletionTimestamp": null}), json!({})), 0).unwrap_err();
        assert_eq!(
            err.message,
            "looking up metadata.deletionTimestamp from resource: .metadata.deletionTimestamp \
             accessor error: <nil> is of the type <nil>, expected string"
        );
    }

    #[test]
    fn an_unobserved_generation_is_in_progress_in_either_direction() {
        let res = run(&widget(
            json!({"generation": 3}),
            json!({"observedGeneration": 2}),
        ));
        assert_eq!(
            res,
            KstatusResult::in_progress(
                "LatestGenerationNotObserved",
                "Widget generation is 3, but latest observed generation is 2",
            )
        );
        let res = run(&widget(
            json!({"generation": 1}),
            json!({"observedGeneration": 2}),
        ));
        assert_eq!(
            res.message,
            "Widget generation is 1, but latest observed generation is 2"
        );
    }

    #[test]
    fn a_missing_generation_field_skips_the_check() {
        assert_eq!(
            run(&widget(json!({}), json!({"observedGeneration": 2}))).status,
            Status::Current
        );
        assert_eq!(
            run(&widget(json!({"generation": 2}), json!({}))).status,
            Status::Current
        );
    }

    #[test]
    fn a_wrongly_typed_generation_is_an_error() {
        let err = compute(&widget(json!({"generation": 1.5}), json!({})), 0).unwrap_err();
        assert_eq!(
            err.message,
            "looking up metadata.generation from resource: .metadata.generation accessor \
             error: 1.5 is of the type float64, expected int64"
        );
        let err = compute(
            &widget(json!({"generation": 1}), json!({"observedGeneration": "1"})),
            0,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "looking up status.observedGeneration from resource: .status.observedGeneration \
             accessor error: 1 is of the type string, expected int64"
        );
    }

    #[test]
    fn the_first_reconciling_or_stalled_true_condition_decides() {
        let res = run(&widget(
            json!({}),
            json!({"conditions": [
                {"type": "Reconciling", "status": "False", "reason": "No"},
                {"type": "Stalled", "status": "True", "reason": "Broken", "message": "it broke"},
                {"type": "Reconciling", "status": "True", "reason": "Working", "message": "busy"},
            ]}),
        ));
        assert_eq!(res, KstatusResult::failed("Broken", "it broke"));
        let res = run(&widget(
            json!({}),
            json!({"conditions": [
                {"type": "Reconciling", "status": "True", "reason": "Working", "message": "busy"},
                {"type": "Stalled", "status": "True", "reason": "Broken", "message": "it broke"},
            ]}),
        ));
        assert_eq!(res, KstatusResult::in_progress("Working", "busy"));
    }

    #[test]
    fn generic_conditions_win_over_per_kind_rules() {
        let res = run(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "status": {"conditions": [{"type": "Stalled", "status": "True", "reason": "X", "message": "y"}]}}));
        assert_eq!(res.status, Status::Failed);
    }

    #[test]
    fn unknown_kinds_use_the_first_ready_condition() {
        let ready = |status: &str| {
            run(&widget(
                json!({}),
                json!({"conditions": [
                    {"type": "Ready", "status": status, "reason": "Why", "message": "because"},
                    {"type": "Ready", "status": "True"},
                ]}),
            ))
        };
        assert_eq!(ready("True"), KstatusResult::current("Resource is Ready"));
        assert_eq!(ready("False"), KstatusResult::in_progress("Why", "because"));
        assert_eq!(
            ready("Unknown"),
            KstatusResult::in_progress("Why", "because")
        );
        // Any other status string is skipped and the next Ready condition decides.
        assert_eq!(ready("Maybe"), KstatusResult::current("Resource is Ready"));
    }

    #[test]
    fn unknown_kinds_without_ready_are_current() {
        assert_eq!(
            run(&widget(json!({}), json!({}))),
            KstatusResult::current("Resource is current")
        );
    }
}
