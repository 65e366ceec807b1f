//! `kubectl explain TYPE[.FIELD...]`: the served OpenAPI v3 document of the resource's group
//! version, read as kubectl 1.32 reads it [kubectl pkg/cmd/explain/explain.go `Run`,
//! pkg/explain/explain.go `SplitAndParseResourceRequestWithMatchingPrefix`], and printed as its
//! `plaintext` template prints it [kubectl pkg/explain/v2/templates/plaintext.tmpl, with the
//! helpers of pkg/explain/v2/funcs.go]. The template's defines are the functions below, under
//! the same names; Go templates' truthiness (nil, "", 0, empty maps and lists are false) is
//! [`truthy`].

use crate::api::meta::Fields;
use crate::json::Value;

use super::args::{flag, FlagSpec, Parsed, Takes};
use super::client::{Call, Mapping};
use super::Run;
use crate::rest::openapi;

pub const FLAGS: &[FlagSpec] = &[
    flag("recursive", None, Takes::Bool),
    flag("api-version", None, Takes::Value),
    flag("output", Some('o'), Takes::Value),
];

/// kubectl's `explainError`: printed as is, after whatever the template already wrote.
struct Thrown(String);

pub fn explain(run: &mut Run<'_, '_>, parsed: &Parsed) -> Option<()> {
    if parsed.args.is_empty() {
        run.fail("You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.");
        return None;
    }
    if parsed.args.len() > 1 {
        run.fail("We accept only this format: explain RESOURCE");
        return None;
    }
    let typed = parsed.args[0].as_str();
    let api_version = parsed.value("api-version").unwrap_or("");
    let (mapping, fields) = match split(run, typed, api_version.is_empty()) {
        Ok(x) => x,
        Err(Unresolved::Syntax(e)) => {
            run.fail(&e);
            return None;
        }
        Err(Unresolved::NoMatch(e)) => {
            // `checkErr` prints a NoResourceMatchError without the `error: ` other errors get
            // [kubectl pkg/cmd/util/helpers.go `checkErr`].
            run.stderr(&format!("{e}\n"));
            run.out.code = 1;
            return None;
        }
    };
    let output = parsed.value("output").unwrap_or("plaintext");
    if output == "plaintext-openapiv2" {
        run.fail("--output=plaintext-openapiv2 is not simulated by this terminal: it reads /openapi/v2, which Converge does not serve; the default plaintext reads /openapi/v3");
        return None;
    }
    let (mut group, mut version) = (mapping.group.clone(), mapping.version.clone());
    if !api_version.is_empty() {
        // apimachinery `schema.ParseGroupVersion`.
        match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [v] => (group, version) = (String::new(), (*v).to_owned()),
            [g, v] => (group, version) = ((*g).to_owned(), (*v).to_owned()),
            _ => {
                run.fail(&format!("unexpected GroupVersion string: {api_version}"));
                return None;
            }
        }
    }
    let gvr = format!(
        "{}, Resource={}",
        if group.is_empty() {
            format!("/{version}")
        } else {
            format!("{group}/{version}")
        },
        mapping.resource
    );
    let root = run.send(Call::get(
        "/openapi/v3".into(),
        String::new(),
        "application/json",
    ));
    if !root.ok() {
        run.server_error(&root);
        return None;
    }
    let gv_path = openapi::gv_path(&group, &version);
    let Some(url) = root.body.member("paths")[&gv_path]
        .member("serverRelativeURL")
        .as_str()
    else {
        run.fail(&format!("couldn't find resource for \"{gvr}\""));
        return None;
    };
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let doc = run.send(Call::get(path.into(), query.into(), "application/json"));
    if !doc.ok() {
        run.fail(&format!(
            "failed to fetch openapi schema for {gv_path}: {}",
            doc.body.member("message").as_str().unwrap_or("")
        ));
        return None;
    }
    if output != "plaintext" {
        run.fail(&format!("unrecognized format: {output}"));
        return None;
    }
    let mut out = String::new();
    let result = Explain {
        doc: &doc.body,
        recursive: parsed.bool("recursive"),
    }
    .render(&group, &version, &mapping.resource, &fields, &gvr, &mut out);
    run.stdout(&out);
    if let Err(Thrown(e)) = result {
        run.stderr(&e);
        run.stderr("\n");
        run.out.code = 1;
    }
    Some(())
}

