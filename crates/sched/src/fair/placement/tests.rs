//! Placement tests: every rule, create semantics, nesting, the default policy and queue names.

use super::names::clean_component;
use super::names::is_queue_whitespace;
use super::*;
use std::collections::BTreeMap;
use weft_config::{PlacementRule, PlacementRuleKind};

#[derive(Clone, Copy)]
struct Queue {
    configured: bool,
    leaf: bool,
}

/// A queue tree by full name.
#[derive(Default)]
struct Tree(BTreeMap<String, Queue>);

impl Tree {
    fn with(mut self, name: &str, configured: bool, leaf: bool) -> Self {
        self.0.insert(name.to_owned(), Queue { configured, leaf });
        self
    }
    /// A queue declared in the allocation file.
    fn static_leaf(self, name: &str) -> Self {
        self.with(name, true, true)
    }
    fn static_parent(self, name: &str) -> Self {
        self.with(name, true, false)
    }
    /// A queue created by an earlier placement.
    fn dynamic_leaf(self, name: &str) -> Self {
        self.with(name, false, true)
    }
    fn dynamic_parent(self, name: &str) -> Self {
        self.with(name, false, false)
    }
}

impl QueueLookup for Tree {
    fn exists(&self, full_name: &str) -> bool {
        self.0.contains_key(full_name)
    }
    fn is_configured(&self, full_name: &str) -> bool {
        self.0.get(full_name).is_some_and(|q| q.configured)
    }
    fn is_leaf(&self, full_name: &str) -> Option<bool> {
        self.0.get(full_name).map(|q| q.leaf)
    }
}

fn rule(kind: PlacementRuleKind, create: bool) -> PlacementRule {
    PlacementRule {
        kind,
        create,
        queue: None,
        parent: None,
    }
}

fn nested(kind: PlacementRuleKind, create: bool, parent: PlacementRule) -> PlacementRule {
    PlacementRule {
        parent: Some(Box::new(parent)),
        ..rule(kind, create)
    }
}

fn default_to(queue: Option<&str>, create: bool) -> PlacementRule {
    PlacementRule {
        queue: queue.map(str::to_owned),
        ..rule(PlacementRuleKind::Default, create)
    }
}

use PlacementRuleKind::{
    NestedUserQueue, PrimaryGroup, Reject, SecondaryGroupExistingQueue, Specified, User,
};

fn groups(names: &[&str]) -> Vec<String> {
    names.iter().map(|g| (*g).to_owned()).collect()
}

/// Places `user` (groups `grp`, `other`) with `rules` on `tree`.
fn run(
    rules: &[PlacementRule],
    requested: Option<&str>,
    tree: &Tree,
) -> Result<String, PlacementError> {
    place(rules, requested, "bob", &groups(&["grp", "other"]), tree)
}

fn ok(queue: &str) -> Result<String, PlacementError> {
    Ok(queue.to_owned())
}

fn rejected(rules: &str) -> Result<String, PlacementError> {
    Err(PlacementError::Rejected {
        rules: rules.to_owned(),
    })
}

// ---- names -------------------------------------------------------------------------------

#[test]
fn whitespace_table_is_unicode_white_space() {
    for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
        assert_eq!(
            is_queue_whitespace(c),
            c.is_whitespace(),
            "U+{:04X}",
            c as u32
        );
    }
    assert!(is_queue_whitespace('\u{00A0}'));
    assert!(!is_queue_whitespace('\u{001C}'));
}

#[test]
fn clean_component_trims_and_replaces_dots() {
    assert_eq!(clean_component("first.last"), "first_dot_last");
    assert_eq!(clean_component("a.b.c"), "a_dot_b_dot_c");
    assert_eq!(clean_component("\u{00A0}bob\u{00A0}"), "bob");
    assert_eq!(clean_component("\u{3000}\tx.y \n"), "x_dot_y");
    assert_eq!(clean_component("a b"), "a b");
    assert_eq!(clean_component("plain"), "plain");
}

