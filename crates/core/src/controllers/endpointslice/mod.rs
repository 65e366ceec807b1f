//! The EndpointSlice controller, a port of kube 1.32's pkg/controller/endpointslice
//! (`endpointslice_controller.go`: the event handlers, `syncService`, the tracker and the
//! trigger-time tracker) and its reconciler in staging/src/k8s.io/endpointslice (`reconciler.go`
//! `Reconcile`, `reconcileByAddressType`, `reconcileByPortMapping`, `finalize`; `utils.go`
//! `podToEndpoint`, `getEndpointPorts`, `FindPort`, `newEndpointSlice`,
//! `setEndpointSliceLabels`, `getSliceToFill`; `util/controller_utils.go`
//! `ShouldPodBeInEndpoints`, `podEndpointsChanged`, `GetServicesToUpdateOnPodChange`).
//!
//! For every Service with a selector the controller keeps EndpointSlices named by
//! `generateName` `<service>-`, labelled with the service name and
//! `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`, owned by the
//! Service, holding one endpoint per selected pod that has an IP and is not terminal: its
//! addresses, `conditions.ready/serving/terminating`, `nodeName`, `zone` and `targetRef`, and the
//! ports resolved from each service port's `targetPort`. At most 100 endpoints per slice; a
//! Service that selects nothing gets one empty placeholder slice.
//!
//! Simplifications (docs/fidelity.md, "EndpointSlice controller"): where kube pops endpoints
//! from a Go map (`EndpointSet.PopAny`) or walks slice names unsorted, endpoints go in pod name
//! order and slices in name order; several ports of one slice are ordered by their JSON rather
//! than by kube's spew hash; topology hints and `trafficDistribution` are not modelled (hints
//! are only ever removed).

mod reconciler;
mod utils;

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::json::{json, Value};

use super::util::{nodes, pods};
use crate::api::meta::{self, str_at};
use crate::api::{ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType};
use crate::runtime::client;
use crate::runtime::informer::Informer;
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, ObjectRef, ReconcileAction, ReconcileError, Reconciler,
};

pub use reconciler::{plan_address_type, Plan};
use utils::{address_types, memberships, owned_by, pod_endpoints_changed, selects};
pub use utils::{
    endpoint_ports, find_port, new_endpoint_slice, pod_to_endpoint, service_selector,
    should_pod_be_in_endpoints,
};

pub fn endpointslices() -> GroupResource {
    crate::group_resource!("discovery.k8s.io", "endpointslices")
}
pub fn services() -> GroupResource {
    crate::group_resource!("", "services")
}

/// `discovery.LabelServiceName`.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
/// `discovery.LabelManagedBy`.
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// `controllerQualifiedName`: this controller's `managed-by` value.
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// `v1.IsHeadlessService`.
const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";
/// `v1.EndpointsLastChangeTriggerTime`.
pub const TRIGGER_TIME_ANNOTATION: &str = "endpoints.kubernetes.io/last-change-trigger-time";
/// `v1.LabelTopologyZone`.
const LABEL_ZONE: &str = "topology.kubernetes.io/zone";
/// `--max-endpoints-per-slice` (kube-controller-manager's default).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// `endpointSliceChangeMinSyncDelay`.
const ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY_MS: u64 = 1000;
/// `maxRetries`.
const MAX_RETRIES: u32 = 15;
/// `defaultSyncBackOff`, `maxSyncBackOff`: the service queue's per-key failure back-off.
const SYNC_BACKOFF_MS: (u64, u64) = (1000, 1_000_000);
/// The tracker's `deletionExpected` generation.
const DELETION_EXPECTED: i64 = -1;

/// A timestamp as the trigger-time tracker keeps it: Unix ms to compare, the object's text to
/// print (kube formats the parsed time with RFC3339Nano, which gives the whole-second text back).
type Stamp = (i64, String);

