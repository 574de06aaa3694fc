//! Read-only views on [`RmCore`] for REST, the web UI and metrics: every attempt of an app,
//! the live containers of an app, and the cluster-wide figures. Nothing here changes state
//! (the scheduler snapshot only brings cached steady shares up to date).

use weft_store::AppState;
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use crate::core::{Attempt, RmCore};
use crate::model::*;

fn attempt_report(t: &Attempt) -> AttemptReport {
    AttemptReport {
        id: t.id,
        state: t.state,
        am_container: t.am_container,
        am_node: t.am_node.clone(),
        am_rpc: t.am_rpc.clone(),
        start_time: t.start_time,
        finish_time: t.finish_time,
        diagnostics: t.diagnostics.clone(),
    }
}

impl RmCore {
    /// Every attempt of an application, oldest first; `None` for an unknown application.
    pub fn attempt_reports(&self, id: &ApplicationId) -> Option<Vec<AttemptReport>> {
        let app = self.apps.get(id)?;
        Some(app.attempts.iter().map(attempt_report).collect())
    }

    /// The containers of an application, by id: the live ones and the latest ended ones
    /// (at most [`ENDED_CONTAINERS_KEPT`](crate::ENDED_CONTAINERS_KEPT) of those);
    /// `None` for an unknown application.
    pub fn container_reports(&self, id: &ApplicationId) -> Option<Vec<ContainerReport>> {
        let app = self.apps.get(id)?;
        let mut reports: Vec<ContainerReport> = self
            .containers
            .of_app(*id)
            .map(|(cid, c)| self.container_report(cid, c))
            .chain(app.ended.reports(*id, &self.nodes))
            .collect();
        reports.sort_by_key(|r| r.id);
        Some(reports)
    }

    /// The cluster-wide figures. Takes `&mut self` because pending and reserved figures come
    /// from a scheduler snapshot, which refreshes cached steady shares. `_now` keeps the
    /// signature of the other inputs, so time-based figures can come without an API change.
    pub fn cluster_metrics(&mut self, _now: Time) -> ClusterMetrics {
        let mut m = ClusterMetrics::default();
        for app in self.apps.values() {
            m.apps_submitted += 1;
            match app.state {
                AppState::New | AppState::Submitted | AppState::Accepted => m.apps_pending += 1,
                AppState::Running => m.apps_running += 1,
                AppState::Finished => m.apps_completed += 1,
                AppState::Failed => m.apps_failed += 1,
                AppState::Killed => m.apps_killed += 1,
            }
        }
        for node in self.nodes.values() {
            m.total_nodes += 1;
            match node.state {
                NodeState::Running => m.active_nodes += 1,
                NodeState::Unhealthy => m.unhealthy_nodes += 1,
                NodeState::Lost => m.lost_nodes += 1,
                NodeState::Decommissioned => m.decommissioned_nodes += 1,
                NodeState::Shutdown => m.shutdown_nodes += 1,
            }
        }
        let (total, used) = self.cluster_resources();
        m.total = total;
        m.allocated = used;
        m.available = total.saturating_sub(used);
        m.containers_allocated = self.containers.len() as u64;
        // The scheduler's sums, not its snapshot: at 12,000 nodes and 10,000 apps a snapshot
        // held the driver ~90 ms for each call (a load balancer or dashboard polls this).
        let pending = self.sched.pending_summary();
        m.pending = pending.pending;
        m.containers_pending = pending.pending_containers;
        m.containers_reserved = pending.reserved_nodes;
        m.reserved = pending.reserved;
        m
    }

