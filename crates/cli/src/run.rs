//! `converge run SCENARIO [--seed N] [--until converged|<duration>] [--json]`: runs a scenario
//! headless and prints the engine's trace, one line per event, or one JSON document.

use clap::Args;
use converge_core::json::{json, Value};
use converge_core::scenario::{RunOptions, Until};

use crate::{scenario_file, CliError, CommandResult};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file (JSON or YAML; `-` for stdin).
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Stop when converged (the default) or at a simulated time such as 30s, 2m, 1500ms.
    #[arg(long, value_name = "converged|DURATION", value_parser = parse_until)]
    until: Option<Until>,
    /// Print one JSON document {time_ms, objects, audit, events} instead of the trace.
    #[arg(long)]
    json: bool,
}

fn parse_until(s: &str) -> Result<Until, String> {
    Until::parse(s)
}

pub fn run(args: &RunArgs) -> CommandResult {
    let scenario = scenario_file::read_scenario(&args.scenario)?;
    let options = RunOptions {
        seed: args.seed,
        until: args.until,
        ..RunOptions::default()
    };
    let name = scenario_file::label(&args.scenario);
    let outcome = scenario
        .run(&options)
        .map_err(|e| CliError::input(format!("{name}: {e}")))?;
    let world = outcome.run.world();
    if args.json {
        let objects: Vec<Value> = world.objects().map(|(_, o)| (**o).clone()).collect();
        let audit: Vec<Value> = outcome
            .run
            .audit()
            .iter()
            .map(|a| converge_core::json::to_value(a).unwrap_or(Value::Null))
            .collect();
        let events: Vec<Value> = outcome
            .run
            .events()
            .iter()
            .map(|e| {
                json!({
                    "time_ms": e.time.as_ms(),
                    "lane": &*e.lane,
                    "line": &*e.line,
                    "requests": e.requests,
                    "changes": e.changed.iter().map(|k| k.path()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let doc = json!({
            "time_ms": world.now().as_ms(),
            "objects": objects,
            "audit": audit,
            "events": events,
        });
        println!("{}", serde_json::to_string(&doc).unwrap_or_default());
    } else {
        for line in world.trace() {
            println!("{line}");
        }
    }
    let problem = outcome.run.problems().first().map(ToString::to_string);
    // As `check` does: the process ends next, so the world is not freed object by object.
    std::mem::forget(outcome);
    if let Some(p) = problem {
        return Err(CliError::input(format!("{name}: {p}")));
    }
    Ok(0)
}
