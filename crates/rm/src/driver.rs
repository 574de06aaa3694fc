//! The one task that owns the [`RmCore`]: it runs jobs sent by the RPC and REST handlers, ticks
//! the core, writes its `Persist` outputs to the store *before* answering the jobs that caused
//! them, and carries out AM launches and container stops through the NMs.

use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::{mpsc, oneshot, watch};
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::{
    ContainerLaunchContext, LocalResourceType, StartContainerRequest, StartContainersRequest,
    StopContainersRequest,
};
use weft_rm_core::{AmLaunch, LocalResourceKind, Output, RmCore, Write};
use weft_store::StateStore;
use weft_types::yarn_id::ContainerId;
use weft_types::{ResourceTypes, Time};

use crate::clock;

/// What a job hands back: run after the job's writes are durable.
type Reply = Box<dyn FnOnce() + Send>;
/// A unit of work on the core.
type Job = Box<dyn FnOnce(&mut RmCore, Time) -> Reply + Send>;

/// Jobs taken in one round before the store is written (one transaction for all of them).
const BATCH: usize = 256;
/// Time allowed for one call to an NM.
const NM_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a job got no answer.
#[derive(Debug, Error)]
pub(crate) enum DriverError {
    /// The driver has stopped.
    #[error("the ResourceManager is shutting down")]
    Stopped,
    /// The store refused the job's writes; the change was not acknowledged.
    #[error("the state store could not record the change")]
    NotPersisted,
}

/// A handle to send jobs to the driver; cheap to clone.
#[derive(Clone)]
pub(crate) struct Driver {
    tx: mpsc::Sender<Job>,
}

impl Driver {
    /// Runs `f` on the core and returns its result once the writes it caused are durable.
    pub(crate) async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut RmCore, Time) -> T + Send + 'static,
    ) -> Result<T, DriverError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |core, now| {
            let value = f(core, now);
            Box::new(move || {
                let _ = tx.send(value);
            })
        });
        self.tx.send(job).await.map_err(|_| DriverError::Stopped)?;
        rx.await.map_err(|_| DriverError::NotPersisted)
    }
}

/// The driver loop's state.
pub(crate) struct Loop {
    core: RmCore,
    store: Arc<dyn StateStore>,
    rx: mpsc::Receiver<Job>,
    driver: Driver,
    tick: Duration,
    types: ResourceTypes,
}

/// A driver around `core`; spawn [`Loop::run`] and hand out the [`Driver`].
pub(crate) fn new(
    core: RmCore,
    store: Arc<dyn StateStore>,
    tick: Duration,
    types: ResourceTypes,
) -> (Driver, Loop) {
    let (tx, rx) = mpsc::channel(4096);
    let driver = Driver { tx };
    let state = Loop {
        core,
        store,
        rx,
        driver: driver.clone(),
        tick,
        types,
    };
    (driver, state)
}

impl Loop {
    /// Writes what the core produced so far (used once at start for recovery's writes).
    pub(crate) fn flush_startup(&mut self) -> Result<(), weft_store::StoreError> {
        let (writes, rest) = split(&mut self.core);
        if !writes.is_empty() {
            self.store.apply(&writes)?;
        }
        self.carry_out(rest);
        Ok(())
    }

    /// Runs until `stop` turns true or every handle is gone.
    pub(crate) async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut ticker = tokio::time::interval(self.tick);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                job = self.rx.recv() => {
                    let Some(job) = job else { break };
                    let mut replies = vec![job(&mut self.core, clock::now())];
                    while replies.len() < BATCH {
                        match self.rx.try_recv() {
                            Ok(job) => replies.push(job(&mut self.core, clock::now())),
                            Err(_) => break,
                        }
                    }
                    if self.flush() {
                        for reply in replies {
                            reply();
                        }
                    }
                }
                _ = ticker.tick() => {
                    self.core.tick(clock::now());
                    self.flush();
                }
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        tracing::info!("driver stopped");
    }

    /// Persists the pending writes (one transaction), then launches and stops. Returns false
    /// when the store refused the writes.
    fn flush(&mut self) -> bool {
        let (writes, rest) = split(&mut self.core);
        let mut ok = true;
        if !writes.is_empty() {
            let store = Arc::clone(&self.store);
            let result = tokio::task::block_in_place(|| store.apply(&writes));
            if let Err(e) = result {
                tracing::error!(error = %e, writes = writes.len(), "state store write failed; the inputs are not acknowledged");
                ok = false;
            }
        }
        self.carry_out(rest);
        ok
    }

    fn carry_out(&self, outputs: Vec<Output>) {
        for o in outputs {
            match o {
                Output::LaunchAm(launch) => {
                    let driver = self.driver.clone();
                    let types = self.types.clone();
                    tokio::spawn(launch_am(driver, *launch, types));
                }
                Output::StopContainer {
                    node_address,
                    container,
                    ..
                } => {
                    tokio::spawn(stop_container(node_address, container));
                }
                Output::Persist(_) => {}
            }
        }
    }
}

