//! A profiling harness: the meituan preset through the fast path with the deterministic clock,
//! so `valgrind --tool=callgrind` and `perf record` see only the simulation (no CLI, no wall
//! clock; verification only at the end). Usage: `prof [SCALE] [END_SECONDS|-] [reference]
//! [preempt]`; `preempt` turns `yarn.scheduler.fair.preemption` on (the preset sets no
//! preemption timeouts, so nothing starves: the cost of the starvation and preemption passes
//! alone).

use weft_sched::WalkMode;
use weft_sim::presets::preset;
use weft_sim::scale::{run_scale, workload_config, ScaleOptions};
use weft_sim::ZeroClock;
use weft_types::{Duration, Time};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let scale: f64 = args.get(1).map_or(Ok(0.1), |s| s.parse())?;
    // `-` keeps the workload's own end.
    let end: Option<u64> = args
        .get(2)
        .filter(|s| s.as_str() != "-")
        .map(|s| s.parse())
        .transpose()?;
    let walk = if args.get(3).is_some_and(|s| s == "reference") {
        WalkMode::Reference
    } else {
        WalkMode::Fast
    };
    let workload = preset("meituan", scale, 0)?;
    let (mut config, _) = workload_config(&workload, "meituan")?;
    if args.iter().skip(3).any(|a| a == "preempt") {
        if let weft_sched::SchedulerConfig::Fair(c) = &mut config {
            c.properties.preemption = true;
        }
    }
    let options = ScaleOptions {
        walk,
        verify_every: None,
        end_override: end.map(|s| Time::ZERO + Duration::from_secs(s)),
        ..ScaleOptions::default()
    };
    let report = run_scale(&workload, config, &mut ZeroClock, &options, &mut |_, _| {})?;
    println!(
        "allocations {} reservations {} drift {} apps_finished {}",
        report.allocations, report.reservations, report.drift, report.apps_finished
    );
    Ok(())
}
