//! Small helpers shared by the controllers: JSON field access, owner references, label
//! selectors, quantities, request builders and condition setters.
//!
//! The condition setters are local adapters with apimachinery's `SetStatusCondition` semantics
//! and the Deployment controller's `SetDeploymentCondition` semantics; they operate on serde_json
//! condition arrays so they work on any kind.

use crate::api::meta::JsonPointer;
use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::api::{ApiRequest, GroupResource, PatchType, RequestBody, Subresource, Verb};
use crate::time::SimTime;

pub fn deployments() -> GroupResource {
    GroupResource::new("apps", "deployments")
}
pub fn replicasets() -> GroupResource {
    GroupResource::new("apps", "replicasets")
}
pub fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}
pub fn nodes() -> GroupResource {
    GroupResource::new("", "nodes")
}
pub fn configmaps() -> GroupResource {
    GroupResource::new("", "configmaps")
}
pub fn hpas() -> GroupResource {
    GroupResource::new("autoscaling", "horizontalpodautoscalers")
}
pub fn databases() -> GroupResource {
    GroupResource::new("example.com", "databases")
}

pub fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.at(ptr).and_then(Value::as_str).unwrap_or_default()
}

pub fn i64_at(v: &Value, ptr: &str) -> Option<i64> {
    v.at(ptr).and_then(Value::as_i64)
}

