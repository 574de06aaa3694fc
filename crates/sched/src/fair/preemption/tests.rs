//! Engine-level tests of the shared preemption layer and the targeted strategy, on the
//! preemption spec's worked example (A.10): two nodes of 4096 MB / 12 vcores, a greedy app in
//! `preemptable.child-1` holding 8 x 1 GB (containers 1-4 on n1, 5-8 on n2), a new app in
//! `preemptable.child-2` asking 4 x (2 GB, 2 vcores) at 1 s. Fair shares: 4096 MB each, so the
//! new app is fair-share starved by <4096 MB, 0> (threshold 1, timeout 0): two containers of
//! 2 GB. Each needs two 1 GB victims; n1 is tried first and its newest containers go first:
//! 4 and 3 for the first, 2 and 1 for the second (the greedy app keeps 8 - 4 = 4 GB, exactly
//! its fair share, so the guard allows all four).

use crate::lanes::Resource;
use weft_config::alloc_file::parse_allocations;
use weft_config::SchedulerProperties;
use weft_types::{AppId, ContainerId, NodeId, ResourceTypes, Time};

use crate::api::*;
use crate::Scheduler;

const GREEDY: AppId = AppId(1);
const STARVED: AppId = AppId(2);

fn scheduler(wait_before_kill_ms: i64) -> Scheduler {
    let xml = r#"<allocations>
      <queue name="preemptable">
        <fairSharePreemptionThreshold>1</fairSharePreemptionThreshold>
        <fairSharePreemptionTimeout>0</fairSharePreemptionTimeout>
        <queue name="child-1"/>
        <queue name="child-2"/>
      </queue>
    </allocations>"#;
    let (allocations, _) =
        parse_allocations(xml, &ResourceTypes::default()).expect("valid allocations");
    let properties = SchedulerProperties {
        preemption: true,
        assign_multiple: true,
        dynamic_max_assign: false,
        wait_time_before_kill_ms: wait_before_kill_ms,
        ..Default::default()
    };
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
    for n in 1..=2 {
        handle(
            &mut s,
            0,
            Event::NodeAdded {
                node: NodeId(n),
                host: format!("n{n}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(4096, 12),
            },
        );
    }
    s
}

fn handle(s: &mut Scheduler, at: u64, event: Event) {
    s.handle(Time(at), event).expect("accepted");
    assert_eq!(
        s.verify(),
        Vec::<String>::new(),
        "after an event at {at} ms"
    );
}

fn drain(s: &mut Scheduler) -> Vec<Decision> {
    std::iter::from_fn(|| s.poll_decision()).collect()
}

fn submit_and_ask(
    s: &mut Scheduler,
    at: u64,
    app: AppId,
    queue: &str,
    mb: i64,
    vcores: i64,
    n: u32,
) {
    handle(
        s,
        at,
        Event::AppSubmitted {
            app,
            user: "u".into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    );
    let ask = ContainerAsk {
        priority: 1,
        resources: Resource::new(mb, vcores),
        count: n,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: AskTag::NONE,
    };
    handle(s, at, Event::Ask { app, ask });
}

fn heartbeats(s: &mut Scheduler, at: u64) {
    for n in 1..=2 {
        handle(s, at, Event::NodeHeartbeat { node: NodeId(n) });
    }
}

/// The worked example up to the update at 1 s that warns; returns that update's decisions.
fn warned(wait_before_kill_ms: i64) -> (Scheduler, Vec<Decision>) {
    let mut s = scheduler(wait_before_kill_ms);
    submit_and_ask(&mut s, 0, GREEDY, "preemptable.child-1", 1024, 1, 8);
    handle(&mut s, 0, Event::Update);
    heartbeats(&mut s, 0);
    let allocated = drain(&mut s)
        .iter()
        .filter(|d| matches!(d, Decision::Allocated { app, .. } if *app == GREEDY))
        .count();
    assert_eq!(allocated, 8, "the greedy app fills both nodes");
    submit_and_ask(&mut s, 1_000, STARVED, "preemptable.child-2", 2048, 2, 4);
    drain(&mut s);
    handle(&mut s, 1_000, Event::Update);
    let decisions = drain(&mut s);
    (s, decisions)
}

fn warnings(decisions: &[Decision]) -> Vec<(u64, u32, Option<AppId>, Option<Time>)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::PreemptWarning {
                container,
                node,
                for_app,
                kill_at,
                ..
            } => Some((container.0, node.0, *for_app, *kill_at)),
            _ => None,
        })
        .collect()
}

