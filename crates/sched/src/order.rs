//! The fast path's order: every queue keeps its schedulable children (or apps) in a set keyed by
//! its policy's sort key, and an allocation re-keys only the path it touched.
//!
//! Invariant (checked by `verify`): an app is in its leaf's set iff it is runnable, has pending
//! demand and has outstanding asks; a queue is in its parent's set iff its own set is non-empty;
//! every key equals `sort_key` of the member's current view.

use weft_types::AppId;

use crate::app::App;
use crate::policy::{sort_key, PolicyContext, SchedView, SortKey};
use crate::queues::{Queue, QueueId};
use crate::scheduler::Scheduler;

impl Scheduler {
    pub(crate) fn policy_context(&self) -> PolicyContext {
        PolicyContext {
            cluster: self.cluster,
            resource_types: self.resource_types().len(),
        }
    }

    pub(crate) fn app_view(app: &App) -> SchedView {
        SchedView {
            demand: app.demand,
            usage: app.usage,
            min_share: weft_types::Resource::ZERO,
            weight: app.weight,
            start_time: app.start_time,
            tiebreak: app.id.0,
        }
    }

    pub(crate) fn queue_view(q: &Queue, usage: weft_types::Resource) -> SchedView {
        SchedView {
            demand: q.demand,
            usage,
            min_share: q.min_share,
            weight: q.weight,
            start_time: 0,
            tiebreak: q.name_rank,
        }
    }

    /// Whether the walk should visit the app at all.
    pub(crate) fn is_candidate(app: &App) -> bool {
        app.runnable && app.has_pending_demand() && app.has_outstanding_asks()
    }

    fn app_key(&self, app: &App) -> Option<SortKey> {
        if !Self::is_candidate(app) {
            return None;
        }
        let policy = self.queues.get(app.queue).policy;
        Some(sort_key(
            policy,
            &Self::app_view(app),
            &self.policy_context(),
        ))
    }

    fn queue_key(&self, q: &Queue) -> Option<SortKey> {
        let parent = q.parent?;
        if q.candidates.is_empty() {
            return None;
        }
        let policy = self.queues.get(parent).policy;
        Some(sort_key(
            policy,
            &Self::queue_view(q, q.usage),
            &self.policy_context(),
        ))
    }

    /// Re-keys an app after its usage, asks or runnability changed, then its queue path.
    pub(crate) fn refresh_app(&mut self, id: AppId) {
        if self.order_dirty || self.walk != crate::WalkMode::Fast {
            return;
        }
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let new = self.app_key(app);
        let (old, leaf) = (app.key_in_leaf, app.queue);
        if new != old {
            let q = self.queues.get_mut(leaf);
            if let Some(k) = old {
                q.candidates.remove(&(k, id.0));
            }
            if let Some(k) = new {
                q.candidates.insert((k, id.0));
            }
            if let Some(app) = self.apps.get_mut(&id) {
                app.key_in_leaf = new;
            }
        }
        self.refresh_queue_path(leaf);
    }

    /// Re-keys `from` and every ancestor in their parents' sets.
    pub(crate) fn refresh_queue_path(&mut self, from: QueueId) {
        if self.order_dirty || self.walk != crate::WalkMode::Fast {
            return;
        }
        let mut cur = from;
        while let Some(parent) = self.queues.get(cur).parent {
            let q = self.queues.get(cur);
            let new = self.queue_key(q);
            let old = q.key_in_parent;
            if new != old {
                let p = self.queues.get_mut(parent);
                if let Some(k) = old {
                    p.candidates.remove(&(k, cur.0 as u64));
                }
                if let Some(k) = new {
                    p.candidates.insert((k, cur.0 as u64));
                }
                self.queues.get_mut(cur).key_in_parent = new;
            }
            cur = parent;
        }
    }

    /// Rebuilds every candidate set from scratch (after updates, reloads, node changes).
    pub(crate) fn rebuild_order(&mut self) {
        if self.queues.structure_changed {
            self.queues.rank_names();
            self.queues.structure_changed = false;
        }
        let ids: Vec<QueueId> = self.queues.ids().collect();
        for id in &ids {
            let q = self.queues.get_mut(*id);
            q.candidates.clear();
            q.key_in_parent = None;
        }
        let keys: Vec<(AppId, QueueId, Option<SortKey>)> = self
            .apps
            .values()
            .map(|a| {
                (
                    a.id,
                    a.queue,
                    if self.walk == crate::WalkMode::Fast {
                        self.app_key(a)
                    } else {
                        None
                    },
                )
            })
            .collect();
        for (id, leaf, key) in keys {
            if let Some(k) = key {
                self.queues.get_mut(leaf).candidates.insert((k, id.0));
            }
            if let Some(app) = self.apps.get_mut(&id) {
                app.key_in_leaf = key;
            }
        }
        if self.walk == crate::WalkMode::Fast {
            let mut by_depth = ids;
            by_depth.sort_by_key(|id| std::cmp::Reverse(self.queues.get(*id).depth));
            for id in by_depth {
                let q = self.queues.get(id);
                if let (Some(parent), Some(k)) = (q.parent, self.queue_key(q)) {
                    self.queues
                        .get_mut(parent)
                        .candidates
                        .insert((k, id.0 as u64));
                    self.queues.get_mut(id).key_in_parent = Some(k);
                }
            }
        }
        self.order_dirty = false;
    }
}
