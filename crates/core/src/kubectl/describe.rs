//! `kubectl describe` for Deployments, ReplicaSets, Pods, Nodes and HorizontalPodAutoscalers
//! with their Events [kubectl pkg/cmd/describe/describe.go `DescribeOptions.Run`,
//! `DescribeMatchingResources`; pkg/describe/describe.go]: the requests each describer sends
//! (the object, its Events by kubectl's field selector, the lists it reads) and the text it
//! writes through a `PrefixWriter` into Go's tabwriter as `tabbedString` sets it up.

use crate::api::meta::Fields;
use crate::json::Value;

use super::args::{flag, unsupported, FlagSpec, Parsed, Takes};
use super::client::{query, Call, Mapping};
use super::{tabwriter, targets, Run};
use crate::time::{human_duration, parse_rfc3339_unix_ms};

pub const FLAGS: &[FlagSpec] = &[
    flag("selector", Some('l'), Takes::Value),
    flag("all-namespaces", Some('A'), Takes::Bool),
    flag("show-events", None, Takes::Bool),
    flag("chunk-size", None, Takes::Value),
    unsupported("filename", Some('f'), Takes::Value),
    unsupported("recursive", Some('R'), Takes::Bool),
    unsupported("kustomize", Some('k'), Takes::Value),
];

/// The kinds this terminal describes.
const DESCRIBED: &[(&str, &str)] = &[
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("", "Pod"),
    ("", "Node"),
    ("autoscaling", "HorizontalPodAutoscaler"),
];

/// What one describer needs besides the session: kubectl's clock (event ages) and the
/// settings the flags set [pkg/describe/interface.go `DescriberSettings`].
#[derive(Clone, Copy)]
struct Settings<'a> {
    now_unix_ms: i64,
    show_events: bool,
    chunk: &'a str,
}

/// `kubectl describe TYPE [NAME_PREFIX | -l selector] | TYPE/NAME` [`DescribeOptions.Run`].
pub fn describe(run: &mut Run<'_, '_>, p: &Parsed) -> Option<()> {
    if p.args.is_empty() {
        run.fail("You must specify the type of resource to describe. Use \"kubectl api-resources\" for a complete list of supported resources.");
        return None;
    }
    let mapper = run.mapper.clone();
    let t = match targets(&mapper, &p.args) {
        Ok(t) => t,
        Err(e) => {
            run.fail(&e);
            return None;
        }
    };
    let now_unix_ms = run
        .ctx
        .clock_unix_ms
        .unwrap_or_else(|| run.session.world().now().unix_ms());
    let chunk = p.value("chunk-size").unwrap_or("500").to_owned();
    let settings = Settings {
        now_unix_ms,
        show_events: p.value("show-events") != Some("false"),
        chunk: &chunk,
    };
    let all_ns = p.bool("all-namespaces");
    // The builder's infos: every object named or listed, in order [resource.Builder `Do`].
    let mut infos: Vec<(Mapping, String, String)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut not_found = false;
    for (m, names) in &t.groups {
        let ns = if m.namespaced {
            if all_ns && names.is_empty() {
                String::new()
            } else {
                run.namespace.clone()
            }
        } else {
            String::new()
        };
        if names.is_empty() {
            let mut q: Vec<(&str, &str)> = Vec::new();
            if let Some(l) = p.value("selector") {
                q.push(("labelSelector", l));
            }
            q.push(("limit", &chunk));
            let answer = run.send(Call::get(
                m.collection_path(&ns),
                query(&q),
                "application/json",
            ));
            if !answer.ok() {
                errors.push(answer.error_line());
                continue;
            }
            for item in answer.body.member("items").as_array().into_iter().flatten() {
                infos.push((
                    (*m).clone(),
                    meta_str(item, "namespace"),
                    meta_str(item, "name"),
                ));
            }
        } else {
            for name in names {
                let answer = run.send(Call::get(
                    m.object_path(&ns, name),
                    String::new(),
                    "application/json",
                ));
                if !answer.ok() {
                    not_found |= answer.status == 404;
                    errors.push(answer.error_line());
                    continue;
                }
                infos.push(((*m).clone(), ns.clone(), name.clone()));
            }
        }
    }
    // `kubectl describe TYPE PREFIX`: with two arguments, a name not found is taken as a
    // prefix of the first argument's objects' names.
    if not_found && p.args.len() == 2 {
        let original = errors
            .iter()
            .find(|e| e.contains("(NotFound)"))
            .cloned()
            .unwrap_or_default();
        return describe_matching(run, &p.args[0], &p.args[1], &original, settings);
    }
    let mut first = true;
    let mut seen: Vec<String> = Vec::new();
    for (m, ns, name) in &infos {
        match describe_one(run, m, ns, name, settings) {
            Ok(s) => {
                if !first {
                    run.stdout("\n\n");
                }
                first = false;
                run.stdout(&s);
            }
            Err(e) => {
                if !seen.contains(&e) {
                    seen.push(e.clone());
                    errors.push(e);
                }
            }
        }
    }
    if infos.is_empty() && errors.is_empty() {
        if all_ns {
            run.stderr("No resources found\n");
        } else {
            let ns = run.namespace.clone();
            run.stderr(&format!("No resources found in {ns} namespace.\n"));
        }
    }
    print_errors(run, &errors);
    Some(())
}

/// `utilerrors.NewAggregate(...)` as `CheckErr` prints it: one error alone, several as a
/// bulleted list.
fn print_errors(run: &mut Run<'_, '_>, errors: &[String]) {
    match errors {
        [] => {}
        [one] => {
            let line = if one.starts_with("Error from server") {
                one.clone()
            } else {
                format!("error: {one}")
            };
            run.stderr(&line);
            run.stderr("\n");
            run.out.code = 1;
        }
        many => {
            for e in many {
                run.stderr(e);
                run.stderr("\n");
            }
            run.out.code = 1;
        }
    }
}

/// [`DescribeMatchingResources`]: every object `resource` names (`TYPE`, or `TYPE/NAME`)
/// whose name starts with `prefix`, each followed by a newline, or the NotFound when none does.
fn describe_matching(
    run: &mut Run<'_, '_>,
    resource: &str,
    prefix: &str,
    original: &str,
    settings: Settings<'_>,
) -> Option<()> {
    let mapper = run.mapper.clone();
    let t = match targets(&mapper, &[resource.to_owned()]) {
        Ok(t) if t.groups.len() == 1 => t,
        Ok(_) => {
            print_errors(run, &["you must provide only one resource type".to_owned()]);
            return None;
        }
        Err(e) => {
            print_errors(run, &[e]);
            return None;
        }
    };
    let (m, names) = (t.groups[0].0.clone(), t.groups[0].1.clone());
    let ns = if m.namespaced {
        run.namespace.clone()
    } else {
        String::new()
    };
    let mut items: Vec<Value> = Vec::new();
    if names.is_empty() {
        let answer = run.send(Call::get(
            m.collection_path(&ns),
            query(&[("limit", settings.chunk)]),
            "application/json",
        ));
        if !answer.ok() {
            print_errors(run, &[answer.error_line()]);
            return None;
        }
        items = answer
            .body
            .member("items")
            .as_array()
            .cloned()
            .unwrap_or_default();
    } else {
        for name in names {
            let answer = run.send(Call::get(
                m.object_path(&ns, &name),
                String::new(),
                "application/json",
            ));
            if !answer.ok() {
                print_errors(run, &[answer.error_line()]);
                return None;
            }
            items.push(answer.body);
        }
    }
    let mut found = false;
    for item in items {
        let name = meta_str(&item, "name");
        if !name.starts_with(prefix) {
            continue;
        }
        found = true;
        match describe_one(run, &m, &meta_str(&item, "namespace"), &name, settings) {
            Ok(s) => {
                run.stdout(&s);
                run.stdout("\n");
            }
            Err(e) => {
                print_errors(run, &[e]);
                return None;
            }
        }
    }
    if !found {
        print_errors(run, &[original.to_owned()]);
    }
    Some(())
}

/// `describe.DescriberFn`: the describer of the object's kind, or kubectl's refusal.
fn describe_one(
    run: &mut Run<'_, '_>,
    m: &Mapping,
    ns: &str,
    name: &str,
    settings: Settings<'_>,
) -> Result<String, String> {
    if !DESCRIBED.contains(&(m.group.as_str(), m.kind.as_str())) {
        return Err(format!(
            "kubectl describe of a {} is not simulated by this terminal",
            m.kind
        ));
    }
    let got = run.send(Call::get(
        m.object_path(ns, name),
        String::new(),
        "application/json",
    ));
    if !got.ok() {
        return Err(got.error_line());
    }
    let obj = got.body;
    Ok(match m.kind.as_str() {
        "Deployment" => deployment(run, &obj, settings),
        "ReplicaSet" => replica_set(run, &obj, settings),
        "Pod" => pod(run, &obj, settings),
        "Node" => node(run, &obj, settings),
        "HorizontalPodAutoscaler" => hpa(run, &obj, settings),
        _ => {
            return Err(format!(
                "kubectl describe of a {} is not simulated by this terminal",
                m.kind
            ))
        }
    })
}

/// Text written at indentation levels of two spaces, aligned by Go's tabwriter with
/// `tabbedString`'s settings (minwidth 0, padding 2) at each flush [`prefixWriter`,
/// `tabbedString`].
#[derive(Default)]
pub struct PrefixWriter {
    pending: String,
    done: String,
}

impl PrefixWriter {
    pub fn write(&mut self, level: usize, text: &str) {
        for _ in 0..level {
            self.pending.push_str("  ");
        }
        self.pending.push_str(text);
    }

    /// `WriteLine`: the text and a newline, at no indentation.
    pub fn line(&mut self, text: &str) {
        self.pending.push_str(text);
        self.pending.push('\n');
    }

    pub fn flush(&mut self) {
        let text = std::mem::take(&mut self.pending);
        self.done.push_str(&tabwriter::align_with(&text, 0, 2));
    }

    pub fn finish(mut self) -> String {
        self.flush();
        self.done
    }
}

