//! `weft queue -status Q`: one queue of `/ws/v1/cluster/scheduler` (fair, capacity or fifo
//! shape), found by short name (`default`) or full path (`root.default`); `weft queue -list
//! all|PARENT`: every queue, or a parent's children, in a table (as Hadoop 3.4's).

use std::io::Write;

use clap::{ArgGroup, Args};
use serde_json::{json, Value};

use crate::fmt::{self, int, list, num, text};
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

/// Reports on a queue, or lists queues.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["status", "list"])))]
pub struct QueueArgs {
    /// Print the report of this queue (short name or full path).
    #[arg(long, value_name = "QueueName")]
    pub status: Option<String>,
    /// List every queue (`all`) or the children of a parent queue (short name or full path).
    #[arg(long, value_name = "all|parentQueue")]
    pub list: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

impl Verb for QueueArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        if let Some(parent) = &self.list {
            let rm = self.conn.connect()?;
            let scheduler = rm.get("/ws/v1/cluster/scheduler", &[])?;
            let Some(queues) = list_queues(&scheduler, parent) else {
                eprintln!("Cannot get queue from RM by queueName = {parent}, please check.");
                return Ok(Outcome::Failed);
            };
            if self.conn.json {
                let all: Vec<&Value> = queues.iter().map(|q| &q.json).collect();
                write!(out, "{}", fmt::json_text(&json!({ "queues": all })))?;
            } else {
                write!(out, "{}", queue_table(&queues))?;
            }
            return Ok(Outcome::Success);
        }
        let Some(name) = &self.status else {
            return Err(ClientError::Usage(
                "give -status <QueueName> or -list all".into(),
            ));
        };
        let rm = self.conn.connect()?;
        let scheduler = rm.get("/ws/v1/cluster/scheduler", &[])?;
        let Some(q) = find_queue(&scheduler, name) else {
            eprintln!("Cannot get queue from RM by queueName = {name}, please check.");
            return Ok(Outcome::Failed);
        };
        if self.conn.json {
            write!(out, "{}", fmt::json_text(&q.json))?;
        } else {
            write!(out, "{}", queue_report(&q))?;
        }
        Ok(Outcome::Success)
    }
}

/// A queue found in the scheduler answer, with the figures `-status` prints.
#[derive(Debug)]
pub(crate) struct QueueView {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) state: String,
    /// Percentages.
    pub(crate) capacity: f64,
    pub(crate) current: f64,
    pub(crate) maximum: f64,
    pub(crate) weight: f64,
    pub(crate) max_apps: u64,
    pub(crate) preemption: bool,
    pub(crate) intra_preemption: bool,
    /// The queue's object as the RM sent it.
    pub(crate) json: Value,
}

/// True when `wanted` names the queue at `path` (full path, path under root, or leaf name).
fn names(path: &str, wanted: &str) -> bool {
    path == wanted
        || path.strip_prefix("root.") == Some(wanted)
        || path.rsplit('.').next() == Some(wanted)
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

fn mem(q: &Value, key: &str) -> f64 {
    q.get(key).map_or(0.0, |r| num(r, "memory"))
}

/// Finds `wanted` in a `{"scheduler":{"schedulerInfo":...}}` answer. Exact paths win over
/// leaf names, so `default` cannot pick `root.a.default` while `root.default` exists.
pub(crate) fn find_queue(scheduler: &Value, wanted: &str) -> Option<QueueView> {
    let info = scheduler.get("scheduler")?.get("schedulerInfo")?;
    let kind = text(info, "type");
    let mut all = Vec::new();
    match kind.as_str() {
        "fairScheduler" => collect(info.get("rootQueue")?, "childQueues", &mut all),
        "capacityScheduler" => collect(info, "queues", &mut all),
        _ => return fifo_queue(info, wanted),
    }
    let path_of = |q: &Value| {
        let p = text(q, "queuePath");
        if p.is_empty() {
            text(q, "queueName")
        } else {
            p
        }
    };
    let exact = all
        .iter()
        .find(|q| path_of(q) == wanted || path_of(q).strip_prefix("root.") == Some(wanted));
    let q = exact.or_else(|| all.iter().find(|q| names(&path_of(q), wanted)))?;
    let path = path_of(q);
    let name = path.rsplit('.').next().unwrap_or(&path).to_string();
    if kind == "fairScheduler" {
        // Fair queues: capacity is the fair share's fraction of the cluster.
        let cluster = mem(q, "clusterResources");
        let fair = mem(q, "fairResources");
        Some(QueueView {
            name,
            path: path.clone(),
            state: "RUNNING".to_string(),
            capacity: pct(fair, cluster),
            current: pct(mem(q, "usedResources"), fair),
            maximum: pct(mem(q, "maxResources").min(cluster), cluster),
            weight: q.get("weight").map_or(-1.0, |_| num(q, "weight")),
            max_apps: int(q, "maxApps"),
            preemption: q
                .get("preemptable")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            intra_preemption: false,
            json: (*q).clone(),
        })
    } else {
        Some(QueueView {
            name,
            path,
            state: fmt::text_or(q, "state", "RUNNING"),
            capacity: num(q, "capacity"),
            current: num(q, "usedCapacity"),
            maximum: num(q, "maxCapacity"),
            weight: q.get("weight").map_or(-1.0, |_| num(q, "weight")),
            max_apps: q
                .get("maxParallelApps")
                .map_or(i32::MAX as u64, |_| int(q, "maxParallelApps")),
            preemption: !q
                .get("preemptionDisabled")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            intra_preemption: !q
                .get("intraQueuePreemptionDisabled")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            json: (*q).clone(),
        })
    }
}

fn collect<'a>(q: &'a Value, children: &str, all: &mut Vec<&'a Value>) {
    all.push(q);
    for c in list(q, children, "queue") {
        collect(c, children, all);
    }
}

