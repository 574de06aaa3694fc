//! Deeply nested allocation files are refused with a position instead of overflowing the stack.

use weft_config::alloc_file::parse_allocations;
use weft_config::{Diagnostics, MAX_QUEUE_DEPTH};
use weft_types::ResourceTypes;

/// An allocation file with `levels` queues nested below root (`root.q.q...`), one per line.
fn nested_queues(levels: usize) -> String {
    let mut text = String::from("<allocations>\n<queue name=\"root\">\n");
    for _ in 0..levels {
        text.push_str("<queue name=\"q\">\n");
    }
    for _ in 0..levels {
        text.push_str("</queue>");
    }
    text.push_str("</queue>\n</allocations>\n");
    text
}

fn refusal(text: &str) -> Diagnostics {
    match parse_allocations(text, &ResourceTypes::default()) {
        Ok(_) => panic!("a file nested too deep was accepted"),
        Err(e) => e,
    }
}

#[test]
fn a_thousand_levels_are_refused_at_the_first_queue_too_deep() {
    let e = refusal(&nested_queues(1_000));
    assert_eq!(e.0.len(), 1, "{e}");
    let d = &e.0[0];
    // Line 1 is <allocations>, line 2 root (level 1), line 2 + n holds level n + 1.
    assert_eq!((d.line, d.column), (MAX_QUEUE_DEPTH as u32 + 2, 1), "{e}");
    assert!(
        d.message.contains("at most 100 levels"),
        "the message names the limit: {e}"
    );
}

#[test]
fn a_hundred_thousand_levels_are_refused_without_overflowing_the_stack() {
    let e = refusal(&nested_queues(100_000));
    assert_eq!(e.0[0].line, MAX_QUEUE_DEPTH as u32 + 2, "{e}");
}

#[test]
fn the_deepest_allowed_queue_is_accepted_and_one_more_level_is_not() {
    let (config, _) = parse_allocations(
        &nested_queues(MAX_QUEUE_DEPTH - 1),
        &ResourceTypes::default(),
    )
    .expect("100 levels counting root are allowed");
    let deepest = config
        .queues
        .keys()
        .map(|name| name.split('.').count())
        .max();
    assert_eq!(deepest, Some(MAX_QUEUE_DEPTH));
    refusal(&nested_queues(MAX_QUEUE_DEPTH));
}

#[test]
fn top_level_queues_other_than_root_count_the_implicit_root() {
    // <queue name="a"> at the top is root.a, level 2.
    let mut text = String::from("<allocations>\n");
    for _ in 0..MAX_QUEUE_DEPTH {
        text.push_str("<queue name=\"a\">\n");
    }
    text.push_str(&"</queue>".repeat(MAX_QUEUE_DEPTH));
    text.push_str("\n</allocations>\n");
    let e = refusal(&text);
    assert_eq!(e.0[0].line, MAX_QUEUE_DEPTH as u32 + 1, "{e}");
}

#[test]
fn deeply_nested_other_elements_are_refused_too() {
    // Nested placement rules are parsed recursively; any element this deep is refused first.
    let levels = 50_000;
    let text = format!(
        "<allocations>\n<queuePlacementPolicy>\n{}{}</queuePlacementPolicy>\n</allocations>\n",
        "<rule name=\"user\">\n".repeat(levels),
        "</rule>".repeat(levels)
    );
    let e = refusal(&text);
    assert!(e.0[0].message.contains("nested more than"), "{e}");
    assert!(e.0[0].line > 100, "{e}");
}
