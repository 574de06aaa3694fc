//! The application-master service: register, allocate, finish, each authenticated by the
//! attempt's token.

use std::collections::BTreeMap;

use weft_sched::{ContainerAsk, Event};
use weft_store::{AppState, AttemptState, FinalStatus};
use weft_types::yarn_id::AttemptId;
use weft_types::{AppId, Resource, Time};

use crate::core::{Attempt, ContainerState, RmCore};
use crate::model::*;
use crate::node_table::NodeKey;
use crate::RmError;

/// Refuses a request with two sizes at one priority: an absolute total per priority could not
/// say which size it counts (Hadoop 2 keeps one capability per priority).
fn check_one_size_per_priority(asks: &[ResourceAsk]) -> Result<(), RmError> {
    let mut sizes: BTreeMap<i32, Resource> = BTreeMap::new();
    for ask in asks {
        if let Some(size) = sizes.insert(ask.priority, ask.resource) {
            if size != ask.resource {
                return Err(RmError::InvalidRequest(format!(
                    "two asks at priority {} with different sizes ({} and {}); ask each size at its own priority",
                    ask.priority,
                    show(size),
                    show(ask.resource)
                )));
            }
        }
    }
    Ok(())
}

impl RmCore {
    /// The current attempt of `attempt`'s app when that is `attempt` and it is live.
    fn live_attempt(&self, attempt: &AttemptId) -> Result<&Attempt, RmError> {
        self.apps
            .get(&attempt.app)
            .filter(|a| !a.state.is_final())
            .and_then(|a| a.current())
            .filter(|t| t.id == *attempt && !t.state.is_final())
            .ok_or_else(|| RmError::UnknownAttempt(attempt.to_string()))
    }

    /// Checks that `attempt` is its app's current, live attempt and `token` is its token.
    fn authenticate(&self, attempt: &AttemptId, token: &str) -> Result<(), RmError> {
        let current = self.live_attempt(attempt)?;
        let a = current.token.as_bytes();
        let b = token.as_bytes();
        // Compare every byte so the time taken does not reveal the matching prefix.
        let same =
            a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0;
        if !same {
            return Err(RmError::InvalidToken(attempt.to_string()));
        }
        Ok(())
    }

    /// Checks an AM's credentials without doing anything: for a server that checks them once
    /// for a connection or stream and then makes [`RmCore::am_allocate_authenticated`] calls
    /// on its behalf (the RM's Allocate stream).
    pub fn am_authenticate(&self, attempt: &AttemptId, token: &str) -> Result<(), RmError> {
        self.authenticate(attempt, token)
    }

    /// The token of `attempt` when it is its app's current, live attempt (`None` otherwise):
    /// for a server that identifies the AM by other means and then makes the `am_*` calls on
    /// its behalf (Hadoop IPC under simple auth, where the connection's user names the
    /// attempt, as the AMRMToken's identifier does in Hadoop).
    pub fn live_attempt_token(&self, attempt: &AttemptId) -> Option<String> {
        self.live_attempt(attempt).ok().map(|t| t.token.clone())
    }

    /// The current attempts of `user`'s live applications whose AM container is allocated,
    /// launched or registered, i.e. the attempts an AM connecting as `user` can be: for a
    /// server whose callers name only their user (Spark's AM runs as its submitter).
    pub fn am_attempts_of_user(&self, user: &str) -> Vec<AttemptId> {
        self.apps
            .values()
            .filter(|a| !a.state.is_final() && a.sub.user == user)
            .filter_map(|a| a.current())
            .filter(|t| {
                matches!(
                    t.state,
                    AttemptState::Allocated | AttemptState::Launched | AttemptState::Running
                )
            })
            .map(|t| t.id)
            .collect()
    }

    /// An AM registers (again, after an RM restart: its persisted token is accepted).
    pub fn am_register(
        &mut self,
        now: Time,
        attempt: AttemptId,
        token: &str,
        host: &str,
        rpc_port: u32,
        tracking_url: Option<String>,
    ) -> Result<RegisterResponse, RmError> {
        self.authenticate(&attempt, token)?;
        self.confirm_am(attempt.app);
        let maximum_capability = self.maximum_allocation();
        let running_containers = self.attempt_containers(&attempt);
        let nodes = self.node_keys_of(&running_containers);
        let nm_tokens = self.new_nm_tokens(attempt, nodes.into_iter());
        let Some(app) = self.apps.get_mut(&attempt.app) else {
            return Err(RmError::UnknownAttempt(attempt.to_string()));
        };
        app.state = AppState::Running;
        let queue = app.queue.clone();
        let Some(t) = app.current_mut() else {
            return Err(RmError::UnknownAttempt(attempt.to_string()));
        };
        t.state = AttemptState::Running;
        t.last_contact = now;
        t.am_rpc = Some((host.to_string(), rpc_port));
        t.tracking_url = tracking_url.filter(|u| !u.is_empty());
        let pending_gangs = self.pending_gangs(&attempt);
        Ok(RegisterResponse {
            maximum_capability,
            queue,
            running_containers,
            nm_tokens,
            pending_gangs,
        })
    }

