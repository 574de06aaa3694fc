//! The distributed-shell ApplicationMaster: registers with the RM, asks for N containers,
//! starts the shell command in each through its NM, and reports how each one ended.
//!
//! The RM tells the AM where it is and who it is through the AM container's environment
//! (`WEFT_RM_SCHEDULER_ADDRESS`, `WEFT_AM_TOKEN`, `CONTAINER_ID` or `APPLICATION_ATTEMPT_ID`).

mod tracker;

pub use tracker::{Decision, Outcome, Tracker};

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use tonic::transport::Channel;
use weft_proto::allocate_link::AllocateLink;
use weft_proto::auth::{
    with_nm_token, AmCredentials, ENV_AM_TOKEN, ENV_APPLICATION_ATTEMPT_ID, ENV_CONTAINER_ID,
    ENV_RM_SCHEDULER_ADDRESS,
};
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::{
    self, AllocateRequest, AllocateResponse, AmCommand, Container, ContainerLaunchContext,
    DemandRequest, FinishApplicationMasterRequest, GangRequest, LocalResource, NodeState,
    RegisterApplicationMasterRequest, ResourceRequest, StartContainerRequest,
    StartContainersRequest,
};
use weft_types::yarn_id::{AttemptId, ContainerId};

use crate::shell::quote;

/// Time between allocate calls (YARN's distributed shell uses 1 s; shorter keeps short runs
/// short without loading the RM).
const HEARTBEAT: Duration = Duration::from_millis(300);
/// The bound on any single RPC.
const RPC_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the AM keeps retrying an unreachable RM (e.g. while it restarts) before giving up.
const RM_RETRY_WINDOW: Duration = Duration::from_secs(120);
/// The name the script is localized under in each container, as in YARN.
const SCRIPT_NAME: &str = "ExecScript.sh";

/// `weft dshell-am`: the distributed shell's ApplicationMaster (started by the RM, not by hand).
#[derive(Clone, Debug, clap::Args)]
pub struct DshellAmArgs {
    /// The shell command to run in each container.
    #[arg(long = "shell_command")]
    pub shell_command: Option<String>,
    /// A script (absolute path) to run in each container instead of a command.
    #[arg(long = "shell_script")]
    pub shell_script: Option<String>,
    /// Arguments appended to the command or script.
    #[arg(long = "shell_args", num_args = 1..)]
    pub shell_args: Vec<String>,
    /// Environment for the containers, `NAME=VALUE` (repeatable).
    #[arg(long = "shell_env")]
    pub shell_env: Vec<String>,
    /// How many containers run the command.
    #[arg(long = "num_containers", default_value_t = 1)]
    pub num_containers: u32,
    /// Memory per container, MB.
    #[arg(long = "container_memory", default_value_t = 10)]
    pub container_memory: i64,
    /// Virtual cores per container.
    #[arg(long = "container_vcores", default_value_t = 1)]
    pub container_vcores: i64,
    /// Priority of the containers' asks.
    #[arg(long = "shell_cmd_priority", default_value_t = 0)]
    pub shell_cmd_priority: i32,
    /// Ask for the containers in all-or-nothing gangs of this many (Weft-only).
    #[arg(long = "gang")]
    pub gang: Option<u32>,
    /// Weft-only: ask for the containers as this time-aware demand (a ResourceDescription's
    /// JSON, written by the client from its demand flags, in hex: the NM expands `{{...}}` in
    /// a launch command, which JSON's closing braces would trip) instead of an ordinary ask.
    #[arg(long = "demand_hex")]
    pub demand_hex: Option<String>,
}

/// How long the RM may hold part of a gang while waiting for room for the rest (then the held
/// containers are handed over and the rest asked for one by one: a soft gang).
const GANG_HOLD_TIMEOUT_MS: u64 = 15 * 60 * 1000;

