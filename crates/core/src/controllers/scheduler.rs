//! The scheduler: binds Pods to Nodes whose allocatable CPU, memory and pod count fit the Pod's
//! requests (least-allocated node first, ties by name). A Pod that fits nowhere gets
//! `PodScheduled=False`, reason `Unschedulable`, with kube's `0/N nodes are available: ...`
//! message, and is retried when a Node changes or a Pod goes away.
//!
//! Binding posts a `v1/Binding` to the namespace's `bindings` collection (kube-scheduler posts to
//! `pods/NAME/binding`; see docs/api-server.md); the API server sets `spec.nodeName` and
//! `PodScheduled=True`, as kube's binding REST does.

use crate::api::meta::JsonPointer;
use std::collections::BTreeMap;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::util::{self, nodes, pods, str_at, Cond};
use super::{Action, Ctx, ReconcileError, Reconciler};
use crate::api::{ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType};
use crate::engine::informer::{pod_is_active, Informer};

/// Retry interval for unschedulable pods (kube's podMaxBackoffDuration is 10 s).
pub const UNSCHEDULABLE_RETRY_MS: u64 = 10_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub cpu_millis: u64,
    pub memory_bytes: u64,
    pub pods: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Scheduler {
    /// Requests of pods bound to each node, from the cache.
    used: OrdMap<String, Usage>,
    /// Pods this scheduler bound that its cache has not seen bound yet (kube's assume cache).
    assumed: OrdMap<ObjectKey, (String, Usage)>,
    /// Sum of the assumed pods' requests per node.
    assumed_used: OrdMap<String, Usage>,
    /// Pods waiting for a node.
    pending: OrdSet<ObjectKey>,
}

fn usage_of(pod: &Value) -> Usage {
    let (cpu_millis, memory_bytes) = util::pod_requests(pod);
    Usage {
        cpu_millis,
        memory_bytes,
        pods: 1,
    }
}

fn bound_node(pod: &Value) -> Option<&str> {
    let n = str_at(pod, "/spec/nodeName");
    (!n.is_empty() && pod_is_active(pod)).then_some(n)
}

impl Scheduler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pods bound by this scheduler that its cache has not yet seen bound.
    pub fn assumed_count(&self) -> usize {
        self.assumed.len()
    }

    /// Pods waiting for a node.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    fn add_usage(&mut self, node: &str, u: Usage, sign: i8) {
        let e = self.used.entry(node.to_owned()).or_default();
        if sign > 0 {
            e.cpu_millis += u.cpu_millis;
            e.memory_bytes += u.memory_bytes;
            e.pods += u.pods;
        } else {
            e.cpu_millis = e.cpu_millis.saturating_sub(u.cpu_millis);
            e.memory_bytes = e.memory_bytes.saturating_sub(u.memory_bytes);
            e.pods = e.pods.saturating_sub(u.pods);
        }
    }

    fn usage(&self, node: &str) -> Usage {
        let mut u = self.used.get(node).copied().unwrap_or_default();
        if let Some(a) = self.assumed_used.get(node) {
            u.cpu_millis += a.cpu_millis;
            u.memory_bytes += a.memory_bytes;
            u.pods += a.pods;
        }
        u
    }

    fn assume(&mut self, key: ObjectKey, node: String, u: Usage) {
        let e = self.assumed_used.entry(node.clone()).or_default();
        e.cpu_millis += u.cpu_millis;
        e.memory_bytes += u.memory_bytes;
        e.pods += u.pods;
        self.assumed.insert(key, (node, u));
    }

    fn forget_assumed(&mut self, key: &ObjectKey) {
        if let Some((node, u)) = self.assumed.remove(key) {
            if let Some(e) = self.assumed_used.get_mut(&node) {
                e.cpu_millis = e.cpu_millis.saturating_sub(u.cpu_millis);
                e.memory_bytes = e.memory_bytes.saturating_sub(u.memory_bytes);
                e.pods = e.pods.saturating_sub(u.pods);
            }
        }
    }
}

/// kube's unschedulable message: `0/3 nodes are available: 3 Insufficient cpu.` with reasons
/// sorted, plus the preemption suffix the default profile adds.
pub fn unschedulable_message(total_nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    if total_nodes == 0 {
        return "no nodes available to schedule pods".into();
    }
    let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    format!(
        "0/{total_nodes} nodes are available: {}. preemption: 0/{total_nodes} nodes are available: {total_nodes} No preemption victims found for incoming pod.",
        parts.join(", ")
    )
}

