//! Acceptance scenario C18 (time-aware-demands spec §5; §3.4 "Persistence and recovery"): an
//! RM restart mid-way changes nothing a demand or a gang shows. A gang held when the RM stops
//! is asked for again and re-acquired whole (an AM demand's gang and an AM's own gang, under
//! its id); a demand's running containers still count for it after the restart, so it ends
//! FINISHED(ok) when they complete; the same run twice, or with a restart mid-way, gives the
//! same transitions at the same instants.

use serde_json::Value;
use weft_store::DemandState;
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{Resource, Time};

use crate::tests::{config, core, drain, heartbeat, register, report, running_app, stored};
use crate::*;

use DemandState::*;

const NODE_MB: i64 = 8192;

/// A running AM of one app on `h1:1`.
struct Am {
    app: ApplicationId,
    attempt: AttemptId,
    token: String,
    container: ContainerId,
}

impl Am {
    fn start(c: &mut RmCore, t: u64) -> Am {
        let (app, attempt, token, container) = running_app(c, t, "h1:1");
        drain(c);
        Am {
            app,
            attempt,
            token,
            container,
        }
    }

    fn send(&self, c: &mut RmCore, t: u64, req: AllocateRequest) -> AllocateResponse {
        let r = c
            .am_allocate(Time(t), self.attempt, &self.token, req)
            .unwrap_or_else(|e| panic!("allocate at {t}: {e}"));
        drain(c);
        r
    }

    fn poll(&self, c: &mut RmCore, t: u64) -> AllocateResponse {
        self.send(c, t, AllocateRequest::default())
    }

    fn demand(&self, c: &mut RmCore, t: u64, json: String) {
        let description = serde_json::from_str::<Value>(&json).expect("test JSON");
        self.send(
            c,
            t,
            AllocateRequest {
                demands: vec![AmDemand {
                    description,
                    ..AmDemand::default()
                }],
                ..AllocateRequest::default()
            },
        );
    }

    fn release(&self, c: &mut RmCore, t: u64, container: ContainerId) {
        self.send(
            c,
            t,
            AllocateRequest {
                releases: vec![container],
                ..AllocateRequest::default()
            },
        );
    }

    fn key(&self, id: u64) -> String {
        format!("{}/{id}", self.app)
    }

    /// Registers again with a restarted RM (its persisted token is accepted).
    fn register_again(&self, c: &mut RmCore, t: u64) -> RegisterResponse {
        let r = c
            .am_register(Time(t), self.attempt, &self.token, "amhost", 4000, None)
            .expect("the AM registers again");
        drain(c);
        r
    }
}

/// Demand `id` of `n` containers of `mb` MB at `priority`, with extra fields.
fn described(id: u64, n: u64, mb: u64, priority: i32, extra: &str) -> String {
    format!(
        r#"{{"DemandID": {id}, "ResourceRequest": {{"capability": {{"memory": {mb}, "vCores": 1}}, "num-containers": {n}, "priority": {priority}}}{extra}}}"#
    )
}

fn nm_status(c: ContainerId, state: NmContainerState, mb: i64) -> NmContainerStatus {
    NmContainerStatus {
        container: c,
        state,
        exit_status: 0,
        diagnostics: String::new(),
        resource: Resource::new(mb, 1),
    }
}

/// A node's NM registers again after the RM restarted, with what it still runs or ran.
fn reregister(c: &mut RmCore, t: u64, node: &str, containers: Vec<NmContainerStatus>) {
    let secret = c.node_secret(node).unwrap_or_default();
    c.node_register(
        Time(t),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: node.into(),
            capability: Resource::new(NODE_MB, 8),
            rack: String::new(),
            containers,
            secret,
        },
    )
    .expect("registered again");
    drain(c);
}

/// The RM is killed and starts again from its store at `t`.
fn restart(t: u64) -> RmCore {
    let mut c = RmCore::recover(config("<allocations/>"), stored(), 0, Time(t)).expect("recovers");
    drain(&mut c);
    c
}

