//! Typed decoding: kube decodes a request body into the kind's Go struct, so a value of the wrong
//! JSON type in a field the kind defines is a 400 naming the Go field; quantities are parsed as
//! apimachinery's `resource.ParseQuantity` parses them.

use crate::api::meta::Fields;
use crate::json::Value;

use super::kinds::{split_api_version, ResourceInfo};
use super::meta::JsonPointer;

/// A kind's typed fields: JSON pointer, the type the Go struct gives it, the Go field name.
pub(crate) type FieldTypes = &'static [(&'static str, Ty, &'static str)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Int32,
    Int64,
    Bool,
    Str,
    Object(&'static str),
    Array(&'static str),
    StrMap,
    StrList,
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_error(v: &Value, go_field: &str, go_type: &str) -> String {
    let what = match v {
        Value::Number(n) => format!("number {n}"),
        other => json_type_name(other).to_owned(),
    };
    format!("json: cannot unmarshal {what} into Go struct field {go_field} of type {go_type}")
}

/// `v` against `ty`; `go_field` names the field for the error (called only for one; a
/// `dyn` closure, so the check is compiled once rather than once per caller).
fn check(v: &Value, ty: Ty, go_field: &dyn Fn() -> String) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    let type_error = |v: &Value, go_type: &str| type_error(v, &go_field(), go_type);
    let int_ok = |lo: i64, hi: i64| v.as_i64().is_some_and(|n| (lo..=hi).contains(&n));
    match ty {
        Ty::Int32 if !int_ok(i64::from(i32::MIN), i64::from(i32::MAX)) => {
            Err(type_error(v, "int32"))
        }
        Ty::Int64 if !int_ok(i64::MIN, i64::MAX) => Err(type_error(v, "int64")),
        Ty::Bool if !v.is_boolean() => Err(type_error(v, "bool")),
        Ty::Str if !v.is_string() => Err(type_error(v, "string")),
        Ty::Object(go) if !v.is_object() => Err(type_error(v, go)),
        Ty::Array(go) if !v.is_array() => Err(type_error(v, go)),
        Ty::StrMap => match v.as_object() {
            None => Err(type_error(v, "map[string]string")),
            Some(m) => m
                .values()
                .find(|x| !x.is_string() && !x.is_null())
                .map_or(Ok(()), |bad| Err(type_error(bad, "string"))),
        },
        Ty::StrList => match v.as_array() {
            None => Err(type_error(v, "[]string")),
            Some(a) => a
                .iter()
                .find(|x| !x.is_string())
                .map_or(Ok(()), |bad| Err(type_error(bad, "string"))),
        },
        _ => Ok(()),
    }
}

const META_TYPES: &[(&str, Ty, &str)] = &[
    ("/metadata", Ty::Object("v1.ObjectMeta"), "metadata"),
    ("/metadata/name", Ty::Str, "ObjectMeta.metadata.name"),
    (
        "/metadata/generateName",
        Ty::Str,
        "ObjectMeta.metadata.generateName",
    ),
    (
        "/metadata/namespace",
        Ty::Str,
        "ObjectMeta.metadata.namespace",
    ),
    (
        "/metadata/resourceVersion",
        Ty::Str,
        "ObjectMeta.metadata.resourceVersion",
    ),
    ("/metadata/uid", Ty::Str, "ObjectMeta.metadata.uid"),
    (
        "/metadata/generation",
        Ty::Int64,
        "ObjectMeta.metadata.generation",
    ),
    ("/metadata/labels", Ty::StrMap, "ObjectMeta.metadata.labels"),
    (
        "/metadata/annotations",
        Ty::StrMap,
        "ObjectMeta.metadata.annotations",
    ),
    (
        "/metadata/finalizers",
        Ty::StrList,
        "ObjectMeta.metadata.finalizers",
    ),
    (
        "/metadata/ownerReferences",
        Ty::Array("[]v1.OwnerReference"),
        "ObjectMeta.metadata.ownerReferences",
    ),
];

/// apimachinery's `ErrFormatWrong`, for a quantity that does not match its grammar.
pub const QUANTITY_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// apimachinery's `ErrSuffix`, for a well-formed quantity with an unknown suffix (`192i`).
pub const QUANTITY_SUFFIX: &str = "unable to parse quantity's suffix";
/// apimachinery's `ErrNumeric`, for a quantity whose number does not parse (`.`).
pub const QUANTITY_NUMERIC: &str = "unable to parse numeric part of quantity";

/// Why `resource.ParseQuantity` refuses `text`, following its scanner: sign, digits, one
/// optional fraction, then a suffix (binary `Ki`..`Ei`, decimal `n`..`E`, or an exponent
/// `e3`/`E-2`). `None` when it parses.
pub fn quantity_error(text: &str) -> Option<&'static str> {
    let s = text.as_bytes();
    if s.is_empty() {
        return Some(QUANTITY_FORMAT_WRONG);
    }
    let mut pos = usize::from(matches!(s[0], b'-' | b'+'));
    let digits = |from: usize| from + s[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let num_end = digits(pos);
    let mut mantissa_digits = num_end - pos;
    pos = num_end;
    if s.get(pos) == Some(&b'.') {
        let denom_end = digits(pos + 1);
        mantissa_digits += denom_end - pos - 1;
        pos = denom_end;
    }
    let suffix_start = pos;
    pos += s[pos..]
        .iter()
        .take_while(|c| b"eEinumkKMGTP".contains(c))
        .count();
    if pos < s.len() && matches!(s[pos], b'-' | b'+') {
        pos += 1;
    }
    if digits(pos) != s.len() {
        return Some(QUANTITY_FORMAT_WRONG);
    }
    let suffix = &text[suffix_start..];
    let known = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || (suffix.len() > 1
        && matches!(suffix.as_bytes()[0], b'e' | b'E')
        && suffix[1..].parse::<i32>().is_ok());
    if !known {
        return Some(QUANTITY_SUFFIX);
    }
    if mantissa_digits == 0 {
        return Some(QUANTITY_NUMERIC);
    }
    None
}

/// The typed decoding of each container: an object, `name` and `image` strings, `resources`
/// an object whose `requests` and `limits` map resource names to quantities.
fn check_containers(obj: &Value, ptr: &str, go_path: &str) -> Result<(), String> {
    let Some(Value::Array(containers)) = obj.at(ptr) else {
        return Ok(());
    };
    // The Go field names are written only for an error: this runs on every Pod write.
    for c in containers {
        check(c, Ty::Object("v1.Container"), &|| {
            format!("PodSpec.{go_path}")
        })?;
        for (field, ty) in [
            ("name", Ty::Str),
            ("image", Ty::Str),
            ("resources", Ty::Object("v1.ResourceRequirements")),
        ] {
            if let Some(v) = c.get(field) {
                check(v, ty, &|| format!("Container.{go_path}.{field}"))?;
            }
        }
        for list in ["requests", "limits"] {
            let Some(v) = c.get("resources").and_then(|r| r.get(list)) else {
                continue;
            };
            check(v, Ty::Object("v1.ResourceList"), &|| {
                format!("ResourceRequirements.{go_path}.resources.{list}")
            })?;
            for q in v.as_object().into_iter().flat_map(|m| m.values()) {
                let error = match q {
                    Value::Null => continue,
                    Value::String(s) => quantity_error(s.trim()),
                    other => quantity_error(&other.to_string()),
                };
                if let Some(e) = error {
                    return Err(e.to_owned());
                }
            }
        }
    }
    Ok(())
}

/// Typed decoding: a value of the wrong JSON type in a field the kind defines is refused as
/// kube's decoder refuses it (400, naming the Go field). Custom resources are schemaless here,
/// so only their metadata is typed.
///
/// `stored` is the version the write replaces, whose every level passed this check when it was
/// written: a level of `obj` that is one of its levels (the same allocation: a kubelet's status
/// update carries the stored Pod's metadata and spec as they are) is not read again.
pub fn type_check(info: &ResourceInfo, obj: &Value, stored: Option<&Value>) -> Result<(), String> {
    let strategy = info.rules.strategy();
    let status_types = strategy.status_types();
    // kube's decoder error around the field's own message.
    let undecodable = |e: String| {
        let (_, version) = split_api_version(
            obj.field("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("v1"),
        );
        format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {e}",
            kind = info.kind
        )
    };
    let checked_before = |ptr: &str, found: Option<&Value>| {
        found.is_some_and(|f| stored.and_then(|s| s.at(ptr)).is_some_and(|s| shared(f, s)))
    };
    // The lists name a level before its fields (`/metadata`, then `/metadata/name`): a field
    // under the last level looked up from the object is read from that level (one step, not
    // the whole pointer again), and every field under an absent level, or a level checked
    // before, is passed over.
    let mut level: Option<(&str, Option<&Value>)> = None;
    for (ptr, ty, go) in META_TYPES
        .iter()
        .chain(strategy.field_types())
        .chain(status_types)
    {
        let under = level.and_then(|(at, v)| {
            let rest = ptr.strip_prefix(at).filter(|r| r.starts_with('/'))?;
            Some(v.and_then(|v| v.at(rest)))
        });
        let found = match under {
            Some(found) => found,
            None => {
                let found = obj.at(ptr);
                let found = found.filter(|_| !checked_before(ptr, found));
                level = Some((ptr, found));
                found
            }
        };
        if let Some(v) = found {
            check(v, *ty, &|| (*go).to_owned()).map_err(undecodable)?;
        }
    }
    if let Some((ptr, go_path)) = strategy.containers() {
        if !checked_before(ptr, obj.at(ptr)) {
            check_containers(obj, ptr, go_path).map_err(undecodable)?;
        }
    }
    Ok(())
}

/// Whether two values are one object's or array's level (the same allocation).
pub(super) fn shared(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => crate::json::Map::ptr_eq(x, y),
        (Value::Array(x), Value::Array(y)) => crate::json::List::ptr_eq(x, y),
        _ => false,
    }
}

#[cfg(test)]
mod quantity_tests {
    use super::{quantity_error, QUANTITY_FORMAT_WRONG, QUANTITY_NUMERIC, QUANTITY_SUFFIX};

    #[test]
    fn quantities_parse_as_apimachinery_parses_them() {
        for ok in [
            "1", "100m", "64Mi", "1.5", "2Gi", "1e3", "1E-2", "+1", "-1", "0", "1.", ".5", "5k",
        ] {
            assert_eq!(quantity_error(ok), None, "{ok}");
        }
        for bad in ["", "lots", "1.5.5", "64Mx", "1 Gi", "0x10", "true"] {
            assert_eq!(quantity_error(bad), Some(QUANTITY_FORMAT_WRONG), "{bad}");
        }
        for bad in ["192i", "1mi", "5KK", "1e"] {
            assert_eq!(quantity_error(bad), Some(QUANTITY_SUFFIX), "{bad}");
        }
        assert_eq!(quantity_error("."), Some(QUANTITY_NUMERIC));
        assert_eq!(quantity_error("Mi"), Some(QUANTITY_NUMERIC));
    }
}
