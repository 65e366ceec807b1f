//! Custom resources' rows: a CRD version's `additionalPrinterColumns`, or `Age`
//! [apiextensions-apiserver pkg/registry/customresource/tableconvertor].

use crate::json::{json, Value};

use super::{column_json, human_duration, n, row, IncludeObject, NAME};
use crate::api::meta::{self, str_at};
use crate::time::SimTime;

/// A custom resource's table: `Name`, then the CRD's columns (or `Age` when it declares none);
/// each cell is the first match of the column's JSONPath (`.a.b`, `.a[0].b`), typed by the
/// column's type, `null` when nothing matches.
pub(super) fn custom_table(
    extra: &[Value],
    objects: &[Value],
    now: SimTime,
    include: IncludeObject,
) -> (Vec<Value>, Vec<Value>) {
    let default_age = [
        json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
        "description": "Time since the object was created."}),
    ];
    let extra = if extra.is_empty() {
        &default_age[..]
    } else {
        extra
    };
    let mut defs = vec![column_json(&NAME)];
    for c in extra {
        let description = match str_at(c, "/description") {
            "" => format!(
                "Custom resource definition column (in JSONPath format): {}",
                str_at(c, "/jsonPath")
            ),
            d => d.to_owned(),
        };
        defs.push(
            json!({"name": str_at(c, "/name"), "type": str_at(c, "/type"), "format": str_at(c, "/format"),
            "description": description, "priority": n(c, "/priority")}),
        );
    }
    let rows = objects
        .iter()
        .map(|o| {
            let mut cells = vec![json!(meta::name(o))];
            for c in extra {
                let found = json_path_first(o, str_at(c, "/jsonPath"));
                cells.push(match (str_at(c, "/type"), found) {
                    (_, None) => Value::Null,
                    ("string", Some(Value::String(v))) => json!(v),
                    ("string", Some(v)) => json!(v.to_string()),
                    ("integer", Some(v)) => v
                        .as_i64()
                        .or_else(|| v.as_f64().map(|f| f as i64))
                        .map_or(Value::Null, |i| json!(i)),
                    ("number", Some(v)) => v.as_f64().map_or(Value::Null, |f| json!(f)),
                    ("boolean", Some(Value::Bool(b))) => json!(b),
                    ("date", Some(Value::String(t))) => match SimTime::parse_rfc3339(t) {
                        Some(t) => json!(human_duration(now.as_ms() as i64 - t.as_ms() as i64)),
                        None if t.is_empty() => json!("<unknown>"),
                        None => json!("<invalid>"),
                    },
                    _ => Value::Null,
                });
            }
            row((cells, None), o, include)
        })
        .collect();
    (defs, rows)
}
/// The first value a simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`) finds.
pub(super) fn json_path_first<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for part in path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
    {
        let (field, index) = match part.split_once('[') {
            Some((f, rest)) => (f, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        if !field.is_empty() {
            cur = cur.get(field)?;
        }
        if let Some(i) = index {
            cur = cur.get(i)?;
        }
    }
    (!cur.is_null()).then_some(cur)
}
