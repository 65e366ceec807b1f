//! Share links and saved workspaces recorded by an earlier build (`tests/fixtures/share/`) keep
//! opening as the same session: each decodes to the workspace built below, encodes back to the
//! recorded link and JSON byte for byte, and replays to the recorded trace. The sessions cover
//! every playground action, every engine input the playground can log and both starters, so a
//! renamed engine type that leaks into the link format fails here rather than in a user's tab.
//!
//! New fixtures: add a session to [`sessions`], then
//! `cargo test -p converge-core --test share_link_fixtures -- --ignored`, which writes only the
//! files that are missing. Recorded files are never rewritten: they are what old links hold.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use converge_core::api::{ApiRequest, GroupResource, ObjectKey, PatchType};
use converge_core::controllers::ImageBehaviour;
use converge_core::engine::{Fault, Input, World};
use converge_core::json::json;
use converge_core::view::session::{self, SessionAction, Starter};
use converge_core::view::share::{self, Target, Theme, Workspace};
use converge_core::view::Syntax;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/share")
}

fn apply(input: Input) -> SessionAction {
    SessionAction::apply(input)
}

fn request(request: ApiRequest) -> SessionAction {
    apply(Input::Request { request })
}

fn fault(fault: Fault) -> SessionAction {
    apply(Input::Fault { fault })
}

fn deployments() -> GroupResource {
    GroupResource::new("apps", "deployments")
}

fn web_key() -> ObjectKey {
    ObjectKey::new(deployments(), "default", "web")
}

