//! The command line: shell words (quotes and backslashes, as a POSIX shell splits them) and
//! cobra/pflag flag parsing (`--flag=value`, `--flag value`, `-n value`, `-nvalue`, grouped
//! short booleans, `--` ending the flags), with cobra's messages for what it refuses
//! [spf13/pflag flag.go `parseLongArg`, `parseSingleShortArg`; spf13/cobra command.go].

use std::collections::BTreeMap;

/// Splits a line into words as `sh` does for these characters: blanks separate words, `'...'`
/// is literal, `"..."` keeps blanks and honours `\"`, `\\`, `\$` and `` \` ``, and a backslash
/// outside quotes escapes the next character.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("unexpected EOF while looking for matching `''".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                                word.push(n);
                                chars.next();
                            }
                            _ => word.push('\\'),
                        },
                        Some(ch) => word.push(ch),
                        None => return Err("unexpected EOF while looking for matching `\"'".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            '|' | ';' | '&' | '<' | '>' | '`' | '$' | '(' | ')' => {
                return Err(format!(
                    "`{c}`: pipes, redirections and substitutions are not part of this terminal; type one kubectl command"
                ))
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Whether a flag takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    Bool,
    Value,
}

/// One flag a command accepts.
#[derive(Clone, Copy, Debug)]
pub struct FlagSpec {
    pub long: &'static str,
    pub short: Option<char>,
    pub takes: Takes,
    /// A flag kubectl has that this terminal does not simulate: it is refused by name.
    pub supported: bool,
}

pub const fn flag(long: &'static str, short: Option<char>, takes: Takes) -> FlagSpec {
    FlagSpec {
        long,
        short,
        takes,
        supported: true,
    }
}

pub const fn unsupported(long: &'static str, short: Option<char>, takes: Takes) -> FlagSpec {
    FlagSpec {
        long,
        short,
        takes,
        supported: false,
    }
}

/// kubectl's persistent flags (every command has them).
pub const GLOBAL: &[FlagSpec] = &[
    flag("namespace", Some('n'), Takes::Value),
    flag("as", None, Takes::Value),
    unsupported("as-group", None, Takes::Value),
    unsupported("as-uid", None, Takes::Value),
    unsupported("context", None, Takes::Value),
    unsupported("cluster", None, Takes::Value),
    unsupported("user", None, Takes::Value),
    unsupported("kubeconfig", None, Takes::Value),
    unsupported("server", Some('s'), Takes::Value),
    unsupported("token", None, Takes::Value),
    unsupported("request-timeout", None, Takes::Value),
    unsupported("cache-dir", None, Takes::Value),
    unsupported("v", Some('v'), Takes::Value),
    unsupported("match-server-version", None, Takes::Bool),
    unsupported("insecure-skip-tls-verify", None, Takes::Bool),
    unsupported("warnings-as-errors", None, Takes::Bool),
];

/// A parsed command line: flag values by long name (repeated flags keep every value) and the
/// positional arguments.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub flags: BTreeMap<&'static str, Vec<String>>,
    pub args: Vec<String>,
}

impl Parsed {
    pub fn value(&self, long: &str) -> Option<&str> {
        self.flags
            .get(long)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    pub fn values(&self, long: &str) -> &[String] {
        self.flags.get(long).map_or(&[], Vec::as_slice)
    }

    /// A boolean flag: absent is false; `--flag=false` is false.
    pub fn bool(&self, long: &str) -> bool {
        self.value(long).is_some_and(|v| v == "true")
    }

    pub fn has(&self, long: &str) -> bool {
        self.flags.contains_key(long)
    }
}

/// A refusal before anything is sent: cobra's message (printed `Error: ...`) for flags, or
/// kubectl's own (`error: ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// cobra's flag errors, followed by `See 'kubectl <cmd> --help' for usage.`
    Flag(String),
    /// A flag kubectl has that the terminal does not simulate.
    Unsupported(String),
}

fn parse_bool(name: &str, v: &str) -> Result<String, ArgError> {
    // strconv.ParseBool
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok("true".into()),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok("false".into()),
        _ => Err(ArgError::Flag(format!(
            "invalid argument \"{v}\" for \"--{name}\" flag: strconv.ParseBool: parsing \"{v}\": invalid syntax"
        ))),
    }
}

