//! Each leaf's users as the user limit reads them (Hadoop's `UsersManager`), kept as usage
//! changes instead of summed from the leaf's apps at every visit: per leaf, its users in name
//! order with their used resources (allocations and reservations), how many of their apps have
//! outstanding asks (the user is active while one has) and how many apps they have there; and
//! the leaf's user limit before weights, computed from those once and reused until something
//! it reads changes (Hadoop's user-limit cache, without its per-heartbeat scope).
//!
//! Who keeps it: `admit` and `leave` add and drop an app; the ledger's usage pass
//! (`Rules::usage_charged`, every allocation, completion and recovered container), reservations
//! (`Rules::reservation_changed`) and changes of asks (`Rules::asks_changed`, and the usage
//! pass when an allocation took an app's last ask) move the figures; a change drops the leaf's
//! limit. A node change or a refresh moves every leaf's limit (cluster, guarantees, settings):
//! it bumps an epoch instead of visiting 2,000 leaves. `rebuild_derived` recomputes everything.
//!
//! The reference walk never reads it: it sums the leaf's apps at every visit (`limits.rs`), and
//! `verify` compares the kept figures and any valid limit with that recomputation (the
//! differential tests run it after every step).

use crate::lanes::Resource;

use crate::engine::WalkMode;
use crate::objects::app::same_resource;
use crate::queues::QueueId;

use super::CapacityEngine;

/// One user of one leaf.
#[derive(Clone, Debug)]
pub(crate) struct KeptUser {
    pub(crate) name: String,
    /// Allocations and reservations of the user's apps in the leaf.
    pub(crate) used: Resource,
    /// The user's apps in the leaf with outstanding asks.
    pub(crate) asking_apps: u32,
    /// The user's apps in the leaf (activated or pending).
    pub(crate) apps: u32,
}

/// One leaf's users and its cached user limit.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptLeaf {
    /// By name (the order the limit's sums take).
    pub(crate) users: Vec<KeptUser>,
    /// The user limit before weights, valid while `epoch` is the table's.
    limit: Option<Resource>,
    epoch: u64,
}

impl KeptLeaf {
    fn user_mut(&mut self, name: &str) -> Option<&mut KeptUser> {
        self.users.iter_mut().find(|u| u.name == name)
    }

    /// What `user` uses in the leaf.
    pub(crate) fn used_by(&self, user: &str) -> Resource {
        self.users
            .iter()
            .find(|u| u.name == user)
            .map_or(Resource::ZERO, |u| u.used)
    }
}

/// Every leaf's kept users, by queue id.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptUsers {
    leaves: Vec<KeptLeaf>,
    /// Bumped when every limit may have moved (node changes, refreshes).
    epoch: u64,
}

impl KeptUsers {
    fn leaf_mut(&mut self, leaf: QueueId) -> &mut KeptLeaf {
        let i = leaf.0 as usize;
        if i >= self.leaves.len() {
            self.leaves.resize_with(i + 1, KeptLeaf::default);
        }
        &mut self.leaves[i]
    }

    pub(crate) fn leaf(&self, leaf: QueueId) -> Option<&KeptLeaf> {
        self.leaves.get(leaf.0 as usize)
    }

    /// Every leaf's limit is to be computed again (the cluster or the settings changed).
    pub(crate) fn limits_moved(&mut self) {
        self.epoch += 1;
    }

    /// `user`'s figures in `leaf` change by `used` (added or taken) and `asking` apps.
    fn change(&mut self, leaf: QueueId, user: &str, used: Resource, add: bool, asking: i32) {
        let kept = self.leaf_mut(leaf);
        kept.limit = None;
        if let Some(u) = kept.user_mut(user) {
            u.used = if add {
                u.used.saturating_add(used)
            } else {
                u.used.saturating_sub(used)
            };
            u.asking_apps = u.asking_apps.saturating_add_signed(asking);
        }
    }
}