/// Fills `h2:1` with one 8 GB container of the AM's, reported running by its NM.
fn fill_h2(c: &mut RmCore, am: &Am, t: u64) -> ContainerId {
    let mut big = crate::tests::ask(1);
    big.asks[0].resource = Resource::new(NODE_MB, 1);
    am.send(c, t, big);
    heartbeat(c, t + 1, "h2:1");
    drain(c);
    let filler = am.poll(c, t + 2).allocated[0].id;
    report(
        c,
        t + 2,
        "h2:1",
        vec![nm_status(filler, NmContainerState::Running, NODE_MB)],
    );
    drain(c);
    filler
}

/// The gang's holds in the scheduler, as (gang id, members held).
fn holds(c: &RmCore, app: ApplicationId) -> Vec<(u64, u32)> {
    c.sched
        .gang_holds()
        .into_iter()
        .filter(|h| h.app.0 == app.seq)
        .map(|h| (h.gang, h.held))
        .collect()
}

#[test]
fn a_restart_while_a_demands_gang_holds_reacquires_it_and_delivers_it_whole() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let am = Am::start(&mut c, 1);
    let filler = fill_h2(&mut c, &am, 2);
    am.demand(&mut c, 5, described(7, 2, 4096, 2, r#", "Gang": true"#));
    heartbeat(&mut c, 6, "h1:1");
    drain(&mut c);
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!((d.state, d.held, d.allocated), (Allocating, 1, 0));

    let mut c = restart(7);
    reregister(
        &mut c,
        7,
        "h1:1",
        vec![nm_status(am.container, NmContainerState::Running, 1024)],
    );
    reregister(
        &mut c,
        7,
        "h2:1",
        vec![nm_status(filler, NmContainerState::Running, NODE_MB)],
    );
    am.register_again(&mut c, 7);
    let d = c.demand(&am.key(7)).expect("demand 7 recovered");
    assert_eq!((d.state, d.held, d.allocated), (Allocating, 0, 0));
    heartbeat(&mut c, 8, "h1:1");
    drain(&mut c);
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!(
        (d.state, d.held, d.allocated),
        (Allocating, 1, 0),
        "held again, as a gang"
    );
    assert!(am.poll(&mut c, 9).allocated.is_empty(), "no member alone");
    am.release(&mut c, 10, filler);
    heartbeat(&mut c, 11, "h2:1");
    drain(&mut c);
    let r = am.poll(&mut c, 12);
    assert_eq!(r.allocated.len(), 2, "the whole gang in one reply: {r:?}");
    assert!(r.allocated.iter().all(|a| a.demand_id == Some(7)));
    let d = c.demand(&am.key(7)).expect("demand 7");
    assert_eq!((d.state, d.held, d.allocated), (Allocated, 0, 2));
    assert_eq!(d.first_allocation, Some(Time(11)));
}

#[test]
fn a_restart_while_an_ams_gang_holds_reacquires_it_under_its_id() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let am = Am::start(&mut c, 1);
    let filler = fill_h2(&mut c, &am, 2);
    let gang = weft_sched::GangAsk {
        gang: 5,
        priority: 2,
        resources: Resource::new(4096, 1),
        size: 2,
        hold_timeout: Some(weft_types::Duration::from_millis(900_000)),
        style: weft_sched::GangStyle::Soft,
        tag: weft_sched::AskTag::NONE,
    };
    am.send(
        &mut c,
        5,
        AllocateRequest {
            gangs: vec![gang.clone()],
            ..AllocateRequest::default()
        },
    );
    heartbeat(&mut c, 6, "h1:1");
    drain(&mut c);
    assert_eq!(holds(&c, am.app), [(5, 1)]);
    let owed = &stored().apps[0].attempts[0].gangs;
    assert_eq!(owed.len(), 1, "the attempt's record keeps the gang");

    let mut c = restart(7);
    assert!(
        holds(&c, am.app).is_empty(),
        "held members were never launched"
    );
    reregister(
        &mut c,
        7,
        "h1:1",
        vec![nm_status(am.container, NmContainerState::Running, 1024)],
    );
    reregister(
        &mut c,
        7,
        "h2:1",
        vec![nm_status(filler, NmContainerState::Running, NODE_MB)],
    );
    let before = c.am_allocate(Time(7), am.attempt, &am.token, AllocateRequest::default());
    assert!(
        matches!(before, Err(RmError::NotRegistered(_))),
        "an AM resyncs with a restarted RM although its record was written while it ran: {before:?}"
    );
    let again = am.register_again(&mut c, 7);
    assert_eq!(
        again.pending_gangs,
        vec![gang],
        "the AM is told the RM still asks for it"
    );
    heartbeat(&mut c, 8, "h1:1");
    drain(&mut c);
    assert_eq!(holds(&c, am.app), [(5, 1)], "held again, same id");
    assert!(am.poll(&mut c, 9).allocated.is_empty(), "no member alone");
    am.release(&mut c, 10, filler);
    heartbeat(&mut c, 11, "h2:1");
    drain(&mut c);
    let r = am.poll(&mut c, 12);
    assert_eq!(r.allocated.len(), 2, "the whole gang in one reply: {r:?}");
    assert!(r.allocated.iter().all(|a| a.priority == 2));
    assert!(
        stored().apps[0].attempts[0].gangs.is_empty(),
        "a delivered gang is owed no more"
    );
    let later = restart(13);
    assert!(later.pending_gangs(&am.attempt).is_empty());
}

