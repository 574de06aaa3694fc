//! Demands sent over the AM protocol: nothing asked before the state machine lets the demand
//! run, containers tagged with the DemandID, the NM's reports driving claims and completions,
//! claim expiry releasing what was never launched, gangs, and the refusals.

use serde_json::Value;
use weft_store::DemandState;
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{Resource, Time};

use crate::tests::{
    config, core, drain, heartbeat, pending_stops, register, report, running_app, status, stops,
};
use crate::*;
use weft_types::Duration;

use DemandState::*;

fn am_demand(json: &str) -> AmDemand {
    AmDemand {
        description: serde_json::from_str::<Value>(json).expect("test JSON"),
        ..AmDemand::default()
    }
}

/// Demand `id` of `n` containers of `mb` MB at priority `priority`, with extra fields.
fn described(id: u64, n: u64, mb: u64, priority: i32, extra: &str) -> String {
    format!(
        r#"{{"DemandID": {id}, "ResourceRequest": {{"capability": {{"memory": {mb}, "vCores": 1}}, "num-containers": {n}, "priority": {priority}}}{extra}}}"#
    )
}

struct Am {
    am_container: ContainerId,
    attempt: AttemptId,
    token: String,
    app: ApplicationId,
}

impl Am {
    fn start(c: &mut RmCore, t: u64, node: &str) -> Am {
        let (app, attempt, token, am_container) = running_app(c, t, node);
        drain(c);
        Am {
            am_container,
            attempt,
            token,
            app,
        }
    }

    fn send(
        &self,
        c: &mut RmCore,
        t: u64,
        req: AllocateRequest,
    ) -> Result<AllocateResponse, RmError> {
        let r = c.am_allocate(Time(t), self.attempt, &self.token, req);
        drain(c);
        r
    }

    fn demands(
        &self,
        c: &mut RmCore,
        t: u64,
        json: &[String],
    ) -> Result<AllocateResponse, RmError> {
        self.send(
            c,
            t,
            AllocateRequest {
                demands: json.iter().map(|j| am_demand(j)).collect(),
                ..AllocateRequest::default()
            },
        )
    }

    fn poll(&self, c: &mut RmCore, t: u64) -> AllocateResponse {
        self.send(c, t, AllocateRequest::default())
            .expect("allocate")
    }

    fn key(&self, id: u64) -> String {
        format!("{}/{id}", self.app)
    }
}

fn state(c: &RmCore, key: &str) -> (DemandState, &'static str) {
    let d = c.demand(key).expect("a demand");
    (d.state, d.reason.as_str())
}

fn updates(r: &AllocateResponse) -> Vec<(u64, DemandState, &'static str)> {
    r.demand_updates
        .iter()
        .map(|u| (u.demand_id, u.state, u.reason.as_str()))
        .collect()
}

fn run(c: &mut RmCore, t: u64, node: &str, id: ContainerId) {
    report(c, t, node, vec![status(id, NmContainerState::Running, 0)]);
    drain(c);
}

fn complete(c: &mut RmCore, t: u64, node: &str, id: ContainerId) {
    report(c, t, node, vec![status(id, NmContainerState::Complete, 0)]);
    drain(c);
}

#[test]
fn the_second_demand_asks_nothing_until_the_first_finished_and_comes_back_tagged() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let first = described(1, 1, 1024, 1, "");
    let second = described(2, 1, 1024, 2, r#", "OrderBy": 1"#);
    let r = am.demands(&mut c, 2, &[first, second]).expect("admitted");
    assert_eq!(
        updates(&r),
        [(1, Allocating, "eligible"), (2, Accepted, "waiting_order")]
    );
    // The node has room for both, yet only the first is asked for.
    heartbeat(&mut c, 3, "h1:1");
    drain(&mut c);
    let r = am.poll(&mut c, 4);
    assert_eq!(r.allocated.len(), 1, "{r:?}");
    let c1 = r.allocated[0].clone();
    assert_eq!(c1.demand_id, Some(1));
    assert_eq!(c1.priority, 1);
    assert_eq!(updates(&r), [(1, Allocated, "satisfied")]);
    heartbeat(&mut c, 5, "h1:1");
    drain(&mut c);
    assert!(am.poll(&mut c, 6).allocated.is_empty(), "demand 2 waits");
    // The NM's reports: running is the claim (it has a dependent: watched), complete the end.
    run(&mut c, 7, "h1:1", c1.id);
    assert_eq!(state(&c, &am.key(1)), (Monitoring, "claimed"));
    // The heartbeat that reports the end also serves the second demand, now asked for.
    complete(&mut c, 8, "h1:1", c1.id);
    assert_eq!(state(&c, &am.key(1)), (Finished, "ok"));
    let d2 = c.demand(&am.key(2)).expect("demand 2");
    let steps: Vec<(DemandState, u64)> = d2
        .timeline
        .iter()
        .map(|t| (t.state, t.at.as_millis()))
        .collect();
    assert_eq!(
        steps,
        [(New, 2), (Accepted, 2), (Allocating, 8), (Allocated, 8)]
    );
    let r = am.poll(&mut c, 10);
    assert_eq!(r.allocated.len(), 1, "{r:?}");
    assert_eq!(r.allocated[0].demand_id, Some(2));
    assert_eq!(
        updates(&r),
        [(1, Finished, "ok"), (2, Allocated, "satisfied")]
    );
    assert_eq!(d2.first_allocation, Some(Time(8)));
    assert!(am.poll(&mut c, 11).demand_updates.is_empty(), "told once");
}