fn meta_str(obj: &Value, key: &str) -> String {
    obj.member("metadata")[key]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn int_at(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// `Time.Format(time.RFC1123Z)` in UTC: `Wed, 01 Jan 2025 00:00:00 +0000` (the zero time when
/// the timestamp is absent, as Go prints a zero `metav1.Time`).
pub fn rfc1123z(ts: &str) -> String {
    let Some(ms) = parse_rfc3339_unix_ms(ts) else {
        return "Mon, 01 Jan 0001 00:00:00 +0000".into();
    };
    let secs = ms.div_euclid(1000);
    let iso = crate::time::format_unix_seconds(secs);
    let days = secs.div_euclid(86_400);
    // 1970-01-01 was a Thursday.
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let weekday = WEEKDAYS[days.rem_euclid(7) as usize];
    let month: usize = iso[5..7].parse().unwrap_or(1);
    format!(
        "{weekday}, {} {} {} {} +0000",
        &iso[8..10],
        MONTHS[month.saturating_sub(1).min(11)],
        &iso[0..4],
        &iso[11..19]
    )
}

/// `translateTimestampSince`: the age of `ts` on kubectl's clock, `<unknown>` without one.
fn since(ts: &str, now_unix_ms: i64) -> String {
    match parse_rfc3339_unix_ms(ts) {
        Some(t) => human_duration(now_unix_ms - t),
        None => "<unknown>".into(),
    }
}

/// The map's entries sorted by key.
fn sorted(map: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or("").to_owned()))
        .collect();
    v.sort();
    v
}

/// [`printLabelsMultilineWithIndent`] with no initial indent and a tab after the title.
fn labels_multiline(w: &mut PrefixWriter, title: &str, labels: &Value) {
    w.write(0, &format!("{title}:\t"));
    let labels = sorted(labels);
    if labels.is_empty() {
        w.line("<none>");
        return;
    }
    for (i, (k, v)) in labels.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        w.write(0, &format!("{k}={v}\n"));
    }
}

const MAX_ANNOTATION_LEN: usize = 140;

/// [`printAnnotationsMultiline`]: the last-applied configuration is skipped; a long or
/// multi-line value goes on its own lines, each cut at 138 bytes.
fn annotations_multiline(w: &mut PrefixWriter, title: &str, annotations: &Value) {
    w.write(0, &format!("{title}:\t"));
    let entries: Vec<(String, String)> = sorted(annotations)
        .into_iter()
        .filter(|(k, _)| k != "kubectl.kubernetes.io/last-applied-configuration")
        .collect();
    if entries.is_empty() {
        w.line("<none>");
        return;
    }
    for (i, (k, v)) in entries.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let value = v.strip_suffix('\n').unwrap_or(v);
        if value.len() + k.len() + 2 > MAX_ANNOTATION_LEN || value.contains('\n') {
            w.write(0, &format!("{k}:\n"));
            for s in value.split('\n') {
                w.write(0, &format!("\t  {}\n", shorten(s, MAX_ANNOTATION_LEN - 2)));
            }
        } else {
            w.write(0, &format!("{k}: {value}\n"));
        }
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s.to_owned()
    }
}

/// `metav1.LabelSelectorAsSelector(...).String()`: the requirements sorted by key, `<none>`
/// for an empty selector when `none` is asked (`FormatLabelSelector`).
pub fn selector_string(sel: &Value, none: &str) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, v) in sorted(sel.member("matchLabels")) {
        reqs.push((k.clone(), format!("{k}={v}")));
    }
    for e in sel
        .member("matchExpressions")
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = e.member("key").as_str().unwrap_or("").to_owned();
        let mut values: Vec<&str> = e
            .member("values")
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match e.member("operator").as_str().unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    if reqs.is_empty() {
        return none.to_owned();
    }
    reqs.into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// `IntOrString.String()`.
fn int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Number(n) => n.to_string(),
        _ => "0".into(),
    }
}

/// [`printController`]: `Kind/name` of the controller owner reference.
fn controller_of(obj: &Value) -> Option<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.member("controller") == true)
        .map(|r| {
            format!(
                "{}/{}",
                r.member("kind").as_str().unwrap_or(""),
                r.member("name").as_str().unwrap_or("")
            )
        })
}

fn controller_uid(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.member("controller") == true)
        .and_then(|r| r.member("uid").as_str())
}

/// [`searchEvents`]: the Events of the object, by kubectl's field selector (name, namespace,
/// kind when the reference has one, uid).
fn search_events(
    run: &mut Run<'_, '_>,
    obj: &Value,
    kind: Option<&str>,
    uid: Option<&str>,
    settings: Settings<'_>,
) -> Vec<Value> {
    let name = meta_str(obj, "name");
    let ns = meta_str(obj, "namespace");
    let mut terms = vec![
        format!("involvedObject.name={}", escape_field(&name)),
        format!("involvedObject.namespace={}", escape_field(&ns)),
    ];
    if let Some(k) = kind {
        terms.push(format!("involvedObject.kind={}", escape_field(k)));
    }
    if let Some(u) = uid.filter(|u| !u.is_empty()) {
        terms.push(format!("involvedObject.uid={}", escape_field(u)));
    }
    events_by(run, &ns, &terms.join(","), settings)
}

fn events_by(
    run: &mut Run<'_, '_>,
    ns: &str,
    selector: &str,
    settings: Settings<'_>,
) -> Vec<Value> {
    let path = if ns.is_empty() {
        "/api/v1/events".to_owned()
    } else {
        format!("/api/v1/namespaces/{ns}/events")
    };
    let answer = run.send(Call::get(
        path,
        query(&[("fieldSelector", selector), ("limit", settings.chunk)]),
        "application/json",
    ));
    if !answer.ok() {
        return Vec::new();
    }
    answer
        .body
        .member("items")
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `fields.EscapeValue`.
fn escape_field(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ',' => out.push_str("\\,"),
            '=' => out.push_str("\\="),
            other => out.push(other),
        }
    }
    out
}

/// [`DescribeEvents`]: the Events sorted by last timestamp (a stable sort: Go's sort of up to
/// twelve is an insertion sort), each with its age on kubectl's clock.
pub fn events_section(w: &mut PrefixWriter, events: &[Value], now_unix_ms: i64) {
    if events.is_empty() {
        w.write(0, "Events:\t<none>\n");
        return;
    }
    w.flush();
    let mut events: Vec<&Value> = events.iter().collect();
    let last = |e: &Value| parse_rfc3339_unix_ms(str_at(e, "/lastTimestamp")).unwrap_or(i64::MIN);
    events.sort_by_key(|e| last(e));
    w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    w.write(1, "----\t------\t----\t----\t-------\n");
    for e in events {
        let event_time = str_at(e, "/eventTime");
        let first = if parse_rfc3339_unix_ms(event_time).is_some() {
            since(event_time, now_unix_ms)
        } else {
            since(str_at(e, "/firstTimestamp"), now_unix_ms)
        };
        let count = int_at(e, "/count");
        let interval = if e.member("series").is_object() {
            format!(
                "{} (x{} over {first})",
                since(str_at(e, "/series/lastObservedTime"), now_unix_ms),
                int_at(e, "/series/count")
            )
        } else if count > 1 {
            format!(
                "{} (x{count} over {first})",
                since(str_at(e, "/lastTimestamp"), now_unix_ms)
            )
        } else {
            first
        };
        let mut source = str_at(e, "/source/component");
        if source.is_empty() {
            source = str_at(e, "/reportingComponent");
        }
        w.write(
            1,
            &format!(
                "{}\t{}\t{interval}\t{source}\t{}\n",
                str_at(e, "/type"),
                str_at(e, "/reason"),
                str_at(e, "/message").trim()
            ),
        );
    }
}

/// [`describeDeployment`], with the ReplicaSets `GetAllReplicaSetsInChunks` finds.
fn deployment(run: &mut Run<'_, '_>, d: &Value, settings: Settings<'_>) -> String {
    let events = settings.show_events.then(|| {
        search_events(
            run,
            d,
            Some("Deployment"),
            d.member("metadata").member("uid").as_str(),
            settings,
        )
    });
    let ns = meta_str(d, "namespace");
    let selector = selector_string(d.member("spec").member("selector"), "");
    let answer = run.send(Call::get(
        format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
        query(&[("labelSelector", &selector), ("limit", settings.chunk)]),
        "application/json",
    ));
    let (mut old, mut new) = (Vec::new(), Vec::new());
    if answer.ok() {
        let uid = d.member("metadata").member("uid").as_str();
        let mut owned: Vec<Value> = answer
            .body
            .member("items")
            .as_array()
            .into_iter()
            .flatten()
            .filter(|rs| controller_uid(rs).is_some() && controller_uid(rs) == uid)
            .cloned()
            .collect();
        // [deploymentutil `findNewReplicaSet`]: the oldest with the Deployment's template.
        owned.sort_by(|a, b| {
            let t = |rs: &Value| parse_rfc3339_unix_ms(str_at(rs, "/metadata/creationTimestamp"));
            t(a).cmp(&t(b))
                .then_with(|| meta_str(a, "name").cmp(&meta_str(b, "name")))
        });
        let template = without_hash(d.member("spec").member("template"));
        let new_uid = owned
            .iter()
            .find(|rs| without_hash(rs.member("spec").member("template")) == template)
            .map(|rs| meta_str(rs, "uid"));
        for rs in owned {
            if Some(meta_str(&rs, "uid")) == new_uid {
                new.push(rs);
            } else {
                old.push(rs);
            }
        }
    }
    let mut w = PrefixWriter::default();
    w.write(0, &format!("Name:\t{}\n", meta_str(d, "name")));
    w.write(0, &format!("Namespace:\t{ns}\n"));
    w.write(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            rfc1123z(str_at(d, "/metadata/creationTimestamp"))
        ),
    );
    labels_multiline(&mut w, "Labels", d.member("metadata").member("labels"));
    annotations_multiline(
        &mut w,
        "Annotations",
        d.member("metadata").member("annotations"),
    );
    w.write(0, &format!("Selector:\t{selector}\n"));
    w.write(
        0,
        &format!(
            "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable\n",
            int_at(d, "/spec/replicas"),
            int_at(d, "/status/updatedReplicas"),
            int_at(d, "/status/replicas"),
            int_at(d, "/status/availableReplicas"),
            int_at(d, "/status/unavailableReplicas")
        ),
    );
    w.write(
        0,
        &format!("StrategyType:\t{}\n", str_at(d, "/spec/strategy/type")),
    );
    w.write(
        0,
        &format!("MinReadySeconds:\t{}\n", int_at(d, "/spec/minReadySeconds")),
    );
    if let Some(ru) = d
        .pointer("/spec/strategy/rollingUpdate")
        .filter(|v| v.is_object())
    {
        w.write(
            0,
            &format!(
                "RollingUpdateStrategy:\t{} max unavailable, {} max surge\n",
                int_or_string(ru.member("maxUnavailable")),
                int_or_string(ru.member("maxSurge"))
            ),
        );
    }
    pod_template(&mut w, d.member("spec").member("template"));
    conditions_with_reason(&mut w, d);
    if !old.is_empty() || !new.is_empty() {
        w.write(
            0,
            &format!("OldReplicaSets:\t{}\n", replica_sets_line(&old)),
        );
        w.write(0, &format!("NewReplicaSet:\t{}\n", replica_sets_line(&new)));
    }
    if let Some(events) = events {
        events_section(&mut w, &events, settings.now_unix_ms);
    }
    w.finish()
}

