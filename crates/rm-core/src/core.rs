//! The `RmCore` state, its configuration, getters, and the handling of scheduler decisions.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use weft_sched::{ContainerExit, Decision, GroupMapping, Scheduler, SchedulerConfig};
use weft_store::{AppState, AttemptState, ClusterMeta, FinalStatus, Write};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{AppId, Duration, NodeId, Resource, Time};

use crate::demands::TagOutcome;
use crate::ended_containers::{EndedContainer, EndedContainers};
use crate::id_map::IdMap;
use crate::model::*;
use crate::node_table::{NodeKey, NodeTable};

/// The configuration of an [`RmCore`].
#[derive(Clone, Debug)]
pub struct RmConfig {
    /// The scheduler's configuration (allocation file and yarn-site properties).
    pub scheduler: SchedulerConfig,
    /// User -> groups.
    pub groups: GroupMapping,
    /// An NM silent this long is LOST (`yarn.nm.liveness-monitor.expiry-interval-ms`, 600 s).
    pub nm_expiry: Duration,
    /// An AM silent this long fails its attempt (`yarn.am.liveness-monitor.expiry-interval-ms`,
    /// 600 s).
    pub am_expiry: Duration,
    /// The cluster's maximum AM attempts (`yarn.resourcemanager.am.max-attempts`, 2).
    pub max_attempts: u32,
    /// `host:port` of the AM service, given to AMs as `WEFT_RM_SCHEDULER_ADDRESS`.
    pub scheduler_address: String,
    /// A secret from the driver's entropy; AM tokens and the container-token master keys are
    /// derived from it (the core has no RNG).
    pub token_secret: u128,
    /// How long a container token lets its container start
    /// (`yarn.resourcemanager.rm.container-allocation.expiry-interval-ms`, 600 s).
    pub container_token_expiry: Duration,
    /// How often the container-token master key rolls over
    /// (`yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs`, 86400 s).
    pub master_key_roll_interval: Duration,
    /// Who administers the cluster (`yarn.admin.acl`, Hadoop's default `*`: everyone): may
    /// kill and move any application and reload the queues.
    pub admin_acl: weft_config::Acl,
    /// Completed apps kept in memory, oldest dropped first
    /// (`yarn.resourcemanager.max-completed-applications`, 1000).
    pub max_completed_apps: usize,
    /// Completed apps kept in the store, at most `max_completed_apps`
    /// (`yarn.resourcemanager.state-store.max-completed-applications`, 1000).
    pub store_max_completed_apps: usize,
    /// After a restart, how long a recovered attempt's AM container may stay unreported by
    /// every node before the attempt fails and the next one starts (its own node
    /// re-registering without it fails it at once).
    pub am_recovery_grace: Duration,
    /// At most this many allocated containers, and this many completed statuses, in one
    /// Allocate answer; the rest wait for the AM's next call
    /// (`weft.resourcemanager.am.allocate.max-containers`, Weft's own, 10,000).
    pub allocate_max_containers: usize,
    /// Ended-container records kept for reports across all apps, at most
    /// [`ENDED_CONTAINERS_KEPT`] per app; at the bound completed apps' records go first,
    /// oldest completed first (`weft.resourcemanager.ended-containers.max-total`, Weft's
    /// own, [`DEFAULT_ENDED_CONTAINERS_KEPT_TOTAL`]).
    pub ended_containers_kept_total: usize,
    /// `yarn.node-labels.enabled` (false): whether the admin interfaces may change node labels
    /// (the allocation file's pools work either way).
    pub node_labels_enabled: bool,
    /// `weft.demand.default-strategy` (loose): the strategy of a demand field that names none.
    pub demand_default_strategy: weft_demand_lang::Strategy,
    /// `weft.demand.timezone` as minutes east of UTC (0): how a demand's calendar time without
    /// a zone is read.
    pub demand_timezone_minutes: i16,
    /// `weft.demand.admit-unplanned` (false), Weft's own: with no reservable queue (no planner
    /// yet), a strict Start or DeadLine that needs a plan is accepted best-effort instead of
    /// failing `not_reservable`; its run-time strict rules (deadline unreachable, window
    /// expired, deadline missed) still apply. Off, admission stays honest (spec §3.1 item 4).
    pub demand_admit_unplanned: bool,
    /// `yarn.acl.reservation-enable` (false): whether the plan queues' reservation ACLs are
    /// checked (`reservation_acls`).
    pub reservation_acls_enabled: bool,
    /// `weft.demand.am-lead` (60 s), Weft's own: an application submitted with a demand
    /// (`weft-demand`) has its AM asked this long before its demand's own lead (spec §3.4,
    /// "The AM at a scheduled time"), so the AM is up when its containers come.
    pub demand_am_lead: Duration,
}

/// The default cap on containers per Allocate answer: about 2 MB on the wire, well under the
/// 4 MB a gRPC client accepts by default.
pub const DEFAULT_ALLOCATE_MAX_CONTAINERS: usize = 10_000;

