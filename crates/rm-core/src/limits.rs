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

/// The longest application name, in bytes.
pub const MAX_APP_NAME_BYTES: usize = 4096;
/// The longest application type, in bytes.
pub const MAX_APP_TYPE_BYTES: usize = 256;
/// The longest queue name asked for, in bytes.
pub const MAX_QUEUE_NAME_BYTES: usize = 1024;
/// The most tags an application may carry (Hadoop's `APPLICATION_MAX_TAGS`).
pub const MAX_APP_TAGS: usize = 10;
/// The longest tag, in characters (Hadoop's `APPLICATION_MAX_TAG_LENGTH`).
pub const MAX_APP_TAG_CHARS: usize = 100;
/// The most environment variables of the AM container.
pub const MAX_ENV_VARS: usize = 1024;
/// The most bytes of all environment names and values together.
pub const MAX_ENV_BYTES: usize = 256 * 1024;
/// The most bytes of all AM commands together.
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;
/// The most local resources of the AM container.
pub const MAX_LOCAL_RESOURCES: usize = 1024;
/// The most bytes of all local resource names and URLs together.
pub const MAX_LOCAL_RESOURCE_BYTES: usize = 256 * 1024;

/// Refuses a submission with a field over its size limit, naming the field as the REST API
/// spells it, its size and the limit. Everything a submission carries is kept in memory and in
/// the store for as long as the app is retained, so each field is bounded.
pub(crate) fn check_submission(sub: &crate::Submission) -> Result<(), RmError> {
    let too_big = |field: &str, size: usize, unit: &str, max: usize| {
        Err(RmError::InvalidRequest(format!(
            "{field} is too large: {size} {unit}, at most {max} allowed"
        )))
    };
    if sub.name.len() > MAX_APP_NAME_BYTES {
        return too_big(
            "application-name",
            sub.name.len(),
            "bytes",
            MAX_APP_NAME_BYTES,
        );
    }
    if sub.application_type.len() > MAX_APP_TYPE_BYTES {
        return too_big(
            "application-type",
            sub.application_type.len(),
            "bytes",
            MAX_APP_TYPE_BYTES,
        );
    }
    if let Some(queue) = sub
        .queue
        .as_ref()
        .filter(|q| q.len() > MAX_QUEUE_NAME_BYTES)
    {
        return too_big("queue", queue.len(), "bytes", MAX_QUEUE_NAME_BYTES);
    }
    if sub.tags.len() > MAX_APP_TAGS {
        return too_big("application-tags", sub.tags.len(), "tags", MAX_APP_TAGS);
    }
    if let Some(tag) = sub
        .tags
        .iter()
        .find(|t| t.chars().count() > MAX_APP_TAG_CHARS)
    {
        return too_big(
            "application-tags",
            tag.chars().count(),
            "characters in one tag",
            MAX_APP_TAG_CHARS,
        );
    }
    let launch = &sub.launch;
    if launch.environment.len() > MAX_ENV_VARS {
        return too_big(
            "am-container-spec.environment",
            launch.environment.len(),
            "variables",
            MAX_ENV_VARS,
        );
    }
    let env_bytes: usize = launch
        .environment
        .iter()
        .map(|(k, v)| k.len() + v.len())
        .sum();
    if env_bytes > MAX_ENV_BYTES {
        return too_big(
            "am-container-spec.environment",
            env_bytes,
            "bytes",
            MAX_ENV_BYTES,
        );
    }
    let command_bytes: usize = launch.commands.iter().map(String::len).sum();
    if command_bytes > MAX_COMMAND_BYTES {
        return too_big(
            "am-container-spec.commands",
            command_bytes,
            "bytes",
            MAX_COMMAND_BYTES,
        );
    }
    if launch.local_resources.len() > MAX_LOCAL_RESOURCES {
        return too_big(
            "am-container-spec.local-resources",
            launch.local_resources.len(),
            "entries",
            MAX_LOCAL_RESOURCES,
        );
    }
    let resource_bytes: usize = launch
        .local_resources
        .iter()
        .map(|(k, r)| k.len() + r.url.len())
        .sum();
    if resource_bytes > MAX_LOCAL_RESOURCE_BYTES {
        return too_big(
            "am-container-spec.local-resources",
            resource_bytes,
            "bytes",
            MAX_LOCAL_RESOURCE_BYTES,
        );
    }
    Ok(())
}
