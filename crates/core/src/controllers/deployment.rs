//! The Deployment controller [kubernetes pkg/controller/deployment: deployment_controller.go,
//! sync.go, rolling.go, recreate.go, progress.go, util/deployment_util.go].
//!
//! One ReplicaSet per pod-template-hash; rolling update bounded by maxSurge (rounded up) and
//! maxUnavailable (rounded down); Recreate; proportional scaling of active ReplicaSets when
//! spec.replicas changes mid-rollout; pause/resume; the revision annotation; the progress
//! deadline; the exact status arithmetic and the Available/Progressing/ReplicaFailure conditions
//! with kube's reasons and messages.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::util::{self, deployments, pods, replicasets};
use super::{owner_key, Ctx, ReconcileAction, ReconcileError, Reconciler};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType};
use crate::conditions::{self, Cond};
use crate::runtime::client;
use crate::runtime::Informer;

pub const REVISION: &str = "deployment.kubernetes.io/revision";
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
const MAX_INT32: i64 = 2_147_483_647;
/// The revisions a rolled-back-to ReplicaSet had before, comma separated.
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// `maxRevHistoryLengthInChars`: the history keeps its newest entries within this length.
const MAX_REVISION_HISTORY_CHARS: usize = 2000;

const ANNOTATIONS_NOT_COPIED: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];

// ---- pure arithmetic (deployment_util.go) ----------------------------------------------

/// `intstr.GetScaledValueFromIntOrPercent`: an integer as is, or a percentage of `total`,
/// rounded up or down.
pub fn scaled_value(v: Option<&Value>, total: i64, round_up: bool, default_pct: i64) -> i64 {
    let pct = |p: i64| {
        if round_up {
            (p * total + 99) / 100
        } else {
            p * total / 100
        }
    };
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => match s.strip_suffix('%').and_then(|p| p.parse().ok()) {
            Some(p) => pct(p),
            None => pct(default_pct),
        },
        _ => pct(default_pct),
    }
}

/// `ResolveFenceposts`: (maxSurge, maxUnavailable); both 0 makes maxUnavailable 1.
pub fn resolve_fenceposts(
    max_surge: Option<&Value>,
    max_unavailable: Option<&Value>,
    desired: i64,
) -> (i64, i64) {
    let surge = scaled_value(max_surge, desired, true, 25);
    let unavailable = scaled_value(max_unavailable, desired, false, 25);
    if surge == 0 && unavailable == 0 {
        return (0, 1);
    }
    (surge, unavailable)
}

/// The Deployment's spec with apps/v1 defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct DeploymentSpec {
    pub replicas: i64,
    pub recreate: bool,
    pub max_surge: Option<Value>,
    pub max_unavailable: Option<Value>,
    pub revision_history_limit: i64,
    /// None when absent-as-MaxInt32 (no deadline).
    pub progress_deadline_seconds: Option<i64>,
    pub min_ready_seconds: i64,
    pub paused: bool,
}

impl DeploymentSpec {
    pub fn from_object(d: &Value) -> Self {
        let spec = d.get("spec").unwrap_or(&Value::Null);
        let deadline = spec
            .get("progressDeadlineSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(600);
        DeploymentSpec {
            replicas: spec.get("replicas").and_then(Value::as_i64).unwrap_or(1),
            recreate: str_at(spec, "/strategy/type") == "Recreate",
            max_surge: spec.at("/strategy/rollingUpdate/maxSurge").cloned(),
            max_unavailable: spec.at("/strategy/rollingUpdate/maxUnavailable").cloned(),
            revision_history_limit: spec
                .get("revisionHistoryLimit")
                .and_then(Value::as_i64)
                .unwrap_or(10),
            progress_deadline_seconds: (deadline != MAX_INT32).then_some(deadline),
            min_ready_seconds: spec
                .get("minReadySeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            paused: spec.get("paused").and_then(Value::as_bool).unwrap_or(false),
        }
    }

    /// `MaxSurge`: 0 for Recreate.
    pub fn max_surge(&self) -> i64 {
        if self.recreate {
            return 0;
        }
        resolve_fenceposts(
            self.max_surge.as_ref(),
            self.max_unavailable.as_ref(),
            self.replicas,
        )
        .0
    }

    /// `MaxUnavailable`: 0 for Recreate or zero replicas, never more than replicas.
    pub fn max_unavailable(&self) -> i64 {
        if self.recreate || self.replicas == 0 {
            return 0;
        }
        resolve_fenceposts(
            self.max_surge.as_ref(),
            self.max_unavailable.as_ref(),
            self.replicas,
        )
        .1
        .min(self.replicas)
    }
}

/// The ReplicaSet fields the arithmetic needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsCounts {
    pub name: String,
    pub spec_replicas: i64,
    pub replicas: i64,
    pub ready: i64,
    pub available: i64,
}

/// `NewRSNewReplicas` for a rolling update: the new ReplicaSet's next size.
pub fn new_rs_new_replicas(spec: &DeploymentSpec, total_spec_replicas: i64, new_rs: i64) -> i64 {
    if spec.recreate {
        return spec.replicas;
    }
    let max_total = spec.replicas + spec.max_surge();
    if total_spec_replicas >= max_total {
        return new_rs;
    }
    let up = (max_total - total_spec_replicas).min(spec.replicas - new_rs);
    new_rs + up
}

/// `getReplicaSetFraction`: how much one active ReplicaSet grows or shrinks in proportional
/// scaling.
pub fn replica_set_fraction(
    spec: &DeploymentSpec,
    rs_spec: i64,
    max_replicas_annotation: Option<i64>,
    deployment_status_replicas: i64,
) -> i64 {
    if spec.replicas == 0 {
        return -rs_spec;
    }
    let deployment_replicas = spec.replicas + spec.max_surge();
    let annotated = max_replicas_annotation.unwrap_or(deployment_status_replicas);
    if annotated == 0 {
        return 0;
    }
    let size = (rs_spec * deployment_replicas) as f64 / annotated as f64;
    size.round() as i64 - rs_spec
}

/// `GetProportion`.
pub fn proportion(fraction: i64, rs_spec: i64, to_add: i64, added: i64) -> i64 {
    if rs_spec == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `calculateStatus` without conditions: (replicas, updated, ready, available, unavailable).
pub fn status_counts(all: &[RsCounts], new_rs: Option<&RsCounts>) -> [i64; 5] {
    let replicas: i64 = all.iter().map(|r| r.replicas).sum();
    let updated = new_rs.map_or(0, |r| r.replicas);
    let ready: i64 = all.iter().map(|r| r.ready).sum();
    let available: i64 = all.iter().map(|r| r.available).sum();
    let total_spec: i64 = all.iter().map(|r| r.spec_replicas).sum();
    [
        replicas,
        updated,
        ready,
        available,
        (total_spec - available).max(0),
    ]
}

/// `ComputeHash`: FNV-32a over the template (canonical JSON here) and the collision count,
/// encoded with `SafeEncodeString`.
pub fn pod_template_hash(template: &Value, collision_count: Option<i64>) -> String {
    let mut bytes = canonical_json(template).into_bytes();
    if let Some(c) = collision_count {
        bytes.extend_from_slice(&(c as u32).to_le_bytes());
    }
    util::safe_encode(&util::fnv32a(&bytes).to_string())
}

fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", json!(k), canonical_json(&m[k.as_str()])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical_json).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// `EqualIgnoreHash`: templates equal once the pod-template-hash label is dropped (and a
/// `labels` map left empty by that is dropped too). Compares in place: the controller asks this
/// of every ReplicaSet on every sync, so it must not copy templates.
pub fn equal_ignore_hash(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| match y.get(k) {
                    Some(w) if k == "metadata" => metadata_equal_ignore_hash(v, w),
                    Some(w) => v == w,
                    None => false,
                })
        }
        _ => a == b,
    }
}

