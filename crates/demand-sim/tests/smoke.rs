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
    }
}

#[test]
fn every_configuration_accounts_for_every_job_on_the_same_trace() {
    let params = tiny();
    let jobs = deadline_mix(&params);
    let production = jobs.iter().filter(|j| j.kind == JobKind::Production).count();
    assert!(production > 10, "{production} production jobs");
    for configuration in Configuration::ALL {
        let out = run(&params, &jobs, RunOptions::new(configuration)).expect("runs");
        let unfinished: Vec<_> = out.jobs.iter().filter(|j| j.completion_ms.is_none()).collect();
        assert_eq!(out.jobs.len(), jobs.len());
        let u = out.usage;
        for (a, b) in [u.memory, u.vcores, u.dominant] {
            assert!(b > 0.0 && (0.0..=1.0).contains(&(a / b)), "{configuration}: {a}/{b}");
        }
        assert!(
            out.jobs.iter().all(|j| j.order_respected),
            "{configuration}: a stage started before its predecessor ended"
        );
        let admitted = out.jobs.iter().filter(|j| j.admitted == Some(true)).count();
        match configuration {
            // Without a planner every job runs to its end (a miss is only measured).
            Configuration::Fair | Configuration::Rayon | Configuration::Demands => {
                assert!(unfinished.is_empty(), "{configuration}: {unfinished:?}");
                assert!(out.honesty.is_empty(), "{configuration}: {:?}", out.honesty);
            }
            // Strict demands admitted without a plan: the ones that miss are killed at their
            // deadline (or fail with their predecessor) and their jobs never finish. That
            // is the honesty figure the planner has to bring to 0.
            Configuration::DemandsUnplanned => {
                let causes = ["deadline_missed", "deadline_unreachable", "predecessor_failed"];
                assert!(
                    out.honesty.keys().all(|k| causes.contains(&k.as_str())),
                    "{:?}",
                    out.honesty
                );
                assert!(unfinished.iter().all(|j| j.kind == JobKind::Production && j.admitted == Some(true)));
            }
        }
        match configuration {
            Configuration::Fair => assert!(out.jobs.iter().all(|j| j.admitted.is_none())),
            Configuration::Rayon => {
                assert_eq!(out.reservations_submitted as usize, production);
                assert_eq!(out.planning_us.len(), production);
            }
            // Today's core refuses a strict DeadLine that needs a plan (`not_reservable`).
            Configuration::Demands => {
                assert_eq!(admitted, 0);
                assert_eq!(out.refusals.values().sum::<u64>(), production as u64);
                assert!(out.refusals.contains_key("not_reservable"), "{:?}", out.refusals);
            }
            Configuration::DemandsUnplanned => assert!(admitted > 0),
        }
    }
}
