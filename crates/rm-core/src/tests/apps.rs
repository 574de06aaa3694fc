//! Submission, kill and move.

use super::*;

#[test]
fn ids_are_sequential_and_formatted() {
    let mut c = core();
    let a = c.new_application(Time(5));
    let b = c.new_application(Time(6));
    assert_eq!(a.to_string(), "application_1700000000000_0001");
    assert_eq!(b.seq, 2);
    assert!(
        c.app_report(&a).is_none(),
        "nothing exists before submission"
    );
}

#[test]
fn ids_handed_out_but_never_submitted_are_not_reissued_after_a_restart() {
    let mut c = core();
    submit(&mut c, 1); // seq 1, submitted
                       // Handed out after the last submission (e.g. their submissions failed): 2 and 3.
    let handed_out: Vec<u64> = (2..4).map(|t| c.new_application(Time(t)).seq).collect();
    drain(&mut c);
    let mut c = RmCore::recover(config("<allocations/>"), stored(), 0, Time(10)).unwrap();
    drain(&mut c);
    let next = c.new_application(Time(11));
    assert_eq!(next.cluster_ts, TS);
    assert_eq!(
        next.seq,
        1 + crate::apps::APP_ID_BLOCK,
        "after the stored ceiling, above 1 and {handed_out:?}"
    );
}

#[test]
fn new_ids_write_the_store_once_a_block() {
    let mut c = core();
    let block = crate::apps::APP_ID_BLOCK;
    let mut ceilings = Vec::new();
    for t in 0..2 * block + 1 {
        let id = c.new_application(Time(t));
        for w in writes(&drain(&mut c)) {
            if let Write::Meta(m) = w {
                assert!(
                    m.next_app_seq > id.seq,
                    "the ceiling is above the id it covers"
                );
                ceilings.push((id.seq, m.next_app_seq));
            }
        }
    }
    assert_eq!(
        ceilings,
        vec![
            (1, 1 + block),
            (1 + block, 1 + 2 * block),
            (1 + 2 * block, 1 + 3 * block)
        ],
        "one write per block of ids"
    );
}

#[test]
fn submission_is_accepted_and_persisted_with_its_first_attempt() {
    let mut c = core();
    let id = c.new_application(Time(100));
    let issued = writes(&drain(&mut c));
    assert!(
        matches!(&issued[..], [Write::Meta(m)] if m.next_app_seq > 1),
        "a ceiling above the id is stored with it: {issued:?}"
    );
    c.submit(Time(100), id, submission("alice", None)).unwrap();
    let out = drain(&mut c);
    let w = writes(&out);
    assert!(
        matches!(&w[0], Write::PutApp(a) if a.app_id == 1 && a.state == AppState::Accepted && a.queue == "root.alice")
    );
    assert!(
        matches!(&w[1], Write::PutAttempt(t) if t.attempt == 1 && t.state == AttemptState::Scheduled && !t.am_token.is_empty())
    );
    let r = c.app_report(&id).unwrap();
    assert_eq!(r.state, AppState::Accepted);
    assert_eq!(r.queue, "root.alice");
    assert_eq!(r.submit_time, Time(100));
    assert_eq!(r.current_attempt.unwrap().state, AttemptState::Scheduled);
}

