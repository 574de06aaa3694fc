//! Gang delivery (time-aware-demands spec §3.3, "Gang delivery at run time"): admission by
//! packability on the actual nodes, atomic placement, the single partial hold and its timeout.
//!
//! Held members are real containers, charged through the ledger as a recovered container is
//! (`charge_recovered`: usage on the app, its queues, the node and the cluster; no decision),
//! so every aggregate and `verify` see them as used. The driver sees nothing of them until the
//! gang is complete: then one `Decision::Gang { Delivered }` and the `size` `Decision::Allocated`
//! come out of the same event. The ordinary walk never sees gangs: they are served before it on
//! each heartbeat, so with no gang the heartbeat costs exactly what it did.
//!
//! Cost of a heartbeat with gangs waiting: each gang tried costs one O(1) aggregate test (the
//! cluster's free resources must cover its missing members) and, if that passes, one pass over
//! the nodes in id order that stops as soon as every missing member has a place (at most
//! `nodes` steps, each a division per resource lane). Besides the head, at most
//! [`ATOMIC_TRIES_PER_HEARTBEAT`] gangs get that pass per heartbeat, so a heartbeat costs at
//! most `(1 + ATOMIC_TRIES_PER_HEARTBEAT) × nodes` node visits however many gangs wait.

use std::ops::Bound;

use crate::lanes::{inward, outward, truncate};
use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use weft_types::{AppId, ContainerId, Locality, NodeId, Time};

use crate::api::{
    ContainerAsk, ContainerExit, Decision, GangAsk, GangChange, GangHold, GangStyle, SchedError,
    MAX_GANG_SIZE,
};
use crate::engine::Engine;
use crate::objects::gangs::{Gang, GangKey, Gangs};
use crate::rules::Rules;

/// Gangs besides the head that one heartbeat tries to place whole (bounds a heartbeat's cost
/// when many gangs wait; the rest are tried on later heartbeats).
pub(crate) const ATOMIC_TRIES_PER_HEARTBEAT: usize = 8;

/// How many members of `size` fit in `free`: the smallest quotient over the lanes `size` uses.
fn members_fitting(free: &Resource, size: &Resource) -> u64 {
    let mut fit = u64::MAX;
    for i in 0..MAX_RESOURCE_TYPES {
        let (f, s) = (free.get(i), size.get(i));
        if s > 0 {
            fit = fit.min((f.max(0) / s) as u64);
        }
    }
    fit
}

impl<R: Rules> Engine<R> {
    /// `Event::GangAsk`: checks, then admission by packability (spec §3.3 item 5: the sum over
    /// the nodes the app may use of ⌊capacity ÷ size⌋ must reach the gang's size).
    pub(crate) fn ask_gang(
        &mut self,
        now: Time,
        app: AppId,
        ask: GangAsk,
    ) -> Result<(), SchedError> {
        let Some(a) = self.apps.get(&app) else {
            return Err(SchedError::UnknownApp(app));
        };
        if ask.size == 0 || ask.size > MAX_GANG_SIZE {
            return Err(SchedError::InvalidAsk {
                app,
                reason: format!("a gang has 1 to {MAX_GANG_SIZE} members, not {}", ask.size),
            });
        }
        if self
            .gangs
            .as_ref()
            .is_some_and(|g| g.index.contains_key(&(app, ask.gang)))
        {
            return Err(SchedError::Duplicate(format!("gang {} of {app}", ask.gang)));
        }
        let size = inward(ask.resources)
            .and_then(|resources| self.normalize(a.queue, resources))
            .map_err(|reason| SchedError::InvalidAsk { app, reason })?;
        if !size.any_positive() {
            return Err(SchedError::InvalidAsk {
                app,
                reason: "a gang's members need a positive size".to_string(),
            });
        }
        if let Some(reason) = self.unpackable(app, &size, ask.size) {
            self.decisions.push_back(Decision::Gang {
                app,
                gang: ask.gang,
                change: GangChange::Refused { reason },
            });
            return Ok(());
        }
        let key = GangKey {
            submitted: now,
            gang: ask.gang,
            app,
        };
        let gangs = self.gangs.get_or_insert_with(Box::<Gangs>::default);
        gangs.index.insert((app, ask.gang), key);
        gangs.order.insert(
            key,
            Gang {
                ask: GangAsk {
                    resources: outward(size),
                    ..ask
                },
                held: Vec::new(),
                hold_since: None,
            },
        );
        self.decisions.push_back(Decision::Gang {
            app,
            gang: key.gang,
            change: GangChange::Admitted,
        });
        Ok(())
    }

