//! The heartbeat driver: registers with the RM's resource tracker, heartbeats container
//! statuses at the interval the RM gives, carries out what the replies ask (stop containers,
//! clean up finished apps, forget acknowledged completions), re-registers on RESYNC and
//! unregisters on shutdown.

use std::time::Duration;

use tokio::sync::watch;
use tonic::transport::Endpoint;
use weft_proto::exit_status;
use weft_proto::heartbeat_link::HeartbeatLink;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::{
    NodeAction, NodeHealthStatus, NodeHeartbeatRequest, NodeHeartbeatResponse,
    RegisterNodeManagerRequest, Resource, UnRegisterNodeManagerRequest,
};

use crate::clock::now_ms;
use crate::executor::Executor;
use crate::launch::{app_local_dir, LaunchSpec};
use crate::security::Security;
use crate::table::Table;

/// YARN's default `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`.
const DEFAULT_INTERVAL: Duration = Duration::from_millis(1000);
/// How long to wait between attempts to reach an RM that is down.
const RETRY: Duration = Duration::from_millis(500);

pub(crate) const STOPPED_BY_RM: &str = "killed: container stopped by the ResourceManager";
pub(crate) const APP_FINISHED: &str = "killed: the application finished";

/// What the NM tells the RM about itself.
#[derive(Debug, Clone)]
pub(crate) struct Registration {
    pub(crate) node_id: String,
    pub(crate) address: String,
    /// The web service's `host:port`; empty without one.
    pub(crate) http_address: String,
    /// The Hadoop ContainerManagementProtocol's `host:port`; empty without one.
    pub(crate) hadoop_address: String,
    pub(crate) capability: Resource,
    pub(crate) rack: String,
}

/// Why the driver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The NM is shutting down.
    Requested,
    /// The RM answered SHUTDOWN (e.g. the node was decommissioned).
    RmShutdown,
}

pub(crate) struct Tracker {
    pub(crate) rm: String,
    pub(crate) registration: Registration,
    pub(crate) table: Table,
    pub(crate) executor: Executor,
    pub(crate) security: Security,
    pub(crate) stop: watch::Receiver<bool>,
    /// Where the node's registration secret is kept across NM restarts (so a restarted NM
    /// can take its node id back while the RM still holds it as live).
    pub(crate) secret_file: std::path::PathBuf,
    pub(crate) secret: std::sync::Mutex<String>,
}

impl Tracker {
    fn secret(&self) -> String {
        self.secret
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Keeps the secret the RM returned, in memory and on disk (owner-only).
    fn keep_secret(&self, secret: &str) {
        if secret.is_empty() || self.secret() == secret {
            return;
        }
        *self
            .secret
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = secret.to_string();
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&self.secret_file)
            .and_then(|mut f| f.write_all(secret.as_bytes()));
        if let Err(e) = written {
            tracing::warn!(
                "cannot keep the node secret in {}: {e}",
                self.secret_file.display()
            );
        }
    }
}

