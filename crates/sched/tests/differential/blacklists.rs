//! An oracle for blacklists, kept beside the schedulers from the events and decisions alone:
//! which list each app's updates go to (the system's while its AM container is not allocated,
//! its own after), and a check that no container lands on a place the list of its phase names.

use std::collections::{BTreeMap, BTreeSet};

use weft_sched::{Decision, Event};
use weft_types::{AppId, NodeId};

use crate::ops::node_event;

#[derive(Default)]
pub(crate) struct Oracle {
    /// Per app: whether it waits for its AM, the system's list, its own list.
    apps: BTreeMap<AppId, (bool, BTreeSet<String>, BTreeSet<String>)>,
}

impl Oracle {
    /// Follows an event the schedulers accepted.
    pub(crate) fn apply(&mut self, event: &Event) {
        match event {
            Event::AppSubmitted {
                app, am_resource, ..
            } => {
                self.apps.insert(
                    *app,
                    (am_resource.is_some(), BTreeSet::new(), BTreeSet::new()),
                );
            }
            Event::AppFinished { app } => {
                self.apps.remove(app);
            }
            Event::BlacklistUpdated {
                app,
                additions,
                removals,
            } => {
                if let Some((waiting, system, own)) = self.apps.get_mut(app) {
                    let list = if *waiting { system } else { own };
                    list.extend(additions.iter().cloned());
                    for r in removals {
                        list.remove(r);
                    }
                }
            }
            // A new attempt waits for its AM again and starts without the app's own list
            // (Hadoop transfers it only when containers are kept across attempts).
            Event::AttemptRestarted { app, am_resource } => {
                if let Some((waiting, _, own)) = self.apps.get_mut(app) {
                    *waiting = am_resource.is_some();
                    own.clear();
                }
            }
            // A recovered AM container is a running AM: the app's own list applies.
            Event::ContainerRecovered { app, am: true, .. } => {
                if let Some((waiting, _, _)) = self.apps.get_mut(app) {
                    *waiting = false;
                }
            }
            _ => {}
        }
    }

    /// Why a decision breaks a blacklist, if it does; follows AM allocations.
    pub(crate) fn check(&mut self, d: &Decision) -> Option<String> {
        let (app, node, am) = match d {
            Decision::Allocated { app, node, am, .. } => (*app, *node, *am),
            Decision::Reserved { app, node, .. } => (*app, *node, false),
            Decision::Rejected { app, .. } => {
                self.apps.remove(app);
                return None;
            }
            _ => return None,
        };
        let (waiting, system, own) = self.apps.get_mut(&app)?;
        let list = if *waiting { &*system } else { &*own };
        let (host, rack) = place_of(node);
        let listed = list.contains(&host) || list.contains(&rack);
        if am {
            *waiting = false;
        }
        listed.then(|| format!("{d:?} on {host} ({rack}), listed by {app}: {list:?}"))
    }
}

/// The host and rack of a node (as `node_event` names them).
fn place_of(node: NodeId) -> (String, String) {
    match node_event(node.0) {
        Event::NodeAdded { host, rack, .. } => (host, rack),
        _ => unreachable!("node_event makes NodeAdded"),
    }
}
