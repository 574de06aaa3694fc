//! Every transition of §3.4's table with its reason and time, the refusals, and recovery from
//! the store (acceptance scenarios C1, C4, C5, C8-C14 as far as they need no planner or
//! scheduler).

use serde_json::Value;
use weft_store::DemandState;
use weft_types::Time;

use crate::tests::{config, core, drain, register, stored, submit};
use crate::*;

const SEC: u64 = 1_000;
const MIN: u64 = 60_000;

fn batch(c: &mut RmCore, t: u64, json: &str) -> Result<Vec<DemandReport>, RmError> {
    let value: Value = serde_json::from_str(json).expect("test JSON");
    let result = c.submit_demands(
        Time(t),
        DemandBatch {
            user: "alice",
            queue: Some("root.default"),
            application: None,
            demands: &value,
            pointer: "/demands",
        },
    );
    drain(c);
    result
}

/// A demand of `n` 1 GB containers with the given extra fields.
fn demand(id: u64, n: u64, extra: &str) -> String {
    format!(
        r#"{{"DemandID": {id}, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": {n}}}{extra}}}"#
    )
}

fn one(c: &mut RmCore, t: u64, id: u64, n: u64, extra: &str) -> DemandReport {
    let mut reports = batch(c, t, &demand(id, n, extra)).unwrap_or_else(|e| panic!("{e}"));
    reports.remove(0)
}

fn key(id: u64) -> String {
    format!("~alice/{id}")
}

/// The timeline as (state, reason, at).
fn timeline(c: &RmCore, id: u64) -> Vec<(DemandState, &'static str, u64)> {
    c.demand(&key(id))
        .expect("a demand")
        .timeline
        .iter()
        .map(|t| (t.state, t.reason.as_str(), t.at.as_millis()))
        .collect()
}

fn last(c: &RmCore, id: u64) -> (DemandState, &'static str, u64) {
    *timeline(c, id).last().expect("a transition")
}

fn tick(c: &mut RmCore, t: u64) {
    c.tick(Time(t));
    drain(c);
}

fn allocate_all(c: &mut RmCore, t: u64, id: u64, n: u64) {
    c.demand_allocated(Time(t), &key(id), n).expect("allocated");
    drain(c);
}

/// Runs demand `id` (n containers) from ALLOCATING to its containers claimed at `t`.
fn run(c: &mut RmCore, t: u64, id: u64, n: u64) {
    allocate_all(c, t, id, n);
    c.demand_claimed(Time(t), &key(id), n).expect("claimed");
    drain(c);
}

use DemandState::*;

#[test]
fn an_unconstrained_demand_is_recorded_accepted_and_eligible_at_once() {
    let mut c = core();
    let report = one(&mut c, 5, 1, 2, "");
    assert_eq!(report.key, "~alice/1");
    assert_eq!(report.queue, "root.default");
    assert_eq!(
        timeline(&c, 1),
        [
            (New, "submitted", 5),
            (Accepted, "unconstrained", 5),
            (Allocating, "eligible", 5)
        ]
    );
    let record = &stored().demands[0];
    assert_eq!(record.key, "~alice/1");
    assert_eq!(record.timeline.len(), 3, "every transition is persisted");
}

