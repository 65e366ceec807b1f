//! Properties shared by the fuzz targets (`fuzz/`) and the tests that replay their corpus
//! (`crates/core/tests/fuzz_regressions.rs`): each `check_*` takes raw bytes, drives one user
//! entry point with them and panics only when a property is broken, so libFuzzer and
//! `cargo test` run the very same checks.
//!
//! Not part of the public API: hidden from docs, no stability promise.

use serde_json::{json, Value};

use crate::api::{ApiRequest, ApiServer, GroupResource, ObjectKey, PatchType, Subresource, Verb};
use crate::parse;
use crate::scenario::{Duration, RunOptions, Scenario, Until};
use crate::time::SimTime;
use crate::view::share;

// ---- parsing ---------------------------------------------------------------------------------

/// Parses `data` as a pasted manifest. On success every object must print back (as JSON and as
/// YAML) to text that parses to the same objects, field order included.
pub fn check_parse(data: &[u8]) {
    let Ok(objects) = parse::parse_document_bytes(data) else {
        return;
    };
    assert!(!objects.is_empty(), "a successful parse has objects");
    let as_json = objects
        .iter()
        .map(|o| serde_json::to_string(o).expect("a parsed value serialises"))
        .collect::<Vec<_>>()
        .join("\n");
    let reparsed = parse::parse_documents(&as_json)
        .unwrap_or_else(|e| panic!("JSON re-serialisation does not parse: {e}\n{as_json}"));
    assert_same(&objects, &reparsed, "JSON");

    // JSON allows a `<<` key; in YAML it is a merge key, so such objects cannot round-trip.
    if objects.iter().any(has_merge_key) {
        return;
    }
    // Every document starts with `---`: an empty object prints as the flow mapping `{}`, and a
    // stream whose first character is `{` is read as JSON (kubectl's rule), so without the
    // marker `{}\n---\n{}` is a JSON syntax error (found by the fuzzer).
    let as_yaml = objects
        .iter()
        .map(|o| {
            let doc = serde_yaml_ng::to_string(o).expect("a parsed value serialises as YAML");
            format!("---\n{doc}")
        })
        .collect::<String>();
    let reparsed = parse::parse_documents(&as_yaml)
        .unwrap_or_else(|e| panic!("YAML re-serialisation does not parse: {e}\n{as_yaml}"));
    assert_same(&objects, &reparsed, "YAML");
}

fn assert_same(a: &[Value], b: &[Value], how: &str) {
    let text = |v: &[Value]| serde_json::to_string(v).unwrap_or_default();
    assert_eq!(text(a), text(b), "{how} round trip changed the objects");
}

fn has_merge_key(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, c)| k == "<<" || has_merge_key(c)),
        Value::Array(a) => a.iter().any(has_merge_key),
        _ => false,
    }
}

// ---- API requests ----------------------------------------------------------------------------

/// Reads decisions from fuzz bytes; past the end every read is 0.
struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    fn pick<T: Copy>(&mut self, options: &[T]) -> T {
        options[usize::from(self.byte()) % options.len()]
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A length-prefixed chunk of the remaining bytes.
    fn chunk(&mut self) -> &'a [u8] {
        let len = usize::from(self.byte()) * 4;
        let (head, rest) = self.data.split_at(len.min(self.data.len()));
        self.data = rest;
        head
    }
}

const PRINCIPALS: &[&str] = &[
    "alice",
    "admin",
    "mallory",
    "system:serviceaccount:kube-system:deployment-controller",
    "system:kube-scheduler",
    "system:node:node-1",
];

const RESOURCES: &[(&str, &str, &str, &str)] = &[
    // group, resource, apiVersion, kind
    ("apps", "deployments", "apps/v1", "Deployment"),
    ("apps", "replicasets", "apps/v1", "ReplicaSet"),
    ("", "pods", "v1", "Pod"),
    ("", "configmaps", "v1", "ConfigMap"),
    ("", "services", "v1", "Service"),
    ("", "namespaces", "v1", "Namespace"),
    ("", "nodes", "v1", "Node"),
    ("example.com", "databases", "example.com/v1", "Database"),
    (
        "autoscaling",
        "horizontalpodautoscalers",
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
    ),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
    ),
];