#[test]
fn unclaimed_containers_are_released_at_the_claim_timeout() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let d = described(1, 2, 1024, 1, r#", "ClaimTimeout": "3s""#);
    am.demands(&mut c, 2, &[d]).expect("admitted");
    // One container per heartbeat (Fair's assignmultiple is off).
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 3, "h1:1");
    drain(&mut c);
    let r = am.poll(&mut c, 4);
    assert_eq!(r.allocated.len(), 2);
    // One launched, one never.
    run(&mut c, 5, "h1:1", r.allocated[0].id);
    assert_eq!(state(&c, &am.key(1)), (Allocated, "satisfied"));
    // (Well inside the AM's liveness expiry, so only the claim timer acts.)
    c.tick(Time(3 + 2_999));
    drain(&mut c);
    assert!(pending_stops(&c).is_empty());
    c.tick(Time(3 + 3_000));
    let out = drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Failed, "claim_expired"));
    assert!(stops(&out).is_empty(), "a task container goes by heartbeat");
    assert_eq!(
        pending_stops(&c),
        vec![r.allocated[1].id],
        "only the unlaunched one"
    );
    let r2 = am.poll(&mut c, 3_010);
    assert_eq!(r2.completed.len(), 1);
    assert_eq!(r2.completed[0].id, r.allocated[1].id);
    assert_eq!(r2.completed[0].exit_status, exit::ABORTED);
    assert!(
        r2.completed[0]
            .diagnostics
            .starts_with("Container expired since it was unused"),
        "{:?}",
        r2.completed[0]
    );
    assert_eq!(updates(&r2), [(1, Failed, "claim_expired")]);
}

#[test]
fn a_gang_demand_holds_then_arrives_whole_and_its_hold_shows_in_the_report() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let am = Am::start(&mut c, 1, "h1:1");
    // An ordinary 8 GB container fills h2.
    let mut big = crate::tests::ask(1);
    big.asks[0].resource = Resource::new(8192, 1);
    am.send(&mut c, 2, big).expect("asked");
    heartbeat(&mut c, 3, "h2:1");
    drain(&mut c);
    let filler = am.poll(&mut c, 4).allocated[0].id;
    let gang = described(7, 2, 4096, 2, r#", "Gang": true"#);
    am.demands(&mut c, 5, &[gang]).expect("admitted");
    heartbeat(&mut c, 6, "h1:1");
    drain(&mut c);
    let r = am.poll(&mut c, 7);
    assert!(r.allocated.is_empty(), "no member before all exist");
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!((d.state, d.held, d.allocated), (Allocating, 1, 0));
    am.send(
        &mut c,
        8,
        AllocateRequest {
            releases: vec![filler],
            ..AllocateRequest::default()
        },
    )
    .expect("released");
    heartbeat(&mut c, 9, "h2:1");
    drain(&mut c);
    let r = am.poll(&mut c, 10);
    assert_eq!(r.allocated.len(), 2, "{r:?}");
    assert!(r.allocated.iter().all(|a| a.demand_id == Some(7)));
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!((d.state, d.held, d.allocated), (Allocated, 0, 2));
    assert_eq!(
        d.first_allocation,
        Some(Time(9)),
        "START is the whole gang's"
    );
}

