//! `weft rmadmin`: `-refreshQueues` (Weft's admin endpoint `PUT
//! /ws/v1/cluster/admin/refresh-queues` re-reads the allocation file; silent on success, like
//! `yarn rmadmin`), `-getGroups [user]` (`GET /ws/v1/cluster/admin/groups`), and
//! `-refreshNodes`, which says why it has nothing to do (the RM has no include/exclude lists).

use std::io::Write;

use clap::{ArgGroup, Args};
use serde_json::json;

use crate::fmt;
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

/// The admin endpoint (not part of Hadoop's REST API).
const REFRESH_QUEUES: &str = "/ws/v1/cluster/admin/refresh-queues";

/// The admin endpoint for a user's groups (not part of Hadoop's REST API).
const GROUPS: &str = "/ws/v1/cluster/admin/groups";

/// Administers the ResourceManager.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["refresh_queues", "refresh_nodes", "get_groups"])))]
pub struct RmAdminArgs {
    /// Re-read the scheduler's queue configuration (the fair allocation file).
    #[arg(long = "refreshQueues")]
    pub refresh_queues: bool,
    /// Re-read the include/exclude host lists (Weft's RM has none: says so and fails).
    #[arg(long = "refreshNodes")]
    pub refresh_nodes: bool,
    /// Print the groups the RM maps a user to [default: the current user].
    #[arg(long = "getGroups", value_name = "username", num_args = 0..=1, default_missing_value = "")]
    pub get_groups: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

impl Verb for RmAdminArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        if self.refresh_nodes {
            eprintln!("refreshNodes: {NO_HOST_LISTS}");
            return Ok(Outcome::Failed);
        }
        if let Some(user) = &self.get_groups {
            return self.get_groups(user, out);
        }
        let rm = self.conn.connect()?;
        match rm.put(REFRESH_QUEUES, &json!({})) {
            Ok((_, answer)) => {
                if self.conn.json {
                    let v = if answer.is_null() { json!({}) } else { answer };
                    write!(out, "{}", fmt::json_text(&v))?;
                }
                Ok(Outcome::Success)
            }
            Err(e) => {
                eprintln!(
                    "refreshQueues: {}",
                    refresh_failure(&e, &rm.url(REFRESH_QUEUES))
                );
                Ok(Outcome::Failed)
            }
        }
    }
}

/// Why `-refreshNodes` has nothing to do here.
const NO_HOST_LISTS: &str = "this ResourceManager has no include/exclude host lists \
(yarn.resourcemanager.nodes.include-path / exclude-path are not supported): a NodeManager joins \
by registering and leaves by stopping (a silent one is marked LOST after the NM expiry)";

impl RmAdminArgs {
    /// `-getGroups`: `user : group1 group2`, as `yarn rmadmin -getGroups` prints it.
    fn get_groups(&self, user: &str, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let user = if user.is_empty() {
            crate::login_user().ok_or_else(|| {
                ClientError::Usage(
                    "cannot tell the current user: give -getGroups <username>".into(),
                )
            })?
        } else {
            user.to_string()
        };
        let rm = self.conn.connect()?;
        let answer = match rm.get(GROUPS, &[("user", user.clone())]) {
            Ok(v) => v,
            Err(e) => {
                let why = match e.status() {
                    Some(404) | Some(405) => format!(
                        "the RM at {} has no groups endpoint (Weft's admin REST extension), so it is not Weft",
                        rm.url(GROUPS)
                    ),
                    Some(_) => e.remote_message(),
                    None => e.to_string(),
                };
                eprintln!("getGroups: {why}");
                return Ok(Outcome::Failed);
            }
        };
        if self.conn.json {
            write!(out, "{}", fmt::json_text(&answer))?;
            return Ok(Outcome::Success);
        }
        let groups: Vec<&str> = answer
            .pointer("/groups/groups")
            .and_then(serde_json::Value::as_array)
            .map(|g| g.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        let mut line = format!("{user} :");
        for g in groups {
            line.push(' ');
            line.push_str(g);
        }
        writeln!(out, "{line}")?;
        Ok(Outcome::Success)
    }
}

/// What to tell the user when the refresh failed: a missing endpoint (an RM that is not Weft,
/// e.g. a real YARN RM, whose admin commands go over its admin RPC port) gets its own message.
pub(crate) fn refresh_failure(e: &ClientError, url: &str) -> String {
    match e.status() {
        Some(404) | Some(405) => format!(
            "the RM at {url} has no refresh-queues endpoint ({}); it is Weft's admin REST extension, so this RM is not Weft (a YARN RM takes `yarn rmadmin -refreshQueues` on its admin RPC port)",
            e.remote_message()
        ),
        // A refused file: the RM keeps running the queues it had, which the user must know.
        Some(400) => format!(
            "{}; the ResourceManager keeps the previous queue configuration",
            e.remote_message()
        ),
        Some(_) => e.remote_message(),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_their_cause() {
        let url = "http://rm:8088/ws/v1/cluster/admin/refresh-queues";
        let missing = ClientError::Http {
            url: url.into(),
            status: 404,
            body: String::new(),
        };
        let m = refresh_failure(&missing, url);
        assert!(m.contains("has no refresh-queues endpoint"), "{m}");
        let bad = ClientError::Remote {
            url: url.into(),
            status: 400,
            exception: "BadRequestException".into(),
            message: "fair-scheduler.xml line 3: unknown element".into(),
        };
        assert_eq!(
            refresh_failure(&bad, url),
            "fair-scheduler.xml line 3: unknown element; the ResourceManager keeps the previous queue configuration"
        );
    }
}