/// Parses `words` (without `kubectl` and the command path) against the command's flags and
/// the global ones.
pub fn parse(words: &[String], specs: &[FlagSpec]) -> Result<Parsed, ArgError> {
    let all = || specs.iter().chain(GLOBAL.iter());
    let mut out = Parsed::default();
    let mut i = 0;
    let set = |out: &mut Parsed, spec: &FlagSpec, value: String| -> Result<(), ArgError> {
        if !spec.supported {
            return Err(ArgError::Unsupported(format!(
                "--{} is a kubectl flag this terminal does not simulate",
                spec.long
            )));
        }
        out.flags.entry(spec.long).or_default().push(value);
        Ok(())
    };
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w == "--" {
            out.args.extend(words[i..].iter().cloned());
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let Some(spec) = all().find(|s| s.long == name) else {
                return Err(ArgError::Flag(format!("unknown flag: --{name}")));
            };
            let value = match (spec.takes, inline) {
                (Takes::Bool, None) => "true".to_owned(),
                (Takes::Bool, Some(v)) => parse_bool(name, &v)?,
                (Takes::Value, Some(v)) => v,
                (Takes::Value, None) => match words.get(i) {
                    Some(v) => {
                        i += 1;
                        v.clone()
                    }
                    None => {
                        return Err(ArgError::Flag(format!("flag needs an argument: --{name}")))
                    }
                },
            };
            set(&mut out, spec, value)?;
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            let shorts: Vec<char> = w[1..].chars().collect();
            let mut j = 0;
            while j < shorts.len() {
                let c = shorts[j];
                let Some(spec) = all().find(|s| s.short == Some(c)) else {
                    return Err(ArgError::Flag(format!(
                        "unknown shorthand flag: '{c}' in {w}"
                    )));
                };
                let rest: String = shorts[j + 1..].iter().collect();
                match spec.takes {
                    Takes::Bool => {
                        if let Some(v) = rest.strip_prefix('=') {
                            set(&mut out, spec, parse_bool(spec.long, v)?)?;
                            break;
                        }
                        set(&mut out, spec, "true".into())?;
                        j += 1;
                    }
                    Takes::Value => {
                        let value = if let Some(v) = rest.strip_prefix('=') {
                            v.to_owned()
                        } else if !rest.is_empty() {
                            rest
                        } else {
                            match words.get(i) {
                                Some(v) => {
                                    i += 1;
                                    v.clone()
                                }
                                None => {
                                    return Err(ArgError::Flag(format!(
                                        "flag needs an argument: '{c}' in {w}"
                                    )))
                                }
                            }
                        };
                        set(&mut out, spec, value)?;
                        break;
                    }
                }
            }
            continue;
        }
        out.args.push(w.clone());
    }
    Ok(out)
}

/// The words before the first positional argument that name a command (`rollout status`,
/// `auth can-i`), skipping global flags and their values; the rest stays in order.
pub fn command_path(
    words: &[String],
    depth: impl Fn(&[String]) -> bool,
) -> (Vec<String>, Vec<String>) {
    let mut path = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if w == "--" {
            rest.extend(words[i..].iter().cloned());
            break;
        }
        if w.starts_with('-') && w.len() > 1 {
            rest.push(w.clone());
            // A global flag's separate value is not a command word.
            let takes_next = if let Some(long) = w.strip_prefix("--") {
                !long.contains('=')
                    && GLOBAL
                        .iter()
                        .any(|s| s.long == long && s.takes == Takes::Value)
            } else {
                let shorts: Vec<char> = w[1..].chars().collect();
                shorts.len() == 1
                    && GLOBAL
                        .iter()
                        .any(|s| s.short == Some(shorts[0]) && s.takes == Takes::Value)
            };
            if takes_next {
                if let Some(v) = words.get(i + 1) {
                    rest.push(v.clone());
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        if depth(&path) {
            path.push(w.clone());
        } else {
            rest.push(w.clone());
        }
        i += 1;
    }
    (path, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        split_words(s).unwrap()
    }

    #[test]
    fn words_follow_shell_quoting() {
        assert_eq!(
            w(r#"get deploy -o jsonpath='{.a} {.b}{"\n"}' "x y" a\ b"#),
            [
                "get",
                "deploy",
                "-o",
                r#"jsonpath={.a} {.b}{"\n"}"#,
                "x y",
                "a b"
            ]
        );
        assert!(split_words("get 'open").is_err());
        assert!(split_words("get pods | grep x").is_err());
    }

    #[test]
    fn flags_parse_as_pflag_does() {
        let specs = [
            flag("output", Some('o'), Takes::Value),
            flag("watch", Some('w'), Takes::Bool),
        ];
        let p = parse(&w("web -ojson -w -n kube-system --as=app"), &specs).unwrap();
        assert_eq!(p.value("output"), Some("json"));
        assert!(p.bool("watch"));
        assert_eq!(p.value("namespace"), Some("kube-system"));
        assert_eq!(p.value("as"), Some("app"));
        assert_eq!(p.args, ["web"]);
        assert_eq!(
            parse(&w("--bogus"), &specs).unwrap_err(),
            ArgError::Flag("unknown flag: --bogus".into())
        );
        assert_eq!(
            parse(&w("-z"), &specs).unwrap_err(),
            ArgError::Flag("unknown shorthand flag: 'z' in -z".into())
        );
        assert_eq!(
            parse(&w("-n"), &specs).unwrap_err(),
            ArgError::Flag("flag needs an argument: 'n' in -n".into())
        );
    }

    #[test]
    fn the_command_path_skips_global_flags_and_their_values() {
        let (path, rest) = command_path(&w("--as app rollout status deploy/web"), |p| p.len() < 2);
        assert_eq!(path, ["rollout", "status"]);
        assert_eq!(rest, ["--as", "app", "deploy/web"]);
    }
}
