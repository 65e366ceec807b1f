//! Field validation with kube's message shapes: field errors (apimachinery
//! `util/validation/field/errors.go`), name and label formats (`util/validation/validation.go`),
//! object metadata (`api/validation/objectmeta.go`) and `metav1.Condition`
//! (`apis/meta/v1/validation`).

use crate::api::meta::Fields;
use crate::json::{Map, Value};

/// What is wrong with a field; each renders as kube's `ErrorType` string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    Required,
    Invalid,
    Forbidden,
    Duplicate,
    NotSupported,
    TooLong,
    TooMany,
}

/// One field-level validation error: `spec.replicas: Invalid value: -1: must be ...`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {}", self.body())]
pub struct FieldError {
    pub kind: FieldErrorKind,
    /// The field path, e.g. `spec.template.metadata.labels`.
    pub field: String,
    /// The offending value (not shown for Required, Forbidden, TooLong).
    pub value: Value,
    /// The value as kube prints it, when it is not a plain JSON rendering (e.g. Go's
    /// `map[string]string{...}`).
    pub rendered: Option<String>,
    pub detail: String,
}

impl FieldError {
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::make(FieldErrorKind::Required, field, Value::Null, detail)
    }
    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::make(FieldErrorKind::Invalid, field, value, detail)
    }
    /// `Invalid value: <rendered>: detail`, with the value printed as given.
    pub fn invalid_raw(
        field: impl Into<String>,
        rendered: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        let mut e = Self::make(FieldErrorKind::Invalid, field, Value::Null, detail);
        e.rendered = Some(rendered.into());
        e
    }
    /// `Invalid value: detail` without a value (`field.OmitValueType{}`).
    pub fn invalid_omit_value(field: impl Into<String>, detail: impl Into<String>) -> Self {
        let mut e = Self::make(FieldErrorKind::Invalid, field, Value::Null, detail);
        e.rendered = Some(String::new());
        e
    }
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::make(FieldErrorKind::Forbidden, field, Value::Null, detail)
    }
    pub fn duplicate(field: impl Into<String>, value: Value) -> Self {
        Self::make(FieldErrorKind::Duplicate, field, value, "")
    }
    /// `Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
        Self::make(
            FieldErrorKind::NotSupported,
            field,
            value,
            format!("supported values: {}", list.join(", ")),
        )
    }
    /// `Too long: may not be more than N bytes`.
    pub fn too_long(field: impl Into<String>, max_bytes: usize) -> Self {
        Self::make(
            FieldErrorKind::TooLong,
            field,
            Value::Null,
            format!("may not be more than {max_bytes} bytes"),
        )
    }
    /// `Too many: n: must have at most m items`.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        Self::make(
            FieldErrorKind::TooMany,
            field,
            Value::from(actual),
            format!("must have at most {max} items"),
        )
    }

    fn make(
        kind: FieldErrorKind,
        field: impl Into<String>,
        value: Value,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.into(),
            value,
            rendered: None,
            detail: detail.into(),
        }
    }

    /// The message without the field name (kube's `ErrorBody`).
    pub fn body(&self) -> String {
        let type_str = match self.kind {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::TooMany => "Too many",
        };
        let mut s = match self.kind {
            FieldErrorKind::Required | FieldErrorKind::Forbidden | FieldErrorKind::TooLong => {
                type_str.to_owned()
            }
            _ => match &self.rendered {
                Some(r) if r.is_empty() => type_str.to_owned(),
                Some(r) => format!("{type_str}: {r}"),
                None => format!("{type_str}: {}", render_value(&self.value)),
            },
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

/// Renders a bad value as kube does for simple types: strings quoted, numbers and booleans
/// bare, null as `null`; composite values as compact JSON (kube prints Go syntax there).
pub fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

/// Go's `%q` for the strings the simulator handles (JSON escaping agrees on ASCII).
pub fn go_quote(s: &str) -> String {
    Value::from(s).to_string()
}

/// kube's `RegexError`: `msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, ex) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{ex}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONDITION_REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
const CONDITION_REASON_MSG: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_label_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && lower_alnum(b[0])
        && lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| lower_alnum(c) || c == b'-')
}

