//! The meituan preset in another shape, timed with the real clock: which of nodes, node size,
//! apps or queues makes an event expensive. Usage:
//! `shape NODES VCORES_PER_NODE APPS QUEUES [END_SECONDS]` (4 GiB per vcore, 40 leaves per
//! parent). Prints allocations, CPS and the mean time of each kind of event.
//!
//! For example, `shape 12000 100 10000 2000` is the full preset and `shape 1200 100 10000 2000`
//! keeps its apps and queues on a tenth of the nodes.

use std::time::Instant;
use weft_sim::presets::MeituanParams;
use weft_sim::scale::{run_scale, workload_config, ScaleOptions};
use weft_types::{Duration, Resource, Time};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|s| {
            s.parse::<u64>()
                .map_err(|e| format!("'{s}' is not a count: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let [nodes, vcores, apps, queues, rest @ ..] = args.as_slice() else {
        return Err("usage: shape NODES VCORES_PER_NODE APPS QUEUES [END_SECONDS]".into());
    };
    let count = |n: u64| u32::try_from(n).map_err(|_| format!("{n} is too large"));
    let vcores = i64::try_from(*vcores)?;
    let mut params = MeituanParams::full();
    params.nodes = count(*nodes)?;
    params.node = Resource::new(4 * 1024 * vcores, vcores);
    params.apps = count(*apps)?;
    params.queues = count(*queues)?;
    params.parents = params.queues.div_ceil(40).max(1);
    let end = rest.first().copied().unwrap_or(120);
    let workload = params.workload(0);
    let (config, _) = workload_config(&workload, "meituan")?;
    let options = ScaleOptions {
        verify_every: None,
        end_override: Some(Time::ZERO + Duration::from_secs(end)),
        ..ScaleOptions::default()
    };
    // The example is a driver: reading the clock here is what it is for.
    #[allow(clippy::disallowed_methods)]
    let origin = Instant::now();
    let mut clock = move || u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let report = run_scale(&workload, config, &mut clock, &options, &mut |_, _| {})?;
    print!(
        "allocations {} cps {:.0} scheduler {:.2}s drift {} |",
        report.allocations, report.cps, report.scheduler_seconds, report.drift
    );
    for (name, seconds, events) in &report.phases {
        if *events > 0 {
            let kind = name.split(' ').next().unwrap_or(name);
            print!(" {kind} {:.0}ns", seconds * 1e9 / *events as f64);
        }
    }
    println!();
    Ok(())
}
