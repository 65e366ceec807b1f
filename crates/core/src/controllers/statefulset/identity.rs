//! A StatefulSet Pod's identity and the predicates the controller reads pods by
//! [pkg/controller/statefulset/stateful_set_utils.go]: the `<set>-<ordinal>` name, the ordinal
//! range `spec.ordinals.start` opens, the pod-name and pod-index labels, the hostname and
//! subdomain, the claim volumes of `volumeClaimTemplates`, and the revision label.

use crate::api::meta::Fields;
use crate::json::{json, Map, Value};

use crate::api::meta::{self, str_at, JsonPointer};
use crate::controllers::replicaset::{pod_available, pod_from_template};
use crate::runtime::informer::pod_is_ready;
use crate::time::SimTime;

/// `apps.StatefulSetRevisionLabel` (= `ControllerRevisionHashLabelKey`).
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// `apps.StatefulSetPodNameLabel`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// `apps.PodIndexLabel` (the PodIndexLabel gate is GA in 1.32).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// `getParentNameAndOrdinal`: the name split at its last `-<digits>` (`(.*)-([0-9]+)$`); the
/// ordinal is -1 without such a suffix or when it overflows an int32.
pub fn parent_and_ordinal(name: &str) -> (&str, i64) {
    let Some((parent, digits)) = name.rsplit_once('-') else {
        return ("", -1);
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return ("", -1);
    }
    let ordinal = digits.parse::<i32>().map_or(-1, i64::from);
    (parent, ordinal)
}

/// `getOrdinal`.
pub fn ordinal(pod: &Value) -> i64 {
    parent_and_ordinal(meta::name(pod)).1
}

/// `isMemberOf`: the pod's name says it belongs to the set.
pub fn is_member_of(set: &Value, pod: &Value) -> bool {
    parent_and_ordinal(meta::name(pod)).0 == meta::name(set)
}

/// `getStartOrdinal`: `spec.ordinals.start`, or 0.
pub fn start_ordinal(set: &Value) -> i64 {
    meta::i64_at(set, "/spec/ordinals/start").unwrap_or(0)
}

pub fn replicas(set: &Value) -> i64 {
    meta::i64_at(set, "/spec/replicas").unwrap_or(1)
}

/// `getEndOrdinal` (inclusive).
pub fn end_ordinal(set: &Value) -> i64 {
    start_ordinal(set) + replicas(set) - 1
}

/// `podInOrdinalRange`.
pub fn in_ordinal_range(pod: &Value, set: &Value) -> bool {
    let o = ordinal(pod);
    o >= start_ordinal(set) && o <= end_ordinal(set)
}

/// `getPodName`.
pub fn pod_name(set: &Value, ordinal: i64) -> String {
    format!("{}-{ordinal}", meta::name(set))
}

