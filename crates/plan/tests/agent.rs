//! The greedy agent on hand-derived cases: each RDL kind, gangs, both directions, refusals,
//! update and delete. Plans have 10 GB / 10 vcores and a 1 s step unless a test says otherwise.

use weft_plan::{
    CapacityOverTime, ContractError, GreedyAgent, Interpreter, Percent, Plan, PlanConfig,
    PlanError, PolicyViolation, ReservationAgent, ReservationDefinition, ReservationId,
    ReservationRequest, SharingPolicy, Skyline,
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

fn plan_with(policy: SharingPolicy) -> Plan {
    let mut config = PlanConfig::new("root.prod");
    config.policy = policy;
    Plan::new(config, gb(10)).expect("valid plan")
}

fn plan() -> Plan {
    plan_with(SharingPolicy::NoOverCommit)
}

/// `n` containers of `size` GB in gangs of `gang`, each running `secs` seconds.
fn stage(size: i64, n: u32, gang: u32, secs: u64) -> ReservationRequest {
    ReservationRequest {
        capability: gb(size),
        num_containers: n,
        concurrency: gang,
        duration: Duration::from_secs(secs),
    }
}

fn def(
    interpreter: Interpreter,
    arrival: u64,
    deadline: u64,
    requests: Vec<ReservationRequest>,
) -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(arrival),
        deadline: Time(deadline),
        name: "test".into(),
        priority: 0,
        recurrence: None,
        interpreter,
        requests,
    }
}

/// Occupies `size` GB over `[from, to)` for user "other", as one container.
fn block(plan: &mut Plan, seq: u64, size: i64, from: u64, to: u64) {
    let d = def(
        Interpreter::All,
        from,
        to,
        vec![stage(size, 1, 1, (to - from) / 1000)],
    );
    GreedyAgent::default()
        .create(plan, id(seq), "other", &d, NOW)
        .expect("the blocking reservation fits");
}

fn steps(s: &Skyline) -> Vec<(u64, i64)> {
    s.steps()
        .map(|(t, r)| (t.0, r.memory_mb() / 1024))
        .collect()
}

fn allocation(plan: &Plan, seq: u64) -> Vec<(u64, i64)> {
    steps(&plan.reservation(&id(seq)).expect("accepted").allocation)
}

#[test]
fn all_places_a_single_stage_at_the_step_rounded_arrival() {
    let mut p = plan();
    let d = def(Interpreter::All, 1_500, 60_000, vec![stage(1, 4, 1, 10)]);
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(2_000, 4), (12_000, 0)]);
    let r = p.reservation(&id(1)).unwrap();
    assert_eq!((r.start, r.end), (Time(2_000), Time(60_000)));
    assert_eq!(steps(p.committed()), vec![(2_000, 4), (12_000, 0)]);
}

#[test]
fn durations_round_up_and_the_reservation_ends_at_the_rounded_up_deadline() {
    let mut p = plan();
    let d = ReservationDefinition {
        requests: vec![ReservationRequest {
            duration: Duration(1_500),
            ..stage(1, 1, 1, 0)
        }],
        ..def(Interpreter::All, 500, 4_500, vec![])
    };
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(1_000, 1), (3_000, 0)]);
    assert_eq!(p.reservation(&id(1)).unwrap().end, Time(5_000));
}

#[test]
fn gangs_are_placed_in_batches_around_what_is_taken() {
    // 8 GB taken over [0, 20 s): 2 GB free there. Four 1 GB containers of 10 s: two fit over
    // [0, 10 s), the edge moves to 10 s, the other two fit over [10 s, 20 s).
    let mut p = plan();
    block(&mut p, 1, 8, 0, 20_000);
    let d = def(Interpreter::All, 0, 60_000, vec![stage(1, 4, 1, 10)]);
    GreedyAgent::default()
        .create(&mut p, id(2), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 2), vec![(0, 2), (20_000, 0)]);
    assert_eq!(steps(p.committed()), vec![(0, 10), (20_000, 0)]);
}

#[test]
fn late_allocation_fills_from_the_deadline_backwards() {
    let mut p = plan();
    block(&mut p, 1, 8, 0, 20_000);
    let d = def(Interpreter::All, 0, 60_000, vec![stage(1, 4, 1, 10)]);
    GreedyAgent { favor_early: false }
        .create(&mut p, id(2), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 2), vec![(50_000, 4), (60_000, 0)]);
}