/// The resource and the field path a user typed: `deploy.spec.replicas`,
/// `deployments.apps.spec`. The first name is looked up; a resource named with its group is
/// recognised by prefix, as kubectl does when `--api-version` is not given.
enum Unresolved {
    Syntax(String),
    NoMatch(String),
}

fn split(
    run: &Run<'_, '_>,
    typed: &str,
    match_prefix: bool,
) -> Result<(Mapping, Vec<String>), Unresolved> {
    let trimmed = typed.strip_suffix('.').unwrap_or(typed);
    let nodes: Vec<&str> = trimmed.split('.').collect();
    let field_node = |n: &str| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '/')
    };
    if !nodes.iter().copied().all(field_node) {
        return Err(Unresolved::Syntax(
            "invalid jsonpath syntax, first node must be field node".into(),
        ));
    }
    let mapping = run
        .mapper
        .resolve(nodes[0])
        .map_err(Unresolved::NoMatch)?
        .clone();
    let group_resource = mapping.group_resource();
    let fields: Vec<String> = match trimmed.strip_prefix(&group_resource) {
        Some(rest) if match_prefix && (rest.is_empty() || rest.starts_with('.')) => rest
            .split('.')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Some(rest) if match_prefix && !rest.is_empty() => {
            // `deployments.appsx.spec` starts with `deployments.apps`: kubectl's prefix test
            // matches, and what follows (`x.spec`) is parsed as a path whose first node it drops.
            rest.split('.').skip(1).map(str::to_owned).collect()
        }
        _ => nodes[1..].iter().map(|s| (*s).to_owned()).collect(),
    };
    Ok((mapping, fields))
}

/// Go templates' truth: false, 0, nil, and empty strings, maps and lists are false.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty(),
    }
}

/// A property of a map, as `index` reads it (`None` for anything not a map).
fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.as_object().and_then(|m| m.get(key))
}

/// `additionalProperties` when it is a schema rather than a boolean.
fn additional(v: &Value) -> Option<&Value> {
    get(v, "additionalProperties").filter(|a| truthy(Some(a)) && !a.is_boolean())
}

fn items(v: &Value) -> Option<&Value> {
    get(v, "items").filter(|i| truthy(Some(i)))
}