/// The pod template without the `pod-template-hash` label, as `apiequality.Semantic` compares
/// typed objects [deploymentutil `equalIgnoreHash`]: a null, an empty map and an empty list
/// are the zero value (`creationTimestamp: null`, which a rollback writes, equals none).
fn without_hash(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove("pod-template-hash");
    }
    semantic(t)
}

fn semantic(v: Value) -> Value {
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    match v {
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, semantic(v)))
                .filter(|(_, v)| !empty(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(semantic).collect()),
        other => other,
    }
}

/// [`printReplicaSetsByLabels`].
fn replica_sets_line(sets: &[Value]) -> String {
    if sets.is_empty() {
        return "<none>".into();
    }
    sets.iter()
        .map(|rs| {
            format!(
                "{} ({}/{} replicas created)",
                meta_str(rs, "name"),
                int_at(rs, "/status/replicas"),
                int_at(rs, "/spec/replicas")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `Conditions:` table of Deployments and ReplicaSets (type, status, reason).
fn conditions_with_reason(w: &mut PrefixWriter, obj: &Value) {
    let conditions = obj.pointer("/status/conditions").and_then(Value::as_array);
    let Some(conditions) = conditions.filter(|c| !c.is_empty()) else {
        return;
    };
    w.write(0, "Conditions:\n  Type\tStatus\tReason\n");
    w.write(1, "----\t------\t------\n");
    for c in conditions {
        w.write(
            1,
            &format!(
                "{} \t{}\t{}\n",
                str_at(c, "/type"),
                str_at(c, "/status"),
                str_at(c, "/reason")
            ),
        );
    }
}

/// [`describeReplicaSet`], with the pod counts `getPodStatusForController` reads.
fn replica_set(run: &mut Run<'_, '_>, rs: &Value, settings: Settings<'_>) -> String {
    let ns = meta_str(rs, "namespace");
    let selector = selector_string(rs.member("spec").member("selector"), "");
    let answer = run.send(Call::get(
        format!("/api/v1/namespaces/{ns}/pods"),
        query(&[("labelSelector", &selector), ("limit", settings.chunk)]),
        "application/json",
    ));
    let uid = rs.member("metadata").member("uid").as_str();
    let pods_status = if answer.ok() {
        let (mut running, mut waiting, mut succeeded, mut failed) = (0, 0, 0, 0);
        for pod in answer.body.member("items").as_array().into_iter().flatten() {
            if controller_uid(pod).is_none() || controller_uid(pod) != uid {
                continue;
            }
            match str_at(pod, "/status/phase") {
                "Running" => running += 1,
                "Pending" => waiting += 1,
                "Succeeded" => succeeded += 1,
                "Failed" => failed += 1,
                _ => {}
            }
        }
        format!("{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n")
    } else {
        format!("error in fetching pods: {}\n", answer.error_line())
    };
    let events = settings
        .show_events
        .then(|| search_events(run, rs, Some("ReplicaSet"), uid, settings));
    let mut w = PrefixWriter::default();
    w.write(0, &format!("Name:\t{}\n", meta_str(rs, "name")));
    w.write(0, &format!("Namespace:\t{ns}\n"));
    w.write(
        0,
        &format!(
            "Selector:\t{}\n",
            selector_string(rs.member("spec").member("selector"), "<none>")
        ),
    );
    labels_multiline(&mut w, "Labels", rs.member("metadata").member("labels"));
    annotations_multiline(
        &mut w,
        "Annotations",
        rs.member("metadata").member("annotations"),
    );
    if let Some(c) = controller_of(rs) {
        w.write(0, &format!("Controlled By:\t{c}\n"));
    }
    w.write(
        0,
        &format!(
            "Replicas:\t{} current / {} desired\n",
            int_at(rs, "/status/replicas"),
            int_at(rs, "/spec/replicas")
        ),
    );
    w.write(0, "Pods Status:\t");
    w.write(0, &pods_status);
    pod_template(&mut w, rs.member("spec").member("template"));
    conditions_with_reason(&mut w, rs);
    if let Some(events) = events {
        events_section(&mut w, &events, settings.now_unix_ms);
    }
    w.finish()
}

/// [`DescribePodTemplate`].
fn pod_template(w: &mut PrefixWriter, t: &Value) {
    w.write(0, "Pod Template:\n");
    if t.is_null() {
        w.write(1, "<unset>");
        return;
    }
    labels_multiline(w, "  Labels", t.member("metadata").member("labels"));
    if t.member("metadata")
        .member("annotations")
        .as_object()
        .is_some_and(|a| !a.is_empty())
    {
        annotations_multiline(
            w,
            "  Annotations",
            t.member("metadata").member("annotations"),
        );
    }
    let spec = t.member("spec");
    let sa = str_at(spec, "/serviceAccountName");
    if !sa.is_empty() {
        w.write(1, &format!("Service Account:\t{sa}\n"));
    }
    if let Some(init) = spec
        .member("initContainers")
        .as_array()
        .filter(|c| !c.is_empty())
    {
        containers(w, "Init Containers", init, &[], None, "  ");
    }
    let cs = spec
        .member("containers")
        .as_array()
        .cloned()
        .unwrap_or_default();
    containers(w, "Containers", &cs, &[], None, "  ");
    volumes(w, spec, "  ");
    topology_spread(w, spec, "  ");
    let pc = str_at(spec, "/priorityClassName");
    if !pc.is_empty() {
        w.write(1, &format!("Priority Class Name:\t{pc}\n"));
    }
    labels_multiline(w, "  Node-Selectors", spec.member("nodeSelector"));
    tolerations(w, "  Tolerations", spec);
}

/// [`describeContainers`]; `pod` resolves `fieldRef` environment values (a pod's, not a
/// template's).
fn containers(
    w: &mut PrefixWriter,
    label: &str,
    list: &[Value],
    statuses: &[Value],
    pod: Option<&Value>,
    space: &str,
) {
    let none = if list.is_empty() { " <none>" } else { "" };
    w.write(0, &format!("{space}{label}:{none}\n"));
    for c in list {
        let name = str_at(c, "/name");
        let status = statuses.iter().find(|s| str_at(s, "/name") == name);
        let name_indent = if space.is_empty() { "" } else { " " };
        w.write(1, &format!("{name_indent}{name}:\n"));
        if let Some(s) = status {
            w.write(
                2,
                &format!("Container ID:\t{}\n", str_at(s, "/containerID")),
            );
        }
        w.write(2, &format!("Image:\t{}\n", str_at(c, "/image")));
        if let Some(s) = status {
            w.write(2, &format!("Image ID:\t{}\n", str_at(s, "/imageID")));
        }
        let ports: Vec<&Value> = c.member("ports").as_array().into_iter().flatten().collect();
        let port_list = |host: bool| {
            ports
                .iter()
                .map(|p| {
                    let n = if host {
                        int_at(p, "/hostPort")
                    } else {
                        int_at(p, "/containerPort")
                    };
                    format!("{n}/{}", str_at(p, "/protocol"))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (host, one, many) in [(false, "Port", "Ports"), (true, "Host Port", "Host Ports")] {
            let s = port_list(host);
            if s.contains(',') {
                w.write(2, &format!("{many}:\t{s}\n"));
            } else {
                w.write(2, &format!("{one}:\t{}\n", or_none(&s)));
            }
        }
        if let Some(sp) = c.pointer("/securityContext/seccompProfile") {
            let ty = str_at(sp, "/type");
            w.write(2, &format!("SeccompProfile:\t{ty}\n"));
            if ty == "Localhost" {
                w.write(
                    3,
                    &format!("LocalhostProfile:\t{}\n", str_at(sp, "/localhostProfile")),
                );
            }
        }
        for (key, title) in [("command", "Command"), ("args", "Args")] {
            if let Some(items) = c[key].as_array().filter(|a| !a.is_empty()) {
                w.write(2, &format!("{title}:\n"));
                for item in items {
                    for s in item.as_str().unwrap_or("").split('\n') {
                        w.write(3, &format!("{s}\n"));
                    }
                }
            }
        }
        if let Some(s) = status {
            container_state(w, "State", s.member("state"));
            if s.pointer("/lastState/terminated")
                .is_some_and(Value::is_object)
            {
                container_state(w, "Last State", s.member("lastState"));
            }
            let ready = if s.member("ready") == true {
                "True"
            } else {
                "False"
            };
            w.write(2, &format!("Ready:\t{ready}\n"));
            w.write(
                2,
                &format!("Restart Count:\t{}\n", int_at(s, "/restartCount")),
            );
        }
        resources(w, c.member("resources"), 2);
        for (key, title) in [
            ("livenessProbe", "Liveness"),
            ("readinessProbe", "Readiness"),
            ("startupProbe", "Startup"),
        ] {
            if c[key].is_object() {
                w.write(2, &format!("{title}:\t{}\n", probe(&c[key])));
            }
        }
        env(w, c, pod);
        mounts(w, c);
    }
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "<none>"
    } else {
        s
    }
}

/// [`describeResources`]: limits, then requests, each sorted by resource name.
fn resources(w: &mut PrefixWriter, r: &Value, level: usize) {
    for (key, title) in [("limits", "Limits"), ("requests", "Requests")] {
        let items = sorted_quantities(&r[key]);
        if !items.is_empty() {
            w.write(level, &format!("{title}:\n"));
        }
        for (k, v) in items {
            w.write(level + 1, &format!("{k}:\t{v}\n"));
        }
    }
}

fn sorted_quantities(map: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let q = match v {
                Value::String(s) => s.to_string(),
                other => other.to_string(),
            };
            (k.to_string(), q)
        })
        .collect();
    v.sort();
    v
}

/// [`DescribeProbe`].
fn probe(p: &Value) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        int_at(p, "/initialDelaySeconds"),
        int_at(p, "/timeoutSeconds"),
        int_at(p, "/periodSeconds"),
        int_at(p, "/successThreshold"),
        int_at(p, "/failureThreshold")
    );
    if let Some(cmd) = p.pointer("/exec/command").and_then(Value::as_array) {
        let words: Vec<&str> = cmd.iter().filter_map(Value::as_str).collect();
        return format!("exec [{}] {attrs}", words.join(" "));
    }
    if let Some(h) = p.field("httpGet").filter(|h| h.is_object()) {
        let scheme = str_at(h, "/scheme").to_lowercase();
        let port = int_or_string(h.member("port"));
        let host = str_at(h, "/host");
        let host = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let path = str_at(h, "/path");
        let url = if scheme.is_empty() {
            format!("//{host}{path}")
        } else {
            format!("{scheme}://{host}{path}")
        };
        return format!("http-get {url} {attrs}");
    }
    if let Some(t) = p.field("tcpSocket").filter(|t| t.is_object()) {
        return format!(
            "tcp-socket {}:{} {attrs}",
            str_at(t, "/host"),
            int_or_string(t.member("port"))
        );
    }
    if let Some(g) = p.field("grpc").filter(|g| g.is_object()) {
        return format!(
            "grpc <pod>:{} {} {attrs}",
            int_at(g, "/port"),
            str_at(g, "/service")
        );
    }
    format!("unknown {attrs}")
}

/// [`describeStatus`].
fn container_state(w: &mut PrefixWriter, title: &str, state: &Value) {
    if let Some(r) = state.field("running").filter(|v| v.is_object()) {
        w.write(2, &format!("{title}:\tRunning\n"));
        w.write(
            3,
            &format!("Started:\t{}\n", rfc1123z(str_at(r, "/startedAt"))),
        );
    } else if let Some(wt) = state.field("waiting").filter(|v| v.is_object()) {
        w.write(2, &format!("{title}:\tWaiting\n"));
        let reason = str_at(wt, "/reason");
        if !reason.is_empty() {
            w.write(3, &format!("Reason:\t{reason}\n"));
        }
    } else if let Some(t) = state.field("terminated").filter(|v| v.is_object()) {
        w.write(2, &format!("{title}:\tTerminated\n"));
        for (key, label) in [("reason", "Reason"), ("message", "Message")] {
            let s = str_at(t, &format!("/{key}"));
            if !s.is_empty() {
                w.write(3, &format!("{label}:\t{s}\n"));
            }
        }
        w.write(3, &format!("Exit Code:\t{}\n", int_at(t, "/exitCode")));
        if int_at(t, "/signal") > 0 {
            w.write(3, &format!("Signal:\t{}\n", int_at(t, "/signal")));
        }
        w.write(
            3,
            &format!("Started:\t{}\n", rfc1123z(str_at(t, "/startedAt"))),
        );
        w.write(
            3,
            &format!("Finished:\t{}\n", rfc1123z(str_at(t, "/finishedAt"))),
        );
    } else {
        w.write(2, &format!("{title}:\tWaiting\n"));
    }
}

/// [`describeContainerEnvFrom`] and [`describeContainerEnvVars`].
fn env(w: &mut PrefixWriter, c: &Value, pod: Option<&Value>) {
    if let Some(from) = c.member("envFrom").as_array().filter(|a| !a.is_empty()) {
        w.write(2, "Environment Variables from:\n");
        for e in from {
            let prefix = str_at(e, "/prefix");
            let (kind, src) = if e.member("configMapRef").is_object() {
                ("ConfigMap", e.member("configMapRef"))
            } else if e.member("secretRef").is_object() {
                ("Secret", e.member("secretRef"))
            } else {
                continue;
            };
            let optional = src.member("optional") == true;
            if prefix.is_empty() {
                w.write(
                    3,
                    &format!("{}\t{kind}\tOptional: {optional}\n", str_at(src, "/name")),
                );
            } else {
                w.write(
                    3,
                    &format!(
                        "{}\t{kind} with prefix '{prefix}'\tOptional: {optional}\n",
                        str_at(src, "/name")
                    ),
                );
            }
        }
    }
    let vars: Vec<&Value> = c.member("env").as_array().into_iter().flatten().collect();
    let none = if vars.is_empty() { "\t<none>" } else { "" };
    w.write(2, &format!("Environment:{none}\n"));
    for e in vars {
        let name = str_at(e, "/name");
        let Some(from) = e.field("valueFrom").filter(|v| v.is_object()) else {
            for (i, s) in str_at(e, "/value").split('\n').enumerate() {
                if i == 0 {
                    w.write(3, &format!("{name}:\t{s}\n"));
                } else {
                    w.write(3, &format!("\t{s}\n"));
                }
            }
            continue;
        };
        if let Some(f) = from.field("fieldRef").filter(|v| v.is_object()) {
            let path = str_at(f, "/fieldPath");
            let value = pod.map(|p| field_path(p, path)).unwrap_or_default();
            w.write(
                3,
                &format!("{name}:\t{value} ({}:{path})\n", str_at(f, "/apiVersion")),
            );
        } else if let Some(r) = from.field("resourceFieldRef").filter(|v| v.is_object()) {
            w.write(3, &format!("{name}:\t ({})\n", str_at(r, "/resource")));
        } else if let Some(s) = from.field("secretKeyRef").filter(|v| v.is_object()) {
            w.write(
                3,
                &format!(
                    "{name}:\t<set to the key '{}' in secret '{}'>\tOptional: {}\n",
                    str_at(s, "/key"),
                    str_at(s, "/name"),
                    s.member("optional") == true
                ),
            );
        } else if let Some(s) = from.field("configMapKeyRef").filter(|v| v.is_object()) {
            w.write(
                3,
                &format!(
                    "{name}:\t<set to the key '{}' of config map '{}'>\tOptional: {}\n",
                    str_at(s, "/key"),
                    str_at(s, "/name"),
                    s.member("optional") == true
                ),
            );
        }
    }
}

/// `fieldpath.ExtractFieldPathAsString` for the paths a pod's `fieldRef` may name.
fn field_path(pod: &Value, path: &str) -> String {
    let pointer = match path {
        "metadata.name" => "/metadata/name",
        "metadata.namespace" => "/metadata/namespace",
        "metadata.uid" => "/metadata/uid",
        "spec.nodeName" => "/spec/nodeName",
        "spec.serviceAccountName" => "/spec/serviceAccountName",
        "status.hostIP" => "/status/hostIP",
        "status.podIP" => "/status/podIP",
        _ => return String::new(),
    };
    str_at(pod, pointer).to_owned()
}

/// [`describeContainerVolumes`]: mounts sorted by mount path.
fn mounts(w: &mut PrefixWriter, c: &Value) {
    let mut list: Vec<&Value> = c
        .member("volumeMounts")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let none = if list.is_empty() { "\t<none>" } else { "" };
    w.write(2, &format!("Mounts:{none}\n"));
    list.sort_by_key(|m| str_at(m, "/mountPath"));
    for m in list {
        let mut flags = vec![if m.member("readOnly") == true {
            "ro"
        } else {
            "rw"
        }
        .to_owned()];
        let sub = str_at(m, "/subPath");
        if !sub.is_empty() {
            flags.push(format!("path={}", crate::api::validation::go_quote(sub)));
        }
        w.write(
            3,
            &format!(
                "{} from {} ({})\n",
                str_at(m, "/mountPath"),
                str_at(m, "/name"),
                flags.join(",")
            ),
        );
    }
    if let Some(devices) = c
        .member("volumeDevices")
        .as_array()
        .filter(|d| !d.is_empty())
    {
        w.write(2, &format!("Devices:{none}\n"));
        let mut devices: Vec<&Value> = devices.iter().collect();
        devices.sort_by_key(|d| str_at(d, "/devicePath"));
        for d in devices {
            w.write(
                3,
                &format!("{} from {}\n", str_at(d, "/devicePath"), str_at(d, "/name")),
            );
        }
    }
}

/// `%v` of a `*bool`: `<nil>` when unset.
fn bool_ptr(v: &Value) -> &'static str {
    match v.as_bool() {
        Some(true) => "true",
        Some(false) => "false",
        None => "<nil>",
    }
}

/// [`describeVolumes`] for the volume sources the simulation's objects carry; any other
/// source prints kubectl's `<unknown>`.
fn volumes(w: &mut PrefixWriter, spec: &Value, space: &str) {
    let list: Vec<&Value> = spec
        .member("volumes")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if list.is_empty() {
        w.write(0, &format!("{space}Volumes:\t<none>\n"));
        return;
    }
    w.write(0, &format!("{space}Volumes:\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for v in list {
        w.write(1, &format!("{name_indent}{}:\n", str_at(v, "/name")));
        if let Some(h) = v.field("hostPath").filter(|x| x.is_object()) {
            let ty = h.member("type").as_str().unwrap_or("<none>");
            w.write(
                2,
                &format!(
                    "Type:\tHostPath (bare host directory volume)\n    Path:\t{}\n    HostPathType:\t{ty}\n",
                    str_at(h, "/path")
                ),
            );
        } else if let Some(e) = v.field("emptyDir").filter(|x| x.is_object()) {
            let limit = match e.member("sizeLimit").as_str() {
                Some(s) if !s.is_empty() && s != "0" => s.to_owned(),
                _ => "<unset>".into(),
            };
            w.write(
                2,
                &format!(
                    "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t{}\n    SizeLimit:\t{limit}\n",
                    str_at(e, "/medium")
                ),
            );
        } else if let Some(s) = v.field("secret").filter(|x| x.is_object()) {
            w.write(
                2,
                &format!(
                    "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t{}\n    Optional:\t{}\n",
                    str_at(s, "/secretName"),
                    s.member("optional") == true
                ),
            );
        } else if let Some(c) = v.field("configMap").filter(|x| x.is_object()) {
            w.write(
                2,
                &format!(
                    "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t{}\n    Optional:\t{}\n",
                    str_at(c, "/name"),
                    c.member("optional") == true
                ),
            );
        } else if let Some(c) = v.field("persistentVolumeClaim").filter(|x| x.is_object()) {
            w.write(
                2,
                &format!(
                    "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t{}\n    ReadOnly:\t{}\n",
                    str_at(c, "/claimName"),
                    c.member("readOnly") == true
                ),
            );
        } else if let Some(p) = v.field("projected").filter(|x| x.is_object()) {
            w.write(
                2,
                "Type:\tProjected (a volume that contains injected data from multiple sources)\n",
            );
            for s in p.member("sources").as_array().into_iter().flatten() {
                if s.member("secret").is_object() {
                    w.write(
                        2,
                        &format!(
                            "SecretName:\t{}\n    SecretOptionalName:\t{}\n",
                            str_at(s, "/secret/name"),
                            bool_ptr(s.member("secret").member("optional"))
                        ),
                    );
                } else if s.member("downwardAPI").is_object() {
                    w.write(2, "DownwardAPI:\ttrue\n");
                } else if s.member("configMap").is_object() {
                    w.write(
                        2,
                        &format!(
                            "ConfigMapName:\t{}\n    ConfigMapOptional:\t{}\n",
                            str_at(s, "/configMap/name"),
                            bool_ptr(s.member("configMap").member("optional"))
                        ),
                    );
                } else if s.member("serviceAccountToken").is_object() {
                    w.write(
                        2,
                        &format!(
                            "TokenExpirationSeconds:\t{}\n",
                            int_at(s, "/serviceAccountToken/expirationSeconds")
                        ),
                    );
                }
            }
        } else {
            w.write(1, "<unknown>\n");
        }
    }
}

/// [`describeTopologySpreadConstraints`].
fn topology_spread(w: &mut PrefixWriter, spec: &Value, space: &str) {
    let mut list: Vec<&Value> = spec
        .member("topologySpreadConstraints")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if list.is_empty() {
        return;
    }
    list.sort_by_key(|t| str_at(t, "/topologyKey"));
    w.write(0, &format!("{space}Topology Spread Constraints:\t"));
    for (i, t) in list.iter().enumerate() {
        if i != 0 {
            w.write(0, &format!("{space}\t"));
        }
        let mut s = format!(
            "{}:{} when max skew {} is exceeded",
            str_at(t, "/topologyKey"),
            str_at(t, "/whenUnsatisfiable"),
            int_at(t, "/maxSkew")
        );
        if t.member("labelSelector").is_object() {
            s.push_str(&format!(
                " for selector {}",
                selector_string(t.member("labelSelector"), "<none>")
            ));
        }
        w.write(0, &format!("{s}\n"));
    }
}

/// [`printTolerationsMultilineWithIndent`]: sorted by key (a stable sort for the few a pod
/// has).
fn tolerations(w: &mut PrefixWriter, title: &str, spec: &Value) {
    w.write(0, &format!("{title}:\t"));
    let mut list: Vec<&Value> = spec
        .member("tolerations")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if list.is_empty() {
        w.line("<none>");
        return;
    }
    list.sort_by_key(|t| str_at(t, "/key"));
    for (i, t) in list.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let (key, value, effect) = (str_at(t, "/key"), str_at(t, "/value"), str_at(t, "/effect"));
        let mut s = key.to_owned();
        if !value.is_empty() {
            s.push_str(&format!("={value}"));
        }
        if !effect.is_empty() {
            s.push_str(&format!(":{effect}"));
        }
        if str_at(t, "/operator") == "Exists" && value.is_empty() {
            if !key.is_empty() || !effect.is_empty() {
                s.push_str(" op=Exists");
            } else {
                s.push_str("op=Exists");
            }
        }
        if let Some(secs) = t.member("tolerationSeconds").as_i64() {
            s.push_str(&format!(" for {secs}s"));
        }
        w.write(0, &format!("{s}\n"));
    }
}

/// [`PodDescriber.Describe`] and [`describePod`]: the pod's Events are searched without a
/// kind.
fn pod(run: &mut Run<'_, '_>, p: &Value, settings: Settings<'_>) -> String {
    let events = settings.show_events.then(|| {
        search_events(
            run,
            p,
            None,
            p.member("metadata").member("uid").as_str(),
            settings,
        )
    });
    let spec = p.member("spec");
    let status = p.member("status");
    let mut w = PrefixWriter::default();
    w.write(0, &format!("Name:\t{}\n", meta_str(p, "name")));
    w.write(0, &format!("Namespace:\t{}\n", meta_str(p, "namespace")));
    if let Some(prio) = spec.member("priority").as_i64() {
        w.write(0, &format!("Priority:\t{prio}\n"));
    }
    for (key, title) in [
        ("priorityClassName", "Priority Class Name"),
        ("runtimeClassName", "Runtime Class Name"),
        ("serviceAccountName", "Service Account"),
    ] {
        let s = str_at(spec, &format!("/{key}"));
        if !s.is_empty() {
            w.write(0, &format!("{title}:\t{s}\n"));
        }
    }
    let node = str_at(spec, "/nodeName");
    if node.is_empty() {
        w.write(0, "Node:\t<none>\n");
    } else {
        w.write(0, &format!("Node:\t{node}/{}\n", str_at(status, "/hostIP")));
    }
    if let Some(start) = status.member("startTime").as_str() {
        w.write(0, &format!("Start Time:\t{}\n", rfc1123z(start)));
    }
    labels_multiline(&mut w, "Labels", p.member("metadata").member("labels"));
    annotations_multiline(
        &mut w,
        "Annotations",
        p.member("metadata").member("annotations"),
    );
    let phase = str_at(status, "/phase");
    let deleting = str_at(p, "/metadata/deletionTimestamp");
    if !deleting.is_empty() && phase != "Failed" && phase != "Succeeded" {
        w.write(
            0,
            &format!(
                "Status:\tTerminating (lasts {})\n",
                since(deleting, settings.now_unix_ms)
            ),
        );
        w.write(
            0,
            &format!(
                "Termination Grace Period:\t{}s\n",
                int_at(p, "/metadata/deletionGracePeriodSeconds")
            ),
        );
    } else {
        w.write(0, &format!("Status:\t{phase}\n"));
    }
    for (key, title) in [("reason", "Reason"), ("message", "Message")] {
        let s = str_at(status, &format!("/{key}"));
        if !s.is_empty() {
            w.write(0, &format!("{title}:\t{s}\n"));
        }
    }
    if let Some(sp) = spec.pointer("/securityContext/seccompProfile") {
        let ty = str_at(sp, "/type");
        w.write(0, &format!("SeccompProfile:\t{ty}\n"));
        if ty == "Localhost" {
            w.write(
                0,
                &format!("LocalhostProfile:\t{}\n", str_at(sp, "/localhostProfile")),
            );
        }
    }
    w.write(0, &format!("IP:\t{}\n", str_at(status, "/podIP")));
    let ips: Vec<&Value> = status
        .member("podIPs")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if ips.is_empty() {
        w.write(0, "IPs:\t<none>\n");
    } else {
        w.write(0, "IPs:\n");
        for ip in ips {
            w.write(1, &format!("IP:\t{}\n", str_at(ip, "/ip")));
        }
    }
    if let Some(c) = controller_of(p) {
        w.write(0, &format!("Controlled By:\t{c}\n"));
    }
    let nominated = str_at(status, "/nominatedNodeName");
    if !nominated.is_empty() {
        w.write(0, &format!("NominatedNodeName:\t{nominated}\n"));
    }
    if spec.member("resources").is_object() {
        w.write(0, "Resources:\n");
        resources(&mut w, spec.member("resources"), 1);
    }
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    if let Some(init) = spec
        .member("initContainers")
        .as_array()
        .filter(|c| !c.is_empty())
    {
        containers(
            &mut w,
            "Init Containers",
            init,
            &list(status.member("initContainerStatuses")),
            Some(p),
            "",
        );
    }
    containers(
        &mut w,
        "Containers",
        &list(spec.member("containers")),
        &list(status.member("containerStatuses")),
        Some(p),
        "",
    );
    let conditions = list(status.member("conditions"));
    if let Some(gates) = spec
        .member("readinessGates")
        .as_array()
        .filter(|g| !g.is_empty())
    {
        w.write(0, "Readiness Gates:\n  Type\tStatus\n");
        for g in gates {
            let ty = str_at(g, "/conditionType");
            let st = conditions
                .iter()
                .find(|c| str_at(c, "/type") == ty)
                .map_or("<none>", |c| str_at(c, "/status"));
            w.write(1, &format!("{ty} \t{st} \n"));
        }
    }
    if !conditions.is_empty() {
        w.write(0, "Conditions:\n  Type\tStatus\n");
        for c in &conditions {
            w.write(
                1,
                &format!("{} \t{} \n", str_at(c, "/type"), str_at(c, "/status")),
            );
        }
    }
    volumes(&mut w, spec, "");
    w.write(0, &format!("QoS Class:\t{}\n", qos_class(p)));
    labels_multiline(&mut w, "Node-Selectors", spec.member("nodeSelector"));
    tolerations(&mut w, "Tolerations", spec);
    topology_spread(&mut w, spec, "");
    if let Some(events) = events {
        events_section(&mut w, &events, settings.now_unix_ms);
    }
    w.finish()
}

/// `qos.GetPodQOS`: the status's class when set, else computed from the containers'
/// requests and limits (BestEffort without any, Guaranteed when every container limits cpu
/// and memory at its requests, Burstable otherwise).
fn qos_class(p: &Value) -> String {
    let set = str_at(p, "/status/qosClass");
    if !set.is_empty() {
        return set.to_owned();
    }
    let all: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .flat_map(|k| p.member("spec")[*k].as_array().into_iter().flatten())
        .collect();
    let has = |c: &Value, k: &str| {
        c.member("resources")[k]
            .as_object()
            .is_some_and(|m| m.contains_key("cpu") || m.contains_key("memory"))
    };
    if !all.iter().any(|c| has(c, "requests") || has(c, "limits")) {
        return "BestEffort".into();
    }
    let guaranteed = all.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = &c.member("resources").member("limits")[*r];
            let request = &c.member("resources").member("requests")[*r];
            !limit.is_null() && (request.is_null() || request == limit)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
    .into()
}

/// A resource quantity held exactly enough for describe's sums: thousandths of the unit and
/// whether it was written with a binary suffix [apimachinery pkg/api/resource `Quantity`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quantity {
    milli: i128,
    binary: bool,
}

