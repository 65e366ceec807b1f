//! Property tests over random request sequences: resourceVersion moves exactly with persisted
//! writes, generation follows the per-kind rules, main-resource writes never touch status,
//! `/status` writes never touch spec, and refused requests change nothing.

use crate::json::{json, Value};
use proptest::prelude::*;

use super::principals;
use super::{
    ApiRequest, ApiServer, GroupResource, ObjectKey, PatchType, Subresource, Verb, WatchEventType,
};
use crate::testkit;
use crate::time::SimTime;

const NAMES: &[&str] = &["a", "b"];
/// What the Finalizer op sets: none, a user's, and the garbage collector's two.
const FINALIZERS: &[&[&str]] = &[
    &[],
    &["example.com/hold"],
    &["orphan"],
    &["foregroundDeletion"],
];
/// The Delete op's propagationPolicy (or none).
const POLICIES: &[Option<&str>] = &[None, Some("Background"), Some("Foreground"), Some("Orphan")];
const PRINCIPALS: &[&str] = &[
    "alice",
    "app",
    "admin",
    "mallory",
    principals::DEPLOYMENT_CONTROLLER,
    principals::DATABASE_CONTROLLER,
];

#[derive(Clone, Copy, Debug)]
enum Rv {
    Current,
    Stale,
    Absent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Deployment,
    /// Custom resource with the status subresource.
    Database,
    /// Custom resource without it.
    Widget,
}

#[derive(Clone, Debug)]
enum Op {
    /// Makes one seeded object an owner of another (ownerReferences), so deletions cascade.
    Adopt {
        owner_kind: Kind,
        owner: usize,
        child_kind: Kind,
        child: usize,
        /// A controller reference with `blockOwnerDeletion: true`, or a plain one.
        block: bool,
    },
    Create {
        kind: Kind,
        name: usize,
        replicas: i64,
    },
    UpdateSpec {
        kind: Kind,
        name: usize,
        who: usize,
        replicas: i64,
        rv: Rv,
    },
    UpdateMeta {
        kind: Kind,
        name: usize,
        who: usize,
        label: bool,
        value: u8,
    },
    SpoofStatus {
        kind: Kind,
        name: usize,
        who: usize,
        value: i64,
    },
    UpdateStatus {
        kind: Kind,
        name: usize,
        who: usize,
        value: i64,
        spec_replicas: i64,
        rv: Rv,
    },
    PatchSpec {
        kind: Kind,
        name: usize,
        who: usize,
        replicas: i64,
        json: bool,
    },
    PatchStatus {
        kind: Kind,
        name: usize,
        who: usize,
        value: i64,
    },
    /// Sets `metadata.finalizers` to one of [`FINALIZERS`].
    Finalizer {
        kind: Kind,
        name: usize,
        set: usize,
    },
    /// DELETE with one of [`POLICIES`] (or none).
    Delete {
        kind: Kind,
        name: usize,
        who: usize,
        policy: usize,
    },
    Echo {
        kind: Kind,
        name: usize,
        who: usize,
    },
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Deployment),
        Just(Kind::Database),
        Just(Kind::Widget)
    ]
}

fn rv() -> impl Strategy<Value = Rv> {
    prop_oneof![3 => Just(Rv::Current), 1 => Just(Rv::Stale), 1 => Just(Rv::Absent)]
}