fn all_of(v: &Value) -> &[Value] {
    get(v, "allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// funcs.go's `indent`: every line, the first included, padded.
fn indent(amount: usize, s: &str) -> String {
    let pad = " ".repeat(amount);
    format!("{pad}{}", s.replace('\n', &format!("\n{pad}")))
}

/// go-wordwrap's `WrapString` (v1.0.1, which kubectl 1.32 uses through its `wrap`): lines are
/// broken at white space once a word would pass `limit` runes; a word longer than the limit
/// stays whole; the white space at a break is dropped; existing line breaks stay.
pub fn wrap(limit: usize, s: &str) -> String {
    let mut out = String::new();
    let mut current = 0usize;
    let (mut word, mut space) = (String::new(), String::new());
    let (mut word_len, mut space_len) = (0usize, 0usize);
    for c in s.chars() {
        if c == '\n' {
            if word.is_empty() {
                if current + space_len <= limit {
                    out.push_str(&space);
                }
            } else {
                flush(&mut out, &mut space, &mut word);
                word_len = 0;
            }
            space.clear();
            space_len = 0;
            out.push('\n');
            current = 0;
        } else if c.is_whitespace() && c != '\u{a0}' {
            if space.is_empty() || !word.is_empty() {
                current += space_len + word_len;
                flush(&mut out, &mut space, &mut word);
                space_len = 0;
                word_len = 0;
            }
            space.push(c);
            space_len += 1;
        } else {
            word.push(c);
            word_len += 1;
            if current + space_len + word_len > limit && word_len < limit {
                out.push('\n');
                current = 0;
                space.clear();
                space_len = 0;
            }
        }
    }
    if word.is_empty() {
        if current + space_len <= limit {
            out.push_str(&space);
        }
    } else {
        out.push_str(&space);
        out.push_str(&word);
    }
    out
}

/// Moves the pending white space and word to the output.
fn flush(out: &mut String, space: &mut String, word: &mut String) {
    out.push_str(space);
    out.push_str(word);
    space.clear();
    word.clear();
}

/// One rendering: the group version's document and whether `--recursive` was given.
struct Explain<'d> {
    doc: &'d Value,
    recursive: bool,
}

impl<'d> Explain<'d> {
    /// funcs.go's `resolveRef`: a `#/...` reference followed through the document's maps.
    fn resolve(&self, reference: Option<&Value>) -> Option<&'d Value> {
        let fragment = reference?.as_str()?.strip_prefix('#')?;
        let mut cur = self.doc;
        for part in fragment.split('/').filter(|p| !p.is_empty()) {
            cur = get(cur, part).filter(|v| v.is_object())?;
        }
        Some(cur)
    }

    /// `or (resolveRef $ref) $schema`.
    fn resolved<'s>(&self, schema: &'s Value) -> &'s Value
    where
        'd: 's,
    {
        match self.resolve(get(schema, "$ref")) {
            Some(r) if truthy(Some(r)) => r,
            _ => schema,
        }
    }

    /// The template's body.
    fn render(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        fields: &[String],
        gvr: &str,
        out: &mut String,
    ) -> Result<(), Thrown> {
        let prefix = openapi::gv_path(group, version);
        let searched = [
            format!("/{prefix}/{resource}"),
            format!("/{prefix}/{resource}/{{name}}"),
            format!("/{prefix}/namespaces/{{namespace}}/{resource}"),
            format!("/{prefix}/namespaces/{{namespace}}/{resource}/{{name}}"),
        ];
        let mut gvk: Option<&Value> = None;
        for path in &searched {
            let Some(element) = get(self.doc.member("paths"), path).filter(|v| truthy(Some(v)))
            else {
                continue;
            };
            for method in ["get", "post", "put", "patch", "delete"] {
                let Some(op) = get(element, method).filter(|v| truthy(Some(v))) else {
                    continue;
                };
                gvk = get(op, "x-kubernetes-group-version-kind");
                if truthy(gvk) {
                    break;
                }
            }
        }
        let Some(gvk) = gvk.filter(|g| truthy(Some(g))) else {
            return Err(Thrown(format!(
                "error: GVR ({gvr}) not found in OpenAPI schema"
            )));
        };
        let text = |k: &str| get(gvk, k).and_then(Value::as_str).unwrap_or("");
        if !text("group").is_empty() {
            out.push_str(&format!("GROUP:      {}\n", text("group")));
        }
        out.push_str(&format!("KIND:       {}\n", text("kind")));
        out.push_str(&format!("VERSION:    {}\n", text("version")));
        out.push('\n');
        let schema = self.schema(gvk, fields)?;
        if schema.is_empty() {
            return Err(Thrown(format!(
                "error: GVK map[group:{} kind:{} version:{}] not found in OpenAPI schema",
                text("group"),
                text("kind"),
                text("version")
            )));
        }
        out.push_str(&schema);
        out.push('\n');
        Ok(())
    }

    /// The `schema` define: the first component (in name order) carrying the GVK.
    fn schema(&self, gvk: &Value, fields: &[String]) -> Result<String, Thrown> {
        for (_, component) in sorted(get(self.doc.member("components"), "schemas")) {
            let carries = get(component, "x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .is_some_and(|list| list.iter().any(|g| g == gvk));
            if carries {
                let out = self.output(component, &[], fields)?;
                if out.is_empty() {
                    let name = fields.last().map(String::as_str).unwrap_or("");
                    return Err(Thrown(format!("error: field \"{name}\" does not exist")));
                }
                return Ok(out);
            }
        }
        Ok(String::new())
    }

    /// The `output` define: follows the field path, then prints the description and fields.
    fn output(
        &self,
        schema: &Value,
        history: &[String],
        path: &[String],
    ) -> Result<String, Thrown> {
        let reference = get(schema, "$ref").and_then(Value::as_str).unwrap_or("");
        let mut next: Vec<String> = history.to_vec();
        next.push(reference.to_owned());
        let resolved = self.resolved(schema);
        let mut out = String::new();
        let Some((first, rest)) = path.split_first() else {
            out.push_str("DESCRIPTION:\n");
            let mut d = self.description(resolved);
            if d.is_empty() {
                d = "<empty>".into();
            }
            out.push_str(&indent(4, &wrap(76, &d)));
            out.push('\n');
            let list = self.field_list(resolved, 1, &[]);
            if !list.is_empty() {
                out.push_str("FIELDS:\n");
                out.push_str(&list);
            }
            return Ok(out);
        };
        if !reference.is_empty() && history.iter().any(|h| h == reference) {
            return Ok(out);
        }
        let property = get(resolved, "properties")
            .filter(|p| truthy(Some(p)))
            .and_then(|p| get(p, first))
            .filter(|s| truthy(Some(s)));
        if let Some(sub) = property {
            if rest.is_empty() {
                out.push_str(&format!("FIELD: {first} <{}>\n", self.type_guess(sub)));
                out.push_str(&extract_enum(sub, true, -1, 0));
                out.push_str("\n\n");
            }
            out.push_str(&self.output(sub, &[], rest)?);
        } else if let Some(item) = items(resolved) {
            out.push_str(&self.output(item, &next, path)?);
        } else if let Some(value) = additional(resolved) {
            out.push_str(&self.output(value, &next, path)?);
        } else {
            for sub in all_of(resolved) {
                let o = self.output(sub, &next, path)?;
                if !o.is_empty() {
                    out.push_str(&o);
                    break;
                }
            }
        }
        Ok(out)
    }

    /// The `fieldList` define.
    fn field_list(&self, schema: &Value, level: usize, history: &[String]) -> String {
        let reference = get(schema, "$ref").and_then(Value::as_str).unwrap_or("");
        let mut out = String::new();
        if !reference.is_empty() && history.iter().any(|h| h == reference) {
            return out;
        }
        let mut next: Vec<String> = history.to_vec();
        next.push(reference.to_owned());
        let resolved = self.resolved(schema);
        for (name, sub) in sorted(get(resolved, "properties")) {
            out.push_str(&self.field_detail(name, resolved, level));
            if self.recursive {
                out.push_str(&self.field_list(sub, level + 1, &next));
            }
        }
        for sub in all_of(resolved) {
            out.push_str(&self.field_list(sub, level, &next));
        }
        if let Some(item) = items(resolved) {
            out.push_str(&self.field_list(item, level, &next));
        }
        if let Some(value) = additional(resolved) {
            out.push_str(&self.field_list(value, level, &next));
        }
        out
    }

    /// The `fieldDetail` define: `name<TAB><type>`, ` -required-`, the enum, the description.
    fn field_detail(&self, name: &str, schema: &Value, level: usize) -> String {
        let pad = level * 2;
        let field = &schema.member("properties")[name];
        let mut out = indent(pad, name);
        out.push('\t');
        out.push_str(&format!("<{}>", self.type_guess(field)));
        let required = get(schema, "required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n == name));
        if required {
            out.push_str(" -required-");
        }
        out.push_str(&extract_enum(field, false, 4, pad));
        out.push('\n');
        if !self.recursive {
            let d = get(field, "description")
                .filter(|d| truthy(Some(d)))
                .and_then(Value::as_str)
                .unwrap_or("<no description>");
            out.push_str(&indent(pad + 2, &wrap(78usize.saturating_sub(pad), d)));
            out.push_str("\n\n");
        }
        out
    }

    /// The `description` define: the schema's own description, then its `allOf`'s, items' and
    /// values' descriptions.
    fn description(&self, schema: &Value) -> String {
        let s = self.resolved(schema);
        let mut out = String::new();
        if !truthy(Some(s)) {
            return out;
        }
        if let Some(d) = get(s, "description").filter(|d| truthy(Some(d))) {
            out.push_str(d.as_str().unwrap_or(""));
            out.push('\n');
        }
        for sub in all_of(s) {
            out.push_str(&self.description(sub));
        }
        if let Some(item) = items(s) {
            out.push_str(&self.description(item));
        }
        if let Some(value) = additional(s) {
            out.push_str(&self.description(value));
        }
        out
    }

    /// The `typeGuess` define: `string`, `[]Container`, `map[string]string`, `Object`, or the
    /// last part of a referenced object schema's name.
    fn type_guess(&self, schema: &Value) -> String {
        let type_of = |s: &Value| {
            get(s, "type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        if let Some(item) = items(schema) {
            return format!("[]{}", self.type_guess(item));
        }
        if let Some(value) = additional(schema) {
            return format!("map[string]{}", self.type_guess(value));
        }
        let all = all_of(schema);
        if !all.is_empty() && !truthy(get(schema, "properties")) && all.len() == 1 {
            return self.type_guess(&all[0]);
        }
        if let Some(reference) = get(schema, "$ref").filter(|r| truthy(Some(r))) {
            let r = reference.as_str().unwrap_or("");
            let target = self.resolve(Some(reference)).filter(|t| truthy(Some(t)));
            return match target {
                Some(t) if !type_of(t).is_empty() && type_of(t) != "object" => type_of(t),
                _ => {
                    let name = r.rsplit('/').next().unwrap_or("");
                    match name.rsplit('.').next() {
                        Some(last) if !last.is_empty() => last.to_owned(),
                        _ => "Object".into(),
                    }
                }
            };
        }
        match type_of(schema).as_str() {
            "" | "object" => "Object".into(),
            t => t.to_owned(),
        }
    }
}

/// The entries of a map in key order, as Go's `range` visits them.
fn sorted(v: Option<&Value>) -> Vec<(&crate::json::Key, &Value)> {
    let mut entries: Vec<(&crate::json::Key, &Value)> =
        v.and_then(Value::as_object).into_iter().flatten().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// The `extractEnum` define: `ENUM:` and one value a line in the field's own view, `enum: a,
/// b, c, d, ....` (four at most) in a list.
fn extract_enum(schema: &Value, long: bool, limit: i64, pad: usize) -> String {
    let Some(values) = get(schema, "enum")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
    else {
        return String::new();
    };
    let mut out = if long {
        "ENUM:".to_owned()
    } else {
        format!("\n{}enum: ", " ".repeat(pad))
    };
    for (i, v) in values.iter().enumerate() {
        if limit > -1 && i as i64 >= limit {
            out.push_str(", ....");
            break;
        }
        if i > 0 && !long {
            out.push_str(", ");
        } else if long {
            out.push_str("\n    ");
        }
        match v {
            Value::String(s) if s.is_empty() => out.push_str("\"\""),
            Value::String(s) => out.push_str(s),
            Value::Null => out.push_str("<nil>"),
            other => out.push_str(&other.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_long_words_whole() {
        assert_eq!(wrap(10, "aaa bbb ccc ddd"), "aaa bbb\nccc ddd");
        assert_eq!(wrap(5, "abcdefgh ij"), "abcdefgh\nij");
        assert_eq!(wrap(76, "one line\n"), "one line\n");
        assert_eq!(wrap(8, "aaaa bbbb\ncc"), "aaaa\nbbbb\ncc");
    }

    #[test]
    fn type_hints_read_as_kubectl_prints_them() {
        let doc = crate::json::json!({"components": {"schemas": {
            "a.B": {"type": "object"},
            "a.T": {"type": "string"},
        }}});
        let e = Explain {
            doc: &doc,
            recursive: false,
        };
        let r = |s: &str| crate::json::json!({"allOf": [{"$ref": format!("#/components/schemas/{s}")}]});
        assert_eq!(e.type_guess(&r("a.B")), "B");
        assert_eq!(e.type_guess(&r("a.T")), "string");
        assert_eq!(
            e.type_guess(&crate::json::json!({"type": "array", "items": r("a.B")})),
            "[]B"
        );
        assert_eq!(
            e.type_guess(
                &crate::json::json!({"type": "object", "additionalProperties": {"type": "string"}})
            ),
            "map[string]string"
        );
        assert_eq!(
            e.type_guess(&crate::json::json!({"type": "object"})),
            "Object"
        );
    }
}
