//! The plan's side of the spec's plan-follower scenarios (time-aware-demands §5 B). The
//! follower itself (queues, apps, preemption) lives in the scheduler and is not built yet; these
//! tests fix what the plan tells it. Plan `root.prod`: 4 nodes of 6 GB / 6 vcores = 24 GB,
//! step 1 s, Hadoop's default policy. B2 (no reservation id) and B7 (enforcement) have no plan
//! input beyond B1's and are the follower's alone.

use weft_plan::{
    replan, GreedyAgent, Interpreter, Plan, PlanConfig, ReservationAgent, ReservationDefinition,
    ReservationId, ReservationRequest, DEFAULT_ENFORCEMENT_WINDOW,
};
use weft_types::{Duration, Resource, Time};

const MIN: u64 = 60_000;
const T0: Time = Time(1_700_000_000_000);

fn gb(n: i64) -> Resource {
    Resource::new(n * 1024, n)
}

fn id(seq: u64) -> ReservationId {
    ReservationId {
        cluster_timestamp: T0.0,
        sequence: seq,
    }
}

fn prod() -> Plan {
    Plan::new(PlanConfig::new("root.prod"), gb(24)).expect("valid plan")
}

/// `containers` × 1 GB in gangs of `gang`, for `minutes`, within [T0 + from, T0 + to) minutes.
fn def(from: u64, to: u64, containers: u32, gang: u32, minutes: u64) -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(T0.0 + from * MIN),
        deadline: Time(T0.0 + to * MIN),
        name: String::new(),
        priority: 0,
        recurrence: None,
        interpreter: Interpreter::All,
        requests: vec![ReservationRequest {
            capability: gb(1),
            num_containers: containers,
            concurrency: gang,
            duration: Duration(minutes * MIN),
        }],
    }
}

fn at(minutes: u64) -> Time {
    Time(T0.0 + minutes * MIN)
}

#[test]
fn b1_an_active_10_gb_reservation_holds_10_gb_now() {
    let mut p = prod();
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &def(0, 60, 10, 1, 30), T0)
        .unwrap();
    let active: Vec<_> = p.active_at(at(1)).collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].id, id(1));
    assert_eq!(active[0].at(at(1)), gb(10));
    assert!(
        !active[0].has_gang(),
        "no gang: the follower lets the queue grow to 100%"
    );
}

#[test]
fn b3_a_reservation_starting_in_5_minutes_is_not_active_yet() {
    let mut p = prod();
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &def(5, 60, 10, 1, 30), T0)
        .unwrap();
    assert_eq!(
        p.active_at(T0).count(),
        0,
        "apps submitted now are rejected"
    );
    assert_eq!(p.active_at(at(5)).count(), 1);
    assert_eq!(p.reservation(&id(1)).unwrap().at(at(5)), gb(10));
}

#[test]
fn b4_a_reservation_stays_active_until_its_deadline_then_ends() {
    // The allocation ends after 30 minutes, but Hadoop pads the reservation with zeros up to
    // the deadline: its queue stays (at 0) until minute 60, then the follower moves or kills
    // its apps.
    let mut p = prod();
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &def(0, 60, 10, 1, 30), T0)
        .unwrap();
    let r = p.reservation(&id(1)).unwrap();
    assert_eq!(r.at(at(30)), Resource::ZERO);
    assert!(r.is_active_at(at(59)));
    assert!(!r.is_active_at(at(60)));
    assert_eq!(p.active_at(at(60)).count(), 0);
}

#[test]
fn b5_losing_half_the_nodes_drops_the_newest_reservations_until_the_plan_fits() {
    // Three reservations of 8 GB each over the same 30 minutes fill 24 GB. Two nodes are lost
    // at minute 1: the plan is 12 GB. Dropping the newest (3) leaves 16 GB, still over; then
    // (2) leaves 8 GB, which fits. The oldest stays.
    let mut p = prod();
    let agent = GreedyAgent::default();
    for seq in 1..=3 {
        agent
            .create(&mut p, id(seq), "alice", &def(0, 60, 8, 1, 30), T0)
            .unwrap();
    }
    p.set_capacity(at(1), gb(12));
    let dropped = replan(&mut p, at(1), DEFAULT_ENFORCEMENT_WINDOW).unwrap();
    let ids: Vec<_> = dropped.iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![id(3), id(2)]);
    assert_eq!(
        p.reservations().map(|r| r.id).collect::<Vec<_>>(),
        vec![id(1)]
    );
    assert_eq!(p.committed().value_at(at(1)), gb(8));
    // Nothing more to drop: replanning again changes nothing.
    assert!(replan(&mut p, at(1), DEFAULT_ENFORCEMENT_WINDOW)
        .unwrap()
        .is_empty());
}

#[test]
fn b5_overcommit_beyond_the_enforcement_window_is_left_for_later() {
    // The excess starts 2 h from now, past the 1 h window: nothing is dropped yet.
    let mut p = prod();
    let agent = GreedyAgent::default();
    for seq in 1..=2 {
        agent
            .create(&mut p, id(seq), "alice", &def(120, 180, 16, 1, 30), T0)
            .unwrap_or_else(|e| panic!("reservation {seq}: {e}"));
    }
    p.set_capacity(at(1), gb(12));
    assert!(replan(&mut p, at(1), DEFAULT_ENFORCEMENT_WINDOW)
        .unwrap()
        .is_empty());
    // An hour later the excess at minute 120 is inside the window. The second reservation
    // went after the first ([150, 180) behind [120, 150)) but both hold from their arrival at
    // minute 120, so, as in Hadoop, the newest is dropped first although it reserves nothing
    // there yet, and then the first, whose 16 GB still exceed 12 GB.
    let dropped = replan(&mut p, at(61), DEFAULT_ENFORCEMENT_WINDOW).unwrap();
    assert_eq!(
        dropped.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![id(2), id(1)]
    );
    assert!(p.is_empty());
}

#[test]
fn b6_a_gang_reservation_is_marked_for_the_gang_cap() {
    // min-concurrency = num-containers: one gang of 10 × 1 GB.
    let mut p = prod();
    GreedyAgent::default()
        .create(&mut p, id(1), "alice", &def(0, 60, 10, 10, 30), T0)
        .unwrap();
    let r = p.reservation(&id(1)).unwrap();
    assert!(
        r.has_gang(),
        "the follower caps the queue's max at its reserved share"
    );
    assert_eq!(r.at(at(0)), gb(10));
}
