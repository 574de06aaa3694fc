//! A preset run (`--preset meituan`): the simulator's preset gives the cluster (nodes, the
//! allocation file, the scheduler properties) and the closed loop of apps; the bench registers
//! the nodes, submits the apps through REST, plays each app's AM when the RM launches it,
//! replaces every app that completes, observes usage and pending demand for validSchedule, and
//! reports per minute.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use weft_proto::auth::AmCredentials;
use weft_proto::shared_frames::SharedAllocates;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_sim::presets::preset;
use weft_sim::scale::metrics::{schedule_minute, valid_schedule};
use weft_sim::workload::{AppPlan, AppSource, ClosedLoop, Workload};
use weft_types::Time;

use crate::bench::{connect, wait_registered, REGISTERING, WORKERS};
use crate::cm::{self, AmLaunch};
use crate::error::BenchError;
use crate::fleet_am::{AppMaster, AppResult, FleetCounters, Tasks};
use crate::fleet_report::{CoreShare, FleetReport, MinuteRow};
use crate::nm::{self, NodeResult, NodeSpec};
use crate::rest::{Rest, APPLICATION_TYPE};
use crate::rm_proc::{
    checked_against_child, pin_process, process_cpu_seconds, process_memory, target_rm, RmProcess,
    RmSetup, DYNAMIC_MAX_ASSIGN, MAX_ASSIGN,
};
use crate::sampler::{self, Samples};
use crate::shared::Shared;
use crate::stats::{percentiles, Sample, Timeline};
use crate::timeline::{self, Tick};
use crate::RmBenchArgs;

/// Submissions in flight at once (each is two REST calls the RM persists; the RM writes
/// the submissions of one batch in one transaction, so more in flight is cheaper per app).
/// With 64, a full-scale run submitted about 60 apps a second (each submission took about a
/// second on a busy RM) and never reached its 10,000 apps: the closed loop's clients are
/// independent, so the bench must not be what bounds them. Below tokio's 512 blocking
/// threads, which the observers need too.
pub(crate) const SUBMITTERS: usize = 384;
/// Bound on registering the nodes.
const SETUP_TIMEOUT: Duration = Duration::from_secs(120);
/// Bound on the apps unregistering and the nodes stopping after the run.
const WIND_DOWN: Duration = Duration::from_secs(60);
/// Bound on waiting, after the window, for the answers to requests sent inside it.
const SETTLE: Duration = Duration::from_secs(60);
/// Bound on the simulated nodes ending once told to stop.
const NODES_STOP: Duration = Duration::from_secs(15);
/// Default pause between an AM's Allocate calls (YARN's AM heartbeat).
const AM_INTERVAL_MS: u64 = 1000;
/// A minute whose bench CPU reaches this many cores may have been limited by the bench.
const BENCH_BUSY_CORES: f64 = 0.9;
/// A minute with more than this fraction of heartbeats sent late was limited by the bench.
const LATE_FRACTION: f64 = 0.01;
/// The RM's CPU and the bench's when pinned.
const RM_CPU: usize = 0;
const BENCH_CPU: usize = 1;

/// What the run is made of, read off the preset.
struct Plan {
    name: String,
    scale: f64,
    workload: Workload,
    apps: ClosedLoop,
    container_ms: u64,
    heartbeat_ms: u64,
    am_interval_ms: u64,
}

fn plan(args: &RmBenchArgs) -> Result<Plan, BenchError> {
    let name = args.preset.clone().unwrap_or_default();
    let workload =
        preset(&name, args.scale, args.seed).map_err(|e| BenchError::Args(e.to_string()))?;
    let mut apps = match &workload.apps {
        AppSource::ClosedLoop(c) => c.clone(),
        _ => {
            return Err(BenchError::Args(format!(
            "preset '{name}' is not a closed loop of apps; rm-bench plays closed loops (meituan)"
        )))
        }
    };
    if apps.am.is_none() {
        return Err(BenchError::Args(format!(
            "preset '{name}' has unmanaged AMs; rm-bench plays managed AMs only"
        )));
    }
    if let Some(range) = args.tasks_per_app {
        apps.tasks_per_app = range;
    }
    let container_ms = match args.container_ms {
        Some(ms) => ms,
        None if apps.task_duration_ms.0 == apps.task_duration_ms.1 => apps.task_duration_ms.0,
        None => {
            return Err(BenchError::Args(format!(
                "preset '{name}' varies its task durations; give one with --container-ms"
            )))
        }
    };
    if args.duration.is_zero() {
        return Err(BenchError::Args("--duration must be positive".into()));
    }
    Ok(Plan {
        heartbeat_ms: args
            .heartbeat_ms
            .unwrap_or(workload.heartbeat_interval.as_millis()),
        am_interval_ms: args.am_interval_ms.unwrap_or(AM_INTERVAL_MS),
        name,
        scale: args.scale,
        workload,
        apps,
        container_ms,
    })
}

