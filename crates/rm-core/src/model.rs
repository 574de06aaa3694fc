//! The plain data that goes in and out of [`RmCore`](crate::RmCore): submissions, node and AM
//! requests and replies, outputs for the driver, and read-only reports.

use std::collections::{BTreeMap, BTreeSet};

use weft_store::{AppState, AttemptState, FinalStatus, LaunchContext, LocalResource, Write};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{Resource, Time};

/// YARN's `ContainerExitStatus` values the RM itself assigns.
pub mod exit {
    /// The container ended normally.
    pub const SUCCESS: i32 = 0;
    /// Released by the application, lost with its node, or never launched.
    pub const ABORTED: i32 = -100;
    /// Preempted by the scheduler.
    pub const PREEMPTED: i32 = -102;
    /// Killed because the application asked.
    pub const KILLED_BY_APPMASTER: i32 = -105;
    /// Killed by the ResourceManager (e.g. the application was killed).
    pub const KILLED_BY_RESOURCEMANAGER: i32 = -106;
    /// Killed because its application finished.
    pub const KILLED_AFTER_APP_COMPLETION: i32 = -107;
    /// Not set yet.
    pub const INVALID: i32 = -1000;
}

/// An application as a client submits it (REST `POST /ws/v1/cluster/apps`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Submission {
    /// Application name (may be empty).
    pub name: String,
    /// Submitting user.
    pub user: String,
    /// The queue asked for; `None` lets the placement rules choose.
    pub queue: Option<String>,
    /// Application type (`YARN` when empty).
    pub application_type: String,
    /// Tags.
    pub tags: BTreeSet<String>,
    /// Application priority.
    pub priority: i32,
    /// Maximum AM attempts; 0 (or more than the cluster maximum) means the cluster maximum.
    pub max_attempts: u32,
    /// The AM container's size.
    pub am_resource: Resource,
    /// Whether the AM runs outside the cluster (not supported yet: refused).
    pub unmanaged_am: bool,
    /// How to start the AM.
    pub launch: LaunchContext,
    /// The reservation it runs in (Hadoop's `ApplicationSubmissionContext.reservationId`,
    /// REST `reservation-id`), as Hadoop prints it: submitted to the reservation's plan
    /// queue, it runs in the reservation's queue while the reservation is active.
    pub reservation_id: Option<String>,
    /// Weft's `weft-demand` (spec §3.4, "The AM at a scheduled time"): a ResourceDescription
    /// or an array of them, bound to the application; its AM is asked only at the first
    /// demand's planned start − (lead + `weft.demand.am-lead`).
    pub demand: Option<serde_json::Value>,
}

/// The state of a container as a NodeManager reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NmContainerState {
    /// Starting or running.
    Running,
    /// Ended; the exit status says how.
    Complete,
}

/// One container in a NodeManager's registration or heartbeat.
#[derive(Clone, Debug, PartialEq)]
pub struct NmContainerStatus {
    /// The container.
    pub container: ContainerId,
    /// Running or complete.
    pub state: NmContainerState,
    /// The exit status once complete (YARN's `ContainerExitStatus` or the process's code).
    pub exit_status: i32,
    /// What happened, in words.
    pub diagnostics: String,
    /// The container's size (used when the RM re-binds running containers after a restart).
    pub resource: Resource,
}

/// A NodeManager's registration.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRegistration {
    /// `host:port` of the NM's container-management service; the node's id.
    pub node_id: String,
    /// Where to reach that service (`ip:port`); empty means the node id.
    pub address: String,
    /// `host:port` of the NM's web service (container logs); empty when it has none.
    pub http_address: String,
    /// `host:port` of the NM's Hadoop ContainerManagementProtocol (`yarn.nodemanager.address`):
    /// the NodeId Hadoop AMs dial; empty when the NM serves none.
    pub hadoop_address: String,
    /// Total resources offered.
    pub capability: Resource,
    /// Rack path, e.g. `/default-rack`.
    pub rack: String,
    /// Containers the NM still runs (after an RM or NM restart).
    pub containers: Vec<NmContainerStatus>,
    /// The secret an earlier registration of this node id returned (empty on a first start).
    pub secret: String,
}

/// What the RM tells a NodeManager to do after a heartbeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAction {
    /// Carry on.
    Normal,
    /// The RM does not know this node (any more): register again with your running containers.
    Resync,
    /// The node was decommissioned: stop.
    Shutdown,
}

