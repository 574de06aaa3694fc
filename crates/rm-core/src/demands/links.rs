//! OrderBy between live demands: a demand's order evaluated against the demands it names, and
//! whether any live demand waits on a given one.

use weft_demand_lang::DemandRef;
use weft_store::DemandState;

use super::order::{evaluate, Predecessor, Truth};
use super::Demand;
use crate::RmCore;

impl RmCore {
    pub(super) fn order_truth(&self, d: &Demand) -> Truth {
        let Some(order) = &d.spec.order_by else {
            return Truth {
                now: true,
                possible: true,
            };
        };
        let strategy = d.spec.effective(order, self.config.demand_default_strategy);
        let lookup = |reference: &DemandRef| {
            let key = d.scope.target(reference)?;
            self.demands.by_key.get(&key).map(|p| Predecessor {
                state: p.state(),
                reason: p.reason(),
                ever_allocated: p.ever_in(DemandState::Allocated),
            })
        };
        evaluate(&order.value, strategy, &lookup)
    }

    pub(super) fn has_dependents(&self, key: &str) -> bool {
        self.demands.by_key.values().any(|other| {
            !other.state().is_final()
                && other.spec.order_by.as_ref().is_some_and(|order| {
                    weft_demand_lang::references(&order.value)
                        .iter()
                        .any(|r| other.scope.target(r).as_deref() == Some(key))
                })
        })
    }
}
