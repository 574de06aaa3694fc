//! Hadoop's plan follower (`AbstractSchedulerPlanFollower`, time-aware-demands spec §2.1
//! steps 2, 4-6): each plan (reservable) queue gets a `<plan>-default` leaf for apps without a
//! reservation and one leaf per active reservation, named by the reservation's id; a
//! reservation's leaf is sized to reserved(now) ÷ the plan's resources (its maximum the whole
//! plan, or its peak's fraction for a reservation with gangs), the default leaf takes what is
//! left, and at a reservation's end its apps move to the default leaf (or are killed) and its
//! leaf goes.
//!
//! Shared code: the rules create and size the leaves (`Rules::plan_leaf`,
//! `Rules::set_entitlement`, `Rules::plan_resources`); rules without a follower refuse
//! `Event::PlanChanged`. The replanner and archiving are the driver's (rm-core holds the
//! plans; the scheduler does not depend on the planner crate): the event carries each
//! reservation's reserved amount as a step function, so the follower knows its own change
//! points and runs exactly at them (`Engine::poll_timeout`) instead of every plan step as
//! Hadoop's timer does. Hadoop rounds the time up to the plan step, which can show a
//! reservation up to one step before its start; here a leaf appears at its start exactly.
//!
//! Costs nothing while no plan was ever given: the engine holds `None`.

use std::collections::{BTreeMap, BTreeSet};

use crate::lanes::Resource;
use crate::lanes::{inward, truncate};
use weft_types::{AppId, Time};

use crate::api::{
    ContainerExit, Decision, PlanReservations, PlannedReservation, RejectCode, SchedError,
};
use crate::engine::Engine;
use crate::queues::QueueId;
use crate::rules::Rules;

/// At most this many reservations per plan event (a bound on what one event can grow).
pub const MAX_PLAN_RESERVATIONS: usize = 100_000;

/// The plans the follower keeps in step with the queues.
#[derive(Clone, Debug, Default)]
pub(crate) struct Follower {
    plans: BTreeMap<String, PlanState>,
    /// The earliest time after the last run at which some plan's leaves change.
    next_change: Option<Time>,
}

#[derive(Clone, Debug)]
struct PlanState {
    move_on_expiry: bool,
    reservations: Vec<PlannedReservation>,
    /// The reservation leaves the follower made (ids), to expire when they end.
    leaves: BTreeSet<String>,
}

impl Follower {
    /// When the follower next has something to do.
    #[inline]
    pub(crate) fn next_change(&self) -> Option<Time> {
        self.next_change
    }
}

/// The default leaf of a plan queue: `root.prod` -> `root.prod.prod-default` (Hadoop's
/// `ReservationConstants.DEFAULT_QUEUE_SUFFIX` on the plan's short name).
pub(crate) fn default_leaf_of(plan: &str) -> String {
    let short = plan.rsplit('.').next().unwrap_or(plan);
    format!("{plan}.{short}-default")
}

fn check(event: &PlanReservations) -> Result<(), String> {
    if event.reservations.len() > MAX_PLAN_RESERVATIONS {
        return Err(format!(
            "{} reservations, more than the {MAX_PLAN_RESERVATIONS} one plan event may carry",
            event.reservations.len()
        ));
    }
    let mut seen = BTreeSet::new();
    for r in &event.reservations {
        if r.id.is_empty() || r.id.contains('.') || r.id.ends_with("-default") {
            return Err(format!("'{}' cannot name a reservation's queue", r.id));
        }
        if !seen.insert(r.id.as_str()) {
            return Err(format!("reservation {} is listed twice", r.id));
        }
        if r.end <= r.start || r.steps.windows(2).any(|w| w[0].0 > w[1].0) {
            return Err(format!(
                "reservation {}: its interval is empty or its steps are out of order",
                r.id
            ));
        }
        // Past here the engine reads the steps in its own lanes.
        for (_, step) in &r.steps {
            inward(*step).map_err(|why| format!("reservation {}: {why}", r.id))?;
        }
    }
    Ok(())
}

impl<R: Rules> Engine<R> {
    /// `Event::PlanChanged`: takes the plan's reservations and brings its leaves in step.
    pub(crate) fn plan_changed(
        &mut self,
        now: Time,
        event: PlanReservations,
    ) -> Result<(), SchedError> {
        let refuse = |reason: String| SchedError::PlanRefused {
            queue: event.queue.clone(),
            reason,
        };
        check(&event).map_err(refuse)?;
        match self.queues.lookup(&event.queue) {
            Some(q) if !self.queues.get(q).is_leaf => {}
            _ => return Err(refuse("no such parent queue".to_string())),
        }
        R::plan_leaf(self, &default_leaf_of(&event.queue)).map_err(refuse)?;
        let follower = self.follower.get_or_insert_with(Box::default);
        let leaves = follower
            .plans
            .remove(&event.queue)
            .map(|p| p.leaves)
            .unwrap_or_default();
        let mut reservations = event.reservations;
        // Those already over never come back; keep the event's own order otherwise.
        reservations.retain(|r| r.end > now);
        follower.plans.insert(
            event.queue,
            PlanState {
                move_on_expiry: event.move_on_expiry,
                reservations,
                leaves,
            },
        );
        self.follow(now);
        Ok(())
    }

