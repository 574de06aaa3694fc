//! `<queuePlacementPolicy>`: rules, nested parent rules and the validation of spec §12.2.

use super::xml::Sink;
use crate::{PlacementRule, PlacementRuleKind};
use roxmltree::Node;

const RULE_NAMES: &str =
    "specified, user, primaryGroup, secondaryGroupExistingQueue, nestedUserQueue, default, reject";

/// Reads a placement policy. `None` when it has errors (reported) or when it has no `<rule>`
/// at all (a warning: the default policy applies, as Hadoop keeps the rules it had).
pub(super) fn parse_policy(
    sink: &mut Sink<'_>,
    element: Node<'_, '_>,
    no_terminal_rule_check: bool,
) -> Option<Vec<PlacementRule>> {
    const PATH: &str = "queuePlacementPolicy";
    let children: Vec<Node<'_, '_>> = element.children().filter(|c| c.is_element()).collect();
    if children.is_empty() {
        sink.error(
            element,
            PATH,
            "the placement policy has no rules: list rules such as <rule name=\"specified\"/> and end with one that always decides, e.g. <rule name=\"default\"/>",
        );
        return None;
    }
    let mut rules = Vec::new();
    let mut rule_nodes = Vec::new();
    let mut failed = false;
    for child in children {
        if child.tag_name().name() != "rule" {
            sink.warn(
                child,
                PATH,
                format!("unknown element <{}> is ignored", child.tag_name().name()),
            );
            continue;
        }
        let path = format!("{PATH} rule {}", rule_nodes.len() + 1);
        rule_nodes.push(child);
        match parse_rule(sink, child, &path) {
            Some(rule) => rules.push(rule),
            None => failed = true,
        }
    }
    if rule_nodes.is_empty() {
        sink.warn(
            element,
            PATH,
            "the placement policy has no <rule> elements and is ignored; the default policy applies",
        );
        return None;
    }
    if failed {
        return None;
    }
    let mut ok = true;
    let last = rules.len() - 1;
    if !no_terminal_rule_check {
        for (i, rule) in rules.iter().enumerate().take(last) {
            if rule.is_terminal() {
                sink.error(
                    rule_nodes[i],
                    &format!("{PATH} rule {}", i + 1),
                    format!(
                        "rule '{}' always places the application, so the rules after rule {} can never be reached: remove them, or set create=\"false\" on this rule",
                        rule.kind.name(),
                        i + 1
                    ),
                );
                ok = false;
            }
        }
    }
    if !rules[last].is_terminal() {
        sink.error(
            rule_nodes[last],
            &format!("{PATH} rule {}", last + 1),
            format!(
                "the last rule '{}' may not place the application, and no rule follows it: end the policy with a rule that always decides, e.g. <rule name=\"default\"/> or <rule name=\"reject\"/>",
                rules[last].kind.name()
            ),
        );
        ok = false;
    }
    ok.then_some(rules)
}

/// Reads one `<rule>` (and its nested parent rule); `None` after reporting its errors.
fn parse_rule(sink: &mut Sink<'_>, element: Node<'_, '_>, path: &str) -> Option<PlacementRule> {
    let name = element.attribute("name").unwrap_or("");
    let kind = if name.is_empty() {
        sink.error(
            element,
            path,
            format!("the rule has no name attribute: expected one of {RULE_NAMES}"),
        );
        None
    } else {
        let kind = PlacementRuleKind::parse(name);
        if kind.is_none() {
            sink.error(
                element,
                path,
                format!("'{name}' is not a placement rule: expected one of {RULE_NAMES}"),
            );
        }
        kind
    };

    let create = match element.attribute("create") {
        None | Some("") => true,
        Some(v) => {
            if !v.eq_ignore_ascii_case("true") && !v.eq_ignore_ascii_case("false") {
                sink.warn(
                    element,
                    path,
                    format!("create=\"{v}\" is read as false (only \"true\" means true)"),
                );
            }
            v.eq_ignore_ascii_case("true")
        }
    };

    let nested: Vec<Node<'_, '_>> = element
        .children()
        .filter(|c| c.is_element())
        .filter(|c| {
            let is_rule = c.tag_name().name() == "rule";
            if !is_rule {
                sink.warn(
                    *c,
                    path,
                    format!("unknown element <{}> is ignored", c.tag_name().name()),
                );
            }
            is_rule
        })
        .collect();
    if nested.len() > 1 {
        sink.warn(
            element,
            path,
            "more than one nested rule: only the last one is used as the parent rule",
        );
    }
    let nested_path = format!("{path} nested rule");
    let parent = nested.last().map(|&n| parse_rule(sink, n, &nested_path));

    let kind = kind?;
    let parent = match parent {
        Some(None) => return None,
        Some(Some(p)) => Some(Box::new(p)),
        None => None,
    };
    let mut ok = true;
    if let Some(p) = &parent {
        let refused = match kind {
            PlacementRuleKind::Specified
            | PlacementRuleKind::Default
            | PlacementRuleKind::Reject => Some(format!(
                "a '{}' rule cannot have a nested parent rule",
                kind.name()
            )),
            _ if matches!(
                p.kind,
                PlacementRuleKind::Reject | PlacementRuleKind::NestedUserQueue
            ) =>
            {
                Some(format!(
                    "'{}' cannot be used as a nested parent rule",
                    p.kind.name()
                ))
            }
            _ if p.kind == kind => Some(format!(
                "a '{}' rule cannot have a parent rule of the same type",
                kind.name()
            )),
            _ => None,
        };
        if let Some(message) = refused {
            sink.error(element, path, message);
            ok = false;
        }
    } else if kind == PlacementRuleKind::NestedUserQueue {
        sink.error(
            element,
            path,
            "a 'nestedUserQueue' rule needs a nested <rule> that chooses the parent queue, e.g. <rule name=\"primaryGroup\" create=\"false\"/>",
        );
        ok = false;
    }

    let queue = if kind == PlacementRuleKind::Default {
        default_queue(sink, element, path)
    } else {
        None
    };
    ok.then_some(PlacementRule {
        kind,
        create,
        queue,
        parent,
    })
}

/// The `queue` attribute of a `default` rule, root-prefixed; absent, empty or invalid -> `None`
/// (`root.default`).
fn default_queue(sink: &mut Sink<'_>, element: Node<'_, '_>, path: &str) -> Option<String> {
    let raw = element.attribute("queue")?;
    if raw.trim().is_empty() {
        return None;
    }
    let valid = !raw.starts_with('.')
        && !raw.ends_with('.')
        && raw
            .split('.')
            .all(|part| !part.is_empty() && part.trim() == part);
    if !valid {
        sink.warn(
            element,
            path,
            format!("queue=\"{raw}\" is not a valid queue name; root.default is used instead"),
        );
        return None;
    }
    Some(if raw == "root" || raw.starts_with("root.") {
        raw.to_string()
    } else {
        format!("root.{raw}")
    })
}
