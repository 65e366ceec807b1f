//! `kubectl rollout status|history|undo|restart|pause|resume` for Deployments, and `status` and
//! `history` for StatefulSets and DaemonSets [kubectl pkg/cmd/rollout; pkg/polymorphichelpers
//! `DeploymentHistoryViewer`, `StatefulSetHistoryViewer`, `DaemonSetHistoryViewer`,
//! `DeploymentRollbacker`, `defaultObjectPauser`, `defaultObjectResumer`,
//! `defaultObjectRestarter`].

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::args::{flag, unsupported, FlagSpec, Parsed, Takes};
use super::client::{query, Call, Mapping};
use super::{named, Run};

pub const FLAGS: &[FlagSpec] = &[
    flag("revision", None, Takes::Value),
    flag("to-revision", None, Takes::Value),
    flag("watch", Some('w'), Takes::Bool),
    unsupported("timeout", None, Takes::Value),
    unsupported("selector", Some('l'), Takes::Value),
    unsupported("filename", Some('f'), Takes::Value),
    unsupported("output", Some('o'), Takes::Value),
    unsupported("dry-run", None, Takes::Value),
    unsupported("recursive", Some('R'), Takes::Bool),
];

const SKIP: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
];

pub fn rollout(run: &mut Run<'_, '_>, sub: &str, p: &Parsed) -> Option<()> {
    if !["status", "history", "undo", "restart", "pause", "resume"].contains(&sub) {
        run.stderr(&format!(
            "Error: unknown command \"{sub}\" for \"kubectl rollout\"\n"
        ));
        run.out.code = 1;
        return None;
    }
    let objs = named(run, p, 1)?;
    if run.out.code != 0 {
        return None;
    }
    if objs.is_empty() {
        run.fail("required resource not specified");
        return None;
    }
    for (m, name) in objs {
        let ns = if m.namespaced {
            run.namespace.clone()
        } else {
            String::new()
        };
        let path = m.object_path(&ns, &name);
        let got = run.send(Call::get(path.clone(), String::new(), "application/json"));
        if !got.ok() {
            run.server_error(&got);
            continue;
        }
        let obj = got.body;
        // kubectl's status and history viewers cover StatefulSets and DaemonSets too.
        let workload = matches!(m.kind.as_str(), "StatefulSet" | "DaemonSet");
        if workload && sub == "history" {
            let prefix = format!("{}/{name}", m.kind_prefix());
            revision_history(run, &ns, &obj, &prefix, p);
            continue;
        }
        if m.kind != "Deployment" && !(workload && sub == "status") {
            run.fail(&format!(
                "kubectl rollout {sub} of a {} is not simulated by this terminal",
                m.kind
            ));
            continue;
        }
        let prefix = format!("{}/{name}", m.kind_prefix());
        let quoted = format!("{} \"{name}\"", m.group_resource());
        match sub {
            "status" => {
                let revision = p.value("revision").and_then(|r| r.parse().ok());
                match crate::rollout::rollout_status(&obj, revision) {
                    Ok(s) => {
                        run.stdout(&s.message);
                        // kubectl keeps watching until the rollout is done (--watch, the
                        // default); the playground's terminal follows it as the world moves.
                        if !s.done && p.value("watch") != Some("false") {
                            let key = crate::api::ObjectKey::new(
                                crate::api::GroupResource::new(&m.group, &m.resource),
                                &ns,
                                &name,
                            );
                            run.out.watch = Some(Box::new(super::watch::Watch::rollout_status(
                                key, s.message,
                            )));
                        }
                    }
                    Err(e) => run.fail(&e.message),
                }
            }
            "pause" | "resume" => {
                let pause = sub == "pause";
                let paused = obj
                    .pointer("/spec/paused")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if paused == pause {
                    let state = if pause {
                        "already paused"
                    } else {
                        "not paused"
                    };
                    run.fail(&format!("{quoted} is {state}"));
                    continue;
                }
                // The typed field is `paused,omitempty`: resuming removes it.
                let patch = if pause {
                    json!({"spec": {"paused": true}})
                } else {
                    json!({"spec": {"paused": null}})
                };
                let a = run.send(Call::with_body(
                    "PATCH",
                    path,
                    query(&[("fieldManager", "kubectl-rollout")]),
                    "application/strategic-merge-patch+json",
                    &patch,
                ));
                if a.ok() {
                    run.stdout(&format!("{prefix} {}d\n", sub));
                } else {
                    run.server_error(&a);
                }
            }
            "restart" => {
                if obj.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
                    run.fail("can't restart paused deployment (run rollout resume first)");
                    continue;
                }
                let now = run.session.world().now().to_string();
                let patch = json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": now}}}}});
                let a = run.send(Call::with_body(
                    "PATCH",
                    path,
                    query(&[("fieldManager", "kubectl-rollout")]),
                    "application/strategic-merge-patch+json",
                    &patch,
                ));
                if a.ok() {
                    run.stdout(&format!("{prefix} restarted\n"));
                } else {
                    run.server_error(&a);
                }
            }
            "history" => history(run, &m, &ns, &obj, &prefix, p),
            _ => undo(run, &m, &ns, &obj, &prefix, p),
        }
    }
    Some(())
}