fn op() -> impl Strategy<Value = Op> {
    let n = 0..NAMES.len();
    let w = prop_oneof![3 => Just(0usize), 1 => Just(1), 3 => Just(2), 1 => Just(3), 3 => Just(4), 3 => Just(5)];
    let reps = -2i64..12;
    prop_oneof![
        1 => (kind(), n.clone(), reps.clone()).prop_map(|(kind, name, replicas)| Op::Create { kind, name, replicas }),
        3 => (kind(), n.clone(), w.clone(), reps.clone(), rv()).prop_map(|(kind, name, who, replicas, rv)| Op::UpdateSpec { kind, name, who, replicas, rv }),
        2 => (kind(), n.clone(), w.clone(), any::<bool>(), 0u8..3).prop_map(|(kind, name, who, label, value)| Op::UpdateMeta { kind, name, who, label, value }),
        2 => (kind(), n.clone(), w.clone(), 0i64..5).prop_map(|(kind, name, who, value)| Op::SpoofStatus { kind, name, who, value }),
        3 => (kind(), n.clone(), w.clone(), -1i64..5, reps.clone(), rv()).prop_map(|(kind, name, who, value, spec_replicas, rv)| Op::UpdateStatus { kind, name, who, value, spec_replicas, rv }),
        2 => (kind(), n.clone(), w.clone(), reps, any::<bool>()).prop_map(|(kind, name, who, replicas, json)| Op::PatchSpec { kind, name, who, replicas, json }),
        2 => (kind(), n.clone(), w.clone(), 0i64..5).prop_map(|(kind, name, who, value)| Op::PatchStatus { kind, name, who, value }),
        1 => (kind(), n.clone(), 0..FINALIZERS.len()).prop_map(|(kind, name, set)| Op::Finalizer { kind, name, set }),
        1 => (kind(), n.clone(), w.clone(), 0..POLICIES.len()).prop_map(|(kind, name, who, policy)| Op::Delete { kind, name, who, policy }),
        1 => (kind(), n, w).prop_map(|(kind, name, who)| Op::Echo { kind, name, who }),
        1 => (kind(), 0..NAMES.len(), kind(), 0..NAMES.len(), any::<bool>()).prop_map(|(owner_kind, owner, child_kind, child, block)| Op::Adopt { owner_kind, owner, child_kind, child, block }),
    ]
}

fn gr(kind: Kind) -> GroupResource {
    match kind {
        Kind::Deployment => GroupResource::new("apps", "deployments"),
        Kind::Database => GroupResource::new("example.com", "databases"),
        Kind::Widget => GroupResource::new("example.com", "widgets"),
    }
}

fn key(kind: Kind, name: usize) -> ObjectKey {
    ObjectKey::new(gr(kind), "default", NAMES[name])
}

fn manifest(kind: Kind, name: usize, replicas: i64) -> Value {
    let n = NAMES[name];
    match kind {
        Kind::Deployment => json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": n},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": n}},
                "template": {"metadata": {"labels": {"app": n}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            "status": {"replicas": 7}}),
        Kind::Database => {
            json!({"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": n},
            "spec": {"replicas": replicas}, "status": {"phase": "Spoofed"}})
        }
        Kind::Widget => {
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": n},
            "spec": {"replicas": replicas}, "status": {"value": 0}})
        }
    }
}

fn crd(plural: &str, kind: &str, status: bool) -> Value {
    let mut v = json!({"name": "v1", "served": true, "storage": true});
    if status {
        v["subresources"] = json!({"status": {}});
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": plural, "kind": kind}, "versions": [v]}})
}

fn world() -> ApiServer {
    let mut s = ApiServer::new();
    let crds = GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions");
    for c in [
        crd("databases", "Database", true),
        crd("widgets", "Widget", false),
    ] {
        s.handle(
            SimTime::ZERO,
            ApiRequest::create("admin", crds.clone(), "", c),
        )
        .expect("CRD installs");
    }
    // Let the database controller read and write widgets too, so both CR flavours get traffic.
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "widgets"},
        "rules": [{"apiGroups": ["example.com"], "resources": ["widgets", "widgets/status"], "verbs": ["*"]}]});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "widgets"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "widgets"},
        "subjects": [{"kind": "User", "name": principals::DATABASE_CONTROLLER}]});
    let rbac = |r: &str| GroupResource::new("rbac.authorization.k8s.io", r);
    s.handle(
        SimTime::ZERO,
        ApiRequest::create("admin", rbac("clusterroles"), "", role),
    )
    .expect("role");
    s.handle(
        SimTime::ZERO,
        ApiRequest::create("admin", rbac("clusterrolebindings"), "", binding),
    )
    .expect("binding");
    for kind in [Kind::Deployment, Kind::Database, Kind::Widget] {
        for name in 0..NAMES.len() {
            s.handle(
                SimTime::ZERO,
                ApiRequest::create("admin", gr(kind), "default", manifest(kind, name, 2)),
            )
            .expect("seed object");
        }
    }
    s.drain_watch_events();
    s
}

