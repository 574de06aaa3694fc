//! Reload refusals for resource pools (resource-pools spec §10): a reload may not remove a
//! pool, nor change the pool a queue is bound to, while a queue of that pool still has
//! applications (accepted, pending or running); the refusal lists the queues and their apps,
//! and the old configuration keeps running. Host moves and new pools need no check: running
//! containers stay where they are, marked foreign.

use std::collections::BTreeMap;

use weft_config::pools::ResourcePools;

use crate::api::SchedError;
use crate::fair::FairEngine;

impl FairEngine {
    /// Refuses `new` when it would remove a pool or rebind a queue that has applications.
    pub(super) fn check_pool_reload(&self, new: Option<&ResourcePools>) -> Result<(), SchedError> {
        let Some(pools) = &self.pools else {
            // No pools before: every queue was unbound; binding queues that hold apps is a
            // binding change too.
            return self.check_rebinding(new, |_| None);
        };
        let mut removed: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let apps = q.runnable_apps.len() + q.non_runnable_apps.len();
            if !q.is_leaf || apps == 0 || q.pool == 0 {
                continue;
            }
            let pool = pools.name(q.pool);
            if new.and_then(|n| n.pool(pool)).is_none() {
                removed
                    .entry(pool)
                    .or_default()
                    .push((q.name.as_str(), apps));
            }
        }
        if let Some((pool, queues)) = removed.into_iter().next() {
            let listed: Vec<String> = queues
                .iter()
                .map(|(q, n)| {
                    let noun = if *n == 1 {
                        "application"
                    } else {
                        "applications"
                    };
                    format!("{q} ({n} {noun})")
                })
                .collect();
            let (noun, verb) = if listed.len() == 1 {
                ("queue", "has")
            } else {
                ("queues", "have")
            };
            return Err(SchedError::ConfigRefused(format!(
                "cannot remove resource pool {pool}: {noun} {} still {verb} applications",
                listed.join(", ")
            )));
        }
        self.check_rebinding(new, |q| {
            let p = self.queues.get(q).pool;
            (p != 0).then(|| pools.name(p).to_string())
        })
    }

    /// Refuses a change of any non-empty leaf's pool (`old`: its pool now).
    fn check_rebinding(
        &self,
        new: Option<&ResourcePools>,
        old: impl Fn(crate::queues::QueueId) -> Option<String>,
    ) -> Result<(), SchedError> {
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            if !q.is_leaf || q.runnable_apps.len() + q.non_runnable_apps.len() == 0 {
                continue;
            }
            let before = old(id);
            let after = new
                .and_then(|n| n.binding(&q.name))
                .map(|b| b.pool().to_string());
            if before != after {
                let show = |p: &Option<String>| {
                    p.as_ref().map_or("no resource pool".to_string(), |p| {
                        format!("resource pool {p}")
                    })
                };
                let apps: Vec<String> = q
                    .runnable_apps
                    .iter()
                    .chain(q.non_runnable_apps.iter())
                    .map(|a| a.to_string())
                    .collect();
                return Err(SchedError::ConfigRefused(format!(
                    "cannot move queue {} from {} to {} while it has applications: {}",
                    q.name,
                    show(&before),
                    show(&after),
                    apps.join(", ")
                )));
            }
        }
        Ok(())
    }
}
