//! The kubectl oracle: every case in `tests/kubectl/cases.txt` runs through the playground
//! terminal's command runner (`converge_core::kubectl`) and through the real `/usr/bin/kubectl`
//! (v1.32) against `converge serve --manual`, each side from its own copy of the same world,
//! and both must print the same stdout, stderr and exit code. Ages are the servers' tables',
//! in simulated time on both sides (`--manual` moves the clock only through `run` lines).
//! At the end both clusters' traces must be equal: the runner sent the same writes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use converge_core::engine::{ClusterConfig, World};
use converge_core::kubectl::{self, args::split_words, Context, Output};
use converge_core::rest::session::Session;

const KUBECTL: &str = "/usr/bin/kubectl";

struct Served {
    child: Child,
    dir: PathBuf,
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kubectl")
}

fn start() -> Served {
    assert!(
        Path::new(KUBECTL).exists(),
        "{KUBECTL} is missing: the oracle is the real kubectl"
    );
    let dir = std::env::temp_dir().join(format!("converge-oracle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(dir.join("empty.json"), "{}").expect("writes");
    let mut child = Command::new(env!("CARGO_BIN_EXE_converge"))
        .args(["serve", "--manual", "--port", "0", "--kubeconfig"])
        .arg(dir.join("kubeconfig"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("converge serve starts");
    let mut reader = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    reader.read_line(&mut line).expect("reads");
    assert!(
        line.contains("the cluster is at https://127.0.0.1:"),
        "{line}"
    );
    Served {
        child,
        dir,
        _stdout: reader,
    }
}

impl Served {
    fn kubectl(&self, args: &[String]) -> Output {
        let out = Command::new(KUBECTL)
            .args(args)
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("KUBECACHEDIR", self.dir.join("cache"))
            .current_dir(root().join("files"))
            .output()
            .expect("kubectl runs");
        Output {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
            watch: None,
        }
    }

    fn raw(&self, args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let out = self.kubectl(&args);
        assert_eq!(out.code, 0, "kubectl {args:?}: {}", out.stderr);
        out.stdout
    }
}

fn files() -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("files")).expect("tests/kubectl/files") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a name")
            .to_owned();
        map.insert(name, std::fs::read_to_string(&path).expect("reads"));
    }
    map
}

fn host_clock_unix_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the host clock is past 1970");
    i64::try_from(since.as_millis()).expect("fits")
}

#[test]
fn the_terminal_prints_what_the_real_kubectl_prints_for_every_case() {
    let cases = std::fs::read_to_string(root().join("cases.txt")).expect("tests/kubectl/cases.txt");
    let served = start();
    let empty = served.dir.join("empty.json");
    let empty = empty.to_str().expect("utf-8");
    let mut session = Session::new(World::new(ClusterConfig {
        seed: 1,
        ..ClusterConfig::default()
    }));
    let files = files();
    let ctx = Context {
        principal: "admin",
        files: &files,
        stdin: None,
        clock_unix_ms: None,
    };
    let mut failures = Vec::new();
    let mut commands = 0;
    for (n, line) in cases.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "run" {
            session.run_until_converged(200_000, 3_600_000);
            served.raw(&[
                "create",
                "--raw",
                "/converge/v1/run?until=converged",
                "-f",
                empty,
            ]);
            continue;
        }
        commands += 1;
        let words = split_words(line).unwrap_or_else(|e| panic!("cases.txt:{}: {e}", n + 1));
        assert_eq!(
            words.first().map(String::as_str),
            Some("kubectl"),
            "cases.txt:{}",
            n + 1
        );
        let real = served.kubectl(&words[1..]);
        // kubectl describe ages Events on the host's clock; so does the runner here.
        let ctx = Context {
            clock_unix_ms: Some(host_clock_unix_ms()),
            ..ctx
        };
        let ours = kubectl::run(&mut session, ctx, line);
        if real != ours {
            failures.push(format!(
                "cases.txt:{}: {line}\n--- kubectl (exit {})\n{}{}--- terminal (exit {})\n{}{}",
                n + 1,
                real.code,
                real.stdout,
                real.stderr,
                ours.code,
                ours.stdout,
                ours.stderr
            ));
        }
    }
    assert!(
        commands >= 60,
        "the oracle runs at least 60 commands, not {commands}"
    );
    let real_trace = served.raw(&["get", "--raw", "/converge/v1/trace"]);
    let our_trace = session.world().trace_text();
    if real_trace.trim_end() != our_trace.trim_end() {
        let at = real_trace
            .lines()
            .zip(our_trace.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        failures.push(format!(
            "the traces differ from line {}:\n--- kubectl's cluster\n{}\n--- the terminal's\n{}",
            at + 1,
            real_trace
                .lines()
                .skip(at)
                .take(5)
                .collect::<Vec<_>>()
                .join("\n"),
            our_trace
                .lines()
                .skip(at)
                .take(5)
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {commands} cases differ:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}
