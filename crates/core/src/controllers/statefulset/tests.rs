//! Unit tests of the StatefulSet controller's pure parts, worked by hand from kube 1.32's
//! stateful_set_control.go and stateful_set_utils.go. The engine-level behaviour (ordered
//! creation, partitioned rolling update, scale-down order) is in engine/statefulset_tests.rs.

use super::*;

#[test]
fn the_status_encodes_as_go_does() {
    let s = SetStatus {
        observed_generation: 2,
        replicas: 3,
        ready: 3,
        current: 0,
        updated: 3,
        available: 3,
        current_revision: "web-a".into(),
        update_revision: "web-b".into(),
        collision_count: 0,
    };
    // currentReplicas 0 is omitted; collisionCount (a set pointer) and availableReplicas stay.
    assert_eq!(
        crate::kubectl::encode::compact_json(&s.to_json()),
        r#"{"availableReplicas":3,"collisionCount":0,"currentRevision":"web-a","observedGeneration":2,"readyReplicas":3,"replicas":3,"updateRevision":"web-b","updatedReplicas":3}"#
    );
    let keys: Vec<String> = s
        .to_json()
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "observedGeneration",
            "replicas",
            "readyReplicas",
            "updatedReplicas",
            "currentRevision",
            "updateRevision",
            "collisionCount",
            "availableReplicas"
        ]
    );
}

#[test]
fn a_rolling_update_completes_only_with_every_replica_updated_and_ready() {
    let set = json!({"spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate"}}});
    let mut s = SetStatus {
        replicas: 3,
        ready: 3,
        updated: 3,
        current: 0,
        current_revision: "a".into(),
        update_revision: "b".into(),
        ..SetStatus::default()
    };
    complete_rolling_update(&set, &mut s);
    assert_eq!((s.current, s.current_revision.as_str()), (3, "b"));
    let mut partial = SetStatus {
        replicas: 3,
        ready: 2,
        updated: 3,
        current_revision: "a".into(),
        update_revision: "b".into(),
        ..SetStatus::default()
    };
    complete_rolling_update(&set, &mut partial);
    assert_eq!(partial.current_revision, "a");
    // OnDelete never completes this way.
    let on_delete = json!({"spec": {"replicas": 3, "updateStrategy": {"type": "OnDelete"}}});
    complete_rolling_update(&on_delete, &mut s.clone());
    let mut od = SetStatus {
        replicas: 3,
        ready: 3,
        updated: 3,
        current_revision: "a".into(),
        update_revision: "b".into(),
        ..SetStatus::default()
    };
    complete_rolling_update(&on_delete, &mut od);
    assert_eq!(od.current_revision, "a");
}

#[test]
fn the_status_is_written_only_when_it_differs() {
    let set = json!({"status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3,
        "currentReplicas": 3, "updatedReplicas": 3, "availableReplicas": 3,
        "currentRevision": "a", "updateRevision": "a", "collisionCount": 0}});
    let same = SetStatus {
        observed_generation: 2,
        replicas: 3,
        ready: 3,
        current: 3,
        updated: 3,
        available: 3,
        current_revision: "a".into(),
        update_revision: "a".into(),
        collision_count: 0,
    };
    assert!(!inconsistent_status(&set, &same));
    let newer = SetStatus {
        observed_generation: 3,
        ..same.clone()
    };
    assert!(inconsistent_status(&set, &newer));
    // collisionCount alone is not compared.
    let collided = SetStatus {
        collision_count: 1,
        ..same
    };
    assert!(!inconsistent_status(&set, &collided));
}

#[test]
fn parallel_passes_run_in_slow_start_batches_and_stop_after_a_failed_batch() {
    let mut seen = Vec::new();
    let r = run_for_all(10, false, |i| {
        seen.push(i);
        if i == 4 {
            Err(ReconcileError::Other("boom".into()))
        } else {
            Ok(false)
        }
    });
    // Batches 1, 2, 4: the third holds index 4, so 7.. are not tried.
    assert_eq!(seen, [0, 1, 2, 3, 4, 5, 6]);
    assert!(r.is_err());
    let mut seen = Vec::new();
    let r = run_for_all(3, true, |i| {
        seen.push(i);
        Ok(i == 1)
    });
    assert_eq!((seen, r.unwrap()), (vec![0, 1], true));
}
