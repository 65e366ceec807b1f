//! The strategy step of the pipeline, as kube's generic registry calls a kind's `strategy.go`:
//! typed decoding, defaults, metadata validation (common to every kind), the kind's own
//! validation for create, update and status writes, the `metadata.generation` rule,
//! PrepareForCreate and the status write's field reset. Each kind's rules live in
//! [`super::kinds`], one file per kind behind [`super::kinds::KindStrategy`].

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::kinds::ResourceInfo;
use super::validation::{
    go_quote, push_all, qualified_name, validate_annotations, validate_labels, FieldError,
};

pub use super::kinds::common::MAX_REPLICAS;
pub use super::typed::{
    quantity_error, type_check, QUANTITY_FORMAT_WRONG, QUANTITY_NUMERIC, QUANTITY_SUFFIX,
};

/// Applies kube's defaults for the kind (apps/v1 `defaults.go`, core/v1 `defaults.go`).
/// `spec.minReadySeconds` defaults to 0, which kube omits from the serialized object, so it is
/// left absent here too.
pub fn apply_defaults(info: &ResourceInfo, obj: &mut Value) {
    info.rules.strategy().defaults(obj);
}

/// Whether `new`'s members other than `status` are all `stored`'s own (the same allocation, or
/// the same scalar), as a status write that kept the stored spec and metadata has them. Every
/// kind's defaults read and write only those members (a Job's fill `metadata.labels` from its
/// template), and only set what is absent, so they changed nothing since `stored` was
/// defaulted when it was written: defaulting `new` would copy levels out of their stored form
/// only for persisting to share them again.
pub fn defaulted_as_stored(stored: &Value, new: &Value) -> bool {
    let (Some(o), Some(n)) = (stored.as_object(), new.as_object()) else {
        return false;
    };
    n.iter()
        .filter(|(k, _)| k.as_str() != "status")
        .all(|(k, v)| {
            o.get(k).is_some_and(|w| {
                if v.is_object() || v.is_array() {
                    super::typed::shared(v, w)
                } else {
                    v == w
                }
            })
        })
        && o.keys()
            .filter(|k| k.as_str() != "status")
            .all(|k| n.get(k).is_some())
}

/// Whether an update from `old` to `new` bumps `metadata.generation` (main-resource writes
/// only; `/status` writes never bump).
pub fn generation_bumps(info: &ResourceInfo, old: &Value, new: &Value) -> bool {
    info.rules.strategy().generation_bumps(old, new)
}

fn validate_name(info: &ResourceInfo, name: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
        return;
    }
    let msgs = info.rules.strategy().name_format(name);
    push_all(errs, "metadata.name", name, msgs);
}

