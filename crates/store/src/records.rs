//! The records the ResourceManager must not lose, modelled on YARN's RM state store
//! (`ApplicationStateData`, `ApplicationAttemptStateData`, the epoch and sequence counters).
//!
//! Records are plain data: the state machines in `rm-core` convert to and from them. Fields that
//! were added after version 1 must carry `#[serde(default)]` so older files still decode.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Cluster-wide counters that survive restarts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterMeta {
    /// Epoch milliseconds of the RM's first start; every application id embeds it, so it is
    /// written once and reused after each restart.
    pub cluster_timestamp: u64,
    /// The sequence number the next new application gets (application ids start at 1).
    pub next_app_seq: u64,
    /// How many times the RM has started on this store (YARN's epoch). YARN folds it into
    /// container ids so containers allocated after a restart never collide with older ones.
    pub epoch: u64,
}

/// Lifecycle states of an application as they are stored.
///
/// YARN persists only NEW_SAVING-complete states (SUBMITTED onwards) and final states; the full
/// set is accepted here so rm-core may store whatever it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AppState {
    /// Created, not yet submitted.
    New,
    /// Submitted, waiting for the scheduler to accept it.
    Submitted,
    /// Accepted by the scheduler; the AM is not running yet.
    Accepted,
    /// The AM has registered.
    Running,
    /// The AM unregistered (any final status).
    Finished,
    /// Failed, e.g. after running out of attempts.
    Failed,
    /// Killed by a user or an administrator.
    Killed,
}

impl AppState {
    /// True for FINISHED, FAILED and KILLED: nothing will change any more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            AppState::Finished | AppState::Failed | AppState::Killed
        )
    }
}

/// Lifecycle states of an application attempt as they are stored (YARN's `RMAppAttemptState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AttemptState {
    /// Created.
    New,
    /// Handed to the scheduler.
    Submitted,
    /// Waiting for the AM container.
    Scheduled,
    /// The AM container is allocated.
    Allocated,
    /// The AM container was started on its node.
    Launched,
    /// The AM registered.
    Running,
    /// The AM unregistered; waiting for its container to finish.
    Finishing,
    /// Ended after the AM unregistered.
    Finished,
    /// Ended without the AM unregistering (crash, expiry, lost node).
    Failed,
    /// Killed with its application.
    Killed,
}

impl AttemptState {
    /// True for FINISHED, FAILED and KILLED.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            AttemptState::Finished | AttemptState::Failed | AttemptState::Killed
        )
    }
}

/// The outcome the AM reported (YARN's `FinalApplicationStatus`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FinalStatus {
    /// Not finished yet, or finished without saying.
    #[default]
    Undefined,
    /// The AM reported success.
    Succeeded,
    /// The AM reported failure, or the app failed.
    Failed,
    /// The app was killed.
    Killed,
}

/// How a localized resource is used (YARN's `LocalResourceType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LocalResourceKind {
    /// Copied or linked as is.
    #[default]
    File,
    /// Unpacked into a directory.
    Archive,
    /// An archive of which only matching entries are unpacked.
    Pattern,
}

/// A file the NM makes available in the container's work directory under its map key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalResource {
    /// A local path or a `file://` URL.
    pub url: String,
    /// How the NM localizes it.
    pub kind: LocalResourceKind,
}

/// What the NM needs to start the AM container; kept so that later attempts can relaunch it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchContext {
    /// Shell commands, run in order.
    pub commands: Vec<String>,
    /// Extra environment variables.
    pub environment: BTreeMap<String, String>,
    /// Resources to localize, keyed by the name they get in the work directory.
    pub local_resources: BTreeMap<String, LocalResource>,
    /// A Hadoop `Credentials` stream for the container's `container_tokens` file (empty for
    /// none); absent from records written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<u8>,
    /// Submitted over Hadoop IPC: the NM writes the launch script with Hadoop's quoting.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hadoop_quoting: bool,
}

/// A memory/CPU amount; kept separate from `weft_types::Resource` so the file format does not
/// change when that type does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResourceRecord {
    /// Memory in MiB.
    pub memory_mb: u64,
    /// Virtual cores.
    pub vcores: u32,
}

