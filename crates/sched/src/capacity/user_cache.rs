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

use weft_types::Resource;

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
    /// The leaf's user limit before weights, for an app visit: from the kept figures on the
    /// fast walk (computed on the first visit after a change), recomputed from the leaf's
    /// apps on the reference walk.
    pub(crate) fn leaf_user_limit(&mut self, leaf: QueueId) -> Resource {
        if self.walk == WalkMode::Reference {
            return self.user_limit(leaf);
        }
        let epoch = self.rules.users.epoch;
        let cached = self
            .rules
            .users
            .leaf(leaf)
            .and_then(|k| k.limit.filter(|_| k.epoch == epoch));
        if let Some(limit) = cached {
            return limit;
        }
        let limit = self.kept_user_limit(leaf);
        let kept = self.rules.users.leaf_mut(leaf);
        kept.limit = Some(limit);
        kept.epoch = epoch;
        limit
    }

    /// What `user` uses in `leaf` (allocations and reservations): kept on the fast walk,
    /// recomputed on the reference walk.
    pub(crate) fn user_used(&self, leaf: QueueId, user: &str) -> Resource {
        if self.walk == WalkMode::Reference {
            return self
                .leaf_users(leaf)
                .get(user)
                .map_or(Resource::ZERO, |u| u.used);
        }
        self.rules
            .users
            .leaf(leaf)
            .map_or(Resource::ZERO, |k| k.used_by(user))
    }

    /// The user limit from the kept figures (`limits.rs` `user_limit_from`).
    fn kept_user_limit(&self, leaf: QueueId) -> Resource {
        let users = self
            .rules
            .users
            .leaf(leaf)
            .map_or(&[][..], |k| k.users.as_slice());
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
