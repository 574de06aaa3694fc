//! The comparison without the `weft` binary (a release build of this crate alone is a few
//! minutes, the CLI's is much longer): `cargo run --release -p weft-demand-sim --example
//! deadline_mix -- [nodes=64] [hours=2] [warmup=15] [load=1.0] [seed=1]
//! [configs=fair,rayon,demands,demands-unplanned] [json=PATH]`.

use std::process::ExitCode;

use weft_demand_sim::report::table;
use weft_demand_sim::{compare_with, Configuration, MixParams};

fn main() -> ExitCode {
    let mut params = MixParams::default();
    let mut configs: Vec<Configuration> = Configuration::ALL.to_vec();
    let mut json = None;
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
    match compare_with(&params, &configs, |r| {
        eprintln!("{}: done in {:.1} s", r.configuration, r.wall_s)
    }) {
        Ok(comparison) => {
            print!("{}", table(&comparison));
            if let Some(path) = json {
                let text = serde_json::to_string_pretty(&comparison).unwrap_or_default();
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("{path}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
