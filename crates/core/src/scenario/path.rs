//! Field paths in expectations: `status.readyReplicas`, `status.conditions[0].type`,
//! `metadata.labels.member("app.kubernetes.io/name")`, `status.conditions[type=Progressing].reason` (the
//! first list item whose `type` is `Progressing`), or a JSON pointer (`/status/readyReplicas`).

use crate::json::Value;

use crate::api::meta::Fields;

/// A parsed field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    text: String,
    segments: Vec<PathSegment>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSegment {
    Key(String),
    Index(usize),
    /// `[field=value]`: the first list item whose `field` is the string `value`.
    Match {
        field: String,
        value: String,
    },
}

impl FieldPath {
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let bad = |why: &str| format!("malformed path {text:?}: {why}");
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        let mut segments = Vec::new();
        if let Some(pointer) = text.strip_prefix('/') {
            for part in pointer.split('/') {
                let key = part.replace("~1", "/").replace("~0", "~");
                segments.push(match key.parse::<usize>() {
                    Ok(i) if !key.starts_with('+') => PathSegment::Index(i),
                    _ => PathSegment::Key(key),
                });
            }
            return Ok(FieldPath {
                text: text.to_owned(),
                segments,
            });
        }
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut expect_key = true;
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    if expect_key {
                        return Err(bad("empty segment"));
                    }
                    expect_key = true;
                    i += 1;
                    if i == chars.len() {
                        return Err(bad("it ends with a dot"));
                    }
                }
                '[' => {
                    let close = chars[i..]
                        .iter()
                        .position(|c| *c == ']')
                        .ok_or_else(|| bad("unclosed ["))?
                        + i;
                    let inner: String = chars[i + 1..close].iter().collect();
                    let quoted = (inner.starts_with('"')
                        && inner.ends_with('"')
                        && inner.len() >= 2)
                        || (inner.starts_with('\'') && inner.ends_with('\'') && inner.len() >= 2);
                    if quoted {
                        segments.push(PathSegment::Key(inner[1..inner.len() - 1].to_owned()));
                    } else if let Some((field, value)) = inner.split_once('=') {
                        if field.is_empty() || value.is_empty() {
                            return Err(bad(&format!("[{inner}] needs a field and a value")));
                        }
                        segments.push(PathSegment::Match {
                            field: field.to_owned(),
                            value: value.to_owned(),
                        });
                    } else {
                        let n = inner.parse::<usize>().map_err(|_| {
                            bad(&format!(
                                "[{inner}] is not an index (use [\"key\"] for keys)"
                            ))
                        })?;
                        segments.push(PathSegment::Index(n));
                    }
                    expect_key = false;
                    i = close + 1;
                }
                ']' => return Err(bad("unexpected ]")),
                _ => {
                    if !expect_key {
                        return Err(bad("expected . or [ between segments"));
                    }
                    let start = i;
                    while i < chars.len() && !matches!(chars[i], '.' | '[' | ']') {
                        i += 1;
                    }
                    segments.push(PathSegment::Key(chars[start..i].iter().collect()));
                    expect_key = false;
                }
            }
        }
        if expect_key {
            return Err(bad("it ends with a dot"));
        }
        Ok(FieldPath {
            text: text.to_owned(),
            segments,
        })
    }

    /// The path as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// The value at this path, if present.
    pub fn get<'a>(&self, v: &'a Value) -> Option<&'a Value> {
        let mut cur = v;
        for s in &self.segments {
            cur = match s {
                PathSegment::Key(k) => cur.as_object()?.field(k)?,
                PathSegment::Index(i) => cur.as_array()?.get(*i)?,
                PathSegment::Match { field, value } => cur
                    .as_array()?
                    .iter()
                    .find(|item| item.field(field).and_then(Value::as_str) == Some(value))?,
            };
        }
        Some(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn dotted_paths_with_indexes_and_quoted_keys_resolve() {
        let v = json!({"status": {"conditions": [{"type": "A"}]}, "metadata": {"labels": {"app.kubernetes.io/name": "web"}}});
        let p = FieldPath::parse("status.conditions[0].type").unwrap();
        assert_eq!(p.get(&v), Some(&json!("A")));
        let q = FieldPath::parse("metadata.labels[\"app.kubernetes.io/name\"]").unwrap();
        assert_eq!(q.get(&v), Some(&json!("web")));
        let r = FieldPath::parse("/status/conditions/0/type").unwrap();
        assert_eq!(r.get(&v), Some(&json!("A")));
        let m = FieldPath::parse("status.conditions[type=A].type").unwrap();
        assert_eq!(m.get(&v), Some(&json!("A")));
        let none = FieldPath::parse("status.conditions[type=B]").unwrap();
        assert_eq!(none.get(&v), None);
    }

    #[test]
    fn malformed_paths_are_refused_with_the_reason() {
        for (p, why) in [
            ("status..x", "empty segment"),
            ("status.", "ends with a dot"),
            (".status", "empty segment"),
            ("status[x]", "is not an index"),
            ("status[0", "unclosed ["),
            ("status[=x]", "needs a field and a value"),
            ("a]b", "unexpected ]"),
            ("", "empty"),
        ] {
            let e = FieldPath::parse(p).unwrap_err();
            assert!(e.contains(why), "{p}: {e}");
        }
    }
}
