//! Expectations: a scenario's `expect` entries as checks at a time, over a window
//! (`always`/`never`), or on an action's answer; and how each one reads in a report.

use super::err;
use super::requests::CompiledAction;
use crate::api::selector::Selector;
use crate::api::ObjectKey;
use crate::engine::World;
use crate::scenario::format::{Expectation, Scenario};
use crate::scenario::predicates::{
    check_text, compile_request, object_check_in, resolve_target, Bounds, Check, Names, Pattern,
    Selection,
};
use crate::scenario::ScenarioError;

/// Over a `within` window: once (`Eventually`), at every moment (`always`), at none (`never`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Eventually,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum When {
    At(u64),
    Within { from: u64, deadline: u64 },
    OnAction,
}

#[derive(Clone, Debug)]
pub(crate) struct CompiledExpectation {
    pub key: Option<ObjectKey>,
    /// A target chosen by `{...}`: the object is picked at each moment the check looks.
    pub select: Option<Selection>,
    pub check: Check,
    pub when: When,
    pub mode: Mode,
    pub description: String,
}

pub(super) fn compile_expectation(
    world: &World,
    s: &Scenario,
    i: usize,
    e: &Expectation,
    actions: &[CompiledAction],
) -> Result<CompiledExpectation, ScenarioError> {
    let p = format!("expect[{i}]");
    let unused = |field: &str, why: &str| err(format!("{p}.{field}"), why.to_owned());
    if let Some(id) = &e.action {
        if e.target.is_some() {
            return Err(unused("target", "give target or action, not both"));
        }
        for (f, set) in [
            ("at", e.at.is_some()),
            ("within", e.within.is_some()),
            ("after", e.after.is_some()),
            ("kstatus", e.kstatus.is_some()),
            ("field", e.field.is_some()),
            ("equals", e.equals.is_some()),
            ("condition", e.condition.is_some()),
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("exists", e.exists.is_some()),
            ("atLeast", e.at_least.is_some()),
            ("atMost", e.at_most.is_some()),
            ("matches", e.matches.is_some()),
            ("always", e.always.is_some()),
            ("never", e.never.is_some()),
            ("count", e.count.is_some()),
            ("requests", e.requests.is_some()),
            ("events", e.events.is_some()),
        ] {
            if set {
                return Err(unused(
                    f,
                    "is not used with action: an action's response is checked when it is sent (use code and message)",
                ));
            }
        }
        let Some(j) = s.actions.iter().position(|a| a.id.as_ref() == Some(id)) else {
            return Err(err(
                format!("{p}.action"),
                format!("no action has id {id:?}"),
            ));
        };
        if e.code.is_none() && e.message.is_none() {
            return Err(err(&p, "an action expectation needs code and/or message"));
        }
        let mut description = format!("action {id} ({}) answers", actions[j].label);
        if let Some(c) = e.code {
            description.push_str(&format!(" {c}"));
        }
        if let Some(m) = &e.message {
            description.push_str(&format!(" {m:?}"));
        }
        return Ok(CompiledExpectation {
            key: None,
            select: None,
            check: Check::Response {
                action: j,
                code: e.code,
                message: e.message.clone(),
            },
            when: When::OnAction,
            mode: Mode::Eventually,
            description,
        });
    }
    if [
        e.target.is_some(),
        e.count.is_some(),
        e.requests.is_some(),
        e.events.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count()
        > 1
    {
        return Err(err(&p, "give one of target, count, requests, events"));
    }
    if e.count.is_some() || e.requests.is_some() || e.events.is_some() {
        return compile_tally(world, e, &p);
    }
    let Some(target) = &e.target else {
        return Err(err(&p, "names neither a target (an object) nor an action"));
    };
    let t = resolve_target(world, target).map_err(|m| err(format!("{p}.target"), m))?;
    if t.subresource.is_some() {
        return Err(err(
            format!("{p}.target"),
            format!(
                "expectations look at the whole object: drop {}",
                t.subresource_path()
            ),
        ));
    }
    if !t.names_one() {
        return Err(err(format!("{p}.target"), "needs an object name"));
    }
    if e.code.is_some() {
        return Err(unused(
            "code",
            "code checks an action's response: use action: <id>",
        ));
    }
    let when = when_of(e, &p)?;
    let mode = mode_of(e, &p, when)?;
    let names = Names {
        actions: s.actions.iter().map(|a| a.id.clone()).collect(),
        faults: s.faults.iter().map(|f| f.id.clone()).collect(),
        controllers: world.controller_names(),
    };
    let check = object_check_in(e, &p, &names)?;
    let description = describe(mode, format!("{target} {}", check_text(&check)), when);
    Ok(CompiledExpectation {
        key: t.key(),
        select: t.selection.clone(),
        check,
        when,
        mode,
        description,
    })
}

/// `at` or `within` (+ `after`).
fn when_of(e: &Expectation, p: &str) -> Result<When, ScenarioError> {
    let unused = |field: &str, why: &str| err(format!("{p}.{field}"), why.to_owned());
    Ok(match (e.at, e.within) {
        (Some(_), Some(_)) => return Err(err(p, "give at or within, not both")),
        (None, None) => return Err(err(p, "needs a time: at: <time> or within: <duration>")),
        (Some(at), None) => {
            if e.after.is_some() {
                return Err(unused("after", "goes with within, not at"));
            }
            When::At(at.ms())
        }
        (None, Some(w)) => {
            let from = e.after.map_or(0, |a| a.ms());
            When::Within {
                from,
                deadline: from.saturating_add(w.ms()),
            }
        }
    })
}

/// `always` / `never`, which need a `within` window.
fn mode_of(e: &Expectation, p: &str, when: When) -> Result<Mode, ScenarioError> {
    let (always, never) = (e.always == Some(true), e.never == Some(true));
    if always && never {
        return Err(err(p, "give always or never, not both"));
    }
    let field = if always { "always" } else { "never" };
    if (always || never) && !matches!(when, When::Within { .. }) {
        return Err(err(
            format!("{p}.{field}"),
            "needs a window: within: <duration> (and after: <time>)",
        ));
    }
    Ok(if always {
        Mode::Always
    } else if never {
        Mode::Never
    } else {
        Mode::Eventually
    })
}

/// How an expectation reads: `<subject> <check> at 5s`, `always: ... within 60s after 10s`.
fn describe(mode: Mode, what: String, when: When) -> String {
    let mut description = match mode {
        Mode::Eventually => what,
        Mode::Always => format!("always: {what}"),
        Mode::Never => format!("never: {what}"),
    };
    match when {
        When::At(t) => {
            description.push_str(&format!(" at {}", crate::scenario::format::Duration(t)))
        }
        When::Within { from, deadline } => {
            description.push_str(&format!(
                " within {}",
                crate::scenario::format::Duration(deadline - from)
            ));
            if from > 0 {
                description.push_str(&format!(
                    " after {}",
                    crate::scenario::format::Duration(from)
                ));
            }
        }
        When::OnAction => {}
    }
    description
}

/// The bounds a count is checked against: `equals` (a whole number) or `atLeast`/`atMost`.
fn bounds_of(e: &Expectation, p: &str) -> Result<Bounds, ScenarioError> {
    let equals = match &e.equals {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|n| *n >= 0.0 && n.fract() == 0.0)
                .ok_or_else(|| err(format!("{p}.equals"), "a count equals a whole number"))?,
        ),
    };
    if equals.is_some() && (e.at_least.is_some() || e.at_most.is_some()) {
        return Err(err(p, "give equals or atLeast/atMost, not both"));
    }
    if equals.is_none() && e.at_least.is_none() && e.at_most.is_none() {
        return Err(err(p, "a count needs equals, atLeast or atMost"));
    }
    Ok(Bounds {
        equals,
        at_least: e.at_least,
        at_most: e.at_most,
    })
}

