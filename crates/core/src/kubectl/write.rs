//! The commands that write: `scale`, `delete`, `create -f`, `apply -f` (client-side apply with
//! kubectl's last-applied annotation and three-way patch), `patch`, `label` and `annotate`,
//! each sending what kubectl 1.32 sends and printing what it prints
//! [kubectl pkg/cmd/{scale,delete,create,apply,patch,label,annotate}; apply/patcher.go
//! `patchSimple`; apimachinery strategicpatch `CreateThreeWayMergePatch`].

use crate::api::meta::Fields;
use std::collections::BTreeMap;

use crate::json::{json, Map, Value};

use super::args::{flag, unsupported, FlagSpec, Parsed, Takes};
use super::client::{query, Call, Mapping};
use super::{encode, named, Run};

pub const SCALE_FLAGS: &[FlagSpec] = &[
    flag("replicas", None, Takes::Value),
    unsupported("current-replicas", None, Takes::Value),
    unsupported("resource-version", None, Takes::Value),
    unsupported("timeout", None, Takes::Value),
    unsupported("selector", Some('l'), Takes::Value),
    unsupported("all", None, Takes::Bool),
    unsupported("filename", Some('f'), Takes::Value),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("dry-run", None, Takes::Value),
];

pub const DELETE_FLAGS: &[FlagSpec] = &[
    flag("cascade", None, Takes::Value),
    flag("grace-period", None, Takes::Value),
    flag("force", None, Takes::Bool),
    flag("now", None, Takes::Bool),
    flag("wait", None, Takes::Bool),
    flag("ignore-not-found", None, Takes::Bool),
    flag("filename", Some('f'), Takes::Value),
    flag("selector", Some('l'), Takes::Value),
    unsupported("all", None, Takes::Bool),
    unsupported("all-namespaces", Some('A'), Takes::Bool),
    unsupported("field-selector", None, Takes::Value),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("dry-run", None, Takes::Value),
    unsupported("timeout", None, Takes::Value),
    unsupported("recursive", Some('R'), Takes::Bool),
    unsupported("kustomize", Some('k'), Takes::Value),
    unsupported("raw", None, Takes::Value),
    unsupported("interactive", Some('i'), Takes::Bool),
];

pub const APPLY_FLAGS: &[FlagSpec] = &[
    flag("filename", Some('f'), Takes::Value),
    flag("validate", None, Takes::Value),
    flag("save-config", None, Takes::Bool),
    unsupported("server-side", None, Takes::Bool),
    unsupported("dry-run", None, Takes::Value),
    unsupported("prune", None, Takes::Bool),
    unsupported("force", None, Takes::Bool),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("kustomize", Some('k'), Takes::Value),
    unsupported("recursive", Some('R'), Takes::Bool),
    unsupported("selector", Some('l'), Takes::Value),
    unsupported("edit", None, Takes::Bool),
    unsupported("overwrite", None, Takes::Bool),
    unsupported("field-manager", None, Takes::Value),
    unsupported("raw", None, Takes::Value),
];

pub const REPLACE_FLAGS: &[FlagSpec] = &[
    flag("filename", Some('f'), Takes::Value),
    flag("validate", None, Takes::Value),
    flag("subresource", None, Takes::Value),
    unsupported("force", None, Takes::Bool),
    unsupported("cascade", None, Takes::Value),
    unsupported("grace-period", None, Takes::Value),
    unsupported("save-config", None, Takes::Bool),
    unsupported("dry-run", None, Takes::Value),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("kustomize", Some('k'), Takes::Value),
    unsupported("recursive", Some('R'), Takes::Bool),
    unsupported("raw", None, Takes::Value),
];

pub const PATCH_FLAGS: &[FlagSpec] = &[
    flag("patch", Some('p'), Takes::Value),
    flag("type", None, Takes::Value),
    flag("subresource", None, Takes::Value),
    unsupported("patch-file", None, Takes::Value),
    unsupported("local", None, Takes::Bool),
    unsupported("dry-run", None, Takes::Value),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("filename", Some('f'), Takes::Value),
    unsupported("field-manager", None, Takes::Value),
];

