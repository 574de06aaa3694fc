//! Gang asks (time-aware-demands spec §3.3, "Gang delivery at run time"): unit checks of the
//! public contract and a property over random runs: no gang's members are ever delivered in
//! part, at most one gang holds, and held members never reach the driver.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use weft_sched::{
    AskTag, ContainerAsk, ContainerExit, Decision, Event, GangAsk, GangChange, GangStyle,
    SchedError, Scheduler, SchedulerConfig,
};
use weft_types::{AppId, ContainerId, Duration, NodeId, Resource, Time};

/// Gang tags start here; ordinary asks carry [`AskTag::NONE`].
const GANG_TAG_BASE: u64 = 1_000;

fn fair() -> Scheduler {
    Scheduler::new(SchedulerConfig::default(), Default::default())
}

fn add_node(s: &mut Scheduler, id: u32, mb: i64) {
    s.handle(
        Time(0),
        Event::NodeAdded {
            node: NodeId(id),
            host: format!("n{id}"),
            port: 0,
            rack: "/default-rack".into(),
            capability: Resource::new(mb, 8),
        },
    )
    .expect("node added");
}

fn submit(s: &mut Scheduler, app: u64) {
    s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: None,
            am_resource: None,
        },
    )
    .expect("submitted");
}

fn gang(id: u64, mb: i64, size: u32, timeout_ms: Option<u64>, style: GangStyle) -> GangAsk {
    GangAsk {
        gang: id,
        priority: 1,
        resources: Resource::new(mb, 1),
        size,
        hold_timeout: timeout_ms.map(Duration::from_millis),
        style,
        tag: AskTag(GANG_TAG_BASE + id),
    }
}

fn ordinary(mb: i64, count: u32) -> ContainerAsk {
    ContainerAsk {
        priority: 1,
        resources: Resource::new(mb, 1),
        count,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: AskTag::NONE,
    }
}

fn drain(s: &mut Scheduler) -> Vec<Decision> {
    std::iter::from_fn(|| s.poll_decision()).collect()
}

fn changes(ds: &[Decision]) -> Vec<(u64, GangChange)> {
    ds.iter()
        .filter_map(|d| match d {
            Decision::Gang { gang, change, .. } => Some((*gang, change.clone())),
            _ => None,
        })
        .collect()
}

fn allocated(ds: &[Decision]) -> usize {
    ds.iter()
        .filter(|d| matches!(d, Decision::Allocated { .. }))
        .count()
}

#[test]
fn an_unpackable_gang_is_refused_with_the_specs_words() {
    let mut s = fair();
    for n in 1..=4 {
        add_node(&mut s, n, 8192);
    }
    submit(&mut s, 1);
    drain(&mut s);
    s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(1),
            ask: gang(1, 5120, 5, None, GangStyle::Soft),
        },
    )
    .expect("a refusal is a decision, not an error");
    assert_eq!(
        changes(&drain(&mut s)),
        vec![(
            1,
            GangChange::Refused {
                reason: "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4 members".into()
            }
        )]
    );
    // Nothing waits: a heartbeat allocates nothing.
    s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    assert_eq!(allocated(&drain(&mut s)), 0);
}

#[test]
fn with_the_packability_check_off_an_unpackable_gang_is_admitted_and_waits_for_room() {
    let mut config = SchedulerConfig::default();
    config.properties_mut().reservation_packability_check = false;
    let mut s = Scheduler::new(config, Default::default());
    for n in 1..=4 {
        add_node(&mut s, n, 8192);
    }
    submit(&mut s, 1);
    drain(&mut s);
    s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(1),
            ask: gang(1, 5120, 5, None, GangStyle::Hard),
        },
    )
    .expect("admitted");
    assert_eq!(changes(&drain(&mut s)), vec![(1, GangChange::Admitted)]);
    // One member per node is all the four nodes hold: the head gang holds them, unseen.
    for n in 1..=4 {
        s.handle(Time(1000), Event::NodeHeartbeat { node: NodeId(n) })
            .expect("heartbeat");
    }
    let ds = drain(&mut s);
    assert_eq!(allocated(&ds), 0);
    assert!(changes(&ds).contains(&(1, GangChange::Holding { held: 4, size: 5 })));
    // Room appears: a fifth node, and the gang is delivered whole.
    add_node(&mut s, 5, 8192);
    s.handle(Time(2000), Event::NodeHeartbeat { node: NodeId(5) })
        .expect("heartbeat");
    let ds = drain(&mut s);
    assert_eq!(allocated(&ds), 5);
    assert!(changes(&ds).contains(&(1, GangChange::Delivered { size: 5 })));
}

