//! `kubectl get`: server-side Tables printed as kubectl's table printer prints them (priority-1
//! columns only with `-o wide`, `NAMESPACE` first with `-A`, `kind/name` when several kinds
//! are shown, a blank line between kinds, `No resources found ...` on stderr when nothing was
//! printed), and `-o json|yaml|name|jsonpath=|custom-columns=` over the objects
//! [kubectl pkg/cmd/get/get.go `GetOptions.Run`; cli-runtime pkg/printers/tableprinter.go
//! `printTable`, `printRows`].

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::args::{flag, unsupported, FlagSpec, Parsed, Takes};
use super::client::{query, Call, Mapping, TABLE_ACCEPT};
use super::{encode, jsonpath, tabwriter, targets, Run};

pub const FLAGS: &[FlagSpec] = &[
    flag("output", Some('o'), Takes::Value),
    flag("selector", Some('l'), Takes::Value),
    flag("field-selector", None, Takes::Value),
    flag("all-namespaces", Some('A'), Takes::Bool),
    flag("no-headers", None, Takes::Bool),
    flag("show-labels", None, Takes::Bool),
    flag("show-kind", None, Takes::Bool),
    flag("ignore-not-found", None, Takes::Bool),
    flag("watch", Some('w'), Takes::Bool),
    unsupported("watch-only", None, Takes::Bool),
    unsupported("output-watch-events", None, Takes::Bool),
    unsupported("sort-by", None, Takes::Value),
    unsupported("label-columns", Some('L'), Takes::Value),
    unsupported("chunk-size", None, Takes::Value),
    unsupported("raw", None, Takes::Value),
    unsupported("subresource", None, Takes::Value),
    unsupported("template", None, Takes::Value),
    unsupported("filename", Some('f'), Takes::Value),
    unsupported("kustomize", Some('k'), Takes::Value),
    unsupported("recursive", Some('R'), Takes::Bool),
    unsupported("server-print", None, Takes::Bool),
    unsupported("show-managed-fields", None, Takes::Bool),
    unsupported("allow-missing-template-keys", None, Takes::Bool),
];

const FORMATS: &str = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml";

/// What `-o` asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Format {
    Table {
        wide: bool,
    },
    Json,
    Yaml,
    Name,
    JsonPath(jsonpath::Template),
    /// Headers and their templates.
    CustomColumns(Vec<(String, jsonpath::Template)>),
}

/// Reads `-o`, or kubectl's refusal.
pub fn format(output: Option<&str>) -> Result<Format, String> {
    let Some(o) = output else {
        return Ok(Format::Table { wide: false });
    };
    let (name, arg) = match o.split_once('=') {
        Some((n, a)) => (n, Some(a)),
        None => (o, None),
    };
    match (name, arg) {
        ("wide", None) => Ok(Format::Table { wide: true }),
        ("json", None) => Ok(Format::Json),
        ("yaml", None) => Ok(Format::Yaml),
        ("name", None) => Ok(Format::Name),
        ("jsonpath", Some(t)) => jsonpath::Template::parse(t)
            .map(Format::JsonPath)
            .map_err(|e| format!("error parsing jsonpath {t}, {e}")),
        ("custom-columns", Some(spec)) => custom_columns(spec).map(Format::CustomColumns),
        ("jsonpath", None) | ("custom-columns", None) => Err("template format specified but no template given".to_owned()),
        ("go-template" | "go-template-file" | "template" | "templatefile" | "jsonpath-file"
        | "jsonpath-as-json" | "custom-columns-file", _) => Err(format!(
            "-o {name} is a kubectl output format this terminal does not simulate"
        )),
        _ => Err(format!(
            "unable to match a printer suitable for the output format \"{o}\", allowed formats are: {FORMATS}"
        )),
    }
}

fn custom_columns(spec: &str) -> Result<Vec<(String, jsonpath::Template)>, String> {
    let mut cols = Vec::new();
    for part in spec.split(',') {
        let Some((header, expr)) = part.split_once(':') else {
            return Err(format!(
                "unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
            ));
        };
        let t = jsonpath::relaxed(expr)?;
        cols.push((
            header.to_owned(),
            jsonpath::Template::parse(&t)
                .map_err(|e| format!("error parsing jsonpath {t}, {e}"))?,
        ));
    }
    Ok(cols)
}

