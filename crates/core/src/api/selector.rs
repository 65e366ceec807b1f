//! Label selectors: kube's string form (`app=web,tier!=db,env in (a,b),!canary`) for list
//! requests, and `metav1.LabelSelector` objects (`matchLabels` + `matchExpressions`) for
//! workloads.

use super::meta::JsonPointer;
use crate::api::meta::Fields;
use crate::json::path;
use crate::json::{Map, Value};

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Requirement {
    fn matches(&self, labels: Option<&Map>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        match self {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        }
    }
}

/// A conjunction of requirements; the empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub requirements: Vec<Requirement>,
}

fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_set(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

fn valid_key(k: &str) -> bool {
    !k.is_empty() && super::validation::qualified_name(k).is_empty()
}

impl Selector {
    /// Parses kube's string form. Errors read `unable to parse requirement: <why>`.
    pub fn parse(s: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        if s.trim().is_empty() {
            return Ok(Selector { requirements });
        }
        for term in split_top_level(s) {
            let term = term.trim();
            let err = || format!("unable to parse requirement: invalid selector term {term:?}");
            let req = if let Some(k) = term.strip_prefix('!') {
                Requirement::DoesNotExist(k.trim().to_owned())
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                Requirement::NotIn(k.trim().to_owned(), parse_set(rest).ok_or_else(err)?)
            } else if let Some((k, rest)) = term.split_once(" in ") {
                Requirement::In(k.trim().to_owned(), parse_set(rest).ok_or_else(err)?)
            } else if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEquals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("==") {
                Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once('=') {
                Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
            } else {
                Requirement::Exists(term.to_owned())
            };
            let key = match &req {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::DoesNotExist(k) => k,
            };
            if !valid_key(key) {
                return Err(format!(
                    "unable to parse requirement: invalid label key {key:?}"
                ));
            }
            requirements.push(req);
        }
        Ok(Selector { requirements })
    }

    /// Converts a `metav1.LabelSelector` object.
    pub fn from_label_selector(sel: &Value) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        if let Some(ml) = sel.field("matchLabels").and_then(Value::as_object) {
            for (k, v) in ml {
                let v = v
                    .as_str()
                    .ok_or_else(|| format!("matchLabels[{k}] must be a string"))?;
                requirements.push(Requirement::Equals(k.to_string(), v.to_owned()));
            }
        }
        if let Some(exprs) = sel.field("matchExpressions").and_then(Value::as_array) {
            for e in exprs {
                let key = e
                    .field("key")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let values: Vec<String> = e
                    .field("values")
                    .and_then(Value::as_array)
                    .map(|vs| {
                        vs.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let op = e
                    .field("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                requirements.push(match op {
                    "In" => Requirement::In(key, values),
                    "NotIn" => Requirement::NotIn(key, values),
                    "Exists" => Requirement::Exists(key),
                    "DoesNotExist" => Requirement::DoesNotExist(key),
                    other => {
                        return Err(format!("{other:?} is not a valid label selector operator"))
                    }
                });
            }
        }
        Ok(Selector { requirements })
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub fn matches(&self, labels: Option<&Map>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether the object (its `metadata.labels`) is selected.
    pub fn matches_object(&self, obj: &Value) -> bool {
        self.matches(obj.at(path!("/metadata/labels")).and_then(Value::as_object))
    }
}

/// A `metav1.LabelSelector` as `LabelSelectorAsSelector(...).String()` prints it
/// [apimachinery pkg/apis/meta/v1/helpers.go]: `matchLabels` as `k=v` and `matchExpressions`
/// as `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, sorted by key and joined by commas; empty for a
/// missing selector, `None` for an unknown operator (the Table's `<error>`).
pub fn label_selector_string(sel: Option<&Value>) -> Option<String> {
    let Some(sel) = sel.filter(|v| !v.is_null()) else {
        return Some(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.field("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.to_string(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in sel
        .field("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = e
            .field("key")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut values: Vec<&str> = e
            .field("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match e.field("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{k} in ({})", values.join(",")),
            "NotIn" => format!("{k} notin ({})", values.join(",")),
            "Exists" => k.clone(),
            "DoesNotExist" => format!("!{k}"),
            _ => return None,
        };
        reqs.push((k, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        reqs.into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(","),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn labels(v: Value) -> Map {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn string_selectors_support_every_operator() {
        let l = labels(json!({"app": "web", "tier": "front"}));
        let yes = [
            "app=web",
            "app==web",
            "tier!=db",
            "app in (web, api)",
            "tier notin (db)",
            "app",
            "!canary",
            "app=web,tier=front",
            "",
        ];
        for s in yes {
            assert!(Selector::parse(s).unwrap().matches(Some(&l)), "{s}");
        }
        let no = [
            "app=api",
            "tier!=front",
            "app in (api)",
            "app notin (web)",
            "canary",
            "!app",
            "app=web,tier=db",
        ];
        for s in no {
            assert!(!Selector::parse(s).unwrap().matches(Some(&l)), "{s}");
        }
    }

    #[test]
    fn malformed_selectors_are_errors_not_panics() {
        for s in ["app in web", "=x", "a b c=d", "app in (x"] {
            assert!(Selector::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn label_selector_objects_match_labels_and_expressions() {
        let sel = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]});
        let s = Selector::from_label_selector(&sel).unwrap();
        assert!(s.matches(Some(&labels(json!({"app": "web", "env": "prod"})))));
        assert!(!s.matches(Some(&labels(json!({"app": "web"})))));
        assert!(!s.matches(None));
    }
}