const NAMES: &[&str] = &[
    "web", "cfg", "orders", "p", "new", "default", "node-1", "Bad_Name", "",
];
const NAMESPACES: &[&str] = &["default", "kube-system", "", "nope"];

/// Field paths the request bodies edit, and the values put there.
const PATHS: &[&[&str]] = &[
    &["spec", "replicas"],
    &["spec", "selector"],
    &["spec", "selector", "matchLabels", "app"],
    &["spec", "template", "metadata", "labels"],
    &["spec", "template", "spec", "containers"],
    &["spec", "template", "spec", "containers", "0", "image"],
    &[
        "spec",
        "template",
        "spec",
        "containers",
        "0",
        "resources",
        "requests",
        "cpu",
    ],
    &["spec", "strategy", "rollingUpdate", "maxSurge"],
    &["spec", "paused"],
    &["spec", "version"],
    &["status", "replicas"],
    &["status", "observedGeneration"],
    &["status", "conditions"],
    &["status", "phase"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "labels", "app"],
    &["metadata", "annotations"],
    &["metadata", "resourceVersion"],
    &["metadata", "uid"],
    &["metadata", "generation"],
    &["metadata", "finalizers"],
    &["metadata", "ownerReferences"],
    &["metadata", "deletionTimestamp"],
    &["metadata"],
    &["spec"],
    &["data", "k"],
    &["apiVersion"],
    &["kind"],
];

fn value_from(b: &mut Bytes) -> Value {
    match b.byte() % 16 {
        0 => Value::Null,
        1 => json!(-1),
        2 => json!(0),
        3 => json!(3),
        4 => json!(10_001),
        5 => json!(i64::MAX),
        6 => json!(1.5),
        7 => json!("web"),
        8 => json!("100m"),
        9 => json!(""),
        10 => json!(true),
        11 => json!([]),
        12 => json!({}),
        13 => json!([{"type": "Ready", "status": "True", "reason": "Ok", "message": "",
                      "lastTransitionTime": "2025-01-01T00:00:00Z"},
                     {"type": "Ready", "status": "Maybe", "reason": "", "message": "",
                      "lastTransitionTime": "2025-01-01T00:00:00Z"}]),
        14 => json!({"app": "web"}),
        _ => {
            // Raw text from the fuzz bytes, as a string or (when it parses) a document.
            let chunk = b.chunk();
            let text = String::from_utf8_lossy(chunk).into_owned();
            match parse::parse_documents(&text) {
                Ok(mut docs) => docs.swap_remove(0),
                Err(_) => Value::String(text),
            }
        }
    }
}

fn set_path(target: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        *target = value;
        return;
    };
    let mut cur = target;
    for seg in parents {
        cur = match cur {
            Value::Array(a) => match seg.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            Value::Object(m) => m.entry(seg.to_string()).or_insert_with(|| json!({})),
            _ => return,
        };
    }
    match cur {
        Value::Object(m) => {
            m.insert(last.to_string(), value);
        }
        Value::Array(a) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = value;
            }
        }
        _ => {}
    }
}

/// A body for `kind` named `name`: a valid object, then up to 4 edits from the fuzz bytes.
fn body_from(b: &mut Bytes, api_version: &str, kind: &str, name: &str) -> Value {
    let mut body = template(api_version, kind, name);
    for _ in 0..b.byte() % 5 {
        let path = b.pick(PATHS);
        let value = value_from(b);
        set_path(&mut body, path, value);
    }
    body
}

