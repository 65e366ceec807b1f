//! `kubectl auth can-i` (a SelfSubjectAccessReview: `yes`, or `no` and exit code 1) and
//! `kubectl auth whoami` (a SelfSubjectReview) [kubectl pkg/cmd/auth/cani.go
//! `RunAccessCheck`, whoami.go].

use crate::json::{json, Value};

use super::args::{flag, unsupported, FlagSpec, Parsed, Takes};
use super::client::Call;
use super::{tabwriter, Run};

pub const CAN_I_FLAGS: &[FlagSpec] = &[
    flag("subresource", None, Takes::Value),
    flag("all-namespaces", Some('A'), Takes::Bool),
    flag("quiet", Some('q'), Takes::Bool),
    unsupported("list", None, Takes::Bool),
    unsupported("no-headers", None, Takes::Bool),
];

pub fn can_i(run: &mut Run<'_, '_>, p: &Parsed) -> Option<()> {
    let (verb, target) = match p.args.as_slice() {
        [verb, target] => (verb.clone(), target.clone()),
        [verb, target, _name] => (verb.clone(), target.clone()),
        _ => {
            run.stderr("error: you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kubectl auth can-i -h' for help and examples\n");
            run.out.code = 1;
            return None;
        }
    };
    if target.starts_with('/') {
        run.fail("non-resource URLs are not simulated by this terminal");
        return None;
    }
    let (typed, name) = match target.split_once('/') {
        Some((t, n)) => (t.to_owned(), n.to_owned()),
        None => (target.clone(), p.args.get(2).cloned().unwrap_or_default()),
    };
    let all = p.bool("all-namespaces");
    let mut cluster_scoped = false;
    let (group, resource) = match run.mapper.resolve(&typed) {
        Ok(m) => {
            cluster_scoped = !m.namespaced;
            (m.group.clone(), m.resource.clone())
        }
        Err(_) => {
            run.stderr(&format!(
                "Warning: the server doesn't have a resource type '{typed}'\n\n"
            ));
            match typed.split_once('.') {
                Some((r, g)) => (g.to_owned(), r.to_owned()),
                None => (String::new(), typed.clone()),
            }
        }
    };
    if cluster_scoped && !all {
        run.stderr(&format!(
            "Warning: resource '{resource}' is not namespace scoped\n\n"
        ));
    }
    let ns = if all || cluster_scoped {
        String::new()
    } else {
        run.namespace.clone()
    };
    let mut attrs = json!({"namespace": ns, "verb": verb, "group": group, "resource": resource});
    if let Some(s) = p.value("subresource") {
        attrs["subresource"] = json!(s);
    }
    if !name.is_empty() {
        attrs["name"] = json!(name);
    }
    let review = json!({
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {"resourceAttributes": attrs},
        "status": {"allowed": false},
    });
    let a = run.send(Call::with_body(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews".into(),
        String::new(),
        "application/json",
        &review,
    ));
    if !a.ok() {
        run.server_error(&a);
        return None;
    }
    let allowed = a
        .body
        .pointer("/status/allowed")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if p.bool("quiet") {
    } else if allowed {
        run.stdout("yes\n");
    } else {
        let mut line = "no".to_owned();
        for k in ["reason", "evaluationError"] {
            if let Some(r) = a
                .body
                .pointer(&format!("/status/{k}"))
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                line.push_str(" - ");
                line.push_str(r);
            }
        }
        line.push('\n');
        run.stdout(&line);
    }
    if !allowed {
        run.out.code = 1;
    }
    Some(())
}

pub fn whoami(run: &mut Run<'_, '_>, _p: &Parsed) -> Option<()> {
    let body = json!({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": null}, "status": {"userInfo": {}}});
    let a = run.send(Call::with_body(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews".into(),
        String::new(),
        "application/json",
        &body,
    ));
    if !a.ok() {
        run.server_error(&a);
        return None;
    }
    let user = a
        .body
        .pointer("/status/userInfo/username")
        .and_then(Value::as_str)
        .unwrap_or("");
    let groups: Vec<&str> = a
        .body
        .pointer("/status/userInfo/groups")
        .and_then(Value::as_array)
        .map(|g| g.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut text = format!("ATTRIBUTE\tVALUE\nUsername\t{user}\n");
    if !groups.is_empty() {
        text.push_str(&format!("Groups\t[{}]\n", groups.join(" ")));
    }
    run.stdout(&tabwriter::align(&text));
    Some(())
}
