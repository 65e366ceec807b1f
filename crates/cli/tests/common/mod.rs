//! Helpers shared by the CLI integration tests: run the built binary, find fixtures.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What one run of `converge` produced.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// `tests/fixtures/<rel>` at the repository root.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

pub fn converge(args: &[&str]) -> Run {
    converge_with_stdin(args, None)
}

pub fn converge_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_converge"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the converge binary runs");
    if let Some(bytes) = stdin {
        // converge stops reading at its size limit; a broken pipe then is expected.
        let written = child.stdin.take().expect("stdin is piped").write_all(bytes);
        if let Err(e) = written {
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe,
                "writing stdin: {e}"
            );
        }
    }
    let out = child.wait_with_output().expect("converge finishes");
    Run {
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        code: out.status.code().unwrap_or(-1),
    }
}