#[test]
fn an_invalid_batch_creates_no_demand_and_names_field_and_column() {
    let mut c = core();
    let bad = format!(
        "[{}, {}]",
        demand(1, 1, ""),
        demand(2, 1, r#", "Start": {"Time": "[NOW, +5x]"}"#)
    );
    let err = batch(&mut c, 0, &bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid demand: /demands/1/Start/Time: column 9: unknown unit 'x'; expected h, m or s"
    );
    assert!(c.demands(None, None, None).is_empty());
    assert!(stored().demands.is_empty());
    one(&mut c, 0, 1, 1, "");
    let again = batch(&mut c, 0, &demand(1, 1, "")).unwrap_err();
    assert_eq!(
        again.to_string(),
        "invalid demand: /demands/DemandID: demand ~alice/1 already exists"
    );
    let empty = batch(
        &mut c,
        0,
        &demand(3, 1, r#", "Start": "AND([NOW,+5m],[NOW+10m,+10m])""#),
    );
    assert_eq!(
        empty.unwrap_err().to_string(),
        "invalid demand: /demands/Start: time expression is empty"
    );
}

#[test]
fn a_strict_condition_that_needs_a_plan_fails_not_reservable_and_a_loose_one_runs_best_effort() {
    let mut c = core();
    one(
        &mut c,
        0,
        1,
        1,
        r#", "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "strict"}, "Duration": "30m""#,
    );
    assert_eq!(last(&c, 1), (Failed, "not_reservable", 0));
    one(
        &mut c,
        0,
        2,
        1,
        r#", "Start": "[NOW+10m, +5m]", "Duration": "30m""#,
    );
    assert_eq!(last(&c, 2), (Accepted, "best_effort", 0));
    tick(&mut c, 10 * MIN);
    assert_eq!(last(&c, 2), (Allocating, "eligible", 10 * MIN));
}

#[test]
fn c8_a_gang_that_cannot_be_packed_on_the_nodes_fails_unpackable() {
    let mut c = core();
    for n in 1..=4 {
        register(&mut c, 0, &format!("h{n}:1"));
    }
    drain(&mut c);
    let gang = r#"{"DemandID": 1, "Gang": true, "ResourceRequest": {"capability": {"memory": 5120, "vCores": 1}, "num-containers": 5}}"#;
    batch(&mut c, 0, gang).unwrap();
    assert_eq!(last(&c, 1).1, "unpackable");
    let detail = c.demand(&key(1)).unwrap().timeline[1].detail.clone();
    assert_eq!(
        detail,
        "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4 members"
    );
    let fits = r#"{"DemandID": 2, "Gang": true, "ResourceRequest": {"capability": {"memory": 4096, "vCores": 1}, "num-containers": 8}}"#;
    batch(&mut c, 0, fits).unwrap();
    assert_eq!(last(&c, 2), (Allocating, "eligible", 0));
}

#[test]
fn c8_with_the_packability_check_off_the_gang_is_admitted_on_the_aggregate() {
    let mut cfg = config("<allocations/>");
    cfg.scheduler.properties_mut().reservation_packability_check = false;
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    for n in 1..=4 {
        register(&mut c, 0, &format!("h{n}:1"));
    }
    drain(&mut c);
    // 25 GB within the 32 GB aggregate: Hadoop's answer, although no node holds two members.
    let gang = r#"{"DemandID": 1, "Gang": true, "ResourceRequest": {"capability": {"memory": 5120, "vCores": 1}, "num-containers": 5}}"#;
    batch(&mut c, 0, gang).unwrap();
    assert_eq!(
        timeline(&c, 1),
        vec![
            (New, "submitted", 0),
            (Accepted, "unconstrained", 0),
            (Allocating, "eligible", 0)
        ]
    );
}

#[test]
fn a_start_window_gates_eligibility_until_its_lower_bound() {
    let mut c = core();
    one(&mut c, 0, 1, 1, r#", "Start": "[NOW+10m, ]""#);
    assert_eq!(last(&c, 1), (Accepted, "unconstrained", 0));
    tick(&mut c, 10 * MIN - 1);
    assert_eq!(last(&c, 1).0, Accepted);
    tick(&mut c, 10 * MIN);
    assert_eq!(last(&c, 1), (Allocating, "eligible", 10 * MIN));
}

#[test]
fn c6_a_blackout_keeps_the_demand_waiting_until_it_ends() {
    let mut c = core();
    one(
        &mut c,
        0,
        1,
        1,
        r#", "Start": "AND([NOW, +2h], NOT([NOW, +70m]))""#,
    );
    tick(&mut c, 20 * MIN);
    assert_eq!(last(&c, 1).0, Accepted, "inside the blackout");
    tick(&mut c, 70 * MIN);
    assert_eq!(last(&c, 1), (Allocating, "eligible", 70 * MIN));
}

#[test]
fn c1_an_ordered_demand_waits_for_its_predecessor_then_is_monitored_and_ends_late() {
    let mut c = core();
    one(&mut c, 0, 1200, 1, "");
    let example_a = r#", "OrderBy": 1200, "DeadLine": {"Time": "[, +20m]", "Strategy": "loose"}"#;
    one(&mut c, 0, 1234, 8, example_a);
    assert_eq!(last(&c, 1234), (Accepted, "waiting_order", 0));
    run(&mut c, 10 * SEC, 1200, 1);
    c.demand_completed(Time(300 * SEC), &key(1200), 1).unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 1200), (Finished, "ok", 300 * SEC));
    assert_eq!(
        last(&c, 1234),
        (Allocating, "eligible", 300 * SEC),
        "eligible at the instant 1200 ends"
    );
    c.demand_allocated(Time(301 * SEC), &key(1234), 3).unwrap();
    allocate_all(&mut c, 302 * SEC, 1234, 5);
    assert_eq!(last(&c, 1234), (Allocated, "satisfied", 302 * SEC));
    assert_eq!(
        c.demand(&key(1234)).unwrap().first_allocation,
        Some(Time(301 * SEC)),
        "START is the first allocation"
    );
    c.demand_claimed(Time(303 * SEC), &key(1234), 8).unwrap();
    assert_eq!(last(&c, 1234), (Monitoring, "claimed", 303 * SEC));
    let deadline = 301 * SEC + 20 * MIN;
    tick(&mut c, deadline - 1);
    assert_eq!(last(&c, 1234).0, Monitoring);
    tick(&mut c, deadline);
    assert_eq!(last(&c, 1234), (Monitoring, "deadline_missed", deadline));
    c.demand_completed(Time(deadline + 5 * MIN), &key(1234), 8)
        .unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 1234), (Finished, "late", deadline + 5 * MIN));
}