impl RmConfig {
    /// YARN's defaults around the given scheduler configuration.
    pub fn new(scheduler: SchedulerConfig) -> RmConfig {
        RmConfig {
            scheduler,
            groups: GroupMapping::new(),
            nm_expiry: Duration::from_secs(600),
            am_expiry: Duration::from_secs(600),
            max_attempts: 2,
            scheduler_address: "0.0.0.0:8030".to_string(),
            token_secret: 0,
            container_token_expiry: Duration::from_secs(600),
            master_key_roll_interval: Duration::from_secs(86_400),
            admin_acl: weft_config::Acl::everyone(),
            max_completed_apps: crate::retention::DEFAULT_MAX_COMPLETED_APPS,
            store_max_completed_apps: crate::retention::DEFAULT_MAX_COMPLETED_APPS,
            am_recovery_grace: Duration::from_secs(10),
            allocate_max_containers: DEFAULT_ALLOCATE_MAX_CONTAINERS,
            ended_containers_kept_total: DEFAULT_ENDED_CONTAINERS_KEPT_TOTAL,
            node_labels_enabled: false,
            demand_default_strategy: weft_demand_lang::Strategy::Loose,
            demand_timezone_minutes: 0,
            demand_admit_unplanned: false,
            reservation_acls_enabled: false,
            demand_am_lead: Duration::from_secs(60),
        }
    }
}

/// Container numbers of attempts recovered in epoch `e` start at `e * EPOCH_STRIDE`, so they
/// never collide with numbers issued before the restart.
pub(crate) const EPOCH_STRIDE: u64 = 1_000_000;

pub(crate) struct App {
    pub(crate) id: ApplicationId,
    pub(crate) sub: Submission,
    pub(crate) queue: String,
    pub(crate) state: AppState,
    pub(crate) final_status: FinalStatus,
    pub(crate) diagnostics: String,
    pub(crate) submit_time: Time,
    pub(crate) launch_time: Option<Time>,
    pub(crate) finish_time: Option<Time>,
    pub(crate) max_attempts: u32,
    pub(crate) attempts: Vec<Attempt>,
    pub(crate) progress: f32,
    /// Whether the scheduler holds the app.
    pub(crate) in_sched: bool,
    /// Nodes that ran one of its containers: they get an app cleanup when it ends.
    pub(crate) nodes_used: crate::node_table::NodeSet,
    /// Aggregate allocation of its ended containers (MB x ms, vcores x ms).
    pub(crate) ended_usage: UsageMs,
    /// Its latest ended containers, oldest first, at most [`ENDED_CONTAINERS_KEPT`]: the
    /// attempt's container reports (REST, `container -list`, the UI's log links) outlive the
    /// containers, as in YARN. Kept in memory only: an RM restart forgets them.
    pub(crate) ended: EndedContainers,
}

/// How many ended containers each application keeps for its reports; older ones are dropped
/// first, so a long-running app's memory stays bounded.
pub const ENDED_CONTAINERS_KEPT: usize = 1000;

/// Ended-container records kept across all apps by default: ~80 MB at 80 bytes a record
/// (rm-bench's full preset would keep ~2.5M: its 10,000 live apps' ended tasks and the
/// 1,000 completed apps' records).
pub const DEFAULT_ENDED_CONTAINERS_KEPT_TOTAL: usize = 1_000_000;

/// Resource x time, as YARN's aggregate resource allocation (kept in milliseconds, reported in
/// seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct UsageMs {
    pub(crate) memory_mb_ms: u64,
    pub(crate) vcore_ms: u64,
}

impl UsageMs {
    /// This plus `resource` held for `ms` milliseconds.
    pub(crate) fn plus(self, resource: Resource, ms: u64) -> UsageMs {
        let mb = u64::try_from(resource.memory_mb()).unwrap_or(0);
        let vcores = u64::try_from(resource.vcores()).unwrap_or(0);
        UsageMs {
            memory_mb_ms: self.memory_mb_ms.saturating_add(mb.saturating_mul(ms)),
            vcore_ms: self.vcore_ms.saturating_add(vcores.saturating_mul(ms)),
        }
    }
}

impl App {
    /// Gives back what a completed app no longer needs: its ended records' spare room, and
    /// its attempts' queues for an AM that is gone (each kept the room of its largest
    /// burst: ~18 KB an app at rm-bench's preset, for each of the 1,000 completed apps kept).
    pub(crate) fn release_buffers(&mut self) {
        self.ended.shrink();
        for attempt in &mut self.attempts {
            attempt.new_containers = VecDeque::new();
            attempt.completed = VecDeque::new();
        }
    }

    pub(crate) fn current(&self) -> Option<&Attempt> {
        self.attempts.last()
    }
    pub(crate) fn current_mut(&mut self) -> Option<&mut Attempt> {
        self.attempts.last_mut()
    }
    /// Failures that count against max attempts (lost nodes and preemption do not, as in YARN).
    pub(crate) fn counted_failures(&self) -> u32 {
        self.attempts
            .iter()
            .filter(|a| a.state == AttemptState::Failed)
            .filter(|a| !matches!(a.am_exit, Some(exit::ABORTED) | Some(exit::PREEMPTED)))
            .count() as u32
    }
}