#[test]
fn a_gang_waits_until_all_its_members_fit_at_once() {
    // Gangs of 3 × 2 GB = 6 GB; 5 GB taken over [0, 10 s) leaves 5 GB: no gang fits there.
    // From 10 s on, one gang fits per 5 s slot: [10 s, 15 s) and [15 s, 20 s).
    let mut p = plan();
    block(&mut p, 1, 5, 0, 10_000);
    let d = def(Interpreter::All, 0, 60_000, vec![stage(2, 6, 3, 5)]);
    GreedyAgent::default()
        .create(&mut p, id(2), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 2), vec![(10_000, 6), (20_000, 0)]);
}

#[test]
fn all_places_every_stage_within_the_whole_window() {
    // 8 GB then 4 GB: the second does not fit beside the first and goes after it.
    let mut p = plan();
    let d = def(
        Interpreter::All,
        0,
        60_000,
        vec![stage(8, 1, 1, 10), stage(4, 1, 1, 10)],
    );
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(0, 8), (10_000, 4), (20_000, 0)]);
}

#[test]
fn order_runs_stages_one_after_the_other_in_both_directions() {
    let d = def(
        Interpreter::Order,
        0,
        60_000,
        vec![stage(1, 2, 1, 10), stage(1, 5, 1, 10)],
    );
    let mut early = plan();
    GreedyAgent::default()
        .create(&mut early, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(
        allocation(&early, 1),
        vec![(0, 2), (10_000, 5), (20_000, 0)]
    );
    let mut late = plan();
    GreedyAgent { favor_early: false }
        .create(&mut late, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(
        allocation(&late, 1),
        vec![(40_000, 2), (50_000, 5), (60_000, 0)]
    );
}

#[test]
fn order_accepts_a_gap_and_order_no_gap_refuses_it_as_hadoop_does() {
    // The whole plan is taken over [10 s, 20 s): the second stage can only start at 20 s.
    let stages = vec![stage(1, 1, 1, 10), stage(1, 1, 1, 10)];
    let mut p = plan();
    block(&mut p, 1, 10, 10_000, 20_000);
    let order = def(Interpreter::Order, 0, 60_000, stages.clone());
    GreedyAgent::default()
        .create(&mut p, id(2), "alice", &order, NOW)
        .unwrap();
    assert_eq!(
        allocation(&p, 2),
        vec![(0, 1), (10_000, 0), (20_000, 1), (30_000, 0)]
    );

    // Hadoop's greedy planner does not slide the chain to find a gap-free placement: it
    // places the first stage at the arrival and refuses when the second cannot follow.
    let mut p = plan();
    block(&mut p, 1, 10, 10_000, 20_000);
    let before = p.clone();
    let no_gap = def(Interpreter::OrderNoGap, 0, 60_000, stages);
    let err = GreedyAgent::default()
        .create(&mut p, id(2), "alice", &no_gap, NOW)
        .unwrap_err();
    assert_eq!(err, PlanError::NoGap { stage: 1 });
    assert_eq!(
        err.to_string(),
        "The allocation found does not respect ORDER_NO_GAP"
    );
    assert_eq!(p, before, "a refusal changes nothing");
}

#[test]
fn order_no_gap_accepts_a_chain_that_fits_back_to_back() {
    let mut p = plan();
    let d = def(
        Interpreter::OrderNoGap,
        0,
        60_000,
        vec![stage(2, 2, 2, 10), stage(3, 1, 1, 5)],
    );
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(0, 4), (10_000, 3), (15_000, 0)]);
}

#[test]
fn any_takes_the_first_alternative_that_fits() {
    // A 12 GB container never fits a 10 GB plan (R_ANY skips the gang-size check, as Hadoop
    // does); the 1 GB alternative is placed instead, and only it.
    let mut p = plan();
    let d = def(
        Interpreter::Any,
        0,
        60_000,
        vec![stage(12, 1, 1, 10), stage(1, 1, 1, 10)],
    );
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(0, 1), (10_000, 0)]);

    let none = def(Interpreter::Any, 0, 60_000, vec![stage(12, 1, 1, 10)]);
    let err = GreedyAgent::default()
        .create(&mut p, id(2), "alice", &none, NOW)
        .unwrap_err();
    assert_eq!(err, PlanError::CannotSatisfy { stage: None });
}