/// A valid object of each fuzzed kind.
pub fn template(api_version: &str, kind: &str, name: &str) -> Value {
    let meta = json!({"name": name, "namespace": "default", "labels": {"app": "web"}});
    let spec = match kind {
        "Deployment" | "ReplicaSet" => json!({
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}),
        "Pod" => json!({"containers": [{"name": "app", "image": "nginx:1.25"}]}),
        "Service" => json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}),
        "Database" => json!({"replicas": 1, "version": "16"}),
        "HorizontalPodAutoscaler" => json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5}),
        "CustomResourceDefinition" => {
            return json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                              "listKind": "WidgetList"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        }
        "ConfigMap" => {
            return json!({"apiVersion": api_version, "kind": kind, "metadata": meta,
                          "data": {"k": "v"}});
        }
        "Namespace" | "Node" => {
            return json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
        }
        _ => json!({}),
    };
    json!({"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec})
}

/// The API server the request fuzzer starts from: the defaults plus one object of most kinds,
/// the Database CRD (with the status subresource) and a Database.
pub fn seeded_api_server() -> ApiServer {
    let mut api = ApiServer::new();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "databases.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "databases", "singular": "database", "kind": "Database",
                      "listKind": "DatabaseList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    let objects = [
        crd,
        template("apps/v1", "Deployment", "web"),
        template("v1", "ConfigMap", "cfg"),
        template("v1", "Pod", "p"),
        template("v1", "Service", "web"),
        template("example.com/v1", "Database", "orders"),
        template("v1", "Node", "node-1"),
    ];
    for obj in objects {
        let Some(info) = api.resource_for(
            obj["apiVersion"].as_str().unwrap_or_default(),
            obj["kind"].as_str().unwrap_or_default(),
        ) else {
            panic!("seed kind unknown: {obj}");
        };
        let created = api.handle(SimTime::ZERO, ApiRequest::create("admin", info.gr, "", obj));
        assert!(created.is_ok(), "seed object refused: {created:?}");
    }
    api.drain_watch_events();
    api
}

/// Everything a client could observe in the store: every object printed, with the global
/// resourceVersion.
pub fn store_snapshot(api: &ApiServer) -> (u64, Vec<(ObjectKey, String)>) {
    let objects = api
        .objects()
        .map(|(k, v)| (k.clone(), serde_json::to_string(v).unwrap_or_default()))
        .collect();
    (api.resource_version(), objects)
}

/// How the store of `after` differs from the store of `before`, where `after` started as a clone
/// of `before`: keys added or whose object is no longer byte-identical, and keys removed.
///
/// Both stores are persistent maps of shared objects and a clone shares every object, so an
/// object a request did not rewrite is the very same allocation in both: a pointer comparison
/// settles it. Only an object at a new address is printed and compared byte for byte (field
/// order included), so a rewrite to identical bytes still counts as unchanged, as it would in
/// [`store_snapshot`]. The cost is one walk over the keys, not one print of every object.
pub fn store_diff(before: &ApiServer, after: &ApiServer) -> StoreDiff {
    let text = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let mut diff = StoreDiff::default();
    let mut old = before.objects().peekable();
    let mut new = after.objects().peekable();
    loop {
        match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some((ko, _)), Some((kn, _))) if ko < kn => {
                diff.removed.push((*ko).clone());
                old.next();
            }
            (Some(_), None) => {
                if let Some((k, _)) = old.next() {
                    diff.removed.push(k.clone());
                }
            }
            (Some((ko, vo)), Some((kn, vn))) if ko == kn => {
                if !std::ptr::eq(*vo, *vn) && text(vo) != text(vn) {
                    diff.changed.push((*kn).clone());
                }
                old.next();
                new.next();
            }
            (_, Some(_)) => {
                if let Some((k, _)) = new.next() {
                    diff.changed.push(k.clone());
                }
            }
        }
    }
    diff
}

/// What [`store_diff`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct StoreDiff {
    /// Keys present only after, or whose object's bytes changed.
    pub changed: Vec<ObjectKey>,
    /// Keys present only before.
    pub removed: Vec<ObjectKey>,
}

impl StoreDiff {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }
}