    /// The cluster changed, so plans' resources may have: the follower resizes the leaves at
    /// the next event (as Hadoop's follower sees the new shares at its next step).
    #[inline]
    pub(crate) fn plans_resized(&mut self, now: Time) {
        if let Some(f) = self.follower.as_mut() {
            f.next_change = Some(f.next_change.map_or(now, |at| at.min(now)));
        }
    }

    /// Runs the follower if one of its change points is due by `now`.
    #[inline]
    pub(crate) fn follow_if_due(&mut self, now: Time) {
        if self
            .follower
            .as_ref()
            .and_then(|f| f.next_change())
            .is_some_and(|at| at <= now)
        {
            self.follow(now);
        }
    }

    /// Hadoop's `synchronizePlan` for every plan at `now`, then the next change point.
    pub(crate) fn follow(&mut self, now: Time) {
        let Some(follower) = self.follower.as_ref() else {
            return;
        };
        let names: Vec<String> = follower.plans.keys().cloned().collect();
        for plan in names {
            self.synchronize_plan(now, &plan);
        }
        let next = self.follower.as_ref().and_then(|f| {
            f.plans
                .values()
                .flat_map(|p| p.reservations.iter())
                .filter_map(|r| next_change_of(r, now))
                .min()
        });
        if let Some(f) = self.follower.as_mut() {
            f.next_change = next;
            // A plan whose queue is gone and whose reservations are all over is forgotten.
            f.plans
                .retain(|_, p| !p.reservations.is_empty() || !p.leaves.is_empty());
        }
    }

    fn synchronize_plan(&mut self, now: Time, plan: &str) {
        let Some(plan_id) = self.queues.lookup(plan) else {
            return;
        };
        if self.queues.get(plan_id).is_leaf {
            return;
        }
        let default_name = default_leaf_of(plan);
        let Ok(default_leaf) = R::plan_leaf(self, &default_name) else {
            return;
        };
        let Some(state) = self.follower.as_mut().and_then(|f| f.plans.get_mut(plan)) else {
            return;
        };
        // Ended reservations drop out of the list here; their leaves expire below.
        state.reservations.retain(|r| r.end > now);
        let active: Vec<PlannedReservation> = state
            .reservations
            .iter()
            .filter(|r| r.is_active_at(now))
            .cloned()
            .collect();
        let active_ids: BTreeSet<String> = active.iter().map(|r| r.id.clone()).collect();
        let expired: Vec<String> = state.leaves.difference(&active_ids).cloned().collect();
        let move_on_expiry = state.move_on_expiry;
        for id in expired {
            self.expire_leaf(&format!("{plan}.{id}"), &default_name, move_on_expiry);
            if let Some(state) = self.follower.as_mut().and_then(|f| f.plans.get_mut(plan)) {
                state.leaves.remove(&id);
            }
        }
        let resources = R::plan_resources(self, plan_id);
        let mut total = 0.0;
        for r in &active {
            let Ok(leaf) = R::plan_leaf(self, &format!("{plan}.{}", r.id)) else {
                continue;
            };
            if let Some(state) = self.follower.as_mut().and_then(|f| f.plans.get_mut(plan)) {
                state.leaves.insert(r.id.clone());
            }
            let reserved = truncate(r.reserved_at(now));
            let capacity = entitlement(reserved, resources);
            // A gang's leaf is capped at its reservation's peak, not at reserved(now): the
            // leaf exists from the reservation's start, before its skyline steps up, and a
            // maximum of 0 there refused its app's asks outright ("zero maximum") instead of
            // letting them wait (stop 29's `weft sim deadline` Rayon runs).
            let max = if r.gang {
                entitlement(truncate(r.peak()), resources)
            } else {
                1.0
            };
            R::set_entitlement(self, leaf, capacity, max, resources, Some(reserved));
            total += capacity;
        }
        let rest = (1.0 - total).max(0.0);
        R::set_entitlement(self, default_leaf, rest, 1.0, resources, None);
    }

    /// Hadoop's `cleanupExpiredQueues` for one leaf: entitlement 0, apps moved (or killed),
    /// the leaf removed.
    fn expire_leaf(&mut self, leaf_name: &str, default_name: &str, move_on_expiry: bool) {
        let Some(leaf) = self.queues.lookup(leaf_name) else {
            return;
        };
        if !self.queues.get(leaf).is_leaf {
            return;
        }
        R::set_entitlement(self, leaf, 0.0, 0.0, Resource::ZERO, Some(Resource::ZERO));
        let apps = self.apps_of_leaf(leaf);
        for app in apps {
            let moved = move_on_expiry && R::move_app(self, app, default_name).is_ok();
            if !moved {
                self.remove_app(app, ContainerExit::Killed);
            }
            self.decisions.push_back(Decision::ReservationEnded {
                app,
                queue: leaf_name.to_string(),
                moved_to: moved.then(|| default_name.to_string()),
            });
        }
        if self.queues.get(leaf).is_empty() {
            self.queues.remove(leaf);
            self.order_dirty = true;
        }
    }