/// One application, as submitted plus what happened to it since (YARN's `ApplicationStateData`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplicationRecord {
    /// Sequence number: the `NNNN` in `application_<ts>_NNNN`; the store's key.
    pub app_id: u64,
    /// The cluster timestamp in the application id (the RM's first start).
    pub cluster_timestamp: u64,
    /// Application name.
    pub name: String,
    /// Submitting user.
    pub user: String,
    /// The queue named at submission (before placement rules).
    pub requested_queue: String,
    /// The queue the app is in now: after placement, updated by moves.
    pub queue: String,
    /// Application type, e.g. `YARN` or `MAPREDUCE`.
    pub application_type: String,
    /// Application priority (higher runs first where the policy uses it).
    pub priority: i32,
    /// How many AM attempts the app may use.
    pub max_attempts: u32,
    /// When the app was submitted, epoch ms.
    pub submit_time_ms: u64,
    /// When the RM started handling it, epoch ms.
    pub start_time_ms: u64,
    /// When it reached a final state, epoch ms.
    pub finish_time_ms: Option<u64>,
    /// How to start the AM.
    pub am_launch: LaunchContext,
    /// The AM container's size.
    pub am_resource: ResourceRecord,
    /// Current state.
    pub state: AppState,
    /// The final status, `Undefined` until it ends.
    pub final_status: FinalStatus,
    /// Human-readable diagnostics (why it failed or was killed).
    pub diagnostics: String,
    /// Application tags (YARN keeps them as a set).
    pub tags: BTreeSet<String>,
    /// Aggregate allocation of its ended containers: MB x milliseconds (YARN reports
    /// MB-seconds). Absent in records written before it existed.
    #[serde(default)]
    pub memory_mb_ms: u64,
    /// Aggregate allocation of its ended containers: vcores x milliseconds.
    #[serde(default)]
    pub vcore_ms: u64,
    /// The reservation it was submitted into (Hadoop's `reservationId`), as Hadoop prints
    /// it. Absent in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation_id: Option<String>,
    /// Weft's `weft-demand` as submitted (JSON): its AM waits for the demand's time, also
    /// after a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weft_demand: Option<String>,
}

/// One AM attempt of an application (YARN's `ApplicationAttemptStateData`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// The application's sequence number.
    pub app_id: u64,
    /// Attempt number, from 1.
    pub attempt: u32,
    /// The AM container id (`container_...`), once allocated.
    pub am_container_id: Option<String>,
    /// The node (`host:port`) running the AM container, once allocated.
    pub am_node_id: Option<String>,
    /// Current state.
    pub state: AttemptState,
    /// The status the AM reported when it unregistered.
    pub final_status: FinalStatus,
    /// Human-readable diagnostics.
    pub diagnostics: String,
    /// When the attempt was created, epoch ms.
    pub start_time_ms: u64,
    /// When it ended, epoch ms.
    pub finish_time_ms: Option<u64>,
    /// The AM container's exit status once it ended; decides whether the failure counts
    /// against max attempts (YARN does not count preemption or lost nodes).
    pub am_exit_status: Option<i32>,
    /// The secret the AM presents; kept so a restarted RM accepts the re-registering AM.
    pub am_token: String,
    /// The tracking URL the AM registered (or its final one).
    pub tracking_url: Option<String>,
    /// Preemption's toll on the attempt (YARN's `RMAppAttemptMetrics`): the summed memory of
    /// its preempted containers. This and the five below are absent (0) in older records.
    #[serde(default)]
    pub preempted_memory_mb: u64,
    /// The summed vcores of its preempted containers.
    #[serde(default)]
    pub preempted_vcores: u32,
    /// Whether its AM container was preempted (0 or 1).
    #[serde(default)]
    pub preempted_am_containers: u32,
    /// Its preempted containers other than the AM.
    #[serde(default)]
    pub preempted_non_am_containers: u32,
    /// Memory x run time of its preempted containers, MB x milliseconds.
    #[serde(default)]
    pub preempted_memory_mb_ms: u64,
    /// Vcores x run time of its preempted containers, vcores x milliseconds.
    #[serde(default)]
    pub preempted_vcore_ms: u64,
    /// The gangs its AM asked for (Weft's `AllocateRequest.gangs`) that are not yet delivered,
    /// fallen back or failed: held members were never launched, so a restarted RM asks for
    /// each again, whole. Absent (empty) in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gangs: Vec<GangRecord>,
}

