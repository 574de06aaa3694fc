//! The plan of one reservable queue (Hadoop's `InMemoryPlan`): its capacity over time, its
//! accepted reservations, and the committed resources over time in total and per user.
//!
//! Every add and update is checked against the plan's sharing policy before anything changes;
//! a refused change leaves the plan exactly as it was.

use std::collections::BTreeMap;

use thiserror::Error;
use weft_types::{Duration, Resource, Time};

use crate::policy::{PolicyViolation, SharingPolicy};
use crate::rdl::{ContractError, ReservationDefinition, ReservationId};
use crate::skyline::{MergeOp, Skyline, SkylineError};

/// A plan's fixed settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanConfig {
    /// The reservable queue's name.
    pub queue: String,
    /// `yarn.resourcemanager.reservation-system.planfollower.time-step` (default 1,000 ms):
    /// arrivals round up to it, deadlines down, durations up.
    pub step: Duration,
    /// The largest container the scheduler grants.
    pub maximum_allocation: Resource,
    /// `yarn.resourcemanager.reservation-system.max-periodicity` (default 86,400,000 ms).
    pub max_periodicity: Duration,
    /// What one user may reserve.
    pub policy: SharingPolicy,
}

impl PlanConfig {
    /// Hadoop's defaults for `queue`: 1 s step, 24 h periodicity, `CapacityOverTimePolicy` at
    /// 100% / 100% / 24 h, no container limit.
    pub fn new(queue: &str) -> PlanConfig {
        PlanConfig {
            queue: queue.to_string(),
            step: Duration(1000),
            maximum_allocation: Resource::UNBOUNDED,
            max_periodicity: Duration(86_400_000),
            policy: SharingPolicy::default(),
        }
    }
}

/// An accepted reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// Its id.
    pub id: ReservationId,
    /// Who owns it (the sharing policy's unit).
    pub user: String,
    /// What was asked for.
    pub definition: ReservationDefinition,
    /// Where it holds: the arrival rounded up to the step (Hadoop pads the allocation with
    /// zeros back to the arrival, so the reservation starts there).
    pub start: Time,
    /// The deadline rounded *up* to the step (Hadoop's padding rounds up here while planning
    /// rounds the deadline down).
    pub end: Time,
    /// The resources reserved over time.
    pub allocation: Skyline,
    /// Order of acceptance in this plan (the replanner drops the newest first).
    pub acceptance_order: u64,
    /// When it was accepted (or last updated).
    pub acceptance_time: Time,
}

impl Reservation {
    /// The resources reserved at `t`.
    pub fn at(&self, t: Time) -> Resource {
        self.allocation.value_at(t)
    }

    /// Whether the reservation holds at `t` (its queue exists in Hadoop's follower).
    pub fn is_active_at(&self, t: Time) -> bool {
        self.start <= t && t < self.end
    }

    /// Whether any stage asks for gangs of more than one container: Hadoop's follower then
    /// caps the reservation's queue at its reserved share instead of letting it grow to the
    /// whole plan.
    pub fn has_gang(&self) -> bool {
        self.definition.requests.iter().any(|rr| rr.concurrency > 1)
    }
}

/// A refused planning request; the plan is unchanged.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PlanError {
    /// The definition fails the checks made before planning.
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// No placement fits before the deadline (Hadoop's text).
    #[error("The request cannot be satisfied")]
    CannotSatisfy {
        /// The stage that did not fit (`None` when R_ANY found no alternative).
        stage: Option<usize>,
    },
    /// An R_ORDER_NO_GAP stage did not start exactly where its neighbour ends, or is not one
    /// contiguous block (Hadoop's text).
    #[error("The allocation found does not respect ORDER_NO_GAP")]
    NoGap {
        /// The stage that broke the chain.
        stage: usize,
    },
    /// The sharing policy refused the placement.
    #[error("{violation} by accepting reservation: {id}")]
    Policy {
        /// The reservation refused.
        id: ReservationId,
        /// What it would break (boxed: it carries resource vectors).
        violation: Box<PolicyViolation>,
    },
    /// An update would change the reservation's owner.
    #[error("Updating an existing reservation with mismatched user:{old} != {new}")]
    MismatchedUser {
        /// The owner on record.
        old: String,
        /// The user of the update.
        new: String,
    },
    /// No reservation with that id in this plan.
    #[error("The specified reservation with ID: {0} is unknown. Please try again with a valid reservation.")]
    UnknownReservation(ReservationId),
    /// A reservation with that id already exists (an add, not an update).
    #[error("Reservation {0} already exists")]
    DuplicateReservation(ReservationId),
    /// A gang of a stage Hadoop's checks accept cannot be packed on the nodes
    /// (`weft.reservation.packability-check`, Weft only).
    #[error("{why}")]
    Unpackable {
        /// The stage.
        stage: usize,
        /// The gang, the nodes and how many members they hold.
        why: crate::packing::Unpackable,
    },
    /// Recurring reservations are validated but not planned yet.
    #[error("reservation {0} is recurring; Weft does not plan recurring reservations yet")]
    RecurringNotPlanned(ReservationId),
    /// The plan's settings are unusable.
    #[error("plan {queue}: {problem}")]
    BadConfig {
        /// The queue.
        queue: String,
        /// What is wrong.
        problem: String,
    },
    /// A resource sum overflowed.
    #[error(transparent)]
    Skyline(#[from] SkylineError),
}