#[test]
fn bad_submissions_change_nothing() {
    let mut c = core();
    let id = c.new_application(Time(0));
    drain(&mut c);
    let forged = ApplicationId {
        cluster_ts: TS,
        seq: 9,
    };
    assert!(matches!(
        c.submit(Time(1), forged, submission("alice", None)),
        Err(RmError::NotIssued(_))
    ));
    let other_cluster = ApplicationId {
        cluster_ts: 1,
        seq: 1,
    };
    assert!(matches!(
        c.submit(Time(1), other_cluster, submission("alice", None)),
        Err(RmError::NotIssued(_))
    ));
    let mut big = submission("alice", None);
    big.am_resource = Resource::new(1 << 20, 1);
    let e = c.submit(Time(1), id, big).unwrap_err();
    assert!(matches!(e, RmError::AboveMaximum { .. }), "{e}");
    assert!(
        e.to_string().contains("exceeds the maximum allocation"),
        "{e}"
    );
    let mut none = submission("alice", None);
    none.launch.commands.clear();
    assert!(matches!(
        c.submit(Time(1), id, none),
        Err(RmError::InvalidRequest(_))
    ));
    let mut unmanaged = submission("alice", None);
    unmanaged.unmanaged_am = true;
    assert!(matches!(
        c.submit(Time(1), id, unmanaged),
        Err(RmError::Unsupported(_))
    ));
    assert!(c.app_reports().is_empty());
    assert!(drain(&mut c).is_empty());
    // The id is still usable after the refusals, but only once.
    c.submit(Time(2), id, submission("alice", None)).unwrap();
    assert!(matches!(
        c.submit(Time(3), id, submission("alice", None)),
        Err(RmError::AlreadySubmitted(_))
    ));
}

#[test]
fn a_submission_the_scheduler_refuses_is_accepted_and_ends_failed() {
    let xml = r#"<allocations>
        <queue name="root">
          <aclSubmitApps> </aclSubmitApps>
          <aclAdministerApps> </aclAdministerApps>
          <queue name="known"/>
          <queue name="bobs"><aclSubmitApps>bob</aclSubmitApps></queue>
        </queue>
        <queuePlacementPolicy>
          <rule name="specified" create="false"/>
          <rule name="reject"/>
        </queuePlacementPolicy>
      </allocations>"#;
    let mut c = RmCore::new(config(xml), TS, Time(0));
    drain(&mut c);
    // Refused by the placement rules, and by a queue's submit ACL: both recorded as FAILED,
    // with the reason, persisted, and never given to the scheduler.
    for (queue, says, code) in [
        ("root.nope", "reject", "(placement_rejected)"),
        ("root.bobs", "cannot submit", "(acl_denied)"),
    ] {
        let id = c.new_application(Time(1));
        c.submit(Time(1), id, submission("alice", Some(queue)))
            .unwrap();
        let r = c.app_report(&id).unwrap();
        assert_eq!(
            (r.state, r.final_status),
            (AppState::Failed, FinalStatus::Failed)
        );
        assert!(
            r.diagnostics.contains("rejected by the scheduler"),
            "{}",
            r.diagnostics
        );
        assert!(r.diagnostics.contains(says), "{}", r.diagnostics);
        assert!(
            r.diagnostics.contains(code),
            "the stable code is shown: {}",
            r.diagnostics
        );
        assert!(r.current_attempt.is_none());
        assert!(launches(&drain(&mut c)).is_empty());
        assert!(stored()
            .apps
            .iter()
            .any(|a| a.app.app_id == id.seq && a.app.state == AppState::Failed));
        assert!(matches!(
            c.submit(Time(2), id, submission("alice", Some("root.known"))),
            Err(RmError::AlreadySubmitted(_))
        ));
    }
}

/// Resource pools (spec §6): a queue bound to no pool is refused at admission; the RM records
/// the app FAILED with the scheduler's text, naming the app by its YARN id.
#[test]
fn a_submission_to_a_queue_in_no_resource_pool_ends_failed_with_the_pools_text() {
    let xml = r#"<allocations>
        <resourcePools>
          <resourcePool name="pool1"><host>h1</host></resourcePool>
        </resourcePools>
        <queue name="pool1_ads"/>
        <queue name="adhoc"/>
      </allocations>"#;
    let mut c = RmCore::new(config(xml), TS, Time(0));
    drain(&mut c);
    let id = c.new_application(Time(1));
    c.submit(Time(1), id, submission("alice", Some("root.adhoc")))
        .unwrap();
    let r = c.app_report(&id).unwrap();
    assert_eq!(
        (r.state, r.final_status),
        (AppState::Failed, FinalStatus::Failed)
    );
    assert_eq!(
        r.diagnostics,
        format!("Application {id} was rejected by the scheduler (no_resource_pool): Application {id} submitted by user alice to queue root.adhoc rejected: queue root.adhoc is not bound to any resource pool (resource pools: pool1)")
    );
    assert!(r.current_attempt.is_none());
    let ok = c.new_application(Time(3));
    c.submit(Time(3), ok, submission("alice", Some("root.known")))
        .unwrap();
    assert_eq!(c.app_report(&ok).unwrap().queue, "root.known");
}

