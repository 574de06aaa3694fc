//! The AM's bookkeeping, free of I/O: which containers it holds, which it must give back, how
//! each one ended, and the application's final status.
//!
//! The driver feeds it RM and NM events and carries out its decisions; keeping it pure lets the
//! tests replay awkward sequences (surplus allocations, lost nodes, failed starts, duplicate
//! completion reports) without a cluster.

use std::collections::{BTreeMap, BTreeSet};

use weft_proto::exit_status;
use weft_proto::v1::FinalApplicationStatus;

/// What to do with a container the RM just granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start the shell command in it.
    Launch,
    /// Give it back: every wanted container is already assigned.
    Release,
    /// Already known (a repeated report); do nothing.
    Ignore,
}

/// How one container ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The container id.
    pub container_id: String,
    /// Where it ran (`host:port`).
    pub node_id: String,
    /// YARN's exit status (the process's code, or a negative framework code).
    pub exit_status: i32,
    /// What happened, as the NM or the RM said, or why it never started.
    pub diagnostics: String,
}

impl Outcome {
    /// True when the shell command exited 0.
    pub fn succeeded(&self) -> bool {
        self.exit_status == exit_status::SUCCESS
    }

    /// One line for the AM's output: where the container ran and how it ended.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} on {}: {}",
            self.container_id,
            self.node_id,
            exit_status::describe(self.exit_status)
        );
        let diag = self.diagnostics.trim();
        if !diag.is_empty() {
            line.push_str(" (");
            line.push_str(diag);
            line.push(')');
        }
        line
    }
}

/// The state of every container the AM asked for.
///
/// A preempted container (exit -102) is neither a success nor a failure: the scheduler took
/// it back, so its task is asked for again and runs in a new container (Hadoop's AMs do the
/// same: preemption is not the task's fault).
#[derive(Debug)]
pub struct Tracker {
    wanted: u32,
    /// Containers preempted so far.
    preempted: u32,
    /// Preempted containers not asked for again yet.
    to_reask: u32,
    /// Containers the RM said it will preempt (its strict contract), so each is told once.
    warned: BTreeSet<String>,
    /// Assigned containers not yet finished, by id, with their node.
    running: BTreeMap<String, String>,
    finished: BTreeMap<String, Outcome>,
    /// Containers to give back with the next allocate call.
    releases: Vec<String>,
    /// The outstanding count last sent to the RM (`None` before the first ask).
    asked: Option<u32>,
}

impl Tracker {
    /// A tracker for `wanted` containers.
    pub fn new(wanted: u32) -> Tracker {
        Tracker {
            wanted,
            preempted: 0,
            to_reask: 0,
            warned: BTreeSet::new(),
            running: BTreeMap::new(),
            finished: BTreeMap::new(),
            releases: Vec::new(),
            asked: None,
        }
    }

    fn assigned(&self) -> u32 {
        u32::try_from(self.running.len() + self.finished.len()).unwrap_or(u32::MAX)
    }

    /// How many containers are still to be allocated.
    pub fn outstanding(&self) -> u32 {
        self.wanted.saturating_sub(self.assigned())
    }

    /// How many containers to ask the RM for now, if any.
    ///
    /// As a YARN AM, the count is the absolute total still outstanding (the RM replaces its
    /// copy with it). The RM lowers its copy as it allocates, so the AM asks only when its own
    /// view changes for another reason: at first, after a resync (the RM lost its copy), and
    /// after a preemption (its task is outstanding again).
    pub fn take_ask(&mut self) -> Option<u32> {
        if self.asked.is_some() && self.to_reask == 0 {
            return None;
        }
        let n = self.outstanding();
        self.asked = Some(n);
        self.to_reask = 0;
        Some(n)
    }

    /// Forgets what the RM was told, so the next [`take_ask`](Self::take_ask) resends it (the
    /// RM restarted and lost its copy of the asks).
    pub fn resync(&mut self) {
        self.asked = None;
    }

    /// Records a container still running from an earlier attempt.
    pub fn adopt(&mut self, container_id: &str, node_id: &str) {
        if !self.is_known(container_id) && self.outstanding() > 0 {
            self.running
                .insert(container_id.to_string(), node_id.to_string());
        }
    }

    fn is_known(&self, container_id: &str) -> bool {
        self.running.contains_key(container_id) || self.finished.contains_key(container_id)
    }

    /// Decides about a container the RM granted.
    pub fn on_allocated(&mut self, container_id: &str, node_id: &str) -> Decision {
        if self.is_known(container_id) || self.releases.iter().any(|r| r == container_id) {
            return Decision::Ignore;
        }
        if self.outstanding() == 0 {
            self.releases.push(container_id.to_string());
            return Decision::Release;
        }
        self.running
            .insert(container_id.to_string(), node_id.to_string());
        Decision::Launch
    }

