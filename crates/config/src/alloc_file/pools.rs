//! `<resourcePools>` (resource-pools.md §5): the pools, their hosts, and every check between
//! the pools and the queues (bindings, parents spanning pools), each placed at a line and
//! column.

use super::values;
use super::xml::{raw_text, Sink};
use crate::pools::{
    check_pool_name, Binding, FairShareScope, MatchBy, PoolHost, ResourcePool, ResourcePools,
    UnboundQueues,
};
use crate::{QueueConfig, Severity};
use roxmltree::Node;
use std::collections::{BTreeMap, BTreeSet};

const PATH: &str = "resourcePools";

/// Reads the `<resourcePools>` element.
pub(super) fn parse(sink: &mut Sink<'_>, element: Node<'_, '_>) -> ResourcePools {
    let mut pools = ResourcePools::default();
    for attr in element.attributes() {
        let value = attr.value().trim();
        let bad = |expected: &str| {
            format!(
                "{}=\"{value}\" is not allowed: expected {expected}",
                attr.name()
            )
        };
        let result = match attr.name() {
            "unboundQueues" => match value {
                "reject" => Ok(UnboundQueues::Reject),
                "defaultPartition" => Ok(UnboundQueues::DefaultPartition),
                _ => Err(bad("reject or defaultPartition")),
            }
            .map(|v| pools.unbound_queues = v),
            "matchBy" => match value {
                "prefix" => Ok(MatchBy::Prefix),
                "explicit" => Ok(MatchBy::Explicit),
                _ => Err(bad("prefix or explicit")),
            }
            .map(|v| pools.match_by = v),
            "fairShareScope" => match value {
                "pool" => Ok(FairShareScope::Pool),
                "cluster" => Ok(FairShareScope::Cluster),
                _ => Err(bad("pool or cluster")),
            }
            .map(|v| pools.fair_share_scope = v),
            other => {
                sink.warn(
                    element,
                    PATH,
                    format!("unknown attribute {other} is ignored"),
                );
                Ok(())
            }
        };
        if let Err(msg) = result {
            sink.error(element, PATH, msg);
        }
    }
    let mut lines: BTreeMap<String, u32> = BTreeMap::new();
    for child in element.children().filter(|c| c.is_element()) {
        if child.tag_name().name() != "resourcePool" {
            sink.warn(
                child,
                PATH,
                format!(
                    "unknown element <{}> is ignored (expected <resourcePool>)",
                    child.tag_name().name()
                ),
            );
            continue;
        }
        let Some(pool) = parse_pool(sink, child) else {
            continue;
        };
        if let Some(first) = lines.get(&pool.name) {
            sink.error(
                child,
                &format!("resourcePool {}", pool.name),
                format!(
                    "resource pool {} is declared twice (first at line {first})",
                    pool.name
                ),
            );
            continue;
        }
        lines.insert(pool.name.clone(), pool.position.0);
        pools.pools.push(pool);
    }
    check_hosts_disjoint(sink, element, &pools);
    pools
}

fn parse_pool(sink: &mut Sink<'_>, element: Node<'_, '_>) -> Option<ResourcePool> {
    let Some(name) = element.attribute("name").map(str::trim) else {
        sink.error(
            element,
            PATH,
            "a <resourcePool> element needs a name attribute",
        );
        return None;
    };
    if let Err(msg) = check_pool_name(name) {
        sink.error(element, &format!("resourcePool {name}"), msg);
        return None;
    }
    let path = format!("resourcePool {name}");
    let mut pool = ResourcePool {
        name: name.to_string(),
        exclusive: true,
        hosts: Vec::new(),
        preemption_utilization_threshold: None,
        foreign_container_timeout_ms: None,
        position: sink.pos(element),
    };
    for attr in element.attributes() {
        match attr.name() {
            "name" => {}
            "exclusive" => match attr.value().trim() {
                "true" => {}
                "false" => sink.error(
                    element,
                    &path,
                    "exclusive=\"false\" (lending idle hosts to apps outside the pool) is not supported yet: remove the attribute",
                ),
                other => sink.error(
                    element,
                    &path,
                    format!("exclusive=\"{other}\" is not allowed: expected true"),
                ),
            },
            other => sink.warn(
                element,
                &path,
                format!("unknown attribute {other} is ignored"),
            ),
        }
    }
    for field in element.children().filter(|c| c.is_element()) {
        let text = raw_text(field);
        let tag = field.tag_name().name();
        match tag {
            "host" => match parse_host(&text) {
                Ok(h) if pool.hosts.contains(&h) => {
                    sink.warn(field, &path, format!("host {h} is listed twice"))
                }
                Ok(h) => pool.hosts.push(h),
                Err(msg) => sink.error(field, &path, format!("host: {msg}")),
            },
            "preemptionUtilizationThreshold" => match values::float(&text) {
                Ok(v) => pool.preemption_utilization_threshold = Some(v),
                Err(msg) => sink.error(field, &path, format!("{tag}: {msg}")),
            },
            "foreignContainerTimeout" => match values::long(&text) {
                Ok(-1) => pool.foreign_container_timeout_ms = None,
                Ok(v) if v >= 0 => {
                    pool.foreign_container_timeout_ms = Some(v.saturating_mul(1000));
                }
                Ok(v) => sink.error(
                    field,
                    &path,
                    format!("{tag}: {v} is negative; give seconds, or -1 for never"),
                ),
                Err(msg) => sink.error(field, &path, format!("{tag}: {msg}")),
            },
            other => sink.warn(
                field,
                &path,
                format!("unknown element <{other}> is ignored"),
            ),
        }
    }
    Some(pool)
}