#[test]
fn normalize_adds_root_prefix() {
    assert_eq!(normalize_queue_name("a").unwrap(), "root.a");
    assert_eq!(normalize_queue_name("a.b").unwrap(), "root.a.b");
    assert_eq!(normalize_queue_name("root").unwrap(), "root");
    assert_eq!(normalize_queue_name("root.a").unwrap(), "root.a");
    assert_eq!(normalize_queue_name("rootx").unwrap(), "root.rootx");
    assert_eq!(normalize_queue_name("Root").unwrap(), "root.Root");
    assert_eq!(normalize_queue_name("a b.c").unwrap(), "root.a b.c");
}

#[test]
fn normalize_rejects_bad_names_with_a_reason() {
    let message = |name: &str| normalize_queue_name(name).unwrap_err().to_string();
    assert_eq!(message("a..b"), "queue name 'a..b' has an empty component");
    assert_eq!(
        message(" a"),
        "queue name ' a' is invalid: leading or trailing whitespace"
    );
    assert_eq!(
        message("a\u{00A0}"),
        "queue name 'a\u{00A0}' is invalid: leading or trailing whitespace"
    );
    assert_eq!(
        message("a. b"),
        "queue name 'a. b' is invalid: component ' b' has leading or trailing whitespace"
    );
    assert_eq!(
        message("a.\u{00A0}b.c"),
        "queue name 'a.\u{00A0}b.c' is invalid: component '\u{00A0}b' has leading or trailing whitespace"
    );
    assert_eq!(message(""), "queue name '' is empty");
    assert_eq!(
        message(".A"),
        "queue name '.A' is invalid: it begins or ends with '.'"
    );
    assert_eq!(
        message("A."),
        "queue name 'A.' is invalid: it begins or ends with '.'"
    );
    assert_eq!(
        message("root."),
        "queue name 'root.' is invalid: it begins or ends with '.'"
    );
    assert_eq!(
        normalize_queue_name("root..a"),
        Err(PlacementError::InvalidQueueName {
            name: "root..a".to_owned(),
            problem: NameProblem::EmptyComponent,
        })
    );
}

// ---- specified -----------------------------------------------------------------------------

#[test]
fn specified_with_create_places_any_valid_name() {
    let rules = [rule(Specified, true), rule(Reject, true)];
    let tree = Tree::default();
    assert_eq!(run(&rules, Some("x"), &tree), ok("root.x"));
    assert_eq!(run(&rules, Some("x.y"), &tree), ok("root.x.y"));
    assert_eq!(run(&rules, Some("root.x"), &tree), ok("root.x"));
    assert_eq!(run(&rules, Some("root.default"), &tree), ok("root.default"));
}

#[test]
fn specified_passes_on_no_queue_and_on_default() {
    let rules = [
        rule(Specified, true),
        default_to(Some("root.fallback"), true),
    ];
    let tree = Tree::default();
    assert_eq!(run(&rules, None, &tree), ok("root.fallback"));
    assert_eq!(run(&rules, Some("default"), &tree), ok("root.fallback"));
}

#[test]
fn specified_without_create_needs_a_static_queue() {
    let rules = [rule(Specified, false), default_to(None, true)];
    let tree = Tree::default()
        .static_leaf("root.a")
        .dynamic_leaf("root.dyn")
        .static_parent("root.p")
        .static_leaf("root.p.c");
    assert_eq!(run(&rules, Some("a"), &tree), ok("root.a"));
    assert_eq!(run(&rules, Some("p.c"), &tree), ok("root.p.c"));
    assert_eq!(run(&rules, Some("dyn"), &tree), ok("root.default"));
    assert_eq!(run(&rules, Some("missing"), &tree), ok("root.default"));
}

