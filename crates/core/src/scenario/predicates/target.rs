//! Targets: `resource[.group]/[namespace/]name[/status]`, resolved against the resources the
//! world serves (built-in kinds and the scenario's custom resources).

use crate::api::{ObjectKey, ResourceInfo};
use crate::engine::World;
use crate::scenario::format::ActionVerb;

/// A parsed target: `resource[.group]/[namespace/]name[/status]`.
#[derive(Clone, Debug)]
pub(crate) struct ResolvedTarget {
    pub info: ResourceInfo,
    pub namespace: String,
    pub name: String,
    pub status: bool,
}

impl ResolvedTarget {
    pub fn key(&self) -> Option<ObjectKey> {
        (!self.name.is_empty())
            .then(|| ObjectKey::new(self.info.gr.clone(), &self.namespace, &self.name))
    }
}

pub(crate) fn resolve_target(world: &World, text: &str) -> Result<ResolvedTarget, String> {
    let parts: Vec<&str> = text.split('/').collect();
    let resource = parts[0];
    if resource.is_empty() {
        return Err(format!(
            "malformed target {text:?}: expected resource/namespace/name, e.g. deployments/default/web"
        ));
    }
    let (plural, group) = match resource.split_once('.') {
        Some((p, g)) => (p, Some(g)),
        None => (resource, None),
    };
    let matches: Vec<&ResourceInfo> = world
        .api()
        .resources()
        .filter(|r| r.gr.resource == plural && group.is_none_or(|g| r.gr.group == g))
        .collect();
    let info = match matches.as_slice() {
        [one] => (*one).clone(),
        [] => return Err(format!("unknown resource {resource:?} in target {text:?}")),
        _ => {
            return Err(format!(
                "resource {plural:?} is served by several API groups; write it as {plural}.<group>"
            ))
        }
    };
    let mut rest: Vec<&str> = parts[1..].to_vec();
    let want = if info.namespaced { 2 } else { 1 };
    let mut status = false;
    if rest.len() == want + 1 && rest.last() == Some(&"status") {
        status = true;
        rest.pop();
    }
    if rest.len() > want || rest.iter().any(|p| p.is_empty()) {
        let shape = if info.namespaced {
            format!("{resource}/<namespace>/<name>[/status]")
        } else {
            format!("{resource}/<name>[/status]")
        };
        return Err(format!("malformed target {text:?}: expected {shape}"));
    }
    if status && !info.status_subresource {
        return Err(format!(
            "{} has no status subresource (target {text:?})",
            info.gr.qualified()
        ));
    }
    let (namespace, name) = if info.namespaced {
        (
            rest.first().map_or("", |s| *s).to_owned(),
            rest.get(1).map_or("", |s| *s).to_owned(),
        )
    } else {
        (String::new(), rest.first().map_or("", |s| *s).to_owned())
    };
    Ok(ResolvedTarget {
        info,
        namespace,
        name,
        status,
    })
}

pub(crate) fn verb_name(v: ActionVerb) -> &'static str {
    match v {
        ActionVerb::Get => "get",
        ActionVerb::List => "list",
        ActionVerb::Create => "create",
        ActionVerb::Update => "update",
        ActionVerb::Patch => "patch",
        ActionVerb::Delete => "delete",
    }
}