/// (container, exit) of the kills and completions, in order: a kill is `Preempted`
/// followed at once by its `Completed`.
fn kills(decisions: &[Decision]) -> Vec<String> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Preempted {
                app,
                container,
                for_queue,
                am,
                ..
            } => Some(format!(
                "preempted {} of {} for {for_queue} am={am}",
                container.0, app.0
            )),
            Decision::Completed {
                container, exit, ..
            } => Some(format!("completed {} {exit:?}", container.0)),
            _ => None,
        })
        .collect()
}

fn ids(list: &[u64]) -> Vec<ContainerId> {
    list.iter().map(|c| ContainerId(*c)).collect()
}

fn queue_preempted(s: &mut Scheduler, name: &str) -> u64 {
    s.snapshot()
        .queues
        .iter()
        .find(|q| q.name == name)
        .map(|q| q.preempted_containers)
        .expect("queue listed")
}

#[test]
fn the_worked_example_warns_four_containers_and_the_kill_timer_is_exact() {
    let (mut s, decisions) = warned(2_000);
    let kill_at = Some(Time(3_000));
    let expect: Vec<_> = [4, 3, 2, 1]
        .iter()
        .map(|c| (*c, 1, Some(STARVED), kill_at))
        .collect();
    assert_eq!(warnings(&decisions), expect);
    assert_eq!(s.preemption_contract(GREEDY), ids(&[4, 3, 2, 1]));
    assert_eq!(s.preemption_contract(STARVED), vec![]);
    // The kill is the core's only timer: the driver is asked to wake it exactly then.
    assert_eq!(s.poll_timeout(), Some(Time(3_000)));

    // Not a millisecond early, whatever wakes the core.
    handle(&mut s, 2_999, Event::Timeout);
    handle(&mut s, 2_999, Event::NodeHeartbeat { node: NodeId(1) });
    let before = drain(&mut s);
    assert_eq!(kills(&before), Vec::<String>::new());
    assert!(
        !before
            .iter()
            .any(|d| matches!(d, Decision::Reserved { .. })),
        "the starved app never reserves the node earmarked for it: {before:?}"
    );
    assert_eq!(s.preemption_contract(GREEDY).len(), 4);

    handle(&mut s, 3_000, Event::Timeout);
    let killed = drain(&mut s);
    assert_eq!(
        kills(&killed).len(),
        8,
        "four kills, each with its completion"
    );
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(s.preemption_contract(GREEDY), vec![]);
    assert_eq!(s.app_usage(GREEDY), Some((Resource::new(4096, 4), 4)));
    assert_eq!(s.node_allocated(NodeId(1)), Some(Resource::ZERO));
    assert_eq!(queue_preempted(&mut s, "root.preemptable.child-1"), 4);
    assert_eq!(queue_preempted(&mut s, "root.preemptable"), 4);
    assert_eq!(queue_preempted(&mut s, "root"), 4);
    assert_eq!(queue_preempted(&mut s, "root.preemptable.child-2"), 0);

    // n1's next heartbeat hands both 2 GB containers to the starved app.
    handle(&mut s, 3_000, Event::NodeHeartbeat { node: NodeId(1) });
    let handed: Vec<AppId> = drain(&mut s)
        .iter()
        .filter_map(|d| match d {
            Decision::Allocated { app, node, .. } if *node == NodeId(1) => Some(*app),
            _ => None,
        })
        .collect();
    assert_eq!(handed, [STARVED, STARVED]);
    assert_eq!(s.app_usage(STARVED), Some((Resource::new(4096, 4), 2)));
}

#[test]
fn a_kill_event_names_each_container_then_completes_it() {
    let (mut s, _) = warned(2_000);
    handle(&mut s, 3_000, Event::Timeout);
    let got = kills(&drain(&mut s));
    assert_eq!(
        got,
        [
            "preempted 4 of 1 for root.preemptable.child-2 am=false",
            "completed 4 Preempted",
            "preempted 3 of 1 for root.preemptable.child-2 am=false",
            "completed 3 Preempted",
            "preempted 2 of 1 for root.preemptable.child-2 am=false",
            "completed 2 Preempted",
            "preempted 1 of 1 for root.preemptable.child-2 am=false",
            "completed 1 Preempted",
        ]
    );
}

