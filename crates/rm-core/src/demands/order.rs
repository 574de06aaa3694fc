//! OrderBy against other demands' states (§3.2.3's atoms). Every atom is monotone: once its
//! predecessor's state satisfies it, it stays satisfied (FINISHED and FAILED are final; a
//! demand that reached ALLOCATED has started for good). So each expression has a value now and
//! a "can still become true", and NOT(x) can only go from true to false.

use weft_demand_lang::{DemandExpr, DemandRef, Outcome, Strategy};
use weft_store::DemandState;

use super::reason::DemandReason;

/// What OrderBy needs to know about a referenced demand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Predecessor {
    pub(crate) state: DemandState,
    pub(crate) reason: DemandReason,
    pub(crate) ever_allocated: bool,
}

/// The value of an expression now, and whether it can still be true later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Truth {
    pub(crate) now: bool,
    pub(crate) possible: bool,
}

pub(crate) fn evaluate(
    expr: &DemandExpr,
    strategy: Strategy,
    lookup: &dyn Fn(&DemandRef) -> Option<Predecessor>,
) -> Truth {
    match expr {
        DemandExpr::Ref(reference) => atom(reference, strategy, lookup(reference)),
        DemandExpr::And(branches) => {
            let values: Vec<Truth> = branches
                .iter()
                .map(|b| evaluate(b, strategy, lookup))
                .collect();
            Truth {
                now: values.iter().all(|v| v.now),
                possible: values.iter().all(|v| v.possible),
            }
        }
        DemandExpr::Or(branches) => {
            let values: Vec<Truth> = branches
                .iter()
                .map(|b| evaluate(b, strategy, lookup))
                .collect();
            Truth {
                now: values.iter().any(|v| v.now),
                possible: values.iter().any(|v| v.possible),
            }
        }
        DemandExpr::Not(inner) => {
            let value = evaluate(inner, strategy, lookup);
            Truth {
                now: !value.now,
                possible: !value.now,
            }
        }
    }
}

fn atom(reference: &DemandRef, strategy: Strategy, found: Option<Predecessor>) -> Truth {
    // A reference that no longer resolves (its demand was removed) can never be satisfied.
    let Some(p) = found else {
        return Truth {
            now: false,
            possible: false,
        };
    };
    let outcome = reference.outcome.unwrap_or(match strategy {
        Strategy::Strict => Outcome::Ok,
        Strategy::Loose => Outcome::Any,
    });
    let finished_ok = p.state == DemandState::Finished && p.reason != DemandReason::Failed;
    let ended_badly = p.state == DemandState::Failed
        || (p.state == DemandState::Finished && p.reason == DemandReason::Failed);
    let decided = p.state.is_final();
    let now = match outcome {
        Outcome::Ok => finished_ok,
        Outcome::Any => decided,
        Outcome::Failed => ended_badly,
        Outcome::Started => p.ever_allocated,
    };
    // Every atom is decided by a final state, so an undecided one may still come true.
    let possible = now || !decided;
    Truth { now, possible }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(demand: u64, outcome: Option<Outcome>) -> DemandExpr {
        DemandExpr::Ref(DemandRef {
            owner: None,
            demand,
            outcome,
        })
    }

    fn states(
        first: (DemandState, DemandReason),
        second: (DemandState, DemandReason),
    ) -> impl Fn(&DemandRef) -> Option<Predecessor> {
        move |r| {
            let (state, reason) = if r.demand == 1200 { first } else { second };
            Some(Predecessor {
                state,
                reason,
                ever_allocated: matches!(
                    state,
                    DemandState::Allocated | DemandState::Monitoring | DemandState::Finished
                ),
            })
        }
    }

    const RUNNING: (DemandState, DemandReason) = (DemandState::Monitoring, DemandReason::Claimed);
    const DONE: (DemandState, DemandReason) = (DemandState::Finished, DemandReason::Ok);
    const FAILED: (DemandState, DemandReason) = (DemandState::Failed, DemandReason::Killed);

    #[test]
    fn strict_atoms_wait_for_ok_and_fail_for_good_on_failure() {
        let expr = reference(1200, None);
        let running = evaluate(&expr, Strategy::Strict, &states(RUNNING, RUNNING));
        assert_eq!(
            running,
            Truth {
                now: false,
                possible: true
            }
        );
        let failed = evaluate(&expr, Strategy::Strict, &states(FAILED, RUNNING));
        assert_eq!(
            failed,
            Truth {
                now: false,
                possible: false
            }
        );
        let loose = evaluate(&expr, Strategy::Loose, &states(FAILED, RUNNING));
        assert!(loose.now, "loose atoms mean any end");
    }

    #[test]
    fn and_waits_for_both_and_or_for_either() {
        let both = DemandExpr::And(vec![reference(1200, None), reference(1201, None)]);
        let either = DemandExpr::Or(vec![reference(1200, None), reference(1201, None)]);
        let lookup = states(RUNNING, DONE);
        assert!(!evaluate(&both, Strategy::Strict, &lookup).now);
        assert!(evaluate(&either, Strategy::Strict, &lookup).now);
    }

    #[test]
    fn not_holds_until_its_predecessor_finishes() {
        let sidecar = DemandExpr::Not(Box::new(reference(1200, None)));
        assert!(evaluate(&sidecar, Strategy::Strict, &states(RUNNING, RUNNING)).now);
        let over = evaluate(&sidecar, Strategy::Strict, &states(DONE, RUNNING));
        assert_eq!(
            over,
            Truth {
                now: false,
                possible: false
            }
        );
    }

    #[test]
    fn started_and_failed_outcomes() {
        let started = reference(1200, Some(Outcome::Started));
        assert!(evaluate(&started, Strategy::Strict, &states(RUNNING, RUNNING)).now);
        let failed = reference(1200, Some(Outcome::Failed));
        assert!(evaluate(&failed, Strategy::Strict, &states(FAILED, RUNNING)).now);
        assert!(!evaluate(&failed, Strategy::Strict, &states(DONE, RUNNING)).possible);
    }
}