/// The recorded sessions: a name and the workspace, built in code so the test does not depend
/// on the format it checks.
fn sessions() -> Vec<(&'static str, Workspace)> {
    let mut out = Vec::new();

    out.push(("small-starter-fresh", Workspace::fresh(Starter::Small)));

    out.push((
        "large-starter-dark-fastest",
        Workspace {
            theme: Theme::Dark,
            speed: 0,
            seed: 42,
            ..Workspace::fresh(Starter::Large)
        },
    ));

    // The clock controls, a scrubbed cursor, a selection and every editor preference.
    let mut w = Workspace::fresh(Starter::Small);
    w.seed = 7;
    w.actions.extend([
        SessionAction::Step,
        SessionAction::Step,
        SessionAction::NextEvent,
        apply(Input::Advance { ms: 1_600 }),
        apply(Input::Advance { ms: 0 }),
        SessionAction::RunUntilConverged,
        SessionAction::NextEvent,
    ]);
    w.cursor = Some(4);
    w.selected = Some(web_key());
    w.editor_text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  # é ✓ <b>&amp;</b> \"quoted\" \\ tab\t\n".into();
    w.syntax = Syntax::Yaml;
    w.principal = "system:serviceaccount:default:bob".into();
    w.target = Target::Status;
    w.theme = Theme::Light;
    w.speed = 4;
    out.push(("clock-controls-and-preferences", w));

    // Requests of every verb, the status subresource and both patch types.
    let mut w = Workspace::fresh(Starter::Small);
    let cm = GroupResource::new("", "configmaps");
    let pods = GroupResource::new("", "pods");
    w.actions.extend([
        request(ApiRequest::create(
            "alice",
            cm.clone(),
            "default",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"app": "web"}}, "data": {"mode": "fast"}}),
        )),
        request(ApiRequest::get("alice", cm.clone(), "default", "settings")),
        request(ApiRequest::list(
            "alice",
            pods.clone(),
            "default",
            Some("app=web,tier!=db"),
        )),
        request(ApiRequest::list("alice", cm.clone(), "", None)),
        request(ApiRequest::update(
            "alice",
            cm.clone(),
            "default",
            "settings",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"mode": "slow"}}),
        )),
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 5}}),
        )),
        SessionAction::RunUntilConverged,
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Json,
            json!([{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.28"}]),
        )),
        SessionAction::Step,
        request(ApiRequest::get_status("alice", deployments(), "default", "web")),
        request(ApiRequest::update_status(
            "app",
            deployments(),
            "default",
            "web",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}, "status": {"readyReplicas": 9}}),
        )),
        request(ApiRequest::patch_status(
            "system:serviceaccount:kube-system:deployment-controller",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"status": {"observedGeneration": 1}}),
        )),
        request(ApiRequest::delete("alice", cm.clone(), "default", "settings")),
        request(ApiRequest::delete_with_options(
            "alice",
            deployments(),
            "default",
            "web",
            json!({"propagationPolicy": "Foreground"}),
        )),
        SessionAction::RunUntilConverged,
    ]);
    w.selected = Some(ObjectKey::new(cm, "default", "settings"));
    w.editor_text = "{\n  \"kind\": \"ConfigMap\"\n}".into();
    out.push(("requests-every-verb", w));

    // Every fault the engine takes (the playground's panel sends most of them).
    let mut w = Workspace::fresh(Starter::Small);
    w.seed = 3;
    let rs = || "replicaset-controller".to_string();
    w.actions.extend([
        fault(Fault::PauseController { controller: rs() }),
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 4}}),
        )),
        SessionAction::RunUntilConverged,
        fault(Fault::ResumeController { controller: rs() }),
        SessionAction::RunUntilConverged,
        fault(Fault::CrashController {
            controller: "deployment-controller".into(),
        }),
        SessionAction::NextEvent,
        fault(Fault::RestartController {
            controller: "deployment-controller".into(),
        }),
        fault(Fault::WatchLatency {
            controller: None,
            ms: 250,
        }),
        fault(Fault::WatchLatency {
            controller: Some(rs()),
            ms: 40,
        }),
        fault(Fault::ApiFailures {
            principal: Some("system:serviceaccount:kube-system:replicaset-controller".into()),
            count: 2,
            code: 409,
        }),
        fault(Fault::ApiFailures {
            principal: None,
            count: 1,
            code: 503,
        }),
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 2}}),
        )),
        SessionAction::RunUntilConverged,
        fault(Fault::ClearApiFailures),
        fault(Fault::ImagePullFailure {
            node: "node-2".into(),
            failing: true,
        }),
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 6}}),
        )),
        SessionAction::RunUntilConverged,
        fault(Fault::ImagePullFailure {
            node: "node-2".into(),
            failing: false,
        }),
        SessionAction::RunUntilConverged,
    ]);
    w.principal = "carol".into();
    out.push(("faults-every-kind", w));

    // RBAC off and on, image behaviours and a simulated load.
    let mut w = Workspace::fresh(Starter::Small);
    w.seed = 11;
    w.actions.extend([
        session::set_rbac(false),
        request(ApiRequest::patch_status(
            "app",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"status": {"readyReplicas": 1}}),
        )),
        session::set_rbac(true),
        apply(Input::SetImage {
            image: "nginx:broken".into(),
            behaviour: ImageBehaviour::PullFails,
        }),
        apply(Input::SetImage {
            image: "nginx:crash".into(),
            behaviour: ImageBehaviour::Crashes { run_ms: 1_500 },
        }),
        apply(Input::SetImage {
            image: "nginx:slow".into(),
            behaviour: ImageBehaviour::Ok { pull_ms: 9_000 },
        }),
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:crash"}]}}}}),
        )),
        apply(Input::Advance { ms: 30_000 }),
        request(ApiRequest::patch(
            "alice",
            deployments(),
            "default",
            "web",
            PatchType::Merge,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:slow"}]}}}}),
        )),
        SessionAction::RunUntilConverged,
        apply(Input::SetLoad {
            target: "default/web".into(),
            millicores: 2_500,
        }),
        apply(Input::Advance { ms: 60_000 }),
    ]);
    w.editor_text = String::new();
    w.theme = Theme::Dark;
    out.push(("rbac-images-and-load", w));

    // A session that starts on a scenario's world has no starter actions.
    let w = Workspace {
        actions: vec![SessionAction::Step, SessionAction::NextEvent],
        seed: 5,
        speed: 1,
        ..Workspace::fresh(Starter::Large)
    };
    out.push(("large-starter-without-its-actions", w));

    // Requests the terminal sent: each carries its command line (the two creates read different
    // editor texts); one command sends two.
    let mut w = Workspace::fresh(Starter::Small);
    let cm = GroupResource::new("", "configmaps");
    let typed = |line: &str, request: ApiRequest| SessionAction::Apply {
        input: Input::Request { request },
        command: Some(line.to_owned()),
    };
    let configmap = |name: &str| json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "creationTimestamp": null}});
    w.actions.extend([
        typed(
            "kubectl create -f -",
            ApiRequest::create("admin", cm.clone(), "default", configmap("a")),
        ),
        typed(
            "kubectl create -f -",
            ApiRequest::create("admin", cm.clone(), "default", configmap("b")),
        ),
        typed(
            r#"kubectl patch deploy web --type merge -p '{"spec":{"replicas":5}}'"#,
            ApiRequest::patch(
                "admin",
                deployments(),
                "default",
                "web",
                PatchType::Merge,
                json!({"spec": {"replicas": 5}}),
            ),
        ),
        SessionAction::RunUntilConverged,
        typed(
            "kubectl delete configmap a b",
            ApiRequest::delete("admin", cm.clone(), "default", "a"),
        ),
        typed(
            "kubectl delete configmap a b",
            ApiRequest::delete("admin", cm, "default", "b"),
        ),
    ]);
    out.push(("terminal-commands", w));

    out
}

