//! Field selectors (`?fieldSelector=metadata.name=web,status.phase!=Running`), as apimachinery
//! parses them [pkg/fields/selector.go `ParseSelector`] and as each kind's registry makes fields
//! selectable [`DefaultClusterScopedAttr`/`DefaultNamespaceScopedAttr`, pod/strategy.go
//! `ToSelectableFields`, event/strategy.go, node/strategy.go, namespace/strategy.go,
//! replicaset/strategy.go]. kubectl uses `metadata.name=<name>` to watch one object.

use crate::json::Value;

use crate::api::{errors::bad_request, ApiError, GroupResource};

/// One requirement: `field=value`, `field==value` or `field!=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRequirement {
    pub field: String,
    pub value: String,
    pub equals: bool,
}

/// A parsed field selector; empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    pub requirements: Vec<FieldRequirement>,
}

/// The fields a resource can be selected by, beyond `metadata.name` and `metadata.namespace`,
/// with the JSON pointer each reads.
fn kind_fields(gr: &GroupResource) -> &'static [(&'static str, &'static str)] {
    match (gr.group.as_str(), gr.resource.as_str()) {
        ("", "pods") => &[
            ("spec.nodeName", "/spec/nodeName"),
            ("spec.restartPolicy", "/spec/restartPolicy"),
            ("spec.schedulerName", "/spec/schedulerName"),
            ("spec.serviceAccountName", "/spec/serviceAccountName"),
            ("spec.hostNetwork", "/spec/hostNetwork"),
            ("status.phase", "/status/phase"),
            ("status.podIP", "/status/podIP"),
            ("status.nominatedNodeName", "/status/nominatedNodeName"),
        ],
        ("", "events") => &[
            ("involvedObject.kind", "/involvedObject/kind"),
            ("involvedObject.namespace", "/involvedObject/namespace"),
            ("involvedObject.name", "/involvedObject/name"),
            ("involvedObject.uid", "/involvedObject/uid"),
            ("involvedObject.apiVersion", "/involvedObject/apiVersion"),
            (
                "involvedObject.resourceVersion",
                "/involvedObject/resourceVersion",
            ),
            ("involvedObject.fieldPath", "/involvedObject/fieldPath"),
            ("reason", "/reason"),
            ("reportingComponent", "/reportingComponent"),
            ("source", "/source/component"),
            ("type", "/type"),
        ],
        ("", "nodes") => &[("spec.unschedulable", "/spec/unschedulable")],
        ("", "namespaces") => &[("status.phase", "/status/phase")],
        ("apps", "replicasets") => &[("status.replicas", "/status/replicas")],
        ("batch", "jobs") => &[("status.successful", "/status/succeeded")],
        _ => &[],
    }
}

/// Splits on commas not escaped with a backslash, as `splitTerms` does.
fn terms(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => {
                escaped = false;
                if let Some(last) = out.last_mut() {
                    last.push('\\');
                    last.push(c);
                }
            }
            '\\' => escaped = true,
            ',' => out.push(String::new()),
            _ => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out
}

/// The leftmost operator wins, `!=` before `==` before `=` at one position, as `splitTerm`
/// scans.
fn split_term(term: &str) -> Option<(&str, &str, bool)> {
    (0..term.len())
        .filter(|i| term.is_char_boundary(*i))
        .find_map(|i| {
            let rest = &term[i..];
            [("!=", false), ("==", true), ("=", true)]
                .into_iter()
                .find(|(op, _)| rest.starts_with(op))
                .map(|(op, equals)| (&term[..i], &rest[op.len()..], equals))
        })
}

