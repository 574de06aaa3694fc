//! The Weft ResourceManager daemon (`weft rm`).
//!
//! One task (the driver) owns the sans-IO [`weft_rm_core::RmCore`]; the gRPC services (AM
//! service on 8030, resource tracker on 8031), Hadoop IPC's ApplicationClientProtocol (8032)
//! and ApplicationMasterProtocol (8030 too: one port, two protocols) and the REST API (8088)
//! send it jobs and answer
//! only after the state store has recorded what the job changed. A ticker drives liveness and
//! the scheduler's update; the allocation file is polled and reloaded when it changes.

mod allocate_stream;
mod am_service;
mod clock;
mod demand_settings;
mod driver;
mod framed;
mod framed_lanes;
#[doc(hidden)]
pub mod fuzzing;
mod groups;
mod hadoop;
mod heartbeat_stream;
mod metrics;
mod nm_stops;
mod reload;
mod rest;
mod settings;
mod shared_port;
mod status;
mod store_writer;
mod tracker;
mod verification;
mod web;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tonic::transport::Server;
use weft_proto::v1::allocate_streams_server::AllocateStreamsServer;
use weft_proto::v1::application_master_protocol_server::ApplicationMasterProtocolServer;
use weft_proto::v1::node_heartbeats_server::NodeHeartbeatsServer;
use weft_proto::v1::resource_tracker_server::ResourceTrackerServer;
use weft_rm_core::{RmConfig, RmCore};
use weft_sched::SchedulerConfig;
use weft_store::{RedbStore, StateStore};
use weft_types::Duration as CoreDuration;

pub use settings::{Settings, SettingsError, CAPACITY_FILE};

/// How often the core's `tick` runs (liveness, the scheduler update when due).
const TICK: Duration = Duration::from_millis(100);

/// `weft rm` flags.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RmArgs {
    /// A TOML configuration file (addresses, data_dir, allocations, yarn_site, conf_dir,
    /// expiries, and a [properties] table of yarn-site names).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Hadoop's yarn-site.xml.
    #[arg(long = "yarn-site")]
    pub yarn_site: Option<PathBuf>,
    /// The Fair Scheduler allocation file (fair-scheduler.xml), reloaded when it changes.
    #[arg(long)]
    pub allocations: Option<PathBuf>,
    /// The scheduler: fair, capacity, fifo, or one of Hadoop's class names (sets
    /// yarn.resourcemanager.scheduler.class over the TOML and yarn-site.xml; default fair).
    #[arg(long)]
    pub scheduler: Option<String>,
    /// The configuration directory (Hadoop's HADOOP_CONF_DIR): the Capacity Scheduler reads
    /// capacity-scheduler.xml here [default: --yarn-site's directory, else --config's, else
    /// the current directory].
    #[arg(long = "conf-dir")]
    pub conf_dir: Option<PathBuf>,
    /// Where the state store lives (default ./weft-rm-data).
    #[arg(long = "data-dir")]
    pub data_dir: Option<PathBuf>,
    /// Hadoop IPC client address, ApplicationClientProtocol (default
    /// yarn.resourcemanager.address, else 0.0.0.0:8032; port 0 picks one).
    #[arg(long = "client-address")]
    pub client_address: Option<String>,
    /// AM service address, Weft's gRPC AM service and Hadoop's ApplicationMasterProtocol on
    /// one port (default yarn.resourcemanager.scheduler.address, else 0.0.0.0:8030; port 0
    /// picks one).
    #[arg(long = "scheduler-address")]
    pub scheduler_address: Option<String>,
    /// Resource tracker address (default 0.0.0.0:8031).
    #[arg(long = "tracker-address")]
    pub tracker_address: Option<String>,
    /// REST address (default 0.0.0.0:8088).
    #[arg(long = "web-address")]
    pub web_address: Option<String>,
    /// Once every listener is up, write {"client","scheduler","tracker","web"} addresses here
    /// as JSON.
    #[arg(long = "ready-file")]
    pub ready_file: Option<PathBuf>,
    /// NM expiry in ms (yarn.nm.liveness-monitor.expiry-interval-ms).
    #[arg(long = "nm-expiry-ms")]
    pub nm_expiry_ms: Option<u64>,
    /// AM expiry in ms (yarn.am.liveness-monitor.expiry-interval-ms).
    #[arg(long = "am-expiry-ms")]
    pub am_expiry_ms: Option<u64>,
    /// How often the allocation file is checked for changes, in ms (default 5000).
    #[arg(long = "allocations-poll-ms")]
    pub allocations_poll_ms: Option<u64>,
    /// Async worker threads for the RPC and REST handlers; the driver, which runs the
    /// scheduler, is one of their tasks [default: the CPUs this process may use, at most 2;
    /// the environment variable WEFT_RM_WORKER_THREADS when this flag is absent].
    #[arg(long = "worker-threads")]
    pub worker_threads: Option<usize>,
}

