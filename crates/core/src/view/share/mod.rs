//! The saved and shared workspace: the session (starter, seed, actions, cursor) plus the user's
//! editor and preferences, its JSON form (localStorage) and its share-link form
//! (`#w1.<base64url(deflate(json))>`). Everything read back is untrusted: decoding checks the
//! format version and bounds every field, and [`replay`] rebuilds the world within an event
//! budget, so a damaged, hostile or outdated link gives a [`ShareError`] instead of a panic, a
//! hung tab or a half-built world. The JSON itself is [`link`]'s: its own versioned types, so
//! the engine's types can change without changing what links hold.

pub mod link;

use crate::api::meta::Fields;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

use self::link::WorkspaceV1;
use crate::api::ObjectKey;
use crate::engine::{Input, World};
use crate::view::session::{self, SessionAction, Starter};
use crate::view::Syntax;

/// Share links start with `#w` + [`Workspace::VERSION`] + `.`.
pub const HASH_PREFIX: &str = "#w1.";
/// Refuse to inflate links beyond this (a hostile link cannot eat the tab's memory).
pub const MAX_INFLATED_BYTES: usize = 4 * 1024 * 1024;
/// Most actions a session may hold (an hour of play at one action per 100 ms tick is 36,000).
pub const MAX_ACTIONS: usize = 200_000;
/// Longest `advance` one action may ask for: one "Run until converged" worth of time.
pub const MAX_ADVANCE_MS: u64 = session::RUN_MAX_MS;
/// Largest editor text kept in a workspace.
pub const MAX_EDITOR_BYTES: usize = 1024 * 1024;
/// Longest principal name (a service-account username is at most about 320 bytes).
pub const MAX_PRINCIPAL_BYTES: usize = 512;
/// Engine events a restored session may take to replay: ten times what the large starter takes
/// to converge (about 25,000), so real sessions fit and a link built to hang the tab does not.
pub const REPLAY_MAX_EVENTS: u64 = 250_000;

/// The editor's Apply target: the main resource or its `/status` subresource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    #[default]
    Main,
    Status,
}

/// The colour theme the user picked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

/// Everything that is saved and shared: the session (starter, seed, actions, cursor) and the
/// user's workspace around it. Its serde form is [`link::WorkspaceV1`]'s.
#[derive(Clone, Debug, PartialEq)]
pub struct Workspace {
    pub v: u32,
    pub starter: Starter,
    pub seed: u64,
    pub actions: Vec<SessionAction>,
    pub cursor: Option<u64>,
    pub selected: Option<ObjectKey>,
    pub editor_text: String,
    pub syntax: Syntax,
    pub principal: String,
    pub target: Target,
    pub theme: Theme,
    pub speed: usize,
}

impl Workspace {
    /// The format version written into `v` and into the link prefix.
    pub const VERSION: u32 = 1;

    pub fn fresh(starter: Starter) -> Self {
        Workspace {
            v: Self::VERSION,
            starter,
            seed: 1,
            actions: starter.actions(),
            cursor: None,
            selected: None,
            editor_text: String::new(),
            syntax: Syntax::Json,
            principal: "alice".into(),
            target: Target::Main,
            theme: Theme::System,
            speed: 2,
        }
    }