    /// Why `members` members of `size` (normalized) cannot be packed on the nodes the app may
    /// use, in the spec's words (C8), or `None` when they can or when
    /// `weft.reservation.packability-check` is off (the gang then waits for room).
    fn unpackable(&self, app: AppId, size: &Resource, members: u32) -> Option<String> {
        if !self.properties.gang_packability_check {
            return None;
        }
        let (nodes, packable) = self.gang_packable(app, size, members);
        (packable < u64::from(members)).then(|| {
            format!(
                "gang of {members} × {} MB cannot be packed on {nodes} nodes: at most {packable} members",
                size.memory_mb()
            )
        })
    }

    /// See [`crate::Scheduler::gang_unpackable`].
    pub(crate) fn gang_unpackable(
        &self,
        app: AppId,
        resources: Resource,
        members: u32,
    ) -> Option<String> {
        let size = self.normalize(self.apps.get(&app)?.queue, resources).ok()?;
        self.unpackable(app, &size, members)
    }

    /// The nodes the app may use and how many members of `size` they host when empty (the
    /// count stops growing past `want`, as only that much is asked).
    fn gang_packable(&self, app: AppId, size: &Resource, want: u32) -> (usize, u64) {
        let pool = self
            .pools
            .as_ref()
            .and(self.apps.get(&app).map(|a| self.queues.get(a.queue).pool));
        let mut nodes = 0;
        let mut members = 0u64;
        for n in self.nodes.values() {
            if pool.is_some_and(|p| p != n.pool) {
                continue;
            }
            nodes += 1;
            members = members
                .saturating_add(members_fitting(&n.capability, size))
                .min(u64::from(want));
        }
        (nodes, members)
    }

    /// `Event::GangCancelled`: held members released unseen, the gang forgotten.
    pub(crate) fn cancel_gang(&mut self, app: AppId, gang: u64) -> Result<(), SchedError> {
        if !self.apps.contains_key(&app) {
            return Err(SchedError::UnknownApp(app));
        }
        let key = self
            .gangs
            .as_ref()
            .and_then(|g| g.index.get(&(app, gang)).copied());
        if let Some(key) = key {
            if let Some(g) = self.gangs.as_mut().and_then(|g| g.remove(key)) {
                self.release_unseen(&g.held);
            }
        }
        self.forget_gangs_if_none();
        Ok(())
    }

