//! AM launch, registration, allocation, releases, blacklist and finish.

use super::*;

#[test]
fn am_container_is_launched_with_its_environment_and_persisted() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let app = submit(&mut c, 10);
    drain(&mut c);
    heartbeat(&mut c, 20, "h1:1");
    let out = drain(&mut c);
    let l = launches(&out).pop().expect("launch");
    assert_eq!(l.node_id, "h1:1");
    assert_eq!(
        l.container.to_string(),
        "container_1700000000000_0001_01_000001"
    );
    assert_eq!(
        l.attempt.to_string(),
        "appattempt_1700000000000_0001_000001"
    );
    assert_eq!(l.user, "alice");
    assert_eq!(l.launch.commands, vec!["run-am".to_string()]);
    let env = &l.launch.environment;
    assert_eq!(env["CONTAINER_ID"], l.container.to_string());
    assert_eq!(env["APPLICATION_ATTEMPT_ID"], l.attempt.to_string());
    assert_eq!(env["WEFT_RM_SCHEDULER_ADDRESS"], "rm:8030");
    assert_eq!(env["WEFT_AM_TOKEN"].len(), 32);
    assert_eq!(
        env["APPLICATION_WEB_PROXY_BASE"],
        "/proxy/application_1700000000000_0001"
    );
    // The attempt record with the AM container is written before the launch is carried out.
    let persist_at = out.iter().position(|o| matches!(o, Output::Persist(w) if w.iter().any(|w| matches!(w, Write::PutAttempt(t) if t.am_container_id.as_deref() == Some("container_1700000000000_0001_01_000001")))));
    let launch_at = out.iter().position(|o| matches!(o, Output::LaunchAm(_)));
    assert!(persist_at < launch_at, "{out:?}");
    let r = c.app_report(&app).unwrap();
    assert_eq!(r.launch_time, Some(Time(20)));
    assert_eq!(r.current_attempt.unwrap().state, AttemptState::Launched);
    assert_eq!(r.running_containers, 1);
}

#[test]
fn tokens_differ_per_attempt_and_secret() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, _, t1, _) = running_app(&mut c, 1, "h1:1");
    let (_, _, t2, _) = running_app(&mut c, 2, "h1:1");
    assert_ne!(t1, t2);
}

#[test]
fn registration_needs_the_right_token_and_attempt() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let app = submit(&mut c, 1);
    drain(&mut c);
    heartbeat(&mut c, 2, "h1:1");
    let l = launches(&drain(&mut c)).pop().unwrap();
    let token = l.launch.environment["WEFT_AM_TOKEN"].clone();
    let e = c
        .am_register(Time(3), l.attempt, "nope", "h", 1, None)
        .unwrap_err();
    assert!(matches!(e, RmError::InvalidToken(_)), "{e}");
    let other = AttemptId {
        app: l.attempt.app,
        attempt: 2,
    };
    assert!(matches!(
        c.am_register(Time(3), other, &token, "h", 1, None),
        Err(RmError::UnknownAttempt(_))
    ));
    assert!(matches!(
        c.am_allocate(Time(3), l.attempt, &token, AllocateRequest::default()),
        Err(RmError::NotRegistered(_))
    ));
    assert!(matches!(
        c.am_finish(Time(3), l.attempt, &token, FinalStatus::Succeeded, "", None),
        Err(RmError::NotRegistered(_))
    ));
    assert_eq!(l.node_address, "h1:1", "no separate address registered");
    assert_eq!(c.app_report(&app).unwrap().state, AppState::Accepted);
    let reg = c
        .am_register(
            Time(4),
            l.attempt,
            &token,
            "h",
            1,
            Some("http://h:1/".into()),
        )
        .unwrap();
    assert_eq!(reg.queue, "root.alice");
    assert_eq!(reg.maximum_capability, c.maximum_allocation());
    let r = c.app_report(&app).unwrap();
    assert_eq!(r.state, AppState::Running);
    assert_eq!(r.tracking_url.as_deref(), Some("http://h:1/"));
    assert_eq!(
        r.current_attempt.unwrap().am_rpc,
        Some(("h".to_string(), 1))
    );
}