/// What `metadata.labels` is once the hash label is dropped.
#[derive(PartialEq)]
enum LabelsIgnoringHash<'a> {
    /// Absent, or an object holding nothing but the hash label.
    Absent,
    /// An object with other labels (the hash label is skipped when comparing).
    Labels(&'a serde_json::Map<String, Value>),
    /// Not an object: kept as it is.
    Other(&'a Value),
}

fn labels_ignoring_hash(meta: &serde_json::Map<String, Value>) -> LabelsIgnoringHash<'_> {
    match meta.get("labels") {
        None => LabelsIgnoringHash::Absent,
        Some(Value::Object(l)) if l.keys().all(|k| k == POD_TEMPLATE_HASH) => {
            LabelsIgnoringHash::Absent
        }
        Some(Value::Object(l)) => LabelsIgnoringHash::Labels(l),
        Some(other) => LabelsIgnoringHash::Other(other),
    }
}

fn metadata_equal_ignore_hash(a: &Value, b: &Value) -> bool {
    let (Value::Object(x), Value::Object(y)) = (a, b) else {
        return a == b;
    };
    let others = |m: &serde_json::Map<String, Value>| m.keys().filter(|k| *k != "labels").count();
    let others_equal = others(x) == others(y)
        && x.iter()
            .filter(|(k, _)| *k != "labels")
            .all(|(k, v)| y.get(k) == Some(v));
    if !others_equal {
        return false;
    }
    match (labels_ignoring_hash(x), labels_ignoring_hash(y)) {
        (LabelsIgnoringHash::Labels(l), LabelsIgnoringHash::Labels(m)) => {
            let count = |l: &serde_json::Map<String, Value>| {
                l.keys().filter(|k| *k != POD_TEMPLATE_HASH).count()
            };
            count(l) == count(m)
                && l.iter()
                    .filter(|(k, _)| *k != POD_TEMPLATE_HASH)
                    .all(|(k, v)| m.get(k) == Some(v))
        }
        (p, q) => p == q,
    }
}

// ---- the controller -------------------------------------------------------------------

#[derive(Clone, Debug, Default)]
pub struct DeploymentController {}

impl DeploymentController {
    pub fn new() -> Self {
        Self::default()
    }
}

fn rs_spec(rs: &Value) -> i64 {
    meta::i64_at(rs, "/spec/replicas").unwrap_or(1)
}
fn rs_status(rs: &Value, field: &str) -> i64 {
    meta::i64_at(rs, &format!("/status/{field}")).unwrap_or(0)
}
fn revision_of(rs: &Value) -> i64 {
    meta::annotation(rs, REVISION)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}
fn counts(rs: &Value) -> RsCounts {
    RsCounts {
        name: meta::name(rs).to_owned(),
        spec_replicas: rs_spec(rs),
        replicas: rs_status(rs, "replicas"),
        ready: rs_status(rs, "readyReplicas"),
        available: rs_status(rs, "availableReplicas"),
    }
}
/// `{"metadata": {"annotations": ...}}` of an object (`{}` when its metadata is not an
/// object): enough for the annotation setters to tell whether they would change it.
fn annotations_only(obj: &Value) -> Value {
    match obj.get("metadata") {
        Some(Value::Object(m)) => {
            let mut meta = serde_json::Map::new();
            if let Some(a) = m.get("annotations") {
                meta.insert("annotations".into(), a.clone());
            }
            json!({ "metadata": meta })
        }
        _ => json!({}),
    }
}
fn by_creation(a: &Value, b: &Value) -> std::cmp::Ordering {
    str_at(a, "/metadata/creationTimestamp")
        .cmp(str_at(b, "/metadata/creationTimestamp"))
        .then_with(|| meta::name(a).cmp(meta::name(b)))
}
fn has_deadline(spec: &DeploymentSpec) -> bool {
    spec.progress_deadline_seconds.is_some()
}

/// One sync's working state: the deployment as last written and its ReplicaSets.
struct Sync<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    d: Value,
    spec: DeploymentSpec,
    principal: String,
}

impl Sync<'_, '_> {
    /// A copy of the status to change and write.
    fn status(&self) -> Value {
        self.status_ref().clone()
    }

