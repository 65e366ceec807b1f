//! `converge serve` against the real kubectl (v1.32, installed on every machine of this kind and
//! on CI): what a user types, and what kubectl prints back. Time is `--manual`, moved through
//! the control API with `kubectl create --raw`, so every run sees the same cluster.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const KUBECTL: &str = "/usr/bin/kubectl";

/// A running `converge serve --manual` with its own kubeconfig and kubectl cache.
struct Served {
    child: Child,
    dir: PathBuf,
    /// The server's stdout, kept open for as long as it runs.
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Served {
    fn start(name: &str) -> Served {
        Served::start_with(name, &[])
    }

    fn start_with(name: &str, extra: &[&str]) -> Served {
        assert!(
            Path::new(KUBECTL).exists(),
            "{KUBECTL} is missing: these tests drive the real kubectl (see docs/serve.md)"
        );
        let dir =
            std::env::temp_dir().join(format!("converge-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        std::fs::write(dir.join("empty.json"), "{}").expect("writes");
        let mut child = Command::new(env!("CARGO_BIN_EXE_converge"))
            .args(["serve", "--manual", "--port", "0", "--kubeconfig"])
            .arg(dir.join("kubeconfig"))
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("converge serve starts");
        // The first line says where the cluster is; the kubeconfig is written before it.
        let stdout = child.stdout.take().expect("piped");
        let mut reader = BufReader::new(stdout);
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

    fn command(&self) -> Command {
        let mut c = Command::new(KUBECTL);
        c.arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.dir.join("cache"));
        c
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("kubectl runs")
    }

    /// kubectl's stdout; the command must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// kubectl's stderr; the command must fail.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(!out.status.success(), "kubectl {args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// POST /converge/v1/run?until=converged: the cluster runs until it settles.
    fn converge(&self) -> String {
        let empty = self.dir.join("empty.json");
        self.ok(&[
            "create",
            "--raw",
            "/converge/v1/run?until=converged",
            "-f",
            empty.to_str().expect("utf-8 path"),
        ])
    }

    fn fixture(name: &str) -> String {
        format!(
            "{}/../../tests/fixtures/kubectl/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn kubectl_applies_rolls_out_scales_and_deletes_the_documentation_deployment() {
    let s = Served::start("rollout");
    let manifest = Served::fixture("nginx-deployment.yaml");
    assert_eq!(
        s.ok(&["apply", "-f", &manifest]),
        "deployment.apps/nginx-deployment created\n"
    );
    assert!(s.converge().contains("\"converged\":true"));
    assert_eq!(
        s.ok(&["rollout", "status", "deployment/nginx-deployment"]),
        "deployment \"nginx-deployment\" successfully rolled out\n"
    );

    let table = s.ok(&["get", "deploy"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert_eq!(lines[1][..4], ["nginx-deployment", "3/3", "3", "3"]);
    let wide = s.ok(&["get", "deploy", "-o", "wide"]);
    assert!(
        wide.contains("CONTAINERS   IMAGES         SELECTOR"),
        "{wide}"
    );
    assert!(
        wide.contains("nginx        nginx:1.14.2   app=nginx"),
        "{wide}"
    );
    let pods = s.ok(&["get", "pods"]);
    assert_eq!(
        pods.lines()
            .filter(|l| l.contains("1/1     Running   0"))
            .count(),
        3,
        "{pods}"
    );

    // -o json and -o yaml read back what was stored, and a replace of what was read works.
    let json = s.ok(&["get", "deploy", "nginx-deployment", "-o", "json"]);
    let obj: converge_core::json::Value =
        serde_json::from_str(&json).expect("kubectl printed JSON");
    assert_eq!(obj["spec"]["replicas"], 3);
    assert_eq!(obj["status"]["availableReplicas"], 3);
    let yaml = s.ok(&["get", "deploy", "nginx-deployment", "-o", "yaml"]);
    assert!(
        yaml.contains("kind: Deployment") && yaml.contains("  replicas: 3"),
        "{yaml}"
    );
    let saved = s.dir.join("read.json");
    std::fs::write(&saved, &json).expect("writes");
    let saved = saved.to_str().expect("utf-8 path").to_owned();
    assert_eq!(
        s.ok(&["replace", "-f", &saved]),
        "deployment.apps/nginx-deployment replaced\n"
    );

    // Scaling bumps the generation; the stale copy is then refused with kube's 409.
    let generation = |s: &Served| {
        s.ok(&[
            "get",
            "deploy",
            "nginx-deployment",
            "-o",
            "jsonpath={.metadata.generation}",
        ])
    };
    // (replace rewrote kubectl's last-applied annotation: a Deployment's generation counts
    // annotation changes too, as kube's deployment strategy does.)
    let before: u32 = generation(&s).parse().expect("a number");
    assert_eq!(
        s.ok(&["scale", "--replicas=5", "deployment/nginx-deployment"]),
        "deployment.apps/nginx-deployment scaled\n"
    );
    assert_eq!(generation(&s), (before + 1).to_string());
    let conflict = s.fails(&["replace", "-f", &saved]);
    assert!(
        conflict.contains("Error from server (Conflict)")
            && conflict.contains("the object has been modified; please apply your changes to the latest version and try again"),
        "{conflict}"
    );

    // Nobody but the controller writes status.
    let spoof = s.fails(&[
        "--as",
        "app",
        "patch",
        "deploy",
        "nginx-deployment",
        "--subresource=status",
        "--type=merge",
        "-p",
        "{\"status\":{\"readyReplicas\":9}}",
    ]);
    assert_eq!(
        spoof,
        "Error from server (Forbidden): deployments.apps \"nginx-deployment\" is forbidden: User \"app\" cannot patch resource \"deployments/status\" in API group \"apps\" in the namespace \"default\"\n"
    );

    // A second apply with a new image is a strategic merge patch; a third changes nothing.
    let changed = s.dir.join("nginx-1.16.yaml");
    let text = std::fs::read_to_string(&manifest)
        .expect("reads")
        .replace("nginx:1.14.2", "nginx:1.16.1");
    std::fs::write(&changed, text).expect("writes");
    let changed = changed.to_str().expect("utf-8 path");
    assert_eq!(
        s.ok(&["apply", "-f", changed]),
        "deployment.apps/nginx-deployment configured\n"
    );
    assert_eq!(
        s.ok(&["apply", "-f", changed]),
        "deployment.apps/nginx-deployment unchanged\n"
    );

    // Foreground deletion holds the Deployment until its ReplicaSets and Pods are gone.
    assert_eq!(
        s.ok(&[
            "delete",
            "deploy",
            "nginx-deployment",
            "--cascade=foreground",
            "--wait=false"
        ]),
        "deployment.apps \"nginx-deployment\" deleted\n"
    );
    assert_eq!(
        s.ok(&[
            "get",
            "deploy",
            "nginx-deployment",
            "-o",
            "jsonpath={.metadata.finalizers}"
        ]),
        "[\"foregroundDeletion\"]"
    );
    s.converge();
    assert_eq!(
        s.fails(&["get", "deploy", "nginx-deployment"]),
        "Error from server (NotFound): deployments.apps \"nginx-deployment\" not found\n"
    );
    let none = s.kubectl(&["get", "rs"]);
    assert!(none.status.success());
    assert_eq!(
        String::from_utf8_lossy(&none.stderr),
        "No resources found in default namespace.\n"
    );
}

#[test]
fn kubectl_get_watch_sees_a_rollout_as_it_happens() {
    let s = Served::start("watch");
    s.ok(&["apply", "-f", &Served::fixture("nginx-deployment.yaml")]);
    s.converge();
    let mut watch = s
        .command()
        .args([
            "get",
            "deploy",
            "nginx-deployment",
            "--watch",
            "--output-watch-events",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("kubectl get -w starts");
    let (tx, rx) = mpsc::channel();
    let stdout = watch.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = |what: &str| {
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("kubectl get -w printed no {what}"))
    };
    assert_eq!(
        next("header").split_whitespace().collect::<Vec<_>>(),
        ["EVENT", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert_eq!(
        next("first row")
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>(),
        ["ADDED", "nginx-deployment", "3/3", "3", "3"]
    );
    s.ok(&[
        "set",
        "image",
        "deployment/nginx-deployment",
        "nginx=nginx:1.16.1",
    ]);
    s.converge();
    // The rollout as a person watching sees it: old pods replaced one by one (UP-TO-DATE
    // climbing, a surge pod making READY 4/3), until every pod runs the new template.
    let mut up_to_date = Vec::new();
    loop {
        let row: Vec<String> = next("rollout row")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        assert_eq!(row[..2], ["MODIFIED", "nginx-deployment"], "{row:?}");
        let updated: u32 = row[3].parse().expect("UP-TO-DATE is a number");
        up_to_date.push(updated);
        if up_to_date.contains(&0) && row[2..5] == ["3/3", "3", "3"] {
            break;
        }
    }
    for n in [0, 1, 2, 3] {
        assert!(up_to_date.contains(&n), "UP-TO-DATE went {up_to_date:?}");
    }
    let _ = watch.kill();
    let _ = watch.wait();
}

#[test]
fn tokens_and_impersonation_are_checked() {
    let s = Served::start("auth");
    // kubectl's words for a 401, after its discovery retries (as against a real cluster).
    let refused = s.fails(&["--token", "not-a-token", "get", "pods"]);
    assert_eq!(
        refused.lines().last(),
        Some("error: You must be logged in to the server (the server has asked for the client to provide credentials)")
    );
    // With discovery cached (any earlier command), kubectl prints the server's refusal.
    s.ok(&["get", "pods"]);
    assert_eq!(
        s.fails(&["--context", "converge-bob", "--as", "admin", "get", "pods"]),
        "Error from server (Forbidden): users \"admin\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope\n"
    );
    // admin may impersonate; the request is then bob's, with bob's permissions.
    assert_eq!(s.ok(&["--as", "bob", "get", "pods", "-o", "name"]), "");
    assert_eq!(
        s.fails(&["--as", "bob", "delete", "node", "node-1"]),
        "Error from server (Forbidden): nodes \"node-1\" is forbidden: User \"bob\" cannot delete resource \"nodes\" in API group \"\" at the cluster scope\n"
    );
}

#[test]
fn every_gallery_scenario_served_manually_gives_converge_runs_trace() {
    let dir = format!("{}/../../tests/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/scenarios")
        .map(|e| e.expect("an entry").path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let name = Path::new(&file)
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("scenario")
            .to_owned();
        let s = Served::start_with(&format!("trace-{name}"), &[&file]);
        s.converge();
        let served = s.ok(&["get", "--raw", "/converge/v1/trace"]);
        let run = Command::new(env!("CARGO_BIN_EXE_converge"))
            .args(["run", "--until", "converged", &file])
            .output()
            .expect("converge run");
        assert_eq!(served, String::from_utf8_lossy(&run.stdout), "{name}");
    }
}

/// The Python client the serve tests use: `$CONVERGE_PYTHON_CLIENT` (set by `./dev`), else the
/// venv `./dev install` makes.
fn python_client() -> PathBuf {
    std::env::var_os("CONVERGE_PYTHON_CLIENT").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".local/share/converge-tools/python-client/bin/python")
        },
        PathBuf::from,
    )
}

#[test]
fn the_python_kubernetes_client_lists_watches_and_writes_status_as_a_controller() {
    let python = python_client();
    assert!(
        python.exists(),
        "{} is missing: ./dev install sets up the Kubernetes Python client (tests/clients)",
        python.display()
    );
    let s = Served::start("python");
    s.ok(&["apply", "-f", &Served::fixture("nginx-deployment.yaml")]);
    s.converge();
    let script = format!(
        "{}/../../tests/clients/python_client.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = Command::new(&python)
        .arg(&script)
        .arg(s.dir.join("kubeconfig"))
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "list: nginx-deployment\nwatch: ADDED nginx-deployment\npatch status as the controller: 403\nupdate status as the controller: 200\n"
    );
}

#[test]
fn an_exported_scenario_replays_through_kubectl_with_the_same_refusals() {
    let s = Served::start("export");
    let scenario = format!(
        "{}/../../tests/scenarios/status-spoofing.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let export = Command::new(env!("CARGO_BIN_EXE_converge"))
        .args(["export", &scenario])
        .output()
        .expect("converge export");
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let script = s.dir.join("story.sh");
    std::fs::write(&script, &export.stdout).expect("writes");
    // `sleep N` in the script moves the served cluster's simulated time by N seconds instead.
    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).expect("a directory");
    let shim = format!(
        "#!/bin/sh\nexec {KUBECTL} --kubeconfig {} --cache-dir {} create --raw \"/converge/v1/run?until=${{1}}s\" -f {} >/dev/null\n",
        s.dir.join("kubeconfig").display(),
        s.dir.join("cache").display(),
        s.dir.join("empty.json").display()
    );
    std::fs::write(bin.join("sleep"), shim).expect("writes");
    let run = |cmd: &str| {
        Command::new("/bin/sh")
            .args(["-c", cmd])
            .output()
            .expect("sh runs")
    };
    assert!(run(&format!("chmod +x {}", bin.join("sleep").display()))
        .status
        .success());
    let kubectl_dir = Path::new(KUBECTL)
        .parent()
        .expect("a directory")
        .display()
        .to_string();
    let out = Command::new("/bin/sh")
        .arg(&script)
        .env(
            "PATH",
            format!("{}:{kubectl_dir}:/usr/bin:/bin", bin.display()),
        )
        .env("KUBECONFIG", s.dir.join("kubeconfig"))
        .env("KUBECACHEDIR", s.dir.join("cache"))
        .output()
        .expect("the script runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Error from server (Forbidden): deployments.apps \"web\" is forbidden: User \"app\" cannot patch resource \"deployments/status\""),
        "{stderr}"
    );
    assert_eq!(
        s.ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.metadata.labels.touched}"
        ]),
        "yes"
    );
}

/// The rows of describe's `Events:` table, each split into its columns (Type, Reason, Age,
/// From, Message); tabwriter pads the columns with two or more spaces.
fn describe_events(describe: &str) -> Vec<Vec<String>> {
    let table = describe
        .split("\nEvents:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events table: {describe}"));
    table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            l.trim()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[test]
fn kubectl_describe_and_get_events_tell_why_a_rollout_is_stuck() {
    let scenario = format!(
        "{}/../../tests/scenarios/bad-image.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = Served::start_with("events", &[&scenario]);
    s.converge();
    let pods = s.ok(&["get", "pods", "-o", "name"]);
    let stuck = pods
        .lines()
        .find(|p| {
            s.ok(&["get", p, "-o", "jsonpath={.spec.containers[0].image}"])
                == "nginx:does-not-exist"
        })
        .expect("the rollout's new pod")
        .to_owned();
    let rows = describe_events(&s.ok(&["describe", &stuck]));
    let cols = |r: &Vec<String>| (r[0].clone(), r[1].clone(), r[r.len() - 2].clone());
    let name = stuck.trim_start_matches("pod/");
    assert_eq!(
        cols(&rows[0]),
        (
            "Normal".into(),
            "Scheduled".into(),
            "default-scheduler".into()
        ),
        "{rows:?}"
    );
    assert!(rows[0][4].starts_with(&format!("Successfully assigned default/{name} to node-")));
    // The kubelet's pull failure, then ErrImagePull, back-off and ImagePullBackOff, each
    // retry counted on the same Event: `(xN over ...)` in the Age column.
    let reasons: Vec<(String, String)> = rows[1..]
        .iter()
        .map(|r| (r[1].clone(), r[r.len() - 1].clone()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("Pulling", "Pulling image \"nginx:does-not-exist\""),
            ("Failed", "Failed to pull image \"nginx:does-not-exist\": rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:does-not-exist\": failed to resolve reference \"docker.io/library/nginx:does-not-exist\": docker.io/library/nginx:does-not-exist: not found"),
            ("Failed", "Error: ErrImagePull"),
            ("BackOff", "Back-off pulling image \"nginx:does-not-exist\""),
            ("Failed", "Error: ImagePullBackOff"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned())),
        "{rows:?}"
    );
    for r in &rows[1..] {
        assert_eq!(r[r.len() - 2], "kubelet");
        assert!(r[2].contains(" (x") && r[2].contains(" over "), "{r:?}");
    }

    let deploy = describe_events(&s.ok(&["describe", "deployment", "web"]));
    let messages: Vec<&str> = deploy.iter().map(|r| r[r.len() - 1].as_str()).collect();
    assert_eq!(messages.len(), 2, "{deploy:?}");
    assert!(
        messages[0].starts_with("Scaled up replica set web-")
            && messages[0].ends_with(" from 0 to 2")
    );
    assert!(
        messages[1].starts_with("Scaled up replica set web-")
            && messages[1].ends_with(" from 0 to 1")
    );

    // The server's table and field selectors, as `kubectl get events` uses them.
    let warnings = s.ok(&[
        "get",
        "events",
        "--field-selector",
        "type=Warning",
        "-o",
        "wide",
    ]);
    let header: Vec<&str> = warnings
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "LAST",
            "SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST",
            "SEEN",
            "COUNT",
            "NAME"
        ]
    );
    let body: Vec<&str> = warnings.lines().skip(1).collect();
    assert_eq!(
        body.len(),
        3,
        "the pull error, ErrImagePull, ImagePullBackOff: {warnings}"
    );
    for l in &body {
        assert!(
            l.contains(&format!("pod/{name}"))
                && l.contains("spec.containers{app}")
                && l.contains("kubelet, node-"),
            "{l}"
        );
    }
    let scheduler = s.ok(&[
        "get",
        "events",
        "--field-selector",
        "source=default-scheduler",
        "-o",
        "wide",
    ]);
    assert!(
        scheduler
            .lines()
            .skip(1)
            .all(|l| l.contains("default-scheduler, default-scheduler-control-plane")),
        "{scheduler}"
    );
    assert_eq!(
        scheduler.lines().count(),
        4,
        "three pods scheduled: {scheduler}"
    );
}

#[test]
fn kubectl_discovers_every_resource_from_the_aggregated_documents() {
    let s = Served::start("discovery");
    // -v=6 logs each request kubectl sends: with aggregated discovery it reads /api and /apis
    // and nothing per group version.
    let out = s.kubectl(&["api-resources", "-v=6"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8_lossy(&out.stderr);
    let gets: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split("GET https://").nth(1))
        .filter_map(|rest| rest.split_once('/').map(|(_, path)| path))
        .collect();
    assert!(
        gets.iter().any(|p| p.starts_with("api?")) && gets.iter().any(|p| p.starts_with("apis?")),
        "{gets:?}"
    );
    assert!(
        !gets
            .iter()
            .any(|p| p.starts_with("api/v1") || p.starts_with("apis/")),
        "a group version was fetched on its own: {gets:?}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| -> Vec<String> {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {table}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        row("deployments"),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    assert_eq!(row("nodes"), ["nodes", "no", "v1", "false", "Node"]);
    // kubectl scale reads the scale subresource from the same documents.
    let manifest = Served::fixture("nginx-deployment.yaml");
    s.ok(&["apply", "-f", &manifest]);
    assert_eq!(
        s.ok(&["scale", "--replicas=2", "deployment/nginx-deployment"]),
        "deployment.apps/nginx-deployment scaled\n"
    );
}

#[test]
fn kubectl_auth_whoami_names_the_user_and_the_impersonated_one() {
    let s = Served::start("whoami");
    assert_eq!(
        s.ok(&["auth", "whoami"]),
        "ATTRIBUTE   VALUE\nUsername    admin\nGroups      [system:authenticated]\n"
    );
    assert_eq!(
        s.ok(&["auth", "whoami", "--as", "system:serviceaccount:kube-system:deployment-controller"]),
        "ATTRIBUTE   VALUE\nUsername    system:serviceaccount:kube-system:deployment-controller\nGroups      [system:serviceaccounts system:serviceaccounts:kube-system system:authenticated]\n"
    );
    let alice: converge_core::json::Value = serde_json::from_str(&s.ok(&[
        "--context",
        "converge-alice",
        "auth",
        "whoami",
        "-o",
        "json",
    ]))
    .expect("JSON");
    assert_eq!(alice["kind"], "SelfSubjectReview");
    assert_eq!(alice["status"]["userInfo"]["username"], "alice");
}

#[test]
fn kubectl_follows_a_job_that_backs_off_and_fails() {
    let file = format!(
        "{}/../../tests/scenarios/job-backoff-limit.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = Served::start_with("job", &[&file]);
    s.converge();
    // printJob's columns; with --manual the server's clock is the simulated one, so the ages
    // are the run's: the Job fails 40 s in, and a Failed Job's DURATION keeps counting.
    let table = s.ok(&["get", "jobs"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    );
    assert_eq!(&rows[1][..3], ["migrate", "Failed", "0/1"]);
    // kubectl describe reads the counts and the Events from the served objects.
    let describe = s.ok(&["describe", "job", "migrate"]);
    assert!(
        describe.contains("Pods Statuses:    0 Active (0 Ready) / 0 Succeeded / 3 Failed"),
        "{describe}"
    );
    assert!(describe.contains("Backoff Limit:    2"), "{describe}");
    let events = describe_events(&describe);
    let last = events.last().expect("events");
    assert_eq!(
        (last[0].as_str(), last[1].as_str(), last[3].as_str()),
        ("Warning", "BackoffLimitExceeded", "job-controller")
    );
    // The three failed pods show kubectl's Error status (terminated, exit code 1).
    let pods = s.ok(&["get", "pods", "-l", "job-name=migrate", "--no-headers"]);
    assert_eq!(pods.lines().count(), 3, "{pods}");
    assert!(
        pods.lines()
            .all(|l| l.contains("0/1") && l.contains("Error")),
        "{pods}"
    );
    // The status subresource is the controller's: alice may not mark the Job Complete.
    let refused = s.fails(&[
        "--as",
        "alice",
        "patch",
        "job",
        "migrate",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"succeeded":1}}"#,
    ]);
    assert!(
        refused.contains("Error from server (Forbidden)"),
        "{refused}"
    );
}

#[test]
fn kubectl_follows_a_partitioned_stateful_set_rollout() {
    let file = format!(
        "{}/../../tests/scenarios/statefulset-partition.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = Served::start_with("sts", &[&file]);
    s.converge();
    // printStatefulSet: NAME READY AGE.
    let table = s.ok(&["get", "sts"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "READY", "AGE"]);
    assert_eq!(&rows[1][..2], ["db", "3/3"]);
    // The pods have their ordinals, and kubectl's status viewer reads the partition.
    let pods = s.ok(&["get", "pods", "-l", "app=db", "-o", "name"]);
    assert_eq!(pods, "pod/db-0\npod/db-1\npod/db-2\n");
    assert_eq!(
        s.ok(&["rollout", "status", "sts/db"]),
        "partitioned roll out complete: 3 new pods have been updated...\n"
    );
    // kubectl's StatefulSet history viewer lists the set's ControllerRevisions.
    let history = s.ok(&["rollout", "history", "sts/db"]);
    assert_eq!(
        history,
        "statefulset.apps/db \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    let revisions = s.ok(&["get", "controllerrevisions", "--no-headers"]);
    assert_eq!(revisions.lines().count(), 2, "{revisions}");
    assert!(
        revisions
            .lines()
            .all(|l| l.split_whitespace().nth(1) == Some("statefulset.apps/db")),
        "{revisions}"
    );
    // `converge status` on the served object agrees with kstatus.
    let yaml = s.ok(&["get", "sts", "db", "-o", "yaml"]);
    let path = s.dir.join("db.yaml");
    std::fs::write(&path, yaml).expect("writes");
    let status = Command::new(env!("CARGO_BIN_EXE_converge"))
        .arg("status")
        .arg(&path)
        .output()
        .expect("converge status runs");
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{out}");
    assert!(
        out.contains("Current") && out.contains("Partition rollout complete. updated: 3"),
        "{out}"
    );
}
