//! A human summary of a scenario run, printed after its JSON lines when standard output is a
//! terminal (`weft sim run FILE`; `--summary always|never` overrides the guess). It reads only
//! the JSON lines of the public contract (`docs/scenario-format.md`), so it says nothing the
//! lines do not.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

/// When to print the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SummaryWhen {
    /// When standard output is a terminal (piped output stays pure JSON lines).
    #[default]
    Auto,
    /// Always, after the JSON lines.
    Always,
    /// Never.
    Never,
}

impl SummaryWhen {
    /// Whether to print, given whether standard output is a terminal.
    pub(crate) fn wanted(self, stdout_is_terminal: bool) -> bool {
        match self {
            SummaryWhen::Auto => stdout_is_terminal,
            SummaryWhen::Always => true,
            SummaryWhen::Never => false,
        }
    }
}

/// One app's life as the lines tell it.
#[derive(Default)]
struct AppLife {
    queue: Option<String>,
    accepted_ms: Option<u64>,
    rejected: Option<String>,
    first_container_ms: Option<u64>,
    allocated: u64,
    completed: u64,
    preempted: u64,
}

/// What the lines of one run add up to.
#[derive(Default)]
pub(crate) struct Summary {
    apps: BTreeMap<String, AppLife>,
    kinds: BTreeMap<String, u64>,
    end_ms: u64,
    cpu_ms: Option<f64>,
    refusals: Vec<String>,
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

impl Summary {
    /// Takes in one JSON line (others are ignored: the summary must never break a run).
    pub(crate) fn add(&mut self, line: &str) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
        let at = v.get("at_ms").and_then(Value::as_u64).unwrap_or(0);
        *self.kinds.entry(kind.to_string()).or_default() += 1;
        self.end_ms = self.end_ms.max(at);
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let app = text("app").map(|a| self.apps.entry(a).or_default());
        match (kind, app) {
            ("accepted", Some(a)) => {
                a.accepted_ms = Some(at);
                a.queue = text("queue");
            }
            ("rejected", Some(a)) => a.rejected = text("reason"),
            ("allocated", Some(a)) => {
                a.allocated += 1;
                a.first_container_ms.get_or_insert(at);
            }
            ("completed", Some(a)) => a.completed += 1,
            ("preempted", Some(a)) => a.preempted += 1,
            ("summary", _) => self.cpu_ms = v.get("scheduler_cpu_ms").and_then(Value::as_f64),
            ("config_refused" | "move_refused" | "kill_refused", _) => {
                let why = text("reason").or_else(|| text("error")).unwrap_or_default();
                self.refusals.push(format!(
                    "{} at {}: {why}",
                    kind.replace('_', " "),
                    seconds(at)
                ));
            }
            _ => {}
        }
    }

    /// The summary as text.
    pub(crate) fn render(&self, scenario: &str) -> String {
        let mut s = String::new();
        let allocations = self.kinds.get("allocated").copied().unwrap_or(0);
        let _ = write!(
            s,
            "\nSummary of {scenario}: {} simulated, {} apps, {allocations} containers allocated",
            seconds(self.end_ms),
            self.apps.len()
        );
        if let Some(cpu) = self.cpu_ms {
            let _ = write!(s, ", scheduler CPU {cpu:.1} ms");
        }
        s.push('\n');
        let rows: Vec<[String; 7]> = self
            .apps
            .iter()
            .map(|(name, a)| {
                let wait = match (a.accepted_ms, a.first_container_ms) {
                    (Some(acc), Some(first)) => seconds(first.saturating_sub(acc)),
                    _ => "-".to_string(),
                };
                [
                    name.clone(),
                    a.queue.clone().unwrap_or_else(|| match &a.rejected {
                        Some(why) => format!("rejected: {why}"),
                        None => "-".to_string(),
                    }),
                    a.accepted_ms.map_or("-".to_string(), seconds),
                    wait,
                    a.allocated.to_string(),
                    a.completed.to_string(),
                    a.preempted.to_string(),
                ]
            })
            .collect();
        let header = [
            "app",
            "queue",
            "accepted at",
            "first container after",
            "allocated",
            "completed",
            "preempted",
        ];
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: Vec<&str>| {
            let mut l = String::from(" ");
            for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
                // Names left, figures right.
                if i < 2 {
                    let _ = write!(l, " {c:<w$}");
                } else {
                    let _ = write!(l, " {c:>w$}");
                }
            }
            l.trim_end().to_string() + "\n"
        };
        s.push_str(&line(header.to_vec()));
        for r in &rows {
            s.push_str(&line(r.iter().map(String::as_str).collect()));
        }
        let kinds: Vec<String> = self.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(s, "Lines by type: {}", kinds.join(", "));
        for r in &self.refusals {
            let _ = writeln!(s, "Refused: {r}");
        }
        s.push_str("(The JSON lines above are the run's record; piped, they come alone.)\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_adds_up_the_lines_per_app() {
        let mut s = Summary::default();
        for l in [
            r#"{"type":"accepted","at_ms":0,"app":"big","queue":"root.jobs"}"#,
            r#"{"type":"allocated","at_ms":500,"app":"big","container":"c_0001"}"#,
            r#"{"type":"accepted","at_ms":10000,"app":"small","queue":"root.jobs"}"#,
            r#"{"type":"allocated","at_ms":12000,"app":"small","container":"c_0002"}"#,
            r#"{"type":"completed","at_ms":20000,"app":"big","container":"c_0001","exit":"success"}"#,
            r#"{"type":"rejected","at_ms":0,"app":"nope","reason":"no such queue"}"#,
            r#"{"type":"move_refused","at_ms":3000,"app":"big","queue":"root.b","reason":"full"}"#,
            "not json",
            r#"{"type":"summary","at_ms":21000,"allocations":2,"scheduler_cpu_ms":1.25}"#,
        ] {
            s.add(l);
        }
        let text = s.render("x.toml");
        assert!(
            text.contains("Summary of x.toml: 21.0 s simulated, 3 apps, 2 containers allocated, scheduler CPU 1.2 ms\n"),
            "{text}"
        );
        let row = |app: &str| {
            text.lines()
                .find(|l| l.split_whitespace().next() == Some(app))
                .unwrap_or_else(|| panic!("no row for {app}:\n{text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(row("big"), "big root.jobs 0.0 s 0.5 s 1 1 0");
        assert_eq!(row("small"), "small root.jobs 10.0 s 2.0 s 1 0 0");
        assert!(
            row("nope").starts_with("nope rejected: no such queue"),
            "{text}"
        );
        assert!(
            text.contains("Refused: move refused at 3.0 s: full\n"),
            "{text}"
        );
        assert!(text.contains("Lines by type: accepted 2, allocated 2, completed 1, move_refused 1, rejected 1, summary 1\n"), "{text}");
    }

    #[test]
    fn auto_follows_the_terminal() {
        assert!(SummaryWhen::Auto.wanted(true));
        assert!(!SummaryWhen::Auto.wanted(false));
        assert!(SummaryWhen::Always.wanted(false));
        assert!(!SummaryWhen::Never.wanted(true));
    }
}
