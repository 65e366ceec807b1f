//! kube's staging/src/k8s.io/endpointslice `reconciler.go` up to `finalize`: what one address
//! type's slices should become (`reconcileByAddressType`, `reconcileByPortMapping`,
//! `getSliceToFill`, the placeholder rule), as a [`Plan`] of creates, updates and deletes.

use crate::api::meta::Fields;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::json::Value;

use super::utils::{
    endpoint_hash, endpoint_ports, endpoints_equal_beyond_hash, endpoints_of, new_endpoint_slice,
    owned_by, pod_to_endpoint, port_map_key, should_pod_be_in_endpoints, slice_labels,
    sorted_ports, stored_list, EndpointHash,
};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::ObjectKey;
use crate::controllers::util::nodes;
use crate::runtime::informer::Informer;

/// `EndpointSet`: desired endpoints by hash, popped in insertion (pod name) order.
#[derive(Clone, Debug, Default)]
struct EndpointSet {
    items: Vec<(EndpointHash, Value)>,
}

impl EndpointSet {
    fn insert(&mut self, ep: Value) {
        let h = endpoint_hash(&ep);
        match self.items.iter_mut().find(|(k, _)| *k == h) {
            Some(slot) => slot.1 = ep,
            None => self.items.push((h, ep)),
        }
    }
    fn take(&mut self, ep: &Value) -> Option<Value> {
        let h = endpoint_hash(ep);
        let i = self.items.iter().position(|(k, _)| *k == h)?;
        Some(self.items.remove(i).1)
    }
    fn pop(&mut self) -> Option<Value> {
        (!self.items.is_empty()).then(|| self.items.remove(0).1)
    }
    fn len(&self) -> usize {
        self.items.len()
    }
}

/// What one address type's reconcile writes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub create: Vec<Value>,
    pub update: Vec<Value>,
    pub delete: Vec<Value>,
}

/// `getSliceToFill`: the slice closest to full once `n` endpoints are added.
fn slice_to_fill<'a>(slices: &[&'a Value], n: usize, max: usize) -> Option<&'a Value> {
    let mut closest = max;
    let mut found = None;
    for s in slices {
        let len = endpoints_of(s).len();
        if n + len > max {
            continue;
        }
        let diff = max - (n + len);
        if diff < closest {
            closest = diff;
            found = Some(*s);
            if diff == 0 {
                break;
            }
        }
    }
    found
}

fn set_endpoints(slice: &mut Value, eps: Vec<Value>) {
    slice["endpoints"] = stored_list(eps);
}

/// `reconcileByPortMapping`: keep the desired endpoints already placed (updated where they
/// changed), fill the changed slices, then one unchanged slice that fits the rest, then new
/// slices of at most `max` endpoints.
fn reconcile_by_port_mapping(
    svc: &Value,
    existing: &[Arc<Value>],
    mut desired: EndpointSet,
    ports: &[Value],
    address_type: &str,
    max: usize,
) -> Plan {
    let mut by_name: BTreeMap<String, Value> = BTreeMap::new();
    let mut unchanged: BTreeSet<String> = BTreeSet::new();
    let mut to_update: BTreeSet<String> = BTreeSet::new();
    let mut to_delete: BTreeSet<String> = BTreeSet::new();
    for slice in existing {
        let name = meta::name(slice).to_owned();
        by_name.insert(name.clone(), slice.as_ref().clone());
        let old = endpoints_of(slice);
        let mut kept = Vec::new();
        let mut updated = false;
        for ep in &old {
            if let Some(got) = desired.take(ep) {
                updated |= !endpoints_equal_beyond_hash(&got, ep);
                kept.push(got);
            }
        }
        let (labels, labels_changed) = slice_labels(Some(slice), svc);
        if updated || old.len() != kept.len() {
            if kept.is_empty() {
                to_delete.insert(name);
            } else {
                let mut s = slice.as_ref().clone();
                set_endpoints(&mut s, kept);
                s["metadata"]["labels"] = Value::Object(labels);
                by_name.insert(name.clone(), s);
                to_update.insert(name);
            }
        } else if labels_changed {
            let mut s = slice.as_ref().clone();
            s["metadata"]["labels"] = Value::Object(labels);
            by_name.insert(name.clone(), s);
            to_update.insert(name);
        } else {
            unchanged.insert(name);
        }
    }
    // 2. Fill the slices being updated, fullest first.
    if desired.len() > 0 && !to_update.is_empty() {
        let mut names: Vec<String> = to_update.iter().cloned().collect();
        names.sort_by_key(|n| std::cmp::Reverse(endpoints_of(&by_name[n]).len()));
        for n in names {
            if let Some(s) = by_name.get_mut(&n) {
                let mut eps = endpoints_of(s);
                while eps.len() < max {
                    let Some(ep) = desired.pop() else { break };
                    eps.push(ep);
                }
                set_endpoints(s, eps);
            }
        }
    }
    // 3. The rest into one unchanged slice that fits them, or new slices.
    let mut create = Vec::new();
    while desired.len() > 0 {
        let fill = if desired.len() < max && !unchanged.is_empty() {
            let candidates: Vec<&Value> = unchanged.iter().map(|n| &by_name[n]).collect();
            slice_to_fill(&candidates, desired.len(), max).cloned()
        } else {
            None
        };
        let mut slice = fill.unwrap_or_else(|| new_endpoint_slice(svc, ports, address_type));
        let mut eps = endpoints_of(&slice);
        while eps.len() < max {
            let Some(ep) = desired.pop() else { break };
            eps.push(ep);
        }
        set_endpoints(&mut slice, eps);
        let name = meta::name(&slice).to_owned();
        if name.is_empty() {
            create.push(slice);
        } else {
            unchanged.remove(&name);
            to_update.insert(name.clone());
            by_name.insert(name, slice);
        }
    }
    Plan {
        create,
        update: to_update.iter().map(|n| by_name[n].clone()).collect(),
        delete: to_delete.iter().map(|n| by_name[n].clone()).collect(),
    }
}

