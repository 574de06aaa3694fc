//! The documented bounds on what a NodeManager may offer (docs/LIMITS.md). Far above any real
//! machine, and low enough that the cluster's totals of millions of such nodes stay exact in
//! 64 bits, so one node cannot push the totals to a saturated value that a removal would turn
//! into drift.

use weft_types::Resource;

use crate::RmError;

/// The most memory one node may offer: 2^30 MB (1 PiB).
pub const MAX_NODE_MEMORY_MB: i64 = 1 << 30;
/// The most vcores one node may offer: 2^20.
pub const MAX_NODE_VCORES: i64 = 1 << 20;
/// The most of any custom resource type one node may offer: 2^40 units.
pub const MAX_NODE_CUSTOM_RESOURCE: i64 = 1 << 40;

/// Refuses a capability with a component out of bounds, saying which one and the bound.
pub(crate) fn check_node_capability(node_id: &str, capability: Resource) -> Result<(), RmError> {
    let values = capability.values();
    let (memory, vcores) = (capability.memory_mb(), capability.vcores());
    let refuse = |what: String| {
        Err(RmError::InvalidNode(format!(
            "node {node_id} offers {what}; a node may offer 1 to {MAX_NODE_MEMORY_MB} MB of memory, \
             1 to {MAX_NODE_VCORES} vcores and 0 to {MAX_NODE_CUSTOM_RESOURCE} of each other resource type"
        )))
    };
    if !(1..=MAX_NODE_MEMORY_MB).contains(&memory) {
        return refuse(format!("{memory} MB of memory"));
    }
    if !(1..=MAX_NODE_VCORES).contains(&vcores) {
        return refuse(format!("{vcores} vcores"));
    }
    for (index, value) in values.iter().enumerate().skip(2) {
        if !(0..=MAX_NODE_CUSTOM_RESOURCE).contains(value) {
            return refuse(format!("{value} of resource type #{index}"));
        }
    }
    Ok(())
}