/// A gang an AM asked for and has not received yet (the scheduler's `GangAsk`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GangRecord {
    /// The AM's id for it, unique within the application.
    pub gang: u64,
    /// Request priority of its members.
    pub priority: i32,
    /// The size of each member.
    pub resource: ResourceRecord,
    /// The member's amounts of the resource types after memory and vcores, in the cluster's
    /// type order (trailing zeros left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_resources: Vec<i64>,
    /// How many members.
    pub size: u32,
    /// How long a partial hold may last from its first held member, ms; `None`: no limit.
    pub hold_timeout_ms: Option<u64>,
    /// The timeout fails the gang (true) or hands the held members over (false).
    pub hard: bool,
}

/// An application with its attempts, as recovered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveredApp {
    /// The application record.
    pub app: ApplicationRecord,
    /// Its attempts in attempt-number order.
    pub attempts: Vec<AttemptRecord>,
}

/// Lifecycle states of a time-aware demand (seed 004's RMDemand; time-aware-demands spec
/// §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DemandState {
    /// Valid and recorded; the scheduler has not decided yet.
    New,
    /// Accepted, waiting for its start (time or order).
    Accepted,
    /// A scheduling candidate: containers are being allocated.
    Allocating,
    /// Every container allocated; waiting for the AM to claim them.
    Allocated,
    /// Claimed and watched (lease, deadline, dependents).
    Monitoring,
    /// Over (outcome ok, late or failed by the AM's word).
    Finished,
    /// Refused, expired, killed or failed with its app.
    Failed,
}

impl DemandState {
    /// True for FINISHED and FAILED.
    pub fn is_final(self) -> bool {
        matches!(self, DemandState::Finished | DemandState::Failed)
    }
}

/// One transition of a demand, as its timeline shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemandTransitionRecord {
    /// The state entered.
    pub state: DemandState,
    /// Why (a stable snake_case reason: `unconstrained`, `window_expired`, ...).
    pub reason: String,
    /// What the reason does not say; may be empty.
    #[serde(default)]
    pub detail: String,
    /// When, epoch ms.
    pub at_ms: u64,
}

/// One demand (spec §3.4's persistence: its spec, state, reason, absolute times and counts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemandRecord {
    /// The global key: `application_<ts>_<n>/<DemandID>`, or `~<user>/<DemandID>` for a
    /// demand bound to no application. The store's key.
    pub key: String,
    /// The submitting user.
    pub user: String,
    /// The queue it was submitted for (empty when none was named).
    pub queue: String,
    /// The ResourceDescription as the demand printer writes it (JSON).
    pub spec: String,
    /// When it was accepted: the instant `NOW` is bound to, epoch ms.
    pub accepted_at_ms: u64,
    /// Every transition, oldest first; the last is the current state.
    pub timeline: Vec<DemandTransitionRecord>,
    /// START: the first allocation (the whole gang's, for a gang), epoch ms.
    pub first_allocation_ms: Option<u64>,
    /// Scheduling opportunities missed while ALLOCATING.
    pub missed_opportunities: u64,
    /// Containers allocated for it.
    pub allocated: u64,
    /// Of those, claimed (launched on their NMs).
    pub claimed: u64,
    /// Of those, completed or released.
    pub completed: u64,
    /// Set when an ApplicationMaster sent the demand over the AM protocol: the RM asks the
    /// scheduler for its containers while it is ALLOCATING (a REST demand asks nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub am_asks: Option<DemandPlacementRecord>,
    /// Set while the demand holds a reservation in a plan (spec §3.3): the planner placed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<DemandPlanRecord>,
    /// Its containers that are allocated and not yet ended (at most `allocated`), so that the
    /// ones an NM reports again after a restart still count for it. Empty once it is over,
    /// and in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<DemandContainerRecord>,
}