/// What a replay shows, in a form a reviewer can read: the step count, the clock, the object
/// count and the trace's FNV-1a 64 hash and length, then the trace itself when it is short
/// enough to review.
const TRACE_LINES_KEPT: usize = 2_000;

fn replay_record(world: &World) -> String {
    let trace = world.trace_text();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in trace.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut s = String::new();
    let _ = writeln!(s, "steps: {}", world.steps());
    let _ = writeln!(s, "now: {:?}", world.now());
    let _ = writeln!(s, "objects: {}", world.object_count());
    let _ = writeln!(s, "converged: {}", world.is_converged());
    let _ = writeln!(s, "trace lines: {}", trace.lines().count());
    let _ = writeln!(s, "trace fnv1a64: {h:016x}");
    if trace.lines().count() <= TRACE_LINES_KEPT {
        s.push_str("---\n");
        s.push_str(&trace);
    }
    s
}

fn replayed(w: &Workspace) -> String {
    let world = share::replay(w, share::REPLAY_MAX_EVENTS, |_, _| {}).expect("the session replays");
    replay_record(&world)
}

/// Damaged saves and the exact message each gives, so the format's errors stay as they were.
fn damaged_saves() -> Vec<(&'static str, String)> {
    let good = share::to_json(&sessions()[2].1);
    let base = share::to_json(&Workspace::default());
    let all = sessions();
    let clock = share::to_json(&all[2].1);
    let faults = share::to_json(&all[4].1);
    let images = share::to_json(&all[5].1);
    let terminal = share::to_json(&all[7].1);
    vec![
        (
            "seed is a string",
            base.replacen("\"seed\":1", "\"seed\":\"x\"", 1),
        ),
        ("no seed", base.replacen("\"seed\":1,", "", 1)),
        (
            "no actions",
            base.replacen("\"actions\":", "\"actionz\":", 1),
        ),
        (
            "unknown action",
            base.replacen("\"a\":\"runUntilConverged\"", "\"a\":\"rewind\"", 1),
        ),
        (
            "action without a tag",
            base.replacen("\"a\":\"runUntilConverged\"", "\"b\":1", 1),
        ),
        (
            "unknown input",
            base.replacen("\"input\":\"request\"", "\"input\":\"teleport\"", 1),
        ),
        (
            "apply without input",
            base.replacen(
                "{\"a\":\"apply\",\"input\":{",
                "{\"a\":\"apply\",\"inputs\":{",
                1,
            ),
        ),
        (
            "unknown verb",
            base.replacen("\"verb\":\"create\"", "\"verb\":\"watch\"", 1),
        ),
        (
            "verb is a number",
            base.replacen("\"verb\":\"create\"", "\"verb\":3", 1),
        ),
        (
            "unknown subresource",
            base.replacen("\"subresource\":null", "\"subresource\":\"log\"", 1),
        ),
        (
            "body is a string",
            base.replacen(
                "\"body\":{\"Object\"",
                "\"body\":\"Object\",\"x\":{\"y\"",
                1,
            ),
        ),
        (
            "unknown body",
            base.replacen("\"body\":{\"Object\"", "\"body\":{\"Stream\"", 1),
        ),
        ("no group", base.replacen("\"group\":\"apps\",", "", 1)),
        (
            "starter unknown",
            base.replacen("\"starter\":\"small\"", "\"starter\":\"huge\"", 1),
        ),
        (
            "theme unknown",
            base.replacen("\"theme\":\"System\"", "\"theme\":\"Blue\"", 1),
        ),
        (
            "syntax unknown",
            base.replacen("\"syntax\":\"Json\"", "\"syntax\":\"Toml\"", 1),
        ),
        (
            "target unknown",
            base.replacen("\"target\":\"Main\"", "\"target\":\"Scale\"", 1),
        ),
        (
            "selected is a number",
            base.replacen("\"selected\":null", "\"selected\":5", 1),
        ),
        (
            "speed negative",
            base.replacen("\"speed\":2", "\"speed\":-1", 1),
        ),
        (
            "cursor past the end",
            base.replacen("\"cursor\":null", "\"cursor\":9", 1),
        ),
        (
            "advance too long",
            good.replacen("\"ms\":1600", "\"ms\":600001", 1),
        ),
        (
            "advance negative",
            good.replacen("\"ms\":1600", "\"ms\":-1", 1),
        ),
        (
            "empty principal",
            base.replacen(
                "\"principal\":\"alice\",\"target\"",
                "\"principal\":\"\",\"target\"",
                1,
            ),
        ),
        ("not json", "{\"v\":1,".into()),
        ("not an object", "[1]".into()),
        ("v is a string", base.replacen("\"v\":1", "\"v\":\"1\"", 1)),
        ("trailing text", format!("{base} x")),
        ("workspace is a list", "{\"v\":1,\"x\":[]}".into()),
        (
            "action is a number",
            base.replacen("{\"a\":\"runUntilConverged\"}", "7", 1),
        ),
        (
            "input is a number",
            base.replacen(
                "\"input\":{\"input\":\"request\"",
                "\"input\":7,\"x\":{\"input\":\"request\"",
                1,
            ),
        ),
        (
            "request is a number",
            base.replacen("\"request\":{", "\"request\":7,\"x\":{", 1),
        ),
        (
            "gr is a number",
            base.replacen("\"gr\":{", "\"gr\":7,\"x\":{", 1),
        ),
        (
            "body is a number",
            base.replacen("\"body\":{", "\"body\":7,\"x\":{", 1),
        ),
        (
            "patch body is an object",
            faults.replacen(
                "{\"Patch\":[\"merge\",{\"spec\":{\"replicas\":4}}]}",
                "{\"Patch\":{\"merge\":{\"spec\":{\"replicas\":4}}}}",
                1,
            ),
        ),
        (
            "patch body is a string",
            faults.replacen(
                "{\"Patch\":[\"merge\",{\"spec\":{\"replicas\":4}}]}",
                "{\"Patch\":\"merge\"}",
                1,
            ),
        ),
        (
            "patch body is short",
            faults.replacen(
                "{\"Patch\":[\"merge\",{\"spec\":{\"replicas\":4}}]}",
                "{\"Patch\":[\"merge\"]}",
                1,
            ),
        ),
        (
            "unknown patch type",
            faults.replacen("\"Patch\":[\"merge\"", "\"Patch\":[\"apply\"", 1),
        ),
        (
            "fault is a number",
            faults.replacen(
                "\"fault\":{\"fault\":\"pauseController\"",
                "\"fault\":7,\"x\":{\"fault\":\"pauseController\"",
                1,
            ),
        ),
        (
            "unknown fault",
            faults.replacen("\"fault\":\"pauseController\"", "\"fault\":\"unplug\"", 1),
        ),
        (
            "fault without controller",
            faults.replacen(
                "\"fault\":\"pauseController\",\"controller\"",
                "\"fault\":\"pauseController\",\"c\"",
                1,
            ),
        ),
        (
            "failure code too large",
            faults.replacen("\"code\":409", "\"code\":70000", 1),
        ),
        (
            "behaviour is a number",
            images.replacen(
                "\"behaviour\":{\"behaviour\":\"pullFails\"}",
                "\"behaviour\":7",
                1,
            ),
        ),
        (
            "unknown behaviour",
            images.replacen("\"behaviour\":\"pullFails\"", "\"behaviour\":\"hangs\"", 1),
        ),
        (
            "crash without run time",
            images.replacen("\"run_ms\":1500", "\"runMs\":1500", 1),
        ),
        (
            "rbac flag is a string",
            images.replacen("\"enforced\":true", "\"enforced\":\"yes\"", 1),
        ),
        (
            "load without millicores",
            images.replacen("\"millicores\":2500", "\"cores\":2", 1),
        ),
        (
            "selected without gr",
            clock.replacen("\"selected\":{\"gr\"", "\"selected\":{\"g\"", 1),
        ),
        (
            "extra fields are ignored",
            base.replacen("\"seed\":1,", "\"seed\":1,\"extra\":[1],", 1),
        ),
        (
            "command is a number",
            terminal.replacen("\"command\":\"kubectl create -f -\"", "\"command\":7", 1),
        ),
    ]
}