#[test]
fn a_strict_deadline_that_waiting_cannot_meet_fails_and_nothing_was_asked() {
    let mut cfg = config("<allocations/>");
    cfg.demand_admit_unplanned = true;
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let first = described(1, 1, 1024, 1, "");
    let second = described(
        2,
        1,
        1024,
        2,
        r#", "OrderBy": 1, "Duration": "5s", "DeadLine": {"Time": "[NOW, +10s]", "Strategy": "strict"}"#,
    );
    am.demands(&mut c, 1_000, &[first, second])
        .expect("admitted");
    assert_eq!(state(&c, &am.key(2)), (Accepted, "best_effort"));
    heartbeat(&mut c, 2_000, "h1:1");
    drain(&mut c);
    let running = am.poll(&mut c, 2_100).allocated[0].id;
    run(&mut c, 3_000, "h1:1", running);
    // At 6 s, now + 5 s is past 11 s: unreachable while the first still runs.
    c.tick(Time(6_000));
    drain(&mut c);
    assert_eq!(state(&c, &am.key(2)), (Accepted, "best_effort"));
    c.tick(Time(6_001));
    drain(&mut c);
    assert_eq!(state(&c, &am.key(2)), (Failed, "deadline_unreachable"));
    let r = am.poll(&mut c, 6_002);
    assert_eq!(
        updates(&r),
        [
            (1, Monitoring, "claimed"),
            (2, Failed, "deadline_unreachable")
        ]
    );
    complete(&mut c, 7_000, "h1:1", running);
    heartbeat(&mut c, 8_000, "h1:1");
    drain(&mut c);
    assert!(
        am.poll(&mut c, 8_001).allocated.is_empty(),
        "demand 2 never asked"
    );
}

#[test]
fn refusals_name_the_field_and_a_resend_is_no_error() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let d = described(1, 1, 1024, 3, "");
    am.demands(&mut c, 2, std::slice::from_ref(&d))
        .expect("admitted");
    // The same call again (a retry whose answer was lost) changes nothing.
    am.demands(&mut c, 3, std::slice::from_ref(&d))
        .expect("a resend");
    assert_eq!(c.demands(None, None, None).len(), 1);
    // Another description under the same DemandID is the REST path's refusal.
    let other = described(1, 2, 1024, 4, "");
    let err = am.demands(&mut c, 4, &[other]).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    // One priority per demand, and none shared with ordinary asks.
    let same_priority = described(2, 1, 1024, 3, "");
    let err = am.demands(&mut c, 5, &[same_priority]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid demand: /demands/0/ResourceRequest/priority: priority 3 is demand {}'s; give each demand its own priority",
            am.key(1)
        )
    );
    let mut plain = crate::tests::ask(1);
    plain.asks[0].priority = 3;
    let err = am.send(&mut c, 6, plain).unwrap_err();
    assert!(
        err.to_string().contains("uses the priority of demand"),
        "{err}"
    );
    let huge = described(3, 1, 1 << 20, 5, "");
    let err = am.demands(&mut c, 7, &[huge]).unwrap_err();
    assert!(
        err.to_string()
            .contains("/demands/0/ResourceRequest/capability"),
        "{err}"
    );
    // The demand language's own errors, as REST gives them.
    let bad = described(4, 1, 1024, 6, r#", "Start": "[NOW, +5x]""#);
    let err = am.demands(&mut c, 8, &[bad]).unwrap_err();
    assert!(
        err.to_string()
            .contains("/demands/0/Start: column 9: unknown unit 'x'"),
        "{err}"
    );
    assert_eq!(
        c.demands(None, None, None).len(),
        1,
        "a refusal creates nothing"
    );
}

#[test]
fn a_restarted_rm_asks_again_for_what_an_allocating_demand_lacks() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    am.demands(&mut c, 2, &[described(1, 1, 1024, 1, "")])
        .expect("admitted");
    let mut c = RmCore::recover(config("<allocations/>"), crate::tests::stored(), 0, Time(3))
        .expect("recovers");
    drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Allocating, "eligible"));
    let secret = c.node_secret("h1:1").unwrap_or_default();
    c.node_register(
        Time(4),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: "h1:1".into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: vec![status(am.am_container, NmContainerState::Running, 0)],
            secret,
        },
    )
    .expect("registered");
    drain(&mut c);
    heartbeat(&mut c, 5, "h1:1");
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!((d.state, d.allocated), (Allocated, 1), "{d:?}");
}

