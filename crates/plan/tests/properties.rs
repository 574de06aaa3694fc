//! Properties of the skyline, the plan, the agent and the sharing policies, on random inputs.

use proptest::prelude::*;
use weft_plan::{
    replan, AlignedPlannerWithGreedy, CapacityOverTime, GreedyAgent, Interpreter, MergeOp, Percent,
    Plan, PlanConfig, ReservationAgent, ReservationDefinition, ReservationId, ReservationRequest,
    SharingPolicy, Skyline,
};
use weft_types::{Duration, Resource, Time};

// ---------------------------------------------------------------------------------------------
// The skyline against a naive array with one value per millisecond.

const HORIZON: u64 = 40;

#[derive(Clone, Debug)]
enum SkyOp {
    Add(u64, u64, i64, i64),
    Subtract(u64, u64, i64, i64),
}

fn sky_op() -> impl Strategy<Value = SkyOp> {
    (any::<bool>(), 0..HORIZON, 0..HORIZON, 0i64..5, 0i64..3).prop_map(|(add, a, b, m, v)| {
        let (s, e) = (a.min(b), a.max(b));
        if add {
            SkyOp::Add(s, e, m, v)
        } else {
            SkyOp::Subtract(s, e, m, v)
        }
    })
}

fn naive_apply(naive: &mut [Resource], op: &SkyOp) -> bool {
    let (s, e, r, add) = match *op {
        SkyOp::Add(s, e, m, v) => (s, e, Resource::new(m, v), true),
        SkyOp::Subtract(s, e, m, v) => (s, e, Resource::new(m, v), false),
    };
    let range = s as usize..e as usize;
    if !add
        && naive[range.clone()]
            .iter()
            .any(|x| x.memory_mb() < r.memory_mb() || x.vcores() < r.vcores())
    {
        return false;
    }
    for x in &mut naive[range] {
        *x = if add {
            x.saturating_add(r)
        } else {
            x.saturating_sub(r)
        };
    }
    true
}

fn build(ops: &[SkyOp]) -> (Skyline, Vec<Resource>) {
    let mut sky = Skyline::new();
    let mut naive = vec![Resource::ZERO; (HORIZON + 5) as usize];
    for op in ops {
        let expected = naive_apply(&mut naive, op);
        let got = match *op {
            SkyOp::Add(s, e, m, v) => sky.add(Time(s), Time(e), Resource::new(m, v)),
            SkyOp::Subtract(s, e, m, v) => sky.subtract(Time(s), Time(e), Resource::new(m, v)),
        };
        assert_eq!(got.is_ok(), expected, "{op:?} on {sky:?}");
    }
    (sky, naive)
}

fn assert_canonical(sky: &Skyline) {
    let mut previous = Resource::ZERO;
    for (t, v) in sky.steps() {
        assert_ne!(
            v, previous,
            "step at {t} repeats its predecessor in {sky:?}"
        );
        previous = v;
    }
}