pub const LABEL_FLAGS: &[FlagSpec] = &[
    flag("overwrite", None, Takes::Bool),
    unsupported("all", None, Takes::Bool),
    unsupported("all-namespaces", Some('A'), Takes::Bool),
    unsupported("selector", Some('l'), Takes::Value),
    unsupported("list", None, Takes::Bool),
    unsupported("local", None, Takes::Bool),
    unsupported("resource-version", None, Takes::Value),
    unsupported("dry-run", None, Takes::Value),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("filename", Some('f'), Takes::Value),
    unsupported("field-selector", None, Takes::Value),
];

const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn name_of(o: &Value) -> &str {
    o.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The namespace requests about `m` go to.
fn ns_for<'a>(run: &'a Run<'_, '_>, m: &Mapping) -> &'a str {
    if m.namespaced {
        &run.namespace
    } else {
        ""
    }
}

pub fn scale(run: &mut Run<'_, '_>, p: &Parsed) -> Option<()> {
    let Some(replicas) = p.value("replicas") else {
        run.fail("required flag(s) \"replicas\" not set");
        return None;
    };
    let Ok(n) = replicas.parse::<i64>() else {
        run.stderr(&format!(
            "Error: invalid argument \"{replicas}\" for \"--replicas\" flag: strconv.ParseInt: parsing \"{replicas}\": invalid syntax\nSee 'kubectl scale --help' for usage.\n"
        ));
        run.out.code = 1;
        return None;
    };
    let objs = named(run, p, 1)?;
    if objs.is_empty() && run.out.code == 0 {
        run.fail("resource(s) were provided, but no name was specified");
        return None;
    }
    for (m, name) in objs {
        let ns = ns_for(run, &m).to_owned();
        let got = run.send(Call::get(
            m.object_path(&ns, &name),
            String::new(),
            "application/json",
        ));
        if !got.ok() {
            let msg = got.body.member("message").as_str().unwrap_or("").to_owned();
            run.fail(&format!("no objects passed to scale {msg}"));
            continue;
        }
        if !m.subresources.iter().any(|s| s == "scale") {
            run.fail(&format!(
                "no scaler has been implemented for {{{} {}}}",
                m.group, m.kind
            ));
            continue;
        }
        let patch = json!({"spec": {"replicas": n}});
        let answer = run.send(Call::with_body(
            "PATCH",
            format!("{}/scale", m.object_path(&ns, &name)),
            String::new(),
            MERGE,
            &patch,
        ));
        if answer.ok() {
            run.stdout(&format!("{}/{name} scaled\n", m.kind_prefix()));
        } else {
            run.server_error(&answer);
        }
    }
    Some(())
}

/// Reads `-f` files (the terminal's named files, or `-` for the editor's text).
fn read_files(run: &mut Run<'_, '_>, p: &Parsed) -> Option<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for f in p.values("filename") {
        let (label, text) = if f == "-" {
            match run.ctx.stdin {
                Some(t) => ("STDIN".to_owned(), t.to_owned()),
                None => {
                    run.fail(
                        "no objects passed to apply: -f - reads the editor's text, which is empty",
                    );
                    return None;
                }
            }
        } else {
            match run.ctx.files.get(f.as_str()) {
                Some(t) => (f.clone(), t.clone()),
                None => {
                    run.fail(&format!("the path \"{f}\" does not exist"));
                    return None;
                }
            }
        };
        match crate::parse::parse_documents(&text) {
            Ok(docs) => {
                for d in docs {
                    if d.field("kind").and_then(Value::as_str) == Some("List") {
                        for item in d.member("items").as_array().cloned().unwrap_or_default() {
                            out.push((label.clone(), item));
                        }
                    } else if !d.is_null() {
                        out.push((label.clone(), d));
                    }
                }
            }
            Err(e) => {
                run.fail(&format!("error parsing {label}: {e}"));
                return None;
            }
        }
    }
    Some(out)
}