/// `ServiceState` of the trigger-time tracker.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct ServiceState {
    pods: BTreeMap<String, Stamp>,
    service: Option<Stamp>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EndpointSliceController {
    /// `endpointSliceTracker`: per Service, the generation expected of each slice (by uid), or
    /// [`DELETION_EXPECTED`].
    tracker: BTreeMap<ObjectKey, BTreeMap<String, i64>>,
    /// `triggerTimeTracker`.
    trigger_times: BTreeMap<ObjectKey, ServiceState>,
    /// `--endpoint-updates-batch-period` in ms: the delay of a sync a pod change asks for
    /// (kube-controller-manager's default, 0, syncs at once).
    pub batch_period_ms: u64,
}

/// `Service.spec.selector` as the controller sees it: `None` for no selector. An empty map is
/// `ServiceControllerKey`: the Service a slice's label names.
fn slice_service_key(slice: &Value) -> Option<ObjectKey> {
    let name = meta::label_map(slice).remove(LABEL_SERVICE_NAME)?;
    (!name.is_empty()).then(|| ObjectKey::new(services(), meta::namespace(slice), &name))
}

fn managed(slice: &Value) -> bool {
    meta::label_map(slice)
        .get(LABEL_MANAGED_BY)
        .map(String::as_str)
        == Some(CONTROLLER_NAME)
}

/// The Ready condition's lastTransitionTime (`getPodTriggerTime`).
fn pod_trigger_time(pod: &Value) -> Option<Stamp> {
    let c = pod
        .field("status")
        .and_then(|s| crate::conditions::find_condition(s, "Ready"))?;
    let text = str_at(c, "/lastTransitionTime");
    crate::time::parse_rfc3339_unix_ms(text).map(|ms| (ms, text.to_owned()))
}

impl EndpointSliceController {
    pub fn new() -> Self {
        Self::default()
    }

    /// `ShouldSync`: the tracker expects no generation of this slice, or an older one.
    fn should_sync(&self, slice: &Value) -> bool {
        let Some(gens) = slice_service_key(slice).and_then(|k| self.tracker.get(&k)) else {
            return true;
        };
        gens.get(meta::uid(slice))
            .is_none_or(|g| meta::generation(slice) > *g)
    }

    /// `Has`.
    fn tracks(&self, slice: &Value) -> bool {
        slice_service_key(slice)
            .and_then(|k| self.tracker.get(&k))
            .is_some_and(|g| g.contains_key(meta::uid(slice)))
    }

    /// `HandleDeletion`: forgets the slice; false when its deletion was not expected.
    fn handle_deletion(&mut self, slice: &Value) -> bool {
        let Some(gens) = slice_service_key(slice).and_then(|k| self.tracker.get_mut(&k)) else {
            return true;
        };
        gens.remove(meta::uid(slice))
            .is_none_or(|g| g == DELETION_EXPECTED)
    }

    /// `Update` / `ExpectDeletion`.
    fn track(&mut self, slice: &Value, generation: i64) {
        if let Some(k) = slice_service_key(slice) {
            self.tracker
                .entry(k)
                .or_default()
                .insert(meta::uid(slice).to_owned(), generation);
        }
    }

    /// `StaleSlices`: a listed slice older than the tracker expects or expected deleted, or a
    /// tracked slice missing from the list.
    fn stale_slices(&self, key: &ObjectKey, slices: &[Arc<Value>]) -> bool {
        let Some(gens) = self.tracker.get(key) else {
            return false;
        };
        let listed: BTreeSet<&str> = slices.iter().map(|s| meta::uid(s)).collect();
        slices.iter().any(|s| {
            gens.get(meta::uid(s))
                .is_some_and(|g| *g == DELETION_EXPECTED || *g > meta::generation(s))
        }) || gens
            .iter()
            .any(|(uid, g)| *g != DELETION_EXPECTED && !listed.contains(uid.as_str()))
    }