/// One resource's answer.
struct Fetched {
    mapping: Mapping,
    /// A Table (table formats) or objects.
    tables: Vec<Value>,
    objects: Vec<Value>,
}

pub fn get(run: &mut Run<'_, '_>, p: &Parsed) -> Option<()> {
    if p.args.is_empty() {
        run.stderr("You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples\n");
        run.out.code = 1;
        return None;
    }
    let fmt = match format(p.value("output")) {
        Ok(f) => f,
        Err(e) => {
            run.fail(&e);
            return None;
        }
    };
    let mapper = run.mapper.clone();
    let t = match targets(&mapper, &p.args) {
        Ok(t) => t,
        Err(e) => {
            run.fail(&e);
            return None;
        }
    };
    let all_ns = p.bool("all-namespaces");
    let table = matches!(fmt, Format::Table { .. });
    let mut errors = Vec::new();
    let mut fetched = Vec::new();
    for (m, names) in &t.groups {
        let ns = if all_ns && names.is_empty() {
            String::new()
        } else {
            run.namespace.clone()
        };
        let ns = ns.as_str();
        let mut f = Fetched {
            mapping: (*m).clone(),
            tables: Vec::new(),
            objects: Vec::new(),
        };
        let accept = if table {
            TABLE_ACCEPT
        } else {
            "application/json"
        };
        if names.is_empty() {
            let mut q: Vec<(&str, &str)> = Vec::new();
            if let Some(l) = p.value("selector") {
                q.push(("labelSelector", l));
            }
            if let Some(fs) = p.value("field-selector") {
                q.push(("fieldSelector", fs));
            }
            q.push(("limit", "500"));
            let answer = run.send(Call::get(m.collection_path(ns), query(&q), accept));
            if !answer.ok() {
                errors.push(answer.error_line());
                continue;
            }
            if table {
                f.tables.push(answer.body);
            } else {
                let list_kind = answer.body.member("kind").as_str().unwrap_or("").to_owned();
                let api_version = answer.body.member("apiVersion").clone();
                for mut item in answer
                    .body
                    .member("items")
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                {
                    if item.field("kind").is_none() {
                        item["kind"] = json!(list_kind.strip_suffix("List").unwrap_or(&m.kind));
                    }
                    if item.field("apiVersion").is_none() {
                        item["apiVersion"] = api_version.clone();
                    }
                    f.objects.push(item);
                }
            }
        } else {
            for name in names {
                let answer = run.send(Call::get(m.object_path(ns, name), String::new(), accept));
                if !answer.ok() {
                    if !(answer.status == 404 && p.bool("ignore-not-found")) {
                        errors.push(answer.error_line());
                    }
                    continue;
                }
                if table {
                    f.tables.push(answer.body);
                } else {
                    f.objects.push(answer.body);
                }
            }
        }
        fetched.push(f);
    }
    if p.bool("watch") {
        return start_watch(run, p, &fmt, &t, &fetched, errors);
    }
    let mut printed = false;
    match &fmt {
        Format::Table { wide } => {
            let with_kind = t.groups.len() > 1 || p.bool("show-kind");
            let mut separator = false;
            for f in &fetched {
                let opts = TableOptions {
                    wide: *wide,
                    with_namespace: all_ns && f.mapping.namespaced,
                    with_kind: with_kind.then(|| f.mapping.kind_prefix()),
                    no_headers: p.bool("no-headers"),
                    show_labels: p.bool("show-labels"),
                };
                let text = print_tables(&f.tables, &opts);
                if !text.is_empty() {
                    if separator {
                        run.stdout("\n");
                    }
                    run.stdout(&text);
                    printed = true;
                    separator = !opts.no_headers;
                }
            }
        }
        Format::Name => {
            for f in &fetched {
                for o in &f.objects {
                    let name = o
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let line = format!("{}/{name}\n", f.mapping.kind_prefix());
                    run.stdout(&line);
                }
            }
            printed = true;
        }
        other => {
            let objects: Vec<Value> = fetched
                .iter()
                .flat_map(|f| f.objects.iter().cloned())
                .map(strip_managed_fields)
                .collect();
            let any = !objects.is_empty();
            let doc = if t.single && objects.len() == 1 {
                objects.into_iter().next().unwrap_or(Value::Null)
            } else {
                json!({"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {"resourceVersion": ""}})
            };
            let text = match other {
                Format::Json => encode::json(&doc),
                Format::Yaml => encode::yaml(&doc),
                Format::JsonPath(tpl) if any || !t.single => match tpl.execute(&doc) {
                    Ok(s) => s,
                    Err(e) => {
                        run.fail(&format!("error executing jsonpath: {e}"));
                        return None;
                    }
                },
                Format::CustomColumns(cols) if any || !t.single => {
                    custom_table(cols, &doc, p.bool("no-headers"))
                }
                _ => String::new(),
            };
            // Every format but the table prints the (possibly empty) List; only the table
            // says that nothing was found.
            if any || !t.single {
                run.stdout(&text);
            }
            printed = true;
        }
    }
    if !printed && errors.is_empty() && !(p.bool("ignore-not-found")) {
        if all_ns {
            run.stderr("No resources found\n");
        } else {
            let line = format!("No resources found in {} namespace.\n", run.namespace);
            run.stderr(&line);
        }
    }
    for e in &errors {
        run.stderr(e);
        run.stderr("\n");
    }
    if !errors.is_empty() {
        run.out.code = 1;
    }
    Some(())
}

fn strip_managed_fields(mut o: Value) -> Value {
    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    o
}

#[derive(Clone, Debug)]
pub struct TableOptions {
    pub wide: bool,
    pub with_namespace: bool,
    /// `deployment.apps`: printed before each name.
    pub with_kind: Option<String>,
    pub no_headers: bool,
    pub show_labels: bool,
}

/// Labels as kubectl's `--show-labels` prints them (`labels.FormatLabels`: sorted `k=v`).
fn format_labels(meta: &Value) -> String {
    let Some(map) = meta.field("labels").and_then(Value::as_object) else {
        return "<none>".into();
    };
    if map.is_empty() {
        return "<none>".into();
    }
    let mut pairs: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs.join(",")
}

fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.to_string(),
        other => other.to_string(),
    }
}

