//! NM expiry, AM expiry, attempt retries and the periodic update.

use super::*;

#[test]
fn silent_nm_is_lost_and_the_am_learns_of_its_containers() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 3, "h2:1");
    let w = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated[0]
        .id;
    // h1 keeps heartbeating and its AM keeps calling; h2 falls silent after t=3.
    c.am_allocate(Time(4000), attempt, &token, AllocateRequest::default())
        .unwrap();
    c.am_allocate(Time(8000), attempt, &token, AllocateRequest::default())
        .unwrap();
    heartbeat(&mut c, 9000, "h1:1");
    c.tick(Time(3 + NM_EXPIRY));
    assert_eq!(
        c.node_infos()[1].state,
        NodeState::Running,
        "not past the expiry yet"
    );
    c.tick(Time(3 + NM_EXPIRY + 1));
    let infos = c.node_infos();
    assert_eq!(
        (infos[1].node_id.as_str(), infos[1].state),
        ("h2:1", NodeState::Lost)
    );
    assert_eq!(c.cluster_resources().0, Resource::new(8192, 8));
    let resp = c
        .am_allocate(
            Time(3 + NM_EXPIRY + 2),
            attempt,
            &token,
            AllocateRequest::default(),
        )
        .unwrap();
    assert_eq!(
        resp.completed,
        vec![CompletedContainer {
            id: w,
            exit_status: -100,
            diagnostics: "node lost".into()
        }]
    );
    assert_eq!(
        resp.updated_nodes,
        vec![NodeReport {
            node_id: "h2:1".into(),
            state: NodeState::Lost
        }]
    );
    assert_eq!(resp.cluster_nodes, 1);
    // A heartbeat from the lost node asks it to register again; it may.
    heartbeat(&mut c, 19_000, "h1:1");
    assert_eq!(
        heartbeat(&mut c, 20_000, "h2:1").action(),
        NodeAction::Resync
    );
    register(&mut c, 20_001, "h2:1");
    assert_eq!(c.node_infos()[1].state, NodeState::Running);
    assert_eq!(c.cluster_resources().0, Resource::new(16384, 16));
}

#[test]
fn losing_the_am_node_starts_a_new_attempt_without_counting_a_failure() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (app, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    drain(&mut c);
    // The AM keeps calling; its node h1 falls silent.
    c.am_allocate(Time(4000), attempt, &token, AllocateRequest::default())
        .unwrap();
    c.am_allocate(Time(8000), attempt, &token, AllocateRequest::default())
        .unwrap();
    heartbeat(&mut c, 5000, "h2:1");
    c.tick(Time(1 + NM_EXPIRY + 1));
    let out = drain(&mut c);
    let w = writes(&out);
    assert!(w.iter().any(|w| matches!(w, Write::PutAttempt(t) if t.attempt == 1 && t.state == AttemptState::Failed && t.am_exit_status == Some(-100))));
    assert!(w.iter().any(|w| matches!(w, Write::PutAttempt(t) if t.attempt == 2 && t.state == AttemptState::Scheduled)));
    let r = c.app_report(&app).unwrap();
    assert_eq!(
        r.state,
        AppState::Running,
        "the app stays as it was until the new AM"
    );
    let cur = r.current_attempt.unwrap();
    assert_eq!(cur.id, AttemptId { app, attempt: 2 });
    heartbeat(&mut c, NM_EXPIRY + 3, "h2:1");
    let l = launches(&drain(&mut c)).pop().expect("second AM launched");
    assert_eq!(
        l.container.to_string(),
        "container_1700000000000_0001_02_000001"
    );
    assert_ne!(l.attempt, attempt);
    // Lost-node failures do not count: after the second AM times out a third attempt starts.
    c.tick(Time(NM_EXPIRY + 3 + AM_EXPIRY + 1));
    let r = c.app_report(&app).unwrap();
    assert_eq!(r.current_attempt.unwrap().id.attempt, 3);
    assert!(!r.state.is_final());
}

#[test]
fn am_expiry_fails_the_attempt_and_retries_up_to_max_attempts() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let app = submit(&mut c, 0);
    heartbeat(&mut c, 100, "h1:1");
    let first = launches(&drain(&mut c)).pop().unwrap();
    // The AM never registers.
    heartbeat(&mut c, 5000, "h1:1");
    c.tick(Time(100 + AM_EXPIRY));
    assert_eq!(
        c.app_report(&app)
            .unwrap()
            .current_attempt
            .unwrap()
            .id
            .attempt,
        1
    );
    c.tick(Time(100 + AM_EXPIRY + 1));
    let out = drain(&mut c);
    assert_eq!(stops(&out), vec![first.container]);
    let r = c.app_report(&app).unwrap();
    let cur = r.current_attempt.unwrap();
    assert_eq!((cur.id.attempt, cur.state), (2, AttemptState::Scheduled));
    assert_eq!(r.state, AppState::Accepted);
    heartbeat(&mut c, 6000, "h1:1");
    let second = launches(&drain(&mut c)).pop().expect("second AM");
    assert_eq!(second.attempt.attempt, 2);
    c.tick(Time(6000 + AM_EXPIRY + 1));
    let out = drain(&mut c);
    assert_eq!(stops(&out), vec![second.container]);
    let r = c.app_report(&app).unwrap();
    assert_eq!(
        (r.state, r.final_status),
        (AppState::Failed, FinalStatus::Failed)
    );
    assert!(
        r.diagnostics.contains("failed 2 times") && r.diagnostics.contains("timed out"),
        "{}",
        r.diagnostics
    );
    assert!(writes(&out)
        .iter()
        .any(|w| matches!(w, Write::PutApp(a) if a.state == AppState::Failed)));
}

