//! A node's live containers, each with whether the node has reported it running, and how many
//! it has reported: Weft's NMs send a RUNNING status once and then only a count, which the RM
//! checks against this one at every heartbeat, so the count is kept, not recounted.
//! Looked up once per status and changed once per allocation and end, listed only when the
//! node registers again or leaves (sorted then).

use weft_types::yarn_id::ContainerId;

use crate::id_map::IdMap;

#[derive(Default)]
pub(crate) struct NodeContainers {
    reported: IdMap<ContainerId, bool>,
    reported_running: u32,
}

impl NodeContainers {
    /// A container allocated on the node, not yet reported running.
    pub(crate) fn allocated(&mut self, id: ContainerId) {
        self.put(id, false);
    }

    /// A container the node reported running when it registered.
    pub(crate) fn recovered_running(&mut self, id: ContainerId) {
        self.put(id, true);
    }

    fn put(&mut self, id: ContainerId, running: bool) {
        if let Some(true) = self.reported.insert(id, running) {
            self.reported_running -= 1;
        }
        if running {
            self.reported_running += 1;
        }
    }

    /// Whether the node has reported the container running; `None` when it is not the node's.
    pub(crate) fn reported(&self, id: &ContainerId) -> Option<bool> {
        self.reported.get(id).copied()
    }

    /// The node reported the container running: whether it had reported it before (`None`
    /// when it is not the node's, which changes nothing). One lookup per RUNNING status.
    pub(crate) fn mark_running(&mut self, id: &ContainerId) -> Option<bool> {
        let reported = self.reported.get_mut(id)?;
        let before = *reported;
        if !before {
            *reported = true;
            self.reported_running += 1;
        }
        Some(before)
    }

    pub(crate) fn remove(&mut self, id: &ContainerId) {
        if let Some(true) = self.reported.remove(id) {
            self.reported_running -= 1;
        }
    }

    /// Its containers, in id order.
    pub(crate) fn ids(&self) -> Vec<ContainerId> {
        let mut ids: Vec<ContainerId> = self.reported.keys_unordered().copied().collect();
        ids.sort_unstable();
        ids
    }

    pub(crate) fn len(&self) -> usize {
        self.reported.len()
    }

    /// How many the node has reported running.
    pub(crate) fn reported_running(&self) -> u32 {
        self.reported_running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> ContainerId {
        ContainerId {
            app: weft_types::yarn_id::ApplicationId {
                cluster_ts: 1,
                seq: 1,
            },
            attempt: 1,
            n,
        }
    }

    #[test]
    fn the_reported_count_follows_every_change() {
        let mut c = NodeContainers::default();
        c.allocated(id(1));
        c.allocated(id(2));
        c.recovered_running(id(3));
        assert_eq!(c.reported_running(), 1);
        assert_eq!(c.mark_running(&id(1)), Some(false));
        assert_eq!(c.mark_running(&id(1)), Some(true));
        assert_eq!(c.mark_running(&id(9)), None);
        assert_eq!(c.reported_running(), 2);
        assert_eq!(c.reported(&id(1)), Some(true));
        assert_eq!(c.reported(&id(2)), Some(false));
        assert_eq!(c.reported(&id(9)), None);
        c.remove(&id(3));
        c.remove(&id(2));
        c.remove(&id(9));
        assert_eq!(c.reported_running(), 1);
        // Allocated again under the same id (a recovered id reused): no longer counted.
        c.allocated(id(1));
        assert_eq!((c.reported_running(), c.len()), (0, 1));
        assert_eq!(c.ids(), vec![id(1)]);
        c.allocated(id(7));
        c.allocated(id(4));
        assert_eq!(c.ids(), vec![id(1), id(4), id(7)]);
    }
}
