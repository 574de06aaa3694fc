//! The ended containers an application keeps for its reports (REST's attempt containers,
//! `container -list`, the UI's log links), which outlive the containers as in YARN: the latest
//! [`ENDED_CONTAINERS_KEPT`] of each app, oldest first, in memory only (an RM restart forgets
//! them), and at most `RmConfig::ended_containers_kept_total` across all apps.
//!
//! Kept compact because there are many: at rm-bench's preset (10,000 apps of 200-600 tasks,
//! 1,000 completed apps kept) they were ~2.5M records of 128 bytes, a few hundred MB of the
//! RM's memory (stop 35). A record holds the node's key, not its id, shares the node's web
//! address, and names its size by an index into its app's few sizes, so ending a container
//! allocates nothing unless it ended with diagnostics; the full [`ContainerReport`] is made
//! only when a report is asked for. The total bound takes from completed apps first, oldest
//! completed first (`RmCore::keep_ended`).

use std::collections::VecDeque;
use std::sync::Arc;

use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::{Resource, Time};

use crate::core::{RmCore, ENDED_CONTAINERS_KEPT};
use crate::model::{ContainerReport, LiveContainerState};
use crate::node_table::{NodeKey, NodeTable};

/// Sizes an app's table may hold before it is compacted to the sizes its records still name
/// (twice the records kept: compaction, O(kept), runs at most once per that many new sizes).
const SIZES_MAX: usize = 2 * ENDED_CONTAINERS_KEPT;
/// New sizes are looked for among this many latest table entries only (an app's containers
/// come in a few sizes; a size seen earlier is entered again, compaction merges them).
const SIZES_SEARCHED: usize = 8;

/// One ended container, as the driver hands it over (its size in full).
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

/// One ended container as its app keeps it: [`EndedContainer`] with its size as an index
/// into the app's [`EndedContainers::sizes`] (80 bytes instead of 128).
struct Kept {
    n: u64,
    start_time: Time,
    finish_time: Time,
    node_http_address: Option<Arc<str>>,
    diagnostics: Box<str>,
    attempt: u32,
    node: NodeKey,
    priority: i32,
    exit_status: i32,
    size: u16,
    is_am: bool,
}

impl Kept {
    /// Its report, as a report of the container made when it ended would read.
    fn report(&self, app: ApplicationId, sizes: &[Resource], nodes: &NodeTable) -> ContainerReport {
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
            resource: sizes
                .get(usize::from(self.size))
                .copied()
                .unwrap_or(Resource::ZERO),
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
    kept: VecDeque<Kept>,
    /// The sizes the records name by index.
    sizes: Vec<Resource>,
}

impl EndedContainers {
    /// Makes room for `more` records in one step (an app's finish ends its containers
    /// together), so the buffer does not grow through them.
    pub(crate) fn expect(&mut self, more: usize) {
        let room = ENDED_CONTAINERS_KEPT.saturating_sub(self.kept.len());
        self.kept.reserve_exact(more.min(room));
    }

    /// How many records it keeps.
    pub(crate) fn len(&self) -> usize {
        self.kept.len()
    }

    /// Keeps `ended`, dropping the oldest record when full; whether the count grew.
    pub(crate) fn push(&mut self, ended: EndedContainer) -> bool {
        let full = self.kept.len() >= ENDED_CONTAINERS_KEPT;
        if full {
            self.kept.pop_front();
        } else if self.kept.len() == self.kept.capacity() {
            // Grow by a quarter, not by doubling: a doubled buffer stays up to half empty
            // for the rest of the app's life.
            let room = ENDED_CONTAINERS_KEPT - self.kept.len();
            self.kept
                .reserve_exact((self.kept.len() / 4).max(16).min(room));
        }
        let size = self.size_index(ended.resource);
        self.kept.push_back(Kept {
            n: ended.n,
            start_time: ended.start_time,
            finish_time: ended.finish_time,
            node_http_address: ended.node_http_address,
            diagnostics: ended.diagnostics,
            attempt: ended.attempt,
            node: ended.node,
            priority: ended.priority,
            exit_status: ended.exit_status,
            size,
            is_am: ended.is_am,
        });
        !full
    }

    /// Drops the oldest record; whether there was one.
    pub(crate) fn pop_oldest(&mut self) -> bool {
        self.kept.pop_front().is_some()
    }

    /// Drops every record and the buffers; how many records there were.
    pub(crate) fn clear(&mut self) -> usize {
        let n = self.kept.len();
        *self = EndedContainers::default();
        n
    }

    /// Gives back the buffers' spare room (an app that completed takes few records more).
    pub(crate) fn shrink(&mut self) {
        // Room for one more: the AM container of a finished app ends after the app.
        self.kept.shrink_to(self.kept.len() + 1);
        self.sizes.shrink_to_fit();
    }

    /// The index of `size` in the table, entered if it is not among the latest entries.
    fn size_index(&mut self, size: Resource) -> u16 {
        let latest = self.sizes.len().saturating_sub(SIZES_SEARCHED);
        if let Some(i) = self.sizes[latest..].iter().rposition(|s| *s == size) {
            return index_u16(latest + i);
        }
        if self.sizes.len() >= SIZES_MAX {
            self.compact_sizes();
        }
        self.sizes.push(size);
        index_u16(self.sizes.len() - 1)
    }

