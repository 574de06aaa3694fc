//! Property tests on random event sequences, for every scheduler kind:
//! * the fast walk makes exactly the decisions the reference walk makes;
//! * every maintained aggregate and order equals its recomputation (`verify`), and no node is
//!   ever over capacity;
//! * Fair: the starvation the update computes with preemption on changes no decision (nothing
//!   acts on it yet).
//!
//! The harness (`run`) and the event generator (`ops`) are shared; each kind only supplies its
//! configurations (`fair`, `capacity`, `fifo`). `PROPTEST_CASES` raises the number of cases (default 96 each).

mod blacklists;
mod capacity;
mod fair;
mod fifo;
mod ops;

use proptest::prelude::*;
use weft_sched::{Decision, Scheduler, SchedulerConfig, WalkMode};
use weft_types::{ContainerId, Time};

use blacklists::Oracle;
use ops::{node_event, to_event, Op, NODES};

/// Cases per property: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `ops` against a fast and a reference scheduler built from `config`, comparing every
/// answer and decision and verifying both after every step.
fn run(ops: &[Op], config: &SchedulerConfig) -> Result<(), TestCaseError> {
    compare(ops, config, config, WalkMode::Reference)
}

/// Runs `ops` against a fast scheduler built from `config` and one built from `other` walking
/// in `mode`, comparing every answer and decision and verifying both after every step.
fn compare(
    ops: &[Op],
    config: &SchedulerConfig,
    other: &SchedulerConfig,
    mode: WalkMode,
) -> Result<(), TestCaseError> {
    let fast = Scheduler::new(config.clone(), Default::default());
    let mut reference = Scheduler::new(other.clone(), Default::default());
    reference.set_walk_mode(mode);
    compare_schedulers(ops, fast, reference)
}

/// Runs `ops` against a scheduler built from `config` (two lanes: the presets' registry) and
/// one with the six-lane engine, both on the fast path: the width changes no decision.
fn two_lanes_like_six(ops: &[Op], config: &SchedulerConfig) -> Result<(), TestCaseError> {
    let two = Scheduler::new(config.clone(), Default::default());
    let six = Scheduler::with_six_lanes(config.clone(), Default::default());
    prop_assert_eq!((two.resource_lanes(), six.resource_lanes()), (2, 6));
    compare_schedulers(ops, two, six)
}