#[test]
fn bad_gang_asks_are_refused_and_change_nothing() {
    let mut s = fair();
    add_node(&mut s, 1, 8192);
    submit(&mut s, 1);
    let zero = s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(1),
            ask: gang(1, 1024, 0, None, GangStyle::Soft),
        },
    );
    assert!(
        matches!(zero, Err(SchedError::InvalidAsk { .. })),
        "{zero:?}"
    );
    let unknown = s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(9),
            ask: gang(1, 1024, 1, None, GangStyle::Soft),
        },
    );
    assert_eq!(unknown, Err(SchedError::UnknownApp(AppId(9))));
    s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(1),
            ask: gang(1, 1024, 2, None, GangStyle::Soft),
        },
    )
    .expect("first");
    let again = s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(1),
            ask: gang(1, 1024, 2, None, GangStyle::Soft),
        },
    );
    assert!(matches!(again, Err(SchedError::Duplicate(_))), "{again:?}");
}

#[test]
fn a_cancelled_hold_is_released_without_a_completion() {
    let mut s = fair();
    add_node(&mut s, 1, 4096);
    submit(&mut s, 1);
    submit(&mut s, 2);
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ordinary(2048, 1),
        },
    )
    .expect("ask");
    s.handle(Time(0), Event::Update).expect("update");
    s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(2),
            ask: gang(5, 2048, 2, Some(60_000), GangStyle::Hard),
        },
    )
    .expect("gang");
    s.handle(Time(1000), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    let ds = drain(&mut s);
    assert!(
        changes(&ds).contains(&(5, GangChange::Holding { held: 1, size: 2 })),
        "{ds:?}"
    );
    assert_eq!(s.gang_holds().len(), 1);
    assert_eq!(s.poll_timeout(), Some(Time(61_000)));
    assert_eq!(s.cluster_used(), Resource::new(4096, 2));
    s.handle(
        Time(2000),
        Event::GangCancelled {
            app: AppId(2),
            gang: 5,
        },
    )
    .expect("cancel");
    assert!(
        drain(&mut s).is_empty(),
        "the driver never saw the held member"
    );
    assert!(s.gang_holds().is_empty());
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(s.cluster_used(), Resource::new(2048, 1));
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

/// `GangExpired` ends a gang's wait at once, as its hold's timeout would: a soft holder hands
/// its held member over and asks its other one as an ordinary container; a hard one releases
/// its held member unseen; a waiting gang holding nothing falls back whole; an unknown gang is
/// no error and no decision.
#[test]
fn an_expired_gang_falls_back_or_fails_at_once() {
    for style in [GangStyle::Soft, GangStyle::Hard] {
        let mut s = fair();
        add_node(&mut s, 1, 4096);
        submit(&mut s, 1);
        submit(&mut s, 2);
        s.handle(
            Time(0),
            Event::Ask {
                app: AppId(1),
                ask: ordinary(2048, 1),
            },
        )
        .expect("ask");
        s.handle(Time(0), Event::Update).expect("update");
        s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        for (id, timeout) in [(5, Some(60_000)), (6, None)] {
            s.handle(
                Time(0),
                Event::GangAsk {
                    app: AppId(2),
                    ask: gang(id, 2048, 2, timeout, style),
                },
            )
            .expect("gang");
        }
        s.handle(Time(1000), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        drain(&mut s);
        assert_eq!(s.cluster_used(), Resource::new(4096, 2));
        s.handle(
            Time(2000),
            Event::GangExpired {
                app: AppId(2),
                gang: 5,
            },
        )
        .expect("expired");
        let ds = drain(&mut s);
        match style {
            GangStyle::Soft => {
                assert_eq!(
                    changes(&ds),
                    vec![(
                        5,
                        GangChange::FellBack {
                            handed: 1,
                            asked: 1
                        }
                    )]
                );
                assert_eq!(allocated(&ds), 1, "the held member is handed over");
                assert_eq!(s.cluster_used(), Resource::new(4096, 2));
            }
            GangStyle::Hard => {
                assert_eq!(changes(&ds), vec![(5, GangChange::Failed { released: 1 })]);
                assert_eq!(allocated(&ds), 0);
                assert_eq!(s.cluster_used(), Resource::new(2048, 1));
            }
        }
        s.handle(
            Time(2000),
            Event::GangExpired {
                app: AppId(2),
                gang: 6,
            },
        )
        .expect("expired");
        let expected = match style {
            GangStyle::Soft => GangChange::FellBack {
                handed: 0,
                asked: 2,
            },
            GangStyle::Hard => GangChange::Failed { released: 0 },
        };
        assert_eq!(changes(&drain(&mut s)), vec![(6, expected)]);
        assert!(s.gang_holds().is_empty());
        s.handle(
            Time(2000),
            Event::GangExpired {
                app: AppId(2),
                gang: 5,
            },
        )
        .expect("an unknown gang is no error");
        assert!(drain(&mut s).is_empty());
        assert!(s.verify().is_empty(), "{:?}", s.verify());
    }
}

#[test]
fn a_lost_node_takes_held_members_silently_and_the_gang_waits_on() {
    let mut s = fair();
    add_node(&mut s, 1, 4096);
    add_node(&mut s, 2, 4096);
    submit(&mut s, 1);
    submit(&mut s, 2);
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ordinary(4096, 1),
        },
    )
    .expect("ask");
    s.handle(Time(0), Event::Update).expect("update");
    s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    s.handle(
        Time(0),
        Event::GangAsk {
            app: AppId(2),
            ask: gang(1, 2048, 3, None, GangStyle::Soft),
        },
    )
    .expect("gang");
    s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(2) })
        .expect("heartbeat");
    assert!(changes(&drain(&mut s)).contains(&(1, GangChange::Holding { held: 2, size: 3 })));
    s.handle(Time(1), Event::NodeRemoved { node: NodeId(2) })
        .expect("removed");
    assert!(
        drain(&mut s).is_empty(),
        "no completion of a member the driver never saw"
    );
    assert!(s.gang_holds().is_empty());
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

