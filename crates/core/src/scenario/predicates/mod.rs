//! The state predicates an expectation or a lesson step checks on one object (kstatus, a field,
//! a condition, existence) or on a tally (a count of objects, answered requests), the text each
//! reads as, and whether it holds. Expectations (`compile`, `run`) and lessons share them, so
//! both sit above this module and neither depends on the other's internals:
//!
//! - [`target`]: `resource[.group]/[namespace/]name[/status]` against the world's resources;
//! - [`request`]: request matches against the audit log;
//! - `evaluate`: whether a check holds on an object at a time.

mod evaluate;
mod request;
mod target;

use crate::json::Value;

pub(crate) use evaluate::evaluate;
pub(crate) use request::{compile_request, RequestCheck};
pub(crate) use target::{resolve_target, verb_name, Selection};

use crate::api::selector::Selector;
use crate::api::{GroupResource, ObjectKey};
use crate::scenario::format::{Expectation, KstatusName};
use crate::scenario::path::FieldPath;
use crate::scenario::ScenarioError;

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, message)
}

/// What one predicate checks, resolved against the world at t=0.
#[derive(Clone, Debug)]
pub(crate) enum Check {
    Kstatus {
        status: KstatusName,
        message: Option<String>,
    },
    Field {
        path: FieldPath,
        equals: Value,
    },
    Condition {
        type_: String,
        status: Option<String>,
        reason: Option<String>,
        message: Option<String>,
    },
    Exists(bool),
    Response {
        action: usize,
        code: Option<u16>,
        message: Option<String>,
    },
    /// A number field against bounds (`atLeast`, `atMost`).
    Compare {
        path: FieldPath,
        bounds: Bounds,
    },
    /// A field's text against a regular expression.
    Matches {
        path: FieldPath,
        pattern: Pattern,
    },
    /// What a field's value traces back to ([`crate::why`]): judged on the whole world.
    CausedBy {
        path: FieldPath,
        by: CauseRef,
    },
    /// How many objects of a resource there are, chosen by selector and/or owner.
    Count {
        gr: GroupResource,
        namespace: String,
        selector: Option<(Selector, String)>,
        owner: Option<ObjectKey>,
        bounds: Bounds,
    },
    /// How many times matching Events were reported (their counts summed). `about` is
    /// (resource, Kind, namespace, name); an empty name means any object of the resource.
    Events {
        about: Option<(GroupResource, String, String, String)>,
        reason: Option<String>,
        type_: Option<String>,
        source: Option<String>,
        message: Option<String>,
        pattern: Option<Pattern>,
        bounds: Bounds,
    },
    /// How many answered requests match.
    Requests {
        request: RequestCheck,
        bounds: Bounds,
    },
}

/// A number's bounds: `equals`, or `atLeast` and/or `atMost`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bounds {
    pub equals: Option<f64>,
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

impl Bounds {
    pub fn holds(&self, n: f64) -> bool {
        self.equals.is_none_or(|e| n == e)
            && self.at_least.is_none_or(|l| n >= l)
            && self.at_most.is_none_or(|m| n <= m)
    }

    /// `equals 3`, `is at least 2`, `is at most 13`, `is between 2 and 5`.
    pub fn text(&self) -> String {
        let n = |x: f64| {
            crate::json::Number::from_f64(x).map_or(x.to_string(), |v| {
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                    .map_or(v.to_string(), |f| format!("{}", f as i64))
            })
        };
        match (self.equals, self.at_least, self.at_most) {
            (Some(e), _, _) => format!("equals {}", n(e)),
            (None, Some(l), Some(m)) => format!("is between {} and {}", n(l), n(m)),
            (None, Some(l), None) => format!("is at least {}", n(l)),
            (None, None, Some(m)) => format!("is at most {}", n(m)),
            (None, None, None) => "is any number".into(),
        }
    }
}

