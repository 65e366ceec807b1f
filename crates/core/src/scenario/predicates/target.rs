//! Targets: `resource[.group]/[namespace/]name[/status|/scale]`, resolved against the resources the
//! world serves (built-in kinds and the scenario's custom resources). In place of the name,
//! `{app=web}` (a label selector) or `{owner: deployments/default/web}` (an owner, through any
//! number of levels) chooses the object when it is used: generated names need not be known.

use crate::json::Value;

use crate::api::selector::Selector;
use crate::api::{meta, GroupResource, ObjectKey, ResourceInfo, Subresource};
use crate::engine::World;
use crate::scenario::format::ActionVerb;

/// A parsed target: `resource[.group]/[namespace/]name[/status|/scale]`.
#[derive(Clone, Debug)]
pub(crate) struct ResolvedTarget {
    pub info: ResourceInfo,
    pub namespace: String,
    pub name: String,
    /// `/status` or `/scale` after the name (`/scale` where kube serves it: what `kubectl
    /// scale` patches).
    pub subresource: Option<Subresource>,
    /// `{...}` in place of the name: the object is chosen when the target is used.
    pub selection: Option<Selection>,
}

impl ResolvedTarget {
    pub fn key(&self) -> Option<ObjectKey> {
        (!self.name.is_empty())
            .then(|| ObjectKey::new(self.info.gr.clone(), &self.namespace, &self.name))
    }

    /// `/status` or `/scale`, for messages that refuse a subresource; empty without one.
    pub fn subresource_path(&self) -> &'static str {
        match self.subresource {
            None => "",
            Some(Subresource::Status) => "/status",
            Some(Subresource::Scale) => "/scale",
        }
    }

    /// Whether the target names one object, by name or by selection.
    pub fn names_one(&self) -> bool {
        !self.name.is_empty() || self.selection.is_some()
    }
}

/// How a target's object is chosen at the moment it is used: by labels, or as a descendant of
/// an owner (its ownerReferences, followed up any number of levels: a Deployment's Pods through
/// their ReplicaSet). Of the objects that match and are not being deleted, the first by name,
/// as `kubectl get` lists them.
#[derive(Clone, Debug)]
pub(crate) struct Selection {
    pub gr: GroupResource,
    pub namespace: String,
    pub labels: Option<Selector>,
    pub owner: Option<ObjectKey>,
    /// What was written between the braces: `app=web`, `owner: deployments/default/web`.
    pub text: String,
}

impl Selection {
    pub fn pick(&self, world: &World) -> Option<ObjectKey> {
        let owner_uid = match &self.owner {
            Some(k) => Some(meta::uid(world.api().get(k)?).to_owned()),
            None => None,
        };
        world
            .objects_of(&self.gr, Some(&self.namespace))
            .filter(|(_, o)| !meta::is_terminating(o))
            .filter(|(_, o)| self.labels.as_ref().is_none_or(|s| s.matches_object(o)))
            .find(|(_, o)| {
                owner_uid
                    .as_deref()
                    .is_none_or(|uid| descends_from(world, o, uid))
            })
            .map(|(k, _)| k.clone())
    }
}

/// Whether `obj`'s owner chain (within ten levels) reaches the object with `uid`.
fn descends_from(world: &World, obj: &Value, uid: &str) -> bool {
    let mut frontier: Vec<String> = meta::owner_uids(obj);
    for _ in 0..10 {
        if frontier.iter().any(|u| u == uid) {
            return true;
        }
        frontier = frontier
            .iter()
            .filter_map(|u| world.api().key_for_uid(u).and_then(|k| world.api().get(k)))
            .flat_map(meta::owner_uids)
            .collect();
        if frontier.is_empty() {
            return false;
        }
    }
    false
}

pub(crate) fn resolve_target(world: &World, text: &str) -> Result<ResolvedTarget, String> {
    // `{...}` in the name's place may hold slashes (an owner): set it aside first.
    if let (Some(open), Some(close)) = (text.find('{'), text.rfind('}')) {
        if open < close {
            let inner = text[open + 1..close].trim();
            let plain = format!("{}_{}", &text[..open], &text[close + 1..]);
            let mut t = resolve_target(world, &plain)?;
            if t.name != "_" || !text[..open].ends_with('/') {
                return Err(format!(
                    "malformed target {text:?}: {{...}} stands for the name, e.g. pods/default/{{app=web}}"
                ));
            }
            t.name.clear();
            let (labels, owner) = match inner.strip_prefix("owner:") {
                Some(o) => {
                    let ot = resolve_target(world, o.trim())?;
                    let key = ot
                        .key()
                        .filter(|_| ot.subresource.is_none())
                        .ok_or_else(|| format!("the owner in {text:?} names no object"))?;
                    (None, Some(key))
                }
                None => (
                    Some(Selector::parse(inner).map_err(|m| format!("{m} (in {text:?})"))?),
                    None,
                ),
            };
            t.selection = Some(Selection {
                gr: t.info.gr.clone(),
                namespace: t.namespace.clone(),
                labels,
                owner,
                text: inner.to_owned(),
            });
            return Ok(t);
        }
    }
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
    let mut subresource = None;
    if rest.len() == want + 1 {
        subresource = match rest.last() {
            Some(&"status") => Some(Subresource::Status),
            Some(&"scale") => Some(Subresource::Scale),
            _ => None,
        };
        if subresource.is_some() {
            rest.pop();
        }
    }
    if rest.len() > want || rest.iter().any(|p| p.is_empty()) {
        let shape = if info.namespaced {
            format!("{resource}/<namespace>/<name>[/status]")
        } else {
            format!("{resource}/<name>[/status]")
        };
        return Err(format!("malformed target {text:?}: expected {shape}"));
    }
    if subresource == Some(Subresource::Status) && !info.status_subresource {
        return Err(format!(
            "{} has no status subresource (target {text:?})",
            info.gr.qualified()
        ));
    }
    if subresource == Some(Subresource::Scale) && !crate::api::scale::has_scale(&info) {
        return Err(format!(
            "{} has no scale subresource (target {text:?})",
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
        subresource,
        selection: None,
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
