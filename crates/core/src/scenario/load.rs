//! Reading a scenario file: syntax (with `parse`'s checks and line:column), the version, the
//! typed format (unknown fields refused at their line), then the semantic checks of
//! [`super::compile`], whose errors are located in the text by their field path.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::format::{Scenario, API_VERSION, KIND};
use super::{ScenarioError, SUPPORTED_VERSIONS};
use crate::parse::{self, Location};

/// Parses and validates a scenario file (JSON or YAML).
pub fn load(text: &str) -> Result<Scenario, ScenarioError> {
    let docs = parse::parse_documents(text).map_err(|e| ScenarioError {
        location: e.location,
        path: String::new(),
        message: e.message,
    })?;
    if docs.len() != 1 {
        return Err(ScenarioError::new(
            "",
            format!("a scenario file holds one document, found {}", docs.len()),
        ));
    }
    let doc = &docs[0];
    check_header(doc).map_err(|e| e.located(text))?;
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{');
    let scenario: Scenario = if json {
        serde_json::from_str(text).map_err(|e| {
            let message = strip_serde_position(&e.to_string());
            ScenarioError {
                location: (e.line() > 0).then(|| Location {
                    line: e.line(),
                    column: e.column().max(1),
                }),
                path: String::new(),
                message,
            }
        })?
    } else {
        serde_yaml_ng::from_str(text).map_err(|e| {
            let message = strip_serde_position(&e.to_string());
            ScenarioError {
                location: e.location().map(|l| Location {
                    line: l.line(),
                    column: l.column(),
                }),
                path: String::new(),
                message,
            }
        })?
    };
    super::compile::compile(&scenario).map_err(|e| e.located(text))?;
    Ok(scenario)
}

/// `apiVersion` and `kind` come first: a file from a newer Converge gets a clear message rather
/// than a list of unknown fields.
fn check_header(doc: &Value) -> Result<(), ScenarioError> {
    let version = match doc.get("apiVersion") {
        None => {
            return Err(ScenarioError::new(
                "",
                format!(
                    "apiVersion is missing: a scenario file starts with apiVersion: {API_VERSION}"
                ),
            ))
        }
        Some(Value::String(v)) => v.as_str(),
        Some(_) => return Err(ScenarioError::new("apiVersion", "must be a string")),
    };
    if !SUPPORTED_VERSIONS.contains(&version) {
        return Err(ScenarioError::new(
            "apiVersion",
            format!(
                "unsupported version {version:?}: this converge reads {}",
                SUPPORTED_VERSIONS.join(", ")
            ),
        ));
    }
    match doc.get("kind") {
        Some(Value::String(k)) if k == KIND => Ok(()),
        Some(other) => Err(ScenarioError::new(
            "kind",
            format!("must be {KIND:?}, found {other}"),
        )),
        None => Err(ScenarioError::new(
            "kind",
            format!("is missing: write kind: {KIND}"),
        )),
    }
}

/// serde's ` at line L column C` suffix, which the location carries instead.
fn strip_serde_position(message: &str) -> String {
    let cut = message.find(" at line ").unwrap_or(message.len());
    let m = &message[..cut];
    // serde_yaml_ng prefixes the path: `actions[0]: unknown field ...`; keep it, it names the field.
    m.to_owned()
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// `actions[2].target` into segments.
fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key.to_owned()));
        }
        while let Some(end) = rest.find(']') {
            if let Ok(i) = rest[1..end].parse() {
                out.push(Seg::Index(i));
            }
            rest = &rest[end + 1..];
        }
    }
    out
}

const HERE: &str = "\u{1}converge-locate\u{1}";

/// Where the value at `path` starts in `text`, found by deserializing the text again and
/// stopping with a marker error at that value: the parsers attach their position to it.
pub(crate) fn locate(text: &str, path: &str) -> Option<Location> {
    let segs = segments(path);
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{');
    if json {
        let mut d = serde_json::Deserializer::from_str(text);
        match (Locator { path: &segs }).deserialize(&mut d) {
            Err(e) if e.to_string().contains(HERE) && e.line() > 0 => Some(Location {
                line: e.line(),
                column: e.column().max(1),
            }),
            _ => None,
        }
    } else {
        let d = serde_yaml_ng::Deserializer::from_str(text).next()?;
        match (Locator { path: &segs }).deserialize(d) {
            Err(e) if e.to_string().contains(HERE) => e.location().map(|l| Location {
                line: l.line(),
                column: l.column(),
            }),
            _ => None,
        }
    }
}

struct Locator<'a> {
    path: &'a [Seg],
}

impl<'de> DeserializeSeed<'de> for Locator<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Locator<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.scalar()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(HERE));
        };
        let mut i = 0;
        loop {
            if *first == Seg::Index(i) {
                return match seq.next_element_seed(Locator { path: rest })? {
                    Some(()) | None => Ok(()),
                };
            }
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(HERE));
        };
        while let Some(key) = map.next_key::<String>()? {
            if *first == Seg::Key(key) {
                map.next_value_seed(Locator { path: rest })?;
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

impl Locator<'_> {
    fn scalar<E: de::Error>(&self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(HERE))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_a_nested_yaml_value() {
        let text = "a: 1\nlist:\n  - x: 1\n  - x: 2\n    target: here\n";
        let loc = locate(text, "list[1].target").unwrap();
        assert_eq!(loc.line, 5);
    }

    #[test]
    fn locate_finds_a_nested_json_value() {
        let text =
            "{\n \"a\": 1,\n \"list\": [\n  {\"x\": 1},\n  {\"x\": 2,\n   \"target\": \"here\"}]}";
        let loc = locate(text, "list[1].target").unwrap();
        assert_eq!(loc.line, 6);
    }

    #[test]
    fn locate_gives_nothing_for_a_missing_path() {
        assert_eq!(locate("a: 1\n", "b"), None);
    }
}