/// Runs a preset and returns its figures.
pub fn fleet(args: &RmBenchArgs) -> Result<FleetReport, BenchError> {
    let plan = plan(args)?;
    let properties = args.rm_properties(plan.workload.properties.clone())?;
    let (addresses, rm_pid, mut child) = target_rm(args, |binary| RmSetup {
        binary,
        heartbeat_ms: plan.heartbeat_ms,
        assign_multiple: !args.no_assign_multiple,
        // An `--rm-property` naming either max-assign property is the user's say over both.
        max_assign: (!args.sets_rm_property(&[MAX_ASSIGN, DYNAMIC_MAX_ASSIGN]))
            .then_some(args.max_assign),
        allocations_xml: plan.workload.allocations_xml.clone(),
        properties: properties.clone(),
        worker_threads: args.rm_worker_threads(),
        cpu: args.pin.then_some(RM_CPU),
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .map_err(BenchError::io("cannot start the async runtime"))?;
    let pinned = if args.pin {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let Some(pid) = rm_pid else {
            return Err(BenchError::Args(
                "--pin needs the RM's process id (a child RM, or --rm-pid)".into(),
            ));
        };
        if cpus < 2 {
            return Err(BenchError::Args(format!(
                "--pin needs two CPUs; this machine has {cpus}"
            )));
        }
        pin_process(&pid.to_string(), RM_CPU)?;
        // The runtime's threads exist now; later ones inherit their creator's binding.
        pin_process("self", BENCH_CPU)?;
        Some((RM_CPU, BENCH_CPU))
    } else {
        None
    };
    let result = runtime.block_on(drive(args, &plan, &addresses, rm_pid, child.as_ref()));
    runtime.shutdown_timeout(Duration::from_secs(2));
    let (mut report, log_mark) = checked_against_child(&mut child, result)?;
    report.pinned = pinned;
    report.rm_worker_threads = child.as_ref().and(args.rm_worker_threads());
    if let Some(c) = &child {
        report.rm_warnings = c.warnings(log_mark.unwrap_or(u64::MAX));
    }
    Ok(report)
}

/// One look at the cluster: usage and pending demand (for validSchedule) and the processes'
/// counters.
#[derive(Clone, Debug, Default)]
struct Observation {
    at_ms: u64,
    usage: Option<f64>,
    valid_pending: bool,
    rm_cpu: Option<f64>,
    bench_cpu: Option<f64>,
    rm_rss: Option<u64>,
    rm_peak_rss: Option<u64>,
    /// Apps submitted and not yet ended (the closed loop's count when the bench keeps up).
    live_apps: u64,
}

/// The largest share the RM's cluster metrics show in use (memory or vcores).
fn cluster_usage(metrics: &Value) -> Option<f64> {
    let m = metrics.get("clusterMetrics")?;
    let ratio = |used: &str, total: &str| -> Option<f64> {
        let total = m.get(total)?.as_f64()?;
        (total > 0.0).then(|| m.get(used)?.as_f64().map(|u| u / total))?
    };
    let memory = ratio("allocatedMB", "totalMB");
    let vcores = ratio("allocatedVirtualCores", "totalVirtualCores");
    match (memory, vcores) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

async fn observe(fleet: &Fleet, shared: &Shared, rm_pid: Option<u32>) -> Observation {
    let (rest, counters) = (&fleet.rest, &fleet.counters);
    let at_ms = shared.now_ms();
    let client = Arc::clone(rest);
    let metrics = tokio::task::spawn_blocking(move || {
        client.get("cluster metrics", "/ws/v1/cluster/metrics")
    })
    .await;
    let usage = match metrics {
        Ok(Ok(v)) => cluster_usage(&v),
        Ok(Err(e)) => {
            shared.error(format!("observing usage: {e}"));
            None
        }
        Err(e) => {
            shared.error(format!("observing usage: {e}"));
            None
        }
    };
    let memory = rm_pid.and_then(|p| process_memory(&p.to_string()));
    Observation {
        at_ms,
        usage,
        // The allocation file sets no maxResources, so a queue's valid pending demand is all
        // of its pending demand: any ask outstanding makes it positive.
        valid_pending: counters.pending.load(Ordering::Relaxed) > 0,
        rm_cpu: rm_pid.and_then(|p| process_cpu_seconds(&p.to_string())),
        bench_cpu: process_cpu_seconds("self"),
        rm_rss: memory.map(|m| m.0),
        rm_peak_rss: memory.map(|m| m.1),
        live_apps: fleet
            .submitted
            .load(Ordering::Relaxed)
            .saturating_sub(fleet.ams_done.load(Ordering::Relaxed)),
    }
}

/// The sampler's look each second: the bench's counters and both processes' CPU and memory.
fn read_tick(fleet: &Fleet, shared: &Shared, rm_pid: Option<u32>) -> Tick {
    Tick {
        at_ms: shared.now_ms(),
        submitted: fleet.submitted.load(Ordering::Relaxed),
        ams_done: fleet.ams_done.load(Ordering::Relaxed),
        submitting: fleet.in_flight.load(Ordering::Relaxed),
        rm_cpu: rm_pid.and_then(|p| process_cpu_seconds(&p.to_string())),
        bench_cpu: process_cpu_seconds("self"),
        rm_rss: rm_pid
            .and_then(|p| process_memory(&p.to_string()))
            .map(|m| m.0),
    }
}

/// The application an attempt id (`appattempt_<ts>_<seq>_<n>`) belongs to.
fn app_of_attempt(attempt: &str) -> Option<String> {
    let rest = attempt.strip_prefix("appattempt_")?;
    let (app, _) = rest.rsplit_once('_')?;
    Some(format!("application_{app}"))
}

/// What the run's tasks share besides [`Shared`].
struct Fleet {
    rest: Arc<Rest>,
    apps: ClosedLoop,
    counters: Arc<FleetCounters>,
    /// Plans of submitted apps whose AM has not been launched yet, by app id.
    waiting: Mutex<HashMap<String, AppPlan>>,
    /// The next app number of the closed loop.
    next_app: AtomicU64,
    submitted: AtomicU64,
    /// Each submission's two REST calls: start time and round trip.
    submissions: Mutex<Vec<Sample>>,
    submit_failures: AtomicU64,
    in_flight: AtomicU64,
    ams_done: AtomicU64,
    results: Mutex<Vec<AppResult>>,
}

impl Fleet {
    /// Submits app number `n` (blocking).
    fn submit(&self, n: u64, shared: &Shared) {
        let plan = self.apps.app(n, Time::ZERO);
        let am = plan.am.unwrap_or(plan.stages[0].groups[0].resource);
        let queue = plan.queue.clone().unwrap_or_else(|| "default".into());
        let user = plan.user.clone();
        let (sent, at_ms) = (crate::clock::now(), shared.now_ms());
        let outcome = self.rest.new_application(Some(&user)).and_then(|app_id| {
            // Known before the RM can launch the AM, so the launch always finds its plan.
            if let Ok(mut w) = self.waiting.lock() {
                w.insert(app_id.clone(), plan);
            }
            self.counters.pending.fetch_add(1, Ordering::Relaxed);
            self.rest
                .submit_app(Some(&user), &app_id, &queue, am.memory_mb(), am.vcores())
                .inspect_err(|_| {
                    self.counters.pending.fetch_sub(1, Ordering::Relaxed);
                    if let Ok(mut w) = self.waiting.lock() {
                        w.remove(&app_id);
                    }
                })
        });
        let micros = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
        if let Ok(mut s) = self.submissions.lock() {
            s.push(Sample { at_ms, micros });
        }
        match outcome {
            Ok(()) => {
                self.submitted.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                self.submit_failures.fetch_add(1, Ordering::Relaxed);
                shared.error(format!("submitting app {n}: {e}"));
            }
        }
    }
}

/// Submits the app numbers it receives, a few at a time, until `stop`.
fn submitter(
    fleet: Arc<Fleet>,
    shared: Arc<Shared>,
    mut numbers: mpsc::UnboundedReceiver<u64>,
    stop: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let gate = Arc::new(Semaphore::new(SUBMITTERS));
        while let Some(n) = numbers.recv().await {
            if *stop.borrow() {
                break;
            }
            let Ok(permit) = Arc::clone(&gate).acquire_owned().await else {
                break;
            };
            fleet.in_flight.fetch_add(1, Ordering::Relaxed);
            let (fleet, shared) = (Arc::clone(&fleet), Arc::clone(&shared));
            tokio::task::spawn_blocking(move || {
                fleet.submit(n, &shared);
                fleet.in_flight.fetch_sub(1, Ordering::Relaxed);
                drop(permit);
            });
        }
    })
}

/// Everything an AM task needs besides its launch.
struct AmContext {
    fleet: Arc<Fleet>,
    shared: Arc<Shared>,
    channels: Vec<Channel>,
    interval: Duration,
    /// AMs make unary Allocate calls even when the RM offers its stream.
    unary_allocates: bool,
    /// The RM's AM service address (`host:port`) when AMs take the framed transport the RM
    /// offers; `None` with `--grpc-streams` or `--unary-allocates`.
    framed_to: Option<String>,
    /// Shared framed connections AMs take lanes of, in turn; empty when AMs take their own
    /// framed connections or the gRPC stream.
    lanes: Vec<Arc<SharedAllocates>>,
    again: mpsc::UnboundedSender<u64>,
    stop: watch::Receiver<bool>,
}

/// Plays the AM of every app the RM launches; an app whose tasks all completed is replaced.
fn dispatcher(
    context: AmContext,
    mut launches: mpsc::UnboundedReceiver<AmLaunch>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let context = Arc::new(context);
        let mut count = 0usize;
        while let Some(launch) = launches.recv().await {
            let c = Arc::clone(&context);
            let plan = app_of_attempt(&launch.attempt_id)
                .and_then(|app| c.fleet.waiting.lock().ok().and_then(|mut w| w.remove(&app)));
            let Some(plan) = plan else {
                c.shared.error(format!(
                    "the RM launched attempt {} of an app the bench did not submit",
                    launch.attempt_id
                ));
                continue;
            };
            c.fleet.counters.pending.fetch_sub(1, Ordering::Relaxed);
            let group = &plan.stages[0].groups[0];
            let channel = c.channels[count % c.channels.len()].clone();
            let am = AppMaster {
                rm: ApplicationMasterProtocolClient::new(channel.clone())
                    .max_decoding_message_size(usize::MAX),
                channel,
                unary_allocates: c.unary_allocates,
                framed_to: c.framed_to.clone(),
                lanes: (!c.lanes.is_empty()).then(|| Arc::clone(&c.lanes[count % c.lanes.len()])),
                creds: AmCredentials {
                    attempt_id: launch.attempt_id.clone(),
                    token: launch.token.clone(),
                },
                container: launch.node.map(|n| (n, launch.container_id.clone())),
                tasks: Tasks {
                    count: group.count,
                    priority: group.priority,
                    memory_mb: group.resource.memory_mb(),
                    vcores: group.resource.vcores(),
                },
                interval: c.interval,
                shared: Arc::clone(&c.shared),
                counters: Arc::clone(&c.fleet.counters),
            };
            count += 1;
            tokio::spawn(async move {
                let result = am.run(c.stop.clone()).await;
                if result.completed && !*c.stop.borrow() {
                    let _ = c
                        .again
                        .send(c.fleet.next_app.fetch_add(1, Ordering::Relaxed));
                }
                if let Ok(mut r) = c.fleet.results.lock() {
                    r.push(result);
                }
                c.fleet.ams_done.fetch_add(1, Ordering::Relaxed);
            });
        }
    })
}

