//! `weft top`: a live view of the cluster (node and application counts, memory and vcores) and
//! its running applications, redrawn every `-delay` seconds; `--once` prints one plain frame.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::{json, Value};

use crate::fmt::{self, int, list, num, text};
use crate::rest::{Connection, Rm};
use crate::{ClientError, Outcome, Verb};

/// ANSI: clear the screen and home the cursor.
const CLEAR: &str = "\x1b[2J\x1b[H";
/// How often the live loop checks for a quit request while waiting.
const TICK: Duration = Duration::from_millis(100);

/// A live view of queues and applications.
#[derive(Args, Debug)]
pub struct TopArgs {
    /// Seconds between refreshes.
    #[arg(long, value_name = "Seconds", default_value_t = 3)]
    pub delay: u64,
    /// Only applications in these queues (comma list; short names or full paths).
    #[arg(long, value_name = "Queues", value_delimiter = ',')]
    pub queues: Vec<String>,
    /// Only applications of these users (comma list).
    #[arg(long, value_name = "Users", value_delimiter = ',')]
    pub users: Vec<String>,
    /// Only applications of these types (comma list).
    #[arg(long, value_name = "Types", value_delimiter = ',')]
    pub types: Vec<String>,
    /// Cut lines to this many columns.
    #[arg(long, value_name = "N")]
    pub cols: Option<usize>,
    /// Show at most this many application rows.
    #[arg(long, value_name = "N")]
    pub rows: Option<usize>,
    /// Print one frame without terminal escape codes and exit (batch mode, for scripts).
    #[arg(long, alias = "batch")]
    pub once: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// What one frame shows, fetched from the RM.
pub(crate) struct Snapshot {
    pub(crate) now_ms: u64,
    pub(crate) started_on: u64,
    pub(crate) metrics: Value,
    pub(crate) apps: Vec<Value>,
}

/// The wall clock, for the header's time of day and the RM's uptime.
#[allow(clippy::disallowed_methods)] // a client's display clock, not scheduler time
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl TopArgs {
    fn fetch(&self, rm: &Rm) -> Result<Snapshot, ClientError> {
        let info = rm.get("/ws/v1/cluster/info", &[])?;
        let metrics = rm.get("/ws/v1/cluster/metrics", &[])?;
        let apps = rm.get(
            "/ws/v1/cluster/apps",
            &[("states", "RUNNING,ACCEPTED".to_string())],
        )?;
        let mut apps: Vec<Value> = list(&apps, "apps", "app")
            .into_iter()
            .filter(|a| self.shows(a))
            .cloned()
            .collect();
        apps.sort_by_key(|a| text(a, "id"));
        Ok(Snapshot {
            now_ms: now_ms(),
            started_on: int(info.get("clusterInfo").unwrap_or(&info), "startedOn"),
            metrics: metrics.get("clusterMetrics").cloned().unwrap_or(metrics),
            apps,
        })
    }

    /// The -queues, -users and -types filters.
    pub(crate) fn shows(&self, app: &Value) -> bool {
        let queue = text(app, "queue");
        let state = text(app, "state");
        (state == "RUNNING" || state == "ACCEPTED")
            && (self.queues.is_empty()
                || self.queues.iter().any(|q| {
                    let (q, queue) = (full_path(q), full_path(&queue));
                    q == queue || queue.starts_with(&format!("{q}."))
                }))
            && (self.users.is_empty() || self.users.contains(&text(app, "user")))
            && (self.types.is_empty()
                || self
                    .types
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(&text(app, "applicationType"))))
    }

