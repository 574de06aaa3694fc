//! Per-application blacklists (spec §6.3, Hadoop's `updateBlacklist`): the walk gives an app
//! nothing on a listed host or rack, in both walks and under both schedulers.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{
    ContainerAsk, ContainerExit, Decision, Event, FifoConfig, SchedError, Scheduler,
    SchedulerConfig, WalkMode,
};
use weft_types::{AppId, ContainerId, NodeId, Resource, ResourceTypes, Time};

const QUEUES: &str = r#"<allocations><queue name="a"/><queue name="b"/></allocations>"#;

fn fair(mode: WalkMode) -> Scheduler {
    let (allocations, _) =
        parse_allocations(QUEUES, &ResourceTypes::default()).expect("valid allocations");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, Default::default()),
        Default::default(),
    );
    s.set_walk_mode(mode);
    s
}

fn fifo(mode: WalkMode) -> Scheduler {
    let mut s = Scheduler::new(
        SchedulerConfig::Fifo(FifoConfig::default()),
        Default::default(),
    );
    s.set_walk_mode(mode);
    s
}

fn handle(s: &mut Scheduler, event: Event) -> Vec<Decision> {
    s.handle(Time(0), event).expect("event accepted");
    std::iter::from_fn(|| s.poll_decision()).collect()
}

