//! The RM's live containers, kept per application: found by id in two short steps on the hot
//! paths (every allocation, node status and completion: the application's entry, then its
//! ordered map, a few hundred containers at most), found by the scheduler's id the same way
//! (the scheduler names the application in every decision about a container), and listed per
//! application in id order (reports, an AM's containers when it registers again, a demand's
//! warned containers).
//!
//! Why not one hash table of every container by id: container ids are always new, so
//! completions leave tombstones in a hash table, and once they have used up its room the table
//! rehashes all ~1.2M entries in one call, on the driver. For the table by the RM's ids that
//! was ~1.3 s in which the RM answered nothing, every minute or so at seed 003's scale (stop
//! 35); the map by the scheduler's ids, ~2 minutes after the cluster filled, doubled at once
//! after a minute of slowing probes (stop 36, in a replay of its pattern). Here no operation
//! moves more than one application's containers.

use std::collections::BTreeMap;

use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};

use crate::core::Container;
use crate::id_map::IdMap;

/// One application's live containers.
#[derive(Default)]
struct AppContainers {
    /// By (attempt, number), in id order.
    live: BTreeMap<(u32, u64), Container>,
    /// The scheduler's id of each live container that has one (`Container::sched`).
    by_sched: BTreeMap<weft_types::ContainerId, (u32, u64)>,
}

#[derive(Default)]
pub(crate) struct ContainerTable {
    /// Each application's live containers; an application with none has no entry.
    by_app: IdMap<ApplicationId, AppContainers>,
    /// Live containers in all.
    len: usize,
}

impl ContainerTable {
    #[inline]
    pub(crate) fn get(&self, id: &ContainerId) -> Option<&Container> {
        self.by_app.get(&id.app)?.live.get(&(id.attempt, id.n))
    }

    /// The container, to change anything but its scheduler id (`forget_sched` does that, so
    /// the index by scheduler id stays true).
    #[inline]
    pub(crate) fn get_mut(&mut self, id: &ContainerId) -> Option<&mut Container> {
        self.by_app
            .get_mut(&id.app)?
            .live
            .get_mut(&(id.attempt, id.n))
    }

    #[inline]
    pub(crate) fn contains_key(&self, id: &ContainerId) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn insert(&mut self, id: ContainerId, container: Container) -> Option<Container> {
        let of_app = self
            .by_app
            .get_or_insert_with(id.app, AppContainers::default);
        let key = (id.attempt, id.n);
        let sched = container.sched;
        if let Some(s) = sched {
            of_app.by_sched.insert(s, key);
        }
        let replaced = of_app.live.insert(key, container);
        match replaced.as_ref().map(|old| old.sched) {
            None => self.len += 1,
            Some(Some(old)) if Some(old) != sched && of_app.by_sched.get(&old) == Some(&key) => {
                of_app.by_sched.remove(&old);
            }
            Some(_) => {}
        }
        replaced
    }

    pub(crate) fn remove(&mut self, id: &ContainerId) -> Option<Container> {
        let of_app = self.by_app.get_mut(&id.app)?;
        let container = of_app.live.remove(&(id.attempt, id.n))?;
        if let Some(s) = container.sched {
            of_app.by_sched.remove(&s);
        }
        if of_app.live.is_empty() {
            self.by_app.remove(&id.app);
        }
        self.len -= 1;
        Some(container)
    }

    /// The live container of `app` the scheduler knows as `sched`.
    pub(crate) fn by_sched(
        &self,
        app: ApplicationId,
        sched: weft_types::ContainerId,
    ) -> Option<ContainerId> {
        let &(attempt, n) = self.by_app.get(&app)?.by_sched.get(&sched)?;
        Some(ContainerId { app, attempt, n })
    }

    /// The scheduler has let go of `sched` (it ended there): the container it named, kept
    /// until the RM ends it too, no longer has a scheduler id. Returns that container.
    pub(crate) fn forget_sched(
        &mut self,
        app: ApplicationId,
        sched: weft_types::ContainerId,
    ) -> Option<ContainerId> {
        let of_app = self.by_app.get_mut(&app)?;
        let (attempt, n) = of_app.by_sched.remove(&sched)?;
        if let Some(c) = of_app.live.get_mut(&(attempt, n)) {
            c.sched = None;
        }
        Some(ContainerId { app, attempt, n })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The application's live containers, in id order.
    pub(crate) fn of_app(
        &self,
        app: ApplicationId,
    ) -> impl Iterator<Item = (ContainerId, &Container)> + '_ {
        self.by_app
            .get(&app)
            .into_iter()
            .flat_map(|of_app| &of_app.live)
            .map(move |(&(attempt, n), c)| (ContainerId { app, attempt, n }, c))
    }

