//! View models for the playground: plain structs derived from the engine's public API, so the
//! web crate only formats. Everything here is deterministic and tested natively.

pub mod chart;
pub mod events;
pub mod sequence;
pub mod session;
pub mod share;
pub mod status;
pub mod timeline;
pub mod tree;
pub mod why;

use crate::json::Value;

/// `text` escaped for XML/HTML text and attribute values: the sequence diagram and the chart
/// are SVG markup built here, and their labels hold user-written strings (names, messages).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The editor's two syntaxes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Syntax {
    #[default]
    Json,
    Yaml,
}

/// What the editor shows for a stored object: everything but `status` and
/// `metadata.managedFields` (the user edits spec and metadata; resourceVersion stays, so an edit
/// of an old version is refused with 409 like kubectl edit's).
pub fn editable(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
    }
    v
}

/// `value` printed in `syntax`.
pub fn print(value: &Value, syntax: Syntax) -> String {
    match syntax {
        Syntax::Json => serde_json::to_string_pretty(value).unwrap_or_default(),
        Syntax::Yaml => serde_yaml_ng::to_string(value).unwrap_or_default(),
    }
}

/// Reformats editor text in `syntax` (JSON or YAML in, either out); the parse error otherwise.
pub fn format(text: &str, syntax: Syntax) -> Result<String, crate::parse::ParseError> {
    let docs = crate::parse::parse_documents(text)?;
    Ok(match docs.as_slice() {
        [one] => print(one, syntax),
        many => print(&Value::Array(many.to_vec().into()), syntax),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn editable_drops_status_and_managed_fields_but_keeps_the_resource_version() {
        let o = json!({"metadata": {"resourceVersion": "7", "managedFields": []}, "spec": {}, "status": {}});
        assert_eq!(
            editable(&o),
            json!({"metadata": {"resourceVersion": "7"}, "spec": {}})
        );
    }

    #[test]
    fn json_formats_to_yaml_and_back() {
        let y = format("{\"a\": {\"b\": 1}}", Syntax::Yaml).unwrap_or_default();
        assert_eq!(y, "a:\n  b: 1\n");
        let j = format(&y, Syntax::Json).unwrap_or_default();
        assert_eq!(j, "{\n  \"a\": {\n    \"b\": 1\n  }\n}");
    }
}