pub(crate) struct Attempt {
    pub(crate) id: AttemptId,
    pub(crate) token: String,
    pub(crate) state: AttemptState,
    pub(crate) final_status: FinalStatus,
    pub(crate) am_container: Option<ContainerId>,
    pub(crate) am_node: Option<String>,
    pub(crate) am_exit: Option<i32>,
    pub(crate) am_rpc: Option<(String, u32)>,
    pub(crate) tracking_url: Option<String>,
    pub(crate) next_n: u64,
    pub(crate) last_contact: Time,
    pub(crate) start_time: Time,
    pub(crate) finish_time: Option<Time>,
    pub(crate) diagnostics: String,
    /// Allocated and not yet handed to the AM, oldest first.
    pub(crate) new_containers: VecDeque<AllocatedContainer>,
    /// Completions not yet reported to the AM, oldest first.
    pub(crate) completed: VecDeque<CompletedContainer>,
    /// The AM's outstanding ask per priority, as YARN's absolute totals: the size it asked
    /// and how many the scheduler still holds (lowered as containers are allocated).
    pub(crate) asked: BTreeMap<i32, (Resource, u32)>,
    pub(crate) blacklist: BTreeSet<String>,
    /// Position in the node-change log up to which this AM was told.
    pub(crate) nodes_seen: usize,
    /// Nodes this attempt holds an NM token for (under the current master key).
    pub(crate) nm_tokens_sent: crate::node_table::NodeSet,
    /// What preemption took from this attempt.
    pub(crate) preempted: crate::preemption::PreemptedTally,
    /// The gangs its AM asked for and has not received, by gang id (persisted: `am_gangs`).
    pub(crate) gangs: BTreeMap<u64, weft_sched::GangAsk>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContainerState {
    /// Allocated, not yet handed to the AM.
    Allocated,
    /// Handed to the AM (or launched as the AM).
    Acquired,
    /// Reported running by its node.
    Running,
}

pub(crate) struct Container {
    pub(crate) sched: Option<weft_types::ContainerId>,
    pub(crate) node: NodeKey,
    pub(crate) resource: Resource,
    pub(crate) priority: i32,
    pub(crate) state: ContainerState,
    /// When it was allocated (or recovered): its share of the app's aggregate allocation
    /// runs from here.
    pub(crate) since: Time,
    /// The DemandID of the demand (of its app) it was allocated for.
    pub(crate) demand: Option<u64>,
}

pub(crate) struct Node {
    /// The node id (`host:port`), as NMs and reports name it.
    pub(crate) id: String,
    pub(crate) address: String,
    /// The NM web service's `host:port`; empty until a registration names one. Shared with
    /// the records of the containers that ended there.
    pub(crate) http_address: Arc<str>,
    /// The NM's Hadoop ContainerManagementProtocol `host:port` (the NodeId Hadoop AMs see);
    /// empty while the NM serves none.
    pub(crate) hadoop_address: String,
    pub(crate) sched: NodeId,
    pub(crate) sched_host: String,
    pub(crate) rack: String,
    pub(crate) capability: Resource,
    pub(crate) state: NodeState,
    /// Whether the scheduler holds the node (not when unhealthy, lost, ...).
    pub(crate) in_sched: bool,
    /// Whether the node is in `RmCore::due_updates` (a deferred heartbeat's pass waits).
    pub(crate) update_due: bool,
    pub(crate) last_heartbeat: Time,
    pub(crate) health_report: String,
    /// Its live containers, each with whether the node has reported it running: a RUNNING
    /// status of one already reported is nothing new (YARN's NMs repeat them all).
    pub(crate) containers: crate::node_containers::NodeContainers,
    pub(crate) to_stop: BTreeSet<ContainerId>,
    pub(crate) to_cleanup: BTreeSet<ApplicationId>,
    /// Finished apps' AM containers lingering here (`RmCore::lingering_am`) that the node had
    /// reported running: no longer among `containers`, yet in the NM's running count until
    /// they exit, so the delta check expects them (without it every heartbeat of the node
    /// asked for a full report until the AM exited, up to the AM expiry).
    pub(crate) lingering_running: u32,
    /// The secret its current registration was given (`node_identity`).
    pub(crate) secret: String,
}

/// The ResourceManager as a deterministic state machine.
///
/// Driving contract ("mutate, then drain"): call one input method (`submit`, `node_heartbeat`,
/// `am_allocate`, `tick`, ...) with the current time, then drain [`RmCore::poll_output`] until it
/// returns `None`, carrying out each output. `Persist` outputs must be durable before the
/// input's result is acknowledged to whoever sent it. An input that returns `Err` changed
/// nothing and produced no output. Time only comes in as `now`; the core reads no clock, does
/// no I/O and holds no RNG.
pub struct RmCore {
    pub(crate) config: RmConfig,
    pub(crate) sched: Scheduler,
    pub(crate) cluster_ts: u64,
    pub(crate) epoch: u64,
    pub(crate) next_seq: u64,
    /// Application ids below this may have been handed out: the store's `next_app_seq`, raised
    /// a block at a time (`APP_ID_BLOCK`) so that most new ids write nothing.
    pub(crate) app_id_ceiling: u64,
    pub(crate) apps: crate::app_table::AppTable,
    pub(crate) containers: crate::container_table::ContainerTable,
    /// The scheduler's id of each live container it holds (`insert_fresh`: ids are never
    /// reused, ~30,000 new a second at seed 003's scale).
    pub(crate) by_sched: IdMap<weft_types::ContainerId, ContainerId>,
    pub(crate) nodes: NodeTable,
    pub(crate) node_by_sched: IdMap<NodeId, NodeKey>,
    pub(crate) next_node: u32,
    /// Node state changes in order, for AMs' `updated_nodes`.
    pub(crate) node_changes: Vec<(String, NodeState)>,
    /// Running nodes, as counted when `node_changes` had the given length.
    pub(crate) usable: (usize, u32),
    /// AM containers of finished apps, left to exit on their own: container -> (node,
    /// deadline, whether the node had reported it running: see `Node::lingering_running`).
    pub(crate) lingering_am: BTreeMap<ContainerId, (String, Time, bool)>,
    pub(crate) outputs: VecDeque<Output>,
    /// `Persist` outputs produced so far (`RmCore::writes_made`).
    pub(crate) writes_made: u64,
    pub(crate) next_update: Time,
    /// Nodes whose deferred heartbeat waits for its scheduling pass, oldest first, each
    /// once (`Node::update_due`; `RmCore::node_heartbeat_deferred`).
    pub(crate) due_updates: VecDeque<NodeKey>,
    /// No node can expire before this instant under this NM expiry (`liveness.rs`).
    pub(crate) node_expiry_check: (Time, weft_types::Duration),
    /// No AM can expire before this instant under this AM expiry.
    pub(crate) am_expiry_check: (Time, weft_types::Duration),
    /// The latest time an input brought (ticks, completions): reports count live containers'
    /// aggregate allocation up to here, since report methods take no time.
    pub(crate) latest: Time,
    /// The container-token master key and its roll-over.
    pub(crate) keys: crate::tokens::ContainerKeys,
    /// Completed apps, oldest first, for the retention limits.
    pub(crate) completed: crate::retention::Completed,
    /// Ended-container records kept by all apps, for their total bound.
    pub(crate) ended_total: crate::ended_containers::EndedTotal,
    /// Recovered attempts whose AM container no node has reported yet: app -> (AM
    /// container, its node, when to give up on it).
    pub(crate) unconfirmed_am: BTreeMap<ApplicationId, (ContainerId, String, Time)>,
    /// Recovered gangs waiting for their nodes to register again before they are asked.
    pub(crate) gang_reask: crate::am_gangs::GangReask,
    /// Registrations that were given a secret (numbers each secret).
    pub(crate) registrations: u64,
    /// Containers the scheduler just preempted -> the queue they were taken for, kept from
    /// `Decision::Preempted` until the `Completed` that follows it.
    pub(crate) preempted_for: BTreeMap<weft_types::ContainerId, String>,
    /// The node-label registry's admin part (labels added, nodes mapped).
    pub(crate) labels: crate::node_labels::NodeLabels,
    /// Hadoop's ReservationSystem: the plans of the reservable queues.
    pub(crate) reservations: crate::reservations::ReservationSystem,
    /// Time-aware demands by key.
    pub(crate) demands: crate::demands::Demands,
    /// Apps held for their reservation's start (`weft.reservation.accept-early-submission`).
    pub(crate) early: crate::early_submission::EarlySubmissions,
    /// How many nodes the scheduler holds under each scheduler host name (`Node::sched_host`):
    /// a second NM on a host goes by its node id.
    pub(crate) sched_hosts: BTreeMap<String, u32>,
}

impl RmCore {
    /// A fresh RM (first start): `cluster_ts` becomes the timestamp in every id. Emits a
    /// `Persist` of the cluster counters.
    pub fn new(config: RmConfig, cluster_ts: u64, now: Time) -> RmCore {
        let mut core = RmCore::empty(config, cluster_ts, 0, now);
        core.persist_meta();
        core
    }