    fn apps_of_leaf(&self, leaf: QueueId) -> Vec<AppId> {
        let q = self.queues.get(leaf);
        let mut apps: Vec<AppId> = q
            .runnable_apps
            .iter()
            .chain(q.non_runnable_apps.iter())
            .copied()
            .collect();
        apps.sort_unstable();
        apps
    }

    /// Where a submission with a reservation goes (Hadoop's `resolveReservationQueueName`),
    /// given the leaf the rules placed it in: an app placed in a plan's `<plan>-default` leaf
    /// goes to its reservation's leaf, or is refused when that leaf does not exist (the
    /// reservation is not active); elsewhere the reservation is ignored, as in Hadoop.
    pub(crate) fn reservation_leaf(
        &self,
        app: AppId,
        placed: QueueId,
        reservation: &str,
    ) -> Result<QueueId, (RejectCode, String)> {
        let q = self.queues.get(placed);
        let Some(parent) = q.parent else {
            return Ok(placed);
        };
        let plan = &self.queues.get(parent).name;
        if q.name != default_leaf_of(plan) {
            return Ok(placed);
        }
        let wanted = format!("{plan}.{reservation}");
        match self.queues.lookup(&wanted) {
            Some(leaf) if self.queues.get(leaf).is_leaf && !reservation.contains('.') => Ok(leaf),
            _ => Err((
                RejectCode::ReservationNotActive,
                format!(
                    "Application {app} submitted to a reservation which is not yet currently active: {wanted}"
                ),
            )),
        }
    }
}

/// reserved ÷ plan resources, by memory (Hadoop's plans divide with the scheduler's resource
/// calculator; the Fair Scheduler's is memory only), at most 1. Hadoop also needs the plan's
/// vcores above 0, which a memory-only steady share never has: not checked here.
fn entitlement(reserved: Resource, plan: Resource) -> f64 {
    if plan.memory_mb() <= 0 {
        return 0.0;
    }
    (reserved.memory_mb().max(0) as f64 / plan.memory_mb() as f64).min(1.0)
}

/// The first time after `now` at which `r` starts, steps or ends.
fn next_change_of(r: &PlannedReservation, now: Time) -> Option<Time> {
    std::iter::once(r.start)
        .chain(r.steps.iter().map(|(t, _)| *t))
        .chain(std::iter::once(r.end))
        .filter(|t| *t > now)
        .min()
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;

    fn gb(n: i64) -> Resource {
        Resource::new(n * 1024, n)
    }

    fn reservation(start: u64, end: u64, steps: &[(u64, i64)]) -> PlannedReservation {
        PlannedReservation {
            id: "reservation_1_0001".into(),
            start: Time(start),
            end: Time(end),
            steps: steps.iter().map(|(t, g)| (Time(*t), gb(*g))).collect(),
            gang: false,
        }
    }

    #[test]
    fn reserved_amount_follows_the_steps_inside_the_interval_only() {
        let r = reservation(100, 300, &[(100, 10), (200, 5)]);
        assert_eq!(r.reserved_at(Time(99)), Resource::ZERO);
        assert_eq!(r.reserved_at(Time(100)), gb(10));
        assert_eq!(r.reserved_at(Time(199)), gb(10));
        assert_eq!(r.reserved_at(Time(200)), gb(5));
        assert_eq!(
            r.reserved_at(Time(300)),
            Resource::ZERO,
            "the end is exclusive"
        );
    }

    #[test]
    fn change_points_are_start_steps_and_end() {
        let r = reservation(100, 300, &[(100, 10), (200, 5)]);
        assert_eq!(next_change_of(&r, Time(0)), Some(Time(100)));
        assert_eq!(next_change_of(&r, Time(100)), Some(Time(200)));
        assert_eq!(next_change_of(&r, Time(250)), Some(Time(300)));
        assert_eq!(next_change_of(&r, Time(300)), None);
    }

    #[test]
    fn entitlement_is_the_memory_fraction_capped_at_one() {
        assert_eq!(entitlement(gb(6), gb(24)), 0.25);
        assert_eq!(entitlement(gb(30), gb(24)), 1.0);
        assert_eq!(entitlement(gb(6), Resource::ZERO), 0.0);
    }

    #[test]
    fn default_leaf_takes_the_plan_short_name() {
        assert_eq!(default_leaf_of("root.prod"), "root.prod.prod-default");
        assert_eq!(default_leaf_of("root.a.b"), "root.a.b.b-default");
    }

    #[test]
    fn a_plan_event_with_a_bad_id_or_a_duplicate_is_refused() {
        let mut event = PlanReservations {
            queue: "root.prod".into(),
            move_on_expiry: true,
            reservations: vec![reservation(0, 10, &[(0, 1)]), reservation(0, 10, &[(0, 1)])],
        };
        assert!(check(&event).unwrap_err().contains("listed twice"));
        event.reservations.truncate(1);
        event.reservations[0].id = "a.b".into();
        assert!(check(&event).is_err());
        event.reservations[0].id = "r".into();
        assert_eq!(check(&event), Ok(()));
    }
}
