//! What the driver tests share: a driver running over a store of the test's, and a small
//! submission.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use weft_rm_core::{RmConfig, RmCore, Submission};
use weft_sched::SchedulerConfig;
use weft_store::{LaunchContext, StateStore};
use weft_types::{Resource, ResourceTypes, Time};

use crate::driver::{self, Driver, StoreFailure};

/// A driver whose loop runs on its own task. Keep the whole value while the driver should
/// run: dropping it drops the stop signal's sender, which stops the loop.
pub(super) struct RunningDriver {
    pub(super) driver: Driver,
    /// Published when the store refuses a write.
    pub(super) failure: StoreFailure,
    /// The loop's task, which ends when the driver stops.
    pub(super) task: JoinHandle<()>,
    _stop: watch::Sender<bool>,
}

/// A driver over `store` with a new core (the default scheduler configuration) and a tick of
/// an hour (so no tick comes between a test's calls), its start-up writes flushed and its loop
/// spawned on the test's runtime.
pub(super) fn start_driver(store: Arc<dyn StateStore>) -> RunningDriver {
    let core = RmCore::new(RmConfig::new(SchedulerConfig::default()), 1, Time(1));
    let (driver, mut driver_loop, failure) = driver::new(
        core,
        store,
        Duration::from_secs(3600),
        ResourceTypes::default(),
        Default::default(),
    );
    driver_loop.flush_startup().expect("startup writes");
    let (stop, stop_rx) = watch::channel(false);
    let task = tokio::spawn(driver_loop.run(stop_rx));
    RunningDriver {
        driver,
        failure,
        task,
        _stop: stop,
    }
}

/// A small submission.
pub(super) fn submission() -> Submission {
    Submission {
        name: "t".into(),
        user: "alice".into(),
        application_type: "YARN".into(),
        am_resource: Resource::new(1024, 1),
        launch: LaunchContext {
            commands: vec!["sleep 1".into()],
            ..LaunchContext::default()
        },
        ..Submission::default()
    }
}
