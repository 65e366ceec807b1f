//! Whether a Pod may run on a Node by the Node's labels, name and taints: the helpers kube's
//! scheduler plugins and the DaemonSet controller share [k8s.io/component-helpers
//! scheduling/corev1: `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`,
//! `FindMatchingUntoleratedTaint`, `Toleration.ToleratesTaint`].

use crate::api::meta::Fields;
use crate::json::path;
use crate::json::Value;

use crate::api::meta::{self, str_at, JsonPointer};

/// `metav1.ObjectNameField`: the one field a `matchFields` requirement may name on a Node.
pub const OBJECT_NAME_FIELD: &str = "metadata.name";
/// `v1.TaintNodeUnschedulable`: the taint a cordoned node counts as having.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// One `NodeSelectorRequirement` on labels [`nodeSelectorRequirementsAsSelector`,
/// component-helpers nodeaffinity]: `None` when it does not parse (an unknown operator, `In`
/// without values, `Exists` with values, `Gt`/`Lt` without exactly one integer), which makes
/// the whole term match nothing.
fn label_requirement(req: &Value, node: &Value) -> Option<bool> {
    let key = str_at(req, path!("/key"));
    let values = strings(req.field("values"));
    let label = node
        .at(path!("/metadata/labels"))
        .and_then(|l| l.get(key))
        .and_then(Value::as_str);
    match str_at(req, path!("/operator")) {
        "In" | "NotIn" if values.is_empty() => None,
        "In" => Some(label.is_some_and(|l| values.contains(&l))),
        // labels.Selector's NotIn also matches a missing key.
        "NotIn" => Some(!label.is_some_and(|l| values.contains(&l))),
        "Exists" | "DoesNotExist" if !values.is_empty() => None,
        "Exists" => Some(label.is_some()),
        "DoesNotExist" => Some(label.is_none()),
        op @ ("Gt" | "Lt") => {
            let [v] = values.as_slice() else {
                return None;
            };
            let want: i64 = v.parse().ok()?;
            // A label that is missing or not an integer does not match.
            Some(
                label
                    .and_then(|l| l.parse::<i64>().ok())
                    .is_some_and(|have| if op == "Gt" { have > want } else { have < want }),
            )
        }
        _ => None,
    }
}

/// One `matchFields` requirement [`nodeSelectorRequirementsAsFieldSelector`]: only
/// `metadata.name` with `In`/`NotIn` and exactly one value parses.
fn field_requirement(req: &Value, node: &Value) -> Option<bool> {
    if str_at(req, path!("/key")) != OBJECT_NAME_FIELD {
        return None;
    }
    let [v] = strings(req.field("values"))[..] else {
        return None;
    };
    match str_at(req, path!("/operator")) {
        "In" => Some(meta::name(node) == v),
        "NotIn" => Some(meta::name(node) != v),
        _ => None,
    }
}

/// A `NodeSelectorTerm` [`nodeSelectorTerm.match`]: its expressions and fields all match; an
/// empty term, or one that does not parse, matches nothing.
fn term_matches(term: &Value, node: &Value) -> bool {
    let exprs = term.field("matchExpressions").and_then(Value::as_array);
    let fields = term.field("matchFields").and_then(Value::as_array);
    let (exprs, fields) = (
        exprs.map_or(&[][..], Vec::as_slice),
        fields.map_or(&[][..], Vec::as_slice),
    );
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    let mut all = true;
    for r in exprs {
        match label_requirement(r, node) {
            Some(m) => all &= m,
            None => return false,
        }
    }
    for r in fields {
        match field_requirement(r, node) {
            Some(m) => all &= m,
            None => return false,
        }
    }
    all
}

/// `GetRequiredNodeAffinity(pod).Match(node)`: the pod spec's `nodeSelector` labels all equal
/// the node's, and, when `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`
/// is set, one of its terms matches (no terms: nothing matches).
pub fn required_node_affinity_matches(pod_spec: &Value, node: &Value) -> bool {
    if let Some(sel) = pod_spec.field("nodeSelector").and_then(Value::as_object) {
        let labels = node.at(path!("/metadata/labels"));
        let ok = sel.iter().all(|(k, v)| {
            labels.and_then(|l| l.get(k)).and_then(Value::as_str) == v.as_str() && v.is_string()
        });
        if !ok {
            return false;
        }
    }
    match pod_spec.at(path!(
        "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
    )) {
        Some(required) if !required.is_null() => required
            .field("nodeSelectorTerms")
            .and_then(Value::as_array)
            .is_some_and(|terms| terms.iter().any(|t| term_matches(t, node))),
        _ => true,
    }
}

/// `Toleration.ToleratesTaint` [k8s.io/api core/v1 toleration.go]: the effect matches (or the
/// toleration has none), the key matches (or the toleration has none, which with `Exists`
/// tolerates every key), and the operator holds: `Exists`, or `Equal`/empty with equal values.
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = str_at(toleration, path!("/effect"));
    if !effect.is_empty() && effect != str_at(taint, path!("/effect")) {
        return false;
    }
    let key = str_at(toleration, path!("/key"));
    if !key.is_empty() && key != str_at(taint, path!("/key")) {
        return false;
    }
    match str_at(toleration, path!("/operator")) {
        "Exists" => true,
        "" | "Equal" => str_at(toleration, path!("/value")) == str_at(taint, path!("/value")),
        _ => false,
    }
}