#[test]
fn specified_fails_the_submission_on_invalid_names() {
    let rules = [rule(Specified, true), default_to(None, true)];
    let tree = Tree::default();
    for (name, reason) in [
        (" a", "is invalid: leading or trailing whitespace"),
        ("a\u{00A0}", "is invalid: leading or trailing whitespace"),
        (".A", "is invalid: it begins or ends with '.'"),
        ("A.", "is invalid: it begins or ends with '.'"),
        (" default", "is invalid: leading or trailing whitespace"),
    ] {
        let err = run(&rules, Some(name), &tree).unwrap_err();
        assert_eq!(err.to_string(), format!("queue name '{name}' {reason}"));
    }
    // An inner problem is found when the decided name is checked.
    assert_eq!(
        run(&rules, Some("a..b"), &tree).unwrap_err().to_string(),
        "queue name 'root.a..b' has an empty component"
    );
    assert_eq!(
        run(&rules, Some(""), &tree).unwrap_err().to_string(),
        "queue name '' is empty"
    );
}

#[test]
fn specified_without_create_passes_on_inner_problems_like_hadoop() {
    // Hadoop's specified rule only checks the ends of the name; `a..b` is not a static queue, so
    // a create=false rule gives no decision and the next rule places the application.
    let rules = [rule(Specified, false), default_to(None, true)];
    assert_eq!(
        run(&rules, Some("a..b"), &Tree::default()),
        ok("root.default")
    );
}

// ---- user ----------------------------------------------------------------------------------

#[test]
fn user_rule_places_in_a_queue_named_after_the_user() {
    let rules = [rule(User, true)];
    let tree = Tree::default();
    assert_eq!(run(&rules, None, &tree), ok("root.bob"));
    assert_eq!(
        place(&rules, None, "first.last", &[], &tree),
        ok("root.first_dot_last")
    );
    assert_eq!(
        place(&rules, None, "\u{00A0}eve\u{00A0}", &[], &tree),
        ok("root.eve")
    );
    assert_eq!(
        place(&rules, None, "\u{2007}a.b\t", &[], &tree),
        ok("root.a_dot_b")
    );
}

#[test]
fn user_rule_without_create_needs_a_static_queue() {
    let rules = [rule(User, false), default_to(None, true)];
    let static_tree = Tree::default().static_leaf("root.bob");
    let dynamic_tree = Tree::default().dynamic_leaf("root.bob");
    assert_eq!(run(&rules, None, &static_tree), ok("root.bob"));
    assert_eq!(run(&rules, None, &dynamic_tree), ok("root.default"));
    assert_eq!(run(&rules, None, &Tree::default()), ok("root.default"));
    let dotted = Tree::default().static_leaf("root.first_dot_last");
    assert_eq!(
        place(&rules, None, "first.last", &[], &dotted),
        ok("root.first_dot_last")
    );
}

#[test]
fn user_rule_with_an_empty_user_name_is_an_invalid_queue() {
    let err = place(&[rule(User, true)], None, " ", &[], &Tree::default()).unwrap_err();
    assert_eq!(err.to_string(), "queue name '' is empty");
}

// ---- primaryGroup --------------------------------------------------------------------------

#[test]
fn primary_group_uses_the_first_group() {
    let rules = [rule(PrimaryGroup, true)];
    let tree = Tree::default();
    assert_eq!(run(&rules, None, &tree), ok("root.grp"));
    assert_eq!(
        place(&rules, None, "bob", &groups(&["eng.core", "x"]), &tree),
        ok("root.eng_dot_core")
    );
    assert_eq!(
        place(&rules, None, "bob", &groups(&["\u{00A0}ops "]), &tree),
        ok("root.ops")
    );
}

#[test]
fn primary_group_without_create_needs_a_static_queue() {
    let rules = [rule(PrimaryGroup, false), default_to(None, true)];
    assert_eq!(
        run(&rules, None, &Tree::default().static_leaf("root.grp")),
        ok("root.grp")
    );
    assert_eq!(
        run(&rules, None, &Tree::default().dynamic_leaf("root.grp")),
        ok("root.default")
    );
    // Only the primary group counts.
    assert_eq!(
        run(&rules, None, &Tree::default().static_leaf("root.other")),
        ok("root.default")
    );
}

