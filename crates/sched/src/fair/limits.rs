//! Fair's gates: placement with ACLs (spec §12.4, §13), the AM share (§8), the reservation
//! conditions and threshold (§6.4 step 2, §6.6), and its own key check for `verify`.

use crate::lanes::Resource;
use weft_config::PolicyKind;
use weft_types::{AppId, Locality, NodeId};

use crate::api::RejectCode;
use crate::fair::placement::{self, QueueLookup};
use crate::fair::policy::{self, sort_key};
use crate::fair::queues::FairTree;
use crate::fair::{Fair, FairEngine};
use crate::queues::QueueId;
use crate::rules::{AppOf, Rules};
use weft_config::PlacementRule;

impl FairEngine {
    /// Placement, queue creation and ACL checks (spec §12.4, §13).
    pub(crate) fn place(
        &mut self,
        id: AppId,
        user: &str,
        requested: Option<&str>,
    ) -> Result<QueueId, (RejectCode, String)> {
        let groups = self.groups.get(user).cloned().unwrap_or_default();
        let config = std::sync::Arc::clone(&self.rules.config);
        let props = &config.properties;
        let default_rules;
        let rules: &[PlacementRule] = match &config.allocations.placement_policy {
            Some(r) => r,
            None => {
                default_rules = PlacementRule::default_policy(
                    props.allow_undeclared_pools,
                    props.user_as_default_queue,
                );
                &default_rules
            }
        };
        let name = placement::place(rules, requested, user, &groups, &TreeLookup(&self.queues))
            .map_err(|e| (e.code(), e.to_string()))?;
        let name = self.queues.plan_default(name);
        let queue = self
            .queues
            .get_or_create_leaf(&name, &config.allocations, &self.share_capacities())
            .map_err(|e| {
                let reason =
                    format!("application {id} submitted by user {user} could not be placed: {e}");
                (e.code(), reason)
            })?;
        // The queue may be new, whatever happens next.
        self.rules.steady_dirty = true;
        if !self.queues.allows(queue, user, &groups, |q| &q.acl_submit)
            && !self.queues.allows(queue, user, &groups, |q| &q.acl_admin)
        {
            return Err((RejectCode::AclDenied, format!(
                "user {user} cannot submit applications to queue {name}: not allowed by aclSubmitApps or aclAdministerApps of the queue or its parents"
            )));
        }
        self.check_pool(id, user, queue)?;
        Ok(queue)
    }

    /// The resource-pool admission check (resource-pools spec §6): a queue bound to no pool
    /// is refused under `unboundQueues="reject"`, and so is a pool that lists no hosts. A pool
    /// whose hosts are listed but none alive is accepted: the app waits for them.
    fn check_pool(
        &self,
        id: AppId,
        user: &str,
        queue: QueueId,
    ) -> Result<(), (RejectCode, String)> {
        let Some(pools) = &self.pools else {
            return Ok(());
        };
        let q = self.queues.get(queue);
        let prefix = format!(
            "Application {id} submitted by user {user} to queue {} rejected",
            q.name
        );
        match q.pool.checked_sub(1) {
            None if pools.unbound_run_in_default() => Ok(()),
            None => Err((
                RejectCode::NoResourcePool,
                format!(
                    "{prefix}: queue {} is not bound to any resource pool (resource pools: {})",
                    q.name,
                    pools.config.sorted_names().join(", ")
                ),
            )),
            Some(i) => match pools.config.pools.get(usize::from(i)) {
                Some(p) if p.hosts.is_empty() => Err((
                    RejectCode::ResourcePoolEmpty,
                    format!("{prefix}: resource pool {} has no hosts", p.name),
                )),
                _ => Ok(()),
            },
        }
    }

    /// Whether the leaf of `app` can admit an AM of `am` (spec §8).
    pub(crate) fn can_run_am(&self, leaf: QueueId, am: Resource) -> bool {
        let q = self.queues.get(leaf);
        let max_am_share = q.rules_cold.max_am_share;
        if (max_am_share - -1.0).abs() < 0.0001 {
            return true;
        }
        let mut max = q.rules_cold.fair_share;
        // Root's available resources, or the queue's pool's when shares are per pool.
        let available = match &self.pools {
            Some(pools) if pools.per_pool_shares() => pools
                .available
                .get(usize::from(q.pool))
                .copied()
                .unwrap_or(Resource::ZERO),
            _ => self.root_available,
        };
        for i in 0..self.properties.resource_types.len() {
            if max.get(i) == 0 {
                max.set(i, available.get(i).min(q.max_share.get(i)));
            }
        }
        let max = max.mul_ceil(f64::from(max_am_share));
        q.am_usage.saturating_add(am).fits_in(&max)
    }