#[test]
fn a_restart_while_a_demands_containers_run_ends_it_finished_ok_when_they_complete() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1);
    am.demand(&mut c, 2, described(1, 3, 1024, 1, ""));
    // One container per heartbeat (Fair's assignmultiple is off).
    for t in 3..6 {
        heartbeat(&mut c, t, "h1:1");
    }
    drain(&mut c);
    let r = am.poll(&mut c, 6);
    let ids: Vec<ContainerId> = r.allocated.iter().map(|a| a.id).collect();
    assert_eq!(ids.len(), 3);
    // Two are launched before the RM stops; the third only after.
    report(
        &mut c,
        7,
        "h1:1",
        vec![
            nm_status(ids[0], NmContainerState::Running, 1024),
            nm_status(ids[2], NmContainerState::Running, 1024),
        ],
    );
    drain(&mut c);
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!((d.state, d.claimed, d.completed), (Allocated, 2, 0));
    let kept: Vec<(u32, u64, bool)> = stored().demands[0]
        .containers
        .iter()
        .map(|k| (k.attempt, k.n, k.claimed))
        .collect();
    assert_eq!(
        kept,
        vec![
            (1, ids[0].n, true),
            (1, ids[1].n, false),
            (1, ids[2].n, true)
        ]
    );

    let mut c = restart(8);
    am.register_again(&mut c, 8);
    // The third ended while the RM was down; the second is running now.
    reregister(
        &mut c,
        9,
        "h1:1",
        vec![
            nm_status(am.container, NmContainerState::Running, 1024),
            nm_status(ids[0], NmContainerState::Running, 1024),
            nm_status(ids[1], NmContainerState::Running, 1024),
            nm_status(ids[2], NmContainerState::Complete, 1024),
        ],
    );
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!(
        (d.state, d.allocated, d.claimed, d.completed),
        (Allocated, 3, 3, 1)
    );
    report(
        &mut c,
        10,
        "h1:1",
        vec![nm_status(ids[0], NmContainerState::Complete, 1024)],
    );
    report(
        &mut c,
        11,
        "h1:1",
        vec![nm_status(ids[1], NmContainerState::Complete, 1024)],
    );
    drain(&mut c);
    let d = c.demand(&am.key(1)).expect("demand 1");
    assert_eq!(
        (d.state, d.reason, d.completed),
        (Finished, DemandReason::Ok, 3)
    );
    assert_eq!(d.timeline.last().map(|t| t.at), Some(Time(11)));
    assert!(
        stored().demands[0].containers.is_empty(),
        "an ended demand lists no containers"
    );
}