/// Validates `metadata` (name per kind, labels, annotations, finalizers, ownerReferences).
pub fn validate_metadata(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    let meta = obj.field("metadata");
    let name = meta
        .and_then(|m| m.field("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    validate_name(info, name, errs);
    if let Some(labels) = meta
        .and_then(|m| m.field("labels"))
        .and_then(Value::as_object)
    {
        validate_labels(labels, "metadata.labels", errs);
    }
    if let Some(ann) = meta
        .and_then(|m| m.field("annotations"))
        .and_then(Value::as_object)
    {
        validate_annotations(ann, "metadata.annotations", errs);
    }
    if let Some(fins) = meta
        .and_then(|m| m.field("finalizers"))
        .and_then(Value::as_array)
    {
        let names: Vec<&str> = fins.iter().filter_map(Value::as_str).collect();
        for f in &names {
            push_all(errs, "metadata.finalizers", f, qualified_name(f));
        }
        // apimachinery's ValidateFinalizers: the garbage collector's two finalizers conflict.
        if names.contains(&super::gc::ORPHAN) && names.contains(&super::gc::FOREGROUND) {
            let list: Vec<String> = names.iter().map(|f| go_quote(f)).collect();
            errs.push(FieldError::invalid_raw(
                "metadata.finalizers",
                format!("[]string{{{}}}", list.join(", ")),
                "finalizer orphan and foregroundDeletion cannot be both set",
            ));
        }
    }
    if let Some(refs) = meta
        .and_then(|m| m.field("ownerReferences"))
        .and_then(Value::as_array)
    {
        let mut controllers = Vec::new();
        for r in refs {
            for (k, what) in [
                ("apiVersion", "version"),
                ("kind", "kind"),
                ("name", "name"),
                ("uid", "uid"),
            ] {
                let v = r.get(k).and_then(Value::as_str).unwrap_or("");
                if v.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("metadata.ownerReferences.{k}"),
                        json!(v),
                        format!("{what} must not be empty"),
                    ));
                }
            }
            if r.field("controller").and_then(Value::as_bool) == Some(true) {
                controllers.push(
                    r.field("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                );
            }
        }
        if controllers.len() > 1 {
            errs.push(FieldError::invalid_raw(
                "metadata.ownerReferences",
                Value::from(refs.clone()).to_string(),
                format!(
                    "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                    controllers.join(" and ")
                ),
            ));
        }
    }
}

/// Spec-side validation for the kind (create and update).
pub fn validate_spec(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    info.rules.strategy().validate(info, obj, errs);
}

/// Status-side validation for the kind (status writes, and any write of a kind without the
/// subresource).
pub fn validate_status(info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
    info.rules.strategy().validate_status(obj, errs);
}

/// The status strategy's `ValidateUpdate` rules that compare with the stored status.
pub fn validate_status_update(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    errs: &mut Vec<FieldError>,
) {
    info.rules.strategy().validate_status_update(old, new, errs);
}

/// Fields that may not change on update (beyond metadata identity, checked by the server).
pub fn validate_update(info: &ResourceInfo, old: &Value, new: &Value, errs: &mut Vec<FieldError>) {
    info.rules.strategy().validate_update(info, old, new, errs);
}

/// PrepareForCreate: the status a new object starts with and fields the server allocates
/// (a Service's cluster IP, from `cluster_ips`).
/// What a create settles before validation, once the object has its name and UID.
pub fn generate_on_create(info: &ResourceInfo, obj: &mut Value) {
    info.rules.strategy().generate_on_create(obj);
}

pub fn prepare_for_create(info: &ResourceInfo, obj: &mut Value, cluster_ips: &mut u64) {
    info.rules.strategy().prepare_for_create(obj, cluster_ips);
}

/// The object a `/status` write produces from the stored `old` and the request's `new`.
pub fn status_result(info: &ResourceInfo, old: &Value, new: Value) -> Value {
    info.rules.strategy().reset_fields_status(old, new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::kinds::{KindRules, Registry};

    fn info(api_version: &str, kind: &str) -> ResourceInfo {
        Registry::builtin()
            .for_kind(api_version, kind)
            .unwrap()
            .clone()
    }

    #[test]
    fn deployment_defaults_match_apps_v1() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}});
        apply_defaults(&info("apps/v1", "Deployment"), &mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        );
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert!(d["spec"].get("minReadySeconds").is_none());
    }

    #[test]
    fn recreate_deployments_get_no_rolling_update_defaults() {
        let mut d = json!({"spec": {"strategy": {"type": "Recreate"}}});
        apply_defaults(&info("apps/v1", "Deployment"), &mut d);
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn wrong_types_are_named_like_kubes_decoder() {
        let d =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "three"}});
        assert_eq!(
            type_check(&info("apps/v1", "Deployment"), &d, None).unwrap_err(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let d = json!({"metadata": {"labels": {"a": 1}}});
        assert!(type_check(&info("v1", "Pod"), &d, None)
            .unwrap_err()
            .contains("ObjectMeta.metadata.labels of type string"));
        let d = json!({"spec": {"replicas": 1.5}});
        assert!(type_check(&info("apps/v1", "ReplicaSet"), &d, None)
            .unwrap_err()
            .contains("number 1.5"));
        let d = json!({"spec": {"replicas": 3_000_000_000i64}});
        assert!(type_check(&info("apps/v1", "ReplicaSet"), &d, None).is_err());
    }

    #[test]
    fn defaults_are_passed_over_only_for_the_stored_members_themselves() {
        let mut stored = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}, "status": {}});
        apply_defaults(&info("v1", "Pod"), &mut stored);
        let mut status_write = stored.clone();
        status_write["status"] = json!({"phase": "Running"});
        assert!(defaulted_as_stored(&stored, &status_write));
        // Other metadata: defaulted again (a Job's defaults fill its labels).
        let mut relabelled = status_write.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        assert!(!defaulted_as_stored(&stored, &relabelled));
        // The same JSON in another allocation, a member gone or added: defaulted again.
        let copy: Value = serde_json::from_str(&stored.to_string()).unwrap();
        assert!(!defaulted_as_stored(&stored, &copy));
        let mut fewer = status_write.clone();
        fewer.as_object_mut().unwrap().remove("spec");
        assert!(!defaulted_as_stored(&stored, &fewer));
        let mut more = status_write.clone();
        more["extra"] = json!(1);
        assert!(!defaulted_as_stored(&stored, &more));
    }

    #[test]
    fn a_level_the_stored_version_holds_is_not_read_again() {
        let i = info("v1", "Pod");
        // Levels that never passed the check, to see which are read.
        let stored = json!({"metadata": {"labels": {"a": 1}}, "spec": {"nodeName": 2},
            "status": {"phase": "Running"}});
        let mut body = stored.clone();
        body["status"]["phase"] = json!("Failed");
        assert_eq!(
            type_check(&i, &body, Some(&stored)),
            Ok(()),
            "shared levels passed over"
        );
        // A copy is read: the same JSON in another allocation.
        let copy: Value = serde_json::from_str(&stored.to_string()).unwrap();
        assert!(type_check(&i, &copy, Some(&stored))
            .unwrap_err()
            .contains("ObjectMeta.metadata.labels"));
        // A level the write changed is read.
        body["status"]["phase"] = json!(3);
        assert!(type_check(&i, &body, Some(&stored))
            .unwrap_err()
            .contains("PodStatus.status.phase"));
    }

    #[test]
    fn deployment_generation_follows_spec_and_annotations_only() {
        let i = info("apps/v1", "Deployment");
        let a = json!({"metadata": {"labels": {"x": "1"}}, "spec": {"replicas": 1}});
        let mut b = a.clone();
        b["metadata"]["labels"]["x"] = json!("2");
        assert!(!generation_bumps(&i, &a, &b));
        b["metadata"]["annotations"] = json!({"note": "y"});
        assert!(generation_bumps(&i, &a, &b));
        let mut c = a.clone();
        c["spec"]["replicas"] = json!(2);
        assert!(generation_bumps(&i, &a, &c));
        let rs = info("apps/v1", "ReplicaSet");
        assert!(!generation_bumps(&rs, &a, &b));
    }

    #[test]
    fn custom_resources_bump_on_anything_outside_metadata() {
        let mut i = info("apps/v1", "Deployment");
        i.rules = KindRules::Custom;
        let a = json!({"metadata": {"labels": {}}, "spec": {"x": 1}});
        let mut b = a.clone();
        b["metadata"]["labels"]["new"] = json!("1");
        assert!(!generation_bumps(&i, &a, &b));
        b["status"] = json!({"phase": "Ready"});
        assert!(generation_bumps(&i, &a, &b));
        let mut c = a.clone();
        c["extra"] = json!(true);
        assert!(generation_bumps(&i, &a, &c));
    }

    fn errors(kind: (&str, &str), obj: &Value) -> Vec<String> {
        let i = info(kind.0, kind.1);
        let mut errs = Vec::new();
        validate_metadata(&i, obj, &mut errs);
        validate_spec(&i, obj, &mut errs);
        validate_status(&i, obj, &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    fn deployment(replicas: i64) -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    }

    #[test]
    fn replicas_must_be_non_negative_and_below_the_cap() {
        assert!(errors(("apps/v1", "Deployment"), &deployment(3)).is_empty());
        assert_eq!(
            errors(("apps/v1", "Deployment"), &deployment(-1)),
            ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            errors(("apps/v1", "Deployment"), &deployment(20_000)),
            ["spec.replicas: Invalid value: 20000: must be less than or equal to 10000 (the simulator's per-object replica cap)"]
        );
    }

    #[test]
    fn selector_must_match_template_labels() {
        let mut d = deployment(1);
        d["spec"]["template"]["metadata"]["labels"] = json!({"app": "api", "tier": "x"});
        assert_eq!(
            errors(("apps/v1", "Deployment"), &d),
            ["spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"api\", \"tier\":\"x\"}: `selector` does not match template `labels`"]
        );
        let mut d = deployment(1);
        d["spec"]["selector"] = json!({});
        assert_eq!(
            errors(("apps/v1", "Deployment"), &d)[0],
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
        );
        let mut d = deployment(1);
        d["spec"].as_object_mut().unwrap().remove("selector");
        assert_eq!(
            errors(("apps/v1", "Deployment"), &d),
            ["spec.selector: Required value"]
        );
    }

    #[test]
    fn rolling_update_parameters_are_checked() {
        let mut d = deployment(1);
        d["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}});
        assert_eq!(errors(("apps/v1", "Deployment"), &d), ["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": may not be 0 when `maxSurge` is 0"]);
        d["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {}});
        assert_eq!(errors(("apps/v1", "Deployment"), &d), ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]);
        d["spec"]["strategy"] = json!({"type": "Rolling"});
        assert_eq!(errors(("apps/v1", "Deployment"), &d), ["spec.strategy.type: Unsupported value: \"Rolling\": supported values: \"Recreate\", \"RollingUpdate\""]);
        d["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": "x%"}});
        assert_eq!(errors(("apps/v1", "Deployment"), &d).len(), 1);
    }

    #[test]
    fn invalid_names_and_missing_containers_are_reported_together() {
        let d = json!({"metadata": {"name": "Web_1"}, "spec": {"containers": []}});
        let errs = errors(("v1", "Pod"), &d);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].starts_with(
            "metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain"
        ));
        assert_eq!(errs[1], "spec.containers: Required value");
    }

    #[test]
    fn workload_status_counts_are_consistent() {
        let mut d = deployment(1);
        d["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": -1});
        let errs = errors(("apps/v1", "Deployment"), &d);
        assert_eq!(
            errs,
            [
                "status.availableReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
            ]
        );
    }

    #[test]
    fn hpa_bounds_are_validated() {
        let h = json!({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 5, "maxReplicas": 2}});
        assert_eq!(errors(("autoscaling/v2", "HorizontalPodAutoscaler"), &h), ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]);
    }

    #[test]
    fn crd_names_must_agree_with_group_and_plural() {
        let crd = json!({"metadata": {"name": "dbs.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "databases", "kind": "Database"}, "versions": [{"name": "v1", "served": true, "storage": true}]}});
        assert_eq!(errors(("apiextensions.k8s.io/v1", "CustomResourceDefinition"), &crd), ["metadata.name: Invalid value: \"dbs.example.com\": must be spec.names.plural+\".\"+spec.group"]);
    }

    #[test]
    fn pod_spec_is_immutable_except_images() {
        let i = info("v1", "Pod");
        let old = json!({"spec": {"containers": [{"name": "c", "image": "a"}]}});
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = json!("b");
        let mut errs = Vec::new();
        validate_update(&i, &old, &new, &mut errs);
        assert!(errs.is_empty());
        new["spec"]["nodeName"] = json!("n1");
        validate_update(&i, &old, &new, &mut errs);
        assert!(errs[0]
            .to_string()
            .starts_with("spec: Forbidden: pod updates may not change fields other than"));
    }
}
