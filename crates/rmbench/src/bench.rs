//! One benchmark run: RM up, NMs registered, app submitted, AM launched and greedy, a warm-up,
//! a measured window, then the figures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};
use weft_proto::auth::AmCredentials;

use crate::am::{Am, AmResult, AmSpec};
use crate::cm;
use crate::error::BenchError;
use crate::nm::{self, NodeResult, NodeSpec};
use crate::report::{Cpu, Report};
use crate::rest;
use crate::rm_proc::{
    checked_against_child, load_average, machine_cpu_seconds, process_cpu_seconds, target_rm,
    RmAddresses, RmProcess, RmSetup,
};
use crate::shared::Shared;
use crate::stats::{percentiles, Sample, Timeline};
use crate::RmBenchArgs;

/// Bound on registering every node, submitting, and the AM launch each.
const SETUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound on the tasks winding down after the window.
const WIND_DOWN: Duration = Duration::from_secs(15);
/// Simulated NMs per tracker connection unless --connections says otherwise.
pub(crate) const NMS_PER_CONNECTION: usize = 100;
/// Simulated NMs registering at the same time.
pub(crate) const REGISTERING: usize = 64;
/// HTTP/2 receive windows: an Allocate answer can carry hundreds of thousands of containers
/// (tens of MB); with the 64 KiB default every window has to be refilled by a round trip
/// between two busy runtimes, and one answer took longer than the whole run.
const WINDOW: u32 = 32 << 20;
/// Bench runtime threads (the machine is small and shared with the RM).
pub(crate) const WORKERS: usize = 2;

fn validate(args: &RmBenchArgs) -> Result<i64, BenchError> {
    if args.nms == 0 {
        return Err(BenchError::Args("--nms must be at least 1".into()));
    }
    if args.container_memory_mb <= 0 || args.container_vcores <= 0 {
        return Err(BenchError::Args("container sizes must be positive".into()));
    }
    let slots = (args.node_memory_mb / args.container_memory_mb)
        .min(args.node_vcores / args.container_vcores);
    if slots < 1 {
        return Err(BenchError::Args(
            "a container does not fit on a node (--node-* vs --container-*)".into(),
        ));
    }
    if args.duration.is_zero() {
        return Err(BenchError::Args("--duration must be positive".into()));
    }
    Ok(slots)
}

