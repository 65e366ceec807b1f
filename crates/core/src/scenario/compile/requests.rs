//! Requests: a scenario's timed `actions` as API requests, with their `bodyFrom` copies and
//! edits.

use crate::json::Value;

use super::err;
use crate::api::{ApiRequest, ObjectKey, PatchType};
use crate::controllers::util;
use crate::engine::World;
use crate::scenario::format::{ActionVerb, PatchKind, Scenario};
use crate::scenario::predicates::{resolve_target, verb_name, Selection};
use crate::scenario::ScenarioError;

/// A resolved action.
#[derive(Clone, Debug)]
pub(crate) struct CompiledAction {
    pub index: usize,
    pub id: Option<String>,
    pub at_ms: u64,
    pub request: ApiRequest,
    /// The named object (for `bodyFrom` copies and messages); None for list and nameless create,
    /// and for a target chosen by `select` (the object is picked when the action fires).
    pub key: Option<ObjectKey>,
    /// `{app=web}` or `{owner: ...}` in the target: the object to act on is picked at fire time.
    pub select: Option<Selection>,
    pub body_from: Option<usize>,
    /// A merge patch applied to the `bodyFrom` copy.
    pub edit: Option<Value>,
    /// `patch deployments/default/web/status as app`.
    pub label: String,
}

