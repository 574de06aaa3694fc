//! Weft's packability check (time-aware-demands spec §3.3 item 5, §7 decision 2): a gang of g
//! members of capability c is plannable only if Σ over the nodes of ⌊node capacity ÷ c⌋ ≥ g.
//! Hadoop's planner checks the aggregate alone, so it accepts "5 × 5 GB on 4 × 8 GB" (C8),
//! which no node layout can run; `weft.reservation.packability-check` (on by default) refuses
//! it instead.
//!
//! [`PackedAgent`] puts the check around any agent, after Hadoop's own checks, so every
//! refusal Hadoop makes keeps its text and order: the check refuses only what Hadoop would
//! accept. An R_ANY alternative that cannot be packed is passed over as an infeasible one is.

use thiserror::Error;
use weft_types::{Resource, Time, MAX_RESOURCE_TYPES};

use crate::agent::{Placement, ReservationAgent};
use crate::plan::{Plan, PlanError};
use crate::rdl::{Interpreter, ReservationDefinition, ReservationId};

/// A gang that the nodes cannot host, in the words the demand path uses.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "gang of {members} × {member_mb} MB cannot be packed on {nodes} nodes: at most {fits} members"
)]
pub struct Unpackable {
    /// The gang's members.
    pub members: u64,
    /// One member's memory.
    pub member_mb: i64,
    /// The nodes counted.
    pub nodes: usize,
    /// How many members they hold when empty.
    pub fits: u64,
}

/// `Err` when `members` members of `member` cannot all be placed on `nodes` (each node's
/// capacity, not what is free): Σ ⌊capacity ÷ member⌋ over the nodes, per resource type.
pub fn check_packable(
    nodes: &[Resource],
    member: Resource,
    members: u64,
) -> Result<(), Unpackable> {
    let mut fits = 0u64;
    for node in nodes {
        fits = fits.saturating_add(members_on(*node, member));
        if fits >= members {
            return Ok(());
        }
    }
    Err(Unpackable {
        members,
        member_mb: member.memory_mb(),
        nodes: nodes.len(),
        fits,
    })
}

/// Members of `member` one node of `capacity` holds: the smallest quotient over the types the
/// member uses (unbounded when it uses none).
fn members_on(capacity: Resource, member: Resource) -> u64 {
    let mut fit = u64::MAX;
    for i in 0..MAX_RESOURCE_TYPES {
        let need = member.get(i);
        if need > 0 {
            fit = fit.min(u64::try_from(capacity.get(i).max(0) / need).unwrap_or(0));
        }
    }
    fit
}

/// The stages whose gangs cannot be packed, by index, and why. Stages of single
/// containers are no gang: Hadoop's own checks judge them.
fn unpackable_stages(
    nodes: &[Resource],
    definition: &ReservationDefinition,
) -> Vec<(usize, Unpackable)> {
    definition
        .requests
        .iter()
        .enumerate()
        .filter(|(_, rr)| rr.concurrency > 1)
        .filter_map(|(i, rr)| {
            check_packable(nodes, rr.capability, u64::from(rr.concurrency))
                .err()
                .map(|why| (i, why))
        })
        .collect()
}

/// An agent with the packability check around it: `inner` decides as Hadoop would, then a
/// placement that needs an unpackable gang is refused ([`PlanError::Unpackable`]), or, for
/// R_ANY, planned again over the packable alternatives only.
pub struct PackedAgent<'a> {
    /// The queue's agent.
    pub inner: &'a dyn ReservationAgent,
    /// The capacities of the nodes the plan's reservations run on.
    pub nodes: &'a [Resource],
}

impl ReservationAgent for PackedAgent<'_> {
    fn place(
        &self,
        plan: &Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<Placement, PlanError> {
        let unpackable = unpackable_stages(self.nodes, definition);
        let hadoops = self.inner.place(plan, id, user, definition, now);
        let Some((stage, why)) = unpackable.first().cloned() else {
            return hadoops;
        };
        hadoops?;
        if definition.interpreter == Interpreter::Any
            && unpackable.len() < definition.requests.len()
        {
            // The same alternatives in the same order, less the unpackable ones: Hadoop's
            // choice when it was packable, else the first packable one that fits.
            let mut packable = definition.clone();
            packable.requests = definition
                .requests
                .iter()
                .enumerate()
                .filter(|(i, _)| !unpackable.iter().any(|(u, _)| u == i))
                .map(|(_, rr)| *rr)
                .collect();
            if let Ok(placement) = self.inner.place(plan, id, user, &packable, now) {
                return Ok(placement);
            }
        }
        Err(PlanError::Unpackable { stage, why })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gb(n: i64) -> Resource {
        Resource::new(n * 1024, 8)
    }

    #[test]
    fn c8_five_members_of_5_gb_do_not_pack_on_four_8_gb_nodes() {
        let nodes = [gb(8); 4];
        let member = Resource::new(5120, 1);
        let err = check_packable(&nodes, member, 5).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4 members"
        );
        assert_eq!(check_packable(&nodes, member, 4), Ok(()));
        // 4 GB members: two per node.
        assert_eq!(check_packable(&nodes, Resource::new(4096, 1), 8), Ok(()));
    }

    #[test]
    fn every_resource_type_the_member_uses_counts() {
        // Memory for two per node, vcores for one.
        let nodes = [Resource::new(8192, 4); 2];
        let err = check_packable(&nodes, Resource::new(2048, 3), 3).unwrap_err();
        assert_eq!(err.fits, 2);
        assert_eq!(
            check_packable(&[], Resource::new(1024, 1), 1)
                .unwrap_err()
                .nodes,
            0
        );
    }
}