/// The secret an earlier run of this NM kept, if any.
pub(crate) fn kept_secret(path: &std::path::Path) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl Tracker {
    /// Runs until shutdown is requested (then unregisters) or the RM says SHUTDOWN.
    pub(crate) async fn run(mut self) -> Exit {
        let exit = self.drive().await;
        if exit == Exit::Requested {
            self.unregister().await;
        }
        exit
    }

    async fn drive(&mut self) -> Exit {
        loop {
            let Some((mut link, mut interval)) = self.register().await else {
                return Exit::Requested;
            };
            let mut response_id = 0;
            // The registration listed every container; the first heartbeat lists them again
            // (the RM has them only once an answered heartbeat carried them).
            self.table.forget_delivered();
            let mut send_all = false;
            loop {
                if self.pause(interval).await {
                    return Exit::Requested;
                }
                let report = self.table.for_heartbeat(send_all);
                let request = NodeHeartbeatRequest {
                    node_id: self.registration.node_id.clone(),
                    response_id,
                    container_statuses: report.statuses,
                    running_containers: Some(report.running),
                    node_health_status: Some(NodeHealthStatus {
                        is_node_healthy: true,
                        health_report: String::new(),
                        last_health_report_time_ms: now_ms(),
                    }),
                    keep_alive_applications: Vec::new(),
                    last_known_master_key_id: self.security.current_key_id(),
                    node_secret: self.secret(),
                };
                let reply = match link.beat(request).await {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::warn!("heartbeat to {} failed: {}", self.rm, e.message());
                        continue;
                    }
                };
                response_id = reply.response_id;
                if reply.next_heartbeat_interval_ms > 0 {
                    interval = Duration::from_millis(reply.next_heartbeat_interval_ms as u64);
                }
                match NodeAction::try_from(reply.node_action).unwrap_or(NodeAction::Normal) {
                    NodeAction::Resync => {
                        tracing::info!("RM asked for a resync; registering again");
                        self.apply(&reply);
                        break;
                    }
                    NodeAction::Shutdown => {
                        tracing::warn!(
                            "RM told this node to shut down: {}",
                            reply.diagnostics_message
                        );
                        return Exit::RmShutdown;
                    }
                    NodeAction::Normal => {
                        self.apply(&reply);
                        self.table.running_delivered(&report.running_sent);
                        send_all = reply.send_all_statuses;
                    }
                }
            }
        }
    }

    /// Sleeps for `d`; true when shutdown was requested meanwhile.
    async fn pause(&mut self, d: Duration) -> bool {
        if *self.stop.borrow() {
            return true;
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => false,
            _ = self.stop.wait_for(|s| *s) => true,
        }
    }

    /// Connects and registers, retrying while the RM is unreachable; `None` on shutdown.
    async fn register(&mut self) -> Option<(HeartbeatLink, Duration)> {
        loop {
            match self.try_register().await {
                Ok(Some(ok)) => return Some(ok),
                Ok(None) => {}
                Err(e) => tracing::warn!("cannot register with the RM at {}: {e}", self.rm),
            }
            if self.pause(RETRY).await {
                return None;
            }
        }
    }

    async fn try_register(&self) -> Result<Option<(HeartbeatLink, Duration)>, String> {
        let channel = Endpoint::from_shared(format!("http://{}", self.rm))
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        let mut client = ResourceTrackerClient::new(channel.clone());
        let reg = &self.registration;
        let request = RegisterNodeManagerRequest {
            node_id: reg.node_id.clone(),
            address: reg.address.clone(),
            http_address: reg.http_address.clone(),
            total_capability: Some(reg.capability.clone()),
            rack: reg.rack.clone(),
            nm_version: env!("CARGO_PKG_VERSION").to_string(),
            container_statuses: self.table.for_registration(),
            running_applications: self.table.running_apps(),
            node_secret: self.secret(),
            hadoop_address: reg.hadoop_address.clone(),
        };
        let reply = client
            .register_node_manager(request)
            .await
            .map_err(|e| e.message().to_string())?
            .into_inner();
        if reply.node_action == NodeAction::Shutdown as i32 {
            // Refused (e.g. excluded node); keep trying until the RM accepts or we stop.
            tracing::warn!("RM refused registration: {}", reply.diagnostics_message);
            return Ok(None);
        }
        self.security
            .learn(reply.container_token_master_key.as_ref());
        self.keep_secret(&reply.node_secret);
        let interval = if reply.heartbeat_interval_ms > 0 {
            Duration::from_millis(reply.heartbeat_interval_ms as u64)
        } else {
            DEFAULT_INTERVAL
        };
        tracing::info!(
            node_id = %reg.node_id,
            rm_identifier = reply.rm_identifier,
            heartbeat_stream = reply.heartbeat_stream,
            framed_transport = reply.framed_transport,
            "registered with the RM at {}",
            self.rm
        );
        Ok(Some((
            HeartbeatLink::new(channel, reply.heartbeat_stream)
                .framed(&self.rm, reply.framed_transport),
            interval,
        )))
    }

    fn apply(&self, reply: &NodeHeartbeatResponse) {
        self.security
            .learn(reply.container_token_master_key.as_ref());
        self.table
            .acknowledge(&reply.containers_to_be_removed_from_nm);
        for id in &reply.containers_to_cleanup {
            if let Some(entry) = self.table.get(id) {
                entry
                    .handle
                    .stop(exit_status::KILLED_BY_RESOURCEMANAGER, STOPPED_BY_RM);
            }
        }
        for app in &reply.applications_to_cleanup {
            self.clean_up_app(app);
        }
    }

    /// Stops the app's containers, then removes its local files (logs stay).
    fn clean_up_app(&self, app: &str) {
        let entries = self.table.of_app(app);
        for e in &entries {
            e.handle
                .stop(exit_status::KILLED_AFTER_APP_COMPLETION, APP_FINISHED);
        }
        self.table.finish_app(app);
        let Some(user) = entries.first().map(|e| e.user.clone()) else {
            return;
        };
        let dir = app_local_dir(
            &self.executor.config().layout,
            &LaunchSpec {
                app_id: app.to_string(),
                user,
                ..LaunchSpec::default()
            },
        );
        tokio::spawn(async move {
            for e in &entries {
                let _ = tokio::time::timeout(Duration::from_secs(15), e.handle.wait()).await;
            }
            if let Err(e) = tokio::fs::remove_dir_all(&dir).await {
                tracing::debug!("removing {}: {e}", dir.display());
            }
        });
    }

    async fn unregister(&self) {
        let attempt = async {
            let mut client = ResourceTrackerClient::connect(format!("http://{}", self.rm))
                .await
                .map_err(|e| e.to_string())?;
            client
                .un_register_node_manager(UnRegisterNodeManagerRequest {
                    node_id: self.registration.node_id.clone(),
                    node_secret: self.secret(),
                })
                .await
                .map_err(|e| e.message().to_string())
        };
        match tokio::time::timeout(Duration::from_secs(3), attempt).await {
            Ok(Ok(_)) => tracing::info!("unregistered from the RM"),
            Ok(Err(e)) => tracing::warn!("unregistering from the RM failed: {e}"),
            Err(_) => tracing::warn!("unregistering from the RM timed out"),
        }
    }
}
