//! Preemption as the RM sees it: the scheduler's `Preempted` + `Completed { Preempted }` pair
//! turned into figures, an NM stop, the AM's -102 status and, for an AM container, a retry
//! that does not count against the attempt limit.
//!
//! `preempt` stands in for a scheduler that preempts: it frees the container in the scheduler
//! (which queues the `Completed { exit: Preempted }` decision) and hands the core the
//! `Preempted` decision that precedes it, exactly the pair the scheduler contract promises.

use weft_sched::{ContainerExit, Event};

use super::*;

/// Preempts `id` at `t` for `for_queue` through the scheduler-decision path.
fn preempt(c: &mut RmCore, t: u64, id: ContainerId, for_queue: &str) {
    let sched_id = c
        .containers
        .get(&id)
        .expect("live")
        .sched
        .expect("the scheduler holds it");
    let am = c
        .apps
        .get(&id.app)
        .expect("known")
        .current()
        .and_then(|a| a.am_container)
        == Some(id);
    c.sched
        .handle(
            Time(t),
            Event::ContainerCompleted {
                container: sched_id,
                exit: ContainerExit::Preempted,
                status: None,
            },
        )
        .expect("the scheduler frees it");
    c.on_preempted(Time(t), sched_id, am, for_queue.to_string());
    c.drain(Time(t));
}

/// An app on `h1:1` holding two task containers allocated at t=3: (app, attempt, token, AM,
/// tasks).
fn app_with_tasks(
    c: &mut RmCore,
) -> (
    ApplicationId,
    AttemptId,
    String,
    ContainerId,
    Vec<ContainerId>,
) {
    register(c, 0, "h1:1");
    let (app, attempt, token, am) = running_app(c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(2)).unwrap();
    // One container per heartbeat (Fair's assignMultiple is off).
    heartbeat(c, 3, "h1:1");
    heartbeat(c, 3, "h1:1");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    let tasks: Vec<ContainerId> = got.allocated.iter().map(|a| a.id).collect();
    assert_eq!(tasks.len(), 2);
    drain(c);
    (app, attempt, token, am, tasks)
}