/// The RM's answer to a node heartbeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeartbeatReply {
    /// What to do next.
    pub action: Option<NodeAction>,
    /// Containers the NM must stop.
    pub containers_to_stop: Vec<ContainerId>,
    /// Applications whose containers and files the NM must clean up.
    pub apps_to_cleanup: Vec<ApplicationId>,
    /// A container-token master key the NM does not hold yet.
    pub master_key: Option<weft_tokens::MasterKey>,
    /// The NM's running count differs from the containers seen running on the node: its
    /// next heartbeat lists them all.
    pub send_all_statuses: bool,
}

impl HeartbeatReply {
    /// The action, `Normal` when unset.
    pub fn action(&self) -> NodeAction {
        self.action.unwrap_or(NodeAction::Normal)
    }
}

/// A node heartbeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStatus {
    /// Whether the node's health checks pass.
    pub healthy: bool,
    /// The health report, shown when unhealthy.
    pub health_report: String,
    /// Containers whose state the NM reports (running ones and newly completed ones).
    pub containers: Vec<NmContainerStatus>,
    /// The id of the latest master key the NM holds.
    pub last_key_id: Option<u32>,
    /// The node's registration secret.
    pub secret: String,
    /// How many containers the NM runs when `containers` lists only what changed (RUNNING
    /// statuses it already delivered are left out); `None` when it lists every one.
    pub running_containers: Option<u32>,
}

/// A node's lifecycle state (YARN's `NodeState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeState {
    /// Registered and heartbeating.
    Running,
    /// Heartbeating but failing its health checks: no new containers.
    Unhealthy,
    /// Silent past the NM expiry.
    Lost,
    /// Removed by an administrator.
    Decommissioned,
    /// Unregistered itself (clean NM stop).
    Shutdown,
}

impl NodeState {
    /// YARN's name (`RUNNING`, `LOST`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Running => "RUNNING",
            NodeState::Unhealthy => "UNHEALTHY",
            NodeState::Lost => "LOST",
            NodeState::Decommissioned => "DECOMMISSIONED",
            NodeState::Shutdown => "SHUTDOWN",
        }
    }
}

/// A request for containers from an AM. Asks are increments, as `AMRMClient.addContainerRequest`
/// makes them: each adds `count` containers at `priority`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceAsk {
    /// Priority (lower is served first).
    pub priority: i32,
    /// Size of each container.
    pub resource: Resource,
    /// How many more containers.
    pub count: u32,
    /// Preferred hosts.
    pub hosts: Vec<String>,
    /// Preferred racks.
    pub racks: Vec<String>,
    /// Whether other places are acceptable.
    pub relax_locality: bool,
}

/// One AM heartbeat (YARN's `AllocateRequest`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllocateRequest {
    /// New asks.
    pub asks: Vec<ResourceAsk>,
    /// Containers given back.
    pub releases: Vec<ContainerId>,
    /// Nodes (`host:port` or host names) the app does not want containers on.
    pub blacklist_additions: Vec<String>,
    /// Nodes taken off the blacklist.
    pub blacklist_removals: Vec<String>,
    /// The AM's progress, 0.0..=1.0.
    pub progress: f32,
    /// Weft-only all-or-nothing asks, each sent once (the scheduler's `Event::GangAsk`): each
    /// gang's members come back together in one reply.
    pub gangs: Vec<weft_sched::GangAsk>,
    /// Weft-only time-aware demands, each sent once: admitted as REST's demands are, their
    /// containers asked of the scheduler only while ALLOCATING.
    pub demands: Vec<AmDemand>,
    /// DemandIDs of the AM's demands to kill.
    pub kill_demands: Vec<u64>,
    /// DemandIDs of the AM's demands to mark done, each with whether it succeeded.
    pub complete_demands: Vec<(u64, bool)>,
}

/// A demand an AM sends with its heartbeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AmDemand {
    /// The ResourceDescription (a JSON object in the demand language).
    pub description: serde_json::Value,
    /// Preferred hosts of its containers (besides its ResourceRequest's `resource-name`).
    pub hosts: Vec<String>,
    /// Preferred racks.
    pub racks: Vec<String>,
}

/// A demand of the AM's whose state changed since it was last told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandUpdate {
    /// Its DemandID.
    pub demand_id: u64,
    /// Its state now.
    pub state: weft_store::DemandState,
    /// Why.
    pub reason: crate::DemandReason,
    /// What the reason does not say.
    pub detail: String,
    /// When it entered the state.
    pub at: Time,
}

