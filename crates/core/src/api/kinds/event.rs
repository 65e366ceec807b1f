//! Events (`v1`): what controllers report about an object (its `involvedObject`).

use crate::json::Value;

use super::super::meta::JsonPointer;
use super::super::validation::FieldError;
use super::{KindStrategy, ResourceInfo};

/// The `Event` strategy.
pub(crate) struct EventStrategy;

impl KindStrategy for EventStrategy {
    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        for k in ["kind", "name"] {
            let v = obj
                .at(&format!("/involvedObject/{k}"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if v.is_empty() {
                errs.push(FieldError::required(format!("involvedObject.{k}"), ""));
            }
        }
    }
}