    /// The attempt's live containers, in id order.
    pub(crate) fn of_attempt(
        &self,
        attempt: AttemptId,
    ) -> impl Iterator<Item = (ContainerId, &Container)> + '_ {
        let app = attempt.app;
        let attempt = attempt.attempt;
        self.by_app
            .get(&app)
            .into_iter()
            .flat_map(move |of_app| of_app.live.range((attempt, 0)..=(attempt, u64::MAX)))
            .map(move |(&(attempt, n), c)| (ContainerId { app, attempt, n }, c))
    }
}

#[cfg(test)]
mod tests {
    use weft_types::{Resource, Time};

    use super::*;
    use crate::core::ContainerState;
    use crate::node_table::NodeKey;

    fn app(seq: u64) -> ApplicationId {
        ApplicationId { cluster_ts: 1, seq }
    }

    fn id(seq: u64, attempt: u32, n: u64) -> ContainerId {
        ContainerId {
            app: app(seq),
            attempt,
            n,
        }
    }

    fn container(priority: i32) -> Container {
        Container {
            sched: None,
            node: NodeKey::for_tests(0),
            resource: Resource::new(1024, 1),
            priority,
            state: ContainerState::Allocated,
            since: Time(0),
            demand: None,
        }
    }

    #[test]
    fn an_app_lists_its_live_containers_in_id_order() {
        let mut t = ContainerTable::default();
        for (seq, attempt, n) in [(2, 2, 3), (1, 1, 9), (2, 1, 7), (2, 2, 1), (3, 1, 1)] {
            assert!(t.insert(id(seq, attempt, n), container(n as i32)).is_none());
        }
        let ids = |t: &ContainerTable, seq| t.of_app(app(seq)).map(|(c, _)| c).collect::<Vec<_>>();
        assert_eq!(ids(&t, 2), vec![id(2, 1, 7), id(2, 2, 1), id(2, 2, 3)]);
        let second = AttemptId {
            app: app(2),
            attempt: 2,
        };
        let of_second: Vec<(ContainerId, i32)> =
            t.of_attempt(second).map(|(c, k)| (c, k.priority)).collect();
        assert_eq!(of_second, vec![(id(2, 2, 1), 1), (id(2, 2, 3), 3)]);

        assert_eq!(t.remove(&id(2, 1, 7)).map(|c| c.priority), Some(7));
        assert!(t.remove(&id(2, 1, 7)).is_none());
        assert_eq!(ids(&t, 2), vec![id(2, 2, 1), id(2, 2, 3)]);
        t.remove(&id(3, 1, 1));
        assert!(ids(&t, 3).is_empty() && !t.contains_key(&id(3, 1, 1)));
        assert_eq!(t.len(), 3);
        if let Some(c) = t.get_mut(&id(1, 1, 9)) {
            c.state = ContainerState::Running;
        }
        assert_eq!(
            t.get(&id(1, 1, 9)).map(|c| c.state),
            Some(ContainerState::Running)
        );
        assert!(ids(&t, 4).is_empty());
        assert_eq!(
            t.insert(id(1, 1, 9), container(10)).map(|c| c.priority),
            Some(9)
        );
        assert_eq!(t.len(), 3, "a replaced container is counted once");
        assert!(t.remove(&id(9, 1, 1)).is_none());
        assert_eq!(t.len(), 3);
    }

    fn scheduled(sched: u64) -> Container {
        Container {
            sched: Some(weft_types::ContainerId(sched)),
            ..container(0)
        }
    }

    #[test]
    fn a_container_is_found_by_its_scheduler_id_until_either_side_lets_go() {
        let mut t = ContainerTable::default();
        let s = weft_types::ContainerId;
        t.insert(id(1, 1, 1), scheduled(10));
        t.insert(id(1, 2, 4), scheduled(11));
        t.insert(id(2, 1, 1), scheduled(12));
        t.insert(id(2, 1, 2), container(0));
        assert_eq!(t.by_sched(app(1), s(11)), Some(id(1, 2, 4)));
        assert_eq!(t.by_sched(app(2), s(12)), Some(id(2, 1, 1)));
        assert_eq!(
            t.by_sched(app(2), s(11)),
            None,
            "the id belongs to another app"
        );

        // The scheduler ended it first: the RM still holds the container, without a
        // scheduler id, until it ends it too.
        assert_eq!(t.forget_sched(app(1), s(10)), Some(id(1, 1, 1)));
        assert_eq!(t.forget_sched(app(1), s(10)), None);
        assert_eq!(t.get(&id(1, 1, 1)).map(|c| c.sched), Some(None));
        assert_eq!(t.by_sched(app(1), s(10)), None);

        // The RM ended it first.
        assert!(t.remove(&id(2, 1, 1)).is_some());
        assert_eq!(t.by_sched(app(2), s(12)), None);

        // Replaced under a new scheduler id: only the new one finds it.
        t.insert(id(1, 2, 4), scheduled(13));
        assert_eq!(t.by_sched(app(1), s(11)), None);
        assert_eq!(t.by_sched(app(1), s(13)), Some(id(1, 2, 4)));
        assert_eq!(t.len(), 3);
    }
}
