//! Node lifecycle: registration (with the containers an NM still runs), heartbeats, health,
//! loss, decommissioning, and re-binding running containers after an RM restart.

use std::collections::BTreeSet;
use std::sync::Arc;

use weft_sched::Event;
use weft_types::yarn_id::ContainerId;
use weft_types::{AppId, NodeId, Resource, Time};

use crate::core::{Container, ContainerState, Node, RmCore};
use crate::model::*;
use crate::node_table::NodeKey;
use crate::RmError;

const DEFAULT_RACK: &str = "/default-rack";

fn check_node_id(id: &str) -> Result<(), RmError> {
    let Some((host, port)) = id.rsplit_once(':') else {
        return Err(RmError::InvalidNode(format!(
            "node id '{id}' must be host:port"
        )));
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(RmError::InvalidNode(format!(
            "node id '{id}' must be host:port with a numeric port"
        )));
    }
    Ok(())
}

impl RmCore {
    /// The `host:port` of a node's Hadoop ContainerManagementProtocol, as its NM registered
    /// it: the NodeId Hadoop's AMs get for the node's containers. `None` for an unknown node or
    /// one whose NM serves no Hadoop protocol.
    pub fn node_hadoop_address(&self, node_id: &str) -> Option<&str> {
        self.nodes
            .get(node_id)
            .map(|n| n.hadoop_address.as_str())
            .filter(|a| !a.is_empty())
    }

    /// Registers a NodeManager (first time, after it restarted, or after the RM restarted).
    /// Containers it still runs are re-bound to their applications; those of unknown or
    /// finished applications are stopped in its next heartbeat reply.
    pub fn node_register(&mut self, now: Time, reg: NodeRegistration) -> Result<(), RmError> {
        check_node_id(&reg.node_id)?;
        self.check_node_secret(&reg.node_id, &reg.secret, "registration")?;
        let rebinding = !self.node_is_bound(&reg.node_id);
        crate::limits::check_node_capability(&reg.node_id, reg.capability)?;
        if reg.capability.memory_mb() <= 0 || reg.capability.vcores() <= 0 {
            return Err(RmError::InvalidNode(format!(
                "node {} offers {}; memory and vcores must be positive",
                reg.node_id,
                show(reg.capability)
            )));
        }
        let rack = if reg.rack.trim().is_empty() {
            DEFAULT_RACK.to_string()
        } else {
            reg.rack.clone()
        };
        if let Some(n) = self.nodes.get(&reg.node_id) {
            if n.state == NodeState::Decommissioned {
                return Err(RmError::InvalidNode(format!(
                    "node {} is decommissioned",
                    reg.node_id
                )));
            }
            if n.in_sched && (n.capability != reg.capability || n.rack != rack) {
                self.remove_from_sched(now, &reg.node_id, "node re-registered with new resources");
            }
        }
        let node_id = reg.node_id.clone();
        if !self.nodes.get(&node_id).is_some_and(|n| n.in_sched) {
            self.add_to_sched(now, &node_id, rack, reg.capability)?;
        }
        let Some(node) = self.nodes.get_mut(&node_id) else {
            return Err(RmError::UnknownNode(node_id));
        };
        node.address = if reg.address.is_empty() {
            node_id.clone()
        } else {
            reg.address.clone()
        };
        // An NM re-registering without a web address (an older NM, or a resync that did not
        // repeat it) keeps the one the RM already knows rather than losing its log links.
        // (Replaced only when it changed: ended containers' records share the old one.)
        if !reg.http_address.is_empty() && *node.http_address != *reg.http_address {
            node.http_address = reg.http_address.as_str().into();
        }
        // Unlike the web address, the Hadoop address is the NM's current listener (an
        // ephemeral port by default): a registration without one means it serves none now.
        node.hadoop_address = reg.hadoop_address.clone();
        node.state = NodeState::Running;
        node.last_heartbeat = now;
        node.health_report.clear();
        if rebinding {
            let secret = self.issue_node_secret(&node_id);
            if let Some(node) = self.nodes.get_mut(&node_id) {
                node.secret = secret;
            }
        }
        let Some(key) = self.nodes.key(&node_id) else {
            return Err(RmError::UnknownNode(node_id));
        };
        let known: Vec<ContainerId> = self
            .nodes
            .at(key)
            .map(|n| n.containers.ids())
            .unwrap_or_default();
        self.node_changed(&node_id, NodeState::Running);

        // Containers the RM believes run there but the NM does not report ended while the
        // NM was away.
        let reported: BTreeSet<ContainerId> = reg.containers.iter().map(|c| c.container).collect();
        for c in known {
            if !reported.contains(&c) {
                self.container_done(
                    now,
                    c,
                    exit::ABORTED,
                    "container not found on its node after the node re-registered".into(),
                    false,
                );
            }
        }
        let running: BTreeSet<ContainerId> = reg
            .containers
            .iter()
            .filter(|c| c.state == NmContainerState::Running)
            .map(|c| c.container)
            .collect();
        for status in reg.containers {
            if status.state == NmContainerState::Running
                && !self.containers.contains_key(&status.container)
                && self.recoverable(&status.container)
            {
                self.recover_container(now, key, status.container, status.resource);
            } else {
                self.container_status(now, key, status);
            }
        }
        self.confirm_ams_on(now, &node_id, &running);
        self.drain(now);
        self.reask_recovered_gangs(now);
        Ok(())
    }

