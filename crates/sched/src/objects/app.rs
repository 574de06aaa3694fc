//! An application attempt as the scheduler sees it: its asks, usage and locality-delay state.

use crate::lanes::Resource;
use std::collections::{BTreeMap, BTreeSet};
use weft_types::{AppId, Locality};

use crate::api::AskTag;
use crate::objects::ask_tags::AskTags;
use crate::objects::blacklist::Blacklists;
use crate::objects::requests::Requests;
use crate::queues::QueueId;

/// Outstanding asks at one location level, with the "may be placed elsewhere" flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LocationAsk {
    pub(crate) count: u32,
    pub(crate) relax_locality: bool,
}

/// Everything asked under one scheduler key (priority + size), at node, rack and ANY level.
///
/// The walk reads a request on every visit to its app, and most asks name no place, so the
/// host and rack levels are behind one pointer, `None` while no level is outstanding: a
/// request and its key fit in 96 bytes instead of 136 (an app holds two inline).
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) size: Resource,
    /// The ANY ("*") level: the number of containers wanted.
    pub(crate) any: LocationAsk,
    /// Per rack and per host (`None`: no place named, or every named one spent).
    pub(crate) locations: Option<Box<Locations>>,
    /// Delay scheduling: visits since the last relaxation or allocation.
    pub(crate) opportunities: u64,
    /// Delay scheduling: the most relaxed level currently allowed (absent until the first visit).
    pub(crate) allowed: Option<Locality>,
    /// Which ask each of the `any.count` containers came from (the driver's tags).
    pub(crate) tags: AskTags,
}

/// A request's outstanding asks per rack and per host.
#[derive(Clone, Debug, Default)]
pub(crate) struct Locations {
    pub(crate) racks: BTreeMap<String, LocationAsk>,
    pub(crate) hosts: BTreeMap<String, LocationAsk>,
}

impl Request {
    pub(crate) fn new(size: Resource) -> Request {
        Request {
            size,
            any: LocationAsk {
                count: 0,
                relax_locality: true,
            },
            locations: None,
            opportunities: 0,
            allowed: None,
            tags: AskTags::default(),
        }
    }

    #[inline]
    pub(crate) fn rack_count(&self, rack: &str) -> Option<LocationAsk> {
        self.locations.as_ref()?.racks.get(rack).copied()
    }

    #[inline]
    pub(crate) fn host_count(&self, host: &str) -> Option<LocationAsk> {
        self.locations.as_ref()?.hosts.get(host).copied()
    }

    /// The rack level's asks, by rack name.
    pub(crate) fn racks(&self) -> impl Iterator<Item = (&String, &LocationAsk)> {
        self.locations.iter().flat_map(|l| l.racks.iter())
    }

    /// The host level's asks, by host name.
    pub(crate) fn hosts(&self) -> impl Iterator<Item = (&String, &LocationAsk)> {
        self.locations.iter().flat_map(|l| l.hosts.iter())
    }

    /// How many hosts and racks the request names.
    pub(crate) fn location_count(&self) -> usize {
        self.locations
            .as_ref()
            .map_or(0, |l| l.racks.len() + l.hosts.len())
    }

    /// The host and rack levels, made if the request had none.
    pub(crate) fn locations_mut(&mut self) -> &mut Locations {
        self.locations.get_or_insert_with(Box::default)
    }

    /// Whether the request names any host or rack (Hadoop: more than the ANY request exists).
    pub(crate) fn has_locations(&self) -> bool {
        self.racks().any(|(_, a)| a.count > 0) || self.hosts().any(|(_, a)| a.count > 0)
    }

    /// No host or rack level asks for more than `cap` containers; spent levels go.
    pub(crate) fn cap_locations(&mut self, cap: u32) {
        if let Some(l) = &mut self.locations {
            for a in l.racks.values_mut().chain(l.hosts.values_mut()) {
                a.count = a.count.min(cap);
            }
        }
        self.drop_spent_locations();
    }