#[test]
fn primary_group_fails_for_a_user_without_groups() {
    let rules = [rule(PrimaryGroup, false), default_to(None, true)];
    let err = place(&rules, None, "bob", &[], &Tree::default()).unwrap_err();
    assert_eq!(
        err,
        PlacementError::NoGroups {
            user: "bob".to_owned()
        }
    );
    assert_eq!(
        err.to_string(),
        "user 'bob' has no groups: the primaryGroup rule cannot place the application"
    );
}

#[test]
fn a_user_without_groups_is_fine_until_a_primary_group_rule_runs() {
    let rules = [rule(Specified, true), rule(PrimaryGroup, true)];
    assert_eq!(
        place(&rules, Some("a"), "bob", &[], &Tree::default()),
        ok("root.a")
    );
}

// ---- secondaryGroupExistingQueue -----------------------------------------------------------

#[test]
fn secondary_group_picks_the_first_static_group_queue() {
    let rules = [
        rule(SecondaryGroupExistingQueue, true),
        default_to(None, true),
    ];
    let user_groups = groups(&["grp", "second", "third"]);
    let tree = Tree::default()
        .static_leaf("root.third")
        .static_leaf("root.second");
    assert_eq!(
        place(&rules, None, "bob", &user_groups, &tree),
        ok("root.second")
    );
    // The primary group is considered too.
    let tree = tree.static_leaf("root.grp");
    assert_eq!(
        place(&rules, None, "bob", &user_groups, &tree),
        ok("root.grp")
    );
}

#[test]
fn secondary_group_ignores_create_and_dynamic_queues() {
    let rules = [
        rule(SecondaryGroupExistingQueue, true),
        default_to(None, true),
    ];
    let user_groups = groups(&["grp", "second"]);
    assert_eq!(
        place(&rules, None, "bob", &user_groups, &Tree::default()),
        ok("root.default")
    );
    let tree = Tree::default().dynamic_leaf("root.second");
    assert_eq!(
        place(&rules, None, "bob", &user_groups, &tree),
        ok("root.default")
    );
    // A user without groups simply gets no decision from this rule.
    assert_eq!(place(&rules, None, "bob", &[], &tree), ok("root.default"));
}

#[test]
fn secondary_group_cleans_group_names() {
    let rules = [rule(SecondaryGroupExistingQueue, false), rule(Reject, true)];
    let tree = Tree::default().static_leaf("root.eng_dot_core");
    assert_eq!(
        place(&rules, None, "bob", &groups(&["x", " eng.core"]), &tree),
        ok("root.eng_dot_core")
    );
}

// ---- nesting -------------------------------------------------------------------------------

#[test]
fn nested_user_queue_under_primary_group() {
    let rules = [
        nested(NestedUserQueue, true, rule(PrimaryGroup, false)),
        default_to(None, true),
    ];
    // Parent decides an existing static parent queue: the user queue goes under it.
    let tree = Tree::default().static_parent("root.grp");
    assert_eq!(run(&rules, None, &tree), ok("root.grp.bob"));
    assert_eq!(
        place(&rules, None, "first.last", &groups(&["grp"]), &tree),
        ok("root.grp.first_dot_last")
    );
    // Parent rule gives no decision (create=false, queue absent): next rule.
    assert_eq!(run(&rules, None, &Tree::default()), ok("root.default"));
}

#[test]
fn nested_user_queue_under_a_creating_parent_rule() {
    let rules = [nested(NestedUserQueue, true, rule(PrimaryGroup, true))];
    // The parent queue does not exist yet: it is not a leaf, so the child appends.
    assert_eq!(run(&rules, None, &Tree::default()), ok("root.grp.bob"));
    // A dynamic parent queue is fine too.
    assert_eq!(
        run(&rules, None, &Tree::default().dynamic_parent("root.grp")),
        ok("root.grp.bob")
    );
}