    /// One frame of text.
    pub(crate) fn frame(&self, s: &Snapshot) -> String {
        let m = &s.metrics;
        let up = s.now_ms.saturating_sub(s.started_on) / 1000;
        let mut users: Vec<String> = s.apps.iter().map(|a| text(a, "user")).collect();
        users.sort();
        users.dedup();
        let queues = if self.queues.is_empty() {
            "root".to_string()
        } else {
            self.queues.join(",")
        };
        let gb = |key: &str| int(m, key) / 1024;
        let mut lines = vec![
            format!(
                "YARN top - {}, up {}d, {}:{:02}, {} active users, queue(s): {queues}",
                fmt::clock_time(s.now_ms),
                up / 86_400,
                up % 86_400 / 3600,
                up % 3600 / 60,
                users.len()
            ),
            format!(
                "NodeManager(s): {} total, {} active, {} unhealthy, {} decommissioned, {} lost, {} rebooted",
                int(m, "totalNodes"),
                int(m, "activeNodes"),
                int(m, "unhealthyNodes"),
                int(m, "decommissionedNodes"),
                int(m, "lostNodes"),
                int(m, "rebootedNodes")
            ),
            format!(
                "Queue(s) Applications: {} running, {} submitted, {} pending, {} completed, {} killed, {} failed",
                int(m, "appsRunning"),
                int(m, "appsSubmitted"),
                int(m, "appsPending"),
                int(m, "appsCompleted"),
                int(m, "appsKilled"),
                int(m, "appsFailed")
            ),
            format!(
                "Queue(s) Mem(GB): {} available, {} allocated, {} pending, {} reserved",
                gb("availableMB"),
                gb("allocatedMB"),
                gb("pendingMB"),
                gb("reservedMB")
            ),
            format!(
                "Queue(s) VCores: {} available, {} allocated, {} pending, {} reserved",
                int(m, "availableVirtualCores"),
                int(m, "allocatedVirtualCores"),
                int(m, "pendingVirtualCores"),
                int(m, "reservedVirtualCores")
            ),
            format!(
                "Queue(s) Containers: {} allocated, {} pending, {} reserved",
                int(m, "containersAllocated"),
                int(m, "containersPending"),
                int(m, "containersReserved")
            ),
            String::new(),
            app_row([
                "APPLICATIONID",
                "USER",
                "TYPE",
                "QUEUE",
                "#CONT",
                "#RCONT",
                "VCORES",
                "RVCORES",
                "MEM",
                "RMEM",
                "VCORESECS",
                "MEMSECS",
                "%PROGR",
                "TIME",
                "NAME",
            ]),
        ];
        for a in s.apps.iter().take(self.rows.unwrap_or(usize::MAX)) {
            let elapsed = int(a, "elapsedTime") / 1000;
            lines.push(app_row([
                &text(a, "id"),
                &text(a, "user"),
                &text(a, "applicationType").to_lowercase(),
                &text(a, "queue"),
                &int(a, "runningContainers").to_string(),
                &int(a, "reservedContainers").to_string(),
                &int(a, "allocatedVCores").to_string(),
                &int(a, "reservedVCores").to_string(),
                &format!("{}G", int(a, "allocatedMB") / 1024),
                &format!("{}G", int(a, "reservedMB") / 1024),
                &int(a, "vcoreSeconds").to_string(),
                &(int(a, "memorySeconds") / 1024).to_string(),
                &format!("{:.2}", num(a, "progress")),
                &format!(
                    "{:02}:{:02}:{:02}",
                    elapsed / 3600,
                    elapsed % 3600 / 60,
                    elapsed % 60
                ),
                &text(a, "name"),
            ]));
        }
        let mut out = String::new();
        for l in lines {
            match self.cols {
                Some(c) => out.extend(l.chars().take(c)),
                None => out.push_str(&l),
            }
            out.push('\n');
        }
        out
    }
}

/// A queue name as a path from root (`default` → `root.default`).
fn full_path(q: &str) -> String {
    if q == "root" || q.starts_with("root.") {
        q.to_string()
    } else {
        format!("root.{q}")
    }
}

/// Column widths of `yarn top`'s application rows (the last column, the name, is unbounded).
const WIDTHS: [usize; 14] = [31, 16, 4, 10, 7, 7, 7, 7, 7, 7, 10, 10, 6, 10];

/// `text` cut to `width` characters with an ellipsis, so a long value cannot push the columns
/// after it out of line. Queues keep their end (the leaf is what tells them apart), other
/// values their start.
fn fit(text: &str, width: usize, keep_end: bool) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    if keep_end {
        let tail: String = text.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    } else {
        let head: String = text.chars().take(width - 1).collect();
        format!("{head}…")
    }
}

fn app_row(c: [&str; 15]) -> String {
    let f: Vec<String> = WIDTHS
        .iter()
        .enumerate()
        .map(|(i, w)| fit(c[i], *w, i == 3))
        .collect();
    format!(
        "{:>31} {:<16} {:>4} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>6} {:>10} {}",
        f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], c[14]
    )
}

/// Set once the user types `q` (and Enter: the terminal stays in line mode).
fn quit_watcher() -> Arc<AtomicBool> {
    let quit = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&quit);
    // A blocking stdin reader beside the redraw loop; the client is not the scheduler core.
    #[allow(clippy::disallowed_methods)]
    std::thread::spawn(move || {
        // End of input (stdin not a terminal, e.g. /dev/null) is no request to quit.
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(l) if l.trim().eq_ignore_ascii_case("q") => {
                    flag.store(true, Ordering::SeqCst);
                    return;
                }
                Ok(_) => continue,
                Err(_) => return,
            }
        }
    });
    quit
}