    pub(crate) fn empty(config: RmConfig, cluster_ts: u64, epoch: u64, now: Time) -> RmCore {
        let sched = Scheduler::new(config.scheduler.clone(), config.groups.clone());
        let keys = crate::tokens::ContainerKeys::new(config.token_secret, now);
        let nodes = NodeTable::new(weft_tokens::derive_key(
            config.token_secret,
            "weft node id hash",
        ));
        let reservations =
            crate::reservations::ReservationSystem::for_config(cluster_ts, &config.scheduler);
        RmCore {
            reservations,
            keys,
            unconfirmed_am: BTreeMap::new(),
            gang_reask: Default::default(),
            registrations: 0,
            preempted_for: BTreeMap::new(),
            labels: Default::default(),
            demands: Default::default(),
            early: Default::default(),
            config,
            sched,
            cluster_ts,
            epoch,
            next_seq: 1,
            app_id_ceiling: 1,
            apps: Default::default(),
            containers: Default::default(),
            by_sched: IdMap::default(),
            nodes,
            node_by_sched: IdMap::default(),
            next_node: 0,
            node_changes: Vec::new(),
            usable: (0, 0),
            lingering_am: BTreeMap::new(),
            sched_hosts: BTreeMap::new(),
            outputs: VecDeque::new(),
            writes_made: 0,
            next_update: now,
            due_updates: VecDeque::new(),
            node_expiry_check: (Time(0), weft_types::Duration::from_millis(0)),
            am_expiry_check: (Time(0), weft_types::Duration::from_millis(0)),
            latest: now,
            completed: Default::default(),
            ended_total: Default::default(),
        }
    }

    /// The next output, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Whether `user` is a cluster administrator (`yarn.admin.acl`, with the user's groups).
    pub fn is_admin(&self, user: &str) -> bool {
        let groups = self.config.groups.get(user).cloned().unwrap_or_default();
        self.config.admin_acl.allows(user, &groups)
    }

    /// The cluster timestamp embedded in ids.
    pub fn cluster_timestamp(&self) -> u64 {
        self.cluster_ts
    }

