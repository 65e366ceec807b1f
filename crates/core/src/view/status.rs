//! The status panel: generation vs observedGeneration, status fields with what the last step
//! changed, the conditions table and `kubectl rollout status`.

use crate::api::meta::Fields;
use std::collections::BTreeSet;

use crate::json::Value;

use crate::rollout;
use crate::time::{parse_rfc3339_unix_ms, SimTime};

#[derive(Clone, Debug, PartialEq)]
pub struct StatusField {
    /// JSON pointer under `status`, e.g. `/readyReplicas`.
    pub path: String,
    pub value: String,
    /// Changed in the last step.
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConditionRow {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub last_transition: String,
    /// `12 s ago` in simulated time.
    pub ago: String,
    pub observed_generation: Option<i64>,
    pub stale: bool,
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StatusView {
    pub generation: Option<i64>,
    pub observed_generation: Option<i64>,
    /// observedGeneration < generation (or missing while generation is set).
    pub stale: bool,
    /// The kind's status has an observedGeneration (a Job's has none: k8s.io/api batch/v1
    /// JobStatus), so generation and observedGeneration can be compared.
    pub reports_observed: bool,
    pub fields: Vec<StatusField>,
    pub conditions: Vec<ConditionRow>,
    /// kubectl's rollout line, or its error, for kinds it knows.
    pub rollout: Option<String>,
}

/// The panel for `obj` now; `before` is the same object one step earlier.
pub fn status_view(obj: &Value, before: Option<&Value>, now: SimTime) -> StatusView {
    let generation = obj.pointer("/metadata/generation").and_then(Value::as_i64);
    let observed = obj
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    let kind_in = |kind: &str, group: &str| {
        obj.field("kind").and_then(Value::as_str) == Some(kind)
            && obj
                .field("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| v.starts_with(group))
    };
    // An EndpointSlice has no status (k8s.io/api discovery/v1): what the controller observed
    // is its endpoints, shown in the status's place, and nothing compares its generation.
    let slice = kind_in("EndpointSlice", "discovery.k8s.io/");
    let observed_part = |o: &Value| -> Option<Value> {
        if slice {
            o.field("endpoints")
                .map(|e| crate::json::json!({"endpoints": e}))
        } else {
            o.field("status").cloned()
        }
    };
    let reports_observed = !(kind_in("Job", "batch/") || slice);
    let stale = match (generation, observed) {
        (Some(g), Some(o)) => o < g,
        (Some(_), None) => reports_observed,
        _ => false,
    };
    let old_status = before.and_then(observed_part);
    let status_now = observed_part(obj);
    let mut fields = Vec::new();
    if let Some(status) = &status_now {
        flatten("", status, &mut fields);
    }
    let mut changed_paths = BTreeSet::new();
    if before.is_some() {
        for c in crate::engine::report::diff(old_status.as_ref(), status_now.as_ref()) {
            changed_paths.insert(c.path);
        }
    }
    let fields = fields
        .into_iter()
        .filter(|(p, _)| !p.starts_with("/conditions"))
        .map(|(path, value)| StatusField {
            changed: changed_paths
                .iter()
                .any(|c| path.starts_with(c.as_str()) || c.starts_with(&path)),
            path,
            value,
        })
        .collect();
    let conditions = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .enumerate()
                .map(|(i, c)| {
                    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    let last = s("lastTransitionTime");
                    let ago = parse_rfc3339_unix_ms(&last)
                        .map(|t| format!("{} s ago", (now.unix_ms() - t).max(0) / 1000))
                        .unwrap_or_default();
                    let og = c.field("observedGeneration").and_then(Value::as_i64);
                    let prefix = format!("/conditions/{i}");
                    ConditionRow {
                        type_: s("type"),
                        status: s("status"),
                        reason: s("reason"),
                        message: s("message"),
                        last_transition: last,
                        ago,
                        observed_generation: og,
                        stale: matches!((og, generation), (Some(o), Some(g)) if o < g),
                        changed: changed_paths
                            .iter()
                            .any(|p| p.starts_with(&prefix) || p == "/conditions"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let kind = obj.field("kind").and_then(Value::as_str).unwrap_or("");
    let rollout = matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet").then(|| {
        match rollout::rollout_status(obj, None) {
            Ok(r) => r.message.trim_end().to_owned(),
            Err(e) => format!("error: {e}"),
        }
    });
    StatusView {
        generation,
        observed_generation: observed,
        stale,
        reports_observed,
        fields,
        conditions,
        rollout,
    }
}

fn flatten(path: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                flatten(&format!("{path}/{k}"), x, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{path}/{i}"), x, out);
            }
        }
        Value::String(s) => out.push((path.to_owned(), s.to_string())),
        other => out.push((path.to_owned(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn an_endpoint_slices_endpoints_stand_in_for_its_status() {
        let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generation": 3}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.244.1.2"], "conditions": {"ready": false}}]});
        let mut before = slice.clone();
        before["endpoints"][0]["conditions"]["ready"] = json!(true);
        let v = status_view(&slice, Some(&before), SimTime::ZERO);
        assert!(!v.reports_observed && !v.stale);
        let ready = v
            .fields
            .iter()
            .find(|f| f.path == "/endpoints/0/conditions/ready")
            .cloned();
        assert_eq!(ready.as_ref().map(|f| f.value.as_str()), Some("false"));
        assert!(ready.is_some_and(|f| f.changed));
    }

    #[test]
    fn a_jobs_status_has_no_observed_generation_to_be_stale_against() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generation": 1},
            "status": {"active": 1}});
        let v = status_view(&job, None, SimTime::from_ms(0));
        assert!(!v.reports_observed);
        assert!(!v.stale);
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generation": 1},
            "status": {}});
        assert!(status_view(&deploy, None, SimTime::from_ms(0)).stale);
    }

    #[test]
    fn a_newer_generation_is_stale_until_observed() {
        let before = json!({"kind": "Deployment", "metadata": {"generation": 2},
            "status": {"observedGeneration": 1, "readyReplicas": 3}});
        let after = json!({"kind": "Deployment", "metadata": {"generation": 2},
            "status": {"observedGeneration": 2, "readyReplicas": 3,
              "conditions": [{"type": "Available", "status": "True", "observedGeneration": 1,
                "lastTransitionTime": "2025-01-01T00:00:02Z"}]}});
        let v = status_view(&before, None, SimTime(0));
        assert!(v.stale);
        let v = status_view(&after, Some(&before), SimTime(12_000));
        assert!(!v.stale);
        let og = v.fields.iter().find(|f| f.path == "/observedGeneration");
        assert!(og.is_some_and(|f| f.changed));
        let ready = v.fields.iter().find(|f| f.path == "/readyReplicas");
        assert!(ready.is_some_and(|f| !f.changed));
        assert_eq!(v.conditions[0].ago, "10 s ago");
        assert!(v.conditions[0].stale);
        assert!(v.rollout.is_some());
    }
}
