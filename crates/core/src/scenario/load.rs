//! Reading a scenario file: syntax (with `parse`'s checks and line:column), the version, the
//! typed format (unknown fields refused at their line), then the semantic checks of
//! [`super::compile`], whose errors are located in the text by their field path.

use crate::api::meta::Fields;
use std::fmt;

use crate::json::Value;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::format::{Scenario, API_VERSION, KIND};
use super::{ScenarioError, SUPPORTED_VERSIONS};
use crate::parse::{self, Location};

/// Parses and validates a scenario file (JSON or YAML).
pub fn load(text: &str) -> Result<Scenario, ScenarioError> {
    let docs = parse::parse_documents(text).map_err(|e| ScenarioError {
        location: e.location,
        path: String::new(),
        // A scenario file holds a scenario, not Kubernetes objects.
        message: if e.message == parse::EMPTY_INPUT {
            format!("the file is empty: a scenario starts with `apiVersion: {API_VERSION}` and `kind: {KIND}`")
        } else {
            e.message
        },
    })?;
    if docs.len() != 1 {
        return Err(ScenarioError::new(
            "",
            format!("a scenario file holds one document, found {}", docs.len()),
        ));
    }
    let doc = &docs[0];
    check_header(doc).map_err(|e| e.located(text))?;
    // One typed reading for both syntaxes, from the value `parse` built (with its line:column
    // checks); the error's field path locates it in the text.
    let scenario: Scenario = serde_path_to_error::deserialize(crate::json::into_serde(doc.clone()))
        .map_err(|e| typed_error(&e, text))?;
    super::compile::compile(&scenario).map_err(|e| e.located(text))?;
    Ok(scenario)
}

/// `apiVersion` and `kind` come first: a file from a newer Converge gets a clear message rather
/// than a list of unknown fields.
/// See [`Scenario::from_manifests`].
pub fn from_manifests(text: &str, name: &str) -> Option<Result<Scenario, ScenarioError>> {
    let objects = crate::api::parse_manifests(text).ok()?;
    let is_manifest = |o: &Value| {
        let av = o.field("apiVersion").and_then(Value::as_str).unwrap_or("");
        !av.is_empty()
            && !av.starts_with("converge.dev/")
            && o.field("kind").is_some_and(Value::is_string)
    };
    if objects.is_empty() || !objects.iter().all(is_manifest) {
        return None;
    }
    let scenario = Scenario {
        api_version: API_VERSION.to_owned(),
        kind: KIND.to_owned(),
        name: name.to_owned(),
        description: String::new(),
        seed: 1,
        until: None,
        cluster: super::format::Cluster::default(),
        images: Vec::new(),
        rbac: None,
        objects,
        faults: Vec::new(),
        actions: Vec::new(),
        expect: Vec::new(),
        lesson: None,
    };
    Some(super::compile::compile(&scenario).map(|_| scenario))
}

fn check_header(doc: &Value) -> Result<(), ScenarioError> {
    let version = match doc.field("apiVersion") {
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
    match doc.field("kind") {
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

/// A typed-reading error with its field path (`actions[0].verb`), located in the text: an
/// unknown field at its key, anything else at its value (or its nearest enclosing entry).
fn typed_error(e: &serde_path_to_error::Error<serde_json::Error>, text: &str) -> ScenarioError {
    let mut path = field_path(e.path());
    let raw = e.inner().to_string();
    // serde quotes an unknown key as written: a line break in it would break the error's line.
    let mut message = String::with_capacity(raw.len());
    for c in raw.chars() {
        if c.is_control() {
            message.extend(c.escape_default());
        } else {
            message.push(c);
        }
    }
    let unknown_key = raw
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(key, _)| key);
    // The path of an unknown field ends with the field itself: report it at the entry that
    // holds it (`actions[0]: unknown field ...`), located at the key.
    let location = unknown_key.and_then(|key| {
        let located = locate_key(text, &path);
        let parent = path
            .strip_suffix(key)
            .map(|p| p.strip_suffix('.').unwrap_or(p).to_owned());
        if let Some(parent) = parent {
            path = parent;
        }
        located
    });
    ScenarioError {
        location,
        path,
        message,
    }
    .located(text)
}

/// serde_path_to_error's path in the form the rest of Converge writes: `actions[0].verb`.
fn field_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// `actions[2].target` into segments. Keys are the user's own text and may hold `.`, `[` or `]`:
/// such a path reads back as other segments (the location may then be missing), never a panic.
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
        while let Some(inside) = rest.strip_prefix('[') {
            let Some(end) = inside.find(']') else { break };
            if let Ok(i) = inside[..end].parse() {
                out.push(Seg::Index(i));
            }
            rest = &inside[end + 1..];
        }
    }
    out
}