#[test]
fn a_reservation_that_cannot_finish_before_its_deadline_is_refused_unchanged() {
    let mut p = plan();
    block(&mut p, 1, 10, 0, 50_000);
    let before = p.clone();
    let d = def(Interpreter::All, 0, 55_000, vec![stage(1, 1, 1, 10)]);
    let err = GreedyAgent::default()
        .create(&mut p, id(2), "alice", &d, NOW)
        .unwrap_err();
    assert_eq!(err, PlanError::CannotSatisfy { stage: Some(0) });
    assert_eq!(err.to_string(), "The request cannot be satisfied");
    assert_eq!(p, before);
}

#[test]
fn contract_errors_come_before_planning() {
    let mut p = plan();
    let too_big = def(Interpreter::All, 0, 60_000, vec![stage(6, 2, 2, 10)]);
    let err = GreedyAgent::default()
        .create(&mut p, id(1), "alice", &too_big, NOW)
        .unwrap_err();
    assert!(matches!(
        err,
        PlanError::Contract(ContractError::GangExceedsCapacity { .. })
    ));
    let past = def(Interpreter::All, 0, 60_000, vec![stage(1, 1, 1, 10)]);
    let err = GreedyAgent::default()
        .create(&mut p, id(1), "alice", &past, Time(60_000))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The specified deadline: 60000 is the past. Please try again with deadline in the future."
    );
    assert!(p.is_empty());
}

#[test]
fn the_instantaneous_share_bounds_what_the_agent_proposes() {
    // At 50%, alice may hold 5 GB at any instant: six 1 GB containers of 10 s go 5 then 1.
    let policy = SharingPolicy::CapacityOverTime(CapacityOverTime {
        instantaneous_max: Percent::from_percent(50.0).unwrap(),
        ..CapacityOverTime::default()
    });
    let mut p = plan_with(policy);
    let d = def(Interpreter::All, 0, 60_000, vec![stage(1, 6, 1, 10)]);
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(0, 5), (10_000, 1), (20_000, 0)]);
    // A 6 GB container can never fit alice's 5 GB share.
    let big = def(Interpreter::All, 0, 60_000, vec![stage(6, 1, 1, 10)]);
    assert_eq!(
        GreedyAgent::default().create(&mut p, id(2), "alice", &big, NOW),
        Err(PlanError::CannotSatisfy { stage: Some(0) })
    );
    // Bob has his own share.
    GreedyAgent::default()
        .create(
            &mut p,
            id(3),
            "bob",
            &def(Interpreter::All, 0, 60_000, vec![stage(5, 1, 1, 10)]),
            NOW,
        )
        .unwrap();
}

#[test]
fn the_average_share_refuses_with_hadoops_message() {
    // 10% of 10 GB over a 100 s window: at most 1 GB × 100 s per window. 2 GB for 60 s is
    // 120 GB·s.
    let policy = SharingPolicy::CapacityOverTime(CapacityOverTime {
        average: Percent::from_percent(10.0).unwrap(),
        window: Duration::from_secs(100),
        ..CapacityOverTime::default()
    });
    let mut p = plan_with(policy);
    let d = def(Interpreter::All, 0, 600_000, vec![stage(2, 1, 1, 60)]);
    let err = GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap_err();
    let PlanError::Policy {
        id: refused,
        violation,
    } = &err
    else {
        panic!("expected a policy refusal, got {err:?}");
    };
    assert_eq!(*refused, id(1));
    assert!(matches!(**violation, PolicyViolation::Integral { .. }));
    assert!(err
        .to_string()
        .starts_with("Integral (avg over time) quota capacity 0.1 over a window of 100 seconds"));
    assert!(p.is_empty());
    // 1 GB for 100 s is exactly the limit.
    let ok = def(Interpreter::All, 0, 600_000, vec![stage(1, 1, 1, 100)]);
    GreedyAgent::default()
        .create(&mut p, id(2), "alice", &ok, NOW)
        .unwrap();
}

