//! Hadoop's ReservationSystem on the RM: one [`Plan`] per reservable queue of the running
//! configuration, reservation ids, and submit / update / delete / list with the checks and
//! messages of Hadoop's `ClientRMService` and `ReservationInputValidator`.
//!
//! Sans-IO like the rest of the core: every call takes `now`. The plan's capacity is the
//! queue's share of the cluster at the moment of the call (see [`plan_capacity`]), set from
//! `now` on before each request, so nodes joining or leaving are seen by the next request.
//! The follower's side in rm-core (ticks, replanning, archiving, telling the scheduler) is
//! `plan_follower.rs`.

use std::collections::BTreeMap;

use thiserror::Error;
use weft_config::reservation::{ReservationAgentKind, ReservationQueueSettings, SharingPolicyKind};
use weft_plan::{
    AlignedPlannerWithGreedy, CapacityOverTime, GreedyAgent, PackedAgent, Percent, Plan,
    PlanConfig, PlanError, Reservation, ReservationAgent, ReservationDefinition, ReservationId,
    SharingPolicy,
};
use weft_sched::{SchedulerConfig, Snapshot};
use weft_store::{ReservationRecord, Write};
use weft_types::{Duration, Resource, Time};

use crate::reservation_acls::ReservationAcl;
use crate::reservation_records::{from_record, to_record};
use crate::RmError;

fn reservation_id(record: &ReservationRecord) -> Result<ReservationId, RmError> {
    record
        .id
        .parse()
        .map_err(|e| RmError::Corrupt(format!("reservation {}: {e}", record.id)))
}

/// A refused reservation request, with the text Hadoop's clients see; nothing changed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum ReservationError {
    /// No queue named.
    #[error("The queue is not specified. Please try again with a valid reservable queue.")]
    MissingQueue,
    /// The queue has no plan.
    #[error("The specified queue: {0} is not managed by reservation system. Please try again with a valid reservable queue.")]
    NotReservable(String),
    /// No reservation id given (Hadoop's text, double space included).
    #[error("Reservation id cannot be null. Please try again specifying  a valid reservation id by creating a new reservation id.")]
    MissingId,
    /// No reservation with that id.
    #[error("The specified reservation with ID: {0} is unknown. Please try again with a valid reservation.")]
    Unknown(ReservationId),
    /// The id is taken by a reservation with another definition.
    #[error("Reservation allocation already exists with the reservation id {0}, but a different reservation definition was provided. Please try again with a new reservation id, or consider updating the reservation instead.")]
    DifferentDefinition(ReservationId),
    /// The plan refused it (validation, placement or sharing policy).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The caller may not do this on the queue (Hadoop wraps its `AccessControlException`
    /// in a `YarnException`, whose message is the cause's `toString`).
    #[error("org.apache.hadoop.security.AccessControlException: User {user} cannot perform operation {operation} on queue {queue}")]
    AccessDenied {
        /// The caller.
        user: String,
        /// Hadoop's `ReservationACL` name.
        operation: &'static str,
        /// The plan queue.
        queue: String,
    },
    /// A reservable queue's settings cannot make a plan.
    #[error("reservable queue {queue}: {problem}")]
    BadSettings {
        /// The queue.
        queue: String,
        /// What is wrong.
        problem: String,
    },
}

/// One reservable queue: its plan, its settings.
#[derive(Clone)]
pub(crate) struct PlanQueue {
    pub(crate) plan: Plan,
    pub(crate) settings: ReservationQueueSettings,
}

/// What [`ReservationSystem::list`] selects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReservationQuery {
    /// The plan's queue (Hadoop's REST default is `default`).
    pub queue: String,
    /// One reservation; when set the time window is ignored, as in Hadoop.
    pub id: Option<ReservationId>,
    /// Reservations ending after this (default 0).
    pub start: Time,
    /// Reservations starting at or before this (`None`: unbounded).
    pub end: Option<Time>,
}

