//! The comparison without the `weft` binary (a release build of this crate alone is a few
//! minutes, the CLI's is much longer): `cargo run --release -p weft-demand-sim --example
//! deadline_mix -- [nodes=64] [hours=2] [warmup=15] [load=1.0] [seed=1] [seeds=1..3]
//! [misestimate=0.2] [node_loss=N|spec] [node_loss_at=HOURS]
//! [configs=fair,capacity,rayon,demands,demands-unplanned] [json=PATH]`. With `seeds` it runs
//! §5 D1's bench (the summary over the seeds and §4.4's targets judged).

use std::process::ExitCode;

use weft_demand_sim::report::{bench_table, table};
use weft_demand_sim::{bench, compare_with, parse_seeds, Configuration, MixParams};

fn main() -> ExitCode {
    let mut params = MixParams::default();
    let mut configs: Vec<Configuration> = Configuration::DEFAULT.to_vec();
    let mut json = None;
    let mut seeds = None;
    let mut spec_loss = false;
    let mut loss_at = None;
    for arg in std::env::args().skip(1) {
        let Some((key, value)) = arg.split_once('=') else {
            eprintln!("arguments are key=value: {arg}");
            return ExitCode::FAILURE;
        };
        let parsed = match key {
            "nodes" => value.parse().map(|v| params.nodes = v).is_ok(),
            "hours" => value.parse().map(|v| params.hours = v).is_ok(),
            "warmup" => value.parse().map(|v| params.warmup_minutes = v).is_ok(),
            "load" => value.parse().map(|v| params.load = v).is_ok(),
            "seed" => value.parse().map(|v| params.seed = v).is_ok(),
            "misestimate" => value.parse().map(|v| params.misestimate_sd = v).is_ok(),
            "node_loss" if value == "spec" => {
                spec_loss = true;
                true
            }
            "node_loss" => value.parse().map(|v| params.lost_nodes = v).is_ok(),
            "node_loss_at" => value.parse().map(|v| loss_at = Some(v)).is_ok(),
            "seeds" => match parse_seeds(value) {
                Ok(s) => {
                    seeds = Some(s);
                    true
                }
                Err(e) => {
                    eprintln!("{e}");
                    false
                }
            },
            "configs" => match value
                .split(',')
                .map(str::parse)
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(c) => {
                    configs = c;
                    true
                }
                Err(e) => {
                    eprintln!("{e}");
                    false
                }
            },
            "json" => {
                json = Some(value.to_string());
                true
            }
            _ => false,
        };
        if !parsed {
            eprintln!("bad argument: {arg}");
            return ExitCode::FAILURE;
        }
    }
    if spec_loss {
        params = params.with_spec_node_loss();
    } else if params.lost_nodes > 0 {
        params.loss_at_hours = params.hours / 2.0;
    }
    if let Some(at) = loss_at {
        params.loss_at_hours = at;
    }
    let (text, value) = match seeds {
        Some(seeds) => match bench(&params, &seeds, &configs, |seed, r| {
            eprintln!("seed {seed} {}: done in {:.1} s", r.configuration, r.wall_s)
        }) {
            Ok(b) => (bench_table(&b), serde_json::to_string_pretty(&b)),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        },
        None => match compare_with(&params, &configs, |r| {
            eprintln!("{}: done in {:.1} s", r.configuration, r.wall_s)
        }) {
            Ok(c) => (table(&c), serde_json::to_string_pretty(&c)),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        },
    };
    print!("{text}");
    if let Some(path) = json {
        let written = value
            .map_err(|e| e.to_string())
            .and_then(|v| std::fs::write(&path, v).map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