impl CapacityEngine {
    /// The leaf's user limit before weights and what `user` uses there, for a visit of an
    /// app of `user` (the app in `app`'s id): from the kept figures on the fast walk (the limit
    /// computed on the first visit after a change), from one sum over the leaf's apps on the
    /// reference walk.
    pub(crate) fn user_figures(
        &mut self,
        leaf: QueueId,
        app: weft_types::AppId,
    ) -> Option<(Resource, Resource)> {
        if self.walk == WalkMode::Reference {
            let user = self.apps.get(&app)?.user.as_str();
            let users = self.leaf_users(leaf);
            let used = users.get(user).map_or(Resource::ZERO, |u| u.used);
            return Some((self.user_limit_with(leaf, &users), used));
        }
        let epoch = self.rules.users.epoch;
        let cached = self
            .rules
            .users
            .leaf(leaf)
            .and_then(|k| k.limit.filter(|_| k.epoch == epoch));
        let limit = match cached {
            Some(limit) => limit,
            None => {
                let limit = self.kept_user_limit(leaf);
                let kept = self.rules.users.leaf_mut(leaf);
                kept.limit = Some(limit);
                kept.epoch = epoch;
                limit
            }
        };
        let user = self.apps.get(&app)?.user.as_str();
        let used = self
            .rules
            .users
            .leaf(leaf)
            .map_or(Resource::ZERO, |k| k.used_by(user));
        Some((limit, used))
    }

    /// The user limit from the kept figures (`limits.rs` `user_limit_from`, or its memory
    /// form under the Default calculator).
    fn kept_user_limit(&self, leaf: QueueId) -> Resource {
        let users = self
            .rules
            .users
            .leaf(leaf)
            .map_or(&[][..], |k| k.users.as_slice());
        if !self.rules.calc.is_dominant() {
            return self.user_limit_memory(
                leaf,
                users
                    .iter()
                    .map(|u| (u.name.as_str(), u.used.memory_mb(), u.asking_apps > 0)),
            );
        }
        self.user_limit_from(
            leaf,
            users
                .iter()
                .map(|u| (u.name.as_str(), u.used, u.asking_apps > 0)),
        )
    }

