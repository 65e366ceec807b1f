//! `converge`: a thin native shell over converge-core.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("converge: no subcommands yet");
    ExitCode::from(2)
}
