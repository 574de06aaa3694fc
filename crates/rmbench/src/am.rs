//! The greedy ApplicationMaster: registers with the credentials the RM put in the AM container's
//! environment, asks once for far more containers than the cluster holds, then calls Allocate
//! back to back (never releasing: the simulated NMs complete the containers), handing each new
//! container to the simulated node it was placed on.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::transport::Channel;
use weft_proto::allocate_link::AllocateLink;
use weft_proto::auth::AmCredentials;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::{
    AllocateRequest, AmCommand, FinalApplicationStatus, FinishApplicationMasterRequest,
    RegisterApplicationMasterRequest, Resource, ResourceRequest,
};

use crate::error::BenchError;
use crate::shared::{describe, node_index, Launched, Shared};
use crate::stats::{Sample, Timeline};

/// Bound on unregistering at the end (the RM then stops every container of the app).
const FINISH_TIMEOUT: Duration = Duration::from_secs(5);
/// Outstanding containers asked for at a time; topped up when it runs low.
const ASK_CHUNK: i32 = 100_000_000;

/// What the AM measured.
#[derive(Debug, Default)]
pub(crate) struct AmResult {
    /// New containers, by the time the Allocate answer arrived.
    pub(crate) allocated: Timeline,
    /// Completions the RM reported to the AM, by arrival time.
    pub(crate) completed: Timeline,
    /// Every Allocate call's send time and latency.
    pub(crate) allocates: Vec<Sample>,
    /// Containers placed on nodes the bench does not simulate (should be none).
    pub(crate) unroutable: u64,
}

/// How the AM asks.
#[derive(Clone, Debug)]
pub(crate) struct AmSpec {
    /// Container memory, MB.
    pub(crate) memory_mb: i64,
    /// Container vcores.
    pub(crate) vcores: i64,
    /// Pause between Allocate calls (zero: call again as soon as the answer is in).
    pub(crate) interval: Duration,
    /// Unary Allocate calls even when the RM offers its stream (or framed transport).
    pub(crate) unary_allocates: bool,
    /// The RM's AM service address (`host:port`) when the AM takes the framed transport the
    /// RM offers; `None` with `--grpc-streams` or `--unary-allocates`.
    pub(crate) framed_to: Option<String>,
}

/// A registered AM.
pub(crate) struct Am {
    rm: ApplicationMasterProtocolClient<Channel>,
    channel: Channel,
    /// Allocate calls, over the RM's stream when its registration answer offered one.
    link: AllocateLink,
    creds: AmCredentials,
    spec: AmSpec,
    shared: Arc<Shared>,
    response_id: i32,
    outstanding: i64,
}

impl Am {
    /// Registers the attempt.
    pub(crate) async fn register(
        channel: Channel,
        creds: AmCredentials,
        spec: AmSpec,
        shared: Arc<Shared>,
    ) -> Result<Am, BenchError> {
        let mut am = Am {
            rm: ApplicationMasterProtocolClient::new(channel.clone())
                .max_decoding_message_size(usize::MAX),
            link: AllocateLink::new(channel.clone(), creds.clone(), false),
            channel,
            creds,
            spec,
            shared,
            response_id: 0,
            outstanding: 0,
        };
        am.register_again().await?;
        Ok(am)
    }

    async fn register_again(&mut self) -> Result<(), BenchError> {
        let request = self
            .creds
            .request(RegisterApplicationMasterRequest {
                host: "weft-rmbench".into(),
                rpc_port: 0,
                tracking_url: String::new(),
            })
            .map_err(|e| BenchError::Args(e.to_string()))?;
        let registered = self
            .rm
            .register_application_master(request)
            .await
            .map_err(BenchError::rpc("RegisterApplicationMaster"))?
            .into_inner();
        let stream = registered.allocate_stream && !self.spec.unary_allocates;
        self.link = AllocateLink::new(self.channel.clone(), self.creds.clone(), stream)
            .framed(
                self.spec.framed_to.as_deref().unwrap_or_default(),
                registered.framed_transport && self.spec.framed_to.is_some(),
            )
            .max_decoding_message_size(usize::MAX);
        self.response_id = 0;
        Ok(())
    }