/// One step of a random run.
#[derive(Clone, Debug)]
enum Op {
    Gang {
        app: usize,
        mb: i64,
        size: u32,
        timeout_s: Option<u64>,
        hard: bool,
    },
    Ask {
        app: usize,
        mb: i64,
        count: u32,
    },
    Heartbeat(usize),
    Complete(usize),
    Advance(u64),
    Cancel {
        app: usize,
        gang: u64,
    },
    Expire {
        app: usize,
        gang: u64,
    },
    Finish(usize),
    Update,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0..4usize, prop::sample::select(vec![1024i64, 2048, 3072]), 1..7u32,
              prop::option::of(1..40u64), any::<bool>())
            .prop_map(|(app, mb, size, timeout_s, hard)| Op::Gang { app, mb, size, timeout_s, hard }),
        2 => (0..4usize, prop::sample::select(vec![1024i64, 2048]), 1..5u32)
            .prop_map(|(app, mb, count)| Op::Ask { app, mb, count }),
        6 => (0..4usize).prop_map(Op::Heartbeat),
        3 => (0..64usize).prop_map(Op::Complete),
        2 => (1..25u64).prop_map(Op::Advance),
        1 => (0..4usize, 0..12u64).prop_map(|(app, gang)| Op::Cancel { app, gang }),
        1 => (0..4usize, 0..12u64).prop_map(|(app, gang)| Op::Expire { app, gang }),
        1 => (0..4usize).prop_map(Op::Finish),
        2 => Just(Op::Update),
    ]
}

/// What the driver knows, and the property's checks on each event's decisions.
#[derive(Default)]
struct Watch {
    /// Containers the driver was handed and that have not ended.
    live: BTreeSet<ContainerId>,
    /// Gang tags whose hold fell back: later allocations with the tag are ordinary.
    fell_back: BTreeSet<u64>,
    /// Gangs delivered or fallen back.
    done: BTreeSet<u64>,
}

