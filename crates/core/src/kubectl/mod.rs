//! A kubectl command line run against the simulated cluster, for the playground's terminal:
//! the same requests kubectl 1.32 sends (through [`rest::Session`](crate::rest::session::Session),
//! which answers the real kubectl in `converge serve`), and the same stdout, stderr and exit
//! code it prints for the answers. Pure and deterministic: reads change nothing, writes are
//! inputs of the world as any client's, and the only clock is the simulated one.
//!
//! [`args`] splits and parses the line; [`client`] holds the RESTMapper and sends requests;
//! [`get`], [`describe`], [`write`], [`rollout`], [`auth`] and [`explain`] are the commands; [`encode`], [`jsonpath`] and
//! [`tabwriter`] print as kubectl's printers do. `tests/kubectl/` runs each case here and
//! through the real kubectl and compares them byte for byte (docs/terminal.md).

pub mod args;
pub mod auth;
pub mod client;
pub mod describe;
pub mod encode;
pub mod explain;
pub mod get;
pub mod jsonpath;
pub mod rollout;
pub mod tabwriter;
pub mod terminal;
pub mod watch;
pub mod write;

use std::collections::BTreeMap;

use args::{ArgError, FlagSpec, Parsed};
use client::{Answer, Mapper};

use crate::rest::session::Session;

/// What a command printed and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// A `get -w` keeps printing as the world moves (the playground's terminal polls it).
    pub watch: Option<Box<watch::Watch>>,
}

/// Who runs the command and what it can read besides the cluster.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The user the terminal is logged in as (the kubeconfig's user); `--as` impersonates.
    pub principal: &'a str,
    /// Files `-f NAME` may name (the playground's editor text is `-f -` through `stdin`).
    pub files: &'a BTreeMap<String, String>,
    pub stdin: Option<&'a str>,
    /// kubectl's own clock, in Unix milliseconds, for the ages `describe` computes itself
    /// (event ages); `None` reads the simulated clock, as the playground's terminal does. The
    /// oracle passes the host's clock, which the real kubectl reads.
    pub clock_unix_ms: Option<i64>,
}

/// The commands kubectl has that this terminal does not run; they are refused by name rather
/// than reported unknown.
const NOT_SIMULATED: &[&str] = &[
    "logs",
    "exec",
    "attach",
    "port-forward",
    "proxy",
    "cp",
    "top",
    "edit",
    "run",
    "expose",
    "set",
    "autoscale",
    "certificate",
    "cluster-info",
    "cordon",
    "uncordon",
    "drain",
    "taint",
    "debug",
    "events",
    "diff",
    "kustomize",
    "wait",
    "config",
    "plugin",
    "completion",
    "alpha",
    "api-versions",
    "replace",
    "version",
    "api-resources",
    "options",
];

const COMMANDS: &[&str] = &[
    "get", "describe", "scale", "delete", "apply", "create", "replace", "patch", "label",
    "annotate", "rollout", "auth", "explain",
];

/// One command being run.
pub struct Run<'s, 'c> {
    pub session: &'s mut Session,
    pub ctx: Context<'c>,
    /// The principal requests are sent as (after `--as`).
    pub principal: String,
    pub namespace: String,
    /// Whether `-n` was given (messages and cluster-scoped objects differ).
    pub namespace_explicit: bool,
    pub mapper: Mapper,
    pub out: Output,
}

impl Run<'_, '_> {
    pub fn stdout(&mut self, s: &str) {
        self.out.stdout.push_str(s);
    }

    pub fn stderr(&mut self, s: &str) {
        self.out.stderr.push_str(s);
    }

    /// `error: <message>` and exit code 1.
    pub fn fail(&mut self, message: &str) {
        self.out.stderr.push_str("error: ");
        self.out.stderr.push_str(message);
        self.out.stderr.push('\n');
        self.out.code = 1;
    }

    /// A server refusal, printed as kubectl prints it, and exit code 1.
    pub fn server_error(&mut self, answer: &Answer) {
        let line = answer.error_line();
        self.out.stderr.push_str(&line);
        self.out.stderr.push('\n');
        self.out.code = 1;
    }