    /// The nodes of `containers`, in their order: from the container table, or by node id
    /// for one that has ended since it was allocated.
    fn node_keys_of(&self, containers: &[AllocatedContainer]) -> Vec<NodeKey> {
        containers
            .iter()
            .filter_map(|c| {
                self.containers
                    .get(&c.id)
                    .map(|k| k.node)
                    .or_else(|| self.nodes.key(&c.node_id))
            })
            .collect()
    }

    /// The attempt's live containers other than its AM.
    fn attempt_containers(&self, attempt: &AttemptId) -> Vec<AllocatedContainer> {
        let am = self
            .apps
            .get(&attempt.app)
            .and_then(|a| a.current())
            .and_then(|t| t.am_container);
        self.containers
            .of_attempt(*attempt)
            .filter(|(c, k)| Some(*c) != am && k.state != ContainerState::Allocated)
            .map(|(c, k)| AllocatedContainer {
                id: c,
                node_address: self.address_of(k.node),
                node_id: self.nodes.id_of(k.node).to_string(),
                resource: k.resource,
                priority: k.priority,
                token: self.container_token(
                    self.latest,
                    c,
                    self.nodes.id_of(k.node),
                    &self.owner_of(&c),
                    k.resource,
                ),
                demand_id: k.demand,
            })
            .collect()
    }

    /// An AM heartbeat: new asks, releases and blacklist changes; returns what was allocated
    /// and what completed since the last call. Validated as a whole before anything applies.
    pub fn am_allocate(
        &mut self,
        now: Time,
        attempt: AttemptId,
        token: &str,
        req: AllocateRequest,
    ) -> Result<AllocateResponse, RmError> {
        self.authenticate(&attempt, token)?;
        self.allocate(now, attempt, req)
    }

    /// [`RmCore::am_allocate`] for an AM whose token its server checked already
    /// ([`RmCore::am_authenticate`], when the AM's Allocate stream opened). Hadoop does the
    /// same: the AMRMToken is checked when the AM's connection authenticates, and each
    /// allocate checks only that the attempt it names is still registered and current; so
    /// does this (an ended or replaced attempt is refused as `am_allocate` refuses it).
    pub fn am_allocate_authenticated(
        &mut self,
        now: Time,
        attempt: AttemptId,
        req: AllocateRequest,
    ) -> Result<AllocateResponse, RmError> {
        self.live_attempt(&attempt)?;
        self.allocate(now, attempt, req)
    }