/// `metav1.IsControlledBy`: an owner reference to `uid` marked controller.
fn controlled_by(obj: &Value, uid: &Value) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|o| {
            o.iter()
                .any(|o| o.member("uid") == uid && o.member("controller") == true)
        })
}

/// `StatefulSetHistoryViewer` / `DaemonSetHistoryViewer` [polymorphichelpers/history.go]: the
/// ControllerRevisions the set's selector selects and the set controls, by revision, each with
/// its `kubernetes.io/change-cause`.
fn revision_history(run: &mut Run<'_, '_>, ns: &str, obj: &Value, prefix: &str, p: &Parsed) {
    if p.value("revision").is_some_and(|r| r != "0") {
        run.fail("kubectl rollout history --revision is not simulated by this terminal");
        return;
    }
    let Ok(cr) = run.mapper.resolve("controllerrevisions").cloned() else {
        return;
    };
    let selector = crate::api::selector::label_selector_string(obj.pointer("/spec/selector"))
        .unwrap_or_default();
    let list = run.send(Call::get(
        cr.collection_path(ns),
        query(&[("labelSelector", &selector)]),
        "application/json",
    ));
    if !list.ok() {
        run.server_error(&list);
        return;
    }
    let uid = obj.pointer("/metadata/uid").cloned().unwrap_or(Value::Null);
    let mut revisions: Vec<(i64, String)> = list
        .body
        .member("items")
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| controlled_by(r, &uid))
        .map(|r| {
            let cause = r
                .pointer("/metadata/annotations/kubernetes.io~1change-cause")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            (r.member("revision").as_i64().unwrap_or(0), cause.to_owned())
        })
        .collect();
    revisions.sort_by_key(|(rev, _)| *rev);
    if revisions.is_empty() {
        run.stdout(&format!("{prefix} \nNo rollout history found.\n"));
        return;
    }
    print_history(run, prefix, revisions);
}

/// `printHistory`: a tabwriter with minwidth 0 and padding 2 [polymorphichelpers/history.go].
fn print_history(run: &mut Run<'_, '_>, prefix: &str, revisions: Vec<(i64, String)>) {
    let mut rows = vec![("REVISION".to_owned(), "CHANGE-CAUSE".to_owned())];
    rows.extend(revisions.into_iter().map(|(r, c)| (r.to_string(), c)));
    let w = rows
        .iter()
        .map(|(r, _)| r.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut text = format!("{prefix} \n");
    for (r, c) in rows {
        text.push_str(&format!("{r:<w$}{c}\n"));
    }
    text.push('\n');
    run.stdout(&text);
}

/// The ReplicaSets a Deployment owns, with their revisions, oldest first.
fn owned_replicasets(
    run: &mut Run<'_, '_>,
    ns: &str,
    deployment: &Value,
) -> Result<Vec<(i64, Value)>, ()> {
    let uid = deployment
        .pointer("/metadata/uid")
        .cloned()
        .unwrap_or(Value::Null);
    let Ok(rs) = run.mapper.resolve("replicasets").cloned() else {
        return Err(());
    };
    let list = run.send(Call::get(
        rs.collection_path(ns),
        String::new(),
        "application/json",
    ));
    if !list.ok() {
        run.server_error(&list);
        return Err(());
    }
    let mut out: Vec<(i64, Value)> = list
        .body
        .member("items")
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| controlled_by(r, &uid))
        .filter_map(|r| {
            let rev = r
                .pointer("/metadata/annotations/deployment.kubernetes.io~1revision")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok())?;
            Some((rev, r))
        })
        .collect();
    out.sort_by_key(|(rev, _)| *rev);
    Ok(out)
}