impl DshellAmArgs {
    /// The bash line each container runs.
    pub fn container_command(&self) -> String {
        let mut line = match (&self.shell_command, &self.shell_script) {
            (Some(cmd), _) => cmd.clone(),
            (None, Some(_)) => format!("bash {SCRIPT_NAME}"),
            (None, None) => String::new(),
        };
        for arg in &self.shell_args {
            line.push(' ');
            line.push_str(&quote(arg));
        }
        line
    }

    /// The launch context for one container: `bash -c '<command>'`, the shell environment,
    /// and the script as a local resource when there is one.
    pub fn launch_context(&self) -> ContainerLaunchContext {
        let mut ctx = ContainerLaunchContext {
            command: vec![
                "bash".to_string(),
                "-c".to_string(),
                quote(&self.container_command()),
            ],
            ..Default::default()
        };
        for entry in &self.shell_env {
            if let Some((k, v)) = entry.split_once('=') {
                ctx.environment.insert(k.to_string(), v.to_string());
            }
        }
        if let Some(script) = &self.shell_script {
            ctx.local_resources.insert(
                SCRIPT_NAME.to_string(),
                LocalResource {
                    resource: script.clone(),
                    ..Default::default()
                },
            );
        }
        ctx
    }
}

/// Who this AM is and where its RM listens, from the environment the RM gave the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmEnvironment {
    /// `host:port` of the RM's ApplicationMasterProtocol service.
    pub scheduler_address: String,
    /// The attempt id and token to present.
    pub credentials: AmCredentials,
    /// The application id (`application_<ts>_<seq>`).
    pub application_id: String,
    /// The user the containers run as.
    pub user: String,
    /// The NM host the AM runs on (for registration).
    pub host: String,
}

impl AmEnvironment {
    /// Reads the environment through `get`, so tests can supply their own.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> anyhow::Result<AmEnvironment> {
        let need = |key: &str| {
            get(key)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| anyhow!("{key} is not set: the AM must be started by the RM"))
        };
        let attempt = match get(ENV_APPLICATION_ATTEMPT_ID).filter(|v| !v.is_empty()) {
            Some(a) => AttemptId::from_str(&a)
                .with_context(|| format!("bad {ENV_APPLICATION_ATTEMPT_ID}"))?,
            None => ContainerId::from_str(&need(ENV_CONTAINER_ID)?)
                .with_context(|| format!("bad {ENV_CONTAINER_ID}"))?
                .attempt_id(),
        };
        Ok(AmEnvironment {
            scheduler_address: need(ENV_RM_SCHEDULER_ADDRESS)?,
            credentials: AmCredentials {
                attempt_id: attempt.to_string(),
                token: need(ENV_AM_TOKEN)?,
            },
            application_id: attempt.app.to_string(),
            user: get("USER").unwrap_or_default(),
            host: get("NM_HOST").unwrap_or_default(),
        })
    }
}

/// Runs the AM to completion; `Err` (a non-zero exit) unless every container exited 0.
pub fn run_am(args: DshellAmArgs) -> anyhow::Result<()> {
    if args.shell_command.is_none() && args.shell_script.is_none() {
        bail!("no --shell_command or --shell_script given");
    }
    let env = AmEnvironment::from_lookup(|k| std::env::var(k).ok())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the AM's runtime")?;
    runtime.block_on(Am::run(args, env))
}

/// The running AM: its RM connection, its bookkeeping and the allocate sequence number.
struct Am {
    args: DshellAmArgs,
    env: AmEnvironment,
    rm: ApplicationMasterProtocolClient<Channel>,
    /// The RM connection (for the Allocate link, made anew at each registration).
    channel: Channel,
    /// Allocate calls, over the RM's Allocate stream when its registration answer offers one.
    link: AllocateLink,
    tracker: Tracker,
    response_id: i32,
    capability: v1::Resource,
    /// Node id -> the NM token for this attempt there (from Allocate and Register replies).
    nm_tokens: BTreeMap<String, String>,
    /// With `--gang`: whether the RM has accepted the gangs (then any later ask is ordinary).
    gangs_sent: bool,
    /// Members of the gangs the RM said (at registration) it still owes: it asks for them
    /// itself, also after it restarted, so the ordinary ask leaves them out until they come.
    gang_members_owed: u32,
    /// With `--demand_hex`: whether the RM has accepted the demand (it is sent once; the RM
    /// asks for its containers itself, also after a restart).
    demand_sent: bool,
    /// Why the demand failed, once the RM said so.
    demand_failed: Option<String>,
    /// The demand's description (`--demand_hex` decoded).
    demand_json: Option<String>,
}

