//! The nesting limits of an allocation file, checked before anything walks the tree, so that no
//! input can make a recursive walk (here or in the scheduler) run out of stack.

use super::xml::Sink;
use crate::{MAX_ALLOCATION_ELEMENT_DEPTH, MAX_QUEUE_DEPTH};
use roxmltree::Node;

/// Walks the document once, without recursion, and reports the first `<queue>`/`<pool>` deeper
/// than [`MAX_QUEUE_DEPTH`] levels (counting `root`) or the first element nested deeper than
/// [`MAX_ALLOCATION_ELEMENT_DEPTH`]. Returns whether the file is within both limits.
pub(super) fn check(sink: &mut Sink<'_>, root: Node<'_, '_>) -> bool {
    // The open ancestors of the current element: where each ends and how many queue levels it
    // added (0 for other elements, 2 for a top-level queue other than root, which sits under
    // the implicit root).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut queue_levels = 0usize;
    for node in root.descendants().filter(|n| n.is_element()) {
        let range = node.range();
        while let Some(&(end, levels)) = open.last() {
            if range.start < end {
                break;
            }
            open.pop();
            queue_levels -= levels;
        }
        let levels = if matches!(node.tag_name().name(), "queue" | "pool") {
            let is_root = node
                .attribute("name")
                .is_some_and(|n| n.trim().eq_ignore_ascii_case("root"));
            if queue_levels == 0 && !is_root {
                2
            } else {
                1
            }
        } else {
            0
        };
        queue_levels += levels;
        open.push((range.end, levels));
        if levels > 0 && queue_levels > MAX_QUEUE_DEPTH {
            sink.error(
                node,
                "queue",
                format!(
                    "this queue is at level {queue_levels} of the queue tree (root is level 1), \
                     but queues may be nested at most {MAX_QUEUE_DEPTH} levels deep"
                ),
            );
            return false;
        }
        if open.len() > MAX_ALLOCATION_ELEMENT_DEPTH {
            sink.error(
                node,
                "",
                format!(
                    "elements are nested more than {MAX_ALLOCATION_ELEMENT_DEPTH} levels deep here, \
                     deeper than any valid allocation file"
                ),
            );
            return false;
        }
    }
    true
}
