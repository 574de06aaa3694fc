//! An application's blacklists (Hadoop's `AppSchedulingInfo` places blacklisted by the app and
//! by the system): host and rack names on which the walk gives the app nothing.
//!
//! Two lists, as in Hadoop: while the app waits for its AM container, updates go to (and the
//! walk reads) the system's list, the one the RM keeps for AM placement; once the AM runs, the
//! application's own list. Neither list applies in the other phase.

use std::collections::BTreeSet;

use crate::lanes::Resource;
use weft_types::{AppId, NodeId};

use crate::api::SchedError;
use crate::engine::Engine;
use crate::rules::{AppOf, Rules};

/// The name no list may hold: Hadoop's `ResourceRequest.ANY`.
pub(crate) const ANY: &str = "*";

/// Both lists of one app. An app without any listed place holds none (`App::blacklists` is
/// `None`), so the walk's only cost for it is one flag test.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Blacklists {
    by_app: BTreeSet<String>,
    by_system: BTreeSet<String>,
}

impl Blacklists {
    /// Adds then removes names on the list of the phase (`system`: the AM is not running yet),
    /// as Hadoop's `updateBlacklist` does (a name both added and removed ends up off the list).
    pub(crate) fn update(&mut self, system: bool, additions: &[String], removals: &[String]) {
        let list = if system {
            &mut self.by_system
        } else {
            &mut self.by_app
        };
        list.extend(additions.iter().cloned());
        for r in removals {
            list.remove(r);
        }
    }

    /// Whether the list of the phase names the node's host or its rack.
    #[inline]
    pub(crate) fn lists(&self, system: bool, host: &str, rack: &str) -> bool {
        let list = if system {
            &self.by_system
        } else {
            &self.by_app
        };
        !list.is_empty() && (list.contains(host) || list.contains(rack))
    }

    /// Forgets the application's own list: a new attempt starts without it, as Hadoop's new
    /// attempt does unless it keeps containers across attempts (only then is the list
    /// transferred). The system's list is the RM's, kept per application.
    pub(crate) fn forget_app_list(&mut self) {
        self.by_app.clear();
    }

    /// Whether both lists are empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_app.is_empty() && self.by_system.is_empty()
    }
}

impl<R: Rules> Engine<R> {
    /// `Event::BlacklistUpdated`: checks the whole update, then applies it to the list of the
    /// app's phase. An app's reservation on a node that becomes listed is dropped at that
    /// node's next heartbeat (`walk::assign_reserved`).
    pub(crate) fn update_blacklist(
        &mut self,
        id: AppId,
        additions: &[String],
        removals: &[String],
    ) -> Result<(), SchedError> {
        let Some(app) = self.apps.get_mut(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        if let Some(bad) = additions.iter().find(|n| n.trim().is_empty() || *n == ANY) {
            let reason = if bad == ANY {
                format!("cannot add {ANY} (every place) to the blacklist")
            } else {
                "cannot add an empty name to the blacklist".to_string()
            };
            return Err(SchedError::InvalidBlacklist { app: id, reason });
        }
        let system = app.waiting_for_am();
        let mut lists = app.blacklists.take().unwrap_or_default();
        lists.update(system, additions, removals);
        if !lists.is_empty() {
            app.blacklists = Some(lists);
        }
        app.has_blacklist = app.blacklists.is_some();
        Ok(())
    }

    /// Whether the app's blacklist of its phase names the node's host or rack.
    #[inline]
    pub(crate) fn blacklists_node(&self, app: &AppOf<R>, node: NodeId) -> bool {
        self.nodes
            .get(&node)
            .is_some_and(|n| app.blacklists_place(&n.host, &n.rack))
    }

    /// The free resources of the nodes the app's blacklist of its phase names (Hadoop's
    /// headroom subtracts them from the cluster's free resources).
    pub(crate) fn free_on_blacklisted_nodes(&self, app: &AppOf<R>) -> Resource {
        if !app.has_blacklist {
            return Resource::ZERO;
        }
        self.nodes
            .values()
            .filter(|n| app.blacklists_place(&n.host, &n.rack))
            .fold(Resource::ZERO, |sum, n| sum.saturating_add(n.unallocated()))
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn additions_apply_before_removals_and_lists_are_separate() {
        let mut b = Blacklists::default();
        b.update(false, &names(&["h1", "/r2", "h3"]), &names(&["h3"]));
        assert!(b.lists(false, "h1", "/r1"), "host listed");
        assert!(b.lists(false, "h9", "/r2"), "rack listed");
        assert!(
            !b.lists(false, "h3", "/r1"),
            "added then removed in one update"
        );
        assert!(
            !b.lists(true, "h1", "/r1"),
            "the system list is another list"
        );
        b.update(true, &names(&["h5"]), &[]);
        assert!(b.lists(true, "h5", "/r1"));
        assert!(!b.lists(false, "h5", "/r1"));
        b.update(false, &[], &names(&["h1", "/r2"]));
        b.update(true, &[], &names(&["h5"]));
        assert!(b.is_empty());
    }
}