/// The reservations of every reservable queue (cloned by a demand dry run, which puts the
/// clone back).
#[derive(Clone)]
pub struct ReservationSystem {
    cluster_ts: u64,
    next_seq: u64,
    plans: BTreeMap<String, PlanQueue>,
    /// The plan holding each reservation.
    owner: BTreeMap<ReservationId, String>,
    /// What the scheduler's plan follower was last told, per plan queue.
    pub(crate) followed: BTreeMap<String, weft_sched::PlanReservations>,
    /// The plans' periodic work (capacity, replanning, archiving) runs again at this time.
    pub(crate) next_tick: Time,
    /// No replanning before this time (set after a recovery, while nodes re-register).
    pub(crate) replan_after: Time,
}

impl ReservationSystem {
    /// An empty system for the RM started at `cluster_ts`.
    pub fn new(cluster_ts: u64) -> ReservationSystem {
        ReservationSystem {
            cluster_ts,
            next_seq: 1,
            plans: BTreeMap::new(),
            owner: BTreeMap::new(),
            followed: BTreeMap::new(),
            next_tick: Time::ZERO,
            replan_after: Time::ZERO,
        }
    }

    /// A fresh id (Hadoop's `getNewReservation`): `reservation_<rm start ts>_<seq:04>`.
    pub fn new_id(&mut self) -> ReservationId {
        let id = ReservationId {
            cluster_timestamp: self.cluster_ts,
            sequence: self.next_seq,
        };
        self.next_seq += 1;
        id
    }

    /// The plans with their settings, by queue.
    pub(crate) fn plan_queues(&mut self) -> impl Iterator<Item = (&String, &mut PlanQueue)> {
        self.plans.iter_mut()
    }

    /// The plans with their settings, by queue (read-only).
    pub(crate) fn plan_queues_ref(&self) -> impl Iterator<Item = (&String, &PlanQueue)> {
        self.plans.iter()
    }

    /// Forgets a reservation the plan itself dropped (replanned or archived).
    pub(crate) fn forget(&mut self, id: &ReservationId) {
        self.owner.remove(id);
    }

    /// The reservable queues' settings (move-on-expiry, enforcement window, ...), by queue.
    pub fn settings(&self, queue: &str) -> Option<&ReservationQueueSettings> {
        self.resolve(queue)
            .and_then(|q| self.plans.get(&q))
            .map(|p| &p.settings)
    }

    /// The reservable queues, by full name.
    pub fn queues(&self) -> impl Iterator<Item = &str> {
        self.plans.keys().map(String::as_str)
    }

    /// The plan of a queue, named as the client wrote it (`prod` finds `root.prod`).
    pub fn plan(&self, queue: &str) -> Option<&Plan> {
        self.resolve(queue)
            .and_then(|q| self.plans.get(&q))
            .map(|p| &p.plan)
    }

    pub(crate) fn resolve(&self, queue: &str) -> Option<String> {
        if self.plans.contains_key(queue) {
            return Some(queue.to_string());
        }
        let rooted = format!("root.{queue}");
        self.plans.contains_key(&rooted).then_some(rooted)
    }

    /// Sets every plan's capacity from `now` on to the queue's share of the cluster.
    pub fn refresh_capacity(&mut self, now: Time, snapshot: &Snapshot) {
        for (queue, pq) in &mut self.plans {
            pq.plan.set_capacity(now, plan_capacity(queue, snapshot));
        }
    }

    /// Hadoop's `submitReservation`: places `definition` for `user` in `queue`'s plan under
    /// `id`. The same id with the same definition again is a no-op success. With `nodes`
    /// (`weft.reservation.packability-check` on: the nodes' capacities), a gang Hadoop would
    /// place but the nodes cannot pack is refused after Hadoop's own checks.
    pub fn submit(
        &mut self,
        now: Time,
        user: &str,
        queue: &str,
        id: Option<ReservationId>,
        definition: &ReservationDefinition,
        nodes: Option<&[Resource]>,
    ) -> Result<(), ReservationError> {
        let id = id.ok_or(ReservationError::MissingId)?;
        if queue.trim().is_empty() {
            return Err(ReservationError::MissingQueue);
        }
        let name = self
            .resolve(queue)
            .ok_or_else(|| ReservationError::NotReservable(queue.to_string()))?;
        if let Some(existing) = self.find(&id) {
            if existing.definition == *definition {
                return Ok(());
            }
            return Err(ReservationError::DifferentDefinition(id));
        }
        let pq = self
            .plans
            .get_mut(&name)
            .ok_or_else(|| ReservationError::NotReservable(queue.to_string()))?;
        packed(agent_of(&pq.settings).as_ref(), nodes).create(
            &mut pq.plan,
            id,
            user,
            definition,
            now,
        )?;
        self.owner.insert(id, name);
        // Hadoop accepts an id it did not issue; never issue it later.
        if id.cluster_timestamp == self.cluster_ts {
            self.next_seq = self.next_seq.max(id.sequence + 1);
        }
        Ok(())
    }