/// FIFO has one queue, `default`.
fn fifo_queue(info: &Value, wanted: &str) -> Option<QueueView> {
    if !names("root.default", wanted) {
        return None;
    }
    Some(QueueView {
        name: "default".into(),
        path: "root.default".into(),
        state: fmt::text_or(info, "qstate", "RUNNING"),
        capacity: num(info, "capacity") * 100.0,
        current: num(info, "usedCapacity") * 100.0,
        maximum: 100.0,
        weight: -1.0,
        max_apps: i32::MAX as u64,
        preemption: false,
        intra_preemption: false,
        json: json!({ "schedulerInfo": info }),
    })
}

fn onoff(b: bool) -> &'static str {
    if b {
        "enabled"
    } else {
        "disabled"
    }
}

/// Every queue's full path in the scheduler answer, in tree order.
fn all_paths(scheduler: &Value) -> Vec<String> {
    let Some(info) = scheduler
        .get("scheduler")
        .and_then(|s| s.get("schedulerInfo"))
    else {
        return Vec::new();
    };
    let mut all = Vec::new();
    match text(info, "type").as_str() {
        "fairScheduler" => {
            if let Some(root) = info.get("rootQueue") {
                collect(root, "childQueues", &mut all);
            }
        }
        "capacityScheduler" => collect(info, "queues", &mut all),
        _ => return vec!["root.default".to_string()],
    }
    all.iter()
        .map(|q| {
            let p = text(q, "queuePath");
            if p.is_empty() {
                text(q, "queueName")
            } else {
                p
            }
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// `-list`: every queue for `all`, else the children of the named parent; `None` when the
/// parent does not exist.
pub(crate) fn list_queues(scheduler: &Value, parent: &str) -> Option<Vec<QueueView>> {
    let paths = all_paths(scheduler);
    let chosen: Vec<&String> = if parent.eq_ignore_ascii_case("all") {
        paths.iter().collect()
    } else {
        let p = find_queue(scheduler, parent)?.path;
        paths
            .iter()
            .filter(|c| {
                c.strip_prefix(p.as_str())
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(|leaf| !leaf.contains('.'))
            })
            .collect()
    };
    Some(
        chosen
            .into_iter()
            .filter_map(|path| find_queue(scheduler, path))
            .collect(),
    )
}

/// The `-list` table: a title line, then a boxed table (Hadoop 3.4's layout).
pub(crate) fn queue_table(queues: &[QueueView]) -> String {
    let header = [
        "Queue Name",
        "Queue Path",
        "State",
        "Capacity",
        "Current Capacity",
        "Maximum Capacity",
        "Weight",
        "Maximum Parallel Apps",
    ];
    let rows: Vec<[String; 8]> = queues
        .iter()
        .map(|q| {
            [
                q.name.clone(),
                q.path.clone(),
                q.state.clone(),
                format!("{:.2}%", q.capacity),
                format!("{:.2}%", q.current),
                format!("{:.2}%", q.maximum),
                format!("{:.2}", q.weight),
                q.max_apps.to_string(),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let rule: String = widths
        .iter()
        .map(|w| "-".repeat(w + 2))
        .collect::<Vec<_>>()
        .join("+");
    let rule = format!("+{rule}+\n");
    let line = |cells: Vec<&str>| {
        let inner: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c:<w$} "))
            .collect();
        format!("|{}|\n", inner.join("|"))
    };
    let mut s = format!("{} queues were found\n", queues.len());
    s.push_str(&rule);
    s.push_str(&line(header.to_vec()));
    s.push_str(&rule);
    for r in &rows {
        s.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    s.push_str(&rule);
    s
}

/// The queue's default node label expression (`<DEFAULT_PARTITION>` when none) and its
/// accessible labels, as Hadoop's `QueueCLI` prints them from a Capacity queue's
/// `defaultNodeLabelExpression` and `nodeLabels` (queues without them: DEFAULT and `*`).
fn node_labels(q: &Value) -> (String, String) {
    const NO_LABEL: &str = "<DEFAULT_PARTITION>";
    let default = match text(q, "defaultNodeLabelExpression") {
        e if e.trim().is_empty() => NO_LABEL.to_string(),
        e => e,
    };
    let accessible = match q.get("nodeLabels").and_then(Value::as_array) {
        Some(labels) => labels
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        None => "*".to_string(),
    };
    (default, accessible)
}

/// The `-status` report.
pub(crate) fn queue_report(q: &QueueView) -> String {
    let (default_label, accessible) = node_labels(&q.json);
    format!(
        "Queue Information : \nQueue Name : {}\n\tQueue Path : {}\n\tState : {}\n\tCapacity : {:.2}%\n\tCurrent Capacity : {:.2}%\n\tMaximum Capacity : {:.2}%\n\tWeight : {:.2}\n\tMaximum Parallel Apps : {}\n\tDefault Node Label expression : {default_label}\n\tAccessible Node Labels : {accessible}\n\tPreemption : {}\n\tIntra-queue Preemption : {}\n",
        q.name,
        q.path,
        q.state,
        q.capacity,
        q.current,
        q.maximum,
        q.weight,
        q.max_apps,
        onoff(q.preemption),
        onoff(q.intra_preemption)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(m: u64, v: u64) -> Value {
        json!({"memory": m, "vCores": v})
    }

    fn fair() -> Value {
        let leaf = |name: &str, fair_mb: u64, used_mb: u64| {
            json!({
                "type": "fairSchedulerLeafQueueInfo", "maxApps": 50, "queueName": name,
                "minResources": res(0, 0), "maxResources": res(32768, 16),
                "usedResources": res(used_mb, 1), "fairResources": res(fair_mb, 4),
                "steadyFairResources": res(16384, 8), "clusterResources": res(32768, 16),
                "schedulingPolicy": "fair", "preemptable": true,
                "numPendingApps": 0, "numActiveApps": 1
            })
        };
        json!({"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {
            "queueName": "root", "maxApps": 2147483647, "maxResources": res(32768, 16),
            "usedResources": res(4096, 2), "fairResources": res(32768, 16),
            "clusterResources": res(32768, 16), "preemptable": true,
            "childQueues": {"queue": [
                leaf("root.default", 16384, 4096),
                {"queueName": "root.eng", "maxApps": 10, "clusterResources": res(32768, 16),
                 "fairResources": res(0, 0), "usedResources": res(0, 0),
                 "maxResources": res(65536, 16),
                 "childQueues": {"queue": leaf("root.eng.default", 0, 0)}}
            ]}
        }}}})
    }

    #[test]
    fn list_shows_every_queue_or_a_parents_children() {
        let s = fair();
        let all = list_queues(&s, "all").expect("all");
        let paths: Vec<&str> = all.iter().map(|q| q.path.as_str()).collect();
        assert_eq!(
            paths,
            ["root", "root.default", "root.eng", "root.eng.default"]
        );
        let eng = list_queues(&s, "eng").expect("eng's children");
        assert_eq!(eng.len(), 1);
        assert_eq!(eng[0].path, "root.eng.default");
        let root = list_queues(&s, "root").expect("root's children");
        let paths: Vec<&str> = root.iter().map(|q| q.path.as_str()).collect();
        assert_eq!(paths, ["root.default", "root.eng"]);
        assert!(list_queues(&s, "nosuch").is_none());
        let table = queue_table(&root);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "2 queues were found");
        assert!(lines[1].starts_with("+------------+"), "{table}");
        assert!(
            lines[2].starts_with("| Queue Name | Queue Path   | State   | Capacity |"),
            "{table}"
        );
        assert!(
            lines[4].starts_with("| default    | root.default | RUNNING | 50.00%   |"),
            "{table}"
        );
        assert_eq!(
            lines.len(),
            7,
            "title, rule, header, rule, 2 rows, rule:\n{table}"
        );
        // Every line of the box has the same width.
        assert!(
            lines[1..].iter().all(|l| l.len() == lines[1].len()),
            "{table}"
        );
    }

    #[test]
    fn fair_queue_by_short_or_full_name() {
        let s = fair();
        let q = find_queue(&s, "default").expect("found");
        assert_eq!(q.path, "root.default");
        assert_eq!(
            queue_report(&q),
            "Queue Information : \nQueue Name : default\n\tQueue Path : root.default\n\tState : RUNNING\n\tCapacity : 50.00%\n\tCurrent Capacity : 25.00%\n\tMaximum Capacity : 100.00%\n\tWeight : -1.00\n\tMaximum Parallel Apps : 50\n\tDefault Node Label expression : <DEFAULT_PARTITION>\n\tAccessible Node Labels : *\n\tPreemption : enabled\n\tIntra-queue Preemption : disabled\n"
        );
        assert_eq!(
            find_queue(&s, "root.default").expect("found").path,
            "root.default"
        );
        // A single child (not an array) is still walked.
        assert_eq!(
            find_queue(&s, "root.eng.default").expect("found").path,
            "root.eng.default"
        );
        assert_eq!(find_queue(&s, "eng").expect("found").max_apps, 10);
        assert!(find_queue(&s, "nosuch").is_none());
    }

    #[test]
    fn capacity_queue() {
        let s = json!({"scheduler": {"schedulerInfo": {"type": "capacityScheduler",
            "queueName": "root", "capacity": 100.0, "usedCapacity": 12.5, "maxCapacity": 100.0,
            "queues": {"queue": [{"queueName": "default", "queuePath": "root.default",
                "capacity": 60.0, "usedCapacity": 20.833334, "maxCapacity": 100.0,
                "state": "RUNNING", "weight": -1.0, "maxParallelApps": 2147483647,
                "preemptionDisabled": true}]}}}});
        let r = queue_report(&find_queue(&s, "default").expect("found"));
        assert!(r.contains("\tCapacity : 60.00%\n\tCurrent Capacity : 20.83%\n\tMaximum Capacity : 100.00%\n\tWeight : -1.00\n\tMaximum Parallel Apps : 2147483647\n"), "{r}");
        let fifo = json!({"scheduler": {"schedulerInfo": {"type": "fifoScheduler", "capacity": 1.0, "usedCapacity": 0.125, "qstate": "RUNNING"}}});
        let q = find_queue(&fifo, "default").expect("found");
        assert_eq!((q.capacity, q.current), (100.0, 12.5));
        assert!(find_queue(&fifo, "prod").is_none());
    }

    #[test]
    fn a_labeled_capacity_queue_shows_its_labels() {
        let s = json!({"scheduler": {"schedulerInfo": {"type": "capacityScheduler",
            "queueName": "root", "queues": {"queue": [
                {"queueName": "gpu", "queuePath": "root.gpu", "nodeLabels": ["a", "x"],
                    "defaultNodeLabelExpression": "x"},
                {"queueName": "etl", "queuePath": "root.etl", "nodeLabels": [],
                    "defaultNodeLabelExpression": ""}]}}}});
        let r = queue_report(&find_queue(&s, "gpu").expect("found"));
        assert!(
            r.contains("\tDefault Node Label expression : x\n\tAccessible Node Labels : a,x\n"),
            "{r}"
        );
        let r = queue_report(&find_queue(&s, "etl").expect("found"));
        assert!(
            r.contains("\tDefault Node Label expression : <DEFAULT_PARTITION>\n\tAccessible Node Labels : \n"),
            "{r}"
        );
    }
}