/// One reservable queue's plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    config: PlanConfig,
    capacity: Skyline,
    committed: Skyline,
    per_user: BTreeMap<String, Skyline>,
    reservations: BTreeMap<ReservationId, Reservation>,
    next_acceptance: u64,
}

impl Plan {
    /// An empty plan with `capacity` from time zero on.
    pub fn new(config: PlanConfig, capacity: Resource) -> Result<Plan, PlanError> {
        if config.step.0 == 0 {
            return Err(PlanError::BadConfig {
                queue: config.queue,
                problem: "the plan step must be at least 1 ms".into(),
            });
        }
        if config.max_periodicity.0 == 0 {
            return Err(PlanError::BadConfig {
                queue: config.queue,
                problem: "the maximum periodicity must be at least 1 ms".into(),
            });
        }
        Ok(Plan {
            config,
            capacity: Skyline::constant_from(Time::ZERO, capacity),
            committed: Skyline::new(),
            per_user: BTreeMap::new(),
            reservations: BTreeMap::new(),
            next_acceptance: 0,
        })
    }

    /// The plan's settings.
    pub fn config(&self) -> &PlanConfig {
        &self.config
    }

    /// The plan step.
    pub fn step(&self) -> Duration {
        self.config.step
    }

    /// Sets the capacity from `from` on (the follower does this when the queue's share
    /// changes). Reservations already accepted are kept even if they no longer fit: dropping
    /// them is the replanner's decision.
    pub fn set_capacity(&mut self, from: Time, capacity: Resource) {
        let mut next = self.capacity.clip(Time::ZERO, from);
        let tail = Skyline::constant_from(from, capacity);
        next = Skyline::merge(&next, &tail, MergeOp::Add);
        self.capacity = next;
    }

    /// The capacity over time.
    pub fn capacity(&self) -> &Skyline {
        &self.capacity
    }

    /// Everything reserved, over time.
    pub fn committed(&self) -> &Skyline {
        &self.committed
    }

    /// What `user` has reserved, over time (empty for a user with nothing).
    pub fn user_committed(&self, user: &str) -> Skyline {
        self.per_user.get(user).cloned().unwrap_or_default()
    }

    /// The users holding reservations, in name order.
    pub fn users(&self) -> impl Iterator<Item = &str> {
        self.per_user.keys().map(String::as_str)
    }

    /// One reservation.
    pub fn reservation(&self, id: &ReservationId) -> Option<&Reservation> {
        self.reservations.get(id)
    }

    /// Every reservation, in id order.
    pub fn reservations(&self) -> impl Iterator<Item = &Reservation> {
        self.reservations.values()
    }

    /// The reservations holding at `t`, in id order.
    pub fn active_at(&self, t: Time) -> impl Iterator<Item = &Reservation> {
        self.reservations
            .values()
            .filter(move |r| r.is_active_at(t))
    }

    /// True when the plan holds no reservation and commits nothing.
    pub fn is_empty(&self) -> bool {
        self.reservations.is_empty() && self.committed.is_empty() && self.per_user.is_empty()
    }

    /// What a reservation of `user` may still use at each instant of `[from, to)` (zero
    /// outside): the capacity minus every other reservation, limited by the policy's per-user
    /// share. `replacing` names the reservation an update replaces, whose resources count as
    /// free.
    pub fn available_for(
        &self,
        user: &str,
        replacing: Option<&ReservationId>,
        from: Time,
        to: Time,
    ) -> Skyline {
        let old = replacing.and_then(|id| self.reservations.get(id));
        let capacity = self.capacity.clip(from, to);
        let mut committed = self.committed.clip(from, to);
        let mut user_load = self
            .per_user
            .get(user)
            .map(|s| s.clip(from, to))
            .unwrap_or_default();
        if let Some(old) = old {
            let old_part = old.allocation.clip(from, to);
            committed = Skyline::merge(&committed, &old_part, MergeOp::Subtract);
            if old.user == user {
                user_load = Skyline::merge(&user_load, &old_part, MergeOp::Subtract);
            }
        }
        let free = Skyline::merge(&capacity, &committed, MergeOp::Subtract);
        match self.config.policy.user_headroom(&capacity, &user_load) {
            Some(headroom) => Skyline::merge(&free, &headroom, MergeOp::Min),
            None => free,
        }
    }

    /// Accepts a new reservation if the sharing policy allows it.
    pub fn add(&mut self, candidate: Reservation, now: Time) -> Result<(), PlanError> {
        if self.reservations.contains_key(&candidate.id) {
            return Err(PlanError::DuplicateReservation(candidate.id));
        }
        self.swap_in(candidate, now)
    }