    /// Reservation conditions (spec §6.4 step 2, §6.6).
    pub(crate) fn may_reserve(
        &self,
        app: AppId,
        size: Resource,
        node: NodeId,
        locality: Locality,
    ) -> bool {
        let (Some(a), Some(n)) = (self.apps.get(&app), self.nodes.get(&node)) else {
            return false;
        };
        let props = &self.rules.config.properties;
        let (policy, pool) = (
            self.queues.get(a.queue).rules.policy,
            self.queues.get(a.queue).pool,
        );
        let ctx = self.policy_context_of(pool);
        let threshold = self.rules.reservation_threshold;
        if !policy::at_least_threshold(policy, size, threshold, &ctx) {
            return false;
        }
        // Hadoop's `isStarved`: below the fair share, or min-share starved.
        if !a.rules.min_share_starved
            && !policy::is_starved_for_reservation(policy, a.usage, a.rules.fair_share, &ctx)
        {
            return false;
        }
        // Never where preemption is freeing room for it (preemption spec A.8).
        if !self.rules.preemption.earmarks.is_empty()
            && self.rules.preemption.earmarks.holds(node, app)
        {
            return false;
        }
        if n.reservation.as_ref().is_some_and(|r| r.app != app) {
            return false;
        }
        if locality != Locality::NodeLocal && n.reservation.is_none() {
            let ratio = f64::from(props.reservable_nodes);
            let (existing, scope) = if locality == Locality::OffSwitch {
                let nodes = match &self.pools {
                    Some(pools) => pools
                        .nodes
                        .get(usize::from(n.pool))
                        .map_or(0, |c| *c as usize),
                    None => self.nodes.len(),
                };
                (a.reservations.len(), nodes)
            } else {
                let in_rack = a
                    .reservations
                    .iter()
                    .filter(|r| self.nodes.get(r).is_some_and(|x| x.rack == n.rack))
                    .count();
                let rack_nodes = match &self.pools {
                    Some(pools) => pools.rack_nodes.get(&(n.pool, n.rack.clone())).copied(),
                    None => self.rack_sizes.get(&n.rack).copied(),
                };
                (in_rack, rack_nodes.unwrap_or(0) as usize)
            };
            let allowed = (scope as f64 * ratio).ceil() as usize;
            if existing >= allowed {
                return false;
            }
        }
        true
    }

    /// Whether the app is starved for a reservation under its leaf's policy.
    #[inline]
    pub(crate) fn starved_for_reservation(&self, app: &AppOf<Fair>) -> bool {
        let q = self.queues.get(app.queue);
        policy::is_starved_for_reservation(
            q.rules.policy,
            app.usage,
            app.rules.fair_share,
            &self.policy_context_of(q.pool),
        )
    }

    /// Whether an outstanding ask is at or above the reservation threshold.
    pub(crate) fn has_threshold_ask(&self, app: &AppOf<Fair>) -> bool {
        let q = self.queues.get(app.queue);
        let policy = q.rules.policy;
        let (threshold, ctx) = (
            self.rules.reservation_threshold,
            self.policy_context_of(q.pool),
        );
        app.requests
            .values()
            .any(|r| r.any.count > 0 && policy::at_least_threshold(policy, r.size, threshold, &ctx))
    }

    /// The fast keys (`fair_sort_key` for `fair` levels) equal the keys built from the
    /// comparators' views, for every candidate.
    pub(crate) fn verify_fair_keys(&self, drift: &mut Vec<String>) {
        for a in self.apps.values().filter(|a| Fair::is_candidate(self, a)) {
            let policy = self.queues.get(a.queue).rules.policy;
            let ctx = self.policy_context_of(self.queues.get(a.queue).pool);
            if policy == PolicyKind::Fair
                && Fair::app_key(self, a) != sort_key(policy, &Self::app_view(a), &ctx)
            {
                drift.push(format!(
                    "app {}: fast key differs from the policy's key",
                    a.id
                ));
            }
        }
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let Some(parent) = q.parent else {
                continue;
            };
            let policy = self.queues.get(parent).rules.policy;
            let ctx = self.policy_context_of(q.pool);
            if policy == PolicyKind::Fair
                && Fair::queue_key(self, parent, q)
                    != sort_key(policy, &Self::queue_view(q, q.usage), &ctx)
            {
                drift.push(format!(
                    "queue {}: fast key differs from the policy's key",
                    q.name
                ));
            }
        }
    }
}

/// The placement rules' view of the queue tree.
pub(crate) struct TreeLookup<'a>(pub(crate) &'a FairTree);

impl QueueLookup for TreeLookup<'_> {
    fn exists(&self, full_name: &str) -> bool {
        self.0.lookup(full_name).is_some()
    }
    fn is_configured(&self, full_name: &str) -> bool {
        self.0
            .lookup(full_name)
            .is_some_and(|q| self.0.get(q).configured)
    }
    fn is_leaf(&self, full_name: &str) -> Option<bool> {
        self.0.lookup(full_name).map(|q| self.0.get(q).is_leaf)
    }
}