fn mapping_of(run: &Run<'_, '_>, obj: &Value) -> Result<Mapping, String> {
    let api_version = obj
        .field("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = obj.field("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    run.mapper
        .mappings
        .iter()
        .find(|m| m.group == group && m.kind == kind)
        .cloned()
        .ok_or_else(|| {
            format!(
                "no matches for kind \"{kind}\" in version \"{}\"",
                if group.is_empty() {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                }
            )
        })
}

/// `apply` or `create`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Apply,
    Create,
    /// `replace -f`: a GET for the live resourceVersion when the file has none, then a PUT
    /// [cli-runtime pkg/resource/helper.go `Replace`; kubectl pkg/cmd/replace/replace.go].
    Replace,
}

pub fn apply(run: &mut Run<'_, '_>, p: &Parsed, mode: Mode) -> Option<()> {
    if mode != Mode::Apply && !p.args.is_empty() {
        run.fail(&format!(
            "kubectl create {} is not simulated by this terminal; write the object and use kubectl create -f or kubectl apply -f",
            p.args[0]
        ));
        return None;
    }
    if p.values("filename").is_empty() {
        let verb = if mode == Mode::Apply {
            "apply"
        } else {
            "create"
        };
        run.stderr("error: must specify one of -f and -k\n\n");
        let _ = verb;
        run.out.code = 1;
        return None;
    }
    let docs = read_files(run, p)?;
    for (file, mut obj) in docs {
        let m = match mapping_of(run, &obj) {
            Ok(m) => m,
            Err(_)
                if p.value("validate")
                    .is_none_or(|v| !matches!(v, "false" | "ignore")) =>
            {
                // kubectl validates against the server's OpenAPI for the object's group
                // version first; Converge serves none for a group it does not have, and this
                // is what kubectl then prints [kubectl pkg/cmd/util/helpers.go
                // `GetValidationDirective`; cli-runtime resource/query_param_verifier.go].
                run.fail(&format!(
                    "error validating \"{file}\": error validating data: failed to download openapi: the server could not find the requested resource; if you choose to ignore these errors, turn validation off with --validate=false"
                ));
                continue;
            }
            Err(e) => {
                let name = name_of(&obj).to_owned();
                let ns = obj
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                run.fail(&format!(
                    "resource mapping not found for name: \"{name}\" namespace: \"{ns}\" from \"{file}\": {e}\nensure CRDs are installed first"
                ));
                continue;
            }
        };
        let ns = if m.namespaced {
            match obj.pointer("/metadata/namespace").and_then(Value::as_str) {
                Some(n) if !n.is_empty() => n.to_owned(),
                _ => run.namespace.clone(),
            }
        } else {
            String::new()
        };
        if m.namespaced {
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("namespace", json!(ns));
            }
        }
        let name = name_of(&obj).to_owned();
        match mode {
            Mode::Create => {
                let answer = run.send(Call::with_body(
                    "POST",
                    m.collection_path(&ns),
                    query(&[
                        ("fieldManager", "kubectl-create"),
                        ("fieldValidation", "Strict"),
                    ]),
                    "application/json",
                    &obj,
                ));
                if answer.ok() {
                    let created = name_of(&answer.body).to_owned();
                    run.stdout(&format!("{}/{created} created\n", m.kind_prefix()));
                } else {
                    let (reason, msg) = reason_and_message(&answer.body);
                    run.stderr(&format!(
                        "Error from server ({reason}): error when creating \"{file}\": {msg}\n"
                    ));
                    run.out.code = 1;
                }
            }
            Mode::Apply => apply_one(run, &m, &ns, &name, &file, obj),
            Mode::Replace => replace_one(run, &m, &ns, &name, &file, obj, p.value("subresource")),
        }
    }
    Some(())
}

