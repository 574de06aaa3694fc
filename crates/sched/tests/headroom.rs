//! Per-application headroom (Hadoop's `FSAppAttempt.getHeadroom` and the policies'
//! `getHeadroom`; FifoScheduler's cluster-minus-used), with figures derived by hand.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{ContainerAsk, Event, FifoConfig, Scheduler, SchedulerConfig};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

/// Root under drf (so each resource's fair share is computed); `a` fair, `b` drf, `c` fair with
/// a max share of 2048 MB / 2 vcores.
const QUEUES: &str = r#"<allocations>
  <queue name="root">
    <schedulingPolicy>drf</schedulingPolicy>
    <queue name="a"><schedulingPolicy>fair</schedulingPolicy></queue>
    <queue name="b"><schedulingPolicy>drf</schedulingPolicy></queue>
    <queue name="c"><maxResources>2048 mb, 2 vcores</maxResources></queue>
  </queue>
</allocations>"#;

fn handle(s: &mut Scheduler, event: Event) {
    s.handle(Time(0), event).expect("event accepted");
    while s.poll_decision().is_some() {}
}

/// Two nodes of 8192 MB / 8 vcores on rack /r: a cluster of 16384 MB / 16 vcores.
fn add_nodes(s: &mut Scheduler) {
    for id in 1..=2 {
        handle(
            s,
            Event::NodeAdded {
                node: NodeId(id),
                host: format!("n{id}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
}

fn submit(s: &mut Scheduler, app: u64, queue: &str) {
    handle(
        s,
        Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    );
}

fn ask(s: &mut Scheduler, app: u64, count: u32) {
    let ask = ContainerAsk {
        priority: 1,
        resources: Resource::new(1024, 1),
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

/// A1 in `a` runs 3 x 1024 MB / 1 vcore on n1 and asks 3 more; B1 in `b` asks 4; C1 in `c`
/// asks 4. The update shares the cluster among the three active queues per resource (root is
/// drf), weight 1 each, a share capped by the queue's max share and not by its demand: c gets
/// its max 2048 MB / 2 vcores, a and b split the rest, 7168 MB / 7 vcores each.
fn busy_fair() -> Scheduler {
    let (allocations, _) =
        parse_allocations(QUEUES, &ResourceTypes::default()).expect("valid allocations");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, Default::default()),
        Default::default(),
    );
    add_nodes(&mut s);
    submit(&mut s, 1, "a");
    submit(&mut s, 2, "b");
    submit(&mut s, 3, "c");
    ask(&mut s, 1, 3);
    handle(&mut s, Event::Update);
    for _ in 0..3 {
        handle(&mut s, Event::NodeHeartbeat { node: NodeId(1) });
    }
    assert_eq!(
        s.cluster_used(),
        Resource::new(3072, 3),
        "A1 runs 3 containers"
    );
    ask(&mut s, 1, 3);
    ask(&mut s, 2, 4);
    ask(&mut s, 3, 4);
    handle(&mut s, Event::Update);
    s
}

#[test]
fn fair_headroom_is_capped_by_the_fair_share_and_the_max_share_per_policy() {
    let s = busy_fair();
    // Cluster free 16384 - 3072 = 13312 MB, 16 - 3 = 13 vcores; no max share binds a or b.
    // A1 (fair): memory min(13312, fair 7168 - usage 3072) = 4096; vcores 13 (not capped).
    assert_eq!(s.headroom(AppId(1)), Some(Resource::new(4096, 13)));
    // B1 (drf): memory min(13312, 7168 - 0) = 7168; vcores min(13, 7 - 0) = 7.
    assert_eq!(s.headroom(AppId(2)), Some(Resource::new(7168, 7)));
    // C1 (fair, max 2048/2): max available min(13312/13, 2048/2) = 2048/2; memory
    // min(2048, 2048 - 0) = 2048; vcores 2 (the max share, not the cluster's 13).
    assert_eq!(s.headroom(AppId(3)), Some(Resource::new(2048, 2)));
    assert_eq!(s.headroom(AppId(9)), None, "unknown app");
}

#[test]
fn fair_headroom_leaves_out_the_free_resources_of_blacklisted_nodes() {
    let mut s = busy_fair();
    // A1 lists n2: its 8192/8 free are not available to A1: 13312 - 8192 = 5120 MB, 5 vcores.
    // Memory min(5120, 7168 - 3072) = 4096; vcores 5.
    handle(
        &mut s,
        Event::BlacklistUpdated {
            app: AppId(1),
            additions: vec!["n2".into()],
            removals: vec![],
        },
    );
    assert_eq!(s.headroom(AppId(1)), Some(Resource::new(4096, 5)));
    // The rack /r holds both nodes: all 13312/13 free are listed, nothing is left.
    handle(
        &mut s,
        Event::BlacklistUpdated {
            app: AppId(1),
            additions: vec!["/r".into()],
            removals: vec![],
        },
    );
    assert_eq!(s.headroom(AppId(1)), Some(Resource::new(0, 0)));
    // Other apps' headroom is untouched.
    assert_eq!(s.headroom(AppId(2)), Some(Resource::new(7168, 7)));
}

#[test]
fn fifo_headroom_is_the_cluster_less_what_every_app_uses() {
    let mut s = Scheduler::new(
        SchedulerConfig::Fifo(FifoConfig::default()),
        Default::default(),
    );
    add_nodes(&mut s);
    submit(&mut s, 1, "default");
    submit(&mut s, 2, "default");
    ask(&mut s, 1, 3);
    handle(&mut s, Event::Update);
    handle(&mut s, Event::NodeHeartbeat { node: NodeId(1) });
    assert_eq!(
        s.cluster_used(),
        Resource::new(3072, 3),
        "FIFO serves the key in a batch"
    );
    // 16384 - 3072 = 13312 MB, 16 - 3 = 13 vcores, for both apps (a blacklist changes nothing).
    handle(
        &mut s,
        Event::BlacklistUpdated {
            app: AppId(2),
            additions: vec!["n2".into()],
            removals: vec![],
        },
    );
    assert_eq!(s.headroom(AppId(1)), Some(Resource::new(13312, 13)));
    assert_eq!(s.headroom(AppId(2)), Some(Resource::new(13312, 13)));
}
