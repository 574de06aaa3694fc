//! Targeted preemption's invariants (preemption spec A.10) over random small clusters: after
//! every update, no app warned in it keeps less than its fair share once its marked
//! containers go, no container of a non-preemptable queue is ever warned, every kill follows
//! a warning and is followed by its completion, the strict contract lists exactly the live
//! warned containers, `verify` (which checks marks and earmarks) stays clean, and the fast and
//! reference walks decide alike.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRng, TestRunner};
use weft_config::alloc_file::parse_allocations;
use weft_sched::{
    AskTag, ContainerAsk, ContainerExit, Decision, Event, Scheduler, SchedulerConfig, WalkMode,
};
use weft_types::{AppId, ContainerId, NodeId, Resource, ResourceTypes, Time};

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
        4 => Just(Op::Tick),
    ]
}

const QUEUES: [&str; 3] = ["a", "b", "c"];

fn scheduler(a_preemptable: bool, threshold: &str, wait_ms: &str, nodes: u32) -> Both {
    Both::new(|| one_scheduler(a_preemptable, threshold, wait_ms, nodes, Layout::NoPools))
}

/// The same settings without resource pools (`fast`) and with one pool over every host that
/// binds every queue (`reference`, also on the fast walk): preemption must decide alike.
fn without_and_with_one_pool(
    a_preemptable: bool,
    threshold: &str,
    wait_ms: &str,
    nodes: u32,
    strategy: KillStrategy,
) -> Both {
    let make = |layout| {
        let mut s = one_scheduler(a_preemptable, threshold, wait_ms, nodes, layout);
        if strategy == KillStrategy::Global {
            let mut config = s.config().clone();
            if let SchedulerConfig::Fair(fair) = &mut config {
                fair.properties.preemption_strategy = weft_config::PreemptionStrategy::Global;
                fair.properties.preemption_interval_ms = 1000;
            }
            s.handle(Time(0), Event::Reload(Box::new(config)))
                .expect("reload");
        }
        s
    };
    Both {
        fast: make(Layout::NoPools),
        reference: make(Layout::OnePool),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    NoPools,
    /// One resource pool `all` over every node, bound to every queue explicitly.
    OnePool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum KillStrategy {
    Targeted,
    Global,
}

fn one_scheduler(
    a_preemptable: bool,
    threshold: &str,
    wait_ms: &str,
    nodes: u32,
    layout: Layout,
) -> Scheduler {
    let (pools, bound) = match layout {
        Layout::NoPools => (String::new(), ""),
        Layout::OnePool => (
            format!(
                "<resourcePools><resourcePool name=\"all\">{}</resourcePool></resourcePools>",
                (1..=nodes)
                    .map(|n| format!("<host>n{n}</host>"))
                    .collect::<String>()
            ),
            "<resourcePool>all</resourcePool>",
        ),
    };
    let xml = format!(
        r#"<allocations>
          {pools}
          <defaultFairSharePreemptionTimeout>0</defaultFairSharePreemptionTimeout>
          <defaultFairSharePreemptionThreshold>{threshold}</defaultFairSharePreemptionThreshold>
          <queue name="a">{bound}<allowPreemptionFrom>{a_preemptable}</allowPreemptionFrom></queue>
          <queue name="b">{bound}<minResources>2048 mb, 2 vcores</minResources>
            <minSharePreemptionTimeout>1</minSharePreemptionTimeout></queue>
          <queue name="c">{bound}</queue>
        </allocations>"#
    );
    let (allocations, _) =
        parse_allocations(&xml, &ResourceTypes::default()).expect("valid allocations");
    let (properties, _) = weft_config::site::from_pairs([
        ("yarn.scheduler.fair.preemption", "true"),
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("yarn.scheduler.fair.waitTimeBeforeKill", wait_ms),
        (
            "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck",
            "1000",
        ),
    ])
    .expect("valid properties");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
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

/// The same scheduler twice, on the fast walk and on the reference walk: every event goes to
/// both and every decision must be the same (the hand-off and the reservable flags must not
/// make the two walks part).
struct Both {
    fast: Scheduler,
    reference: Scheduler,
}

impl Both {
    fn new(make: impl Fn() -> Scheduler) -> Both {
        let mut reference = make();
        reference.set_walk_mode(WalkMode::Reference);
        Both {
            fast: make(),
            reference,
        }
    }

    fn handle(&mut self, at: Time, event: Event) -> Result<(), String> {
        let fast = self.fast.handle(at, event.clone());
        let reference = self.reference.handle(at, event);
        assert_eq!(fast, reference, "the walks answer alike");
        fast.map_err(|e| e.to_string())
    }

    fn poll_decision(&mut self) -> Option<Decision> {
        let d = self.fast.poll_decision();
        assert_eq!(d, self.reference.poll_decision(), "the walks decide alike");
        d
    }

    fn verify(&self) -> Vec<String> {
        let mut v = self.fast.verify();
        v.extend(self.reference.verify());
        v
    }
}

/// What the test tracks from the decisions.
#[derive(Default)]
struct Seen {
    /// Live containers: app and size.
    live: BTreeMap<ContainerId, (AppId, Resource)>,
    /// Warned containers still live.
    warned: BTreeSet<ContainerId>,
    app_queue: BTreeMap<AppId, String>,
}

impl Seen {
    /// Takes the decisions; returns the apps warned in them.
    fn take(&mut self, s: &mut Both) -> BTreeSet<AppId> {
        let mut warned_apps = BTreeSet::new();
        let mut last_preempted: Option<ContainerId> = None;
        while let Some(d) = s.poll_decision() {
            if let Some(c) = last_preempted.take() {
                assert!(
                    matches!(d, Decision::Completed { container, exit: ContainerExit::Preempted, .. } if container == c),
                    "a kill is followed at once by its completion, got {d:?}"
                );
            }
            match d {
                Decision::Accepted { app, queue } => {
                    self.app_queue.insert(app, queue);
                }
                Decision::Allocated {
                    app,
                    container,
                    resources,
                    ..
                } => {
                    self.live.insert(container, (app, resources));
                }
                Decision::PreemptWarning { app, container, .. } => {
                    assert_eq!(self.live.get(&container).map(|l| l.0), Some(app));
                    assert!(self.warned.insert(container), "{container} warned twice");
                    warned_apps.insert(app);
                }
                Decision::Preempted { container, .. } => {
                    assert!(
                        self.warned.contains(&container),
                        "{container} killed unwarned"
                    );
                    last_preempted = Some(container);
                }
                Decision::Completed { container, .. } => {
                    self.live.remove(&container);
                    self.warned.remove(&container);
                }
                _ => {}
            }
        }
        assert_eq!(last_preempted, None, "a kill without its completion");
        warned_apps
    }
}

/// One generated run: its settings and operations.
type Case = (bool, &'static str, &'static str, u32, Vec<Op>);

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        prop::sample::select(vec!["0.5", "1"]),
        prop::sample::select(vec!["0", "1000", "2500"]),
        1..4u32,
        prop::collection::vec(op(), 20..100),
    )
}

/// Runs one case, checking the invariants; counts the apps warned in `warnings`.
fn check(case: Case, warnings: &Cell<usize>) -> Result<(), TestCaseError> {
    let (a_preemptable, threshold, wait, nodes, ops) = case;
    let s = scheduler(a_preemptable, threshold, wait, nodes);
    check_on(s, a_preemptable, nodes, ops, warnings, true)
}

/// `check` on the pair `s` (whose two schedulers must decide alike); the fair-share guard
/// on victims is checked for the targeted strategy only (the global one has none).
fn check_on(
    mut s: Both,
    a_preemptable: bool,
    nodes: u32,
    ops: Vec<Op>,
    warnings: &Cell<usize>,
    targeted: bool,
) -> Result<(), TestCaseError> {
    let mut seen = Seen::default();
    let mut apps: Vec<AppId> = Vec::new();
    let mut now = 0u64;
    for op in ops {
        match op {
            Op::Submit { queue } => {
                let app = AppId(apps.len() as u64 + 1);
                apps.push(app);
                s.handle(
                    Time(now),
                    Event::AppSubmitted {
                        app,
                        user: "u".into(),
                        queue: Some(QUEUES[queue].into()),
                        am_resource: None,
                    },
                )
                .expect("submitted");
            }
            Op::Ask { app, mb, count } => {
                let Some(app) = apps.get(app).copied() else {
                    continue;
                };
                let ask = ContainerAsk {
                    priority: 1,
                    resources: Resource::new(mb, 1),
                    count,
                    hosts: vec![],
                    racks: vec![],
                    relax_locality: true,
                    tag: AskTag::NONE,
                };
                s.handle(Time(now), Event::Ask { app, ask }).expect("ask");
            }
            Op::Release { app } => {
                let Some(app) = apps.get(app).copied() else {
                    continue;
                };
                let newest = seen
                    .live
                    .iter()
                    .rev()
                    .find(|(_, l)| l.0 == app)
                    .map(|(c, _)| *c);
                if let Some(container) = newest {
                    s.handle(Time(now), Event::Release { app, container })
                        .expect("release");
                }
            }
            Op::Tick => {
                now += 500;
                s.handle(Time(now), Event::Update).expect("update");
                let warned_apps = seen.take(&mut s);
                warnings.set(warnings.get() + warned_apps.len());
                // A.10: a victim keeps at least its fair share (memory: `fair` leaves).
                let snap = s.fast.snapshot();
                for app in warned_apps.iter().filter(|_| targeted) {
                    let a = snap.apps.iter().find(|x| x.app == *app).expect("listed");
                    let marked: i64 = s
                        .fast
                        .preemption_contract(*app)
                        .iter()
                        .map(|c| seen.live.get(c).map_or(0, |l| l.1.memory_mb()))
                        .sum();
                    prop_assert!(
                        a.usage.memory_mb() - marked >= a.fair_share.memory_mb(),
                        "app {app}: usage {:?} less marked {marked} below its fair share {:?}",
                        a.usage,
                        a.fair_share
                    );
                    prop_assert!(
                        a_preemptable || a.queue != "root.a",
                        "app {app} of the non-preemptable root.a was warned"
                    );
                }
                for n in 1..=nodes {
                    s.handle(Time(now), Event::NodeHeartbeat { node: NodeId(n) })
                        .expect("heartbeat");
                }
            }
        }
        seen.take(&mut s);
        prop_assert_eq!(s.verify(), Vec::<String>::new());
        // The strict contract is exactly the live warned containers, per app.
        for app in &apps {
            let contract: BTreeSet<ContainerId> =
                s.fast.preemption_contract(*app).into_iter().collect();
            let expected: BTreeSet<ContainerId> = seen
                .warned
                .iter()
                .copied()
                .filter(|c| seen.live.get(c).is_some_and(|l| l.0 == *app))
                .collect();
            prop_assert_eq!(contract, expected);
        }
        prop_assert_eq!(s.fast.poll_timeout(), s.reference.poll_timeout());
        if let Some(due) = s.fast.poll_timeout() {
            prop_assert!(due.as_millis() > now, "a timer {due:?} overdue at {now}");
        }
    }
    Ok(())
}

#[test]
fn targeted_preemption_keeps_its_invariants() {
    let config = Config::with_cases(128);
    // A fixed seed, so that the count below is a property of this test, not of luck.
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let warnings = Cell::new(0);
    if let Err(e) = runner.run(&case(), |c| check(c, &warnings)) {
        panic!("{e}");
    }
    // The generated cases do preempt: the checks above are not vacuous.
    assert!(warnings.get() >= 50, "only {} apps warned", warnings.get());
}

/// Resource-pools spec §9: with one pool over every host, preemption (targeted and global)
/// decides exactly as without pools: the same warnings, kills and allocations in the same
/// order, under the same invariants.
#[test]
fn one_pool_over_every_host_preempts_as_no_pools() {
    for strategy in [KillStrategy::Targeted, KillStrategy::Global] {
        let config = Config::with_cases(64);
        let rng = TestRng::deterministic_rng(config.rng_algorithm);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let warnings = Cell::new(0);
        let result = runner.run(&case(), |(a_preemptable, threshold, wait, nodes, ops)| {
            let s = without_and_with_one_pool(a_preemptable, threshold, wait, nodes, strategy);
            let targeted = strategy == KillStrategy::Targeted;
            check_on(s, a_preemptable, nodes, ops, &warnings, targeted)
        });
        if let Err(e) = result {
            panic!("{strategy:?}: {e}");
        }
        assert!(
            warnings.get() >= 20,
            "{strategy:?}: only {} apps warned",
            warnings.get()
        );
    }
}