impl Quantity {
    pub fn parse(v: &Value) -> Quantity {
        let s = match v {
            Value::String(s) => s.to_string(),
            Value::Number(n) => n.to_string(),
            _ => return Quantity::default(),
        };
        const SUFFIXES: [(&str, i128, bool); 15] = [
            ("Ki", 1 << 10, true),
            ("Mi", 1 << 20, true),
            ("Gi", 1 << 30, true),
            ("Ti", 1 << 40, true),
            ("Pi", 1 << 50, true),
            ("Ei", 1 << 60, true),
            ("n", 0, false),
            ("u", 0, false),
            ("m", 0, false),
            ("k", 1_000, false),
            ("M", 1_000_000, false),
            ("G", 1_000_000_000, false),
            ("T", 1_000_000_000_000, false),
            ("P", 1_000_000_000_000_000, false),
            ("E", 1_000_000_000_000_000_000, false),
        ];
        let (num, mult_milli, divide, binary) = SUFFIXES
            .iter()
            .find_map(|(suffix, mult, binary)| {
                let num = s.strip_suffix(suffix)?;
                Some(match *suffix {
                    "n" => (num, 1, 1_000_000, false),
                    "u" => (num, 1, 1_000, false),
                    "m" => (num, 1, 1, false),
                    _ => (num, mult * 1000, 1, *binary),
                })
            })
            .unwrap_or((s.as_str(), 1000, 1, false));
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        let whole: i128 = int.parse().unwrap_or(0);
        let mut milli = whole * mult_milli;
        let mut scale = 1i128;
        let mut frac_value = 0i128;
        for c in frac.chars().take(18) {
            scale *= 10;
            frac_value = frac_value * 10 + i128::from(c.to_digit(10).unwrap_or(0));
        }
        if frac_value != 0 {
            milli += frac_value * mult_milli / scale;
        }
        Quantity {
            milli: milli / divide,
            binary,
        }
    }

