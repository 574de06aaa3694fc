//! The NM's view of its containers: running ones and completed ones the RM has not yet
//! acknowledged (YARN reports a completion until the RM lists it in
//! `containers_to_be_removed_from_nm`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use weft_proto::exit_status;
use weft_proto::v1::{ContainerState, ContainerStatus, NmContainerStatus, Resource};

use crate::executor::ContainerHandle;

/// One container this NM launched.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) app_id: String,
    pub(crate) user: String,
    pub(crate) capability: Resource,
    pub(crate) created_ms: i64,
    pub(crate) handle: ContainerHandle,
    /// The RM has recorded the completion; no longer reported in heartbeats.
    pub(crate) acked: bool,
    /// An answered heartbeat carried this container's RUNNING status, so later ones leave it
    /// out (cleared when the NM registers again: a new RM may not have it).
    pub(crate) running_delivered: bool,
}

impl Entry {
    pub(crate) fn status(&self) -> ContainerStatus {
        let (state, exit, diagnostics) = match self.handle.completion() {
            Some(c) => (ContainerState::Complete, c.exit_status, c.diagnostics),
            None => (ContainerState::Running, exit_status::INVALID, String::new()),
        };
        ContainerStatus {
            container_id: self.handle.id().to_string(),
            state: state as i32,
            exit_status: exit,
            diagnostics,
            capability: Some(self.capability.clone()),
        }
    }

    fn nm_status(&self) -> NmContainerStatus {
        let s = self.status();
        NmContainerStatus {
            container_id: s.container_id,
            container_state: s.state,
            resource: s.capability,
            priority: 0,
            diagnostics: s.diagnostics,
            container_exit_status: s.exit_status,
            creation_time_ms: self.created_ms,
        }
    }

    fn completed(&self) -> bool {
        self.handle.completion().is_some()
    }
}

#[derive(Debug, Default)]
struct Inner {
    containers: BTreeMap<String, Entry>,
    /// Apps the RM told us are finished; their acknowledged containers are dropped.
    finished_apps: BTreeSet<String>,
    /// The submitter of every app that ran here, kept after its containers are forgotten so
    /// the web service can still name it (a few bytes per app).
    users: BTreeMap<String, String>,
}

/// What one heartbeat reports.
#[derive(Debug, Default)]
pub(crate) struct HeartbeatStatuses {
    pub(crate) statuses: Vec<ContainerStatus>,
    /// Containers running here, reported or not.
    pub(crate) running: u32,
    /// The RUNNING statuses among `statuses`.
    pub(crate) running_sent: Vec<String>,
}

/// Shared between the container-management service and the heartbeat loop.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table(Arc<Mutex<Inner>>);

impl Table {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.lock().containers.contains_key(id)
    }

    pub(crate) fn insert(&self, entry: Entry) {
        let mut inner = self.lock();
        inner.finished_apps.remove(&entry.app_id);
        inner.users.insert(entry.app_id.clone(), entry.user.clone());
        inner
            .containers
            .insert(entry.handle.id().to_string(), entry);
    }

    pub(crate) fn get(&self, id: &str) -> Option<Entry> {
        self.lock().containers.get(id).cloned()
    }

    /// Statuses for a heartbeat: completions the RM has not acknowledged and RUNNING
    /// statuses no answered heartbeat carried yet (every RUNNING one with `all`), with how many
    /// containers run.
    pub(crate) fn for_heartbeat(&self, all: bool) -> HeartbeatStatuses {
        let inner = self.lock();
        let mut out = HeartbeatStatuses::default();
        for e in inner.containers.values().filter(|e| !e.acked) {
            let running = !e.completed();
            if running {
                out.running = out.running.saturating_add(1);
                if e.running_delivered && !all {
                    continue;
                }
                out.running_sent.push(e.handle.id().to_string());
            }
            out.statuses.push(e.status());
        }
        out
    }

    /// An answered heartbeat carried these RUNNING statuses: leave them out from now on.
    pub(crate) fn running_delivered(&self, ids: &[String]) {
        let mut inner = self.lock();
        for id in ids {
            if let Some(e) = inner.containers.get_mut(id) {
                e.running_delivered = true;
            }
        }
    }

    /// Registering again (a restarted RM, a resync): report every running container anew.
    pub(crate) fn forget_delivered(&self) {
        for e in self.lock().containers.values_mut() {
            e.running_delivered = false;
        }
    }

    /// Statuses for (re-)registration, so a restarted RM can recover running work.
    pub(crate) fn for_registration(&self) -> Vec<NmContainerStatus> {
        self.lock()
            .containers
            .values()
            .filter(|e| !e.acked)
            .map(Entry::nm_status)
            .collect()
    }

    /// Applications with containers still running here.
    pub(crate) fn running_apps(&self) -> Vec<String> {
        let apps: BTreeSet<String> = self
            .lock()
            .containers
            .values()
            .filter(|e| !e.completed())
            .map(|e| e.app_id.clone())
            .collect();
        apps.into_iter().collect()
    }

    /// The RM recorded these completions: stop reporting them.
    pub(crate) fn acknowledge(&self, ids: &[String]) {
        let mut inner = self.lock();
        for id in ids {
            let Some(entry) = inner.containers.get_mut(id) else {
                continue;
            };
            // A running container cannot be acknowledged as completed.
            if !entry.completed() {
                continue;
            }
            entry.acked = true;
            let app = entry.app_id.clone();
            if inner.finished_apps.contains(&app) {
                inner.containers.remove(id);
            }
        }
    }

    /// Containers of an application (any state).
    pub(crate) fn of_app(&self, app: &str) -> Vec<Entry> {
        self.lock()
            .containers
            .values()
            .filter(|e| e.app_id == app)
            .cloned()
            .collect()
    }

    /// Every container the table still holds (running, or completed and not yet forgotten).
    pub(crate) fn all(&self) -> Vec<Entry> {
        self.lock().containers.values().cloned().collect()
    }

    /// Who submitted an app that ran here.
    pub(crate) fn user_of(&self, app: &str) -> Option<String> {
        self.lock().users.get(app).cloned()
    }

    /// Whether any container of the app still runs here.
    pub(crate) fn app_running(&self, app: &str) -> bool {
        self.lock()
            .containers
            .values()
            .any(|e| e.app_id == app && !e.completed())
    }

    /// The app finished: drop its acknowledged containers now, the rest once acknowledged.
    pub(crate) fn finish_app(&self, app: &str) {
        let mut inner = self.lock();
        inner.finished_apps.insert(app.to_string());
        inner
            .containers
            .retain(|_, e| !(e.app_id == app && e.acked));
    }
}