#[test]
fn nested_rule_gives_no_decision_when_the_parent_result_is_a_leaf() {
    let rules = [
        nested(NestedUserQueue, true, rule(PrimaryGroup, true)),
        default_to(None, true),
    ];
    assert_eq!(
        run(&rules, None, &Tree::default().static_leaf("root.grp")),
        ok("root.default")
    );
    // Dynamic leaves block as well: leaf-ness is about the tree, not the file.
    assert_eq!(
        run(&rules, None, &Tree::default().dynamic_leaf("root.grp")),
        ok("root.default")
    );
}

#[test]
fn nested_user_queue_without_create_needs_the_static_user_queue() {
    let rules = [
        nested(NestedUserQueue, false, rule(PrimaryGroup, true)),
        default_to(None, true),
    ];
    let tree = Tree::default().static_parent("root.grp");
    assert_eq!(run(&rules, None, &tree), ok("root.default"));
    assert_eq!(
        run(&rules, None, &tree.dynamic_leaf("root.grp.bob")),
        ok("root.default")
    );
    let tree = Tree::default()
        .static_parent("root.grp")
        .static_leaf("root.grp.bob");
    assert_eq!(run(&rules, None, &tree), ok("root.grp.bob"));
}

#[test]
fn nested_user_queue_under_secondary_group_as_in_the_user_doc() {
    // The policy from the Fair Scheduler user doc.
    let rules = [
        rule(Specified, true),
        rule(PrimaryGroup, false),
        nested(
            NestedUserQueue,
            true,
            rule(SecondaryGroupExistingQueue, false),
        ),
        default_to(Some("root.sample_queue"), true),
    ];
    let tree = Tree::default()
        .static_parent("root.sample_queue")
        .static_leaf("root.sample_queue.sample_sub_queue")
        .static_parent("root.secondary_group_queue");
    let user_groups = groups(&["primary", "secondary_group_queue"]);
    assert_eq!(
        place(&rules, None, "alice", &user_groups, &tree),
        ok("root.secondary_group_queue.alice")
    );
    assert_eq!(
        place(
            &rules,
            Some("sample_queue.sample_sub_queue"),
            "alice",
            &user_groups,
            &tree
        ),
        ok("root.sample_queue.sample_sub_queue")
    );
    // No matching secondary group: falls through to the default rule's queue.
    assert_eq!(
        place(&rules, None, "carol", &groups(&["x", "y"]), &tree),
        ok("root.sample_queue")
    );
    // The primary group queue exists statically: the primaryGroup rule wins.
    let tree = tree.static_leaf("root.primary");
    assert_eq!(
        place(&rules, None, "alice", &user_groups, &tree),
        ok("root.primary")
    );
}

#[test]
fn secondary_group_under_a_parent_rule_looks_inside_the_parent() {
    let rules = [
        nested(SecondaryGroupExistingQueue, true, rule(User, true)),
        default_to(None, true),
    ];
    let tree = Tree::default()
        .static_parent("root.bob")
        .static_leaf("root.bob.other");
    assert_eq!(run(&rules, None, &tree), ok("root.bob.other"));
    // The groups are looked up inside the parent, not at the root.
    let tree = Tree::default()
        .static_parent("root.bob")
        .static_leaf("root.other");
    assert_eq!(run(&rules, None, &tree), ok("root.default"));
}