impl Watch {
    fn check(&mut self, ds: &[Decision]) -> Result<(), String> {
        let mut i = 0;
        while i < ds.len() {
            match &ds[i] {
                Decision::Gang {
                    gang,
                    change:
                        GangChange::Delivered { size: n } | GangChange::FellBack { handed: n, .. },
                    ..
                } => {
                    let tag = AskTag(GANG_TAG_BASE + gang);
                    let block = &ds[i + 1..(i + 1 + *n as usize).min(ds.len())];
                    if block.len() != *n as usize
                        || !block
                            .iter()
                            .all(|d| matches!(d, Decision::Allocated { tag: t, .. } if *t == tag))
                    {
                        return Err(format!(
                            "gang {gang}: {n} members not handed out together: {block:?}"
                        ));
                    }
                    for d in block {
                        if let Decision::Allocated { container, .. } = d {
                            self.live.insert(*container);
                        }
                    }
                    if !self.done.insert(*gang) {
                        return Err(format!("gang {gang} handed out twice"));
                    }
                    if matches!(
                        ds[i],
                        Decision::Gang {
                            change: GangChange::FellBack { .. },
                            ..
                        }
                    ) {
                        self.fell_back.insert(tag.0);
                    }
                    i += 1 + *n as usize;
                    continue;
                }
                Decision::Allocated { container, tag, .. } => {
                    if tag.0 >= GANG_TAG_BASE && !self.fell_back.contains(&tag.0) {
                        return Err(format!(
                            "a member of gang {} was handed out alone",
                            tag.0 - GANG_TAG_BASE
                        ));
                    }
                    self.live.insert(*container);
                }
                Decision::Completed { container, .. } if !self.live.remove(container) => {
                    return Err(format!(
                        "{container} completed, but the driver never had it"
                    ));
                }
                _ => {}
            }
            i += 1;
        }
        Ok(())
    }
}

fn run(nodes: &[i64], ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = fair();
    for (i, mb) in nodes.iter().enumerate() {
        add_node(&mut s, i as u32 + 1, *mb);
    }
    for app in 1..=4 {
        submit(&mut s, app);
    }
    drain(&mut s);
    let mut now = 0u64;
    let mut next_gang = 0u64;
    let mut watch = Watch::default();
    for op in ops {
        let event = match op {
            Op::Gang {
                app,
                mb,
                size,
                timeout_s,
                hard,
            } => {
                next_gang += 1;
                let style = if *hard {
                    GangStyle::Hard
                } else {
                    GangStyle::Soft
                };
                Event::GangAsk {
                    app: AppId(*app as u64 + 1),
                    ask: gang(next_gang, *mb, *size, timeout_s.map(|t| t * 1000), style),
                }
            }
            Op::Ask { app, mb, count } => Event::Ask {
                app: AppId(*app as u64 + 1),
                ask: ordinary(*mb, *count),
            },
            Op::Heartbeat(n) => Event::NodeHeartbeat {
                node: NodeId((n % nodes.len()) as u32 + 1),
            },
            Op::Complete(k) => {
                let Some(c) = watch.live.iter().nth(k % watch.live.len().max(1)).copied() else {
                    continue;
                };
                Event::ContainerCompleted {
                    container: c,
                    exit: ContainerExit::Success,
                    status: None,
                }
            }
            Op::Advance(secs) => {
                now += secs * 1000;
                Event::Timeout
            }
            Op::Cancel { app, gang } => Event::GangCancelled {
                app: AppId(*app as u64 + 1),
                gang: *gang,
            },
            Op::Expire { app, gang } => Event::GangExpired {
                app: AppId(*app as u64 + 1),
                gang: *gang,
            },
            Op::Finish(app) => Event::AppFinished {
                app: AppId(*app as u64 + 1),
            },
            Op::Update => Event::Update,
        };
        // Unknown apps (finished ones) and refused asks are fine: a refusal changes nothing.
        let _ = s.handle(Time(now), event);
        let ds = drain(&mut s);
        watch.check(&ds).map_err(TestCaseError::fail)?;
        let holds = s.gang_holds();
        prop_assert!(
            holds.len() <= 1,
            "{} gangs hold at once: {holds:?}",
            holds.len()
        );
        let drift = s.verify();
        prop_assert!(drift.is_empty(), "{drift:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn gangs_are_never_delivered_in_part_and_at_most_one_holds(
        nodes in prop::collection::vec(prop::sample::select(vec![4096i64, 8192]), 1..5),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        run(&nodes, &ops)?;
    }
}

/// Two gangs each needing most of the cluster, room appearing one container at a time: both
/// are delivered (no deadlock), the second only after the first.
#[test]
fn two_large_gangs_both_finish() {
    let mut s = fair();
    add_node(&mut s, 1, 4096);
    add_node(&mut s, 2, 4096);
    for app in 1..=3 {
        submit(&mut s, app);
    }
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ordinary(2048, 4),
        },
    )
    .expect("ask");
    s.handle(Time(0), Event::Update).expect("update");
    for n in [1, 2, 1, 2] {
        s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(n) })
            .expect("heartbeat");
    }
    for (app, id) in [(2, 1), (3, 2)] {
        s.handle(
            Time(0),
            Event::GangAsk {
                app: AppId(app),
                ask: gang(id, 2048, 3, None, GangStyle::Soft),
            },
        )
        .expect("gang");
    }
    let mut live: Vec<ContainerId> = drain(&mut s)
        .iter()
        .filter_map(|d| match d {
            Decision::Allocated { container, .. } => Some(*container),
            _ => None,
        })
        .collect();
    let mut delivered: BTreeMap<u64, u64> = BTreeMap::new();
    let mut t = 0;
    while delivered.len() < 2 && t < 100 {
        t += 1;
        if let Some(c) = live.first().copied() {
            live.remove(0);
            s.handle(
                Time(t),
                Event::ContainerCompleted {
                    container: c,
                    exit: ContainerExit::Success,
                    status: None,
                },
            )
            .expect("completed");
        }
        s.handle(Time(t), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        for d in drain(&mut s) {
            match d {
                Decision::Gang {
                    gang,
                    change: GangChange::Delivered { .. },
                    ..
                } => {
                    delivered.insert(gang, t);
                }
                Decision::Allocated { container, .. } => live.push(container),
                _ => {}
            }
            assert!(s.gang_holds().len() <= 1);
        }
    }
    assert_eq!(delivered.len(), 2, "both gangs delivered: {delivered:?}");
    assert!(delivered[&1] < delivered[&2], "{delivered:?}");
}

