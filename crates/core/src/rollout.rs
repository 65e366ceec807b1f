//! `kubectl rollout status`: the status line and verdict for Deployments, DaemonSets and StatefulSets.
//!
//! [`rollout_status`] answers what kubectl's status viewers
//! (`k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go`) answer for one object: the line
//! kubectl prints (ending in `\n`), whether the rollout is done, or kubectl's error.
//!
//! kubectl reads objects from the API server, which has applied the apps/v1 defaults; a pasted
//! manifest may lack them. So before reading, the defaults these viewers depend on are filled in
//! where absent: `spec.replicas` 1; `spec.updateStrategy.type` RollingUpdate for DaemonSets; and for
//! StatefulSets without an update strategy type, RollingUpdate with `rollingUpdate.partition: 0`
//! (an explicit `type: RollingUpdate` without `rollingUpdate` stays as written, as the API server
//! leaves it).
//!
//! kubectl converts the object to its typed form first; a field of the wrong JSON type fails that
//! conversion. Here the fields the viewers read are checked: integers (or integral numbers) where
//! Go has integers, strings where it has strings.

use crate::api::meta::Fields;
use crate::json::Value;

/// kubectl's answer: the line it prints (with its trailing newline) and whether it is done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutStatus {
    pub message: String,
    pub done: bool,
}

/// kubectl's error for this object, without kubectl's `error: ` prefix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RolloutError {
    pub message: String,
}

impl RolloutError {
    fn new(message: impl Into<String>) -> Self {
        RolloutError {
            message: message.into(),
        }
    }
}

/// The `kubectl rollout status --revision` annotation on Deployments.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";

/// `kubectl rollout status` for one object. `revision` is `--revision` (`None` or 0: not set;
/// kubectl rejects negative values).
pub fn rollout_status(obj: &Value, revision: Option<i64>) -> Result<RolloutStatus, RolloutError> {
    let revision = revision.unwrap_or(0);
    if revision < 0 {
        return Err(RolloutError::new(format!(
            "revision must be a positive integer: {revision}"
        )));
    }
    let api_version = obj
        .field("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = obj.field("kind").and_then(Value::as_str).unwrap_or("");
    let group = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [group, _version] => *group,
        _ => "",
    };
    let reader = Reader { obj };
    match (group, kind) {
        ("apps" | "extensions", "Deployment") => deployment(&reader, revision),
        ("apps" | "extensions", "DaemonSet") => daemon_set(&reader),
        ("apps", "StatefulSet") => stateful_set(&reader),
        _ => {
            let group_kind = if group.is_empty() {
                kind.to_string()
            } else {
                format!("{kind}.{group}")
            };
            Err(RolloutError::new(format!(
                "no status viewer has been implemented for {group_kind}"
            )))
        }
    }
}

/// Typed reads with the conversion errors kubectl would hit, prefixed as kubectl prefixes them.
struct Reader<'a> {
    obj: &'a Value,
}

impl Reader<'_> {
    fn get(&self, path: &[&str]) -> Option<&Value> {
        path.iter()
            .try_fold(self.obj, |v, key| v.as_object()?.get(key))
            .filter(|v| !v.is_null())
    }

    fn conversion_error(
        &self,
        go_type: &str,
        path: &[&str],
        expected: &str,
        found: &Value,
    ) -> RolloutError {
        RolloutError::new(format!(
            "failed to convert *unstructured.Unstructured to *v1.{go_type}: .{}: expected {expected}, found {}",
            path.join("."),
            crate::kstatus::json_type_name(found)
        ))
    }

    /// An integer field: absent is `None`; a JSON integer or an integral number is the value.
    fn int(&self, go_type: &str, path: &[&str]) -> Result<Option<i64>, RolloutError> {
        let Some(v) = self.get(path) else {
            return Ok(None);
        };
        if let Some(n) = v.as_i64() {
            return Ok(Some(n));
        }
        match v.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
            _ => Err(self.conversion_error(go_type, path, "an integer", v)),
        }
    }

    /// An `int32` field (replica counts): Go converts, then computes in 32 bits, wrapping.
    fn int32(&self, go_type: &str, path: &[&str]) -> Result<Option<i32>, RolloutError> {
        Ok(self.int(go_type, path)?.map(|v| v as i32))
    }

    /// A string field: absent is `None`.
    fn string(&self, go_type: &str, path: &[&str]) -> Result<Option<&str>, RolloutError> {
        match self.get(path) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.conversion_error(go_type, path, "a string", v)),
        }
    }

    fn name(&self, go_type: &str) -> Result<&str, RolloutError> {
        Ok(self.string(go_type, &["metadata", "name"])?.unwrap_or(""))
    }
}

