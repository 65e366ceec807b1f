//! `converge why SCENARIO TARGET FIELD [--at TIME] [--json]`: runs a scenario headless to TIME
//! (the scenario's end without it) and prints why FIELD of TARGET has its value then: the write
//! that last changed it, the reconcile that sent the write, what queued that reconcile, and so
//! on, one hop per line, root last.

use clap::Args;
use converge_core::scenario::{Duration, FieldPath, RunOptions, Until};
use converge_core::time::SimTime;

use crate::{scenario_file, CliError, CommandResult};

#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The scenario file (JSON or YAML; `-` for stdin).
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// The object: resource[.group]/[namespace/]name, e.g. deployments/default/web, or
    /// pods/default/{app=web} for the first matching object.
    #[arg(value_name = "TARGET")]
    target: String,
    /// The field: status.readyReplicas, status.conditions[type=Available].status, or a JSON
    /// pointer.
    #[arg(value_name = "FIELD")]
    field: String,
    /// The simulated time to ask about, such as 30s, 2m, 1500ms (the scenario runs to it).
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse)]
    at: Option<Duration>,
    /// Print the chain as one JSON document instead of one hop per line.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &WhyArgs) -> CommandResult {
    let scenario = scenario_file::read_scenario(&args.scenario)?;
    let field = FieldPath::parse(&args.field).map_err(CliError::usage)?;
    let options = RunOptions {
        until: args.at.map(Until::Time),
        ..RunOptions::default()
    };
    let name = scenario_file::label(&args.scenario);
    let outcome = scenario
        .run(&options)
        .map_err(|e| CliError::input(format!("{name}: {e}")))?;
    let key = outcome
        .run
        .resolve_key(&args.target)
        .map_err(|m| CliError::usage(format!("{name}: {m}")))?;
    let at = args.at.map(|d| SimTime::from_ms(d.ms()));
    let world = outcome.run.world();
    let chain = world
        .why(&key, &field, at)
        .map_err(|e| CliError::usage(format!("{name}: {e}")))?;
    if args.json {
        let doc =
            serde_json::to_string(&chain).map_err(|e| CliError::input(format!("{name}: {e}")))?;
        println!("{doc}");
    } else {
        for line in chain.lines() {
            println!("{line}");
        }
    }
    Ok(0)
}
