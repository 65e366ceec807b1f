//! Parsing pasted or loaded manifests: JSON or YAML text into Kubernetes objects.
//!
//! [`parse_documents`] accepts what `kubectl apply -f` accepts: one object, a `List` (any kind
//! ending in `List` with `items`, flattened into its items), a multi-document YAML stream, or a
//! stream of JSON objects. As in kubectl's YAMLOrJSONDecoder, text whose first non-space
//! character is `{` is JSON (so a YAML flow mapping `{kind: Pod}` is a JSON syntax error);
//! everything else is YAML. Empty YAML documents (`---` with nothing) are skipped.
//!
//! Field order is kept (serde_json's `preserve_order`), so an object prints back in the order it
//! was written.
//!
//! Rejected, with a [`ParseError`] carrying the 1-based line and column where there is one:
//! - input over [`MAX_INPUT_BYTES`] (8 MiB), input that is not UTF-8, control characters
//!   (binary data);
//! - empty input (nothing but whitespace, comments or empty documents);
//! - a document or List item that is not an object (a mapping);
//! - a key that appears twice in one mapping (serde_json would silently keep the last);
//! - NaN and infinities (YAML `.nan`, `.inf`), which JSON cannot hold;
//! - nesting deeper than [`MAX_DEPTH`] arrays and objects;
//! - syntax errors, with the underlying parser's message.

use crate::api::meta::Fields;
use std::fmt;

use crate::json::{Map, Value};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The largest input accepted, in bytes: 8 MiB.
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// The deepest nesting of arrays and objects accepted (the document itself is depth 1).
pub const MAX_DEPTH: usize = 100;

/// The message for input with no document in it.
pub const EMPTY_INPUT: &str = "the input is empty: no Kubernetes objects found";

/// A 1-based position in the input text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// Why the input was refused. Displays as `line 3, column 7: <message>` when it has a location,
/// else as the message alone.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    pub location: Option<Location>,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(Location { line, column }) => {
                write!(f, "line {line}, column {column}: {}", self.message)
            }
            None => f.write_str(&self.message),
        }
    }
}

impl ParseError {
    fn new(message: impl Into<String>) -> Self {
        ParseError {
            location: None,
            message: message.into(),
        }
    }

    fn at(line: usize, column: usize, message: impl Into<String>) -> Self {
        ParseError {
            location: Some(Location { line, column }),
            message: message.into(),
        }
    }
}

/// Parses raw bytes: checks they are UTF-8 first, then [`parse_documents`].
pub fn parse_document_bytes(bytes: &[u8]) -> Result<Vec<Value>, ParseError> {
    check_size(bytes.len())?;
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_documents(text),
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            let (line, column) =
                line_column(std::str::from_utf8(valid).unwrap_or_default(), valid.len());
            Err(ParseError::at(
                line,
                column,
                "the input is not UTF-8 text (binary data?)",
            ))
        }
    }
}

/// Parses JSON or YAML text into Kubernetes objects, Lists flattened, in input order.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, ParseError> {
    check_size(text.len())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    check_control_characters(text)?;

    // kubectl's YAMLOrJSONDecoder: text whose first non-space character is `{` is JSON.
    let documents = if text.trim_start().starts_with('{') {
        parse_json_stream(text)?
    } else {
        parse_yaml_stream(text)?
    };

    let mut objects = Vec::new();
    for (index, doc) in documents.into_iter().enumerate() {
        if !doc.is_null() {
            flatten(doc, index + 1, &mut objects)?;
        }
    }
    if objects.is_empty() {
        return Err(ParseError::new(EMPTY_INPUT));
    }
    Ok(objects)
}

fn check_size(len: usize) -> Result<(), ParseError> {
    if len > MAX_INPUT_BYTES {
        return Err(ParseError::new(format!(
            "the input is {len} bytes; the limit is {MAX_INPUT_BYTES} bytes (8 MiB)"
        )));
    }
    Ok(())
}