/// What a `causedBy` names; the action's and fault's indexes are their entries' in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CauseRef {
    Action { index: usize, id: String },
    Fault { index: usize, id: String },
    Controller(String),
}

impl CauseRef {
    /// `action scale`, `fault crash-rs`, `controller replicaset-controller`.
    pub fn text(&self) -> String {
        match self {
            CauseRef::Action { id, .. } => format!("action {id}"),
            CauseRef::Fault { id, .. } => format!("fault {id}"),
            CauseRef::Controller(name) => format!("controller {name}"),
        }
    }
}

/// A regular expression from a scenario file (regex-lite's syntax).
#[derive(Clone, Debug)]
pub(crate) struct Pattern(pub regex_lite::Regex);

/// The assertion of an object expectation (or lesson predicate): exactly one of `kstatus`,
/// `field` + `equals` (or bounds, a pattern, `causedBy`), `condition` (+ `status`, `reason`,
/// `message`) or `exists`. A `causedBy`'s ids are resolved against `actions` and `faults`
/// (their ids in file order) and `controllers` (the cluster's).
pub(crate) fn object_check(e: &Expectation, p: &str) -> Result<Check, ScenarioError> {
    object_check_in(e, p, &Names::default())
}

/// The ids a `causedBy` may name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Names {
    pub actions: Vec<Option<String>>,
    pub faults: Vec<Option<String>>,
    pub controllers: Vec<String>,
}

/// A `causedBy`, resolved against `names`.
fn cause_ref(
    c: &crate::scenario::format::CausedBy,
    p: &str,
    names: &Names,
) -> Result<CauseRef, ScenarioError> {
    let p = format!("{p}.causedBy");
    let given = [
        c.action.is_some(),
        c.fault.is_some(),
        c.controller.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(err(p, "give exactly one of action, fault, controller"));
    }
    let find = |ids: &[Option<String>], id: &str| ids.iter().position(|i| i.as_deref() == Some(id));
    if let Some(id) = &c.action {
        let index = find(&names.actions, id)
            .ok_or_else(|| err(format!("{p}.action"), format!("no action has id {id:?}")))?;
        return Ok(CauseRef::Action {
            index,
            id: id.clone(),
        });
    }
    if let Some(id) = &c.fault {
        let index = find(&names.faults, id)
            .ok_or_else(|| err(format!("{p}.fault"), format!("no fault has id {id:?}")))?;
        return Ok(CauseRef::Fault {
            index,
            id: id.clone(),
        });
    }
    let name = c.controller.clone().unwrap_or_default();
    if !names.controllers.contains(&name) {
        return Err(err(
            format!("{p}.controller"),
            format!(
                "unknown controller {name:?}: this cluster runs {}",
                names.controllers.join(", ")
            ),
        ));
    }
    Ok(CauseRef::Controller(name))
}