/// A container handed to an AM.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocatedContainer {
    /// Its id.
    pub id: ContainerId,
    /// The node id (`host:port`).
    pub node_id: String,
    /// Where to reach the node's container-management service.
    pub node_address: String,
    /// Its size.
    pub resource: Resource,
    /// The priority of the ask it satisfied.
    pub priority: i32,
    /// The container token the NM wants before it starts the container.
    pub token: String,
    /// The DemandID of the demand it was allocated for.
    pub demand_id: Option<u64>,
}

/// An NM token: lets an AM manage its application's containers on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NmToken {
    /// The node (`host:port`).
    pub node_id: String,
    /// The signed token.
    pub token: String,
}

/// A completed container as an AM learns of it.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletedContainer {
    /// The container.
    pub id: ContainerId,
    /// YARN exit status.
    pub exit_status: i32,
    /// What happened.
    pub diagnostics: String,
}

/// A node whose state changed, as reported to AMs.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeReport {
    /// Node id.
    pub node_id: String,
    /// Its state now.
    pub state: NodeState,
}

/// The RM's answer to an AM heartbeat (YARN's `AllocateResponse`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllocateResponse {
    /// Containers allocated since the last call.
    pub allocated: Vec<AllocatedContainer>,
    /// Containers that ended since the last call.
    pub completed: Vec<CompletedContainer>,
    /// Resources the app may still get (what the cluster has free).
    pub headroom: Resource,
    /// Nodes that changed state since the last call.
    pub updated_nodes: Vec<NodeReport>,
    /// Nodes in the cluster that can run containers.
    pub cluster_nodes: u32,
    /// NM tokens for nodes of newly allocated containers the AM holds none for yet.
    pub nm_tokens: Vec<NmToken>,
    /// The app's containers the scheduler has marked for preemption and not killed yet, in
    /// marking order (YARN's `StrictPreemptionContract`), then those of its demands a strict
    /// end has warned (killed after `waitTimeBeforeKill` unless they end first); empty when
    /// none is marked.
    pub preempt: Vec<ContainerId>,
    /// The attempt's demands whose state changed since its last call.
    pub demand_updates: Vec<DemandUpdate>,
}

/// The RM's answer to an AM registration.
#[derive(Clone, Debug, PartialEq)]
pub struct RegisterResponse {
    /// The largest container the AM may ask for.
    pub maximum_capability: Resource,
    /// The app's queue.
    pub queue: String,
    /// Containers of this attempt still running (after an RM restart).
    pub running_containers: Vec<AllocatedContainer>,
    /// NM tokens for the nodes of those containers.
    pub nm_tokens: Vec<NmToken>,
    /// The gangs this attempt asked for and has not received (Weft-only): the RM keeps asking
    /// for them, also across its restarts, so an AM resending its outstanding total leaves
    /// their members out.
    pub pending_gangs: Vec<weft_sched::GangAsk>,
}

/// What the driver must launch for a new AM.
#[derive(Clone, Debug, PartialEq)]
pub struct AmLaunch {
    /// The node (`host:port` of its container manager).
    pub node_id: String,
    /// Where to reach the node's container-management service.
    pub node_address: String,
    /// The AM container.
    pub container: ContainerId,
    /// The attempt it runs.
    pub attempt: AttemptId,
    /// The submitting user.
    pub user: String,
    /// Its size.
    pub resource: Resource,
    /// The submission's launch context, with the RM's variables added to its environment
    /// (`WEFT_AM_TOKEN`, `APPLICATION_ATTEMPT_ID`, `CONTAINER_ID`, `WEFT_RM_SCHEDULER_ADDRESS`,
    /// `APPLICATION_ID`, `MAX_APP_ATTEMPTS`, `APP_SUBMIT_TIME_ENV`, `APPLICATION_WEB_PROXY_BASE`).
    pub launch: LaunchContext,
    /// The AM container's container token.
    pub container_token: String,
    /// An NM token for the attempt on that node, for the launch call itself.
    pub nm_token: String,
}

/// An output for the driver, drained with [`RmCore::poll_output`](crate::RmCore::poll_output).
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Apply these writes to the state store (atomically) before acknowledging the input that
    /// produced them.
    Persist(Vec<Write>),
    /// Start an AM container on its node.
    LaunchAm(Box<AmLaunch>),
    /// Stop a container on its node (it is also in the node's next heartbeat reply).
    StopContainer {
        /// The node.
        node_id: String,
        /// Where its container-management service listens.
        node_address: String,
        /// The container.
        container: ContainerId,
        /// An NM token for the container's attempt on that node.
        nm_token: String,
    },
}