impl Am {
    async fn run(args: DshellAmArgs, env: AmEnvironment) -> anyhow::Result<()> {
        let url = format!("http://{}", env.scheduler_address);
        let channel = Channel::from_shared(url.clone())
            .with_context(|| format!("bad scheduler address {url}"))?
            .connect_timeout(RPC_TIMEOUT)
            .timeout(RPC_TIMEOUT)
            .connect_lazy();
        let mut am = Am {
            tracker: Tracker::new(args.num_containers),
            capability: v1::Resource::new(args.container_memory, args.container_vcores),
            rm: ApplicationMasterProtocolClient::new(channel.clone()),
            link: AllocateLink::new(channel.clone(), env.credentials.clone(), false),
            channel,
            response_id: 0,
            nm_tokens: BTreeMap::new(),
            gangs_sent: false,
            gang_members_owed: 0,
            demand_sent: false,
            demand_failed: None,
            demand_json: match &args.demand_hex {
                Some(hex) => Some(crate::demand::from_hex(hex).context("bad --demand_hex")?),
                None => None,
            },
            args,
            env,
        };
        am.register().await?;
        println!(
            "ApplicationMaster {} registered; running {} container(s) of {} MB, {} vcores",
            am.env.credentials.attempt_id,
            am.args.num_containers,
            am.capability.memory_mb,
            am.capability.vcores
        );
        while !am.tracker.is_done() && am.demand_failed.is_none() {
            if !am.heartbeat().await? {
                bail!("the RM told the AM to shut down");
            }
            if !am.tracker.is_done() && am.demand_failed.is_none() {
                tokio::time::sleep(HEARTBEAT).await;
            }
        }
        let (mut status, mut diagnostics) = am.tracker.final_status();
        if let Some(why) = &am.demand_failed {
            status = v1::FinalApplicationStatus::Failed;
            diagnostics = format!("{why}\n{diagnostics}");
        }
        println!("{diagnostics}");
        am.finish(status, &diagnostics).await?;
        if status == v1::FinalApplicationStatus::Succeeded {
            Ok(())
        } else {
            bail!("{}", diagnostics.lines().next().unwrap_or("failed"))
        }
    }

