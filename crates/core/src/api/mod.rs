//! The simulated kube-apiserver: storage, verbs, generation rules, the status subresource,
//! optimistic concurrency, validation, RBAC, watch and audit.

pub mod types;

pub use types::*;