    /// Replaces a reservation if the sharing policy allows the new version; on refusal the old
    /// one stays as it was (Hadoop's try-and-swap).
    pub fn update(&mut self, candidate: Reservation, now: Time) -> Result<(), PlanError> {
        if !self.reservations.contains_key(&candidate.id) {
            return Err(PlanError::UnknownReservation(candidate.id));
        }
        self.swap_in(candidate, now)
    }

    /// Whether the sharing policy would accept `candidate` (in place of its previous version
    /// when its id is already in the plan), without changing anything: the dry run.
    pub fn check(&self, candidate: &Reservation) -> Result<(), PlanError> {
        self.totals_with(candidate).map(|_| ())
    }

    /// The plan's and the candidate's user's committed skylines with the candidate in place of
    /// its previous version, once the policy has accepted them.
    fn totals_with(&self, candidate: &Reservation) -> Result<(Skyline, Skyline), PlanError> {
        let old = self.reservations.get(&candidate.id);
        if let Some(old) = old {
            if old.user != candidate.user {
                return Err(PlanError::MismatchedUser {
                    old: old.user.clone(),
                    new: candidate.user.clone(),
                });
            }
        }
        let mut total = self.committed.clone();
        let mut user_total = self.user_committed(&candidate.user);
        if let Some(old) = old {
            total.subtract_skyline(&old.allocation)?;
            user_total.subtract_skyline(&old.allocation)?;
        }
        total.add_skyline(&candidate.allocation)?;
        user_total.add_skyline(&candidate.allocation)?;
        self.config
            .policy
            .check(
                &self.capacity,
                &total,
                &user_total,
                candidate.start,
                candidate.end,
            )
            .map_err(|violation| PlanError::Policy {
                id: candidate.id,
                violation: Box::new(violation),
            })?;
        Ok((total, user_total))
    }

    fn swap_in(&mut self, mut candidate: Reservation, now: Time) -> Result<(), PlanError> {
        let (total, user_total) = self.totals_with(&candidate)?;
        candidate.acceptance_order = self.next_acceptance;
        candidate.acceptance_time = now;
        self.next_acceptance += 1;
        self.committed = total;
        if user_total.is_empty() {
            self.per_user.remove(&candidate.user);
        } else {
            self.per_user.insert(candidate.user.clone(), user_total);
        }
        self.reservations.insert(candidate.id, candidate);
        Ok(())
    }

    /// Puts back a reservation read from the RM's store, without the sharing policy's check
    /// (Hadoop reloads reservations without re-validation: the capacity at recovery, before
    /// nodes register, is not the one they were accepted under). It keeps its acceptance
    /// time; its acceptance order follows the restore order. Refused only when the id is
    /// already in the plan or a sum overflows.
    pub fn restore(&mut self, mut reservation: Reservation) -> Result<(), PlanError> {
        if self.reservations.contains_key(&reservation.id) {
            return Err(PlanError::DuplicateReservation(reservation.id));
        }
        let mut total = self.committed.clone();
        total.add_skyline(&reservation.allocation)?;
        let mut user_total = self.user_committed(&reservation.user);
        user_total.add_skyline(&reservation.allocation)?;
        reservation.acceptance_order = self.next_acceptance;
        self.next_acceptance += 1;
        self.committed = total;
        self.per_user.insert(reservation.user.clone(), user_total);
        self.reservations.insert(reservation.id, reservation);
        Ok(())
    }

    /// Removes a reservation and its resources.
    pub fn delete(&mut self, id: &ReservationId) -> Result<Reservation, PlanError> {
        let Some(old) = self.reservations.get(id) else {
            return Err(PlanError::UnknownReservation(*id));
        };
        let mut total = self.committed.clone();
        total.subtract_skyline(&old.allocation)?;
        let mut user_total = self.user_committed(&old.user);
        user_total.subtract_skyline(&old.allocation)?;
        let user = old.user.clone();
        self.committed = total;
        if user_total.is_empty() {
            self.per_user.remove(&user);
        } else {
            self.per_user.insert(user, user_total);
        }
        self.reservations
            .remove(id)
            .ok_or(PlanError::UnknownReservation(*id))
    }

    /// Removes the reservations that ended at least one policy window before `now` (Hadoop
    /// keeps them that long so the average check still counts them), oldest end first.
    pub fn archive_completed(&mut self, now: Time) -> Result<Vec<Reservation>, PlanError> {
        let window = self.config.policy.window();
        let mut done: Vec<(Time, ReservationId)> = self
            .reservations
            .values()
            .filter(|r| r.end + window <= now)
            .map(|r| (r.end, r.id))
            .collect();
        done.sort();
        let mut archived = Vec::with_capacity(done.len());
        for (_, id) in done {
            archived.push(self.delete(&id)?);
        }
        Ok(archived)
    }
}