/// Go's `%q` for the names kubectl quotes.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn waiting(message: String) -> Result<RolloutStatus, RolloutError> {
    Ok(RolloutStatus {
        message,
        done: false,
    })
}

fn finished(message: String) -> Result<RolloutStatus, RolloutError> {
    Ok(RolloutStatus {
        message,
        done: true,
    })
}

fn deployment(r: &Reader, revision: i64) -> Result<RolloutStatus, RolloutError> {
    const T: &str = "Deployment";
    let name = quote(r.name(T)?);
    if revision > 0 {
        let running = match r.string(T, &["metadata", "annotations", REVISION_ANNOTATION])? {
            None => 0,
            Some(text) => text.parse::<i64>().map_err(|e| {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                        "value out of range"
                    }
                    _ => "invalid syntax",
                };
                RolloutError::new(format!(
                    "cannot get the revision of deployment {name}: strconv.ParseInt: parsing {}: {why}",
                    quote(text)
                ))
            })?,
        };
        if revision != running {
            return Err(RolloutError::new(format!(
                "desired revision ({revision}) is different from the running revision ({running})"
            )));
        }
    }
    let generation = r.int(T, &["metadata", "generation"])?.unwrap_or(0);
    let observed = r.int(T, &["status", "observedGeneration"])?.unwrap_or(0);
    if generation > observed {
        return waiting("Waiting for deployment spec update to be observed...\n".into());
    }
    let progressing_reason = match r.get(&["status", "conditions"]) {
        None => None,
        Some(Value::Array(conds)) => conds
            .iter()
            .find(|c| c.field("type").and_then(Value::as_str) == Some("Progressing"))
            .map(|c| c.field("reason").and_then(Value::as_str).unwrap_or("")),
        Some(other) => {
            return Err(r.conversion_error(T, &["status", "conditions"], "an array", other))
        }
    };
    if progressing_reason == Some("ProgressDeadlineExceeded") {
        return Err(RolloutError::new(format!(
            "deployment {name} exceeded its progress deadline"
        )));
    }
    let spec = r.int32(T, &["spec", "replicas"])?.unwrap_or(1);
    let replicas = r.int32(T, &["status", "replicas"])?.unwrap_or(0);
    let updated = r.int32(T, &["status", "updatedReplicas"])?.unwrap_or(0);
    let available = r.int32(T, &["status", "availableReplicas"])?.unwrap_or(0);
    if updated < spec {
        return waiting(format!(
            "Waiting for deployment {name} rollout to finish: {updated} out of {spec} new replicas have been updated...\n"
        ));
    }
    if replicas > updated {
        return waiting(format!(
            "Waiting for deployment {name} rollout to finish: {} old replicas are pending termination...\n",
            replicas.wrapping_sub(updated)
        ));
    }
    if available < updated {
        return waiting(format!(
            "Waiting for deployment {name} rollout to finish: {available} of {updated} updated replicas are available...\n"
        ));
    }
    finished(format!("deployment {name} successfully rolled out\n"))
}

fn daemon_set(r: &Reader) -> Result<RolloutStatus, RolloutError> {
    const T: &str = "DaemonSet";
    let name = quote(r.name(T)?);
    let strategy = r
        .string(T, &["spec", "updateStrategy", "type"])?
        .unwrap_or("RollingUpdate");
    if strategy != "RollingUpdate" {
        return Err(RolloutError::new(
            "rollout status is only available for RollingUpdate strategy type",
        ));
    }
    let generation = r.int(T, &["metadata", "generation"])?.unwrap_or(0);
    let observed = r.int(T, &["status", "observedGeneration"])?.unwrap_or(0);
    if generation > observed {
        return waiting("Waiting for daemon set spec update to be observed...\n".into());
    }
    let desired = r
        .int32(T, &["status", "desiredNumberScheduled"])?
        .unwrap_or(0);
    let updated = r
        .int32(T, &["status", "updatedNumberScheduled"])?
        .unwrap_or(0);
    let available = r.int32(T, &["status", "numberAvailable"])?.unwrap_or(0);
    if updated < desired {
        return waiting(format!(
            "Waiting for daemon set {name} rollout to finish: {updated} out of {desired} new pods have been updated...\n"
        ));
    }
    if available < desired {
        return waiting(format!(
            "Waiting for daemon set {name} rollout to finish: {available} of {desired} updated pods are available...\n"
        ));
    }
    finished(format!("daemon set {name} successfully rolled out\n"))
}

