//! Whether a check holds on one object (kstatus, a field, a condition, existence) at a time,
//! with the expected and observed values as text for the report.

use crate::api::meta::Fields;
use crate::json::Value;

use super::Check;
use crate::kstatus;
use crate::time::SimTime;

/// Whether a check holds on an object (None: absent) at a time, with the expected and observed
/// values as text.
pub(crate) fn evaluate(check: &Check, obj: Option<&Value>, now: SimTime) -> (bool, String, String) {
    match check {
        Check::Exists(want) => {
            let has = obj.is_some();
            let text = |b: bool| if b { "present" } else { "absent" }.to_owned();
            (has == *want, text(*want), text(has))
        }
        Check::Kstatus { status, message } => {
            let expected = match message {
                Some(m) => format!("{} {m:?}", status.as_str()),
                None => status.as_str().to_owned(),
            };
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            match kstatus::compute_at(obj, now) {
                Ok(r) => {
                    let ok = r.status.as_str() == status.as_str()
                        && message.as_ref().is_none_or(|m| *m == r.message);
                    let got = if message.is_some() || !ok {
                        format!("{} {:?}", r.status.as_str(), r.message)
                    } else {
                        r.status.as_str().to_owned()
                    };
                    (ok, expected, got)
                }
                Err(e) => (false, expected, format!("no verdict: {e}")),
            }
        }
        Check::Field { path, equals } => {
            let expected = equals.to_string();
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            // `equals: null` means absent or null, as kube's omitempty fields read.
            match path.get(obj) {
                Some(v) => (v == equals, expected, v.to_string()),
                None if equals.is_null() => (true, expected, "absent".into()),
                None => (false, expected, format!("no field {}", path.text())),
            }
        }
        Check::Condition {
            type_,
            status,
            reason,
            message,
        } => {
            let mut want = Vec::new();
            if let Some(s) = status {
                want.push(format!("status {s}"));
            }
            if let Some(r) = reason {
                want.push(format!("reason {r}"));
            }
            if let Some(m) = message {
                want.push(format!("message {m:?}"));
            }
            let expected = if want.is_empty() {
                format!("condition {type_}")
            } else {
                want.join(", ")
            };
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            let found = obj
                .field("status")
                .and_then(|s| s.field("conditions"))
                .and_then(Value::as_array)
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.field("type").and_then(Value::as_str) == Some(type_.as_str()))
                });
            let Some(c) = found else {
                return (false, expected, format!("no {type_} condition"));
            };
            let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let ok = status.as_ref().is_none_or(|s| *s == field("status"))
                && reason.as_ref().is_none_or(|r| *r == field("reason"))
                && message.as_ref().is_none_or(|m| *m == field("message"));
            let mut got = Vec::new();
            if status.is_some() || want.is_empty() {
                got.push(format!("status {}", field("status")));
            }
            if reason.is_some() {
                got.push(format!("reason {}", field("reason")));
            }
            if message.is_some() {
                got.push(format!("message {:?}", field("message")));
            }
            (ok, expected, got.join(", "))
        }
        Check::Compare { path, bounds } => {
            let expected = bounds.text();
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            match path.get(obj) {
                Some(v) => match v.as_f64() {
                    Some(n) => (bounds.holds(n), expected, v.to_string()),
                    None => (false, expected, format!("{v}, not a number")),
                },
                None => (false, expected, format!("no field {}", path.text())),
            }
        }
        Check::Matches { path, pattern } => {
            let expected = format!("matches {:?}", pattern.0.as_str());
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            match path.get(obj) {
                Some(v) => {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    (pattern.0.is_match(&text), expected, format!("{text:?}"))
                }
                None => (false, expected, format!("no field {}", path.text())),
            }
        }
        // Counted on the whole world by `evaluate_in`; a lesson predicate is never one.
        Check::Count { .. }
        | Check::CausedBy { .. }
        | Check::Requests { .. }
        | Check::Events { .. }
        | Check::Response { .. } => (false, String::new(), String::new()),
    }
}
