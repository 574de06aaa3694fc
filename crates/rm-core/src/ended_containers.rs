//! The ended containers an application keeps for its reports (REST's attempt containers,
//! `container -list`, the UI's log links), which outlive the containers as in YARN: the latest
//! [`ENDED_CONTAINERS_KEPT`], oldest first, in memory only (an RM restart forgets them).
//!
//! Kept compact because an app's finish ends all its containers at once (10,000 apps finishing
//! together at seed 003's scale): a record holds the node's key, not its id, and shares the
//! node's web address, so ending a container allocates nothing unless it ended with
//! diagnostics; the full [`ContainerReport`] is made only when a report is asked for.

use std::collections::VecDeque;
use std::sync::Arc;

use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::{Resource, Time};

use crate::core::ENDED_CONTAINERS_KEPT;
use crate::model::{ContainerReport, LiveContainerState};
use crate::node_table::{NodeKey, NodeTable};

/// One ended container of the app that keeps it.
pub(crate) struct EndedContainer {
    pub(crate) attempt: u32,
    pub(crate) n: u64,
    pub(crate) node: NodeKey,
    /// The node's web address when the container ended (a later registration may change it).
    pub(crate) node_http_address: Option<Arc<str>>,
    pub(crate) resource: Resource,
    pub(crate) priority: i32,
    pub(crate) is_am: bool,
    pub(crate) start_time: Time,
    pub(crate) finish_time: Time,
    pub(crate) exit_status: i32,
    pub(crate) diagnostics: Box<str>,
}

impl EndedContainer {
    /// Its report, as a report of the container made when it ended would read.
    fn report(&self, app: ApplicationId, nodes: &NodeTable) -> ContainerReport {
        let id = ContainerId {
            app,
            attempt: self.attempt,
            n: self.n,
        };
        ContainerReport {
            id,
            attempt: id.attempt_id(),
            node_id: nodes.id_of(self.node).to_string(),
            node_http_address: self.node_http_address.as_deref().map(str::to_string),
            resource: self.resource,
            priority: self.priority,
            state: LiveContainerState::Complete,
            is_am: self.is_am,
            start_time: self.start_time,
            finish_time: Some(self.finish_time),
            exit_status: Some(self.exit_status),
            diagnostics: self.diagnostics.to_string(),
        }
    }
}

/// An app's latest ended containers, oldest first, at most [`ENDED_CONTAINERS_KEPT`].
#[derive(Default)]
pub(crate) struct EndedContainers {
    kept: VecDeque<EndedContainer>,
}

impl EndedContainers {
    /// Makes room for `more` records in one step (an app's finish ends its containers
    /// together), so the buffer does not grow by doubling through them.
    pub(crate) fn expect(&mut self, more: usize) {
        let room = ENDED_CONTAINERS_KEPT.saturating_sub(self.kept.len());
        self.kept.reserve_exact(more.min(room));
    }

    /// Keeps `ended`, dropping the oldest record when full.
    pub(crate) fn push(&mut self, ended: EndedContainer) {
        if self.kept.len() >= ENDED_CONTAINERS_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(ended);
    }

    /// The reports of the kept containers of `app`, oldest first.
    pub(crate) fn reports<'a>(
        &'a self,
        app: ApplicationId,
        nodes: &'a NodeTable,
    ) -> impl Iterator<Item = ContainerReport> + 'a {
        self.kept.iter().map(move |e| e.report(app, nodes))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept.len()
    }

    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.kept.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(n: u64) -> EndedContainer {
        EndedContainer {
            attempt: 1,
            n,
            node: NodeKey::for_tests(0),
            node_http_address: None,
            resource: Resource::new(1024, 1),
            priority: 0,
            is_am: false,
            start_time: Time(1),
            finish_time: Time(2),
            exit_status: 0,
            diagnostics: Box::from(""),
        }
    }

    #[test]
    fn the_latest_records_are_kept_and_a_finish_sizes_the_buffer_once() {
        let mut kept = EndedContainers::default();
        kept.expect(10);
        let capacity = kept.capacity();
        assert!(capacity >= 10);
        for n in 0..10 {
            kept.push(ended(n));
        }
        assert_eq!(
            kept.capacity(),
            capacity,
            "no growth while the finish ends them"
        );
        kept.expect(5 * ENDED_CONTAINERS_KEPT);
        assert!(
            kept.capacity() <= 2 * ENDED_CONTAINERS_KEPT,
            "room for the kept ones only"
        );
        for n in 10..(ENDED_CONTAINERS_KEPT as u64 + 20) {
            kept.push(ended(n));
        }
        assert_eq!(kept.len(), ENDED_CONTAINERS_KEPT);
        assert_eq!(
            kept.kept.front().map(|e| e.n),
            Some(20),
            "the oldest went first"
        );
    }
}
