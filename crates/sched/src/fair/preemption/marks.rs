//! The Fair Scheduler's side of the shared marks layer (`objects/preemption.rs`): its state
//! holds the marks, and its kill also counts the victim's queues.

pub(crate) use crate::objects::preemption::{HoldsMarks, LiveContainer, Marks};

use weft_types::ContainerId;

use crate::fair::{Fair, FairEngine};

impl HoldsMarks for Fair {
    fn marks(&self) -> &Marks {
        &self.preemption.marks
    }
    fn marks_mut(&mut self) -> &mut Marks {
        &mut self.preemption.marks
    }
}

impl FairEngine {
    /// Kills a container for preemption through the shared kill
    /// (`Engine::kill_preempted`); the victim leaf's and every ancestor's
    /// preempted-containers count grows by one. A container already ended is skipped
    /// silently (false).
    pub(crate) fn kill_for_preemption(&mut self, id: ContainerId, for_queue: &str) -> bool {
        let Some(leaf) = self
            .live_container(id)
            .and_then(|c| self.apps.get(&c.app))
            .map(|a| a.queue)
        else {
            return false;
        };
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = self.queues.get_mut(q);
            queue.rules_cold.preempted_containers += 1;
            cur = queue.parent;
        }
        self.kill_preempted(id, for_queue).is_some()
    }
}
