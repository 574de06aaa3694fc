//! The RM's side of container and NM tokens (`weft-tokens`): the rolling master key, and
//! minting tokens for AMs, AM launches and the RM's own container stops.
//!
//! Roll-over follows YARN's `RMContainerTokenSecretManager`: every roll interval a next key is
//! made and handed to NMs in heartbeats, while tokens are still signed with the current key;
//! after the activation delay (1.5 x the NM expiry, so every live NM has heard of it) the next
//! key becomes current. NMs keep their previous key, so tokens signed just before the switch
//! stay valid.

use weft_tokens::{ContainerTokenFields, MasterKey, NmTokenFields, Signer};
use weft_types::yarn_id::{AttemptId, ContainerId};
use weft_types::{Duration, Resource, Time};

use crate::core::RmCore;
use crate::model::{NmToken, NodeState, Output};
use crate::node_table::NodeKey;

/// The master key in use, and the one waiting to replace it.
pub(crate) struct ContainerKeys {
    seed: u128,
    serial: u32,
    current: MasterKey,
    /// Signs with `current` (its keyed HMAC state made once per key, not per token).
    signer: Signer,
    /// The next key and when it becomes current.
    next: Option<(MasterKey, Time)>,
    /// When the current key was made (the next roll is one interval later).
    made: Time,
}

impl ContainerKeys {
    pub(crate) fn new(seed: u128, now: Time) -> ContainerKeys {
        let current = MasterKey::derive(seed, 0);
        ContainerKeys {
            seed,
            serial: 0,
            signer: Signer::new(&current),
            current,
            next: None,
            made: now,
        }
    }

    /// The key that signs new tokens.
    pub(crate) fn current(&self) -> &MasterKey {
        &self.current
    }

    /// Signs new tokens with the current key.
    pub(crate) fn signer(&self) -> &Signer {
        &self.signer
    }

    /// The key NMs should hold: the next one while it waits for activation, else the current.
    pub(crate) fn for_nodes(&self) -> &MasterKey {
        self.next.as_ref().map_or(&self.current, |(k, _)| k)
    }

    /// Makes the next key when the interval is up, activates it after `delay`. True when a
    /// new key became current.
    pub(crate) fn roll(&mut self, now: Time, interval: Duration, delay: Duration) -> bool {
        match &self.next {
            None if now.since(self.made) >= interval => {
                self.serial = self.serial.wrapping_add(1);
                let key = MasterKey::derive(self.seed, self.serial);
                self.next = Some((key, now + delay));
                false
            }
            Some((_, at)) if now >= *at => {
                if let Some((key, _)) = self.next.take() {
                    self.signer = Signer::new(&key);
                    self.current = key;
                    self.made = now;
                }
                true
            }
            _ => false,
        }
    }
}

/// [`RmCore::container_token`] from the fields it reads, for callers that hold another part
/// of the core mutably.
pub(crate) fn container_token(
    keys: &ContainerKeys,
    expiry: Duration,
    now: Time,
    container: ContainerId,
    node: &str,
    user: &str,
    resource: Resource,
) -> String {
    ContainerTokenFields {
        container,
        node_id: node,
        user,
        memory_mb: resource.memory_mb(),
        vcores: resource.vcores(),
        expiry_ms: (now + expiry).as_millis(),
    }
    .issue_with(keys.signer())
}

/// [`RmCore::nm_token`] from the fields it reads.
fn nm_token(keys: &ContainerKeys, attempt: AttemptId, node: &str, user: &str) -> NmToken {
    NmToken {
        node_id: node.to_string(),
        token: NmTokenFields {
            attempt,
            node_id: node,
            user,
        }
        .issue_with(keys.signer()),
    }
}

impl RmCore {
    /// A container token for a container of `user` on `node`, valid for the allocation expiry.
    pub(crate) fn container_token(
        &self,
        now: Time,
        container: ContainerId,
        node: &str,
        user: &str,
        resource: Resource,
    ) -> String {
        container_token(
            &self.keys,
            self.config.container_token_expiry,
            now,
            container,
            node,
            user,
            resource,
        )
    }

    /// An NM token letting `attempt` (of `user`) manage its containers on `node`.
    pub(crate) fn nm_token(&self, attempt: AttemptId, node: &str, user: &str) -> NmToken {
        nm_token(&self.keys, attempt, node, user)
    }

