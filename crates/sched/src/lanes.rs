//! The width of the engine's resource vectors. This source is compiled twice
//! (`weft-sched-engine`, six lanes, and `weft-sched-engine2`, two, whose build script sets
//! `weft_two_lanes`), and the `weft-sched` facade runs the two-lane one when the resource-type
//! registry holds only memory and vcores: every app, queue, node and container then carries
//! 16-byte vectors instead of 48-byte ones, and each add, compare and fit is two lanes, not six.
//!
//! The public API (`weft_sched_api`: events, decisions, configurations, reports) stays
//! [`weft_types::Resource`]; the engine converts where it meets it: [`inward`] for what a
//! driver sends (a custom amount the engine cannot carry is refused, never dropped),
//! [`truncate`] for configured limits, and [`outward`] (`widen`) for what goes out.
//!
//! The unit tests (`#[cfg(all(test, not(weft_two_lanes)))]`) run in the six-lane build only:
//! several mix the engine's vectors with the API's, and the two-lane build is the same source;
//! `weft-sched`'s tests (`tests/differential`, `tests/lanes.rs`) drive it through the facade.

use weft_types::Lanes;

/// Lanes per resource vector in this build.
#[cfg(weft_two_lanes)]
pub(crate) const LANES: usize = 2;
/// Lanes per resource vector in this build.
#[cfg(not(weft_two_lanes))]
pub(crate) const LANES: usize = weft_types::MAX_RESOURCE_TYPES;

/// The engine's resource vector.
pub(crate) type Resource = Lanes<LANES>;
/// How many resource types the engine's vectors carry (the engine's name for [`LANES`]).
pub(crate) const MAX_RESOURCE_TYPES: usize = LANES;

/// A vector a driver sent, in the engine's lanes; `Err` (why, for the caller's error) when it
/// has an amount of a type past them (the facade runs this build only when the registry has
/// no such type).
#[inline]
pub(crate) fn inward(r: weft_types::Resource) -> Result<Resource, String> {
    r.narrow().ok_or_else(|| {
        format!(
            "{r:?} has an amount of a resource type that is not registered \
             (this scheduler carries {LANES} resource types)"
        )
    })
}

/// An optional vector of `app`'s (an AM's size) in the engine's lanes, refused as an invalid ask.
#[inline]
pub(crate) fn inward_ask(
    app: weft_types::AppId,
    r: Option<weft_types::Resource>,
) -> Result<Option<Resource>, crate::api::SchedError> {
    r.map(inward)
        .transpose()
        .map_err(|reason| crate::api::SchedError::InvalidAsk { app, reason })
}

/// A vector whose lanes past the engine's name no registered type, in the engine's lanes:
/// configured limits (configuration parsing refuses an unknown type, so what is there is
/// `UNBOUNDED`'s or a splat's filler, which binds nothing: the engine runs at two lanes only
/// when the registry has two) and the engine's own decisions read back.
#[inline]
pub(crate) fn truncate(r: weft_types::Resource) -> Resource {
    let mut out = Resource::ZERO;
    for i in 0..LANES {
        out.set(i, r.get(i));
    }
    out
}

/// A configured amount resolved against the engine's `cluster`, in the engine's lanes.
#[inline]
pub(crate) fn resolve(configured: &weft_config::ConfiguredResource, cluster: Resource) -> Resource {
    truncate(configured.resolve(cluster.widen()))
}

/// An engine vector in the API's lanes: the added ones zero, but `UNBOUNDED` stays
/// `UNBOUNDED` (an unbounded maximum in a report reads the same from either build: the
/// six-lane engine's comes from the configuration's `UNBOUNDED`, `i64::MAX` in every lane).
#[inline]
pub(crate) fn outward(r: Resource) -> weft_types::Resource {
    if r == Resource::UNBOUNDED {
        return weft_types::Resource::UNBOUNDED;
    }
    r.widen()
}

/// The cluster-wide properties ([`crate::api::ClusterProperties`]) in the engine's lanes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ClusterProperties {
    /// The smallest container.
    pub(crate) minimum_allocation: Resource,
    /// The largest container.
    pub(crate) maximum_allocation: Resource,
    /// Asks are rounded up to a multiple of this.
    pub(crate) increment_allocation: Resource,
    /// The resource types in use.
    pub(crate) resource_types: weft_types::ResourceTypes,
    /// `weft.reservation.packability-check` (see the API's `ClusterProperties`).
    pub(crate) gang_packability_check: bool,
}

impl ClusterProperties {
    /// The cluster-wide part of the yarn-site properties.
    pub(crate) fn from_site(properties: &weft_config::SchedulerProperties) -> ClusterProperties {
        let api = crate::api::ClusterProperties::from_site(properties);
        ClusterProperties {
            minimum_allocation: truncate(api.minimum_allocation),
            maximum_allocation: truncate(api.maximum_allocation),
            increment_allocation: truncate(api.increment_allocation),
            resource_types: api.resource_types,
            gang_packability_check: api.gang_packability_check,
        }
    }
}
