//! The RM's applications (live and retained finished ones): found by id in one probe on the
//! hot paths (every allocation, completion and AM call), listed in id order for reports.

use std::collections::BTreeSet;

use weft_types::yarn_id::ApplicationId;

use crate::core::App;
use crate::id_map::IdMap;

#[derive(Default)]
pub(crate) struct AppTable {
    by_id: IdMap<ApplicationId, App>,
    /// Every id in the table, for listings in id order (changes only when an app is
    /// submitted, recovered or dropped by retention).
    order: BTreeSet<ApplicationId>,
}

impl AppTable {
    #[inline]
    pub(crate) fn get(&self, id: &ApplicationId) -> Option<&App> {
        self.by_id.get(id)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: &ApplicationId) -> Option<&mut App> {
        self.by_id.get_mut(id)
    }

    pub(crate) fn contains_key(&self, id: &ApplicationId) -> bool {
        self.by_id.contains_key(id)
    }

    pub(crate) fn insert(&mut self, id: ApplicationId, app: App) -> Option<App> {
        self.order.insert(id);
        self.by_id.insert(id, app)
    }

    pub(crate) fn remove(&mut self, id: &ApplicationId) -> Option<App> {
        self.order.remove(id);
        self.by_id.remove(id)
    }

    /// Every app, in id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &App> {
        self.order.iter().filter_map(|id| self.by_id.get(id))
    }

    /// Every app, in no particular order (for updates that do not depend on it).
    pub(crate) fn values_mut_unordered(&mut self) -> impl Iterator<Item = &mut App> {
        self.by_id.values_mut_unordered()
    }
}
