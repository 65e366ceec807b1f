//! Where the workspace is kept in the browser. The format (versioned JSON, the
//! `#w1.<base64url(deflate(json))>` share link) and its validation live in core,
//! `converge_core::view::share`, so the fuzz target and native tests cover them.

pub use converge_core::view::share::{
    from_hash, from_json, is_share_link, to_hash, to_json, ShareError,
};

/// The localStorage key.
pub const STORAGE_KEY: &str = "converge.workspace";
