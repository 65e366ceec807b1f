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

/// Set once the newcomer's hint has gone (first edit applied, or dismissed): it is not shown
/// again in this browser. Whenever it is written the workspace is saved too, so web/boot.js
/// never pre-draws a first screen with the hint for a browser that has seen it.
pub const HINT_DONE_KEY: &str = "converge.hint.first-edit";

#[cfg(test)]
mod tests {
    use super::*;

    /// web/boot.js decides before the wasm arrives whether a pre-drawn first screen may show: not
    /// with a saved session under the starter's or the scenario's key, nor with a share link.
    #[test]
    fn boot_js_knows_the_storage_key_and_the_share_link_form() {
        let boot = include_str!("../../../web/boot.js");
        assert!(boot.contains(&format!("const STORAGE_KEY = '{STORAGE_KEY}';")));
        assert!(boot.contains(r"const SHARE_LINK = /^#w[0-9]+\./;"));
        assert!(boot.contains("`${STORAGE_KEY}.scenario.${id}`"));
        assert_eq!(
            scenario_storage_key("scale-up"),
            format!("{STORAGE_KEY}.scenario.scale-up")
        );
        let link = to_hash(&converge_core::view::share::Workspace::default());
        assert!(link.starts_with("#w1."), "{link}");
        assert!(
            is_share_link("#w0.x") && is_share_link("#w12.x") && !is_share_link("#spec-editor")
        );
    }
}
