//! `<resourcePools>` in fair-scheduler.xml (resource-pools.md §5): the model read from the
//! spec's example, the binding rule, every validation rule with its line and column, and the
//! lints.

use weft_config::alloc_file::parse_allocations;
use weft_config::pools::{Binding, FairShareScope, MatchBy, UnboundQueues};
use weft_config::{AllocationConfig, Diagnostic, Severity};
use weft_types::ResourceTypes;

fn parse(text: &str) -> (AllocationConfig, Vec<Diagnostic>) {
    parse_allocations(text, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(text: &str) -> Vec<String> {
    match parse_allocations(text, &ResourceTypes::default()) {
        Ok((c, _)) => panic!("accepted: {c:?}"),
        Err(e) => {
            e.0.iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| d.to_string())
                .collect()
        }
    }
}

fn warnings(text: &str) -> Vec<String> {
    parse(text).1.iter().map(|d| d.to_string()).collect()
}

/// The spec's §5 example, as written there.
const SPEC_EXAMPLE: &str = r#"<?xml version="1.0"?>
<allocations>
  <resourcePools unboundQueues="reject" matchBy="prefix">
    <resourcePool name="pool1">
      <host>rt-a-01.example.com</host>
      <host>rt-a-02.example.com</host>
      <host>rt-a-03.example.com</host>
      <host>rt-a-04.example.com</host>
    </resourcePool>
    <resourcePool name="pool2">
      <host>rt-b-01.example.com</host>
      <host>rt-b-02.example.com:8041</host>
      <preemptionUtilizationThreshold>0.9</preemptionUtilizationThreshold>
      <foreignContainerTimeout>600</foreignContainerTimeout>
    </resourcePool>
    <resourcePool name="gpu"/>
  </resourcePools>
  <queue name="pool1_ads">
    <minResources>16384 mb, 16 vcores</minResources>
    <maxResources>50%</maxResources>
  </queue>
  <queue name="pool1_search"/>
  <queue name="pool2">
    <queue name="etl"/>
  </queue>
  <queue name="ml">
    <resourcePool>gpu</resourcePool>
  </queue>
  <queue name="adhoc"/>
</allocations>"#;

#[test]
fn the_spec_example_is_read_and_binds_as_the_spec_says() {
    let (c, w) = parse(SPEC_EXAMPLE);
    let pools = c.resource_pools.expect("pools declared");
    assert_eq!(pools.unbound_queues, UnboundQueues::Reject);
    assert_eq!(pools.match_by, MatchBy::Prefix);
    assert_eq!(pools.fair_share_scope, FairShareScope::Pool);
    assert_eq!(pools.sorted_names(), ["gpu", "pool1", "pool2"]);
    let pool2 = pools.pool("pool2").expect("pool2");
    assert_eq!(pool2.hosts.len(), 2);
    assert_eq!(pool2.hosts[1].to_string(), "rt-b-02.example.com:8041");
    assert_eq!(pool2.preemption_utilization_threshold, Some(0.9));
    assert_eq!(pool2.foreign_container_timeout_ms, Some(600_000));
    assert_eq!(
        pools.pool("pool1").map(|p| p.foreign_container_timeout_ms),
        Some(None)
    );

    let bound = |q: &str| pools.binding(q).map(Binding::pool);
    assert_eq!(bound("root.pool1_ads"), Some("pool1"));
    assert_eq!(bound("root.pool1_search"), Some("pool1"));
    assert_eq!(bound("root.pool2.etl"), Some("pool2"));
    assert_eq!(bound("root.ml"), Some("gpu"));
    assert_eq!(pools.binding("root.ml"), Some(Binding::Explicit("gpu")));
    assert_eq!(bound("root.adhoc"), None);
    assert_eq!(
        bound("root.pool1_ads.alice"),
        Some("pool1"),
        "dynamic children follow"
    );

    assert_eq!(
        pools.pool_of_node("RT-A-01.example.com", 8041),
        Some("pool1"),
        "host names compare case-insensitively"
    );
    assert_eq!(
        pools.pool_of_node("rt-b-02.example.com", 8041),
        Some("pool2")
    );
    assert_eq!(pools.pool_of_node("rt-b-02.example.com", 8042), None);

    // The lints: gpu lists no hosts; adhoc is unbound while unbound queues are refused.
    let w: Vec<String> = w.iter().map(|d| d.to_string()).collect();
    assert!(
        w.iter()
            .any(|m| m.contains("resource pool gpu lists no hosts")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|m| m.starts_with("line 29, column 3: queue root.adhoc:")
                && m.contains("bound to no resource pool")),
        "{w:?}"
    );
    assert_eq!(w.len(), 2, "{w:?}");
}

#[test]
fn without_resource_pools_nothing_changes_and_a_queue_binding_is_an_error() {
    let (c, w) = parse("<allocations><queue name=\"a\"/></allocations>");
    assert!(c.resource_pools.is_none() && w.is_empty());
    assert_eq!(
        errors("<allocations>\n<queue name=\"a\"><resourcePool>p</resourcePool></queue>\n</allocations>"),
        ["line 2, column 1: queue root.a: resourcePool: queue root.a names pool 'p', but the file declares no <resourcePools>"]
    );
}

#[test]
fn a_host_in_two_pools_is_refused_naming_both_pools() {
    let text = r#"<allocations>
  <resourcePools>
    <resourcePool name="p1"><host>a1</host></resourcePool>
    <resourcePool name="p2"><host>A1</host></resourcePool>
    <resourcePool name="p3"><host>b1:8041</host></resourcePool>
    <resourcePool name="p4"><host>b1</host><host>c1:1</host></resourcePool>
    <resourcePool name="p5"><host>c1:2</host></resourcePool>
  </resourcePools>
</allocations>"#;
    assert_eq!(
        errors(text),
        [
            "line 4, column 5: resourcePool p2: host a1 is in resource pools p1 (as a1) and p2: a NodeManager can be in one pool only",
            "line 6, column 5: resourcePool p4: host b1 is in resource pools p3 (as b1:8041) and p4: a NodeManager can be in one pool only",
        ],
        "two NMs of one host (c1:1, c1:2) may be in different pools"
    );
}

#[test]
fn bad_names_duplicates_attributes_and_values_are_each_placed() {
    let text = r#"<allocations>
  <resourcePools unboundQueues="drop" matchBy="regex">
    <resourcePool name="pool.1"/>
    <resourcePool name="p"><host>h 1</host></resourcePool>
    <resourcePool name="p"/>
    <resourcePool name="q" exclusive="false"><host>h:99999</host></resourcePool>
    <resourcePool name="r"><foreignContainerTimeout>-5</foreignContainerTimeout></resourcePool>
    <resourcePool/>
  </resourcePools>
</allocations>"#;
    assert_eq!(
        errors(text),
        [
            "line 2, column 3: resourcePools: unboundQueues=\"drop\" is not allowed: expected reject or defaultPartition",
            "line 2, column 3: resourcePools: matchBy=\"regex\" is not allowed: expected prefix or explicit",
            "line 3, column 5: resourcePool pool.1: resource pool name 'pool.1' is not a valid node label: it must start with a letter or digit and hold only letters, digits, '_' and '-' (no '.')",
            "line 4, column 28: resourcePool p: host: 'h 1' is not a host name (letters, digits, '.', '-', '_'), optionally with :port",
            "line 5, column 5: resourcePool p: resource pool p is declared twice (first at line 4)",
            "line 6, column 5: resourcePool q: exclusive=\"false\" (lending idle hosts to apps outside the pool) is not supported yet: remove the attribute",
            "line 6, column 46: resourcePool q: host: 'h:99999': the port '99999' is not a number from 0 to 65535",
            "line 7, column 28: resourcePool r: foreignContainerTimeout: -5 is negative; give seconds, or -1 for never",
            "line 8, column 5: resourcePools: a <resourcePool> element needs a name attribute",
        ]
    );
}

#[test]
fn explicit_bindings_must_name_a_declared_pool_and_agree_with_their_ancestors() {
    let text = r#"<allocations>
  <resourcePools>
    <resourcePool name="p1"><host>a</host></resourcePool>
    <resourcePool name="p2"><host>b</host></resourcePool>
  </resourcePools>
  <queue name="x">
    <resourcePool>p1</resourcePool>
    <queue name="y"><resourcePool>p2</resourcePool></queue>
    <queue name="z"><resourcePool>p1</resourcePool></queue>
  </queue>
  <queue name="w"><resourcePool>p9</resourcePool></queue>
</allocations>"#;
    assert_eq!(
        errors(text),
        [
            "line 8, column 5: queue root.x.y: resourcePool: queue root.x.y names pool p2, but its ancestor root.x binds it to pool p1: a queue's descendants stay in its pool",
            "line 11, column 3: queue root.w: resourcePool: 'p9' is not a declared resource pool (declared: p1, p2)",
        ],
        "repeating the ancestor's pool (root.x.z) is fine"
    );
}

#[test]
fn a_parent_spanning_pools_may_not_set_resource_limits() {
    let text = r#"<allocations>
  <resourcePools>
    <resourcePool name="p1"><host>a</host></resourcePool>
    <resourcePool name="p2"><host>b</host></resourcePool>
  </resourcePools>
  <queue name="root">
    <maxResources>50%</maxResources>
    <queue name="p1_a"/>
    <queue name="mixed">
      <minResources>1024 mb, 1 vcores</minResources>
      <queue name="g"><resourcePool>p2</resourcePool></queue>
      <queue name="h"/>
    </queue>
    <queue name="fine">
      <maxChildResources>10%</maxChildResources>
      <queue name="g"><resourcePool>p2</resourcePool></queue>
    </queue>
  </queue>
</allocations>"#;
    let e = errors(text);
    assert_eq!(
        e,
        [
            "line 6, column 3: queue root: maxResources: queue root spans resource pools (no pool), p1, p2, so it has no single capacity to resolve them against: set them on its pool-bound children instead",
            "line 9, column 5: queue root.mixed: minResources: queue root.mixed spans resource pools (no pool), p2, so it has no single capacity to resolve them against: set them on its pool-bound children instead",
            "line 11, column 7: queue root.mixed.g: resourcePool: queue root.mixed.g is in pool p2 but its top-level queue root.mixed is in no pool: a top-level queue spanning resource pools is not supported; bind root.mixed itself",
            "line 14, column 5: queue root.fine: maxChildResources: queue root.fine spans resource pools (no pool), p2, so it has no single capacity to resolve them against: set them on its pool-bound children instead",
            "line 16, column 7: queue root.fine.g: resourcePool: queue root.fine.g is in pool p2 but its top-level queue root.fine is in no pool: a top-level queue spanning resource pools is not supported; bind root.fine itself",
        ],
        "the scheduler keeps per-pool orders at the root only, so below it a subtree stays in one pool"
    );
}

#[test]
fn lints_prefix_overlaps_and_bare_prefixes_and_nothing_in_explicit_mode() {
    let text = r#"<allocations>
  <resourcePools unboundQueues="defaultPartition">
    <resourcePool name="pool1"><host>a1</host></resourcePool>
    <resourcePool name="pool10"><host>b1</host></resourcePool>
  </resourcePools>
  <queue name="pool10_x"/>
  <queue name="pool1_y"/>
  <queue name="pool1abc"/>
  <queue name="adhoc"/>
</allocations>"#;
    let (c, w) = parse(text);
    let w: Vec<String> = w.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        w,
        [
            "line 4, column 5: resourcePool pool10: pool name pool10 starts with pool name pool1: queues named pool10... bind to pool10 (the longest prefix wins), which is easy to misread",
            "line 8, column 3: queue root.pool1abc: queue root.pool1abc is bound to pool pool1 by a bare prefix ('pool1abc' continues the pool name): name it pool1_... or bind it with <resourcePool>",
        ],
        "root.adhoc runs in the default partition, so no warning; root.pool10_x is not a bare prefix"
    );
    let pools = c.resource_pools.expect("pools");
    assert_eq!(
        pools.binding("root.pool10_x").map(Binding::pool),
        Some("pool10")
    );
    assert_eq!(
        pools.binding("root.pool1_y").map(Binding::pool),
        Some("pool1")
    );

    let explicit = text.replace(
        "unboundQueues=\"defaultPartition\"",
        "unboundQueues=\"defaultPartition\" matchBy=\"explicit\"",
    );
    let (c, _) = parse(&explicit);
    let w = warnings(&explicit);
    assert!(
        w.is_empty(),
        "no binding by prefix, so no prefix lint: {w:?}"
    );
    assert_eq!(
        c.resource_pools
            .and_then(|p| p.binding("root.pool1_y").map(|_| ())),
        None
    );
}