/// Control characters other than tab, newline and carriage return mean binary data.
fn check_control_characters(text: &str) -> Result<(), ParseError> {
    let bad = text
        .char_indices()
        .find(|(_, c)| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) && (*c as u32) < 0x80);
    if let Some((offset, c)) = bad {
        let (line, column) = line_column(text, offset);
        return Err(ParseError::at(
            line,
            column,
            format!(
                "control character U+{:04X} is not allowed (binary data?)",
                c as u32
            ),
        ));
    }
    Ok(())
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// A document that is a List is replaced by its items; every object is checked to be one.
fn flatten(doc: Value, doc_number: usize, out: &mut Vec<Value>) -> Result<(), ParseError> {
    let is_list = doc
        .field("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && doc
            .field("items")
            .is_some_and(|i| i.is_array() || i.is_null());
    if !is_list {
        out.push(doc);
        return Ok(());
    }
    let Value::Object(mut list) = doc else {
        return Ok(()); // unreachable: documents are objects
    };
    let items = match list.remove("items") {
        Some(Value::Array(items)) => items,
        _ => Vec::new().into(),
    };
    for (i, item) in items.into_iter().enumerate() {
        if !item.is_object() {
            return Err(ParseError::new(format!(
                "document {doc_number}: items[{i}] is {}, expected a Kubernetes object (a mapping)",
                crate::kstatus::json_type_name(&item)
            )));
        }
        flatten(item, doc_number, out)?;
    }
    Ok(())
}

fn parse_json_stream(text: &str) -> Result<Vec<Value>, ParseError> {
    let mut docs = Vec::new();
    for doc in serde_json::Deserializer::from_str(text).into_iter::<TopDocument>() {
        match doc {
            Ok(TopDocument(v)) => docs.push(v),
            Err(e) => {
                let message = strip_positions(&e.to_string());
                return Err(if e.line() == 0 {
                    ParseError::new(message)
                } else {
                    ParseError::at(e.line(), e.column().max(1), message)
                });
            }
        }
    }
    Ok(docs)
}

fn parse_yaml_stream(text: &str) -> Result<Vec<Value>, ParseError> {
    let mut docs = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        match TopDocument::deserialize_from(document, true) {
            Ok(v) => docs.push(v),
            Err(e) => {
                let message = shorten_path(strip_positions(&e.to_string()));
                return Err(match e.location() {
                    Some(loc) => ParseError::at(loc.line(), loc.column(), message),
                    None => ParseError::new(message),
                });
            }
        }
    }
    Ok(docs)
}

/// A field path of a deep document (`data[0][0][0]...`) would fill the screen: its middle is
/// elided at segment boundaries, keeping about 40 characters at each end.
fn shorten_path(message: String) -> String {
    let Some(end) = message.find(": ") else {
        return message;
    };
    let path = &message[..end];
    if path.len() <= 100 || path.contains(' ') {
        return message;
    }
    let is_segment_start = |i: usize| matches!(path.as_bytes()[i], b'.' | b'[');
    let head_end = (1..=40).rev().find(|&i| is_segment_start(i)).unwrap_or(40);
    let tail_start = (path.len() - 40..path.len())
        .find(|&i| is_segment_start(i))
        .unwrap_or(path.len() - 40);
    if !path.is_char_boundary(head_end) || !path.is_char_boundary(tail_start) {
        return message;
    }
    format!(
        "{}...{}{}",
        &path[..head_end],
        &path[tail_start..],
        &message[end..]
    )
}

/// Drops the parsers' own ` at line L column C` (and ` at position N`) from a message, since
/// [`ParseError`] carries the position itself.
fn strip_positions(message: &str) -> String {
    let mut out = message.to_string();
    for marker in [" at line ", " at position "] {
        while let Some(start) = out.find(marker) {
            let rest = &out[start + marker.len()..];
            let mut end = start + marker.len();
            let mut chars = rest.char_indices().peekable();
            // digits, optionally followed by " column " and digits
            while let Some((i, c)) = chars.peek().copied() {
                if c.is_ascii_digit() {
                    end = start + marker.len() + i + 1;
                    chars.next();
                } else {
                    break;
                }
            }
            if out[end..].starts_with(" column ") {
                let after = end + " column ".len();
                let digits = out[after..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .count();
                end = after + digits;
            }
            out.replace_range(start..end, "");
        }
    }
    out
}

/// One top-level document: an object, or nothing (an empty YAML document, read as null).
struct TopDocument(Value);

impl TopDocument {
    fn deserialize_from<'de, D: Deserializer<'de>>(d: D, yaml: bool) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor {
            depth: 0,
            top_level: true,
            yaml,
        })
    }
}