fn label<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.at("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

/// `getPodRevision`.
pub fn pod_revision(pod: &Value) -> &str {
    label(pod, REVISION_LABEL).unwrap_or("")
}

/// `identityMatches`.
pub fn identity_matches(set: &Value, pod: &Value) -> bool {
    let (parent, ord) = parent_and_ordinal(meta::name(pod));
    ord >= 0
        && parent == meta::name(set)
        && meta::name(pod) == pod_name(set, ord)
        && meta::namespace(pod) == meta::namespace(set)
        && label(pod, POD_NAME_LABEL) == Some(meta::name(pod))
}

/// `getPersistentVolumeClaimName`.
fn claim_name(set: &Value, claim: &Value, ordinal: i64) -> String {
    format!("{}-{}-{ordinal}", meta::name(claim), meta::name(set))
}

fn claim_templates(set: &Value) -> impl Iterator<Item = &Value> {
    set.at("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `storageMatches`: every claim template has its volume, naming the pod's claim.
pub fn storage_matches(set: &Value, pod: &Value) -> bool {
    let ord = ordinal(pod);
    if ord < 0 {
        return false;
    }
    let volumes: Vec<&Value> = pod
        .at("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    claim_templates(set).all(|claim| {
        volumes.iter().any(|v| {
            str_at(v, "/name") == meta::name(claim)
                && str_at(v, "/persistentVolumeClaim/claimName") == claim_name(set, claim, ord)
        })
    })
}

/// `updateStorage`: a claim volume per template first (kube's map walk; here in template
/// order), then the pod's other volumes.
pub fn update_storage(set: &Value, pod: &mut Value) {
    let ord = ordinal(pod);
    let mut volumes: Vec<Value> = claim_templates(set)
        .map(|claim| {
            json!({"name": meta::name(claim),
                "persistentVolumeClaim": {"claimName": claim_name(set, claim, ord)}})
        })
        .collect();
    if volumes.is_empty() && pod.at("/spec/volumes").is_none() {
        return;
    }
    let names: Vec<String> = claim_templates(set)
        .map(|c| meta::name(c).to_owned())
        .collect();
    volumes.extend(
        pod.at("/spec/volumes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|v| !names.iter().any(|n| n == str_at(v, "/name")))
            .cloned(),
    );
    pod["spec"]["volumes"] = Value::Array(volumes.into());
}

/// `updateIdentity`: name, namespace and the pod-name and pod-index labels.
pub fn update_identity(set: &Value, pod: &mut Value) {
    let ord = ordinal(pod);
    let name = pod_name(set, ord);
    let Some(m) = pod.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    m.insert("name", json!(name));
    m.insert("namespace", json!(meta::namespace(set)));
    let labels = m.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    if let Some(l) = labels.as_object_mut() {
        l.insert(POD_NAME_LABEL, json!(name));
        l.insert(POD_INDEX_LABEL, json!(ord.to_string()));
    }
}

/// `newStatefulSetPod`: `GetPodFromTemplate` with the set as controller, then `initIdentity`
/// (identity plus the immutable hostname and subdomain) and `updateStorage`.
pub fn new_pod(set: &Value, ordinal: i64) -> Value {
    let mut pod = pod_from_template(set, &ordinal.to_string());
    update_identity(set, &mut pod);
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        let name = pod_name(set, ordinal);
        spec.insert("hostname", json!(name));
        // The subdomain is always the serviceName, a template's own included; an empty one
        // is left out (omitempty).
        let service = str_at(set, "/spec/serviceName");
        if service.is_empty() {
            spec.remove("subdomain");
        } else {
            spec.insert("subdomain", json!(service));
        }
    }
    update_storage(set, &mut pod);
    pod
}

/// `setPodRevision`.
fn set_revision(pod: &mut Value, revision: &str) {
    if let Some(labels) = pod
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.insert(REVISION_LABEL, json!(revision));
    }
}

/// `newVersionedStatefulSetPod`, with Go's operator precedence kept: `A && B || C`, so a set
/// with a rollingUpdate partition builds ordinals below it from the current revision whatever
/// its strategy type.
pub fn new_versioned_pod(
    current_set: &Value,
    update_set: &Value,
    current_revision: &str,
    update_revision: &str,
    ordinal: i64,
) -> Value {
    let rolling = str_at(current_set, "/spec/updateStrategy/type") == "RollingUpdate";
    let ru = current_set
        .at("/spec/updateStrategy/rollingUpdate")
        .filter(|v| !v.is_null());
    let start = start_ordinal(current_set);
    let current_replicas = meta::i64_at(current_set, "/status/currentReplicas").unwrap_or(0);
    let partition = ru
        .and_then(|r| r.field("partition"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let at_current = (rolling && ru.is_none() && ordinal < start + current_replicas)
        || (ru.is_some() && ordinal < start + partition);
    let (set, revision) = if at_current {
        (current_set, current_revision)
    } else {
        (update_set, update_revision)
    };
    let mut pod = new_pod(set, ordinal);
    set_revision(&mut pod, revision);
    pod
}

/// `isCreated`: the pod exists in the API (a placeholder for a missing ordinal has no phase).
pub fn is_created(pod: &Value) -> bool {
    !str_at(pod, "/status/phase").is_empty()
}

/// `isRunningAndReady`.
pub fn is_running_and_ready(pod: &Value) -> bool {
    str_at(pod, "/status/phase") == "Running" && pod_is_ready(pod)
}

/// `isRunningAndAvailable` (`IsPodAvailable`).
pub fn is_running_and_available(pod: &Value, min_ready_seconds: i64, now: SimTime) -> bool {
    pod_available(pod, min_ready_seconds, now)
}

/// `isHealthy`: running, ready and not terminating.
pub fn is_healthy(pod: &Value) -> bool {
    is_running_and_ready(pod) && !meta::is_terminating(pod)
}

/// `isFailed` or `isSucceeded`.
pub fn is_terminal(pod: &Value) -> bool {
    matches!(str_at(pod, "/status/phase"), "Failed" | "Succeeded")
}

/// The pod-template of a revision's data, as `ApplyRevision`'s strategic merge patch with
/// `$patch: replace` restores it onto the set.
pub fn apply_revision(set: &Value, data: &Value) -> Value {
    let mut out = set.clone();
    let mut template = data.at("/spec/template").cloned().unwrap_or(json!({}));
    if let Some(m) = template.as_object_mut() {
        m.remove("$patch");
    }
    out["spec"]["template"] = template;
    out
}

/// The label map of a pod template (a `map[string]string` in Go).
pub fn template_labels(set: &Value) -> Map {
    set.at("/spec/template/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
            "spec": {"replicas": 3, "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "nginx"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
                "volumeClaimTemplates": [{"metadata": {"name": "www"}}],
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}},
            "status": {"currentReplicas": 3}})
    }

    #[test]
    fn names_split_at_the_last_dash_and_digits() {
        assert_eq!(parent_and_ordinal("web-0"), ("web", 0));
        assert_eq!(parent_and_ordinal("my-web-12"), ("my-web", 12));
        assert_eq!(parent_and_ordinal("web"), ("", -1));
        assert_eq!(parent_and_ordinal("web-x1"), ("", -1));
        // strconv.ParseInt(_, 10, 32) fails past int32: the parent stays, the ordinal is -1.
        assert_eq!(parent_and_ordinal("web-99999999999"), ("web", -1));
    }

    #[test]
    fn a_new_pod_has_kubes_identity_storage_and_owner() {
        let pod = new_pod(&set(), 1);
        assert_eq!(pod["metadata"]["name"], "web-1");
        assert_eq!(pod["metadata"]["generateName"], "web-");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "nginx", POD_NAME_LABEL: "web-1", POD_INDEX_LABEL: "1"})
        );
        assert_eq!(pod["spec"]["hostname"], "web-1");
        assert_eq!(pod["spec"]["subdomain"], "nginx");
        assert_eq!(
            pod["spec"]["volumes"],
            json!([{"name": "www", "persistentVolumeClaim": {"claimName": "www-web-1"}}])
        );
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
        assert!(identity_matches(&set(), &pod) && storage_matches(&set(), &pod));
        // initIdentity overwrites a template's subdomain, even with an empty serviceName.
        let mut headless = set();
        headless["spec"]["serviceName"] = json!("");
        headless["spec"]["template"]["spec"]["subdomain"] = json!("mine");
        assert_eq!(new_pod(&headless, 0)["spec"].get("subdomain"), None);
    }

    #[test]
    fn ordinals_below_the_partition_are_built_from_the_current_revision() {
        let (cur, upd) = (set(), set());
        let p1 = new_versioned_pod(&cur, &upd, "web-a", "web-b", 1);
        let p2 = new_versioned_pod(&cur, &upd, "web-a", "web-b", 2);
        assert_eq!(pod_revision(&p1), "web-a");
        assert_eq!(pod_revision(&p2), "web-b");
        // OnDelete: every new pod is at the update revision.
        let mut on_delete = set();
        on_delete["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        let p0 = new_versioned_pod(&on_delete, &upd, "web-a", "web-b", 0);
        assert_eq!(pod_revision(&p0), "web-b");
        // RollingUpdate without rollingUpdate: below status.currentReplicas.
        let mut plain = set();
        plain["spec"]["updateStrategy"] = json!({"type": "RollingUpdate"});
        assert_eq!(
            pod_revision(&new_versioned_pod(&plain, &upd, "web-a", "web-b", 2)),
            "web-a"
        );
    }
}