const HERE: &str = "\u{1}converge-locate\u{1}";

/// Where the value at `path` starts in `text`, found by deserializing the text again and
/// stopping with a marker error at that value: the parsers attach their position to it.
pub(crate) fn locate(text: &str, path: &str) -> Option<Location> {
    locate_in(text, &segments(path), false)
}

/// Where the key that ends `path` (`actions[0].principle`) is written in `text`.
fn locate_key(text: &str, path: &str) -> Option<Location> {
    locate_in(text, &segments(path), true)
}

fn locate_in(text: &str, segs: &[Seg], key: bool) -> Option<Location> {
    let locator = Locator { path: segs, key };
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{');
    if json {
        let mut d = serde_json::Deserializer::from_str(text);
        match locator.deserialize(&mut d) {
            Err(e) if e.to_string().contains(HERE) && e.line() > 0 => Some(Location {
                line: e.line(),
                column: e.column().max(1),
            }),
            _ => None,
        }
    } else {
        let d = serde_yaml_ng::Deserializer::from_str(text).next()?;
        match locator.deserialize(d) {
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
    /// Stop at the key that ends `path` rather than at its value.
    key: bool,
}

/// Reads one map key and stops with the marker when it is `name`, so the error carries the
/// key's position.
struct KeyProbe<'a> {
    name: &'a str,
}

impl<'de> DeserializeSeed<'de> for KeyProbe<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // The marker is raised inside the visitor, where the parser attaches its position.
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyProbe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<(), E> {
        if key == self.name {
            Err(E::custom(HERE))
        } else {
            Ok(())
        }
    }
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
                let next = Locator {
                    path: rest,
                    key: self.key,
                };
                return match seq.next_element_seed(next)? {
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
        if let (Seg::Key(name), true, true) = (first, rest.is_empty(), self.key) {
            while map.next_key_seed(KeyProbe { name })?.is_some() {
                map.next_value::<IgnoredAny>()?;
            }
            return Ok(());
        }
        while let Some(key) = map.next_key::<String>()? {
            if *first == Seg::Key(key) {
                let next = Locator {
                    path: rest,
                    key: self.key,
                };
                map.next_value_seed(next)?;
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

    /// Fuzz finding 7 (`scenario/crash-c89988b5…`): an unknown key holding `]` made the path
    /// `…]` whose read-back sliced `rest[1..0]` and panicked the loader.
    #[test]
    fn a_path_with_brackets_in_its_keys_reads_back_without_panicking() {
        assert_eq!(
            segments("a[1].b"),
            vec![Seg::Key("a".into()), Seg::Index(1), Seg::Key("b".into())]
        );
        assert_eq!(segments("a[0]]"), vec![Seg::Key("a".into()), Seg::Index(0)]);
        for odd in [
            "]", "[", "][", "a]]", "a[[0]", "a[x]", "a[0", "[]", "..[1]..", "a[é]",
        ] {
            let _ = segments(odd);
        }
        let text = "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nactions:\n- at: 1s\n  \"]\": 1\n";
        let err = Scenario::load(text).map(|_| ()).unwrap_err();
        assert!(err.to_string().contains("unknown field `]`"), "{err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
}