/// One request from the bytes. `api` is read only to adopt an existing object.
fn decode_request(b: &mut Bytes, api: &ApiServer) -> ApiRequest {
    let principal = b.pick(PRINCIPALS);
    let (group, resource, api_version, kind) = b.pick(RESOURCES);
    let gr = GroupResource::new(group, resource);
    let namespace = b.pick(NAMESPACES);
    let name = b.pick(NAMES);
    let status = b.byte().is_multiple_of(4);
    let mut req = match b.byte() % 8 {
        0 => ApiRequest::get(principal, gr, namespace, name),
        1 => ApiRequest::list(principal, gr, namespace, None),
        2 | 3 => {
            let body = body_from(b, api_version, kind, name);
            ApiRequest::create(principal, gr, namespace, body)
        }
        4 => {
            let body = body_from(b, api_version, kind, name);
            ApiRequest::update(principal, gr, namespace, name, body)
        }
        5 => {
            let mut patch = json!({});
            for _ in 0..=b.byte() % 3 {
                let path = b.pick(PATHS);
                let value = value_from(b);
                set_path(&mut patch, path, value);
            }
            ApiRequest::patch(principal, gr, namespace, name, PatchType::Merge, patch)
        }
        6 => {
            let mut ops = Vec::new();
            for _ in 0..=b.byte() % 3 {
                let op = b.pick(&["add", "remove", "replace", "test", "move", "copy"]);
                let path = format!("/{}", b.pick(PATHS).join("/"));
                let from = format!("/{}", b.pick(PATHS).join("/"));
                ops.push(json!({"op": op, "path": path, "from": from, "value": value_from(b)}));
            }
            ApiRequest::patch(principal, gr, namespace, name, PatchType::Json, json!(ops))
        }
        // A DELETE with a propagationPolicy (or none, or an unsupported one), or an update
        // that gives the object an owner: the garbage collector's inputs.
        _ => match b.byte() % 8 {
            6 | 7 => {
                let fresh = template(api_version, kind, name);
                adopt(
                    b,
                    api,
                    principal,
                    ObjectKey::new(gr, namespace, name),
                    fresh,
                )
            }
            n => {
                let options = match n {
                    0 | 1 => json!({}),
                    2 => json!({"propagationPolicy": "Background"}),
                    3 => json!({"propagationPolicy": "Foreground"}),
                    4 => json!({"propagationPolicy": "Orphan"}),
                    _ => json!({"propagationPolicy": "Sideways"}),
                };
                ApiRequest::delete_with_options(principal, gr, namespace, name, options)
            }
        },
    };
    if status && matches!(req.verb, Verb::Get | Verb::Update | Verb::Patch) {
        req.subresource = Some(Subresource::Status);
    }
    req
}

/// An update of the stored object (or a fresh template, when there is none) whose
/// ownerReferences name another stored object, with `blockOwnerDeletion` from the bytes.
fn adopt(
    b: &mut Bytes,
    api: &ApiServer,
    principal: &str,
    key: ObjectKey,
    fresh: Value,
) -> ApiRequest {
    let mut body = api.get(&key).cloned().unwrap_or(fresh);
    let owners: Vec<&Value> = api.objects().map(|(_, o)| o).collect();
    if !owners.is_empty() {
        let owner = owners[usize::from(b.byte()) % owners.len()];
        let block = b.byte().is_multiple_of(2);
        let mut r = crate::api::meta::owner_reference(owner, block);
        r["controller"] = json!(false);
        set_path(&mut body, &["metadata", "ownerReferences"], json!([r]));
    }
    ApiRequest::update(principal, key.gr, &key.namespace, &key.name, body)
}

fn field<'a>(obj: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    obj.and_then(|o| o.get(key))
}

