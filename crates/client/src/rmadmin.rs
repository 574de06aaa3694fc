//! `weft rmadmin`: `-refreshQueues` (Weft's admin endpoint `PUT
//! /ws/v1/cluster/admin/refresh-queues` re-reads the allocation file; silent on success, like
//! `yarn rmadmin`), `-getGroups [user]` (`GET /ws/v1/cluster/admin/groups`),
//! `-refreshUserToGroupsMappings` (`PUT /ws/v1/cluster/admin/refresh-user-groups`: the RM
//! forgets its cached group lookups), and
//! `-refreshNodes`, which says why it has nothing to do (the RM has no include/exclude lists);
//! the node-label verbs `-addToClusterNodeLabels`, `-removeFromClusterNodeLabels` and
//! `-replaceLabelsOnNode` over Hadoop's node-label REST endpoints (refusals on stderr, exit 255).

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

/// The admin endpoint that empties the RM's group cache (not part of Hadoop's REST API).
const REFRESH_USER_GROUPS: &str = "/ws/v1/cluster/admin/refresh-user-groups";

/// Administers the ResourceManager.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["refresh_queues", "refresh_nodes", "refresh_user_groups", "get_groups", "add_labels", "remove_labels", "replace_labels"])))]
pub struct RmAdminArgs {
    /// Re-read the scheduler's queue configuration (the fair allocation file).
    #[arg(long = "refreshQueues")]
    pub refresh_queues: bool,
    /// Re-read the include/exclude host lists (Weft's RM has none: says so and fails).
    #[arg(long = "refreshNodes")]
    pub refresh_nodes: bool,
    /// Make the RM look users' groups up afresh (it caches them for
    /// hadoop.security.groups.cache.secs).
    #[arg(long = "refreshUserToGroupsMappings")]
    pub refresh_user_groups: bool,
    /// Print the groups the RM maps a user to [default: the current user].
    #[arg(long = "getGroups", value_name = "username", num_args = 0..=1, default_missing_value = "")]
    pub get_groups: Option<String>,
    /// Add node labels: "a(exclusive=true),b" (exclusive unless said otherwise).
    #[arg(
        long = "addToClusterNodeLabels",
        value_name = "label1(exclusive=true),label2"
    )]
    pub add_labels: Option<String>,
    /// Remove node labels (and their node mappings): "a,b".
    #[arg(long = "removeFromClusterNodeLabels", value_name = "label1,label2")]
    pub remove_labels: Option<String>,
    /// Replace nodes' labels: "host1[:port]=label1 host2=label2"; a node without a label is
    /// cleared. All or nothing.
    #[arg(
        long = "replaceLabelsOnNode",
        value_name = "node1[:port]=label1 node2=label2"
    )]
    pub replace_labels: Option<String>,
    /// With -replaceLabelsOnNode: fail on unknown nodes (Weft always does).
    #[arg(long = "failOnUnknownNodes")]
    pub fail_on_unknown_nodes: bool,
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
        if let Some(spec) = &self.add_labels {
            let labels = parse_add_labels(spec)?;
            let body = json!({"nodeLabelInfo": labels.iter()
                .map(|(name, exclusive)| json!({"name": name, "exclusivity": exclusive}))
                .collect::<Vec<_>>()});
            return self.label_call("addToClusterNodeLabels", ADD_LABELS, &[], Some(&body));
        }
        if let Some(spec) = &self.remove_labels {
            let names = parse_label_list(spec)?;
            let query: Vec<(&str, String)> = names.into_iter().map(|n| ("labels", n)).collect();
            return self.label_call("removeFromClusterNodeLabels", REMOVE_LABELS, &query, None);
        }
        if let Some(spec) = &self.replace_labels {
            let mapping = parse_node_to_labels(spec)?;
            let body = json!({"nodeToLabels": mapping.iter()
                .map(|(node, labels)| json!({"nodeId": node, "labels": labels}))
                .collect::<Vec<_>>()});
            return self.label_call("replaceLabelsOnNode", REPLACE_LABELS, &[], Some(&body));
        }
        let (command, path) = if self.refresh_user_groups {
            ("refreshUserToGroupsMappings", REFRESH_USER_GROUPS)
        } else {
            ("refreshQueues", REFRESH_QUEUES)
        };
        let rm = self.conn.connect()?;
        match rm.put(path, &json!({})) {
            Ok((_, answer)) => {
                if self.conn.json {
                    let v = if answer.is_null() { json!({}) } else { answer };
                    write!(out, "{}", fmt::json_text(&v))?;
                }
                Ok(Outcome::Success)
            }
            Err(e) => {
                eprintln!("{command}: {}", refresh_failure(&e, &rm.url(path)));
                Ok(Outcome::Failed)
            }
        }
    }
}

