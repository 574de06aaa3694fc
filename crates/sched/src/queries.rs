//! What a driver asks the scheduler about one application between events: its headroom, the
//! largest container it may ask for, and the containers it is about to lose.

use weft_types::{AppId, ContainerId, Resource};

use crate::engine::Engine;
use crate::rules::Rules;

impl<R: Rules> Engine<R> {
    /// The app's headroom (`R::headroom`), or `None` for an unknown app.
    pub(crate) fn app_headroom(&self, app: AppId) -> Option<Resource> {
        self.apps.get(&app).map(|a| R::headroom(self, a))
    }

    /// The largest container the app may ask for (`R::max_container_allocation` of its
    /// queue), or `None` for an unknown app.
    pub(crate) fn app_max_container_allocation(&self, app: AppId) -> Option<Resource> {
        self.apps
            .get(&app)
            .map(|a| R::max_container_allocation(self, a.queue))
    }

    /// The app's containers marked for preemption and still live, in marking order
    /// (`R::preemption_contract`).
    pub(crate) fn app_preemption_contract(&self, app: AppId) -> Vec<ContainerId> {
        R::preemption_contract(self, app)
    }
}