/// Most worker threads the RM runs: beyond the driver's one task and the handlers' decoding,
/// more threads only add wake-ups.
const MAX_WORKER_THREADS: usize = 64;
/// The environment's say when `--worker-threads` is absent (rm-bench sets it for a pinned RM).
const WORKER_THREADS_ENV: &str = "WEFT_RM_WORKER_THREADS";

/// The worker threads to run: the flag, else the environment, else the CPUs this process may
/// use (its affinity and cgroup quota), at most 2. On a single CPU a second worker only
/// switches with the first: every hand-over between a handler and the driver becomes a
/// futex wake-up and a context switch.
fn worker_threads(flag: Option<usize>) -> anyhow::Result<usize> {
    let (count, source) = match flag {
        Some(n) => (n, "--worker-threads".to_string()),
        None => match std::env::var(WORKER_THREADS_ENV) {
            Ok(text) => {
                let n = text.trim().parse::<usize>().map_err(|_| {
                    anyhow::anyhow!("{WORKER_THREADS_ENV}='{text}' is not a count of threads")
                })?;
                (n, WORKER_THREADS_ENV.to_string())
            }
            Err(_) => {
                let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
                return Ok(cpus.clamp(1, 2));
            }
        },
    };
    if count == 0 || count > MAX_WORKER_THREADS {
        anyhow::bail!("{source} = {count}: must be between 1 and {MAX_WORKER_THREADS}");
    }
    Ok(count)
}

/// Runs the RM until SIGINT or SIGTERM.
pub fn run(args: RmArgs) -> anyhow::Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_target(false)
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads(args.worker_threads)?)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let rm = start(args).await?;
        let failed = rm.store_failure.clone();
        tokio::select! {
            _ = shutdown_signal() => {
                tracing::info!("shutting down");
                rm.stop().await;
                Ok(())
            }
            message = failed.wait() => {
                rm.stop().await;
                Err(anyhow::Error::msg(message))
            }
        }
    })
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A running RM (in this process).
pub struct RunningRm {
    /// Where Hadoop IPC clients (ApplicationClientProtocol) connect.
    pub client: SocketAddr,
    /// Where the AM service listens.
    pub scheduler: SocketAddr,
    /// Where the resource tracker listens.
    pub tracker: SocketAddr,
    /// Where the REST API listens.
    pub web: SocketAddr,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    store_failure: driver::StoreFailure,
}

impl RunningRm {
    /// Stops every listener and the driver, and waits (bounded) for them.
    pub async fn stop(self) {
        self.stop.send_replace(true);
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
    }
}

/// A connectable form of a bound address (`0.0.0.0` becomes `127.0.0.1`).
fn reachable(addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        SocketAddr::from((Ipv4Addr::LOCALHOST, addr.port()))
    } else {
        addr
    }
}