    /// Calls the RM, retrying while it is unreachable (an RM restart) for a bounded window.
    async fn with_retry<T, F, Fut>(&mut self, mut call: F) -> Result<T, tonic::Status>
    where
        F: FnMut(ApplicationMasterProtocolClient<Channel>, AmCredentials) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let start = tokio::time::Instant::now();
        loop {
            match call(self.rm.clone(), self.env.credentials.clone()).await {
                Ok(r) => return Ok(r.into_inner()),
                Err(s) if worth_retrying(&s, start) => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(s) => return Err(s),
            }
        }
    }

    /// One Allocate over the link, retried as [`Am::with_retry`] retries.
    async fn allocate_with_retry(
        &mut self,
        request: &AllocateRequest,
    ) -> Result<AllocateResponse, tonic::Status> {
        let start = tokio::time::Instant::now();
        loop {
            match self.link.allocate(request.clone()).await {
                Err(s) if worth_retrying(&s, start) => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                answer => return answer,
            }
        }
    }

    async fn register(&mut self) -> anyhow::Result<()> {
        let host = self.env.host.clone();
        let reply = self
            .with_retry(|mut rm, creds| {
                let req = RegisterApplicationMasterRequest {
                    host: host.clone(),
                    rpc_port: 0,
                    tracking_url: String::new(),
                };
                async move {
                    let req = creds
                        .request(req)
                        .map_err(|e| tonic::Status::invalid_argument(e.to_string()))?;
                    rm.register_application_master(req).await
                }
            })
            .await
            .map_err(|s| rpc_error("RegisterApplicationMaster", &s))?;
        // As YARN's distributed shell does: an ask above the maximum is lowered, not refused.
        if let Some(max) = &reply.maximum_capability {
            if self.capability.memory_mb > max.memory_mb || self.capability.vcores > max.vcores {
                println!(
                    "Container size {} MB, {} vcores is above the maximum {} MB, {} vcores; using the maximum",
                    self.capability.memory_mb, self.capability.vcores, max.memory_mb, max.vcores
                );
                self.capability.memory_mb = self.capability.memory_mb.min(max.memory_mb);
                self.capability.vcores = self.capability.vcores.min(max.vcores);
            }
        }
        for c in &reply.containers_from_previous_attempts {
            self.tracker.adopt(&c.container_id, &c.node_id);
        }
        self.gang_members_owed = reply
            .pending_gangs
            .iter()
            .fold(0u32, |sum, g| sum.saturating_add(g.size));
        if self.gang_members_owed > 0 {
            println!(
                "The RM still asks for {} gang(s) of this attempt ({} containers); not asking for them again",
                reply.pending_gangs.len(),
                self.gang_members_owed
            );
        }
        self.learn_nm_tokens(&reply.nm_tokens_from_previous_attempts);
        self.link = AllocateLink::new(
            self.channel.clone(),
            self.env.credentials.clone(),
            reply.allocate_stream,
        )
        .framed(&self.env.scheduler_address, reply.framed_transport)
        .timeout(RPC_TIMEOUT);
        Ok(())
    }

    /// With `--gang g` and until the RM has them: the outstanding containers as gangs of `g`
    /// (the client checked that `g` divides their number), ids 1, 2, ...
    fn gang_requests(&self) -> Vec<GangRequest> {
        if self.demand_json.is_some() {
            // The demand says Gang; the RM asks for it as gangs.
            return Vec::new();
        }
        let Some(g) = self.args.gang.filter(|g| *g > 0 && !self.gangs_sent) else {
            return Vec::new();
        };
        let gangs = self.tracker.outstanding() / g;
        (1..=u64::from(gangs))
            .map(|id| GangRequest {
                gang_id: id,
                priority: self.args.shell_cmd_priority,
                capability: Some(self.capability.clone()),
                size: g,
                hold_timeout_ms: GANG_HOLD_TIMEOUT_MS,
                hard: false,
            })
            .collect()
    }

    /// One allocate round trip and the work it brings. Returns false on a SHUTDOWN command.
    async fn heartbeat(&mut self) -> anyhow::Result<bool> {
        let gangs = self.gang_requests();
        let demands: Vec<DemandRequest> = match &self.demand_json {
            Some(json) if !self.demand_sent => vec![DemandRequest {
                description: json.clone(),
                asks: Vec::new(),
            }],
            _ => Vec::new(),
        };
        let ask: Vec<ResourceRequest> = self
            .tracker
            .take_ask()
            .filter(|_| gangs.is_empty() && self.demand_json.is_none())
            .map(|n| n.saturating_sub(self.gang_members_owed))
            .map(|n| ResourceRequest {
                priority: self.args.shell_cmd_priority,
                resource_name: "*".to_string(),
                capability: Some(self.capability.clone()),
                num_containers: i32::try_from(n).unwrap_or(i32::MAX),
                relax_locality: Some(true),
                ..Default::default()
            })
            .into_iter()
            .collect();
        let request = AllocateRequest {
            ask,
            release: self.tracker.take_releases(),
            response_id: self.response_id,
            progress: self.tracker.progress(),
            gangs,
            demands,
            ..Default::default()
        };
        let result = self.allocate_with_retry(&request).await;
        let reply = match result {
            Ok(reply) => reply,
            // YARN answers an allocate from an attempt that has not registered with this RM
            // instance (it restarted) with ApplicationMasterNotRegistered: register again.
            Err(s) if s.code() == tonic::Code::FailedPrecondition => {
                self.resync(request.release).await?;
                return Ok(true);
            }
            Err(s) => return Err(rpc_error("Allocate", &s)),
        };
        match reply.am_command() {
            AmCommand::Shutdown => return Ok(false),
            AmCommand::Resync => {
                self.resync(request.release).await?;
                return Ok(true);
            }
            AmCommand::None => {}
        }
        self.response_id = reply.response_id;
        if !request.demands.is_empty() {
            self.demand_sent = true;
            println!(
                "Asked for the containers as a time-aware demand: {}",
                request.demands[0].description
            );
        }
        for update in &reply.demand_updates {
            let key = format!("{}/{}", self.env.application_id, update.demand_id);
            let detail = if update.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", update.detail)
            };
            println!(
                "Demand {key} is {} ({}){detail}",
                update.state, update.reason
            );
            if update.state == "FAILED" {
                self.demand_failed =
                    Some(format!("demand {key} FAILED ({}){detail}", update.reason));
            }
        }
        if !request.gangs.is_empty() {
            self.gangs_sent = true;
            println!(
                "Asked for {} gang(s) of {} containers, each delivered all at once",
                request.gangs.len(),
                self.args.gang.unwrap_or(0)
            );
        }

        for node in &reply.updated_nodes {
            if matches!(
                node.node_state(),
                NodeState::Lost | NodeState::Decommissioned | NodeState::Shutdown
            ) {
                for o in self.tracker.on_node_lost(&node.node_id) {
                    println!("{}", o.line());
                }
            }
        }
        if let Some(contract) = reply
            .preempt
            .as_ref()
            .and_then(|p| p.strict_contract.as_ref())
        {
            for c in self.tracker.on_preemption_notice(&contract.containers) {
                if self.demand_json.is_some() {
                    // A demand's containers are not asked for again (its count was used); a
                    // strict end warns this way before it kills.
                    println!("The RM will preempt {c} unless it ends first");
                } else {
                    println!("The RM will preempt {c}; its task will be asked for again");
                }
            }
        }
        for status in &reply.completed_container_statuses {
            if let Some(o) = self.tracker.on_completed(
                &status.container_id,
                status.exit_status,
                &status.diagnostics,
            ) {
                println!("{}", o.line());
            }
        }
        self.learn_nm_tokens(&reply.nm_tokens);
        let mut to_launch: BTreeMap<String, Vec<Container>> = BTreeMap::new();
        // Owed gangs arrive whole; what comes counts against them first.
        let received = u32::try_from(reply.allocated_containers.len()).unwrap_or(u32::MAX);
        self.gang_members_owed = self.gang_members_owed.saturating_sub(received);
        if self.args.gang.is_some() && !reply.allocated_containers.is_empty() {
            println!(
                "Received {} container(s) in one reply",
                reply.allocated_containers.len()
            );
        }
        for c in reply.allocated_containers {
            match self.tracker.on_allocated(&c.container_id, &c.node_id) {
                Decision::Launch => {
                    let addr = if c.node_address.is_empty() {
                        c.node_id.clone()
                    } else {
                        c.node_address.clone()
                    };
                    to_launch.entry(addr).or_default().push(c);
                }
                Decision::Release => println!("Releasing surplus container {}", c.container_id),
                Decision::Ignore => {}
            }
        }
        for (addr, containers) in to_launch {
            self.launch(&addr, containers).await;
        }
        Ok(true)
    }

    /// The RM restarted: register again and resend what it may have lost (the asks and the
    /// releases of the call that was refused).
    async fn resync(&mut self, unsent_releases: Vec<String>) -> anyhow::Result<()> {
        println!("The RM asked for a resync; registering again");
        self.response_id = 0;
        self.tracker.resync();
        self.tracker.release_again(unsent_releases);
        self.register().await
    }

    /// Keeps the NM tokens the RM sent (one per node; a newer one replaces the old).
    fn learn_nm_tokens(&mut self, tokens: &[v1::NmToken]) {
        for t in tokens {
            self.nm_tokens.insert(t.node_id.clone(), t.token.clone());
        }
    }

    /// Starts the shell command in `containers`, all on the NM at `addr`; any failure is
    /// recorded against the container rather than ending the AM.
    async fn launch(&mut self, addr: &str, containers: Vec<Container>) {
        let requests = containers
            .iter()
            .map(|c| StartContainerRequest {
                container_id: c.container_id.clone(),
                application_id: self.env.application_id.clone(),
                user: self.env.user.clone(),
                resource: c.resource.clone().or_else(|| Some(self.capability.clone())),
                container_launch_context: Some(self.args.launch_context()),
                container_token: c.container_token.clone(),
            })
            .collect();
        // All of them are on one node, so one NM token serves.
        let nm_token = containers
            .first()
            .and_then(|c| self.nm_tokens.get(&c.node_id))
            .cloned()
            .unwrap_or_default();
        let result = start_containers(addr, &nm_token, requests).await;
        match result {
            Ok(reply) => {
                for id in &reply.succeeded_requests {
                    let node = self.tracker.node_of(id).unwrap_or(addr).to_string();
                    println!("{id} started on {node}");
                }
                for failure in &reply.failed_requests {
                    if let Some(o) = self
                        .tracker
                        .on_start_failed(&failure.container_id, &failure.exception)
                    {
                        println!("{}", o.line());
                    }
                }
            }
            Err(message) => {
                for c in &containers {
                    if let Some(o) = self.tracker.on_start_failed(&c.container_id, &message) {
                        println!("{}", o.line());
                    }
                }
            }
        }
    }

    async fn finish(
        &mut self,
        status: v1::FinalApplicationStatus,
        diagnostics: &str,
    ) -> anyhow::Result<()> {
        self.link.close();
        let request = FinishApplicationMasterRequest {
            final_application_status: status as i32,
            diagnostics: diagnostics.to_string(),
            tracking_url: String::new(),
        };
        self.with_retry(|mut rm, creds| {
            let req = request.clone();
            async move {
                let req = creds
                    .request(req)
                    .map_err(|e| tonic::Status::invalid_argument(e.to_string()))?;
                rm.finish_application_master(req).await
            }
        })
        .await
        .map_err(|s| rpc_error("FinishApplicationMaster", &s))?;
        Ok(())
    }
}

