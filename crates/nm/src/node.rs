//! The NodeManager as a library: container-management server, executor and heartbeat
//! driver started together and stopped together.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use tonic::transport::Server;
use weft_proto::exit_status;
use weft_proto::v1::container_management_server::ContainerManagementServer;
use weft_proto::v1::Resource;

use crate::cgroups::CgroupMode;
use crate::clock::now_ms;
use crate::executor::{Executor, ExecutorConfig};
use crate::hadoop::HadoopContainerManager;
use crate::launch::NodeLayout;
use crate::security::Security;
use crate::service::ContainerManager;
use crate::table::Table;
use crate::tracker::{Exit, Registration, Tracker};
use crate::web::{self, NodeFacts, Web};

/// Binds a listener, returning it with the address it got.
async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), NmError> {
    let err = |source| NmError::Bind { addr, source };
    let listener = TcpListener::bind(addr).await.map_err(err)?;
    let bound = listener.local_addr().map_err(err)?;
    Ok((listener, bound))
}

/// Diagnostics of containers stopped because the NM is shutting down.
pub const NM_SHUTDOWN: &str = "killed: the NodeManager is shutting down";

/// Everything a NodeManager needs to start.
#[derive(Debug, Clone)]
pub struct NmConfig {
    /// `host:port` of the RM's resource tracker.
    pub rm_tracker: String,
    /// Where the container-management service listens (port 0 for an ephemeral port).
    pub bind: SocketAddr,
    /// Host part of the node id.
    pub hostname: String,
    /// Memory offered to containers, in MB.
    pub memory_mb: i64,
    /// Virtual cores offered to containers.
    pub vcores: i64,
    /// Rack reported to the RM.
    pub rack: String,
    /// Root of container work directories.
    pub local_dir: PathBuf,
    /// Root of container log directories.
    pub log_dir: PathBuf,
    /// Isolation to use (detect it with [`CgroupMode::detect`]).
    pub cgroups: CgroupMode,
    /// Delay between SIGTERM and SIGKILL when stopping a container.
    pub kill_grace: Duration,
    /// Memory monitor sampling period.
    pub monitor_interval: Duration,
    /// Where the web service (container logs) listens; `None` runs without one.
    pub web_bind: Option<SocketAddr>,
    /// Where Hadoop's ContainerManagementProtocol listens (`yarn.nodemanager.address`, Hadoop
    /// IPC; port 0 for an ephemeral port, Hadoop's default); `None` serves none.
    pub hadoop_bind: Option<SocketAddr>,
    /// JAVA_HOME for containers whose launch context sets none.
    pub java_home: Option<String>,
}

/// Errors starting a NodeManager.
#[derive(Debug, thiserror::Error)]
pub enum NmError {
    /// The container-management or web address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying failure.
        source: std::io::Error,
    },
    /// A local or log directory could not be created.
    #[error("cannot create {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
}

/// A running NodeManager.
#[derive(Debug)]
pub struct NodeManager {
    node_id: String,
    address: SocketAddr,
    executor: Executor,
    stop_tx: watch::Sender<bool>,
    tracker: JoinHandle<Exit>,
    server: JoinHandle<()>,
    web: Option<(String, JoinHandle<()>)>,
    hadoop: Option<(SocketAddr, JoinHandle<()>)>,
    rm_shutdown: watch::Receiver<bool>,
}

/// The address peers on this machine can dial for a listener bound to `bound`.
fn dialable(bound: SocketAddr) -> SocketAddr {
    if bound.ip().is_unspecified() {
        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bound.port())
    } else {
        bound
    }
}