#[test]
fn a_new_attempt_asks_again_for_what_an_allocating_demand_lacks() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    // Bigger than the node's room beside the AM: it waits, asked.
    am.demands(&mut c, 2, &[described(1, 1, 8192, 1, "")])
        .expect("admitted");
    heartbeat(&mut c, 3, "h1:1");
    drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Allocating, "eligible"));
    // The AM container exits: a new attempt, and the scheduler drops the old one's asks; the
    // demand asks again, so a node with room serves it.
    report(
        &mut c,
        4,
        "h1:1",
        vec![status(am.am_container, NmContainerState::Complete, 1)],
    );
    drain(&mut c);
    heartbeat(&mut c, 5, "h1:1");
    drain(&mut c);
    register(&mut c, 6, "h2:1");
    heartbeat(&mut c, 7, "h2:1");
    drain(&mut c);
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!((d.state, d.allocated), (Allocated, 1), "{d:?}");
}

#[test]
fn a_new_attempt_fails_the_demands_whose_containers_died_with_the_old_one() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    // Demand 1 gets its container and runs it; demand 2 is too big for the node and waits.
    am.demands(
        &mut c,
        2,
        &[described(1, 1, 1024, 1, ""), described(2, 1, 8192, 2, "")],
    )
    .expect("admitted");
    heartbeat(&mut c, 3, "h1:1");
    drain(&mut c);
    let got = am.poll(&mut c, 4).allocated;
    assert_eq!(got.len(), 1);
    run(&mut c, 5, "h1:1", got[0].id);
    assert_eq!(state(&c, &am.key(1)), (Allocated, "satisfied"));
    // The AM container exits: its attempt's containers are killed with it. Demand 1 lost its
    // running container, which is no completion of its work (it must not end FINISHED ok);
    // demand 2 held nothing and asks again under the new attempt.
    report(
        &mut c,
        6,
        "h1:1",
        vec![status(am.am_container, NmContainerState::Complete, 1)],
    );
    drain(&mut c);
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!(state(&c, &am.key(1)), (Failed, "app_failed"), "{d:?}");
    assert!(
        d.timeline.last().is_some_and(|t| t
            .detail
            .contains("1 live containers of this demand were killed")),
        "{d:?}"
    );
    assert_eq!(state(&c, &am.key(2)), (Allocating, "eligible"));
}

#[test]
fn an_evicted_application_takes_its_demands_from_memory_and_the_store() {
    let mut cfg = config("<allocations/>");
    cfg.max_completed_apps = 1;
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    // Too big for the node: it waits, ALLOCATING, until its app is killed.
    am.demands(&mut c, 2, &[described(1, 1, 8192, 1, "")])
        .expect("admitted");
    c.kill(Time(3), am.app, None).expect("killed");
    drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Failed, "killed"));
    // One completed app is kept: the next one to complete evicts the first, and its demand
    // with it, from memory and from the store.
    let other = crate::tests::submit(&mut c, 4);
    drain(&mut c);
    c.kill(Time(5), other, None).expect("killed");
    let out = drain(&mut c);
    assert!(c.demand(&am.key(1)).is_none());
    assert!(
        crate::tests::writes(&out)
            .iter()
            .any(|w| matches!(w, weft_store::Write::RemoveDemand(k) if *k == am.key(1))),
        "{out:?}"
    );
    assert!(crate::tests::stored()
        .demands
        .iter()
        .all(|d| d.key != am.key(1)));
}

#[test]
fn the_am_kills_one_demand_and_judges_another() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let judged = described(1, 1, 1024, 1, "");
    let killed = described(2, 1, 1024, 2, "");
    am.demands(&mut c, 2, &[judged, killed]).expect("admitted");
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 3, "h1:1");
    drain(&mut c);
    let got = am.poll(&mut c, 4).allocated;
    assert_eq!(got.len(), 2);
    for a in &got {
        run(&mut c, 5, "h1:1", a.id);
    }
    // A verdict on a demand that is not this AM's, or not yet allocated, changes nothing.
    let err = am
        .send(
            &mut c,
            6,
            AllocateRequest {
                complete_demands: vec![(9, true)],
                kill_demands: vec![2],
                ..AllocateRequest::default()
            },
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("/9 is no demand of this AM"),
        "{err}"
    );
    assert_eq!(state(&c, &am.key(2)), (Allocated, "satisfied"));
    c.am_allocate(
        Time(7),
        am.attempt,
        &am.token,
        AllocateRequest {
            complete_demands: vec![(1, false)],
            kill_demands: vec![2],
            ..AllocateRequest::default()
        },
    )
    .expect("applied");
    let out = drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Finished, "failed"));
    assert_eq!(state(&c, &am.key(2)), (Failed, "killed"));
    let of_two: Vec<ContainerId> = got
        .iter()
        .filter(|a| a.demand_id == Some(2))
        .map(|a| a.id)
        .collect();
    assert!(stops(&out).is_empty(), "a task container goes by heartbeat");
    assert_eq!(
        pending_stops(&c),
        of_two,
        "the killed demand's running container is stopped"
    );
}