fn rv_of(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Sends up to 16 requests decoded from `data` to a seeded API server and checks after each:
/// a refused request leaves the store byte-identical (objects and resourceVersion), adds
/// exactly one audit entry and no watch event; a read changes nothing; resourceVersion never
/// goes backwards, no object is ahead of it and watch events carry increasing resourceVersions
/// above the previous one; main-resource writes keep the stored status and `/status` writes
/// keep the stored spec, where the kind has the subresource.
pub fn check_api_requests(data: &[u8]) {
    // Built (and checked) once: cloning is O(1), and building it was a fifth of every execution.
    static SEEDED: std::sync::OnceLock<ApiServer> = std::sync::OnceLock::new();
    let mut api = SEEDED
        .get_or_init(|| {
            let api = seeded_api_server();
            for (key, obj) in api.objects() {
                assert_not_ahead(&api, key, obj);
            }
            api
        })
        .clone();
    let mut b = Bytes { data };
    let mut now = SimTime::ZERO;
    for _ in 0..16 {
        if b.is_empty() {
            break;
        }
        now = now.plus_ms(1000);
        let req = decode_request(&mut b, &api);
        check_one_request(&mut api, now, req);
    }
}

fn assert_not_ahead(api: &ApiServer, key: &ObjectKey, obj: &Value) {
    assert!(
        rv_of(obj) <= api.resource_version(),
        "{key:?} has a resourceVersion above the server's {}",
        api.resource_version()
    );
}

fn check_one_request(api: &mut ApiServer, now: SimTime, req: ApiRequest) {
    // The server before the request: an O(1) clone sharing every stored object.
    let before = api.clone();
    let info = api.resource_info(&req.gr);
    let key = ObjectKey::new(req.gr.clone(), &req.namespace, &req.name);
    let verb = req.verb;
    let subresource = req.subresource;
    let sent = req.clone();
    let described = move || format!("{sent:?}");

    let result = api.handle(now, req);
    let (rv_before, rv_after) = (before.resource_version(), api.resource_version());
    assert!(
        rv_after >= rv_before,
        "resourceVersion went backwards: {rv_before} -> {rv_after} on {}",
        described()
    );
    let diff = store_diff(&before, api);
    // Unchanged objects were not ahead of the older, smaller resourceVersion either (checked
    // when they were written, or on the seeded server), so only the changed ones need a look.
    for k in &diff.changed {
        if let Some(obj) = api.get(k) {
            assert_not_ahead(api, k, obj);
        }
    }
    match &result {
        Err(e) => {
            assert!(
                diff.is_empty() && rv_after == rv_before,
                "refused request ({} {}) changed the store ({diff:?}): {}",
                e.code(),
                e.message,
                described()
            );
            assert_eq!(
                api.audit_len(),
                before.audit_len() + 1,
                "one audit entry per refusal"
            );
            assert_eq!(
                api.pending_watch_events(),
                before.pending_watch_events(),
                "no watch event"
            );
            assert!(!e.message.is_empty(), "a refusal has a message");
        }
        Ok(_) if matches!(verb, Verb::Get | Verb::List) => {
            assert!(
                diff.is_empty() && rv_after == rv_before,
                "a read changed the store ({diff:?}): {}",
                described()
            );
        }
        Ok(_) => {
            let target_after = api.get(&key);
            let has_status = info.as_ref().is_some_and(|i| {
                i.status_subresource && i.gr.resource != "customresourcedefinitions"
            });
            if has_status && matches!(verb, Verb::Update | Verb::Patch) && target_after.is_some() {
                let (kept, what) = match subresource {
                    None => ("status", "a main-resource write changed status"),
                    Some(Subresource::Status) => ("spec", "a /status write changed spec"),
                };
                assert_eq!(
                    field(before.get(&key), kept),
                    field(target_after, kept),
                    "{what}: {}",
                    described()
                );
            }
        }
    }
    assert_no_owner_waits_for_nothing(api, &described);
    let mut last = rv_before;
    for (ev, _) in api.drain_shared_watch_events() {
        assert!(
            ev.resource_version > last,
            "watch event resourceVersion {} not above {last}",
            ev.resource_version
        );
        last = ev.resource_version;
    }
    assert!(last <= rv_after, "a watch event is ahead of the server");
}

/// The garbage collector never leaves an object waiting for its dependents
/// (`foregroundDeletion`) when none blocks it, nor holding the `orphan` finalizer (dependents
/// are orphaned at once).
fn assert_no_owner_waits_for_nothing(api: &ApiServer, described: &dyn Fn() -> String) {
    for (k, o) in api.objects() {
        assert!(
            !deleting_with(o, crate::api::ORPHAN),
            "{k:?} is held by orphan: {}",
            described()
        );
        if deleting_with(o, crate::api::FOREGROUND) {
            assert!(
                !blocking_dependents(api, k).is_empty(),
                "{k:?} waits with no blocking dependent: {}",
                described()
            );
        }
    }
}

/// Whether `obj` is being deleted and holds `finalizer`.
pub fn deleting_with(obj: &Value, finalizer: &str) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
        && obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|x| x == finalizer))
}