/// `FindMatchingUntoleratedTaint`: the first of `taints` that `filter` selects and no
/// toleration tolerates.
pub fn first_untolerated_taint<'a>(
    taints: &'a [Value],
    tolerations: &[Value],
    filter: impl Fn(&str) -> bool,
) -> Option<&'a Value> {
    taints.iter().find(|t| {
        filter(str_at(t, path!("/effect"))) && !tolerations.iter().any(|tol| tolerates(tol, t))
    })
}

/// The node's `spec.taints`.
pub fn node_taints(node: &Value) -> &[Value] {
    node.at(path!("/spec/taints"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The pod spec's `tolerations`.
pub fn pod_tolerations(pod_spec: &Value) -> &[Value] {
    pod_spec
        .field("tolerations")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// NoSchedule and NoExecute: the effects scheduling filters and the DaemonSet's `predicates`
/// look at.
pub fn schedule_effect(effect: &str) -> bool {
    effect == "NoSchedule" || effect == "NoExecute"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn node(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}})
    }

    fn affinity(terms: Value) -> Value {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}})
    }

    #[test]
    fn node_selector_needs_every_label_equal() {
        let n = node("a", json!({"disk": "ssd", "zone": "x"}));
        assert!(required_node_affinity_matches(
            &json!({"nodeSelector": {"disk": "ssd"}}),
            &n
        ));
        assert!(!required_node_affinity_matches(
            &json!({"nodeSelector": {"disk": "ssd", "gpu": "yes"}}),
            &n
        ));
        assert!(required_node_affinity_matches(&json!({}), &n));
    }

    /// Worked from labels.Selector: NotIn and DoesNotExist match a missing key; Gt/Lt compare
    /// integers; terms are ORed and requirements within a term ANDed.
    #[test]
    fn match_expressions_follow_the_label_selector_operators() {
        let n = node("a", json!({"disk": "ssd", "cores": "8"}));
        let m = |terms: Value| required_node_affinity_matches(&affinity(terms), &n);
        assert!(m(
            json!([{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd", "hdd"]}]}])
        ));
        assert!(m(
            json!([{"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["yes"]}]}])
        ));
        assert!(m(
            json!([{"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}])
        ));
        assert!(m(
            json!([{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]}])
        ));
        assert!(!m(
            json!([{"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["4"]}]}])
        ));
        assert!(!m(
            json!([{"matchExpressions": [{"key": "disk", "operator": "Exists"}, {"key": "gpu", "operator": "Exists"}]}])
        ));
        assert!(m(json!([
            {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
            {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}
        ])));
        assert!(!m(json!([{}])), "an empty term matches nothing");
        assert!(!m(json!([])), "no terms match nothing");
        assert!(
            !m(json!([{"matchExpressions": [{"key": "disk", "operator": "In"}]}])),
            "In without values does not parse"
        );
    }

    #[test]
    fn match_fields_name_the_node() {
        let n = node("node-2", json!({}));
        let term = |op: &str, v: Value| {
            affinity(
                json!([{"matchFields": [{"key": "metadata.name", "operator": op, "values": v}]}]),
            )
        };
        assert!(required_node_affinity_matches(
            &term("In", json!(["node-2"])),
            &n
        ));
        assert!(!required_node_affinity_matches(
            &term("In", json!(["node-1"])),
            &n
        ));
        assert!(required_node_affinity_matches(
            &term("NotIn", json!(["node-1"])),
            &n
        ));
        assert!(
            !required_node_affinity_matches(&term("In", json!(["node-1", "node-2"])), &n),
            "a field requirement takes exactly one value"
        );
    }

    /// `ToleratesTaint`, case by case.
    #[test]
    fn tolerations_follow_kubes_operator_rules() {
        let taint = json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"});
        let t = |tol: Value| tolerates(&tol, &taint);
        assert!(t(
            json!({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"})
        ));
        assert!(
            t(json!({"key": "dedicated", "value": "gpu"})),
            "empty operator is Equal, empty effect all"
        );
        assert!(!t(json!({"key": "dedicated", "value": "cpu"})));
        assert!(t(json!({"key": "dedicated", "operator": "Exists"})));
        assert!(
            t(json!({"operator": "Exists"})),
            "no key with Exists tolerates everything"
        );
        assert!(!t(
            json!({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"})
        ));
        assert!(!t(json!({"key": "other", "operator": "Exists"})));
        assert!(!t(
            json!({"key": "dedicated", "operator": "Bogus", "value": "gpu"})
        ));
    }

    #[test]
    fn the_first_untolerated_taint_of_the_filtered_effects_is_found() {
        let taints = vec![
            json!({"key": "soft", "effect": "PreferNoSchedule"}),
            json!({"key": "a", "value": "1", "effect": "NoSchedule"}),
            json!({"key": "b", "value": "2", "effect": "NoExecute"}),
        ];
        let tolerations = vec![json!({"key": "a", "operator": "Exists"})];
        let found = first_untolerated_taint(&taints, &tolerations, schedule_effect);
        assert_eq!(found.map(|t| str_at(t, "/key")), Some("b"));
        assert!(first_untolerated_taint(&taints, &tolerations, |e| e == "NoSchedule").is_none());
    }
}