impl<'de> de::Deserialize<'de> for TopDocument {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        TopDocument::deserialize_from(d, false).map(TopDocument)
    }
}

/// Builds a `crate::json::Value`, refusing duplicate keys, non-finite numbers and deep nesting.
#[derive(Clone, Copy)]
struct ValueVisitor {
    depth: usize,
    top_level: bool,
    /// YAML input: `<<` merge keys are applied, as Kubernetes' YAML reader does.
    yaml: bool,
}

impl ValueVisitor {
    fn not_an_object<E: de::Error>(&self, found: &str) -> Result<Value, E> {
        Err(E::custom(format!(
            "the document is {found}, expected a Kubernetes object (a mapping)"
        )))
    }

    fn nested(self) -> ValueVisitor {
        ValueVisitor {
            depth: self.depth + 1,
            top_level: false,
            yaml: self.yaml,
        }
    }

    fn check_depth<E: de::Error>(&self) -> Result<(), E> {
        if self.depth + 1 > MAX_DEPTH {
            return Err(E::custom(format!(
                "nesting is deeper than the limit of {MAX_DEPTH} levels"
            )));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for ValueVisitor {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-compatible value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        if self.top_level {
            return self.not_an_object("a boolean");
        }
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        if self.top_level {
            return self.not_an_object("a number");
        }
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        if self.top_level {
            return self.not_an_object("a number");
        }
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        if self.top_level {
            return self.not_an_object("a number");
        }
        crate::json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| {
                E::custom("NaN and infinite numbers are not allowed (JSON cannot hold them)")
            })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        if self.top_level {
            return self.not_an_object("a string");
        }
        Ok(Value::String(v.into()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        if self.top_level {
            return self.not_an_object("a string");
        }
        Ok(Value::String(v.into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.top_level {
            return self.not_an_object("a list");
        }
        self.check_depth()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.nested())? {
            items.push(item);
        }
        Ok(Value::Array(items.into()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.check_depth()?;
        let mut object = Map::new();
        let mut merges = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed { seen: &object })? {
            let value = map.next_value_seed(self.nested())?;
            if self.yaml && key == "<<" {
                merges.push(value);
            } else {
                object.insert(key, value);
            }
        }
        // YAML merge keys: keys written in the mapping win, then earlier merged mappings.
        for merged in merges {
            let sources = match merged {
                Value::Object(m) => vec![m],
                Value::Array(items) => items
                    .into_iter()
                    .map(|item| match item {
                        Value::Object(m) => Ok(m),
                        _ => Err(de::Error::custom(
                            "a << merge key takes a mapping or a list of mappings",
                        )),
                    })
                    .collect::<Result<Vec<_>, A::Error>>()?,
                _ => {
                    return Err(de::Error::custom(
                        "a << merge key takes a mapping or a list of mappings",
                    ))
                }
            };
            for source in sources {
                for (k, v) in source {
                    object.entry(k).or_insert(v);
                }
            }
        }
        Ok(Value::Object(object))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, _rest): (String, A::Variant) = data.variant()?;
        // A tag may carry %-escaped line breaks (`!a%0ab`): escaped, the error stays one line.
        Err(de::Error::custom(format!(
            "the YAML tag !{} is not supported",
            tag.escape_debug()
        )))
    }
}

/// A mapping key: scalars become strings (YAML allows `1: x`); a key already in the mapping is
/// refused, at the key's own position.
struct KeySeed<'a> {
    seen: &'a Map,
}

impl KeySeed<'_> {
    fn key<E: de::Error>(&self, key: String) -> Result<String, E> {
        if self.seen.contains_key(&key) {
            return Err(E::custom(format!("duplicate key {key:?}")));
        }
        Ok(key)
    }
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.key(v.to_string())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        self.key(v)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        self.key(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        self.key(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        self.key(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        if !v.is_finite() {
            return Err(E::custom(
                "NaN and infinite numbers are not allowed (JSON cannot hold them)",
            ));
        }
        self.key(v.to_string())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        self.key("null".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn err(text: &str) -> String {
        parse_documents(text).unwrap_err().to_string()
    }

    #[test]
    fn a_single_yaml_object() {
        let docs =
            parse_documents("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n").unwrap();
        assert_eq!(
            docs,
            vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})]
        );
    }

    #[test]
    fn a_single_json_object_keeps_field_order() {
        let text = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","labels":{"z":"1","a":"2"}}}"#;
        let docs = parse_documents(text).unwrap();
        assert_eq!(serde_json::to_string(&docs[0]).unwrap(), text);
    }

    #[test]
    fn yaml_field_order_is_kept() {
        let docs = parse_documents("kind: Pod\napiVersion: v1\nz: 1\na: 2\n").unwrap();
        assert_eq!(
            serde_json::to_string(&docs[0]).unwrap(),
            r#"{"kind":"Pod","apiVersion":"v1","z":1,"a":2}"#
        );
    }

    #[test]
    fn a_multi_document_stream_skips_empty_documents() {
        let docs =
            parse_documents("---\nkind: A\n---\n---\n# only a comment\n---\nkind: B\n").unwrap();
        assert_eq!(docs, vec![json!({"kind": "A"}), json!({"kind": "B"})]);
    }

    #[test]
    fn a_json_stream_of_objects() {
        let docs = parse_documents("{\"kind\":\"A\"}\n{\"kind\":\"B\"}\n").unwrap();
        assert_eq!(docs.len(), 2);
    }

    #[test]
    fn lists_are_flattened() {
        let docs = parse_documents(
            r#"{"apiVersion":"v1","kind":"List","items":[{"kind":"A"},{"kind":"DeploymentList","items":[{"kind":"B"}]}]}"#,
        )
        .unwrap();
        assert_eq!(docs, vec![json!({"kind": "A"}), json!({"kind": "B"})]);
        let docs = parse_documents("kind: PodList\nitems:\n- kind: Pod\n---\nkind: C\n").unwrap();
        assert_eq!(docs, vec![json!({"kind": "Pod"}), json!({"kind": "C"})]);
    }

    #[test]
    fn a_list_item_that_is_not_an_object_is_refused() {
        assert_eq!(
            err("kind: List\nitems:\n- kind: A\n- 3\n"),
            "document 1: items[1] is an integer, expected a Kubernetes object (a mapping)"
        );
    }

    #[test]
    fn text_starting_with_a_brace_is_json_as_in_kubectl() {
        assert_eq!(err("{kind: Pod}"), "line 1, column 2: key must be a string");
    }

    #[test]
    fn empty_input_is_refused() {
        for text in ["", "  \n", "# nothing\n", "---\n---\n", "null"] {
            assert_eq!(
                err(text),
                "the input is empty: no Kubernetes objects found",
                "{text:?}"
            );
        }
        assert_eq!(
            err(r#"{"kind":"List","items":[]}"#),
            "the input is empty: no Kubernetes objects found"
        );
    }

    #[test]
    fn documents_that_are_not_objects_are_refused() {
        assert_eq!(
            err("kind: A\n---\n- 1\n- 2\n"),
            "line 3, column 1: the document is a list, expected a Kubernetes object (a mapping)"
        );
        assert_eq!(
            err("just a string\n"),
            "line 1, column 1: the document is a string, expected a Kubernetes object (a mapping)"
        );
        assert_eq!(
            err("[1, 2]"),
            "line 1, column 1: the document is a list, expected a Kubernetes object (a mapping)"
        );
    }

    #[test]
    fn duplicate_keys_are_refused_at_the_key() {
        assert_eq!(
            err("kind: A\nmetadata:\n  name: a\n  name: b\n"),
            "line 4, column 3: metadata: duplicate key \"name\""
        );
        assert_eq!(
            err("{\"kind\": \"A\",\n \"kind\": \"B\"}"),
            "line 2, column 7: duplicate key \"kind\""
        );
    }

    #[test]
    fn nan_and_infinity_are_refused() {
        assert_eq!(
            err("kind: A\nspec:\n  x: .nan\n"),
            "line 3, column 6: spec.x: NaN and infinite numbers are not allowed (JSON cannot hold them)"
        );
        assert_eq!(
            err("kind: A\nx: -.inf\n"),
            "line 2, column 4: x: NaN and infinite numbers are not allowed (JSON cannot hold them)"
        );
    }

    #[test]
    fn nesting_past_the_limit_is_refused() {
        let ok = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(parse_documents(&format!("{{\"a\":{ok}}}")).is_ok());
        let deep = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let e = parse_documents(&format!("{{\"a\":{deep}}}")).unwrap_err();
        assert_eq!(e.message, "nesting is deeper than the limit of 100 levels");
        assert_eq!(e.location.map(|l| l.line), Some(1));
        let yaml_deep = format!("a: {}1{}\n", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_documents(&yaml_deep)
            .unwrap_err()
            .message
            .ends_with("nesting is deeper than the limit of 100 levels"));
    }

    #[test]
    fn oversized_input_is_refused() {
        let big = format!("kind: A\nx: \"{}\"\n", "a".repeat(MAX_INPUT_BYTES));
        assert_eq!(
            err(&big),
            format!(
                "the input is {} bytes; the limit is 8388608 bytes (8 MiB)",
                big.len()
            )
        );
    }

    #[test]
    fn binary_garbage_is_refused() {
        assert_eq!(
            err("kind: A\nx: \u{0}\u{1}\n"),
            "line 2, column 4: control character U+0000 is not allowed (binary data?)"
        );
        assert_eq!(
            parse_document_bytes(b"kind: A\n\xff\xfe")
                .unwrap_err()
                .to_string(),
            "line 2, column 1: the input is not UTF-8 text (binary data?)"
        );
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        assert_eq!(
            err("{\"kind\": \"A\",\n  \"x\": }"),
            "line 2, column 8: expected value"
        );
        let e = parse_documents("kind: A\nmetadata:\n  name: a\n bad: [\n").unwrap_err();
        assert!(e.location.is_some(), "{e}");
        assert!(!e.message.contains(" at line "), "{e}");
    }

    #[test]
    fn integer_yaml_keys_become_strings() {
        let docs = parse_documents("kind: A\ndata:\n  1: one\n").unwrap();
        assert_eq!(docs[0]["data"]["1"], "one");
    }

    #[test]
    fn yaml_merge_keys_are_applied_and_written_keys_win() {
        let docs =
            parse_documents("base: &base {a: 1, b: 2}\nkind: A\nobj:\n  <<: *base\n  b: 3\n")
                .unwrap();
        assert_eq!(docs[0]["obj"], json!({"b": 3, "a": 1}));
        let docs = parse_documents(r#"{"kind": "A", "<<": {"b": 1}}"#).unwrap();
        assert_eq!(docs[0]["<<"], json!({"b": 1}), "JSON has no merge keys");
        assert_eq!(
            err("kind: A\nobj:\n  <<: 3\n"),
            "line 3, column 3: obj: a << merge key takes a mapping or a list of mappings"
        );
    }

    #[test]
    fn yaml_tags_are_refused() {
        assert_eq!(
            err("kind: !custom x\n"),
            "line 1, column 7: kind: the YAML tag !custom is not supported"
        );
        assert_eq!(
            err("kind: !a%0ab x\n"),
            "line 1, column 7: kind: the YAML tag !a\\nb is not supported"
        );
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        assert_eq!(
            parse_documents("\u{feff}kind: A\n").unwrap(),
            vec![json!({"kind": "A"})]
        );
    }

    #[test]
    fn strip_positions_removes_every_position() {
        assert_eq!(
            strip_positions("did not find expected key at line 5 column 1, while parsing a block mapping at line 2 column 1"),
            "did not find expected key, while parsing a block mapping"
        );
        assert_eq!(strip_positions("x at position 7"), "x");
    }
}