    pub fn send(&mut self, call: client::Call<'_>) -> Answer {
        let principal = self.principal.clone();
        client::send(self.session, &principal, call)
    }
}

/// Runs one command line as `ctx.principal`.
pub fn run(session: &mut Session, ctx: Context<'_>, line: &str) -> Output {
    let words = match args::split_words(line) {
        Ok(w) => w,
        Err(e) => {
            return Output {
                stderr: format!("sh: {e}\n"),
                code: 2,
                ..Output::default()
            }
        }
    };
    let Some((first, words)) = words.split_first() else {
        return Output::default();
    };
    if first != "kubectl" {
        return Output {
            stderr: format!("sh: {first}: command not found (this terminal runs kubectl)\n"),
            code: 127,
            ..Output::default()
        };
    }
    let nested = |path: &[String]| match path.first().map(String::as_str) {
        None => true,
        Some("rollout") | Some("auth") => path.len() < 2,
        Some(_) => false,
    };
    let (path, rest) = args::command_path(words, nested);
    let Some(verb) = path.first().map(String::as_str) else {
        return Output {
            stderr: "error: a command is needed, such as kubectl get pods (kubectl --help is not simulated)\n".into(),
            code: 1,
            ..Output::default()
        };
    };
    if !COMMANDS.contains(&verb) {
        let stderr = if NOT_SIMULATED.contains(&verb) {
            format!("error: kubectl {verb} is not simulated by this terminal\n")
        } else {
            format!("Error: unknown command \"{verb}\" for \"kubectl\"\n")
        };
        return Output {
            stderr,
            code: 1,
            ..Output::default()
        };
    }
    let sub = path.get(1).map(String::as_str);
    let specs = flags_of(verb, sub);
    let command_name = path.join(" ");
    let parsed = match args::parse(&rest, specs) {
        Ok(p) => p,
        Err(ArgError::Flag(m)) => {
            return Output {
                stderr: format!("Error: {m}\nSee 'kubectl {command_name} --help' for usage.\n"),
                code: 1,
                ..Output::default()
            }
        }
        Err(ArgError::Unsupported(m)) => {
            return Output {
                stderr: format!("error: {m}\n"),
                code: 1,
                ..Output::default()
            }
        }
    };
    let mut run = Run {
        mapper: Mapper::discover(session),
        session,
        ctx,
        principal: ctx.principal.to_owned(),
        namespace: parsed.value("namespace").unwrap_or("default").to_owned(),
        namespace_explicit: parsed.has("namespace"),
        out: Output::default(),
    };
    if let Some(user) = parsed.value("as") {
        let api = run.session.world().api();
        match crate::rest::session::impersonate(api, ctx.principal, user) {
            Ok(p) => run.principal = p,
            Err(e) => {
                let answer = Answer {
                    status: e.code(),
                    body: e.to_status(),
                };
                run.server_error(&answer);
                return run.out;
            }
        }
    }
    let _ = match (verb, sub) {
        ("get", _) => get::get(&mut run, &parsed),
        ("describe", _) => describe::describe(&mut run, &parsed),
        ("scale", _) => write::scale(&mut run, &parsed),
        ("delete", _) => write::delete(&mut run, &parsed),
        ("apply", _) => write::apply(&mut run, &parsed, write::Mode::Apply),
        ("create", _) => write::apply(&mut run, &parsed, write::Mode::Create),
        ("replace", _) => write::apply(&mut run, &parsed, write::Mode::Replace),
        ("patch", _) => write::patch(&mut run, &parsed),
        ("label", _) => write::label(&mut run, &parsed, write::MetaField::Labels),
        ("annotate", _) => write::label(&mut run, &parsed, write::MetaField::Annotations),
        ("rollout", Some(s)) => rollout::rollout(&mut run, s, &parsed),
        ("rollout", None) => {
            run.fail(
                "a rollout command is needed: status, history, undo, restart, pause or resume",
            );
            None
        }
        ("explain", _) => explain::explain(&mut run, &parsed),
        ("auth", Some("can-i")) => auth::can_i(&mut run, &parsed),
        ("auth", Some("whoami")) => auth::whoami(&mut run, &parsed),
        ("auth", _) => {
            run.fail("an auth command is needed: can-i or whoami");
            None
        }
        _ => {
            run.fail(&format!("kubectl {verb} is not simulated by this terminal"));
            None
        }
    };
    run.out
}