    /// One heartbeat's gang work, before the ordinary walk: the head gang takes every member
    /// that has room anywhere (all of them: delivered; some: held), then up to
    /// [`ATOMIC_TRIES_PER_HEARTBEAT`] other gangs are placed if they fit whole.
    pub(crate) fn serve_gangs(&mut self, now: Time) {
        let mut cursor: Option<GangKey> = None;
        let mut head_seen = false;
        let mut tries = 0;
        loop {
            let Some(gangs) = &self.gangs else {
                return;
            };
            let next = match cursor {
                None => gangs.order.iter().next(),
                Some(c) => gangs
                    .order
                    .range((Bound::Excluded(c), Bound::Unbounded))
                    .next(),
            };
            let Some((key, gang)) = next.map(|(k, g)| (*k, g)) else {
                break;
            };
            cursor = Some(key);
            if !self.gang_eligible(key.app) {
                continue;
            }
            let holder = gangs.holder;
            let may_hold = holder == Some(key) || (holder.is_none() && !head_seen);
            head_seen = true;
            if !may_hold {
                if tries == ATOMIC_TRIES_PER_HEARTBEAT {
                    break;
                }
                tries += 1;
            }
            let (size, missing) = (truncate(gang.ask.resources), gang.missing());
            let need = size.saturating_mul(i64::from(missing));
            if !may_hold && !need.fits_in(&self.cluster.saturating_sub(self.cluster_used)) {
                continue;
            }
            let room = self.gang_room(key.app, &size, missing);
            if room.len() as u32 == missing {
                self.hold(key, &room, now);
                self.deliver(key);
            } else if may_hold && !room.is_empty() {
                self.hold(key, &room, now);
                if let Some((held, size)) = self
                    .gangs
                    .as_ref()
                    .and_then(|g| g.order.get(&key).map(|g| (g.held.len() as u32, g.ask.size)))
                {
                    self.decisions.push_back(Decision::Gang {
                        app: key.app,
                        gang: key.gang,
                        change: GangChange::Holding { held, size },
                    });
                }
            }
        }
        self.forget_gangs_if_none();
    }

    /// Whether the app's gangs may be served now: it runs (runnable, its AM, if any, started).
    fn gang_eligible(&self, app: AppId) -> bool {
        self.apps
            .get(&app)
            .is_some_and(|a| a.runnable && !a.waiting_for_am())
    }

    /// Up to `want` places for members of `size` (a node once per member), in node id order,
    /// within the app's queues' max shares: nodes of the app's pool, not reserved, not
    /// blacklisted by the app.
    fn gang_room(&self, app: AppId, size: &Resource, want: u32) -> Vec<NodeId> {
        let Some(a) = self.apps.get(&app) else {
            return Vec::new();
        };
        let want = u64::from(want).min(self.max_share_room(a.queue, size));
        let pool = self.pools.as_ref().map(|_| self.queues.get(a.queue).pool);
        let mut room = Vec::new();
        for n in self.nodes.values() {
            if room.len() as u64 >= want {
                break;
            }
            if n.reservation.is_some()
                || pool.is_some_and(|p| p != n.pool)
                || (a.has_blacklist && a.blacklists_place(&n.host, &n.rack))
            {
                continue;
            }
            let fit = members_fitting(&n.unallocated(), size).min(want - room.len() as u64);
            room.extend(std::iter::repeat_n(n.id, fit as usize));
        }
        room
    }

    /// How many more members of `size` the max shares of `leaf` and its ancestors allow.
    fn max_share_room(&self, leaf: crate::queues::QueueId, size: &Resource) -> u64 {
        let mut room = u64::MAX;
        let mut next = Some(leaf);
        while let Some(q) = next {
            let queue = self.queues.get(q);
            let left = queue.max_share.saturating_sub(queue.usage);
            room = room.min(members_fitting(&left, size));
            next = queue.parent;
        }
        room
    }

    /// Charges one member per place in `room` to the gang, unseen by the driver; the hold's
    /// clock starts at its first member.
    fn hold(&mut self, key: GangKey, room: &[NodeId], now: Time) {
        let Some((size, priority)) = self.gangs.as_ref().and_then(|g| {
            g.order
                .get(&key)
                .map(|g| (truncate(g.ask.resources), g.ask.priority))
        }) else {
            return;
        };
        let Some(app_slot) = self.apps.slot_of(&key.app) else {
            return;
        };
        for node in room {
            let Some(node_slot) = self.nodes.slot_of(node) else {
                continue;
            };
            let id = ContainerId(self.next_container);
            self.charge_recovered(id, app_slot, node_slot, size, priority, false);
            if let Some(gangs) = self.gangs.as_mut() {
                gangs.held.insert(id, key);
                if let Some(g) = gangs.order.get_mut(&key) {
                    g.held.push((id, *node));
                }
            }
        }
        if let Some(gangs) = self.gangs.as_mut() {
            if let Some(g) = gangs.order.get_mut(&key) {
                if !g.held.is_empty() && g.hold_since.is_none() {
                    g.hold_since = Some(now);
                }
                if !g.held.is_empty() && g.missing() > 0 {
                    gangs.holder = Some(key);
                }
            }
        }
    }