fn replace_one(
    run: &mut Run<'_, '_>,
    m: &Mapping,
    ns: &str,
    name: &str,
    file: &str,
    mut obj: Value,
    subresource: Option<&str>,
) {
    // Any subresource goes to the server, which answers 404 for one it does not serve.
    let sub = subresource.map(|s| format!("/{s}")).unwrap_or_default();
    // The last-applied annotation, when the file carries one, is rewritten from the file
    // (`CreateOrUpdateAnnotation` without --save-config).
    let has_last_applied = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .is_some();
    if has_last_applied {
        let config = last_applied(&obj);
        if let Some(a) = obj
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut)
        {
            a.insert(LAST_APPLIED, json!(config));
        }
    }
    let path = format!("{}{sub}", m.object_path(ns, name));
    let failed = |run: &mut Run<'_, '_>, a: &super::client::Answer| {
        let reason = a.body.member("reason").as_str().unwrap_or("").to_owned();
        let msg = a.body.member("message").as_str().unwrap_or("").to_owned();
        run.stderr(&format!(
            "Error from server ({reason}): error when replacing \"{file}\": {msg}\n"
        ));
        run.out.code = 1;
    };
    let rv_missing = obj
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if rv_missing {
        let got = run.send(Call::get(path.clone(), String::new(), "application/json"));
        // A failed read still sends the PUT, without a resourceVersion.
        if let (true, Some(meta)) = (
            got.ok(),
            obj.get_mut("metadata").and_then(Value::as_object_mut),
        ) {
            meta.insert(
                "resourceVersion",
                got.body
                    .member("metadata")
                    .member("resourceVersion")
                    .clone(),
            );
        }
    }
    let a = run.send(Call::with_body(
        "PUT",
        path,
        query(&[
            ("fieldManager", "kubectl-replace"),
            ("fieldValidation", "Strict"),
        ]),
        "application/json",
        &obj,
    ));
    if a.ok() {
        run.stdout(&format!("{}/{name} replaced\n", m.kind_prefix()));
    } else {
        failed(run, &a);
    }
}

/// The last-applied annotation's value: the manifest as compact JSON with `annotations: {}`
/// (without the annotation itself), and a newline [kubectl pkg/util/apply.go
/// `GetModifiedConfiguration`].
fn last_applied(obj: &Value) -> String {
    let mut o = obj.clone();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        let ann = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = ann.as_object_mut() {
            a.remove(LAST_APPLIED);
        } else {
            *ann = json!({});
        }
    }
    format!("{}\n", encode::compact_json(&o))
}

