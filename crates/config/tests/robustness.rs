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
