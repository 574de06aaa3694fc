//! Scenario C16 (time-aware-demands §5): the same trace with every ask wrapped as an
//! unconstrained demand gives the same allocation trace as plain asks (apart from the
//! demand-state lines), and the planner is never called.

use weft_demand_sim::{deadline_mix, run, Configuration, MixParams, RunOptions};

#[test]
fn asks_wrapped_as_unconstrained_demands_allocate_exactly_as_plain_asks() {
    let params = MixParams {
        nodes: 8,
        hours: 0.2,
        warmup_minutes: 1.0,
        load: 0.8,
        seed: 16,
        drain_hours: 0.5,
        ..MixParams::default()
    };
    let jobs = deadline_mix(&params);
    let options = RunOptions {
        configuration: Configuration::Fair,
        wrap_asks_as_demands: false,
        record_trace: true,
    };
    let plain = run(&params, &jobs, options).expect("plain run");
    let wrapped = run(
        &params,
        &jobs,
        RunOptions {
            wrap_asks_as_demands: true,
            ..options
        },
    )
    .expect("wrapped run");
    assert!(
        plain.allocations > 1000,
        "a trace worth comparing: {}",
        plain.allocations
    );
    assert!(plain.demand_lines.is_empty());
    // Every stage of every job was a demand, and each was told its transitions.
    let stages: usize = jobs.iter().map(|j| j.stages.len()).sum();
    assert!(
        wrapped.demand_lines.len() >= stages,
        "{} < {stages}",
        wrapped.demand_lines.len()
    );
    assert!(
        wrapped.demand_lines.iter().all(|l| !l.contains("Failed")),
        "no demand failed"
    );
    let first_difference = plain
        .trace
        .iter()
        .zip(&wrapped.trace)
        .position(|(a, b)| a != b);
    assert_eq!(
        first_difference.map(|i| (&plain.trace[i], &wrapped.trace[i])),
        None,
        "the traces part at line {first_difference:?}"
    );
    assert_eq!(plain.trace.len(), wrapped.trace.len());
    // No planner: no reservation, no demand decided by a plan.
    assert_eq!(wrapped.reservations_submitted, 0);
    assert_eq!(wrapped.planner_decisions, 0);
    assert!(wrapped.refusals.is_empty(), "{:?}", wrapped.refusals);
}