fn apply_one(run: &mut Run<'_, '_>, m: &Mapping, ns: &str, name: &str, file: &str, obj: Value) {
    let config = last_applied(&obj);
    let mut modified = obj.clone();
    if let Some(meta) = modified.get_mut("metadata").and_then(Value::as_object_mut) {
        let ann = meta.entry("annotations").or_insert_with(|| json!({}));
        if !ann.is_object() {
            *ann = json!({});
        }
        if let Some(a) = ann.as_object_mut() {
            a.insert(LAST_APPLIED, json!(config));
        }
    }
    let got = run.send(Call::get(
        m.object_path(ns, name),
        String::new(),
        "application/json",
    ));
    if got.status == 404 {
        let answer = run.send(Call::with_body(
            "POST",
            m.collection_path(ns),
            query(&[
                ("fieldManager", "kubectl-client-side-apply"),
                ("fieldValidation", "Strict"),
            ]),
            "application/json",
            &modified,
        ));
        if answer.ok() {
            run.stdout(&format!("{}/{name} created\n", m.kind_prefix()));
        } else {
            let (reason, msg) = reason_and_message(&answer.body);
            run.stderr(&format!(
                "Error from server ({reason}): error when creating \"{file}\": {msg}\n"
            ));
            run.out.code = 1;
        }
        return;
    }
    if !got.ok() {
        run.server_error(&got);
        return;
    }
    let current = got.body;
    let original = match current
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
    {
        Some(s) => serde_json::from_str(s).unwrap_or(json!({})),
        None => {
            run.stderr(&format!(
                "Warning: resource {}/{name} is missing the {LAST_APPLIED} annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n",
                m.resource
            ));
            json!({})
        }
    };
    let builtin = crate::api::kinds::Registry::is_builtin(&crate::api::GroupResource::new(
        &m.group,
        &m.resource,
    ));
    let strategy = if builtin {
        Strategy::Strategic
    } else {
        Strategy::Merge
    };
    let patch = three_way(
        &m.resource,
        &mut Vec::new(),
        &original,
        &modified,
        &current,
        strategy,
    );
    if patch.as_object().is_none_or(Map::is_empty) {
        run.stdout(&format!("{}/{name} unchanged\n", m.kind_prefix()));
        return;
    }
    let content_type = if builtin { STRATEGIC } else { MERGE };
    let answer = run.send(Call::with_body(
        "PATCH",
        m.object_path(ns, name),
        query(&[
            ("fieldManager", "kubectl-client-side-apply"),
            ("fieldValidation", "Strict"),
        ]),
        content_type,
        &patch,
    ));
    if answer.ok() {
        run.stdout(&format!("{}/{name} configured\n", m.kind_prefix()));
    } else {
        run.server_error(&answer);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Strategic,
    Merge,
}

/// A three-way patch from the last applied configuration (`original`), the new one
/// (`modified`) and the live object (`current`): what the user removed since the last apply
/// becomes `null`, what differs from the live object is set, and lists with a merge key are
/// patched element by element with `$setElementOrder` and `$patch: delete`
/// [strategicpatch patch.go `CreateThreeWayMergePatch`, `diffMaps`, `diffLists`].
fn three_way(
    resource: &str,
    path: &mut Vec<String>,
    original: &Value,
    modified: &Value,
    current: &Value,
    s: Strategy,
) -> Value {
    let empty = Map::new();
    let o = original.as_object().unwrap_or(&empty);
    let md = modified.as_object().unwrap_or(&empty);
    let c = current.as_object().unwrap_or(&empty);
    let mut patch = Map::new();
    for (k, mv) in md {
        let cv = c.get(k);
        let ov = o.get(k).unwrap_or(&Value::Null);
        match (mv, cv) {
            (Value::Object(_), Some(cv @ Value::Object(_))) => {
                path.push(k.to_string());
                let sub = three_way(resource, path, ov, mv, cv, s);
                path.pop();
                if sub.as_object().is_some_and(|m| !m.is_empty()) {
                    patch.insert(k.clone(), sub);
                }
            }
            (Value::Array(ma), Some(Value::Array(ca))) if s == Strategy::Strategic => {
                match crate::api::strategic::merge_key(resource, path, k) {
                    Some(key) => {
                        let oa = ov.as_array().cloned().unwrap_or_default();
                        path.push(k.to_string());
                        let diff = list_diff(resource, path, key, &oa, ma, ca);
                        path.pop();
                        if let Some(items) = diff {
                            patch.insert(
                                format!("$setElementOrder/{k}"),
                                Value::Array(ma.iter().map(|e| json!({key: e.get(key).cloned().unwrap_or(Value::Null)})).collect()),
                            );
                            patch.insert(k.clone(), Value::Array(items.into()));
                        }
                    }
                    None => {
                        if mv != cv.unwrap_or(&Value::Null) {
                            patch.insert(k.clone(), mv.clone());
                        }
                    }
                }
            }
            _ => {
                if Some(mv) != cv {
                    patch.insert(k.clone(), mv.clone());
                }
            }
        }
    }
    for k in o.keys() {
        if !md.contains_key(k) {
            patch.insert(k.clone(), Value::Null);
        }
    }
    Value::Object(patch)
}

fn list_diff(
    resource: &str,
    path: &mut Vec<String>,
    key: &str,
    o: &[Value],
    m: &[Value],
    c: &[Value],
) -> Option<Vec<Value>> {
    let find = |list: &[Value], kv: &Value| list.iter().find(|e| e.get(key) == Some(kv)).cloned();
    let mut items = Vec::new();
    for e in m {
        let Some(kv) = e.get(key) else {
            continue;
        };
        match find(c, kv) {
            None => items.push(e.clone()),
            Some(ce) => {
                let oe = find(o, kv).unwrap_or(json!({}));
                let sub = three_way(resource, path, &oe, e, &ce, Strategy::Strategic);
                if let Some(map) = sub.as_object().filter(|m| !m.is_empty()) {
                    let mut with_key = map.clone();
                    with_key.insert(key.to_owned(), kv.clone());
                    items.push(Value::Object(with_key));
                }
            }
        }
    }
    for oe in o {
        if let Some(kv) = oe.get(key) {
            if find(m, kv).is_none() {
                items.push(json!({"$patch": "delete", key: kv}));
            }
        }
    }
    (!items.is_empty()).then_some(items)
}

pub fn delete(run: &mut Run<'_, '_>, p: &Parsed) -> Option<()> {
    let policy = match p.value("cascade").unwrap_or("background") {
        "background" | "true" => "Background",
        "foreground" => "Foreground",
        "orphan" | "false" => "Orphan",
        other => {
            run.fail(&format!(
                "invalid cascade value ({other}). Must be \"background\", \"foreground\", or \"orphan\""
            ));
            return None;
        }
    };
    let mut grace: Option<i64> = match p.value("grace-period") {
        Some(g) => match g.parse::<i64>() {
            Ok(n) if n >= 0 => Some(n),
            Ok(_) => None,
            Err(_) => {
                run.stderr(&format!("Error: invalid argument \"{g}\" for \"--grace-period\" flag: strconv.ParseInt: parsing \"{g}\": invalid syntax\nSee 'kubectl delete --help' for usage.\n"));
                run.out.code = 1;
                return None;
            }
        },
        None => None,
    };
    if p.bool("now") {
        if grace.is_some() {
            run.fail("--now and --grace-period cannot be specified together");
            return None;
        }
        grace = Some(1);
    }
    let force = p.bool("force");
    if force && grace.is_none() {
        grace = Some(0);
    }
    if grace == Some(0) && !force {
        grace = Some(1);
    }
    let mut objs: Vec<(Mapping, String, String)> = Vec::new();
    if !p.values("filename").is_empty() {
        for (_, obj) in read_files(run, p)? {
            match mapping_of(run, &obj) {
                Ok(m) => {
                    let ns = if m.namespaced {
                        obj.pointer("/metadata/namespace")
                            .and_then(Value::as_str)
                            .unwrap_or(&run.namespace)
                            .to_owned()
                    } else {
                        String::new()
                    };
                    objs.push((m, ns, name_of(&obj).to_owned()));
                }
                Err(e) => {
                    run.fail(&e);
                    return None;
                }
            }
        }
    } else if let Some(sel) = p.value("selector") {
        let mapper = run.mapper.clone();
        let t = match super::targets(&mapper, &p.args) {
            Ok(t) => t,
            Err(e) => {
                run.fail(&e);
                return None;
            }
        };
        for (m, _) in t.groups {
            let ns = ns_for(run, m).to_owned();
            let list = run.send(Call::get(
                m.collection_path(&ns),
                query(&[("labelSelector", sel)]),
                "application/json",
            ));
            if !list.ok() {
                run.server_error(&list);
                return None;
            }
            for item in list
                .body
                .member("items")
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                objs.push((m.clone(), ns.clone(), name_of(&item).to_owned()));
            }
        }
        if objs.is_empty() {
            run.stderr("No resources found\n");
            return Some(());
        }
    } else {
        if p.args.is_empty() {
            run.fail("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'");
            return None;
        }
        let list = named(run, p, 1)?;
        if run.out.code != 0 {
            return None;
        }
        if list.is_empty() {
            run.fail("resource(s) were provided, but no name was specified");
            return None;
        }
        for (m, name) in list {
            let ns = ns_for(run, &m).to_owned();
            objs.push((m, ns, name));
        }
    }
    if force && grace == Some(0) {
        run.stderr("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n");
    }
    for (m, ns, name) in objs {
        let mut body = json!({"propagationPolicy": policy});
        if let Some(g) = grace {
            body["gracePeriodSeconds"] = json!(g);
        }
        let answer = run.send(Call::with_body(
            "DELETE",
            m.object_path(&ns, &name),
            String::new(),
            "application/json",
            &body,
        ));
        if answer.ok() {
            let how = if force && grace == Some(0) {
                "force deleted"
            } else {
                "deleted"
            };
            let line = if ns.is_empty() || !run.namespace_explicit {
                format!("{} \"{name}\" {how}\n", m.kind_prefix())
            } else {
                format!("{} \"{name}\" {how} from {ns} namespace\n", m.kind_prefix())
            };
            run.stdout(&line);
        } else if !(answer.status == 404 && p.bool("ignore-not-found")) {
            run.server_error(&answer);
        }
    }
    Some(())
}

