//! Manifest decoding and request-size guards: JSON or YAML text (one or many documents,
//! `List`s expanded) into objects, with line and column on syntax errors; limits on the size
//! and nesting depth of request bodies so hostile input is refused, not a crash.

use crate::json::Value;

use super::errors::bad_request;
use super::types::ApiError;

/// kube-apiserver's request body limit (3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;
/// The deepest object nesting accepted.
pub const MAX_DEPTH: usize = 100;

struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        if self.0 > MAX_BODY_BYTES {
            return Err(std::io::Error::other("too large"));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether a value nests deeper than `limit`, without recursion and without building paths
/// (every request body is checked, so the common answer, no, must be cheap).
fn nests_deeper_than(v: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 1)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        let containers = |c: &&Value| c.is_object() || c.is_array();
        match v {
            Value::Object(m) => stack.extend(m.values().filter(containers).map(|c| (c, d + 1))),
            Value::Array(a) => stack.extend(a.iter().filter(containers).map(|c| (c, d + 1))),
            _ => {}
        }
    }
    false
}

/// The bytes a value adds to [`measure`]'s bound of the serialized length, its members not
/// counted: every string byte counted as a six-byte `\u00XX` escape, every number as 32 bytes
/// (serde_json prints at most 24).
fn leaf_len_bound(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 32,
        Value::String(s) => 2 + 6 * s.len(),
        Value::Array(a) => 2 + a.len(),
        Value::Object(m) => 2 + m.keys().map(|k| 4 + 6 * k.len()).sum::<usize>(),
    }
}

