//! ControllerRevisions (`apps/v1`): immutable snapshots of a workload's template, as kube's
//! pkg/registry/apps/controllerrevision/strategy.go and `ValidateControllerRevision`
//! (pkg/apis/apps/validation) define them. No status, no generation.

use crate::api::meta::Fields;
use crate::json::Value;

use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::common::{immutable, nonneg};
use super::{KindStrategy, ResourceInfo};

/// The `ControllerRevision` strategy.
pub(crate) struct ControllerRevisionStrategy;

impl KindStrategy for ControllerRevisionStrategy {
    fn field_types(&self) -> FieldTypes {
        &[("/revision", Ty::Int64, "ControllerRevision.revision")]
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        if obj.field("data").is_none_or(Value::is_null) {
            errs.push(FieldError::required("data", "data is mandatory"));
        }
        nonneg(obj, "/revision", "revision", errs);
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        // ValidateControllerRevisionUpdate: data may not change; the revision number may.
        immutable(old, new, "/data", "data", errs);
    }
}