/// `host` or `host:port`, trimmed, the host lower-cased.
fn parse_host(text: &str) -> Result<PoolHost, String> {
    let text = text.trim();
    let (host, port) = match text.rsplit_once(':') {
        Some((h, p)) => {
            let port = p
                .parse::<u16>()
                .map_err(|_| format!("'{text}': the port '{p}' is not a number from 0 to 65535"))?;
            (h, Some(port))
        }
        None => (text, None),
    };
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    if host.is_empty() || !host.chars().all(valid) {
        return Err(format!(
            "'{text}' is not a host name (letters, digits, '.', '-', '_'), optionally with :port"
        ));
    }
    Ok(PoolHost {
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// No NM may be in two pools: the same entry twice, or a bare host in one pool and one of its
/// NMs (`host:port`) in another.
fn check_hosts_disjoint(sink: &mut Sink<'_>, element: Node<'_, '_>, pools: &ResourcePools) {
    let mut owner: BTreeMap<&str, Vec<(&PoolHost, &str)>> = BTreeMap::new();
    for pool in &pools.pools {
        for h in &pool.hosts {
            owner
                .entry(h.host.as_str())
                .or_default()
                .push((h, pool.name.as_str()));
        }
    }
    let pool_elements: Vec<Node<'_, '_>> = element
        .children()
        .filter(|c| c.is_element() && c.tag_name().name() == "resourcePool")
        .collect();
    for entries in owner.values() {
        for (i, (a, pool_a)) in entries.iter().enumerate() {
            for (b, pool_b) in &entries[..i] {
                let overlap = a.port.is_none() || b.port.is_none() || a.port == b.port;
                if pool_a == pool_b || !overlap {
                    continue;
                }
                let at = pool_elements
                    .iter()
                    .find(|e| e.attribute("name").map(str::trim) == Some(*pool_a))
                    .copied()
                    .unwrap_or(element);
                sink.error(
                    at,
                    &format!("resourcePool {pool_a}"),
                    format!(
                        "host {a} is in resource pools {pool_b} (as {b}) and {pool_a}: a NodeManager can be in one pool only"
                    ),
                );
            }
        }
    }
}

/// The checks between the pools and the queues, once both are read: explicit bindings name
/// declared pools and agree with their ancestors', a parent spanning pools sets no resource
/// limits, and the lints of §5 (prefix overlaps, bare prefixes, empty pools, unbound leaves).
pub(super) fn check_queues(
    sink: &mut Sink<'_>,
    pools: Option<&mut ResourcePools>,
    queues: &BTreeMap<String, QueueConfig>,
    positions: &BTreeMap<String, (u32, u32)>,
) {
    let pos = |q: &str| positions.get(q).copied().unwrap_or((0, 0));
    let Some(pools) = pools else {
        for (name, q) in queues {
            if let Some(p) = &q.resource_pool {
                sink.push(
                    Severity::Error,
                    pos(name),
                    &format!("queue {name}"),
                    format!("resourcePool: queue {name} names pool '{p}', but the file declares no <resourcePools>"),
                );
            }
        }
        return;
    };
    let declared: BTreeSet<&str> = pools.pools.iter().map(|p| p.name.as_str()).collect();
    let mut explicit = BTreeMap::new();
    for (name, q) in queues {
        let Some(p) = &q.resource_pool else { continue };
        if !declared.contains(p.as_str()) {
            sink.push(
                Severity::Error,
                pos(name),
                &format!("queue {name}"),
                format!(
                    "resourcePool: '{p}' is not a declared resource pool (declared: {})",
                    join(declared.iter().copied())
                ),
            );
            continue;
        }
        // Parents come before children in name order, so an ancestor's binding is known.
        let ancestor = ancestors(name).find_map(|a| explicit.get(a).map(|p: &String| (a, p)));
        if let Some((a, ap)) = ancestor.filter(|(_, ap)| *ap != p) {
            sink.push(
                Severity::Error,
                pos(name),
                &format!("queue {name}"),
                format!("resourcePool: queue {name} names pool {p}, but its ancestor {a} binds it to pool {ap}: a queue's descendants stay in its pool"),
            );
            continue;
        }
        explicit.insert(name.clone(), p.clone());
    }
    pools.explicit = explicit;
    let pools = &*pools;

    check_spanning_parents(sink, pools, queues, &pos);
    check_top_level_partitions(sink, pools, queues, &pos);
    lint(sink, pools, queues, &pos);
}

/// The scheduler keeps one candidate order per pool at the root only, so every queue must be
/// in its top-level ancestor's partition: an explicit binding below a top-level queue of
/// another partition (which would make that queue span partitions) is refused.
fn check_top_level_partitions(
    sink: &mut Sink<'_>,
    pools: &ResourcePools,
    queues: &BTreeMap<String, QueueConfig>,
    pos: &dyn Fn(&str) -> (u32, u32),
) {
    let partition = |q: &str| pools.binding(q).map(Binding::pool);
    for name in queues.keys() {
        let Some(rest) = name.strip_prefix("root.") else {
            continue;
        };
        let Some((top, _)) = rest.split_once('.') else {
            continue;
        };
        let top = format!("root.{top}");
        let (own, above) = (partition(name), partition(&top));
        if own != above {
            let show = |p: Option<&str>| p.map_or("no pool".to_string(), |p| format!("pool {p}"));
            sink.push(
                Severity::Error,
                pos(name),
                &format!("queue {name}"),
                format!(
                    "resourcePool: queue {name} is in {} but its top-level queue {top} is in {}: a top-level queue spanning resource pools is not supported; bind {top} itself",
                    show(own),
                    show(above)
                ),
            );
        }
    }
}

/// A parent whose declared subtree spans two partitions has no single capacity to resolve
/// `minResources`, `maxResources` or `maxChildResources` against.
fn check_spanning_parents(
    sink: &mut Sink<'_>,
    pools: &ResourcePools,
    queues: &BTreeMap<String, QueueConfig>,
    pos: &dyn Fn(&str) -> (u32, u32),
) {
    let partition = |q: &str| pools.binding(q).map(Binding::pool).unwrap_or("");
    for (name, q) in queues {
        let limits: Vec<&str> = [
            ("minResources", q.min_resources.is_some()),
            ("maxResources", q.max_resources.is_some()),
            ("maxChildResources", q.max_child_resources.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, set)| set.then_some(n))
        .collect();
        if !q.is_parent || limits.is_empty() {
            continue;
        }
        let under = format!("{name}.");
        let spans: BTreeSet<&str> = std::iter::once(name.as_str())
            .chain(
                queues
                    .keys()
                    .map(String::as_str)
                    .filter(|k| k.starts_with(&under)),
            )
            .map(partition)
            .collect();
        if spans.len() > 1 {
            let names = join(
                spans
                    .iter()
                    .map(|p| if p.is_empty() { "(no pool)" } else { p }),
            );
            sink.push(
                Severity::Error,
                pos(name),
                &format!("queue {name}"),
                format!(
                    "{}: queue {name} spans resource pools {names}, so it has no single capacity to resolve them against: set them on its pool-bound children instead",
                    limits.join(", ")
                ),
            );
        }
    }
}

fn lint(
    sink: &mut Sink<'_>,
    pools: &ResourcePools,
    queues: &BTreeMap<String, QueueConfig>,
    pos: &dyn Fn(&str) -> (u32, u32),
) {
    let at_pool = |p: &ResourcePool| p.position;
    if pools.match_by == MatchBy::Prefix {
        for a in &pools.pools {
            for b in pools.pools.iter().filter(|b| b.name != a.name) {
                if b.name.starts_with(&a.name) {
                    sink.push(
                        Severity::Warning,
                        at_pool(b),
                        &format!("resourcePool {}", b.name),
                        format!(
                            "pool name {} starts with pool name {}: queues named {}... bind to {} (the longest prefix wins), which is easy to misread",
                            b.name, a.name, b.name, b.name
                        ),
                    );
                }
            }
        }
    }
    for p in pools.pools.iter().filter(|p| p.hosts.is_empty()) {
        sink.push(
            Severity::Warning,
            at_pool(p),
            &format!("resourcePool {}", p.name),
            format!(
                "resource pool {} lists no hosts: its members must come from rmadmin -replaceLabelsOnNode, the REST API or NM reports; until then submissions to its queues are refused",
                p.name
            ),
        );
    }
    for name in queues.keys() {
        let binding = pools.binding(name);
        if let Some(Binding::Prefix(pool)) = binding {
            let top = name.strip_prefix("root.").unwrap_or(name);
            let is_top = !top.contains('.');
            let next = top[pool.len()..].chars().next();
            if is_top && next.is_some_and(|c| c.is_ascii_alphanumeric()) {
                sink.push(
                    Severity::Warning,
                    pos(name),
                    &format!("queue {name}"),
                    format!("queue {name} is bound to pool {pool} by a bare prefix ('{top}' continues the pool name): name it {pool}_... or bind it with <resourcePool>"),
                );
            }
        }
        let leaf = !queues[name].is_parent;
        if binding.is_none() && leaf && pools.unbound_queues == UnboundQueues::Reject {
            sink.push(
                Severity::Warning,
                pos(name),
                &format!("queue {name}"),
                format!("queue {name} is bound to no resource pool, so submissions to it are refused (unboundQueues=\"reject\")"),
            );
        }
    }
}

fn ancestors(name: &str) -> impl Iterator<Item = &str> {
    let mut rest = name;
    std::iter::from_fn(move || {
        let (parent, _) = rest.rsplit_once('.')?;
        rest = parent;
        Some(parent)
    })
}

fn join<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}
