//! Request matches (a lesson's `request`, an expectation's `requests`): which answered requests
//! in the audit log they count, and how they read.

use super::{err, resolve_target, verb_name};
use crate::api::{AuditEntry, GroupResource};
use crate::engine::World;
use crate::scenario::format::RequestMatch;
use crate::scenario::ScenarioError;

/// A request the audit log must show (a lesson's `request`, an expectation's `requests`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RequestCheck {
    pub principal: Option<String>,
    pub verb: Option<&'static str>,
    pub gr: GroupResource,
    pub subresource: Option<crate::api::Subresource>,
    pub namespace: String,
    /// Empty: any name.
    pub name: String,
    pub code: Option<u16>,
}

impl RequestCheck {
    pub fn matches(&self, e: &AuditEntry) -> bool {
        e.gr == self.gr
            && e.subresource == self.subresource
            && e.namespace == self.namespace
            && (self.name.is_empty() || e.name == self.name)
            && self.principal.as_ref().is_none_or(|p| *p == e.principal)
            && self.verb.is_none_or(|v| v == e.verb.as_str())
            && self.code.is_none_or(|c| c == e.code)
    }
}

/// Resolves a `request`/`requests` match; `p` is its field path. Returns the check and how it
/// reads (`alice patch deployments/default/web and gets 200`).
pub(crate) fn compile_request(
    world: &World,
    r: &RequestMatch,
    p: &str,
) -> Result<(RequestCheck, String), ScenarioError> {
    let t = resolve_target(world, &r.target).map_err(|m| err(format!("{p}.target"), m))?;
    let verb = r.verb.map(verb_name);
    let mut description = format!(
        "{} {}",
        r.principal.as_deref().unwrap_or("anyone"),
        verb.unwrap_or("requests")
    );
    description.push_str(&format!(" {}", r.target));
    if t.name.is_empty() {
        description.push_str(" (any name)");
    }
    if let Some(c) = r.code {
        description.push_str(&format!(" and gets {c}"));
    }
    Ok((
        RequestCheck {
            principal: r.principal.clone(),
            verb,
            gr: t.info.gr.clone(),
            subresource: t.subresource,
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            code: r.code,
        },
        description,
    ))
}