    /// `ComputeEndpointLastChangeTriggerTime`: the Service's creation on its first sync, then
    /// the earliest pod readiness change (or Service change) not seen at the last sync.
    fn trigger_time(&mut self, key: &ObjectKey, svc: &Value, pods: &[Arc<Value>]) -> Option<Stamp> {
        let created = str_at(svc, "/metadata/creationTimestamp");
        let current = ServiceState {
            pods: pods
                .iter()
                .filter_map(|p| pod_trigger_time(p).map(|t| (meta::name(p).to_owned(), t)))
                .collect(),
            service: crate::time::parse_rfc3339_unix_ms(created).map(|ms| (ms, created.to_owned())),
        };
        let Some(previous) = self.trigger_times.insert(key.clone(), current.clone()) else {
            return current.service;
        };
        let mut min: Option<Stamp> = None;
        let mut consider = |t: &Stamp| {
            if min.as_ref().is_none_or(|m| t.0 < m.0) {
                min = Some(t.clone());
            }
        };
        for (pod, t) in &current.pods {
            if previous.pods.get(pod).is_none_or(|old| old.0 < t.0) {
                consider(t);
            }
        }
        if let Some(t) = &current.service {
            if previous.service.as_ref().is_none_or(|old| old.0 < t.0) {
                consider(t);
            }
        }
        min
    }

    /// `finalize`: creates that can reuse a slice being deleted become updates of it; no
    /// creates for a Service being deleted; then the writes, each tracked.
    fn finalize(
        &mut self,
        ctx: &mut Ctx<'_>,
        svc: &Value,
        mut plan: Plan,
        trigger: Option<&Stamp>,
    ) -> Result<(), String> {
        let mut i = 0;
        while i < plan.delete.len() && !plan.create.is_empty() {
            let reusable = str_at(&plan.delete[i], "/addressType")
                == str_at(&plan.create[plan.create.len() - 1], "/addressType")
                && owned_by(&plan.delete[i], svc);
            if reusable {
                let old = plan.delete.remove(i);
                if let Some(mut slice) = plan.create.pop() {
                    slice["metadata"]["name"] = json!(meta::name(&old));
                    plan.update.push(slice);
                }
            } else {
                i += 1;
            }
        }
        let principal = self.principal();
        let ns = meta::namespace(svc).to_owned();
        let (svc_ns, svc_name) = (ns.as_str(), meta::name(svc));
        let stamp = |slice: &mut Value| {
            // addTriggerTimeAnnotation.
            let m = meta::meta_mut(slice);
            let ann = m.entry("annotations").or_insert_with(|| json!({}));
            if !ann.is_object() {
                *ann = json!({});
            }
            if let Some(a) = ann.as_object_mut() {
                match trigger {
                    Some((_, text)) => {
                        a.insert(TRIGGER_TIME_ANNOTATION, json!(text));
                    }
                    None => {
                        a.remove(TRIGGER_TIME_ANNOTATION);
                    }
                }
                if a.is_empty() {
                    m.remove("annotations");
                }
            }
        };
        if !meta::is_terminating(svc) {
            for mut slice in plan.create {
                stamp(&mut slice);
                match ctx.send(ApiRequest::create(&principal, endpointslices(), &ns, slice)) {
                    Ok(created) => self.track(&created, meta::generation(&created)),
                    Err(e) if e.namespace_terminating() => return Ok(()),
                    Err(e) => {
                        return Err(format!(
                            "failed to create EndpointSlice for Service {svc_ns}/{svc_name}: {}",
                            e.message
                        ))
                    }
                }
            }
        }
        for mut slice in plan.update {
            stamp(&mut slice);
            let name = meta::name(&slice).to_owned();
            match ctx.send(client::update_object(&principal, endpointslices(), slice)) {
                Ok(updated) => self.track(&updated, meta::generation(&updated)),
                Err(e) => {
                    return Err(format!(
                        "failed to update {name} EndpointSlice for Service {svc_ns}/{svc_name}: {}",
                        e.message
                    ))
                }
            }
        }
        for slice in plan.delete {
            self.delete_slice(ctx, svc, &slice).map_err(|e| {
                format!(
                    "failed to delete {} EndpointSlice for Service {svc_ns}/{svc_name}: {e}",
                    meta::name(&slice)
                )
            })?;
        }
        Ok(())
    }