/// C1's strict variant: DeadLine [, +20m] strict, START at 10 s, so D = 10 s + 20 min =
/// 1,210 s. At D the running container is warned (the state stays MONITORING with reason
/// `deadline_missed`); waitTimeBeforeKill (15 s by default) later, at 1,225 s, the demand
/// fails `deadline_missed`. A second one whose container ends inside the grace (at 1,220 s)
/// finishes as a missed deadline does: `late`.
#[test]
fn c1_strict_a_deadline_after_start_warns_then_fails_the_demand_after_the_grace() {
    let mut c = core();
    let strict = r#", "DeadLine": {"Time": "[, +20m]", "Strategy": "strict"}"#;
    one(&mut c, 0, 1, 1, strict);
    one(&mut c, 0, 2, 1, strict);
    run(&mut c, 10 * SEC, 1, 1);
    run(&mut c, 10 * SEC, 2, 1);
    assert_eq!(last(&c, 1).0, Monitoring);
    let deadline = 10 * SEC + 20 * MIN;
    assert_eq!(deadline, 1_210 * SEC);
    tick(&mut c, deadline);
    for id in [1, 2] {
        assert_eq!(last(&c, id), (Monitoring, "deadline_missed", deadline));
    }
    let detail = c
        .demand(&key(1))
        .unwrap()
        .timeline
        .last()
        .unwrap()
        .detail
        .clone();
    assert!(detail.contains("killed at 1225000 ms"), "{detail}");
    c.demand_completed(Time(1_220 * SEC), &key(2), 1).unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 2), (Finished, "late", 1_220 * SEC));
    tick(&mut c, 1_225 * SEC - 1);
    assert_eq!(last(&c, 1), (Monitoring, "deadline_missed", deadline));
    tick(&mut c, 1_225 * SEC);
    assert_eq!(last(&c, 1), (Failed, "deadline_missed", 1_225 * SEC));
    let failed = c
        .demand(&key(1))
        .unwrap()
        .timeline
        .iter()
        .filter(|t| t.state == Failed)
        .count();
    assert_eq!(failed, 1, "the kill fails the demand once");
}