pub fn patch(run: &mut Run<'_, '_>, p: &Parsed) -> Option<()> {
    let content_type = match p.value("type").unwrap_or("strategic") {
        "strategic" => STRATEGIC,
        "merge" => MERGE,
        "json" => JSON_PATCH,
        other => {
            run.fail(&format!(
                "--type must be one of [json merge strategic], not \"{other}\""
            ));
            return None;
        }
    };
    let Some(text) = p.value("patch") else {
        run.fail("must specify --patch or --patch-file containing the contents of the patch");
        return None;
    };
    let body = match serde_json::from_str::<Value>(text)
        .map(|v| vec![v])
        .or_else(|_| crate::parse::parse_documents(text))
    {
        Ok(mut docs) if docs.len() == 1 => docs.remove(0),
        Ok(_) => {
            run.fail("unable to parse the patch: a patch is one JSON or YAML document");
            return None;
        }
        Err(e) => {
            run.fail(&format!("unable to parse \"{text}\": {e}"));
            return None;
        }
    };
    let sub = match p.value("subresource") {
        None => String::new(),
        Some(s @ ("status" | "scale")) => format!("/{s}"),
        Some(other) => {
            run.fail(&format!(
                "invalid subresource value: \"{other}\". Must be one of [status scale]"
            ));
            return None;
        }
    };
    let objs = named(run, p, 1)?;
    if run.out.code != 0 {
        return None;
    }
    for (m, name) in objs {
        let ns = ns_for(run, &m).to_owned();
        let path = format!("{}{sub}", m.object_path(&ns, &name));
        let before = run.send(Call::get(path.clone(), String::new(), "application/json"));
        if !before.ok() {
            run.server_error(&before);
            continue;
        }
        let answer = run.send(Call::with_body(
            "PATCH",
            path,
            query(&[("fieldManager", "kubectl-patch")]),
            content_type,
            &body,
        ));
        if !answer.ok() {
            run.server_error(&answer);
            continue;
        }
        let change = if answer.body == before.body {
            " (no change)"
        } else {
            ""
        };
        run.stdout(&format!("{}/{name} patched{change}\n", m.kind_prefix()));
    }
    Some(())
}