    /// `deleteEndpointSlice`: a slice already gone is fine.
    fn delete_slice(
        &mut self,
        ctx: &mut Ctx<'_>,
        svc: &Value,
        slice: &Value,
    ) -> Result<(), String> {
        let req = ApiRequest::delete(
            &self.principal(),
            endpointslices(),
            meta::namespace(svc),
            meta::name(slice),
        );
        match ctx.send(req) {
            Ok(_) => {
                self.track(slice, DELETION_EXPECTED);
                Ok(())
            }
            Err(e) if e.reason == StatusReason::NotFound => Ok(()),
            Err(e) => Err(e.message),
        }
    }

    /// `Reconcile`: slices of address types the Service no longer has are deleted; each type it
    /// has is reconciled. Returns the errors, as `utilerrors.NewAggregate` flattens them.
    fn reconcile_service(
        &mut self,
        ctx: &mut Ctx<'_>,
        svc: &Value,
        pods: &[Arc<Value>],
        slices: &[Arc<Value>],
        trigger: Option<&Stamp>,
    ) -> Vec<String> {
        let types = address_types(svc);
        let mut errs = Vec::new();
        let mut unsupported = Vec::new();
        let mut by_type: BTreeMap<&str, Vec<Arc<Value>>> = BTreeMap::new();
        for s in slices {
            match types.iter().find(|t| **t == str_at(s, "/addressType")) {
                Some(t) => by_type.entry(t).or_default().push(s.clone()),
                None => unsupported.push(s.clone()),
            }
        }
        for t in &types {
            let existing = by_type.remove(t).unwrap_or_default();
            let (plan, skipped) =
                plan_address_type(ctx.cache, svc, pods, &existing, t, MAX_ENDPOINTS_PER_SLICE);
            errs.extend(skipped);
            if let Err(e) = self.finalize(ctx, svc, plan, trigger) {
                errs.push(e);
            }
        }
        for s in unsupported {
            if let Err(e) = self.delete_slice(ctx, svc, &s) {
                errs.push(format!(
                    "error deleting {} EndpointSlice for Service {}/{}: {e}",
                    meta::name(&s),
                    meta::namespace(svc),
                    meta::name(svc)
                ));
            }
        }
        let mut seen = BTreeSet::new();
        errs.retain(|e| seen.insert(e.clone()));
        errs
    }
}

/// `utilerrors.NewAggregate(...).Error()`.
fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

