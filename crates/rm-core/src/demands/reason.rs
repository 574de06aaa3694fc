//! Why a demand changed state (spec §3.4's reasons), with the stable names the store, REST and
//! the timeline use.

/// The reason carried by a demand transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DemandReason {
    /// NEW: the demand was valid and recorded.
    Submitted,
    /// ACCEPTED: nothing to plan or wait for.
    Unconstrained,
    /// ACCEPTED: its OrderBy is not satisfied yet.
    WaitingOrder,
    /// ACCEPTED: a loose time condition that would need a plan runs without one.
    BestEffort,
    /// FAILED at NEW: a strict condition needs a plan and its queue is under no reservable
    /// queue.
    NotReservable,
    /// FAILED at NEW: the gang cannot be packed on the cluster's nodes.
    Unpackable,
    /// ALLOCATING: its order and Start lower bound are met.
    Eligible,
    /// FAILED: a strict predecessor's outcome can no longer satisfy OrderBy.
    PredecessorFailed,
    /// FAILED while ACCEPTED: now + Duration is past a strict DeadLine.
    DeadlineUnreachable,
    /// FAILED: killed.
    Killed,
    /// ALLOCATED: every container (the whole gang) allocated.
    Satisfied,
    /// ALLOCATING (loose): the Start window closed; the time bound is dropped.
    WindowMissed,
    /// FAILED (strict): the Start window closed before the demand was satisfied.
    WindowExpired,
    /// MONITORING: every container claimed, and something is watched.
    Claimed,
    /// FAILED: the claim timer fired before every container was launched.
    ClaimExpired,
    /// MONITORING (loose): the lease ended with containers running.
    LeaseOverrun,
    /// A DeadLine passed: FAILED under strict, noted under loose.
    DeadlineMissed,
    /// FAILED (strict): the lease ended with containers running.
    DurationExceeded,
    /// FAILED: its application failed or was killed.
    AppFailed,
    /// FINISHED: outcome ok.
    Ok,
    /// FINISHED: outcome ok after a loose deadline was missed.
    Late,
    /// FINISHED: the AM reported failure.
    Failed,
    /// FAILED: the scheduler refused the asks of a demand an AM sent.
    AskRefused,
    /// ACCEPTED: the plan holds a reservation for it inside its time conditions.
    Planned,
    /// ACCEPTED (loose): no room inside its time conditions; planned at the earliest start
    /// found after them.
    Deferred,
    /// FAILED at NEW (strict): the plan has no room inside its time conditions.
    Unplannable,
    /// FAILED at NEW: the plan's sharing policy refused the user's reservation.
    Quota,
    /// ACCEPTED (loose): the replanner dropped its reservation and it was planned again.
    Replanned,
    /// FAILED (strict): the replanner dropped its reservation (the plan's capacity fell).
    CapacityLost,
}

const NAMES: [(DemandReason, &str); 29] = [
    (DemandReason::Submitted, "submitted"),
    (DemandReason::Unconstrained, "unconstrained"),
    (DemandReason::WaitingOrder, "waiting_order"),
    (DemandReason::BestEffort, "best_effort"),
    (DemandReason::NotReservable, "not_reservable"),
    (DemandReason::Unpackable, "unpackable"),
    (DemandReason::Eligible, "eligible"),
    (DemandReason::PredecessorFailed, "predecessor_failed"),
    (DemandReason::DeadlineUnreachable, "deadline_unreachable"),
    (DemandReason::Killed, "killed"),
    (DemandReason::Satisfied, "satisfied"),
    (DemandReason::WindowMissed, "window_missed"),
    (DemandReason::WindowExpired, "window_expired"),
    (DemandReason::Claimed, "claimed"),
    (DemandReason::ClaimExpired, "claim_expired"),
    (DemandReason::LeaseOverrun, "lease_overrun"),
    (DemandReason::DeadlineMissed, "deadline_missed"),
    (DemandReason::DurationExceeded, "duration_exceeded"),
    (DemandReason::AppFailed, "app_failed"),
    (DemandReason::Ok, "ok"),
    (DemandReason::Late, "late"),
    (DemandReason::Failed, "failed"),
    (DemandReason::AskRefused, "ask_refused"),
    (DemandReason::Planned, "planned"),
    (DemandReason::Deferred, "deferred"),
    (DemandReason::Unplannable, "unplannable"),
    (DemandReason::Quota, "quota"),
    (DemandReason::Replanned, "replanned"),
    (DemandReason::CapacityLost, "capacity_lost"),
];

impl DemandReason {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        NAMES
            .iter()
            .find(|(reason, _)| *reason == self)
            .map(|(_, name)| *name)
            .unwrap_or("unknown")
    }

    /// The reason a stored name stands for.
    pub fn from_name(name: &str) -> Option<DemandReason> {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(reason, _)| *reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_has_one_name_that_reads_back() {
        for (reason, name) in NAMES {
            assert_eq!(reason.as_str(), name);
            assert_eq!(DemandReason::from_name(name), Some(reason));
        }
        let mut names: Vec<&str> = NAMES.iter().map(|(_, n)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), NAMES.len());
    }
}
