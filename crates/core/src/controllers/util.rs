//! Small helpers shared by the controllers: the resources they name, label selectors,
//! quantities and kube's name hashing. Metadata readers are [`crate::api::meta`]'s, request
//! builders [`crate::api::ApiRequest`]'s and condition setters [`crate::conditions`]'.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::meta::{string_map, JsonPointer};
use crate::api::GroupResource;

// `scenario::compile` reads names through this old path.
pub use crate::api::meta::name;

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
    use serde_json::json;

    #[test]
    fn quantities_parse_like_kube() {
        assert_eq!(cpu_millis(&json!("500m")), 500);
        assert_eq!(cpu_millis(&json!("2")), 2000);
        assert_eq!(cpu_millis(&json!(0.25)), 250);
        assert_eq!(memory_bytes(&json!("128Mi")), 128 << 20);
        assert_eq!(memory_bytes(&json!("1G")), 1_000_000_000);
    }

    #[test]
    fn safe_encode_uses_kubes_alphabet() {
        assert_eq!(safe_encode("0"), "4");
        assert!(safe_encode("1234567890")
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)));
    }
}
