//! `weft sim run FILE`: replays a scenario and prints JSON lines on standard output.
//!
//! Exit status: 0 when the scenario ran; 2 when the scenario file or its initial configuration
//! is invalid (or unreadable); 1 when the run itself failed (the scheduler refused an event the
//! scenario cannot go on without, or standard output broke).

use crate::clock::WallClock;
use crate::scale;
use crate::sim_summary::{Summary, SummaryWhen};
use anyhow::Context;
use clap::Subcommand;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use weft_sched::WalkMode;
use weft_sim::{initial_config, parse_scenario, run, CpuClock, Driver, ZeroClock};

/// Simulator subcommands.
#[derive(Subcommand)]
pub(crate) enum SimCommand {
    /// Replay a scenario file through the scheduler and print what happened as JSON lines.
    ///
    /// With --sls, --synth or --preset instead of a scenario file, run a production-scale
    /// workload and report CPS, validSchedule, fairness and waits.
    Run {
        /// The scenario file (TOML).
        file: Option<PathBuf>,
        /// Report scheduler_cpu_ms as 0 so that the output is byte-identical across runs.
        #[arg(long)]
        deterministic: bool,
        /// After a scenario's JSON lines, print a human summary: auto (when standard output
        /// is a terminal), always or never.
        #[arg(long, value_enum, default_value_t = SummaryWhen::Auto)]
        summary: SummaryWhen,
        /// The workload of a scale run.
        #[command(flatten)]
        workload: scale::WorkloadArgs,
        /// Outputs of a scale run.
        #[command(flatten)]
        output: scale::OutputArgs,
        /// The walk a scale run uses (fast or reference).
        #[arg(long, value_enum, default_value_t = scale::Algorithm::Fast)]
        algorithm: scale::Algorithm,
    },
    /// Measure the scheduler on a workload (default --preset meituan) and print JSON.
    Bench(scale::BenchArgs),
    /// Run one workload (default --preset preemption) once per Fair Scheduler preemption
    /// strategy, targeted (Hadoop 3.x) then global (Hadoop 2.7), with preemption on, and print
    /// their figures side by side: containers preempted and warned, work lost (the run time
    /// preempted containers had behind them, in container-seconds), and how long a starved
    /// leaf took to reach its share (p50/p99; starved = usage under half of min(fair share,
    /// demand), reached = 90% of it, sampled every second), with fairness and completion
    /// times. The workload's allocation file decides the timeouts (Hadoop's default is never).
    ComparePreemption(scale::CompareArgs),
    /// Measure time-aware demands (issue 17): the spec's `deadline-mix` trace through the
    /// real RM core (virtual NMs and AMs, virtual time) under each configuration: plain Fair,
    /// Rayon-compatible reservations, Weft demands (and demands admitted without a plan);
    /// prints deadline hit rate, admission, effective SLA, utilisation, best-effort slowdown,
    /// honesty and planning cost per configuration, or JSON with --json.
    Deadline(crate::sim_deadline::DeadlineArgs),
}

/// Why the command failed, which decides the exit status.
enum Failure {
    /// The input is invalid: exit 2.
    Input(anyhow::Error),
    /// The run failed: exit 1.
    Run(anyhow::Error),
}

pub(crate) fn main(command: SimCommand) -> ExitCode {
    let outcome = match command {
        SimCommand::Run {
            file: Some(file),
            deterministic,
            summary,
            workload,
            output,
            ..
        } => {
            if workload.is_given() || output.json || output.report.is_some() {
                Err(Failure::Input(anyhow::anyhow!(
                    "a scenario file and --sls/--synth/--preset/--json/--report do not go together"
                )))
            } else if workload.scheduler != scale::ScaleScheduler::Fair {
                Err(Failure::Input(anyhow::anyhow!(
                    "--scheduler goes with --sls/--synth/--preset: a scenario file names its scheduler itself (`scheduler = \"capacity\"`)"
                )))
            } else {
                let wanted = summary.wanted(std::io::stdout().is_terminal());
                run_file(&file, deterministic, wanted)
            }
        }
        SimCommand::Run {
            file: None,
            workload,
            output,
            algorithm,
            ..
        } => {
            let walk = match algorithm {
                scale::Algorithm::Fast => Ok(WalkMode::Fast),
                scale::Algorithm::Reference => Ok(WalkMode::Reference),
                scale::Algorithm::Both => Err(Failure::Input(anyhow::anyhow!(
                    "--algorithm both is for `weft sim bench`"
                ))),
            };
            walk.and_then(|walk| scale::run(&workload, &output, walk).map_err(Failure::Run))
        }
        SimCommand::Bench(args) => scale::bench(&args).map_err(Failure::Run),
        SimCommand::ComparePreemption(args) => {
            scale::compare_preemption(&args).map_err(Failure::Run)
        }
        SimCommand::Deadline(args) => match args.configurations() {
            Ok(configurations) => {
                crate::sim_deadline::run(&args, &configurations).map_err(Failure::Run)
            }
            Err(e) => Err(Failure::Input(e)),
        },
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run_file(file: &Path, deterministic: bool, summarize: bool) -> Result<(), Failure> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read {}", file.display()))
        .map_err(Failure::Input)?;
    let shown = file.display().to_string();
    let mut scenario = parse_scenario(&text, &shown).map_err(|e| Failure::Input(e.into()))?;
    if let Some(needed) = scenario.needed_file() {
        let path = file.parent().unwrap_or(Path::new(".")).join(needed);
        let contents = std::fs::read_to_string(&path)
            .with_context(|| format!("{shown}: allocations_file: cannot read {}", path.display()))
            .map_err(Failure::Input)?;
        scenario.provide_file(contents);
    }
    let initial = initial_config(&scenario).map_err(|e| Failure::Input(e.into()))?;
    for warning in &initial.warnings {
        eprintln!("warning: {warning}");
    }

    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut write_error: Option<std::io::Error> = None;
    let mut summary = Summary::default();
    let mut sink = |line: &str| {
        if summarize {
            summary.add(line);
        }
        if write_error.is_none() {
            if let Err(e) = writeln!(out, "{line}") {
                write_error = Some(e);
            }
        }
    };
    let mut zero = ZeroClock;
    let mut wall = WallClock::start();
    let clock: &mut dyn CpuClock = if deterministic { &mut zero } else { &mut wall };
    let result = match scenario.driver {
        Driver::Scheduler => run(&scenario, initial.config, clock, &mut sink)
            .map(|_| ())
            .map_err(anyhow::Error::new),
        Driver::Rm => weft_demand_sim::run_scenario(&scenario, initial.config, &mut sink)
            .map(|_| ())
            .map_err(anyhow::Error::new),
    };
    if summarize && result.is_ok() && write_error.is_none() {
        if let Err(e) = write!(out, "{}", summary.render(&shown)) {
            write_error = Some(e);
        }
    }
    let flushed = out.flush();
    if let Some(e) = write_error {
        return Err(Failure::Run(
            anyhow::Error::new(e).context("cannot write to standard output"),
        ));
    }
    flushed
        .context("cannot write to standard output")
        .map_err(Failure::Run)?;
    result.map_err(Failure::Run)
}