impl Reconciler for EndpointSliceController {
    fn name(&self) -> String {
        "endpointslice-controller".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::ENDPOINTSLICE_CONTROLLER.into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "endpoint-slice-controller".into(),
            host: String::new(),
        })
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == services() || *gr == pods() || *gr == nodes() || *gr == endpointslices()
    }

    /// The slice informer holds only this controller's slices (kube's handlers ignore the
    /// others unless one changes its managed-by label, which still reaches a held slice).
    fn accepts(&self, gr: &GroupResource, obj: &Value) -> bool {
        *gr != endpointslices() || managed(obj)
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        self.keys_after(ev, old, new, cache)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    fn keys_after(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<(ObjectKey, u64)> {
        let gr = &ev.key.gr;
        if *gr == services() {
            // onServiceUpdate / onServiceDelete.
            return vec![(ObjectKey::clone(&ev.key), 0)];
        }
        if *gr == pods() {
            let batch = |keys: BTreeSet<ObjectKey>| {
                keys.into_iter()
                    .map(|k| (k, self.batch_period_ms))
                    .collect()
            };
            return match (ev.event_type, old) {
                // updatePod: GetServicesToUpdateOnPodChange.
                (WatchEventType::Modified, Some(o)) => {
                    if str_at(o, "/metadata/resourceVersion")
                        == str_at(new, "/metadata/resourceVersion")
                    {
                        return Vec::new();
                    }
                    let (pod_changed, labels_changed) = pod_endpoints_changed(o, new);
                    if !pod_changed && !labels_changed {
                        return Vec::new();
                    }
                    let now = memberships(cache, new);
                    if !labels_changed {
                        return batch(now);
                    }
                    let before = memberships(cache, o);
                    // determineNeededServiceUpdates.
                    batch(if pod_changed {
                        now.union(&before).cloned().collect()
                    } else {
                        now.symmetric_difference(&before).cloned().collect()
                    })
                }
                // addPod, deletePod.
                _ => batch(memberships(cache, new)),
            };
        }
        if *gr != endpointslices() {
            return Vec::new();
        }
        let delay = ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY_MS.max(self.batch_period_ms);
        let queue = |s: &Value| slice_service_key(s).map(|k| (k, delay));
        match (ev.event_type, old) {
            (WatchEventType::Deleted, _) => {
                if managed(new) && self.tracks(new) && !self.handle_deletion(new) {
                    return queue(new).into_iter().collect();
                }
                Vec::new()
            }
            (WatchEventType::Modified, Some(o)) => {
                let svc_label = |s: &Value| meta::label_map(s).remove(LABEL_SERVICE_NAME);
                if svc_label(o) != svc_label(new) {
                    return queue(new).into_iter().chain(queue(o)).collect();
                }
                if managed(o) != managed(new) || (managed(new) && self.should_sync(new)) {
                    return queue(new).into_iter().collect();
                }
                Vec::new()
            }
            _ => {
                if managed(new) && self.should_sync(new) {
                    return queue(new).into_iter().collect();
                }
                Vec::new()
            }
        }
    }

    fn reset(&mut self) {
        self.tracker.clear();
        self.trigger_times.clear();
    }

    fn max_retries(&self) -> Option<u32> {
        Some(MAX_RETRIES)
    }

    fn rate_limits(&self) -> Option<(u64, u64)> {
        Some(SYNC_BACKOFF_MS)
    }

    /// `syncService`.
    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(svc) = ctx.cache.get(key).cloned() else {
            self.trigger_times.remove(key);
            self.tracker.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        if str_at(&svc, "/spec/type") == "ExternalName" || service_selector(&svc).is_none() {
            return Ok(ReconcileAction::AwaitChange);
        }
        let ns = meta::namespace(&svc);
        let pod_list: Vec<Arc<Value>> = ctx
            .cache
            .list(&pods())
            .filter(|p| meta::namespace(p) == ns && selects(&svc, &meta::label_map(p)))
            .cloned()
            .collect();
        let slices: Vec<Arc<Value>> = ctx
            .cache
            .list(&endpointslices())
            .filter(|s| {
                meta::namespace(s) == ns
                    && managed(s)
                    && slice_service_key(s).as_ref() == Some(key)
                    // dropEndpointSlicesPendingDeletion.
                    && !meta::is_terminating(s)
            })
            .cloned()
            .collect();
        if self.stale_slices(key, &slices) {
            return Err(ReconcileError::Other(
                "EndpointSlice informer cache is out of date".into(),
            ));
        }
        let trigger = self.trigger_time(key, &svc, &pod_list);
        let errs = self.reconcile_service(ctx, &svc, &pod_list, &slices, trigger.as_ref());
        if errs.is_empty() {
            return Ok(ReconcileAction::AwaitChange);
        }
        let err = aggregate(&errs);
        ctx.record(EventNote::new(
            ObjectRef::to(&svc, "v1", "Service"),
            EventType::Warning,
            "FailedToUpdateEndpointSlices",
            format!(
                "Error updating Endpoint Slices for Service {ns}/{}: {err}",
                meta::name(&svc)
            ),
        ));
        Err(ReconcileError::Other(err))
    }
}

#[cfg(test)]
mod tests;