    /// How many times this RM's state has been recovered (YARN's epoch).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The largest container an app may ask for (`yarn.scheduler.maximum-allocation-*`).
    pub fn maximum_allocation(&self) -> Resource {
        self.sched.config().properties().maximum_allocation
    }

    /// The groups the RM knows `user` to be in (what placement rules and ACLs see; empty when
    /// the RM maps no groups for the user).
    pub fn groups_of(&self, user: &str) -> Vec<String> {
        self.config.groups.get(user).cloned().unwrap_or_default()
    }

    /// Records `user`'s groups as the RM's group mapping gives them now (primary first; empty
    /// forgets the user): placement rules, queue ACLs and `yarn.admin.acl` read them from here.
    /// The driver resolves groups outside the core (`weft_rm::groups`) and calls this when they
    /// change.
    pub fn set_user_groups(&mut self, now: Time, user: &str, groups: Vec<String>) {
        let known = self.config.groups.get(user).map_or(&[][..], Vec::as_slice);
        if known == groups.as_slice() {
            return;
        }
        if groups.is_empty() {
            self.config.groups.remove(user);
        } else {
            self.config.groups.insert(user.to_string(), groups.clone());
        }
        let event = weft_sched::Event::UserGroups {
            user: user.to_string(),
            groups,
        };
        // Setting a user's groups cannot be refused.
        let _ = self.sched.handle(now, event);
    }

    /// The scheduler (read-only), e.g. for snapshots of queues.
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// Trust, but verify: recomputes every aggregate and order of the scheduler from scratch
    /// (`Scheduler::verify`) and, when something drifted, rebuilds its derived state. Returns
    /// what differed (empty when all was consistent).
    pub fn verify_scheduler(&mut self) -> Vec<String> {
        let drift = self.sched.verify();
        if !drift.is_empty() {
            self.sched.rebuild_derived();
        }
        drift
    }

    /// [`RmCore::verify_scheduler`] in slices, for a driver that must not stall for all of
    /// it: the next slice of `round` (`Scheduler::verify_slice`, walking about `budget`
    /// containers); when the round ends having found drift, rebuilds the scheduler's derived
    /// state. True when the round is done (what it found is `round.drift`).
    pub fn verify_scheduler_slice(
        &mut self,
        round: &mut weft_sched::VerifyRound,
        budget: usize,
    ) -> bool {
        let done = self.sched.verify_slice(round, budget);
        if done && !round.drift.is_empty() {
            self.sched.rebuild_derived();
        }
        done
    }

    /// A scheduler snapshot (queues, shares, usage) for REST and metrics.
    pub fn scheduler_snapshot(&mut self) -> weft_sched::Snapshot {
        self.sched.snapshot()
    }

    /// [`RmCore::scheduler_snapshot`] without the per-app and per-node lists.
    pub fn scheduler_queue_snapshot(&mut self) -> weft_sched::Snapshot {
        self.sched.queue_snapshot()
    }

    /// Sets the AM service address handed to AMs (known to the driver once it has bound).
    pub fn set_scheduler_address(&mut self, address: String) {
        self.config.scheduler_address = address;
    }

    /// Replaces the scheduler configuration (an allocation-file reload, already validated).
    /// The scheduler gets it with the node-label registry's admin mappings applied.
    pub fn reload(&mut self, now: Time, config: SchedulerConfig) -> Result<(), crate::RmError> {
        let previous = std::mem::replace(&mut self.config.scheduler, config);
        let effective = self.effective_scheduler_config();
        if let Err(e) = self
            .sched
            .handle(now, weft_sched::Event::Reload(Box::new(effective)))
        {
            self.config.scheduler = previous;
            return Err(e.into());
        }
        self.sync_reservable_queues();
        self.drain(now);
        Ok(())
    }

    pub(crate) fn persist(&mut self, writes: Vec<Write>) {
        if !writes.is_empty() {
            self.writes_made += 1;
            self.outputs.push_back(Output::Persist(writes));
        }
    }

    /// How many `Persist` outputs the core has produced since it was made: a driver compares
    /// the count before and after an input to learn whether that input wrote anything.
    pub fn writes_made(&self) -> u64 {
        self.writes_made
    }

    pub(crate) fn meta(&self) -> ClusterMeta {
        ClusterMeta {
            cluster_timestamp: self.cluster_ts,
            next_app_seq: self.app_id_ceiling,
            epoch: self.epoch,
        }
    }

    pub(crate) fn persist_meta(&mut self) {
        let meta = self.meta();
        self.persist(vec![Write::Meta(meta)]);
    }