fn history(run: &mut Run<'_, '_>, _m: &Mapping, ns: &str, obj: &Value, prefix: &str, p: &Parsed) {
    let Ok(rss) = owned_replicasets(run, ns, obj) else {
        return;
    };
    if let Some(r) = p
        .value("revision")
        .and_then(|r| r.parse::<i64>().ok())
        .filter(|r| *r > 0)
    {
        let _ = r;
        run.fail("kubectl rollout history --revision is not simulated by this terminal");
        return;
    }
    if rss.is_empty() {
        run.stdout(&format!("{prefix} \nNo rollout history found.\n"));
        return;
    }
    let revisions = rss
        .iter()
        .map(|(rev, rs)| {
            let cause = rs
                .pointer("/metadata/annotations/kubernetes.io~1change-cause")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            (*rev, cause.to_owned())
        })
        .collect();
    print_history(run, prefix, revisions);
}

fn undo(run: &mut Run<'_, '_>, m: &Mapping, ns: &str, obj: &Value, prefix: &str, p: &Parsed) {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let Ok(rss) = owned_replicasets(run, ns, obj) else {
        return;
    };
    let to = p
        .value("to-revision")
        .and_then(|r| r.parse::<i64>().ok())
        .unwrap_or(0);
    let target = if to > 0 {
        match rss.iter().find(|(r, _)| *r == to) {
            Some(t) => t.clone(),
            None => {
                run.fail(&format!(
                    "unable to find specified revision {to} in history"
                ));
                return;
            }
        }
    } else {
        if rss.len() < 2 {
            run.fail(&format!(
                "no rollout history found for deployment \"{name}\""
            ));
            return;
        }
        rss[rss.len() - 2].clone()
    };
    let (rev, rs) = target;
    let mut template = rs.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let strip = |t: &Value| {
        let mut t = t.clone();
        if let Some(l) = t
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            l.remove("pod-template-hash");
        }
        t
    };
    if strip(obj.pointer("/spec/template").unwrap_or(&Value::Null)) == strip(&template) {
        run.stdout(&format!(
            "{prefix} skipped rollback (current template already matches revision {rev})\n"
        ));
        return;
    }
    template = strip(&template);
    // kubectl sends the typed PodTemplateSpec, whose ObjectMeta always carries
    // `creationTimestamp` (null when unset) [polymorphichelpers/rollback.go `getDeploymentPatch`].
    if let Some(meta) = template.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("creationTimestamp", Value::Null);
    } else {
        template["metadata"] = json!({"creationTimestamp": null});
    }
    let mut annotations = crate::json::Map::new();
    if let Some(a) = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        for k in SKIP {
            if let Some(v) = a.get(k) {
                annotations.insert((*k).to_owned(), v.clone());
            }
        }
    }
    if let Some(a) = rs
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        for (k, v) in a {
            if !SKIP.contains(&k.as_str()) {
                annotations.insert(k.clone(), v.clone());
            }
        }
    }
    let patch = json!([
        {"op": "replace", "path": "/spec/template", "value": template},
        {"op": "replace", "path": "/metadata/annotations", "value": annotations},
    ]);
    let a = run.send(Call::with_body(
        "PATCH",
        m.object_path(ns, &name),
        String::new(),
        "application/json-patch+json",
        &patch,
    ));
    if a.ok() {
        run.stdout(&format!("{prefix} rolled back\n"));
    } else {
        run.server_error(&a);
    }
}