/// Removes the selector escapes (`\,` `\=` `\\`), as `UnescapeValue` does.
fn unescape(v: &str) -> Result<String, ApiError> {
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                _ => {
                    return Err(bad_request(format!(
                        "invalid field selector: invalid escape sequence in {v:?}"
                    )))
                }
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

impl FieldSelector {
    /// Parses `s` for resource `gr`; an unknown field is kube's 400
    /// `field label not supported: <field>`.
    pub fn parse(s: &str, gr: &GroupResource) -> Result<FieldSelector, ApiError> {
        let mut requirements = Vec::new();
        for term in terms(s).into_iter().filter(|t| !t.is_empty()) {
            let Some((field, value, equals)) = split_term(&term) else {
                return Err(bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{term}'"
                )));
            };
            let field = field.trim().to_owned();
            let known = matches!(field.as_str(), "metadata.name" | "metadata.namespace")
                || kind_fields(gr).iter().any(|(f, _)| *f == field);
            if !known {
                return Err(bad_request(format!("field label not supported: {field}")));
            }
            requirements.push(FieldRequirement {
                field,
                value: unescape(value)?,
                equals,
            });
        }
        Ok(FieldSelector { requirements })
    }

    /// Whether `obj` (of resource `gr`) has every required field value. A field the object
    /// lacks reads as the empty string (a boolean as `true`/`false`, a number as its digits).
    pub fn matches(&self, gr: &GroupResource, obj: &Value) -> bool {
        self.requirements.iter().all(|r| {
            let pointer = match r.field.as_str() {
                "metadata.name" => "/metadata/name",
                "metadata.namespace" => "/metadata/namespace",
                f => kind_fields(gr)
                    .iter()
                    .find(|(name, _)| *name == f)
                    .map_or("", |(_, p)| p),
            };
            // The event strategy's `source` falls back to the reporting controller
            // [pkg/registry/core/event/strategy.go `ToSelectableFields`].
            if r.field == "source" && gr.is_events() {
                return (crate::api::meta::event_source(obj) == r.value) == r.equals;
            }
            let actual = match obj.pointer(pointer) {
                Some(Value::String(s)) => s.to_string(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == r.value) == r.equals
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn selectors_parse_and_match_as_apimachinerys() {
        let pods = GroupResource::new("", "pods");
        let s = FieldSelector::parse("metadata.name=web-1,status.phase!=Running", &pods)
            .expect("parses");
        let pod = |name: &str, phase: &str| json!({"metadata": {"name": name}, "status": {"phase": phase}});
        assert!(s.matches(&pods, &pod("web-1", "Pending")));
        assert!(!s.matches(&pods, &pod("web-1", "Running")));
        assert!(!s.matches(&pods, &pod("web-2", "Pending")));
        let odd = FieldSelector::parse("metadata.name=a!=b", &pods).expect("parses");
        assert_eq!(
            (
                odd.requirements[0].value.as_str(),
                odd.requirements[0].equals
            ),
            ("a!=b", true)
        );
        assert_eq!(
            FieldSelector::parse("metadata.name", &pods).map_err(|e| e.message),
            Err("invalid selector: 'metadata.name'; can't understand 'metadata.name'".to_owned())
        );
        let one = FieldSelector::parse("metadata.name==a\\,b", &pods).expect("escaped comma");
        assert_eq!(one.requirements[0].value, "a,b");
        assert!(FieldSelector::parse("", &pods)
            .expect("empty")
            .matches(&pods, &pod("x", "y")));
    }

    #[test]
    fn an_events_source_falls_back_to_its_reporting_controller() {
        let events = GroupResource::new("", "events");
        let s = FieldSelector::parse("source=default-scheduler", &events).expect("parses");
        assert!(s.matches(
            &events,
            &json!({"source": {}, "reportingComponent": "default-scheduler"})
        ));
        assert!(!s.matches(
            &events,
            &json!({"source": {"component": "kubelet"}, "reportingComponent": "default-scheduler"})
        ));
    }

    #[test]
    fn unknown_fields_are_kubes_400() {
        let deployments = GroupResource::new("apps", "deployments");
        let e = FieldSelector::parse("spec.replicas=3", &deployments).expect_err("refused");
        assert_eq!(e.code(), 400);
        assert_eq!(e.message, "field label not supported: spec.replicas");
        assert!(
            FieldSelector::parse("spec.nodeName=node-1", &GroupResource::new("", "pods")).is_ok()
        );
    }
}
