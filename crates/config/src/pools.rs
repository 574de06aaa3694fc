//! Resource pools (seed 002, `shared/spec/resource-pools.md` §5): named, disjoint sets of
//! NodeManager hosts declared in `fair-scheduler.xml` under `<resourcePools>`, and the rule that
//! binds each queue to one pool.
//!
//! The model is plain data; the XML is read by `alloc_file::pools`. Binding needs only the
//! queue's full name and the explicit `<resourcePool>` bindings of the declared queues, so it
//! also answers for queues that placement rules create at run time.

use std::collections::BTreeMap;

/// The longest pool name (the YARN node-label limit).
pub const MAX_POOL_NAME_LEN: usize = 255;

/// `<resourcePools>`: the pools and how queues bind to them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourcePools {
    /// `unboundQueues`: what a submission to a queue bound to no pool gets.
    pub unbound_queues: UnboundQueues,
    /// `matchBy`: whether the name-prefix rule binds queues, or only explicit bindings do.
    pub match_by: MatchBy,
    /// `fairShareScope`: shares against the pool's capacity, or (seed-literal, for what-if
    /// comparisons) against the whole cluster's.
    pub fair_share_scope: FairShareScope,
    /// The pools, in file order.
    pub pools: Vec<ResourcePool>,
    /// Explicit bindings: `<resourcePool>` of declared queues, by full queue name.
    pub explicit: BTreeMap<String, String>,
}

/// `unboundQueues`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnboundQueues {
    /// The seed's behaviour: a submission to a queue in no pool is refused.
    #[default]
    Reject,
    /// Hadoop's behaviour: such apps run on the hosts that are in no pool.
    DefaultPartition,
}

/// `matchBy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MatchBy {
    /// The seed's rule: the longest pool name prefixing the queue's first component below root.
    #[default]
    Prefix,
    /// Only `<resourcePool>` elements on queues bind.
    Explicit,
}

/// `fairShareScope`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FairShareScope {
    /// Shares, percentages and AM limits against the pool's capacity.
    #[default]
    Pool,
    /// Against the cluster's capacity, as the seed's patch did.
    Cluster,
}

/// One `<resourcePool name="...">`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourcePool {
    /// The pool's name (a valid YARN node label; never contains `.`).
    pub name: String,
    /// `exclusive`: only `true` is supported (non-exclusive lending is a later phase).
    pub exclusive: bool,
    /// Its `<host>` members, in file order.
    pub hosts: Vec<PoolHost>,
    /// `preemptionUtilizationThreshold`: the preemption gate measured on this pool (`None`:
    /// `yarn.scheduler.fair.preemption.cluster-utilization-threshold`).
    pub preemption_utilization_threshold: Option<f32>,
    /// `foreignContainerTimeout` in ms: containers left here by a host move are killed after
    /// it; `None` means never (the file's -1).
    pub foreign_container_timeout_ms: Option<i64>,
    /// Line and column of the element, for messages produced after parsing.
    pub position: (u32, u32),
}

/// A `<host>`: every NM of a host, or one NM of it (`host:port`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PoolHost {
    /// Host name, lower-cased (host names compare case-insensitively).
    pub host: String,
    /// The NM's port when one NM of a multi-NM host is meant.
    pub port: Option<u16>,
}

impl PoolHost {
    /// Whether this entry covers the NM at `host:port`.
    pub fn covers(&self, host: &str, port: u16) -> bool {
        self.host.eq_ignore_ascii_case(host) && self.port.is_none_or(|p| p == port)
    }
}

impl std::fmt::Display for PoolHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}:{p}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// How a queue got its pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding<'a> {
    /// `<resourcePool>` on the queue or an ancestor.
    Explicit(&'a str),
    /// The name-prefix rule.
    Prefix(&'a str),
}

impl<'a> Binding<'a> {
    /// The pool's name.
    pub fn pool(self) -> &'a str {
        match self {
            Binding::Explicit(p) | Binding::Prefix(p) => p,
        }
    }
}

/// Whether `name` may name a pool: YARN's node-label rule (`^[0-9a-zA-Z][0-9a-zA-Z_-]*$`, at
/// most 255 characters). Returns why not.
pub fn check_pool_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Err("a resource pool needs a non-empty name".to_string());
    };
    if name.len() > MAX_POOL_NAME_LEN {
        return Err(format!(
            "resource pool name '{}...' is {} characters long; the limit is {MAX_POOL_NAME_LEN}",
            &name[..name.char_indices().nth(16).map_or(name.len(), |(i, _)| i)],
            name.len()
        ));
    }
    let valid_rest = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !first.is_ascii_alphanumeric() || !valid_rest {
        return Err(format!(
            "resource pool name '{name}' is not a valid node label: it must start with a letter or digit and hold only letters, digits, '_' and '-' (no '.')"
        ));
    }
    Ok(())
}