/// Connections the kernel may hold for a port before the RM accepts them. Tokio's default
/// (1024) overflowed when a whole cluster's NMs (12,000 in rm-bench's preset) opened their
/// heartbeat connections in the same second: the kernel dropped the SYNs past it, and the
/// NMs' retransmissions (1 s, 3 s, 7 s, 15 s later) ran past their 20 s connect bound. Linux
/// caps it at `net.core.somaxconn` (4096 on current kernels).
const LISTEN_BACKLOG: u32 = 16_384;

async fn bind(what: &str, address: &str) -> anyhow::Result<TcpListener> {
    let context = || format!("cannot listen on {address} for the {what}");
    let mut last = None;
    for addr in tokio::net::lookup_host(address)
        .await
        .with_context(context)?
    {
        match listen(addr) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.map_or_else(
        || anyhow::anyhow!("{address} names no address"),
        anyhow::Error::from,
    ))
    .with_context(context)
}

/// A listener on `addr` with [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`, as tokio's own bind).
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Calls a client may open and then cancel before the RM took them up, per HTTP/2 connection,
/// before h2 closes the whole connection (h2's default, 20, guards against rapid-reset floods;
/// a client multiplexing many AMs or NMs on one connection, as rm-bench does, reached it with
/// honest timeouts while the RM was busy, and every call on the connection failed). Still a
/// bound per connection.
const MAX_PENDING_ACCEPT_RESETS: usize = 1024;