/// Files kept free beside the framed connections (gRPC channels, the store, logs, `/proc`).
const SPARE_FILES: usize = 2_000;

/// Open files this process may hold (its soft limit; the child RM inherits it), when known.
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Which simulated clients take the RM's framed transport: a connection each (where gRPC
/// shares one among many), so only while nodes' and AMs' connections fit the open-file limit
/// of this process and the RM (both hold one end of each); AMs give way first.
fn framed_clients(
    args: &RmBenchArgs,
    nodes: usize,
    ams: usize,
    limit: Option<usize>,
) -> (bool, bool) {
    let fits = |connections: usize| limit.is_none_or(|l| connections + SPARE_FILES <= l);
    let nodes_framed = !args.grpc_streams && !args.unary_heartbeats && fits(nodes);
    let ams_framed = !args.grpc_streams && !args.unary_allocates && fits(nodes + ams);
    (nodes_framed, ams_framed)
}

async fn drive(
    args: &RmBenchArgs,
    plan: &Plan,
    rm: &crate::rm_proc::RmAddresses,
    rm_pid: Option<u32>,
    child: Option<&RmProcess>,
) -> Result<(FleetReport, Option<u64>), BenchError> {
    let nodes = &plan.workload.nodes;
    let shared = Arc::new(Shared::new(nodes.len()));
    let (stop, stop_rx) = watch::channel(false);
    let (am_stop, am_stop_rx) = watch::channel(false);
    // Stops every task however this function returns.
    struct StopOnDrop(watch::Sender<bool>, watch::Sender<bool>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.send_replace(true);
            self.1.send_replace(true);
        }
    }
    let stop = StopOnDrop(am_stop, stop);
    let (cm_port, am_launches) = cm::serve(Arc::clone(&shared), stop_rx.clone()).await?;

    let limit = open_file_limit();
    let (nodes_framed, ams_framed) =
        framed_clients(args, nodes.len(), plan.apps.concurrent as usize, limit);
    if !args.grpc_streams {
        let limit = limit.unwrap_or(usize::MAX);
        if !nodes_framed && !args.unary_heartbeats {
            eprintln!("rm-bench: {} nodes' framed connections would pass the open-file limit ({limit}): nodes use the gRPC stream", nodes.len());
        }
        if !ams_framed && !args.unary_allocates {
            eprintln!("rm-bench: {} AMs' framed connections beside the nodes' would pass the open-file limit ({limit}): AMs share framed connections, {} to a connection", plan.apps.concurrent, args.per_connection);
        }
    }
    let mut channels = Vec::new();
    for _ in 0..nodes
        .len()
        .div_ceil(usize::try_from(args.per_connection).unwrap_or(usize::MAX))
    {
        channels.push(connect(&rm.tracker).await?);
    }
    let (registered_tx, registered_rx) = mpsc::channel(nodes.len().max(1));
    let gate = Arc::new(Semaphore::new(REGISTERING));
    let mut node_tasks: Vec<JoinHandle<NodeResult>> = Vec::with_capacity(nodes.len());
    for (index, node) in nodes.iter().enumerate() {
        let spec = NodeSpec {
            index,
            of: nodes.len(),
            memory_mb: node.capability.memory_mb(),
            vcores: node.capability.vcores(),
            rack: node.rack.clone(),
            cm_port,
            heartbeat: args.heartbeat_ms.map(Duration::from_millis),
            container_run: Duration::from_millis(plan.container_ms),
            container_jitter: args.container_jitter,
            stagger_first_fill: args.start == crate::Start::Steady,
            am_size: plan.apps.am.map_or((0, 0), |r| (r.memory_mb(), r.vcores())),
            full_statuses: args.full_statuses,
            unary_heartbeats: args.unary_heartbeats,
            framed_to: nodes_framed.then(|| rm.tracker.clone()),
        };
        let client = channels[index % channels.len()].clone();
        let start = nm::Start {
            registered: registered_tx.clone(),
            gate: Arc::clone(&gate),
            stop: stop_rx.clone(),
        };
        node_tasks.push(tokio::spawn(nm::run(
            spec,
            client,
            Arc::clone(&shared),
            start,
        )));
    }
    drop(registered_tx);
    tokio::time::timeout(SETUP_TIMEOUT, wait_registered(registered_rx, nodes.len()))
        .await
        .map_err(|_| {
            BenchError::Timeout(format!(
                "the simulated NMs did not register within {SETUP_TIMEOUT:?}"
            ))
        })??;

    let concurrent = u64::from(plan.apps.concurrent);
    let fleet = Arc::new(Fleet {
        rest: Arc::new(Rest::new(&rm.web)),
        apps: plan.apps.clone(),
        counters: Arc::new(FleetCounters::default()),
        waiting: Mutex::new(HashMap::new()),
        next_app: AtomicU64::new(concurrent),
        submitted: AtomicU64::new(0),
        submissions: Mutex::new(Vec::new()),
        submit_failures: AtomicU64::new(0),
        in_flight: AtomicU64::new(0),
        ams_done: AtomicU64::new(0),
        results: Mutex::new(Vec::new()),
    });
    let mut am_channels = Vec::new();
    for _ in 0..(plan.apps.concurrent as usize)
        .div_ceil(usize::try_from(args.per_connection).unwrap_or(usize::MAX))
    {
        am_channels.push(connect(&rm.scheduler).await?);
    }
    // AMs that cannot have a framed connection each share them (unless told to take gRPC).
    let am_lanes = if !ams_framed && !args.grpc_streams && !args.unary_allocates {
        (0..am_channels.len())
            .map(|_| Arc::new(SharedAllocates::new(&rm.scheduler, usize::MAX)))
            .collect()
    } else {
        Vec::new()
    };
    let (numbers, numbers_rx) = mpsc::unbounded_channel();
    let submit_task = submitter(
        Arc::clone(&fleet),
        Arc::clone(&shared),
        numbers_rx,
        am_stop_rx.clone(),
    );
    let dispatch_task = dispatcher(
        AmContext {
            fleet: Arc::clone(&fleet),
            shared: Arc::clone(&shared),
            channels: am_channels,
            interval: Duration::from_millis(plan.am_interval_ms),
            unary_allocates: args.unary_allocates,
            framed_to: ams_framed.then(|| rm.scheduler.clone()),
            lanes: am_lanes,
            again: numbers.clone(),
            stop: am_stop_rx.clone(),
        },
        am_launches,
    );

    let samples = Arc::new(Samples::default());
    let (samplers_stop, samplers_stop_rx) = watch::channel(false);
    let tick_reader = {
        let (fleet, shared) = (Arc::clone(&fleet), Arc::clone(&shared));
        move || read_tick(&fleet, &shared, rm_pid)
    };
    let mut samplers = vec![sampler::ticker(
        Arc::clone(&samples),
        tick_reader,
        samplers_stop_rx.clone(),
    )];
    if !args.scrape_every.is_zero() {
        samplers.push(sampler::scraper(
            Arc::clone(&samples),
            Arc::clone(&fleet.rest),
            Arc::clone(&shared),
            args.scrape_every,
            samplers_stop_rx,
        ));
    }
    let mut observations = vec![observe(&fleet, &shared, rm_pid).await];
    let started = tokio::time::Instant::now();
    let start_ms = shared.now_ms();
    for n in 0..concurrent {
        let _ = numbers.send(n);
    }
    let run = args.warmup + args.duration;
    let end = started + run;
    let mut next = started + args.observe_every;
    let mut minute_shown = 0;
    while next < end {
        tokio::time::sleep_until(next).await;
        next += args.observe_every;
        let o = observe(&fleet, &shared, rm_pid).await;
        let minute = schedule_minute(o.at_ms.saturating_sub(start_ms));
        if minute > minute_shown && !args.json {
            eprintln!("rm-bench: minute {minute_shown} done");
            minute_shown = minute;
        }
        observations.push(o);
    }
    tokio::time::sleep_until(end).await;
    observations.push(observe(&fleet, &shared, rm_pid).await);
    let stop_ms = shared.close_window();
    // The load goes on until every heartbeat and Allocate sent inside the window has its
    // answer: the teardown below (every AM unregistering at once) is a storm of its own, and
    // requests still waiting when it begins would be measured in it.
    let settle = tokio::time::Instant::now() + SETTLE;
    while shared.window_requests_open() > 0 {
        if tokio::time::Instant::now() >= settle {
            shared.error(format!(
                "{} requests sent inside the window were unanswered {SETTLE:?} after it",
                shared.window_requests_open()
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // The AMs unregister (the RM stops their containers); AMs launched from now on register
    // and unregister at once, so every app submitted ends.
    stop.0.send_replace(true);
    drop(numbers);
    let wind_down = tokio::time::Instant::now() + WIND_DOWN;
    loop {
        let done = fleet.in_flight.load(Ordering::Relaxed) == 0
            && fleet.ams_done.load(Ordering::Relaxed) >= fleet.submitted.load(Ordering::Relaxed);
        if done {
            break;
        }
        if tokio::time::Instant::now() >= wind_down {
            shared.error(format!(
                "{} of {} apps' AMs had not ended {WIND_DOWN:?} after the run",
                fleet
                    .submitted
                    .load(Ordering::Relaxed)
                    .saturating_sub(fleet.ams_done.load(Ordering::Relaxed)),
                fleet.submitted.load(Ordering::Relaxed)
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The timeline goes on through the wind-down (every AM unregistering at once is a storm
    // of its own); a last look, then the samplers end (a scrape in flight is dropped).
    if let Ok(mut ticks) = samples.ticks.lock() {
        ticks.push(read_tick(&fleet, &shared, rm_pid));
    }
    let wound_down_ms = shared.now_ms();
    samplers_stop.send_replace(true);
    for s in samplers {
        s.abort();
    }
    let client = Arc::clone(&fleet.rest);
    let unfinished = tokio::task::spawn_blocking(move || {
        client.get(
            "list apps",
            "/ws/v1/cluster/apps?states=NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING",
        )
    })
    .await
    .map_err(|e| BenchError::Rm(format!("app listing task failed: {e}")))??;
    let apps_unfinished = unfinished
        .pointer("/apps/app")
        .and_then(Value::as_array)
        .map_or(0, |apps| {
            apps.iter()
                .filter(|a| {
                    a.get("applicationType").and_then(Value::as_str) == Some(APPLICATION_TYPE)
                })
                .count() as u64
        });
    // What the NMs' own shutdown provokes in the RM's log is left out.
    let log_mark = child.map(RmProcess::log_len);
    stop.1.send_replace(true);
    submit_task.abort();
    dispatch_task.abort();
    // Counted from the stop (not from the wind-down's start): after a wind-down that ran to
    // its bound and a slow app listing, an earlier deadline had passed before the nodes were
    // told, and every node's heartbeat figures were lost.
    let nodes_deadline = tokio::time::Instant::now() + NODES_STOP;
    let mut node_results = Vec::with_capacity(node_tasks.len());
    for n in node_tasks {
        match tokio::time::timeout_at(nodes_deadline, n).await {
            Ok(Ok(r)) => node_results.push(r),
            _ => shared.error("a simulated NM did not stop in time".into()),
        }
    }
    let results = fleet
        .results
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default();
    let (ticks, scrapes, scrape_failures) = samples.take();
    let report = assemble(&Assembly {
        args,
        ticks: &ticks,
        scrapes: &scrapes,
        scrape_failures,
        plan,
        start_ms,
        stop_ms,
        wound_down_ms,
        observations: &observations,
        nodes: &node_results,
        apps: &results,
        fleet: &fleet,
        apps_unfinished,
        shared: &shared,
    });
    Ok((report, log_mark))
}

struct Assembly<'a> {
    args: &'a RmBenchArgs,
    ticks: &'a [Tick],
    scrapes: &'a [timeline::Scrape],
    scrape_failures: u64,
    plan: &'a Plan,
    start_ms: u64,
    stop_ms: u64,
    /// When every AM had ended after the stop (or the wind-down's bound passed).
    wound_down_ms: u64,
    observations: &'a [Observation],
    nodes: &'a [NodeResult],
    apps: &'a [AppResult],
    fleet: &'a Fleet,
    apps_unfinished: u64,
    shared: &'a Shared,
}

/// The core's time and the RM's CPU per heartbeat between the first and the last scrape
/// inside the measured window (from `from_ms` to the stop).
fn core_share(a: &Assembly<'_>, heartbeats: &[Sample], from_ms: u64) -> Option<CoreShare> {
    let mut inside = a
        .scrapes
        .iter()
        .filter(|s| s.at_ms >= from_ms && s.at_ms <= a.stop_ms);
    let first = inside.next()?;
    let last = inside.next_back()?;
    let answered = percentiles(heartbeats, first.at_ms, last.at_ms).count as u64;
    let rm_seconds = cpu_between(a.observations, first.at_ms, last.at_ms).rm_seconds?;
    share_between(first, last, answered, rm_seconds, a.start_ms)
}

/// [`CoreShare`] from two scrapes, the heartbeats answered between them and the RM's CPU
/// seconds over the same time (`start_ms`: the first submission, for the report's times).
fn share_between(
    first: &timeline::Scrape,
    last: &timeline::Scrape,
    answered: u64,
    rm_seconds: f64,
    start_ms: u64,
) -> Option<CoreShare> {
    let core_seconds: f64 = last
        .driver
        .kinds
        .iter()
        .map(|(kind, (_, seconds))| {
            let before = first.driver.kinds.get(kind).map_or(0.0, |(_, s)| *s);
            (seconds - before).max(0.0)
        })
        .sum();
    let rm_us = micros_per(Some(rm_seconds), answered)?;
    let core_us = micros_per(Some(core_seconds), answered)?;
    let since_start = |t: u64| t.saturating_sub(start_ms) as f64 / 1000.0;
    Some(CoreShare {
        from_s: since_start(first.at_ms),
        to_s: since_start(last.at_ms),
        heartbeats: answered,
        core_us_per_heartbeat: core_us,
        rm_cpu_us_per_heartbeat: rm_us,
        rm_over_core: if core_us > 0.0 { rm_us / core_us } else { 0.0 },
    })
}

/// Per-second CPU and per-event CPU between the observations at or before `from` and `to`.
struct CpuBetween {
    rm_cores: Option<f64>,
    bench_cores: Option<f64>,
    rm_seconds: Option<f64>,
}

fn cpu_between(observations: &[Observation], from_ms: u64, to_ms: u64) -> CpuBetween {
    let at_or_before = |t: u64| {
        observations
            .iter()
            .rfind(|o| o.at_ms <= t)
            .or(observations.first())
    };
    let (Some(a), Some(b)) = (at_or_before(from_ms), at_or_before(to_ms)) else {
        return CpuBetween {
            rm_cores: None,
            bench_cores: None,
            rm_seconds: None,
        };
    };
    let wall = b.at_ms.saturating_sub(a.at_ms) as f64 / 1000.0;
    let delta = |x: Option<f64>, y: Option<f64>| Some(y? - x?);
    let rm_seconds = delta(a.rm_cpu, b.rm_cpu);
    let per_wall = |d: Option<f64>| (wall > 0.0).then_some(d?).map(|d| d / wall);
    CpuBetween {
        rm_cores: per_wall(rm_seconds),
        bench_cores: per_wall(delta(a.bench_cpu, b.bench_cpu)),
        rm_seconds: (wall > 0.0).then_some(rm_seconds).flatten(),
    }
}

fn micros_per(seconds: Option<f64>, events: u64) -> Option<f64> {
    (events > 0).then(|| seconds.map(|s| s * 1e6 / events as f64))?
}

fn mib(bytes: Option<u64>) -> Option<f64> {
    bytes.map(|b| b as f64 / (1024.0 * 1024.0))
}

fn assemble(a: &Assembly<'_>) -> FleetReport {
    let heartbeats: Vec<Sample> = a
        .nodes
        .iter()
        .flat_map(|n| n.heartbeats.iter().copied())
        .collect();
    let allocates: Vec<Sample> = a
        .apps
        .iter()
        .flat_map(|r| r.allocates.iter().copied())
        .collect();
    let finishes: Vec<Sample> = a.apps.iter().filter_map(|r| r.finish).collect();
    let mut allocated = Timeline::default();
    for r in a.apps {
        allocated.extend(&r.allocated);
    }
    let mut late = Timeline::default();
    let mut completed = Timeline::default();
    for n in a.nodes {
        late.extend(&n.late);
        completed.extend(&n.completed);
    }
    let submissions = a
        .fleet
        .submissions
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    let usage: Vec<(u64, Option<f64>)> =
        a.observations.iter().map(|o| (o.at_ms, o.usage)).collect();
    let timeline = timeline::build(&timeline::Inputs {
        start_ms: a.start_ms,
        stop_ms: a.stop_ms,
        end_ms: a.wound_down_ms.max(a.stop_ms),
        heartbeats: &heartbeats,
        allocates: &allocates,
        finishes: &finishes,
        submissions: &submissions,
        allocated: &allocated,
        completed: &completed,
        late: &late,
        ticks: a.ticks,
        usage: &usage,
        scrapes: a.scrapes,
        scrape_failures: a.scrape_failures,
    });
    let run_ms = a.stop_ms.saturating_sub(a.start_ms);
    let mut minutes = Vec::new();
    // A last minute of under a second is timer slack, not a minute of figures.
    for minute in 0..(run_ms + 59_000) / 60_000 {
        let from = a.start_ms + minute * 60_000;
        let to = (from + 60_000).min(a.stop_ms);
        let seen: Vec<&Observation> = a
            .observations
            .iter()
            .filter(|o| o.at_ms > a.start_ms && schedule_minute(o.at_ms - a.start_ms) == minute)
            .collect();
        let usages: Vec<f64> = seen.iter().filter_map(|o| o.usage).collect();
        let judged: Vec<bool> = seen
            .iter()
            .filter_map(|o| o.usage.map(|u| valid_schedule(u, o.valid_pending)))
            .collect();
        let heartbeat_latency = percentiles(&heartbeats, from, to);
        let allocs = allocated.count(from, to);
        let cpu = cpu_between(a.observations, from, to);
        let late_count = late.count(from, to);
        let seconds = to.saturating_sub(from) as f64 / 1000.0;
        let mut why = Vec::new();
        if let Some(c) = cpu.bench_cores.filter(|c| *c >= BENCH_BUSY_CORES) {
            why.push(format!("it used {c:.2} cores (near a whole core)"));
        }
        let concurrent = u64::from(a.plan.apps.concurrent);
        if let Some(live) = seen.last().map(|o| o.live_apps).filter(|l| *l < concurrent) {
            why.push(format!(
                "only {live} of {concurrent} apps were submitted and running at the minute's end (submissions lagging)"
            ));
        }
        let sent = heartbeat_latency.count as u64;
        if sent > 0 && late_count as f64 > LATE_FRACTION * sent as f64 {
            why.push(format!(
                "{late_count} of {sent} heartbeats were sent more than {:?} late",
                nm::LATE
            ));
        }
        minutes.push(MinuteRow {
            minute,
            seconds,
            usage_min: usages.iter().copied().reduce(f64::min),
            usage_last: usages.last().copied(),
            valid_schedule: (!judged.is_empty()).then(|| judged.iter().all(|v| *v)),
            observations: seen.len(),
            allocated: allocs,
            containers_per_sec: allocs as f64 / seconds.max(1e-9),
            rm_cpu_us_per_heartbeat: micros_per(cpu.rm_seconds, sent),
            rm_cpu_us_per_allocation: micros_per(cpu.rm_seconds, allocs),
            heartbeat_latency,
            allocate_latency: percentiles(&allocates, from, to),
            rm_cores: cpu.rm_cores,
            bench_cores: cpu.bench_cores,
            rm_rss_mib: mib(seen.last().and_then(|o| o.rm_rss)),
            late_heartbeats: late_count,
            bench_bottleneck: (!why.is_empty()).then(|| why.join("; ")),
        });
    }
    let valid_schedule_minutes: Vec<u8> = minutes
        .iter()
        .filter_map(|m| m.valid_schedule.map(u8::from))
        .collect();
    let from = a.start_ms + u64::try_from(a.args.warmup.as_millis()).unwrap_or(0);
    let total_cpu = cpu_between(a.observations, from, a.stop_ms);
    let heartbeat_latency = percentiles(&heartbeats, from, a.stop_ms);
    let total_allocated = allocated.count(from, a.stop_ms);
    let (errors, first_errors) = a.shared.errors();
    let f = a.fleet;
    FleetReport {
        preset: a.plan.name.clone(),
        scale: a.plan.scale,
        nodes: a.plan.workload.nodes.len(),
        node_memory_mb: a
            .plan
            .workload
            .nodes
            .first()
            .map_or(0, |n| n.capability.memory_mb()),
        node_vcores: a
            .plan
            .workload
            .nodes
            .first()
            .map_or(0, |n| n.capability.vcores()),
        apps: a.plan.apps.concurrent,
        queues: a.plan.apps.queues.len(),
        container_ms: a.plan.container_ms,
        container_jitter: a.args.container_jitter,
        start: a.args.start,
        heartbeat_ms: a
            .nodes
            .first()
            .map_or(a.plan.heartbeat_ms, |n| n.interval_ms),
        am_interval_ms: a.plan.am_interval_ms,
        pinned: None,
        rm_worker_threads: None,
        run_s: run_ms as f64 / 1000.0,
        valid_after_first_minute: valid_schedule_minutes.iter().skip(1).all(|v| *v == 1),
        valid_schedule_minutes,
        minutes,
        timeline,
        allocated: total_allocated,
        rm_cpu_us_per_heartbeat: micros_per(total_cpu.rm_seconds, heartbeat_latency.count as u64),
        rm_cpu_us_per_allocation: micros_per(total_cpu.rm_seconds, total_allocated),
        core_share: core_share(a, &heartbeats, from),
        heartbeat_latency,
        allocate_latency: percentiles(&allocates, from, a.stop_ms),
        finish_latency: percentiles(&finishes, 0, u64::MAX),
        finish_latency_in_run: percentiles(&finishes, 0, a.stop_ms),
        rm_cores: total_cpu.rm_cores,
        rm_peak_rss_mib: mib(a.observations.iter().filter_map(|o| o.rm_peak_rss).max()),
        apps_submitted: f.submitted.load(Ordering::Relaxed),
        apps_completed: f.counters.completed_apps.load(Ordering::Relaxed),
        apps_stopped: f.counters.stopped_apps.load(Ordering::Relaxed),
        apps_failed: f.counters.failed_apps.load(Ordering::Relaxed)
            + f.submit_failures.load(Ordering::Relaxed),
        apps_unfinished: a.apps_unfinished,
        resyncs: a.nodes.iter().map(|n| n.resyncs).sum(),
        unroutable: a.apps.iter().map(|r| r.unroutable).sum(),
        errors,
        first_errors,
        rm_warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn attempts_name_their_app() {
        assert_eq!(
            app_of_attempt("appattempt_1700000000000_0042_000001").as_deref(),
            Some("application_1700000000000_0042")
        );
        assert_eq!(app_of_attempt("container_1_2_3"), None);
    }

    #[test]
    fn framed_clients_fit_the_open_file_limit_nodes_first() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            bench: RmBenchArgs,
        }
        let args = |extra: &[&str]| {
            Cli::parse_from(std::iter::once("b").chain(extra.iter().copied())).bench
        };
        let plain = args(&[]);
        assert_eq!(
            framed_clients(&plain, 1_200, 1_000, Some(20_000)),
            (true, true)
        );
        assert_eq!(
            framed_clients(&plain, 12_000, 10_000, Some(20_000)),
            (true, false)
        );
        assert_eq!(
            framed_clients(&plain, 19_000, 0, Some(20_000)),
            (false, false)
        );
        assert_eq!(framed_clients(&plain, 12_000, 10_000, None), (true, true));
        let grpc = args(&["--grpc-streams"]);
        assert_eq!(framed_clients(&grpc, 10, 10, None), (false, false));
        let unary = args(&["--unary-allocates"]);
        assert_eq!(framed_clients(&unary, 10, 10, None), (true, false));
        assert!(open_file_limit().is_some_and(|n| n > 0));
    }

    #[test]
    fn usage_is_the_larger_share_of_memory_and_vcores() {
        let m = json!({"clusterMetrics": {"allocatedMB": 50, "totalMB": 100,
            "allocatedVirtualCores": 9, "totalVirtualCores": 10}});
        assert_eq!(cluster_usage(&m), Some(0.9));
        let empty = json!({"clusterMetrics": {"allocatedMB": 0, "totalMB": 0}});
        assert_eq!(cluster_usage(&empty), None);
    }

    /// The core's seconds are summed over every kind (one seen only in the last scrape
    /// counts from zero), and both figures are per heartbeat answered between the scrapes.
    #[test]
    fn core_share_sums_every_kind_between_two_scrapes() {
        let scrape = |at_ms, kinds: &[(&str, f64)]| timeline::Scrape {
            at_ms,
            driver: timeline::DriverCounters {
                kinds: kinds
                    .iter()
                    .map(|(k, s)| ((*k).to_string(), (0.0, *s)))
                    .collect(),
                ..Default::default()
            },
            ..Default::default()
        };
        let first = scrape(
            20_000,
            &[("node_update", 1.0), ("tracker.node_heartbeat", 2.0)],
        );
        let last = scrape(
            50_000,
            &[
                ("node_update", 2.5),
                ("tracker.node_heartbeat", 3.0),
                ("verify", 0.5),
            ],
        );
        let share = share_between(&first, &last, 300_000, 15.0, 5_000).expect("heartbeats");
        assert_eq!((share.from_s, share.to_s), (15.0, 45.0));
        assert_eq!(share.heartbeats, 300_000);
        assert!((share.core_us_per_heartbeat - 10.0).abs() < 1e-9);
        assert!((share.rm_cpu_us_per_heartbeat - 50.0).abs() < 1e-9);
        assert!((share.rm_over_core - 5.0).abs() < 1e-9);
        assert_eq!(share_between(&first, &last, 0, 15.0, 0), None);
    }

    #[test]
    fn cpu_between_brackets_with_the_observations_before_each_edge() {
        let o = |at_ms, rm| Observation {
            at_ms,
            rm_cpu: Some(rm),
            bench_cpu: Some(0.0),
            ..Observation::default()
        };
        let obs = [o(0, 0.0), o(30_000, 15.0), o(60_000, 30.0), o(65_000, 40.0)];
        let c = cpu_between(&obs, 0, 60_000);
        assert_eq!(c.rm_cores, Some(0.5));
        assert_eq!(c.rm_seconds, Some(30.0));
        assert_eq!(micros_per(c.rm_seconds, 300_000), Some(100.0));
        assert_eq!(micros_per(c.rm_seconds, 0), None);
    }
}
