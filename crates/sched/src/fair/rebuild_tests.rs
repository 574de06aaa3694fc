//! `rebuild_derived` (the ledger's repair) on a Fair engine: every drifted figure is reported
//! by `verify`, then repaired, and decisions go on as without drift.

use crate::lanes::Resource;
use weft_types::{AppId, NodeId, Time};

use crate::api::{AskTag, ContainerAsk, Decision, Event};
use crate::fair::FairEngine as Scheduler;
use crate::queues::ROOT;

fn busy_scheduler() -> Scheduler {
    let mut s = Scheduler::new_fair(Default::default(), Default::default());
    let send = |s: &mut Scheduler, e: Event| s.handle(Time(0), e).expect("accepted");
    for n in 1..=2 {
        send(
            &mut s,
            Event::NodeAdded {
                node: NodeId(n),
                host: format!("n{n}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
    for app in 1..=2 {
        send(
            &mut s,
            Event::AppSubmitted {
                app: AppId(app),
                user: format!("u{app}"),
                queue: None,
                am_resource: None,
            },
        );
        send(
            &mut s,
            Event::Ask {
                app: AppId(app),
                ask: ContainerAsk {
                    priority: 1,
                    resources: Resource::new(1024, 1),
                    count: 6,
                    hosts: vec![],
                    racks: vec![],
                    relax_locality: true,
                    tag: AskTag::NONE,
                },
            },
        );
    }
    send(&mut s, Event::Update);
    for n in [1, 2, 1] {
        send(&mut s, Event::NodeHeartbeat { node: NodeId(n) });
    }
    while s.decisions.pop_front().is_some() {}
    s
}

fn allocations(s: &mut Scheduler, heartbeats: u32) -> Vec<(AppId, NodeId)> {
    for i in 0..heartbeats {
        let node = NodeId(1 + i % 2);
        s.handle(Time(1), Event::NodeHeartbeat { node })
            .expect("heartbeat");
    }
    std::iter::from_fn(|| s.decisions.pop_front())
        .filter_map(|d| match d {
            Decision::Allocated { app, node, .. } => Some((app, node)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_rebuild_repairs_every_drifted_figure_and_decisions_go_on_as_without_drift() {
    let mut healthy = busy_scheduler();
    let mut drifted = busy_scheduler();
    assert_eq!(drifted.verify(), Vec::<String>::new());
    let odd = Resource::new(512, 3);
    drifted.cluster_used = odd;
    drifted.queues.get_mut(ROOT).usage = odd;
    drifted.queues.get_mut(ROOT).runnable_count = 7;
    if let Some(a) = drifted.apps.get_mut(&AppId(1)) {
        a.usage = odd;
        a.outstanding_asks = odd;
    }
    if let Some(n) = drifted.nodes.get_mut(&NodeId(2)) {
        n.allocated = odd;
    }
    let found = drifted.verify();
    for what in [
        "cluster used",
        "queue root usage",
        "queue root runnable count",
        "app app_0001 usage",
        "app app_0001 outstanding asks",
        "node n2 allocated",
    ] {
        assert!(
            found.iter().any(|d| d.contains(what)),
            "{what} not reported: {found:?}"
        );
    }
    drifted.rebuild_derived();
    assert_eq!(drifted.verify(), Vec::<String>::new());
    assert_eq!(allocations(&mut drifted, 6), allocations(&mut healthy, 6));
    assert_eq!(drifted.verify(), Vec::<String>::new());
}

#[test]
fn a_rebuild_of_a_consistent_scheduler_changes_no_decision() {
    let mut a = busy_scheduler();
    let mut b = busy_scheduler();
    b.rebuild_derived();
    assert_eq!(b.verify(), Vec::<String>::new());
    let got = allocations(&mut b, 8);
    assert!(!got.is_empty(), "the asks left are served");
    assert_eq!(got, allocations(&mut a, 8));
}
