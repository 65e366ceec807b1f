//! Workspace encoding for localStorage and share links: versioned JSON, and for links
//! deflate (miniz_oxide) + URL-safe base64. Pure functions; the DOM side lives in `app`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use crate::state::Workspace;

/// The localStorage key.
pub const STORAGE_KEY: &str = "converge.workspace";
/// Share links look like `#w1.<base64url(deflate(json))>`.
pub const HASH_PREFIX: &str = "#w1.";
/// Refuse to inflate links beyond this (a hostile link cannot eat the tab's memory).
const MAX_INFLATED: usize = 4 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the saved workspace is not valid: {0}")]
    Json(String),
    #[error("the saved workspace has version {0}; this build reads version {1}")]
    Version(u32, u32),
    #[error("the link is not a Converge share link")]
    Prefix,
    #[error("the link is damaged (base64)")]
    Base64,
    #[error("the link is damaged (compression)")]
    Inflate,
}

pub fn to_json(w: &Workspace) -> String {
    serde_json::to_string(w).unwrap_or_default()
}

pub fn from_json(text: &str) -> Result<Workspace, DecodeError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| DecodeError::Json(e.to_string()))?;
    let version = v.get("v").and_then(serde_json::Value::as_u64).unwrap_or(0) as u32;
    if version != Workspace::VERSION {
        return Err(DecodeError::Version(version, Workspace::VERSION));
    }
    serde_json::from_value(v).map_err(|e| DecodeError::Json(e.to_string()))
}

pub fn to_hash(w: &Workspace) -> String {
    let packed = miniz_oxide::deflate::compress_to_vec(to_json(w).as_bytes(), 9);
    format!("{HASH_PREFIX}{}", URL_SAFE_NO_PAD.encode(packed))
}

pub fn from_hash(hash: &str) -> Result<Workspace, DecodeError> {
    let body = hash.strip_prefix(HASH_PREFIX).ok_or(DecodeError::Prefix)?;
    let packed = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| DecodeError::Base64)?;
    let raw = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_INFLATED)
        .map_err(|_| DecodeError::Inflate)?;
    from_json(&String::from_utf8_lossy(&raw))
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
    fn damaged_input_is_an_error_not_a_panic() {
        assert_eq!(from_hash("#nope"), Err(DecodeError::Prefix));
        assert_eq!(from_hash("#w1.!!!"), Err(DecodeError::Base64));
        assert_eq!(from_hash("#w1.AAAA"), Err(DecodeError::Inflate));
        assert!(matches!(
            from_json("{\"v\": 1, \"seed\": \"x\"}"),
            Err(DecodeError::Json(_))
        ));
        assert_eq!(from_json("{\"v\": 99}"), Err(DecodeError::Version(99, 1)));
    }
}