/// The other objects that name `k` as owner with `blockOwnerDeletion: true`, read from their
/// ownerReferences (a check independent of the garbage collector's own helpers).
pub fn blocking_dependents(api: &ApiServer, k: &ObjectKey) -> Vec<ObjectKey> {
    let Some(uid) = api
        .get(k)
        .and_then(|o| o.pointer("/metadata/uid"))
        .and_then(Value::as_str)
    else {
        return Vec::new();
    };
    api.dependents_of(uid)
        .into_iter()
        .filter(|d| d != k)
        .filter(|d| {
            api.get(d)
                .and_then(|o| o.pointer("/metadata/ownerReferences"))
                .and_then(Value::as_array)
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                })
        })
        .collect()
}

// ---- scenario files --------------------------------------------------------------------------

/// The longest simulated time a fuzzed scenario runs.
pub const SCENARIO_BOUND_MS: u64 = 120_000;
/// The most engine events a fuzzed scenario processes.
pub const SCENARIO_MAX_EVENTS: u64 = 20_000;

/// Loads `data` as a scenario file: it either loads (and then writes back to YAML and JSON that
/// load to the same scenario, and runs within the bound) or is refused with a one-line error.
pub fn check_scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scenario = match Scenario::load(text) {
        Ok(s) => s,
        Err(e) => {
            let line = e.to_string();
            assert!(
                !line.is_empty() && !line.contains('\n'),
                "one-line error: {line:?}"
            );
            return;
        }
    };
    for (how, written) in [("YAML", scenario.to_yaml()), ("JSON", scenario.to_json())] {
        let reloaded = Scenario::load(&written)
            .unwrap_or_else(|e| panic!("the {how} it writes does not load: {e}\n{written}"));
        assert_eq!(reloaded, scenario, "{how} round trip changed the scenario");
    }
    let bound = match scenario.until {
        Some(Until::Time(d)) if d.ms() < SCENARIO_BOUND_MS => d.ms(),
        _ => SCENARIO_BOUND_MS,
    };
    let options = RunOptions {
        seed: None,
        until: Some(Until::Time(Duration(bound))),
        max_events: SCENARIO_MAX_EVENTS,
        max_extra_ms: 0,
    };
    match scenario.run(&options) {
        Ok(outcome) => {
            let now = outcome.run.now_ms();
            assert!(now <= bound, "ran to {now} ms past the bound {bound} ms");
        }
        Err(e) => {
            let line = e.to_string();
            assert!(
                !line.is_empty() && !line.contains('\n'),
                "one-line error: {line:?}"
            );
        }
    }
}

// ---- determinism -----------------------------------------------------------------------------

/// Runs a scenario file twice with `seed` and returns the trace hash, panicking when the two
/// runs differ.
pub fn check_deterministic(text: &str, seed: u64) -> Result<String, String> {
    let a = crate::scenario::trace_hash_of(text, seed).map_err(|e| e.to_string())?;
    let b = crate::scenario::trace_hash_of(text, seed).map_err(|e| e.to_string())?;
    assert_eq!(a, b, "two runs with seed {seed} gave different traces");
    Ok(a)
}

// ---- share links -----------------------------------------------------------------------------

/// Engine events a fuzzed share link may replay (smaller than the page's budget so one input
/// stays fast; a link over it must be refused with the budget error, which is checked too).
pub const SHARE_MAX_EVENTS: u64 = 50_000;

/// The share link text `data` stands for. The first byte picks the layer the rest is fed to, so
/// the fuzzer reaches every one: 0 the fragment as typed, 1 the inflated JSON (the localStorage
/// form, also deflated into a link), 2 the deflated stream (base64-encoded into a link).
pub fn share_link_of(data: &[u8]) -> String {
    use base64::Engine;
    let Some((mode, rest)) = data.split_first() else {
        return String::new();
    };
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    match mode % 3 {
        0 => String::from_utf8_lossy(rest).into_owned(),
        1 => format!(
            "{}{}",
            share::HASH_PREFIX,
            b64(&miniz_oxide::deflate::compress_to_vec(rest, 6))
        ),
        _ => format!("{}{}", share::HASH_PREFIX, b64(rest)),
    }
}