/// Whether `v` nests deeper than `limit` and, when it does not, an upper bound of its length
/// serialized as compact JSON ([`leaf_len_bound`] over every value), computed without serializing: in
/// one walk, without recursion, where the depth and the length took a walk each (every request
/// body is measured, so the common answer must be cheap).
fn measure(v: &Value, limit: usize) -> Result<usize, ()> {
    let mut total = leaf_len_bound(v);
    let mut stack: Vec<(&Value, usize)> = vec![(v, 1)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return Err(());
        }
        let mut child = |c: &'_ Value| {
            total = total.saturating_add(leaf_len_bound(c));
            c.is_object() || c.is_array()
        };
        match v {
            Value::Object(m) => {
                for c in m.values() {
                    if child(c) {
                        stack.push((c, d + 1));
                    }
                }
            }
            Value::Array(a) => {
                for c in a.iter() {
                    if child(c) {
                        stack.push((c, d + 1));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(total)
}

/// [`measure`]'s bound alone, for the tests.
#[cfg(test)]
fn serialized_len_bound(v: &Value) -> usize {
    measure(v, usize::MAX).expect("no limit")
}

/// Nesting depth of a value, computed without recursion (so absurd depths cannot overflow the
/// stack); stops counting past `limit`.
pub fn depth_exceeds(v: &Value, limit: usize) -> Option<String> {
    if !nests_deeper_than(v, limit) {
        return None;
    }
    let mut stack: Vec<(&Value, usize, String)> = vec![(v, 1, String::new())];
    while let Some((v, d, path)) = stack.pop() {
        if d > limit {
            return Some(if path.is_empty() {
                "<root>".to_owned()
            } else {
                path
            });
        }
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    if c.is_object() || c.is_array() {
                        let p = if path.is_empty() {
                            k.to_string()
                        } else {
                            format!("{path}.{k}")
                        };
                        stack.push((c, d + 1, p));
                    }
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    if c.is_object() || c.is_array() {
                        stack.push((c, d + 1, format!("{path}[{i}]")));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Refuses bodies over [`MAX_BODY_BYTES`] or nested deeper than [`MAX_DEPTH`].
pub fn check_body(v: &Value) -> Result<(), ApiError> {
    check_measured(v, measure_body(v))
}

/// [`measure`] at [`MAX_DEPTH`]: what [`check_measured`] judges, taken once for a request's
/// body (the API server refuses a body too deep before anything else, and later judges its
/// size where kube's decoder would).
pub(super) fn measure_body(v: &Value) -> Result<usize, ()> {
    measure(v, MAX_DEPTH)
}

/// [`check_body`] of a body [`measure_body`] measured.
pub(super) fn check_measured(v: &Value, measured: Result<usize, ()>) -> Result<(), ApiError> {
    match measured {
        Ok(bound) if bound <= MAX_BODY_BYTES => return Ok(()),
        Ok(_) => {}
        Err(()) => {
            let path = depth_exceeds(v, MAX_DEPTH).unwrap_or_default();
            return Err(bad_request(format!(
                "object nesting is too deep: more than {MAX_DEPTH} levels at {path}"
            )));
        }
    }
    let mut c = Counter(0);
    if serde_json::to_writer(&mut c, v).is_err() {
        return Err(bad_request(format!(
            "Request entity too large: limit is {MAX_BODY_BYTES}"
        )));
    }
    Ok(())
}

/// Takes a value apart iteratively, so dropping a pathologically deep document cannot
/// overflow the stack.
pub fn drop_deep(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, c)| c)),
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
}

/// Parses JSON or YAML text (several `---`-separated YAML documents allowed; `List` and
/// `*List` objects expanded to their items) with [`crate::parse::parse_documents`], and refuses,
/// as a 400, what that parser refuses (syntax errors name the line and column) or what the API
/// server would not accept as a body (too large, too deep).
pub fn parse_manifests(text: &str) -> Result<Vec<Value>, ApiError> {
    if text.len() > MAX_BODY_BYTES {
        return Err(bad_request(format!(
            "Request entity too large: limit is {MAX_BODY_BYTES}"
        )));
    }
    let out = crate::parse::parse_documents(text).map_err(|e| bad_request(e.to_string()))?;
    for v in &out {
        check_body(v)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_and_lists_are_expanded() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n";
        let objs = parse_manifests(text).unwrap();
        let names: Vec<&str> = objs
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn json_input_is_accepted_and_errors_carry_line_and_column() {
        assert_eq!(parse_manifests("{\"kind\": \"Pod\"}").unwrap().len(), 1);
        let e = parse_manifests("{\n  \"kind\": \"Pod\",\n  oops\n}").unwrap_err();
        assert!(e.message.contains("line 3"), "{}", e.message);
        let e = parse_manifests("kind: Pod\nmetadata:\n  name: [unclosed\n").unwrap_err();
        assert!(e.message.contains("line"), "{}", e.message);
        assert_eq!(e.code(), 400);
    }

    #[test]
    fn deep_and_huge_documents_are_refused() {
        let mut v = Value::from(1);
        for _ in 0..200 {
            v = crate::json::json!({"a": v});
        }
        assert!(check_body(&v)
            .unwrap_err()
            .message
            .contains("nesting is too deep"));
        drop_deep(v);
        let big = crate::json::json!({"data": "x".repeat(MAX_BODY_BYTES + 1)});
        assert!(check_body(&big)
            .unwrap_err()
            .message
            .contains("Request entity too large"));
    }

    #[test]
    fn the_size_bound_is_never_below_the_serialized_size() {
        let samples = [
            crate::json::json!(null),
            crate::json::json!(true),
            crate::json::json!(-9223372036854775808i64),
            crate::json::json!(18446744073709551615u64),
            crate::json::json!(-1.7976931348623157e308),
            crate::json::json!(1e-300),
            crate::json::json!("\u{1}\"\\\n\u{7f}é漢🦀"),
            crate::json::json!({"\u{1}k\"": [1, 2.5, "x", {}, [], null], "": {"a": {"b": false}}}),
        ];
        for v in samples {
            let exact = serde_json::to_string(&v).unwrap().len();
            assert!(serialized_len_bound(&v) >= exact, "{v}");
        }
    }

    #[test]
    fn depth_is_refused_exactly_past_the_limit() {
        let nest = |levels: usize| {
            let mut v = Value::from(1);
            for _ in 0..levels {
                v = crate::json::json!([v]);
            }
            v
        };
        assert_eq!(depth_exceeds(&nest(MAX_DEPTH), MAX_DEPTH), None);
        assert!(depth_exceeds(&nest(MAX_DEPTH + 1), MAX_DEPTH).is_some());
    }

    #[test]
    fn scalars_are_not_manifests() {
        assert!(parse_manifests("42").is_err());
    }
}