#[test]
fn max_attempts_default_and_cap() {
    let mut c = core();
    let a = c.new_application(Time(0));
    let mut s = submission("alice", None);
    s.max_attempts = 7;
    c.submit(Time(0), a, s).unwrap();
    let w = writes(&drain(&mut c));
    assert!(w
        .iter()
        .any(|w| matches!(w, Write::PutApp(r) if r.max_attempts == 2)));
}

#[test]
fn kill_ends_the_app_and_stops_its_containers() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, attempt, token, am) = running_app(&mut c, 10, "h1:1");
    c.am_allocate(Time(20), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 30, "h1:1");
    let got = c
        .am_allocate(Time(40), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated.len(), 1);
    drain(&mut c);
    assert_eq!(
        c.kill(Time(50), app, Some("alice")).unwrap(),
        AppState::Killed
    );
    let out = drain(&mut c);
    assert_eq!(
        stops(&out),
        vec![am],
        "the AM container is stopped through its NM"
    );
    let stopped = pending_stops(&c);
    assert!(
        stopped.contains(&am) && stopped.contains(&got.allocated[0].id),
        "{stopped:?}"
    );
    assert!(writes(&out).iter().any(|w| matches!(w, Write::PutApp(r) if r.state == AppState::Killed && r.final_status == FinalStatus::Killed)));
    let r = c.app_report(&app).unwrap();
    assert_eq!(
        (r.state, r.final_status, r.running_containers),
        (AppState::Killed, FinalStatus::Killed, 0)
    );
    assert_eq!(r.finish_time, Some(Time(50)));
    assert_eq!(r.current_attempt.unwrap().state, AttemptState::Killed);
    let ends: Vec<(ContainerId, Option<i32>)> = c
        .container_reports(&app)
        .unwrap()
        .iter()
        .map(|r| (r.id, r.exit_status))
        .collect();
    assert_eq!(
        ends,
        [
            (am, Some(exit::KILLED_BY_RESOURCEMANAGER)),
            (got.allocated[0].id, Some(exit::KILLED_BY_RESOURCEMANAGER))
        ],
        "a kill ends every container as killed by the ResourceManager"
    );
    let reply = heartbeat(&mut c, 60, "h1:1");
    assert!(reply.containers_to_stop.contains(&am));
    assert_eq!(reply.apps_to_cleanup, vec![app]);
    // The AM is gone.
    assert!(matches!(
        c.am_allocate(Time(70), attempt, &token, AllocateRequest::default()),
        Err(RmError::UnknownAttempt(_))
    ));
    // Killing again is a no-op.
    assert_eq!(c.kill(Time(80), app, None).unwrap(), AppState::Killed);
    assert!(drain(&mut c).is_empty());
}

#[test]
fn kill_without_permission_is_refused() {
    let xml = r#"<allocations>
        <queue name="root">
          <aclSubmitApps>*</aclSubmitApps>
          <aclAdministerApps> </aclAdministerApps>
          <queue name="default"/>
        </queue>
      </allocations>"#;
    let mut c = RmCore::new(config(xml), TS, Time(0));
    drain(&mut c);
    let app = submit(&mut c, 1);
    drain(&mut c);
    let e = c.kill(Time(2), app, Some("mallory")).unwrap_err();
    assert!(matches!(e, RmError::Forbidden(_)), "{e}");
    // Users know the app by YARN's full id, never by the scheduler's short one.
    assert!(e.to_string().contains(&app.to_string()), "{e}");
    assert!(!e.to_string().contains("app_0"), "{e}");
    assert_eq!(c.app_report(&app).unwrap().state, AppState::Accepted);
    assert!(drain(&mut c).is_empty());
    assert_eq!(
        c.kill(Time(3), app, Some("alice")).unwrap(),
        AppState::Killed
    );
    assert!(matches!(
        c.kill(
            Time(3),
            ApplicationId {
                cluster_ts: TS,
                seq: 42
            },
            None
        ),
        Err(RmError::UnknownApp(_))
    ));
}