#[test]
fn kills_due_at_an_update_happen_before_it_and_a_zero_wait_kills_in_the_same_update() {
    // Kills due at 3 s come before the update of 3 s, whatever event of that instant comes
    // first (spec §0.4 step 2 before step 3).
    let (mut s, _) = warned(2_000);
    handle(&mut s, 3_000, Event::Update);
    let decisions = drain(&mut s);
    assert!(
        matches!(decisions.first(), Some(Decision::Preempted { .. })),
        "{decisions:?}"
    );
    assert_eq!(kills(&decisions).len(), 8);

    // waitTimeBeforeKill = 0: warned and killed within the update, before the heartbeats.
    let (mut s, decisions) = warned(0);
    assert_eq!(warnings(&decisions).len(), 4);
    assert_eq!(kills(&decisions).len(), 8);
    let last_warning = decisions
        .iter()
        .rposition(|d| matches!(d, Decision::PreemptWarning { .. }));
    let first_kill = decisions
        .iter()
        .position(|d| matches!(d, Decision::Preempted { .. }));
    assert!(last_warning < first_kill, "{decisions:?}");
    assert!(warnings(&decisions)
        .iter()
        .all(|w| w.3 == Some(Time(1_000))));
    assert_eq!(s.poll_timeout(), None);
    heartbeats(&mut s, 1_000);
    assert_eq!(s.app_usage(STARVED), Some((Resource::new(4096, 4), 2)));
}

#[test]
fn a_container_released_during_the_warning_is_not_killed_and_the_room_still_goes_to_the_starved_app(
) {
    let (mut s, _) = warned(2_000);
    handle(
        &mut s,
        2_000,
        Event::Release {
            app: GREEDY,
            container: ContainerId(3),
        },
    );
    assert!(matches!(
        drain(&mut s).as_slice(),
        [Decision::Completed {
            exit: ContainerExit::Released,
            ..
        }]
    ));
    assert_eq!(s.preemption_contract(GREEDY), ids(&[4, 2, 1]));
    handle(&mut s, 3_000, Event::Timeout);
    let got = kills(&drain(&mut s));
    assert_eq!(got.len(), 6, "three kills: {got:?}");
    assert!(
        !got.iter()
            .any(|k| k.starts_with("preempted 3 ") || k.starts_with("completed 3 ")),
        "{got:?}"
    );
    assert_eq!(queue_preempted(&mut s, "root.preemptable.child-1"), 3);
    handle(&mut s, 3_000, Event::NodeHeartbeat { node: NodeId(1) });
    assert_eq!(s.app_usage(STARVED), Some((Resource::new(4096, 4), 2)));
}

#[test]
fn marks_and_earmarks_go_with_their_node_and_marks_with_their_app() {
    let (mut s, _) = warned(2_000);
    handle(&mut s, 1_500, Event::NodeRemoved { node: NodeId(1) });
    drain(&mut s);
    assert_eq!(s.preemption_contract(GREEDY), vec![]);
    handle(&mut s, 3_000, Event::Timeout);
    assert_eq!(kills(&drain(&mut s)), Vec::<String>::new());

    let (mut s, _) = warned(2_000);
    handle(&mut s, 1_500, Event::AppFinished { app: GREEDY });
    drain(&mut s);
    assert_eq!(s.preemption_contract(GREEDY), vec![]);
    handle(&mut s, 3_000, Event::Timeout);
    assert_eq!(kills(&drain(&mut s)), Vec::<String>::new());
}

#[test]
fn a_processed_app_is_not_rechecked_before_its_next_starvation_check() {
    // A.9: 1 s + waitTimeBeforeKill 2 s + 4 heartbeats of 1 s + 10 s = 17 s.
    let (mut s, _) = warned(2_000);
    let snap = s.snapshot();
    let app = snap.apps.iter().find(|a| a.app == STARVED).expect("listed");
    let starvation = app.starvation.as_ref().expect("fair");
    assert_eq!(starvation.next_starvation_check, Time(17_000));
    // The update at 2 s finds it still starved but does not process it again.
    handle(&mut s, 2_000, Event::Update);
    assert_eq!(warnings(&drain(&mut s)), vec![]);
    assert_eq!(s.poll_timeout(), Some(Time(3_000)));
}

#[test]
fn with_preemption_off_nothing_is_marked() {
    let mut s = scheduler(2_000);
    if let SchedulerConfig::Fair(c) = s.config().clone() {
        let mut c = c;
        c.properties.preemption = false;
        handle(&mut s, 0, Event::Reload(Box::new(SchedulerConfig::Fair(c))));
    }
    submit_and_ask(&mut s, 0, GREEDY, "preemptable.child-1", 1024, 1, 8);
    handle(&mut s, 0, Event::Update);
    heartbeats(&mut s, 0);
    submit_and_ask(&mut s, 1_000, STARVED, "preemptable.child-2", 2048, 2, 4);
    handle(&mut s, 1_000, Event::Update);
    assert_eq!(warnings(&drain(&mut s)), vec![]);
    assert_eq!(s.poll_timeout(), None);
}

