//! `converge export SCENARIO`: the scenario as a shell script of kubectl commands, to replay the
//! same story on a real cluster (core's `scenario::export`).

use clap::Args as ClapArgs;

use crate::{scenario_file, CliError, CommandResult};

#[derive(Debug, ClapArgs)]
pub struct ExportArgs {
    /// The scenario file (or plain Kubernetes manifests; `-` for stdin).
    #[arg(value_name = "SCENARIO")]
    scenario: String,
}

pub fn run(args: &ExportArgs) -> CommandResult {
    let scenario = scenario_file::read_scenario(&args.scenario)?;
    let name = scenario_file::label(&args.scenario);
    let script = converge_core::scenario::export::export(&scenario)
        .map_err(|e| CliError::input(format!("{name}: {e}")))?;
    print!("{script}");
    Ok(0)
}