/// Every demand's timeline as (key, state, reason, at), and each AM reply's demand
/// containers as (DemandID, how many), of one run of a gang and its dependent; with
/// `restart`, the RM is killed while the gang holds and starts again from its store.
fn demand_trace(restart_mid_way: bool) -> Vec<String> {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let am = Am::start(&mut c, 1);
    let filler = fill_h2(&mut c, &am, 2);
    am.demand(&mut c, 5, described(7, 2, 4096, 2, r#", "Gang": true"#));
    am.demand(
        &mut c,
        5,
        described(8, 1, 1024, 3, r#", "OrderBy": 7, "Duration": "1h""#),
    );
    heartbeat(&mut c, 6, "h1:1");
    drain(&mut c);
    if restart_mid_way {
        c = restart(7);
        reregister(
            &mut c,
            7,
            "h1:1",
            vec![nm_status(am.container, NmContainerState::Running, 1024)],
        );
        reregister(
            &mut c,
            7,
            "h2:1",
            vec![nm_status(filler, NmContainerState::Running, NODE_MB)],
        );
        am.register_again(&mut c, 7);
    }
    let mut trace = Vec::new();
    heartbeat(&mut c, 8, "h1:1");
    drain(&mut c);
    am.release(&mut c, 10, filler);
    heartbeat(&mut c, 11, "h2:1");
    drain(&mut c);
    let mut got = Vec::new();
    for t in [12, 13, 14, 15] {
        let r = am.poll(&mut c, t);
        if !r.allocated.is_empty() {
            trace.push(format!(
                "{t}: {} containers of demand {:?}",
                r.allocated.len(),
                r.allocated[0].demand_id
            ));
        }
        got.extend(r.allocated.iter().map(|a| (a.id, a.node_id.clone())));
        for node in ["h1:1", "h2:1"] {
            let mine: Vec<NmContainerStatus> = got
                .iter()
                .filter(|(_, n)| n == node)
                .map(|(id, _)| nm_status(*id, NmContainerState::Running, 4096))
                .collect();
            report(&mut c, t, node, mine);
            drain(&mut c);
        }
    }
    // The gang's members end; its dependent then runs.
    let gang: Vec<(ContainerId, String)> = got
        .iter()
        .filter(|(id, _)| c.containers.get(id).and_then(|k| k.demand) == Some(7))
        .cloned()
        .collect();
    for (i, (id, node)) in gang.iter().enumerate() {
        let t = 20 + i as u64;
        report(
            &mut c,
            t,
            node,
            vec![nm_status(*id, NmContainerState::Complete, 4096)],
        );
        drain(&mut c);
    }
    for t in [30, 31] {
        heartbeat(&mut c, t, "h1:1");
        heartbeat(&mut c, t, "h2:1");
        drain(&mut c);
        let r = am.poll(&mut c, t);
        if !r.allocated.is_empty() {
            trace.push(format!(
                "{t}: {} containers of demand {:?}",
                r.allocated.len(),
                r.allocated[0].demand_id
            ));
        }
    }
    for d in c.demands(None, None, None) {
        for step in &d.timeline {
            trace.push(format!(
                "{} {:?} {} {}",
                d.key,
                step.state,
                step.reason.as_str(),
                step.at.as_millis()
            ));
        }
    }
    trace
}

/// Runs `demand_trace` from an empty store.
fn traced(restart_mid_way: bool) -> Vec<String> {
    crate::tests::forget_stored();
    demand_trace(restart_mid_way)
}

#[test]
fn c18_the_same_run_twice_or_with_a_restart_mid_way_gives_the_same_transitions() {
    let plain = traced(false);
    assert_eq!(plain, traced(false), "run twice");
    let key = "application_1700000000000_0001";
    let expected: Vec<String> = [
        "12: 2 containers of demand Some(7)".to_owned(),
        "30: 1 containers of demand Some(8)".to_owned(),
        format!("{key}/7 New submitted 5"),
        format!("{key}/7 Accepted unconstrained 5"),
        format!("{key}/7 Allocating eligible 5"),
        format!("{key}/7 Allocated satisfied 11"),
        format!("{key}/7 Monitoring claimed 12"),
        format!("{key}/7 Finished ok 21"),
        format!("{key}/8 New submitted 5"),
        format!("{key}/8 Accepted waiting_order 5"),
        format!("{key}/8 Allocating eligible 21"),
        format!("{key}/8 Allocated satisfied 21"),
    ]
    .into();
    assert_eq!(plain, expected);
    assert_eq!(traced(true), plain, "a restart while the gang holds");
}

#[test]
fn a_recovered_gang_waits_for_its_nodes_past_the_am_recovery_grace() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let am = Am::start(&mut c, 1);
    let filler = fill_h2(&mut c, &am, 2);
    // 3 members of 4 GB: one fits beside the AM on h1, the others need h2 (one node alone
    // could never host 3).
    let gang = weft_sched::GangAsk {
        gang: 9,
        priority: 2,
        resources: Resource::new(4096, 1),
        size: 3,
        hold_timeout: None,
        style: weft_sched::GangStyle::Soft,
        tag: weft_sched::AskTag::NONE,
    };
    am.send(
        &mut c,
        5,
        AllocateRequest {
            gangs: vec![gang.clone()],
            ..AllocateRequest::default()
        },
    );
    heartbeat(&mut c, 6, "h1:1");
    drain(&mut c);
    assert_eq!(holds(&c, am.app), [(9, 1)]);

    let mut cfg = config("<allocations/>");
    cfg.am_recovery_grace = weft_types::Duration::from_millis(2_000);
    let mut c = RmCore::recover(cfg, stored(), 0, Time(7)).expect("recovers");
    drain(&mut c);
    reregister(
        &mut c,
        7,
        "h1:1",
        vec![nm_status(am.container, NmContainerState::Running, 1024)],
    );
    am.register_again(&mut c, 7);
    // h2 is slow to come back: past the AM grace, the gang still waits for it (asked now,
    // the scheduler would refuse it as unpackable on h1 alone and it would be lost).
    for t in [1_000, 2_500, 4_000, 5_500] {
        heartbeat(&mut c, t, "h1:1");
        am.poll(&mut c, t);
    }
    assert_eq!(c.pending_gangs(&am.attempt), vec![gang.clone()]);
    assert!(holds(&c, am.app).is_empty());
    reregister(
        &mut c,
        6_000,
        "h2:1",
        vec![nm_status(filler, NmContainerState::Running, NODE_MB)],
    );
    heartbeat(&mut c, 6_001, "h1:1");
    assert_eq!(
        holds(&c, am.app),
        [(9, 1)],
        "asked once h2 is back, held again"
    );
    am.release(&mut c, 6_002, filler);
    heartbeat(&mut c, 6_003, "h2:1");
    heartbeat(&mut c, 6_004, "h2:1");
    drain(&mut c);
    let r = am.poll(&mut c, 6_005);
    assert_eq!(r.allocated.len(), 3, "the whole gang in one reply: {r:?}");
    assert!(c.pending_gangs(&am.attempt).is_empty());
}

#[test]
fn an_attempt_is_owed_at_most_the_bounded_number_of_gangs() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let am = Am::start(&mut c, 1);
    let gang = |id| weft_sched::GangAsk {
        gang: id,
        priority: 2,
        resources: Resource::new(8192, 1),
        size: 1,
        hold_timeout: None,
        style: weft_sched::GangStyle::Soft,
        tag: weft_sched::AskTag::NONE,
    };
    let max = MAX_PENDING_GANGS_PER_ATTEMPT as u64;
    am.send(
        &mut c,
        2,
        AllocateRequest {
            gangs: (1..=max).map(gang).collect(),
            ..AllocateRequest::default()
        },
    );
    assert_eq!(c.pending_gangs(&am.attempt).len(), max as usize);
    let refused = c.am_allocate(
        Time(3),
        am.attempt,
        &am.token,
        AllocateRequest {
            gangs: vec![gang(max + 1)],
            ..AllocateRequest::default()
        },
    );
    match refused {
        Err(RmError::InvalidRequest(m)) => assert_eq!(
            m,
            "1 more gangs would leave 1001 not yet received; at most 1000 per attempt"
        ),
        other => panic!("{other:?}"),
    }
}