/// Runs the benchmark described by `args` and returns its figures.
pub fn bench(args: &RmBenchArgs) -> Result<Report, BenchError> {
    let slots = validate(args)?;
    let properties = args.rm_properties(Vec::new())?;
    let (addresses, rm_pid, mut child) = target_rm(args, |binary| RmSetup {
        binary,
        heartbeat_ms: args.heartbeat_ms.unwrap_or(1000),
        assign_multiple: !args.no_assign_multiple,
        max_assign: Some(args.max_assign),
        allocations_xml: None,
        properties: properties.clone(),
        worker_threads: args.rm_worker_threads(),
        cpu: None,
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .map_err(BenchError::io("cannot start the async runtime"))?;
    let result = runtime.block_on(drive(args, slots, &addresses, rm_pid, child.as_ref()));
    runtime.shutdown_timeout(Duration::from_secs(2));
    let mut report = checked_against_child(&mut child, result)?;
    if let (Some(c), Some(until)) = (&child, report.rm_log_mark) {
        report.rm_warnings = c.warnings(until);
    }
    Ok(report)
}

pub(crate) async fn connect(address: &str) -> Result<Channel, BenchError> {
    let url = if address.starts_with("http://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    Endpoint::from_shared(url)
        .map_err(|e| BenchError::Args(format!("bad address {address}: {e}")))?
        .connect_timeout(Duration::from_secs(10))
        .tcp_nodelay(true)
        .initial_stream_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .connect()
        .await
        .map_err(|e| BenchError::Rm(format!("cannot connect to {address}: {e}")))
}

/// CPU counters at one instant.
struct CpuSample {
    at: Instant,
    rm: Option<f64>,
    bench: Option<f64>,
    machine: Option<(f64, f64)>,
}

fn cpu_sample(rm_pid: Option<u32>) -> CpuSample {
    CpuSample {
        at: crate::clock::now(),
        rm: rm_pid.and_then(|p| process_cpu_seconds(&p.to_string())),
        bench: process_cpu_seconds("self"),
        machine: machine_cpu_seconds(),
    }
}

fn cpu_between(a: &CpuSample, b: &CpuSample) -> Cpu {
    let wall = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let per_wall = |x: Option<f64>, y: Option<f64>| Some((y? - x?) / wall);
    let count = std::thread::available_parallelism().map_or(1, |n| n.get());
    Cpu {
        rm_cores: per_wall(a.rm, b.rm),
        bench_cores: per_wall(a.bench, b.bench),
        // /proc/stat's busy time over its total time, scaled to cores.
        machine_cores: match (a.machine, b.machine) {
            (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
                Some((b1 - b0) / (t1 - t0) * count as f64)
            }
            _ => None,
        },
        machine_core_count: count,
        load_average: load_average(),
    }
}

pub(crate) async fn wait_registered(
    mut rx: mpsc::Receiver<()>,
    nms: usize,
) -> Result<(), BenchError> {
    let deadline = tokio::time::Instant::now() + SETUP_TIMEOUT;
    let mut n = 0;
    while n < nms {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(())) => n += 1,
            Ok(None) | Err(_) => {
                return Err(BenchError::Timeout(format!(
                    "only {n} of {nms} simulated NMs registered within {SETUP_TIMEOUT:?}"
                )))
            }
        }
    }
    Ok(())
}

async fn drive(
    args: &RmBenchArgs,
    slots: i64,
    rm: &RmAddresses,
    rm_pid: Option<u32>,
    child: Option<&RmProcess>,
) -> Result<Report, BenchError> {
    let shared = Arc::new(Shared::new(args.nms));
    let (stop, stop_rx) = watch::channel(false);
    // Stops every task however this function returns.
    struct StopOnDrop(watch::Sender<bool>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.send_replace(true);
        }
    }
    let stop = StopOnDrop(stop);
    let (cm_port, mut am_launches) = cm::serve(Arc::clone(&shared), stop_rx.clone()).await?;

    let connections = match args.connections {
        0 => args.nms.div_ceil(NMS_PER_CONNECTION),
        n => n,
    };
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections {
        channels.push(connect(&rm.tracker).await?);
    }
    let (registered_tx, registered_rx) = mpsc::channel(args.nms);
    let gate = Arc::new(Semaphore::new(REGISTERING));
    let mut nodes: Vec<JoinHandle<NodeResult>> = Vec::with_capacity(args.nms);
    for index in 0..args.nms {
        let spec = NodeSpec {
            index,
            of: args.nms,
            memory_mb: args.node_memory_mb,
            vcores: args.node_vcores,
            rack: "/default-rack".into(),
            cm_port,
            heartbeat: args.heartbeat_ms.map(Duration::from_millis),
            container_run: Duration::from_millis(args.container_ms.unwrap_or(0)),
            container_jitter: args.container_jitter,
            stagger_first_fill: false,
            am_size: (0, 0),
            full_statuses: args.full_statuses,
            unary_heartbeats: args.unary_heartbeats,
            framed_to: (!args.grpc_streams && !args.unary_heartbeats).then(|| rm.tracker.clone()),
        };
        let client = channels[index % channels.len()].clone();
        let start = nm::Start {
            registered: registered_tx.clone(),
            gate: Arc::clone(&gate),
            stop: stop_rx.clone(),
        };
        nodes.push(tokio::spawn(nm::run(
            spec,
            client,
            Arc::clone(&shared),
            start,
        )));
    }
    drop(registered_tx);
    wait_registered(registered_rx, args.nms).await?;

    let (web, queue) = (rm.web.clone(), args.queue.clone());
    let (memory, vcores) = (args.container_memory_mb, args.container_vcores);
    tokio::task::spawn_blocking(move || rest::Rest::new(&web).submit(None, &queue, memory, vcores))
        .await
        .map_err(|e| BenchError::Rm(format!("submission task failed: {e}")))??;
    let launch = tokio::time::timeout(SETUP_TIMEOUT, am_launches.recv())
        .await
        .ok()
        .flatten()
        .ok_or_else(|| {
            BenchError::Timeout(format!(
                "the RM launched no AM container within {SETUP_TIMEOUT:?}"
            ))
        })?;
    let scheduler = launch
        .scheduler
        .clone()
        .unwrap_or_else(|| rm.scheduler.clone());
    let am = Am::register(
        connect(&scheduler).await?,
        AmCredentials {
            attempt_id: launch.attempt_id.clone(),
            token: launch.token.clone(),
        },
        AmSpec {
            memory_mb: args.container_memory_mb,
            vcores: args.container_vcores,
            interval: Duration::from_millis(args.am_interval_ms.unwrap_or(0)),
            unary_allocates: args.unary_allocates,
            framed_to: (!args.grpc_streams && !args.unary_allocates).then(|| scheduler.clone()),
        },
        Arc::clone(&shared),
    )
    .await?;

    let start_ms = shared.now_ms();
    let am_task = tokio::spawn(am.run(stop_rx.clone()));
    tokio::time::sleep(args.warmup).await;
    let from_ms = shared.now_ms();
    let before = cpu_sample(rm_pid);
    tokio::time::sleep(args.duration).await;
    let to_ms = shared.now_ms();
    let after = cpu_sample(rm_pid);
    let rm_log_mark = child.map(RmProcess::log_len);
    stop.0.send_replace(true);

    let wind_down = tokio::time::Instant::now() + WIND_DOWN;
    let am_result = match tokio::time::timeout_at(wind_down, am_task).await {
        Ok(Ok(r)) => r,
        _ => {
            shared.error("the AM did not stop in time".into());
            AmResult::default()
        }
    };
    let mut node_results = Vec::with_capacity(nodes.len());
    for n in nodes {
        match tokio::time::timeout_at(wind_down, n).await {
            Ok(Ok(r)) => node_results.push(r),
            _ => shared.error("a simulated NM did not stop in time".into()),
        }
    }
    let mut report = assemble(Assembly {
        args,
        connections,
        slots,
        start_ms,
        from_ms,
        to_ms,
        am: &am_result,
        nodes: &node_results,
        cpu: cpu_between(&before, &after),
        shared: &shared,
    });
    report.rm_log_mark = rm_log_mark;
    Ok(report)
}

