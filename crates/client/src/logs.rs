//! `weft logs -applicationId ID`: container logs read from the NodeManagers' web services
//! (`/ws/v1/node/apps/{app}` for the containers, `/containers/{cid}/logs` for the files,
//! `/containerlogs/{cid}/{file}` for the text), printed in `yarn logs`' 3.x layout.

use std::io::Write;

use clap::Args;
use serde_json::{json, Value};

use crate::application::FINAL_STATES;
use crate::fmt::{self, int, list, text};
use crate::rest::{Connection, Rm};
use crate::{address, ClientError, Outcome, Verb};

/// Prints the logs of an application's containers.
#[derive(Args, Debug)]
pub struct LogsArgs {
    /// The application whose logs to print.
    #[arg(long = "applicationId", value_name = "ApplicationId", required = true)]
    pub application_id: Option<String>,
    /// Only this container.
    #[arg(long = "containerId", value_name = "ContainerId")]
    pub container_id: Option<String>,
    /// Only containers on this node (host:port, the NodeManager's id).
    #[arg(long = "nodeAddress", value_name = "NodeId")]
    pub node_address: Option<String>,
    /// Accepted for YARN compatibility (logs are read from the NodeManagers as any user).
    #[arg(long = "appOwner", value_name = "User")]
    pub app_owner: Option<String>,
    /// Comma list of log file names to print (ALL or * for every file).
    #[arg(long = "log_files", value_name = "Files", value_delimiter = ',')]
    pub log_files: Vec<String>,
    /// Print only this many bytes of each file: the first N, or the last |N| when negative.
    #[arg(long, value_name = "Bytes", allow_negative_numbers = true)]
    pub size: Option<i64>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// One log file of a container, as the NM lists it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LogFile {
    pub(crate) name: String,
    pub(crate) size: u64,
    pub(crate) modified: String,
}

/// The log files of one container on one node.
#[derive(Debug, PartialEq)]
pub(crate) struct ContainerLogs {
    pub(crate) container: String,
    pub(crate) node: String,
    pub(crate) aggregation: String,
    pub(crate) files: Vec<LogFile>,
}

/// The container ids of `/ws/v1/node/apps/{app}`, whatever the wrapping: `{"app":{...}}` or the
/// bare object; `containerids` as a list, one string, or an object wrapping either.
pub(crate) fn container_ids(v: &Value) -> Vec<String> {
    let app = v.get("app").unwrap_or(v);
    let mut ids = Vec::new();
    strings_in(app.get("containerids"), &mut ids);
    ids.sort();
    ids.dedup();
    ids
}

fn strings_in(v: Option<&Value>, out: &mut Vec<String>) {
    match v {
        Some(Value::String(s)) => out.push(s.clone()),
        Some(Value::Array(a)) => a.iter().for_each(|x| strings_in(Some(x), out)),
        Some(Value::Object(o)) => o.values().for_each(|x| strings_in(Some(x), out)),
        _ => {}
    }
}

/// The `ContainerLogsInfo` entries of `/ws/v1/node/containers/{cid}/logs`: an array of them, an
/// object wrapping one or many (`{"containerLogsInfo": ...}`), or a single bare one.
pub(crate) fn log_infos(v: &Value, container: &str, node: &str) -> Vec<ContainerLogs> {
    let infos: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) if o.contains_key("containerLogInfo") => vec![v],
        Value::Object(o) => o.values().flat_map(|x| fmt::items(Some(x))).collect(),
        _ => Vec::new(),
    };
    infos
        .into_iter()
        .filter(|i| i.get("containerLogInfo").is_some())
        .map(|i| ContainerLogs {
            container: fmt::text_or(i, "containerId", container),
            node: fmt::text_or(i, "nodeId", node),
            aggregation: fmt::text_or(i, "logAggregationType", "LOCAL"),
            files: fmt::items(i.get("containerLogInfo"))
                .into_iter()
                .map(|f| LogFile {
                    name: text(f, "fileName"),
                    size: int(f, "fileSize"),
                    modified: text(f, "lastModifiedTime"),
                })
                .filter(|f| !f.name.is_empty())
                .collect(),
        })
        .collect()
}

