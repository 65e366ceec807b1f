//! Bindings (`v1`, `pods/binding`): accepted by create only and never stored; the server sets
//! the pod's node (see `api::create`).

use super::KindStrategy;

/// The `Binding` strategy.
pub(crate) struct BindingStrategy;

impl KindStrategy for BindingStrategy {}