/// Runs `ops` against `fast` and `reference`, comparing every answer and decision and
/// verifying both after every step.
fn compare_schedulers(
    ops: &[Op],
    mut fast: Scheduler,
    mut reference: Scheduler,
) -> Result<(), TestCaseError> {
    for n in 0..NODES {
        fast.handle(Time(0), node_event(n)).expect("node");
        reference.handle(Time(0), node_event(n)).expect("node");
    }
    let mut submitted = 0u64;
    let mut running: Vec<ContainerId> = Vec::new();
    let mut blacklists = Oracle::default();
    for (step, op) in ops.iter().enumerate() {
        prop_assert_eq!(fast.next_container_id(), reference.next_container_id());
        let Some(event) = to_event(op, submitted, &running, fast.next_container_id()) else {
            continue;
        };
        let recovered = match &event {
            weft_sched::Event::ContainerRecovered { container, .. } => Some(*container),
            _ => None,
        };
        if matches!(op, Op::Submit { .. }) {
            submitted += 1;
        }
        let now = Time(step as u64 * 100);
        let before = event.clone();
        let a = fast.handle(now, event.clone());
        let b = reference.handle(now, event);
        prop_assert_eq!(&a, &b, "step {}: {:?}", step, op);
        if let (Some(c), Ok(())) = (recovered, &a) {
            running.push(c);
        }
        let da: Vec<Decision> = std::iter::from_fn(|| fast.poll_decision()).collect();
        let db: Vec<Decision> = std::iter::from_fn(|| reference.poll_decision()).collect();
        prop_assert_eq!(&da, &db, "step {}: {:?}", step, op);
        if a.is_ok() {
            blacklists.apply(&before);
        }
        for d in &da {
            if let Some(why) = blacklists.check(d) {
                return Err(TestCaseError::fail(format!("step {step} ({op:?}): {why}")));
            }
        }
        for d in &da {
            match d {
                Decision::Allocated { container, .. } => running.push(*container),
                Decision::Completed { container, .. } => running.retain(|c| c != container),
                _ => {}
            }
        }
        let drift = fast.verify();
        prop_assert!(
            drift.is_empty(),
            "fast path drift at step {} ({:?}): {:?}",
            step,
            op,
            drift
        );
        let drift = reference.verify();
        prop_assert!(
            drift.is_empty(),
            "reference drift at step {} ({:?}): {:?}",
            step,
            op,
            drift
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    #[test]
    fn fair_fast_path_decides_like_the_reference(ops in prop::collection::vec(ops::op(), 1..120), multiple in any::<bool>(), locality in any::<bool>()) {
        run(&ops, &fair::config(multiple, locality, false))?;
    }

    #[test]
    fn fair_starvation_changes_no_decision(ops in prop::collection::vec(ops::op(), 1..120), multiple in any::<bool>(), locality in any::<bool>()) {
        let off = fair::config(multiple, locality, false);
        let on = fair::config(multiple, locality, true);
        compare(&ops, &off, &on, WalkMode::Fast)?;
        run(&ops, &on)?;
    }

    #[test]
    fn capacity_fast_path_decides_like_the_reference(
        ops in prop::collection::vec(ops::op(), 1..120),
        knobs in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let (fair_leaves, priority_utilization, locality, continue_looking, several_offswitch, dominant) = knobs;
        run(&ops, &capacity::config(capacity::Knobs {
            fair_leaves,
            priority_utilization,
            locality,
            continue_looking,
            several_offswitch,
            dominant,
        }))?;
    }

    #[test]
    fn fair_one_pool_over_every_host_decides_like_no_pools(ops in prop::collection::vec(ops::op(), 1..120), multiple in any::<bool>(), locality in any::<bool>()) {
        compare(&ops, &fair::config(multiple, locality, false), &fair::one_pool(multiple, locality), WalkMode::Fast)?;
    }

    #[test]
    fn fair_pools_fast_path_decides_like_the_reference(ops in prop::collection::vec(ops::op(), 1..120), multiple in any::<bool>(), locality in any::<bool>()) {
        run(&ops, &fair::two_pools(multiple, locality))?;
    }

    #[test]
    fn fifo_fast_path_decides_like_the_reference(ops in prop::collection::vec(ops::op(), 1..120), coarse in any::<bool>()) {
        run(&ops, &fifo::config(coarse))?;
    }

    #[test]
    fn fair_two_lanes_decide_like_six(ops in prop::collection::vec(ops::op(), 1..120), multiple in any::<bool>(), locality in any::<bool>(), preemption in any::<bool>()) {
        two_lanes_like_six(&ops, &fair::config(multiple, locality, preemption))?;
        two_lanes_like_six(&ops, &fair::two_pools(multiple, locality))?;
    }

    #[test]
    fn capacity_two_lanes_decide_like_six(
        ops in prop::collection::vec(ops::op(), 1..120),
        knobs in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let (fair_leaves, priority_utilization, locality, continue_looking, several_offswitch, dominant) = knobs;
        two_lanes_like_six(&ops, &capacity::config(capacity::Knobs {
            fair_leaves,
            priority_utilization,
            locality,
            continue_looking,
            several_offswitch,
            dominant,
        }))?;
    }

    #[test]
    fn fifo_two_lanes_decide_like_six(ops in prop::collection::vec(ops::op(), 1..120), coarse in any::<bool>()) {
        two_lanes_like_six(&ops, &fifo::config(coarse))?;
    }
}