    /// `Quantity.Add`: the sum keeps the receiver's format (the first non-zero term's).
    pub fn plus(self, other: Quantity) -> Quantity {
        Quantity {
            milli: self.milli + other.milli,
            binary: if self.milli == 0 && !self.binary {
                other.binary
            } else {
                self.binary
            },
        }
    }

    pub fn milli_value(self) -> i128 {
        self.milli
    }

    /// `Quantity.Value`: whole units, rounded up.
    pub fn value(self) -> i128 {
        (self.milli + 999).div_euclid(1000)
    }

    /// `Quantity.String` in canonical form: binary suffixes for a whole multiple of 1024 at
    /// least 1024, else the largest decimal suffix that keeps the value whole (`m` below one).
    pub fn canonical(self) -> String {
        let m = self.milli;
        if m == 0 {
            return "0".into();
        }
        if self.binary && m % 1000 == 0 && m.abs() >= 1024 * 1000 {
            let mut v = m / 1000;
            let mut i = 0;
            while i < 6 && v % 1024 == 0 {
                v /= 1024;
                i += 1;
            }
            return format!("{v}{}", ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][i]);
        }
        if m % 1000 != 0 {
            return format!("{m}m");
        }
        let mut v = m / 1000;
        let mut i = 0;
        while i < 6 && v % 1000 == 0 {
            v /= 1000;
            i += 1;
        }
        format!("{v}{}", ["", "k", "M", "G", "T", "P", "E"][i])
    }
}

