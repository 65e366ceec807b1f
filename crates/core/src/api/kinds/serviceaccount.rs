//! ServiceAccounts (`v1`): the identity a Pod runs as (admission checks it exists).

use super::super::typed::{FieldTypes, Ty};
use super::KindStrategy;

/// The `ServiceAccount` strategy.
pub(crate) struct ServiceAccountStrategy;

impl KindStrategy for ServiceAccountStrategy {
    fn field_types(&self) -> FieldTypes {
        &[(
            "/automountServiceAccountToken",
            Ty::Bool,
            "ServiceAccount.automountServiceAccountToken",
        )]
    }
}
