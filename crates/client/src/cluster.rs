//! `weft cluster --list-node-labels` (`-lnl`): the cluster's node labels as `yarn cluster`
//! prints them, from `GET /ws/v1/cluster/get-node-labels` (resource pools are exclusive
//! labels). Sorted by name (Hadoop's order is unspecified; Weft's is deterministic).

use std::io::Write;

use clap::{ArgGroup, Args};
use serde_json::Value;

use crate::fmt;
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

const NODE_LABELS: &str = "/ws/v1/cluster/get-node-labels";

/// Reports on the cluster.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["list_node_labels"])))]
pub struct ClusterArgs {
    /// List the cluster's node labels (resource pools among them).
    #[arg(long = "list-node-labels", alias = "lnl")]
    pub list_node_labels: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

impl Verb for ClusterArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        let answer = rm.get(NODE_LABELS, &[])?;
        if self.conn.json {
            write!(out, "{}", fmt::json_text(&answer))?;
        } else {
            writeln!(out, "{}", node_labels_line(&answer))?;
        }
        Ok(Outcome::Success)
    }
}

/// `Node Labels: <a:exclusivity=true>,<b:exclusivity=false>` from a NodeLabelsInfo answer
/// (wrapped or not; one label may come as a bare object, exclusivity as a string).
pub(crate) fn node_labels_line(answer: &Value) -> String {
    let info = answer.get("nodeLabelsInfo").unwrap_or(answer);
    let mut labels: Vec<(String, bool)> = fmt::items(info.get("nodeLabelInfo"))
        .into_iter()
        .filter_map(|l| {
            let name = l.get("name")?.as_str()?.to_string();
            let exclusive = match l.get("exclusivity") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => !s.eq_ignore_ascii_case("false"),
                _ => true,
            };
            Some((name, exclusive))
        })
        .collect();
    labels.sort();
    let shown: Vec<String> = labels
        .iter()
        .map(|(n, e)| format!("<{n}:exclusivity={e}>"))
        .collect();
    format!("Node Labels: {}", shown.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_print_as_yarn_cluster_prints_them() {
        let answer = json!({"nodeLabelsInfo": {"nodeLabelInfo": [
            {"name": "pool2", "exclusivity": true},
            {"name": "gpu", "exclusivity": "false"},
            {"name": "pool1", "exclusivity": true},
        ]}});
        assert_eq!(
            node_labels_line(&answer),
            "Node Labels: <gpu:exclusivity=false>,<pool1:exclusivity=true>,<pool2:exclusivity=true>"
        );
        let one = json!({"nodeLabelInfo": {"name": "x", "exclusivity": "true"}});
        assert_eq!(node_labels_line(&one), "Node Labels: <x:exclusivity=true>");
        assert_eq!(node_labels_line(&json!({})), "Node Labels: ");
    }
}
