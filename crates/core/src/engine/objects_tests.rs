//! The world's objects are the API server's store as the watch stream announced it: the
//! objects the server made when it started join them at their first write, and each change
//! carries the version announced before it.

use crate::api::{meta, ApiRequest, GroupResource, ObjectKey, PatchType, WatchEventType};
use crate::controllers::util::configmaps;
use crate::engine::report::{ObjectChange, StepReport};
use crate::engine::world::World;
use crate::engine::world::ADMIN;
use crate::engine::ClusterConfig;
use crate::json::json;

fn change<'r>(report: &'r StepReport, key: &ObjectKey) -> &'r ObjectChange {
    report
        .events
        .iter()
        .flat_map(|e| &e.changes)
        .find(|c| c.key == *key)
        .unwrap_or_else(|| panic!("no change of {}", key.path()))
}

/// The admin's merge patch of the `default` namespace's `team` label.
fn label_default_namespace(w: &mut World, team: &str) -> StepReport {
    let (answer, report) = w.request(ApiRequest::patch(
        ADMIN,
        GroupResource::new("", "namespaces"),
        "",
        "default",
        PatchType::Merge,
        json!({"metadata": {"labels": {"team": team}}}),
    ));
    assert!(answer.is_ok(), "{answer:?}");
    report
}

#[test]
fn the_servers_own_objects_join_the_world_at_their_first_write() {
    let mut w = World::new(ClusterConfig::default());
    let ns = ObjectKey::new(GroupResource::new("", "namespaces"), "", "default");
    assert!(w.api().get(&ns).is_some(), "the server made it");
    assert!(w.object(&ns).is_none(), "no watch event announced it");
    assert!(w.objects().all(|(k, _)| *k != ns));
    assert_eq!(w.object_count(), w.objects().count());
    let before = w.object_count();

    let report = label_default_namespace(&mut w, "a");
    let c = change(&report, &ns);
    assert_eq!(c.event_type, WatchEventType::Modified);
    assert!(c.before.is_none(), "the world had not seen it before");
    let seen = w.object(&ns).expect("announced now");
    assert_eq!(meta::str_at(seen, "/metadata/labels/team"), "a");
    assert!(w.objects().any(|(k, _)| *k == ns));
    assert_eq!(w.object_count(), before + 1);
    assert_eq!(w.object_count(), w.objects().count());
    let of_kind: Vec<&ObjectKey> = w.objects_of(&ns.gr, None).map(|(k, _)| k).collect();
    assert_eq!(of_kind, [&ns], "only the announced namespace");

    // Its next write is an ordinary one: the version before is the one announced.
    let report = label_default_namespace(&mut w, "b");
    let c = change(&report, &ns);
    let was = c.before.as_deref().expect("announced before");
    assert_eq!(meta::str_at(was, "/metadata/labels/team"), "a");
}

#[test]
fn a_removal_when_the_last_finalizer_goes_reports_the_version_announced_before_it() {
    let mut w = World::new(ClusterConfig::default());
    let key = ObjectKey::new(configmaps(), "default", "cm");
    let (created, _) = w.request(ApiRequest::create(
        ADMIN,
        configmaps(),
        "default",
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm", "finalizers": ["example.com/keep"]}}),
    ));
    assert!(created.is_ok(), "{created:?}");
    let (deleted, report) = w.request(ApiRequest::delete(ADMIN, configmaps(), "default", "cm"));
    assert!(deleted.is_ok(), "{deleted:?}");
    assert_eq!(change(&report, &key).event_type, WatchEventType::Modified);

    // The update that takes the finalizer off removes the object: the store holds the
    // finalizer-less version only for the removal to announce it.
    let (removed, report) = w.request(ApiRequest::patch(
        ADMIN,
        configmaps(),
        "default",
        "cm",
        PatchType::Merge,
        json!({"metadata": {"finalizers": null}}),
    ));
    assert!(removed.is_ok(), "{removed:?}");
    let c = change(&report, &key);
    assert_eq!(c.event_type, WatchEventType::Deleted);
    let was = c.before.as_deref().expect("announced before");
    assert_eq!(
        was.pointer("/metadata/finalizers"),
        Some(&json!(["example.com/keep"])),
        "the version announced before, not the one put only to be removed"
    );
    assert!(was.pointer("/metadata/deletionTimestamp").is_some());
    assert!(w.object(&key).is_none());
}

#[test]
fn a_seed_object_first_announced_by_its_namespaces_removal_has_no_version_before() {
    let mut w = World::new(ClusterConfig::default());
    let namespaces = GroupResource::new("", "namespaces");
    let account = ObjectKey::new(
        GroupResource::new("", "serviceaccounts"),
        "kube-public",
        "default",
    );
    assert!(w.api().get(&account).is_some(), "the server made it");
    let (answer, report) = w.request(ApiRequest::delete(ADMIN, namespaces, "", "kube-public"));
    assert!(answer.is_ok(), "{answer:?}");
    let c = change(&report, &account);
    assert_eq!(c.event_type, WatchEventType::Deleted);
    assert!(c.before.is_none(), "the world had not seen it before");
    assert!(w.api().get(&account).is_none());
    assert!(w.object(&account).is_none());
    assert_eq!(w.object_count(), w.objects().count());
}