/// `resourcehelper.PodRequestsAndLimits`: the containers' sums, at least each init
/// container's, plus the pod's overhead.
fn pod_requests_and_limits(
    pod: &Value,
) -> (
    std::collections::BTreeMap<String, Quantity>,
    std::collections::BTreeMap<String, Quantity>,
) {
    let mut out = (
        std::collections::BTreeMap::new(),
        std::collections::BTreeMap::new(),
    );
    for (key, sums) in [("requests", &mut out.0), ("limits", &mut out.1)] {
        for c in pod
            .member("spec")
            .member("containers")
            .as_array()
            .into_iter()
            .flatten()
        {
            for (name, q) in c.member("resources")[key].as_object().into_iter().flatten() {
                let entry: &mut Quantity = sums.entry(name.to_string()).or_default();
                *entry = entry.plus(Quantity::parse(q));
            }
        }
        for c in pod
            .member("spec")
            .member("initContainers")
            .as_array()
            .into_iter()
            .flatten()
        {
            for (name, q) in c.member("resources")[key].as_object().into_iter().flatten() {
                let q = Quantity::parse(q);
                let entry: &mut Quantity = sums.entry(name.to_string()).or_default();
                if q.milli > entry.milli {
                    *entry = q;
                }
            }
        }
        for (name, q) in pod
            .member("spec")
            .member("overhead")
            .as_object()
            .into_iter()
            .flatten()
        {
            let entry: &mut Quantity = sums.entry(name.to_string()).or_default();
            *entry = entry.plus(Quantity::parse(q));
        }
    }
    out
}

/// `int64(float64(a) / float64(b) * 100)`, 0 over a zero total as describe guards it (Go
/// would print the integer conversion of NaN or Inf otherwise; kubectl guards the totals).
fn percent(part: i128, whole: i128) -> i64 {
    if whole == 0 {
        return 0;
    }
    (part as f64 / whole as f64 * 100.0) as i64
}

/// [`NodeDescriber.Describe`] and [`describeNode`]: the node's non-terminated pods by field
/// selector, its Events by uid and by name, and its Lease.
fn node(run: &mut Run<'_, '_>, n: &Value, settings: Settings<'_>) -> String {
    let name = meta_str(n, "name");
    let selector = format!(
        "spec.nodeName={},status.phase!=Succeeded,status.phase!=Failed",
        escape_field(&name)
    );
    let answer = run.send(Call::get(
        "/api/v1/pods".into(),
        query(&[("fieldSelector", &selector), ("limit", settings.chunk)]),
        "application/json",
    ));
    let pods: Option<Vec<Value>> = if answer.ok() {
        Some(
            answer
                .body
                .member("items")
                .as_array()
                .cloned()
                .unwrap_or_default(),
        )
    } else {
        None
    };
    let events = settings.show_events.then(|| {
        let mut e = search_events(
            run,
            n,
            Some("Node"),
            n.member("metadata").member("uid").as_str(),
            settings,
        );
        e.extend(search_events(run, n, Some("Node"), Some(&name), settings));
        e
    });
    let lease = run.send(Call::get(
        format!("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}"),
        String::new(),
        "application/json",
    ));
    let mut w = PrefixWriter::default();
    w.write(0, &format!("Name:\t{name}\n"));
    let mut roles: Vec<String> = Vec::new();
    for (k, v) in sorted(n.member("metadata").member("labels")) {
        let role = if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
            r.to_owned()
        } else if k == "kubernetes.io/role" {
            v
        } else {
            continue;
        };
        if !role.is_empty() && !roles.contains(&role) {
            roles.push(role);
        }
    }
    roles.sort();
    let roles = if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.join(",")
    };
    w.write(0, &format!("Roles:\t{roles}\n"));
    labels_multiline(&mut w, "Labels", n.member("metadata").member("labels"));
    annotations_multiline(
        &mut w,
        "Annotations",
        n.member("metadata").member("annotations"),
    );
    w.write(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            rfc1123z(str_at(n, "/metadata/creationTimestamp"))
        ),
    );
    // [`printTaintsMultilineWithIndent`]: sorted by effect, then key.
    w.write(0, "Taints:\t");
    let mut taints: Vec<&Value> = n
        .member("spec")
        .member("taints")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if taints.is_empty() {
        w.line("<none>");
    }
    taints.sort_by_key(|t| format!("{},{}", str_at(t, "/effect"), str_at(t, "/key")));
    for (i, t) in taints.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let mut s = str_at(t, "/key").to_owned();
        let (value, effect) = (str_at(t, "/value"), str_at(t, "/effect"));
        if !value.is_empty() {
            s.push_str(&format!("={value}"));
        }
        if !effect.is_empty() {
            s.push_str(&format!(":{effect}"));
        }
        w.write(0, &format!("{s}\n"));
    }
    w.write(
        0,
        &format!(
            "Unschedulable:\t{}\n",
            n.member("spec").member("unschedulable") == true
        ),
    );
    if lease.ok() {
        let l = lease.body.member("spec");
        let or_unset = |s: &str, f: fn(&str) -> String| {
            if s.is_empty() {
                "<unset>".to_owned()
            } else {
                f(s)
            }
        };
        w.write(0, "Lease:\n");
        w.write(
            1,
            &format!(
                "HolderIdentity:\t{}\n",
                or_unset(str_at(l, "/holderIdentity"), str::to_owned)
            ),
        );
        w.write(
            1,
            &format!(
                "AcquireTime:\t{}\n",
                or_unset(str_at(l, "/acquireTime"), rfc1123z)
            ),
        );
        w.write(
            1,
            &format!(
                "RenewTime:\t{}\n",
                or_unset(str_at(l, "/renewTime"), rfc1123z)
            ),
        );
    } else {
        let message = lease.body.member("message").as_str().unwrap_or("");
        let message =
            if lease.status == 404 && lease.body.member("details").member("name").is_null() {
                "the server could not find the requested resource"
            } else {
                message
            };
        w.write(0, &format!("Lease:\tFailed to get lease: {message}\n"));
    }
    let conditions: Vec<&Value> = n
        .member("status")
        .member("conditions")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if !conditions.is_empty() {
        w.write(
            0,
            "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n",
        );
        w.write(
            1,
            "----\t------\t-----------------\t------------------\t------\t-------\n",
        );
        for c in conditions {
            w.write(
                1,
                &format!(
                    "{} \t{} \t{} \t{} \t{} \t{}\n",
                    str_at(c, "/type"),
                    str_at(c, "/status"),
                    rfc1123z(str_at(c, "/lastHeartbeatTime")),
                    rfc1123z(str_at(c, "/lastTransitionTime")),
                    str_at(c, "/reason"),
                    str_at(c, "/message")
                ),
            );
        }
    }
    w.write(0, "Addresses:\n");
    for a in n
        .member("status")
        .member("addresses")
        .as_array()
        .into_iter()
        .flatten()
    {
        w.write(
            1,
            &format!("{}:\t{}\n", str_at(a, "/type"), str_at(a, "/address")),
        );
    }
    for (key, title) in [("capacity", "Capacity"), ("allocatable", "Allocatable")] {
        let list = resource_names_sorted(&n.member("status")[key]);
        if !list.is_empty() {
            w.write(0, &format!("{title}:\n"));
            for (k, q) in list {
                w.write(0, &format!("  {k}:\t{}\n", q.canonical()));
            }
        }
    }
    let info = n.member("status").member("nodeInfo");
    w.write(0, "System Info:\n");
    for (key, title) in [
        ("machineID", "Machine ID"),
        ("systemUUID", "System UUID"),
        ("bootID", "Boot ID"),
        ("kernelVersion", "Kernel Version"),
        ("osImage", "OS Image"),
        ("operatingSystem", "Operating System"),
        ("architecture", "Architecture"),
        ("containerRuntimeVersion", "Container Runtime Version"),
        ("kubeletVersion", "Kubelet Version"),
        ("kubeProxyVersion", "Kube-Proxy Version"),
    ] {
        w.write(
            0,
            &format!("  {title}:\t{}\n", str_at(info, &format!("/{key}"))),
        );
    }
    let cidr = str_at(n, "/spec/podCIDR");
    if !cidr.is_empty() {
        w.write(0, &format!("PodCIDR:\t{cidr}\n"));
    }
    let cidrs: Vec<&str> = n
        .member("spec")
        .member("podCIDRs")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !cidrs.is_empty() {
        w.write(0, &format!("PodCIDRs:\t{}\n", cidrs.join(",")));
    }
    let provider = str_at(n, "/spec/providerID");
    if !provider.is_empty() {
        w.write(0, &format!("ProviderID:\t{provider}\n"));
    }
    match pods {
        Some(pods) => node_resources(&mut w, &pods, n, settings.now_unix_ms),
        None => w.write(0, "Pods:\tnot authorized\n"),
    }
    if let Some(events) = events {
        events_section(&mut w, &events, settings.now_unix_ms);
    }
    w.finish()
}

