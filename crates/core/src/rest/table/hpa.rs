//! HorizontalPodAutoscaler rows [printers.go `printHorizontalPodAutoscaler`, `formatHPAMetrics`].

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::{n, since};
use crate::api::meta::{self, str_at};
use crate::time::SimTime;

/// `formatHPAMetrics`: each spec metric with the status metric at the same position, at most
/// two shown.
pub(super) fn hpa_targets(hpa: &Value) -> String {
    let specs = hpa
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = hpa
        .pointer("/status/currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let q = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "<nil>".to_owned(),
    };
    let entries: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let status = statuses.get(i);
            match str_at(spec, "/type") {
                ty @ ("Resource" | "ContainerResource") => {
                    let field = if ty == "Resource" {
                        "resource"
                    } else {
                        "containerResource"
                    };
                    let src = &spec[field];
                    let cur_src = status.map(|st| &st[field]).filter(|v| !v.is_null());
                    if let Some(avg) = src.pointer("/target/averageValue").filter(|v| !v.is_null())
                    {
                        let cur = cur_src.map_or("<unknown>".to_owned(), |c| {
                            q(c.pointer("/current/averageValue"))
                        });
                        format!("{}: {cur}/{}", str_at(src, "/name"), q(Some(avg)))
                    } else {
                        let cur = cur_src
                            .and_then(|c| {
                                c.pointer("/current/averageUtilization")
                                    .and_then(Value::as_i64)
                            })
                            .map_or("<unknown>".to_owned(), |u| format!("{u}%"));
                        let target = src
                            .pointer("/target/averageUtilization")
                            .and_then(Value::as_i64)
                            .map_or("<auto>".to_owned(), |u| format!("{u}%"));
                        format!("{}: {cur}/{target}", str_at(src, "/name"))
                    }
                }
                "Pods" => {
                    let cur = status
                        .map(|st| st.member("pods"))
                        .filter(|v| !v.is_null())
                        .map_or("<unknown>".to_owned(), |p| {
                            q(p.pointer("/current/averageValue"))
                        });
                    format!("{cur}/{}", q(spec.pointer("/pods/target/averageValue")))
                }
                ty @ ("Object" | "External") => {
                    let field = if ty == "Object" { "object" } else { "external" };
                    let cur_src = status.map(|st| &st[field]).filter(|v| !v.is_null());
                    if let Some(avg) = spec
                        .pointer(&format!("/{field}/target/averageValue"))
                        .filter(|v| !v.is_null())
                    {
                        let cur = cur_src
                            .and_then(|c| {
                                c.pointer("/current/averageValue").filter(|v| !v.is_null())
                            })
                            .map_or("<unknown>".to_owned(), |v| q(Some(v)));
                        format!("{cur}/{} (avg)", q(Some(avg)))
                    } else {
                        let cur = cur_src
                            .map_or("<unknown>".to_owned(), |c| q(c.pointer("/current/value")));
                        format!(
                            "{cur}/{}",
                            q(spec.pointer(&format!("/{field}/target/value")))
                        )
                    }
                }
                _ => "<unknown type>".to_owned(),
            }
        })
        .collect();
    if entries.len() > 2 {
        format!(
            "{}, {} + {} more...",
            entries[0],
            entries[1],
            entries.len() - 2
        )
    } else {
        entries.join(", ")
    }
}
pub(super) fn hpa_cells(hpa: &Value, now: SimTime) -> Vec<Value> {
    let min = hpa
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or("<unset>".to_owned(), |m| m.to_string());
    vec![
        json!(meta::name(hpa)),
        json!(format!(
            "{}/{}",
            str_at(hpa, "/spec/scaleTargetRef/kind"),
            str_at(hpa, "/spec/scaleTargetRef/name")
        )),
        json!(hpa_targets(hpa)),
        json!(min),
        json!(n(hpa, "/spec/maxReplicas")),
        json!(n(hpa, "/status/currentReplicas")),
        json!(since(
            hpa.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
    ]
}
