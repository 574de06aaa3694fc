//! The three configurations on a tiny trace: every job accounted for, utilisation a fraction,
//! stages in order, and what honesty and admission read today.

use weft_demand_sim::{deadline_mix, run, Configuration, JobKind, MixParams, RunOptions};

fn tiny() -> MixParams {
    MixParams {
        nodes: 8,
        hours: 0.25,
        warmup_minutes: 2.0,
        load: 0.7,
        seed: 3,
        drain_hours: 0.5,
    }
}

#[test]
fn every_configuration_accounts_for_every_job_on_the_same_trace() {
    let params = tiny();
    let jobs = deadline_mix(&params);
    assert!(jobs.iter().any(|j| j.kind == JobKind::Production));
    for configuration in Configuration::ALL {
        let out = run(&params, &jobs, RunOptions::new(configuration)).expect("runs");
        eprintln!(
            "{configuration}: allocations {} end {} unfinished {} honesty {:?} admitted {:?}",
            out.allocations,
            out.end_ms,
            out.jobs.iter().filter(|j| j.completion_ms.is_none()).count(),
            out.honesty,
            out.jobs.iter().filter_map(|j| j.admitted).collect::<Vec<_>>()
        );
        assert_eq!(out.jobs.len(), jobs.len());
        let u = out.usage;
        for (a, b) in [u.memory, u.vcores] {
            assert!(b > 0.0 && (0.0..=1.0).contains(&(a / b)), "{configuration}: {a}/{b}");
        }
        assert!(out.jobs.iter().all(|j| j.order_respected), "{configuration}: stages overlapped");
    }
}