#[test]
fn allocate_returns_containers_then_their_completion() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, attempt, token, _am) = running_app(&mut c, 1, "h1:1");
    let first = c.am_allocate(Time(2), attempt, &token, ask(2)).unwrap();
    assert!(
        first.allocated.is_empty(),
        "allocation happens on node heartbeats"
    );
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 4, "h1:1");
    let got = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    let ids: Vec<String> = got.allocated.iter().map(|a| a.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "container_1700000000000_0001_01_000002",
            "container_1700000000000_0001_01_000003"
        ]
    );
    assert!(got
        .allocated
        .iter()
        .all(|a| a.node_id == "h1:1" && a.priority == 1));
    assert_eq!(got.headroom, Resource::new(8192 - 3 * 1024, 8 - 3));
    assert_eq!(got.cluster_nodes, 1);
    assert_eq!(
        c.app_report(&app).unwrap().allocated,
        Resource::new(3072, 3)
    );
    // Handed out once only.
    let again = c
        .am_allocate(Time(6), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(again.allocated.is_empty());
    let done = got.allocated[0].id;
    report(
        &mut c,
        7,
        "h1:1",
        vec![status(done, NmContainerState::Complete, 3)],
    );
    let after = c
        .am_allocate(Time(8), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(
        after.completed,
        vec![CompletedContainer {
            id: done,
            exit_status: 3,
            diagnostics: "exited with 3".into()
        }]
    );
    assert_eq!(c.app_report(&app).unwrap().running_containers, 2);
}

#[test]
fn release_reports_aborted_and_stops_the_container() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 3, "h1:1");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    let id = got.allocated[0].id;
    drain(&mut c);
    let req = AllocateRequest {
        releases: vec![id],
        ..AllocateRequest::default()
    };
    let resp = c.am_allocate(Time(5), attempt, &token, req).unwrap();
    assert_eq!(resp.completed.len(), 1);
    assert_eq!(resp.completed[0].exit_status, exit::ABORTED);
    assert!(
        stops(&drain(&mut c)).is_empty(),
        "a task container is stopped by the heartbeat alone"
    );
    assert_eq!(pending_stops(&c), vec![id]);
    assert_eq!(heartbeat(&mut c, 6, "h1:1").containers_to_stop, vec![id]);
    // Releasing the AM container or someone else's is refused, and nothing changes.
    let bad = AllocateRequest {
        releases: vec![am],
        ..AllocateRequest::default()
    };
    assert!(matches!(
        c.am_allocate(Time(7), attempt, &token, bad),
        Err(RmError::InvalidRequest(_))
    ));
    let foreign = ContainerId {
        app: ApplicationId {
            cluster_ts: TS,
            seq: 99,
        },
        attempt: 1,
        n: 2,
    };
    let bad = AllocateRequest {
        releases: vec![foreign],
        ..ask(1)
    };
    assert!(matches!(
        c.am_allocate(Time(7), attempt, &token, bad),
        Err(RmError::UnknownContainer(_))
    ));
    heartbeat(&mut c, 8, "h1:1");
    assert!(
        c.am_allocate(Time(9), attempt, &token, AllocateRequest::default())
            .unwrap()
            .allocated
            .is_empty(),
        "the refused request's ask was not applied"
    );
}

#[test]
fn asks_above_the_maximum_are_refused_whole() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let mut req = ask(1);
    req.asks.push(ResourceAsk {
        resource: Resource::new(1 << 20, 1),
        ..req.asks[0].clone()
    });
    let e = c.am_allocate(Time(2), attempt, &token, req).unwrap_err();
    assert!(matches!(e, RmError::AboveMaximum { .. }), "{e}");
    heartbeat(&mut c, 3, "h1:1");
    assert!(c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated
        .is_empty());
}

#[test]
fn blacklisted_nodes_get_no_containers() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let mut req = ask(1);
    req.blacklist_additions = vec!["h1".into()];
    c.am_allocate(Time(2), attempt, &token, req).unwrap();
    heartbeat(&mut c, 3, "h1:1");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(got.allocated.is_empty(), "{got:?}");
    heartbeat(&mut c, 5, "h2:1");
    let got = c
        .am_allocate(Time(6), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated.len(), 1);
    assert_eq!(got.allocated[0].node_id, "h2:1");
    assert!(
        got.completed.is_empty(),
        "the refused container is not the AM's business"
    );
}

#[test]
fn the_headroom_is_the_schedulers_for_the_apps_queue_not_the_clusters_free() {
    let mut c = RmCore::new(
        config(
            r#"<allocations><queue name="alice"><maxResources>4096 mb, 4 vcores</maxResources></queue></allocations>"#,
        ),
        TS,
        Time(0),
    );
    drain(&mut c);
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let got = c
        .am_allocate(Time(2), attempt, &token, AllocateRequest::default())
        .unwrap();
    // root.alice runs the 1024 MB / 1 vcore AM; its max share (and so its fair share) is
    // 4096 MB / 4 vcores: 3072 MB / 3 vcores more, though the cluster has 7168 / 7 free.
    assert_eq!(got.headroom, Resource::new(3072, 3));
}