/// An RPC failure as the AM reports it.
/// Whether a call that failed so is tried again: the RM is unreachable (restarting) and the
/// retry window that began at `start` is still open.
fn worth_retrying(status: &tonic::Status, start: tokio::time::Instant) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable | tonic::Code::DeadlineExceeded
    ) && start.elapsed() < RM_RETRY_WINDOW
}

fn rpc_error(what: &str, status: &tonic::Status) -> anyhow::Error {
    anyhow!("{what} failed: {} ({:?})", status.message(), status.code())
}

/// One StartContainers call to the NM at `addr`, bounded in time.
async fn start_containers(
    addr: &str,
    nm_token: &str,
    requests: Vec<StartContainerRequest>,
) -> Result<v1::StartContainersResponse, String> {
    let request = with_nm_token(
        StartContainersRequest {
            start_container_request: requests,
        },
        nm_token,
    )
    .map_err(|e| e.to_string())?;
    let channel = Channel::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("bad NM address {addr}: {e}"))?
        .connect_timeout(RPC_TIMEOUT)
        .timeout(RPC_TIMEOUT)
        .connect()
        .await
        .map_err(|e| format!("cannot reach the NM at {addr}: {e}"))?;
    ContainerManagementClient::new(channel)
        .start_containers(request)
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| format!("the NM at {addr} refused: {}", s.message()))
}

#[cfg(test)]
mod tests;
