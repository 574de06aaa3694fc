//! How many demands one owner may keep: REST callers can submit demands without end, so each
//! scope (a user's application-less demands, or one application's) holds at most
//! [`MAX_DEMANDS_PER_SCOPE`]. A user's oldest ended demands make room for new ones (as
//! completed applications do); an application's leave with the application (retention).

use weft_store::Write;

use super::Scope;
use crate::{RmCore, RmError};

/// The most demands one user (application-less) or one application keeps, live and ended.
pub const MAX_DEMANDS_PER_SCOPE: usize = 10_000;

impl RmCore {
    /// Room for `adding` more demands in `scope`, checked before anything changes: refused
    /// when the scope's live demands (and, for an application, its ended ones) leave too
    /// little; otherwise the user's oldest ended demands without a live successor go.
    pub(super) fn make_room_for_demands(
        &mut self,
        scope: &Scope,
        adding: usize,
    ) -> Result<(), RmError> {
        let prefix = match scope {
            Scope::App(app) => format!("{app}/"),
            Scope::User(user) => format!("~{user}/"),
        };
        let in_scope: Vec<(&String, &super::Demand)> = self
            .demands
            .by_key
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .filter(|(_, d)| d.scope == *scope)
            .collect();
        let over = (in_scope.len() + adding).saturating_sub(MAX_DEMANDS_PER_SCOPE);
        if over == 0 {
            return Ok(());
        }
        let named = self.named_by_live_demands();
        let mut evictable: Vec<(weft_types::Time, String)> = match scope {
            Scope::App(_) => Vec::new(),
            Scope::User(_) => in_scope
                .iter()
                .filter(|(key, d)| d.state().is_final() && !named.contains(key.as_str()))
                .map(|(key, d)| {
                    let ended = d.timeline.last().map_or(d.accepted_at, |t| t.at);
                    (ended, (*key).clone())
                })
                .collect(),
        };
        if evictable.len() < over {
            let owner = match scope {
                Scope::App(app) => format!("application {app}"),
                Scope::User(user) => format!("user {user}"),
            };
            return Err(RmError::InvalidDemand(format!(
                "/demands: {adding} more demands would make {} for {owner}; at most {MAX_DEMANDS_PER_SCOPE} (ended demands of a user make room, an application's leave with it)",
                in_scope.len() + adding
            )));
        }
        drop(named);
        evictable.sort();
        let gone: Vec<String> = evictable.into_iter().take(over).map(|(_, k)| k).collect();
        for key in &gone {
            self.demands.by_key.remove(key);
        }
        self.persist(gone.into_iter().map(Write::RemoveDemand).collect());
        Ok(())
    }
}

impl RmCore {
    /// The keys live demands name in their OrderBy: an ended demand among them still answers
    /// for its successor, so it stays (one pass, not a scan per candidate).
    pub(crate) fn named_by_live_demands(&self) -> std::collections::BTreeSet<String> {
        self.demands
            .by_key
            .values()
            .filter(|d| !d.state().is_final())
            .filter_map(|d| d.spec.order_by.as_ref().map(|order| (d, order)))
            .flat_map(|(d, order)| {
                weft_demand_lang::references(&order.value)
                    .iter()
                    .filter_map(|r| d.scope.target(r))
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use weft_types::Time;

    use super::MAX_DEMANDS_PER_SCOPE;
    use crate::tests::{core, drain, writes};
    use crate::DemandBatch;

    fn batch(ids: std::ops::Range<u64>) -> serde_json::Value {
        json!(ids
            .map(|id| json!({
                "DemandID": id,
                "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1}
            }))
            .collect::<Vec<_>>())
    }

    fn submit(
        c: &mut crate::RmCore,
        t: u64,
        ids: std::ops::Range<u64>,
    ) -> Result<(), crate::RmError> {
        let demands = batch(ids);
        c.submit_demands(
            Time(t),
            DemandBatch {
                user: "alice",
                queue: Some("root.default"),
                application: None,
                demands: &demands,
                pointer: "/demands",
            },
        )
        .map(|_| ())
    }

    #[test]
    fn a_user_keeps_at_most_the_bound_and_ended_demands_make_room_oldest_first() {
        let mut c = core();
        let max = MAX_DEMANDS_PER_SCOPE as u64;
        for start in (0..max).step_by(1000) {
            submit(&mut c, 1, start..start + 1000).expect("within the bound");
        }
        drain(&mut c);
        // Every demand is live (ALLOCATING, asking nothing): one more is refused, nothing changes.
        let err = submit(&mut c, 2, max..max + 1).unwrap_err();
        assert!(err.to_string().contains("at most 10000"), "{err}");
        assert!(c.demand(&format!("~alice/{max}")).is_none());
        // Two end (killed, at 3 and then 4): the next two demands take the oldest ended's place.
        c.kill_demand(Time(3), "~alice/7", "alice").expect("killed");
        c.kill_demand(Time(4), "~alice/5", "alice").expect("killed");
        drain(&mut c);
        submit(&mut c, 5, max..max + 1).expect("room made");
        let out = drain(&mut c);
        assert!(
            c.demand("~alice/7").is_none(),
            "the oldest ended demand went"
        );
        assert!(c.demand("~alice/5").is_some(), "the newer ended one stays");
        assert!(writes(&out)
            .iter()
            .any(|w| matches!(w, weft_store::Write::RemoveDemand(k) if k == "~alice/7")));
        submit(&mut c, 6, max + 1..max + 2).expect("room made");
        assert!(c.demand("~alice/5").is_none());
        assert!(
            submit(&mut c, 7, max + 2..max + 3).is_err(),
            "no ended demand left"
        );
    }
}
