//! `converge`: a thin native shell over converge-core.
//!
//! Each subcommand lives in its own module and returns an [`CommandResult`]: the exit code it wants, or
//! a [`CliError`] printed as one line on stderr. Argument parsing is clap's; its multi-line
//! errors are folded into one line too, so no input ever yields a panic or a backtrace.

mod check;
mod export;
mod input;
mod rollout_status;
mod run;
mod scenario_file;
mod serve;
mod status;
mod why;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc, not the platform's malloc: in large worlds glibc's slow path made each event
/// several times dearer than in small ones (ARCHITECTURE.md, "Native allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `converge --version`: the tool's own version and the Kubernetes release it models
/// (`converge_core::KUBERNETES_VERSION`; a test keeps the two equal).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (models Kubernetes v1.32)");

/// Kubernetes health verdicts and rollout status, as kstatus and kubectl compute them.
#[derive(Debug, Parser)]
#[command(name = "converge", version = VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print kstatus' verdict for every object in FILE... as one JSON line each.
    ///
    /// Each line is {"apiVersion","kind","namespace","name","status","message","conditions"},
    /// with status InProgress, Failed, Current or Terminating and the Reconciling/Stalled
    /// condition kstatus computes. An object kstatus cannot judge (say, a wrongly typed
    /// metadata.generation) gets status Unknown with kstatus' error as message. Exit 0 unless a
    /// FILE cannot be read or parsed.
    Status(status::StatusArgs),
    /// Print what `kubectl rollout status` prints for the object in FILE.
    ///
    /// Exit 0 when the rollout is done, 3 while in progress, 1 on kubectl's errors.
    RolloutStatus(rollout_status::RolloutStatusArgs),
    /// Run a scenario headless and print the trace, one line per event.
    ///
    /// With --json, print one JSON document {time_ms, objects, audit, events}. Exit 1 when the
    /// scenario cannot be loaded or an action's target does not exist.
    Run(run::RunArgs),
    /// Run scenarios and print PASS/FAIL per expectation, then a summary.
    ///
    /// Exit 0 when every expectation passes, 1 otherwise.
    Check(check::CheckArgs),
    /// Print the scenario as a shell script of kubectl commands, for a real cluster.
    ///
    /// The objects are created as admin, each action runs as its principal (kubectl --as) after
    /// the pause its time gives; faults and image behaviours become comments.
    Export(export::ExportArgs),
    /// Serve the simulated cluster as a Kubernetes API over HTTPS, for kubectl and clients.
    ///
    /// Writes a kubeconfig with one context per principal (admin, alice, bob, app). Time runs
    /// at --speed times real time, or only through POST /converge/v1/step and
    /// /converge/v1/run?until=converged with --manual. Runs until interrupted.
    Serve(serve::ServeArgs),
    /// Print why FIELD of TARGET has its value: the chain of writes, reconciles and watch
    /// events back to its root (a user's request, a fault, the cluster's set-up).
    ///
    /// One hop per line, root last; with --json one document. The scenario runs to --at (its
    /// end without it). Exit 2 when the target, the field or the time is wrong.
    Why(why::WhyArgs),
}

/// Exit code for bad input (unreadable, unparseable) and for kubectl's errors.
const EXIT_FAILURE: u8 = 1;
/// Exit code for a command line clap refuses.
const EXIT_USAGE: u8 = 2;

/// An error for stderr: one line, and the exit code that goes with it.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub exit_code: u8,
}

impl CliError {
    pub fn input(message: impl Into<String>) -> Self {
        CliError {
            message: format!("converge: {}", message.into()),
            exit_code: EXIT_FAILURE,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: format!("converge: {}", message.into()),
            exit_code: EXIT_USAGE,
        }
    }
}

/// What a subcommand ends with: an exit code after its output, or an error line.
pub type CommandResult = Result<u8, CliError>;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let detail = info.to_string().replace('\n', " ");
        eprintln!("converge: internal error: {detail}");
    }));

    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    let outcome = match cli.command {
        Command::Status(args) => status::run(&args),
        Command::RolloutStatus(args) => rollout_status::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Why(args) => why::run(&args),
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("{}", one_line(&err.message));
            ExitCode::from(err.exit_code)
        }
    }
}

/// Help and version go to stdout as clap prints them; every other clap error becomes one line.
fn clap_exit(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print!("{}", e.render());
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprintln!(
                "converge: a subcommand is required: status, rollout-status, run or check (see 'converge --help')"
            );
            ExitCode::from(EXIT_USAGE)
        }
        _ => {
            // clap's message is its first paragraph; usage and tips follow a blank line.
            let rendered = e.render().to_string();
            let paragraph: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .collect();
            let text = paragraph.join(" ");
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprintln!("converge: {text} (see 'converge --help')");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn one_line(message: &str) -> String {
    message.trim_end().replace('\n', " ")
}