/// One table's lines as cells: the header (unless `no_headers`, and only when there are rows)
/// and a line per row.
pub fn table_cells(table: &Value, o: &TableOptions) -> Vec<Vec<String>> {
    let cols: Vec<&Value> = table
        .member("columnDefinitions")
        .as_array()
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    let shown: Vec<usize> = cols
        .iter()
        .enumerate()
        .filter(|(_, c)| o.wide || c.member("priority").as_i64().unwrap_or(0) == 0)
        .map(|(i, _)| i)
        .collect();
    let rows = table.member("rows").as_array().cloned().unwrap_or_default();
    let mut lines = Vec::new();
    if rows.is_empty() {
        return lines;
    }
    if !o.no_headers {
        let mut h: Vec<String> = Vec::new();
        if o.with_namespace {
            h.push("NAMESPACE".into());
        }
        h.extend(
            shown
                .iter()
                .map(|&i| cols[i].member("name").as_str().unwrap_or("").to_uppercase()),
        );
        if o.show_labels {
            h.push("LABELS".into());
        }
        lines.push(h);
    }
    for row in &rows {
        let cells = row.member("cells").as_array().cloned().unwrap_or_default();
        let meta = row
            .pointer("/object/metadata")
            .cloned()
            .unwrap_or(Value::Null);
        let mut line: Vec<String> = Vec::new();
        if o.with_namespace {
            line.push(meta.member("namespace").as_str().unwrap_or("").to_owned());
        }
        for (n, &i) in shown.iter().enumerate() {
            let mut c = cells.get(i).map(cell_text).unwrap_or_default();
            if n == 0 {
                if let Some(k) = &o.with_kind {
                    c = format!("{k}/{c}");
                }
            }
            line.push(c);
        }
        if o.show_labels {
            line.push(format_labels(&meta));
        }
        lines.push(line);
    }
    lines
}

