//! Converge core: a deterministic, browser-free model of Kubernetes' spec/status machinery.
//!
//! Everything here is pure: no OS clock, no OS randomness, no I/O. The same inputs give the same
//! outputs natively and in wasm. See ARCHITECTURE.md at the repository root for the map.

pub mod api;
pub mod conditions;
pub mod controllers;
pub mod engine;
pub mod json;
pub mod kstatus;
pub mod kubectl;
pub mod parse;
pub mod rest;
pub mod rollout;
pub mod runtime;
pub mod scenario;
#[doc(hidden)]
pub mod testkit;
pub mod time;
pub mod view;
pub mod why;

/// The Kubernetes release Converge models: its API server, controllers, kubelet and kubectl
/// output. Where behaviour changed between releases, this one is followed (docs/fidelity.md).
pub const KUBERNETES_VERSION: &str = "1.32";
