//! kubectl's JSONPath templates (`-o jsonpath=`, `-o custom-columns=`): text with `{...}`
//! actions holding field paths (`.a.b`, `['a.b']`, `[0]`, `[*]`, `[1:3]`, `..name`, filters
//! `[?(@.type=="Ready")]`), quoted literals (`{"\n"}`) and `{range ...}...{end}`; missing keys
//! print nothing, as kubectl allows them [client-go util/jsonpath parser.go, jsonpath.go
//! `JSONPath.Execute`, `evalToText`; kubectl cli-runtime printers/jsonpath.go, and
//! custom_column_printer.go with `RelaxedJSONPathExpression`].

use crate::json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    /// `..name`
    Recursive(String),
    Index(i64),
    All,
    Slice(Option<i64>, Option<i64>),
    Filter(Box<Filter>),
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    path: Vec<Step>,
    op: Option<(String, Literal)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Str(String),
    Num(f64),
    Path(Vec<Step>),
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>, Vec<Node>),
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    nodes: Vec<Node>,
}

impl Template {
    pub fn parse(template: &str) -> Result<Template, String> {
        let mut tokens = Vec::new();
        let chars: Vec<char> = template.chars().collect();
        let mut i = 0;
        let mut text = String::new();
        while i < chars.len() {
            if chars[i] == '{' {
                if !text.is_empty() {
                    tokens.push(Token::Text(std::mem::take(&mut text)));
                }
                let mut j = i + 1;
                let mut quote: Option<char> = None;
                while j < chars.len() {
                    match (quote, chars[j]) {
                        (None, '}') => break,
                        (None, q @ ('"' | '\'')) => quote = Some(q),
                        (Some(q), c) if c == q && chars[j - 1] != '\\' => quote = None,
                        _ => {}
                    }
                    j += 1;
                }
                if j >= chars.len() {
                    return Err("unclosed action".into());
                }
                let action: String = chars[i + 1..j].iter().collect();
                tokens.push(action_token(action.trim())?);
                i = j + 1;
            } else {
                text.push(chars[i]);
                i += 1;
            }
        }
        if !text.is_empty() {
            tokens.push(Token::Text(text));
        }
        let mut pos = 0;
        let nodes = nest(&tokens, &mut pos, false)?;
        Ok(Template { nodes })
    }

    /// The text the template prints for `data`.
    pub fn execute(&self, data: &Value) -> Result<String, String> {
        let mut out = String::new();
        run(&self.nodes, data, data, &mut out)?;
        Ok(out)
    }

    /// Every value each action finds, for custom columns.
    pub fn values(&self, data: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        for node in &self.nodes {
            if let Node::Path(p) = node {
                out.extend(eval(p, data, data).into_iter().cloned());
            }
        }
        out
    }
}

enum Token {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>),
    End,
}

fn action_token(action: &str) -> Result<Token, String> {
    if action == "end" {
        return Ok(Token::End);
    }
    if let Some(rest) = action.strip_prefix("range ") {
        return Ok(Token::Range(parse_path(rest.trim())?));
    }
    if let Some(lit) = quoted(action) {
        return Ok(Token::Text(lit));
    }
    Ok(Token::Path(parse_path(action)?))
}

/// A quoted literal with Go's escapes (`strconv.Unquote`).
fn quoted(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn nest(tokens: &[Token], pos: &mut usize, in_range: bool) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    while *pos < tokens.len() {
        let t = &tokens[*pos];
        *pos += 1;
        match t {
            Token::Text(s) => nodes.push(Node::Text(s.clone())),
            Token::Path(p) => nodes.push(Node::Path(p.clone())),
            Token::Range(p) => {
                let body = nest(tokens, pos, true)?;
                nodes.push(Node::Range(p.clone(), body));
            }
            Token::End if in_range => return Ok(nodes),
            Token::End => return Err("not in range, nothing to end".into()),
        }
    }
    if in_range {
        return Err("unclosed range".into());
    }
    Ok(nodes)
}

