//! A virtual NodeManager: the containers launched on it, each with the instant it ends, and
//! the statuses its next heartbeat reports (RUNNING once, then COMPLETE).

use std::collections::BTreeMap;

use weft_rm_core::{exit, NmContainerState, NmContainerStatus, NodeStatus};
use weft_types::yarn_id::ContainerId;
use weft_types::Resource;

struct Live {
    resource: Resource,
    /// When it ends by itself; `None` for an AM, which ends when its application finishes.
    end_ms: Option<u64>,
    reported_running: bool,
}

pub(crate) struct SimNode {
    pub(crate) secret: String,
    live: BTreeMap<ContainerId, Live>,
    /// Containers the RM stopped, reported COMPLETE (killed) at the next heartbeat.
    stopped: Vec<(ContainerId, Resource)>,
    /// The fault variant: the node went silent (no heartbeats, nothing reported again).
    pub(crate) silent: bool,
}

impl SimNode {
    pub(crate) fn new(secret: String) -> SimNode {
        SimNode {
            secret,
            live: BTreeMap::new(),
            stopped: Vec::new(),
            silent: false,
        }
    }

    pub(crate) fn launch(&mut self, container: ContainerId, resource: Resource, end: Option<u64>) {
        self.live.insert(
            container,
            Live {
                resource,
                end_ms: end,
                reported_running: false,
            },
        );
    }

    /// Whether a container is due to end by itself (a task with a run time, or an AM whose
    /// application finished) or a stop is still to be reported.
    pub(crate) fn has_timed(&self) -> bool {
        !self.stopped.is_empty() || self.live.values().any(|l| l.end_ms.is_some())
    }

    /// An AM's container exits once its application finished.
    pub(crate) fn end_at(&mut self, container: &ContainerId, t: u64) {
        if let Some(l) = self.live.get_mut(container) {
            l.end_ms = Some(t);
        }
    }

    /// The RM stopped it (a released, killed or preempted container).
    pub(crate) fn stop(&mut self, container: &ContainerId) {
        if let Some(l) = self.live.remove(container) {
            self.stopped.push((*container, l.resource));
        }
    }

    /// The status of a heartbeat at `t`: what started since the last one, what ended by `t`.
    pub(crate) fn status(&mut self, t: u64) -> NodeStatus {
        let mut containers = Vec::new();
        for (id, resource) in self.stopped.drain(..) {
            containers.push(status(
                id,
                NmContainerState::Complete,
                exit::KILLED_BY_RESOURCEMANAGER,
                resource,
            ));
        }
        let ended: Vec<ContainerId> = self
            .live
            .iter()
            .filter(|(_, l)| l.end_ms.is_some_and(|e| e <= t))
            .map(|(id, _)| *id)
            .collect();
        for id in ended {
            if let Some(l) = self.live.remove(&id) {
                containers.push(status(
                    id,
                    NmContainerState::Complete,
                    exit::SUCCESS,
                    l.resource,
                ));
            }
        }
        for (id, l) in self.live.iter_mut().filter(|(_, l)| !l.reported_running) {
            l.reported_running = true;
            containers.push(status(
                *id,
                NmContainerState::Running,
                exit::INVALID,
                l.resource,
            ));
        }
        NodeStatus {
            healthy: true,
            secret: self.secret.clone(),
            containers,
            ..NodeStatus::default()
        }
    }
}

fn status(
    container: ContainerId,
    state: NmContainerState,
    exit_status: i32,
    resource: Resource,
) -> NmContainerStatus {
    NmContainerStatus {
        container,
        state,
        exit_status,
        diagnostics: String::new(),
        resource,
    }
}