fn with_rv(mut obj: Value, rv: Rv) -> Value {
    match rv {
        Rv::Current => {}
        Rv::Stale => obj["metadata"]["resourceVersion"] = json!("1"),
        Rv::Absent => {
            if let Some(m) = obj["metadata"].as_object_mut() {
                m.remove("resourceVersion");
            }
        }
    }
    obj
}

/// Builds the request for an op against the current state; `None` if the target is absent.
fn request(s: &ApiServer, op: &Op) -> Option<(ApiRequest, Kind, usize)> {
    let current = |k: Kind, n: usize| s.get(&key(k, n)).cloned();
    let who = |w: usize| PRINCIPALS[w];
    let put = |k: Kind, n: usize, w: usize, body: Value| {
        ApiRequest::update(who(w), gr(k), "default", NAMES[n], body)
    };
    let put_status = |k: Kind, n: usize, w: usize, body: Value| {
        ApiRequest::update_status(who(w), gr(k), "default", NAMES[n], body)
    };
    Some(match *op {
        Op::Create {
            kind,
            name,
            replicas,
        } => (
            ApiRequest::create("alice", gr(kind), "default", manifest(kind, name, replicas)),
            kind,
            name,
        ),
        Op::UpdateSpec {
            kind,
            name,
            who: w,
            replicas,
            rv,
        } => {
            let mut o = current(kind, name)?;
            o["spec"]["replicas"] = json!(replicas);
            (put(kind, name, w, with_rv(o, rv)), kind, name)
        }
        Op::UpdateMeta {
            kind,
            name,
            who: w,
            label,
            value,
        } => {
            let mut o = current(kind, name)?;
            let field = if label { "labels" } else { "annotations" };
            o["metadata"][field] = json!({"k": value.to_string()});
            (put(kind, name, w, o), kind, name)
        }
        Op::SpoofStatus {
            kind,
            name,
            who: w,
            value,
        } => {
            let mut o = current(kind, name)?;
            o["status"] = json!({"replicas": value, "phase": value.to_string()});
            (put(kind, name, w, o), kind, name)
        }
        Op::UpdateStatus {
            kind,
            name,
            who: w,
            value,
            spec_replicas,
            rv,
        } => {
            let mut o = current(kind, name)?;
            o["status"] = json!({"replicas": value, "phase": value.to_string()});
            o["spec"]["replicas"] = json!(spec_replicas);
            o["metadata"]["labels"] = json!({"sneaky": "x"});
            (put_status(kind, name, w, with_rv(o, rv)), kind, name)
        }
        Op::PatchSpec {
            kind,
            name,
            who: w,
            replicas,
            json,
        } => {
            let (pt, patch) = if json {
                (
                    PatchType::Json,
                    json!([{"op": "add", "path": "/spec/replicas", "value": replicas}]),
                )
            } else {
                (
                    PatchType::Merge,
                    json!({"spec": {"replicas": replicas}, "status": {"phase": "Patched"}}),
                )
            };
            (
                ApiRequest::patch(who(w), gr(kind), "default", NAMES[name], pt, patch),
                kind,
                name,
            )
        }
        Op::PatchStatus {
            kind,
            name,
            who: w,
            value,
        } => (
            ApiRequest::patch_status(
                who(w),
                gr(kind),
                "default",
                NAMES[name],
                PatchType::Merge,
                json!({"status": {"replicas": value}, "spec": {"replicas": 1}}),
            ),
            kind,
            name,
        ),
        Op::Finalizer { kind, name, set } => {
            let mut o = current(kind, name)?;
            o["metadata"]["finalizers"] = json!(FINALIZERS[set]);
            (put(kind, name, 2, o), kind, name)
        }
        Op::Delete {
            kind,
            name,
            who: w,
            policy,
        } => {
            let options = match POLICIES[policy] {
                Some(p) => json!({"propagationPolicy": p}),
                None => json!({}),
            };
            (
                ApiRequest::delete_with_options(who(w), gr(kind), "default", NAMES[name], options),
                kind,
                name,
            )
        }
        Op::Adopt {
            owner_kind,
            owner,
            child_kind,
            child,
            block,
        } => {
            let o = current(owner_kind, owner)?;
            let mut c = current(child_kind, child)?;
            c["metadata"]["ownerReferences"] = json!([super::meta::owner_reference(&o, block)]);
            (put(child_kind, child, 2, c), child_kind, child)
        }
        Op::Echo { kind, name, who: w } => {
            let o = current(kind, name)?;
            (put(kind, name, w, o), kind, name)
        }
    })
}