/// The tables of one resource as the lines of one printed table (one header).
pub fn tables_cells(tables: &[Value], o: &TableOptions) -> Vec<Vec<String>> {
    let mut lines = Vec::new();
    let mut header_done = o.no_headers;
    for table in tables {
        let opts = TableOptions {
            no_headers: header_done,
            with_kind: o.with_kind.clone(),
            ..*o
        };
        let t = table_cells(table, &opts);
        if !t.is_empty() {
            header_done = true;
        }
        lines.extend(t);
    }
    lines
}

/// The tables of one resource printed together (one header, one set of column widths).
pub fn print_tables(tables: &[Value], o: &TableOptions) -> String {
    let mut text = String::new();
    for line in tables_cells(tables, o) {
        text.push_str(&line.join("\t"));
        text.push('\n');
    }
    tabwriter::align(&text)
}

/// `-o custom-columns`: one row per object of `doc` (a List or one object).
fn custom_table(cols: &[(String, jsonpath::Template)], doc: &Value, no_headers: bool) -> String {
    let items: Vec<&Value> = match doc.field("items").and_then(Value::as_array) {
        Some(items) if doc.member("kind") == "List" => items.iter().collect(),
        _ => vec![doc],
    };
    let mut text = String::new();
    if !no_headers {
        text.push_str(
            &cols
                .iter()
                .map(|(h, _)| h.as_str())
                .collect::<Vec<_>>()
                .join("\t"),
        );
        text.push('\n');
    }
    for item in items {
        let cells: Vec<String> = cols
            .iter()
            .map(|(_, t)| {
                let vals = t.values(item);
                if vals.is_empty() {
                    "<none>".to_owned()
                } else {
                    vals.iter()
                        .map(jsonpath::go_v)
                        .collect::<Vec<_>>()
                        .join(",")
                }
            })
            .collect();
        text.push_str(&cells.join("\t"));
        text.push('\n');
    }
    tabwriter::align(&text)
}

/// `get -w`: the first table now, then [`Watch`](super::watch::Watch) rows as the world moves.
fn start_watch(
    run: &mut Run<'_, '_>,
    p: &Parsed,
    fmt: &Format,
    t: &super::Targets<'_>,
    fetched: &[Fetched],
    errors: Vec<String>,
) -> Option<()> {
    let Format::Table { wide } = fmt else {
        run.fail("get -w prints tables only in this terminal; drop -o");
        return None;
    };
    let (Some(f), 1) = (fetched.first(), t.groups.len()) else {
        if let Some(e) = errors.first() {
            run.stderr(e);
            run.stderr("\n");
            run.out.code = 1;
        } else {
            run.fail("you may only specify a single resource type");
        }
        return None;
    };
    let all_ns = p.bool("all-namespaces");
    let opts = TableOptions {
        wide: *wide,
        with_namespace: all_ns && f.mapping.namespaced,
        with_kind: None,
        no_headers: p.bool("no-headers"),
        show_labels: false,
    };
    let lines = tables_cells(&f.tables, &opts);
    let text = print_tables(&f.tables, &opts);
    run.stdout(&text);
    for e in &errors {
        run.stderr(e);
        run.stderr("\n");
    }
    let namespace = (f.mapping.namespaced && !all_ns).then(|| run.namespace.clone());
    let watch = super::watch::Watch {
        gr: crate::api::GroupResource::new(&f.mapping.group, &f.mapping.resource),
        namespace,
        names: t.groups[0].1.clone(),
        selector: p.value("selector").map(str::to_owned),
        wide: *wide,
        with_namespace: opts.with_namespace,
        with_kind: None,
        seen: Default::default(),
        widths: Vec::new(),
        header_printed: !lines.is_empty() || opts.no_headers,
        rollout: None,
        finished: None,
    }
    .start(run.session.world(), &lines);
    run.out.watch = Some(Box::new(watch));
    Some(())
}
