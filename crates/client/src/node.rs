//! `weft node`: the cluster's NodeManagers, from `/ws/v1/cluster/nodes[/{id}]`.

use std::io::Write;

use clap::{ArgGroup, Args};
use serde_json::{json, Value};

use crate::fmt::{self, int, list, text};
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

use weft_types::YARN_NODE_STATES as NODE_STATES;

/// Lists nodes or reports on one.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["list", "status"])))]
pub struct NodeArgs {
    /// List nodes (RUNNING ones unless -all or -states).
    #[arg(long)]
    pub list: bool,
    /// With -list: nodes in every state.
    #[arg(long, alias = "ALL", alias = "All")]
    pub all: bool,
    /// With -list: comma list of node states to show.
    #[arg(long, value_name = "States", value_delimiter = ',')]
    pub states: Vec<String>,
    /// With -list: resources and utilization under each node.
    #[arg(long = "showDetails")]
    pub show_details: bool,
    /// Print the report of this node (host:port).
    #[arg(long, value_name = "NodeId")]
    pub status: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// The node states `-list` shows; `None` for every state.
pub(crate) fn list_states(
    all: bool,
    states: &[String],
) -> Result<Option<Vec<String>>, ClientError> {
    if all {
        return Ok(None);
    }
    let asked: Vec<String> = states
        .iter()
        .map(|s| s.trim().to_uppercase())
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = asked.iter().find(|s| !NODE_STATES.contains(&s.as_str())) {
        return Err(ClientError::Usage(format!(
            "The node state {bad} is invalid.\nThe valid node state can be one of the following: {}.",
            NODE_STATES.join(",")
        )));
    }
    Ok(Some(if asked.is_empty() {
        vec!["RUNNING".to_string()]
    } else {
        asked
    }))
}

impl Verb for NodeArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        if self.list {
            let states = list_states(self.all, &self.states)?;
            let query: Vec<(&str, String)> =
                states.iter().map(|s| ("states", s.join(","))).collect();
            let answer = rm.get("/ws/v1/cluster/nodes", &query)?;
            let mut nodes: Vec<Value> = list(&answer, "nodes", "node")
                .into_iter()
                .filter(|n| {
                    states
                        .as_ref()
                        .is_none_or(|s| s.contains(&text(n, "state").to_uppercase()))
                })
                .cloned()
                .collect();
            nodes.sort_by_key(|n| text(n, "id"));
            if self.conn.json {
                write!(
                    out,
                    "{}",
                    fmt::json_text(&json!({"nodes": {"node": nodes}}))
                )?;
            } else {
                write!(out, "{}", node_table(&nodes, self.show_details))?;
            }
            return Ok(Outcome::Success);
        }
        let Some(id) = &self.status else {
            return Err(ClientError::Usage("give -list or -status".into()));
        };
        match rm.get(&format!("/ws/v1/cluster/nodes/{id}"), &[]) {
            Ok(v) => {
                let node = v.get("node").cloned().unwrap_or(v);
                if self.conn.json {
                    write!(out, "{}", fmt::json_text(&json!({ "node": node })))?;
                } else {
                    write!(out, "{}", node_report(&node))?;
                }
                Ok(Outcome::Success)
            }
            Err(e) if e.status() == Some(404) => {
                eprintln!("{e}");
                eprintln!("Could not find the node report for node id : {id}");
                Ok(Outcome::Failed)
            }
            Err(e) => Err(e),
        }
    }
}

/// The `-list` output.
pub(crate) fn node_table(nodes: &[Value], details: bool) -> String {
    let row = |c: [&str; 4]| format!("{:>16}\t{:>15}\t{:>17}\t{:>28}\n", c[0], c[1], c[2], c[3]);
    let mut s = format!("Total Nodes:{}\n", nodes.len());
    s += &row([
        "Node-Id",
        "Node-State",
        "Node-Http-Address",
        "Number-of-Running-Containers",
    ]);
    for n in nodes {
        s += &row([
            &text(n, "id"),
            &text(n, "state"),
            &text(n, "nodeHTTPAddress"),
            &int(n, "numContainers").to_string(),
        ]);
        if details {
            let (used_mb, total_mb) = memory(n);
            let (used_vc, total_vc) = vcores(n);
            s += "Detailed Node Information :\n";
            s += &format!("\tConfigured Resources : <memory:{total_mb}, vCores:{total_vc}>\n");
            s += &format!("\tAllocated Resources : <memory:{used_mb}, vCores:{used_vc}>\n");
            s += &format!("\tResource Utilization by Node : {}\n", node_use(n));
            s += &format!(
                "\tResource Utilization by Containers : {}\n",
                containers_use(n)
            );
            s += &format!("\tNode-Labels : {}\n", labels(n));
        }
    }
    s
}

/// (used, total) memory in MB.
fn memory(n: &Value) -> (u64, u64) {
    let used = int(n, "usedMemoryMB");
    let total = n
        .get("totalResource")
        .map(|t| int(t, "memory"))
        .filter(|t| *t > 0)
        .unwrap_or(used + int(n, "availMemoryMB"));
    (used, total)
}

/// (used, total) vcores.
fn vcores(n: &Value) -> (u64, u64) {
    let used = int(n, "usedVirtualCores");
    let total = n
        .get("totalResource")
        .map(|t| int(t, "vCores"))
        .filter(|t| *t > 0)
        .unwrap_or(used + int(n, "availableVirtualCores"));
    (used, total)
}

/// A float as Java's `String.valueOf(float)` prints it (always a fraction digit).
fn java_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

