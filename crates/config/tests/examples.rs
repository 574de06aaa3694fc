//! The shipped examples parse (so they cannot rot), and the seed document's own example, with
//! its typographic dash in a comment opener, is refused at the right place.

use weft_config::alloc_file::parse_allocations;
use weft_config::site::parse_site_xml;
use weft_config::{PlacementRuleKind, PolicyKind};
use weft_types::{Resource, ResourceTypes};

const FAIR_SCHEDULER_XML: &str = include_str!("../../../examples/fair-scheduler.xml");
const YARN_SITE_XML: &str = include_str!("../../../examples/yarn-site.xml");
const SEED_EXAMPLE: &str = include_str!("data/seed-000-example.xml");

#[test]
fn example_allocation_file_parses() {
    let (config, warnings) = parse_allocations(FAIR_SCHEDULER_XML, &ResourceTypes::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<&str> = config.queues.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "root.sample_queue",
            "root.sample_queue.sample_sub_queue",
            "root.secondary_group_queue"
        ]
    );
    let sample = &config.queues["root.sample_queue"];
    assert!(sample.is_parent);
    assert_eq!(sample.min_resources, Some(Resource::new(10000, 0)));
    assert_eq!(sample.max_running_apps, Some(50));
    assert_eq!(sample.max_am_share, Some(0.1));
    assert_eq!(sample.weight, Some(2.0));
    assert_eq!(sample.scheduling_policy, Some(PolicyKind::Fair));
    let sub = &config.queues["root.sample_queue.sample_sub_queue"];
    assert!(!sub.is_parent);
    assert!(sub
        .acl_submit_apps
        .as_ref()
        .is_some_and(|a| a.users.contains("charlie")));
    assert!(config.queues["root.secondary_group_queue"].is_parent);
    assert_eq!(config.user_max_apps.get("sample_user"), Some(&30));
    assert_eq!(config.user_max_apps_default, 5);
    assert_eq!(config.queue_max_am_share_default, 0.5);
    let rules = config.placement_policy.expect("a placement policy");
    let kinds: Vec<PlacementRuleKind> = rules.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            PlacementRuleKind::Specified,
            PlacementRuleKind::PrimaryGroup,
            PlacementRuleKind::NestedUserQueue,
            PlacementRuleKind::Default
        ]
    );
    assert_eq!(rules[3].queue.as_deref(), Some("root.sample_queue"));
    assert_eq!(
        rules[2].parent.as_ref().map(|p| p.kind),
        Some(PlacementRuleKind::SecondaryGroupExistingQueue)
    );
}

#[test]
fn example_yarn_site_parses() {
    let (props, warnings) = parse_site_xml(YARN_SITE_XML).unwrap_or_else(|e| panic!("{e}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(props.preemption);
    assert!(props.assign_multiple);
    assert_eq!(props.max_assign, 4);
    assert_eq!(props.locality_threshold_node, 0.5);
    assert_eq!(props.minimum_allocation, Resource::new(512, 1));
    assert_eq!(props.maximum_allocation.memory_mb(), 16384);
    assert_eq!(props.maximum_allocation.vcores(), 8);
}

#[test]
fn seed_example_with_typographic_dash_is_refused_at_its_line() {
    // The fixture is the seed's text as published: its comment opener is "<!" + U+2014 + "-".
    assert!(SEED_EXAMPLE.contains("<!\u{2014}-"));
    let line = SEED_EXAMPLE
        .lines()
        .position(|l| l.contains("<!\u{2014}"))
        .map(|i| i as u32 + 1)
        .unwrap();
    let err = parse_allocations(SEED_EXAMPLE, &ResourceTypes::default()).unwrap_err();
    assert_eq!(err.0.len(), 1);
    let d = &err.0[0];
    assert_eq!((d.line, d.column), (line, 3));
    let text = d.to_string();
    assert!(
        text.starts_with(&format!(
            "line {line}, column 3: XML syntax error: malformed comment"
        )),
        "{text}"
    );
    assert!(text.contains("'<!--'"), "{text}");
    assert!(text.contains("'\u{2014}' (U+2014)"), "{text}");
    assert!(text.contains("typographic dash"), "{text}");
}

#[test]
fn fixing_the_dash_is_the_only_difference_from_the_example() {
    assert_eq!(
        SEED_EXAMPLE.replace("<!\u{2014}-", "<!--"),
        FAIR_SCHEDULER_XML
    );
}
