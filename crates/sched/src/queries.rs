//! What a driver asks the scheduler about one application between events: its headroom and the
//! largest container it may ask for.

use weft_types::{AppId, Resource};

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
}
