//! The parser, kstatus and rollout status take user input: whatever it is, they answer with a
//! value or an error, never a panic.

use converge_core::json::{Map, Value};
use converge_core::{kstatus, parse, rollout};
use proptest::prelude::*;

/// Arbitrary JSON, biased towards the field names the rules read.
fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("apiVersion".to_string()),
        Just("kind".to_string()),
        Just("metadata".to_string()),
        Just("spec".to_string()),
        Just("status".to_string()),
        Just("conditions".to_string()),
        Just("type".to_string()),
        Just("replicas".to_string()),
        Just("generation".to_string()),
        Just("observedGeneration".to_string()),
        Just("phase".to_string()),
        Just("containerStatuses".to_string()),
        Just("updateStrategy".to_string()),
        "[a-z]{1,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop_oneof![
            Just("apps/v1".to_string()),
            Just("Deployment".to_string()),
            Just("StatefulSet".to_string()),
            Just("DaemonSet".to_string()),
            Just("Pod".to_string()),
            Just("Running".to_string()),
            Just("True".to_string()),
            Just("OnDelete".to_string()),
            ".{0,8}",
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| Value::Array(v.into())),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|kvs| Value::Object(kvs.into_iter().collect::<Map>())),
        ]
    })
}

fn kinds() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("v1", "Pod"),
        ("v1", "Service"),
        ("v1", "PersistentVolumeClaim"),
        ("batch/v1", "Job"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("example.com/v1", "Widget"),
    ])
}

/// Integers where overflow lives.
fn edgy_int() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(i64::MIN)),
        Just(Value::from(i64::MAX)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::from(i32::MIN))),
        Just(Value::from(i64::from(i32::MAX))),
        (-3i64..4).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

proptest! {
    #[test]
    fn parsing_any_text_never_panics(text in ".{0,200}") {
        let _ = parse::parse_documents(&text);
    }

    #[test]
    fn parsing_any_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse::parse_document_bytes(&bytes);
    }

    #[test]
    fn kstatus_and_rollout_status_never_panic(
        (api, kind) in kinds(),
        metadata in json_value(),
        spec in json_value(),
        status in json_value(),
        now in any::<i64>(),
        revision in prop::option::of(-2i64..5),
    ) {
        let obj = converge_core::json::json!({
            "apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec, "status": status,
        });
        let _ = kstatus::compute(&obj, now);
        let _ = rollout::rollout_status(&obj, revision);
    }

    #[test]
    fn extreme_counts_never_overflow(
        (api, kind) in kinds(),
        n in prop::collection::vec(edgy_int(), 12),
        now in prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>()],
    ) {
        let obj = converge_core::json::json!({
            "apiVersion": api, "kind": kind,
            "metadata": {"name": "x", "generation": n[0], "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"replicas": n[1], "updateStrategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"partition": n[2]}}},
            "status": {"observedGeneration": n[0], "replicas": n[3], "updatedReplicas": n[4],
                       "readyReplicas": n[5], "availableReplicas": n[6], "currentReplicas": n[7],
                       "desiredNumberScheduled": n[8], "updatedNumberScheduled": n[9],
                       "numberAvailable": n[10], "currentNumberScheduled": n[11],
                       "fullyLabeledReplicas": n[11], "phase": "Pending",
                       "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
        });
        let _ = kstatus::compute(&obj, now);
        let _ = rollout::rollout_status(&obj, None);
        let mut revision_path = obj.clone();
        revision_path["spec"]["updateStrategy"] = converge_core::json::json!({"type": "RollingUpdate"});
        let _ = rollout::rollout_status(&revision_path, None);
    }
}
