//! `converge status FILE... [--now RFC3339]`: kstatus' verdict, one JSON line per object.

use converge_core::json::{Map, Value};
use converge_core::kstatus;
use converge_core::time::parse_rfc3339_unix_ms;

use crate::{input, CliError, CommandResult};

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Files holding Kubernetes objects (JSON or YAML; an object, a List or a stream); `-` is stdin.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<String>,
    /// The time to judge time-dependent rules against (RFC 3339); default: now.
    #[arg(long, value_name = "RFC3339")]
    now: Option<String>,
}

pub fn run(args: &StatusArgs) -> CommandResult {
    let now_unix_ms = match &args.now {
        Some(text) => parse_rfc3339_unix_ms(text).ok_or_else(|| {
            CliError::usage(format!(
                "invalid --now {text:?}: expected an RFC 3339 time such as 2025-01-01T00:00:00Z"
            ))
        })?,
        None => os_now_unix_ms(),
    };
    // Read everything first: a bad file means no partial output.
    let mut objects = Vec::new();
    for path in &args.files {
        objects.extend(input::read_objects(path)?);
    }
    let mut out = String::new();
    for obj in &objects {
        out.push_str(&status_line(obj, now_unix_ms));
        out.push('\n');
    }
    print!("{out}");
    Ok(0)
}

/// `{"apiVersion","kind","namespace","name","status","message","conditions"}` for one object.
/// When kstatus cannot compute a status, its pollers report `Unknown` with the error as message.
pub fn status_line(obj: &Value, now_unix_ms: i64) -> String {
    let text = |path: &[&str]| {
        let v = path
            .iter()
            .try_fold(obj, |v, key| v.get(*key))
            .and_then(Value::as_str)
            .unwrap_or("");
        Value::String(v.into())
    };
    let mut line = Map::new();
    line.insert("apiVersion", text(&["apiVersion"]));
    line.insert("kind", text(&["kind"]));
    line.insert("namespace", text(&["metadata", "namespace"]));
    line.insert("name", text(&["metadata", "name"]));
    match kstatus::compute(obj, now_unix_ms) {
        Ok(res) => {
            line.insert("status", res.status.as_str().into());
            line.insert("message", res.message.clone().into());
            line.insert("conditions", res.conditions_value());
        }
        Err(e) => {
            line.insert("status", "Unknown".into());
            line.insert("message", e.message.into());
            line.insert("conditions", Value::Array(Vec::new().into()));
        }
    }
    Value::Object(line).to_string()
}

fn os_now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