    /// The gang is complete: `Delivered`, then every member's `Allocated`, in one step.
    fn deliver(&mut self, key: GangKey) {
        let Some(g) = self.gangs.as_mut().and_then(|g| g.remove(key)) else {
            return;
        };
        self.decisions.push_back(Decision::Gang {
            app: key.app,
            gang: key.gang,
            change: GangChange::Delivered { size: g.ask.size },
        });
        self.hand_over(key.app, &g);
    }

    /// Each held member's `Decision::Allocated`.
    fn hand_over(&mut self, app: AppId, g: &Gang) {
        for (container, node) in &g.held {
            self.allocations += 1;
            self.decisions.push_back(Decision::Allocated {
                app,
                container: *container,
                node: *node,
                resources: g.ask.resources,
                locality: Locality::OffSwitch,
                am: false,
                priority: g.ask.priority,
                tag: g.ask.tag,
            });
        }
    }

    /// Releases held members the driver never saw: no `Decision::Completed` for them.
    fn release_unseen(&mut self, held: &[(ContainerId, NodeId)]) {
        let mark = self.decisions.len();
        for (c, _) in held {
            self.complete_container(*c, ContainerExit::Released, None);
        }
        self.decisions.truncate(mark);
    }

    /// The holder's hold timed out by `now`: soft falls back (held members handed over, the
    /// rest asked as ordinary containers), hard fails (held members released unseen).
    pub(crate) fn expire_gang_hold(&mut self, now: Time) {
        let Some(gangs) = &self.gangs else {
            return;
        };
        if gangs.next_expiry().is_none_or(|at| at > now) {
            return;
        }
        let Some(key) = gangs.holder else {
            return;
        };
        self.end_wait(key);
    }

    /// `Event::GangExpired`: the gang's wait ends now as its hold's timeout would end it.
    pub(crate) fn end_gang_wait(&mut self, app: AppId, gang: u64) -> Result<(), SchedError> {
        if !self.apps.contains_key(&app) {
            return Err(SchedError::UnknownApp(app));
        }
        let key = self
            .gangs
            .as_ref()
            .and_then(|g| g.index.get(&(app, gang)).copied());
        if let Some(key) = key {
            self.end_wait(key);
        }
        self.forget_gangs_if_none();
        Ok(())
    }

    /// The gang stops waiting: soft falls back (held members handed over, the rest asked as
    /// ordinary containers), hard fails (held members released unseen).
    fn end_wait(&mut self, key: GangKey) {
        let Some(g) = self.gangs.as_mut().and_then(|g| g.remove(key)) else {
            return;
        };
        let (handed, missing) = (g.held.len() as u32, g.missing());
        match g.ask.style {
            GangStyle::Hard => {
                self.release_unseen(&g.held);
                self.decisions.push_back(Decision::Gang {
                    app: key.app,
                    gang: key.gang,
                    change: GangChange::Failed { released: handed },
                });
            }
            GangStyle::Soft => {
                self.decisions.push_back(Decision::Gang {
                    app: key.app,
                    gang: key.gang,
                    change: GangChange::FellBack {
                        handed,
                        asked: missing,
                    },
                });
                self.hand_over(key.app, &g);
                if missing > 0 {
                    let ask = ContainerAsk {
                        priority: g.ask.priority,
                        resources: g.ask.resources,
                        count: missing,
                        hosts: Vec::new(),
                        racks: Vec::new(),
                        relax_locality: true,
                        tag: g.ask.tag,
                    };
                    // The app exists (it was checked, or it holds members) and the size was
                    // normalized once:
                    // normalizing again gives the same size, so this cannot be refused.
                    let _ = self.add_ask(key.app, ask);
                }
            }
        }
        self.forget_gangs_if_none();
    }

