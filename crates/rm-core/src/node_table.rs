//! The RM's nodes, interned: each node id string gets a dense [`NodeKey`] at its first
//! registration, kept for the life of the RM (a node that leaves keeps its entry, as before).
//! Hot paths (heartbeats, allocations, container ends) hold and compare keys; the string is
//! looked up once per call instead of once per step. Ids are found through a keyed hash map
//! (`id_map::NameMap`: node ids come from the network, so its hash key is secret), one probe
//! per heartbeat where an ordered map of strings walked ~14 string comparisons at 12,000
//! nodes, each a cache miss; an ordered index beside it gives reports their order.

use std::collections::BTreeMap;

use crate::core::Node;
use crate::id_map::NameMap;

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

pub(crate) struct NodeTable {
    /// By key, in registration order.
    nodes: Vec<Node>,
    /// By id, for lookups.
    lookup: NameMap<NodeKey>,
    /// By id, in id order (reports).
    index: BTreeMap<String, NodeKey>,
}

impl NodeTable {
    /// An empty table whose id lookups hash under `hash_key` (secret: see `id_map`).
    pub(crate) fn new(hash_key: [u8; 32]) -> NodeTable {
        NodeTable {
            nodes: Vec::new(),
            lookup: NameMap::new(hash_key),
            index: BTreeMap::new(),
        }
    }

    pub(crate) fn key(&self, id: &str) -> Option<NodeKey> {
        self.lookup.get(id).copied()
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
        self.lookup.insert(id, key);
        self.index.insert(id.to_string(), key);
        debug_assert_eq!(self.lookup.len(), self.index.len());
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
