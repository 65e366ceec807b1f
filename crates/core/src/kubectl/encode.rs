//! kubectl's `-o json` and `-o yaml` encodings of an object it read as unstructured data:
//! Go's `json.MarshalIndent(obj, "", "    ")` over maps (keys sorted, `<`, `>`, `&`, U+2028 and
//! U+2029 escaped) [kubectl cli-runtime pkg/printers/json.go `JSONPrinter.PrintObj`], and
//! sigs.k8s.io/yaml's JSON-to-YAML through go-yaml v2 (keys sorted, sequences not indented
//! under their key, strings quoted when they would read back as another type, literal blocks
//! for multi-line strings, plain scalars folded at spaces past column 80)
//! [cli-runtime pkg/printers/yaml.go; go-yaml v2 encode.go `stringv`, emitterc.go
//! `yaml_emitter_analyze_scalar`, `yaml_emitter_write_plain_scalar`].

use crate::json::Value;

/// Go's `json.MarshalIndent` with four spaces, plus the newline kubectl prints.
pub fn json(v: &Value) -> String {
    let mut out = String::new();
    json_value(v, 0, &mut out);
    out.push('\n');
    out
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn indent(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push_str("    ");
    }
}

fn json_value(v: &Value, depth: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => json_string(s, out),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(depth + 1, out);
                json_value(item, depth + 1, out);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(depth, out);
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            let mut keys: Vec<&crate::json::Key> = map.keys().collect();
            keys.sort();
            out.push_str("{\n");
            for (i, k) in keys.iter().enumerate() {
                indent(depth + 1, out);
                json_string(k, out);
                out.push_str(": ");
                json_value(&map[k.as_str()], depth + 1, out);
                if i + 1 < keys.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(depth, out);
            out.push('}');
        }
    }
}

/// A JSON number as Go prints an `int64` or a `float64` (`strconv.FormatFloat(f, 'g', -1, 64)`
/// with exponents from 1e21, as encoding/json does).
fn go_number(n: &crate::json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{f:.0}");
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        // Rust prints 1e21 as "1e21"; Go as "1e+21".
        return match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            Some((m, e)) => format!("{m}e-{:0>2}", e.trim_start_matches('-')),
            None => s,
        };
    }
    f.to_string()
}

/// Compact JSON as Go's `json.Marshal` writes it (sorted keys, HTML escaping).
pub fn compact_json(v: &Value) -> String {
    let mut out = String::new();
    compact(v, &mut out);
    out
}

fn compact(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                compact(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&crate::json::Key> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(k, out);
                out.push(':');
                compact(&map[k.as_str()], out);
            }
            out.push('}');
        }
        other => json_value(other, 0, out),
    }
}

/// The YAML kubectl prints for `v`.
pub fn yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => yaml_map(m, 0, &mut out),
        Value::Array(a) if !a.is_empty() => yaml_seq(a, 0, &mut out),
        other => {
            yaml_scalar(other, 0, 0, &mut out);
            out.push('\n');
        }
    }
    out
}

fn spaces(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn column(out: &str) -> usize {
    out.rsplit('\n').next().map_or(0, |l| l.chars().count())
}

fn yaml_map(m: &crate::json::Map, ind: usize, out: &mut String) {
    let mut keys: Vec<&crate::json::Key> = m.keys().collect();
    keys.sort();
    for (i, k) in keys.iter().enumerate() {
        // The first key of a map that is a sequence item goes on the item's line.
        if i > 0 || !out.ends_with("- ") {
            spaces(ind, out);
        }
        yaml_string(k, ind, true, out);
        out.push(':');
        yaml_value(&m[k.as_str()], ind, out);
    }
}

/// A value after `key:`: on the same line for scalars, empty collections and literal blocks;
/// below, indented, for maps; below at the key's indent for sequences.
fn yaml_value(v: &Value, ind: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            yaml_map(m, ind + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            yaml_seq(a, ind, out);
        }
        other => {
            out.push(' ');
            yaml_scalar(other, ind + 2, ind, out);
            out.push('\n');
        }
    }
}