    /// Whether a container reported after a restart belongs to a live app's current attempt.
    fn recoverable(&self, c: &ContainerId) -> bool {
        self.apps.get(&c.app).is_some_and(|a| {
            a.in_sched
                && !a.state.is_final()
                && a.current()
                    .is_some_and(|t| t.id.attempt == c.attempt && !t.state.is_final())
        })
    }

    /// A container its node still runs after an RM restart joins its attempt again, charged
    /// in the scheduler as it runs (Hadoop's `recoverContainersOnNode`). One the scheduler
    /// refuses (it no longer fits the node) is stopped.
    fn recover_container(&mut self, now: Time, key: NodeKey, c: ContainerId, resource: Resource) {
        let Some(sched_node) = self.nodes.at(key).map(|n| n.sched) else {
            return;
        };
        let am = self
            .apps
            .get(&c.app)
            .and_then(|a| a.attempts.get((c.attempt as usize).wrapping_sub(1)))
            .is_some_and(|t| t.am_container == Some(c));
        let sched = self.sched.next_container_id();
        let recovered = self.sched.handle(
            now,
            Event::ContainerRecovered {
                container: sched,
                app: AppId(c.app.seq),
                node: sched_node,
                resources: resource,
                // NMs do not report a container's priority; recovered ones keep none.
                priority: 0,
                am,
            },
        );
        if recovered.is_err() {
            if let Some(n) = self.nodes.at_mut(key) {
                n.to_stop.insert(c);
            }
            return;
        }
        let Some(app) = self.apps.get_mut(&c.app) else {
            return;
        };
        if let Some(t) = app.attempts.get_mut(c.attempt as usize - 1) {
            t.next_n = t.next_n.max(c.n + 1);
        }
        app.nodes_used.insert(key);
        if let Some(n) = self.nodes.at_mut(key) {
            n.containers.recovered_running(c);
        }
        self.by_sched.insert_fresh(sched, c);
        self.containers.insert(
            c,
            Container {
                sched: Some(sched),
                node: key,
                resource,
                priority: 0,
                state: ContainerState::Running,
                // Recovered: the RM no longer knows when it started.
                since: self.latest,
                demand: None,
            },
        );
        let demand = self.demand_of_recovered(now, c);
        if let Some(k) = self.containers.get_mut(&c) {
            k.demand = demand;
        }
        if let Some(demand_id) = demand {
            self.end_recovered_of_failed_demand(now, c.app, c, demand_id);
        }
    }