/// A core whose NMs and AMs never expire (the tests below span more than a minute of ticks
/// without heartbeats) and which admits strict demands without a plan.
fn patient_core() -> RmCore {
    let mut cfg = config("<allocations/>");
    cfg.nm_expiry = Duration::from_secs(100_000);
    cfg.am_expiry = Duration::from_secs(100_000);
    cfg.demand_admit_unplanned = true;
    let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
    drain(&mut c);
    c
}

/// C13 strict over the AM protocol: Duration 10 s strict, 2 containers allocated at 3 ms
/// (START = 3), running from 5. The lease ends at 3 + 10,000 = 10,003 ms: the demand stays
/// MONITORING with reason `duration_exceeded`, and the AM's next answer lists both containers
/// in its preemption message (YARN's warning) and the update. One ends at 12 s. At 10,003 +
/// waitTimeBeforeKill 15,000 = 25,003 ms the demand fails `duration_exceeded` and the other
/// is killed (KILLED_BY_RESOURCEMANAGER), no longer listed.
#[test]
fn c13_strict_warns_the_am_at_lease_end_and_kills_after_the_grace() {
    let mut c = patient_core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let d = described(
        1,
        2,
        1024,
        1,
        r#", "Duration": {"Time": "[, +10s]", "Strategy": "strict"}"#,
    );
    am.demands(&mut c, 2, &[d]).expect("admitted");
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 3, "h1:1");
    drain(&mut c);
    let got = am.poll(&mut c, 4).allocated;
    assert_eq!(got.len(), 2);
    for a in &got {
        run(&mut c, 5, "h1:1", a.id);
    }
    assert_eq!(state(&c, &am.key(1)), (Monitoring, "claimed"));
    assert!(am.poll(&mut c, 6).preempt.is_empty());
    c.tick(Time(10_002));
    drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Monitoring, "claimed"));
    c.tick(Time(10_003));
    drain(&mut c);
    assert!(pending_stops(&c).is_empty(), "warned, not killed");
    let r = am.poll(&mut c, 10_004);
    assert_eq!(updates(&r), [(1, Monitoring, "duration_exceeded")]);
    let ids: Vec<ContainerId> = got.iter().map(|a| a.id).collect();
    assert_eq!(r.preempt, ids, "the warning names both containers");
    complete(&mut c, 12_000, "h1:1", ids[0]);
    assert_eq!(am.poll(&mut c, 12_001).preempt, [ids[1]]);
    c.tick(Time(25_002));
    drain(&mut c);
    assert!(pending_stops(&c).is_empty());
    assert_eq!(state(&c, &am.key(1)), (Monitoring, "duration_exceeded"));
    c.tick(Time(25_003));
    let out = drain(&mut c);
    assert_eq!(state(&c, &am.key(1)), (Failed, "duration_exceeded"));
    assert!(stops(&out).is_empty(), "a task container goes by heartbeat");
    assert_eq!(pending_stops(&c), [ids[1]], "the NM is told to stop it");
    let r = am.poll(&mut c, 25_004);
    assert_eq!(updates(&r), [(1, Failed, "duration_exceeded")]);
    assert!(r.preempt.is_empty());
    assert_eq!(r.completed.len(), 1);
    assert_eq!(r.completed[0].id, ids[1]);
    assert_eq!(r.completed[0].exit_status, exit::KILLED_BY_RESOURCEMANAGER);
}