    /// Places a demand's reservation (spec §3.3) under `id` with the greedy agent, earliest
    /// first, whatever the queue's agent: a demand wants the earliest start its conditions
    /// allow, and exact placements are free (§7, decision 8). `queue` is a plan's full name.
    pub(crate) fn submit_demand(
        &mut self,
        now: Time,
        user: &str,
        queue: &str,
        id: ReservationId,
        definition: &ReservationDefinition,
    ) -> Result<(), ReservationError> {
        let pq = self
            .plans
            .get_mut(queue)
            .ok_or_else(|| ReservationError::NotReservable(queue.to_string()))?;
        GreedyAgent { favor_early: true }.create(&mut pq.plan, id, user, definition, now)?;
        self.owner.insert(id, queue.to_string());
        Ok(())
    }

    /// The next sequence number [`ReservationSystem::new_id`] hands out.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.next_seq
    }

    /// Hadoop's `updateReservation`: replaces the definition; on refusal the old reservation
    /// stays as it was. `nodes` as for [`ReservationSystem::submit`].
    pub fn update(
        &mut self,
        now: Time,
        user: &str,
        id: Option<ReservationId>,
        definition: &ReservationDefinition,
        nodes: Option<&[Resource]>,
    ) -> Result<(), ReservationError> {
        let id = id.ok_or(ReservationError::MissingId)?;
        let pq = self.plan_of_mut(&id)?;
        packed(agent_of(&pq.settings).as_ref(), nodes).update(
            &mut pq.plan,
            id,
            user,
            definition,
            now,
        )?;
        Ok(())
    }

    /// Hadoop's `deleteReservation`.
    pub fn delete(&mut self, id: Option<ReservationId>) -> Result<Reservation, ReservationError> {
        let id = id.ok_or(ReservationError::MissingId)?;
        let pq = self.plan_of_mut(&id)?;
        let removed = pq.plan.delete(&id)?;
        self.owner.remove(&id);
        Ok(removed)
    }

    /// Hadoop's `listReservations`: the reservations of a plan overlapping
    /// `[query.start, query.end]` (ending after the start and starting at or before the end),
    /// or the one named by `query.id` whatever its time.
    pub fn list(&self, query: &ReservationQuery) -> Result<Vec<&Reservation>, ReservationError> {
        if query.queue.trim().is_empty() {
            return Err(ReservationError::MissingQueue);
        }
        let plan = self
            .plan(&query.queue)
            .ok_or_else(|| ReservationError::NotReservable(query.queue.clone()))?;
        if let Some(id) = query.id {
            return Ok(plan.reservation(&id).into_iter().collect());
        }
        Ok(plan
            .reservations()
            .filter(|r| r.end > query.start && query.end.is_none_or(|end| r.start <= end))
            .collect())
    }

    /// The reservation with `id` in any plan.
    pub fn find(&self, id: &ReservationId) -> Option<&Reservation> {
        let queue = self.owner.get(id)?;
        self.plans.get(queue)?.plan.reservation(id)
    }

    /// The full name of the queue whose plan holds `id`.
    pub fn queue_of(&self, id: &ReservationId) -> Option<&str> {
        self.owner.get(id).map(String::as_str)
    }

    fn plan_of_mut(&mut self, id: &ReservationId) -> Result<&mut PlanQueue, ReservationError> {
        let queue = self.owner.get(id).ok_or(ReservationError::Unknown(*id))?;
        self.plans
            .get_mut(queue)
            .ok_or(ReservationError::Unknown(*id))
    }
}