    fn add_to_sched(
        &mut self,
        now: Time,
        node_id: &str,
        rack: String,
        capability: Resource,
    ) -> Result<(), RmError> {
        let (host, port) = match node_id.rsplit_once(':') {
            Some((h, p)) => (h, p.parse::<u16>().unwrap_or(0)),
            None => (node_id, 0),
        };
        let host = host.to_string();
        // The scheduler wants one node per host name; further NMs on a host go by their id.
        // (Counted per name rather than found by a walk of every node: at 12,000 NMs
        // registering at once the walk was quadratic.)
        let counted = self
            .nodes
            .get(node_id)
            .filter(|n| n.in_sched)
            .map(|n| n.sched_host.clone());
        let own = u32::from(counted.as_deref() == Some(host.as_str()));
        let host_taken = self.sched_hosts.get(&host).is_some_and(|&n| n > own);
        debug_assert_eq!(
            host_taken,
            self.nodes
                .values()
                .any(|n| n.id != node_id && n.in_sched && n.sched_host == host)
        );
        let sched_host = if host_taken {
            node_id.to_string()
        } else {
            host
        };
        let sched = NodeId(self.next_node);
        self.sched.handle(
            now,
            Event::NodeAdded {
                node: sched,
                host: sched_host.clone(),
                port,
                rack: rack.clone(),
                capability,
            },
        )?;
        self.next_node += 1;
        if let Some(old) = self.nodes.get(node_id) {
            self.node_by_sched.remove(&old.sched);
        }
        let key = self.nodes.get_or_insert_with(node_id, || Node {
            id: String::new(),
            address: node_id.to_string(),
            http_address: Arc::from(""),
            hadoop_address: String::new(),
            sched,
            sched_host: sched_host.clone(),
            rack: rack.clone(),
            capability,
            state: NodeState::Running,
            in_sched: true,
            update_due: false,
            last_heartbeat: now,
            health_report: String::new(),
            containers: Default::default(),
            to_stop: BTreeSet::new(),
            to_cleanup: BTreeSet::new(),
            lingering_running: 0,
            secret: String::new(),
        });
        self.node_by_sched.insert(sched, key);
        let Some(node) = self.nodes.at_mut(key) else {
            return Err(RmError::UnknownNode(node_id.to_string()));
        };
        node.sched = sched;
        node.sched_host = sched_host.clone();
        node.rack = rack;
        node.capability = capability;
        node.in_sched = true;
        if let Some(old) = counted {
            self.uncount_sched_host(&old);
        }
        *self.sched_hosts.entry(sched_host).or_insert(0) += 1;
        if host_taken {
            self.blacklist_new_node_of_host(now, node_id);
        }
        Ok(())
    }

