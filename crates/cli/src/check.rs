//! `converge check SCENARIO...`: runs each scenario, prints one PASS/FAIL line per expectation
//! and a summary; exit 1 if anything failed.

use clap::Args;
use converge_core::scenario::RunOptions;

use crate::{scenario_file, CliError, CommandResult};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files (JSON or YAML).
    #[arg(value_name = "SCENARIO", required = true)]
    scenarios: Vec<String>,
}

pub fn run(args: &CheckArgs) -> CommandResult {
    // Every file is loaded before anything runs, so bad input fails fast with one line.
    let mut loaded = Vec::new();
    for path in &args.scenarios {
        loaded.push((
            scenario_file::label(path),
            scenario_file::read_scenario(path)?,
        ));
    }
    let (mut passed, mut failed) = (0usize, 0usize);
    // Only the results are printed, so the runs keep no trace or event log.
    let options = RunOptions {
        records: false,
        ..RunOptions::default()
    };
    let last = loaded.len().saturating_sub(1);
    for (i, (name, scenario)) in loaded.iter().enumerate() {
        let outcome = scenario
            .run(&options)
            .map_err(|e| CliError::input(format!("{name}: {e}")))?;
        for r in &outcome.results {
            if r.passed {
                passed += 1;
                println!("PASS {name}: {}", r.line());
            } else {
                failed += 1;
                println!("FAIL {name}: {}", r.line());
            }
        }
        for p in outcome.run.problems() {
            failed += 1;
            println!("FAIL {name}: {p}");
            eprintln!("converge: {name}: {p}");
        }
        if outcome.results.is_empty() && outcome.run.problems().is_empty() {
            println!("PASS {name}: runs (no expectations)");
        }
        if i == last {
            // The process ends next and the system takes its memory back at once; freeing a
            // large world object by object would cost about a tenth of its run (BENCHMARKS.md,
            // session 25).
            std::mem::forget(outcome);
        }
    }
    let files = loaded.len();
    let noun = if files == 1 { "scenario" } else { "scenarios" };
    if failed == 0 {
        println!("ok: {passed} passed, 0 failed in {files} {noun}");
        Ok(0)
    } else {
        println!("FAILED: {passed} passed, {failed} failed in {files} {noun}");
        Ok(1)
    }
}
