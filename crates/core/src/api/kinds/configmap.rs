//! ConfigMaps (`v1`): keys and the 1 MiB size limit (pkg/apis/core/validation ValidateConfigMap).

use crate::json::{json, Value};

use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::{KindStrategy, ResourceInfo};

/// The `ConfigMap` strategy.
pub(crate) struct ConfigMapStrategy;

impl KindStrategy for ConfigMapStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/data", Ty::StrMap, "ConfigMap.data"),
            ("/immutable", Ty::Bool, "ConfigMap.immutable"),
        ]
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        let mut total = 0usize;
        for key in ["data", "binaryData"] {
            if let Some(data) = obj.get(key).and_then(Value::as_object) {
                for (k, v) in data {
                    if !is_valid_config_key(k) {
                        errs.push(FieldError::invalid(
                            format!("{key}[{k}]"),
                            json!(k),
                            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                        ));
                    }
                    total += k.len() + v.as_str().map_or(0, str::len);
                }
            }
        }
        if total > 1024 * 1024 {
            errs.push(FieldError::too_long("data", 1024 * 1024));
        }
    }
}

fn is_valid_config_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 253
        && k != "."
        && k != ".."
        && !k.starts_with("..")
        && k.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}