    /// The status to read (an empty object when absent), without a copy.
    fn status_ref(&self) -> &Value {
        static EMPTY: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| json!({}));
        self.d.get("status").unwrap_or(&EMPTY)
    }

    fn update_status(&mut self, status: Value) -> Result<(), ReconcileError> {
        let mut body = self.d.clone();
        body["status"] = status;
        self.d = self.ctx.send(client::update_status_object(
            &self.principal,
            deployments(),
            body,
        ))?;
        Ok(())
    }

    fn update_rs(&mut self, rs: Value) -> Result<Value, ReconcileError> {
        Ok(self
            .ctx
            .send(client::update_object(&self.principal, replicasets(), rs))?)
    }

    fn set_annotation(obj: &mut Value, k: &str, v: String) -> bool {
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            return false;
        };
        let ann = meta.entry("annotations").or_insert_with(|| json!({}));
        if !ann.is_object() {
            *ann = json!({});
        }
        if ann.get(k).and_then(Value::as_str) == Some(v.as_str()) {
            return false;
        }
        ann[k] = json!(v);
        true
    }

    /// Whether [`Self::set_annotation`] would change `obj`.
    fn annotation_differs(obj: &Value, k: &str, v: &str) -> bool {
        obj.get("metadata").is_some_and(Value::is_object) && meta::annotation(obj, k) != Some(v)
    }

    fn replicas_annotations(&self, rs: &mut Value) -> bool {
        let desired = self.spec.replicas;
        let max = desired + self.spec.max_surge();
        let a = Self::set_annotation(rs, DESIRED_REPLICAS, desired.to_string());
        let b = Self::set_annotation(rs, MAX_REPLICAS, max.to_string());
        a || b
    }

    /// `SetNewReplicaSetAnnotations`.
    fn new_rs_annotations(&self, rs: &mut Value, new_revision: i64, exists: bool) -> bool {
        let mut changed = false;
        if let Some(ann) = self
            .d
            .at("/metadata/annotations")
            .and_then(Value::as_object)
        {
            for (k, v) in ann {
                if ANNOTATIONS_NOT_COPIED.contains(&k.as_str()) {
                    continue;
                }
                if let Some(s) = v.as_str() {
                    changed |= Self::set_annotation(rs, k, s.to_owned());
                }
            }
        }
        // SetNewReplicaSetAnnotations [deployment/util/deployment_util.go].
        let old_revision = meta::annotation(rs, REVISION).map(str::to_owned);
        if revision_of(rs) < new_revision {
            changed |= Self::set_annotation(rs, REVISION, new_revision.to_string());
            // A ReplicaSet that had a revision and gets a newer one is being rolled back to:
            // its old revision joins the history, which keeps its newest entries within 2,000
            // characters.
            if let Some(old) = old_revision {
                let history = meta::annotation(rs, REVISION_HISTORY)
                    .unwrap_or("")
                    .to_owned();
                let next = if history.is_empty() {
                    Some(old)
                } else {
                    let mut entries: Vec<&str> = history.split(',').collect();
                    let mut total = history.len() + old.len() + 1;
                    let mut start = 0;
                    while total > MAX_REVISION_HISTORY_CHARS && start < entries.len() {
                        total -= entries[start].len() + 1;
                        start += 1;
                    }
                    (total <= MAX_REVISION_HISTORY_CHARS).then(|| {
                        entries = entries.split_off(start);
                        entries.push(&old);
                        entries.join(",")
                    })
                };
                if let Some(h) = next {
                    changed |= Self::set_annotation(rs, REVISION_HISTORY, h);
                }
            }
        }
        if !exists {
            changed |= self.replicas_annotations(rs);
        }
        changed
    }

    /// `scaleReplicaSet`: returns whether the size changed.
    fn scale(
        &mut self,
        rss: &mut [Value],
        i: usize,
        new_scale: i64,
    ) -> Result<bool, ReconcileError> {
        let size_changes = rs_spec(&rss[i]) != new_scale;
        let mut copy = rss[i].clone();
        let annotations_change = self.replicas_annotations(&mut copy);
        if !size_changes && !annotations_change {
            return Ok(false);
        }
        copy["spec"]["replicas"] = json!(new_scale);
        rss[i] = self.update_rs(copy)?;
        Ok(size_changes)
    }

    fn scale_if_needed(
        &mut self,
        rss: &mut [Value],
        i: usize,
        new_scale: i64,
    ) -> Result<bool, ReconcileError> {
        if rs_spec(&rss[i]) == new_scale {
            return Ok(false);
        }
        self.scale(rss, i, new_scale)
    }

    /// `getNewReplicaSet`: finds (and annotates) or creates the new ReplicaSet. Returns the
    /// index of the new ReplicaSet in `rss` (old ReplicaSets sorted oldest first).
    fn new_rs(
        &mut self,
        rss: &mut Vec<Value>,
        create: bool,
    ) -> Result<Option<usize>, ReconcileError> {
        let existing = {
            let template = self.d.at("/spec/template").unwrap_or(&Value::Null);
            rss.iter().position(|rs| {
                equal_ignore_hash(rs.at("/spec/template").unwrap_or(&Value::Null), template)
            })
        };
        let max_old_revision = rss
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != existing)
            .map(|(_, rs)| revision_of(rs))
            .max()
            .unwrap_or(0);
        let new_revision = max_old_revision + 1;
        if let Some(i) = existing {
            // The annotations are tried on a copy of the annotations alone: the whole
            // ReplicaSet is copied only when it has to be written.
            let mut probe = annotations_only(&rss[i]);
            let annotations_updated = self.new_rs_annotations(&mut probe, new_revision, true);
            let min_ready = meta::i64_at(&rss[i], "/spec/minReadySeconds").unwrap_or(0);
            if annotations_updated || min_ready != self.spec.min_ready_seconds {
                let mut copy = rss[i].clone();
                self.new_rs_annotations(&mut copy, new_revision, true);
                copy["spec"]["minReadySeconds"] = json!(self.spec.min_ready_seconds);
                rss[i] = self.update_rs(copy)?;
                return Ok(Some(i));
            }
            let rev = meta::annotation(&rss[i], REVISION)
                .unwrap_or_default()
                .to_owned();
            let annotate = Self::annotation_differs(&self.d, REVISION, &rev);
            let mut needs_update = annotate;
            let mut status = self.status();
            if has_deadline(&self.spec)
                && conditions::find_condition(&status, "Progressing").is_none()
            {
                let msg = format!("Found new replica set \"{}\"", meta::name(&rss[i]));
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "True",
                        reason: "FoundNewReplicaSet",
                        message: &msg,
                    },
                    self.ctx.now,
                );
                needs_update = true;
            }
            if needs_update {
                if annotate {
                    Self::set_annotation(&mut self.d, REVISION, rev);
                }
                self.update_status(status)?;
            }
            return Ok(Some(i));
        }
        if !create {
            return Ok(None);
        }
        let template = self.d.at("/spec/template").cloned().unwrap_or(Value::Null);
        let collision = meta::i64_at(&self.d, "/status/collisionCount");
        let hash = pod_template_hash(&template, collision);
        let mut new_template = template.clone();
        add_label(&mut new_template, &hash);
        let mut selector = self.d.at("/spec/selector").cloned().unwrap_or(json!({}));
        selector["matchLabels"][POD_TEMPLATE_HASH] = json!(hash);
        let name = format!("{}-{hash}", meta::name(&self.d));
        let total: i64 = rss.iter().map(rs_spec).sum();
        let replicas = new_rs_new_replicas(&self.spec, total, 0);
        let mut rs = json!({
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta::namespace(&self.d),
                "labels": new_template.at("/metadata/labels").cloned().unwrap_or(json!({})),
                "ownerReferences": [meta::owner_reference(&self.d, true)],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": self.spec.min_ready_seconds,
                "selector": selector,
                "template": new_template,
            },
        });
        self.new_rs_annotations(&mut rs, new_revision, false);
        let ns = meta::namespace(&self.d).to_owned();
        let created =
            match self
                .ctx
                .send(ApiRequest::create(&self.principal, replicasets(), &ns, rs))
            {
                Ok(rs) => Some(rs),
                Err(e) if e.reason == StatusReason::AlreadyExists => {
                    let key = ObjectKey::new(replicasets(), &ns, &name);
                    match self.ctx.cache.get(&key) {
                        Some(rs)
                            if equal_ignore_hash(
                                rs.at("/spec/template").unwrap_or(&Value::Null),
                                &template,
                            ) =>
                        {
                            None
                        }
                        _ => {
                            let mut status = self.status();
                            status["collisionCount"] = json!(collision.unwrap_or(0) + 1);
                            self.update_status(status)?;
                            return Err(e.into());
                        }
                    }
                }
                Err(e) => {
                    if has_deadline(&self.spec) {
                        let msg = format!("Failed to create new replica set \"{name}\": {e}");
                        let mut status = self.status();
                        conditions::set_deployment_condition(
                            &mut status,
                            Cond {
                                type_: "Progressing",
                                status: "False",
                                reason: "ReplicaSetCreateError",
                                message: &msg,
                            },
                            self.ctx.now,
                        );
                        self.update_status(status)?;
                    }
                    return Err(e.into());
                }
            };
        let already_existed = created.is_none();
        let rs = match created {
            Some(rs) => rs,
            None => {
                let key = ObjectKey::new(replicasets(), &ns, &name);
                match self.ctx.cache.get(&key) {
                    Some(rs) => rs.as_ref().clone(),
                    None => return Err(ReconcileError::Other("replica set vanished".into())),
                }
            }
        };
        let mut d = self.d.clone();
        let mut needs_update = Self::set_annotation(&mut d, REVISION, new_revision.to_string());
        let mut status = self.status();
        if !already_existed && has_deadline(&self.spec) {
            let msg = format!("Created new replica set \"{name}\"");
            conditions::set_deployment_condition(
                &mut status,
                Cond {
                    type_: "Progressing",
                    status: "True",
                    reason: "NewReplicaSetCreated",
                    message: &msg,
                },
                self.ctx.now,
            );
            needs_update = true;
        }
        rss.push(rs);
        if needs_update {
            self.d = d;
            self.update_status(status)?;
        }
        Ok(Some(rss.len() - 1))
    }

    /// `calculateStatus`.
    fn calculate_status(&self, rss: &[Value], new_rs: Option<usize>) -> Value {
        let all: Vec<RsCounts> = rss.iter().map(counts).collect();
        let [replicas, updated, ready, available, unavailable] =
            status_counts(&all, new_rs.map(|i| &all[i]));
        let old = self.status_ref();
        let mut status = json!({
            "observedGeneration": meta::generation(&self.d),
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": unavailable,
        });
        if let Some(c) = old.get("collisionCount") {
            status["collisionCount"] = c.clone();
        }
        status["conditions"] = old.get("conditions").cloned().unwrap_or(json!([]));
        let (s, reason, msg) = if available >= self.spec.replicas - self.spec.max_unavailable() {
            (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        } else {
            (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        };
        conditions::set_deployment_condition(
            &mut status,
            Cond {
                type_: "Available",
                status: s,
                reason,
                message: msg,
            },
            self.ctx.now,
        );
        strip_zero_counts(&mut status);
        status
    }

    /// `syncDeploymentStatus` (scaling and paused syncs).
    fn sync_status(
        &mut self,
        rss: &[Value],
        new_rs: Option<usize>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let status = self.calculate_status(rss, new_rs);
        if status != *self.status_ref() {
            self.update_status(status)?;
        }
        Ok(ReconcileAction::AwaitChange)
    }

    /// `syncRolloutStatus`: status plus the Progressing condition; requeues a stuck rollout.
    fn sync_rollout_status(
        &mut self,
        rss: &[Value],
        new_rs: Option<usize>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let now = self.ctx.now;
        let mut status = self.calculate_status(rss, new_rs);
        if !has_deadline(&self.spec) {
            conditions::remove_condition(&mut status, "Progressing");
        }
        let old = self.status_ref();
        let current = conditions::find_condition(old, "Progressing").cloned();
        let is_complete = num(&status, "replicas") == num(&status, "updatedReplicas")
            && current
                .as_ref()
                .is_some_and(|c| str_at(c, "/reason") == "NewReplicaSetAvailable");
        // The messages name the new ReplicaSet, or the Deployment while there is none (mid
        // Recreate, between scaling the old ones down and creating the new one).
        let subject = match new_rs {
            Some(i) => format!("ReplicaSet \"{}\"", meta::name(&rss[i])),
            None => format!("Deployment \"{}\"", meta::name(&self.d)),
        };
        if has_deadline(&self.spec) && !is_complete {
            if self.complete(&status) {
                let msg = format!("{subject} has successfully progressed.");
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "True",
                        reason: "NewReplicaSetAvailable",
                        message: &msg,
                    },
                    now,
                );
            } else if progressing(old, &status) {
                let msg = format!("{subject} is progressing.");
                let transition = current
                    .as_ref()
                    .filter(|c| str_at(c, "/status") == "True")
                    .map(|c| str_at(c, "/lastTransitionTime").to_owned());
                conditions::remove_condition(&mut status, "Progressing");
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "True",
                        reason: "ReplicaSetUpdated",
                        message: &msg,
                    },
                    now,
                );
                if let (Some(t), Some(list)) = (
                    transition,
                    status.get_mut("conditions").and_then(Value::as_array_mut),
                ) {
                    if let Some(last) = list.last_mut() {
                        last["lastTransitionTime"] = json!(t);
                    }
                }
            } else if self.timed_out(&status) {
                let msg = format!("{subject} has timed out progressing.");
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "False",
                        reason: "ProgressDeadlineExceeded",
                        message: &msg,
                    },
                    now,
                );
            }
        }
        match replica_failure(rss, new_rs) {
            Some(c) => conditions::set_deployment_condition(
                &mut status,
                Cond {
                    type_: "ReplicaFailure",
                    status: str_at(&c, "/status"),
                    reason: str_at(&c, "/reason"),
                    message: str_at(&c, "/message"),
                },
                now,
            ),
            None => {
                conditions::remove_condition(&mut status, "ReplicaFailure");
            }
        }
        if status == *old {
            return Ok(self.requeue_stuck(&status));
        }
        self.update_status(status)?;
        Ok(ReconcileAction::AwaitChange)
    }

    /// `DeploymentComplete`.
    fn complete(&self, status: &Value) -> bool {
        let r = self.spec.replicas;
        num(status, "updatedReplicas") == r
            && num(status, "replicas") == r
            && num(status, "availableReplicas") == r
            && num(status, "observedGeneration") >= meta::generation(&self.d)
    }

    /// `DeploymentTimedOut`.
    fn timed_out(&self, status: &Value) -> bool {
        let Some(deadline) = self.spec.progress_deadline_seconds else {
            return false;
        };
        let Some(c) = conditions::find_condition(status, "Progressing") else {
            return false;
        };
        match str_at(c, "/reason") {
            "NewReplicaSetAvailable" => false,
            "ProgressDeadlineExceeded" => true,
            _ => last_update_ms(c)
                .is_some_and(|from| from + deadline * 1000 < self.ctx.now.unix_ms()),
        }
    }

    /// `requeueStuckDeployment`.
    fn requeue_stuck(&self, status: &Value) -> ReconcileAction {
        let Some(deadline) = self.spec.progress_deadline_seconds else {
            return ReconcileAction::AwaitChange;
        };
        let Some(c) = conditions::find_condition(self.status_ref(), "Progressing").cloned() else {
            return ReconcileAction::AwaitChange;
        };
        if self.complete(status) || str_at(&c, "/reason") == "ProgressDeadlineExceeded" {
            return ReconcileAction::AwaitChange;
        }
        let Some(from) = last_update_ms(&c) else {
            return ReconcileAction::AwaitChange;
        };
        let after = from + deadline * 1000 - self.ctx.now.unix_ms();
        if after < 1000 {
            // kube re-adds rate limited; a short fixed delay keeps the same effect here.
            return ReconcileAction::RequeueAfter { ms: 5 };
        }
        ReconcileAction::RequeueAfter {
            ms: (after + 1000) as u64,
        }
    }

    /// `dc.scale`: proportional scaling.
    fn proportional_scale(
        &mut self,
        rss: &mut [Value],
        new_rs: Option<usize>,
    ) -> Result<(), ReconcileError> {
        let active: Vec<usize> = (0..rss.len()).filter(|i| rs_spec(&rss[*i]) > 0).collect();
        let olds_newest_first: Vec<usize> = {
            let mut v: Vec<usize> = (0..rss.len()).filter(|i| Some(*i) != new_rs).collect();
            v.sort_by(|a, b| by_creation(&rss[*b], &rss[*a]));
            v
        };
        if new_rs.is_some() || !olds_newest_first.is_empty() {
            let target = match active.len() {
                0 => new_rs.or(olds_newest_first.first().copied()),
                1 => Some(active[0]),
                _ => None,
            };
            if let Some(i) = target {
                if rs_spec(&rss[i]) != self.spec.replicas {
                    self.scale_if_needed(rss, i, self.spec.replicas)?;
                }
                return Ok(());
            }
        }
        if let Some(n) = new_rs {
            let rs = &rss[n];
            let saturated = meta::annotation(rs, DESIRED_REPLICAS).and_then(|s| s.parse().ok())
                == Some(self.spec.replicas)
                && rs_spec(rs) == self.spec.replicas
                && rs_status(rs, "availableReplicas") == self.spec.replicas;
            if saturated {
                for i in active {
                    if Some(i) != new_rs {
                        self.scale_if_needed(rss, i, 0)?;
                    }
                }
                return Ok(());
            }
        }
        if self.spec.recreate {
            return Ok(());
        }
        let mut order = active;
        let total: i64 = order.iter().map(|i| rs_spec(&rss[*i])).sum();
        let allowed = if self.spec.replicas > 0 {
            self.spec.replicas + self.spec.max_surge()
        } else {
            0
        };
        let to_add = allowed - total;
        order.sort_by(|a, b| {
            let (ra, rb) = (&rss[*a], &rss[*b]);
            rs_spec(rb).cmp(&rs_spec(ra)).then_with(|| {
                if to_add > 0 {
                    by_creation(rb, ra)
                } else {
                    by_creation(ra, rb)
                }
            })
        });
        let status_replicas = num(self.status_ref(), "replicas");
        let mut added = 0;
        let mut sizes = Vec::with_capacity(order.len());
        for &i in &order {
            let spec_r = rs_spec(&rss[i]);
            if to_add != 0 {
                let max_ann = meta::annotation(&rss[i], MAX_REPLICAS).and_then(|s| s.parse().ok());
                let fraction = replica_set_fraction(&self.spec, spec_r, max_ann, status_replicas);
                let p = proportion(fraction, spec_r, to_add, added);
                sizes.push(spec_r + p);
                added += p;
            } else {
                sizes.push(spec_r);
            }
        }
        for (pos, &i) in order.iter().enumerate() {
            let mut size = sizes[pos];
            if pos == 0 && to_add != 0 {
                size = (size + to_add - added).max(0);
            }
            self.scale(rss, i, size)?;
        }
        Ok(())
    }

    /// `cleanupDeployment`: old ReplicaSets beyond revisionHistoryLimit, oldest first.
    /// `cleanupDeployment` [pkg/controller/deployment/sync.go]: with more alive old
    /// ReplicaSets than `revisionHistoryLimit`, the oldest by revision (`ReplicaSetsByRevision`)
    /// go first, but only those that are empty and observed; a non-empty one among the first
    /// `diff` is skipped, not replaced by a later one.
    fn cleanup(&mut self, rss: &[Value], new_rs: Option<usize>) -> Result<(), ReconcileError> {
        let mut alive: Vec<&Value> = rss
            .iter()
            .enumerate()
            .filter(|(i, rs)| Some(*i) != new_rs && !meta::is_terminating(rs))
            .map(|(_, rs)| rs)
            .collect();
        let diff = alive.len() as i64 - self.spec.revision_history_limit;
        if diff <= 0 {
            return Ok(());
        }
        alive.sort_by(|a, b| {
            match (
                meta::annotation(a, REVISION).and_then(|r| r.parse::<i64>().ok()),
                meta::annotation(b, REVISION).and_then(|r| r.parse::<i64>().ok()),
            ) {
                (Some(x), Some(y)) if x != y => x.cmp(&y),
                _ => by_creation(a, b),
            }
        });
        let victims: Vec<(String, String)> = alive
            .iter()
            .take(diff as usize)
            .filter(|rs| {
                rs_spec(rs) == 0
                    && rs_status(rs, "replicas") == 0
                    && meta::generation(rs) <= rs_status(rs, "observedGeneration")
            })
            .map(|rs| (meta::namespace(rs).to_owned(), meta::name(rs).to_owned()))
            .collect();
        for (ns, name) in victims {
            match self.ctx.send(ApiRequest::delete(
                &self.principal,
                replicasets(),
                &ns,
                &name,
            )) {
                Ok(_) => {}
                Err(e) if e.reason == StatusReason::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn rollout_rolling(&mut self, rss: &mut Vec<Value>) -> Result<ReconcileAction, ReconcileError> {
        let new_rs = self.new_rs(rss, true)?;
        // reconcileNewReplicaSet
        if let Some(n) = new_rs {
            let cur = rs_spec(&rss[n]);
            let scaled = if cur == self.spec.replicas {
                false
            } else if cur > self.spec.replicas {
                self.scale_if_needed(rss, n, self.spec.replicas)?
            } else {
                let total: i64 = rss.iter().map(rs_spec).sum();
                let next = new_rs_new_replicas(&self.spec, total, cur);
                self.scale_if_needed(rss, n, next)?
            };
            if scaled {
                return self.sync_rollout_status(rss, new_rs);
            }
        }
        if self.reconcile_old(rss, new_rs)? {
            return self.sync_rollout_status(rss, new_rs);
        }
        // `DeploymentComplete(d, &d.Status)`: the status already stored, not this sync's.
        if self.complete(self.status_ref()) {
            self.cleanup(rss, new_rs)?;
        }
        self.sync_rollout_status(rss, new_rs)
    }

    /// `reconcileOldReplicaSets`.
    fn reconcile_old(
        &mut self,
        rss: &mut [Value],
        new_rs: Option<usize>,
    ) -> Result<bool, ReconcileError> {
        let mut olds: Vec<usize> = (0..rss.len()).filter(|i| Some(*i) != new_rs).collect();
        let old_pods: i64 = olds.iter().map(|i| rs_spec(&rss[*i])).sum();
        if old_pods == 0 {
            return Ok(false);
        }
        let all_pods: i64 = rss.iter().map(rs_spec).sum();
        let min_available = self.spec.replicas - self.spec.max_unavailable();
        let new_unavailable = new_rs.map_or(0, |n| {
            rs_spec(&rss[n]) - rs_status(&rss[n], "availableReplicas")
        });
        let max_scaled_down = all_pods - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return Ok(false);
        }
        olds.sort_by(|a, b| by_creation(&rss[*a], &rss[*b]));
        // cleanupUnhealthyReplicas
        let mut cleaned = 0;
        for &i in &olds {
            if cleaned >= max_scaled_down {
                break;
            }
            let spec_r = rs_spec(&rss[i]);
            let avail = rs_status(&rss[i], "availableReplicas");
            if spec_r == 0 || spec_r == avail {
                continue;
            }
            let down = (max_scaled_down - cleaned).min(spec_r - avail);
            self.scale(rss, i, spec_r - down)?;
            cleaned += down;
        }
        // scaleDownOldReplicaSetsForRollingUpdate
        let available: i64 = rss.iter().map(|r| rs_status(r, "availableReplicas")).sum();
        let mut scaled = 0;
        if available > min_available {
            let total_down = available - min_available;
            for &i in &olds {
                if scaled >= total_down {
                    break;
                }
                let spec_r = rs_spec(&rss[i]);
                if spec_r == 0 {
                    continue;
                }
                let down = spec_r.min(total_down - scaled);
                self.scale(rss, i, spec_r - down)?;
                scaled += down;
            }
        }
        Ok(cleaned + scaled > 0)
    }

    fn rollout_recreate(
        &mut self,
        rss: &mut Vec<Value>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let mut new_rs = self.new_rs(rss, false)?;
        let mut scaled_down = false;
        for i in 0..rss.len() {
            if Some(i) != new_rs && rs_spec(&rss[i]) > 0 {
                scaled_down |= self.scale_if_needed(rss, i, 0)?;
            }
        }
        if scaled_down {
            return self.sync_rollout_status(rss, new_rs);
        }
        if self.old_pods_running(rss, new_rs) {
            return self.sync_rollout_status(rss, new_rs);
        }
        if new_rs.is_none() {
            new_rs = self.new_rs(rss, true)?;
        }
        // `DeploymentComplete(d, &d.Status)`: the status already stored, not this sync's.
        if self.complete(self.status_ref()) {
            self.cleanup(rss, new_rs)?;
        }
        if let Some(n) = new_rs {
            self.scale_if_needed(rss, n, self.spec.replicas)?;
        }
        self.sync_rollout_status(rss, new_rs)
    }

    /// `oldPodsRunning` [pkg/controller/deployment/recreate.go]: an old ReplicaSet still counts
    /// replicas, or one of its pods has not reached a terminal phase (a Terminating pod still
    /// runs; an Unknown one might).
    fn old_pods_running(&self, rss: &[Value], new_rs: Option<usize>) -> bool {
        if (0..rss.len()).any(|i| Some(i) != new_rs && rs_status(&rss[i], "replicas") > 0) {
            return true;
        }
        let new_uid = new_rs.map(|n| meta::uid(&rss[n]));
        rss.iter()
            .map(meta::uid)
            .filter(|uid| Some(*uid) != new_uid)
            .any(|uid| {
                self.ctx.cache.owned_by(uid).any(|p| {
                    p.get("kind").and_then(Value::as_str) == Some("Pod")
                        && !matches!(str_at(p, "/status/phase"), "Failed" | "Succeeded")
                })
            })
    }

    /// `checkPausedConditions`.
    fn check_paused(&mut self) -> Result<(), ReconcileError> {
        if !has_deadline(&self.spec) {
            return Ok(());
        }
        let mut status = self.status();
        let reason = conditions::find_condition(&status, "Progressing")
            .map(|c| str_at(c, "/reason").to_owned())
            .unwrap_or_default();
        if reason == "ProgressDeadlineExceeded" {
            return Ok(());
        }
        let paused_exists = reason == "DeploymentPaused";
        let (r, m) = if self.spec.paused && !paused_exists {
            ("DeploymentPaused", "Deployment is paused")
        } else if !self.spec.paused && paused_exists {
            ("DeploymentResumed", "Deployment is resumed")
        } else {
            return Ok(());
        };
        conditions::set_deployment_condition(
            &mut status,
            Cond {
                type_: "Progressing",
                status: "Unknown",
                reason: r,
                message: m,
            },
            self.ctx.now,
        );
        self.update_status(status)
    }
}

fn add_label(template: &mut Value, hash: &str) {
    if !template.is_object() {
        *template = json!({});
    }
    let meta = template
        .as_object_mut()
        .map(|o| o.entry("metadata").or_insert_with(|| json!({})));
    if let Some(meta) = meta.and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert(POD_TEMPLATE_HASH.into(), json!(hash));
        }
    }
}