impl NodeManager {
    /// Binds the service, starts the heartbeat driver and returns once the listener is up.
    pub async fn start(cfg: NmConfig) -> Result<NodeManager, NmError> {
        for dir in [&cfg.local_dir, &cfg.log_dir] {
            std::fs::create_dir_all(dir).map_err(|source| NmError::Dir {
                path: dir.clone(),
                source,
            })?;
        }
        let listener = TcpListener::bind(cfg.bind)
            .await
            .map_err(|source| NmError::Bind {
                addr: cfg.bind,
                source,
            })?;
        let bound = listener.local_addr().map_err(|source| NmError::Bind {
            addr: cfg.bind,
            source,
        })?;
        // Peers on this machine can always dial loopback when we listen everywhere.
        let address = dialable(bound);
        let node_id = format!("{}:{}", cfg.hostname, bound.port());
        let web_listener = match cfg.web_bind {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let hadoop_listener = match cfg.hadoop_bind {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        // Hadoop's NodeId: what NMClient dials and what NM_PORT tells containers.
        let hadoop_address = hadoop_listener
            .as_ref()
            .map(|(_, a)| format!("{}:{}", cfg.hostname, a.port()))
            .unwrap_or_default();
        // As YARN's nodeHTTPAddress: the node's host name when listening everywhere, so
        // browsers and `weft logs` elsewhere can follow the RM's links.
        let http_address = web_listener
            .as_ref()
            .map(|(_, a)| {
                if a.ip().is_unspecified() {
                    format!("{}:{}", cfg.hostname, a.port())
                } else {
                    a.to_string()
                }
            })
            .unwrap_or_default();
        let layout = NodeLayout {
            local_dir: cfg.local_dir.clone(),
            log_dir: cfg.log_dir.clone(),
            nm_host: cfg.hostname.clone(),
            nm_port: hadoop_listener
                .as_ref()
                .map_or(bound.port(), |(_, a)| a.port()),
            nm_http_port: web_listener.as_ref().map_or(0, |(_, a)| a.port()),
            java_home: cfg.java_home.clone(),
            archive_limits: crate::localize::Limits::default(),
        };
        let mut exec_cfg = ExecutorConfig::new(layout, cfg.cgroups.clone());
        exec_cfg.kill_grace = cfg.kill_grace;
        exec_cfg.monitor_interval = cfg.monitor_interval;
        // Before anything new starts: no container of a previous run may keep running.
        let leftovers = crate::leftovers::kill_leftovers(&cfg.local_dir);
        if !leftovers.is_empty() {
            tracing::warn!(containers = ?leftovers, "killed containers left by a previous NodeManager run");
        }
        let executor = Executor::new(exec_cfg);
        let table = Table::default();
        let (stop_tx, stop_rx) = watch::channel(false);
        let web = web_listener.map(|(listener, _)| {
            let facts = NodeFacts {
                node_id: node_id.clone(),
                hostname: cfg.hostname.clone(),
                http_address: http_address.clone(),
                memory_mb: cfg.memory_mb,
                vcores: cfg.vcores,
                started_ms: now_ms(),
            };
            let state = Web::new(facts, cfg.log_dir.clone(), table.clone());
            let task = tokio::spawn(web::serve(listener, state, stop_rx.clone()));
            (http_address.clone(), task)
        });

        let security = Security::new(node_id.clone());
        let service = ContainerManager {
            executor: executor.clone(),
            table: table.clone(),
            security: security.clone(),
        };
        let hadoop = hadoop_listener.map(|(listener, bound)| {
            let dispatcher = weft_hadoop_ipc::Dispatcher::new().with(HadoopContainerManager {
                manager: service.clone(),
            });
            let task = tokio::spawn(weft_hadoop_ipc::serve(
                listener,
                dispatcher,
                weft_hadoop_ipc::Limits::default(),
                stop_rx.clone(),
            ));
            (dialable(bound), task)
        });
        let mut server_stop = stop_rx.clone();
        let server = tokio::spawn(async move {
            let result = Server::builder()
                .add_service(ContainerManagementServer::new(service))
                .serve_with_incoming_shutdown(TcpIncoming::from(listener), async move {
                    let _ = server_stop.wait_for(|s| *s).await;
                })
                .await;
            if let Err(e) = result {
                tracing::error!("container-management server failed: {e}");
            }
        });

        let (rm_shutdown_tx, rm_shutdown) = watch::channel(false);
        let secret_file = cfg.local_dir.join("nm-node-secret");
        let tracker = Tracker {
            rm: cfg.rm_tracker.clone(),
            registration: Registration {
                node_id: node_id.clone(),
                address: address.to_string(),
                http_address,
                hadoop_address: hadoop_address.clone(),
                capability: Resource::new(cfg.memory_mb, cfg.vcores),
                rack: cfg.rack.clone(),
            },
            table,
            executor: executor.clone(),
            security,
            stop: stop_rx,
            secret: std::sync::Mutex::new(crate::tracker::kept_secret(&secret_file)),
            secret_file,
        };
        let tracker = tokio::spawn(async move {
            let exit = tracker.run().await;
            if exit == Exit::RmShutdown {
                rm_shutdown_tx.send_replace(true);
            }
            exit
        });
        tracing::info!(
            node_id = %node_id,
            %address,
            hadoop = %hadoop_address,
            isolation = %cfg.cgroups.describe(),
            "NodeManager started: {} MB, {} vcores",
            cfg.memory_mb,
            cfg.vcores
        );
        Ok(NodeManager {
            node_id,
            address,
            executor,
            stop_tx,
            tracker,
            server,
            web,
            hadoop,
            rm_shutdown,
        })
    }

    /// Where Hadoop's ContainerManagementProtocol can be dialled (`None` without it).
    pub fn hadoop_address(&self) -> Option<SocketAddr> {
        self.hadoop.as_ref().map(|(a, _)| *a)
    }

    /// `host:port` as registered with the RM.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// Where the container-management service can be dialled.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `host:port` of the web service as registered with the RM (`None` without one).
    pub fn web_address(&self) -> Option<&str> {
        self.web.as_ref().map(|(a, _)| a.as_str())
    }

    /// Resolves when the RM has told this node to shut down.
    pub async fn rm_requested_shutdown(&self) {
        let mut rx = self.rm_shutdown.clone();
        let _ = rx.wait_for(|s| *s).await;
    }

    /// Stops every container (no process outlives the NM), unregisters, stops serving.
    pub async fn shutdown(self) {
        self.executor
            .shutdown(exit_status::ABORTED, NM_SHUTDOWN)
            .await;
        self.stop_tx.send_replace(true);
        if let Err(e) = self.tracker.await {
            tracing::warn!("heartbeat driver ended abnormally: {e}");
        }
        if tokio::time::timeout(Duration::from_secs(5), self.server)
            .await
            .is_err()
        {
            tracing::warn!("container-management server did not stop in time");
        }
        if let Some((_, hadoop)) = self.hadoop {
            if tokio::time::timeout(Duration::from_secs(5), hadoop)
                .await
                .is_err()
            {
                tracing::warn!("Hadoop IPC server did not stop in time");
            }
        }
        if let Some((_, web)) = self.web {
            if tokio::time::timeout(Duration::from_secs(5), web)
                .await
                .is_err()
            {
                tracing::warn!("web service did not stop in time");
            }
        }
        tracing::info!(node_id = %self.node_id, "NodeManager stopped");
    }
}
