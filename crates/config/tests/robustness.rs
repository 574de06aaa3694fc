//! No input makes the parsers panic; whatever they refuse, they say where.

use proptest::prelude::*;
use weft_config::alloc_file::parse_allocations;
use weft_config::resource_string::{parse_quantity, parse_resource, MissingTypes};
use weft_config::site::parse_site_xml;
use weft_types::ResourceTypes;

proptest! {
    #[test]
    fn resource_strings_never_panic(text in "[0-9a-zA-Z%=,.\\- \u{2014}]{0,40}") {
        let types = ResourceTypes::with_custom(["gpu"]).unwrap();
        let _ = parse_resource(&text, &types, MissingTypes::Zero);
        let _ = parse_resource(&text, &types, MissingTypes::Unbounded);
        let _ = parse_quantity(&text, &types);
    }

    #[test]
    fn broken_allocation_files_are_refused_with_a_position(cut in 0usize..400, junk in "[<>!/\u{2014}a-z\"= -]{0,6}") {
        let text = include_str!("../../../examples/fair-scheduler.xml");
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let broken = format!("{}{}{}", &text[..cut], junk, &text[cut..]);
        if let Err(e) = parse_allocations(&broken, &ResourceTypes::default()) {
            prop_assert!(!e.0.is_empty());
            prop_assert!(e.0.iter().all(|d| d.line > 0 && d.column > 0), "{}", e);
        }
        let _ = parse_site_xml(&broken);
    }
}

proptest! {
    #[test]
    fn capacity_files_with_any_value_are_parsed_or_refused_with_a_place(
        key in prop::sample::select(vec![
            "root.queues", "root.prod.queues", "root.prod.capacity", "root.dev.capacity",
            "root.dev.maximum-capacity", "root.prod.etl.capacity", "root.dev.state",
            "root.dev.user-limit-factor", "root.dev.minimum-user-limit-percent",
            "root.dev.user-settings.bob.weight", "root.dev.maximum-allocation",
            "queue-mappings", "maximum-applications", "root.dev.ordering-policy",
        ]),
        value in "[0-9a-z%=,.\\[\\]:w \\-]{0,24}",
    ) {
        use std::collections::BTreeMap;
        use weft_config::capacity::{check_refresh, parse_capacity, RefreshContext};
        use weft_types::Resource;
        let sample = include_str!("data/capacity-scheduler.xml");
        let property = format!(
            "<property><name>yarn.scheduler.capacity.{key}</name><value>{value}</value></property>\n</configuration>"
        );
        let changed = sample.replace("</configuration>", &property);
        let types = ResourceTypes::default();
        match parse_capacity(&changed, &types) {
            Err(e) => {
                prop_assert!(!e.0.is_empty());
                prop_assert!(e.0.iter().all(|d| d.line > 0 || !d.path.is_empty()), "{}", e);
            }
            Ok((new, _)) => {
                let (old, _) = parse_capacity(sample, &types).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let apps = BTreeMap::from([("root.dev".to_string(), 1)]);
                let context = RefreshContext { apps: &apps, cluster_maximum_allocation: Resource::new(8192, 4) };
                if let Err(e) = check_refresh(&old, &new, &context) {
                    prop_assert!(e.0.iter().all(|d| !d.path.is_empty()), "{}", e);
                }
            }
        }
    }
}