/// Hadoop's node-label endpoints.
const ADD_LABELS: &str = "/ws/v1/cluster/add-node-labels";
const REMOVE_LABELS: &str = "/ws/v1/cluster/remove-node-labels";
const REPLACE_LABELS: &str = "/ws/v1/cluster/replace-node-to-labels";

impl RmAdminArgs {
    /// One node-label mutation: silent on success as `yarn rmadmin`; a refusal on stderr as
    /// `<command>: <message>`.
    fn label_call(
        &self,
        command: &str,
        path: &str,
        query: &[(&str, String)],
        body: Option<&serde_json::Value>,
    ) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        match rm.post(path, query, body) {
            Ok(_) => Ok(Outcome::Success),
            Err(e) => {
                let why = match e.status() {
                    Some(_) => e.remote_message(),
                    None => e.to_string(),
                };
                eprintln!("{command}: {why}");
                Ok(Outcome::Failed)
            }
        }
    }
}

/// `a(exclusive=true),b(exclusive=false),c` -> names and exclusivity (true by default).
pub(crate) fn parse_add_labels(spec: &str) -> Result<Vec<(String, bool)>, ClientError> {
    let bad = |item: &str, why: &str| {
        ClientError::Usage(format!(
            "-addToClusterNodeLabels: '{item}' {why}; expected label or label(exclusive=true|false), comma-separated"
        ))
    };
    let mut labels = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, exclusive) = match item.split_once('(') {
            None => (item, true),
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| bad(item, "has no closing parenthesis"))?;
                let value = inner
                    .split_once('=')
                    .filter(|(k, _)| k.trim() == "exclusive")
                    .map(|(_, v)| v.trim())
                    .ok_or_else(|| bad(item, "names no exclusive=..."))?;
                let exclusive = match value.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad(item, "has an exclusivity that is not true or false")),
                };
                (name.trim(), exclusive)
            }
        };
        if name.is_empty() {
            return Err(bad(item, "has no label name"));
        }
        labels.push((name.to_string(), exclusive));
    }
    if labels.is_empty() {
        return Err(ClientError::Usage(
            "-addToClusterNodeLabels: no labels given".into(),
        ));
    }
    Ok(labels)
}

/// `a,b` -> the labels, trimmed.
pub(crate) fn parse_label_list(spec: &str) -> Result<Vec<String>, ClientError> {
    let names: Vec<String> = spec
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(ClientError::Usage(
            "-removeFromClusterNodeLabels: no labels given".into(),
        ));
    }
    Ok(names)
}

/// `host1:port=a host2=b host3` (spaces or newlines between entries; a node without `=label`
/// is cleared) -> nodes and their labels.
pub(crate) fn parse_node_to_labels(spec: &str) -> Result<Vec<(String, Vec<String>)>, ClientError> {
    let mut mapping = Vec::new();
    for item in spec.split_whitespace() {
        let (node, labels) = match item.split_once('=') {
            None => (item, Vec::new()),
            Some((node, labels)) => (
                node,
                labels
                    .split(',')
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
        };
        if node.is_empty() {
            return Err(ClientError::Usage(format!(
                "-replaceLabelsOnNode: '{item}' names no node; expected node1[:port]=label1 node2=label2"
            )));
        }
        mapping.push((node.to_string(), labels));
    }
    if mapping.is_empty() {
        return Err(ClientError::Usage(
            "-replaceLabelsOnNode: no node-to-labels mapping given".into(),
        ));
    }
    Ok(mapping)
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
            "the RM at {url} has no {} endpoint ({}); it is Weft's admin REST extension, so this RM is not Weft (a YARN RM takes `yarn rmadmin` on its admin RPC port)",
            url.rsplit('/').next().unwrap_or(url),
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
    fn label_arguments_parse_as_hadoop_writes_them() {
        assert_eq!(
            parse_add_labels("a(exclusive=true), b(exclusive=false),c").unwrap(),
            [
                ("a".to_string(), true),
                ("b".to_string(), false),
                ("c".to_string(), true)
            ]
        );
        for bad in [
            "a(exclusive=maybe)",
            "a(exclusive=true",
            "(exclusive=true)",
            " , ",
        ] {
            assert!(parse_add_labels(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_label_list(" a,b ,").unwrap(), ["a", "b"]);
        assert!(parse_label_list(",").is_err());
        assert_eq!(
            parse_node_to_labels("h1:8041=pool1  h2=pool2\nh3").unwrap(),
            [
                ("h1:8041".to_string(), vec!["pool1".to_string()]),
                ("h2".to_string(), vec!["pool2".to_string()]),
                ("h3".to_string(), Vec::new()),
            ]
        );
        assert!(parse_node_to_labels("=x").is_err());
        assert!(parse_node_to_labels("  ").is_err());
    }

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