fn num(v: &Value, field: &str) -> i64 {
    v.get(field).and_then(Value::as_i64).unwrap_or(0)
}

/// Go's `omitempty`: zero counts are not serialised.
fn strip_zero_counts(status: &mut Value) {
    if let Some(m) = status.as_object_mut() {
        m.retain(|k, v| {
            !(matches!(
                k.as_str(),
                "replicas"
                    | "updatedReplicas"
                    | "readyReplicas"
                    | "availableReplicas"
                    | "unavailableReplicas"
            ) && v.as_i64() == Some(0))
        });
    }
}

fn last_update_ms(c: &Value) -> Option<i64> {
    crate::time::parse_rfc3339_unix_ms(str_at(c, "/lastUpdateTime"))
}

/// `DeploymentProgressing`.
fn progressing(old: &Value, new: &Value) -> bool {
    let old_old = num(old, "replicas") - num(old, "updatedReplicas");
    let new_old = num(new, "replicas") - num(new, "updatedReplicas");
    num(new, "updatedReplicas") > num(old, "updatedReplicas")
        || new_old < old_old
        || num(new, "readyReplicas") > num(old, "readyReplicas")
        || num(new, "availableReplicas") > num(old, "availableReplicas")
}

/// `getReplicaFailures`: the new ReplicaSet's ReplicaFailure, else any ReplicaSet's.
fn replica_failure(rss: &[Value], new_rs: Option<usize>) -> Option<Value> {
    let find = |rs: &Value| {
        rs.get("status")
            .and_then(|s| conditions::find_condition(s, "ReplicaFailure"))
            .cloned()
    };
    new_rs
        .and_then(|n| find(&rss[n]))
        .or_else(|| rss.iter().find_map(find))
}