/// A read-only view of an application (what REST shows).
#[derive(Clone, Debug, PartialEq)]
pub struct AppReport {
    /// Id.
    pub id: ApplicationId,
    /// Name.
    pub name: String,
    /// User.
    pub user: String,
    /// Current queue (full name).
    pub queue: String,
    /// State.
    pub state: AppState,
    /// Final status.
    pub final_status: FinalStatus,
    /// Diagnostics (empty if none).
    pub diagnostics: String,
    /// Type.
    pub application_type: String,
    /// Tags.
    pub tags: BTreeSet<String>,
    /// Priority.
    pub priority: i32,
    /// AM progress 0..=1.
    pub progress: f32,
    /// Submission time.
    pub submit_time: Time,
    /// When the first AM container was launched.
    pub launch_time: Option<Time>,
    /// When it ended.
    pub finish_time: Option<Time>,
    /// The current attempt.
    pub current_attempt: Option<AttemptReport>,
    /// Resources held by running containers.
    pub allocated: Resource,
    /// Running containers.
    pub running_containers: u32,
    /// The AM's tracking URL (when registered).
    pub tracking_url: Option<String>,
    /// Aggregate resource allocation so far (YARN's memorySeconds / vcoreSeconds).
    pub aggregate: AggregateUsage,
    /// What preemption took from it, over all its attempts.
    pub preemption: PreemptionReport,
}

/// What the scheduler preempted from an application, summed over its attempts (YARN's
/// `RMAppMetrics`: preemptedResourceMB/VCores, numAMContainerPreempted,
/// numNonAMContainerPreempted, preemptedMemorySeconds/VcoreSeconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreemptionReport {
    /// The sizes of the preempted containers, summed.
    pub resource: Resource,
    /// Preempted AM containers.
    pub am_containers: u32,
    /// Preempted containers other than AMs.
    pub non_am_containers: u32,
    /// Size x run time of the preempted containers: MB-seconds.
    pub memory_mb_seconds: u64,
    /// Size x run time of the preempted containers: vcore-seconds.
    pub vcore_seconds: u64,
}

/// Resources x time an application held, as YARN reports it ("Aggregate Resource Allocation").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AggregateUsage {
    /// MB-seconds.
    pub memory_mb_seconds: u64,
    /// Vcore-seconds.
    pub vcore_seconds: u64,
}

/// A read-only view of an attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptReport {
    /// Id.
    pub id: AttemptId,
    /// State.
    pub state: AttemptState,
    /// AM container.
    pub am_container: Option<ContainerId>,
    /// Node of the AM container.
    pub am_node: Option<String>,
    /// AM host and RPC port, once registered.
    pub am_rpc: Option<(String, u32)>,
    /// Start time.
    pub start_time: Time,
    /// End time.
    pub finish_time: Option<Time>,
    /// Diagnostics.
    pub diagnostics: String,
}

/// A read-only view of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeInfo {
    /// `host:port`.
    pub node_id: String,
    /// Where its container-management service listens.
    pub address: String,
    /// `host:port` of its web service (Hadoop's `nodeHTTPAddress`); empty when unknown.
    pub http_address: String,
    /// `host:port` of its Hadoop ContainerManagementProtocol; empty when it serves none.
    pub hadoop_address: String,
    /// Rack.
    pub rack: String,
    /// State.
    pub state: NodeState,
    /// Total resources.
    pub capability: Resource,
    /// Allocated resources.
    pub used: Resource,
    /// Live containers.
    pub containers: u32,
    /// Last heartbeat (or registration).
    pub last_heartbeat: Time,
    /// The health report.
    pub health_report: String,
    /// Its partition (node label; `None`: DEFAULT).
    pub label: Option<String>,
}

/// Re-exported so drivers need not name the store crate for launch contexts.
pub type LocalResources = BTreeMap<String, LocalResource>;

/// `<memory:1024, vCores:1>`, as YARN prints resources in messages.
pub(crate) fn show(r: weft_types::Resource) -> String {
    format!("<memory:{}, vCores:{}>", r.memory_mb(), r.vcores())
}

