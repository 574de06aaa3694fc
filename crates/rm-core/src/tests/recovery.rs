//! Recovery after a restart: apps from the store, AMs re-registering, NMs resyncing.

use super::*;

#[test]
fn first_start_without_stored_state() {
    let c = RmCore::recover(config("<allocations/>"), Default::default(), 1234, Time(0)).unwrap();
    assert_eq!((c.cluster_timestamp(), c.epoch()), (1234, 0));
}

#[test]
fn restart_keeps_apps_and_rebinds_running_work() {
    let mut c = RmCore::new(config("<allocations/>"), TS, Time(0));
    drain(&mut c);
    register(&mut c, 0, "h1:1");
    let (a, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 3, "h1:1");
    let w = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated[0]
        .id;
    let killed = submit(&mut c, 5);
    c.kill(Time(6), killed, None).unwrap();
    let waiting = submit(&mut c, 7);
    drain(&mut c);

    // The RM dies; a new one starts on the same store.
    let mut c = RmCore::recover(config("<allocations/>"), stored(), 999, Time(50_000)).unwrap();
    let out = drain(&mut c);
    assert!(writes(&out)
        .iter()
        .any(|w| matches!(w, Write::Meta(m) if m.epoch == 1 && m.cluster_timestamp == TS)));
    assert_eq!((c.cluster_timestamp(), c.epoch()), (TS, 1));
    let states: Vec<AppState> = c.app_reports().iter().map(|r| r.state).collect();
    assert_eq!(
        states,
        [AppState::Accepted, AppState::Killed, AppState::Accepted]
    );
    assert_eq!(
        c.new_application(Time(50_001)).seq,
        1 + crate::apps::APP_ID_BLOCK,
        "ids continue from the stored ceiling"
    );

    // The running AM re-registers with its persisted token; a wrong one is refused.
    assert!(matches!(
        c.am_register(Time(50_002), attempt, "forged", "amhost", 4000, None),
        Err(RmError::InvalidToken(_))
    ));
    c.am_register(Time(50_002), attempt, &token, "amhost", 4000, None)
        .unwrap();
    assert_eq!(c.app_report(&a).unwrap().state, AppState::Running);

    // The NM is unknown to the new RM, resyncs and reports what it runs.
    assert_eq!(
        heartbeat(&mut c, 50_003, "h1:1").action(),
        NodeAction::Resync
    );
    let stray = ContainerId {
        app: killed,
        attempt: 1,
        n: 1,
    };
    c.node_register(
        Time(50_004),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: "h1:1".into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: vec![
                status(am, NmContainerState::Running, 0),
                status(w, NmContainerState::Running, 0),
                status(stray, NmContainerState::Running, 0),
            ],
            secret: String::new(),
        },
    )
    .unwrap();
    let r = c.app_report(&a).unwrap();
    assert_eq!(
        (r.running_containers, r.allocated),
        (2, Resource::new(2048, 2))
    );
    let snap = c.scheduler_snapshot();
    let sa = snap.apps.iter().find(|s| s.app.0 == a.seq).unwrap();
    assert_eq!(
        sa.usage,
        Resource::new(2048, 2),
        "the scheduler accounts for the running containers"
    );
    assert_eq!(
        snap.cluster_used.memory_mb(),
        2048,
        "recovery charges the running containers and allocates nothing"
    );
    assert!(
        launches(&drain(&mut c)).is_empty(),
        "no heartbeat is forced by a registration"
    );
    assert_eq!(
        heartbeat(&mut c, 50_005, "h1:1").containers_to_stop,
        vec![stray]
    );
    let out = drain(&mut c);
    let l = launches(&out)
        .pop()
        .expect("the waiting app's AM is launched on the next heartbeat");
    assert_eq!(l.attempt.app, waiting);
    assert_eq!(c.scheduler().cluster_used().memory_mb(), 2048 + 1024);
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());

    // New containers of the recovered attempt do not collide with those from before.
    c.am_allocate(Time(50_006), attempt, &token, ask(1))
        .unwrap();
    heartbeat(&mut c, 50_007, "h1:1");
    let got = c
        .am_allocate(Time(50_008), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(
        got.allocated[0].id.to_string(),
        "container_1700000000000_0001_01_1000001"
    );
    let reg = c
        .am_register(Time(50_009), attempt, &token, "amhost", 4000, None)
        .unwrap();
    assert_eq!(reg.running_containers.len(), 2, "{reg:?}");

    // The recovered AM container is still known as the AM: its exit fails the attempt.
    report(
        &mut c,
        50_010,
        "h1:1",
        vec![status(am, NmContainerState::Complete, 2)],
    );
    assert_eq!(
        c.app_report(&a)
            .unwrap()
            .current_attempt
            .unwrap()
            .id
            .attempt,
        2
    );
}

fn current_attempt(c: &RmCore, a: ApplicationId) -> AttemptReport {
    c.app_report(&a).unwrap().current_attempt.unwrap()
}

