//! `weft sim deadline`: the comparison of time-aware-demands §4 (crate `weft-demand-sim`), and
//! with `--seeds` §5 D1's bench: the summary over seeds and §4.4's targets judged.

use anyhow::Context;
use clap::Args;
use weft_demand_sim::report::{bench_table, table};
use weft_demand_sim::{bench, compare_with, parse_seeds, Configuration, MixParams};

/// The `deadline-mix` trace and the configurations to run on it.
#[derive(Args)]
pub(crate) struct DeadlineArgs {
    /// Configurations, comma-separated: fair, capacity, rayon, demands, demands-unplanned.
    #[arg(long, default_value = "fair,capacity,rayon,demands")]
    configs: String,
    /// Offered load: vcore-seconds of tasks and AMs over the cluster's (1.0 = 100%; there the
    /// best-effort backlog grows without bound and a run takes many minutes).
    #[arg(long, default_value_t = 0.85)]
    load: f64,
    /// The trace's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run every seed of a range (`1..10`, both ends included) or list (`1,4`) and print the
    /// summary over them with the spec's targets judged pass/fail (§5 D1); overrides --seed.
    #[arg(long)]
    seeds: Option<String>,
    /// The mis-estimation variant: each task runs its estimate × LogNormal(mean 1, sd this);
    /// the spec's is 0.2. Deadlines, reservations and demands keep the estimates.
    #[arg(long, default_value_t = 0.0)]
    misestimate: f64,
    /// The fault variant: this many nodes stop heartbeating at --node-loss-at (the RM finds
    /// them LOST after its NM expiry, 600 s); `spec` is the spec's 8 of 256 nodes, scaled.
    #[arg(long)]
    node_loss: Option<String>,
    /// When the nodes are lost, hours from the start (default: half of --hours).
    #[arg(long)]
    node_loss_at: Option<f64>,
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
            && self.drain_hours >= 0.0
            && self.misestimate.is_finite()
            && self.misestimate >= 0.0
            && self.node_loss_at.is_none_or(|h| h.is_finite() && h >= 0.0);
        anyhow::ensure!(
            valid,
            "--load, --hours and --nodes must be positive, --warmup-minutes, --drain-hours, --misestimate and --node-loss-at not negative"
        );
        self.params()?;
        if let Some(seeds) = &self.seeds {
            parse_seeds(seeds)?;
        }
        Ok(configurations)
    }

    fn params(&self) -> anyhow::Result<MixParams> {
        let mut params = MixParams {
            nodes: self.nodes,
            hours: self.hours,
            warmup_minutes: self.warmup_minutes,
            load: self.load,
            seed: self.seed,
            drain_hours: self.drain_hours,
            misestimate_sd: self.misestimate,
            ..MixParams::default()
        };
        match self.node_loss.as_deref() {
            None => {}
            Some("spec") => params = params.with_spec_node_loss(),
            Some(count) => {
                params.lost_nodes = count.parse().map_err(|_| {
                    anyhow::anyhow!("--node-loss: a node count or `spec`, not '{count}'")
                })?;
                anyhow::ensure!(
                    params.lost_nodes < params.nodes,
                    "--node-loss {} leaves no node of {}",
                    params.lost_nodes,
                    params.nodes
                );
                params.loss_at_hours = params.hours / 2.0;
            }
        }
        if let Some(at) = self.node_loss_at {
            params.loss_at_hours = at;
        }
        Ok(params)
    }
}

pub(crate) fn run(args: &DeadlineArgs, configurations: &[Configuration]) -> anyhow::Result<()> {
    let params = args.params()?;
    if let Some(seeds) = &args.seeds {
        let seeds = parse_seeds(seeds)?;
        let bench = bench(&params, &seeds, configurations, |seed, r| {
            eprintln!("seed {seed} {}: done in {:.1} s", r.configuration, r.wall_s)
        })
        .context("deadline-mix bench")?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&bench)?);
        } else {
            print!("{}", bench_table(&bench));
        }
        return Ok(());
    }
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