    /// Processes every pending scheduler decision.
    pub(crate) fn drain(&mut self, now: Time) {
        let mut ended = Vec::new();
        while let Some(d) = self.sched.poll_decision() {
            match d {
                // After the loop: a kill drains again.
                Decision::ReservationEnded {
                    app,
                    queue,
                    moved_to,
                } => ended.push((app, queue, moved_to)),
                // Submissions return their placement to the caller (`Scheduler::submit`).
                Decision::Accepted { .. } | Decision::Rejected { .. } => {}
                Decision::Allocated {
                    app,
                    container,
                    node,
                    resources,
                    am,
                    priority,
                    tag,
                    ..
                } => {
                    let demand = match self.demand_of_tag(now, app, container, tag) {
                        TagOutcome::Surplus => continue,
                        TagOutcome::Plain => None,
                        TagOutcome::Demand(id) => Some(id),
                    };
                    self.on_allocated(now, app, container, node, resources, am, priority, demand)
                }
                Decision::Completed {
                    container,
                    exit,
                    status,
                    ..
                } => self.on_sched_completed(now, container, exit, status),
                Decision::Preempted {
                    container,
                    am,
                    for_queue,
                    ..
                } => self.on_preempted(now, container, am, for_queue),
                // A warning changes nothing here: the AM reads the marked containers from
                // the scheduler on its next Allocate (`strict_preemption_contract`).
                Decision::Gang { app, gang, change } => {
                    if gang >= crate::demands::DEMAND_GANG_IDS {
                        self.demand_gang_changed(now, app, gang, change)
                    } else {
                        self.am_gang_changed(app, gang, &change)
                    }
                }
                Decision::Reserved { .. } | Decision::PreemptWarning { .. } => {}
            }
        }
        self.write_demand_containers();
        for (app, queue, moved_to) in ended {
            self.reservation_ended(now, app, &queue, moved_to);
        }
    }

    /// A container the scheduler ended: with the status rm-core gave it, or, when the
    /// scheduler ended it on its own (the app or node left), as YARN reports that cause.
    fn on_sched_completed(
        &mut self,
        now: Time,
        sched_id: weft_types::ContainerId,
        how: ContainerExit,
        status: Option<weft_sched::ExitStatus>,
    ) {
        let for_queue = self.preempted_for.remove(&sched_id);
        let Some(id) = self.by_sched.remove(&sched_id) else {
            return;
        };
        if let Some(c) = self.containers.get_mut(&id) {
            c.sched = None;
        }
        // A status comes from the NM's own report (nothing to stop), except for a foreign
        // container the scheduler killed at its pool's timeout (the NM must stop it).
        let scheduler_kill = how == ContainerExit::Preempted;
        let given = status.map(|s| (s.code, s.diagnostics, scheduler_kill));
        let (status, diag, stop) = given.unwrap_or_else(|| match how {
            ContainerExit::Success => (exit::SUCCESS, String::new(), false),
            ContainerExit::Released => (
                exit::ABORTED,
                "Container released by the application".to_string(),
                true,
            ),
            ContainerExit::Killed => (
                exit::KILLED_BY_RESOURCEMANAGER,
                "Container killed by the ResourceManager".to_string(),
                true,
            ),
            ContainerExit::Lost => (exit::ABORTED, "node lost".to_string(), false),
            ContainerExit::Preempted => (
                exit::PREEMPTED,
                crate::preemption::preempted_diagnostics(for_queue.as_deref()),
                true,
            ),
        });
        self.container_done(now, id, status, diag, stop);
    }

    /// A container ended: accounting, the NM told to stop it if it may still run, its AM told,
    /// and the attempt failed if it was the AM container.
    pub(crate) fn container_done(
        &mut self,
        now: Time,
        id: ContainerId,
        status: i32,
        diagnostics: String,
        stop: bool,
    ) {
        let Some(c) = self.containers.remove(&id) else {
            return;
        };
        if let Some(demand) = c.demand {
            self.demand_container_ended(now, id, demand);
        }
        let ended = self.ended_record(id, &c, now, status);
        if let Some(s) = c.sched {
            // Reported by its node: the scheduler frees it; its `Completed` decision is then
            // ignored because the container is no longer mapped.
            self.by_sched.remove(&s);
            let _ = self.sched.handle(
                now,
                weft_sched::Event::ContainerCompleted {
                    container: s,
                    exit: ContainerExit::Success,
                    status: Some(weft_sched::ExitStatus {
                        code: status,
                        diagnostics: diagnostics.clone(),
                    }),
                },
            );
        }
        // The node's next heartbeat reply stops it (YARN's containersToClean); only an AM
        // container is also stopped through its NM at once, as YARN's AMLauncher cleanup does.
        let rpc = stop && self.is_am_container(id);
        if let Some(node) = self.nodes.at_mut(c.node) {
            node.containers.remove(&id);
            if stop && matches!(node.state, NodeState::Running | NodeState::Unhealthy) {
                node.to_stop.insert(id);
                if rpc {
                    let address = node.address.clone();
                    let output = self.stop_output(self.nodes.id_of(c.node), address, id);
                    self.outputs.push_back(output);
                }
            }
        }
        let Some(app) = self.apps.get_mut(&id.app) else {
            return;
        };
        self.latest = self.latest.max(now);
        let held_ms = now.as_millis().saturating_sub(c.since.as_millis());
        app.ended_usage = app.ended_usage.plus(c.resource, held_ms);
        let app_final = app.state.is_final();
        let attempt_live = !app_final
            && app
                .attempts
                .get(id.attempt as usize - 1)
                .is_some_and(|t| !t.state.is_final());
        if !attempt_live {
            // Nothing else needs the diagnostics: the record takes them as they are.
            self.keep_ended(
                id.app,
                EndedContainer {
                    diagnostics: diagnostics.into_boxed_str(),
                    ..ended
                },
            );
            return;
        }
        self.keep_ended(
            id.app,
            EndedContainer {
                diagnostics: diagnostics.as_str().into(),
                ..ended
            },
        );
        let Some(attempt) = self
            .apps
            .get_mut(&id.app)
            .and_then(|app| app.attempts.get_mut(id.attempt as usize - 1))
        else {
            return;
        };
        let is_am = attempt.am_container == Some(id);
        if is_am {
            // Only an exit that ends the attempt says why it failed (lost node, preemption...).
            attempt.am_exit = Some(status);
            let diag = format!(
                "AM container {id} exited with status {status}{}{diagnostics}",
                if diagnostics.is_empty() { "" } else { ": " }
            );
            self.attempt_failed(now, id.app, diag);
        } else {
            attempt.completed.push_back(CompletedContainer {
                id,
                exit_status: status,
                diagnostics,
            });
        }
    }