    /// The submitter of the app `container` belongs to (empty for an unknown app).
    pub(crate) fn owner_of(&self, container: &ContainerId) -> String {
        self.apps
            .get(&container.app)
            .map(|a| a.sub.user.clone())
            .unwrap_or_default()
    }

    /// The output that stops `container` on `node` through its NM, with an NM token for it.
    pub(crate) fn stop_output(
        &self,
        node: &str,
        address: String,
        container: ContainerId,
    ) -> Output {
        let user = self.owner_of(&container);
        Output::StopContainer {
            node_id: node.to_string(),
            node_address: address,
            container,
            nm_token: self.nm_token(container.attempt_id(), node, &user).token,
        }
    }

    /// Stops `container` on `node` (while the node runs) in the node's next heartbeat
    /// reply, and through its NM at once as well when `rpc` (an AM container).
    pub(crate) fn stop_on_node(&mut self, node: NodeKey, container: ContainerId, rpc: bool) {
        let Some(n) = self.nodes.at_mut(node) else {
            return;
        };
        if !matches!(n.state, NodeState::Running | NodeState::Unhealthy) {
            return;
        }
        n.to_stop.insert(container);
        if rpc {
            let address = n.address.clone();
            let output = self.stop_output(self.nodes.id_of(node), address, container);
            self.outputs.push_back(output);
        }
    }

    /// Whether `container` is (or was) the AM container of its attempt.
    pub(crate) fn is_am_container(&self, container: ContainerId) -> bool {
        self.apps
            .get(&container.app)
            .and_then(|a| a.attempts.get((container.attempt as usize).wrapping_sub(1)))
            .is_some_and(|t| t.am_container == Some(container))
    }

    /// NM tokens for the nodes of `containers` that `attempt` has not been given one for yet
    /// (YARN sends each node's token once per attempt and key).
    pub(crate) fn new_nm_tokens(
        &mut self,
        attempt: AttemptId,
        nodes: impl Iterator<Item = NodeKey>,
    ) -> Vec<NmToken> {
        let Some(app) = self.apps.get_mut(&attempt.app) else {
            return Vec::new();
        };
        let Some(t) = app.attempts.last_mut() else {
            return Vec::new();
        };
        let mut fresh: Vec<NmToken> = Vec::new();
        for node in nodes {
            if t.nm_tokens_sent.insert(node) {
                let node = self.nodes.id_of(node);
                fresh.push(nm_token(&self.keys, attempt, node, &app.sub.user));
            }
        }
        fresh
    }

    /// Rolls the master key when due; after an activation every attempt gets fresh NM tokens.
    pub(crate) fn roll_keys(&mut self, now: Time) {
        let delay = Duration::from_millis(self.config.nm_expiry.as_millis().saturating_mul(3) / 2);
        if self
            .keys
            .roll(now, self.config.master_key_roll_interval, delay)
        {
            for app in self.apps.values_mut_unordered() {
                if let Some(t) = app.current_mut() {
                    t.nm_tokens_sent.clear();
                }
            }
        }
    }

    /// The key an NM that last knew `known` should be sent, if it lacks it.
    pub(crate) fn key_for_node(&self, known: Option<u32>) -> Option<MasterKey> {
        let key = self.keys.for_nodes();
        (known != Some(key.id)).then(|| key.clone())
    }

    /// The current master key, handed to NMs when they register.
    pub fn current_master_key(&self) -> MasterKey {
        self.keys.current().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_roll_after_the_interval_and_activate_after_the_delay() {
        let mut k = ContainerKeys::new(5, Time(0));
        let first = k.current().clone();
        let (interval, delay) = (Duration::from_secs(100), Duration::from_secs(15));
        assert!(!k.roll(Time(99_000), interval, delay));
        assert_eq!(k.for_nodes(), &first);
        assert!(!k.roll(Time(100_000), interval, delay));
        let next = k.for_nodes().clone();
        assert_ne!(next, first);
        assert_eq!(k.current(), &first, "still signing with the old key");
        assert!(!k.roll(Time(114_999), interval, delay));
        assert!(k.roll(Time(115_000), interval, delay));
        assert_eq!(k.current(), &next);
        assert_eq!(k.for_nodes(), &next);
        assert!(!k.roll(Time(214_999), interval, delay));
        assert!(!k.roll(Time(215_000), interval, delay));
        assert_ne!(k.for_nodes(), &next);
    }
}
