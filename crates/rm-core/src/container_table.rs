//! The RM's live containers, kept per application: found by id in two short steps on the hot
//! paths (every allocation, node status and completion: the application's entry, then its
//! ordered map, a few hundred containers at most), and listed per application in id order
//! (reports, an AM's containers when it registers again, a demand's warned containers).
//!
//! Why not one table of every container by id: container ids are always new, so each
//! completion left a tombstone in the hash table, and once they had used up its room the
//! table rehashed all ~1.2M entries in one call, on the driver: ~1.3 s in which the RM
//! answered nothing, every minute or so at seed 003's scale (stop 35). Here no operation
//! moves more than one application's containers.

use std::collections::BTreeMap;

use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};

use crate::core::Container;
use crate::id_map::IdMap;

#[derive(Default)]
pub(crate) struct ContainerTable {
    /// Each application's live containers by (attempt, number), in id order; an application
    /// with none has no entry.
    by_app: IdMap<ApplicationId, BTreeMap<(u32, u64), Container>>,
    /// Live containers in all.
    len: usize,
}

impl ContainerTable {
    #[inline]
    pub(crate) fn get(&self, id: &ContainerId) -> Option<&Container> {
        self.by_app.get(&id.app)?.get(&(id.attempt, id.n))
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: &ContainerId) -> Option<&mut Container> {
        self.by_app.get_mut(&id.app)?.get_mut(&(id.attempt, id.n))
    }

    #[inline]
    pub(crate) fn contains_key(&self, id: &ContainerId) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn insert(&mut self, id: ContainerId, container: Container) -> Option<Container> {
        let replaced = self
            .by_app
            .get_or_insert_with(id.app, BTreeMap::new)
            .insert((id.attempt, id.n), container);
        if replaced.is_none() {
            self.len += 1;
        }
        replaced
    }

    pub(crate) fn remove(&mut self, id: &ContainerId) -> Option<Container> {
        let of_app = self.by_app.get_mut(&id.app)?;
        let container = of_app.remove(&(id.attempt, id.n))?;
        if of_app.is_empty() {
            self.by_app.remove(&id.app);
        }
        self.len -= 1;
        Some(container)
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
            .flatten()
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
            .flat_map(move |of_app| of_app.range((attempt, 0)..=(attempt, u64::MAX)))
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
}