    /// The record of container `id` as it ends now (its diagnostics filled in by the caller).
    fn ended_record(
        &self,
        id: ContainerId,
        c: &Container,
        now: Time,
        status: i32,
    ) -> EndedContainer {
        let node_http_address = self
            .nodes
            .at(c.node)
            .map(|n| Arc::clone(&n.http_address))
            .filter(|a| !a.is_empty());
        EndedContainer {
            attempt: id.attempt,
            n: id.n,
            node: c.node,
            node_http_address,
            resource: c.resource,
            priority: c.priority,
            is_am: self.is_am_container_of_attempt(id),
            start_time: c.since,
            finish_time: now,
            exit_status: status,
            diagnostics: Box::default(),
        }
    }

    /// Whether `id` runs (or ran) its attempt's AM.
    fn is_am_container_of_attempt(&self, id: ContainerId) -> bool {
        self.apps
            .get(&id.app)
            .and_then(|app| app.attempts.get((id.attempt as usize).wrapping_sub(1)))
            .is_some_and(|t| t.am_container == Some(id))
    }

    /// The report of a live container.
    pub(crate) fn container_report(&self, id: ContainerId, c: &Container) -> ContainerReport {
        let is_am = self.is_am_container_of_attempt(id);
        ContainerReport {
            id,
            attempt: id.attempt_id(),
            node_id: self.nodes.id_of(c.node).to_string(),
            node_http_address: self
                .nodes
                .at(c.node)
                .filter(|n| !n.http_address.is_empty())
                .map(|n| n.http_address.to_string()),
            resource: c.resource,
            priority: c.priority,
            state: match c.state {
                ContainerState::Allocated => LiveContainerState::Allocated,
                ContainerState::Acquired => LiveContainerState::Acquired,
                ContainerState::Running => LiveContainerState::Running,
            },
            is_am,
            start_time: c.since,
            finish_time: None,
            exit_status: None,
            diagnostics: String::new(),
        }
    }

    /// The RM's id of the application the scheduler knows as `app` (the scheduler's id is the
    /// sequence number; every id shares the cluster timestamp, kept over restarts).
    pub(crate) fn app_key(&self, app: AppId) -> ApplicationId {
        ApplicationId {
            cluster_ts: self.cluster_ts,
            seq: app.0,
        }
    }

    /// Records a new container of `app` on `node`.
    #[allow(clippy::too_many_arguments)]
    fn on_allocated(
        &mut self,
        now: Time,
        app_id: AppId,
        sched_id: weft_types::ContainerId,
        node: NodeId,
        resource: Resource,
        am: bool,
        priority: i32,
        demand: Option<u64>,
    ) {
        let Some(node_key) = self.node_by_sched.get(&node).copied() else {
            return;
        };
        let app_key = self.app_key(app_id);
        let Some(app) = self.apps.get_mut(&app_key) else {
            let _ = self.release_to_sched(now, app_id, sched_id);
            return;
        };
        let Some(attempt) = app.attempts.last_mut() else {
            return;
        };
        let id = ContainerId {
            app: app_key,
            attempt: attempt.id.attempt,
            n: attempt.next_n,
        };
        attempt.next_n += 1;
        let Some(n) = self.nodes.at_mut(node_key) else {
            return;
        };
        n.containers.allocated(id);
        app.nodes_used.insert(node_key);
        self.containers.insert(
            id,
            Container {
                sched: Some(sched_id),
                node: node_key,
                resource,
                priority,
                state: ContainerState::Allocated,
                since: now,
                demand,
            },
        );
        self.by_sched.insert_fresh(sched_id, id);
        if let Some(demand_id) = demand {
            self.demand_container_allocated(id, demand_id);
        }
        if am {
            self.am_allocated(now, id, node_key, resource);
            return;
        }
        // The app is looked up once more (the demand's bookkeeping above may have changed
        // it), and the token is made from the fields it needs, beside that borrow.
        let Some(app) = self.apps.get_mut(&app_key) else {
            return;
        };
        let Some(n) = self.nodes.at(node_key) else {
            return;
        };
        let token = crate::tokens::container_token(
            &self.keys,
            self.config.container_token_expiry,
            now,
            id,
            &n.id,
            &app.sub.user,
            resource,
        );
        let container = AllocatedContainer {
            id,
            node_address: n.address.clone(),
            node_id: n.id.clone(),
            resource,
            priority,
            token,
            demand_id: demand,
        };
        if let Some(attempt) = app.current_mut() {
            if demand.is_none() {
                if let Some((_, held)) = attempt.asked.get_mut(&priority) {
                    *held = held.saturating_sub(1);
                }
            }
            attempt.new_containers.push_back(container);
        }
    }

    /// Where a node's container-management service listens.
    pub(crate) fn address_of(&self, node: NodeKey) -> String {
        self.nodes
            .at(node)
            .map_or_else(String::new, |n| n.address.clone())
    }