    /// Hadoop drops a location request once it reaches zero, so a spent strict rack entry no
    /// longer constrains where the remaining containers may go.
    fn drop_spent_locations(&mut self) {
        let Some(l) = &mut self.locations else {
            return;
        };
        l.hosts.retain(|_, a| a.count > 0);
        l.racks.retain(|_, a| a.count > 0);
        if l.hosts.is_empty() && l.racks.is_empty() {
            self.locations = None;
        }
    }

    /// Takes one container out of the request at the achieved locality (Hadoop decrements the
    /// node, rack and ANY levels for node-local, rack and ANY for rack-local, ANY otherwise).
    /// Returns the tag of the ask the container comes from (the oldest outstanding one).
    pub(crate) fn take_one(&mut self, host: &str, rack: &str, locality: Locality) -> AskTag {
        let dec = |a: &mut LocationAsk| a.count = a.count.saturating_sub(1);
        if let Some(l) = &mut self.locations {
            if locality == Locality::NodeLocal {
                if let Some(a) = l.hosts.get_mut(host) {
                    dec(a);
                }
            }
            if locality <= Locality::RackLocal {
                if let Some(a) = l.racks.get_mut(rack) {
                    dec(a);
                }
            }
            self.drop_spent_locations();
        }
        dec(&mut self.any);
        self.tags.take_oldest()
    }
}

/// The key requests are ordered by: priority first (lower is served first), then the order in
/// which distinct sizes appeared at that priority (Hadoop's allocation request id).
pub(crate) type SchedulerKey = (i32, u32);

/// A live application attempt.
///
/// Laid out in declaration order (`repr(C)`), the fields the walk and the re-keys read first
/// (with the compiler's order they were spread over all eight cache lines of the struct, and
/// 10,000 apps are touched in turn at full scale); the user, reservations and indexed sizes,
/// read rarely, come last. The rules' payload `X` sits right after the shared hot fields.
#[repr(C)]
#[derive(Clone, Debug)]
pub(crate) struct App<X> {
    pub(crate) id: AppId,
    pub(crate) start_time: u64,
    pub(crate) queue: QueueId,
    /// Fast path: the app's slot in its leaf's candidates, if it is one (the set holds the key).
    pub(crate) leaf_slot: Option<u32>,
    /// Running containers.
    pub(crate) running: crate::objects::containers::RunList,
    pub(crate) am_running: bool,
    pub(crate) runnable: bool,
    /// `any_outstanding()` as of the last change of `requests` (read on every re-key).
    pub(crate) asks_outstanding: bool,
    /// Fast path: whether the app is also in its leaf's `reservable` set.
    pub(crate) reservable_in_leaf: bool,
    /// Fast path: whether an outstanding ask is at or above the reservation threshold under
    /// its leaf's policy, as of the last re-key that saw its asks change (`None`: not known;
    /// a move or a rebuild forgets it).
    pub(crate) threshold_ask: Option<bool>,
    /// Whether `blacklists` is set: the walk's one test for an app that lists no place.
    pub(crate) has_blacklist: bool,
    pub(crate) usage: Resource,
    /// Demand as of the last update (spec §3).
    pub(crate) demand: Resource,
    /// The scheduler's own per-app state, read with usage and demand on every re-key (for Fair:
    /// the weight and the fair share).
    pub(crate) rules: X,
    pub(crate) requests: Requests,
    /// The AM container's size (None: unmanaged AM).
    pub(crate) am_resource: Option<Resource>,
    /// `outstanding()` as of the last change of `requests` (the update reads it for every app;
    /// walking each app's requests there was a cache miss per app at full scale).
    pub(crate) outstanding_asks: Resource,
    pub(crate) user: String,
    /// Nodes this app holds a reservation on.
    pub(crate) reservations: BTreeSet<weft_types::NodeId>,
    /// Fast path: the distinct sizes of its outstanding asks, as entered in the scheduler's
    /// pending-size index (sorted; empty when the app is not a candidate).
    pub(crate) indexed_sizes: Vec<[i64; crate::lanes::MAX_RESOURCE_TYPES]>,
    /// Places the walk gives the app nothing on (`None` while both lists are empty).
    pub(crate) blacklists: Option<Box<Blacklists>>,
    /// The attempt's AM container, once allocated or recovered (preemption takes AM
    /// containers last and may be told to spare them).
    pub(crate) am_container: Option<weft_types::ContainerId>,
}