pub(super) fn compile_action(
    world: &World,
    s: &Scenario,
    i: usize,
    earlier: &[CompiledAction],
) -> Result<CompiledAction, ScenarioError> {
    let a = &s.actions[i];
    let p = format!("actions[{i}]");
    if a.principal.is_empty() {
        return Err(err(format!("{p}.as"), "must name a principal, e.g. alice"));
    }
    if let Some(id) = &a.id {
        if id.is_empty() || s.actions[..i].iter().any(|b| b.id.as_ref() == Some(id)) {
            return Err(err(
                format!("{p}.id"),
                format!("{id:?} is empty or used twice"),
            ));
        }
    }
    let t = resolve_target(world, &a.target).map_err(|m| err(format!("{p}.target"), m))?;
    let verb = verb_name(a.verb);
    let needs_name = !matches!(a.verb, ActionVerb::Create | ActionVerb::List);
    if needs_name && !t.names_one() {
        return Err(err(
            format!("{p}.target"),
            format!("{verb} needs an object: {}", a.target.clone() + "/<name>"),
        ));
    }
    if matches!(
        a.verb,
        ActionVerb::Create | ActionVerb::List | ActionVerb::Delete
    ) && t.subresource.is_some()
    {
        return Err(err(
            format!("{p}.target"),
            format!("{verb} is not served on {}", t.subresource_path()),
        ));
    }
    if t.selection.is_some() && matches!(a.verb, ActionVerb::Create | ActionVerb::List) {
        return Err(err(
            format!("{p}.target"),
            format!("{verb} takes no {{...}} selection: it names no existing object"),
        ));
    }
    if a.verb == ActionVerb::List && !t.name.is_empty() {
        return Err(err(
            format!("{p}.target"),
            "list takes a resource and optionally a namespace, not a name",
        ));
    }
    let field_unused = |field: &str| err(format!("{p}.{field}"), format!("is not used by {verb}"));
    let body_from = match &a.body_from {
        None => None,
        Some(_) if a.verb != ActionVerb::Update => return Err(field_unused("bodyFrom")),
        Some(id) => match s.actions[..i]
            .iter()
            .position(|b| b.id.as_ref() == Some(id))
        {
            Some(j) if earlier[j].key.is_some() || earlier[j].select.is_some() => Some(j),
            Some(_) => {
                return Err(err(
                    format!("{p}.bodyFrom"),
                    format!("action {id:?} does not name one object"),
                ))
            }
            None => {
                return Err(err(
                    format!("{p}.bodyFrom"),
                    format!("no earlier action has id {id:?}"),
                ))
            }
        },
    };
    let ns = t.namespace.clone();
    let gr = t.info.gr.clone();
    let principal = a.principal.as_str();
    let mut request = match a.verb {
        ActionVerb::Get => ApiRequest::get(principal, gr, &ns, &t.name),
        ActionVerb::List => ApiRequest::list(principal, gr, &ns, None),
        ActionVerb::Delete => match &a.body {
            Some(b) => ApiRequest::delete_with_options(principal, gr, &ns, &t.name, b.clone()),
            None => ApiRequest::delete(principal, gr, &ns, &t.name),
        },
        ActionVerb::Create => {
            let Some(mut body) = a.body.clone() else {
                return Err(err(format!("{p}.body"), "create needs a body (the object)"));
            };
            if !body.is_object() {
                return Err(err(format!("{p}.body"), "must be an object"));
            }
            if !t.name.is_empty() {
                let name = util::name(&body).to_owned();
                if name.is_empty() {
                    let Some(obj) = body.as_object_mut() else {
                        return Err(err(format!("{p}.body"), "must be an object"));
                    };
                    let meta = obj
                        .entry("metadata")
                        .or_insert_with(|| Value::Object(Default::default()));
                    let Some(meta) = meta.as_object_mut() else {
                        return Err(err(format!("{p}.body.metadata"), "must be an object"));
                    };
                    meta.insert("name", Value::String(t.name.as_str().into()));
                } else if name != t.name {
                    return Err(err(
                        format!("{p}.body"),
                        format!(
                            "metadata.name {name:?} differs from the target's name {:?}",
                            t.name
                        ),
                    ));
                }
            }
            ApiRequest::create(principal, gr, &ns, body)
        }
        ActionVerb::Update => {
            let body = match (&a.body, body_from) {
                (Some(b), None) if b.is_object() => b.clone(),
                (Some(_), None) => return Err(err(format!("{p}.body"), "must be an object")),
                (None, Some(_)) => Value::Null,
                (Some(_), Some(_)) => {
                    return Err(err(format!("{p}.body"), "give body or bodyFrom, not both"))
                }
                (None, None) => {
                    return Err(err(
                        format!("{p}.body"),
                        "update needs a body (or bodyFrom: <action id>)",
                    ))
                }
            };
            let mut r = ApiRequest::update(principal, gr, &ns, &t.name, body);
            r.subresource = t.subresource;
            r
        }
        ActionVerb::Patch => {
            let Some(patch) = a.patch.clone() else {
                return Err(err(format!("{p}.patch"), "patch needs a patch"));
            };
            let kind = match a.patch_type {
                PatchKind::Merge => {
                    if !patch.is_object() {
                        return Err(err(format!("{p}.patch"), "a merge patch is an object"));
                    }
                    PatchType::Merge
                }
                PatchKind::Json => {
                    if !patch.is_array() {
                        return Err(err(
                            format!("{p}.patch"),
                            "a JSON patch is a list of operations",
                        ));
                    }
                    PatchType::Json
                }
            };
            let mut r = ApiRequest::patch(principal, gr, &ns, &t.name, kind, patch);
            r.subresource = t.subresource;
            r
        }
    };
    if a.verb == ActionVerb::Get {
        request.subresource = t.subresource;
    }
    if a.body.is_some()
        && matches!(
            a.verb,
            ActionVerb::Get | ActionVerb::List | ActionVerb::Patch
        )
    {
        return Err(field_unused("body"));
    }
    let edit = match (&a.patch, a.verb) {
        (_, ActionVerb::Patch) => None,
        (Some(p2), ActionVerb::Update) if body_from.is_some() => {
            if !p2.is_object() {
                return Err(err(format!("{p}.patch"), "a merge patch is an object"));
            }
            Some(p2.clone())
        }
        (Some(_), _) => return Err(field_unused("patch")),
        (None, _) => None,
    };
    if a.patch_type != PatchKind::Merge && a.verb != ActionVerb::Patch {
        return Err(field_unused("patchType"));
    }
    let key = t.key().or_else(|| {
        (a.verb == ActionVerb::Create)
            .then(|| a.body.as_ref().map(|b| util::name(b).to_owned()))
            .flatten()
            .filter(|n| !n.is_empty())
            .map(|n| ObjectKey::new(t.info.gr.clone(), &t.namespace, &n))
    });
    Ok(CompiledAction {
        index: i,
        id: a.id.clone(),
        at_ms: a.at.ms(),
        request,
        key,
        select: t.selection.clone(),
        body_from,
        edit,
        label: format!("{verb} {} as {}", a.target, a.principal),
    })
}
