//! What the RM does with the scheduler's preemption decisions (preemption spec §C, §D): the
//! per-attempt figures YARN keeps in `RMAppAttemptMetrics`, the diagnostics of the kill that
//! follows, and the AM's strict preemption contract.
//!
//! A kill arrives as `Decision::Preempted` immediately followed by
//! `Decision::Completed { exit: Preempted }` for the same container. The first is counted here
//! and leaves the queue it was taken for in [`RmCore::preempted_for`]; the second ends the
//! container through the ordinary completion path (`container_done`: NM stop, AM told, an AM
//! container fails its attempt without counting against the attempt limit), worded with that
//! queue.

use weft_store::AttemptRecord;
use weft_types::yarn_id::ContainerId;
use weft_types::{Resource, Time};

use crate::core::{RmCore, UsageMs};
use crate::model::PreemptionReport;

/// What preemption took from one attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PreemptedTally {
    /// The sizes of its preempted containers, summed.
    pub(crate) resource: Resource,
    /// Its AM container, when it was preempted (at most 1).
    pub(crate) am_containers: u32,
    /// Its other preempted containers.
    pub(crate) non_am_containers: u32,
    /// Size x how long each preempted container had run (the work lost).
    pub(crate) usage: UsageMs,
}

impl PreemptedTally {
    /// The figures of a stored attempt (zero in records written before they existed).
    pub(crate) fn from_record(r: &AttemptRecord) -> PreemptedTally {
        PreemptedTally {
            resource: Resource::new(
                i64::try_from(r.preempted_memory_mb).unwrap_or(i64::MAX),
                i64::from(r.preempted_vcores),
            ),
            am_containers: r.preempted_am_containers,
            non_am_containers: r.preempted_non_am_containers,
            usage: UsageMs {
                memory_mb_ms: r.preempted_memory_mb_ms,
                vcore_ms: r.preempted_vcore_ms,
            },
        }
    }

    /// Writes these figures into an attempt's store record.
    pub(crate) fn fill_record(&self, r: &mut AttemptRecord) {
        r.preempted_memory_mb = u64::try_from(self.resource.memory_mb()).unwrap_or(0);
        r.preempted_vcores = u32::try_from(self.resource.vcores()).unwrap_or(0);
        r.preempted_am_containers = self.am_containers;
        r.preempted_non_am_containers = self.non_am_containers;
        r.preempted_memory_mb_ms = self.usage.memory_mb_ms;
        r.preempted_vcore_ms = self.usage.vcore_ms;
    }

    fn add_to(&self, total: &mut PreemptionReport) {
        total.resource = total.resource.saturating_add(self.resource);
        total.am_containers = total.am_containers.saturating_add(self.am_containers);
        total.non_am_containers = total
            .non_am_containers
            .saturating_add(self.non_am_containers);
        total.memory_mb_seconds = total
            .memory_mb_seconds
            .saturating_add(self.usage.memory_mb_ms / 1000);
        total.vcore_seconds = total
            .vcore_seconds
            .saturating_add(self.usage.vcore_ms / 1000);
    }
}

/// The diagnostics of a preempted container, naming the queue it was taken for when the
/// scheduler said (YARN says "Container preempted by scheduler").
pub(crate) fn preempted_diagnostics(for_queue: Option<&str>) -> String {
    match for_queue {
        Some(q) if !q.is_empty() => format!("Container preempted by scheduler for queue {q}"),
        _ => "Container preempted by scheduler".to_string(),
    }
}

impl RmCore {
    /// The scheduler is about to kill `sched_id`: counts it against its attempt (size, AM or
    /// not, size x time it ran) and remembers the queue it goes to for the completion's
    /// diagnostics.
    pub(crate) fn on_preempted(
        &mut self,
        now: Time,
        sched_id: weft_types::ContainerId,
        am: bool,
        for_queue: String,
    ) {
        let Some(&id) = self.by_sched.get(&sched_id) else {
            return;
        };
        let Some(c) = self.containers.get(&id) else {
            return;
        };
        let (resource, since) = (c.resource, c.since);
        self.preempted_for.insert(sched_id, for_queue);
        let Some(attempt) = self
            .apps
            .get_mut(&id.app)
            .and_then(|a| a.attempts.get_mut((id.attempt as usize).wrapping_sub(1)))
        else {
            return;
        };
        let tally = &mut attempt.preempted;
        tally.resource = tally.resource.saturating_add(resource);
        if am || attempt.am_container == Some(id) {
            tally.am_containers = tally.am_containers.saturating_add(1);
        } else {
            tally.non_am_containers = tally.non_am_containers.saturating_add(1);
        }
        let ran_ms = now.as_millis().saturating_sub(since.as_millis());
        tally.usage = tally.usage.plus(resource, ran_ms);
        // Written at once (preemption is rare) so the figures survive a restart of the RM
        // while the attempt still runs, not only once it ends.
        if let Some(app) = self.apps.get(&id.app) {
            let record = crate::apps::attempt_record(app, id.attempt as usize - 1);
            self.persist(vec![weft_store::Write::PutAttempt(record)]);
        }
    }

    /// The containers of the app that the scheduler has marked for preemption and that are
    /// still live, in marking order, as the RM names them: the AM's strict preemption contract.
    pub(crate) fn strict_preemption_contract(&self, app: weft_types::AppId) -> Vec<ContainerId> {
        self.sched
            .preemption_contract(app)
            .into_iter()
            .filter_map(|c| self.by_sched.get(&c).copied())
            .collect()
    }

    /// What preemption took from the app over all its attempts (YARN's `RMAppMetrics` sums
    /// its attempts' figures the same way).
    pub(crate) fn preemption_report(&self, app: &crate::core::App) -> PreemptionReport {
        let mut total = PreemptionReport::default();
        for attempt in &app.attempts {
            attempt.preempted.add_to(&mut total);
        }
        total
    }
}
