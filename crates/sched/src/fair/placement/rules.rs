//! Rule evaluation (spec §12.1).

use super::names::{assure_root, check_submitted_name, clean_component, normalize_queue_name};
use super::{PlacementError, QueueLookup};
use weft_config::{PlacementRule, PlacementRuleKind};

/// What YARN puts in the submission when the client named no queue.
const YARN_DEFAULT_QUEUE: &str = "default";
const ROOT_DEFAULT: &str = "root.default";

/// The facts of one submission, shared by every rule.
struct Submission<'a> {
    requested: Option<&'a str>,
    user: &'a str,
    groups: &'a [String],
    queues: &'a dyn QueueLookup,
}

/// Where a rule with an optional parent rule puts its component.
enum Base {
    /// No parent rule: directly under `root`.
    Root,
    /// Under the parent rule's queue.
    Under(String),
    /// The parent rule gave no decision or chose an existing leaf: the child gives none either.
    Blocked,
}

/// Places an application: the rules are tried in order and the first decision wins; when no
/// rule decides, the application is rejected.
///
/// `requested` is the queue named at submission (`None` behaves like YARN's filled-in
/// `"default"`), `groups` the user's groups with the primary one first. Returns the full queue
/// name (`root.x.y`), already checked with [`normalize_queue_name`]; whether it may be created as
/// a leaf is left to the caller.
pub(crate) fn place(
    rules: &[PlacementRule],
    requested: Option<&str>,
    user: &str,
    groups: &[String],
    queues: &dyn QueueLookup,
) -> Result<String, PlacementError> {
    let submission = Submission {
        requested,
        user,
        groups,
        queues,
    };
    for rule in rules {
        if let Some(queue) = evaluate(rule, &submission)? {
            // Hadoop accepts inner problems such as `a..b` from a rule and only fails when it
            // creates the queue; the submission is rejected either way, so report it here.
            return normalize_queue_name(&queue);
        }
    }
    Err(PlacementError::Rejected {
        rules: describe_policy(rules),
    })
}

/// One rule's decision: `Ok(None)` means "try the next rule".
fn evaluate(rule: &PlacementRule, s: &Submission<'_>) -> Result<Option<String>, PlacementError> {
    match rule.kind {
        PlacementRuleKind::Specified => specified(rule, s),
        PlacementRuleKind::User | PlacementRuleKind::NestedUserQueue => {
            let base = base(rule, s)?;
            Ok(child(&base, s.user).and_then(|queue| decide(rule, queue, s.queues)))
        }
        PlacementRuleKind::PrimaryGroup => {
            // Hadoop looks the groups up before asking the parent rule, so a user without groups
            // fails even when the parent rule would pass.
            let primary = s.groups.first().ok_or_else(|| PlacementError::NoGroups {
                user: s.user.to_owned(),
            })?;
            let base = base(rule, s)?;
            Ok(child(&base, primary).and_then(|queue| decide(rule, queue, s.queues)))
        }
        PlacementRuleKind::SecondaryGroupExistingQueue => {
            // The create flag is ignored: this rule only ever picks a static queue.
            let base = base(rule, s)?;
            Ok(s.groups
                .iter()
                .filter_map(|group| child(&base, group))
                .find(|queue| is_static(queue, s.queues)))
        }
        PlacementRuleKind::Default => {
            Ok(decide(rule, default_queue(rule.queue.as_deref()), s.queues))
        }
        PlacementRuleKind::Reject => Ok(None),
    }
}

fn specified(rule: &PlacementRule, s: &Submission<'_>) -> Result<Option<String>, PlacementError> {
    let Some(name) = s.requested else {
        return Ok(None);
    };
    // An invalid name fails the submission instead of falling through to the next rule.
    check_submitted_name(name).map_err(|problem| PlacementError::InvalidQueueName {
        name: name.to_owned(),
        problem,
    })?;
    if name == YARN_DEFAULT_QUEUE {
        return Ok(None);
    }
    Ok(decide(rule, assure_root(name), s.queues))
}

/// The `queue` attribute of a `default` rule; an absent, empty or invalid one means
/// `root.default` (the config loader only logs a bad value, so it is re-checked here).
fn default_queue(configured: Option<&str>) -> String {
    match configured {
        Some(name) if !name.is_empty() && check_submitted_name(name).is_ok() => assure_root(name),
        _ => ROOT_DEFAULT.to_owned(),
    }
}

/// Runs the rule's parent rule, if any. `specified`, `default` and `reject` never take one (the
/// config loader refuses it), so a parent on them is ignored.
fn base(rule: &PlacementRule, s: &Submission<'_>) -> Result<Base, PlacementError> {
    let Some(parent) = rule.parent.as_deref() else {
        return Ok(Base::Root);
    };
    Ok(match evaluate(parent, s)? {
        None => Base::Blocked,
        Some(queue) if s.queues.is_leaf(&queue) == Some(true) => Base::Blocked,
        Some(queue) => Base::Under(queue),
    })
}

/// The queue for a user or group name under `base`, or `None` when the parent rule blocked.
fn child(base: &Base, raw_component: &str) -> Option<String> {
    let component = clean_component(raw_component);
    match base {
        Base::Root => Some(assure_root(&component)),
        Base::Under(parent) => Some(format!("{parent}.{component}")),
        Base::Blocked => None,
    }
}

/// A rule decides its queue if it may create it, or if the queue is a static one.
fn decide(rule: &PlacementRule, queue: String, queues: &dyn QueueLookup) -> Option<String> {
    (rule.create || is_static(&queue, queues)).then_some(queue)
}

fn is_static(queue: &str, queues: &dyn QueueLookup) -> bool {
    queues.exists(queue) && queues.is_configured(queue)
}

/// Renders the policy for a rejection message, e.g. `specified, user(create=false), reject`.
fn describe_policy(rules: &[PlacementRule]) -> String {
    if rules.is_empty() {
        return "none".to_owned();
    }
    rules
        .iter()
        .map(describe_rule)
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_rule(rule: &PlacementRule) -> String {
    let mut attributes = Vec::new();
    let create_matters = !matches!(
        rule.kind,
        PlacementRuleKind::SecondaryGroupExistingQueue | PlacementRuleKind::Reject
    );
    if create_matters && !rule.create {
        attributes.push("create=false".to_owned());
    }
    if rule.kind == PlacementRuleKind::Default {
        let queue = default_queue(rule.queue.as_deref());
        if queue != ROOT_DEFAULT {
            attributes.push(format!("queue={queue}"));
        }
    }
    if let Some(parent) = rule.parent.as_deref() {
        attributes.push(format!("parent={}", describe_rule(parent)));
    }
    if attributes.is_empty() {
        rule.kind.name().to_owned()
    } else {
        format!("{}({})", rule.kind.name(), attributes.join(", "))
    }
}