fn yaml_seq(a: &[Value], ind: usize, out: &mut String) {
    for item in a {
        spaces(ind, out);
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => yaml_map(m, ind + 2, out),
            Value::Array(inner) if !inner.is_empty() => {
                // go-yaml puts a nested sequence's first item on the dash's line.
                let mut nested = String::new();
                yaml_seq(inner, ind + 2, &mut nested);
                out.push_str(nested.trim_start());
            }
            other => {
                yaml_scalar(other, ind + 2, ind, out);
                out.push('\n');
            }
        }
    }
}

fn yaml_scalar(v: &Value, block_indent: usize, key_indent: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => {
            let _ = key_indent;
            yaml_string(s, block_indent, false, out)
        }
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// Whether go-yaml's resolver would read `s`, written plain, as something other than a string
/// (resolve.go: booleans and nulls of YAML 1.1, numbers, base-60 floats, timestamps).
fn resolves_to_non_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    if s.is_empty() || SPECIAL.contains(&s) {
        return true;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return false;
    }
    let plain = s.replace('_', "");
    if plain.parse::<i64>().is_ok() || plain.parse::<f64>().is_ok() {
        return true;
    }
    let unsigned = plain.trim_start_matches(['+', '-']);
    if let Some(hex) = unsigned.strip_prefix("0x") {
        if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return true;
        }
    }
    if let Some(bin) = unsigned.strip_prefix("0b") {
        if !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1') {
            return true;
        }
    }
    // Base-60 numbers (190:20:30) and timestamps (2001-12-14, 2001-12-14T21:59:43Z).
    let base60 = plain.contains(':')
        && plain
            .trim_start_matches(['+', '-'])
            .split(':')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit() || c == '.'));
    base60 || is_timestamp(s)
}

fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let date = b.len() >= 8 && {
        let parts: Vec<&str> = s.splitn(3, '-').collect();
        parts.len() == 3
            && parts[0].len() == 4
            && parts[0].chars().all(|c| c.is_ascii_digit())
            && (1..=2).contains(&parts[1].len())
            && parts[1].chars().all(|c| c.is_ascii_digit())
            && {
                let day: String = parts[2].chars().take_while(char::is_ascii_digit).collect();
                (1..=2).contains(&day.len())
            }
    };
    date
}