fn parse_path(s: &str) -> Result<Vec<Step>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut steps = Vec::new();
    if chars.first() == Some(&'$') || chars.first() == Some(&'@') {
        i = 1;
    }
    let ident = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len()
            && !matches!(chars[*i], '.' | '[' | ' ' | ')' | '=' | '!' | '<' | '>')
        {
            *i += 1;
        }
        chars[start..*i].iter().collect()
    };
    while i < chars.len() {
        match chars[i] {
            '.' if chars.get(i + 1) == Some(&'.') => {
                i += 2;
                steps.push(Step::Recursive(ident(&mut i)));
            }
            '.' => {
                i += 1;
                let name = ident(&mut i);
                if name == "*" {
                    steps.push(Step::All);
                } else if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
            }
            '[' => {
                let mut depth = 0;
                let mut j = i;
                let mut quote = None;
                while j < chars.len() {
                    match (quote, chars[j]) {
                        (None, '[') => depth += 1,
                        (None, ']') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        (None, q @ ('"' | '\'')) => quote = Some(q),
                        (Some(q), c) if c == q => quote = None,
                        _ => {}
                    }
                    j += 1;
                }
                if j >= chars.len() {
                    return Err(format!("unterminated array in {s}"));
                }
                let inner: String = chars[i + 1..j].iter().collect();
                steps.push(bracket(inner.trim())?);
                i = j + 1;
            }
            ' ' => i += 1,
            _ => {
                let name = ident(&mut i);
                if name.is_empty() {
                    return Err(format!("unrecognized character in action: {:?}", chars[i]));
                }
                steps.push(Step::Field(name));
            }
        }
    }
    Ok(steps)
}

fn bracket(inner: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::All);
    }
    if let Some(f) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        return filter(f.trim()).map(|f| Step::Filter(Box::new(f)));
    }
    if let Some(name) = inner
        .strip_prefix('\'')
        .and_then(|n| n.strip_suffix('\''))
        .or_else(|| inner.strip_prefix('"').and_then(|n| n.strip_suffix('"')))
    {
        return Ok(Step::Field(name.to_owned()));
    }
    if let Some((a, b)) = inner.split_once(':') {
        let num = |x: &str| -> Result<Option<i64>, String> {
            let x = x.trim();
            if x.is_empty() {
                Ok(None)
            } else {
                x.parse()
                    .map(Some)
                    .map_err(|_| format!("invalid array index {x}"))
            }
        };
        return Ok(Step::Slice(
            num(a)?,
            num(b.split(':').next().unwrap_or(""))?,
        ));
    }
    inner
        .parse::<i64>()
        .map(Step::Index)
        .map_err(|_| format!("invalid array index {inner}"))
}

fn filter(f: &str) -> Result<Filter, String> {
    for op in ["==", "!=", "<=", ">=", "<", ">"] {
        if let Some((l, r)) = f.split_once(op) {
            let r = r.trim();
            let lit = if let Some(s) = r
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| r.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
            {
                Literal::Str(s.to_owned())
            } else if let Ok(n) = r.parse::<f64>() {
                Literal::Num(n)
            } else {
                Literal::Path(parse_path(r)?)
            };
            return Ok(Filter {
                path: parse_path(l.trim())?,
                op: Some((op.to_owned(), lit)),
            });
        }
    }
    Ok(Filter {
        path: parse_path(f)?,
        op: None,
    })
}

fn eval<'a>(steps: &[Step], root: &'a Value, cur: &'a Value) -> Vec<&'a Value> {
    let mut set = vec![cur];
    for step in steps {
        let mut next = Vec::new();
        for v in set {
            match step {
                Step::Field(name) => {
                    if let Some(x) = v.get(name.as_str()) {
                        next.push(x);
                    }
                }
                Step::Recursive(name) => recursive(v, name, &mut next),
                Step::Index(n) => {
                    if let Some(a) = v.as_array() {
                        let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                        if let Some(x) = usize::try_from(idx).ok().and_then(|i| a.get(i)) {
                            next.push(x);
                        }
                    }
                }
                Step::All => match v {
                    Value::Array(a) => next.extend(a.iter()),
                    Value::Object(m) => next.extend(m.values()),
                    _ => {}
                },
                Step::Slice(a, b) => {
                    if let Some(arr) = v.as_array() {
                        let len = arr.len() as i64;
                        let norm = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                        let start = norm(a.unwrap_or(0)) as usize;
                        let end = norm(b.unwrap_or(len)) as usize;
                        if start < end {
                            next.extend(arr[start..end].iter());
                        }
                    }
                }
                Step::Filter(f) => {
                    if let Some(a) = v.as_array() {
                        for item in a {
                            if matches_filter(f, root, item) {
                                next.push(item);
                            }
                        }
                    }
                }
            }
        }
        set = next;
    }
    set
}