#[test]
fn move_changes_the_queue_and_is_persisted() {
    let xml = r#"<allocations><queue name="a"/><queue name="b"/></allocations>"#;
    let mut c = RmCore::new(config(xml), TS, Time(0));
    drain(&mut c);
    let id = c.new_application(Time(0));
    c.submit(Time(0), id, submission("alice", Some("a")))
        .unwrap();
    drain(&mut c);
    assert_eq!(c.move_app(Time(1), id, "b", None).unwrap(), "root.b");
    let w = writes(&drain(&mut c));
    assert!(matches!(&w[..], [Write::PutApp(r)] if r.queue == "root.b"));
    assert_eq!(c.app_report(&id).unwrap().queue, "root.b");
    assert_eq!(
        c.scheduler().queue_name(weft_types::AppId(id.seq)),
        Some("root.b")
    );
    // A parent queue is not a target; nothing changes.
    let e = c.move_app(Time(2), id, "root", None).unwrap_err();
    assert!(
        matches!(e, RmError::MoveRefused(_) | RmError::Scheduler(_)),
        "{e}"
    );
    assert!(e.to_string().contains(&id.to_string()), "{e}");
    assert!(!e.to_string().contains("app_0"), "{e}");
    assert_eq!(c.app_report(&id).unwrap().queue, "root.b");
    assert!(drain(&mut c).is_empty());
    c.kill(Time(3), id, None).unwrap();
    assert!(matches!(
        c.move_app(Time(4), id, "a", None),
        Err(RmError::FinalState { .. })
    ));
}

#[test]
fn aggregate_allocation_counts_live_and_ended_containers_and_is_persisted() {
    let mut c = core();
    register(&mut c, 1_000, "n1:1");
    // The AM container (1024 MB, 1 vcore) is allocated at t = 1 s.
    let (app, attempt, token, am) = running_app(&mut c, 1_000, "n1:1");
    let usage = |c: &RmCore| c.app_report(&app).expect("app").aggregate;
    // The AM keeps heartbeating, so AM expiry never ends the container early.
    let am_heartbeat = |c: &mut RmCore, t: u64| {
        c.am_allocate(Time(t), attempt, &token, AllocateRequest::default())
            .expect("AM heartbeat");
    };
    am_heartbeat(&mut c, 11_000);
    c.tick(Time(11_000));
    assert_eq!(
        usage(&c),
        AggregateUsage {
            memory_mb_seconds: 10 * 1024,
            vcore_seconds: 10
        },
        "a live container counts up to the latest tick"
    );
    am_heartbeat(&mut c, 21_000);
    report(
        &mut c,
        21_000,
        "n1:1",
        vec![status(am, NmContainerState::Complete, 0)],
    );
    let ended = usage(&c);
    assert_eq!(ended.memory_mb_seconds, 20 * 1024);
    assert_eq!(ended.vcore_seconds, 20);
    c.tick(Time(60_000));
    assert_eq!(usage(&c), ended, "an ended container stops counting");
    drain(&mut c);
    c.kill(Time(61_000), app, Some("alice")).expect("kill");
    let persisted = writes(&drain(&mut c))
        .into_iter()
        .rev()
        .find_map(|w| match w {
            Write::PutApp(r) if r.app_id == app.seq => Some(r),
            _ => None,
        })
        .expect("the killed app is persisted");
    assert_eq!(persisted.memory_mb_ms, 20 * 1024 * 1000);
    assert_eq!(persisted.vcore_ms, 20 * 1000);
}