/// A kept queue under new settings: its capacity and reservations moved into a plan with the
/// new policy, restored without re-validation (a configuration change does not drop accepted
/// reservations; Hadoop leaves that to the replanner).
fn rebuilt(kept: PlanQueue, config: PlanConfig, settings: ReservationQueueSettings) -> PlanQueue {
    let Ok(mut plan) = Plan::new(config, Resource::ZERO) else {
        return kept;
    };
    for (t, capacity) in kept.plan.capacity().steps() {
        plan.set_capacity(t, capacity);
    }
    let mut by_order: Vec<&Reservation> = kept.plan.reservations().collect();
    by_order.sort_by_key(|r| r.acceptance_order);
    let all_fit = by_order
        .into_iter()
        .all(|r| plan.restore(r.clone()).is_ok());
    if all_fit {
        PlanQueue { plan, settings }
    } else {
        kept
    }
}

/// The reservable queues of a configuration with their settings: Fair `<reservation/>` queues
/// (the file's global agent, policy and planner) and Capacity `reservable` leaves.
pub fn reservable_queues(config: &SchedulerConfig) -> BTreeMap<String, ReservationQueueSettings> {
    match config {
        SchedulerConfig::Fair(fair) => {
            let settings = ReservationQueueSettings::for_fair(&fair.allocations);
            fair.allocations
                .queues
                .iter()
                .filter(|(_, q)| q.reservation)
                .map(|(name, _)| (name.clone(), settings.clone()))
                .collect()
        }
        SchedulerConfig::Capacity(cs) => cs.capacity.reservable.clone(),
        SchedulerConfig::Fifo(_) => BTreeMap::new(),
    }
}

/// A plan's capacity as Hadoop computes it: on Fair (`FairReservationSystem`) the queue's
/// steady fair share, on Capacity (`CapacityReservationSystem`) the queue's absolute capacity
/// times the cluster, which is the leaf's effective minimum in the scheduler's snapshot. Both
/// follow the cluster's resources, so they change as nodes join or leave.
///
/// Fair's default policy shares memory only, so its steady share has no vcores; Hadoop's plan
/// then compares memory only (its DefaultResourceCalculator). The plan here compares every
/// type, so a type the share leaves at zero gets the cluster's amount scaled by the share's
/// memory fraction: the queue's share of the cluster, on every type.
pub fn plan_capacity(queue: &str, snapshot: &Snapshot) -> Resource {
    let Some(q) = snapshot.queues.iter().find(|q| q.name == queue) else {
        return Resource::ZERO;
    };
    let share = if q.steady_fair_share != Resource::ZERO {
        q.steady_fair_share
    } else {
        q.min_resources
    };
    let cluster = snapshot.cluster_capacity;
    let (part, whole) = (
        i128::from(share.memory_mb()),
        i128::from(cluster.memory_mb()),
    );
    let mut out = share;
    for i in 0..weft_types::MAX_RESOURCE_TYPES {
        if share.get(i) == 0 && cluster.get(i) > 0 && whole > 0 {
            let scaled = i128::from(cluster.get(i)) * part / whole;
            out.set(i, i64::try_from(scaled).unwrap_or(i64::MAX));
        }
    }
    out
}

fn plan_config(
    queue: &str,
    settings: &ReservationQueueSettings,
    maximum_allocation: Resource,
) -> Result<PlanConfig, ReservationError> {
    let percent = |what: &str, p: f32| {
        Percent::from_percent(f64::from(p)).map_err(|e| ReservationError::BadSettings {
            queue: queue.to_string(),
            problem: format!("{what}: {e}"),
        })
    };
    let mut config = PlanConfig::new(queue);
    config.maximum_allocation = maximum_allocation;
    config.policy = match settings.policy {
        SharingPolicyKind::NoOverCommit => SharingPolicy::NoOverCommit,
        SharingPolicyKind::CapacityOverTime => SharingPolicy::CapacityOverTime(CapacityOverTime {
            instantaneous_max: percent(
                "instantaneous-max-capacity",
                settings.instantaneous_max_capacity,
            )?,
            average: percent("average-capacity", settings.average_capacity)?,
            window: Duration(u64::try_from(settings.window_ms).map_err(|_| {
                ReservationError::BadSettings {
                    queue: queue.to_string(),
                    problem: format!("reservation-window {} is negative", settings.window_ms),
                }
            })?),
        }),
    };
    Ok(config)
}

