//! Whether an expectation's check holds on the whole world (a count of objects, answered
//! requests) or, through [`evaluate`], on its object.

use crate::api::meta::Fields;
use crate::json::Value;

use crate::api::meta::{event_source, str_at};
use crate::api::GroupResource;
use crate::engine::provenance::Root;
use crate::engine::World;
use crate::scenario::compile::{CompiledExpectation, When};
use crate::scenario::predicates::{evaluate, CauseRef, Check};
use crate::scenario::run::Source;
use crate::time::SimTime;
use crate::why::{Chain, Hop};

/// Whether an expectation's check holds in `world` at `now`: on its object, or, for a count or
/// requests, on the whole world (requests in a window with `after` are counted from its start).
pub(crate) fn evaluate_in(
    e: &CompiledExpectation,
    world: &World,
    now: SimTime,
    sources: &[(usize, Source)],
) -> (bool, String, String) {
    match &e.check {
        Check::CausedBy { path, by } => {
            let key = e
                .key
                .clone()
                .or_else(|| e.select.as_ref().and_then(|s| s.pick(world)));
            let expected = by.text();
            let Some(key) = key else {
                return (false, expected, "no such object".into());
            };
            match world.why(&key, path, Some(now.min(world.now()))) {
                Err(why) => (false, expected, why.to_string()),
                Ok(chain) => caused_by(&chain, by, sources, expected),
            }
        }
        Check::Count {
            gr,
            namespace,
            selector,
            owner,
            bounds,
        } => {
            let owner_uid = owner.as_ref().map(|k| {
                world
                    .api()
                    .get(k)
                    .and_then(|o| o.pointer("/metadata/uid"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            let n = match owner_uid {
                Some(None) => 0,
                _ => world
                    .objects_of(gr, (!namespace.is_empty()).then_some(namespace.as_str()))
                    .filter(|(_, o)| {
                        selector.as_ref().is_none_or(|(s, _)| s.matches_object(o))
                            && owner_uid.as_ref().is_none_or(|u| owned_by(o, u.as_deref()))
                    })
                    .count(),
            };
            (bounds.holds(n as f64), bounds.text(), n.to_string())
        }
        Check::Requests { request, bounds } => {
            let from = match e.when {
                When::Within { from, .. } => from,
                _ => 0,
            };
            let n = world
                .api()
                .audit()
                .filter(|a| (from..=now.as_ms()).contains(&a.time.as_ms()) && request.matches(a))
                .count();
            (bounds.holds(n as f64), bounds.text(), n.to_string())
        }
        Check::Events {
            about,
            reason,
            type_,
            source,
            message,
            pattern,
            bounds,
        } => {
            let n: i64 = world
                .objects_of(&GroupResource::events(), None)
                .map(|(_, ev)| ev.as_ref())
                .filter(|ev| {
                    let about_ok = about.as_ref().is_none_or(|(_, kind, ns, name)| {
                        str_at(ev, "/involvedObject/kind") == kind
                            && str_at(ev, "/involvedObject/namespace") == ns
                            && (name.is_empty() || str_at(ev, "/involvedObject/name") == name)
                    });
                    let msg = str_at(ev, "/message");
                    about_ok
                        && reason.as_ref().is_none_or(|r| str_at(ev, "/reason") == r)
                        && type_.as_ref().is_none_or(|t| str_at(ev, "/type") == t)
                        && source.as_ref().is_none_or(|s| event_source(ev) == s)
                        && message.as_ref().is_none_or(|m| msg == m)
                        && pattern.as_ref().is_none_or(|p| p.0.is_match(msg))
                })
                .map(|ev| {
                    ev.pointer("/series/count")
                        .or_else(|| ev.field("count"))
                        .and_then(Value::as_i64)
                        .filter(|c| *c > 0)
                        .unwrap_or(1)
                })
                .sum();
            (bounds.holds(n as f64), bounds.text(), n.to_string())
        }
        check => {
            // The expectation's own key borrowed (it is read on every step of its window).
            let picked;
            let key = match &e.key {
                Some(k) => Some(k),
                None => {
                    picked = e.select.as_ref().and_then(|s| s.pick(world));
                    picked.as_ref()
                }
            };
            evaluate(check, key.and_then(|k| world.api().get(k)), now)
        }
    }
}

/// Whether a chain (or the chain of an input its first decision read) traces back to `by`:
/// its root is that action's or fault's input, or it passes through that controller. The
/// observed text names the chain's root and the controllers it passes through.
fn caused_by(
    chain: &Chain,
    by: &CauseRef,
    sources: &[(usize, Source)],
    expected: String,
) -> (bool, String, String) {
    let chains: Vec<&Chain> = std::iter::once(chain).chain(chain.inputs.iter()).collect();
    let source_of = |input: usize| sources.iter().find(|(i, _)| *i == input).map(|(_, s)| *s);
    let root_source = |c: &Chain| match &c.root {
        Root::Request { input, .. } | Root::Fault { input, .. } => source_of(*input),
        _ => None,
    };
    let holds = chains.iter().any(|c| match by {
        CauseRef::Action { index, .. } => root_source(c) == Some(Source::Action(*index)),
        CauseRef::Fault { index, .. } => root_source(c) == Some(Source::Fault(*index)),
        CauseRef::Controller(name) => c.through_controller(name),
    });
    let mut controllers: Vec<&str> = Vec::new();
    for c in &chains {
        for h in &c.hops {
            if let Hop::Reconcile { controller, .. } = h {
                if !controllers.contains(&controller.as_str()) {
                    controllers.push(controller);
                }
            }
        }
    }
    let root = crate::why::root_text(&chain.root);
    let root = root.split_once("root: ").map_or(root.as_str(), |(_, r)| r);
    let got = if controllers.is_empty() {
        root.to_owned()
    } else {
        format!("{root}, through {}", controllers.join(", "))
    };
    (holds, expected, got)
}

/// Whether `obj` names `uid` among its ownerReferences.
fn owned_by(obj: &Value, uid: Option<&str>) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.field("uid").and_then(Value::as_str) == uid)
        })
}