#[test]
fn an_ask_above_the_queues_max_container_allocation_is_refused_whole() {
    let xml = r#"<allocations><queue name="alice">
        <maxContainerAllocation>2048 mb, 2 vcores</maxContainerAllocation>
      </queue></allocations>"#;
    let mut c = RmCore::new(config(xml), TS, Time(0));
    drain(&mut c);
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let mut req = ask(1);
    req.asks.push(ResourceAsk {
        priority: 2,
        resource: Resource::new(4096, 1),
        ..req.asks[0].clone()
    });
    let refused = c.am_allocate(Time(2), attempt, &token, req);
    let Err(e @ RmError::AboveMaximum { .. }) = &refused else {
        panic!("{refused:?}");
    };
    let m = e.to_string();
    assert!(
        m.contains("ask at priority 2") && m.contains("of queue root.alice"),
        "{m}"
    );
    heartbeat(&mut c, 3, "h1:1");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(
        got.allocated.is_empty(),
        "nothing of the refused request applied: {got:?}"
    );
    // At the queue's maximum exactly, the ask is taken.
    let mut req = ask(1);
    req.asks[0].resource = Resource::new(2048, 2);
    c.am_allocate(Time(5), attempt, &token, req).unwrap();
    heartbeat(&mut c, 6, "h1:1");
    let got = c
        .am_allocate(Time(7), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated.len(), 1, "{got:?}");
    assert_eq!(got.allocated[0].resource, Resource::new(2048, 2));
}

#[test]
fn a_blacklisted_host_covers_its_other_nms_even_those_registering_later() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let mut req = ask(2);
    req.blacklist_additions = vec!["h2".into()];
    c.am_allocate(Time(2), attempt, &token, req).unwrap();
    // A second NM on h2 joins after the update: the scheduler knows it by its node id.
    register(&mut c, 3, "h2:2");
    heartbeat(&mut c, 4, "h2:1");
    heartbeat(&mut c, 4, "h2:2");
    let got = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(got.allocated.is_empty(), "nothing on host h2: {got:?}");
    heartbeat(&mut c, 6, "h1:1");
    let got = c
        .am_allocate(Time(7), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(
        !got.allocated.is_empty() && got.allocated.iter().all(|a| a.node_id == "h1:1"),
        "{got:?}"
    );
    // Taking the host off the list frees both of its NMs.
    let mut req = ask(2);
    req.blacklist_removals = vec!["h2".into()];
    c.am_allocate(Time(8), attempt, &token, req).unwrap();
    heartbeat(&mut c, 9, "h2:2");
    let got = c
        .am_allocate(Time(10), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(
        got.allocated.iter().any(|a| a.node_id == "h2:2"),
        "h2:2 serves the app again: {got:?}"
    );
}

#[test]
fn listing_every_place_is_refused_before_anything_of_the_request_applies() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let mut req = ask(1);
    req.blacklist_additions = vec!["*".into()];
    let refused = c.am_allocate(Time(2), attempt, &token, req);
    assert!(
        matches!(&refused, Err(RmError::InvalidRequest(m)) if m.contains("'*'")),
        "{refused:?}"
    );
    heartbeat(&mut c, 3, "h1:1");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(
        got.allocated.is_empty(),
        "the refused ask was not applied: {got:?}"
    );
}

