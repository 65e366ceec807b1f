//! `converge rollout-status FILE [--revision N]`: what `kubectl rollout status` prints.

use converge_core::rollout::rollout_status;

use crate::{input, CliError, CommandResult, EXIT_FAILURE};

/// Exit code while the rollout is still in progress.
pub const EXIT_IN_PROGRESS: u8 = 3;

#[derive(Debug, clap::Args)]
pub struct RolloutStatusArgs {
    /// A file holding one Deployment, DaemonSet or StatefulSet (JSON or YAML); `-` is stdin.
    #[arg(value_name = "FILE")]
    file: String,
    /// Pin to a Deployment revision (kubectl's --revision); 0 means any.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    revision: Option<i64>,
}

pub fn run(args: &RolloutStatusArgs) -> CommandResult {
    let objects = input::read_objects(&args.file)?;
    let [obj] = objects.as_slice() else {
        return Err(kubectl_error(
            "rollout status is only supported on individual resources and resource collections are not supported yet",
        ));
    };
    match rollout_status(obj, args.revision) {
        Ok(status) => {
            print!("{}", status.message);
            Ok(if status.done { 0 } else { EXIT_IN_PROGRESS })
        }
        Err(e) => Err(kubectl_error(&e.message)),
    }
}

/// kubectl prints its errors as `error: <text>` and exits 1.
fn kubectl_error(text: &str) -> CliError {
    CliError {
        message: format!("error: {text}"),
        exit_code: EXIT_FAILURE,
    }
}