impl<X> App<X> {
    pub(crate) fn new(
        id: AppId,
        user: String,
        queue: QueueId,
        start_time: u64,
        am_resource: Option<Resource>,
        rules: X,
    ) -> App<X> {
        App {
            id,
            user,
            queue,
            start_time,
            am_resource,
            am_running: false,
            runnable: false,
            usage: Resource::ZERO,
            demand: Resource::ZERO,
            rules,
            requests: Requests::default(),
            outstanding_asks: Resource::ZERO,
            asks_outstanding: false,
            running: crate::objects::containers::RunList::default(),
            reservations: BTreeSet::new(),
            leaf_slot: None,
            reservable_in_leaf: false,
            threshold_ask: None,
            indexed_sizes: Vec::new(),
            has_blacklist: false,
            blacklists: None,
            am_container: None,
        }
    }

    /// Whether the blacklist of the app's phase names `host` or `rack` (spec §6.3).
    #[inline]
    pub(crate) fn blacklists_place(&self, host: &str, rack: &str) -> bool {
        self.blacklists
            .as_ref()
            .is_some_and(|b| b.lists(self.waiting_for_am(), host, rack))
    }

    /// Whether the app has a managed AM that is not running yet.
    pub(crate) fn waiting_for_am(&self) -> bool {
        self.am_resource.is_some() && !self.am_running
    }

    /// Whether any ANY-level ask is outstanding, as of the last change of asks.
    pub(crate) fn has_outstanding_asks(&self) -> bool {
        self.asks_outstanding
    }

    /// Whether any ANY-level ask is outstanding, from the requests themselves.
    pub(crate) fn any_outstanding(&self) -> bool {
        self.requests.values().any(|r| r.any.count > 0)
    }

    /// Sum over requests of count x size at the ANY level.
    pub(crate) fn outstanding(&self) -> Resource {
        self.requests.values().fold(Resource::ZERO, |acc, r| {
            acc.saturating_add(r.size.saturating_mul(r.any.count as i64))
        })
    }

    /// Outstanding container count.
    pub(crate) fn outstanding_containers(&self) -> u64 {
        self.requests.values().map(|r| r.any.count as u64).sum()
    }

    /// Demand = usage + outstanding asks (spec §3), the latter as of the last change of asks.
    pub(crate) fn compute_demand(&self) -> Resource {
        self.usage.saturating_add(self.outstanding_asks)
    }

    /// Brings `outstanding_asks` up to date after the asks changed.
    pub(crate) fn refresh_outstanding(&mut self) {
        self.outstanding_asks = self.outstanding();
        self.asks_outstanding = self.any_outstanding();
    }

    /// `refresh_outstanding` after one container of `size` was taken from a request that still
    /// has more: one subtraction instead of a walk over the requests.
    pub(crate) fn took_one(&mut self, size: Resource) {
        self.outstanding_asks = self.outstanding_asks.saturating_sub(size);
    }

    /// Hadoop's pending demand: last update's demand minus current usage, "none" only when zero
    /// (a negative difference, usage grown past a stale demand, still counts as pending).
    pub(crate) fn has_pending_demand(&self) -> bool {
        !same_resource(&self.demand, &self.usage)
    }

    /// The key for a new ask of `size` at `priority`: an existing key with the same size, or a
    /// new one after the existing keys of that priority.
    pub(crate) fn key_for(&self, priority: i32, size: Resource) -> SchedulerKey {
        let mut next = 0;
        for (k, r) in self.requests.at_priority(priority) {
            if r.size == size {
                return *k;
            }
            next = k.1 + 1;
        }
        (priority, next)
    }
}

/// `a == b` without a call to `memcmp` (the derived equality of a 48-byte vector makes one,
/// and this runs on every re-key).
#[inline]
pub(crate) fn same_resource(a: &Resource, b: &Resource) -> bool {
    a.values()
        .iter()
        .zip(b.values())
        .fold(0, |diff, (x, y)| diff | (x ^ y))
        == 0
}