#[test]
fn a_preempted_task_is_stopped_reported_minus_102_for_its_queue_and_counted() {
    let mut c = core();
    let (app, attempt, token, am, tasks) = app_with_tasks(&mut c);
    preempt(&mut c, 4_003, tasks[1], "root.b");
    let out = drain(&mut c);
    assert_eq!(
        pending_stops(&c),
        vec![tasks[1]],
        "the NM is told to stop it"
    );
    let stored_attempt = writes(&out)
        .into_iter()
        .find_map(|w| match w {
            Write::PutAttempt(r) => Some(r),
            _ => None,
        })
        .expect("the attempt's figures are written at once");
    assert_eq!(
        (
            stored_attempt.preempted_non_am_containers,
            stored_attempt.preempted_memory_mb_ms
        ),
        (1, 1024 * 4_000)
    );

    let reply = c
        .am_allocate(Time(4_004), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(
        reply.completed,
        vec![CompletedContainer {
            id: tasks[1],
            exit_status: exit::PREEMPTED,
            diagnostics: "Container preempted by scheduler for queue root.b".into(),
        }]
    );
    assert!(reply.preempt.is_empty(), "nothing else is marked");

    let r = c.app_report(&app).unwrap();
    assert_eq!(
        r.preemption,
        PreemptionReport {
            resource: Resource::new(1024, 1),
            am_containers: 0,
            non_am_containers: 1,
            // 1024 MB and 1 vcore held from t=3 to t=4_003.
            memory_mb_seconds: 4_096,
            vcore_seconds: 4,
        }
    );
    assert_eq!(r.state, AppState::Running);
    assert_eq!(
        (r.running_containers, r.allocated),
        (2, Resource::new(2048, 2)),
        "the AM and the other task still run"
    );
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
    assert!(c.preempted_for.is_empty(), "nothing is left behind");

    // The NM's own report of the stopped container changes nothing more.
    report(
        &mut c,
        4_005,
        "h1:1",
        vec![
            status(am, NmContainerState::Running, 0),
            status(tasks[0], NmContainerState::Running, 0),
            status(tasks[1], NmContainerState::Complete, 143),
        ],
    );
    let reply = c
        .am_allocate(Time(4_006), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(reply.completed.is_empty(), "{:?}", reply.completed);
    assert_eq!(c.app_report(&app).unwrap().preemption.non_am_containers, 1);
}

#[test]
fn a_preempted_am_fails_the_attempt_without_using_up_the_attempt_limit() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let id = c.new_application(Time(1));
    let mut sub = submission("alice", None);
    sub.max_attempts = 1;
    c.submit(Time(1), id, sub).unwrap();
    drain(&mut c);
    heartbeat(&mut c, 2, "h1:1");
    let first = launches(&drain(&mut c)).pop().expect("AM launched");
    let token = first.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(3), first.attempt, &token, "amhost", 1, None)
        .unwrap();

    preempt(&mut c, 5_002, first.container, "root.other");
    let out = drain(&mut c);
    assert!(stops(&out).contains(&first.container));
    let r = c.app_report(&id).unwrap();
    assert!(!r.state.is_final(), "{:?}", r.state);
    let now = r.current_attempt.expect("a current attempt");
    assert_eq!(now.id.attempt, 2, "one attempt allowed, yet a retry");
    assert_eq!(now.state, AttemptState::Scheduled, "it waits for its AM");
    assert_eq!(
        (r.preemption.am_containers, r.preemption.non_am_containers),
        (1, 0)
    );
    assert_eq!(r.preemption.memory_mb_seconds, 1024 * 5);
    let failed = &c.apps.get(&id).expect("known").attempts[0];
    assert_eq!(failed.state, AttemptState::Failed);
    assert_eq!(failed.am_exit, Some(exit::PREEMPTED));
    assert!(
        failed
            .diagnostics
            .contains("Container preempted by scheduler for queue root.other"),
        "{}",
        failed.diagnostics
    );

    // The figures live in the attempt records, so a restarted RM reports them too.
    let c = RmCore::recover(config("<allocations/>"), stored(), 999, Time(9_000)).unwrap();
    let r = c.app_report(&id).unwrap();
    assert_eq!(
        r.preemption,
        PreemptionReport {
            resource: Resource::new(1024, 1),
            am_containers: 1,
            non_am_containers: 0,
            memory_mb_seconds: 5_120,
            vcore_seconds: 5,
        }
    );
}

#[test]
fn a_task_preempted_while_the_attempt_runs_survives_a_restart() {
    let mut c = core();
    let (app, _attempt, _token, _am, tasks) = app_with_tasks(&mut c);
    preempt(&mut c, 2_003, tasks[0], "root.b");
    drain(&mut c);
    let c = RmCore::recover(config("<allocations/>"), stored(), 999, Time(9_000)).unwrap();
    let r = c.app_report(&app).unwrap();
    assert_eq!(
        (
            r.preemption.non_am_containers,
            r.preemption.memory_mb_seconds
        ),
        (1, 2_048)
    );
}

#[test]
fn without_a_marked_container_the_allocate_reply_has_no_contract() {
    let mut c = core();
    let (_app, attempt, token, _am, _tasks) = app_with_tasks(&mut c);
    let reply = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(reply.preempt.is_empty());
}