    /// Rebuilds the size table from the sizes the kept records name, each once.
    fn compact_sizes(&mut self) {
        let old = std::mem::take(&mut self.sizes);
        for record in &mut self.kept {
            let size = old
                .get(usize::from(record.size))
                .copied()
                .unwrap_or(Resource::ZERO);
            let at = match self.sizes.iter().position(|s| *s == size) {
                Some(at) => at,
                None => {
                    self.sizes.push(size);
                    self.sizes.len() - 1
                }
            };
            record.size = index_u16(at);
        }
    }

    /// The reports of the kept containers of `app`, oldest first.
    pub(crate) fn reports<'a>(
        &'a self,
        app: ApplicationId,
        nodes: &'a NodeTable,
    ) -> impl Iterator<Item = ContainerReport> + 'a {
        self.kept
            .iter()
            .map(move |e| e.report(app, &self.sizes, nodes))
    }

    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.kept.capacity()
    }
}

/// A size table index: the table never holds more than [`SIZES_MAX`] (< 65,536) entries.
fn index_u16(i: usize) -> u16 {
    u16::try_from(i).unwrap_or(u16::MAX)
}

/// The records kept across all apps, and where the total bound takes from next.
#[derive(Debug, Default)]
pub(crate) struct EndedTotal {
    /// Records kept by every app together.
    pub(crate) kept: usize,
    /// Index into the completed apps (oldest first) of the first that may still keep records.
    pub(crate) next_completed: usize,
}

impl RmCore {
    /// Keeps `ended` among its app's records within the total bound: at the bound, the oldest
    /// completed app that keeps records gives them all up (an app that keeps its own latest
    /// is worth more than one long gone); when no completed app keeps any, the app gives up
    /// its own oldest, or keeps nothing when it has none.
    pub(crate) fn keep_ended(&mut self, app: ApplicationId, ended: EndedContainer) {
        let at_bound = self.ended_total.kept >= self.config.ended_containers_kept_total;
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        // Under the bound, or replacing the app's own oldest: one lookup, the common case.
        if !at_bound || a.ended.len() >= ENDED_CONTAINERS_KEPT {
            if a.ended.push(ended) {
                self.ended_total.kept += 1;
            }
            return;
        }
        if !self.free_completed_ended() {
            let Some(a) = self.apps.get_mut(&app) else {
                return;
            };
            if !a.ended.pop_oldest() {
                return;
            }
            self.ended_total.kept -= 1;
        }
        if let Some(a) = self.apps.get_mut(&app) {
            if a.ended.push(ended) {
                self.ended_total.kept += 1;
            }
        }
    }

    /// Clears the records of the oldest completed app that keeps any; whether one did.
    fn free_completed_ended(&mut self) -> bool {
        while let Some(id) = self.completed_app_at(self.ended_total.next_completed) {
            self.ended_total.next_completed += 1;
            if let Some(a) = self.apps.get_mut(&id) {
                let freed = a.ended.clear();
                if freed > 0 {
                    self.ended_total.kept = self.ended_total.kept.saturating_sub(freed);
                    return true;
                }
            }
        }
        false
    }

    /// An app leaves memory: its records leave the total.
    pub(crate) fn forget_ended(&mut self, records: usize) {
        self.ended_total.kept = self.ended_total.kept.saturating_sub(records);
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
    fn a_kept_record_is_small() {
        assert!(
            std::mem::size_of::<Kept>() <= 80,
            "{} bytes",
            std::mem::size_of::<Kept>()
        );
    }

    #[test]
    fn sizes_are_named_by_index_and_the_table_stays_bounded() {
        let mut kept = EndedContainers::default();
        // Every record its own size: the table is compacted to those still kept.
        for n in 0..(5 * ENDED_CONTAINERS_KEPT as u64) {
            kept.push(EndedContainer {
                resource: Resource::new(1 + n as i64, 1),
                ..ended(n)
            });
            assert!(kept.sizes.len() <= SIZES_MAX);
        }
        for r in kept.kept.iter() {
            let size = kept.sizes[usize::from(r.size)];
            assert_eq!(size, Resource::new(1 + r.n as i64, 1), "record {}", r.n);
        }
        // One size for every record: one table entry.
        let mut same = EndedContainers::default();
        for n in 0..100 {
            same.push(ended(n));
        }
        assert_eq!(same.sizes.len(), 1);
    }

    #[test]
    fn a_buffer_grows_by_a_quarter_and_a_completed_app_gives_its_spare_room_back() {
        let mut kept = EndedContainers::default();
        for n in 0..600 {
            kept.push(ended(n));
            assert!(
                kept.capacity() <= kept.len() * 5 / 4 + 16,
                "{} of room for {}",
                kept.capacity(),
                kept.len()
            );
        }
        kept.shrink();
        assert!(kept.capacity() <= 601 + 16, "{}", kept.capacity());
        assert_eq!(kept.clear(), 600);
        assert_eq!((kept.len(), kept.capacity()), (0, 0));
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
