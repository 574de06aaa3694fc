//! What one verification (`Scheduler::verify`, every aggregate and order recomputed from
//! scratch) costs at the meituan preset's size, timed with the real clock. Usage:
//! `verify_cost [SCALE] [END_SECONDS] [EVERY_SECONDS] [SLICE_BUDGET]` (defaults 1.0, 120, 10,
//! none): the preset runs to the end, verifying every EVERY_SECONDS of virtual time; prints the
//! number of verifications, their mean and longest time, and the drift found. With a
//! SLICE_BUDGET (containers per slice), each verification is also run as a sliced round
//! (`Scheduler::verify_slice`, the RM driver's form, its slices back to back): prints the
//! rounds, their mean total time, the slices per round and the longest slice.

use std::time::Instant;
use weft_sim::presets::preset;
use weft_sim::scale::{run_scale, workload_config, ScaleOptions};
use weft_types::{Duration, Time};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let scale: f64 = args.get(1).map_or(Ok(1.0), |s| s.parse())?;
    let end: u64 = args.get(2).map_or(Ok(120), |s| s.parse())?;
    let every: u64 = args.get(3).map_or(Ok(10), |s| s.parse())?;
    let slice_budget: Option<usize> = args.get(4).map(|s| s.parse()).transpose()?;
    let workload = preset("meituan", scale, 0)?;
    let (config, _) = workload_config(&workload, "meituan")?;
    let options = ScaleOptions {
        verify_every: Some(Duration::from_secs(every)),
        end_override: Some(Time::ZERO + Duration::from_secs(end)),
        verify_slice_budget: slice_budget,
        ..ScaleOptions::default()
    };
    // The example is a driver: reading the clock here is what it is for.
    #[allow(clippy::disallowed_methods)]
    let origin = Instant::now();
    let mut clock = move || u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let report = run_scale(&workload, config, &mut clock, &options, &mut |_, _| {})?;
    let mean_ms = if report.verifications > 0 {
        report.verify_seconds * 1e3 / report.verifications as f64
    } else {
        0.0
    };
    println!(
        "nodes {} apps {} queues {} allocations {} | verifications {} mean {:.1} ms max {:.1} ms drift {}",
        report.nodes,
        report.apps,
        report.queues,
        report.allocations,
        report.verifications,
        mean_ms,
        report.verify_max_seconds * 1e3,
        report.drift
    );
    if report.sliced_rounds > 0 {
        let rounds = report.sliced_rounds as f64;
        println!(
            "sliced (budget {} containers): rounds {} mean round {:.1} ms in {:.0} slices, longest slice {:.2} ms",
            slice_budget.unwrap_or(0),
            report.sliced_rounds,
            report.slice_seconds * 1e3 / rounds,
            report.slices as f64 / rounds,
            report.slice_max_seconds * 1e3
        );
        let by_phase: Vec<String> = report
            .slice_max_seconds_by_phase
            .iter()
            .map(|s| format!("{:.2}", s * 1e3))
            .collect();
        println!(
            "longest slice by phase (ms; the engine's phases: whole, orders, rules, foreign, nodes, apps): {}",
            by_phase.join(" ")
        );
    }
    Ok(())
}
