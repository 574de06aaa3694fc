//! The configurations on a tiny trace (seconds in a debug build): every job accounted for,
//! utilisation a fraction, stages in order, and honesty as today's core gives it.

use weft_demand_sim::{deadline_mix, run, Configuration, JobKind, MixParams, RunOptions};

fn tiny() -> MixParams {
    MixParams {
        nodes: 8,
        hours: 0.25,
        warmup_minutes: 2.0,
        load: 0.7,
        seed: 3,
        drain_hours: 0.5,
        ..MixParams::default()
    }
}

#[test]
fn every_configuration_accounts_for_every_job_on_the_same_trace() {
    let params = tiny();
    let jobs = deadline_mix(&params);
    let production = jobs
        .iter()
        .filter(|j| j.kind == JobKind::Production)
        .count();
    assert!(production > 10, "{production} production jobs");
    for configuration in Configuration::ALL {
        let out = run(&params, &jobs, RunOptions::new(configuration)).expect("runs");
        let unfinished: Vec<_> = out
            .jobs
            .iter()
            .filter(|j| j.completion_ms.is_none())
            .collect();
        assert_eq!(out.jobs.len(), jobs.len());
        let u = out.usage;
        for (a, b) in [u.memory, u.vcores, u.dominant] {
            assert!(
                b > 0.0 && (0.0..=1.0).contains(&(a / b)),
                "{configuration}: {a}/{b}"
            );
        }
        // No scheduler packs a node past its memory or its vcores (the Capacity Scheduler
        // with Hadoop's default, memory-only calculator put 3.6 times a node's vcores on it).
        assert!(
            out.peak_node_share <= 1.0 && out.peak_node_share > 0.5,
            "{configuration}: a node at {:.3} of its capacity",
            out.peak_node_share
        );
        assert!(
            out.jobs.iter().all(|j| j.order_respected),
            "{configuration}: a stage started before its predecessor ended"
        );
        let admitted = out.jobs.iter().filter(|j| j.admitted == Some(true)).count();
        match configuration {
            // No strict demand: every job runs to its end (a miss is only measured).
            Configuration::Fair | Configuration::Capacity | Configuration::Rayon => {
                assert!(unfinished.is_empty(), "{configuration}: {unfinished:?}");
                assert!(out.honesty.is_empty(), "{configuration}: {:?}", out.honesty);
            }
            // Strict demands are admitted (planned, or best-effort without a plan) and the
            // ones that miss are killed at their deadline, their reduces failing with them:
            // those jobs never finish. Honesty should be 0 once planned admission keeps its
            // promises; today it is not (docs/TODO.md, issue 17 item 7), so the test pins
            // what the failures may be.
            Configuration::Demands | Configuration::DemandsUnplanned => {
                let causes = [
                    "deadline_missed",
                    "deadline_unreachable",
                    "predecessor_failed",
                ];
                assert!(
                    out.honesty.keys().all(|k| causes.contains(&k.as_str())),
                    "{configuration}: {:?}",
                    out.honesty
                );
                assert!(unfinished
                    .iter()
                    .all(|j| j.kind == JobKind::Production && j.admitted == Some(true)));
            }
        }
        match configuration {
            Configuration::Fair | Configuration::Capacity => {
                assert!(out.jobs.iter().all(|j| j.admitted.is_none()))
            }
            Configuration::Rayon => {
                assert_eq!(out.reservations_submitted as usize, production);
                assert_eq!(out.planning_us.len(), production);
            }
            // A job is admitted or refused once, with its reason.
            Configuration::Demands | Configuration::DemandsUnplanned => {
                let refused: u64 = out.refusals.values().sum();
                assert_eq!(
                    admitted as u64 + refused,
                    production as u64,
                    "{:?}",
                    out.refusals
                );
                assert!(admitted > 0);
                // Every admitted job's demands are still readable at the end (YARN's
                // retention of 1,000 finished apps would have evicted most of this trace's).
                if configuration == Configuration::Demands {
                    assert!(jobs.len() > 1000, "{} jobs", jobs.len());
                    // Both demands (maps, reduces) of each admitted job were planned.
                    assert!(
                        out.planner_decisions >= 2 * admitted as u64,
                        "{} planner decisions for {admitted} admitted jobs",
                        out.planner_decisions
                    );
                }
            }
        }
    }
}