/// kube's `deletePod` handler: when a pod goes, a Recreate Deployment left with no pods at all
/// is synced (its new ReplicaSet may scale up now).
fn recreate_without_pods(ev: &WatchEvent, pod: &Value, cache: &Informer) -> Option<ObjectKey> {
    if ev.event_type != WatchEventType::Deleted {
        return None;
    }
    let rs_key = owner_key(pod, &ev.key, "ReplicaSet", replicasets())?;
    let rs = cache.get(&rs_key)?;
    let d_key = owner_key(rs, &rs_key, "Deployment", deployments())?;
    let d = cache.get(&d_key)?;
    if str_at(d, "/spec/strategy/type") != "Recreate" {
        return None;
    }
    let rs_gr = replicasets();
    let d_uid = meta::uid(d);
    let pods_left = cache
        .list(&rs_gr)
        .filter(|r| meta::controller_of(r).is_some_and(|(_, _, u)| u == d_uid))
        .any(|r| {
            cache
                .owned_by(meta::uid(r))
                .any(|p| p.get("kind").and_then(Value::as_str) == Some("Pod"))
        });
    (!pods_left).then_some(d_key)
}

impl Reconciler for DeploymentController {
    fn name(&self) -> String {
        "deployment-controller".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::DEPLOYMENT_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        // Pods too, for Recreate (kube's deployment controller has a pod informer with a delete
        // handler only).
        *gr == deployments() || *gr == replicasets() || *gr == pods()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == deployments() {
            return vec![ev.key.clone()];
        }
        if ev.key.gr == pods() {
            return recreate_without_pods(ev, new, cache).into_iter().collect();
        }
        // ReplicaSet resyncs (same resourceVersion) are ignored.
        if old.is_some_and(|o| {
            str_at(o, "/metadata/resourceVersion") == str_at(new, "/metadata/resourceVersion")
        }) {
            return Vec::new();
        }
        let mut keys: Vec<ObjectKey> = owner_key(new, &ev.key, "Deployment", deployments())
            .into_iter()
            .collect();
        if let Some(o) = old.and_then(|o| owner_key(o, &ev.key, "Deployment", deployments())) {
            if !keys.contains(&o) {
                keys.push(o);
            }
        }
        keys
    }