/// A grace of 0 (`waitTimeBeforeKill` 0) kills at the strict instant.
#[test]
fn a_strict_end_without_a_grace_fails_at_once() {
    let mut cfg = config("<allocations/>");
    cfg.scheduler.properties_mut().wait_time_before_kill_ms = 0;
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    one(
        &mut c,
        0,
        1,
        1,
        r#", "DeadLine": {"Time": "[, +20m]", "Strategy": "strict"}"#,
    );
    run(&mut c, 10 * SEC, 1, 1);
    tick(&mut c, 10 * SEC + 20 * MIN);
    assert_eq!(
        last(&c, 1),
        (Failed, "deadline_missed", 10 * SEC + 20 * MIN)
    );
}

#[test]
fn c10_a_failed_predecessor_fails_a_strict_successor_and_lets_a_loose_one_proceed() {
    let mut c = core();
    one(&mut c, 0, 1200, 1, "");
    one(
        &mut c,
        0,
        1,
        1,
        r#", "OrderBy": {"After": 1200, "Strategy": "strict"}"#,
    );
    one(&mut c, 0, 2, 1, r#", "OrderBy": 1200"#);
    c.kill_demand(Time(50), &key(1200), "alice").unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 1200), (Failed, "killed", 50));
    assert_eq!(last(&c, 1), (Failed, "predecessor_failed", 50));
    assert_eq!(last(&c, 2), (Allocating, "eligible", 50));
}

#[test]
fn c11_and_waits_for_both_predecessors_and_or_for_the_first() {
    let mut c = core();
    one(&mut c, 0, 1200, 1, "");
    one(&mut c, 0, 1201, 1, "");
    one(&mut c, 0, 1, 1, r#", "OrderBy": {"AND": [1200, 1201]}"#);
    one(&mut c, 0, 2, 1, r#", "OrderBy": {"OR": [1200, 1201]}"#);
    for id in [1200, 1201] {
        run(&mut c, 0, id, 1);
    }
    c.demand_completed(Time(100 * SEC), &key(1201), 1).unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 1).0, Accepted);
    assert_eq!(last(&c, 2), (Allocating, "eligible", 100 * SEC));
    c.demand_completed(Time(200 * SEC), &key(1200), 1).unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 1), (Allocating, "eligible", 200 * SEC));
}

#[test]
fn c12_a_strict_deadline_a_late_predecessor_makes_unreachable_fails_while_waiting() {
    let mut cfg = config("<allocations/>");
    cfg.demand_admit_unplanned = true;
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    one(&mut c, 0, 1200, 1, "");
    one(
        &mut c,
        0,
        1,
        1,
        r#", "OrderBy": {"After": 1200, "Strategy": "strict"}, "Duration": "20m", "DeadLine": {"Time": "[NOW, +30m]", "Strategy": "strict"}"#,
    );
    assert_eq!(last(&c, 1), (Accepted, "best_effort", 0));
    tick(&mut c, 10 * MIN);
    assert_eq!(
        last(&c, 1).0,
        Accepted,
        "10 min + 20 min still meets 30 min"
    );
    tick(&mut c, 10 * MIN + 1);
    assert_eq!(last(&c, 1), (Failed, "deadline_unreachable", 10 * MIN + 1));
}

#[test]
fn c4_a_strict_count_window_expires_at_the_fourth_missed_opportunity() {
    let mut c = core();
    one(
        &mut c,
        0,
        1,
        1,
        r#", "Start": {"Time": "[NOW, ^3]", "Strategy": "strict"}"#,
    );
    one(&mut c, 0, 2, 1, r#", "Start": "[NOW, ^3]""#);
    for miss in 1..=3 {
        for id in [1, 2] {
            c.demand_missed_opportunity(Time(miss * SEC), &key(id))
                .unwrap();
        }
    }
    assert_eq!(last(&c, 1).0, Allocating);
    c.demand_missed_opportunity(Time(4 * SEC), &key(1)).unwrap();
    c.demand_missed_opportunity(Time(4 * SEC), &key(2)).unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 1), (Failed, "window_expired", 4 * SEC));
    assert_eq!(
        last(&c, 2),
        (Allocating, "window_missed", 4 * SEC),
        "loose: the bound is dropped and allocation continues"
    );
    assert_eq!(c.demand(&key(1)).unwrap().missed_opportunities, 4);
    c.demand_missed_opportunity(Time(5 * SEC), &key(2)).unwrap();
    allocate_all(&mut c, 6 * SEC, 2, 1);
    assert_eq!(last(&c, 2), (Allocated, "satisfied", 6 * SEC));
}