/// Starts the RM: recovers state from the data directory, binds every listener and spawns the
/// driver, the servers and the allocation-file watcher. Needs a multi-thread tokio runtime.
pub async fn start(args: RmArgs) -> anyhow::Result<RunningRm> {
    let settings = Settings::load(&args)?;
    for note in &settings.notes {
        tracing::warn!("{note}");
    }
    std::fs::create_dir_all(&settings.data_dir)
        .with_context(|| format!("cannot create {}", settings.data_dir.display()))?;
    let store: Arc<dyn StateStore> = Arc::new(RedbStore::open_with_cache(
        &settings.data_dir,
        settings.store_cache_bytes,
    )?);
    let recovered = store.load()?;

    let properties = settings.properties.clone();
    let queue_file = match (&settings.capacity_file, &settings.allocations) {
        (Some(path), _) => Some(reload::QueueFile::Capacity {
            path: path.clone(),
            site: settings.capacity_site.clone(),
        }),
        (None, Some(path)) => Some(reload::QueueFile::Fair(path.clone())),
        (None, None) => None,
    };
    // A bad queue file stops the RM here, before it listens, with the file's own message.
    let scheduler_config = match &queue_file {
        Some(file) => file.read(&properties).map_err(anyhow::Error::msg)?,
        None => SchedulerConfig::from_site(properties.clone(), Default::default())?,
    };
    let client_listener = bind("Hadoop IPC client protocol", &settings.client_address).await?;
    let scheduler_listener = bind("AM service", &settings.scheduler_address).await?;
    let tracker_listener = bind("resource tracker", &settings.tracker_address).await?;
    let web_listener = bind("REST API", &settings.web_address).await?;
    let client = reachable(client_listener.local_addr()?);
    let scheduler = reachable(scheduler_listener.local_addr()?);
    let tracker = reachable(tracker_listener.local_addr()?);
    let web = reachable(web_listener.local_addr()?);

    let mut config = RmConfig::new(scheduler_config);
    config.nm_expiry = CoreDuration::from_millis(settings.nm_expiry_ms);
    config.am_expiry = CoreDuration::from_millis(settings.am_expiry_ms);
    config.max_attempts = settings.max_attempts;
    config.max_completed_apps = settings.max_completed_apps;
    config.store_max_completed_apps = settings.store_max_completed_apps;
    config.allocate_max_containers = settings.allocate_max_containers;
    config.ended_containers_kept_total = settings.ended_containers_kept_total;
    config.scheduler_address = scheduler.to_string();
    config.token_secret = clock::token_secret();
    config.admin_acl = settings.admin_acl.clone();
    config.node_labels_enabled = settings.node_labels_enabled;
    config.reservation_acls_enabled = settings.reservation_acls_enabled;
    settings.demands.apply(&mut config);
    config.am_recovery_grace = CoreDuration::from_millis(settings.am_recovery_grace_ms);
    let now = clock::now();
    let core = RmCore::recover(config, recovered, now.as_millis(), now)?;
    let cluster_ts = core.cluster_timestamp();
    let apps = core.app_reports().len();
    let types = properties.resource_types.clone();
    let (driver, mut driver_loop, store_failure) = driver::new(
        core,
        Arc::clone(&store),
        TICK,
        types.clone(),
        settings.groups.clone(),
    );
    driver_loop.verify_every(settings.verify_interval_ms);
    driver_loop.flush_startup()?;
    tracing::info!(cluster_ts, apps, data_dir = %settings.data_dir.display(), "state recovered");

    let (stop, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    tasks.push(tokio::spawn(driver_loop.run(stop_rx.clone())));

    let rm_identifier = i64::try_from(cluster_ts).unwrap_or(i64::MAX);
    let am = Arc::new(am_service::AmService {
        driver: driver.clone(),
        types: types.clone(),
        rm_identifier,
        allocate_stream: settings.allocate_stream,
        framed_transport: settings.framed_transport,
    });
    let allocate_streams = settings.allocate_stream.then(|| {
        AllocateStreamsServer::new(allocate_stream::AllocateStreamService {
            am: Arc::clone(&am),
            idle: Duration::from_millis(settings.am_expiry_ms),
        })
    });
    // The AM port serves Weft's gRPC AM service, its framed transport and Hadoop's
    // ApplicationMasterProtocol (shared_port says why one port).
    let framed_am = Arc::new(framed::FramedPort::allocates(
        settings.framed_transport,
        Arc::clone(&am),
        Duration::from_millis(settings.am_expiry_ms),
        stop_rx.clone(),
    ));
    let (grpc_am_tx, grpc_am_rx) = tokio::sync::mpsc::channel(64);
    let hadoop_am = weft_hadoop_ipc::Connections::new(
        weft_hadoop_ipc::Dispatcher::new()
            .with(hadoop::AmProtocol::new(driver.clone(), rm_identifier)),
        weft_hadoop_ipc::Limits::default(),
        stop_rx.clone(),
    );
    tasks.push(tokio::spawn(shared_port::serve(
        scheduler_listener,
        shared_port::Routes {
            name: "AM port",
            hadoop: Some(hadoop_am),
            framed: framed_am,
            grpc: grpc_am_tx,
        },
        stop_rx.clone(),
    )));
    let mut s = stop_rx.clone();
    tasks.push(tokio::spawn(async move {
        let result = Server::builder()
            .http2_max_pending_accept_reset_streams(Some(MAX_PENDING_ACCEPT_RESETS))
            .add_service(ApplicationMasterProtocolServer::from_arc(am))
            .add_optional_service(allocate_streams)
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::ReceiverStream::new(grpc_am_rx),
                async move {
                    let _ = s.wait_for(|v| *v).await;
                },
            )
            .await;
        if let Err(e) = result {
            tracing::error!("AM service failed: {e}");
        }
    }));
    let rt = tracker::Tracker {
        driver: driver.clone(),
        types: types.clone(),
        heartbeat_interval_ms: i64::try_from(settings.heartbeat_interval_ms).unwrap_or(1000),
        rm_identifier,
        deferred_node_updates: settings.deferred_node_updates,
        framed_transport: settings.framed_transport,
    };
    let rt = Arc::new(rt);
    let streams = heartbeat_stream::HeartbeatStreams {
        tracker: Arc::clone(&rt),
    };
    // The resource tracker port serves the gRPC resource tracker and heartbeat stream, and the
    // framed transport's heartbeats.
    let (grpc_tracker_tx, grpc_tracker_rx) = tokio::sync::mpsc::channel(64);
    tasks.push(tokio::spawn(shared_port::serve(
        tracker_listener,
        shared_port::Routes {
            name: "resource tracker port",
            hadoop: None,
            framed: Arc::new(framed::FramedPort::heartbeats(
                settings.framed_transport,
                Arc::clone(&rt),
                stop_rx.clone(),
            )),
            grpc: grpc_tracker_tx,
        },
        stop_rx.clone(),
    )));
    let mut s = stop_rx.clone();
    tasks.push(tokio::spawn(async move {
        let result = Server::builder()
            .http2_max_pending_accept_reset_streams(Some(MAX_PENDING_ACCEPT_RESETS))
            .add_service(ResourceTrackerServer::from_arc(rt))
            .add_service(NodeHeartbeatsServer::new(streams))
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::ReceiverStream::new(grpc_tracker_rx),
                async move {
                    let _ = s.wait_for(|v| *v).await;
                },
            )
            .await;
        if let Err(e) = result {
            tracing::error!("resource tracker failed: {e}");
        }
    }));
    let dispatcher = weft_hadoop_ipc::Dispatcher::new().with(hadoop::ClientProtocol {
        driver: driver.clone(),
        web: web.to_string(),
    });
    tasks.push(tokio::spawn(weft_hadoop_ipc::serve(
        client_listener,
        dispatcher,
        weft_hadoop_ipc::Limits::default(),
        stop_rx.clone(),
    )));
    let reload_log = reload::ReloadLog::new(reload::ReloadStatus::loaded_at_start(
        queue_file.as_ref().map(|f| f.path().to_path_buf()),
        now.as_millis(),
    ));
    let (refresher, refresh_requests) = match &queue_file {
        Some(_) => {
            let (refresher, requests) = reload::refresh_channel(reload_log.clone());
            (refresher, Some(requests))
        }
        None => (reload::Refresher::without_file(reload_log.clone()), None),
    };
    let rest_state = rest::Rest {
        driver: driver.clone(),
        cluster_ts,
        started_on: now.as_millis(),
        refresher,
    };
    let router = rest::router(rest_state.clone()).merge(web::router(rest_state));
    let mut s = stop_rx.clone();
    tasks.push(tokio::spawn(async move {
        let result = axum::serve(web_listener, router)
            .with_graceful_shutdown(async move {
                let _ = s.wait_for(|v| *v).await;
            })
            .await;
        if let Err(e) = result {
            tracing::error!("REST server failed: {e}");
        }
    }));
    if let (Some(file), Some(requests)) = (queue_file, refresh_requests) {
        tasks.push(tokio::spawn(reload::watch_file(
            file,
            Duration::from_millis(settings.allocations_poll_ms.max(10)),
            properties,
            driver.clone(),
            requests,
            reload_log,
            stop_rx.clone(),
        )));
    }
    tracing::info!(%client, %scheduler, %tracker, %web, "ResourceManager started");
    if let Some(path) = &args.ready_file {
        let ready = serde_json::json!({
            "client": client.to_string(),
            "scheduler": scheduler.to_string(),
            "tracker": tracker.to_string(),
            "web": web.to_string(),
        });
        std::fs::write(path, ready.to_string())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(RunningRm {
        client,
        scheduler,
        tracker,
        web,
        stop,
        tasks,
        store_failure,
    })
}

#[cfg(test)]
mod worker_thread_tests {
    use super::{worker_threads, MAX_WORKER_THREADS};

    #[test]
    fn the_flag_is_taken_within_its_bounds_and_refused_outside_them() {
        assert_eq!(worker_threads(Some(1)).unwrap(), 1);
        assert_eq!(
            worker_threads(Some(MAX_WORKER_THREADS)).unwrap(),
            MAX_WORKER_THREADS
        );
        let zero = worker_threads(Some(0)).unwrap_err().to_string();
        assert!(zero.contains("--worker-threads = 0"), "{zero}");
        let many = worker_threads(Some(MAX_WORKER_THREADS + 1))
            .unwrap_err()
            .to_string();
        assert!(many.contains("between 1 and 64"), "{many}");
    }
}