/// Where a live container is in its life, as the RM tracks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveContainerState {
    /// Allocated by the scheduler, not yet handed to the AM.
    Allocated,
    /// Handed to the AM (or being launched as the AM).
    Acquired,
    /// Reported running by its node.
    Running,
    /// Ended (kept for the app's reports; see `ENDED_CONTAINERS_KEPT`).
    Complete,
}

impl LiveContainerState {
    /// YARN's `ContainerState` name: a container the NM has not reported yet is `NEW`.
    pub fn container_state(self) -> &'static str {
        match self {
            LiveContainerState::Allocated | LiveContainerState::Acquired => "NEW",
            LiveContainerState::Running => "RUNNING",
            LiveContainerState::Complete => "COMPLETE",
        }
    }
}

/// A read-only view of a container, live or ended (REST `.../appattempts/{id}/containers`).
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerReport {
    /// Id.
    pub id: ContainerId,
    /// The attempt that owns it.
    pub attempt: AttemptId,
    /// Its node (`host:port`).
    pub node_id: String,
    /// The node's web address, when the NM announced one.
    pub node_http_address: Option<String>,
    /// Its size.
    pub resource: Resource,
    /// The priority of the ask it satisfied.
    pub priority: i32,
    /// Where it is in its life.
    pub state: LiveContainerState,
    /// Whether it runs the attempt's AM.
    pub is_am: bool,
    /// When it was allocated (or, after an RM restart, recovered).
    pub start_time: Time,
    /// When it ended; `None` while it lives.
    pub finish_time: Option<Time>,
    /// YARN's exit status once it ended.
    pub exit_status: Option<i32>,
    /// What ended it, in words (empty while it lives or when it ended normally).
    pub diagnostics: String,
}

/// Applications and nodes counted by state, and the containers on the nodes
/// ([`RmCore::state_counts`](crate::RmCore::state_counts)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateCounts {
    /// Applications per state, in the order first seen (states with none are absent).
    pub apps: Vec<(AppState, u64)>,
    /// Nodes per state, in the order first seen (states with none are absent).
    pub nodes: Vec<(NodeState, u64)>,
    /// Containers the nodes hold (allocated, running or being stopped).
    pub containers_on_nodes: u64,
}

impl StateCounts {
    /// Applications in `state`.
    pub fn apps_in(&self, state: AppState) -> u64 {
        count_of(&self.apps, state)
    }

    /// Nodes in `state`.
    pub fn nodes_in(&self, state: NodeState) -> u64 {
        count_of(&self.nodes, state)
    }

    pub(crate) fn add<S: PartialEq>(list: &mut Vec<(S, u64)>, state: S) {
        match list.iter_mut().find(|(s, _)| *s == state) {
            Some((_, n)) => *n += 1,
            None => list.push((state, 1)),
        }
    }
}

fn count_of<S: PartialEq>(list: &[(S, u64)], state: S) -> u64 {
    list.iter()
        .find(|(s, _)| *s == state)
        .map_or(0, |(_, n)| *n)
}

/// Cluster-wide figures (REST `/ws/v1/cluster/metrics`, the UI overview, Prometheus).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterMetrics {
    /// Applications the RM knows (every state).
    pub apps_submitted: u64,
    /// Applications that ended FINISHED.
    pub apps_completed: u64,
    /// Applications not yet running (NEW, SUBMITTED, ACCEPTED).
    pub apps_pending: u64,
    /// Applications RUNNING.
    pub apps_running: u64,
    /// Applications that ended FAILED.
    pub apps_failed: u64,
    /// Applications that ended KILLED.
    pub apps_killed: u64,
    /// Resources of usable nodes.
    pub total: Resource,
    /// Resources held by containers.
    pub allocated: Resource,
    /// `total - allocated`.
    pub available: Resource,
    /// Resources held by node reservations.
    pub reserved: Resource,
    /// Live containers.
    pub containers_allocated: u64,
    /// Nodes holding a reservation (one reserved container each).
    pub containers_reserved: u64,
    /// Containers asked for and not yet allocated.
    pub containers_pending: u64,
    /// Resources asked for and not yet allocated.
    pub pending: Resource,
    /// Nodes in any state.
    pub total_nodes: u64,
    /// RUNNING nodes.
    pub active_nodes: u64,
    /// LOST nodes.
    pub lost_nodes: u64,
    /// UNHEALTHY nodes.
    pub unhealthy_nodes: u64,
    /// DECOMMISSIONED nodes.
    pub decommissioned_nodes: u64,
    /// SHUTDOWN nodes.
    pub shutdown_nodes: u64,
}