    /// Checks every field against the bounds above; the error names the field.
    pub fn validate(&self) -> Result<(), ShareError> {
        if self.actions.len() > MAX_ACTIONS {
            return Err(invalid(
                "actions",
                format!(
                    "{} actions is more than the {MAX_ACTIONS} a session may hold",
                    self.actions.len()
                ),
            ));
        }
        for (i, action) in self.actions.iter().enumerate() {
            if let SessionAction::Apply {
                input: Input::Advance { ms },
                ..
            } = action
            {
                if *ms > MAX_ADVANCE_MS {
                    return Err(invalid(
                        &format!("actions[{i}].input.ms"),
                        format!(
                            "{ms} ms is more than the {MAX_ADVANCE_MS} ms one step may advance"
                        ),
                    ));
                }
            }
        }
        if let Some(c) = self.cursor {
            if c > self.actions.len() as u64 {
                return Err(invalid(
                    "cursor",
                    format!(
                        "step {c} is past the end of the session ({} steps)",
                        self.actions.len()
                    ),
                ));
            }
        }
        if self.editor_text.len() > MAX_EDITOR_BYTES {
            return Err(invalid(
                "editor_text",
                format!(
                    "{} bytes is more than the {MAX_EDITOR_BYTES} the editor keeps",
                    self.editor_text.len()
                ),
            ));
        }
        if self.principal.is_empty() {
            return Err(invalid("principal", "Required value".into()));
        }
        if self.principal.len() > MAX_PRINCIPAL_BYTES
            || self.principal.chars().any(char::is_control)
        {
            return Err(invalid(
                "principal",
                format!(
                    "not a user name (at most {MAX_PRINCIPAL_BYTES} bytes, no control characters)"
                ),
            ));
        }
        Ok(())
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Self::fresh(Starter::Small)
    }
}

/// Why a saved workspace or a share link could not be restored. Every message is one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    #[error("the link is not a Converge share link")]
    Prefix,
    #[error("the link is damaged (base64)")]
    Base64,
    #[error("the link is damaged (compression)")]
    Inflate,
    #[error("the link is larger than {MAX_INFLATED_BYTES} bytes once inflated")]
    TooLarge,
    #[error("the saved workspace is not valid: {0}")]
    Json(String),
    #[error("{}", version_message(.found))]
    Version { found: u32 },
    #[error("the saved workspace is not valid: {field}: {message}")]
    Invalid { field: String, message: String },
    #[error("the session did not replay within {max_events} engine events (stopped after step {step} of {total})")]
    ReplayBudget {
        max_events: u64,
        step: usize,
        total: usize,
    },
}

fn version_message(found: &u32) -> String {
    let found = *found;
    let this = Workspace::VERSION;
    if found < this {
        format!("the saved workspace is from an older Converge (format {found}); this build reads format {this}")
    } else {
        format!("the saved workspace is from a newer Converge (format {found}); this build reads format {this}")
    }
}

fn invalid(field: &str, message: String) -> ShareError {
    ShareError::Invalid {
        field: field.into(),
        message,
    }
}

/// The workspace as JSON (the localStorage form and the share link's payload).
pub fn to_json(w: &Workspace) -> String {
    serde_json::to_string(&WorkspaceV1::from(w)).unwrap_or_default()
}

/// Reads a saved workspace: the version first (so an old format says so rather than naming a
/// missing field), then the fields, then their bounds.
pub fn from_json(text: &str) -> Result<Workspace, ShareError> {
    let v: crate::json::Value = serde_json::from_str(text).map_err(|e| json_error(&e))?;
    let found = match v.field("v") {
        None => 0,
        Some(n) => n
            .as_u64()
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
    };
    if found != Workspace::VERSION {
        return Err(ShareError::Version { found });
    }
    let w = Workspace::from(crate::json::from_value::<WorkspaceV1>(v).map_err(|e| json_error(&e))?);
    w.validate()?;
    Ok(w)
}

fn json_error(e: &serde_json::Error) -> ShareError {
    // serde_json's messages are one line; keep them so even if a future version is not.
    ShareError::Json(e.to_string().replace('\n', " "))
}

/// The share link's fragment, `#w1.` followed by the deflated JSON in URL-safe base64.
pub fn to_hash(w: &Workspace) -> String {
    let packed = miniz_oxide::deflate::compress_to_vec(to_json(w).as_bytes(), 9);
    format!("{HASH_PREFIX}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Reads a share link's fragment (with its `#`).
pub fn from_hash(hash: &str) -> Result<Workspace, ShareError> {
    let Some(body) = hash.strip_prefix(HASH_PREFIX) else {
        return Err(
            older_link(hash).map_or(ShareError::Prefix, |found| ShareError::Version { found })
        );
    };
    let packed = URL_SAFE_NO_PAD
        .decode(body.trim_end())
        .map_err(|_| ShareError::Base64)?;
    let raw = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_INFLATED_BYTES)
        .map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => ShareError::TooLarge,
            _ => ShareError::Inflate,
        })?;
    let text = std::str::from_utf8(&raw).map_err(|_| ShareError::Inflate)?;
    from_json(text)
}