/// A resource list sorted by name (`SortedResourceNames`).
fn resource_names_sorted(list: &Value) -> Vec<(String, Quantity)> {
    let mut v: Vec<(String, Quantity)> = list
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, q)| (k.to_string(), Quantity::parse(q)))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// [`describeNodeResource`].
fn node_resources(w: &mut PrefixWriter, pods: &[Value], n: &Value, now_unix_ms: i64) {
    w.write(
        0,
        &format!("Non-terminated Pods:\t({} in total)\n", pods.len()),
    );
    w.write(
        1,
        "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n",
    );
    w.write(
        1,
        "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n",
    );
    let alloc = if n
        .member("status")
        .member("allocatable")
        .as_object()
        .is_some_and(|a| !a.is_empty())
    {
        n.member("status").member("allocatable")
    } else {
        n.member("status").member("capacity")
    };
    let total = |k: &str| Quantity::parse(&alloc[k]);
    let (cpu, mem, eph) = (total("cpu"), total("memory"), total("ephemeral-storage"));
    let pct = |q: Quantity, whole: Quantity, milli: bool| {
        if milli {
            percent(q.milli_value(), whole.milli_value())
        } else {
            percent(q.value(), whole.value())
        }
    };
    let mut reqs: std::collections::BTreeMap<String, Quantity> = Default::default();
    let mut limits: std::collections::BTreeMap<String, Quantity> = Default::default();
    for p in pods {
        let (r, l) = pod_requests_and_limits(p);
        let get = |m: &std::collections::BTreeMap<String, Quantity>, k: &str| {
            m.get(k).copied().unwrap_or_default()
        };
        let (cr, cl, mr, ml) = (
            get(&r, "cpu"),
            get(&l, "cpu"),
            get(&r, "memory"),
            get(&l, "memory"),
        );
        w.write(
            1,
            &format!(
                "{}\t{}\t\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{}\n",
                meta_str(p, "namespace"),
                meta_str(p, "name"),
                cr.canonical(),
                pct(cr, cpu, true),
                cl.canonical(),
                pct(cl, cpu, true),
                mr.canonical(),
                pct(mr, mem, false),
                ml.canonical(),
                pct(ml, mem, false),
                since(str_at(p, "/metadata/creationTimestamp"), now_unix_ms)
            ),
        );
        for (k, q) in r {
            let e = reqs.entry(k).or_default();
            *e = e.plus(q);
        }
        for (k, q) in l {
            let e = limits.entry(k).or_default();
            *e = e.plus(q);
        }
    }
    w.write(
        0,
        "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n",
    );
    w.write(1, "Resource\tRequests\tLimits\n");
    w.write(1, "--------\t--------\t------\n");
    for (k, whole, milli) in [
        ("cpu", cpu, true),
        ("memory", mem, false),
        ("ephemeral-storage", eph, false),
    ] {
        let r = reqs.get(k).copied().unwrap_or_default();
        let l = limits.get(k).copied().unwrap_or_default();
        w.write(
            1,
            &format!(
                "{k}\t{} ({}%)\t{} ({}%)\n",
                r.canonical(),
                pct(r, whole, milli),
                l.canonical(),
                pct(l, whole, milli)
            ),
        );
    }
    let names: Vec<String> = alloc
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.to_string())
        .collect();
    let mut huge: Vec<&String> = names
        .iter()
        .filter(|k| k.starts_with("hugepages-"))
        .collect();
    huge.sort();
    for k in huge {
        let r = reqs.get(k).copied().unwrap_or_default();
        let l = limits.get(k).copied().unwrap_or_default();
        let whole = Quantity::parse(&alloc[k.as_str()]);
        w.write(
            1,
            &format!(
                "{k}\t{} ({}%)\t{} ({}%)\n",
                r.canonical(),
                pct(r, whole, false),
                l.canonical(),
                pct(l, whole, false)
            ),
        );
    }
    let standard = ["cpu", "memory", "ephemeral-storage", "storage", "pods"];
    let mut ext: Vec<&String> = names
        .iter()
        .filter(|k| !k.starts_with("hugepages-") && !standard.contains(&k.as_str()))
        .collect();
    ext.sort();
    for k in ext {
        let r = reqs.get(k).copied().unwrap_or_default();
        let l = limits.get(k).copied().unwrap_or_default();
        w.write(1, &format!("{k}\t{}\t{}\n", r.canonical(), l.canonical()));
    }
}