/// The queue's agent, with the packability check around it when `nodes` are given.
fn packed<'a>(
    agent: &'a dyn ReservationAgent,
    nodes: Option<&'a [Resource]>,
) -> Box<dyn ReservationAgent + 'a> {
    match nodes {
        Some(nodes) => Box::new(PackedAgent {
            inner: agent,
            nodes,
        }),
        None => Box::new(AgentRef(agent)),
    }
}

/// An agent borrowed as one.
struct AgentRef<'a>(&'a dyn ReservationAgent);

impl ReservationAgent for AgentRef<'_> {
    fn place(
        &self,
        plan: &Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<weft_plan::Placement, PlanError> {
        self.0.place(plan, id, user, definition, now)
    }
}

fn agent_of(settings: &ReservationQueueSettings) -> Box<dyn ReservationAgent> {
    match settings.agent {
        ReservationAgentKind::Greedy => Box::new(GreedyAgent::default()),
        ReservationAgentKind::AlignedPlannerWithGreedy => {
            Box::new(AlignedPlannerWithGreedy::default())
        }
    }
}

impl ReservationSystem {
    /// The system for a starting RM: the plans of `config`'s reservable queues. A queue whose
    /// settings cannot make a plan (a percent out of range) gets none; its submissions are
    /// refused as not reservable.
    pub fn for_config(cluster_ts: u64, config: &SchedulerConfig) -> ReservationSystem {
        let mut system = ReservationSystem::new(cluster_ts);
        system.sync_queues(config, config.properties().maximum_allocation);
        system
    }

    /// Makes the plans match `config`'s reservable queues: new queues get an empty plan,
    /// queues no longer reservable lose theirs with their reservations (as Hadoop's
    /// `AbstractReservationSystem.reinitialize` drops the plans of removed queues), kept
    /// queues take the new settings. A queue whose settings cannot make a plan (a percent out
    /// of range) gets none: its submissions are refused as not reservable.
    pub fn sync_queues(&mut self, config: &SchedulerConfig, maximum_allocation: Resource) {
        let mut plans = BTreeMap::new();
        for (queue, settings) in reservable_queues(config) {
            let Ok(plan_config) = plan_config(&queue, &settings, maximum_allocation) else {
                continue;
            };
            let entry = match self.plans.remove(&queue) {
                Some(kept) => rebuilt(kept, plan_config, settings),
                None => match Plan::new(plan_config, Resource::ZERO) {
                    Ok(plan) => PlanQueue { plan, settings },
                    Err(_) => continue,
                },
            };
            plans.insert(queue, entry);
        }
        self.plans = plans;
        let plans = &self.plans;
        self.owner.retain(|_, q| plans.contains_key(q));
    }
}

/// The reservation requests of the RM (Hadoop's `ClientRMService` reservation methods): each
/// first sets the plans' capacity to the queues' current share of the cluster.
impl crate::RmCore {
    /// A new reservation id (`POST /reservation/new-reservation`); the next sequence number
    /// is persisted so a restart never issues it twice.
    pub fn new_reservation(&mut self) -> ReservationId {
        let id = self.reservations.new_id();
        self.persist(vec![Write::ReservationSequence(self.reservations.next_seq)]);
        id
    }

    /// Submits a reservation.
    pub fn submit_reservation(
        &mut self,
        now: Time,
        user: &str,
        queue: &str,
        id: Option<ReservationId>,
        definition: &ReservationDefinition,
    ) -> Result<(), ReservationError> {
        if let Some(name) = self.reservations.resolve(queue) {
            self.check_reservation_acl(user, ReservationAcl::Submit, &name, None)?;
        }
        self.refresh_plans(now);
        let nodes = self.packability_nodes();
        self.reservations
            .submit(now, user, queue, id, definition, nodes.as_deref())?;
        self.persist_reservation(id);
        self.persist(vec![Write::ReservationSequence(self.reservations.next_seq)]);
        self.follow_plans(now);
        Ok(())
    }

    /// Replaces a reservation's definition.
    pub fn update_reservation(
        &mut self,
        now: Time,
        user: &str,
        id: Option<ReservationId>,
        definition: &ReservationDefinition,
    ) -> Result<(), ReservationError> {
        self.check_administer(user, id.as_ref())?;
        self.refresh_plans(now);
        let nodes = self.packability_nodes();
        self.reservations
            .update(now, user, id, definition, nodes.as_deref())?;
        self.persist_reservation(id);
        self.follow_plans(now);
        Ok(())
    }