/// The gang walk is shared: FIFO and Capacity hold and deliver as Fair does.
#[test]
fn fifo_and_capacity_hold_then_deliver_whole() {
    let (capacity, _) = weft_config::capacity::parse_capacity(
        "<configuration><property><name>yarn.scheduler.capacity.root.queues</name>\
         <value>default</value></property><property>\
         <name>yarn.scheduler.capacity.root.default.capacity</name><value>100</value>\
         </property></configuration>",
        &weft_types::ResourceTypes::default(),
    )
    .expect("Hadoop's shipped file: root.default at 100%");
    let kinds = [
        SchedulerConfig::Fifo(weft_sched::FifoConfig::default()),
        SchedulerConfig::Capacity(weft_sched::CapacitySchedulerConfig {
            capacity,
            properties: Default::default(),
        }),
    ];
    for config in kinds {
        let kind = config.kind();
        let mut s = Scheduler::new(config, Default::default());
        add_node(&mut s, 1, 4096);
        submit(&mut s, 1);
        submit(&mut s, 2);
        s.handle(
            Time(0),
            Event::Ask {
                app: AppId(1),
                ask: ordinary(2048, 1),
            },
        )
        .expect("ask");
        s.handle(Time(0), Event::Update).expect("update");
        s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        let filler = drain(&mut s)
            .iter()
            .find_map(|d| match d {
                Decision::Allocated { container, .. } => Some(*container),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{kind:?}: the filler runs"));
        s.handle(
            Time(1),
            Event::GangAsk {
                app: AppId(2),
                ask: gang(1, 1024, 4, None, GangStyle::Soft),
            },
        )
        .expect("gang");
        s.handle(Time(1), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        let ds = drain(&mut s);
        assert!(
            changes(&ds).contains(&(1, GangChange::Holding { held: 2, size: 4 })),
            "{kind:?}: {ds:?}"
        );
        assert_eq!(allocated(&ds), 0, "{kind:?}");
        s.handle(
            Time(2),
            Event::ContainerCompleted {
                container: filler,
                exit: ContainerExit::Success,
                status: None,
            },
        )
        .expect("completed");
        s.handle(Time(2), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        let ds = drain(&mut s);
        assert!(
            changes(&ds).contains(&(1, GangChange::Delivered { size: 4 })),
            "{kind:?}: {ds:?}"
        );
        assert_eq!(allocated(&ds), 4, "{kind:?}");
        assert!(s.verify().is_empty(), "{kind:?}: {:?}", s.verify());
    }
}