impl Verb for TopArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        if self.conn.json {
            let s = self.fetch(&rm)?;
            let v = json!({"clusterMetrics": s.metrics, "startedOn": s.started_on, "apps": s.apps});
            write!(out, "{}", fmt::json_text(&v))?;
            return Ok(Outcome::Success);
        }
        if self.once {
            write!(out, "{}", self.frame(&self.fetch(&rm)?))?;
            return Ok(Outcome::Success);
        }
        let quit = quit_watcher();
        let ticks = (self.delay.max(1) * 1000 / TICK.as_millis() as u64).max(1);
        while !quit.load(Ordering::SeqCst) {
            let screen = match self.fetch(&rm) {
                Ok(s) => self.frame(&s),
                // Keep watching through an RM restart; the error shows in place of the frame.
                Err(e) => format!("{e}\n"),
            };
            write!(out, "{CLEAR}{screen}\n(q + Enter or Ctrl-C quits)\n")?;
            out.flush()?;
            for _ in 0..ticks {
                if quit.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::sleep(TICK);
            }
        }
        Ok(Outcome::Success)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> TopArgs {
        TopArgs {
            delay: 3,
            queues: Vec::new(),
            users: Vec::new(),
            types: Vec::new(),
            cols: None,
            rows: None,
            once: true,
            conn: Connection::default(),
        }
    }

    fn app() -> Value {
        json!({"id": "application_1700000000000_0007", "user": "alice", "applicationType": "YARN",
            "queue": "default", "state": "RUNNING", "runningContainers": 2, "allocatedVCores": 2,
            "allocatedMB": 4096, "vcoreSeconds": 130, "memorySeconds": 266240, "progress": 42.5,
            "elapsedTime": 65000, "name": "wordcount"})
    }

    fn snapshot() -> Snapshot {
        Snapshot {
            // 18:00:07 UTC, 19 days and 14 minutes after the RM started.
            now_ms: 1_700_157_607_000,
            started_on: 1_700_157_607_000 - (19 * 86_400 + 14 * 60) * 1000,
            metrics: json!({"totalNodes": 4, "activeNodes": 4, "appsRunning": 2,
                "appsSubmitted": 10, "appsCompleted": 8, "availableMB": 99328,
                "allocatedMB": 3072, "availableVirtualCores": 58, "allocatedVirtualCores": 2,
                "containersAllocated": 2}),
            apps: vec![app()],
        }
    }

    #[test]
    fn frame_matches_yarn_top() {
        let f = args().frame(&snapshot());
        let expected = "YARN top - 18:00:07, up 19d, 0:14, 1 active users, queue(s): root
NodeManager(s): 4 total, 4 active, 0 unhealthy, 0 decommissioned, 0 lost, 0 rebooted
Queue(s) Applications: 2 running, 10 submitted, 0 pending, 8 completed, 0 killed, 0 failed
Queue(s) Mem(GB): 97 available, 3 allocated, 0 pending, 0 reserved
Queue(s) VCores: 58 available, 2 allocated, 0 pending, 0 reserved
Queue(s) Containers: 2 allocated, 0 pending, 0 reserved

                  APPLICATIONID USER             TYPE      QUEUE   #CONT  #RCONT  VCORES RVCORES     MEM    RMEM  VCORESECS    MEMSECS %PROGR       TIME NAME
 application_1700000000000_0007 alice            yarn    default       2       0       2       0      4G      0G        130        260  42.50   00:01:05 wordcount
";
        assert_eq!(f, expected);
        assert!(!f.contains('\x1b'));
        let narrow = TopArgs {
            cols: Some(10),
            ..args()
        };
        assert!(narrow
            .frame(&snapshot())
            .lines()
            .all(|l| l.chars().count() <= 10));
    }

    #[test]
    fn long_values_are_cut_with_an_ellipsis_and_the_columns_stay_aligned() {
        let mut long = app();
        long["user"] = json!("a-very-long-service-account-name");
        long["applicationType"] = json!("DISTRIBUTEDSHELL");
        long["queue"] = json!("root.analytics.nightly");
        let s = Snapshot {
            apps: vec![app(), long],
            ..snapshot()
        };
        let f = args().frame(&s);
        let rows: Vec<&str> = f.lines().skip(7).collect();
        assert_eq!(rows.len(), 3, "{f}");
        // Every row starts its last column (the name) where the header's NAME starts, so
        // every column before it lines up too.
        let header_at = rows[0].chars().count() - "NAME".len();
        for r in &rows[1..] {
            assert_eq!(r.chars().count() - "wordcount".len(), header_at, "{f}");
        }
        assert!(rows[2].contains(" a-very-long-ser… "), "{f}");
        assert!(rows[2].contains(" dis… "), "{f}");
        assert!(rows[2].contains(" …s.nightly "), "{f}");
        assert_eq!(fit("abc", 3, false), "abc");
        assert_eq!(fit("abcd", 3, false), "ab…");
        assert_eq!(fit("abcd", 3, true), "…cd");
    }

    #[test]
    fn filters() {
        let a = app();
        assert!(args().shows(&a));
        let q = TopArgs {
            queues: vec!["root.default".into()],
            ..args()
        };
        assert!(q.shows(&a));
        let q = TopArgs {
            queues: vec!["prod".into()],
            ..args()
        };
        assert!(!q.shows(&a));
        let u = TopArgs {
            users: vec!["bob".into()],
            ..args()
        };
        assert!(!u.shows(&a));
        let t = TopArgs {
            types: vec!["yarn".into()],
            ..args()
        };
        assert!(t.shows(&a));
        let mut done = app();
        done["state"] = json!("FINISHED");
        assert!(!args().shows(&done));
    }
}