fn recursive<'a>(v: &'a Value, name: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(name) {
                out.push(x);
            }
            for x in m.values() {
                recursive(x, name, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                recursive(x, name, out);
            }
        }
        _ => {}
    }
}

fn matches_filter(f: &Filter, root: &Value, item: &Value) -> bool {
    let left = eval(&f.path, root, item);
    let Some((op, lit)) = &f.op else {
        return !left.is_empty();
    };
    let right: Vec<Value> = match lit {
        Literal::Str(s) => vec![Value::String(s.as_str().into())],
        Literal::Num(n) => vec![crate::json::json!(n)],
        Literal::Path(p) => eval(p, root, item).into_iter().cloned().collect(),
    };
    left.iter().any(|l| {
        right.iter().any(|r| {
            let ord = match (l.as_f64(), r.as_f64()) {
                (Some(a), Some(b)) => a.partial_cmp(&b),
                _ => Some(text(l).cmp(&text(r))),
            };
            match (op.as_str(), ord) {
                ("==", Some(o)) => o.is_eq(),
                ("!=", Some(o)) => !o.is_eq(),
                ("<", Some(o)) => o.is_lt(),
                (">", Some(o)) => o.is_gt(),
                ("<=", Some(o)) => o.is_le(),
                (">=", Some(o)) => o.is_ge(),
                _ => false,
            }
        })
    })
}

/// A value as JSONPath prints it (`evalToText`): strings raw, maps and lists as JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Null => "null".into(),
        Value::Array(_) | Value::Object(_) => super::encode::compact_json(v),
        other => other.to_string(),
    }
}

fn run(nodes: &[Node], root: &Value, cur: &Value, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Path(p) => {
                let vals = eval(p, root, cur);
                let texts: Vec<String> = vals.iter().map(|v| text(v)).collect();
                out.push_str(&texts.join(" "));
            }
            Node::Range(p, body) => {
                for v in eval(p, root, cur) {
                    let items: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    for item in items {
                        run(body, root, item, out)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// `RelaxedJSONPathExpression`: `.a.b`, `a.b` and `{.a.b}` all mean `{.a.b}`.
pub fn relaxed(expr: &str) -> Result<String, String> {
    let e = expr.trim();
    if e.is_empty() {
        return Ok(e.to_owned());
    }
    let inner = e
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(e);
    let inner = inner.strip_prefix('.').unwrap_or(inner);
    if inner.starts_with('{') || inner.ends_with('}') {
        return Err("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'".to_owned());
    }
    Ok(format!("{{.{inner}}}"))
}

/// A value as Go's `%v` prints it (custom columns).
pub fn go_v(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Null => "<nil>".into(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let mut keys: Vec<&crate::json::Key> = m.keys().collect();
            keys.sort();
            format!(
                "map[{}]",
                keys.iter()
                    .map(|k| format!("{k}:{}", go_v(&m[k.as_str()])))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn run(t: &str, v: &Value) -> String {
        Template::parse(t).unwrap().execute(v).unwrap()
    }

    #[test]
    fn fields_lists_ranges_and_filters_print_as_kubectl_does() {
        let v = json!({"items": [
            {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            {"metadata": {"name": "b"}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}},
        ]});
        assert_eq!(run("{.items[*].metadata.name}", &v), "a b");
        assert_eq!(
            run("{range .items[*]}{.metadata.name}{\"\\n\"}{end}", &v),
            "a\nb\n"
        );
        assert_eq!(
            run(
                "{.items[?(@.status.conditions[0].status==\"True\")].metadata.name}",
                &v
            ),
            "a"
        );
        assert_eq!(run("{.items[-1:].metadata.name} {.nope}", &v), "b ");
        assert_eq!(run("{.items[0].metadata}", &v), "{\"name\":\"a\"}");
        assert_eq!(run("{..name}", &v), "a b");
    }

    #[test]
    fn relaxed_paths_gain_braces() {
        assert_eq!(relaxed(".metadata.name").unwrap(), "{.metadata.name}");
        assert_eq!(relaxed("metadata.name").unwrap(), "{.metadata.name}");
        assert_eq!(relaxed("{.metadata.name}").unwrap(), "{.metadata.name}");
    }
}