/// An RM whose Fair Scheduler preempts: queues `root.a` and `root.b`, fair-share starvation
/// at once (timeout 0, threshold 1), kills 1 s after the warning.
fn preempting_core() -> RmCore {
    let xml = r#"<allocations>
        <defaultFairSharePreemptionTimeout>0</defaultFairSharePreemptionTimeout>
        <defaultFairSharePreemptionThreshold>1</defaultFairSharePreemptionThreshold>
        <queue name="a"/><queue name="b"/>
    </allocations>"#;
    let mut cfg = config(xml);
    let properties = weft_config::SchedulerProperties {
        update_interval_ms: 0,
        preemption: true,
        wait_time_before_kill_ms: 1_000,
        ..Default::default()
    };
    let weft_sched::SchedulerConfig::Fair(fair) = &cfg.scheduler else {
        panic!("a Fair configuration");
    };
    cfg.scheduler = weft_sched::SchedulerConfig::fair(fair.allocations.clone(), properties);
    let mut c = RmCore::new(cfg, TS, Time(0));
    drain(&mut c);
    c
}

/// Submits for `user` into `queue` at `t` and launches and registers its AM on `h1:1`.
fn running_in(
    c: &mut RmCore,
    t: u64,
    queue: &str,
) -> (ApplicationId, AttemptId, String, ContainerId) {
    let app = c.new_application(Time(t));
    c.submit(Time(t), app, submission("alice", Some(queue)))
        .expect("submission accepted");
    drain(c);
    heartbeat(c, t, "h1:1");
    let l = launches(&drain(c)).pop().expect("AM launched");
    let token = l.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(t), l.attempt, &token, "amhost", 1, None)
        .expect("AM registers");
    (app, l.attempt, token, l.container)
}

#[test]
fn the_scheduler_marks_then_kills_and_the_am_learns_both() {
    let mut c = preempting_core();
    register(&mut c, 0, "h1:1");
    // A fills the 8 GB node: its AM and 7 x 1 GB.
    let (a, attempt, token, _) = running_in(&mut c, 1, "root.a");
    c.am_allocate(Time(2), attempt, &token, ask(7)).unwrap();
    for t in 3..10 {
        heartbeat(&mut c, t, "h1:1");
    }
    let tasks: Vec<ContainerId> = c
        .am_allocate(Time(10), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated
        .iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(tasks.len(), 7);
    drain(&mut c);

    // B's AM cannot fit: B is starved at the next update, and one of A's containers is
    // marked for it, to be killed 1 s later.
    let b = c.new_application(Time(100));
    c.submit(Time(100), b, submission("alice", Some("root.b")))
        .unwrap();
    drain(&mut c);
    c.tick(Time(101));
    drain(&mut c);
    let marked = c
        .am_allocate(Time(102), attempt, &token, AllocateRequest::default())
        .unwrap()
        .preempt;
    assert_eq!(marked.len(), 1, "one 1 GB container for B's 1 GB AM");
    assert!(tasks.contains(&marked[0]), "a task, not the AM: {marked:?}");
    let kill_at = c.poll_timeout().expect("a kill is timed");
    assert_eq!(kill_at, Time(1_101), "waitTimeBeforeKill after the warning");

    c.timeout(kill_at);
    drain(&mut c);
    assert_eq!(pending_stops(&c), marked, "the NM is told to stop it");
    let reply = c
        .am_allocate(Time(1_102), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(
        reply.completed,
        vec![CompletedContainer {
            id: marked[0],
            exit_status: exit::PREEMPTED,
            diagnostics: "Container preempted by scheduler for queue root.b".into(),
        }]
    );
    assert!(
        reply.preempt.is_empty(),
        "a killed container leaves the contract"
    );
    let r = c.app_report(&a).unwrap();
    assert_eq!(
        (r.preemption.non_am_containers, r.preemption.resource),
        (1, Resource::new(1024, 1))
    );
    let snap = c.scheduler_snapshot();
    let count = |name: &str| {
        snap.queues
            .iter()
            .find(|q| q.name == name)
            .map(|q| q.preempted_containers)
    };
    assert_eq!(
        (count("root"), count("root.a"), count("root.b")),
        (Some(1), Some(1), Some(0))
    );

    // The freed room goes to B's AM at the node's next heartbeat.
    heartbeat(&mut c, 1_103, "h1:1");
    let l = launches(&drain(&mut c)).pop().expect("B's AM launched");
    assert_eq!(l.attempt.app, b);
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
}