    pub(crate) fn release_to_sched(
        &mut self,
        now: Time,
        app: AppId,
        container: weft_types::ContainerId,
    ) -> Result<(), weft_sched::SchedError> {
        self.sched
            .handle(now, weft_sched::Event::Release { app, container })
    }

    /// Records a node state change for AMs' `updated_nodes`.
    pub(crate) fn node_changed(&mut self, node: &str, state: NodeState) {
        self.node_changes.push((node.to_string(), state));
    }

    /// Nodes that can run containers.
    pub(crate) fn usable_nodes(&mut self) -> u32 {
        // Recounted only when a node changed state: AMs ask on every allocate.
        if self.usable.0 != self.node_changes.len() {
            let count = self
                .nodes
                .values()
                .filter(|n| n.state == NodeState::Running)
                .count() as u32;
            self.usable = (self.node_changes.len(), count);
        }
        self.usable.1
    }

    /// A report of one application.
    pub fn app_report(&self, id: &ApplicationId) -> Option<AppReport> {
        self.apps.get(id).map(|a| self.report(a))
    }

    /// Reports of every application, by id.
    pub fn app_reports(&self) -> Vec<AppReport> {
        self.apps.values().map(|a| self.report(a)).collect()
    }

    fn report(&self, a: &App) -> AppReport {
        // The scheduler's accounting while it holds the app; nothing runs once it let go.
        let usage = if a.in_sched {
            self.sched.app_usage(AppId(a.id.seq))
        } else {
            None
        }
        .unwrap_or((Resource::ZERO, 0));
        AppReport {
            id: a.id,
            name: a.sub.name.clone(),
            user: a.sub.user.clone(),
            queue: a.queue.clone(),
            state: a.state,
            final_status: a.final_status,
            diagnostics: self.diagnostics_of(a),
            application_type: a.sub.application_type.clone(),
            tags: a.sub.tags.clone(),
            priority: a.sub.priority,
            progress: a.progress,
            submit_time: a.submit_time,
            launch_time: a.launch_time,
            finish_time: a.finish_time,
            current_attempt: a.current().map(|t| AttemptReport {
                id: t.id,
                state: t.state,
                am_container: t.am_container,
                am_node: t.am_node.clone(),
                am_rpc: t.am_rpc.clone(),
                start_time: t.start_time,
                finish_time: t.finish_time,
                diagnostics: t.diagnostics.clone(),
            }),
            allocated: usage.0,
            running_containers: u32::try_from(usage.1).unwrap_or(u32::MAX),
            aggregate: self.aggregate_usage(a),
            preemption: self.preemption_report(a),
            tracking_url: a.current().and_then(|t| t.tracking_url.clone()),
        }
    }

    /// The app's diagnostics; an accepted app waiting for its AM says why when the scheduler
    /// knows (Capacity: the AM limits, max-parallel-apps) or its resource pool has no active
    /// node (resource-pools spec §6, scenario A4), as Hadoop's RM says why an accepted app waits.
    fn diagnostics_of(&self, a: &App) -> String {
        let waiting_for_am =
            a.state == AppState::Accepted && a.current().is_none_or(|t| t.am_container.is_none());
        if !a.diagnostics.is_empty() || !waiting_for_am {
            return a.diagnostics.clone();
        }
        if let Some(reason) = self.sched.waiting_reason(AppId(a.id.seq)) {
            return reason;
        }
        let Some(pool) = self.queue_partition(&a.queue) else {
            return a.diagnostics.clone();
        };
        let dead = self
            .sched
            .pool_stats()
            .iter()
            .any(|p| p.name == pool && p.nodes == 0);
        if dead {
            format!("waiting: resource pool {pool} has 0 active nodes")
        } else {
            a.diagnostics.clone()
        }
    }

    /// An app's aggregate allocation: its ended containers plus its live ones up to `latest`.
    fn aggregate_usage(&self, a: &App) -> AggregateUsage {
        let total = self
            .containers
            .of_app(a.id)
            .fold(a.ended_usage, |sum, (_, c)| {
                let ms = self.latest.as_millis().saturating_sub(c.since.as_millis());
                sum.plus(c.resource, ms)
            });
        AggregateUsage {
            memory_mb_seconds: total.memory_mb_ms / 1000,
            vcore_seconds: total.vcore_ms / 1000,
        }
    }

    /// Reports of every node, by id.
    pub fn node_infos(&self) -> Vec<NodeInfo> {
        let pools = self.effective_pools();
        self.nodes
            .by_id()
            .map(|n| NodeInfo {
                label: self.node_label_in(pools.as_ref(), &n.id),
                node_id: n.id.clone(),
                address: n.address.clone(),
                http_address: n.http_address.to_string(),
                hadoop_address: n.hadoop_address.clone(),
                rack: n.rack.clone(),
                state: n.state,
                capability: n.capability,
                used: n
                    .in_sched
                    .then(|| self.sched.node_allocated(n.sched))
                    .flatten()
                    .unwrap_or(Resource::ZERO),
                containers: n.containers.len() as u32,
                last_heartbeat: n.last_heartbeat,
                health_report: n.health_report.clone(),
            })
            .collect()
    }

    /// Total and allocated resources of usable nodes.
    pub fn cluster_resources(&self) -> (Resource, Resource) {
        (self.sched.cluster_capacity(), self.sched.cluster_used())
    }
}
