//! `converge export`: a scenario as a shell script for a real cluster (kind, k3d, ...), so a
//! story told in the simulation can be replayed where the simulation ends. The scenario's
//! objects are created as `admin`, then each action is the kubectl command a person would type,
//! as the action's principal (`--as`), after the pause its time gives. Faults, image behaviours
//! and expectations have no kubectl form: they become comments that say what the simulation did.

use crate::api::meta::Fields;
use crate::json::Value;

use super::compile::{compile, CompiledAction};
use super::format::Scenario;
use super::ScenarioError;
use crate::api::{ApiRequest, PatchType, RequestBody, Verb};
use crate::engine::Input;

/// The word that ends each heredoc (never in a JSON document).
const EOF_MARK: &str = "CONVERGE_EOF";

/// `deployments.apps`, or `pods` for the core group: the form kubectl takes.
fn resource(req: &ApiRequest) -> String {
    req.gr.qualified()
}

fn namespace_flag(req: &ApiRequest) -> String {
    if req.namespace.is_empty() {
        String::new()
    } else {
        format!(" -n {}", req.namespace)
    }
}

/// Single-quotes `s` for the shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn subresource_flag(req: &ApiRequest) -> String {
    req.subresource
        .map_or(String::new(), |s| format!(" --subresource={}", s.as_str()))
}

fn heredoc(command: &str, body: &Value) -> String {
    let text = serde_json::to_string_pretty(body).unwrap_or_default();
    format!("{command} -f - <<'{EOF_MARK}'\n{text}\n{EOF_MARK}")
}

/// The kubectl command for one request.
fn command(req: &ApiRequest, from_copy: bool) -> String {
    let who = format!(" --as {}", quote(&req.principal));
    let ns = namespace_flag(req);
    let res = resource(req);
    let name = &req.name;
    match (req.verb, &req.body) {
        (Verb::Get, _) => format!("kubectl get {res} {name}{ns}{who}{} -o yaml", subresource_flag(req)),
        (Verb::List, _) => {
            let sel = req
                .label_selector
                .as_deref()
                .map_or(String::new(), |s| format!(" -l {}", quote(s)));
            let scope = if req.namespace.is_empty() { " -A".to_owned() } else { ns };
            format!("kubectl get {res}{scope}{sel}{who}")
        }
        (Verb::Create, RequestBody::Object(body)) => heredoc(&format!("kubectl create{ns}{who}"), body),
        (Verb::Update, RequestBody::Object(body)) if from_copy => format!(
            "# (an update from an earlier read: the copy is read again now, so no conflict can show)\nkubectl get {res} {name}{ns} -o json | kubectl replace{who}{} -f -",
            subresource_flag(req)
        ),
        (Verb::Update, RequestBody::Object(body)) => {
            heredoc(&format!("kubectl replace{ns}{who}{}", subresource_flag(req)), body)
        }
        (Verb::Patch, RequestBody::Patch(pt, patch)) => {
            let ty = match pt {
                PatchType::Merge => "merge",
                PatchType::Json => "json",
                PatchType::Strategic => "strategic",
            };
            format!(
                "kubectl patch {res} {name}{ns}{who}{} --type={ty} -p {}",
                subresource_flag(req),
                quote(&patch.to_string())
            )
        }
        (Verb::Delete, body) => {
            let cascade = match body {
                RequestBody::Object(o) => match o.field("propagationPolicy").and_then(Value::as_str) {
                    Some("Foreground") => " --cascade=foreground",
                    Some("Orphan") => " --cascade=orphan",
                    _ => "",
                },
                _ => "",
            };
            format!("kubectl delete {res} {name}{ns}{who}{cascade} --wait=false")
        }
        (verb, _) => format!("# {} {res} {name}: no kubectl form", verb.as_str()),
    }
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}", ms / 1000)
    } else {
        format!("{}.{:03}", ms / 1000, ms % 1000)
    }
}

/// The script for `scenario`.
pub fn export(scenario: &Scenario) -> Result<String, ScenarioError> {
    let compiled = compile(scenario)?;
    let mut out = format!(
        "#!/bin/sh\n# {}: exported by `converge export` from a converge.dev/v1 scenario.\n\
         # Run it against a real cluster (kind, k3d, ...) with a context whose user may\n\
         # impersonate ({}), e.g. a cluster admin: kubectl --as needs it. A refusal does not\n\
         # stop it: refusals are part of the story.\nset -u\n",
        scenario.name,
        compiled
            .actions
            .iter()
            .map(|a| a.request.principal.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !scenario.description.is_empty() {
        for line in scenario.description.lines() {
            out.push_str(&format!("# {line}\n"));
        }
    }
    if !scenario.images.is_empty() {
        out.push_str(
            "# The simulation's image behaviours (pull failures, crashes) have no kubectl form.\n",
        );
    }
    for obj in &scenario.objects {
        out.push_str("\n# t=0s: the scenario's objects, as admin\n");
        out.push_str(&heredoc("kubectl create", obj));
        out.push('\n');
    }
    let mut steps: Vec<(u64, usize, String)> = compiled
        .actions
        .iter()
        .map(|a: &CompiledAction| {
            let command = match &a.select {
                None => command(&a.request, a.body_from.is_some()),
                // The simulation picks the first match by name when the action fires; kubectl
                // can list by labels, but has no owner selector.
                Some(s) if s.owner.is_some() => format!(
                    "# chosen by owner ({}), which kubectl cannot select: name the object to run this",
                    s.text
                ),
                Some(s) => {
                    let mut req = a.request.clone();
                    req.name = format!(
                        "\"$(kubectl get {}{} -l {} -o name | head -n 1 | cut -d/ -f2)\"",
                        resource(&a.request),
                        namespace_flag(&a.request),
                        quote(&s.text)
                    );
                    command(&req, a.body_from.is_some())
                }
            };
            let text = format!("# t={}s: {}\n{command}", seconds(a.at_ms), a.label);
            (a.at_ms, a.index * 2 + 1, text)
        })
        .collect();
    for (t, i, input) in &compiled.faults {
        let what = match input {
            Input::Fault { fault } => format!("{fault:?}"),
            other => format!("{other:?}"),
        };
        steps.push((
            *t,
            i * 2,
            format!(
                "# t={}s: the simulation injected {what}: no kubectl form",
                seconds(*t)
            ),
        ));
    }
    steps.sort_by_key(|(t, order, _)| (*t, *order));
    let mut now = 0;
    for (t, _, text) in steps {
        out.push('\n');
        if t > now {
            out.push_str(&format!("sleep {}\n", seconds(t - now)));
            now = t;
        }
        out.push_str(&text);
        out.push('\n');
    }
    if !scenario.expect.is_empty() {
        out.push_str(&format!(
            "\n# The scenario's {} expectations are checked by `converge check`, not here.\n",
            scenario.expect.len()
        ));
    }
    Ok(out)
}
