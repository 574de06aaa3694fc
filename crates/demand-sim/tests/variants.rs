//! The spec's workload variants (time-aware-demands §4.2) on a tiny trace: mis-estimated task
//! times and nodes lost mid-run.

use weft_demand_sim::{deadline_mix, run, Configuration, JobKind, MixParams, RunOptions};

fn tiny() -> MixParams {
    MixParams {
        nodes: 8,
        hours: 0.25,
        warmup_minutes: 2.0,
        load: 0.7,
        seed: 3,
        drain_hours: 0.75,
        ..MixParams::default()
    }
}

/// Tasks run their actual times, not their estimates: every job that completed took at least
/// its actual critical path, and some took longer than their declared one could explain.
#[test]
fn misestimated_tasks_run_their_actual_times() {
    let params = MixParams {
        misestimate_sd: 0.2,
        ..tiny()
    };
    let jobs = deadline_mix(&params);
    let longer = jobs
        .iter()
        .filter(|j| j.actual_ideal_ms() > j.ideal_ms() + 5_000)
        .count();
    assert!(
        longer > 10,
        "{longer} jobs whose tasks overrun their estimate"
    );
    for configuration in [Configuration::Fair, Configuration::Demands] {
        let out = run(&params, &jobs, RunOptions::new(configuration)).expect("runs");
        assert_eq!(out.jobs.len(), jobs.len());
        let mut overran = 0;
        for (job, outcome) in jobs.iter().zip(&out.jobs) {
            assert_eq!(outcome.ideal_ms, job.actual_ideal_ms());
            if let Some(done) = outcome.completion_ms {
                assert!(
                    done >= job.arrival_ms + job.actual_ideal_ms(),
                    "{configuration}: job {} completed before its tasks could have run",
                    job.index
                );
                if done > job.arrival_ms + job.ideal_ms() + 5_000
                    && job.actual_ideal_ms() > job.ideal_ms() + 5_000
                {
                    overran += 1;
                }
            }
        }
        assert!(overran > 0, "{configuration}: no job ran past its estimate");
        match configuration {
            // Nothing is strict: every job still completes.
            Configuration::Fair => {
                assert!(out.jobs.iter().all(|j| j.completion_ms.is_some()));
                assert!(out.honesty.is_empty());
            }
            // Strict demands may fail when tasks overrun; each failure has a cause the
            // overrun explains, and only admitted production jobs are left unfinished.
            _ => {
                let causes = [
                    "deadline_missed",
                    "deadline_unreachable",
                    "duration_exceeded",
                    "predecessor_failed",
                ];
                assert!(
                    out.honesty.keys().all(|k| causes.contains(&k.as_str())),
                    "{:?}",
                    out.honesty
                );
                assert!(out
                    .jobs
                    .iter()
                    .filter(|j| j.completion_ms.is_none())
                    .all(|j| j.kind == JobKind::Production && j.admitted == Some(true)));
            }
        }
    }
}

/// Two of eight nodes go silent two minutes in: the RM finds them LOST after its NM expiry
/// (600 s, so before the last arrival at 15 min),
/// their containers are killed and run again elsewhere, the capacity measured drops, and every
/// Fair job still completes.
#[test]
fn lost_nodes_are_expired_and_their_work_runs_again() {
    let params = MixParams {
        lost_nodes: 2,
        loss_at_hours: 2.0 / 60.0,
        ..tiny()
    };
    let jobs = deadline_mix(&params);
    let intact = run(&tiny(), &jobs, RunOptions::new(Configuration::Fair)).expect("runs");
    assert_eq!(intact.nodes_lost, 0);
    assert_eq!(
        intact.containers_killed, 0,
        "nothing preempts or fails without the fault"
    );
    let out = run(&params, &jobs, RunOptions::new(Configuration::Fair)).expect("runs");
    assert_eq!(out.nodes_lost, 2);
    assert!(out.containers_killed > 0, "the lost nodes held containers");
    assert!(out.work_lost_vcore_s > 0.0);
    assert!(
        out.usage.memory.1 < intact.usage.memory.1,
        "the capacity measured dropped"
    );
    let unfinished: Vec<_> = out
        .jobs
        .iter()
        .filter(|j| j.completion_ms.is_none())
        .collect();
    assert!(unfinished.is_empty(), "{unfinished:?}");
    // Demands: the loss shows in the honesty accounting. A demand's container lost with its
    // node is not asked for again by the core (docs/TODO.md, issue 17 item 5), so a planned
    // job that loses one is lost; best-effort jobs (plain asks) all complete.
    let demands = run(&params, &jobs, RunOptions::new(Configuration::Demands)).expect("runs");
    assert_eq!(demands.nodes_lost, 2);
    assert_eq!(demands.jobs.len(), jobs.len());
    assert!(demands.containers_killed > 0);
    let causes = [
        "app_failed",
        "capacity_lost",
        "deadline_missed",
        "deadline_unreachable",
        "predecessor_failed",
        "window_expired",
    ];
    assert!(
        !demands.honesty.is_empty(),
        "the fault failed no strict demand"
    );
    assert!(
        demands.honesty.keys().all(|k| causes.contains(&k.as_str())),
        "{:?}",
        demands.honesty
    );
    let unfinished: Vec<_> = demands
        .jobs
        .iter()
        .filter(|j| j.completion_ms.is_none())
        .collect();
    assert!(
        unfinished.iter().all(|j| j.kind != JobKind::BestEffort),
        "{unfinished:?}"
    );
}
