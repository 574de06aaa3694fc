//! Hadoop's default agent, `AlignedPlannerWithGreedy`, on hand-derived cases: it spreads gangs
//! over the cheapest aligned slots, shares an ORDER window by demand, and falls back to the
//! greedy agent. Plans have 10 GB / 10 vcores and a 1 s step.

use weft_plan::{
    AlignedPlannerWithGreedy, GreedyAgent, Interpreter, Plan, PlanConfig, ReservationAgent,
    ReservationDefinition, ReservationId, ReservationRequest, SharingPolicy, Skyline,
};
use weft_types::{Duration, Resource, Time};

const NOW: Time = Time(0);

fn gb(n: i64) -> Resource {
    Resource::new(n * 1024, n)
}

fn id(seq: u64) -> ReservationId {
    ReservationId {
        cluster_timestamp: 1,
        sequence: seq,
    }
}

fn plan() -> Plan {
    let mut config = PlanConfig::new("root.prod");
    config.policy = SharingPolicy::NoOverCommit;
    Plan::new(config, gb(10)).expect("valid plan")
}

fn stage(size: i64, n: u32, secs: u64) -> ReservationRequest {
    ReservationRequest {
        capability: gb(size),
        num_containers: n,
        concurrency: 1,
        duration: Duration::from_secs(secs),
    }
}

fn def(
    interpreter: Interpreter,
    deadline_secs: u64,
    requests: Vec<ReservationRequest>,
) -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(0),
        deadline: Time(deadline_secs * 1000),
        name: String::new(),
        priority: 0,
        recurrence: None,
        interpreter,
        requests,
    }
}

fn block(plan: &mut Plan, seq: u64, size: i64, from_secs: u64, to_secs: u64) {
    let d = ReservationDefinition {
        arrival: Time(from_secs * 1000),
        ..def(
            Interpreter::All,
            to_secs,
            vec![stage(size, 1, to_secs - from_secs)],
        )
    };
    GreedyAgent::default()
        .create(plan, id(seq), "other", &d, NOW)
        .expect("the blocking reservation fits");
}

fn steps(s: &Skyline) -> Vec<(u64, i64)> {
    s.steps()
        .map(|(t, r)| (t.0 / 1000, r.memory_mb() / 1024))
        .collect()
}

fn allocation(plan: &Plan, seq: u64) -> Vec<(u64, i64)> {
    steps(&plan.reservation(&id(seq)).expect("accepted").allocation)
}

#[test]
fn gangs_spread_one_per_slot_over_the_cheapest_slots() {
    // Six 10 s slots, four gangs: one per round (max(4 / 6, 1) / 10, at least 1). Every slot
    // costs 0, ties go to the earliest; a used slot costs 0.1 × 10 steps = 1 and loses to the
    // free ones, so the four land in the first four slots.
    let d = def(Interpreter::All, 60, vec![stage(1, 4, 10)]);
    let mut early = plan();
    AlignedPlannerWithGreedy::default()
        .create(&mut early, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&early, 1), vec![(0, 1), (40, 0)]);
    // Right to left the slots are aligned to the deadline and ties go to the latest.
    let mut late = plan();
    AlignedPlannerWithGreedy {
        favor_early: false,
        ..AlignedPlannerWithGreedy::default()
    }
    .create(&mut late, id(1), "alice", &d, NOW)
    .unwrap();
    assert_eq!(allocation(&late, 1), vec![(20, 1), (60, 0)]);
}

#[test]
fn loaded_slots_cost_more_and_are_avoided() {
    // 8 GB taken over [0, 20 s): those slots cost 0.8 × 10 = 8 each; the two gangs go to the
    // free slots [20, 30) and [30, 40) although 2 GB would fit at once (the greedy agent puts
    // both at [0, 10)).
    let d = def(Interpreter::All, 40, vec![stage(1, 2, 10)]);
    let mut p = plan();
    block(&mut p, 1, 8, 0, 20);
    AlignedPlannerWithGreedy::default()
        .create(&mut p, id(2), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 2), vec![(20, 1), (40, 0)]);

    let mut g = plan();
    block(&mut g, 1, 8, 0, 20);
    GreedyAgent::default()
        .create(&mut g, id(2), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&g, 2), vec![(0, 2), (10, 0)]);
}

#[test]
fn when_no_aligned_slot_fits_the_greedy_agent_places_it() {
    // The plan is full over [0, 5 s); the window [0, 15 s) has one aligned 10 s slot, [0, 10),
    // which cannot take the container. The greedy fallback slides past the full piece.
    let mut p = plan();
    block(&mut p, 1, 10, 0, 5);
    let d = def(Interpreter::All, 15, vec![stage(1, 1, 10)]);
    AlignedPlannerWithGreedy::default()
        .create(&mut p, id(2), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 2), vec![(5, 1), (15, 0)]);
}

#[test]
fn an_order_window_is_shared_by_demand() {
    // A (1 GB, 10 s) then B (3 GB, 10 s) in [0, 60 s), right to left: B is placed first, in
    // the last 10 s plus 3/4 of the 40 s of slack: [20, 60); its latest slot is [50, 60).
    // A then has [0, 50) and takes its latest slot, [40, 50).
    let d = def(
        Interpreter::Order,
        60,
        vec![stage(1, 1, 10), stage(3, 1, 10)],
    );
    let mut p = plan();
    AlignedPlannerWithGreedy {
        favor_early: false,
        ..AlignedPlannerWithGreedy::default()
    }
    .create(&mut p, id(1), "alice", &d, NOW)
    .unwrap();
    assert_eq!(allocation(&p, 1), vec![(40, 1), (50, 3), (60, 0)]);
}

#[test]
fn a_definition_neither_planner_can_place_is_refused_with_the_greedy_agents_reason() {
    let mut p = plan();
    block(&mut p, 1, 10, 0, 50);
    let before = p.clone();
    let d = def(Interpreter::All, 55, vec![stage(1, 1, 10)]);
    assert_eq!(
        AlignedPlannerWithGreedy::default().create(&mut p, id(2), "alice", &d, NOW),
        Err(weft_plan::PlanError::CannotSatisfy { stage: Some(0) })
    );
    assert_eq!(p, before);
}