impl ResourcePools {
    /// The pool named `name`.
    pub fn pool(&self, name: &str) -> Option<&ResourcePool> {
        self.pools.iter().find(|p| p.name == name)
    }

    /// The pool of the queue `queue` (full name): its own or its nearest ancestor's explicit
    /// `<resourcePool>`, else with `matchBy="prefix"` the longest pool name that prefixes the
    /// queue's first component below `root`. `root` itself is bound to no pool.
    pub fn binding(&self, queue: &str) -> Option<Binding<'_>> {
        let mut prefix = queue;
        loop {
            if let Some(pool) = self.explicit.get(prefix) {
                return Some(Binding::Explicit(pool));
            }
            match prefix.rsplit_once('.') {
                Some((parent, _)) => prefix = parent,
                None => break,
            }
        }
        if self.match_by == MatchBy::Explicit {
            return None;
        }
        let top = queue.strip_prefix("root.")?.split('.').next()?;
        self.longest_prefix_pool(top).map(Binding::Prefix)
    }

    /// The longest pool name that prefixes `component` (byte-wise, case-sensitive).
    pub fn longest_prefix_pool(&self, component: &str) -> Option<&str> {
        self.pools
            .iter()
            .map(|p| p.name.as_str())
            .filter(|name| component.starts_with(name))
            .max_by_key(|name| name.len())
    }

    /// The pool whose hosts cover the NM at `host:port`, if any (pools are disjoint, so at
    /// most one does; an entry with the port wins over a bare host only in an invalid file).
    pub fn pool_of_node(&self, host: &str, port: u16) -> Option<&str> {
        self.pools
            .iter()
            .find(|p| p.hosts.iter().any(|h| h.covers(host, port)))
            .map(|p| p.name.as_str())
    }

    /// The pool names, sorted (as the rejection message lists them).
    pub fn sorted_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.pools.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pools(names: &[&str]) -> ResourcePools {
        ResourcePools {
            pools: names
                .iter()
                .map(|n| ResourcePool {
                    name: n.to_string(),
                    exclusive: true,
                    hosts: Vec::new(),
                    preemption_utilization_threshold: None,
                    foreign_container_timeout_ms: None,
                    position: (0, 0),
                })
                .collect(),
            ..ResourcePools::default()
        }
    }

    #[test]
    fn the_longest_prefix_of_the_first_component_binds_whatever_the_declaration_order() {
        for order in [["pool1", "pool10"], ["pool10", "pool1"]] {
            let p = pools(&order);
            let pool = |q: &str| p.binding(q).map(Binding::pool);
            assert_eq!(pool("root.pool10_x"), Some("pool10"));
            assert_eq!(pool("root.pool1_y"), Some("pool1"));
            assert_eq!(
                pool("root.pool1_y.alice"),
                Some("pool1"),
                "descendants follow"
            );
            assert_eq!(pool("root.pool1abc"), Some("pool1"), "a bare prefix binds");
            assert_eq!(pool("root.adhoc"), None);
            assert_eq!(pool("root"), None, "root spans every partition");
            assert_eq!(
                pool("root.adhoc.pool1_z"),
                None,
                "only the first component counts"
            );
        }
    }

    #[test]
    fn an_explicit_binding_wins_and_is_inherited_and_explicit_mode_ignores_prefixes() {
        let mut p = pools(&["pool1", "gpu"]);
        p.explicit
            .insert("root.pool1_ml".to_string(), "gpu".to_string());
        assert_eq!(p.binding("root.pool1_ml.a"), Some(Binding::Explicit("gpu")));
        assert_eq!(p.binding("root.pool1_ads"), Some(Binding::Prefix("pool1")));
        p.match_by = MatchBy::Explicit;
        assert_eq!(p.binding("root.pool1_ads"), None);
        assert_eq!(p.binding("root.pool1_ml"), Some(Binding::Explicit("gpu")));
    }

    #[test]
    fn pool_names_follow_the_node_label_rule() {
        assert!(check_pool_name("pool1").is_ok());
        assert!(check_pool_name("a-b_c").is_ok());
        assert!(check_pool_name("pool.1").unwrap_err().contains("no '.'"));
        assert!(check_pool_name("_x").is_err());
        assert!(check_pool_name("").is_err());
        assert!(check_pool_name(&"a".repeat(256))
            .unwrap_err()
            .contains("256"));
        assert!(check_pool_name(&"a".repeat(255)).is_ok());
    }

    #[test]
    fn a_bare_host_covers_every_nm_of_it_and_a_port_only_its_own() {
        let bare = PoolHost {
            host: "h1".to_string(),
            port: None,
        };
        let one = PoolHost {
            host: "h2".to_string(),
            port: Some(8041),
        };
        assert!(bare.covers("H1", 1) && bare.covers("h1", 2));
        assert!(one.covers("h2", 8041) && !one.covers("h2", 8042));
        assert_eq!(one.to_string(), "h2:8041");
    }
}