    fn finish(
        &mut self,
        container_id: &str,
        exit_status: i32,
        diagnostics: String,
    ) -> Option<&Outcome> {
        let node_id = self.running.remove(container_id)?;
        let outcome = Outcome {
            container_id: container_id.to_string(),
            node_id,
            exit_status,
            diagnostics,
        };
        Some(
            self.finished
                .entry(container_id.to_string())
                .or_insert(outcome),
        )
    }

    /// The NM refused or could not be reached: the container counts as failed, and goes back
    /// to the RM so its resources are freed.
    pub fn on_start_failed(&mut self, container_id: &str, message: &str) -> Option<&Outcome> {
        if !self.running.contains_key(container_id) {
            return None;
        }
        self.releases.push(container_id.to_string());
        self.finish(
            container_id,
            exit_status::ABORTED,
            format!("failed to start: {message}"),
        )
    }

    /// A completion the RM reported. Returns the outcome the first time a held container
    /// completes; repeats and containers the AM gave back return `None`. A preempted
    /// container's outcome is returned for the log but not kept: its task is asked for again.
    pub fn on_completed(
        &mut self,
        container_id: &str,
        exit_status: i32,
        diagnostics: &str,
    ) -> Option<Outcome> {
        if exit_status == exit_status::PREEMPTED {
            let node_id = self.running.remove(container_id)?;
            self.warned.remove(container_id);
            self.preempted = self.preempted.saturating_add(1);
            self.to_reask = self.to_reask.saturating_add(1);
            return Some(Outcome {
                container_id: container_id.to_string(),
                node_id,
                exit_status,
                diagnostics: diagnostics.to_string(),
            });
        }
        self.finish(container_id, exit_status, diagnostics.to_string())
            .cloned()
    }

    /// The RM's strict preemption contract: the held containers it will take back. Returns
    /// those not listed before (for the log); the AM keeps running them until they end.
    pub fn on_preemption_notice(&mut self, containers: &[String]) -> Vec<String> {
        containers
            .iter()
            .filter(|c| self.running.contains_key(c.as_str()) && self.warned.insert((*c).clone()))
            .cloned()
            .collect()
    }

    /// Containers preempted so far (each one's task was asked for again).
    pub fn preempted(&self) -> u32 {
        self.preempted
    }

    /// A node was reported lost: every container still running there counts as failed now,
    /// since its own completion report may never come.
    pub fn on_node_lost(&mut self, node_id: &str) -> Vec<Outcome> {
        let ids: Vec<String> = self
            .running
            .iter()
            .filter(|(_, n)| n.as_str() == node_id)
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter()
            .filter_map(|id| {
                self.finish(id, exit_status::ABORTED, format!("node {node_id} was lost"))
                    .cloned()
            })
            .collect()
    }

    /// Containers to hand back to the RM with the next allocate call.
    pub fn take_releases(&mut self) -> Vec<String> {
        std::mem::take(&mut self.releases)
    }

    /// Queues `ids` to be given back again (the call that carried them was not processed).
    pub fn release_again(&mut self, ids: Vec<String>) {
        for id in ids {
            if !self.releases.contains(&id) {
                self.releases.push(id);
            }
        }
    }

    /// The node a held container runs on.
    pub fn node_of(&self, container_id: &str) -> Option<&str> {
        self.running.get(container_id).map(String::as_str)
    }

    /// True when every wanted container has ended one way or another.
    pub fn is_done(&self) -> bool {
        self.finished.len() >= self.wanted as usize
    }

    /// Finished fraction, for the allocate call's progress field.
    pub fn progress(&self) -> f32 {
        if self.wanted == 0 {
            return 1.0;
        }
        self.finished.len() as f32 / self.wanted as f32
    }

    /// Every finished container, in id order.
    pub fn outcomes(&self) -> impl Iterator<Item = &Outcome> {
        self.finished.values()
    }

