//! Node identity in Weft's default (non-secure) mode: a node id is bound to the NM that
//! registered it, by a secret the RM returns at registration, until the node is lost, shut
//! down or decommissioned. Heartbeats, re-registrations (an NM restart or a resync) and the
//! unregistration of a live node must present it, so another process cannot take over a live
//! node's id, redirect its containers or remove it. YARN's non-secure mode binds nothing; with
//! Kerberos it authenticates the NM's principal instead.
//!
//! What this does not stop: registering a node id no live NM holds (a new id, a lost node's
//! id, or any id right after an RM restart, when the RM has forgotten every node).

use weft_tokens::{derive_secret, same_secret};

use crate::core::{Node, RmCore};
use crate::model::NodeState;
use crate::RmError;

impl RmCore {
    /// The secret of a node's current registration (what the NM must present).
    pub fn node_secret(&self, node_id: &str) -> Option<String> {
        self.nodes.get(node_id).map(|n| n.secret.clone())
    }

    /// Whether `node_id` is held by a live registration.
    pub(crate) fn node_is_bound(&self, node_id: &str) -> bool {
        self.nodes.get(node_id).is_some_and(is_bound)
    }

    /// Refuses a call about a live node that does not present its secret.
    pub(crate) fn check_node_secret(
        &self,
        node_id: &str,
        presented: &str,
        what: &str,
    ) -> Result<(), RmError> {
        check_secret_of(self.nodes.get(node_id), node_id, presented, what)
    }

    /// A fresh secret for a new registration of `node_id`.
    pub(crate) fn issue_node_secret(&mut self, node_id: &str) -> String {
        self.registrations += 1;
        derive_secret(
            self.config.token_secret,
            &format!("node registration {node_id}"),
            self.registrations,
        )
    }
}

fn is_bound(node: &Node) -> bool {
    matches!(node.state, NodeState::Running | NodeState::Unhealthy)
}

/// [`RmCore::check_node_secret`] for a node already looked up (`None`: unknown), so a
/// heartbeat finds its node by id once.
pub(crate) fn check_secret_of(
    node: Option<&Node>,
    node_id: &str,
    presented: &str,
    what: &str,
) -> Result<(), RmError> {
    match node {
        Some(n) if is_bound(n) && !same_secret(&n.secret, presented) => {
            Err(RmError::Forbidden(format!(
                "{what} for node {node_id} refused: the node is registered by another NodeManager and the request does not carry its registration secret"
            )))
        }
        _ => Ok(()),
    }
}