/// The core's outputs, writes (in order, as one batch) apart from the rest.
fn split(core: &mut RmCore) -> (Vec<Write>, Vec<Output>) {
    let mut writes = Vec::new();
    let mut rest = Vec::new();
    while let Some(o) = core.poll_output() {
        match o {
            Output::Persist(w) => writes.extend(w),
            other => rest.push(other),
        }
    }
    (writes, rest)
}

async fn client(
    address: &str,
) -> Result<ContainerManagementClient<tonic::transport::Channel>, String> {
    let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .map_err(|e| format!("bad NM address {address}: {e}"))?
        .connect_timeout(NM_TIMEOUT)
        .timeout(NM_TIMEOUT);
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| format!("cannot reach NM {address}: {e}"))?;
    Ok(ContainerManagementClient::new(channel))
}

/// Starts an AM container; a failure fails the attempt (which is retried).
async fn launch_am(driver: Driver, launch: AmLaunch, types: ResourceTypes) {
    let container = launch.container;
    let result = start(&launch, &types).await;
    match result {
        Ok(()) => tracing::info!(%container, node = %launch.node_id, "AM container started"),
        Err(e) => {
            tracing::warn!(%container, node = %launch.node_id, error = %e, "AM launch failed");
            let _ = driver
                .call(move |core, now| core.am_launch_failed(now, container, &e))
                .await;
        }
    }
}

async fn start(launch: &AmLaunch, types: &ResourceTypes) -> Result<(), String> {
    let mut nm = client(&launch.node_address).await?;
    let ctx = &launch.launch;
    let request = StartContainerRequest {
        container_id: launch.container.to_string(),
        application_id: launch.container.app.to_string(),
        user: launch.user.clone(),
        resource: Some(weft_proto::v1::Resource::from_types(
            &launch.resource,
            types,
        )),
        container_launch_context: Some(ContainerLaunchContext {
            local_resources: ctx
                .local_resources
                .iter()
                .map(|(k, r)| {
                    let kind = match r.kind {
                        LocalResourceKind::File => LocalResourceType::File,
                        LocalResourceKind::Archive => LocalResourceType::Archive,
                        LocalResourceKind::Pattern => LocalResourceType::Pattern,
                    };
                    let wire = weft_proto::v1::LocalResource {
                        resource: r.url.clone(),
                        r#type: kind as i32,
                        ..Default::default()
                    };
                    (k.clone(), wire)
                })
                .collect(),
            environment: ctx.environment.clone().into_iter().collect(),
            command: ctx.commands.clone(),
        }),
        container_token: String::new(),
    };
    let reply = nm
        .start_containers(StartContainersRequest {
            start_container_request: vec![request],
        })
        .await
        .map_err(|s| format!("StartContainers: {}", s.message()))?
        .into_inner();
    match reply.failed_requests.first() {
        Some(f) => Err(f.exception.clone()),
        None => Ok(()),
    }
}

/// Best effort: the container is also in the node's next heartbeat reply.
async fn stop_container(address: String, container: ContainerId) {
    let result = async {
        let mut nm = client(&address).await?;
        nm.stop_containers(StopContainersRequest {
            container_id: vec![container.to_string()],
        })
        .await
        .map_err(|s| s.message().to_string())
    }
    .await;
    if let Err(e) = result {
        tracing::debug!(%container, %address, error = %e, "stop through the NM failed; the heartbeat will carry it");
    }
}