fn gen(o: &Value) -> i64 {
    o.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn outside_metadata(o: &Value) -> Vec<(String, Value)> {
    o.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| *k != "metadata")
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn snapshot(s: &ApiServer) -> Vec<(ObjectKey, Value)> {
    s.objects().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn check_step(s: &mut ApiServer, op: &Op) -> Result<(), TestCaseError> {
    let Some((req, kind, name)) = request(s, op) else {
        return Ok(());
    };
    let k = key(kind, name);
    let before_store = snapshot(s);
    let waited_before: Vec<ObjectKey> = s
        .objects()
        .map(|(k, _)| k.clone())
        .filter(|o| waits(s, o))
        .collect();
    let before = s.get(&k).cloned();
    let rv0 = s.resource_version();
    let verb = req.verb;
    let status_write = req.subresource == Some(Subresource::Status);
    let result = s.handle(SimTime(1000), req);
    let events = s.drain_watch_events();
    let rv1 = s.resource_version();
    let after_store = snapshot(s);
    let after = s.get(&k).cloned();

    // Background garbage collection leaves no orphans behind.
    for (k, o) in s.objects() {
        let owners = super::meta::owner_uids(o);
        if !owners.is_empty() && o.pointer("/metadata/deletionTimestamp").is_none() {
            prop_assert!(
                owners.iter().any(|u| s.key_for_uid(u).is_some()),
                "{} survived its owners",
                k.path()
            );
        }
    }
    // Foreground deletion never leaves an owner waiting when no dependent blocks it (names it
    // with `blockOwnerDeletion: true`).
    for (k, _) in s.objects() {
        if waits(s, k) {
            prop_assert!(
                !testkit::blocking_dependents(s, k).is_empty(),
                "{} is held by foregroundDeletion with no blocking dependent left",
                k.path()
            );
        }
    }
    // Dependents are orphaned at once, so no object being deleted is left holding `orphan`.
    for (k, o) in s.objects() {
        prop_assert!(
            !testkit::deleting_with(o, super::gc::ORPHAN),
            "{} is held by the orphan finalizer",
            k.path()
        );
    }
    // Nor do owners wait for each other: following blocking dependents from a waiting owner
    // reaches an object that is not itself waiting (held by another finalizer, or not deleted).
    // kube breaks such a wait when it deletes a dependent that is not deleting yet, so a wait
    // closed by this request on objects that all waited already (or on its target) is kube's
    // behaviour too, and stays until a DELETE with propagationPolicy Background.
    for (o, _) in s.objects() {
        if let Some(cycle) = waiting_cycle(s, o) {
            prop_assert!(
                cycle.iter().all(|c| *c == k || waited_before.contains(c)),
                "{} waits in a cycle the garbage collector could have broken",
                o.path()
            );
        }
    }
    // Refused requests change nothing.
    if result.is_err() {
        prop_assert_eq!(
            &before_store,
            &after_store,
            "refused request changed the store"
        );
        prop_assert_eq!(rv0, rv1);
        prop_assert!(events.is_empty());
        return Ok(());
    }
    // resourceVersion moves exactly with persisted writes, strictly increasing.
    if before_store == after_store {
        prop_assert_eq!(rv0, rv1, "rv moved without a write");
        prop_assert!(events.is_empty());
    } else {
        prop_assert!(!events.is_empty());
        let mut last = rv0;
        for e in &events {
            prop_assert!(e.resource_version > last, "rv not strictly increasing");
            last = e.resource_version;
            if e.event_type != WatchEventType::Deleted {
                let stored = s
                    .get(&e.key)
                    .map(|o| o["metadata"]["resourceVersion"].clone());
                if let Some(stored) = stored {
                    // Only the object's latest event carries its stored rv.
                    if events
                        .iter()
                        .rev()
                        .find(|x| x.key == e.key)
                        .map(|x| x.resource_version)
                        == Some(e.resource_version)
                    {
                        prop_assert_eq!(stored, json!(e.resource_version.to_string()));
                    }
                }
            }
        }
        prop_assert_eq!(last, rv1);
    }
    let (Some(b), Some(a)) = (before, after) else {
        return Ok(());
    };
    let has_status_sub = kind != Kind::Widget;
    match verb {
        Verb::Update | Verb::Patch if status_write => {
            prop_assert_eq!(a.get("spec"), b.get("spec"), "/status write changed spec");
            prop_assert_eq!(gen(&a), gen(&b), "/status write bumped generation");
            if kind == Kind::Deployment {
                prop_assert_eq!(a.pointer("/metadata/labels"), b.pointer("/metadata/labels"));
            } else {
                prop_assert_eq!(
                    a.get("metadata").map(|m| {
                        let mut m = m.clone();
                        m["resourceVersion"] = json!(null);
                        m
                    }),
                    b.get("metadata").map(|m| {
                        let mut m = m.clone();
                        m["resourceVersion"] = json!(null);
                        m
                    })
                );
            }
        }
        Verb::Update | Verb::Patch => {
            if has_status_sub {
                prop_assert_eq!(
                    a.get("status"),
                    b.get("status"),
                    "main write changed status"
                );
            }
            let bump = match kind {
                Kind::Deployment => {
                    a.get("spec") != b.get("spec")
                        || a.pointer("/metadata/annotations") != b.pointer("/metadata/annotations")
                }
                Kind::Database | Kind::Widget => outside_metadata(&a) != outside_metadata(&b),
            };
            prop_assert_eq!(gen(&a), gen(&b) + i64::from(bump), "generation rule broken");
        }
        Verb::Delete => {
            let newly_deleting = b.pointer("/metadata/deletionTimestamp").is_none()
                && a.pointer("/metadata/deletionTimestamp").is_some();
            if newly_deleting {
                prop_assert_eq!(gen(&a), gen(&b) + 1);
                prop_assert_eq!(a.get("spec"), b.get("spec"));
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether the object is being deleted and held by `foregroundDeletion`: waiting for its
/// dependents.
fn waits(s: &ApiServer, k: &ObjectKey) -> bool {
    s.get(k)
        .is_some_and(|o| testkit::deleting_with(o, super::gc::FOREGROUND))
}

/// When `start` waits and every chain of blocking dependents from it meets only objects that
/// wait too (a wait nothing can end), the objects met.
fn waiting_cycle(s: &ApiServer, start: &ObjectKey) -> Option<Vec<ObjectKey>> {
    if !waits(s, start) {
        return None;
    }
    let mut seen = vec![start.clone()];
    let mut todo = vec![start.clone()];
    while let Some(k) = todo.pop() {
        for d in testkit::blocking_dependents(s, &k) {
            if !waits(s, &d) {
                return None;
            }
            if !seen.contains(&d) {
                seen.push(d.clone());
                todo.push(d);
            }
        }
    }
    Some(seen)
}

// Cases per property are sized for a debug build in the test run; proptest reads
// PROPTEST_CASES and PROPTEST_RNG_SEED over these (`./dev props`, .cargo/config.toml).
proptest! {
    #![proptest_config(ProptestConfig { cases: 40, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_request_sequences_keep_every_invariant(ops in prop::collection::vec(op(), 1..30)) {
        let mut s = world();
        for op in &ops {
            check_step(&mut s, op)?;
        }
    }

    #[test]
    fn refused_requests_are_audited_and_change_nothing(ops in prop::collection::vec(op(), 1..20)) {
        let mut s = world();
        for op in &ops {
            let Some((req, _, _)) = request(&s, op) else { continue };
            let before = snapshot(&s);
            let audit_len = s.audit().count();
            let (principal, verb) = (req.principal.clone(), req.verb);
            let result = s.handle(SimTime(1000), req);
            // One entry for the request itself, then only the garbage collector's.
            let entries: Vec<_> = s.audit().skip(audit_len).cloned().collect();
            prop_assert!(!entries.is_empty());
            prop_assert_eq!(&entries[0].principal, &principal);
            prop_assert_eq!(entries[0].verb, verb);
            prop_assert!(entries[1..].iter().all(|e| e.principal == principals::GARBAGE_COLLECTOR));
            match result {
                Err(e) => {
                    prop_assert_eq!(before, snapshot(&s));
                    prop_assert_eq!(entries.len(), 1);
                    prop_assert_eq!(entries[0].code, e.code());
                    prop_assert_eq!(&entries[0].message, &e.message);
                    prop_assert_eq!(entries[0].rv_before, entries[0].rv_after);
                }
                Ok(_) => prop_assert!(entries[0].code == 200 || entries[0].code == 201),
            }
        }
    }
}

/// Random JSON built from the field names the server looks at, so malformed documents reach
/// deep into decoding, strategies and validation.
fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "apiVersion",
        "kind",
        "metadata",
        "name",
        "namespace",
        "generateName",
        "labels",
        "annotations",
        "finalizers",
        "ownerReferences",
        "uid",
        "resourceVersion",
        "spec",
        "replicas",
        "selector",
        "matchLabels",
        "matchExpressions",
        "template",
        "containers",
        "image",
        "strategy",
        "type",
        "rollingUpdate",
        "maxSurge",
        "maxUnavailable",
        "status",
        "conditions",
        "reason",
        "group",
        "names",
        "plural",
        "versions",
        "storage",
        "subresources",
        "rules",
        "verbs",
        "resources",
        "roleRef",
        "subjects",
        "ports",
        "port",
        "nodeName",
        "data",
        "scaleTargetRef",
        "maxReplicas",
        "minReplicas",
        "target",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..20_005).prop_map(Value::from),
        prop::sample::select(vec![
            "",
            "web",
            "Web_1",
            "apps/v1",
            "v1",
            "Deployment",
            "Pod",
            "True",
            "25%",
            "x%",
            "a/b/c",
            "Recreate"
        ])
        .prop_map(Value::from),
        Just(json!(1.5)),
    ];
    leaf.prop_recursive(5, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(key.clone(), inner, 0..6).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

fn resources() -> impl Strategy<Value = GroupResource> {
    prop::sample::select(vec![
        GroupResource::new("apps", "deployments"),
        GroupResource::new("apps", "replicasets"),
        GroupResource::new("", "pods"),
        GroupResource::new("", "services"),
        GroupResource::new("", "nodes"),
        GroupResource::new("", "configmaps"),
        GroupResource::new("", "bindings"),
        GroupResource::new("", "events"),
        GroupResource::new("autoscaling", "horizontalpodautoscalers"),
        GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
        GroupResource::new("rbac.authorization.k8s.io", "clusterrolebindings"),
        GroupResource::new("example.com", "databases"),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 100, ..ProptestConfig::default() })]

    #[test]
    fn malformed_bodies_never_panic_and_refusals_change_nothing(
        gr in resources(),
        body in arb_json(),
        verb in 0..5u8,
        with_kind in any::<bool>(),
    ) {
        let mut s = world();
        let mut body = body;
        if with_kind {
            if let (Some(o), Some(info)) = (body.as_object_mut(), s.resource_info(&gr)) {
                o.insert("apiVersion", Value::from(info.api_version()));
                o.insert("kind", Value::from(info.kind.clone()));
            }
        }
        let before = snapshot(&s);
        let req = match verb {
            0 => ApiRequest::create("admin", gr, "default", body),
            1 => ApiRequest::update("admin", gr, "default", "a", body),
            2 => ApiRequest::update_status("admin", gr, "default", "a", body),
            3 => ApiRequest::patch("admin", gr, "default", "a", PatchType::Merge, body),
            _ => ApiRequest::patch("admin", gr, "default", "a", PatchType::Json, body),
        };
        if s.handle(SimTime(1), req).is_err() {
            prop_assert_eq!(before, snapshot(&s));
        }
    }
}

/// The same value with every object's keys in reverse order (equal as JSON, not in order).
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 100, ..ProptestConfig::default() })]

    /// The engine's cheaper equality and owned merge patch answer as serde_json's `==` and
    /// json_patch's `merge` do, key order of the result included.
    #[test]
    fn json_eq_and_merge_patch_agree_with_serde_json_and_json_patch(
        a in arb_json(),
        b in arb_json(),
    ) {
        let turned = reversed(&a);
        prop_assert!(crate::api::meta::json_eq(&a, &turned));
        prop_assert_eq!(crate::api::meta::json_eq(&a, &b), a == b);
        prop_assert_eq!(crate::api::meta::json_eq(&turned, &b), turned == b);
        // The project's `Value` answers `==` as serde_json's does.
        let plain = |v: &Value| crate::json::into_serde(v.clone());
        prop_assert_eq!(a == b, plain(&a) == plain(&b));
        prop_assert_eq!(turned == b, plain(&turned) == plain(&b));
        for patch in [&b, &turned] {
            let mut by_ref = plain(&a);
            json_patch::merge(&mut by_ref, &plain(patch));
            let mut owned = a.clone();
            crate::api::meta::merge_patch(&mut owned, patch.clone());
            prop_assert_eq!(by_ref.to_string(), owned.to_string());
        }
        // Compacting keeps the value and its key order.
        let mut compacted = turned.clone();
        compacted.compact();
        prop_assert_eq!(&compacted, &turned);
        prop_assert_eq!(compacted.to_string(), turned.to_string());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, max_shrink_iters: 100, ..ProptestConfig::default() })]

    /// Object keys order as their fields' strings do, one after another (the derived order):
    /// the stores, informers and work queues iterate in it, so traces depend on it.
    #[test]
    fn object_keys_order_as_their_strings_do(
        a in prop::collection::vec("[a-c\u{e9}/.-]{0,20}", 4),
        b in prop::collection::vec("[a-c\u{e9}/.-]{0,20}", 4),
        share in 0..4usize,
    ) {
        let mut b = b;
        b[..share].clone_from_slice(&a[..share]);
        let key = |v: &[String]| {
            crate::api::ObjectKey::new(GroupResource::new(&v[0], &v[1]), &v[2], &v[3])
        };
        let (ka, kb) = (key(&a), key(&b));
        prop_assert_eq!(ka.cmp(&kb), (&a[0], &a[1], &a[2], &a[3]).cmp(&(&b[0], &b[1], &b[2], &b[3])));
        prop_assert_eq!(ka.gr.cmp(&kb.gr), (&a[0], &a[1]).cmp(&(&b[0], &b[1])));
    }
}
