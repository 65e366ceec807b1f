//! Bad command lines and bad input: one clear line on stderr, a non-zero exit, never a panic.

mod common;

use common::{converge, converge_with_stdin, fixture};

/// Asserts a failed run: nothing on stdout, exactly `line` on stderr, the given exit code.
fn assert_one_line(run: &common::Run, line: &str, code: i32) {
    assert_eq!(run.stdout, "", "stdout");
    assert_eq!(run.stderr, format!("{line}\n"), "stderr");
    assert_eq!(run.code, code, "exit code");
}

#[test]
fn an_unknown_subcommand() {
    assert_one_line(
        &converge(&["frobnicate"]),
        "converge: unrecognized subcommand 'frobnicate' (see 'converge --help')",
        2,
    );
}

#[test]
fn no_subcommand() {
    assert_one_line(
        &converge(&[]),
        "converge: a subcommand is required: status, rollout-status, run or check (see 'converge --help')",
        2,
    );
}

#[test]
fn a_missing_file_argument() {
    assert_one_line(
        &converge(&["status"]),
        "converge: the following required arguments were not provided: <FILE>... (see 'converge --help')",
        2,
    );
}

#[test]
fn an_unknown_flag() {
    assert_one_line(
        &converge(&["status", "--bogus", "x"]),
        "converge: unexpected argument '--bogus' found (see 'converge --help')",
        2,
    );
}

#[test]
fn a_bad_now() {
    assert_one_line(
        &converge(&["status", "--now", "yesterday", "x.yaml"]),
        "converge: invalid --now \"yesterday\": expected an RFC 3339 time such as 2025-01-01T00:00:00Z",
        2,
    );
}

#[test]
fn a_bad_revision() {
    assert_one_line(
        &converge(&["rollout-status", "x.yaml", "--revision", "abc"]),
        "converge: invalid value 'abc' for '--revision <N>': invalid digit found in string (see 'converge --help')",
        2,
    );
}

#[test]
fn a_file_that_does_not_exist() {
    assert_one_line(
        &converge(&["status", "/nonexistent/web.yaml"]),
        "converge: /nonexistent/web.yaml: no such file or directory",
        1,
    );
    assert_one_line(
        &converge(&["rollout-status", "/nonexistent/web.yaml"]),
        "converge: /nonexistent/web.yaml: no such file or directory",
        1,
    );
}

#[test]
fn a_directory() {
    let dir = fixture("kstatus");
    let dir = dir.to_str().expect("UTF-8");
    assert_one_line(
        &converge(&["status", dir]),
        &format!("converge: {dir}: is a directory"),
        1,
    );
}

#[test]
fn one_bad_file_among_good_ones_prints_nothing_but_the_error() {
    let good = fixture("kstatus/pvc.yaml");
    let run = converge(&["status", good.to_str().expect("UTF-8"), "/nonexistent.yaml"]);
    assert_one_line(
        &run,
        "converge: /nonexistent.yaml: no such file or directory",
        1,
    );
}

fn stdin_error(input: &[u8]) -> common::Run {
    converge_with_stdin(&["status", "-"], Some(input))
}

#[test]
fn malformed_yaml_reports_line_and_column() {
    let run = stdin_error(b"kind: Pod\nmetadata:\n  name: a\n  labels: [a\n");
    assert_eq!(run.stdout, "");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("converge: <stdin>: line "),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn malformed_json_reports_line_and_column() {
    assert_one_line(
        &stdin_error(b"{\"kind\": \"Pod\",\n  \"metadata\": }\n"),
        "converge: <stdin>: line 2, column 15: expected value",
        1,
    );
}

#[test]
fn duplicate_keys_are_refused() {
    assert_one_line(
        &stdin_error(b"kind: Pod\nmetadata:\n  name: a\n  name: b\n"),
        "converge: <stdin>: line 4, column 3: metadata: duplicate key \"name\"",
        1,
    );
}

#[test]
fn empty_input_is_refused() {
    assert_one_line(
        &stdin_error(b"\n# nothing here\n"),
        "converge: <stdin>: the input is empty: no Kubernetes objects found",
        1,
    );
}

#[test]
fn a_document_that_is_not_an_object_is_refused() {
    assert_one_line(
        &stdin_error(b"kind: Pod\n---\n42\n"),
        "converge: <stdin>: line 3, column 1: the document is a number, expected a Kubernetes object (a mapping)",
        1,
    );
}

#[test]
fn nan_is_refused() {
    assert_one_line(
        &stdin_error(b"kind: Pod\nspec:\n  replicas: .nan\n"),
        "converge: <stdin>: line 3, column 13: spec.replicas: NaN and infinite numbers are not allowed (JSON cannot hold them)",
        1,
    );
}

#[test]
fn binary_garbage_is_refused() {
    assert_one_line(
        &stdin_error(b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        "converge: <stdin>: line 1, column 1: control character U+007F is not allowed (binary data?)",
        1,
    );
    assert_one_line(
        &stdin_error(b"kind: Pod\n\xc3\x28\n"),
        "converge: <stdin>: line 2, column 1: the input is not UTF-8 text (binary data?)",
        1,
    );
}

#[test]
fn oversized_input_is_refused() {
    let mut big = b"kind: Pod\nx: \"".to_vec();
    big.resize(9 * 1024 * 1024, b'a');
    let run = stdin_error(&big);
    assert_one_line(
        &run,
        "converge: <stdin>: the input is 8388609 bytes; the limit is 8388608 bytes (8 MiB)",
        1,
    );
}

#[test]
fn no_input_ever_panics() {
    for input in [
        &b"["[..],
        b"{",
        b"- - - -",
        b"kind: [",
        b"&a [*a]",
        b"!!binary aGVsbG8=",
        b"kind: !custom x",
        b"? [a, b]\n: c\n",
        b"kind: Pod\nstatus: 5\n",
        b"kind: Pod\nstatus: {phase: Running, containerStatuses: 3}\n",
        b"apiVersion: apps/v1\nkind: Deployment\nstatus: {conditions: [1, 2]}\n",
    ] {
        let run = stdin_error(input);
        assert!(
            !run.stderr.contains("panicked") && !run.stderr.contains("internal error"),
            "{:?}: {}",
            String::from_utf8_lossy(input),
            run.stderr
        );
        assert!(run.stderr.lines().count() <= 1, "{}", run.stderr);
    }
}

#[test]
fn help_goes_to_stdout_and_succeeds() {
    let run = converge(&["--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("rollout-status"));
    assert_eq!(run.stderr, "");
}

#[test]
fn the_version_names_the_kubernetes_release_modelled() {
    let run = converge(&["--version"]);
    assert_eq!(
        run.stdout,
        format!(
            "converge {} (models Kubernetes v{})\n",
            env!("CARGO_PKG_VERSION"),
            converge_core::KUBERNETES_VERSION
        )
    );
    assert_eq!(run.code, 0);
}
