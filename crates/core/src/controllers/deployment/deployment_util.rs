//! The Deployment controller's pure helpers [pkg/controller/deployment/util/deployment_util.go]:
//! maxSurge/maxUnavailable arithmetic, proportional scaling fractions, status counts, the
//! pod-template-hash and template equality, ReplicaSet readers, and the revision and replicas
//! annotations (`SetNewReplicaSetAnnotations`, `SetReplicasAnnotations`).

use crate::api::meta::Fields;
use crate::json::path;
use crate::json::{json, Value};

use super::{
    Sync, ANNOTATIONS_NOT_COPIED, DESIRED_REPLICAS, MAX_INT32, MAX_REPLICAS,
    MAX_REVISION_HISTORY_CHARS, POD_TEMPLATE_HASH, REVISION, REVISION_HISTORY,
};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::runtime::Explanation;

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
        let spec = d.field("spec").unwrap_or(&Value::Null);
        let deadline = spec
            .field("progressDeadlineSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(600);
        DeploymentSpec {
            replicas: spec.field("replicas").and_then(Value::as_i64).unwrap_or(1),
            recreate: str_at(spec, path!("/strategy/type")) == "Recreate",
            max_surge: spec.at(path!("/strategy/rollingUpdate/maxSurge")).cloned(),
            max_unavailable: spec
                .at(path!("/strategy/rollingUpdate/maxUnavailable"))
                .cloned(),
            revision_history_limit: spec
                .field("revisionHistoryLimit")
                .and_then(Value::as_i64)
                .unwrap_or(10),
            progress_deadline_seconds: (deadline != MAX_INT32).then_some(deadline),
            min_ready_seconds: spec
                .field("minReadySeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            paused: spec
                .field("paused")
                .and_then(Value::as_bool)
                .unwrap_or(false),
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

impl DeploymentSpec {
    /// How [`Self::max_unavailable`] came about, for explanations: `25% of 5 rounded down`.
    pub fn max_unavailable_rule(&self) -> String {
        if self.recreate {
            return "Recreate strategy".into();
        }
        if self.replicas == 0 {
            return "0 replicas".into();
        }
        let (surge, unavailable) = resolve_fenceposts(
            self.max_surge.as_ref(),
            self.max_unavailable.as_ref(),
            self.replicas,
        );
        if surge == 0
            && unavailable == 1
            && scaled_value(self.max_unavailable.as_ref(), self.replicas, false, 25) == 0
        {
            return "maxSurge and maxUnavailable both 0, so 1".into();
        }
        let how = match self.max_unavailable.as_ref() {
            Some(Value::Number(_)) => "as given".to_owned(),
            Some(Value::String(p))
                if p.strip_suffix('%')
                    .and_then(|n| n.parse::<i64>().ok())
                    .is_some() =>
            {
                format!("{p} of {} rounded down", self.replicas)
            }
            _ => format!("25% of {} rounded down, the default", self.replicas),
        };
        if unavailable > self.replicas {
            format!("{how}, at most replicas {}", self.replicas)
        } else {
            how
        }
    }
}

/// The Available condition's rule [`calculateStatus`]: available when `availableReplicas >=
/// replicas - maxUnavailable`. The condition is set from the answer, so it and the explanation
/// cannot disagree.
pub(super) fn available_rule(spec: &DeploymentSpec, available: i64) -> (bool, Explanation) {
    let max_unavailable = spec.max_unavailable();
    let min_available = spec.replicas - max_unavailable;
    let ok = available >= min_available;
    let rule = format!(
        "availableReplicas {available} {} minAvailable {min_available} (replicas {} - maxUnavailable {max_unavailable}, {})",
        if ok { ">=" } else { "<" },
        spec.replicas,
        spec.max_unavailable_rule()
    );
    let value = if ok { "True" } else { "False" };
    (ok, Explanation::new("Available", value, rule))
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
/// encoded with `SafeEncodeString`. kube hashes the typed template (`DeepHashObject`), where a
/// member written as `null` (the `creationTimestamp: null` a typed template carries, as kubectl
/// rollout undo sends it) is the same as an absent one: the canonical JSON leaves nulls out.
pub fn pod_template_hash(template: &Value, collision_count: Option<i64>) -> String {
    let mut bytes = canonical_json(template).into_bytes();
    if let Some(c) = collision_count {
        bytes.extend_from_slice(&(c as u32).to_le_bytes());
    }
    crate::api::names::safe_encode(&crate::api::names::fnv32a(&bytes).to_string())
}

fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&crate::json::Key> = m
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, _)| k)
                .collect();
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
/// of every ReplicaSet on every sync, so it must not copy templates. kube compares typed
/// templates with `apiequality.Semantic.DeepEqual`, where a `null` member is an absent one
/// ([`meta::semantic_eq`]); so the template `kubectl rollout undo` writes back, with
/// `creationTimestamp: null`, finds its old ReplicaSet.
pub fn equal_ignore_hash(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            meta::non_null_len(x) == meta::non_null_len(y)
                && x.iter()
                    .filter(|(_, v)| !v.is_null())
                    .all(|(k, v)| match y.get(k) {
                        Some(w) if k == "metadata" => metadata_equal_ignore_hash(v, w),
                        Some(w) => meta::semantic_eq(v, w),
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
    Labels(&'a crate::json::Map),
    /// Not an object: kept as it is.
    Other(&'a Value),
}

fn labels_ignoring_hash(meta: &crate::json::Map) -> LabelsIgnoringHash<'_> {
    match meta.field("labels") {
        None | Some(Value::Null) => LabelsIgnoringHash::Absent,
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
    let others = |m: &crate::json::Map| {
        m.iter()
            .filter(|(k, v)| *k != "labels" && !v.is_null())
            .count()
    };
    let others_equal = others(x) == others(y)
        && x.iter()
            .filter(|(k, v)| *k != "labels" && !v.is_null())
            .all(|(k, v)| y.get(k).is_some_and(|w| meta::semantic_eq(v, w)));
    if !others_equal {
        return false;
    }
    match (labels_ignoring_hash(x), labels_ignoring_hash(y)) {
        (LabelsIgnoringHash::Labels(l), LabelsIgnoringHash::Labels(m)) => {
            let count = |l: &crate::json::Map| l.keys().filter(|k| *k != POD_TEMPLATE_HASH).count();
            count(l) == count(m)
                && l.iter()
                    .filter(|(k, _)| *k != POD_TEMPLATE_HASH)
                    .all(|(k, v)| m.get(k) == Some(v))
        }
        (p, q) => p == q,
    }
}

pub(super) fn rs_spec(rs: &Value) -> i64 {
    meta::i64_at(rs, path!("/spec/replicas")).unwrap_or(1)
}
pub(super) fn rs_status(rs: &Value, field: &str) -> i64 {
    meta::i64_at(rs, &format!("/status/{field}")).unwrap_or(0)
}
pub(super) fn revision_of(rs: &Value) -> i64 {
    meta::annotation(rs, REVISION)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}
pub(super) fn counts(rs: &Value) -> RsCounts {
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
pub(super) fn annotations_only(obj: &Value) -> Value {
    match obj.field("metadata") {
        Some(Value::Object(m)) => {
            let mut meta = crate::json::Map::new();
            if let Some(a) = m.field("annotations") {
                meta.insert("annotations", a.clone());
            }
            json!({ "metadata": meta })
        }
        _ => json!({}),
    }
}
pub(super) fn by_creation(a: &Value, b: &Value) -> std::cmp::Ordering {
    str_at(a, path!("/metadata/creationTimestamp"))
        .cmp(str_at(b, path!("/metadata/creationTimestamp")))
        .then_with(|| meta::name(a).cmp(meta::name(b)))
}

impl Sync<'_, '_> {
    pub(super) fn set_annotation(obj: &mut Value, k: &str, v: String) -> bool {
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
    pub(super) fn annotation_differs(obj: &Value, k: &str, v: &str) -> bool {
        obj.field("metadata").is_some_and(Value::is_object) && meta::annotation(obj, k) != Some(v)
    }

    pub(super) fn replicas_annotations(&self, rs: &mut Value) -> bool {
        let desired = self.spec.replicas;
        let max = desired + self.spec.max_surge();
        let a = Self::set_annotation(rs, DESIRED_REPLICAS, desired.to_string());
        let b = Self::set_annotation(rs, MAX_REPLICAS, max.to_string());
        a || b
    }

    /// `SetNewReplicaSetAnnotations`.
    pub(super) fn new_rs_annotations(
        &self,
        rs: &mut Value,
        new_revision: i64,
        exists: bool,
    ) -> bool {
        let mut changed = false;
        if let Some(ann) = self
            .d
            .at(path!("/metadata/annotations"))
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
}

pub(super) fn add_label(template: &mut Value, hash: &str) {
    if !template.is_object() {
        *template = json!({});
    }
    let meta = template
        .as_object_mut()
        .map(|o| o.entry("metadata").or_insert_with(|| json!({})));
    if let Some(meta) = meta.and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert(POD_TEMPLATE_HASH, json!(hash));
        }
    }
}

pub(super) fn num(v: &Value, field: &str) -> i64 {
    v.get(field).and_then(Value::as_i64).unwrap_or(0)
}

/// Go's `omitempty`: zero counts are not serialised.
pub(super) fn strip_zero_counts(status: &mut Value) {
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

pub(super) fn has_deadline(spec: &DeploymentSpec) -> bool {
    spec.progress_deadline_seconds.is_some()
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
    fn the_available_rule_explains_its_own_answer() {
        let s = spec(5, json!(1), json!("25%"));
        let (ok, why) = available_rule(&s, 3);
        assert!(!ok);
        assert_eq!(
            why.to_string(),
            "Available=False: availableReplicas 3 < minAvailable 4 (replicas 5 - maxUnavailable 1, 25% of 5 rounded down)"
        );
        let (ok, why) = available_rule(&s, 4);
        assert!(ok);
        assert_eq!(why.value, "True");
        assert!(
            why.rule
                .starts_with("availableReplicas 4 >= minAvailable 4"),
            "{}",
            why.rule
        );
        let zero = spec(3, json!(0), json!(0));
        assert_eq!(zero.max_unavailable(), 1);
        let (_, why) = available_rule(&zero, 2);
        assert!(
            why.rule.ends_with(
                "(replicas 3 - maxUnavailable 1, maxSurge and maxUnavailable both 0, so 1)"
            ),
            "{}",
            why.rule
        );
        let default = DeploymentSpec::from_object(&json!({"spec": {"replicas": 8}}));
        let (_, why) = available_rule(&default, 6);
        assert!(
            why.rule
                .contains("maxUnavailable 2, 25% of 8 rounded down, the default"),
            "{}",
            why.rule
        );
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
    fn a_null_member_is_an_absent_one_to_the_hash_and_to_equal_ignore_hash() {
        // The template kubectl rollout undo writes back (a typed PodTemplateSpec marshalled:
        // `creationTimestamp: null`) is the ReplicaSet's own.
        let rs = json!({"metadata": {"labels": {"app": "web", POD_TEMPLATE_HASH: "abc"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}});
        let undone = json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "resources": {}}]}});
        assert!(
            !equal_ignore_hash(&rs, &undone),
            "{{}} is not absent: a struct pointer"
        );
        let undone = json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "command": null}]}});
        assert!(equal_ignore_hash(&rs, &undone));
        let plain = json!({"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}});
        assert_eq!(
            pod_template_hash(&plain, None),
            pod_template_hash(&undone, None)
        );
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
    /// removed, then compared as typed objects are (`meta::semantic_eq`).
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
        meta::semantic_eq(&strip(a), &strip(b))
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
            json!({"metadata": {"labels": null}, "spec": spec}),
            json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}}, "spec": spec}),
            json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "args": null}]}}),
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
