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

/// A whole sliced round (`verify_slice` with `budget`, its slices back to back), and how many
/// slices it took.
fn sliced(s: &Scheduler, budget: usize) -> (Vec<String>, usize) {
    let mut cursor = crate::api::VerifyCursor::default();
    let mut drift = Vec::new();
    let mut slices = 1;
    while !s.verify_slice(&mut cursor, budget, &mut drift) {
        slices += 1;
        assert!(slices < 10_000, "the round ends");
    }
    (drift, slices)
}

/// [`busy_scheduler`] with more containers running: both apps hold several.
fn busier_scheduler() -> Scheduler {
    let mut s = busy_scheduler();
    allocations(&mut s, 8);
    s
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// App 1's running containers' table slots, in id order.
fn app_container_slots(s: &Scheduler) -> Vec<u32> {
    let a = s.apps.get(&AppId(1)).expect("app 1");
    s.container_ids(a.running, crate::objects::containers::Owner::App)
        .iter()
        .filter_map(|id| s.containers.slot_of(id))
        .collect()
}

#[test]
fn a_sliced_round_over_a_consistent_scheduler_finds_nothing() {
    let s = busier_scheduler();
    assert!(app_container_slots(&s).len() >= 3, "containers run");
    for budget in [0, 1, 3, 1000] {
        let (drift, slices) = sliced(&s, budget);
        assert_eq!(drift, Vec::<String>::new(), "budget {budget}");
        // The checks of the whole, then at least one slice of entities.
        assert!(slices >= 2, "budget {budget}: {slices} slices");
    }
    // A small budget spreads the containers over many slices.
    assert!(sliced(&s, 1).1 > sliced(&s, 1000).1);
    // Events between slices: each slice still sees a consistent state.
    let mut s = s;
    let mut cursor = crate::api::VerifyCursor::default();
    let mut drift = Vec::new();
    let mut heartbeats = 0;
    while !s.verify_slice(&mut cursor, 2, &mut drift) {
        let node = NodeId(1 + heartbeats % 2);
        heartbeats += 1;
        s.handle(Time(2), Event::NodeHeartbeat { node })
            .expect("heartbeat");
        while s.decisions.pop_front().is_some() {}
    }
    assert!(heartbeats > 2);
    assert_eq!(drift, Vec::<String>::new());
}

#[test]
fn the_sliced_round_finds_the_drift_the_one_shot_verification_finds() {
    type Corruption = fn(&mut Scheduler);
    // Drifted figures: both forms report them in the same words.
    let figures: Vec<(&str, Corruption)> = vec![
        ("cluster used", |s| s.cluster_used = Resource::new(512, 3)),
        ("root usage", |s| {
            s.queues.get_mut(ROOT).usage = Resource::new(512, 3)
        }),
        ("root runnable", |s| {
            s.queues.get_mut(ROOT).runnable_count = 7
        }),
        ("app usage", |s| {
            if let Some(a) = s.apps.get_mut(&AppId(1)) {
                a.usage = Resource::new(512, 3);
            }
        }),
        ("outstanding asks", |s| {
            if let Some(a) = s.apps.get_mut(&AppId(2)) {
                a.outstanding_asks = Resource::new(512, 3);
            }
        }),
        ("node allocated", |s| {
            if let Some(n) = s.nodes.get_mut(&NodeId(2)) {
                n.allocated = Resource::new(512, 3);
            }
        }),
        ("container size", |s| {
            let slot = app_container_slots(s)[0];
            if let Some(c) = s.containers.at_mut(slot) {
                c.size = Resource::new(512, 3);
            }
        }),
    ];
    for (what, corrupt) in figures {
        let mut s = busier_scheduler();
        corrupt(&mut s);
        let once = sorted(s.verify());
        assert!(!once.is_empty(), "{what}: the one-shot form finds it");
        for budget in [1, 1000] {
            assert_eq!(
                sorted(sliced(&s, budget).0),
                once,
                "{what}, budget {budget}"
            );
        }
    }
    // Damaged lists: the two forms look at them differently (a table count and the
    // neighbours' links, or a walk) and word it differently, but both find it.
    let lists: Vec<(&str, Corruption)> = vec![
        ("app list miscounted", |s| {
            if let Some(a) = s.apps.get_mut(&AppId(1)) {
                a.running.miscount(1);
            }
        }),
        ("node list miscounted", |s| {
            if let Some(n) = s.nodes.get_mut(&NodeId(1)) {
                n.running.miscount(1);
            }
        }),
        ("container names another app", |s| {
            let slot = app_container_slots(s)[1];
            let other = s.apps.slot_of(&AppId(2)).expect("app 2");
            if let Some(c) = s.containers.at_mut(slot) {
                c.app_slot = other;
            }
        }),
        ("broken link", |s| {
            // The oldest container is the list's last: cut it off from the one before it.
            let slot = app_container_slots(s)[0];
            if let Some(c) = s.containers.at_mut(slot) {
                c.by_app = Default::default();
            }
        }),
    ];
    for (what, corrupt) in lists {
        let mut s = busier_scheduler();
        corrupt(&mut s);
        let once = s.verify();
        assert!(!once.is_empty(), "{what}: the one-shot form finds it");
        for budget in [1, 1000] {
            let (found, _) = sliced(&s, budget);
            assert!(!found.is_empty(), "{what}, budget {budget}: {once:?}");
        }
    }
}
