//! The global strategy's invariants (preemption spec Part B) over random small clusters: no
//! container of a non-preemptable queue is ever warned; every kill is of a container warned
//! more than `waitTimeBeforeKill` earlier (STRICT) and is followed at once by its completion
//! as preempted; warnings and kills happen only in rounds at least `preemptionInterval` apart;
//! the strict contract lists exactly the live warned containers; `verify` stays clean; the
//! fast and reference walks decide alike.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRng, TestRunner};
use weft_config::alloc_file::parse_allocations;
use weft_sched::{
    AskTag, ContainerAsk, ContainerExit, Decision, Event, Scheduler, SchedulerConfig, WalkMode,
};
use weft_types::{AppId, ContainerId, NodeId, Resource, ResourceTypes, Time};

const QUEUES: [&str; 3] = ["a", "b", "c"];
const INTERVAL_MS: u64 = 1000;

#[derive(Clone, Debug)]
enum Op {
    Submit { queue: usize },
    Ask { app: usize, mb: i64, count: u32 },
    Release { app: usize },
    Tick,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0..3usize).prop_map(|queue| Op::Submit { queue }),
        4 => (0..6usize, prop::sample::select(vec![512_i64, 1024, 2048]), 1..9u32)
            .prop_map(|(app, mb, count)| Op::Ask { app, mb, count }),
        1 => (0..6usize).prop_map(|app| Op::Release { app }),
        5 => Just(Op::Tick),
    ]
}

fn one_scheduler(a_preemptable: bool, wait_ms: u64, nodes: u32, walk: WalkMode) -> Scheduler {
    let xml = format!(
        r#"<allocations>
          <defaultFairSharePreemptionTimeout>1</defaultFairSharePreemptionTimeout>
          <defaultFairSharePreemptionThreshold>0.8</defaultFairSharePreemptionThreshold>
          <queue name="a"><allowPreemptionFrom>{a_preemptable}</allowPreemptionFrom></queue>
          <queue name="b"><minResources>2048 mb, 2 vcores</minResources>
            <minSharePreemptionTimeout>1</minSharePreemptionTimeout></queue>
          <queue name="c"/>
        </allocations>"#
    );
    let (allocations, _) =
        parse_allocations(&xml, &ResourceTypes::default()).expect("valid allocations");
    let wait = wait_ms.to_string();
    let interval = INTERVAL_MS.to_string();
    let (properties, _) = weft_config::site::from_pairs([
        ("yarn.scheduler.fair.preemption", "true"),
        ("weft.scheduler.fair.preemption.strategy", "global"),
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("yarn.scheduler.fair.waitTimeBeforeKill", wait.as_str()),
        ("yarn.scheduler.fair.preemptionInterval", interval.as_str()),
    ])
    .expect("valid properties");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
    s.set_walk_mode(walk);
    for n in 1..=nodes {
        s.handle(
            Time(0),
            Event::NodeAdded {
                node: NodeId(n),
                host: format!("n{n}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(4096, 4),
            },
        )
        .expect("node added");
    }
    s
}

/// What the test follows from the decisions of the fast walk (the reference walk's must be the
/// same, decision for decision).
#[derive(Default)]
struct Seen {
    live: BTreeMap<ContainerId, AppId>,
    /// Live warned containers and when they were warned.
    warned: BTreeMap<ContainerId, u64>,
    app_queue: BTreeMap<AppId, String>,
    /// Instants at which something was warned or killed.
    round_times: BTreeSet<u64>,
    warnings: usize,
    kills: usize,
}

type Case = (bool, u64, u32, Vec<Op>);

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        prop::sample::select(vec![0_u64, 1000, 2500]),
        1..4u32,
        prop::collection::vec(op(), 20..120),
    )
}