#[test]
fn nested_user_queue_under_the_specified_queue() {
    let rules = [
        nested(NestedUserQueue, true, rule(Specified, false)),
        default_to(None, true),
    ];
    let tree = Tree::default()
        .static_parent("root.p1")
        .static_parent("root.p2")
        .static_leaf("root.leaf");
    assert_eq!(run(&rules, Some("p1"), &tree), ok("root.p1.bob"));
    assert_eq!(run(&rules, Some("root.p2"), &tree), ok("root.p2.bob"));
    // Nothing requested, an unknown queue, or a leaf: the nested rule passes.
    assert_eq!(run(&rules, None, &tree), ok("root.default"));
    assert_eq!(run(&rules, Some("p3"), &tree), ok("root.default"));
    assert_eq!(run(&rules, Some("leaf"), &tree), ok("root.default"));
    // A parent rule's invalid-name failure still fails the submission.
    assert!(run(&rules, Some(".p1"), &tree).is_err());
}

#[test]
fn nested_user_queue_under_the_default_rule() {
    let parent = default_to(Some("root.parent"), true);
    let rules = [
        rule(Specified, false),
        nested(NestedUserQueue, true, parent),
    ];
    assert_eq!(run(&rules, None, &Tree::default()), ok("root.parent.bob"));
    assert_eq!(
        run(&rules, None, &Tree::default().static_leaf("root.parent")),
        rejected("specified(create=false), nestedUserQueue(parent=default(queue=root.parent))")
    );
    // Under root.default, which the scheduler keeps as a leaf, nothing can be nested.
    let rules = [nested(NestedUserQueue, true, default_to(None, true))];
    let tree = Tree::default().dynamic_leaf("root.default");
    assert!(matches!(
        run(&rules, None, &tree),
        Err(PlacementError::Rejected { .. })
    ));
    assert_eq!(run(&rules, None, &Tree::default()), ok("root.default.bob"));
}

#[test]
fn user_rule_may_have_a_parent_rule() {
    let rules = [nested(User, true, rule(PrimaryGroup, true))];
    assert_eq!(run(&rules, None, &Tree::default()), ok("root.grp.bob"));
}

#[test]
fn primary_group_under_a_parent_rule() {
    let rules = [
        nested(PrimaryGroup, true, rule(SecondaryGroupExistingQueue, false)),
        default_to(None, true),
    ];
    let tree = Tree::default().static_parent("root.other");
    assert_eq!(run(&rules, None, &tree), ok("root.other.grp"));
}

#[test]
fn primary_group_checks_groups_before_its_parent_rule() {
    let rules = [
        nested(PrimaryGroup, true, rule(SecondaryGroupExistingQueue, false)),
        default_to(None, true),
    ];
    let err = place(&rules, None, "bob", &[], &Tree::default()).unwrap_err();
    assert!(matches!(err, PlacementError::NoGroups { .. }));
}

#[test]
fn errors_of_a_parent_rule_fail_the_submission() {
    let rules = [
        nested(NestedUserQueue, true, rule(PrimaryGroup, true)),
        default_to(None, true),
    ];
    let err = place(&rules, None, "bob", &[], &Tree::default()).unwrap_err();
    assert_eq!(
        err,
        PlacementError::NoGroups {
            user: "bob".to_owned()
        }
    );
}

// ---- default and reject --------------------------------------------------------------------

#[test]
fn default_rule_queue_attribute() {
    let tree = Tree::default();
    assert_eq!(
        run(&[default_to(None, true)], None, &tree),
        ok("root.default")
    );
    assert_eq!(
        run(&[default_to(Some(""), true)], None, &tree),
        ok("root.default")
    );
    assert_eq!(
        run(&[default_to(Some("x"), true)], None, &tree),
        ok("root.x")
    );
    assert_eq!(
        run(&[default_to(Some("root.x.y"), true)], None, &tree),
        ok("root.x.y")
    );
    // An invalid attribute falls back to root.default.
    assert_eq!(
        run(&[default_to(Some(" x"), true)], None, &tree),
        ok("root.default")
    );
    assert_eq!(
        run(&[default_to(Some("x."), true)], None, &tree),
        ok("root.default")
    );
}