/// `reconcileByAddressType` up to `finalize`: the plan for one address type, and the pods it
/// had to skip (their node is not in the cache).
pub fn plan_address_type(
    cache: &Informer,
    svc: &Value,
    pods: &[Arc<Value>],
    existing: &[Arc<Value>],
    address_type: &str,
    max: usize,
) -> (Plan, Vec<String>) {
    let mut plan = Plan::default();
    let mut errs = Vec::new();
    let mut existing_by_ports: BTreeMap<String, Vec<Arc<Value>>> = BTreeMap::new();
    for s in existing {
        if owned_by(s, svc) {
            let ports = s
                .field("ports")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            existing_by_ports
                .entry(port_map_key(&ports))
                .or_default()
                .push(s.clone());
        } else {
            plan.delete.push(s.as_ref().clone());
        }
    }
    let publish = svc
        .at("/spec/publishNotReadyAddresses")
        .and_then(Value::as_bool)
        == Some(true);
    let mut desired: BTreeMap<String, (Vec<Value>, EndpointSet)> = BTreeMap::new();
    for pod in pods {
        if !should_pod_be_in_endpoints(pod, true) {
            continue;
        }
        let ports = sorted_ports(endpoint_ports(svc, pod));
        let key = port_map_key(&ports);
        let node_name = str_at(pod, "/spec/nodeName");
        let node = cache.get(&ObjectKey::new(nodes(), "", node_name));
        if node.is_none() && !publish {
            errs.push(format!(
                "skipping Pod {} for Service {}/{}: Node {node_name} Not Found",
                meta::name(pod),
                meta::namespace(svc),
                meta::name(svc)
            ));
            continue;
        }
        let ep = pod_to_endpoint(pod, node.map(Arc::as_ref), svc, address_type);
        let entry = desired
            .entry(key)
            .or_insert_with(|| (ports, EndpointSet::default()));
        if ep
            .field("addresses")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            entry.1.insert(ep);
        }
    }
    for (key, (ports, set)) in desired.iter() {
        let slices = existing_by_ports.get(key).cloned().unwrap_or_default();
        let p = reconcile_by_port_mapping(svc, &slices, set.clone(), ports, address_type, max);
        plan.create.extend(p.create);
        plan.update.extend(p.update);
        plan.delete.extend(p.delete);
    }
    for (key, slices) in &existing_by_ports {
        if !desired.contains_key(key) {
            plan.delete
                .extend(slices.iter().map(|s| s.as_ref().clone()));
        }
    }
    // No slice would be left: one placeholder, unless the one being deleted already is one.
    if existing.len() == plan.delete.len() && plan.create.is_empty() {
        let placeholder = new_endpoint_slice(svc, &[], address_type);
        if plan.delete.len() == 1 && is_placeholder_like(&plan.delete[0], &placeholder) {
            plan.delete.clear();
        } else {
            plan.create.push(placeholder);
        }
    }
    // RemoveHintsFromSlices (no topology annotation, no trafficDistribution).
    for s in plan.create.iter_mut().chain(plan.update.iter_mut()) {
        if let Some(eps) = s.get_mut("endpoints").and_then(Value::as_array_mut) {
            for ep in eps.iter_mut().filter_map(Value::as_object_mut) {
                ep.remove("hints");
            }
        }
    }
    (plan, errs)
}

/// `placeholderSliceCompare.DeepEqual`: same namespace and labels, address type, no endpoints
/// and no ports (nil and empty lists are equal).
fn is_placeholder_like(slice: &Value, placeholder: &Value) -> bool {
    let empty = |v: &Value, k: &str| v.get(k).and_then(Value::as_array).is_none_or(Vec::is_empty);
    meta::namespace(slice) == meta::namespace(placeholder)
        && meta::label_map(slice) == meta::label_map(placeholder)
        && str_at(slice, "/addressType") == str_at(placeholder, "/addressType")
        && empty(slice, "endpoints")
        && empty(slice, "ports")
}