/// A live container of a demand: its id within the demand's application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemandContainerRecord {
    /// The attempt that holds it.
    pub attempt: u32,
    /// Its number within the application (the container id's last part, epoch included).
    pub n: u64,
    /// Its NM reported it running (it counts as claimed).
    #[serde(default)]
    pub claimed: bool,
}

/// Where the planner placed a demand: its reservation in a reservable queue's plan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemandPlanRecord {
    /// The reservation (`reservation_<clusterTs>_<seq>`), stored with the plan's others.
    pub reservation_id: String,
    /// The plan's queue (full name).
    pub queue: String,
    /// The planned start: the first instant the reservation holds resources, epoch ms.
    pub start_ms: u64,
    /// The planned end: where the reservation's resources end, epoch ms.
    pub end_ms: u64,
}

/// Where the containers of a demand an AM sent should go (YARN's host and rack names).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemandPlacementRecord {
    /// Preferred hosts.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Preferred racks.
    #[serde(default)]
    pub racks: Vec<String>,
}

/// Everything a store holds, as the RM reads it on start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveredState {
    /// Cluster counters; `None` on a store that was never written (first start).
    pub meta: Option<ClusterMeta>,
    /// The node labels added and the nodes mapped through the admin interfaces (empty when
    /// never written).
    pub node_labels: NodeLabelsRecord,
    /// Every application in application-id order.
    pub apps: Vec<RecoveredApp>,
    /// Every accepted reservation, in id order.
    pub reservations: Vec<ReservationRecord>,
    /// The next reservation sequence number to issue (0 when never written).
    pub next_reservation_seq: u64,
    /// Every demand in key order (empty in stores written before demands existed).
    pub demands: Vec<DemandRecord>,
}

/// One accepted reservation (Hadoop's `ReservationAllocationStateProto`): reloaded into its
/// queue's plan without re-validation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationRecord {
    /// `reservation_<cluster timestamp>_<sequence>`.
    pub id: String,
    /// The plan's queue, full name.
    pub queue: String,
    /// The owner.
    pub user: String,
    /// When it was accepted or last updated, ms.
    pub acceptance_time: u64,
    /// Where it holds, ms: `[start, end)`.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    /// What was asked for.
    pub definition: ReservationDefinitionRecord,
    /// The resources reserved: non-zero steps `[start, end)` in time order.
    pub allocation: Vec<AllocationRecord>,
}

/// A reservation's definition (Hadoop's RDL).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationDefinitionRecord {
    /// Earliest start, ms.
    pub arrival: u64,
    /// Latest end, ms.
    pub deadline: u64,
    /// The mnemonic.
    pub name: String,
    /// Lower is more important.
    pub priority: i32,
    /// The recurrence period in ms, if recurring.
    pub recurrence_ms: Option<u64>,
    /// 0 R_ANY, 1 R_ALL, 2 R_ORDER, 3 R_ORDER_NO_GAP (Hadoop's ordinals).
    pub interpreter: u8,
    /// The stages in order.
    pub requests: Vec<ReservationRequestRecord>,
}

/// One stage of a definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationRequestRecord {
    /// One container.
    pub capability: ResourceRecord,
    /// Containers in all.
    pub num_containers: u32,
    /// The gang size.
    pub concurrency: u32,
    /// How long each gang runs, ms.
    pub duration_ms: u64,
}

/// One step of a reservation's allocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationRecord {
    /// From, ms.
    pub start: u64,
    /// Until (exclusive), ms.
    pub end: u64,
    /// What is reserved in between.
    pub resource: ResourceRecord,
}

/// The node-label registry's admin part (YARN's node-label store,
/// `yarn.node-labels.fs-store.root-dir`): labels added by rmadmin or REST and the nodes mapped to
/// labels that way. Labels and mappings the allocation file declares are not stored: the file
/// is read again at start.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeLabelsRecord {
    /// Label name and exclusivity, sorted by name.
    pub labels: Vec<(String, bool)>,
    /// Node (`host` for every NM of it, or `host:port`) and its label, sorted by node.
    pub mappings: Vec<(String, String)>,
}