    fn ask(&self, count: i32) -> ResourceRequest {
        ResourceRequest {
            priority: 1,
            resource_name: "*".into(),
            capability: Some(Resource::new(self.spec.memory_mb, self.spec.vcores)),
            num_containers: count,
            relax_locality: Some(true),
            node_label_expression: String::new(),
            allocation_request_id: 0,
        }
    }

    /// Allocates until `stop`, then unregisters.
    pub(crate) async fn run(mut self, mut stop: watch::Receiver<bool>) -> AmResult {
        let mut result = AmResult::default();
        while !*stop.borrow() {
            // The `*` count is the absolute total outstanding (YARN's asks); the RM lowers its
            // copy as it allocates, so the AM sends it again only to top it up.
            let ask = if self.outstanding < i64::from(ASK_CHUNK / 2) {
                self.outstanding = i64::from(ASK_CHUNK);
                vec![self.ask(ASK_CHUNK)]
            } else {
                Vec::new()
            };
            let request = AllocateRequest {
                ask,
                response_id: self.response_id,
                progress: 0.5,
                ..Default::default()
            };
            let sent = crate::clock::now();
            let at_ms = self.shared.now_ms();
            // The run's end abandons a call in flight rather than waiting on an overloaded RM.
            let reply = tokio::select! {
                r = self.link.allocate(request) => r,
                _ = stop.wait_for(|s| *s) => break,
            };
            let micros = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
            result.allocates.push(Sample { at_ms, micros });
            let reply = match reply {
                Ok(r) => r,
                Err(_) if *stop.borrow() => break,
                Err(s) => {
                    self.shared.error(format!("AM: allocate: {}", describe(&s)));
                    if s.code() == tonic::Code::FailedPrecondition {
                        self.resync().await;
                    } else {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            };
            if reply.am_command == AmCommand::Resync as i32 {
                self.resync().await;
                continue;
            }
            if reply.am_command == AmCommand::Shutdown as i32 {
                self.shared.error("AM: the RM said shut down".into());
                break;
            }
            self.response_id = reply.response_id;
            let now_ms = self.shared.now_ms();
            let n = reply.allocated_containers.len();
            self.outstanding -= n as i64;
            result.allocated.add(now_ms, n as u64);
            result
                .completed
                .add(now_ms, reply.completed_container_statuses.len() as u64);
            let launched_at = crate::clock::now();
            // Group by node so each node's inbox is locked once per answer.
            let mut by_node: HashMap<usize, Vec<Launched>> = HashMap::new();
            for c in reply.allocated_containers {
                let Some(index) = node_index(&c.node_id) else {
                    result.unroutable += 1;
                    continue;
                };
                let l = Launched {
                    id: c.container_id,
                    at: launched_at,
                    forever: false,
                    size: c.resource.as_ref().map(|r| (r.memory_mb, r.vcores)),
                };
                by_node.entry(index).or_default().push(l);
            }
            for (index, containers) in by_node {
                self.shared.launch(index, containers);
            }
            if !self.spec.interval.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(self.spec.interval) => {}
                    _ = stop.wait_for(|s| *s) => {}
                }
            }
        }
        self.link.close();
        self.finish().await;
        result
    }

    async fn resync(&mut self) {
        if let Err(e) = self.register_again().await {
            self.shared.error(format!("AM: register again: {e}"));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // The RM may have lost the outstanding ask with its state.
        self.outstanding = 0;
    }

    async fn finish(&mut self) {
        let request = self.creds.request(FinishApplicationMasterRequest {
            final_application_status: FinalApplicationStatus::Succeeded as i32,
            diagnostics: "weft rm-bench finished".into(),
            tracking_url: String::new(),
        });
        match request {
            Ok(r) => {
                match tokio::time::timeout(FINISH_TIMEOUT, self.rm.finish_application_master(r))
                    .await
                {
                    Ok(Ok(_)) => {}
                    Ok(Err(s)) => self.shared.error(format!("AM: finish: {}", describe(&s))),
                    Err(_) => self.shared.error(format!(
                        "AM: FinishApplicationMaster got no answer within {FINISH_TIMEOUT:?}"
                    )),
                }
            }
            Err(e) => self.shared.error(format!("AM: finish: {e}")),
        }
    }
}