    /// Applications by state, nodes by state and the containers on the nodes, counted
    /// without building any report (for metrics).
    pub fn state_counts(&self) -> StateCounts {
        let mut counts = StateCounts::default();
        for app in self.apps.values() {
            StateCounts::add(&mut counts.apps, app.state);
        }
        for node in self.nodes.values() {
            StateCounts::add(&mut counts.nodes, node.state);
            counts.containers_on_nodes += node.containers.len() as u64;
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use weft_store::{AppState, AttemptState, FinalStatus};
    use weft_types::{Resource, Time};

    use crate::tests::*;
    use crate::*;

    #[test]
    fn unknown_apps_have_no_attempts_or_containers() {
        let mut c = core();
        let id = c.new_application(Time(1));
        assert!(c.attempt_reports(&id).is_none(), "issued but not submitted");
        assert!(c.container_reports(&id).is_none());
    }

    #[test]
    fn attempts_are_listed_oldest_first_across_failures() {
        let mut c = core();
        register(&mut c, 0, "n1:1");
        let (app, attempt, _, am) = running_app(&mut c, 10, "n1:1");
        // The AM container dies: the attempt fails and a second one starts.
        report(
            &mut c,
            20,
            "n1:1",
            vec![status(am, NmContainerState::Complete, 1)],
        );
        drain(&mut c);
        let attempts = c.attempt_reports(&app).unwrap();
        assert_eq!(attempts.len(), 2);
        assert_eq!(attempts[0].id, attempt);
        assert_eq!(attempts[0].state, AttemptState::Failed);
        assert_eq!(attempts[0].am_container, Some(am));
        assert_eq!(attempts[0].am_rpc, Some(("amhost".to_string(), 4000)));
        assert!(attempts[0].diagnostics.contains("exited with status 1"));
        assert_eq!(attempts[1].id.attempt, 2);
        assert_eq!(
            c.app_report(&app).unwrap().current_attempt.unwrap().id,
            attempts[1].id
        );
    }

    #[test]
    fn containers_of_an_app_show_the_am_and_its_workers() {
        let mut c = core();
        register(&mut c, 0, "n1:1");
        let (app, attempt, token, am) = running_app(&mut c, 10, "n1:1");
        c.am_allocate(Time(12), attempt, &token, ask(2)).unwrap();
        heartbeat(&mut c, 13, "n1:1");
        heartbeat(&mut c, 13, "n1:1");
        drain(&mut c);
        let got = c
            .am_allocate(Time(14), attempt, &token, AllocateRequest::default())
            .unwrap();
        assert_eq!(got.allocated.len(), 2);
        let cs = c.container_reports(&app).unwrap();
        assert_eq!(cs.len(), 3, "{cs:?}");
        assert_eq!(cs[0].id, am);
        assert!(cs[0].is_am && !cs[1].is_am);
        assert!(cs
            .iter()
            .all(|x| x.attempt == attempt && x.node_id == "n1:1"));
        assert_eq!(cs[1].resource, Resource::new(1024, 1));
        assert_eq!(cs[1].state, LiveContainerState::Acquired);
        assert_eq!(cs[1].state.container_state(), "NEW");
        // Another app's AM container is not listed under this app.
        let other = submit(&mut c, 14);
        heartbeat(&mut c, 14, "n1:1");
        drain(&mut c);
        assert_eq!(c.container_reports(&app).unwrap().len(), 3);
        let theirs = c.container_reports(&other).unwrap();
        assert_eq!(theirs.len(), 1);
        assert!(theirs[0].is_am && theirs[0].id.app == other);
        // Once the node reports a worker running, it shows as RUNNING.
        report(
            &mut c,
            15,
            "n1:1",
            vec![status(cs[1].id, NmContainerState::Running, 0)],
        );
        let cs2 = c.container_reports(&app).unwrap();
        assert_eq!(cs2[1].state, LiveContainerState::Running);
    }

    #[test]
    fn ended_containers_stay_in_the_reports_with_their_times_and_exit() {
        let mut c = core();
        register(&mut c, 0, "n1:1");
        let (app, attempt, token, am) = running_app(&mut c, 10, "n1:1");
        c.am_allocate(Time(12), attempt, &token, ask(1)).unwrap();
        heartbeat(&mut c, 13, "n1:1");
        drain(&mut c);
        let worker = c
            .am_allocate(Time(14), attempt, &token, AllocateRequest::default())
            .unwrap()
            .allocated[0]
            .id;
        report(
            &mut c,
            20,
            "n1:1",
            vec![status(worker, NmContainerState::Complete, 3)],
        );
        drain(&mut c);
        let cs = c.container_reports(&app).unwrap();
        assert_eq!(cs.len(), 2, "the AM and the ended worker: {cs:?}");
        let ended = &cs[1];
        assert_eq!(ended.id, worker);
        assert_eq!(ended.state, LiveContainerState::Complete);
        assert_eq!(ended.state.container_state(), "COMPLETE");
        assert_eq!(ended.start_time, Time(13), "allocated at the heartbeat");
        assert_eq!(ended.finish_time, Some(Time(20)));
        assert_eq!(ended.exit_status, Some(3));
        assert_eq!(ended.node_id, "n1:1");
        assert!(!ended.is_am);
        assert_eq!(cs[0].start_time, Time(10), "the AM's start");
        assert_eq!(cs[0].finish_time, None);

        // The app finishes: every container is still listed, the AM now ended too.
        c.am_finish(
            Time(30),
            attempt,
            &token,
            FinalStatus::Succeeded,
            "done",
            None,
        )
        .unwrap();
        report(
            &mut c,
            31,
            "n1:1",
            vec![status(am, NmContainerState::Complete, 0)],
        );
        drain(&mut c);
        assert_eq!(c.app_report(&app).unwrap().state, AppState::Finished);
        let cs = c.container_reports(&app).unwrap();
        assert_eq!(cs.len(), 2, "{cs:?}");
        assert!(cs.iter().all(|x| x.state == LiveContainerState::Complete));
        assert!(cs[0].is_am && cs[0].finish_time.is_some());
    }

    #[test]
    fn each_app_keeps_a_bounded_number_of_ended_containers() {
        let mut c = core();
        register(&mut c, 0, "n1:1");
        let (app, attempt, token, _) = running_app(&mut c, 10, "n1:1");
        let total = crate::ENDED_CONTAINERS_KEPT + 5;
        let mut first = None;
        for i in 0..total as u64 {
            let t = 100 + 10 * i;
            c.am_allocate(Time(t), attempt, &token, ask(1)).unwrap();
            heartbeat(&mut c, t + 1, "n1:1");
            drain(&mut c);
            let got = c
                .am_allocate(Time(t + 2), attempt, &token, AllocateRequest::default())
                .unwrap();
            let id = got.allocated[0].id;
            first.get_or_insert(id);
            report(
                &mut c,
                t + 3,
                "n1:1",
                vec![status(id, NmContainerState::Complete, 0)],
            );
            drain(&mut c);
        }
        let cs = c.container_reports(&app).unwrap();
        let ended: Vec<_> = cs
            .iter()
            .filter(|x| x.state == LiveContainerState::Complete)
            .collect();
        assert_eq!(ended.len(), crate::ENDED_CONTAINERS_KEPT);
        assert!(
            ended.iter().all(|x| Some(x.id) != first),
            "the oldest ended containers are the ones dropped"
        );
        assert_eq!(
            cs.len(),
            crate::ENDED_CONTAINERS_KEPT + 1,
            "plus the live AM"
        );
    }

    /// Runs an app on `node` from `t`: `tasks` containers allocated, completed and the app
    /// finished (its AM container ended too); returns the app and the next free time.
    fn app_with_ended_tasks(
        c: &mut RmCore,
        t: u64,
        node: &str,
        tasks: u32,
    ) -> (weft_types::yarn_id::ApplicationId, u64) {
        let (app, attempt, token, am) = running_app(c, t, node);
        c.am_allocate(Time(t + 1), attempt, &token, ask(tasks))
            .unwrap();
        for _ in 0..tasks {
            // One container a heartbeat.
            heartbeat(c, t + 2, node);
        }
        drain(c);
        let got = c
            .am_allocate(Time(t + 3), attempt, &token, AllocateRequest::default())
            .unwrap();
        assert_eq!(got.allocated.len(), tasks as usize);
        let done = got
            .allocated
            .iter()
            .map(|a| status(a.id, NmContainerState::Complete, 0))
            .collect();
        report(c, t + 4, node, done);
        drain(c);
        c.am_finish(
            Time(t + 5),
            attempt,
            &token,
            FinalStatus::Succeeded,
            "",
            None,
        )
        .unwrap();
        report(
            c,
            t + 6,
            node,
            vec![status(am, NmContainerState::Complete, 0)],
        );
        drain(c);
        (app, t + 10)
    }

    fn ended_of(c: &RmCore, app: &weft_types::yarn_id::ApplicationId) -> usize {
        c.container_reports(app).map_or(0, |cs| {
            cs.iter()
                .filter(|x| x.state == LiveContainerState::Complete)
                .count()
        })
    }

    #[test]
    fn the_ended_containers_of_all_apps_stay_within_the_total_bound_completed_ones_going_first() {
        let mut cfg = crate::tests::config("<allocations/>");
        cfg.ended_containers_kept_total = 12;
        let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
        drain(&mut c);
        register(&mut c, 0, "n1:1");
        let mut t = 10;
        let mut apps = Vec::new();
        for _ in 0..40 {
            let (app, next) = app_with_ended_tasks(&mut c, t, "n1:1", 4);
            apps.push(app);
            t = next;
            let kept: usize = apps.iter().map(|a| ended_of(&c, a)).sum();
            assert!(kept <= 12, "{kept} records kept over the bound of 12");
            assert_eq!(kept, c.ended_total.kept, "the total is counted as kept");
        }
        // The newest apps keep theirs (4 tasks and the AM each); older ones gave theirs up.
        let newest = apps.len() - 1;
        assert_eq!(ended_of(&c, &apps[newest]), 5);
        assert_eq!(ended_of(&c, &apps[newest - 1]), 5);
        assert_eq!(
            ended_of(&c, &apps[0]),
            0,
            "the oldest completed app went first"
        );
        // A live app at the bound keeps a rolling window of its latest.
        let (app, attempt, token, _) = running_app(&mut c, t, "n1:1");
        for round in 0..4 {
            let t = t + 10 + 10 * round;
            c.am_allocate(Time(t), attempt, &token, ask(5)).unwrap();
            for _ in 0..5 {
                heartbeat(&mut c, t + 1, "n1:1");
            }
            drain(&mut c);
            let got = c
                .am_allocate(Time(t + 2), attempt, &token, AllocateRequest::default())
                .unwrap();
            let done = got
                .allocated
                .iter()
                .map(|a| status(a.id, NmContainerState::Complete, 0))
                .collect();
            report(&mut c, t + 3, "n1:1", done);
            drain(&mut c);
        }
        assert_eq!(
            ended_of(&c, &app),
            12,
            "every other app gave its records up"
        );
        assert_eq!(c.ended_total.kept, 12);
    }

    #[test]
    fn retention_takes_an_evicted_apps_records_off_the_total() {
        let mut cfg = crate::tests::config("<allocations/>");
        cfg.max_completed_apps = 2;
        let mut c = RmCore::new(cfg, crate::tests::TS, Time(0));
        drain(&mut c);
        register(&mut c, 0, "n1:1");
        let mut t = 10;
        for _ in 0..5 {
            t = app_with_ended_tasks(&mut c, t, "n1:1", 3).1;
        }
        assert_eq!(
            c.ended_total.kept,
            2 * 4,
            "two completed apps of 3 tasks and an AM"
        );
    }

    #[test]
    fn cluster_metrics_count_apps_nodes_and_resources() {
        let mut c = core();
        register(&mut c, 0, "n1:1");
        register(&mut c, 0, "n2:1");
        let (_, attempt, token, _) = running_app(&mut c, 10, "n1:1");
        let pending = submit(&mut c, 11);
        let killed = submit(&mut c, 12);
        c.kill(Time(13), killed, None).unwrap();
        drain(&mut c);
        c.am_allocate(Time(14), attempt, &token, ask(3)).unwrap();
        c.tick(Time(15));
        drain(&mut c);
        let m = c.cluster_metrics(Time(16));
        assert_eq!(m.apps_submitted, 3);
        assert_eq!(m.apps_killed, 1);
        assert_eq!(m.apps_running + m.apps_pending, 2, "{m:?}");
        assert_eq!(m.apps_completed + m.apps_failed, 0);
        assert_eq!((m.total_nodes, m.active_nodes, m.lost_nodes), (2, 2, 0));
        assert_eq!(m.total, Resource::new(16384, 16));
        let (_, used) = c.cluster_resources();
        assert_eq!(m.allocated, used);
        assert_eq!(m.available, m.total.saturating_sub(m.allocated));
        assert!(m.containers_allocated >= 1);
        // Three asked-for workers plus the pending app's AM wait for a node heartbeat.
        assert!(m.containers_pending >= 3, "{m:?}");
        assert!(c.app_report(&pending).is_some());
    }

    #[test]
    fn lost_nodes_are_counted_apart() {
        let mut c = core();
        register(&mut c, 0, "n1:1");
        register(&mut c, 0, "n2:1");
        // Only n1 keeps heartbeating; n2 goes silent past the expiry.
        heartbeat(&mut c, NM_EXPIRY / 2 + 1_000, "n1:1");
        let late = NM_EXPIRY + 1_000;
        c.tick(Time(late));
        drain(&mut c);
        let m = c.cluster_metrics(Time(late));
        assert_eq!((m.total_nodes, m.active_nodes, m.lost_nodes), (2, 1, 1));
        assert_eq!(m.total, Resource::new(8192, 8));
    }
}