/// One change to a store; a slice of them is applied atomically by
/// [`StateStore::apply`](crate::StateStore::apply).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Replace the cluster counters.
    Meta(ClusterMeta),
    /// Insert or replace an application (its attempts are kept).
    PutApp(ApplicationRecord),
    /// Insert or replace an attempt; its application must exist (or be put earlier in the
    /// same batch).
    PutAttempt(AttemptRecord),
    /// Remove an application and all its attempts; removing an unknown id is not an error, so
    /// retention GC can retry.
    RemoveApp(u64),
    /// Replace the node-label registry's admin part.
    NodeLabels(NodeLabelsRecord),
    /// Insert or replace an accepted reservation.
    PutReservation(ReservationRecord),
    /// Remove a reservation by id; an unknown id is not an error.
    RemoveReservation(String),
    /// Replace the next reservation sequence number.
    ReservationSequence(u64),
    /// Insert or replace a demand (by key).
    PutDemand(DemandRecord),
    /// Remove a demand by key; an unknown key is not an error.
    RemoveDemand(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_context_keeps_hadoops_tokens_and_quoting_and_old_ones_decode() {
        let plain = LaunchContext::default();
        let text = serde_json::to_string(&plain).expect("encodes");
        assert!(
            !text.contains("tokens") && !text.contains("hadoop_quoting"),
            "{text}"
        );
        let old: LaunchContext =
            serde_json::from_str(r#"{"commands":["x"],"environment":{},"local_resources":{}}"#)
                .expect("a record without the fields decodes");
        assert!(old.tokens.is_empty() && !old.hadoop_quoting);
        let hadoop = LaunchContext {
            tokens: b"HDTS\x01".to_vec(),
            hadoop_quoting: true,
            ..LaunchContext::default()
        };
        let back: LaunchContext =
            serde_json::from_str(&serde_json::to_string(&hadoop).expect("encodes"))
                .expect("decodes");
        assert_eq!(back, hadoop);
    }

    #[test]
    fn an_attempt_stored_before_the_preemption_figures_decodes_with_zeros() {
        let mut current = serde_json::to_value(crate::conformance::sample_attempt(3, 1))
            .expect("a record encodes");
        let fields = current.as_object_mut().expect("a record is an object");
        for name in [
            "preempted_memory_mb",
            "preempted_vcores",
            "preempted_am_containers",
            "preempted_non_am_containers",
            "preempted_memory_mb_ms",
            "preempted_vcore_ms",
        ] {
            assert!(fields.remove(name).is_some(), "{name} is written");
        }
        let old: AttemptRecord = serde_json::from_value(current).expect("an old record decodes");
        assert_eq!(
            (old.preempted_memory_mb, old.preempted_non_am_containers),
            (0, 0)
        );
        assert_eq!(old.preempted_memory_mb_ms, 0);
        assert_eq!(old.am_token, "token-3-1");
    }

    #[test]
    fn records_stored_before_gangs_and_demand_containers_decode_empty() {
        let mut attempt = serde_json::to_value(crate::conformance::sample_attempt(3, 1))
            .expect("a record encodes");
        let fields = attempt.as_object_mut().expect("a record is an object");
        assert!(
            fields.remove("gangs").is_some(),
            "pending gangs are written"
        );
        let old: AttemptRecord = serde_json::from_value(attempt).expect("an old attempt decodes");
        assert!(old.gangs.is_empty());
        let mut demand = serde_json::to_value(crate::conformance::sample_demand("~alice/7"))
            .expect("a record encodes");
        let fields = demand.as_object_mut().expect("a record is an object");
        assert!(
            fields.remove("containers").is_some(),
            "live containers are written"
        );
        let old: DemandRecord = serde_json::from_value(demand).expect("an old demand decodes");
        assert!(old.containers.is_empty());
        let none = DemandRecord {
            containers: Vec::new(),
            ..old
        };
        let text = serde_json::to_string(&none).expect("encodes");
        assert!(!text.contains("\"containers\""), "{text}");
    }
}