#[test]
fn c5_or_stays_open_on_its_time_branch_and_and_closes_at_the_first_exhaustion() {
    let mut c = core();
    let or = r#", "Start": {"Time": "OR([NOW,+5m],[NOW,^3])", "Strategy": "strict"}"#;
    let and = r#", "Start": {"Time": "AND([NOW,+5m],[NOW,^3])", "Strategy": "strict"}"#;
    one(&mut c, 0, 1, 1, or);
    one(&mut c, 0, 2, 1, and);
    for miss in 1..=4 {
        for id in [1, 2] {
            let _ = c.demand_missed_opportunity(Time(miss * 250), &key(id));
        }
    }
    drain(&mut c);
    assert_eq!(last(&c, 2), (Failed, "window_expired", 1_000));
    assert_eq!(last(&c, 1).0, Allocating, "the time branch is open");
    allocate_all(&mut c, 2 * MIN, 1, 1);
    assert_eq!(last(&c, 1), (Allocated, "satisfied", 2 * MIN));
}

#[test]
fn a_gang_starts_when_the_whole_gang_is_allocated() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    drain(&mut c);
    one(&mut c, 0, 1, 4, r#", "Gang": true"#);
    c.demand_allocated(Time(10), &key(1), 3).unwrap();
    assert_eq!(c.demand(&key(1)).unwrap().first_allocation, None);
    allocate_all(&mut c, 20, 1, 1);
    let report = c.demand(&key(1)).unwrap();
    assert_eq!(report.first_allocation, Some(Time(20)));
    assert_eq!(last(&c, 1), (Allocated, "satisfied", 20));
}

#[test]
fn an_unwatched_demand_waits_in_allocated_and_finishes_when_its_containers_complete() {
    let mut c = core();
    one(&mut c, 0, 1, 2, "");
    run(&mut c, 10, 1, 2);
    assert_eq!(
        last(&c, 1),
        (Allocated, "satisfied", 10),
        "nothing to monitor"
    );
    c.demand_completed(Time(30), &key(1), 1).unwrap();
    assert_eq!(last(&c, 1).0, Allocated);
    c.demand_completed(Time(40), &key(1), 1).unwrap();
    assert_eq!(last(&c, 1), (Finished, "ok", 40));
}