impl Reconciler for Scheduler {
    fn name(&self) -> String {
        "scheduler".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::SCHEDULER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == pods() || *gr == nodes()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == nodes() {
            return self.pending.iter().cloned().collect();
        }
        if let Some(o) = old {
            if let Some(n) = bound_node(o) {
                self.add_usage(n, usage_of(o), -1);
            }
        }
        let deleted = ev.event_type == WatchEventType::Deleted;
        if !deleted {
            if let Some(n) = bound_node(new) {
                self.add_usage(n, usage_of(new), 1);
            }
        }
        if deleted || !str_at(new, "/spec/nodeName").is_empty() {
            self.forget_assumed(&ev.key);
        }
        let waiting = !deleted && str_at(new, "/spec/nodeName").is_empty() && pod_is_active(new);
        if waiting {
            self.pending.insert(ev.key.clone());
            return vec![ev.key.clone()];
        }
        self.pending.remove(&ev.key);
        let freed =
            old.is_some_and(|o| bound_node(o).is_some()) && (deleted || bound_node(new).is_none());
        if freed {
            return self.pending.iter().cloned().collect();
        }
        Vec::new()
    }

    fn reset(&mut self) {
        self.assumed = OrdMap::new();
        self.assumed_used = OrdMap::new();
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Result<Action, ReconcileError> {
        let Some(pod) = ctx.cache.get(key).cloned() else {
            return Ok(Action::AwaitChange);
        };
        if !str_at(&pod, "/spec/nodeName").is_empty()
            || !pod_is_active(&pod)
            || self.assumed.contains_key(key)
        {
            return Ok(Action::AwaitChange);
        }
        let want = usage_of(&pod);
        let node_gr = nodes();
        let mut best: Option<(u64, String)> = None;
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut total = 0;
        for node in ctx.cache.list(&node_gr) {
            total += 1;
            let name = util::name(node).to_owned();
            let alloc = |f: &str| node.at(&format!("/status/allocatable/{f}"));
            let cpu = alloc("cpu").map_or(u64::MAX, util::cpu_millis);
            let mem = alloc("memory").map_or(u64::MAX, util::memory_bytes);
            let max_pods = alloc("pods").map_or(110, |v| match v {
                Value::String(s) => s.parse().unwrap_or(110),
                other => other.as_u64().unwrap_or(110),
            });
            let used = self.usage(&name);
            let mut fits = true;
            if used.pods + 1 > max_pods {
                *reasons.entry("Too many pods".into()).or_default() += 1;
                fits = false;
            }
            if used.cpu_millis + want.cpu_millis > cpu {
                *reasons.entry("Insufficient cpu".into()).or_default() += 1;
                fits = false;
            }
            if used.memory_bytes + want.memory_bytes > mem {
                *reasons.entry("Insufficient memory".into()).or_default() += 1;
                fits = false;
            }
            if fits {
                // LeastAllocated: prefer the node with the most free CPU share, then by name.
                let score = if cpu == u64::MAX || cpu == 0 {
                    used.pods
                } else {
                    (used.cpu_millis + want.cpu_millis) * 1000 / cpu
                };
                if best.as_ref().is_none_or(|(s, _)| score < *s) {
                    best = Some((score, name));
                }
            }
        }
        let principal = self.principal();
        let Some((_, node)) = best else {
            let message = unschedulable_message(total, &reasons);
            let mut status = pod
                .get("status")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            let before = status.clone();
            util::set_pod_condition(
                &mut status,
                Cond {
                    type_: "PodScheduled",
                    status: "False",
                    reason: "Unschedulable",
                    message: &message,
                },
                ctx.now,
            );
            if status != before {
                let mut body = pod.as_ref().clone();
                body["status"] = status;
                ctx.send(util::update_status(&principal, pods(), body))?;
            }
            return Ok(Action::RequeueAfter {
                ms: UNSCHEDULABLE_RETRY_MS,
            });
        };
        let bind = ApiRequest::bind(&principal, &key.namespace, &key.name, &node);
        match ctx.send(bind) {
            Ok(_) => {}
            Err(e) if e.reason == StatusReason::NotFound => return Ok(Action::AwaitChange),
            Err(e) => return Err(e.into()),
        }
        self.assume(key.clone(), node, want);
        Ok(Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unschedulable_message_counts_nodes_per_reason() {
        let mut r = BTreeMap::new();
        r.insert("Insufficient cpu".to_owned(), 3);
        assert_eq!(
            unschedulable_message(3, &r),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
    }
}
