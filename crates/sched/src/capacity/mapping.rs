//! Queue mappings (capacity spec §3.12): `yarn.scheduler.capacity.queue-mappings`, the
//! legacy `u:<user>:<queue>` / `g:<group>:<queue>` list, as Hadoop 3.3's user-group placement
//! rule reads it.
//!
//! Entries are tried left to right. A `u:%user:...` entry matches every user and ends the
//! search whatever it yields: when its group placeholder names no queue, the app keeps the
//! queue it asked for (Hadoop returns "no placement" from inside the loop rather than trying
//! the next entry; kept, since admins rely on the first `%user` entry being final). A
//! `u:<name>:...` entry matches that user, a `g:<group>:...` entry any member of the group.
//! The queue part may be `parent.leaf`; placeholders:
//! * `%user`: the submitting user's name;
//! * `%primary_group`: `root.<primary group>`, only if that queue exists (else no placement);
//! * `%secondary_group`: the first of the user's other groups that names a queue (short name
//!   or path), as that queue's path;
//! * `%primary_group.%user` / `%secondary_group.%user`: `root.<group>.<user>` when the group
//!   names a queue. The leaf itself need not exist: the submission is then refused as any
//!   submission to an unknown queue (auto-created leaves are not modelled).
//!
//! A mapping is used only when the app asked for `default` (or for nothing), asked for the
//! mapped leaf itself, or `queue-mappings-override.enable` is true.
//!
//! Groups come from the scheduler's group mapping, primary group first. Reading the groups of
//! a user who has none fails the submission, as Hadoop's group service does ("No groups found
//! for user"); only the entries that need groups read them, so `u:` entries of other users
//! before the first group-reading entry still apply.

use weft_config::capacity::{MappingKind, QueueMapping};
use weft_types::AppId;

use super::CapacityEngine;

/// The placeholders of a mapping's queue part.
const USER: &str = "%user";
const PRIMARY_GROUP: &str = "%primary_group";
const SECONDARY_GROUP: &str = "%secondary_group";

/// Where a mapping placed an app: a leaf name, under a parent path when the mapping gave one.
#[derive(Debug, PartialEq, Eq)]
struct Placement {
    parent: Option<String>,
    leaf: String,
}

impl Placement {
    fn new(parent: Option<&str>, leaf: impl Into<String>) -> Placement {
        Placement {
            parent: parent.filter(|p| !p.is_empty()).map(str::to_string),
            leaf: leaf.into(),
        }
    }

    /// The name to resolve: `parent.leaf`, or the leaf alone (a short name or a path).
    fn queue_name(&self) -> String {
        match &self.parent {
            Some(p) => format!("{p}.{}", self.leaf),
            None => self.leaf.clone(),
        }
    }
}

/// A mapping's queue part split as Hadoop's QueueMapping does: the parent is everything before
/// the last dot.
fn split_queue(queue: &str) -> (Option<&str>, &str) {
    match queue.rsplit_once('.') {
        Some((parent, leaf)) => (Some(parent), leaf),
        None => (None, queue),
    }
}

impl CapacityEngine {
    /// The queue the mappings send `user`'s app to, given the queue it asked for (`default`
    /// when none); `None` keeps the requested queue. `Err` is the rejection text.
    pub(crate) fn mapped_queue(
        &self,
        app: AppId,
        user: &str,
        requested: &str,
    ) -> Result<Option<String>, String> {
        let globals = &self.rules.file.globals;
        if globals.queue_mappings.is_empty() {
            return Ok(None);
        }
        let placement = self
            .first_mapping(user, &globals.queue_mappings)
            .map_err(|why| {
                format!("Failed to submit application {app} submitted by user {user} reason: {why}")
            })?;
        Ok(placement
            .filter(|p| {
                requested == "default" || requested == p.leaf || globals.queue_mappings_override
            })
            .map(|p| p.queue_name()))
    }

    fn first_mapping(
        &self,
        user: &str,
        mappings: &[QueueMapping],
    ) -> Result<Option<Placement>, String> {
        for m in mappings {
            let (parent, leaf) = split_queue(&m.queue);
            match m.kind {
                MappingKind::User if m.source == USER => {
                    return self.for_any_user(user, parent, leaf);
                }
                MappingKind::User if m.source == user => {
                    return Ok(match leaf {
                        PRIMARY_GROUP => Some(Placement::new(parent, self.primary_group(user)?)),
                        SECONDARY_GROUP => self
                            .secondary_group(user)?
                            .map(|g| Placement::new(parent, g)),
                        _ => Some(Placement::new(parent, leaf)),
                    });
                }
                MappingKind::User => {}
                MappingKind::Group => {
                    if self.groups_of(user)?.contains(&m.source) {
                        let leaf = if leaf == USER { user } else { leaf };
                        return Ok(Some(Placement::new(parent, leaf)));
                    }
                }
            }
        }
        Ok(None)
    }

    /// A `u:%user:<queue>` entry.
    fn for_any_user(
        &self,
        user: &str,
        parent: Option<&str>,
        leaf: &str,
    ) -> Result<Option<Placement>, String> {
        Ok(match (parent, leaf) {
            (Some(PRIMARY_GROUP), USER) => {
                let group = self.primary_group(user)?;
                self.under_group(user, Some(group))
            }
            (Some(SECONDARY_GROUP), USER) => {
                let group = self.secondary_group(user)?;
                self.under_group(user, group)
            }
            (_, USER) => Some(Placement::new(parent, user)),
            (_, PRIMARY_GROUP) => {
                let path = format!("root.{}", self.primary_group(user)?);
                self.queues
                    .lookup(&path)
                    .map(|_| Placement::new(parent, path))
            }
            (_, SECONDARY_GROUP) => self
                .secondary_group(user)?
                .and_then(|g| self.resolve_queue(g))
                .map(|q| Placement::new(parent, self.queues.get(q).name.clone())),
            _ => Some(Placement::new(parent, leaf)),
        })
    }

    /// `%primary_group.%user` / `%secondary_group.%user`: the user's leaf under
    /// `root.<group>`, when the group names a queue.
    fn under_group(&self, user: &str, group: Option<&str>) -> Option<Placement> {
        let group = group?;
        self.resolve_queue(group)?;
        Some(Placement::new(Some(&format!("root.{group}")), user))
    }

    fn groups_of(&self, user: &str) -> Result<&[String], String> {
        match self.groups.get(user) {
            Some(groups) if !groups.is_empty() => Ok(groups),
            _ => Err(format!("No groups found for user {user}")),
        }
    }

    fn primary_group(&self, user: &str) -> Result<&str, String> {
        Ok(self.groups_of(user)?[0].as_str())
    }

    /// The first group after the primary one that names a queue.
    fn secondary_group(&self, user: &str) -> Result<Option<&str>, String> {
        Ok(self.groups_of(user)?[1..]
            .iter()
            .find(|g| self.resolve_queue(g).is_some())
            .map(String::as_str))
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::split_queue;

    #[test]
    fn the_parent_is_everything_before_the_last_dot() {
        assert_eq!(split_queue("a"), (None, "a"));
        assert_eq!(split_queue("root.a.b"), (Some("root.a"), "b"));
        assert_eq!(
            split_queue("%primary_group.%user"),
            (Some("%primary_group"), "%user")
        );
    }
}