fn flags_of(verb: &str, sub: Option<&str>) -> &'static [FlagSpec] {
    match (verb, sub) {
        ("get", _) => get::FLAGS,
        ("describe", _) => describe::FLAGS,
        ("scale", _) => write::SCALE_FLAGS,
        ("delete", _) => write::DELETE_FLAGS,
        ("apply", _) | ("create", _) => write::APPLY_FLAGS,
        ("replace", _) => write::REPLACE_FLAGS,
        ("patch", _) => write::PATCH_FLAGS,
        ("label", _) | ("annotate", _) => write::LABEL_FLAGS,
        ("rollout", _) => rollout::FLAGS,
        ("auth", Some("can-i")) => auth::CAN_I_FLAGS,
        ("explain", _) => explain::FLAGS,
        _ => &[],
    }
}

/// What the positional arguments name: `TYPE NAME...`, `TYPE/NAME...`, `TYPE1,TYPE2`.
pub struct Targets<'m> {
    /// Each resource with the names asked for (empty: the whole collection).
    pub groups: Vec<(&'m client::Mapping, Vec<String>)>,
    /// Whether exactly one object was named (kubectl prints it alone rather than in a List).
    pub single: bool,
}

/// Resolves positional arguments as kubectl's resource builder does
/// [cli-runtime pkg/resource/builder.go `ResourceTypeOrNameArgs`, `resourceTupleMappings`].
pub fn targets<'m>(mapper: &'m Mapper, args: &[String]) -> Result<Targets<'m>, String> {
    let mut groups: Vec<(&client::Mapping, Vec<String>)> = Vec::new();
    if args.iter().any(|a| a.contains('/')) {
        for a in args {
            let Some((t, name)) = a.split_once('/') else {
                return Err("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'".into());
            };
            if name.is_empty() {
                return Err(
                    "arguments in resource/name form must have a single resource and name"
                        .to_owned(),
                );
            }
            let m = mapper.resolve(t)?;
            match groups.iter_mut().find(|(g, _)| *g == m) {
                Some((_, names)) => names.push(name.to_owned()),
                None => groups.push((m, vec![name.to_owned()])),
            }
        }
        let single = args.len() == 1;
        return Ok(Targets { groups, single });
    }
    let Some((types, names)) = args.split_first() else {
        return Ok(Targets {
            groups,
            single: false,
        });
    };
    for t in types.split(',').filter(|t| !t.is_empty()) {
        let ms = if mapper.category(t).is_empty() || mapper.resolve(t).is_ok() {
            vec![mapper.resolve(t)?]
        } else {
            mapper.category(t)
        };
        for m in ms {
            if !groups.iter().any(|(g, _)| *g == m) {
                groups.push((m, names.to_vec()));
            }
        }
    }
    let single = names.len() == 1 && groups.len() == 1;
    Ok(Targets { groups, single })
}