/// Which metadata map `label` or `annotate` edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaField {
    Labels,
    Annotations,
}

pub fn label(run: &mut Run<'_, '_>, p: &Parsed, field: MetaField) -> Option<()> {
    let (key, what, done, undone, not_done) = match field {
        MetaField::Labels => ("labels", "label", "labeled", "unlabeled", "not labeled"),
        MetaField::Annotations => (
            "annotations",
            "annotation",
            "annotated",
            "annotated",
            "annotated",
        ),
    };
    let (changes, resources): (Vec<String>, Vec<String>) = p.args.iter().cloned().partition(|a| {
        a.contains('=')
            || (a.ends_with('-') && !a.contains('/') && a.len() > 1 && !resource_like(a))
    });
    if changes.is_empty() {
        run.fail(&format!("at least one {what} update is required"));
        return None;
    }
    let mut set: BTreeMap<String, String> = BTreeMap::new();
    let mut remove: Vec<String> = Vec::new();
    for c in &changes {
        if let Some((k, v)) = c.split_once('=') {
            set.insert(k.to_owned(), v.to_owned());
        } else if let Some(k) = c.strip_suffix('-') {
            remove.push(k.to_owned());
        }
    }
    let sub = Parsed {
        flags: p.flags.clone(),
        args: resources,
    };
    let objs = named(run, &sub, 1)?;
    if run.out.code != 0 {
        return None;
    }
    if objs.is_empty() {
        run.fail(
            "one or more resources must be specified as <resource> <name> or <resource>/<name>",
        );
        return None;
    }
    let overwrite = p.bool("overwrite");
    for (m, name) in objs {
        let ns = ns_for(run, &m).to_owned();
        let path = m.object_path(&ns, &name);
        let got = run.send(Call::get(path.clone(), String::new(), "application/json"));
        if !got.ok() {
            run.server_error(&got);
            continue;
        }
        let old: Map = got
            .body
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut new = old.clone();
        let mut refused = false;
        for (k, v) in &set {
            if let Some(existing) = old.get(k).and_then(Value::as_str) {
                if existing != v && !overwrite {
                    run.fail(&format!(
                        "'{k}' already has a value ({existing}), and --overwrite is false"
                    ));
                    refused = true;
                    break;
                }
            }
            new.insert(k.clone(), json!(v));
        }
        if refused {
            continue;
        }
        for k in &remove {
            if new.remove(k).is_none() {
                run.stdout(&format!("{what} \"{k}\" not found.\n"));
            }
        }
        let old_len = encode::compact_json(&got.body).len();
        let mut after = got.body.clone();
        after["metadata"][key] = Value::Object(new.clone());
        if new.is_empty() && got.body.pointer(&format!("/metadata/{key}")).is_none() {
            if let Some(meta) = after["metadata"].as_object_mut() {
                meta.remove(key);
            }
        }
        let changed = old != new;
        let mut patch_map = Map::new();
        for (k, v) in &new {
            if old.get(k) != Some(v) {
                patch_map.insert(k.clone(), v.clone());
            }
        }
        for k in old.keys() {
            if !new.contains_key(k) {
                patch_map.insert(k.clone(), Value::Null);
            }
        }
        let patch = if patch_map.is_empty() {
            json!({})
        } else {
            json!({"metadata": {key: patch_map}})
        };
        let answer = run.send(Call::with_body("PATCH", path, String::new(), MERGE, &patch));
        if !answer.ok() {
            run.server_error(&answer);
            continue;
        }
        let msg = if !changed {
            not_done
        } else if !overwrite && encode::compact_json(&after).len() < old_len {
            undone
        } else {
            done
        };
        run.stdout(&format!("{}/{name} {msg}\n", m.kind_prefix()));
    }
    Some(())
}

/// Whether `a` (ending in `-`) reads as a resource type rather than a key to remove; kubectl
/// decides by `=`/`-` alone, so this only keeps `TYPE/NAME-` forms together.
fn resource_like(a: &str) -> bool {
    a.contains('/')
}

/// A refusal's `reason` and `message` (empty when absent), for kubectl's error lines.
fn reason_and_message(status: &Value) -> (&str, &str) {
    let text = |key| status.member(key).as_str().unwrap_or("");
    (text("reason"), text("message"))
}