fn stateful_set(r: &Reader) -> Result<RolloutStatus, RolloutError> {
    const T: &str = "StatefulSet";
    r.name(T)?;
    let explicit_type = r.string(T, &["spec", "updateStrategy", "type"])?;
    let strategy = explicit_type.unwrap_or("RollingUpdate");
    if strategy != "RollingUpdate" {
        return Err(RolloutError::new(
            "rollout status is only available for RollingUpdate strategy type",
        ));
    }
    let rolling_update = match r.get(&["spec", "updateStrategy", "rollingUpdate"]) {
        Some(Value::Object(_)) => true,
        Some(other) => {
            return Err(r.conversion_error(
                T,
                &["spec", "updateStrategy", "rollingUpdate"],
                "an object",
                other,
            ))
        }
        // The API server adds an empty rollingUpdate only when it also defaulted the type.
        None => explicit_type.is_none(),
    };
    let generation = r.int(T, &["metadata", "generation"])?.unwrap_or(0);
    let observed = r.int(T, &["status", "observedGeneration"])?.unwrap_or(0);
    if observed == 0 || generation > observed {
        return waiting("Waiting for statefulset spec update to be observed...\n".into());
    }
    let spec = r.int32(T, &["spec", "replicas"])?.unwrap_or(1);
    let ready = r.int32(T, &["status", "readyReplicas"])?.unwrap_or(0);
    let updated = r.int32(T, &["status", "updatedReplicas"])?.unwrap_or(0);
    if ready < spec {
        return waiting(format!(
            "Waiting for {} pods to be ready...\n",
            spec.wrapping_sub(ready)
        ));
    }
    if rolling_update {
        let partition = r
            .int32(T, &["spec", "updateStrategy", "rollingUpdate", "partition"])?
            .unwrap_or(0);
        if updated < spec.wrapping_sub(partition) {
            return waiting(format!(
                "Waiting for partitioned roll out to finish: {updated} out of {} new pods have been updated...\n",
                spec.wrapping_sub(partition)
            ));
        }
        return finished(format!(
            "partitioned roll out complete: {updated} new pods have been updated...\n"
        ));
    }
    let update_revision = r.string(T, &["status", "updateRevision"])?.unwrap_or("");
    let current_revision = r.string(T, &["status", "currentRevision"])?.unwrap_or("");
    if update_revision != current_revision {
        return waiting(format!(
            "waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}...\n"
        ));
    }
    let current = r.int32(T, &["status", "currentReplicas"])?.unwrap_or(0);
    finished(format!(
        "statefulset rolling update complete {current} pods at revision {current_revision}...\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn status(v: &Value) -> (String, bool) {
        let s = rollout_status(v, None).unwrap();
        (s.message, s.done)
    }

    fn error(v: &Value, revision: Option<i64>) -> String {
        rollout_status(v, revision).unwrap_err().message
    }

    fn deploy(metadata: Value, spec: Value, st: Value) -> Value {
        let mut m = json!({"name": "web", "generation": 2});
        for (k, v) in metadata.as_object().unwrap() {
            m[k] = v.clone();
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": m, "spec": spec, "status": st})
    }

    #[test]
    fn deployment_waits_for_the_spec_update_to_be_observed() {
        let d = deploy(
            json!({}),
            json!({"replicas": 3}),
            json!({"observedGeneration": 1}),
        );
        assert_eq!(
            status(&d),
            (
                "Waiting for deployment spec update to be observed...\n".into(),
                false
            )
        );
    }

    #[test]
    fn deployment_progress_deadline_is_an_error() {
        let d = deploy(
            json!({}),
            json!({"replicas": 3}),
            json!({"observedGeneration": 2, "conditions": [
                {"type": "Available", "status": "False"},
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}),
        );
        assert_eq!(
            error(&d, None),
            "deployment \"web\" exceeded its progress deadline"
        );
    }

    #[test]
    fn deployment_progress_messages_in_kubectl_order() {
        let d = |st: Value| deploy(json!({}), json!({"replicas": 3}), st);
        assert_eq!(
            status(&d(json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 1}))),
            ("Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n".into(), false)
        );
        assert_eq!(
            status(&d(json!({"observedGeneration": 2, "replicas": 5, "updatedReplicas": 3}))),
            ("Waiting for deployment \"web\" rollout to finish: 2 old replicas are pending termination...\n".into(), false)
        );
        assert_eq!(
            status(&d(json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 1}))),
            ("Waiting for deployment \"web\" rollout to finish: 1 of 3 updated replicas are available...\n".into(), false)
        );
        assert_eq!(
            status(&d(
                json!({"observedGeneration": 3, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3})
            )),
            ("deployment \"web\" successfully rolled out\n".into(), true)
        );
    }

    #[test]
    fn deployment_replicas_default_to_one() {
        let d = deploy(json!({}), json!({}), json!({"observedGeneration": 2}));
        assert_eq!(
            status(&d).0,
            "Waiting for deployment \"web\" rollout to finish: 0 out of 1 new replicas have been updated...\n"
        );
        let d = deploy(
            json!({}),
            json!({"replicas": 2.0}),
            json!({"observedGeneration": 2}),
        );
        assert_eq!(
            status(&d).0,
            "Waiting for deployment \"web\" rollout to finish: 0 out of 2 new replicas have been updated...\n"
        );
    }

    #[test]
    fn deployment_revision_checks() {
        let done = json!({"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1});
        let d = deploy(
            json!({"annotations": {REVISION_ANNOTATION: "3"}}),
            json!({"replicas": 1}),
            done.clone(),
        );
        assert_eq!(
            error(&d, Some(2)),
            "desired revision (2) is different from the running revision (3)"
        );
        assert!(rollout_status(&d, Some(3)).unwrap().done);
        assert!(rollout_status(&d, Some(0)).unwrap().done);
        let d = deploy(json!({}), json!({"replicas": 1}), done.clone());
        assert_eq!(
            error(&d, Some(1)),
            "desired revision (1) is different from the running revision (0)"
        );
        let d = deploy(
            json!({"annotations": {REVISION_ANNOTATION: "abc"}}),
            json!({"replicas": 1}),
            done,
        );
        assert_eq!(
            error(&d, Some(1)),
            "cannot get the revision of deployment \"web\": strconv.ParseInt: parsing \"abc\": invalid syntax"
        );
        assert_eq!(
            error(&d, Some(-1)),
            "revision must be a positive integer: -1"
        );
    }

    #[test]
    fn wrongly_typed_fields_fail_the_conversion() {
        let d = deploy(
            json!({}),
            json!({"replicas": "3"}),
            json!({"observedGeneration": 2}),
        );
        assert_eq!(
            error(&d, None),
            "failed to convert *unstructured.Unstructured to *v1.Deployment: .spec.replicas: expected an integer, found a string"
        );
    }

    fn ds(spec: Value, st: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
               "metadata": {"name": "agent", "generation": 1}, "spec": spec, "status": st})
    }

    #[test]
    fn daemon_set_messages() {
        let rolling = json!({"updateStrategy": {"type": "RollingUpdate"}});
        assert_eq!(
            error(
                &ds(json!({"updateStrategy": {"type": "OnDelete"}}), json!({})),
                None
            ),
            "rollout status is only available for RollingUpdate strategy type"
        );
        assert_eq!(
            status(&ds(rolling.clone(), json!({}))),
            (
                "Waiting for daemon set spec update to be observed...\n".into(),
                false
            )
        );
        assert_eq!(
            status(&ds(json!({}), json!({"observedGeneration": 1, "desiredNumberScheduled": 3, "updatedNumberScheduled": 1}))),
            ("Waiting for daemon set \"agent\" rollout to finish: 1 out of 3 new pods have been updated...\n".into(), false)
        );
        assert_eq!(
            status(&ds(rolling.clone(), json!({"observedGeneration": 1, "desiredNumberScheduled": 3,
                "updatedNumberScheduled": 3, "numberAvailable": 2}))),
            ("Waiting for daemon set \"agent\" rollout to finish: 2 of 3 updated pods are available...\n".into(), false)
        );
        assert_eq!(
            status(&ds(
                rolling,
                json!({"observedGeneration": 1, "desiredNumberScheduled": 3,
                "updatedNumberScheduled": 3, "numberAvailable": 3})
            )),
            (
                "daemon set \"agent\" successfully rolled out\n".into(),
                true
            )
        );
    }

    fn sts(spec: Value, st: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "db", "generation": 2}, "spec": spec, "status": st})
    }

    #[test]
    fn stateful_set_messages() {
        assert_eq!(
            error(
                &sts(json!({"updateStrategy": {"type": "OnDelete"}}), json!({})),
                None
            ),
            "rollout status is only available for RollingUpdate strategy type"
        );
        assert_eq!(
            status(&sts(
                json!({"replicas": 3}),
                json!({"observedGeneration": 1})
            )),
            (
                "Waiting for statefulset spec update to be observed...\n".into(),
                false
            )
        );
        assert_eq!(
            status(&sts(json!({"replicas": 3}), json!({}))).0,
            "Waiting for statefulset spec update to be observed...\n"
        );
        assert_eq!(
            status(&sts(
                json!({"replicas": 3}),
                json!({"observedGeneration": 2, "readyReplicas": 1})
            )),
            ("Waiting for 2 pods to be ready...\n".into(), false)
        );
    }

    #[test]
    fn stateful_set_partition_messages() {
        let spec = json!({"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}});
        assert_eq!(
            status(&sts(spec.clone(), json!({"observedGeneration": 2, "readyReplicas": 3, "updatedReplicas": 1}))),
            ("Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...\n".into(), false)
        );
        assert_eq!(
            status(&sts(
                spec,
                json!({"observedGeneration": 2, "readyReplicas": 3, "updatedReplicas": 2})
            )),
            (
                "partitioned roll out complete: 2 new pods have been updated...\n".into(),
                true
            )
        );
        // No update strategy at all: the API server's defaults give partition 0.
        assert_eq!(
            status(&sts(
                json!({"replicas": 3}),
                json!({"observedGeneration": 2, "readyReplicas": 3, "updatedReplicas": 3})
            )),
            (
                "partitioned roll out complete: 3 new pods have been updated...\n".into(),
                true
            )
        );
    }

    #[test]
    fn stateful_set_revision_messages() {
        let spec = json!({"replicas": 2, "updateStrategy": {"type": "RollingUpdate"}});
        assert_eq!(
            status(&sts(
                spec.clone(),
                json!({"observedGeneration": 2, "readyReplicas": 2, "updatedReplicas": 1,
                "currentReplicas": 1, "currentRevision": "db-1", "updateRevision": "db-2"})
            )),
            (
                "waiting for statefulset rolling update to complete 1 pods at revision db-2...\n"
                    .into(),
                false
            )
        );
        assert_eq!(
            status(&sts(
                spec,
                json!({"observedGeneration": 2, "readyReplicas": 2, "updatedReplicas": 2,
                "currentReplicas": 2, "currentRevision": "db-2", "updateRevision": "db-2"})
            )),
            (
                "statefulset rolling update complete 2 pods at revision db-2...\n".into(),
                true
            )
        );
    }

    #[test]
    fn other_kinds_have_no_status_viewer() {
        let e = |api: &str, kind: &str| error(&json!({"apiVersion": api, "kind": kind}), None);
        assert_eq!(
            e("apps/v1", "ReplicaSet"),
            "no status viewer has been implemented for ReplicaSet.apps"
        );
        assert_eq!(
            e("v1", "Pod"),
            "no status viewer has been implemented for Pod"
        );
        assert_eq!(
            e("extensions/v1beta1", "StatefulSet"),
            "no status viewer has been implemented for StatefulSet.extensions"
        );
    }

    #[test]
    fn extensions_deployments_and_daemon_sets_are_supported() {
        let mut d = deploy(
            json!({}),
            json!({"replicas": 1}),
            json!({"observedGeneration": 1}),
        );
        d["apiVersion"] = json!("extensions/v1beta1");
        assert_eq!(
            status(&d).0,
            "Waiting for deployment spec update to be observed...\n"
        );
    }
}