/// Helper for commands whose arguments must name objects.
pub fn named(
    run: &mut Run<'_, '_>,
    parsed: &Parsed,
    min_args: usize,
) -> Option<Vec<(client::Mapping, String)>> {
    if parsed.args.len() < min_args {
        return None;
    }
    let mapper = run.mapper.clone();
    match targets(&mapper, &parsed.args) {
        Ok(t) => Some(
            t.groups
                .into_iter()
                .flat_map(|(m, names)| names.into_iter().map(move |n| (m.clone(), n)))
                .collect(),
        ),
        Err(e) => {
            run.fail(&e);
            Some(Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ClusterConfig, World};
    use proptest::prelude::*;

    fn session() -> Session {
        Session::new(World::new(ClusterConfig::default()))
    }

    fn run_line(s: &mut Session, stdin: Option<&str>, line: &str) -> Output {
        let files = BTreeMap::new();
        run(
            s,
            Context {
                principal: "admin",
                files: &files,
                stdin,
                clock_unix_ms: None,
            },
            line,
        )
    }

    #[test]
    fn bad_input_gets_an_error_and_never_a_panic() {
        let mut s = session();
        let refused = [
            ("kubectl", None),
            ("ls -l", None),
            ("kubectl get pods | grep web", None),
            ("kubectl get 'open", None),
            ("kubectl get deploy -o jsonpath={", None),
            ("kubectl get deploy -o custom-columns=", None),
            ("kubectl get deploy -o custom-columns=A", None),
            ("kubectl get pods/", None),
            ("kubectl get /x", None),
            ("kubectl get déploiements", None),
            ("kubectl patch deploy web -p '[1'", None),
            ("kubectl scale --replicas=x deploy/web", None),
            ("kubectl label deploy", None),
            ("kubectl label deploy web", None),
            ("kubectl rollout", None),
            ("kubectl rollout frob deploy/web", None),
            ("kubectl auth can-i", None),
            ("kubectl delete", None),
            ("kubectl delete deploy web --cascade=sideways", None),
            ("kubectl apply -f -", None),
            ("kubectl create -f -", Some("{not yaml: [")),
            ("kubectl create -f -", Some("- 1\n- 2")),
            ("kubectl explain", None),
            ("kubectl explain .", None),
            ("kubectl explain deploy..spec", None),
            ("kubectl explain deploy.spec[0]", None),
            ("kubectl explain deploy.spec.nope", None),
            ("kubectl explain nope.spec", None),
            ("kubectl explain deploy -o json", None),
            ("kubectl explain deploy --api-version=a/b/c", None),
        ];
        for (line, stdin) in refused {
            let out = run_line(&mut s, stdin, line);
            assert!(
                out.code != 0 && !out.stderr.is_empty(),
                "{line:?} should be refused: {out:?}"
            );
        }
        // Answered one way or another (by the runner or the API server), never a panic.
        for (line, stdin) in [
            ("", None),
            ("kubectl get deploy -o jsonpath={.a[?(@.b==)]}", None),
            ("kubectl patch deploy web --type json -p '{}'", None),
            ("kubectl scale --replicas=-1 deploy/web", None),
            (
                "kubectl apply -f -",
                Some("metadata: 5\nkind: Deployment\napiVersion: apps/v1"),
            ),
            (
                "kubectl replace -f -",
                Some("kind: ConfigMap\napiVersion: v1\nmetadata: \"x\""),
            ),
            (
                "kubectl create -f -",
                Some("kind: ConfigMap\napiVersion: v1\nmetadata: []"),
            ),
        ] {
            let _ = run_line(&mut s, stdin, line);
        }
    }

    const WORDS: &[&str] = &[
        "kubectl",
        "get",
        "describe",
        "scale",
        "delete",
        "apply",
        "create",
        "replace",
        "patch",
        "label",
        "annotate",
        "rollout",
        "status",
        "undo",
        "history",
        "pause",
        "resume",
        "restart",
        "auth",
        "can-i",
        "whoami",
        "explain",
        "deploy.spec.replicas",
        "--recursive",
        "deploy",
        "deploy/web",
        "web",
        "pods",
        "po/x",
        "nodes",
        "all",
        "cm",
        "-o",
        "json",
        "yaml",
        "wide",
        "name",
        "jsonpath={.items[*]}",
        "-A",
        "-n",
        "kube-system",
        "-l",
        "app=web",
        "--as",
        "app",
        "--replicas=2",
        "-p",
        "{}",
        "--type",
        "merge",
        "-f",
        "-",
        "a=b",
        "a-",
        "--overwrite",
        "-w",
        "--bogus",
        "-z",
        "--",
        "=",
        "'",
        "\"",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn any_line_of_kubectl_words_is_answered_without_a_panic(
            words in proptest::collection::vec(0..WORDS.len(), 1..8)
        ) {
            let mut s = session();
            let line: Vec<&str> = std::iter::once("kubectl")
                .chain(words.iter().map(|i| WORDS[*i]))
                .collect();
            let out = run_line(&mut s, Some("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: c\n"), &line.join(" "));
            // A refusal always says why (`auth can-i`'s "no" is its answer on stdout).
            prop_assert!(
                out.code == 0 || !out.stderr.is_empty() || out.stdout.starts_with("no"),
                "{:?}: {:?}",
                line,
                out
            );
        }
    }
}