proptest! {
    #[test]
    fn skyline_equals_a_per_millisecond_array(
        ops in prop::collection::vec(sky_op(), 0..25),
        a in 0..HORIZON,
        b in 0..HORIZON,
    ) {
        let (sky, naive) = build(&ops);
        assert_canonical(&sky);
        for (t, expected) in naive.iter().enumerate() {
            prop_assert_eq!(sky.value_at(Time(t as u64)), *expected, "at {}", t);
        }
        let (from, to) = (a.min(b), a.max(b));
        let window = &naive[from as usize..to as usize];
        let max = window.iter().fold(None, |m: Option<Resource>, x| Some(m.map_or(*x, |m| m.cw_max(*x))));
        prop_assert_eq!(sky.max_over(Time(from), Time(to)), max.unwrap_or(Resource::ZERO));
        let min = window.iter().fold(None, |m: Option<Resource>, x| Some(m.map_or(*x, |m| m.cw_min(*x))));
        prop_assert_eq!(sky.min_over(Time(from), Time(to)), min.unwrap_or(Resource::ZERO));
        let integral: i128 = window.iter().map(|x| i128::from(x.memory_mb())).sum();
        prop_assert_eq!(sky.integral(Time(from), Time(to))[0], integral);
        prop_assert_eq!(sky.is_empty(), naive.iter().all(|x| *x == Resource::ZERO));
    }

    #[test]
    fn merges_are_pointwise(
        left in prop::collection::vec(sky_op(), 0..12),
        right in prop::collection::vec(sky_op(), 0..12),
    ) {
        let (a, na) = build(&left);
        let (b, nb) = build(&right);
        for (op, f) in [
            (MergeOp::Add, Resource::saturating_add as fn(Resource, Resource) -> Resource),
            (MergeOp::Subtract, Resource::saturating_sub),
            (MergeOp::Min, Resource::cw_min),
            (MergeOp::Max, Resource::cw_max),
        ] {
            let merged = Skyline::merge(&a, &b, op);
            assert_canonical(&merged);
            for t in 0..na.len() {
                prop_assert_eq!(merged.value_at(Time(t as u64)), f(na[t], nb[t]), "{:?} at {}", op, t);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Plans under random sequences of create, update and delete.

const STEP: u64 = 1000;
const USERS: [&str; 3] = ["alice", "bob", "carol"];

fn gb(n: i64) -> Resource {
    Resource::new(n * 1024, n)
}

#[derive(Clone, Debug)]
enum PlanOp {
    Create {
        user: usize,
        definition: ReservationDefinition,
    },
    Update {
        slot: usize,
        definition: ReservationDefinition,
    },
    Delete {
        slot: usize,
    },
}

fn request() -> impl Strategy<Value = ReservationRequest> {
    (1i64..4, 1u32..4, 1u32..4, 1u64..15).prop_map(|(size, gangs, gang, secs)| ReservationRequest {
        capability: gb(size),
        num_containers: gangs * gang,
        concurrency: gang,
        duration: Duration(secs * 1000 - 300),
    })
}

fn definition() -> impl Strategy<Value = ReservationDefinition> {
    (
        0u64..40_000,
        5_000u64..60_000,
        prop_oneof![
            Just(Interpreter::Any),
            Just(Interpreter::All),
            Just(Interpreter::Order),
            Just(Interpreter::OrderNoGap)
        ],
        prop::collection::vec(request(), 1..4),
    )
        .prop_map(
            |(arrival, span, interpreter, requests)| ReservationDefinition {
                arrival: Time(arrival),
                deadline: Time(arrival + span),
                name: String::new(),
                priority: 0,
                recurrence: None,
                interpreter,
                requests,
            },
        )
}

fn plan_op() -> impl Strategy<Value = PlanOp> {
    prop_oneof![
        3 => (0..USERS.len(), definition()).prop_map(|(user, definition)| PlanOp::Create { user, definition }),
        1 => (0usize..8, definition()).prop_map(|(slot, definition)| PlanOp::Update { slot, definition }),
        1 => (0usize..8).prop_map(|slot| PlanOp::Delete { slot }),
    ]
}

fn policy() -> impl Strategy<Value = SharingPolicy> {
    prop_oneof![
        Just(SharingPolicy::NoOverCommit),
        (30u32..=100, 10u32..=100, 5u64..60).prop_map(|(inst, avg, window)| {
            SharingPolicy::CapacityOverTime(CapacityOverTime {
                instantaneous_max: Percent::from_percent(f64::from(inst))
                    .unwrap_or(Percent::HUNDRED),
                average: Percent::from_percent(f64::from(avg)).unwrap_or(Percent::HUNDRED),
                window: Duration(window * STEP),
            })
        }),
    ]
}

struct Run {
    plan: Plan,
    ids: Vec<ReservationId>,
    outcomes: Vec<bool>,
}

/// Applies `ops`, checking after each accepted one that the plan holds its invariants.
fn run(
    capacity: i64,
    policy: SharingPolicy,
    favor_early: bool,
    aligned: bool,
    ops: &[PlanOp],
) -> Run {
    let mut config = PlanConfig::new("root.prod");
    config.step = Duration(STEP);
    config.policy = policy;
    let mut plan = Plan::new(config, gb(capacity)).expect("valid plan");
    let agent: Box<dyn ReservationAgent> = if aligned {
        Box::new(AlignedPlannerWithGreedy {
            favor_early,
            ..AlignedPlannerWithGreedy::default()
        })
    } else {
        Box::new(GreedyAgent { favor_early })
    };
    let mut ids: Vec<ReservationId> = Vec::new();
    let mut outcomes = Vec::new();
    let now = Time(0);
    for (seq, op) in ops.iter().enumerate() {
        let accepted = match op {
            PlanOp::Create { user, definition } => {
                let id = ReservationId {
                    cluster_timestamp: 7,
                    sequence: seq as u64,
                };
                let ok = agent
                    .create(&mut plan, id, USERS[*user], definition, now)
                    .is_ok();
                if ok {
                    ids.push(id);
                    check_reservation(&plan, &id, definition);
                }
                ok
            }
            PlanOp::Update { slot, definition } => match ids.get(*slot).copied() {
                Some(id) => {
                    let user = plan
                        .reservation(&id)
                        .map(|r| r.user.clone())
                        .unwrap_or_default();
                    let before = plan.reservation(&id).cloned();
                    let ok = agent.update(&mut plan, id, &user, definition, now).is_ok();
                    if ok {
                        check_reservation(&plan, &id, definition);
                    } else {
                        assert_eq!(
                            plan.reservation(&id),
                            before.as_ref(),
                            "a refused update keeps the old version"
                        );
                    }
                    ok
                }
                None => false,
            },
            PlanOp::Delete { slot } => {
                if *slot < ids.len() {
                    let id = ids.remove(*slot);
                    agent.delete(&mut plan, &id).is_ok()
                } else {
                    false
                }
            }
        };
        outcomes.push(accepted);
        check_plan(&plan);
    }
    Run {
        plan,
        ids,
        outcomes,
    }
}

/// An accepted reservation lies in its rounded window and reserves exactly what it asked for:
/// every stage's containers × capability × rounded duration (one stage for R_ANY).
fn check_reservation(plan: &Plan, id: &ReservationId, d: &ReservationDefinition) {
    let r = plan.reservation(id).expect("accepted");
    let arrival = d.arrival.0.div_ceil(STEP) * STEP;
    let deadline = d.deadline.0 / STEP * STEP;
    let alloc = &r.allocation;
    assert!(
        alloc.earliest_start().is_some_and(|s| s.0 >= arrival),
        "{r:?}"
    );
    assert!(alloc.latest_end().is_some_and(|e| e.0 <= deadline), "{r:?}");
    let asked: Vec<i128> = d
        .requests
        .iter()
        .map(|rr| {
            i128::from(rr.num_containers)
                * i128::from(rr.capability.memory_mb())
                * i128::from(rr.duration.0.div_ceil(STEP) * STEP)
        })
        .collect();
    let got = alloc.integral(Time(0), Time(u64::MAX))[0];
    if d.interpreter == Interpreter::Any {
        assert!(
            asked.contains(&got),
            "R_ANY reserved {got}, asked one of {asked:?}"
        );
    } else {
        assert_eq!(got, asked.iter().sum::<i128>(), "{r:?}");
    }
}

/// The plan's totals match its reservations, it never exceeds its capacity, and every user
/// keeps to the sharing policy at every instant and over every window.
fn check_plan(plan: &Plan) {
    let mut total = Skyline::new();
    for r in plan.reservations() {
        total = Skyline::merge(&total, &r.allocation, MergeOp::Add);
    }
    assert_eq!(
        &total,
        plan.committed(),
        "committed is the sum of the reservations"
    );
    let room = Skyline::merge(plan.capacity(), plan.committed(), MergeOp::Subtract);
    for (t, v) in room.steps() {
        assert!(
            v.values().iter().all(|c| *c >= 0),
            "over capacity at {t}: {v:?}"
        );
    }
    let SharingPolicy::CapacityOverTime(c) = plan.config().policy else {
        return;
    };
    let capacity = plan.capacity().value_at(Time(0));
    let limit = c.instantaneous_max.of(capacity);
    let horizon = 120_000 / STEP;
    let window_slots = c.window.0 / STEP;
    for user in plan.users() {
        let load = plan.user_committed(user);
        // Allocations and windows are step-aligned, so per-slot values and windows ending on
        // slot boundaries see every case.
        let slots: Vec<Resource> = (0..horizon)
            .map(|s| load.value_at(Time(s * STEP)))
            .collect();
        for (s, v) in slots.iter().enumerate() {
            assert!(
                v.fits_in(&limit),
                "{user} holds {v:?} over {limit:?} at slot {s}"
            );
        }
        let millipercent = (c.average.as_percent() * 1000.0).round() as i128;
        for end in 1..=horizon as usize {
            let begin = end.saturating_sub(window_slots as usize);
            for (i, name) in [(0usize, "MB"), (1, "vcores")] {
                let used: i128 = slots[begin..end].iter().map(|v| i128::from(v.get(i))).sum();
                let allowed =
                    millipercent * i128::from(capacity.get(i)) * i128::from(window_slots as u32);
                assert!(
                    used * 100_000 <= allowed,
                    "{user} uses {used} {name}·slots in the window ending at slot {end}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn replanning_after_a_capacity_drop_makes_the_plan_fit_dropping_newest_first(
        capacity in 4i64..16,
        lost in 1i64..4,
        favor_early in any::<bool>(),
        ops in prop::collection::vec(plan_op(), 1..14),
    ) {
        let mut plan = run(capacity, SharingPolicy::NoOverCommit, favor_early, false, &ops).plan;
        let before = plan.clone();
        plan.set_capacity(Time(0), gb(capacity - lost));
        let dropped = replan(&mut plan, Time(0), Duration(u64::MAX / 2)).unwrap();
        let room = Skyline::merge(plan.capacity(), plan.committed(), MergeOp::Subtract);
        prop_assert!(room.steps().all(|(_, v)| v.values().iter().all(|c| *c >= 0)));
        // Survivors are untouched and, with the dropped ones, account for the whole plan (the
        // newest-first order is fixed by the B5 scenario tests).
        for r in plan.reservations() {
            prop_assert_eq!(before.reservation(&r.id), Some(r));
        }
        prop_assert_eq!(plan.reservations().count() + dropped.len(), before.reservations().count());
    }

    #[test]
    fn plans_keep_their_invariants_and_are_deterministic(
        capacity in 4i64..16,
        policy in policy(),
        favor_early in any::<bool>(),
        aligned in any::<bool>(),
        ops in prop::collection::vec(plan_op(), 1..14),
    ) {
        let first = run(capacity, policy, favor_early, aligned, &ops);
        let second = run(capacity, policy, favor_early, aligned, &ops);
        prop_assert_eq!(&first.outcomes, &second.outcomes);
        prop_assert_eq!(&first.plan, &second.plan, "same inputs, same plan");

        let mut plan = first.plan;
        for id in &first.ids {
            prop_assert!(plan.delete(id).is_ok());
            check_plan(&plan);
        }
        prop_assert!(plan.is_empty(), "deleting every reservation empties the plan");
        prop_assert_eq!(plan.committed(), &Skyline::new());
    }
}