fn node_use(n: &Value) -> String {
    match n.get("resourceUtilization") {
        Some(u) if u.is_object() => format!(
            "PMem:{} MB, VMem:{} MB, VCores:{}",
            int(u, "nodePhysicalMemoryMB"),
            int(u, "nodeVirtualMemoryMB"),
            java_float(fmt::num(u, "nodeCPUUsage"))
        ),
        _ => String::new(),
    }
}

fn containers_use(n: &Value) -> String {
    match n.get("resourceUtilization") {
        Some(u) if u.is_object() => format!(
            "PMem:{} MB, VMem:{} MB, VCores:{}",
            int(u, "aggregatedContainersPhysicalMemoryMB"),
            int(u, "aggregatedContainersVirtualMemoryMB"),
            java_float(fmt::num(u, "containersCPUUsage"))
        ),
        _ => String::new(),
    }
}

fn labels(n: &Value) -> String {
    let mut l: Vec<String> = fmt::items(n.get("nodeLabels"))
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    l.sort();
    l.join(",")
}

/// The `-status` report.
pub(crate) fn node_report(n: &Value) -> String {
    let (used_mb, total_mb) = memory(n);
    let (used_vc, total_vc) = vcores(n);
    let health = int(n, "lastHealthUpdate");
    let lines = [
        "Node Report : ".to_string(),
        format!("\tNode-Id : {}", text(n, "id")),
        format!("\tRack : {}", text(n, "rack")),
        format!("\tNode-State : {}", text(n, "state")),
        format!("\tNode-Http-Address : {}", text(n, "nodeHTTPAddress")),
        format!(
            "\tLast-Health-Update : {}",
            if health == 0 {
                "N/A".to_string()
            } else {
                fmt::health_time(health)
            }
        ),
        format!("\tHealth-Report : {}", text(n, "healthReport")),
        format!("\tContainers : {}", int(n, "numContainers")),
        format!("\tMemory-Used : {used_mb}MB"),
        format!("\tMemory-Capacity : {total_mb}MB"),
        format!("\tCPU-Used : {used_vc} vcores"),
        format!("\tCPU-Capacity : {total_vc} vcores"),
        format!("\tNode-Labels : {}", labels(n)),
        format!("\tResource Utilization by Node : {}", node_use(n)),
        format!(
            "\tResource Utilization by Containers : {}",
            containers_use(n)
        ),
    ];
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({
            "rack": "/default-rack", "state": "RUNNING", "id": "nm-1:45454",
            "nodeHostName": "nm-1", "nodeHTTPAddress": "nm-1:8042",
            "lastHealthUpdate": 1700000000123u64, "healthReport": "", "numContainers": 2,
            "usedMemoryMB": 4096, "availMemoryMB": 12288, "usedVirtualCores": 2,
            "availableVirtualCores": 6, "nodeLabels": [],
            "resourceUtilization": {
                "nodePhysicalMemoryMB": 6000, "nodeVirtualMemoryMB": 6000, "nodeCPUUsage": 0.35,
                "aggregatedContainersPhysicalMemoryMB": 3500,
                "aggregatedContainersVirtualMemoryMB": 4000, "containersCPUUsage": 0.25
            }
        })
    }

    #[test]
    fn list_table_matches_yarn() {
        let mut idle = sample();
        idle["id"] = json!("nm-2:45454");
        idle["nodeHTTPAddress"] = json!("nm-2:8042");
        idle["numContainers"] = json!(0);
        assert_eq!(
            node_table(&[sample(), idle], false),
            "Total Nodes:2\n         Node-Id\t     Node-State\tNode-Http-Address\tNumber-of-Running-Containers\n      nm-1:45454\t        RUNNING\t        nm-1:8042\t                           2\n      nm-2:45454\t        RUNNING\t        nm-2:8042\t                           0\n"
        );
        let detailed = node_table(&[sample()], true);
        assert!(detailed.ends_with("Detailed Node Information :\n\tConfigured Resources : <memory:16384, vCores:8>\n\tAllocated Resources : <memory:4096, vCores:2>\n\tResource Utilization by Node : PMem:6000 MB, VMem:6000 MB, VCores:0.35\n\tResource Utilization by Containers : PMem:3500 MB, VMem:4000 MB, VCores:0.25\n\tNode-Labels : \n"), "{detailed}");
    }

    #[test]
    fn status_report_matches_yarn() {
        assert_eq!(
            node_report(&sample()),
            "Node Report : \n\tNode-Id : nm-1:45454\n\tRack : /default-rack\n\tNode-State : RUNNING\n\tNode-Http-Address : nm-1:8042\n\tLast-Health-Update : Tue 14/Nov/23 10:13:20:123UTC\n\tHealth-Report : \n\tContainers : 2\n\tMemory-Used : 4096MB\n\tMemory-Capacity : 16384MB\n\tCPU-Used : 2 vcores\n\tCPU-Capacity : 8 vcores\n\tNode-Labels : \n\tResource Utilization by Node : PMem:6000 MB, VMem:6000 MB, VCores:0.35\n\tResource Utilization by Containers : PMem:3500 MB, VMem:4000 MB, VCores:0.25\n"
        );
    }

    #[test]
    fn states_for_list() {
        assert_eq!(list_states(true, &[]).expect("ok"), None);
        assert_eq!(
            list_states(false, &[]).expect("ok"),
            Some(vec!["RUNNING".to_string()])
        );
        assert_eq!(
            list_states(false, &["lost".into(), "new".into()]).expect("ok"),
            Some(vec!["LOST".to_string(), "NEW".to_string()])
        );
        let e = list_states(false, &["X".into()]).expect_err("invalid");
        assert!(e.to_string().starts_with("The node state X is invalid."));
    }
}
