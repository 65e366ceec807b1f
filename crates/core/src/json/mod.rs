//! The JSON value every object, request and answer is held as.
//!
//! Everything in the workspace names `Value`, `Map`, `Number` and `json!` through this module,
//! so their representation is decided in one place.

pub use serde_json::{from_value, json, to_value, Map, Number, Value};