/// Hands the event to both walks and checks their decisions against the invariants.
fn step(
    fast: &mut Scheduler,
    reference: &mut Scheduler,
    seen: &mut Seen,
    now: u64,
    wait_ms: u64,
    a_preemptable: bool,
    event: Event,
) -> Result<(), TestCaseError> {
    let (f, r) = (
        fast.handle(Time(now), event.clone()),
        reference.handle(Time(now), event),
    );
    prop_assert_eq!(&f, &r, "the walks answer alike");
    prop_assert!(f.is_ok(), "refused: {:?}", f);
    let mut expect_completion: Option<ContainerId> = None;
    while let Some(d) = fast.poll_decision() {
        let other = reference.poll_decision();
        prop_assert_eq!(Some(&d), other.as_ref(), "walks decide alike");
        if let Some(c) = expect_completion.take() {
            let completes = matches!(
                d,
                Decision::Completed { container, exit: ContainerExit::Preempted, .. } if container == c
            );
            prop_assert!(completes, "{c} was preempted but then came {d:?}");
        }
        match d {
            Decision::Accepted { app, queue } => {
                seen.app_queue.insert(app, queue);
            }
            Decision::Allocated { app, container, .. } => {
                seen.live.insert(container, app);
            }
            Decision::Completed { container, .. } => {
                seen.live.remove(&container);
                seen.warned.remove(&container);
            }
            Decision::PreemptWarning {
                app,
                container,
                for_app,
                kill_at,
                ..
            } => {
                prop_assert_eq!((for_app, kill_at), (None, None), "global names neither");
                let queue = seen.app_queue.get(&app).cloned().unwrap_or_default();
                prop_assert!(
                    a_preemptable || queue != "root.a",
                    "{container} of the non-preemptable root.a was warned"
                );
                prop_assert!(
                    seen.live.contains_key(&container),
                    "{container} is not live"
                );
                prop_assert!(
                    seen.warned.insert(container, now).is_none(),
                    "{container} warned twice"
                );
                seen.round_times.insert(now);
                seen.warnings += 1;
            }
            Decision::Preempted { container, .. } => {
                let warned_at = seen.warned.get(&container).copied();
                prop_assert!(warned_at.is_some(), "{container} killed without a warning");
                let at = warned_at.unwrap_or_default();
                prop_assert!(
                    at + wait_ms < now,
                    "{container} warned at {at} killed at {now} (wait {wait_ms})"
                );
                seen.round_times.insert(now);
                seen.kills += 1;
                expect_completion = Some(container);
            }
            Decision::Rejected { .. }
            | Decision::Reserved { .. }
            | Decision::Gang { .. }
            | Decision::ReservationEnded { .. } => {}
        }
    }
    prop_assert!(expect_completion.is_none(), "a kill without its completion");
    Ok(())
}

fn check(case: Case, totals: &mut (usize, usize)) -> Result<(), TestCaseError> {
    let (a_preemptable, wait_ms, nodes, ops) = case;
    let mut fast = one_scheduler(a_preemptable, wait_ms, nodes, WalkMode::Fast);
    let mut reference = one_scheduler(a_preemptable, wait_ms, nodes, WalkMode::Reference);
    let mut seen = Seen::default();
    let mut apps: Vec<AppId> = Vec::new();
    let mut now = 0u64;
    for op in ops {
        let mut events = Vec::new();
        match op {
            Op::Submit { queue } => {
                let app = AppId(apps.len() as u64 + 1);
                apps.push(app);
                events.push(Event::AppSubmitted {
                    app,
                    user: "u".into(),
                    queue: Some(QUEUES[queue].into()),
                    am_resource: None,
                });
            }
            Op::Ask { app, mb, count } => {
                if let Some(app) = apps.get(app).copied() {
                    let ask = ContainerAsk {
                        priority: 1,
                        resources: Resource::new(mb, 1),
                        count,
                        hosts: vec![],
                        racks: vec![],
                        relax_locality: true,
                        tag: AskTag::NONE,
                    };
                    events.push(Event::Ask { app, ask });
                }
            }
            Op::Release { app } => {
                let app = apps.get(app).copied();
                let newest = seen
                    .live
                    .iter()
                    .rev()
                    .find(|(_, a)| Some(**a) == app)
                    .map(|(c, a)| (*c, *a));
                if let Some((container, app)) = newest {
                    events.push(Event::Release { app, container });
                }
            }
            Op::Tick => {
                now += 500;
                events.push(Event::Update);
                events.extend((1..=nodes).map(|n| Event::NodeHeartbeat { node: NodeId(n) }));
            }
        }
        for event in events {
            step(
                &mut fast,
                &mut reference,
                &mut seen,
                now,
                wait_ms,
                a_preemptable,
                event,
            )?;
        }
        prop_assert_eq!(fast.verify(), Vec::<String>::new());
        prop_assert_eq!(reference.verify(), Vec::<String>::new());
        for app in &apps {
            let contract: BTreeSet<ContainerId> =
                fast.preemption_contract(*app).into_iter().collect();
            let expected: BTreeSet<ContainerId> = seen
                .warned
                .keys()
                .copied()
                .filter(|c| seen.live.get(c) == Some(app))
                .collect();
            prop_assert_eq!(contract, expected, "app {}'s contract", app);
        }
    }
    let times: Vec<u64> = seen.round_times.iter().copied().collect();
    for pair in times.windows(2) {
        prop_assert!(
            pair[1] - pair[0] >= INTERVAL_MS,
            "rounds at {} and {} are closer than the interval",
            pair[0],
            pair[1]
        );
    }
    totals.0 += seen.warnings;
    totals.1 += seen.kills;
    Ok(())
}

#[test]
fn global_preemption_keeps_its_invariants() {
    let config = Config::with_cases(128);
    // A fixed seed, so that the counts below are a property of this test, not of luck.
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let totals = std::cell::RefCell::new((0, 0));
    if let Err(e) = runner.run(&case(), |c| check(c, &mut totals.borrow_mut())) {
        panic!("{e}");
    }
    let (warnings, kills) = totals.into_inner();
    // The generated cases do preempt: the checks above are not vacuous.
    assert!(warnings >= 100, "only {warnings} warnings");
    assert!(kills >= 50, "only {kills} kills");
}