/// An expectation on a `count` of objects or on `requests` in the audit log.
fn compile_tally(
    world: &World,
    e: &Expectation,
    p: &str,
) -> Result<CompiledExpectation, ScenarioError> {
    for (f, set) in [
        ("kstatus", e.kstatus.is_some()),
        ("field", e.field.is_some()),
        ("condition", e.condition.is_some()),
        ("status", e.status.is_some()),
        ("reason", e.reason.is_some()),
        ("message", e.message.is_some()),
        ("exists", e.exists.is_some()),
        ("matches", e.matches.is_some()),
        ("code", e.code.is_some()),
    ] {
        if set {
            return Err(err(
                format!("{p}.{f}"),
                "is not used with count, requests or events (they take equals, atLeast, atMost)",
            ));
        }
    }
    let when = when_of(e, p)?;
    let mode = mode_of(e, p, when)?;
    let bounds = bounds_of(e, p)?;
    let (check, what) = if let Some(c) = &e.count {
        let t =
            resolve_target(world, &c.target).map_err(|m| err(format!("{p}.count.target"), m))?;
        if !t.name.is_empty() || t.subresource.is_some() {
            return Err(err(
                format!("{p}.count.target"),
                "names a resource and its namespace (pods/default), not one object",
            ));
        }
        let selector = match &c.selector {
            None => None,
            Some(text) => Some((
                Selector::parse(text).map_err(|m| err(format!("{p}.count.selector"), m))?,
                text.clone(),
            )),
        };
        let owner = match &c.owner {
            None => None,
            Some(o) => {
                let ot =
                    resolve_target(world, o).map_err(|m| err(format!("{p}.count.owner"), m))?;
                Some(
                    ot.key()
                        .filter(|_| ot.subresource.is_none())
                        .ok_or_else(|| err(format!("{p}.count.owner"), "needs an object name"))?,
                )
            }
        };
        let mut what = format!("count {}", c.target);
        if let Some((_, text)) = &selector {
            what.push_str(&format!(" with {text}"));
        }
        if let Some(o) = &c.owner {
            what.push_str(&format!(" owned by {o}"));
        }
        let check = Check::Count {
            gr: t.info.gr.clone(),
            namespace: t.namespace.clone(),
            selector,
            owner,
            bounds: bounds.clone(),
        };
        (check, what)
    } else if let Some(ev) = &e.events {
        let about = match &ev.about {
            None => None,
            Some(a) => {
                let t =
                    resolve_target(world, a).map_err(|m| err(format!("{p}.events.about"), m))?;
                if t.subresource.is_some() {
                    return Err(err(
                        format!("{p}.events.about"),
                        format!("drop {}: events are about objects", t.subresource_path()),
                    ));
                }
                Some((
                    t.info.gr.clone(),
                    t.info.kind.clone(),
                    t.namespace.clone(),
                    t.name.clone(),
                ))
            }
        };
        if let Some(ty) = &ev.type_ {
            if ty != "Normal" && ty != "Warning" {
                return Err(err(format!("{p}.events.type"), "is Normal or Warning"));
            }
        }
        if ev.message.is_some() && ev.matches.is_some() {
            return Err(err(
                format!("{p}.events"),
                "give message or matches, not both",
            ));
        }
        let pattern = match &ev.matches {
            None => None,
            Some(m) => Some(Pattern(regex_lite::Regex::new(m).map_err(|why| {
                err(
                    format!("{p}.events.matches"),
                    format!("not a regular expression: {why}"),
                )
            })?)),
        };
        let mut parts = Vec::new();
        for (label, v) in [
            ("reason", &ev.reason),
            ("type", &ev.type_),
            ("about", &ev.about),
            ("from", &ev.source),
        ] {
            if let Some(v) = v {
                parts.push(format!("{label} {v}"));
            }
        }
        if let Some(m) = &ev.message {
            parts.push(format!("message {m:?}"));
        }
        if let Some(m) = &ev.matches {
            parts.push(format!("message matching {m:?}"));
        }
        let what = if parts.is_empty() {
            "events".to_owned()
        } else {
            format!("events with {}", parts.join(", "))
        };
        let check = Check::Events {
            about,
            reason: ev.reason.clone(),
            type_: ev.type_.clone(),
            source: ev.source.clone(),
            message: ev.message.clone(),
            pattern,
            bounds: bounds.clone(),
        };
        (check, what)
    } else {
        let r = e
            .requests
            .as_ref()
            .ok_or_else(|| err(p, "needs count, requests or events"))?;
        let (request, what) = compile_request(world, r, &format!("{p}.requests"))?;
        (
            Check::Requests {
                request,
                bounds: bounds.clone(),
            },
            format!("requests: {what}"),
        )
    };
    let description = describe(mode, format!("{what} {}", bounds.text()), when);
    Ok(CompiledExpectation {
        key: None,
        select: None,
        check,
        when,
        mode,
        description,
    })
}