/// Opens `data` as a share link (see [`share_link_of`]). A link either restores a valid world
/// or yields a one-line error: a decoded workspace passes its own validation, encodes to a link
/// that decodes to the same workspace, and replays to a world with one step per action and the
/// cursor inside it, or is refused for going over the replay budget.
pub fn check_share_link(data: &[u8]) {
    let link = share_link_of(data);
    if data.first().is_some_and(|m| m % 3 == 1) {
        // The same bytes as a localStorage entry must get the same answer as the link.
        let stored = std::str::from_utf8(&data[1..]).map(share::from_json);
        let linked = share::from_hash(&link);
        if let Ok(stored) = stored {
            assert_eq!(stored, linked, "localStorage and link disagree");
        }
    }
    let w = match share::from_hash(&link) {
        Ok(w) => w,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    assert_eq!(w.validate(), Ok(()), "a decoded workspace is valid");
    let again = share::to_hash(&w);
    assert_eq!(
        share::from_hash(&again).as_ref(),
        Ok(&w),
        "re-encoding changed the workspace"
    );
    let mut steps = 0u64;
    match share::replay(&w, SHARE_MAX_EVENTS, |world, _| {
        steps += 1;
        assert_eq!(world.steps(), steps, "each action is one world step");
    }) {
        Ok(world) => {
            assert_eq!(world.steps(), w.actions.len() as u64);
            assert!(w.cursor.is_none_or(|c| c <= world.steps()));
        }
        Err(e) => {
            assert!(
                matches!(e, share::ShareError::ReplayBudget { .. }),
                "a valid workspace is refused only for its replay budget: {e}"
            );
            assert_one_line(&e.to_string());
        }
    }
}

fn assert_one_line(line: &str) {
    assert!(
        !line.is_empty() && !line.contains('\n'),
        "one-line error: {line:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment_key() -> ObjectKey {
        ObjectKey::new(GroupResource::new("apps", "deployments"), "default", "web")
    }

    #[test]
    fn store_diff_names_written_created_and_deleted_objects_and_nothing_else() {
        let before = seeded_api_server();
        assert!(store_diff(&before, &before.clone()).is_empty());

        let mut api = before.clone();
        let deployments = GroupResource::new("apps", "deployments");
        let mut body = template("apps/v1", "Deployment", "web");
        body["spec"]["replicas"] = json!(3);
        let updated = api.handle(
            SimTime::ZERO,
            ApiRequest::update("admin", deployments.clone(), "default", "web", body),
        );
        assert!(updated.is_ok(), "{updated:?}");
        let created = api.handle(
            SimTime::ZERO,
            ApiRequest::create(
                "admin",
                deployments.clone(),
                "default",
                template("apps/v1", "Deployment", "new"),
            ),
        );
        assert!(created.is_ok(), "{created:?}");
        let configmaps = GroupResource::new("", "configmaps");
        let deleted = api.handle(
            SimTime::ZERO,
            ApiRequest::delete("admin", configmaps.clone(), "default", "cfg"),
        );
        assert!(deleted.is_ok(), "{deleted:?}");

        let diff = store_diff(&before, &api);
        assert_eq!(
            diff.changed,
            // In key order, as the store lists them.
            [
                ObjectKey::new(deployments, "default", "new"),
                deployment_key()
            ]
        );
        assert_eq!(diff.removed, [ObjectKey::new(configmaps, "default", "cfg")]);
    }

    #[test]
    fn a_refused_write_leaves_every_stored_object_shared_with_the_server_before_it() {
        let before = seeded_api_server();
        let mut api = before.clone();
        let refused = api.handle(
            SimTime::ZERO,
            ApiRequest::update(
                "mallory",
                GroupResource::new("apps", "deployments"),
                "default",
                "web",
                template("apps/v1", "Deployment", "web"),
            ),
        );
        assert!(refused.is_err(), "{refused:?}");
        assert!(before
            .objects()
            .zip(api.objects())
            .all(|((ka, va), (kb, vb))| ka == kb && std::ptr::eq(va, vb)));
        assert!(store_diff(&before, &api).is_empty());
    }
}