/// Nodes n1 and n2 on rack /r1, n3 on /r2; 8 GiB and 8 vcores each.
fn add_nodes(s: &mut Scheduler) {
    for (id, rack) in [(1, "/r1"), (2, "/r1"), (3, "/r2")] {
        handle(
            s,
            Event::NodeAdded {
                node: NodeId(id),
                host: format!("n{id}"),
                port: 0,
                rack: rack.into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
}

fn submit(s: &mut Scheduler, app: u64, queue: &str, am: Option<Resource>) {
    handle(
        s,
        Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: Some(queue.into()),
            am_resource: am,
        },
    );
}

fn ask(s: &mut Scheduler, app: u64, mb: i64, count: u32) {
    let ask = ContainerAsk {
        priority: 1,
        resources: Resource::new(mb, 1),
        count,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: weft_sched::AskTag::NONE,
    };
    handle(
        s,
        Event::Ask {
            app: AppId(app),
            ask,
        },
    );
}

fn blacklist(s: &mut Scheduler, app: u64, add: &[&str], remove: &[&str]) {
    handle(
        s,
        Event::BlacklistUpdated {
            app: AppId(app),
            additions: add.iter().map(|n| n.to_string()).collect(),
            removals: remove.iter().map(|n| n.to_string()).collect(),
        },
    );
}

/// (app, node, am) of every allocation a heartbeat of `node` makes.
fn heartbeat(s: &mut Scheduler, node: u32) -> Vec<(u64, u32, bool)> {
    handle(s, Event::NodeHeartbeat { node: NodeId(node) })
        .into_iter()
        .filter_map(|d| match d {
            Decision::Allocated { app, node, am, .. } => Some((app.0, node.0, am)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_listed_host_or_rack_gets_the_app_nothing_and_serves_the_next_app() {
    for make in [fair, fifo] {
        for mode in [WalkMode::Fast, WalkMode::Reference] {
            let mut s = make(mode);
            add_nodes(&mut s);
            submit(&mut s, 1, "a", None);
            submit(&mut s, 2, "a", None);
            ask(&mut s, 1, 1024, 2);
            ask(&mut s, 2, 1024, 2);
            handle(&mut s, Event::Update);
            // App 1 lists host n1 and rack /r2 (n3): only n2 is left to it.
            blacklist(&mut s, 1, &["n1", "/r2"], &[]);
            let on_n1 = heartbeat(&mut s, 1);
            assert!(
                !on_n1.is_empty() && on_n1.iter().all(|(app, _, _)| *app == 2),
                "{mode:?}: n1 serves only app 2, got {on_n1:?}"
            );
            let on_n3 = heartbeat(&mut s, 3);
            assert!(
                on_n3.iter().all(|(app, _, _)| *app == 2),
                "{mode:?}: n3 (rack /r2) serves only app 2, got {on_n3:?}"
            );
            let on_n2 = heartbeat(&mut s, 2);
            assert!(
                on_n2.iter().any(|(app, _, _)| *app == 1),
                "{mode:?}: n2 is not listed, app 1 gets a container there: {on_n2:?}"
            );
            assert!(s.verify().is_empty(), "{:?}", s.verify());
        }
    }
}

#[test]
fn a_removal_makes_the_place_usable_again() {
    let mut s = fair(WalkMode::Fast);
    add_nodes(&mut s);
    submit(&mut s, 1, "a", None);
    ask(&mut s, 1, 1024, 1);
    handle(&mut s, Event::Update);
    blacklist(&mut s, 1, &["n1"], &[]);
    assert_eq!(heartbeat(&mut s, 1), vec![], "n1 is listed");
    blacklist(&mut s, 1, &[], &["n1"]);
    assert_eq!(
        heartbeat(&mut s, 1),
        vec![(1, 1, false)],
        "n1 is no longer listed"
    );
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn while_the_am_is_not_allocated_updates_go_to_the_system_list_which_alone_applies() {
    let mut s = fair(WalkMode::Fast);
    add_nodes(&mut s);
    submit(&mut s, 1, "a", Some(Resource::new(1024, 1)));
    handle(&mut s, Event::Update);
    // Waiting for the AM: the update goes to the system's (AM) list.
    blacklist(&mut s, 1, &["n1"], &[]);
    assert_eq!(heartbeat(&mut s, 1), vec![], "the AM avoids n1");
    assert_eq!(
        heartbeat(&mut s, 2),
        vec![(1, 2, true)],
        "the AM goes to n2"
    );
    // The AM runs: the system list no longer applies, the app's own list (empty) does.
    ask(&mut s, 1, 1024, 1);
    handle(&mut s, Event::Update);
    assert_eq!(
        heartbeat(&mut s, 1),
        vec![(1, 1, false)],
        "n1 was listed for the AM only"
    );
    // And from now on updates go to the app's own list.
    blacklist(&mut s, 1, &["n3"], &[]);
    ask(&mut s, 1, 1024, 1);
    handle(&mut s, Event::Update);
    assert_eq!(heartbeat(&mut s, 3), vec![], "n3 is on the app's own list");
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn a_reservation_on_a_node_listed_later_is_dropped_not_served() {
    let mut s = fair(WalkMode::Fast);
    handle(
        &mut s,
        Event::NodeAdded {
            node: NodeId(1),
            host: "n".into(),
            port: 0,
            rack: "/r".into(),
            capability: Resource::new(8192, 8),
        },
    );
    submit(&mut s, 1, "a", None);
    ask(&mut s, 1, 1024, 8);
    handle(&mut s, Event::Update);
    let mut containers: Vec<ContainerId> = Vec::new();
    for _ in 0..8 {
        for d in handle(&mut s, Event::NodeHeartbeat { node: NodeId(1) }) {
            if let Decision::Allocated { container, .. } = d {
                containers.push(container);
            }
        }
    }
    assert_eq!(containers.len(), 8, "app 1 fills the node");
    // App 2 in queue b is starved once the update gives b a fair share: its 4096 MB ask,
    // at the reservation threshold or above, reserves the full node.
    submit(&mut s, 2, "b", None);
    ask(&mut s, 2, 4096, 1);
    handle(&mut s, Event::Update);
    let reserved = handle(&mut s, Event::NodeHeartbeat { node: NodeId(1) });
    assert!(
        reserved
            .iter()
            .any(|d| matches!(d, Decision::Reserved { app: AppId(2), .. })),
        "app 2 reserves the node: {reserved:?}"
    );
    assert_summary_matches_snapshot(&mut s, 1, 4096);
    blacklist(&mut s, 2, &["n"], &[]);
    for c in containers.drain(..4) {
        handle(
            &mut s,
            Event::ContainerCompleted {
                container: c,
                exit: ContainerExit::Success,
                status: None,
            },
        );
    }
    assert_eq!(
        heartbeat(&mut s, 1),
        vec![],
        "the listed node serves nothing to app 2"
    );
    let snapshot = s.snapshot();
    assert_eq!(
        snapshot.nodes[0].reserved, None,
        "the reservation of a listed node is dropped"
    );
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn listing_every_place_or_an_unknown_app_is_refused_and_changes_nothing() {
    let mut s = fair(WalkMode::Fast);
    add_nodes(&mut s);
    submit(&mut s, 1, "a", None);
    ask(&mut s, 1, 1024, 1);
    handle(&mut s, Event::Update);
    let refused = s.handle(
        Time(0),
        Event::BlacklistUpdated {
            app: AppId(1),
            additions: vec!["n1".into(), "*".into()],
            removals: vec![],
        },
    );
    assert!(
        matches!(&refused, Err(SchedError::InvalidBlacklist { app: AppId(1), reason }) if reason.contains('*')),
        "{refused:?}"
    );
    assert_eq!(
        heartbeat(&mut s, 1),
        vec![(1, 1, false)],
        "n1 was not listed by the refused update"
    );
    let unknown = s.handle(
        Time(0),
        Event::BlacklistUpdated {
            app: AppId(9),
            additions: vec!["n1".into()],
            removals: vec![],
        },
    );
    assert_eq!(unknown, Err(SchedError::UnknownApp(AppId(9))));
}

/// The cheap figures metrics read (`pending_summary`, `queue_snapshot`) are the full
/// snapshot's: the pending sums over its apps, the reservations over its nodes, and its
/// queues and totals.
fn assert_summary_matches_snapshot(s: &mut Scheduler, reserved_nodes: u64, reserved_mb: i64) {
    let full = s.snapshot();
    let summary = s.pending_summary();
    assert_eq!(summary.pending, full.cluster_pending);
    assert_eq!(
        summary.pending_containers,
        full.apps.iter().map(|a| a.pending_containers).sum::<u64>()
    );
    assert!(summary.pending_containers > 0, "app 2's ask is outstanding");
    assert_eq!(summary.reserved_nodes, reserved_nodes);
    assert_eq!(summary.reserved.memory_mb(), reserved_mb);
    let queues_only = s.queue_snapshot();
    assert!(queues_only.apps.is_empty() && queues_only.nodes.is_empty());
    assert_eq!(queues_only.queues, full.queues);
    assert_eq!(queues_only.cluster_pending, full.cluster_pending);
    assert_eq!(queues_only.cluster_used, full.cluster_used);
    assert_eq!(queues_only.cluster_capacity, full.cluster_capacity);
}