/// C7's gang on the AM path, one member held when the Start window closes: two nodes of
/// 8 GB; the AM (1 GB) on h1, an ordinary 8 GB container fills h2; demand 7 is a gang of
/// 2 × 4 GB sent at 5 ms with Start `[NOW, +10s]`, so the window is [5, 10,005) ms. h1's
/// heartbeat at 6 holds one member (7 GB free there, 0 on h2). Nothing reaches the AM.
fn gang_held_at_window_close(strategy: &str) -> (RmCore, Am, ContainerId) {
    let mut c = patient_core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let mut big = crate::tests::ask(1);
    big.asks[0].resource = Resource::new(8192, 1);
    am.send(&mut c, 2, big).expect("asked");
    heartbeat(&mut c, 3, "h2:1");
    drain(&mut c);
    let filler = am.poll(&mut c, 4).allocated[0].id;
    let start =
        format!(r#", "Gang": true, "Start": {{"Time": "[NOW, +10s]", "Strategy": "{strategy}"}}"#);
    let gang = described(7, 2, 4096, 2, &start);
    am.demands(&mut c, 5, &[gang]).expect("admitted");
    heartbeat(&mut c, 6, "h1:1");
    drain(&mut c);
    assert!(am.poll(&mut c, 7).allocated.is_empty());
    c.tick(Time(10_004));
    drain(&mut c);
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!((d.state, d.held, d.allocated), (Allocating, 1, 0));
    (c, am, filler)
}

/// Loose (§3.4 row 8): at 10,005 ms the window closes; the demand stays ALLOCATING with
/// `window_missed`, its held member is handed over at once (before the scheduler's own hold
/// timeout, 10,000 ms from the first hold at 6, i.e. 10,006) and its other member is asked as
/// an ordinary container, which h2 serves once the filler is released.
#[test]
fn c7_loose_window_close_hands_the_held_members_over_and_continues() {
    let (mut c, am, filler) = gang_held_at_window_close("loose");
    c.tick(Time(10_005));
    drain(&mut c);
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!(
        (d.state, d.reason.as_str(), d.held, d.allocated),
        (Allocating, "window_missed", 0, 1)
    );
    let r = am.poll(&mut c, 10_006);
    assert_eq!(r.allocated.len(), 1, "{r:?}");
    assert_eq!(r.allocated[0].demand_id, Some(7));
    assert_eq!(updates(&r), [(7, Allocating, "window_missed")]);
    am.send(
        &mut c,
        10_007,
        AllocateRequest {
            releases: vec![filler],
            ..AllocateRequest::default()
        },
    )
    .expect("released");
    heartbeat(&mut c, 10_008, "h2:1");
    drain(&mut c);
    let r = am.poll(&mut c, 10_009);
    assert_eq!(r.allocated.len(), 1, "{r:?}");
    assert_eq!(r.allocated[0].demand_id, Some(7));
    assert_eq!(state(&c, &am.key(7)), (Allocated, "satisfied"));
}

/// Strict (§3.4 row 9): at 10,005 ms the demand fails `window_expired` and its held member is
/// released: the scheduler's used resources drop by 4 GB (AM 1 GB + filler 8 GB + held 4 GB
/// -> 9 GB) and nothing ever reaches the AM.
#[test]
fn c7_strict_window_close_fails_the_demand_and_releases_the_holds() {
    let (mut c, am, _) = gang_held_at_window_close("strict");
    assert_eq!(c.sched.cluster_used().memory_mb(), 13 * 1024);
    c.tick(Time(10_005));
    drain(&mut c);
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!(
        (d.state, d.reason.as_str(), d.held, d.allocated),
        (Failed, "window_expired", 0, 0)
    );
    let detail = &d.timeline.last().expect("a transition").detail;
    assert!(detail.contains("1 held members are released"), "{detail}");
    assert_eq!(c.sched.cluster_used().memory_mb(), 9 * 1024);
    let r = am.poll(&mut c, 10_006);
    assert!(r.allocated.is_empty(), "{r:?}");
    assert_eq!(updates(&r), [(7, Failed, "window_expired")]);
    heartbeat(&mut c, 10_007, "h1:1");
    drain(&mut c);
    assert!(am.poll(&mut c, 10_008).allocated.is_empty());
}

/// C4 over the AM protocol: four nodes of 8 GB; the AM (1 GB) and an ordinary 7 GB container
/// fill h1. Demand 1 (1 × 1 GB) wants h1 only (`relax-locality` false) with Start
/// `[NOW, ^3]`. Each node heartbeat that gives it nothing is a missed opportunity: h2, h3, h4
/// at 10-12 ms (locality) are misses 1-3, h1 at 13 (full) is the 4th, which closes the window.
fn c4_four_misses(strategy: &str) -> (RmCore, Am) {
    let mut c = patient_core();
    for n in ["h1:1", "h2:1", "h3:1", "h4:1"] {
        register(&mut c, 0, n);
    }
    let am = Am::start(&mut c, 1, "h1:1");
    let mut filler = crate::tests::ask(1);
    filler.asks[0].resource = Resource::new(7168, 1);
    am.send(&mut c, 2, filler).expect("asked");
    heartbeat(&mut c, 2, "h1:1");
    drain(&mut c);
    assert_eq!(am.poll(&mut c, 3).allocated.len(), 1);
    let d = format!(
        r#"{{"DemandID": 1, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": 1, "priority": 2, "resource-name": "h1", "relax-locality": false}}, "Start": {{"Time": "[NOW, ^3]", "Strategy": "{strategy}"}}}}"#
    );
    am.demands(&mut c, 4, &[d]).expect("admitted");
    for (t, node) in [(10, "h2:1"), (11, "h3:1"), (12, "h4:1")] {
        heartbeat(&mut c, t, node);
        drain(&mut c);
    }
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!((d.state, d.missed_opportunities), (Allocating, 3));
    heartbeat(&mut c, 13, "h1:1");
    drain(&mut c);
    (c, am)
}

#[test]
fn c4_strict_a_count_window_expires_at_the_fourth_missed_heartbeat() {
    let (c, am) = c4_four_misses("strict");
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!(
        (d.state, d.reason.as_str(), d.missed_opportunities),
        (Failed, "window_expired", 4)
    );
    assert_eq!(d.timeline.last().map(|t| t.at), Some(Time(13)));
}

/// Loose: the 4th miss drops the bound (`window_missed`) and the ask is made again with
/// locality relaxed, so the next heartbeat (h2 at 14) serves it.
#[test]
fn c4_loose_the_fourth_miss_relaxes_locality_and_the_next_heartbeat_allocates() {
    let (mut c, am) = c4_four_misses("loose");
    assert_eq!(state(&c, &am.key(1)), (Allocating, "window_missed"));
    heartbeat(&mut c, 14, "h2:1");
    drain(&mut c);
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!(
        (d.state, d.reason.as_str(), d.missed_opportunities),
        (Allocated, "satisfied", 4)
    );
    let r = am.poll(&mut c, 15);
    assert_eq!(r.allocated.len(), 1);
    assert_eq!(r.allocated[0].node_id, "h2:1");
}

/// C6 over the AM protocol: demand 1 (1 × 1 GB) sent at 2 ms with Start `AND([NOW, +2h],
/// NOT([NOW+10s, +60s]))` is admissible at [2, 10,002) and [70,002, 7,200,002) ms. ALLOCATING
/// at once, but no heartbeat comes before the blackout: the 10,002 ms tick withdraws its ask,
/// so h1's heartbeat at 20 s (room for it) gives it nothing and is no missed opportunity; the
/// 70,002 ms tick asks again and h1's next heartbeat serves it.
#[test]
fn c6_a_blackout_that_begins_while_allocating_withdraws_the_ask_until_it_ends() {
    let mut c = patient_core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1, "h1:1");
    let d = described(
        1,
        1,
        1024,
        1,
        r#", "Start": "AND([NOW, +2h], NOT([NOW+10s, +60s]))""#,
    );
    am.demands(&mut c, 2, &[d]).expect("admitted");
    assert_eq!(state(&c, &am.key(1)), (Allocating, "eligible"));
    c.tick(Time(10_001));
    drain(&mut c);
    c.tick(Time(10_002));
    drain(&mut c);
    heartbeat(&mut c, 20_000, "h1:1");
    drain(&mut c);
    assert!(
        am.poll(&mut c, 20_001).allocated.is_empty(),
        "inside the blackout"
    );
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!((d.state, d.missed_opportunities), (Allocating, 0));
    heartbeat(&mut c, 70_001, "h1:1");
    drain(&mut c);
    assert!(am.poll(&mut c, 70_001).allocated.is_empty(), "still inside");
    heartbeat(&mut c, 70_002, "h1:1");
    drain(&mut c);
    let r = am.poll(&mut c, 70_003);
    assert_eq!(r.allocated.len(), 1, "{r:?}");
    assert_eq!(r.allocated[0].demand_id, Some(1));
    assert_eq!(state(&c, &am.key(1)), (Allocated, "satisfied"));
}
