//! One application's AM in a preset run: registers with the credentials of its AM container's
//! launch, asks once for its tasks (one `*` request at the plan's priority and size), calls
//! Allocate at a YARN AM's pace, hands each container to its simulated node (which completes it
//! after the task's run time), and unregisters once every task has completed, or when the run
//! ends (the RM then stops whatever still runs).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::transport::Channel;
use weft_proto::allocate_link::AllocateLink;
use weft_proto::auth::AmCredentials;
use weft_proto::shared_frames::SharedAllocates;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::{
    AllocateRequest, AmCommand, FinalApplicationStatus, FinishApplicationMasterRequest,
    RegisterApplicationMasterRequest, Resource, ResourceRequest,
};

use crate::shared::{describe, node_index, Launched, Shared};
use crate::stats::{Sample, Timeline};

/// Bound on unregistering (the RM stops every container still running).
const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// What one app asks for.
#[derive(Clone, Debug)]
pub(crate) struct Tasks {
    /// How many containers.
    pub(crate) count: u32,
    /// Their priority.
    pub(crate) priority: i32,
    /// Each container's memory, MB.
    pub(crate) memory_mb: i64,
    /// Each container's vcores.
    pub(crate) vcores: i64,
}

/// Counters every AM of the run shares.
#[derive(Debug, Default)]
pub(crate) struct FleetCounters {
    /// Containers asked for and not yet allocated, plus apps whose AM container is not yet
    /// allocated: the pending demand validSchedule looks at.
    pub(crate) pending: AtomicI64,
    /// Apps whose every task completed before the AM unregistered.
    pub(crate) completed_apps: AtomicU64,
    /// Apps unregistered because the run ended.
    pub(crate) stopped_apps: AtomicU64,
    /// Apps whose AM failed (could not register or unregister).
    pub(crate) failed_apps: AtomicU64,
}

/// What one AM measured.
#[derive(Debug, Default)]
pub(crate) struct AppResult {
    /// New containers, by arrival of the Allocate answer.
    pub(crate) allocated: Timeline,
    /// Every Allocate call's send time and latency.
    pub(crate) allocates: Vec<Sample>,
    /// Containers placed on nodes the bench does not simulate (should be none).
    pub(crate) unroutable: u64,
    /// Every task completed (rather than the run ending first).
    pub(crate) completed: bool,
    /// The finish call's send time and latency, when it was answered in time.
    pub(crate) finish: Option<Sample>,
}

/// An AM about to register.
pub(crate) struct AppMaster {
    /// Registration and unregistration (unary calls).
    pub(crate) rm: ApplicationMasterProtocolClient<Channel>,
    /// The connection its Allocate calls take (over the RM's stream when it offers one).
    pub(crate) channel: Channel,
    /// Unary Allocate calls even when the RM offers its stream (or framed transport).
    pub(crate) unary_allocates: bool,
    /// The RM's AM service address (`host:port`) when the AM takes the framed transport the
    /// RM offers (one connection per AM, where gRPC shares a connection among many); `None`
    /// with `--grpc-streams` or `--unary-allocates`.
    pub(crate) framed_to: Option<String>,
    /// Shared framed connections to the RM's AM service its Allocates take a lane of, when
    /// the AMs' own framed connections would not fit the open-file limit; `None` with
    /// `--grpc-streams` or `--unary-allocates`.
    pub(crate) lanes: Option<Arc<SharedAllocates>>,
    pub(crate) creds: AmCredentials,
    /// Its own container and node, which it leaves when it has unregistered.
    pub(crate) container: Option<(usize, String)>,
    pub(crate) tasks: Tasks,
    pub(crate) interval: Duration,
    pub(crate) shared: Arc<Shared>,
    pub(crate) counters: Arc<FleetCounters>,
}

impl AppMaster {
    fn error(&self, what: &str, message: impl std::fmt::Display) {
        self.shared
            .error(format!("AM {}: {what}: {message}", self.creds.attempt_id));
    }