    /// One node fewer in the scheduler under `host`.
    fn uncount_sched_host(&mut self, host: &str) {
        if let Some(n) = self.sched_hosts.get_mut(host) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.sched_hosts.remove(host);
            }
        }
    }

    /// Takes a node out of the scheduler: its containers end as ABORTED with `diag`.
    pub(crate) fn remove_from_sched(&mut self, now: Time, node_id: &str, diag: &str) {
        let Some(node) = self.nodes.get_mut(node_id) else {
            return;
        };
        if !node.in_sched {
            return;
        }
        node.in_sched = false;
        let sched = node.sched;
        let sched_host = node.sched_host.clone();
        let containers: Vec<ContainerId> = node.containers.ids();
        self.uncount_sched_host(&sched_host);
        // Its containers end here with the node's cause (the scheduler frees each), so the
        // scheduler's removal finds none left.
        for c in containers {
            self.container_done(now, c, exit::ABORTED, diag.to_string(), false);
        }
        let _ = self.sched.handle(now, Event::NodeRemoved { node: sched });
        self.node_by_sched.remove(&sched);
        self.drain(now);
        self.lingering_am.retain(|_, (n, _, _)| n != node_id);
        if let Some(node) = self.nodes.get_mut(node_id) {
            node.lingering_running = 0;
        }
    }

    /// A heartbeat: container statuses, health, then the scheduler assigns containers on the
    /// node. Unknown or lost nodes are told to resync (register again).
    pub fn node_heartbeat(
        &mut self,
        now: Time,
        node_id: &str,
        status: NodeStatus,
    ) -> Result<HeartbeatReply, RmError> {
        self.heartbeat(now, node_id, status, UpdatePass::Now)
    }

    /// [`RmCore::node_heartbeat`] with the node's scheduling pass left for
    /// [`RmCore::run_node_updates`]: the statuses and health are taken in and the heartbeat
    /// answered at once; the node joins the queue of nodes due a pass, once however many
    /// heartbeats it sends before its pass runs.
    ///
    /// Why: the answer does not depend on the pass (its containers go to AMs; a kill it
    /// decides reaches the NM in the next answer), but under a burst the passes are most of
    /// the RM's work. A driver that runs them between batches of calls answers heartbeats in
    /// the time their statuses take, and a node that heartbeats twice while waiting gets one
    /// pass that sees both (YARN's asynchronous scheduling decouples the two the same way).
    /// With the queue run after every call, the order of events is `node_heartbeat`'s.
    pub fn node_heartbeat_deferred(
        &mut self,
        now: Time,
        node_id: &str,
        status: NodeStatus,
    ) -> Result<HeartbeatReply, RmError> {
        self.heartbeat(now, node_id, status, UpdatePass::Deferred)
    }

    /// Nodes waiting for their deferred scheduling pass.
    pub fn node_updates_due(&self) -> usize {
        self.due_updates.len()
    }

    /// Runs the scheduling passes of up to `max` nodes in the order they became due (a node
    /// that left the scheduler meanwhile is skipped); returns how many were taken off the
    /// queue.
    pub fn run_node_updates(&mut self, now: Time, max: usize) -> usize {
        let mut taken = 0;
        while taken < max {
            let Some(key) = self.due_updates.pop_front() else {
                break;
            };
            taken += 1;
            let Some(node) = self.nodes.at_mut(key) else {
                continue;
            };
            node.update_due = false;
            if node.in_sched {
                let sched = node.sched;
                // The scheduler knows every node rm-core holds `in_sched`; should it not, the
                // pass is skipped as it would be for a node that left.
                let _ = self.node_update(now, sched);
            }
        }
        taken
    }

    /// The scheduler's pass over one node, with the demand opportunities it gave or missed.
    fn node_update(&mut self, now: Time, sched: NodeId) -> Result<(), RmError> {
        let asking = self.asking_demands();
        self.sched
            .handle(now, Event::NodeHeartbeat { node: sched })?;
        self.drain(now);
        self.count_missed_opportunities(now, asking);
        self.drain(now);
        Ok(())
    }

    fn heartbeat(
        &mut self,
        now: Time,
        node_id: &str,
        status: NodeStatus,
        pass: UpdatePass,
    ) -> Result<HeartbeatReply, RmError> {
        let resync = HeartbeatReply {
            action: Some(NodeAction::Resync),
            ..HeartbeatReply::default()
        };
        let key = self.nodes.key(node_id);
        let node = key.and_then(|k| self.nodes.at(k));
        crate::node_identity::check_secret_of(node, node_id, &status.secret, "heartbeat")?;
        let Some(key) = key else {
            return Ok(resync);
        };
        let Some(node) = self.nodes.at_mut(key) else {
            return Ok(resync);
        };
        match node.state {
            NodeState::Lost | NodeState::Shutdown => return Ok(resync),
            NodeState::Decommissioned => {
                return Ok(HeartbeatReply {
                    action: Some(NodeAction::Shutdown),
                    ..HeartbeatReply::default()
                })
            }
            NodeState::Running | NodeState::Unhealthy => {}
        }
        node.last_heartbeat = now;
        let was = node.state;
        if !status.healthy && was == NodeState::Running {
            node.state = NodeState::Unhealthy;
            node.health_report = status.health_report.clone();
            self.node_changed(node_id, NodeState::Unhealthy);
            let diag = format!("node unhealthy: {}", status.health_report);
            self.remove_from_sched(now, node_id, &diag);
        } else if status.healthy && was == NodeState::Unhealthy {
            let (rack, capability) = (node.rack.clone(), node.capability);
            node.health_report.clear();
            self.add_to_sched(now, node_id, rack, capability)?;
            if let Some(n) = self.nodes.at_mut(key) {
                n.state = NodeState::Running;
            }
            self.node_changed(node_id, NodeState::Running);
        }
        for c in status.containers {
            self.container_status(now, key, c);
        }
        match pass {
            UpdatePass::Now => {
                if let Some(sched) = self.nodes.at(key).filter(|n| n.in_sched).map(|n| n.sched) {
                    self.node_update(now, sched)?;
                }
                self.drain(now);
            }
            UpdatePass::Deferred => {
                self.drain(now);
                if let Some(node) = self.nodes.at_mut(key) {
                    if node.in_sched && !node.update_due {
                        node.update_due = true;
                        self.due_updates.push_back(key);
                    }
                }
            }
        }
        let Some(node) = self.nodes.at_mut(key) else {
            return Ok(resync);
        };
        let containers_to_stop = std::mem::take(&mut node.to_stop).into_iter().collect();
        let apps_to_cleanup = std::mem::take(&mut node.to_cleanup).into_iter().collect();
        // A delta report is only as good as the RM's copy of what it left out: any difference
        // in the count (a status lost, a container the RM released that still runs, one it
        // never knew) has the NM list everything once more, as YARN's NMs always do.
        let send_all_statuses = status
            .running_containers
            .is_some_and(|n| n != node.containers.reported_running() + node.lingering_running);
        Ok(HeartbeatReply {
            action: Some(NodeAction::Normal),
            containers_to_stop,
            apps_to_cleanup,
            master_key: self.key_for_node(status.last_key_id),
            send_all_statuses,
        })
    }

    /// One container status from a node. NMs repeat every running container in every
    /// heartbeat; one the node already reported running changes nothing and costs one
    /// lookup in the node's own container map.
    fn container_status(&mut self, now: Time, key: NodeKey, s: NmContainerStatus) {
        let Some(node) = self.nodes.at_mut(key) else {
            return;
        };
        // A RUNNING status is taken in by the lookup that marks it (one probe).
        let reported = match s.state {
            NmContainerState::Running => node.containers.mark_running(&s.container),
            NmContainerState::Complete => node.containers.reported(&s.container),
        };
        match (s.state, reported) {
            (NmContainerState::Running, Some(true)) => {}
            (NmContainerState::Running, Some(false)) => {
                if let Some(c) = self.containers.get_mut(&s.container) {
                    c.state = ContainerState::Running;
                }
                self.demand_container_claimed(now, s.container);
            }
            (NmContainerState::Complete, Some(reported)) => {
                // Ran and ended between two heartbeats: launched all the same.
                if !reported {
                    self.demand_container_claimed(now, s.container);
                }
                self.container_done(now, s.container, s.exit_status, s.diagnostics, false)
            }
            (NmContainerState::Complete, None) => {
                self.end_lingering_am(s.container, false);
                self.demand_container_ended_while_away(now, s.container);
            }
            (NmContainerState::Running, None) => {
                if !self.lingering_am.contains_key(&s.container) {
                    node.to_stop.insert(s.container);
                }
            }
        }
    }

    /// A NodeManager unregistered (clean stop): SHUTDOWN, its containers end.
    pub fn node_unregister(
        &mut self,
        now: Time,
        node_id: &str,
        secret: &str,
    ) -> Result<(), RmError> {
        self.check_node_secret(node_id, secret, "unregistration")?;
        self.end_node(now, node_id, NodeState::Shutdown, "node shut down")
    }

    /// An administrator decommissions a node: its containers end and it may not register again.
    pub fn decommission(&mut self, now: Time, node_id: &str) -> Result<(), RmError> {
        self.end_node(
            now,
            node_id,
            NodeState::Decommissioned,
            "node decommissioned",
        )
    }

    /// Marks a node LOST (NM expiry): its containers end as ABORTED, "node lost".
    pub(crate) fn node_lost(&mut self, now: Time, node_id: &str) {
        let _ = self.end_node(now, node_id, NodeState::Lost, "node lost");
    }

    fn end_node(
        &mut self,
        now: Time,
        node_id: &str,
        state: NodeState,
        diag: &str,
    ) -> Result<(), RmError> {
        let Some(node) = self.nodes.get_mut(node_id) else {
            return Err(RmError::UnknownNode(node_id.to_string()));
        };
        node.state = state;
        node.to_stop.clear();
        node.to_cleanup.clear();
        self.node_changed(node_id, state);
        self.remove_from_sched(now, node_id, diag);
        Ok(())
    }
}

/// When a heartbeat's scheduling pass runs.
#[derive(Clone, Copy)]
enum UpdatePass {
    /// Within the heartbeat, before it is answered.
    Now,
    /// Later, from the queue [`RmCore::run_node_updates`] works through.
    Deferred,
}