/// RFC 1123 label (namespaces, container names): messages, empty when valid.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_label_shaped(s) {
        errs.push(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

/// RFC 1123 subdomain (most object names).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if s.is_empty() || !s.split('.').all(is_label_shaped) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// RFC 1035 label (Service names).
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| lower_alnum(c) || c == b'-');
    if !ok {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// A path segment name (RBAC object names may contain `:`).
pub fn path_segment_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s == "." || s == ".." {
        errs.push(format!("may not be '{s}'"));
    }
    for bad in ["/", "%"] {
        if s.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn qualified_name_part_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter()
            .all(|&c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
}

/// A qualified name (`[prefix/]name`): label keys, finalizers, condition types.
pub fn qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                for m in dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !qualified_name_part_ok(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// A label value: empty, or a qualified-name part of at most 63 characters.
pub fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !s.is_empty() && !qualified_name_part_ok(s) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

fn condition_reason_ok(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    let last = b[b.len() - 1];
    (b.len() == 1 || last.is_ascii_alphanumeric() || last == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// Pushes one `Invalid` error per message.
pub fn push_all(errs: &mut Vec<FieldError>, field: &str, value: &str, msgs: Vec<String>) {
    for m in msgs {
        errs.push(FieldError::invalid(field, Value::from(value), m));
    }
}

/// A string -> string map (labels, annotations, matchLabels) with kube's key/value checks.
pub fn validate_labels(labels: &Map, field: &str, errs: &mut Vec<FieldError>) {
    for (k, v) in labels {
        push_all(errs, field, k, qualified_name(k));
        if let Some(s) = v.as_str() {
            push_all(errs, field, s, label_value(s));
        }
    }
}

/// Annotations: qualified-name keys, total size at most 256 KiB.
pub fn validate_annotations(ann: &Map, field: &str, errs: &mut Vec<FieldError>) {
    let mut total = 0usize;
    for (k, v) in ann {
        push_all(
            errs,
            field,
            &k.to_lowercase(),
            qualified_name(&k.to_lowercase()),
        );
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    const MAX: usize = 256 * 1024;
    if total > MAX {
        errs.push(FieldError::too_long(field, MAX));
    }
}

/// Validates one `metav1.Condition` list (type, status, reason, message, lengths, duplicates).
pub fn validate_conditions(conditions: &[Value], field: &str, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        let path = format!("{field}[{i}]");
        let Some(obj) = c.as_object() else {
            errs.push(FieldError::invalid(&path, c.clone(), "must be an object"));
            continue;
        };
        let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
        let ctype = s("type");
        if ctype.is_empty() {
            errs.push(FieldError::required(format!("{path}.type"), "must be set"));
        } else {
            push_all(errs, &format!("{path}.type"), ctype, qualified_name(ctype));
            if ctype.len() > 316 {
                errs.push(FieldError::too_long(format!("{path}.type"), 316));
            }
            if seen.contains(&ctype) {
                errs.push(FieldError::duplicate(
                    format!("{path}.type"),
                    Value::from(ctype),
                ));
            }
            seen.push(ctype);
        }
        let status = s("status");
        if status.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.status"),
                "must be set",
            ));
        } else if !matches!(status, "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                format!("{path}.status"),
                Value::from(status),
                &["True", "False", "Unknown"],
            ));
        }
        if let Some(g) = obj.field("observedGeneration").and_then(Value::as_i64) {
            if g < 0 {
                errs.push(FieldError::invalid(
                    format!("{path}.observedGeneration"),
                    Value::from(g),
                    "must be greater than or equal to zero",
                ));
            }
        }
        if s("lastTransitionTime").is_empty() {
            errs.push(FieldError::required(
                format!("{path}.lastTransitionTime"),
                "must be set",
            ));
        }
        let reason = s("reason");
        if reason.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.reason"),
                "must be set",
            ));
        } else {
            if !condition_reason_ok(reason) {
                errs.push(FieldError::invalid(
                    format!("{path}.reason"),
                    Value::from(reason),
                    regex_error(
                        CONDITION_REASON_MSG,
                        CONDITION_REASON_FMT,
                        &[
                            "my_name",
                            "MY_NAME",
                            "MyName",
                            "ReasonA,ReasonB",
                            "ReasonA:ReasonB",
                        ],
                    ),
                ));
            }
            if reason.len() > 1024 {
                errs.push(FieldError::too_long(format!("{path}.reason"), 1024));
            }
        }
        if s("message").len() > 32 * 1024 {
            errs.push(FieldError::too_long(format!("{path}.message"), 32 * 1024));
        }
    }
}