    /// Runs the app to its end (all tasks done, or `stop`); the result says which.
    pub(crate) async fn run(mut self, mut stop: watch::Receiver<bool>) -> AppResult {
        let mut result = AppResult::default();
        let register = match self.creds.request(RegisterApplicationMasterRequest {
            host: "weft-rmbench".into(),
            rpc_port: 0,
            tracking_url: String::new(),
        }) {
            Ok(r) => r,
            Err(e) => {
                self.error("register", e);
                self.counters.failed_apps.fetch_add(1, Ordering::Relaxed);
                return result;
            }
        };
        let registered = match self.rm.register_application_master(register).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                self.error("register", describe(&s));
                self.counters.failed_apps.fetch_add(1, Ordering::Relaxed);
                return result;
            }
        };
        let mut link = AllocateLink::new(
            self.channel.clone(),
            self.creds.clone(),
            registered.allocate_stream && !self.unary_allocates,
        )
        .framed(
            self.framed_to.as_deref().unwrap_or_default(),
            registered.framed_transport && self.framed_to.is_some(),
        )
        .max_decoding_message_size(usize::MAX);
        if let Some(lanes) = &self.lanes {
            link = link.shared(Arc::clone(lanes), registered.framed_transport);
        }
        let total = i64::from(self.tasks.count);
        self.counters.pending.fetch_add(total, Ordering::Relaxed);
        let mut outstanding = total;
        let mut completed: i64 = 0;
        let mut response_id = 0;
        let mut ask = vec![ResourceRequest {
            priority: self.tasks.priority,
            resource_name: "*".into(),
            capability: Some(Resource::new(self.tasks.memory_mb, self.tasks.vcores)),
            num_containers: i32::try_from(self.tasks.count).unwrap_or(i32::MAX),
            relax_locality: Some(true),
            node_label_expression: String::new(),
            allocation_request_id: 0,
        }];
        let mut next = tokio::time::Instant::now();
        while !*stop.borrow() && completed < total {
            tokio::select! {
                _ = tokio::time::sleep_until(next) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
            next = (next + self.interval).max(tokio::time::Instant::now());
            let request = AllocateRequest {
                ask: std::mem::take(&mut ask),
                response_id,
                progress: completed as f32 / total.max(1) as f32,
                ..Default::default()
            };
            let sent = crate::clock::now();
            // Counted until this call is answered: the run's teardown waits for it.
            let (at_ms, in_window) = self.shared.sending();
            let reply = tokio::select! {
                r = link.allocate(request) => r,
                _ = stop.wait_for(|s| *s) => break,
            };
            drop(in_window);
            let micros = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
            result.allocates.push(Sample { at_ms, micros });
            let reply = match reply {
                Ok(r) => r,
                Err(_) if *stop.borrow() => break,
                // The attempt is gone (the RM failed it, e.g. after its launch timed out, and
                // started another): calling again only repeats the error every second.
                Err(s) if s.code() == tonic::Code::NotFound => {
                    self.error("allocate", describe(&s));
                    break;
                }
                Err(s) => {
                    self.error("allocate", describe(&s));
                    continue;
                }
            };
            if reply.am_command == AmCommand::Resync as i32
                || reply.am_command == AmCommand::Shutdown as i32
            {
                self.error("allocate", "the RM told the AM to resync or shut down");
                break;
            }
            response_id = reply.response_id;
            let n = reply.allocated_containers.len() as i64;
            outstanding -= n;
            self.counters.pending.fetch_sub(n, Ordering::Relaxed);
            result.allocated.add(self.shared.now_ms(), n as u64);
            completed += reply.completed_container_statuses.len() as i64;
            let at = crate::clock::now();
            let mut by_node: HashMap<usize, Vec<Launched>> = HashMap::new();
            for c in reply.allocated_containers {
                match node_index(&c.node_id) {
                    Some(index) => by_node.entry(index).or_default().push(Launched {
                        id: c.container_id,
                        at,
                        forever: false,
                        size: c.resource.as_ref().map(|r| (r.memory_mb, r.vcores)),
                    }),
                    None => result.unroutable += 1,
                }
            }
            for (index, containers) in by_node {
                self.shared.launch(index, containers);
            }
        }
        // What was never allocated is no longer pending once the app is gone.
        self.counters
            .pending
            .fetch_sub(outstanding.max(0), Ordering::Relaxed);
        result.completed = completed >= total;
        link.close();
        result.finish = self.finish(result.completed).await;
        // The AM process ends after unregistering, so its container completes: left
        // running, the RM would keep it as a finished app's lingering AM until the AM expiry.
        if let Some((node, id)) = self.container.take() {
            self.shared.exited(node, id);
        }
        result
    }

    /// Unregisters the AM; the call's latency when it was answered.
    async fn finish(&mut self, completed: bool) -> Option<Sample> {
        let request = match self.creds.request(FinishApplicationMasterRequest {
            final_application_status: FinalApplicationStatus::Succeeded as i32,
            diagnostics: if completed {
                "every task completed".into()
            } else {
                "weft rm-bench ended the run".into()
            },
            tracking_url: String::new(),
        }) {
            Ok(r) => r,
            Err(e) => {
                self.error("finish", e);
                self.counters.failed_apps.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        let sent = crate::clock::now();
        let at_ms = self.shared.now_ms();
        match tokio::time::timeout(FINISH_TIMEOUT, self.rm.finish_application_master(request)).await
        {
            Ok(Ok(_)) => {
                let counter = if completed {
                    &self.counters.completed_apps
                } else {
                    &self.counters.stopped_apps
                };
                counter.fetch_add(1, Ordering::Relaxed);
                let micros = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
                return Some(Sample { at_ms, micros });
            }
            Ok(Err(s)) => {
                self.error("finish", describe(&s));
                self.counters.failed_apps.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                self.error("finish", format!("no answer within {FINISH_TIMEOUT:?}"));
                self.counters.failed_apps.fetch_add(1, Ordering::Relaxed);
            }
        }
        None
    }
}