/// One file in `yarn logs`' layout. `running` adds the "may not be complete" note.
pub(crate) fn format_log(
    logs: &ContainerLogs,
    file: &LogFile,
    contents: &str,
    running: bool,
) -> String {
    let head = format!("Container: {} on {}", logs.container, logs.node);
    let end = format!("End of LogType:{}", file.name);
    let note = if running {
        format!(
            ".This log file belongs to a running container ({}) and so may not be complete.",
            logs.container
        )
    } else {
        String::new()
    };
    let mut s = format!(
        "{head}\nLogAggregationType: {}\n{}\nLogType:{}\nLogLastModifiedTime:{}\nLogLength:{}\nLogContents:\n{contents}",
        logs.aggregation,
        "=".repeat(head.chars().count()),
        file.name,
        file.modified,
        file.size
    );
    if !contents.is_empty() && !contents.ends_with('\n') {
        s.push('\n');
    }
    s += &format!("{end}{note}\n{}\n\n", "*".repeat(end.chars().count() + 50));
    s
}

impl LogsArgs {
    fn wants(&self, file: &str) -> bool {
        self.log_files.is_empty()
            || self
                .log_files
                .iter()
                .any(|f| f == file || f.eq_ignore_ascii_case("ALL") || f == "*")
    }
}

/// The RUNNING nodes' (node id, NM web base URL).
fn nm_addresses(rm: &Rm, only: Option<&str>) -> Result<Vec<(String, String)>, ClientError> {
    let v = rm.get("/ws/v1/cluster/nodes", &[])?;
    let mut nodes = Vec::new();
    for n in list(&v, "nodes", "node") {
        let (id, http) = (text(n, "id"), text(n, "nodeHTTPAddress"));
        if text(n, "state") != "RUNNING" || http.is_empty() || only.is_some_and(|o| o != id) {
            continue;
        }
        if let Ok(base) = address::normalize_url(&http) {
            nodes.push((id, base));
        }
    }
    nodes.sort();
    Ok(nodes)
}

impl LogsArgs {
    /// (container id, node id, NM base URL) of every container of `app` the RUNNING NMs know,
    /// in container id order (the AM first), narrowed by -containerId.
    fn containers(&self, rm: &Rm, app: &str) -> Result<Vec<(String, String, String)>, ClientError> {
        let mut found = Vec::new();
        for (node, base) in nm_addresses(rm, self.node_address.as_deref())? {
            let ids = match rm.get_json_at(&format!("{base}/ws/v1/node/apps/{app}"), &[]) {
                Ok(v) => container_ids(&v),
                // This NM ran nothing of the app.
                Err(e) if e.status() == Some(404) => continue,
                Err(e) => {
                    eprintln!("skipping node {node}: {e}");
                    continue;
                }
            };
            found.extend(
                ids.into_iter()
                    .filter(|c| self.container_id.as_ref().is_none_or(|want| want == c))
                    .map(|c| (c, node.clone(), base.clone())),
            );
        }
        found.sort();
        Ok(found)
    }
}