    /// After an event with gangs waiting (decisions from `mark` on are the event's): a held
    /// member ended by anything but the gang itself (node lost, app gone, preempted) is the
    /// gang's loss and no decision of the driver's; gangs of apps gone or restarted go.
    pub(crate) fn gang_fallout(&mut self, mark: usize, restarted: Option<AppId>) {
        let Some(gangs) = self.gangs.as_mut() else {
            return;
        };
        if !gangs.held.is_empty() {
            let mut i = mark;
            while i < self.decisions.len() {
                let held = match self.decisions.get(i) {
                    Some(
                        Decision::Completed { container, .. }
                        | Decision::PreemptWarning { container, .. }
                        | Decision::Preempted { container, .. },
                    ) => gangs.held.contains_key(container).then_some(*container),
                    _ => None,
                };
                match held {
                    Some(c) => {
                        if matches!(self.decisions.get(i), Some(Decision::Completed { .. })) {
                            gangs.lose_member(c);
                        }
                        self.decisions.remove(i);
                    }
                    None => i += 1,
                }
            }
        }
        let gone: Vec<GangKey> = gangs
            .order
            .keys()
            .filter(|k| Some(k.app) == restarted || !self.apps.contains_key(&k.app))
            .copied()
            .collect();
        for key in gone {
            if let Some(g) = self.gangs.as_mut().and_then(|g| g.remove(key)) {
                self.release_unseen(&g.held);
            }
        }
        self.forget_gangs_if_none();
    }

    /// Back to `None` once no gang waits, so the fast path pays one test again.
    fn forget_gangs_if_none(&mut self) {
        if self.gangs.as_ref().is_some_and(|g| g.order.is_empty()) {
            self.gangs = None;
        }
    }

    /// Every gang holding members (at most one).
    pub(crate) fn gang_holds(&self) -> Vec<GangHold> {
        let Some(gangs) = &self.gangs else {
            return Vec::new();
        };
        gangs
            .order
            .iter()
            .filter(|(_, g)| !g.held.is_empty())
            .map(|(k, g)| GangHold {
                app: k.app,
                gang: k.gang,
                held: g.held.len() as u32,
                size: g.ask.size,
                expires: g.expires(),
            })
            .collect()
    }

    /// The gangs' own consistency: one holder at most, and it is the only gang holding; every
    /// held member is a live container of its gang's app; no gang holds all its members.
    pub(crate) fn verify_gangs(&self, drift: &mut Vec<String>) {
        let Some(gangs) = &self.gangs else {
            return;
        };
        let holding: Vec<&GangKey> = gangs
            .order
            .iter()
            .filter(|(_, g)| !g.held.is_empty())
            .map(|(k, _)| k)
            .collect();
        if holding.len() > 1 {
            drift.push(format!("{} gangs hold members at once", holding.len()));
        }
        if let Some(k) = holding.first() {
            if gangs.holder != Some(**k) {
                drift.push(format!(
                    "gang {} of {} holds members but is not the holder",
                    k.gang, k.app
                ));
            }
        }
        let mut count = 0;
        for (k, g) in &gangs.order {
            if g.held.len() >= g.ask.size as usize {
                drift.push(format!("gang {} of {} holds every member", k.gang, k.app));
            }
            let slot = self.apps.slot_of(&k.app);
            for (c, _) in &g.held {
                count += 1;
                if self.containers.get(c).map(|c| c.app_slot) != slot || slot.is_none() {
                    drift.push(format!(
                        "gang {} of {} holds {c}, which is not a container of its app",
                        k.gang, k.app
                    ));
                }
            }
        }
        if count != gangs.held.len() {
            drift.push(format!(
                "{} held members indexed, {count} held by gangs",
                gangs.held.len()
            ));
        }
    }
}