/// An app whose AM ran on h1:1, and a new RM recovered at `t` from the store.
fn recovered_with_am_on_h1(t: u64) -> (RmCore, ApplicationId, ContainerId) {
    let mut c = RmCore::new(config("<allocations/>"), TS, Time(0));
    register(&mut c, 0, "h1:1");
    let (a, _, _, am) = running_app(&mut c, 1, "h1:1");
    drain(&mut c);
    let mut cfg = config("<allocations/>");
    // Shorter than the tests' AM expiry, so the two rules can be told apart.
    cfg.am_recovery_grace = Duration::from_millis(2_000);
    let c = RmCore::recover(cfg, stored(), 0, Time(t)).unwrap();
    (c, a, am)
}

#[test]
fn a_recovered_am_its_node_does_not_report_fails_at_once() {
    let (mut c, a, am) = recovered_with_am_on_h1(100_000);
    register(&mut c, 100_000, "h1:1");
    let now = current_attempt(&c, a);
    assert_eq!(now.id.attempt, 2, "the next attempt starts at once");
    let first = c.app_report(&a).unwrap();
    assert_eq!(first.state, AppState::Accepted);
    heartbeat(&mut c, 100_001, "h1:1");
    let l = launches(&drain(&mut c))
        .pop()
        .expect("the new AM is launched");
    assert_eq!(l.attempt.attempt, 2);
    let stored_first = stored()
        .apps
        .into_iter()
        .find(|r| r.app.app_id == a.seq)
        .unwrap()
        .attempts
        .into_iter()
        .find(|t| t.attempt == 1)
        .unwrap();
    assert!(
        stored_first
            .diagnostics
            .contains(&format!("AM container {am} was not running on h1:1")),
        "{}",
        stored_first.diagnostics
    );
}

#[test]
fn a_recovered_am_no_node_reports_fails_after_the_grace_period() {
    let (mut c, a, _) = recovered_with_am_on_h1(100_000);
    // Another node comes back; the AM's node does not.
    register(&mut c, 100_000, "h2:1");
    c.tick(Time(101_999));
    assert_eq!(current_attempt(&c, a).id.attempt, 1);
    c.tick(Time(102_000));
    assert_eq!(current_attempt(&c, a).id.attempt, 2);
    assert_eq!(
        RmConfig::new(Default::default()).am_recovery_grace,
        Duration::from_secs(10)
    );
}

#[test]
fn a_recovered_am_that_is_reported_keeps_its_attempt() {
    let (mut c, a, am) = recovered_with_am_on_h1(100_000);
    c.node_register(
        Time(100_000),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: "h1:1".into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: vec![status(am, NmContainerState::Running, 0)],
            secret: String::new(),
        },
    )
    .unwrap();
    c.tick(Time(100_000 + 4_000));
    assert_eq!(current_attempt(&c, a).id.attempt, 1, "past the grace");
    // Without contact the AM expiry still applies.
    c.tick(Time(100_000 + AM_EXPIRY + 1));
    assert_eq!(current_attempt(&c, a).id.attempt, 2);
}

#[test]
fn an_app_whose_queue_is_gone_fails_on_recovery() {
    let mut c = RmCore::new(
        config(r#"<allocations><queue name="a"/></allocations>"#),
        TS,
        Time(0),
    );
    let id = c.new_application(Time(0));
    c.submit(Time(0), id, submission("alice", Some("a")))
        .unwrap();
    drain(&mut c);
    let strict = r#"<allocations>
        <queue name="b"/>
        <queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy>
      </allocations>"#;
    let mut c = RmCore::recover(config(strict), stored(), 0, Time(10)).unwrap();
    let r = c.app_report(&id).unwrap();
    assert_eq!(r.state, AppState::Failed);
    assert!(
        r.diagnostics.contains("could not be recovered"),
        "{}",
        r.diagnostics
    );
    assert!(writes(&drain(&mut c))
        .iter()
        .any(|w| matches!(w, Write::PutApp(a) if a.state == AppState::Failed)));
}

#[test]
fn a_recovered_container_that_no_longer_fits_its_node_is_stopped() {
    let (mut c, a, am) = recovered_with_am_on_h1(100_000);
    let stray_worker = ContainerId {
        app: a,
        attempt: 1,
        n: 2,
    };
    // The NM comes back smaller than what it still runs: the AM fits, the worker does not.
    let mut worker = status(stray_worker, NmContainerState::Running, 0);
    worker.resource = Resource::new(4096, 1);
    c.node_register(
        Time(100_001),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: "h1:1".into(),
            capability: Resource::new(2048, 2),
            rack: String::new(),
            containers: vec![status(am, NmContainerState::Running, 0), worker],
            secret: String::new(),
        },
    )
    .unwrap();
    let r = c.app_report(&a).unwrap();
    assert_eq!(
        (r.running_containers, r.allocated),
        (1, Resource::new(1024, 1)),
        "only the AM is recovered"
    );
    assert_eq!(
        current_attempt(&c, a).id.attempt,
        1,
        "the AM keeps its attempt"
    );
    assert_eq!(
        heartbeat(&mut c, 100_002, "h1:1").containers_to_stop,
        vec![stray_worker]
    );
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
}
