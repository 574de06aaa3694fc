//! `weft sim deadline`: the comparison of time-aware-demands §4 (crate `weft-demand-sim`).

use anyhow::Context;
use clap::Args;
use weft_demand_sim::report::table;
use weft_demand_sim::{compare_with, Configuration, MixParams};

/// The `deadline-mix` trace and the configurations to run on it.
#[derive(Args)]
pub(crate) struct DeadlineArgs {
    /// Configurations, comma-separated: fair, rayon, demands, demands-unplanned.
    #[arg(long, default_value = "fair,rayon,demands,demands-unplanned")]
    configs: String,
    /// Offered load: vcore-seconds of tasks and AMs over the cluster's (1.0 = 100%; there the
    /// best-effort backlog grows without bound and a run takes many minutes).
    #[arg(long, default_value_t = 0.85)]
    load: f64,
    /// The trace's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Nodes of 128 GiB / 32 vcores (job sizes scale with them; the spec's are for 256).
    #[arg(long, default_value_t = 64)]
    nodes: u32,
    /// Hours of arrivals.
    #[arg(long, default_value_t = 2.0)]
    hours: f64,
    /// Minutes of warm-up before utilisation is measured.
    #[arg(long, default_value_t = 15.0)]
    warmup_minutes: f64,
    /// Hours jobs may still run after the last arrival.
    #[arg(long, default_value_t = 1.0)]
    drain_hours: f64,
    /// Print the comparison as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

impl DeadlineArgs {
    pub(crate) fn configurations(&self) -> anyhow::Result<Vec<Configuration>> {
        let configurations = self
            .configs
            .split(',')
            .map(|c| c.trim().parse::<Configuration>())
            .collect::<Result<Vec<_>, _>>()?;
        let valid = self.load > 0.0
            && self.hours > 0.0
            && self.nodes > 0
            && self.warmup_minutes >= 0.0
            && self.drain_hours >= 0.0;
        anyhow::ensure!(
            valid,
            "--load, --hours and --nodes must be positive, --warmup-minutes and --drain-hours not negative"
        );
        Ok(configurations)
    }
}

pub(crate) fn run(args: &DeadlineArgs, configurations: &[Configuration]) -> anyhow::Result<()> {
    let params = MixParams {
        nodes: args.nodes,
        hours: args.hours,
        warmup_minutes: args.warmup_minutes,
        load: args.load,
        seed: args.seed,
        drain_hours: args.drain_hours,
    };
    let comparison = compare_with(&params, configurations, |r| {
        eprintln!("{}: done in {:.1} s", r.configuration, r.wall_s)
    })
    .context("deadline-mix run")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", table(&comparison));
    }
    Ok(())
}