/// Whether the emitter may write `s` plain (yaml_emitter_analyze_scalar).
fn plain_allowed(s: &str, simple_key: bool) -> bool {
    if s.is_empty() {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    let first = chars[0];
    if matches!(
        first,
        '#' | ','
            | '['
            | ']'
            | '{'
            | '}'
            | '&'
            | '*'
            | '!'
            | '|'
            | '>'
            | '\''
            | '"'
            | '%'
            | '@'
            | '`'
    ) {
        return false;
    }
    if matches!(first, '?' | ':' | '-') && chars.get(1).is_none_or(|c| *c == ' ') {
        return false;
    }
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if first == ' ' || chars.last() == Some(&' ') {
        return false;
    }
    for (i, c) in chars.iter().enumerate() {
        let next = chars.get(i + 1);
        if *c == ':' && next.is_none_or(|n| *n == ' ') {
            return false;
        }
        if *c == '#' && i > 0 && chars[i - 1] == ' ' {
            return false;
        }
        if (*c as u32) < 0x20 || *c == '\u{7f}' || *c == '\u{feff}' {
            return false;
        }
        if simple_key && (*c == ',' || *c == '[' || *c == ']' || *c == '{' || *c == '}') {
            // Flow indicators are fine in block context keys as well; go-yaml only refuses
            // them in flow context, which kubectl's output never uses.
        }
    }
    true
}

fn yaml_string(s: &str, ind: usize, key: bool, out: &mut String) {
    if !key && s.contains('\n') && !s.contains('\r') {
        literal(s, ind, out);
        return;
    }
    if resolves_to_non_string(s) || s.contains('\n') {
        double_quoted(s, ind, key, out);
    } else if plain_allowed(s, key) {
        if key {
            out.push_str(s);
        } else {
            folded_words(s, ind, out);
        }
    } else if s.chars().all(|c| (c as u32) >= 0x20 && c != '\u{7f}') {
        single_quoted(s, ind, key, out);
    } else {
        double_quoted(s, ind, key, out);
    }
}

/// Writes `s` word by word, breaking at a single space once past column 80
/// (yaml_emitter_write_plain_scalar's `allow_breaks`).
fn folded_words(s: &str, ind: usize, out: &mut String) {
    let chars: Vec<char> = s.chars().collect();
    let mut col = column(out);
    let mut spaces_run = false;
    for (i, c) in chars.iter().enumerate() {
        if *c == ' ' {
            if !spaces_run && col > 80 && chars.get(i + 1) != Some(&' ') {
                out.push('\n');
                spaces(ind, out);
                col = ind;
            } else {
                out.push(' ');
                col += 1;
            }
            spaces_run = true;
        } else {
            out.push(*c);
            col += 1;
            spaces_run = false;
        }
    }
}

fn single_quoted(s: &str, ind: usize, key: bool, out: &mut String) {
    out.push('\'');
    let quoted = s.replace('\'', "''");
    if key {
        out.push_str(&quoted);
    } else {
        folded_words(&quoted, ind, out);
    }
    out.push('\'');
}

fn double_quoted(s: &str, ind: usize, key: bool, out: &mut String) {
    let mut body = String::new();
    for c in s.chars() {
        match c {
            '"' => body.push_str("\\\""),
            '\\' => body.push_str("\\\\"),
            '\n' => body.push_str("\\n"),
            '\t' => body.push_str("\\t"),
            '\r' => body.push_str("\\r"),
            '\0' => body.push_str("\\0"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                body.push_str(&format!("\\x{:02X}", c as u32))
            }
            c => body.push(c),
        }
    }
    out.push('"');
    if key {
        out.push_str(&body);
    } else {
        folded_words(&body, ind, out);
    }
    out.push('"');
}

/// A literal block (`|`, `|-` or `|+` by the trailing newlines), its lines at `ind`.
fn literal(s: &str, ind: usize, out: &mut String) {
    out.push('|');
    if s.starts_with(' ') || s.starts_with('\n') {
        out.push('2');
    }
    let trailing = s.len() - s.trim_end_matches('\n').len();
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            spaces(ind, out);
            out.push_str(line);
        }
    }
    // The caller ends the line.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn json_sorts_keys_and_escapes_html_as_go_does() {
        assert_eq!(
            json(&json!({"b": [1, {"z": "<a&b>"}], "a": {}, "c": []})),
            "{\n    \"a\": {},\n    \"b\": [\n        1,\n        {\n            \"z\": \"\\u003ca\\u0026b\\u003e\"\n        }\n    ],\n    \"c\": []\n}\n"
        );
    }

    #[test]
    fn yaml_quotes_what_would_read_back_as_another_type() {
        let y = yaml(&json!({
            "metadata": {"creationTimestamp": "2025-01-01T00:00:01Z", "resourceVersion": "95",
                         "labels": {"app": "nginx", "on": "yes"}},
            "spec": {"containers": [{"image": "nginx:1.14.2", "name": "nginx", "ports": [{"containerPort": 80}]}],
                     "empty": "", "star": "*", "securityContext": {}},
            "status": {},
        }));
        assert_eq!(
            y,
            "metadata:\n  creationTimestamp: \"2025-01-01T00:00:01Z\"\n  labels:\n    app: nginx\n    \"on\": \"yes\"\n  resourceVersion: \"95\"\nspec:\n  containers:\n  - image: nginx:1.14.2\n    name: nginx\n    ports:\n    - containerPort: 80\n  empty: \"\"\n  securityContext: {}\n  star: '*'\nstatus: {}\n"
        );
    }

    #[test]
    fn yaml_writes_multi_line_strings_as_literal_blocks() {
        assert_eq!(
            yaml(&json!({"a": {"b": "{\"x\":1}\n"}, "c": "one\ntwo"})),
            "a:\n  b: |\n    {\"x\":1}\nc: |-\n  one\n  two\n"
        );
    }
}