    /// The status to finish with and a diagnostics summary: SUCCEEDED only when every wanted
    /// container ran and exited 0.
    pub fn final_status(&self) -> (FinalApplicationStatus, String) {
        let failed: Vec<&Outcome> = self.outcomes().filter(|o| !o.succeeded()).collect();
        let ok = self.outcomes().filter(|o| o.succeeded()).count();
        let mut summary = format!(
            "{ok} of {} containers succeeded, {} failed",
            self.wanted,
            failed.len()
        );
        let missing = self.wanted as usize - (ok + failed.len()).min(self.wanted as usize);
        if missing > 0 {
            summary.push_str(&format!(", {missing} never finished"));
        }
        if self.preempted > 0 {
            summary.push_str(&format!("; {} preempted and run again", self.preempted));
        }
        // Failures first: they are what a reader of a long summary is looking for.
        const SHOWN: usize = 20;
        let lines: Vec<String> = failed
            .iter()
            .copied()
            .chain(self.outcomes().filter(|o| o.succeeded()))
            .take(SHOWN)
            .map(Outcome::line)
            .collect();
        for line in &lines {
            summary.push('\n');
            summary.push_str(line);
        }
        if self.finished.len() > SHOWN {
            summary.push_str(&format!("\n... {} more", self.finished.len() - SHOWN));
        }
        let status = if failed.is_empty() && missing == 0 {
            FinalApplicationStatus::Succeeded
        } else {
            FinalApplicationStatus::Failed
        };
        (status, summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_once_then_launches_exactly_what_it_wanted() {
        let mut t = Tracker::new(2);
        assert_eq!(t.take_ask(), Some(2));
        assert_eq!(t.take_ask(), None);
        assert_eq!(t.on_allocated("c2", "n1:1"), Decision::Launch);
        assert_eq!(t.on_allocated("c2", "n1:1"), Decision::Ignore);
        assert_eq!(t.on_allocated("c3", "n2:1"), Decision::Launch);
        assert_eq!(t.outstanding(), 0);
        assert_eq!(t.on_allocated("c4", "n2:1"), Decision::Release);
        assert_eq!(t.take_releases(), vec!["c4".to_string()]);
        assert_eq!(t.take_releases(), Vec::<String>::new());
        assert_eq!(t.node_of("c3"), Some("n2:1"));
    }

    #[test]
    fn succeeds_only_when_every_container_exits_zero() {
        let mut t = Tracker::new(2);
        t.on_allocated("c2", "n1:1");
        t.on_allocated("c3", "n2:1");
        assert!(!t.is_done());
        let first = t.on_completed("c2", 0, "");
        assert_eq!(
            first.map(|o| o.line()),
            Some("c2 on n1:1: success".to_string())
        );
        assert!(
            t.on_completed("c2", 0, "").is_none(),
            "duplicates are ignored"
        );
        assert_eq!(t.progress(), 0.5);
        t.on_completed("c3", 0, "");
        assert!(t.is_done());
        let (status, diag) = t.final_status();
        assert_eq!(status, FinalApplicationStatus::Succeeded);
        assert!(
            diag.starts_with("2 of 2 containers succeeded, 0 failed\n"),
            "{diag}"
        );
        assert!(diag.contains("c3 on n2:1: success"));
    }

    #[test]
    fn a_non_zero_exit_fails_the_application_and_is_listed_first() {
        let mut t = Tracker::new(2);
        t.on_allocated("c2", "n1:1");
        t.on_allocated("c3", "n2:1");
        t.on_completed("c2", 0, "");
        t.on_completed("c3", 3, "oops");
        let (status, diag) = t.final_status();
        assert_eq!(status, FinalApplicationStatus::Failed);
        let lines: Vec<&str> = diag.lines().collect();
        assert_eq!(lines[0], "1 of 2 containers succeeded, 1 failed");
        assert_eq!(lines[1], "c3 on n2:1: exit code 3 (oops)");
    }

    #[test]
    fn failed_starts_count_as_failures_and_are_released() {
        let mut t = Tracker::new(1);
        t.on_allocated("c2", "n1:1");
        let o = t.on_start_failed("c2", "connection refused").cloned();
        assert_eq!(o.map(|o| o.exit_status), Some(exit_status::ABORTED));
        assert_eq!(t.take_releases(), vec!["c2".to_string()]);
        // The RM later reports the released container aborted: not counted twice.
        assert!(t
            .on_completed("c2", exit_status::ABORTED, "released")
            .is_none());
        assert!(t.is_done());
        let (status, diag) = t.final_status();
        assert_eq!(status, FinalApplicationStatus::Failed);
        assert!(
            diag.contains("failed to start: connection refused"),
            "{diag}"
        );
    }

    #[test]
    fn a_lost_node_fails_only_its_running_containers() {
        let mut t = Tracker::new(3);
        t.on_allocated("c2", "n1:1");
        t.on_allocated("c3", "n1:1");
        t.on_allocated("c4", "n2:1");
        t.on_completed("c2", 0, "");
        let lost = t.on_node_lost("n1:1");
        assert_eq!(lost.len(), 1);
        assert_eq!(lost[0].container_id, "c3");
        assert_eq!(lost[0].diagnostics, "node n1:1 was lost");
        assert!(!t.is_done());
        t.on_completed("c4", 0, "");
        assert!(t.is_done());
        assert_eq!(t.final_status().0, FinalApplicationStatus::Failed);
    }

    #[test]
    fn completions_of_unknown_or_released_containers_are_ignored() {
        let mut t = Tracker::new(1);
        t.on_allocated("c2", "n1:1");
        assert_eq!(t.on_allocated("c9", "n1:1"), Decision::Release);
        assert!(t.on_completed("c9", -100, "released").is_none());
        assert!(t.on_completed("nope", 0, "").is_none());
        assert!(!t.is_done());
    }

    #[test]
    fn resync_resends_the_outstanding_ask() {
        let mut t = Tracker::new(3);
        assert_eq!(t.take_ask(), Some(3));
        t.on_allocated("c2", "n1:1");
        t.resync();
        assert_eq!(t.take_ask(), Some(2));
        assert_eq!(t.take_ask(), None);
        t.release_again(vec!["c9".to_string()]);
        assert_eq!(t.take_releases(), vec!["c9".to_string()]);
    }

    #[test]
    fn adopted_containers_from_an_earlier_attempt_count_as_assigned() {
        let mut t = Tracker::new(2);
        t.adopt("c2", "n1:1");
        assert_eq!(t.take_ask(), Some(1));
        assert!(t.on_completed("c2", 0, "").is_some());
    }

    #[test]
    fn a_preempted_container_is_asked_for_again_and_not_counted_as_finished() {
        let mut t = Tracker::new(2);
        assert_eq!(t.take_ask(), Some(2));
        t.on_allocated("c2", "n1:1");
        t.on_allocated("c3", "n1:1");
        assert_eq!(t.take_ask(), None);
        assert_eq!(
            t.on_preemption_notice(&["c3".to_string(), "c9".to_string()]),
            vec!["c3".to_string()],
            "only held containers, and each once"
        );
        assert!(t.on_preemption_notice(&["c3".to_string()]).is_empty());
        let o = t
            .on_completed(
                "c3",
                exit_status::PREEMPTED,
                "Container preempted by scheduler for queue root.b",
            )
            .expect("a held container");
        assert_eq!(
            o.line(),
            "c3 on n1:1: preempted (Container preempted by scheduler for queue root.b)"
        );
        assert!(
            t.on_completed("c3", exit_status::PREEMPTED, "").is_none(),
            "repeats are ignored"
        );
        assert_eq!(t.progress(), 0.0, "a preempted container finished nothing");
        assert_eq!(t.outstanding(), 1);
        assert_eq!(t.take_ask(), Some(1), "one more container, once");
        assert_eq!(t.take_ask(), None);
        assert_eq!(t.on_allocated("c4", "n2:1"), Decision::Launch);
        t.on_completed("c2", 0, "");
        assert!(!t.is_done());
        t.on_completed("c4", 0, "");
        assert!(t.is_done());
        let (status, diag) = t.final_status();
        assert_eq!(status, FinalApplicationStatus::Succeeded, "{diag}");
        assert!(
            diag.starts_with("2 of 2 containers succeeded, 0 failed; 1 preempted and run again\n"),
            "{diag}"
        );
        assert_eq!(t.preempted(), 1);
    }

    #[test]
    fn a_re_ask_after_a_preemption_is_the_absolute_total_outstanding() {
        let mut t = Tracker::new(4);
        assert_eq!(t.take_ask(), Some(4));
        t.on_allocated("c2", "n1:1");
        t.on_allocated("c3", "n1:1");
        // Two still outstanding at the RM; the preempted one makes three, sent as the total.
        t.on_completed("c2", exit_status::PREEMPTED, "");
        assert_eq!(t.take_ask(), Some(3));
        assert_eq!(t.take_ask(), None);
    }

    #[test]
    fn a_resync_after_a_preemption_asks_for_everything_outstanding_once() {
        let mut t = Tracker::new(3);
        assert_eq!(t.take_ask(), Some(3));
        t.on_allocated("c2", "n1:1");
        t.on_completed("c2", exit_status::PREEMPTED, "");
        t.resync();
        assert_eq!(t.take_ask(), Some(3), "the RM lost its copy: everything");
        assert_eq!(t.take_ask(), None, "the preempted one is in it already");
    }

    #[test]
    fn an_unfinished_run_is_not_a_success() {
        let mut t = Tracker::new(2);
        t.on_allocated("c2", "n1:1");
        t.on_completed("c2", 0, "");
        let (status, diag) = t.final_status();
        assert_eq!(status, FinalApplicationStatus::Failed);
        assert!(diag.contains("1 never finished"), "{diag}");
    }
}