    fn max_retries(&self) -> Option<u32> {
        Some(15)
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(d) = ctx.cache.get(key).map(|d| d.as_ref().clone()) else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let spec = DeploymentSpec::from_object(&d);
        let principal = self.principal();
        let uid = meta::uid(&d).to_owned();
        let mut rss: Vec<Value> = ctx
            .cache
            .owned_by(&uid)
            .filter(|o| o.get("kind").and_then(Value::as_str) == Some("ReplicaSet"))
            .map(|o| o.as_ref().clone())
            .collect();
        rss.sort_by(by_creation);
        let mut sync = Sync {
            ctx,
            d,
            spec,
            principal,
        };
        let selector_empty = sync
            .d
            .at("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if selector_empty {
            let generation = meta::generation(&sync.d);
            let mut status = sync.status();
            if num(&status, "observedGeneration") < generation {
                status["observedGeneration"] = json!(generation);
                sync.update_status(status)?;
            }
            return Ok(ReconcileAction::AwaitChange);
        }
        if meta::is_terminating(&sync.d) {
            let new_rs = sync.new_rs(&mut rss, false)?;
            return sync.sync_status(&rss, new_rs);
        }
        sync.check_paused()?;
        if sync.spec.paused {
            let new_rs = sync.new_rs(&mut rss, false)?;
            sync.proportional_scale(&mut rss, new_rs)?;
            sync.cleanup(&rss, new_rs)?;
            return sync.sync_status(&rss, new_rs);
        }
        // isScalingEvent
        let new_rs = sync.new_rs(&mut rss, false)?;
        let scaling = rss.iter().any(|rs| {
            rs_spec(rs) > 0
                && meta::annotation(rs, DESIRED_REPLICAS)
                    .and_then(|s| s.parse::<i64>().ok())
                    .is_some_and(|d| d != sync.spec.replicas)
        });
        if scaling {
            sync.proportional_scale(&mut rss, new_rs)?;
            return sync.sync_status(&rss, new_rs);
        }
        if sync.spec.recreate {
            sync.rollout_recreate(&mut rss)
        } else {
            sync.rollout_rolling(&mut rss)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(replicas: i64, surge: Value, unavailable: Value) -> DeploymentSpec {
        DeploymentSpec::from_object(&json!({"spec": {
            "replicas": replicas,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}
        }}))
    }

    #[test]
    fn max_surge_rounds_up_and_max_unavailable_rounds_down() {
        let s = spec(10, json!("25%"), json!("25%"));
        assert_eq!((s.max_surge(), s.max_unavailable()), (3, 2));
        let s = spec(1, json!("25%"), json!("25%"));
        assert_eq!((s.max_surge(), s.max_unavailable()), (1, 0));
    }

    #[test]
    fn both_fenceposts_zero_makes_max_unavailable_one() {
        assert_eq!(
            resolve_fenceposts(Some(&json!(0)), Some(&json!("0%")), 5),
            (0, 1)
        );
    }

    #[test]
    fn defaults_are_applied_when_the_spec_omits_them() {
        let s = DeploymentSpec::from_object(&json!({"spec": {}}));
        assert_eq!(s.replicas, 1);
        assert_eq!(s.progress_deadline_seconds, Some(600));
        assert_eq!(s.revision_history_limit, 10);
        assert_eq!((s.max_surge(), s.max_unavailable()), (1, 0));
    }

    #[test]
    fn recreate_has_no_surge_and_no_unavailability_budget() {
        let s = DeploymentSpec::from_object(
            &json!({"spec": {"replicas": 4, "strategy": {"type": "Recreate"}}}),
        );
        assert_eq!((s.max_surge(), s.max_unavailable()), (0, 0));
        assert_eq!(new_rs_new_replicas(&s, 4, 0), 4);
    }

    #[test]
    fn the_new_replica_set_grows_by_the_surge_budget() {
        let s = spec(10, json!("25%"), json!("25%"));
        assert_eq!(new_rs_new_replicas(&s, 10, 0), 3);
        assert_eq!(new_rs_new_replicas(&s, 13, 3), 3, "at the surge limit");
        assert_eq!(new_rs_new_replicas(&s, 11, 8), 10, "never past spec");
    }

    #[test]
    fn proportional_scaling_splits_by_the_max_replicas_annotation() {
        // 10 -> 20 replicas with old=8, new=5 annotated max-replicas 13.
        let s = spec(20, json!("25%"), json!("25%"));
        let f_old = replica_set_fraction(&s, 8, Some(13), 13);
        let f_new = replica_set_fraction(&s, 5, Some(13), 13);
        // 8 * 25 / 13 = 15.4 -> 15; 5 * 25 / 13 = 9.6 -> 10.
        assert_eq!((f_old, f_new), (7, 5));
        assert_eq!(proportion(f_old, 8, 12, 0), 7);
        assert_eq!(proportion(f_new, 5, 12, 7), 5);
    }

    #[test]
    fn scaling_to_zero_takes_each_replica_set_down_fully() {
        let s = spec(0, json!("25%"), json!("25%"));
        assert_eq!(replica_set_fraction(&s, 7, Some(13), 13), -7);
    }

    #[test]
    fn unavailable_counts_replicas_not_yet_created() {
        let all = [RsCounts {
            name: "a".into(),
            spec_replicas: 3,
            replicas: 1,
            ready: 1,
            available: 1,
        }];
        assert_eq!(status_counts(&all, Some(&all[0])), [1, 1, 1, 1, 2]);
    }

    #[test]
    fn pod_template_hash_is_stable_and_changes_with_the_template() {
        let t1 = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}});
        let t1b = json!({"spec": {"containers": [{"image": "nginx:1.25", "name": "app"}]}, "metadata": {"labels": {"app": "web"}}});
        let t2 = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}});
        assert_eq!(pod_template_hash(&t1, None), pod_template_hash(&t1b, None));
        assert_ne!(pod_template_hash(&t1, None), pod_template_hash(&t2, None));
        assert_ne!(
            pod_template_hash(&t1, None),
            pod_template_hash(&t1, Some(1))
        );
    }

    /// The definition: both templates copied, the hash label (and a `labels` left empty)
    /// removed, then compared.
    fn equal_ignore_hash_by_copying(a: &Value, b: &Value) -> bool {
        let strip = |t: &Value| {
            let mut t = t.clone();
            if let Some(l) = t
                .pointer_mut("/metadata/labels")
                .and_then(Value::as_object_mut)
            {
                l.remove(POD_TEMPLATE_HASH);
                if l.is_empty() {
                    if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
                        m.remove("labels");
                    }
                }
            }
            t
        };
        strip(a) == strip(b)
    }

    #[test]
    fn equal_ignore_hash_compares_as_if_the_hash_label_were_removed() {
        let spec = json!({"containers": [{"name": "app", "image": "nginx:1.25"}]});
        let templates = [
            json!(null),
            json!("x"),
            json!({}),
            json!({"spec": spec}),
            json!({"spec": {"containers": []}}),
            json!({"metadata": {}, "spec": spec}),
            json!({"metadata": null, "spec": spec}),
            json!({"metadata": {"labels": {}}, "spec": spec}),
            json!({"metadata": {"labels": "odd"}, "spec": spec}),
            json!({"metadata": {"labels": {"pod-template-hash": "h1"}}, "spec": spec}),
            json!({"metadata": {"labels": {"pod-template-hash": "h2"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "web"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "web", "pod-template-hash": "h1"}}, "spec": spec}),
            json!({"metadata": {"labels": {"pod-template-hash": "h1", "app": "web"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "db", "pod-template-hash": "h1"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "web", "tier": "x"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "web"}, "annotations": {"a": "1"}}, "spec": spec}),
            json!({"metadata": {"annotations": {"a": "1"}}, "spec": spec}),
            json!({"metadata": {"labels": {"pod-template-hash": "h1"}, "annotations": {"a": "1"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "web"}}}),
        ];
        for a in &templates {
            for b in &templates {
                assert_eq!(
                    equal_ignore_hash(a, b),
                    equal_ignore_hash_by_copying(a, b),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn equal_ignore_hash_ignores_only_the_hash_label() {
        let a = json!({"metadata": {"labels": {"app": "web", "pod-template-hash": "x"}}});
        let b = json!({"metadata": {"labels": {"app": "web"}}});
        assert!(equal_ignore_hash(&a, &b));
        assert!(!equal_ignore_hash(
            &a,
            &json!({"metadata": {"labels": {"app": "db"}}})
        ));
    }
}