#[test]
fn a_demand_with_dependents_is_monitored() {
    let mut c = core();
    one(&mut c, 0, 1, 1, "");
    one(&mut c, 0, 2, 1, r#", "OrderBy": 1"#);
    run(&mut c, 10, 1, 1);
    assert_eq!(last(&c, 1), (Monitoring, "claimed", 10));
}

#[test]
fn c9_unclaimed_containers_expire_the_demand_at_its_claim_timeout() {
    let mut c = core();
    one(&mut c, 0, 1, 2, r#", "ClaimTimeout": "30s""#);
    one(&mut c, 0, 2, 2, "");
    allocate_all(&mut c, 10, 1, 2);
    allocate_all(&mut c, 10, 2, 2);
    c.demand_claimed(Time(20), &key(1), 1).unwrap();
    tick(&mut c, 10 + 30 * SEC - 1);
    assert_eq!(last(&c, 1).0, Allocated);
    tick(&mut c, 10 + 30 * SEC);
    assert_eq!(last(&c, 1), (Failed, "claim_expired", 10 + 30 * SEC));
    tick(&mut c, 10 + 600 * SEC);
    assert_eq!(
        last(&c, 2),
        (Failed, "claim_expired", 10 + 600 * SEC),
        "the container allocation expiry by default"
    );
}

/// C13: Duration 10m, START at 5 ms, so the lease ends at 600,005 ms. Loose (1): noted
/// `lease_overrun`, still MONITORING (no plan, so no queue to leave), FINISHED ok when its
/// container ends at 12 min. Strict (2): warned at 600,005 ms (MONITORING,
/// `duration_exceeded`), killed waitTimeBeforeKill = 15 s later, at 615,005 ms: FAILED
/// `duration_exceeded`. Strict (3), whose container ends at 610 s inside the grace: FINISHED
/// ok, as it would have ended.
#[test]
fn c13_a_lease_overrun_is_noted_when_loose_and_fails_the_demand_after_the_grace_when_strict() {
    let mut c = core();
    one(&mut c, 0, 1, 1, r#", "Duration": "10m""#);
    let strict = r#", "Duration": {"Time": "[, +10m]", "Strategy": "strict"}"#;
    one(&mut c, 0, 2, 1, strict);
    one(&mut c, 0, 3, 1, strict);
    for id in [1, 2, 3] {
        run(&mut c, 5, id, 1);
    }
    let lease_end = 5 + 10 * MIN;
    tick(&mut c, lease_end);
    assert_eq!(last(&c, 1), (Monitoring, "lease_overrun", lease_end));
    assert_eq!(last(&c, 2), (Monitoring, "duration_exceeded", lease_end));
    assert_eq!(last(&c, 3), (Monitoring, "duration_exceeded", lease_end));
    c.demand_completed(Time(610 * SEC), &key(3), 1).unwrap();
    drain(&mut c);
    assert_eq!(last(&c, 3), (Finished, "ok", 610 * SEC));
    tick(&mut c, 615_004);
    assert_eq!(last(&c, 2), (Monitoring, "duration_exceeded", lease_end));
    tick(&mut c, 615_005);
    assert_eq!(last(&c, 2), (Failed, "duration_exceeded", 615_005));
    c.demand_completed(Time(12 * MIN), &key(1), 1).unwrap();
    assert_eq!(last(&c, 1), (Finished, "ok", 12 * MIN));
}

#[test]
fn the_am_decides_the_outcome() {
    let mut c = core();
    one(&mut c, 0, 1, 1, r#", "Duration": "1h""#);
    one(&mut c, 0, 2, 1, r#", "Duration": "1h""#);
    run(&mut c, 0, 1, 1);
    run(&mut c, 0, 2, 1);
    c.demand_done(Time(5), &key(1), true).unwrap();
    c.demand_done(Time(6), &key(2), false).unwrap();
    assert_eq!(last(&c, 1), (Finished, "ok", 5));
    assert_eq!(last(&c, 2), (Finished, "failed", 6));
}

#[test]
fn c14_a_kill_fails_the_demand_in_every_live_state_and_is_refused_once_it_ended() {
    let mut c = core();
    one(&mut c, 0, 1200, 1, "");
    // ACCEPTED, ALLOCATING, ALLOCATED, MONITORING in turn.
    one(&mut c, 0, 1, 1, r#", "OrderBy": 1200"#);
    one(&mut c, 0, 2, 1, "");
    one(&mut c, 0, 3, 1, "");
    allocate_all(&mut c, 0, 3, 1);
    one(&mut c, 0, 4, 1, r#", "Duration": "1h""#);
    run(&mut c, 0, 4, 1);
    let states: Vec<DemandState> = (1..=4).map(|id| last(&c, id).0).collect();
    assert_eq!(states, [Accepted, Allocating, Allocated, Monitoring]);
    for id in 1..=4 {
        let report = c.kill_demand(Time(9), &key(id), "alice").unwrap();
        assert_eq!(
            (report.state, report.reason),
            (Failed, DemandReason::Killed)
        );
    }
    let err = c.kill_demand(Time(10), &key(4), "alice").unwrap_err();
    assert_eq!(
        err.to_string(),
        "demand ~alice/4 is in a final state (FAILED)"
    );
    let err = c.kill_demand(Time(10), &key(99), "alice").unwrap_err();
    assert_eq!(err, RmError::UnknownDemand("~alice/99".into()));
}

#[test]
fn an_application_s_demands_fail_with_it() {
    let mut cfg = config("<allocations/>");
    cfg.admin_acl = weft_config::Acl::parse("admin");
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    let app = submit(&mut c, 0);
    drain(&mut c);
    let value: Value = serde_json::from_str(&demand(7, 1, "")).unwrap();
    let reports = c
        .submit_demands(
            Time(1),
            DemandBatch {
                user: "alice",
                queue: None,
                application: Some(app),
                demands: &value,
                pointer: "/demands",
            },
        )
        .unwrap();
    assert_eq!(reports[0].key, format!("{app}/7"));
    assert_eq!(reports[0].application, Some(app.to_string()));
    let stranger = c.submit_demands(
        Time(1),
        DemandBatch {
            user: "mallory",
            queue: None,
            application: Some(app),
            demands: &value,
            pointer: "/demands",
        },
    );
    assert!(
        matches!(stranger, Err(RmError::Forbidden(_))),
        "{stranger:?}"
    );
    c.kill(Time(5), app, Some("alice")).unwrap();
    drain(&mut c);
    let report = c.demand(&format!("{app}/7")).unwrap();
    assert_eq!(
        (report.state, report.reason),
        (Failed, DemandReason::Killed)
    );
}

/// A demand delivered over two heartbeats has its first container launched while it is still
/// ALLOCATING; that claim counts, so the second one's claim makes it MONITORING (before, the
/// first claim was refused and the demand failed `claim_expired` with both containers
/// running: scenario `demand-c1`).
#[test]
fn claims_made_while_allocating_count() {
    let mut c = core();
    one(&mut c, 0, 1, 2, r#", "Duration": "1h""#);
    c.demand_allocated(Time(SEC), &key(1), 1).unwrap();
    c.demand_claimed(Time(2 * SEC), &key(1), 1).unwrap();
    assert_eq!(last(&c, 1).0, Allocating);
    c.demand_allocated(Time(2 * SEC), &key(1), 1).unwrap();
    assert_eq!(last(&c, 1), (Allocated, "satisfied", 2 * SEC));
    c.demand_claimed(Time(3 * SEC), &key(1), 1).unwrap();
    assert_eq!(last(&c, 1), (Monitoring, "claimed", 3 * SEC));
    tick(&mut c, 2 * SEC + 600 * SEC);
    assert_eq!(
        last(&c, 1).0,
        Monitoring,
        "nothing left unclaimed to expire"
    );
}

#[test]
fn refused_inputs_change_nothing() {
    let mut c = core();
    one(&mut c, 0, 1, 2, r#", "Start": "[NOW+1h, ]""#);
    let before = c.demand(&key(1)).unwrap();
    let err = c.demand_allocated(Time(5), &key(1), 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: demand ~alice/1 is ACCEPTED: an allocation needs ALLOCATING"
    );
    assert!(drain(&mut c).is_empty(), "nothing written");
    assert_eq!(c.demand(&key(1)).unwrap(), before);
    tick(&mut c, 60 * MIN);
    let err = c.demand_allocated(Time(60 * MIN), &key(1), 3).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("3 more containers would make 3 of 2"),
        "{err}"
    );
    let err = c.demand_claimed(Time(60 * MIN), &key(1), 1).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("1 more claims would make 1 of 0 allocated"),
        "{err}"
    );
    assert_eq!(c.demand(&key(1)).unwrap().allocated, 0);
    let err = c.demand_missed_opportunity(Time(0), &key(99)).unwrap_err();
    assert_eq!(err, RmError::UnknownDemand("~alice/99".into()));
}

#[test]
fn c18_a_restart_loses_no_demand_and_runs_the_timers_that_came_due() {
    let mut c = core();
    one(&mut c, 0, 1200, 1, "");
    one(&mut c, 0, 1, 1, r#", "OrderBy": 1200"#);
    one(&mut c, 0, 2, 2, r#", "ClaimTimeout": "30s""#);
    allocate_all(&mut c, 10, 2, 2);
    one(&mut c, 0, 3, 1, r#", "Start": "[NOW+10m, ]""#);
    one(&mut c, 0, 4, 1, r#", "Duration": "1h""#);
    run(&mut c, 20, 4, 1);
    c.demand_missed_opportunity(Time(25), &key(1200)).unwrap();
    drain(&mut c);
    let before = c.demands(None, None, None);
    assert_eq!(before.len(), 5);

    let same = RmCore::recover(config("<allocations/>"), stored(), 0, Time(20 * SEC)).unwrap();
    assert_eq!(
        same.demands(None, None, None),
        before,
        "nothing was due yet"
    );

    let mut later = RmCore::recover(config("<allocations/>"), stored(), 0, Time(11 * MIN)).unwrap();
    drain(&mut later);
    assert_eq!(last(&later, 2), (Failed, "claim_expired", 11 * MIN));
    assert_eq!(last(&later, 3), (Allocating, "eligible", 11 * MIN));
    assert_eq!(last(&later, 4), (Monitoring, "claimed", 20));
    assert_eq!(later.demand(&key(1200)).unwrap().missed_opportunities, 1);
    assert_eq!(
        later.demand(&key(4)).unwrap().first_allocation,
        Some(Time(20))
    );
    run(&mut later, 11 * MIN, 1200, 1);
    later
        .demand_completed(Time(12 * MIN), &key(1200), 1)
        .unwrap();
    drain(&mut later);
    assert_eq!(last(&later, 1), (Allocating, "eligible", 12 * MIN));
}

#[test]
fn a_damaged_demand_record_is_refused_naming_it() {
    let mut c = core();
    one(&mut c, 0, 1, 1, "");
    let mut state = stored();
    state.demands[0].timeline[0].reason = "bored".into();
    let err = RmCore::recover(config("<allocations/>"), state, 0, Time(1)).err();
    assert_eq!(
        err.map(|e| e.to_string()),
        Some("cannot recover stored state: demand ~alice/1: unknown reason 'bored'".into())
    );
}

#[test]
fn the_default_strategy_in_force_at_acceptance_stays_with_the_demand() {
    let mut c = core();
    let report = one(&mut c, 0, 1, 1, r#", "DeadLine": "[NOW, +30m]""#);
    assert!(
        report.spec.contains(r#""Strategy":"loose""#),
        "{}",
        report.spec
    );
    let mut strict = config("<allocations/>");
    strict.demand_default_strategy = weft_demand_lang::Strategy::Strict;
    let recovered = RmCore::recover(strict, stored(), 0, Time(1)).unwrap();
    let again = recovered
        .demand(&key(1))
        .expect("recovered under a strict default");
    assert_eq!(again.timeline, report.timeline);
}

/// `/metrics`' outcome counters: 1 (loose DeadLine 20 min after START at 10 s) completes at
/// 5 min, a hit; 2 (the same) runs past its deadline, noted, then completes `late`, a miss;
/// 3 (no deadline) completing counts neither; 4 (ClaimTimeout 30 s) expires unclaimed; 5 (a
/// deadline) killed counts neither hit nor miss.
#[test]
fn deadline_hits_misses_and_expired_claims_are_counted_once_each() {
    let mut c = core();
    let loose = r#", "DeadLine": {"Time": "[, +20m]", "Strategy": "loose"}"#;
    for id in [1, 2, 5] {
        one(&mut c, 0, id, 1, loose);
    }
    one(&mut c, 0, 3, 1, "");
    one(&mut c, 0, 4, 1, r#", "ClaimTimeout": "30s""#);
    for id in [1, 2, 3] {
        run(&mut c, 10 * SEC, id, 1);
    }
    allocate_all(&mut c, 10 * SEC, 4, 1);
    c.demand_completed(Time(5 * MIN), &key(1), 1).unwrap();
    c.demand_completed(Time(5 * MIN), &key(3), 1).unwrap();
    tick(&mut c, 10 * SEC + 20 * MIN);
    assert_eq!(last(&c, 2).1, "deadline_missed");
    c.demand_completed(Time(25 * MIN), &key(2), 1).unwrap();
    c.kill_demand(Time(25 * MIN), &key(5), "alice").unwrap();
    drain(&mut c);
    assert_eq!(
        [
            last(&c, 1).1,
            last(&c, 2).1,
            last(&c, 3).1,
            last(&c, 4).1,
            last(&c, 5).1
        ],
        ["ok", "late", "ok", "claim_expired", "killed"]
    );
    assert_eq!(
        c.demand_outcomes(),
        DemandOutcomes {
            deadline_hit: 1,
            deadline_miss: 1,
            claim_expired: 1,
        }
    );
}