impl Verb for LogsArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let Some(app) = &self.application_id else {
            return Err(ClientError::Usage(
                "give -applicationId <ApplicationId>".into(),
            ));
        };
        let rm = self.conn.connect()?;
        let report = rm.get(&format!("/ws/v1/cluster/apps/{app}"), &[])?;
        let state = text(report.get("app").unwrap_or(&report), "state");
        let running = !FINAL_STATES.contains(&state.as_str());
        let size: Vec<(&str, String)> = self
            .size
            .map(|n| ("size", n.to_string()))
            .into_iter()
            .collect();
        let mut printed = 0;
        let mut json_containers = Vec::new();
        for (cid, node, base) in self.containers(&rm, app)? {
            let url = format!("{base}/ws/v1/node/containers/{cid}/logs");
            let infos = match rm.get_json_at(&url, &[]) {
                Ok(v) => log_infos(&v, &cid, &node),
                Err(e) => {
                    eprintln!("skipping container {cid}: {e}");
                    continue;
                }
            };
            for logs in infos {
                let mut files = Vec::new();
                for f in logs.files.iter().filter(|f| self.wants(&f.name)) {
                    let url = format!("{base}/ws/v1/node/containerlogs/{cid}/{}", f.name);
                    let contents = rm.get_text_at(&url, &size)?;
                    printed += 1;
                    if self.conn.json {
                        files.push(json!({"fileName": f.name, "fileSize": f.size,
                            "lastModifiedTime": f.modified, "contents": contents}));
                    } else {
                        write!(out, "{}", format_log(&logs, f, &contents, running))?;
                    }
                }
                if self.conn.json {
                    json_containers.push(json!({"containerId": logs.container,
                        "nodeId": logs.node, "logAggregationType": logs.aggregation,
                        "files": files}));
                }
            }
        }
        if self.conn.json {
            let v = json!({"applicationId": app, "state": state, "containers": json_containers});
            write!(out, "{}", fmt::json_text(&v))?;
        }
        if printed == 0 {
            let what = match &self.container_id {
                Some(c) => format!("container {c} of application {app}"),
                None => format!("application {app}"),
            };
            eprintln!("Can not find any log file for the {what} on the RUNNING NodeManagers.");
            return Ok(Outcome::Failed);
        }
        Ok(Outcome::Success)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_ids_in_any_wrapping() {
        let a = json!({"app": {"id": "application_1_0001", "containerids": ["c2", "c1"]}});
        assert_eq!(container_ids(&a), ["c1", "c2"]);
        assert_eq!(container_ids(&json!({"containerids": "c1"})), ["c1"]);
        assert_eq!(
            container_ids(&json!({"app": {"containerids": {"containerid": ["c3"]}}})),
            ["c3"]
        );
        assert!(container_ids(&json!({"app": {}})).is_empty());
    }

    #[test]
    fn log_lists_in_any_wrapping() {
        let one = json!({"containerLogInfo": [{"fileName": "stdout", "fileSize": "27",
            "lastModifiedTime": "Tue Nov 14 10:01:05 +0000 2023"}],
            "logAggregationType": "LOCAL", "containerId": "c1", "nodeId": "nm-1:45454"});
        let expected = vec![ContainerLogs {
            container: "c1".into(),
            node: "nm-1:45454".into(),
            aggregation: "LOCAL".into(),
            files: vec![LogFile {
                name: "stdout".into(),
                size: 27,
                modified: "Tue Nov 14 10:01:05 +0000 2023".into(),
            }],
        }];
        assert_eq!(log_infos(&json!([one.clone()]), "x", "y"), expected);
        assert_eq!(log_infos(&one, "x", "y"), expected);
        assert_eq!(
            log_infos(&json!({"containerLogsInfo": one.clone()}), "x", "y"),
            expected
        );
        assert_eq!(
            log_infos(&json!({"containerLogsInfo": [one]}), "x", "y"),
            expected
        );
        // A single file object instead of a list, and the container/node filled in.
        let bare = json!({"containerLogInfo": {"fileName": "stderr", "fileSize": 0}});
        let got = log_infos(&bare, "c9", "nm-2:1");
        assert_eq!(
            (got[0].container.as_str(), got[0].node.as_str()),
            ("c9", "nm-2:1")
        );
        assert_eq!(got[0].files[0].name, "stderr");
    }

    #[test]
    fn layout_matches_yarn_logs() {
        let logs = ContainerLogs {
            container: "container_1700000000000_0007_01_000001".into(),
            node: "nm-1:45454".into(),
            aggregation: "LOCAL".into(),
            files: Vec::new(),
        };
        let file = LogFile {
            name: "stdout".into(),
            size: 27,
            modified: "Tue Nov 14 10:01:05 +0000 2023".into(),
        };
        let s = format_log(&logs, &file, "hello from the application\n", true);
        let expected = format!(
            "Container: container_1700000000000_0007_01_000001 on nm-1:45454\nLogAggregationType: LOCAL\n{}\nLogType:stdout\nLogLastModifiedTime:Tue Nov 14 10:01:05 +0000 2023\nLogLength:27\nLogContents:\nhello from the application\nEnd of LogType:stdout.This log file belongs to a running container (container_1700000000000_0007_01_000001) and so may not be complete.\n{}\n\n",
            "=".repeat(63),
            "*".repeat(71)
        );
        assert_eq!(s, expected);
        let done = format_log(&logs, &file, "no newline", false);
        assert!(
            done.contains("LogContents:\nno newline\nEnd of LogType:stdout\n***"),
            "{done}"
        );
    }
}