pub fn name(v: &Value) -> &str {
    str_at(v, "/metadata/name")
}
pub fn namespace(v: &Value) -> &str {
    str_at(v, "/metadata/namespace")
}
pub fn uid(v: &Value) -> &str {
    str_at(v, "/metadata/uid")
}
pub fn generation(v: &Value) -> i64 {
    i64_at(v, "/metadata/generation").unwrap_or(0)
}
pub fn is_terminating(v: &Value) -> bool {
    v.at("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// The `metadata.ownerReferences` entry with `controller: true`: (kind, name, uid).
pub fn controller_of(v: &Value) -> Option<(&str, &str, &str)> {
    v.at("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| (str_at(r, "/kind"), str_at(r, "/name"), str_at(r, "/uid")))
}

pub fn owner_reference(owner: &Value) -> Value {
    json!({
        "apiVersion": str_at(owner, "/apiVersion"),
        "kind": str_at(owner, "/kind"),
        "name": name(owner),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

pub fn labels(v: &Value) -> BTreeMap<String, String> {
    string_map(v.at("/metadata/labels"))
}

pub fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `labels` satisfy a `matchLabels` selector. An empty selector matches nothing here,
/// as the Deployment and ReplicaSet controllers refuse to act on it.
pub fn selector_matches(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    let want = string_map(selector.get("matchLabels"));
    !want.is_empty() && want.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Parses a CPU quantity into millicores (`500m`, `2`, `0.5`).
pub fn cpu_millis(q: &Value) -> u64 {
    match q {
        Value::Number(n) => (n.as_f64().unwrap_or(0.0) * 1000.0).round() as u64,
        Value::String(s) => {
            if let Some(m) = s.strip_suffix('m') {
                m.parse().unwrap_or(0)
            } else {
                (s.parse::<f64>().unwrap_or(0.0) * 1000.0).round() as u64
            }
        }
        _ => 0,
    }
}

/// Parses a memory quantity into bytes (`128Mi`, `1Gi`, `1G`, `1000`).
pub fn memory_bytes(q: &Value) -> u64 {
    let s = match q {
        Value::Number(n) => return n.as_u64().unwrap_or(0),
        Value::String(s) => s.as_str(),
        _ => return 0,
    };
    const SUFFIXES: [(&str, u64); 8] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    for (suffix, mult) in SUFFIXES {
        if let Some(num) = s.strip_suffix(suffix) {
            return (num.parse::<f64>().unwrap_or(0.0) * mult as f64) as u64;
        }
    }
    s.parse().unwrap_or(0)
}

/// Sum of the containers' CPU (millicores) and memory (bytes) requests of a pod.
pub fn pod_requests(pod: &Value) -> (u64, u64) {
    sum_requests(pod, (0, 0))
}

/// The containers' (CPU millis, memory bytes) requests, counting `missing` for a resource a
/// container does not request.
fn sum_requests(pod: &Value, missing: (u64, u64)) -> (u64, u64) {
    let mut cpu = 0;
    let mut mem = 0;
    for c in pod
        .at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        cpu += c
            .at("/resources/requests/cpu")
            .map_or(missing.0, cpu_millis);
        mem += c
            .at("/resources/requests/memory")
            .map_or(missing.1, memory_bytes);
    }
    (cpu, mem)
}

/// The scheduler's default for a container that requests no CPU: 100m
/// (`DefaultMilliCPURequest`, pkg/scheduler/util/pod_resources.go).
pub const DEFAULT_MILLI_CPU_REQUEST: u64 = 100;
/// ... and no memory: 200 MiB (`DefaultMemoryRequest`).
pub const DEFAULT_MEMORY_REQUEST: u64 = 200 * 1024 * 1024;

/// A Pod's (CPU millis, memory bytes) requests as the scheduler scores them: a container that
/// does not request a resource counts as the defaults above, so request-less pods still spread
/// [kube 1.32 `resourcehelper.PodRequests` with `NonMissingContainerRequests`, used for the
/// node's `NonZeroRequested` and the pod's score in noderesources].
pub fn pod_nonzero_requests(pod: &Value) -> (u64, u64) {
    sum_requests(pod, (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST))
}

// ---- request builders -------------------------------------------------------------------

fn request(principal: &str, verb: Verb, gr: GroupResource, ns: &str, name: &str) -> ApiRequest {
    ApiRequest {
        principal: principal.to_owned(),
        verb,
        gr,
        namespace: ns.to_owned(),
        name: name.to_owned(),
        subresource: None,
        body: RequestBody::None,
        label_selector: None,
    }
}

pub fn create(principal: &str, gr: GroupResource, ns: &str, body: Value) -> ApiRequest {
    let mut r = request(principal, Verb::Create, gr, ns, "");
    r.body = RequestBody::Object(body);
    r
}

pub fn update(principal: &str, gr: GroupResource, body: Value) -> ApiRequest {
    let mut r = request(principal, Verb::Update, gr, namespace(&body), name(&body));
    r.body = RequestBody::Object(body);
    r
}

pub fn update_status(principal: &str, gr: GroupResource, body: Value) -> ApiRequest {
    let mut r = update(principal, gr, body);
    r.subresource = Some(Subresource::Status);
    r
}

pub fn patch(principal: &str, gr: GroupResource, ns: &str, name: &str, p: Value) -> ApiRequest {
    let mut r = request(principal, Verb::Patch, gr, ns, name);
    r.body = RequestBody::Patch(PatchType::Merge, p);
    r
}

pub fn get(principal: &str, gr: GroupResource, ns: &str, name: &str) -> ApiRequest {
    request(principal, Verb::Get, gr, ns, name)
}

pub fn delete(principal: &str, gr: GroupResource, ns: &str, name: &str) -> ApiRequest {
    request(principal, Verb::Delete, gr, ns, name)
}

// ---- conditions -----------------------------------------------------------------------

/// A condition to set; `status` is `True`, `False` or `Unknown`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cond<'a> {
    pub type_: &'a str,
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
}

fn conditions_mut(status: &mut Value) -> Option<&mut Vec<Value>> {
    let obj = status.as_object_mut()?;
    let entry = obj.entry("conditions").or_insert_with(|| json!([]));
    if !entry.is_array() {
        *entry = json!([]);
    }
    entry.as_array_mut()
}

pub fn find_condition<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    status
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| str_at(c, "/type") == type_)
}

/// apimachinery `meta.SetStatusCondition` on `status.conditions` (metav1.Condition with
/// observedGeneration): lastTransitionTime only moves when status changes; entries keep their
/// position. Returns whether anything changed.
pub fn set_status_condition(
    status: &mut Value,
    cond: Cond<'_>,
    observed_generation: i64,
    now: SimTime,
) -> bool {
    let Some(list) = conditions_mut(status) else {
        return false;
    };
    let now_s = now.rfc3339();
    if let Some(existing) = list.iter_mut().find(|c| str_at(c, "/type") == cond.type_) {
        let mut changed = false;
        let status_differs = str_at(existing, "/status") != cond.status;
        let mut put = |field: &str, v: Value, changed: &mut bool| {
            if existing.get(field) != Some(&v) {
                existing[field] = v;
                *changed = true;
            }
        };
        if status_differs {
            put("lastTransitionTime", json!(now_s), &mut changed);
        }
        put("status", json!(cond.status), &mut changed);
        put("reason", json!(cond.reason), &mut changed);
        put("message", json!(cond.message), &mut changed);
        put(
            "observedGeneration",
            json!(observed_generation),
            &mut changed,
        );
        return changed;
    }
    list.push(json!({
        "type": cond.type_,
        "status": cond.status,
        "observedGeneration": observed_generation,
        "lastTransitionTime": now_s,
        "reason": cond.reason,
        "message": cond.message,
    }));
    true
}

pub fn remove_condition(status: &mut Value, type_: &str) -> bool {
    let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) else {
        return false;
    };
    let before = list.len();
    list.retain(|c| str_at(c, "/type") != type_);
    before != list.len()
}

/// The Deployment controller's `SetDeploymentCondition`: same type, status and reason is no
/// change at all; otherwise the old entry is removed and the new one appended, keeping
/// lastTransitionTime when the status is unchanged.
pub fn set_deployment_condition(status: &mut Value, cond: Cond<'_>, now: SimTime) {
    let Some(list) = conditions_mut(status) else {
        return;
    };
    let now_s = now.rfc3339();
    let mut transition = now_s.clone();
    if let Some(pos) = list.iter().position(|c| str_at(c, "/type") == cond.type_) {
        let old = &list[pos];
        if str_at(old, "/status") == cond.status && str_at(old, "/reason") == cond.reason {
            return;
        }
        if str_at(old, "/status") == cond.status {
            transition = str_at(old, "/lastTransitionTime").to_owned();
        }
        list.remove(pos);
    }
    list.push(json!({
        "type": cond.type_,
        "status": cond.status,
        "lastUpdateTime": now_s,
        "lastTransitionTime": transition,
        "reason": cond.reason,
        "message": cond.message,
    }));
}

/// Pod-style condition (no observedGeneration, lastProbeTime null), kubelet semantics:
/// lastTransitionTime moves only when status changes.
pub fn set_pod_condition(status: &mut Value, cond: Cond<'_>, now: SimTime) {
    let Some(list) = conditions_mut(status) else {
        return;
    };
    let now_s = now.rfc3339();
    let mut entry = json!({
        "type": cond.type_,
        "status": cond.status,
        "lastProbeTime": null,
        "lastTransitionTime": now_s,
    });
    if !cond.reason.is_empty() {
        entry["reason"] = json!(cond.reason);
    }
    if !cond.message.is_empty() {
        entry["message"] = json!(cond.message);
    }
    if let Some(existing) = list.iter_mut().find(|c| str_at(c, "/type") == cond.type_) {
        if str_at(existing, "/status") == cond.status {
            entry["lastTransitionTime"] = existing["lastTransitionTime"].clone();
        }
        *existing = entry;
    } else {
        list.push(entry);
    }
}

/// FNV-1a, 32 bits: the hash family kube uses for pod-template-hash.
pub fn fnv32a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// apimachinery's `rand.SafeEncodeString`: maps each character onto an alphabet without vowels
/// and look-alike characters, so generated names never spell words.
pub fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_like_kube() {
        assert_eq!(cpu_millis(&json!("500m")), 500);
        assert_eq!(cpu_millis(&json!("2")), 2000);
        assert_eq!(cpu_millis(&json!(0.25)), 250);
        assert_eq!(memory_bytes(&json!("128Mi")), 128 << 20);
        assert_eq!(memory_bytes(&json!("1G")), 1_000_000_000);
    }

    #[test]
    fn set_status_condition_keeps_transition_time_when_status_is_unchanged() {
        let mut status = json!({});
        let c = |s| Cond {
            type_: "Ready",
            status: s,
            reason: "R",
            message: "",
        };
        assert!(set_status_condition(&mut status, c("False"), 1, SimTime(0)));
        assert!(!set_status_condition(
            &mut status,
            c("False"),
            1,
            SimTime(5000)
        ));
        assert_eq!(
            str_at(&status, "/conditions/0/lastTransitionTime"),
            "2025-01-01T00:00:00Z"
        );
        assert!(set_status_condition(
            &mut status,
            c("True"),
            2,
            SimTime(5000)
        ));
        assert_eq!(
            str_at(&status, "/conditions/0/lastTransitionTime"),
            "2025-01-01T00:00:05Z"
        );
    }

    #[test]
    fn deployment_conditions_are_appended_after_replacement() {
        let mut status = json!({});
        let c = |t, r| Cond {
            type_: t,
            status: "True",
            reason: r,
            message: "",
        };
        set_deployment_condition(
            &mut status,
            c("Progressing", "NewReplicaSetCreated"),
            SimTime(0),
        );
        set_deployment_condition(
            &mut status,
            c("Available", "MinimumReplicasAvailable"),
            SimTime(0),
        );
        set_deployment_condition(
            &mut status,
            c("Progressing", "ReplicaSetUpdated"),
            SimTime(1000),
        );
        assert_eq!(str_at(&status, "/conditions/0/type"), "Available");
        assert_eq!(str_at(&status, "/conditions/1/reason"), "ReplicaSetUpdated");
        assert_eq!(
            str_at(&status, "/conditions/1/lastTransitionTime"),
            "2025-01-01T00:00:00Z"
        );
    }

    #[test]
    fn safe_encode_uses_kubes_alphabet() {
        assert_eq!(safe_encode("0"), "4");
        assert!(safe_encode("1234567890")
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)));
    }
}