    /// The running nodes' capacities when `weft.reservation.packability-check` is on (the
    /// nodes a demand's gang is checked against too), `None` when it is off.
    fn packability_nodes(&self) -> Option<Vec<Resource>> {
        self.config
            .scheduler
            .properties()
            .reservation_packability_check
            .then(|| {
                self.nodes
                    .values()
                    .filter(|n| n.state == crate::model::NodeState::Running)
                    .map(|n| n.capability)
                    .collect()
            })
    }

    /// Deletes a reservation.
    pub fn delete_reservation(
        &mut self,
        now: Time,
        user: &str,
        id: Option<ReservationId>,
    ) -> Result<(), ReservationError> {
        self.check_administer(user, id.as_ref())?;
        self.refresh_plans(now);
        let removed = self.reservations.delete(id)?;
        self.persist(vec![Write::RemoveReservation(removed.id.to_string())]);
        self.follow_plans(now);
        Ok(())
    }

    /// Lists reservations (`ReservationSystem::list`) as `user`, checked against the plan
    /// queue's list ACL.
    pub fn list_reservations(
        &self,
        user: &str,
        query: &ReservationQuery,
    ) -> Result<Vec<&Reservation>, ReservationError> {
        if let Some(name) = self.reservations.resolve(&query.queue) {
            self.check_reservation_acl(user, ReservationAcl::List, &name, query.id.as_ref())?;
        }
        self.reservations.list(query)
    }

    /// The administer ACL of the queue holding `id` (an unknown id is left to the request's
    /// own refusal).
    fn check_administer(
        &self,
        user: &str,
        id: Option<&ReservationId>,
    ) -> Result<(), ReservationError> {
        let Some(id) = id else {
            return Ok(());
        };
        let Some(queue) = self.reservations.queue_of(id) else {
            return Ok(());
        };
        self.check_reservation_acl(user, ReservationAcl::Administer, queue, Some(id))
    }

    /// Puts back the reservations read from the store (at recovery, before any node): each
    /// into its queue's plan without re-validation, as Hadoop recovers them. A reservation
    /// whose queue is no longer reservable is dropped from the store, as a reload drops it.
    pub(crate) fn restore_reservations(
        &mut self,
        records: &[ReservationRecord],
        next_seq: u64,
    ) -> Result<(), RmError> {
        let mut dropped = Vec::new();
        for record in records {
            let reservation = from_record(record).map_err(|problem| {
                RmError::Corrupt(format!("reservation {}: {problem}", record.id))
            })?;
            match self.reservations.plans.get_mut(&record.queue) {
                Some(pq) => {
                    pq.plan
                        .restore(reservation)
                        .map_err(|e| RmError::Corrupt(format!("reservation {}: {e}", record.id)))?;
                    self.reservations
                        .owner
                        .insert(reservation_id(record)?, record.queue.clone());
                }
                None => dropped.push(Write::RemoveReservation(record.id.clone())),
            }
        }
        let issued = records
            .iter()
            .filter_map(|r| r.id.parse::<ReservationId>().ok());
        let after_issued = issued
            .filter(|id| id.cluster_timestamp == self.reservations.cluster_ts)
            .map(|id| id.sequence + 1)
            .max()
            .unwrap_or(1);
        self.reservations.next_seq = next_seq.max(after_issued).max(1);
        self.persist(dropped);
        Ok(())
    }

    pub(crate) fn persist_reservation(&mut self, id: Option<ReservationId>) {
        let Some(id) = id else { return };
        let (Some(queue), Some(r)) = (self.reservations.queue_of(&id), self.reservations.find(&id))
        else {
            return;
        };
        let record = to_record(queue, r);
        self.persist(vec![Write::PutReservation(record)]);
    }

    /// The reservation system (read-only), for listing.
    pub fn reservations(&self) -> &ReservationSystem {
        &self.reservations
    }

    pub(crate) fn sync_reservable_queues(&mut self) {
        let max = self.maximum_allocation();
        self.reservations.sync_queues(&self.config.scheduler, max);
    }

    pub(crate) fn refresh_plans(&mut self, now: Time) {
        let snapshot = self.sched.snapshot();
        self.reservations.refresh_capacity(now, &snapshot);
    }
}