/// A looser check for built-in kinds' own condition types (DeploymentCondition,
/// PodCondition, ...): type required and unique, status one of True/False/Unknown.
pub fn validate_builtin_conditions(conditions: &[Value], field: &str, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        // Written only for an error: these checks run on every status write.
        let path = |member: &str| format!("{field}[{i}].{member}");
        let ctype = c.field("type").and_then(Value::as_str).unwrap_or("");
        if ctype.is_empty() {
            errs.push(FieldError::required(path("type"), ""));
        } else if seen.contains(&ctype) {
            errs.push(FieldError::duplicate(path("type"), Value::from(ctype)));
        } else {
            seen.push(ctype);
        }
        let status = c.field("status").and_then(Value::as_str).unwrap_or("");
        if !matches!(status, "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                path("status"),
                Value::from(status),
                &["True", "False", "Unknown"],
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_errors_render_like_kube() {
        let e = FieldError::invalid(
            "spec.replicas",
            Value::from(-1),
            "must be greater than or equal to 0",
        );
        assert_eq!(
            e.to_string(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        let e = FieldError::required("spec.selector", "");
        assert_eq!(e.to_string(), "spec.selector: Required value");
        let e =
            FieldError::not_supported("status", Value::from("Yes"), &["True", "False", "Unknown"]);
        assert_eq!(
            e.to_string(),
            "status: Unsupported value: \"Yes\": supported values: \"True\", \"False\", \"Unknown\""
        );
        assert_eq!(
            FieldError::too_long("reason", 1024).to_string(),
            "reason: Too long: may not be more than 1024 bytes"
        );
    }

    #[test]
    fn dns_subdomain_names_are_checked_with_kubes_message() {
        assert!(dns1123_subdomain("web").is_empty());
        assert!(dns1123_subdomain("web.example-1.com").is_empty());
        let errs = dns1123_subdomain("Web_1");
        assert_eq!(errs, vec!["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_owned()]);
        assert_eq!(dns1123_subdomain(&"a".repeat(254)).len(), 1);
        assert!(!dns1123_subdomain("").is_empty());
        assert!(!dns1123_subdomain("a..b").is_empty());
    }

    #[test]
    fn labels_and_dns1035_names_follow_their_own_formats() {
        assert!(dns1123_label("my-name").is_empty());
        assert!(!dns1123_label("my.name").is_empty());
        assert!(dns1035_label("web").is_empty());
        assert!(!dns1035_label("1web").is_empty());
        assert!(label_value("").is_empty());
        assert!(label_value("My_value.1").is_empty());
        assert!(!label_value("-x").is_empty());
        assert!(qualified_name("app.kubernetes.io/name").is_empty());
        assert!(!qualified_name("a/b/c").is_empty());
        assert!(!qualified_name("/x").is_empty());
        assert!(path_segment_name("system:controller:x").is_empty());
        assert!(!path_segment_name("a/b").is_empty());
    }

    #[test]
    fn regex_errors_list_examples_with_kubes_double_space() {
        let m = &qualified_name("-bad")[0];
        assert!(
            m.contains("(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used"),
            "{m}"
        );
    }

    #[test]
    fn conditions_are_validated_field_by_field() {
        let conds = vec![
            crate::json::json!({"type": "Ready", "status": "True", "reason": "AllGood", "lastTransitionTime": "2025-01-01T00:00:00Z"}),
            crate::json::json!({"type": "Ready", "status": "Yes", "reason": "1bad", "lastTransitionTime": ""}),
        ];
        let mut errs = Vec::new();
        validate_conditions(&conds, "status.conditions", &mut errs);
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 4, "{text:?}");
        assert_eq!(
            text[0],
            "status.conditions[1].type: Duplicate value: \"Ready\""
        );
        assert!(text[1].starts_with("status.conditions[1].status: Unsupported value: \"Yes\""));
        assert_eq!(
            text[2],
            "status.conditions[1].lastTransitionTime: Required value: must be set"
        );
        assert!(text[3].starts_with("status.conditions[1].reason: Invalid value: \"1bad\": a condition reason must start with alphabetic character"));
    }

    #[test]
    fn condition_reasons_allow_commas_colons_and_trailing_underscores() {
        for ok in [
            "A",
            "MyReason",
            "ReasonA,ReasonB",
            "ReasonA:ReasonB",
            "my_name_",
        ] {
            assert!(condition_reason_ok(ok), "{ok}");
        }
        for bad in ["", "1A", "A,", "A:", "A-B", "A B"] {
            assert!(!condition_reason_ok(bad), "{bad}");
        }
    }

    #[test]
    fn condition_lengths_are_capped() {
        let conds = vec![crate::json::json!({
            "type": "Ready", "status": "True", "reason": "R".repeat(1025),
            "message": "m".repeat(32 * 1024 + 1), "lastTransitionTime": "2025-01-01T00:00:00Z"
        })];
        let mut errs = Vec::new();
        validate_conditions(&conds, "status.conditions", &mut errs);
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            vec![
                "status.conditions[0].reason: Too long: may not be more than 1024 bytes".to_owned(),
                "status.conditions[0].message: Too long: may not be more than 32768 bytes"
                    .to_owned(),
            ]
        );
    }
}

/// An IP address as `netip.ParseAddr` reads one (dotted decimal without leading zeros, or
/// IPv6 groups with at most one `::` and an optional dotted IPv4 tail), without std's `IpAddr`
/// (whose parser and printer would add to the browser build for a few fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ip {
    V4([u8; 4]),
    V6([u16; 8]),
}

impl Ip {
    pub fn parse(s: &str) -> Option<Ip> {
        if s.contains(':') {
            parse_v6(s).map(Ip::V6)
        } else {
            parse_v4(s).map(Ip::V4)
        }
    }

    pub fn is_v6(self) -> bool {
        matches!(self, Ip::V6(_))
    }
}

fn parse_v4(s: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = s.split('.');
    for slot in &mut out {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 3 || (p.len() > 1 && p.starts_with('0')) {
            return None;
        }
        if !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *slot = p.parse().ok()?;
    }
    parts.next().is_none().then_some(out)
}

fn parse_v6(s: &str) -> Option<[u16; 8]> {
    let groups = |part: &str| -> Option<Vec<u16>> {
        if part.is_empty() {
            return Some(Vec::new());
        }
        let mut out = Vec::new();
        let pieces: Vec<&str> = part.split(':').collect();
        for (i, g) in pieces.iter().enumerate() {
            if i == pieces.len() - 1 && g.contains('.') {
                let [a, b, c, d] = parse_v4(g)?;
                out.push(u16::from_be_bytes([a, b]));
                out.push(u16::from_be_bytes([c, d]));
            } else if g.is_empty() || g.len() > 4 {
                return None;
            } else {
                out.push(u16::from_str_radix(g, 16).ok()?);
            }
        }
        Some(out)
    };
    let mut out = [0u16; 8];
    match s.split_once("::") {
        Some((head, tail)) => {
            if tail.contains("::") {
                return None;
            }
            let (h, t) = (groups(head)?, groups(tail)?);
            if h.len() + t.len() > 7 {
                return None;
            }
            out[..h.len()].copy_from_slice(&h);
            out[8 - t.len()..].copy_from_slice(&t);
        }
        None => {
            let g = groups(s)?;
            if g.len() != 8 {
                return None;
            }
            out.copy_from_slice(&g);
        }
    }
    Some(out)
}