fn damaged_record() -> String {
    let mut s = String::new();
    for (name, text) in damaged_saves() {
        let outcome = match share::from_json(&text) {
            Ok(w) => format!("ok: {}", share::to_json(&w)),
            Err(e) => format!("error: {e}"),
        };
        let _ = writeln!(s, "{name}\n  in:  {text}\n  out: {outcome}");
    }
    s
}

fn read(name: &str) -> String {
    let path = dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn recorded_links_open_as_the_same_session_and_replay_to_the_recorded_trace() {
    for (name, built) in sessions() {
        let link = read(&format!("{name}.link"));
        let link = link.trim_end();
        let saved = read(&format!("{name}.json"));
        let saved = saved.trim_end();

        let from_link = share::from_hash(link).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(from_link, built, "{name}: the link decodes to the session");
        let from_save = share::from_json(saved).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(from_save, built, "{name}: the save decodes to the session");

        assert_eq!(
            share::to_hash(&built),
            link,
            "{name}: the link is as recorded"
        );
        assert_eq!(
            share::to_json(&built),
            saved,
            "{name}: the save is as recorded"
        );

        assert_eq!(
            replayed(&from_link),
            read(&format!("{name}.replay.txt")),
            "{name}: the replay is as recorded"
        );
    }
}

#[test]
fn damaged_saves_give_the_recorded_messages() {
    assert_eq!(damaged_record(), read("damaged-saves.txt"));
}

/// Writes the fixture files that are missing; see the module comment.
#[test]
#[ignore = "records new fixtures; run by hand with --ignored"]
fn record_missing_share_link_fixtures() {
    let dir = dir();
    std::fs::create_dir_all(&dir).expect("the fixture directory");
    let write = |name: String, text: String| {
        let path = dir.join(name);
        if !path.exists() {
            std::fs::write(&path, text).expect("the fixture is written");
        }
    };
    for (name, w) in sessions() {
        write(format!("{name}.link"), share::to_hash(&w) + "\n");
        write(format!("{name}.json"), share::to_json(&w) + "\n");
        write(format!("{name}.replay.txt"), replayed(&w));
    }
    write("damaged-saves.txt".into(), damaged_record());
}