mod requests_to_preempt_for {
    //! Spec A.5: which requests, at which locality level, and how many containers each.

    use super::*;
    use crate::fair::preemption::targeted::{Place, Target};
    use crate::fair::FairEngine;

    /// Nodes n1 (rack /r1), n2 (rack /r1), n3 (rack /r2); app 1 in root.default.
    fn engine() -> FairEngine {
        let (allocations, _) = parse_allocations("<allocations/>", &ResourceTypes::default())
            .expect("valid allocations");
        let config = match SchedulerConfig::fair(allocations, SchedulerProperties::default()) {
            SchedulerConfig::Fair(c) => c,
            _ => unreachable!("a Fair configuration"),
        };
        let mut e = FairEngine::new_fair(config, Default::default());
        for (n, rack) in [(1, "/r1"), (2, "/r1"), (3, "/r2")] {
            e.handle(
                Time(0),
                Event::NodeAdded {
                    node: NodeId(n),
                    host: format!("n{n}"),
                    port: 0,
                    rack: rack.into(),
                    capability: Resource::new(8192, 8),
                },
            )
            .expect("node added");
        }
        e.handle(
            Time(0),
            Event::AppSubmitted {
                app: AppId(1),
                user: "u".into(),
                queue: None,
                am_resource: None,
            },
        )
        .expect("submitted");
        e
    }

    fn ask(e: &mut FairEngine, priority: i32, mb: i64, count: u32, hosts: &[&str], racks: &[&str]) {
        let ask = ContainerAsk {
            priority,
            resources: Resource::new(mb, 1),
            count,
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            racks: racks.iter().map(|r| r.to_string()).collect(),
            relax_locality: true,
            tag: AskTag::NONE,
        };
        e.handle(Time(0), Event::Ask { app: AppId(1), ask })
            .expect("ask");
    }

    fn places(targets: &[Target]) -> Vec<(Place, u32)> {
        targets.iter().map(|t| (t.place.clone(), t.count)).collect()
    }

    #[test]
    fn a_node_request_hides_its_rack_and_any_and_the_count_is_what_fits() {
        let mut e = engine();
        // Two containers on n1 (its rack /r1 is added as Hadoop's AM client would).
        ask(&mut e, 1, 1024, 2, &["n1"], &[]);
        let got = e.targets_for(AppId(1), Resource::new(8192, 0));
        assert_eq!(places(&got), [(Place::Node(NodeId(1)), 2)]);
        // Starvation for 1.5 containers: floor(1536 / 1024) = 1.
        let got = e.targets_for(AppId(1), Resource::new(1536, 0));
        assert_eq!(places(&got), [(Place::Node(NodeId(1)), 1)]);
        // Less than one container: nothing.
        assert_eq!(e.targets_for(AppId(1), Resource::new(1023, 5)), vec![]);
    }

    #[test]
    fn a_rack_request_hides_any_and_nodes_of_another_rack_still_count() {
        let mut e = engine();
        // Rack /r2 explicitly, and host n1 (whose rack /r1 joins as a rack request): n1 counts
        // (and hides /r1), /r2 counts, ANY is hidden by both.
        ask(&mut e, 1, 1024, 3, &["n1"], &["/r2"]);
        let got = e.targets_for(AppId(1), Resource::new(8192, 0));
        assert_eq!(
            places(&got),
            [(Place::Node(NodeId(1)), 3), (Place::Rack("/r2".into()), 3)]
        );
    }

    #[test]
    fn unknown_places_are_skipped_and_keys_go_in_priority_order_until_covered() {
        let mut e = engine();
        ask(&mut e, 2, 2048, 4, &[], &[]);
        ask(&mut e, 1, 1024, 3, &["nowhere"], &[]);
        // Priority 1 first: "nowhere" matches no node, so its ANY level counts: 3 x 1024;
        // the 2048 left is one container of priority 2.
        let got = e.targets_for(AppId(1), Resource::new(5120, 0));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            (got[0].place.clone(), got[0].count, got[0].size.memory_mb()),
            (Place::Any, 3, 1024)
        );
        assert_eq!(
            (got[1].place.clone(), got[1].count, got[1].size.memory_mb()),
            (Place::Any, 1, 2048)
        );
    }
}