#[test]
fn heartbeats_keep_the_am_alive() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, attempt, token, _) = running_app(&mut c, 0, "h1:1");
    for t in (1000..20_000).step_by(1000) {
        c.am_allocate(Time(t), attempt, &token, AllocateRequest::default())
            .unwrap();
        heartbeat(&mut c, t, "h1:1");
        c.tick(Time(t));
    }
    assert_eq!(
        c.app_report(&app)
            .unwrap()
            .current_attempt
            .unwrap()
            .id
            .attempt,
        1
    );
    assert_eq!(c.app_report(&app).unwrap().state, AppState::Running);
}

#[test]
fn am_container_exit_fails_the_attempt() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, _, _, am) = running_app(&mut c, 0, "h1:1");
    drain(&mut c);
    report(
        &mut c,
        10,
        "h1:1",
        vec![status(am, NmContainerState::Complete, 1)],
    );
    let r = c.app_report(&app).unwrap();
    let cur = r.current_attempt.unwrap();
    assert_eq!(cur.id.attempt, 2);
    let w = writes(&drain(&mut c));
    assert!(w.iter().any(|w| matches!(w, Write::PutAttempt(t) if t.attempt == 1 && t.diagnostics.contains("exited with status 1") && t.am_exit_status == Some(1))));
}

#[test]
fn a_new_attempt_stops_the_old_ones_containers_and_keeps_the_app_in_the_scheduler() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, attempt, token, am) = running_app(&mut c, 0, "h1:1");
    c.am_allocate(Time(1), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 2, "h1:1");
    let worker = c
        .am_allocate(Time(3), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated[0]
        .id;
    drain(&mut c);
    let reply = report(
        &mut c,
        10,
        "h1:1",
        vec![status(am, NmContainerState::Complete, 1)],
    );
    let out = drain(&mut c);
    assert!(stops(&out).is_empty(), "the AM has exited: no NM call");
    assert_eq!(
        reply.containers_to_stop,
        [worker],
        "the old attempt's worker is stopped by the reply of the heartbeat that ended it"
    );
    // The same heartbeat already places the new AM: the app never left the scheduler.
    let l = launches(&out).pop().expect("the new AM is launched");
    assert_eq!(l.attempt.attempt, 2);
    let r = c.app_report(&app).unwrap();
    assert_eq!(r.current_attempt.unwrap().id.attempt, 2);
    assert_eq!(
        (r.running_containers, r.allocated),
        (1, Resource::new(1024, 1)),
        "only the new AM runs"
    );
    let snap = c.scheduler_snapshot();
    let sa = snap.apps.iter().find(|s| s.app.0 == app.seq).unwrap();
    assert_eq!(
        (sa.usage, sa.pending_containers, sa.am_running),
        (Resource::new(1024, 1), 0, true)
    );
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
}

#[test]
fn the_scheduler_update_runs_at_its_interval() {
    let mut cfg = config("<allocations/>");
    cfg.scheduler.properties_mut().update_interval_ms = 500;
    let mut c = RmCore::new(cfg, TS, Time(0));
    register(&mut c, 0, "h1:1");
    let _app = submit(&mut c, 0);
    assert_eq!(c.update_interval(), Duration::from_millis(500));
    let share = |c: &mut RmCore| {
        c.scheduler_snapshot()
            .queues
            .iter()
            .find(|q| q.name == "root.alice")
            .map(|q| q.fair_share)
            .unwrap()
    };
    c.tick(Time(0));
    let first = share(&mut c);
    assert!(
        first.memory_mb() > 0,
        "the first tick runs the update: {first:?}"
    );
    let app2 = c.new_application(Time(1));
    let mut s = submission("bob", Some("root.other"));
    s.am_resource = Resource::new(1024, 1);
    c.submit(Time(1), app2, s).unwrap();
    c.tick(Time(499));
    assert_eq!(share(&mut c), first, "not due yet");
    c.tick(Time(500));
    assert!(
        share(&mut c).memory_mb() < first.memory_mb(),
        "shares were recomputed"
    );
}

/// The expiry walk runs only once some node can have expired, yet no node expires late: one
/// registered after a walk, and one that fell silent between walks, are each lost at the
/// first tick past their own expiry.
#[test]
fn nodes_are_lost_on_time_though_the_expiry_walk_is_skipped_until_due() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    c.tick(Time(10)); // a walk: no node can expire before 0 + expiry
    register(&mut c, 20, "h2:1");
    heartbeat(&mut c, 30, "h1:1");
    let state = |c: &RmCore, node: &str| {
        c.node_infos()
            .iter()
            .find(|n| n.node_id == node)
            .map(|n| n.state)
    };
    c.tick(Time(30 + NM_EXPIRY));
    assert_eq!(state(&c, "h1:1"), Some(NodeState::Running));
    c.tick(Time(30 + NM_EXPIRY + 1));
    assert_eq!(
        state(&c, "h1:1"),
        Some(NodeState::Lost),
        "silent since t=30"
    );
    assert_eq!(
        state(&c, "h2:1"),
        Some(NodeState::Lost),
        "silent since t=20"
    );
    register(&mut c, 40 + NM_EXPIRY, "h3:1");
    c.tick(Time(40 + 2 * NM_EXPIRY));
    assert_eq!(state(&c, "h3:1"), Some(NodeState::Running));
    c.tick(Time(40 + 2 * NM_EXPIRY + 1));
    assert_eq!(
        state(&c, "h3:1"),
        Some(NodeState::Lost),
        "registered after the last walk, lost at its own expiry"
    );
}