    /// An app joins its leaf: its user gains an app (and the app's usage, reservations and
    /// asks, none yet for a new app).
    pub(crate) fn keep_joined(&mut self, app: weft_types::AppId) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        let (leaf, asking) = (a.queue, a.has_outstanding_asks());
        let used = a.usage.saturating_add(self.app_reserved(a));
        let user = a.user.clone();
        if let Some(a) = self.apps.get_mut(&app) {
            a.rules.counted_asking = asking;
        }
        let kept = self.rules.users.leaf_mut(leaf);
        kept.limit = None;
        let at = kept
            .users
            .partition_point(|u| u.name.as_str() < user.as_str());
        match kept.users.get_mut(at).filter(|u| u.name == user) {
            Some(u) => {
                u.apps += 1;
                u.used = u.used.saturating_add(used);
                u.asking_apps += u32::from(asking);
            }
            None => kept.users.insert(
                at,
                KeptUser {
                    name: user,
                    used,
                    asking_apps: u32::from(asking),
                    apps: 1,
                },
            ),
        }
    }

    /// An app leaves its leaf: its user loses the app, what it still uses and its asks; a
    /// user with no app left goes.
    pub(crate) fn keep_left(&mut self, app: weft_types::AppId) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        let leaf = a.queue;
        let used = a.usage.saturating_add(self.app_reserved(a));
        let asking = a.rules.counted_asking;
        let user = a.user.clone();
        if let Some(a) = self.apps.get_mut(&app) {
            a.rules.counted_asking = false;
        }
        let kept = self.rules.users.leaf_mut(leaf);
        kept.limit = None;
        if let Some(at) = kept.users.iter().position(|u| u.name == user) {
            let u = &mut kept.users[at];
            u.apps = u.apps.saturating_sub(1);
            u.used = u.used.saturating_sub(used);
            u.asking_apps = u.asking_apps.saturating_sub(u32::from(asking));
            if u.apps == 0 {
                kept.users.remove(at);
            }
        }
    }

    /// The app in `app_slot` changed its usage by `amount` (`asks`: and maybe its asks).
    #[inline]
    pub(crate) fn keep_usage(&mut self, app_slot: u32, amount: Resource, add: bool, asks: bool) {
        let Some(a) = self.apps.at_mut(app_slot) else {
            return;
        };
        let mut asking = 0;
        if asks {
            let now = a.has_outstanding_asks();
            asking = i32::from(now) - i32::from(a.rules.counted_asking);
            a.rules.counted_asking = now;
        }
        self.rules
            .users
            .change(a.queue, &a.user, amount, add, asking);
    }

    /// The app's asks changed: its user may have become active or inactive.
    pub(crate) fn keep_asks(&mut self, app: weft_types::AppId) {
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        let now = a.has_outstanding_asks();
        if now == a.rules.counted_asking {
            return;
        }
        let asking = i32::from(now) - i32::from(a.rules.counted_asking);
        a.rules.counted_asking = now;
        self.rules
            .users
            .change(a.queue, &a.user, Resource::ZERO, true, asking);
    }

    /// A reservation of `size` was made (`added`) or dropped for the app.
    pub(crate) fn keep_reservation(&mut self, app: weft_types::AppId, size: Resource, added: bool) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        self.rules.users.change(a.queue, &a.user, size, added, 0);
    }

    /// Every leaf's users summed again from the apps (`rebuild_derived`).
    pub(crate) fn rebuild_kept_users(&mut self) {
        self.rules.users = KeptUsers::default();
        let leaves: Vec<QueueId> = self
            .queues
            .ids()
            .filter(|q| self.queues.get(*q).is_leaf)
            .collect();
        for leaf in leaves {
            let q = self.queues.get(leaf);
            let apps: Vec<weft_types::AppId> = q
                .runnable_apps
                .iter()
                .chain(q.non_runnable_apps.iter())
                .copied()
                .collect();
            for app in apps {
                self.keep_joined(app);
            }
        }
    }

    /// Compares every leaf's kept users, and its limit where still valid, with their
    /// recomputation from the leaf's apps.
    pub(crate) fn verify_kept_users(&self, drift: &mut Vec<String>) {
        for leaf in self.queues.ids().filter(|q| self.queues.get(*q).is_leaf) {
            let fresh = self.leaf_users(leaf);
            let kept = self.rules.users.leaf(leaf);
            let kept_users = kept.map_or(&[][..], |k| k.users.as_slice());
            let same = kept_users.len() == fresh.len()
                && kept_users.iter().zip(&fresh).all(|(k, (name, f))| {
                    k.name == *name
                        && same_resource(&k.used, &f.used)
                        && (k.asking_apps > 0) == f.active
                        && k.apps as usize == f.running_apps + f.pending_apps
                });
            if !same {
                drift.push(format!(
                    "leaf {}: kept users {kept_users:?}, recomputed {fresh:?}",
                    self.queues.get(leaf).name
                ));
                continue;
            }
            if let Some(limit) =
                kept.and_then(|k| k.limit.filter(|_| k.epoch == self.rules.users.epoch))
            {
                let fresh_limit = self.user_limit_with(leaf, &fresh);
                if !same_resource(&limit, &fresh_limit) {
                    drift.push(format!(
                        "leaf {}: cached user limit {limit:?}, recomputed {fresh_limit:?}",
                        self.queues.get(leaf).name
                    ));
                }
            }
        }
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use crate::lanes::Resource;
    use weft_config::capacity::parse_capacity;
    use weft_config::SchedulerProperties;
    use weft_types::{AppId, NodeId, ResourceTypes, Time};

    use crate::api::{CapacitySchedulerConfig, ContainerAsk, Event};
    use crate::capacity::CapacityEngine;
    use crate::rules::Rules;

    fn engine() -> CapacityEngine {
        let xml = "<configuration>\
            <property><name>yarn.scheduler.capacity.root.queues</name><value>a,default</value></property>\
            <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>60</value></property>\
            <property><name>yarn.scheduler.capacity.root.a.minimum-user-limit-percent</name><value>50</value></property>\
            <property><name>yarn.scheduler.capacity.root.default.capacity</name><value>40</value></property>\
            </configuration>";
        let (capacity, _) = parse_capacity(xml, &ResourceTypes::default()).expect("valid");
        let config = CapacitySchedulerConfig {
            capacity,
            properties: SchedulerProperties {
                minimum_allocation: Resource::new(1024, 1),
                increment_allocation: Resource::new(1024, 1),
                ..Default::default()
            },
        };
        CapacityEngine::new_capacity(config, Default::default())
    }

    fn ask(e: &mut CapacityEngine, app: u64, count: u32) {
        let ask = ContainerAsk {
            priority: 1,
            resources: Resource::new(1024, 1),
            count,
            hosts: vec![],
            racks: vec![],
            relax_locality: true,
            tag: crate::api::AskTag::NONE,
        };
        e.handle(
            Time(0),
            Event::Ask {
                app: AppId(app),
                ask,
            },
        )
        .expect("ask");
    }

    fn drift(e: &CapacityEngine) -> Vec<String> {
        let mut drift = Vec::new();
        crate::capacity::Capacity::verify(e, &mut drift);
        drift
    }

    /// The kept users equal their recomputation through submissions, asks, allocations up to
    /// the asks' end (users going inactive), completions and an app leaving; and `verify`
    /// catches a kept figure that drifted.
    #[test]
    fn kept_users_follow_every_change_and_verify_catches_drift() {
        let mut e = engine();
        for n in 0..2 {
            e.handle(
                Time(0),
                Event::NodeAdded {
                    node: NodeId(n),
                    host: format!("h{n}"),
                    port: 0,
                    rack: "/r".into(),
                    capability: Resource::new(8192, 8),
                },
            )
            .expect("node");
        }
        for (id, user) in [(1, "alice"), (2, "bob"), (3, "alice")] {
            e.handle(
                Time(0),
                Event::AppSubmitted {
                    app: AppId(id),
                    user: user.into(),
                    queue: Some("a".into()),
                    am_resource: None,
                },
            )
            .expect("submitted");
        }
        ask(&mut e, 1, 3);
        ask(&mut e, 2, 1);
        assert_eq!(drift(&e), Vec::<String>::new());
        // One off-switch container per heartbeat (the default).
        for n in [0, 1, 0, 1, 0] {
            e.handle(Time(1), Event::NodeHeartbeat { node: NodeId(n) })
                .expect("heartbeat");
            assert_eq!(drift(&e), Vec::<String>::new());
        }
        let leaf = e.queues.lookup("root.a").expect("leaf");
        let kept = e.rules.users.leaf(leaf).expect("kept").users.clone();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(
            kept.iter().all(|u| u.asking_apps == 0),
            "every ask served: {kept:?}"
        );
        assert_eq!(kept[0].name, "alice");
        assert_eq!(kept[0].used.memory_mb(), 3 * 1024);
        assert_eq!(kept[0].apps, 2);
        assert_eq!(kept[1].used.memory_mb(), 1024);
        let running = e.apps.get(&AppId(1)).expect("app").running;
        let container = *e
            .container_ids(running, crate::objects::containers::Owner::App)
            .first()
            .expect("one");
        e.handle(
            Time(2),
            Event::ContainerCompleted {
                container,
                exit: crate::api::ContainerExit::Success,
                status: None,
            },
        )
        .expect("completed");
        e.handle(Time(3), Event::AppFinished { app: AppId(2) })
            .expect("finished");
        assert_eq!(drift(&e), Vec::<String>::new());
        assert_eq!(e.rules.users.leaf(leaf).expect("kept").users.len(), 1);
        e.rules
            .users
            .change(leaf, "alice", Resource::new(1024, 1), true, 0);
        assert_eq!(drift(&e).len(), 1, "a drifted kept figure is reported");
        // The sliced form (the RM driver's) reports what the one-shot form reports.
        let mut once = e.verify();
        let mut cursor = crate::api::VerifyCursor::default();
        let mut sliced = Vec::new();
        while !e.verify_slice(&mut cursor, 1, &mut sliced) {}
        once.sort();
        sliced.sort();
        assert!(!sliced.is_empty());
        assert_eq!(sliced, once);
    }
}
