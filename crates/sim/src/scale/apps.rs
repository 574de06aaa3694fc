//! A simulated ApplicationMaster: it asks for its stages one after the other and runs each
//! container for its task's duration.

use crate::driver::duration_tag;
use crate::workload::AppPlan;
use weft_sched::ContainerAsk;
use weft_types::Time;

/// What the AM does next.
#[derive(Debug)]
pub(crate) enum AppStep {
    /// Nothing yet.
    Wait,
    /// Ask for these containers.
    Ask(Vec<ContainerAsk>),
    /// Every stage is done: unregister.
    Finish,
}

/// One application's progress.
#[derive(Debug)]
pub(crate) struct AppRun {
    pub(crate) plan: AppPlan,
    pub(crate) submitted: Option<Time>,
    pub(crate) first_container: Option<Time>,
    pub(crate) finished: Option<Time>,
    pub(crate) rejected: bool,
    /// The stage being run (`plan.stages.len()` once all are done).
    stage: usize,
    /// Containers of the current stage not completed yet.
    stage_left: u64,
}

impl AppRun {
    pub(crate) fn new(plan: AppPlan) -> AppRun {
        AppRun {
            plan,
            submitted: None,
            first_container: None,
            finished: None,
            rejected: false,
            stage: 0,
            stage_left: 0,
        }
    }

    /// The scheduler accepted the app: an unmanaged AM starts at once.
    pub(crate) fn accepted(&mut self) -> AppStep {
        if self.plan.am.is_some() {
            AppStep::Wait
        } else {
            self.start_stage(0)
        }
    }

    /// The AM container was allocated: the AM registers and asks for its first stage.
    pub(crate) fn am_started(&mut self) -> AppStep {
        self.start_stage(0)
    }

    fn start_stage(&mut self, first: usize) -> AppStep {
        let mut k = first;
        while let Some(stage) = self.plan.stages.get(k) {
            let total: u64 = stage.groups.iter().map(|g| u64::from(g.count)).sum();
            if total == 0 {
                k += 1;
                continue;
            }
            self.stage = k;
            self.stage_left = total;
            let mut asks = Vec::with_capacity(stage.groups.len());
            for g in stage.groups.iter().filter(|g| g.count > 0) {
                asks.push(ContainerAsk {
                    priority: g.priority,
                    resources: g.resource,
                    count: g.count,
                    hosts: g.host.iter().cloned().collect(),
                    racks: g.rack.iter().cloned().collect(),
                    relax_locality: true,
                    // The run time travels with the ask and comes back on each allocation.
                    tag: duration_tag(Some(g.duration)),
                });
            }
            return AppStep::Ask(asks);
        }
        self.stage = self.plan.stages.len();
        AppStep::Finish
    }

    /// A task container completed: maybe the next stage, maybe the end.
    pub(crate) fn task_completed(&mut self) -> AppStep {
        self.stage_left = self.stage_left.saturating_sub(1);
        if self.stage_left > 0 || self.stage >= self.plan.stages.len() {
            return AppStep::Wait;
        }
        self.start_stage(self.stage + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Stage, TaskGroup};
    use weft_types::{Duration, Resource};

    fn group(priority: i32, count: u32, ms: u64) -> TaskGroup {
        TaskGroup {
            priority,
            resource: Resource::new(1024, 1),
            count,
            duration: Duration::from_millis(ms),
            host: None,
            rack: None,
        }
    }

    #[test]
    fn stages_run_in_order_and_the_app_finishes_after_the_last() {
        let plan = AppPlan {
            submit: Time::ZERO,
            name: "a".into(),
            user: "u".into(),
            queue: None,
            am: Some(Resource::new(1024, 1)),
            stages: vec![
                Stage {
                    groups: vec![group(20, 2, 100)],
                },
                Stage { groups: vec![] },
                Stage {
                    groups: vec![group(10, 1, 50)],
                },
            ],
        };
        let mut app = AppRun::new(plan);
        assert!(matches!(app.accepted(), AppStep::Wait));
        let AppStep::Ask(asks) = app.am_started() else {
            panic!("the AM asks for its first stage")
        };
        assert_eq!((asks.len(), asks[0].count, asks[0].priority), (1, 2, 20));
        assert_eq!(asks[0].tag, duration_tag(Some(Duration::from_millis(100))));
        assert!(matches!(app.task_completed(), AppStep::Wait));
        // The empty middle stage is skipped.
        let AppStep::Ask(asks) = app.task_completed() else {
            panic!("stage 3 follows stage 1")
        };
        assert_eq!((asks[0].count, asks[0].priority), (1, 10));
        assert_eq!(asks[0].tag, duration_tag(Some(Duration::from_millis(50))));
        assert!(matches!(app.task_completed(), AppStep::Finish));
    }

    #[test]
    fn an_unmanaged_am_asks_on_acceptance() {
        let plan = AppPlan {
            submit: Time::ZERO,
            name: "a".into(),
            user: "u".into(),
            queue: None,
            am: None,
            stages: vec![Stage {
                groups: vec![group(1, 3, 10)],
            }],
        };
        let mut app = AppRun::new(plan);
        assert!(matches!(app.accepted(), AppStep::Ask(_)));
    }
}