/// [`describeHorizontalPodAutoscalerV2`] (the object is read as autoscaling/v2, the
/// describer's first try).
fn hpa(run: &mut Run<'_, '_>, h: &Value, settings: Settings<'_>) -> String {
    let events = settings.show_events.then(|| {
        search_events(
            run,
            h,
            Some("HorizontalPodAutoscaler"),
            h.member("metadata").member("uid").as_str(),
            settings,
        )
    });
    let spec = h.member("spec");
    let status = h.member("status");
    let mut w = PrefixWriter::default();
    w.write(0, &format!("Name:\t{}\n", meta_str(h, "name")));
    w.write(0, &format!("Namespace:\t{}\n", meta_str(h, "namespace")));
    labels_multiline(&mut w, "Labels", h.member("metadata").member("labels"));
    annotations_multiline(
        &mut w,
        "Annotations",
        h.member("metadata").member("annotations"),
    );
    w.write(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            rfc1123z(str_at(h, "/metadata/creationTimestamp"))
        ),
    );
    let kind = str_at(spec, "/scaleTargetRef/kind");
    w.write(
        0,
        &format!(
            "Reference:\t{kind}/{}\n",
            str_at(spec, "/scaleTargetRef/name")
        ),
    );
    w.write(0, "Metrics:\t( current / target )\n");
    let current: Vec<&Value> = status
        .member("currentMetrics")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let quantity = |v: &Value| match v {
        Value::Null => "<nil>".to_owned(),
        other => Quantity::parse(other).canonical(),
    };
    for (i, m) in spec
        .member("metrics")
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let cur = current.get(i).copied();
        let ty = str_at(m, "/type");
        match ty {
            "External" => {
                let name = go_quote(str_at(m, "/external/metric/name"));
                let target = m.member("external").member("target");
                let c = cur.map(|c| c.member("external")).filter(|c| c.is_object());
                if !target.member("averageValue").is_null() {
                    let now = c
                        .filter(|c| !c.member("current").member("averageValue").is_null())
                        .map_or("<unknown>".into(), |c| {
                            quantity(c.member("current").member("averageValue"))
                        });
                    w.write(
                        1,
                        &format!(
                            "{name} (target average value):\t{now} / {}\n",
                            quantity(target.member("averageValue"))
                        ),
                    );
                } else {
                    let now = c.map_or("<unknown>".into(), |c| {
                        quantity(c.member("current").member("value"))
                    });
                    w.write(
                        1,
                        &format!(
                            "{name} (target value):\t{now} / {}\n",
                            quantity(target.member("value"))
                        ),
                    );
                }
            }
            "Pods" => {
                let name = go_quote(str_at(m, "/pods/metric/name"));
                let now = cur
                    .map(|c| c.member("pods"))
                    .filter(|c| c.is_object())
                    .map_or("<unknown>".into(), |c| {
                        quantity(c.member("current").member("averageValue"))
                    });
                w.write(
                    1,
                    &format!(
                        "{name} on pods:\t{now} / {}\n",
                        quantity(m.member("pods").member("target").member("averageValue"))
                    ),
                );
            }
            "Object" => {
                let o = m.member("object");
                w.write(
                    1,
                    &format!(
                        "\"{}\" on {}/{} ",
                        str_at(o, "/metric/name"),
                        str_at(o, "/describedObject/kind"),
                        str_at(o, "/describedObject/name")
                    ),
                );
                let c = cur.map(|c| c.member("object")).filter(|c| c.is_object());
                if str_at(o, "/target/type") == "AverageValue" {
                    let now = c.map_or("<unknown>".into(), |c| {
                        quantity(c.member("current").member("averageValue"))
                    });
                    w.write(
                        0,
                        &format!(
                            "(target average value):\t{now} / {}\n",
                            quantity(o.member("target").member("averageValue"))
                        ),
                    );
                } else {
                    let now = c.map_or("<unknown>".into(), |c| {
                        quantity(c.member("current").member("value"))
                    });
                    w.write(
                        0,
                        &format!(
                            "(target value):\t{now} / {}\n",
                            quantity(o.member("target").member("value"))
                        ),
                    );
                }
            }
            "Resource" | "ContainerResource" => {
                let (key, r) = if ty == "Resource" {
                    ("resource", m.member("resource"))
                } else {
                    ("containerResource", m.member("containerResource"))
                };
                if ty == "Resource" {
                    w.write(1, &format!("resource {} on pods", str_at(r, "/name")));
                } else {
                    w.write(
                        1,
                        &format!(
                            "resource {} of container \"{}\" on pods",
                            str_at(r, "/name"),
                            str_at(r, "/container")
                        ),
                    );
                }
                let c = cur.map(|c| &c[key]).filter(|c| c.is_object());
                if !r.member("target").member("averageValue").is_null() {
                    let now = c.map_or("<unknown>".into(), |c| {
                        quantity(c.member("current").member("averageValue"))
                    });
                    w.write(
                        0,
                        &format!(
                            ":\t{now} / {}\n",
                            quantity(r.member("target").member("averageValue"))
                        ),
                    );
                } else {
                    let now = c
                        .filter(|c| c.member("current").member("averageUtilization").is_i64())
                        .map_or("<unknown>".into(), |c| {
                            format!(
                                "{}% ({})",
                                int_at(c, "/current/averageUtilization"),
                                quantity(c.member("current").member("averageValue"))
                            )
                        });
                    let target = r
                        .member("target")
                        .member("averageUtilization")
                        .as_i64()
                        .map_or("<auto>".into(), |t| format!("{t}%"));
                    w.write(
                        1,
                        &format!("(as a percentage of request):\t{now} / {target}\n"),
                    );
                }
            }
            other => w.write(1, &format!("<unknown metric type {}>\n", go_quote(other))),
        }
    }
    let min = spec
        .member("minReplicas")
        .as_i64()
        .map_or("<unset>".into(), |m| m.to_string());
    w.write(0, &format!("Min replicas:\t{min}\n"));
    w.write(
        0,
        &format!("Max replicas:\t{}\n", int_at(spec, "/maxReplicas")),
    );
    if spec.member("behavior").is_object() {
        w.write(0, "Behavior:\n");
        for (key, title) in [("scaleUp", "Scale Up"), ("scaleDown", "Scale Down")] {
            let rules = &spec.member("behavior")[key];
            if !rules.is_object() {
                continue;
            }
            w.write(1, &format!("{title}:\n"));
            if let Some(window) = rules.member("stabilizationWindowSeconds").as_i64() {
                w.write(2, &format!("Stabilization Window: {window} seconds\n"));
            }
            if let Some(policies) = rules
                .member("policies")
                .as_array()
                .filter(|p| !p.is_empty())
            {
                let select = rules.member("selectPolicy").as_str().unwrap_or("Max");
                w.write(2, &format!("Select Policy: {select}\n"));
                w.write(2, "Policies:\n");
                for p in policies {
                    w.write(
                        3,
                        &format!(
                            "- Type: {}\tValue: {}\tPeriod: {} seconds\n",
                            str_at(p, "/type"),
                            int_at(p, "/value"),
                            int_at(p, "/periodSeconds")
                        ),
                    );
                }
            }
        }
    }
    w.write(0, &format!("{kind} pods:\t"));
    w.write(
        0,
        &format!(
            "{} current / {} desired\n",
            int_at(status, "/currentReplicas"),
            int_at(status, "/desiredReplicas")
        ),
    );
    let conditions: Vec<&Value> = status
        .member("conditions")
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if !conditions.is_empty() {
        w.write(0, "Conditions:\n");
        w.write(1, "Type\tStatus\tReason\tMessage\n");
        w.write(1, "----\t------\t------\t-------\n");
        for c in conditions {
            w.write(
                1,
                &format!(
                    "{}\t{}\t{}\t{}\n",
                    str_at(c, "/type"),
                    str_at(c, "/status"),
                    str_at(c, "/reason"),
                    str_at(c, "/message")
                ),
            );
        }
    }
    if let Some(events) = events {
        events_section(&mut w, &events, settings.now_unix_ms);
    }
    w.finish()
}

fn go_quote(s: &str) -> String {
    crate::api::validation::go_quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn timestamps_print_as_rfc1123z() {
        assert_eq!(
            rfc1123z("2025-01-01T00:00:00Z"),
            "Wed, 01 Jan 2025 00:00:00 +0000"
        );
        assert_eq!(
            rfc1123z("2026-12-02T06:07:55Z"),
            "Wed, 02 Dec 2026 06:07:55 +0000"
        );
        assert_eq!(rfc1123z(""), "Mon, 01 Jan 0001 00:00:00 +0000");
    }

    #[test]
    fn the_prefix_writer_aligns_each_flushed_block_with_two_spaces_of_padding() {
        let mut w = PrefixWriter::default();
        w.write(0, "Name:\tweb\n");
        w.write(0, "Namespace:\tdefault\n");
        labels_multiline(&mut w, "Labels", &json!({"b": "2", "a": "1"}));
        w.flush();
        w.write(1, "Type\tAge\n");
        assert_eq!(
            w.finish(),
            "Name:       web\nNamespace:  default\nLabels:     a=1\n            b=2\n  Type  Age\n"
        );
    }

    #[test]
    fn selectors_print_sorted_requirements() {
        let sel = json!({
            "matchLabels": {"tier": "web", "app": "nginx"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "zz", "operator": "DoesNotExist"}
            ]
        });
        assert_eq!(
            selector_string(&sel, "<none>"),
            "app=nginx,env in (dev,prod),tier=web,!zz"
        );
        assert_eq!(selector_string(&json!({}), "<none>"), "<none>");
    }

    #[test]
    fn repeated_events_show_their_count_and_first_age() {
        let mut w = PrefixWriter::default();
        let events = [json!({
            "type": "Warning", "reason": "BackOff", "count": 3,
            "firstTimestamp": "2025-01-01T00:00:00Z", "lastTimestamp": "2025-01-01T00:04:00Z",
            "source": {"component": "kubelet"}, "message": " Back-off \n"
        })];
        events_section(&mut w, &events, crate::time::EPOCH_UNIX_MS + 300_000);
        assert_eq!(
            w.finish(),
            "Events:\n  Type     Reason   Age               From     Message\n  ----     ------   ----              ----     -------\n  Warning  BackOff  60s (x3 over 5m)  kubelet  Back-off\n"
        );
    }

    #[test]
    fn templates_compare_as_typed_objects_without_the_hash_label() {
        let rs = json!({"metadata": {"labels": {"app": "a", "pod-template-hash": "h"}},
            "spec": {"containers": [{"name": "c", "resources": {}}]}});
        let d = json!({"metadata": {"creationTimestamp": null, "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c"}], "volumes": []}});
        assert_eq!(without_hash(&rs), without_hash(&d));
        let other = json!({"metadata": {"labels": {"app": "b"}}});
        assert_ne!(without_hash(&rs), without_hash(&other));
    }

    #[test]
    fn quantities_sum_and_print_in_canonical_form() {
        let q = |s: &str| Quantity::parse(&json!(s));
        assert_eq!(q("500m").plus(q("1")).canonical(), "1500m");
        assert_eq!(q("1").plus(q("1")).canonical(), "2");
        assert_eq!(q("128Mi").plus(q("128Mi")).canonical(), "256Mi");
        assert_eq!(q("8Gi").canonical(), "8Gi");
        assert_eq!(q("1G").canonical(), "1G");
        assert_eq!(q("1536").canonical(), "1536");
        assert_eq!(Quantity::default().canonical(), "0");
        assert_eq!(q("0.5").milli_value(), 500);
        assert_eq!(q("1Gi").value(), 1 << 30);
    }

    #[test]
    fn kinds_without_a_describer_are_refused_by_name_and_nodes_are_described() {
        use crate::engine::{ClusterConfig, World};
        use crate::rest::session::Session;
        let mut s = Session::new(World::new(ClusterConfig::default()));
        let files = std::collections::BTreeMap::new();
        let ctx = super::super::Context {
            principal: "admin",
            files: &files,
            stdin: None,
            clock_unix_ms: None,
        };
        let out = super::super::run(&mut s, ctx, "kubectl describe sa -n kube-system");
        assert_eq!(out.code, 1, "{out:?}");
        assert!(out
            .stderr
            .contains("kubectl describe of a ServiceAccount is not simulated by this terminal"));
        let out = super::super::run(&mut s, ctx, "kubectl describe nodes");
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            out.stdout.starts_with("Name:               node-1\n"),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains("\n\n\nName:               node-2\n"));
    }

    #[test]
    fn tolerations_print_as_kubectl_writes_them() {
        let mut w = PrefixWriter::default();
        let spec = json!({"tolerations": [
            {"key": "b", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "a", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
            {"operator": "Exists"}
        ]});
        tolerations(&mut w, "Tolerations", &spec);
        assert_eq!(
            w.finish(),
            "Tolerations:  op=Exists\n              a=x:NoSchedule\n              b:NoExecute op=Exists for 300s\n"
        );
    }
}
