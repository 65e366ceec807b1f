//! Where the workspace is kept in the browser. The format (versioned JSON, the
//! `#w1.<base64url(deflate(json))>` share link) and its validation live in core,
//! `converge_core::view::share`, so the fuzz target and native tests cover them. The state
//! decides what is saved under which key; `crate::platform` writes it.

pub use converge_core::view::share::{
    from_hash, from_json, is_share_link, to_hash, to_json, ShareError,
};

/// The localStorage key.
pub const STORAGE_KEY: &str = "converge.workspace";

/// The localStorage key of a session on scenario `id` (the starter's is [`STORAGE_KEY`]).
pub fn scenario_storage_key(id: &str) -> String {
    format!("{STORAGE_KEY}.scenario.{id}")
}

/// Where the last scenario file the reader opened or pasted is kept (`?scenario=custom`).
pub const CUSTOM_TEXT_KEY: &str = "converge.scenario.custom";

/// Which build web/boot.js loads: `terminal` (the build with the kubectl terminal, once it has
/// been opened in this browser), else the smaller first-visit build.
pub const BUILD_KEY: &str = "converge.build";

/// sessionStorage: set just before the page reloads into the terminal's build, which then
/// opens the terminal at start.
pub const OPEN_TERMINAL_KEY: &str = "converge.open-terminal";

/// Set once the newcomer's hint has gone (first edit applied, or dismissed): it is not shown
/// again in this browser. Whenever it is written the workspace is saved too.
pub const HINT_DONE_KEY: &str = "converge.hint.first-edit";