#[test]
fn completed_apps_beyond_the_limits_leave_the_store_and_then_memory_oldest_first() {
    let mut cfg = config("<allocations/>");
    cfg.max_completed_apps = 3;
    cfg.store_max_completed_apps = 2;
    let mut c = RmCore::new(cfg, TS, Time(0));
    drain(&mut c);
    let running = submit(&mut c, 1);
    let ids: Vec<ApplicationId> = (2..7).map(|t| submit(&mut c, t)).collect();
    drain(&mut c);
    let mut removed = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        c.kill(Time(10 + i as u64), *id, None).unwrap();
        removed.extend(writes(&drain(&mut c)).into_iter().filter_map(|w| match w {
            Write::RemoveApp(seq) => Some(seq),
            _ => None,
        }));
    }
    // Five completed: the store keeps the newest two, memory the newest three.
    assert_eq!(removed, vec![ids[0].seq, ids[1].seq, ids[2].seq]);
    let in_memory: Vec<u64> = c.app_reports().iter().map(|r| r.id.seq).collect();
    assert_eq!(
        in_memory,
        vec![running.seq, ids[2].seq, ids[3].seq, ids[4].seq]
    );
    let stored_ids: Vec<u64> = stored().apps.iter().map(|a| a.app.app_id).collect();
    assert_eq!(stored_ids, vec![running.seq, ids[3].seq, ids[4].seq]);
    // A restart starts from the store and applies the limits again.
    let mut cfg = config("<allocations/>");
    cfg.max_completed_apps = 1;
    let mut c = RmCore::recover(cfg, stored(), 0, Time(100)).unwrap();
    let removed: Vec<Write> = writes(&drain(&mut c))
        .into_iter()
        .filter(|w| matches!(w, Write::RemoveApp(_)))
        .collect();
    assert!(
        matches!(&removed[..], [Write::RemoveApp(seq)] if *seq == ids[3].seq),
        "{removed:?}"
    );
    let in_memory: Vec<u64> = c.app_reports().iter().map(|r| r.id.seq).collect();
    assert_eq!(in_memory, vec![running.seq, ids[4].seq]);
}

#[test]
fn oversized_submission_fields_are_refused_naming_the_field() {
    let mut c = core();
    let id = c.new_application(Time(0));
    drain(&mut c);
    let cases: Vec<(Submission, &str)> = vec![
        (
            Submission {
                name: "n".repeat(MAX_APP_NAME_BYTES + 1),
                ..submission("alice", None)
            },
            "application-name",
        ),
        (
            Submission {
                tags: (0..=MAX_APP_TAGS).map(|i| format!("t{i}")).collect(),
                ..submission("alice", None)
            },
            "application-tags",
        ),
        (
            Submission {
                tags: ["x".repeat(MAX_APP_TAG_CHARS + 1)].into_iter().collect(),
                ..submission("alice", None)
            },
            "application-tags",
        ),
        (
            Submission {
                queue: Some("q".repeat(MAX_QUEUE_NAME_BYTES + 1)),
                ..submission("alice", None)
            },
            "queue",
        ),
        (
            {
                let mut s = submission("alice", None);
                s.launch
                    .environment
                    .insert("BIG".into(), "v".repeat(MAX_ENV_BYTES));
                s
            },
            "am-container-spec.environment",
        ),
        (
            {
                let mut s = submission("alice", None);
                s.launch.commands = vec!["c".repeat(MAX_COMMAND_BYTES + 1)];
                s
            },
            "am-container-spec.commands",
        ),
    ];
    for (sub, field) in cases {
        match c.submit(Time(1), id, sub) {
            Err(RmError::InvalidRequest(m)) => {
                assert!(m.starts_with(field) && m.contains("at most"), "{m}")
            }
            other => panic!("{field}: not refused: {other:?}"),
        }
    }
    assert!(c.app_reports().is_empty());
    assert!(drain(&mut c).is_empty(), "nothing recorded");
    c.submit(Time(2), id, submission("alice", None)).unwrap();
}