/// Whether a URL fragment is meant as a share link (this format or another one), so the page
/// opens it, or explains why it cannot, instead of ignoring it.
pub fn is_share_link(hash: &str) -> bool {
    hash.starts_with(HASH_PREFIX) || older_link(hash).is_some()
}

/// `#w<n>.` with another format number `n`.
fn older_link(hash: &str) -> Option<u32> {
    let rest = hash.strip_prefix("#w")?;
    let (n, _) = rest.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(n.parse().unwrap_or(u32::MAX))
}

/// Rebuilds the workspace's world: a fresh world for its starter and seed with every action
/// replayed (`each` sees each world and report). Refused once the replay has processed more
/// than `max_events` engine events, so a link cannot hang the page.
pub fn replay(
    w: &Workspace,
    max_events: u64,
    each: impl FnMut(&World, crate::engine::StepReport),
) -> Result<World, ShareError> {
    replay_on(World::new(w.starter.config(w.seed)), w, max_events, each)
}

/// [`replay`] on another starting world: an opened scenario's world at t=0.
pub fn replay_on(
    mut world: World,
    w: &Workspace,
    max_events: u64,
    mut each: impl FnMut(&World, crate::engine::StepReport),
) -> Result<World, ShareError> {
    w.validate()?;
    let mut events: u64 = 0;
    for (i, action) in w.actions.iter().enumerate() {
        let report = session::perform(&mut world, action);
        events = events.saturating_add(report.processed);
        each(&world, report);
        if events > max_events {
            return Err(ShareError::ReplayBudget {
                max_events,
                step: i + 1,
                total: w.actions.len(),
            });
        }
    }
    Ok(world)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_survives_the_share_link() {
        let w = Workspace {
            editor_text: "<img src=x onerror=alert(1)>".into(),
            ..Workspace::default()
        };
        let hash = to_hash(&w);
        assert!(hash.starts_with(HASH_PREFIX));
        assert_eq!(from_hash(&hash), Ok(w));
    }

    #[test]
    fn the_replay_budget_counts_every_event_even_when_reports_are_kept_short() {
        let w = Workspace::default();
        let mut base = World::new(w.starter.config(w.seed));
        base.keep_reports_short(2);
        let full = replay_on(
            World::new(w.starter.config(w.seed)),
            &w,
            u64::MAX,
            |_, _| {},
        )
        .expect("the starter replays");
        let budget = full.trace().len() as u64 / 2;
        assert!(matches!(
            replay_on(base, &w, budget, |_, _| {}),
            Err(ShareError::ReplayBudget { .. })
        ));
    }

    #[test]
    fn damaged_input_is_an_error_not_a_panic() {
        assert_eq!(from_hash("#nope"), Err(ShareError::Prefix));
        assert_eq!(from_hash("#w1.!!!"), Err(ShareError::Base64));
        assert_eq!(from_hash("#w1.AAAA"), Err(ShareError::Inflate));
        assert!(is_share_link("#w1.x") && is_share_link("#w0.x") && is_share_link("#w12.x"));
        assert!(
            !is_share_link("#spec-editor") && !is_share_link("#w.x") && !is_share_link("#wx1.y")
        );
        assert!(matches!(
            from_json("{\"v\": 1, \"seed\": \"x\"}"),
            Err(ShareError::Json(_))
        ));
        assert_eq!(
            from_json("{\"v\": 99}"),
            Err(ShareError::Version { found: 99 })
        );
    }
}