    /// An authenticated attempt's Allocate.
    fn allocate(
        &mut self,
        now: Time,
        attempt: AttemptId,
        mut req: AllocateRequest,
    ) -> Result<AllocateResponse, RmError> {
        let am = match self.apps.get(&attempt.app).and_then(|a| a.current()) {
            Some(t) if t.state == AttemptState::Running => t.am_container,
            _ => return Err(RmError::NotRegistered(attempt.to_string())),
        };
        for ask in &req.asks {
            self.check_size(&format!("ask at priority {}", ask.priority), ask.resource)?;
        }
        check_one_size_per_priority(&req.asks)?;
        self.check_gangs(attempt, &req.gangs)?;
        self.check_pending_gangs(attempt, req.gangs.len())?;
        self.check_queue_maximum(attempt, &req)?;
        crate::blacklist::check_update(&req)?;
        self.check_am_demands(attempt, &req)?;
        self.check_demand_verdicts(attempt, &req)?;
        for c in &req.releases {
            if c.app != attempt.app || c.attempt != attempt.attempt {
                return Err(RmError::UnknownContainer(c.to_string()));
            }
            if Some(*c) == am {
                return Err(RmError::InvalidRequest(format!(
                    "{c} is the AM container; finish the application instead of releasing it"
                )));
            }
        }
        let seq = AppId(attempt.app.seq);
        // The demand language's checks are the last: past them, nothing refuses the call.
        let demands = std::mem::take(&mut req.demands);
        self.admit_am_demands(now, attempt, demands)?;
        self.apply_demand_verdicts(now, attempt, &req);
        if let Some(t) = self.apps.get_mut(&attempt.app).and_then(|a| {
            a.progress = req.progress.clamp(0.0, 1.0);
            a.current_mut()
        }) {
            t.last_contact = now;
        }
        // Remembered (one write) before any drain hands out their decisions: a delivery then
        // finds its gang owed.
        let mut asked_gangs = Vec::with_capacity(req.gangs.len());
        for gang in req.gangs {
            let asked = self.sched.handle(
                now,
                Event::GangAsk {
                    app: seq,
                    ask: gang.clone(),
                },
            );
            if let Err(e) = asked {
                self.remember_gangs(attempt, &asked_gangs);
                return Err(e.into());
            }
            asked_gangs.push(gang);
        }
        self.remember_gangs(attempt, &asked_gangs);
        self.update_blacklist(
            now,
            attempt,
            &req.blacklist_additions,
            &req.blacklist_removals,
        )?;
        for c in &req.releases {
            // Ended here with the status the AM is told; the scheduler frees it on the way.
            self.container_done(
                now,
                *c,
                exit::ABORTED,
                "Container released by the application".into(),
                true,
            );
        }
        for ask in req.asks {
            self.set_outstanding(now, attempt, seq, ask)?;
        }
        self.drain(now);
        // The scheduler holds every app with a running attempt; one it no longer holds can
        // get nothing.
        let headroom = self.sched.headroom(seq).unwrap_or(Resource::ZERO);
        let mut preempt = self.strict_preemption_contract(seq);
        for c in self.demand_warned_containers(attempt.app) {
            if !preempt.contains(&c) {
                preempt.push(c);
            }
        }
        let cluster_nodes = self.usable_nodes();
        let demand_updates = self.take_demand_updates(attempt.app);
        let changes_len = self.node_changes.len();
        let Some(t) = self
            .apps
            .get_mut(&attempt.app)
            .and_then(|a| a.current_mut())
        else {
            return Err(RmError::UnknownAttempt(attempt.to_string()));
        };
        // A large grant goes out over several calls, oldest first.
        let cap = self.config.allocate_max_containers.max(1);
        let allocated: Vec<AllocatedContainer> = t
            .new_containers
            .drain(..cap.min(t.new_containers.len()))
            .collect();
        let completed: Vec<CompletedContainer> =
            t.completed.drain(..cap.min(t.completed.len())).collect();
        let seen = std::mem::replace(&mut t.nodes_seen, changes_len);
        let mut updated: BTreeMap<String, NodeState> = BTreeMap::new();
        for (n, s) in &self.node_changes[seen.min(changes_len)..] {
            updated.insert(n.clone(), *s);
        }
        // Each container is marked acquired and its node read in one lookup (as
        // `node_keys_of` reads it: by node id for one that has ended since).
        let mut nodes = Vec::with_capacity(allocated.len());
        for c in &allocated {
            if let Some(k) = self.containers.get_mut(&c.id) {
                k.state = ContainerState::Acquired;
                nodes.push(k.node);
            } else if let Some(key) = self.nodes.key(&c.node_id) {
                nodes.push(key);
            }
        }
        let nm_tokens = self.new_nm_tokens(attempt, nodes.into_iter());
        Ok(AllocateResponse {
            nm_tokens,
            allocated,
            completed,
            headroom: weft_types::Resource::new(
                headroom.memory_mb().max(0),
                headroom.vcores().max(0),
            ),
            updated_nodes: updated
                .into_iter()
                .map(|(node_id, state)| NodeReport { node_id, state })
                .collect(),
            cluster_nodes,
            preempt,
            demand_updates,
        })
    }

    /// Makes the scheduler hold `ask.count` containers at the ask's priority: YARN's AMs send
    /// the absolute outstanding total, so the difference from what the scheduler still holds
    /// is asked for or cancelled. A new size at a priority replaces the old ask (Hadoop 2's one
    /// capability per priority).
    /// Refuses gangs before anything changes: a size above the maximum allocation, an id used
    /// twice in the call, or a gang the nodes could not pack even empty (with the scheduler's
    /// words, time-aware-demands spec C8). An id the app used in an earlier call is the
    /// scheduler's refusal (`SchedError::Duplicate`).
    fn check_gangs(
        &self,
        attempt: AttemptId,
        gangs: &[weft_sched::GangAsk],
    ) -> Result<(), RmError> {
        let mut ids = std::collections::BTreeSet::new();
        for g in gangs {
            self.check_size(&format!("gang {}", g.gang), g.resources)?;
            if g.gang >= crate::demands::DEMAND_GANG_IDS {
                return Err(RmError::InvalidRequest(format!(
                    "gang id {} is reserved for demands' gangs; use ids below {}",
                    g.gang,
                    crate::demands::DEMAND_GANG_IDS
                )));
            }
            if !ids.insert(g.gang) {
                return Err(RmError::InvalidRequest(format!(
                    "gang {} is asked twice in one call",
                    g.gang
                )));
            }
            if let Some(reason) =
                self.sched
                    .gang_unpackable(AppId(attempt.app.seq), g.resources, g.size)
            {
                return Err(RmError::InvalidRequest(reason));
            }
        }
        Ok(())
    }

