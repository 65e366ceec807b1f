//! The simulated kube-apiserver: storage, verbs, generation rules, the status subresource,
//! optimistic concurrency, validation, RBAC, watch and audit.
//!
//! The entry point is [`ApiServer::handle`]; requests are built with the [`ApiRequest`]
//! builders (`create`, `get`, `list`, `update`, `update_status`, `patch`, `patch_status`,
//! `delete`, `bind`). Submodules:
//! - [`types`]: the wire vocabulary shared with the engine, controllers, CLI and web view.
//! - [`kinds`]: the kind registry and one strategy per kind (`kinds/<kind>.rs`).
//! - [`meta`]: typed reads of object metadata.
//! - [`store`]: persistent object storage with uid and owner indexes.
//! - [`strategy`]: per-kind defaults, typed decoding checks, validation and generation rules.
//! - [`validation`]: field errors and name/label/condition formats with kube's messages.
//! - [`rbac`]: the authorizer and the default policy.
//! - [`selector`]: label selectors.
//! - [`decode`]: JSON/YAML manifests and request-size guards.
//! - [`errors`]: kube's refusal messages.

#![allow(
    clippy::result_large_err,
    reason = "ApiError mirrors metav1.Status (the agreed contract); requests are not a hot path"
)]

mod admission;
mod create;
pub mod decode;
mod delete;
pub mod errors;
mod gc;
pub mod kinds;
mod manifest;
pub mod meta;
pub mod names;
#[cfg(test)]
mod properties;
pub mod quantity;
pub mod rbac;
pub(crate) mod scale;
pub(crate) use scale::has_scale;
pub mod selector;
mod server;
pub mod store;
pub mod strategic;
pub mod strategy;
pub mod typed;
pub mod types;
mod update;
pub mod validation;
mod watch;
pub use watch::DrainedEvent;

pub use decode::parse_manifests;
pub use gc::{GcMode, FOREGROUND, ORPHAN};
pub use kinds::{KindRules, ResourceInfo};
pub use rbac::principals;
pub use selector::Selector;
pub use server::{ApiServer, INITIAL_NAMESPACES};
pub use types::*;