/// Everything the report is computed from.
struct Assembly<'a> {
    args: &'a RmBenchArgs,
    connections: usize,
    slots: i64,
    start_ms: u64,
    from_ms: u64,
    to_ms: u64,
    am: &'a AmResult,
    nodes: &'a [NodeResult],
    cpu: Cpu,
    shared: &'a Shared,
}

fn assemble(a: Assembly<'_>) -> Report {
    let (from, to) = (a.from_ms, a.to_ms);
    let window_s = (to.saturating_sub(from) as f64 / 1000.0).max(1e-9);
    let heartbeat_samples: Vec<Sample> = a
        .nodes
        .iter()
        .flat_map(|n| n.heartbeats.iter().copied())
        .collect();
    let mut completions = Timeline::default();
    for n in a.nodes {
        completions.extend(&n.completed);
    }
    let heartbeat_latency = percentiles(&heartbeat_samples, from, to);
    let allocate_latency = percentiles(&a.am.allocates, from, to);
    let allocated = a.am.allocated.count(from, to);
    let heartbeats = heartbeat_latency.count as u64;
    let allocates = allocate_latency.count as u64;
    let heartbeats_per_sec = heartbeats as f64 / window_s;
    let (errors, first_errors) = a.shared.errors();
    Report {
        nms: a.args.nms,
        connections: a.connections,
        node_memory_mb: a.args.node_memory_mb,
        node_vcores: a.args.node_vcores,
        container_memory_mb: a.args.container_memory_mb,
        container_vcores: a.args.container_vcores,
        slots_per_node: a.slots,
        container_ms: a.args.container_ms.unwrap_or(0),
        heartbeat_ms: a.nodes.first().map_or(0, |n| n.interval_ms),
        warmup_s: from.saturating_sub(a.start_ms) as f64 / 1000.0,
        window_s,
        allocated,
        containers_per_sec: allocated as f64 / window_s,
        peak_1s: a.am.allocated.peak_1s(from, to),
        allocated_total: a.am.allocated.count(0, u64::MAX),
        per_second: a.am.allocated.per_second(a.start_ms, to),
        completions_reported: completions.count(from, to),
        heartbeats,
        heartbeats_per_sec,
        containers_per_heartbeat: allocated as f64 / (heartbeats.max(1) as f64),
        heartbeat_bound_per_sec: heartbeats_per_sec * a.slots as f64,
        allocates,
        allocates_per_sec: allocates as f64 / window_s,
        containers_per_allocate: allocated as f64 / (allocates.max(1) as f64),
        heartbeat_latency,
        allocate_latency,
        cpu: a.cpu,
        resyncs: a.nodes.iter().map(|n| n.resyncs).sum(),
        unroutable: a.am.unroutable,
        errors,
        first_errors,
        rm_warnings: Vec::new(),
        rm_log_mark: None,
    }
}