    fn set_outstanding(
        &mut self,
        now: Time,
        attempt: AttemptId,
        app: AppId,
        ask: ResourceAsk,
    ) -> Result<(), RmError> {
        let held = self
            .apps
            .get(&attempt.app)
            .and_then(|a| a.current())
            .and_then(|t| t.asked.get(&ask.priority).copied());
        let held_count = match held {
            Some((size, n)) if size == ask.resource => n,
            Some((_, n)) => {
                if n > 0 {
                    self.sched.handle(
                        now,
                        Event::CancelAsks {
                            app,
                            priority: Some(ask.priority),
                            count: None,
                        },
                    )?;
                }
                0
            }
            None => 0,
        };
        if ask.count > held_count {
            let more = ContainerAsk {
                priority: ask.priority,
                resources: ask.resource,
                count: ask.count - held_count,
                hosts: ask.hosts,
                racks: ask.racks,
                relax_locality: ask.relax_locality,
                tag: weft_sched::AskTag::NONE,
            };
            self.sched.handle(now, Event::Ask { app, ask: more })?;
        } else if ask.count < held_count {
            self.sched.handle(
                now,
                Event::CancelAsks {
                    app,
                    priority: Some(ask.priority),
                    count: Some(held_count - ask.count),
                },
            )?;
        }
        if let Some(t) = self
            .apps
            .get_mut(&attempt.app)
            .and_then(|a| a.current_mut())
        {
            t.asked.insert(ask.priority, (ask.resource, ask.count));
        }
        Ok(())
    }

    /// Refuses an ask larger than the app's queue allows (its `maxContainerAllocation`, own or
    /// inherited, capped by the scheduler's maximum), as Hadoop's ApplicationMasterService
    /// does with an InvalidResourceRequestException.
    fn check_queue_maximum(
        &self,
        attempt: AttemptId,
        req: &AllocateRequest,
    ) -> Result<(), RmError> {
        // Most Allocates ask nothing new: the queue's maximum is not needed then.
        if req.asks.is_empty() {
            return Ok(());
        }
        let app = AppId(attempt.app.seq);
        let Some(max) = self.sched.max_container_allocation(app) else {
            return Ok(());
        };
        match req.asks.iter().find(|a| !a.resource.fits_in(&max)) {
            None => Ok(()),
            Some(ask) => Err(RmError::AboveMaximum {
                what: format!("ask at priority {}", ask.priority),
                asked: show(ask.resource),
                max: format!(
                    "{} of queue {}",
                    show(max),
                    self.sched.queue_name(app).unwrap_or("(unknown)")
                ),
            }),
        }
    }

    /// The AM unregisters with its final status: the app is FINISHED (whatever the status),
    /// its other containers are stopped; the AM container is left to exit by itself.
    pub fn am_finish(
        &mut self,
        now: Time,
        attempt: AttemptId,
        token: &str,
        final_status: FinalStatus,
        diagnostics: &str,
        tracking_url: Option<String>,
    ) -> Result<(), RmError> {
        self.authenticate(&attempt, token)?;
        let registered = self
            .apps
            .get(&attempt.app)
            .and_then(|a| a.current())
            .is_some_and(|t| t.state == AttemptState::Running);
        if !registered {
            return Err(RmError::NotRegistered(attempt.to_string()));
        }
        if final_status == FinalStatus::Undefined {
            return Err(RmError::InvalidRequest(
                "the final status must be SUCCEEDED, FAILED or KILLED".into(),
            ));
        }
        if let Some(t) = self
            .apps
            .get_mut(&attempt.app)
            .and_then(|a| a.current_mut())
        {
            t.last_contact = now;
            if let Some(u) = tracking_url.filter(|u| !u.is_empty()) {
                t.tracking_url = Some(u);
            }
        }
        self.finish_app(
            now,
            attempt.app,
            AppState::Finished,
            final_status,
            diagnostics.to_string(),
            true,
        );
        Ok(())
    }
}