#[test]
fn update_counts_the_old_version_as_free_and_keeps_it_on_refusal() {
    let mut p = plan();
    let small = def(Interpreter::All, 0, 10_000, vec![stage(8, 1, 1, 10)]);
    let agent = GreedyAgent::default();
    agent.create(&mut p, id(1), "alice", &small, NOW).unwrap();
    // 10 GB over the same 10 s only fits if the old 8 GB is freed first.
    let full = def(Interpreter::All, 0, 10_000, vec![stage(10, 1, 1, 10)]);
    agent.update(&mut p, id(1), "alice", &full, NOW).unwrap();
    assert_eq!(allocation(&p, 1), vec![(0, 10), (10_000, 0)]);
    // A refused update leaves the accepted version in place.
    let before = p.clone();
    let too_long = def(Interpreter::All, 0, 10_000, vec![stage(1, 1, 1, 20)]);
    assert!(agent
        .update(&mut p, id(1), "alice", &too_long, NOW)
        .is_err());
    assert_eq!(p, before);
    assert_eq!(
        agent.update(&mut p, id(1), "bob", &full, NOW),
        Err(PlanError::MismatchedUser {
            old: "alice".into(),
            new: "bob".into()
        })
    );
    assert_eq!(
        agent.update(&mut p, id(9), "alice", &full, NOW),
        Err(PlanError::UnknownReservation(id(9)))
    );
    assert_eq!(
        agent.create(&mut p, id(1), "alice", &full, NOW),
        Err(PlanError::DuplicateReservation(id(1)))
    );
}

#[test]
fn delete_returns_the_reservation_and_frees_its_resources() {
    let mut p = plan();
    let agent = GreedyAgent::default();
    block(&mut p, 1, 10, 0, 10_000);
    let d = def(Interpreter::All, 0, 20_000, vec![stage(1, 1, 1, 10)]);
    agent.create(&mut p, id(2), "alice", &d, NOW).unwrap();
    assert_eq!(allocation(&p, 2), vec![(10_000, 1), (20_000, 0)]);
    let gone = agent.delete(&mut p, &id(1)).unwrap();
    assert_eq!(gone.user, "other");
    assert_eq!(steps(p.committed()), vec![(10_000, 1), (20_000, 0)]);
    agent.delete(&mut p, &id(2)).unwrap();
    assert!(p.is_empty());
    assert_eq!(
        agent.delete(&mut p, &id(2)),
        Err(PlanError::UnknownReservation(id(2)))
    );
}

#[test]
fn ended_reservations_are_archived_one_policy_window_later() {
    let mut p = plan_with(SharingPolicy::CapacityOverTime(CapacityOverTime {
        window: Duration::from_secs(100),
        ..CapacityOverTime::default()
    }));
    let d = def(Interpreter::All, 0, 10_000, vec![stage(1, 1, 1, 10)]);
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert!(p.archive_completed(Time(109_999)).unwrap().is_empty());
    let archived = p.archive_completed(Time(110_000)).unwrap();
    assert_eq!(archived.len(), 1);
    assert!(p.is_empty());
}

#[test]
fn recurring_reservations_are_refused_explicitly_until_planned() {
    let mut p = plan();
    let mut d = def(Interpreter::All, 0, 10_000, vec![stage(1, 1, 1, 10)]);
    d.recurrence = Some(Duration(3_600_000));
    assert_eq!(
        GreedyAgent::default().create(&mut p, id(1), "alice", &d, NOW),
        Err(PlanError::RecurringNotPlanned(id(1)))
    );
}

#[test]
fn late_allocation_tries_any_alternatives_from_the_last() {
    // Hadoop's stage provider walks the stages backwards when allocating right to left, so
    // R_ANY picks the last alternative that fits.
    let d = def(
        Interpreter::Any,
        0,
        60_000,
        vec![stage(1, 1, 1, 10), stage(2, 1, 1, 10)],
    );
    let mut p = plan();
    GreedyAgent { favor_early: false }
        .create(&mut p, id(1), "alice", &d, NOW)
        .unwrap();
    assert_eq!(allocation(&p, 1), vec![(50_000, 2), (60_000, 0)]);
}

#[test]
fn late_order_no_gap_refuses_a_gap_before_the_next_stage() {
    // The plan is full over [40 s, 50 s): placed from the deadline, the last stage takes
    // [50 s, 60 s) and the first can only end at 40 s, leaving a gap.
    let mut p = plan();
    block(&mut p, 1, 10, 40_000, 50_000);
    let d = def(
        Interpreter::OrderNoGap,
        0,
        60_000,
        vec![stage(1, 1, 1, 10), stage(1, 1, 1, 10)],
    );
    assert_eq!(
        GreedyAgent { favor_early: false }.create(&mut p, id(2), "alice", &d, NOW),
        Err(PlanError::NoGap { stage: 0 })
    );
}
