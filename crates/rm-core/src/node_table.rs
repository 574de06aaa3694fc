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

/// A set of nodes, a bit per key (keys are dense, from 0): an application's nodes used and an
/// attempt's NM-token nodes grow by one node on most allocations, where an ordered tree cost a
/// walk, a node split now and then and its allocation. Listed in key order, as the tree was.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeSet {
    words: Vec<u64>,
}

impl NodeSet {
    /// Adds `key`; false when it was in already.
    pub(crate) fn insert(&mut self, key: NodeKey) -> bool {
        let (word, bit) = (key.0 as usize / 64, 1u64 << (key.0 % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        fresh
    }

    pub(crate) fn clear(&mut self) {
        self.words.clear();
    }

    /// Its nodes, in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = NodeKey> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                Some(NodeKey(w as u32 * 64 + bit))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_set_lists_its_keys_in_order_once() {
        let mut s = NodeSet::default();
        assert_eq!(s.iter().count(), 0);
        for k in [130, 0, 63, 64, 5, 130, 1000, 63] {
            s.insert(NodeKey(k));
        }
        assert!(!s.insert(NodeKey(5)));
        assert!(s.insert(NodeKey(6)));
        let keys: Vec<u32> = s.iter().map(|k| k.0).collect();
        assert_eq!(keys, vec![0, 5, 6, 63, 64, 130, 1000]);
        s.clear();
        assert_eq!(s.iter().count(), 0);
        assert!(s.insert(NodeKey(64)));
    }
}