#[test]
fn finish_ends_the_app_and_the_am_exits_by_itself() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (app, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 3, "h2:1");
    let worker = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated[0]
        .id;
    drain(&mut c);
    assert!(matches!(
        c.am_finish(Time(5), attempt, &token, FinalStatus::Undefined, "", None),
        Err(RmError::InvalidRequest(_))
    ));
    c.am_finish(
        Time(5),
        attempt,
        &token,
        FinalStatus::Succeeded,
        "all good",
        None,
    )
    .unwrap();
    let out = drain(&mut c);
    assert!(stops(&out).is_empty(), "no StopContainers call");
    assert_eq!(pending_stops(&c), vec![worker], "the AM is not stopped");
    let ends: Vec<(ContainerId, Option<i32>)> = c
        .container_reports(&app)
        .unwrap()
        .iter()
        .map(|r| (r.id, r.exit_status))
        .collect();
    assert_eq!(
        ends,
        [
            (am, Some(exit::SUCCESS)),
            (worker, Some(exit::KILLED_AFTER_APP_COMPLETION))
        ]
    );
    assert!(writes(&out).iter().any(|w| matches!(w, Write::PutApp(r) if r.state == AppState::Finished && r.final_status == FinalStatus::Succeeded)));
    let r = c.app_report(&app).unwrap();
    assert_eq!(
        (r.state, r.final_status, r.progress),
        (AppState::Finished, FinalStatus::Succeeded, 1.0)
    );
    let h2 = heartbeat(&mut c, 6, "h2:1");
    assert_eq!(
        (h2.containers_to_stop, h2.apps_to_cleanup),
        (vec![worker], vec![app])
    );
    // The AM still runs: not stopped, no cleanup yet; once it exits its node cleans up.
    let h1 = report(
        &mut c,
        7,
        "h1:1",
        vec![status(am, NmContainerState::Running, 0)],
    );
    assert!(
        h1.containers_to_stop.is_empty() && h1.apps_to_cleanup.is_empty(),
        "{h1:?}"
    );
    let h1 = report(
        &mut c,
        8,
        "h1:1",
        vec![status(am, NmContainerState::Complete, 0)],
    );
    assert_eq!(h1.apps_to_cleanup, vec![app]);
    assert_eq!(r.current_attempt.unwrap().state, AttemptState::Finished);
}

#[test]
fn a_finished_am_that_does_not_exit_is_stopped_after_the_am_expiry() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_finish(
        Time(10),
        attempt,
        &token,
        FinalStatus::Failed,
        "gave up",
        None,
    )
    .unwrap();
    drain(&mut c);
    heartbeat(&mut c, 5000, "h1:1");
    c.tick(Time(10 + AM_EXPIRY - 1));
    assert!(stops(&drain(&mut c)).is_empty());
    c.tick(Time(10 + AM_EXPIRY));
    assert_eq!(stops(&drain(&mut c)), vec![am]);
    let h = heartbeat(&mut c, 10 + AM_EXPIRY + 1, "h1:1");
    assert_eq!(
        (h.containers_to_stop, h.apps_to_cleanup),
        (vec![am], vec![app])
    );
    let r = c.app_report(&app).unwrap();
    assert_eq!(
        (r.state, r.final_status),
        (AppState::Finished, FinalStatus::Failed)
    );
}

#[test]
fn the_schedulers_state_verifies_clean_through_an_apps_life() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
    let (_, attempt, token, _am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(3)).unwrap();
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 4, "h1:1");
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
    assert_eq!(
        c.scheduler().cluster_used(),
        Resource::new(3 * 1024, 3),
        "the AM and two containers; verifying changed nothing"
    );
}

#[test]
fn a_gang_comes_back_in_one_reply_and_an_unpackable_one_is_refused() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let gang = |id, mb, size| weft_sched::GangAsk {
        gang: id,
        priority: 2,
        resources: Resource::new(mb, 1),
        size,
        hold_timeout: None,
        style: weft_sched::GangStyle::Soft,
        tag: weft_sched::AskTag::NONE,
    };
    // One 8192 MB node hosts 2 members of 4096 MB, never 3: refused, and nothing changes.
    let refused = c.am_allocate(
        Time(2),
        attempt,
        &token,
        AllocateRequest {
            gangs: vec![gang(1, 4096, 3)],
            ..AllocateRequest::default()
        },
    );
    match refused {
        Err(RmError::InvalidRequest(m)) => assert_eq!(
            m,
            "gang of 3 × 4096 MB cannot be packed on 1 nodes: at most 2 members"
        ),
        other => panic!("{other:?}"),
    }
    c.am_allocate(
        Time(3),
        attempt,
        &token,
        AllocateRequest {
            gangs: vec![gang(2, 1024, 4)],
            ..AllocateRequest::default()
        },
    )
    .unwrap();
    heartbeat(&mut c, 4, "h1:1");
    let got = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated.len(), 4, "{got:?}");
    // One id twice in a call is refused.
    let twice = c.am_allocate(
        Time(6),
        attempt,
        &token,
        AllocateRequest {
            gangs: vec![gang(3, 1024, 1), gang(3, 1024, 1)],
            ..AllocateRequest::default()
        },
    );
    assert!(
        matches!(twice, Err(RmError::InvalidRequest(_))),
        "{twice:?}"
    );
}