#[test]
fn default_rule_without_create_needs_a_static_queue() {
    let rules = [default_to(Some("x"), false), rule(Reject, true)];
    assert_eq!(
        run(&rules, None, &Tree::default().static_leaf("root.x")),
        ok("root.x")
    );
    assert_eq!(
        run(&rules, None, &Tree::default().dynamic_leaf("root.x")),
        rejected("default(create=false, queue=root.x), reject")
    );
}

#[test]
fn reject_rule_rejects() {
    let rules = [rule(Specified, true), rule(User, false), rule(Reject, true)];
    let err = run(&rules, None, &Tree::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "rejected by the placement policy: no rule placed the application \
         (rules: specified, user(create=false), reject)"
    );
    // Rules before the reject still decide.
    assert_eq!(run(&rules, Some("a"), &Tree::default()), ok("root.a"));
}

#[test]
fn no_decision_from_any_rule_rejects() {
    let rules = [
        rule(Specified, false),
        nested(
            NestedUserQueue,
            false,
            rule(SecondaryGroupExistingQueue, true),
        ),
    ];
    assert_eq!(
        run(&rules, Some("x"), &Tree::default()),
        rejected("specified(create=false), nestedUserQueue(create=false, parent=secondaryGroupExistingQueue)")
    );
    assert_eq!(run(&[], None, &Tree::default()), rejected("none"));
}

#[test]
fn first_decision_wins() {
    let rules = [rule(User, true), rule(Specified, true)];
    assert_eq!(run(&rules, Some("a"), &Tree::default()), ok("root.bob"));
    let rules = [rule(Specified, true), rule(User, true)];
    assert_eq!(run(&rules, Some("a"), &Tree::default()), ok("root.a"));
}

// ---- the policy used when the file has none (spec §12.3) ------------------------------------

#[test]
fn default_policy_undeclared_pools_and_user_queue() {
    let rules = PlacementRule::default_policy(true, true);
    let tree = Tree::default();
    assert_eq!(run(&rules, Some("x"), &tree), ok("root.x"));
    assert_eq!(run(&rules, None, &tree), ok("root.bob"));
    assert_eq!(run(&rules, Some("default"), &tree), ok("root.bob"));
    assert_eq!(
        place(&rules, None, "first.last", &[], &tree),
        ok("root.first_dot_last")
    );
}

#[test]
fn default_policy_undeclared_pools_shared_default_queue() {
    let rules = PlacementRule::default_policy(true, false);
    let tree = Tree::default();
    assert_eq!(run(&rules, Some("x"), &tree), ok("root.x"));
    assert_eq!(run(&rules, None, &tree), ok("root.default"));
}

#[test]
fn default_policy_declared_pools_only_with_user_queue() {
    let rules = PlacementRule::default_policy(false, true);
    let tree = Tree::default()
        .static_leaf("root.a")
        .dynamic_leaf("root.dyn");
    assert_eq!(run(&rules, Some("a"), &tree), ok("root.a"));
    assert_eq!(run(&rules, Some("x"), &tree), ok("root.default"));
    assert_eq!(run(&rules, Some("dyn"), &tree), ok("root.default"));
    assert_eq!(run(&rules, None, &tree), ok("root.default"));
    let tree = tree.static_leaf("root.bob");
    assert_eq!(run(&rules, None, &tree), ok("root.bob"));
    assert_eq!(run(&rules, Some("x"), &tree), ok("root.bob"));
}

#[test]
fn default_policy_declared_pools_only_shared_default_queue() {
    let rules = PlacementRule::default_policy(false, false);
    let tree = Tree::default()
        .static_leaf("root.a")
        .static_leaf("root.bob");
    assert_eq!(run(&rules, Some("a"), &tree), ok("root.a"));
    assert_eq!(run(&rules, Some("x"), &tree), ok("root.default"));
    assert_eq!(run(&rules, None, &tree), ok("root.default"));
}