/// [`object_check`] with the names a `causedBy` may use.
pub(crate) fn object_check_in(
    e: &Expectation,
    p: &str,
    names: &Names,
) -> Result<Check, ScenarioError> {
    let unused = |field: &str, why: &str| err(format!("{p}.{field}"), why.to_owned());
    let kinds = [
        e.kstatus.is_some(),
        e.field.is_some(),
        e.condition.is_some(),
        e.exists.is_some(),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(err(
            p,
            "give exactly one of kstatus, field (with equals), condition, exists",
        ));
    }
    if e.field.is_none() {
        for (f, set) in [
            ("atLeast", e.at_least.is_some()),
            ("atMost", e.at_most.is_some()),
            ("matches", e.matches.is_some()),
            ("causedBy", e.caused_by.is_some()),
        ] {
            if set {
                return Err(unused(f, "goes with field"));
            }
        }
    }
    let check = if let Some(k) = e.kstatus {
        for (f, set) in [
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("equals", e.equals.is_some()),
        ] {
            if set {
                return Err(unused(f, "is not used with kstatus"));
            }
        }
        Check::Kstatus {
            status: k,
            message: e.message.clone(),
        }
    } else if let Some(f) = &e.field {
        let path = FieldPath::parse(f).map_err(|m| err(format!("{p}.field"), m))?;
        let bounded = e.at_least.is_some() || e.at_most.is_some();
        let ways = [
            e.equals.is_some(),
            bounded,
            e.matches.is_some(),
            e.caused_by.is_some(),
        ];
        if ways.iter().filter(|w| **w).count() > 1 {
            return Err(err(
                p,
                "field takes one of equals, atLeast/atMost, matches, causedBy",
            ));
        }
        if let Some(c) = &e.caused_by {
            return Ok(Check::CausedBy {
                path,
                by: cause_ref(c, p, names)?,
            });
        }
        if let Some(m) = &e.matches {
            let pattern = regex_lite::Regex::new(m).map_err(|why| {
                err(
                    format!("{p}.matches"),
                    format!("not a regular expression: {why}"),
                )
            })?;
            return Ok(Check::Matches {
                path,
                pattern: Pattern(pattern),
            });
        }
        if bounded {
            return Ok(Check::Compare {
                path,
                bounds: Bounds {
                    equals: None,
                    at_least: e.at_least,
                    at_most: e.at_most,
                },
            });
        }
        let Some(equals) = e.equals.clone() else {
            return Err(err(format!("{p}.equals"), "field needs equals: <value>"));
        };
        for (f, set) in [
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("message", e.message.is_some()),
        ] {
            if set {
                return Err(unused(f, "is not used with field"));
            }
        }
        Check::Field { path, equals }
    } else if let Some(c) = &e.condition {
        if e.equals.is_some() {
            return Err(unused(
                "equals",
                "is not used with condition (use status, reason, message)",
            ));
        }
        Check::Condition {
            type_: c.clone(),
            status: e.status.clone(),
            reason: e.reason.clone(),
            message: e.message.clone(),
        }
    } else {
        for (f, set) in [
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("message", e.message.is_some()),
            ("equals", e.equals.is_some()),
        ] {
            if set {
                return Err(unused(f, "is not used with exists"));
            }
        }
        Check::Exists(e.exists.unwrap_or(true))
    };
    Ok(check)
}

/// `kstatus is Current`, `status.readyReplicas equals 3`, `condition Available is True with
/// reason MinimumReplicasAvailable`, `exists`.
pub(crate) fn check_text(c: &Check) -> String {
    match c {
        Check::Kstatus { status, message } => {
            let mut s = format!("kstatus is {}", status.as_str());
            if let Some(m) = message {
                s.push_str(&format!(" with message {m:?}"));
            }
            s
        }
        Check::Field { path, equals } => format!("{} equals {equals}", path.text()),
        Check::Condition {
            type_,
            status,
            reason,
            message,
        } => {
            let mut s = format!("condition {type_}");
            let mut parts = Vec::new();
            if let Some(st) = status {
                parts.push(format!("status {st}"));
            }
            if let Some(r) = reason {
                parts.push(format!("reason {r}"));
            }
            if let Some(m) = message {
                parts.push(format!("message {m:?}"));
            }
            if parts.is_empty() {
                s.push_str(" is present");
            } else {
                s.push_str(" has ");
                s.push_str(&parts.join(", "));
            }
            s
        }
        Check::Compare { path, bounds } => format!("{} {}", path.text(), bounds.text()),
        Check::Matches { path, pattern } => {
            format!("{} matches {:?}", path.text(), pattern.0.as_str())
        }
        Check::CausedBy { path, by } => format!("{} is caused by {}", path.text(), by.text()),
        Check::Count { bounds, .. }
        | Check::Requests { bounds, .. }
        | Check::Events { bounds, .. } => bounds.text(),
        Check::Exists(true) => "exists".into(),
        Check::Exists(false) => "does not exist".into(),
        Check::Response { .. } => String::new(),
    }
}
