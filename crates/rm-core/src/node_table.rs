//! The RM's nodes, interned: each node id string gets a dense [`NodeKey`] at its first
//! registration, kept for the life of the RM (a node that leaves keeps its entry, as before).
//! Hot paths (heartbeats, allocations, container ends) hold and compare keys; the string is
//! looked up once per call instead of once per step. The id index is an ordered map, which
//! also gives reports their order (node ids come from the network: no hash map keyed by
//! strings a remote party chooses, see `id_map`).

use std::collections::BTreeMap;

use crate::core::Node;

/// A node's index in the [`NodeTable`]; never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct NodeKey(u32);

impl NodeKey {
    /// A key without a table, for unit tests of what holds keys.
    #[cfg(test)]
    pub(crate) fn for_tests(index: u32) -> NodeKey {
        NodeKey(index)
    }
}

#[derive(Default)]
pub(crate) struct NodeTable {
    /// By key, in registration order.
    nodes: Vec<Node>,
    index: BTreeMap<String, NodeKey>,
}

impl NodeTable {
    pub(crate) fn key(&self, id: &str) -> Option<NodeKey> {
        self.index.get(id).copied()
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Node> {
        self.key(id).and_then(|k| self.at(k))
    }

    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut Node> {
        self.key(id).and_then(|k| self.at_mut(k))
    }

    pub(crate) fn at(&self, key: NodeKey) -> Option<&Node> {
        self.nodes.get(key.0 as usize)
    }

    pub(crate) fn at_mut(&mut self, key: NodeKey) -> Option<&mut Node> {
        self.nodes.get_mut(key.0 as usize)
    }

    /// The node id behind `key` (empty for a key of another table).
    pub(crate) fn id_of(&self, key: NodeKey) -> &str {
        self.at(key).map_or("", |n| n.id.as_str())
    }

    /// The key of node `id`, adding the node `make` builds when the id is new.
    pub(crate) fn get_or_insert_with(&mut self, id: &str, make: impl FnOnce() -> Node) -> NodeKey {
        if let Some(key) = self.key(id) {
            return key;
        }
        let key = NodeKey(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        let mut node = make();
        node.id = id.to_string();
        self.nodes.push(node);
        self.index.insert(id.to_string(), key);
        key
    }

    /// Every node, in registration order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter()
    }

    /// Every node with its key, in registration order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (NodeKey, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (NodeKey(i as u32), n))
    }

    /// Every node, ordered by node id (for reports).
    pub(crate) fn by_id(&self) -> impl Iterator<Item = &Node> {
        self.index.values().filter_map(|k| self.at(*k))
    }
}
