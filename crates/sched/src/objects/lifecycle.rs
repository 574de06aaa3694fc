//! Lifecycle events of a driver that restarts and retries (the RM): containers recovered on
//! their nodes after a restart, and new attempts of an application. Each checks everything before it changes anything, so a
//! refusal leaves the state as it was; the usage itself is written by the ledger.

use crate::lanes::Resource;
use weft_types::{AppId, ContainerId, NodeId};

use crate::api::{ContainerExit, SchedError};
use crate::engine::Engine;
use crate::objects::app::Request;
use crate::objects::containers::Owner;
use crate::objects::requests::Requests;
use crate::rules::Rules;

impl<R: Rules> Engine<R> {
    /// Hadoop's `recoverContainersOnNode` for one container: it joins `app` on `node` as it
    /// runs, without a request or a decision.
    pub(crate) fn recover_container(
        &mut self,
        container: ContainerId,
        app: AppId,
        node: NodeId,
        size: Resource,
        priority: i32,
        am: bool,
    ) -> Result<(), SchedError> {
        if self.containers.contains_key(&container) {
            return Err(SchedError::Duplicate(format!("container {container}")));
        }
        let Some(app_slot) = self.apps.slot_of(&app) else {
            return Err(SchedError::UnknownApp(app));
        };
        let Some(node_slot) = self.nodes.slot_of(&node) else {
            return Err(SchedError::UnknownNode(node));
        };
        let refuse = |reason: String| SchedError::RecoveryRefused {
            container,
            app,
            reason,
        };
        if size.values().iter().any(|v| *v < 0) {
            return Err(refuse(format!("its size {size:?} is negative")));
        }
        if am && self.apps.at(app_slot).is_some_and(|a| a.am_running) {
            return Err(refuse("the application's AM container already runs".into()));
        }
        let free = self
            .nodes
            .at(node_slot)
            .map_or(Resource::ZERO, |n| n.unallocated());
        if !size.fits_in(&free) {
            return Err(refuse(format!(
                "its size {size:?} does not fit in {node}'s unallocated {free:?}"
            )));
        }
        self.charge_recovered(container, app_slot, node_slot, size, priority, am);
        Ok(())
    }
}

impl<R: Rules> Engine<R> {
    /// A new attempt of `app`: the previous one's containers, asks, reservations and AM usage
    /// go; the app itself (queue, start time, runnability, place in the order) stays.
    pub(crate) fn restart_attempt(
        &mut self,
        id: AppId,
        am_resource: Option<Resource>,
    ) -> Result<(), SchedError> {
        let Some(app) = self.apps.get(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let am = match am_resource {
            Some(r) => Some(
                self.normalize(app.queue, r)
                    .map_err(|e| SchedError::InvalidAsk {
                        app: id,
                        reason: format!("AM container {e}"),
                    })?,
            ),
            None => None,
        };
        let containers = self.container_ids(app.running, Owner::App);
        let reserved: Vec<NodeId> = app.reservations.iter().copied().collect();
        for c in containers {
            self.complete_container(c, ContainerExit::Killed, None);
        }
        for n in reserved {
            self.unreserve_node(n);
        }
        self.release_am_usage(id);
        let Some(app) = self.apps.get_mut(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        app.requests = Requests::default();
        app.am_resource = am;
        app.am_container = None;
        if let Some(mut lists) = app.blacklists.take() {
            lists.forget_app_list();
            if !lists.is_empty() {
                app.blacklists = Some(lists);
            }
        }
        app.has_blacklist = app.blacklists.is_some();
        if let Some(am) = am {
            let key = app.key_for(0, am);
            let mut req = Request::new(am);
            req.any.count = 1;
            app.requests.insert(key, req);
        }
        self.refresh_app(id);
        Ok(())
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use crate::lanes::Resource;
    use weft_types::{AppId, ContainerId, NodeId, Time};

    use crate::api::*;
    use crate::Scheduler;

    fn fifo() -> SchedulerConfig {
        SchedulerConfig::Fifo(FifoConfig::default())
    }

    /// Two 8 GiB nodes and two apps (app 1 submitted without an AM ask, app 2 with one).
    fn cluster(config: SchedulerConfig) -> Scheduler {
        let mut s = Scheduler::new(config, GroupMapping::new());
        for n in 1..=2 {
            s.handle(
                Time(0),
                Event::NodeAdded {
                    node: NodeId(n),
                    host: format!("n{n}"),
                    port: 0,
                    rack: "/r".into(),
                    capability: Resource::new(8192, 8),
                },
            )
            .expect("node added");
        }
        for (app, am) in [(1, None), (2, Some(Resource::new(1024, 1)))] {
            s.handle(
                Time(0),
                Event::AppSubmitted {
                    app: AppId(app),
                    user: "u".into(),
                    queue: None,
                    am_resource: am,
                },
            )
            .expect("submitted");
        }
        while s.poll_decision().is_some() {}
        s
    }

    /// The leaf queue of the `index`th app of the snapshot.
    fn leaf_of(snap: &Snapshot, index: usize) -> &QueueSnapshot {
        let name = &snap.apps[index].queue;
        snap.queues
            .iter()
            .find(|q| &q.name == name)
            .expect("the app's leaf")
    }

    fn recovered(container: u64, app: u64, node: u32, mb: i64, am: bool) -> Event {
        Event::ContainerRecovered {
            container: ContainerId(container),
            app: AppId(app),
            node: NodeId(node),
            resources: Resource::new(mb, 1),
            priority: 1,
            am,
        }
    }

    #[test]
    fn a_recovered_container_is_charged_like_an_allocation_without_a_decision() {
        for config in [SchedulerConfig::default(), fifo()] {
            let mut s = cluster(config);
            s.handle(Time(5), recovered(40, 1, 1, 2048, false))
                .expect("recovered");
            s.handle(Time(5), recovered(7, 1, 2, 1024, false))
                .expect("recovered");
            assert_eq!(s.poll_decision(), None, "recovery emits no decision");
            let snap = s.snapshot();
            let app = &snap.apps[0];
            assert_eq!(
                (app.usage, app.running_containers),
                (Resource::new(3072, 2), 2)
            );
            let used: Vec<Resource> = snap.nodes.iter().map(|n| n.used).collect();
            assert_eq!(used, [Resource::new(2048, 1), Resource::new(1024, 1)]);
            assert_eq!(snap.cluster_used, Resource::new(3072, 2));
            let leaf = leaf_of(&snap, 0);
            assert_eq!(leaf.usage, Resource::new(3072, 2));
            assert_eq!(s.verify(), Vec::<String>::new());
            assert_eq!(s.next_container_id(), ContainerId(41));

            // Completing one frees exactly its share.
            s.handle(
                Time(6),
                Event::ContainerCompleted {
                    container: ContainerId(40),
                    exit: ContainerExit::Success,
                    status: None,
                },
            )
            .expect("completed");
            assert_eq!(s.cluster_used(), Resource::new(1024, 1));
            assert_eq!(s.verify(), Vec::<String>::new());
        }
    }

    #[test]
    fn allocations_after_a_recovery_never_reuse_its_ids() {
        for config in [SchedulerConfig::default(), fifo()] {
            let mut s = cluster(config);
            s.handle(Time(1), recovered(1, 1, 1, 1024, false))
                .expect("recovered");
            s.handle(Time(1), recovered(3, 1, 1, 1024, false))
                .expect("recovered");
            s.handle(
                Time(1),
                Event::Ask {
                    app: AppId(1),
                    ask: ContainerAsk {
                        priority: 1,
                        resources: Resource::new(1024, 1),
                        count: 2,
                        hosts: vec![],
                        racks: vec![],
                        relax_locality: true,
                        tag: AskTag::NONE,
                    },
                },
            )
            .expect("ask");
            s.handle(Time(2), Event::Update).expect("update");
            s.handle(Time(3), Event::NodeHeartbeat { node: NodeId(2) })
                .expect("heartbeat");
            let mut ids = Vec::new();
            while let Some(d) = s.poll_decision() {
                if let Decision::Allocated { container, .. } = d {
                    ids.push(container.0);
                }
            }
            assert!(!ids.is_empty(), "the heartbeat allocated");
            assert!(
                ids.iter().all(|id| *id > 3),
                "ids {ids:?} reuse a recovered one"
            );
        }
    }

    #[test]
    fn a_recovered_am_runs_and_withdraws_the_am_ask() {
        for config in [SchedulerConfig::default(), fifo()] {
            let mut s = cluster(config);
            s.handle(Time(1), recovered(9, 2, 1, 2048, true))
                .expect("recovered AM");
            let snap = s.snapshot();
            let app = &snap.apps[1];
            let app_queue = app.queue.clone();
            assert!(app.am_running);
            assert_eq!(app.pending_containers, 0, "the AM ask is withdrawn");
            let leaf = leaf_of(&snap, 1);
            assert_eq!(leaf.am_usage, Resource::new(2048, 1));
            s.handle(Time(2), Event::Update).expect("update");
            s.handle(Time(3), Event::NodeHeartbeat { node: NodeId(2) })
                .expect("heartbeat");
            assert_eq!(s.poll_decision(), None, "no second AM is allocated");
            assert_eq!(s.verify(), Vec::<String>::new());

            // Its app finishing releases the AM usage it was charged.
            s.handle(Time(4), Event::AppFinished { app: AppId(2) })
                .expect("finished");
            let snap = s.snapshot();
            let leaf = snap
                .queues
                .iter()
                .find(|q| q.name == app_queue)
                .expect("the app's leaf");
            assert_eq!(leaf.am_usage, Resource::ZERO);
            assert_eq!(s.verify(), Vec::<String>::new());
        }
    }

    #[test]
    fn a_refused_recovery_changes_nothing() {
        for config in [SchedulerConfig::default(), fifo()] {
            let mut s = cluster(config);
            s.handle(Time(1), recovered(5, 2, 1, 1024, true))
                .expect("recovered AM");
            let before = s.snapshot();
            let next = s.next_container_id();
            let refused = [
                (recovered(5, 1, 2, 1024, false), "duplicate id"),
                (recovered(6, 9, 1, 1024, false), "unknown app"),
                (recovered(6, 1, 9, 1024, false), "unknown node"),
                (recovered(6, 1, 1, 8192, false), "does not fit"),
                (recovered(6, 2, 2, 1024, true), "second AM"),
                (recovered(6, 1, 1, -1, false), "negative size"),
            ];
            for (event, what) in refused {
                let got = s.handle(Time(2), event);
                assert!(got.is_err(), "{what}: accepted");
                assert_eq!(s.snapshot(), before, "{what}: state changed");
                assert_eq!(s.next_container_id(), next, "{what}: id counter moved");
                assert_eq!(s.poll_decision(), None, "{what}: a decision");
            }
            let Err(SchedError::RecoveryRefused { reason, .. }) =
                s.handle(Time(2), recovered(6, 1, 1, 8192, false))
            else {
                panic!("an oversized container is refused as a recovery");
            };
            assert!(reason.contains("does not fit"), "{reason}");
        }
    }

    fn ask(app: u64, mb: i64, count: u32) -> Event {
        Event::Ask {
            app: AppId(app),
            ask: ContainerAsk {
                priority: 1,
                resources: Resource::new(mb, 1),
                count,
                hosts: vec![],
                racks: vec![],
                relax_locality: true,
                tag: AskTag::NONE,
            },
        }
    }

    fn submit(s: &mut Scheduler, at: u64, app: u64) {
        s.handle(
            Time(at),
            Event::AppSubmitted {
                app: AppId(app),
                user: "u".into(),
                queue: None,
                am_resource: Some(Resource::new(1024, 1)),
            },
        )
        .expect("submitted");
    }

    /// What a drain gave: (app, AM?) per allocation, (container, exit) per completion.
    type Drained = (Vec<(u64, bool)>, Vec<(u64, ContainerExit)>);

    /// Heartbeats node 1 once (after an update) and returns what was allocated and completed.
    fn heartbeat(s: &mut Scheduler, at: u64) -> Drained {
        s.handle(Time(at), Event::Update).expect("update");
        s.handle(Time(at), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        drain(s)
    }

    fn drain(s: &mut Scheduler) -> Drained {
        let (mut allocated, mut completed) = (Vec::new(), Vec::new());
        while let Some(d) = s.poll_decision() {
            match d {
                Decision::Allocated { app, am, .. } => allocated.push((app.0, am)),
                Decision::Completed {
                    container, exit, ..
                } => completed.push((container.0, exit)),
                _ => {}
            }
        }
        (allocated, completed)
    }

    #[test]
    fn a_new_attempt_releases_the_previous_one_and_asks_for_its_am() {
        for config in [SchedulerConfig::default(), fifo()] {
            let mut s = Scheduler::new(config, GroupMapping::new());
            s.handle(
                Time(0),
                Event::NodeAdded {
                    node: NodeId(1),
                    host: "n1".into(),
                    port: 0,
                    rack: "/r".into(),
                    capability: Resource::new(4096, 4),
                },
            )
            .expect("node");
            submit(&mut s, 0, 1);
            assert_eq!(heartbeat(&mut s, 1).0, [(1, true)]);
            s.handle(Time(2), ask(1, 1024, 5)).expect("ask");
            let mut allocated = heartbeat(&mut s, 3).0;
            allocated.extend(heartbeat(&mut s, 4).0);
            // Fair assigns one container per heartbeat here, FIFO as many as fit.
            assert!(allocated.len() >= 2, "{allocated:?}");
            assert!(allocated.iter().all(|a| *a == (1, false)), "{allocated:?}");
            let running = 1 + allocated.len();

            s.handle(
                Time(4),
                Event::AttemptRestarted {
                    app: AppId(1),
                    am_resource: Some(Resource::new(2048, 1)),
                },
            )
            .expect("restarted");
            let (_, completed) = drain(&mut s);
            assert_eq!(
                completed.len(),
                running,
                "every container of the attempt ends"
            );
            assert!(completed.iter().all(|(_, e)| *e == ContainerExit::Killed));
            let snap = s.snapshot();
            let app = &snap.apps[0];
            assert_eq!((app.usage, app.running_containers), (Resource::ZERO, 0));
            assert!(!app.am_running);
            assert_eq!(app.pending_containers, 1, "only the new AM is asked for");
            assert_eq!(leaf_of(&snap, 0).am_usage, Resource::ZERO);
            assert_eq!(snap.cluster_used, Resource::ZERO);
            assert_eq!(s.verify(), Vec::<String>::new());

            // The new AM comes at its new size, as the app's AM.
            assert_eq!(heartbeat(&mut s, 5).0, [(1, true)]);
            let snap = s.snapshot();
            assert_eq!(leaf_of(&snap, 0).am_usage, Resource::new(2048, 1));
            assert_eq!(s.verify(), Vec::<String>::new());
        }
    }

    /// A Fair Scheduler whose queue of user `u` orders apps first come, first served (by
    /// start time).
    fn fair_fifo_policy() -> SchedulerConfig {
        let text = r#"<allocations><queue name="u"><schedulingPolicy>fifo</schedulingPolicy></queue></allocations>"#;
        let types = weft_types::ResourceTypes::default();
        let (allocations, _) = weft_config::alloc_file::parse_allocations(text, &types)
            .expect("a valid allocation file");
        SchedulerConfig::fair(allocations, Default::default())
    }

    #[test]
    fn a_new_attempt_keeps_the_apps_start_time_and_place() {
        let mut s = Scheduler::new(fair_fifo_policy(), GroupMapping::new());
        s.handle(
            Time(0),
            Event::NodeAdded {
                node: NodeId(1),
                host: "n1".into(),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(4096, 4),
            },
        )
        .expect("node");
        submit(&mut s, 0, 1);
        assert_eq!(heartbeat(&mut s, 1).0, [(1, true)]);
        s.handle(Time(2), ask(1, 1024, 3)).expect("ask");
        for t in 3..6 {
            assert_eq!(heartbeat(&mut s, t).0, [(1, false)]);
        }
        // App 2 arrives while the node is full, then app 1's attempt fails.
        submit(&mut s, 10, 2);
        assert_eq!(heartbeat(&mut s, 11).0, []);
        s.handle(
            Time(20),
            Event::AttemptRestarted {
                app: AppId(1),
                am_resource: Some(Resource::new(1024, 1)),
            },
        )
        .expect("restarted");
        drain(&mut s);
        // App 1 started first, so its new AM is served first: finished and resubmitted at
        // 20 ms it would come after app 2 (started at 10 ms).
        assert_eq!(heartbeat(&mut s, 21).0, [(1, true)]);
        assert_eq!(heartbeat(&mut s, 22).0, [(2, true)]);
    }

    #[test]
    fn a_refused_attempt_restart_changes_nothing() {
        let mut s = cluster(SchedulerConfig::default());
        s.handle(Time(1), recovered(5, 2, 1, 1024, true))
            .expect("recovered AM");
        let before = s.snapshot();
        let refused = [
            (AppId(9), Some(Resource::new(1024, 1)), "unknown app"),
            (AppId(2), Some(Resource::new(-1, 1)), "negative AM"),
        ];
        for (app, am_resource, what) in refused {
            let got = s.handle(Time(2), Event::AttemptRestarted { app, am_resource });
            assert!(got.is_err(), "{what}: accepted");
            assert_eq!(s.snapshot(), before, "{what}: state changed");
            assert_eq!(s.poll_decision(), None, "{what}: a decision");
        }
    }

    #[test]
    fn a_completion_hands_back_the_drivers_exit_status() {
        let mut s = cluster(SchedulerConfig::default());
        s.handle(Time(1), recovered(1, 1, 1, 1024, false))
            .expect("recovered");
        s.handle(Time(1), recovered(2, 1, 1, 1024, false))
            .expect("recovered");
        let status = ExitStatus {
            code: 137,
            diagnostics: "killed by the memory monitor".into(),
        };
        s.handle(
            Time(2),
            Event::ContainerCompleted {
                container: ContainerId(1),
                exit: ContainerExit::Success,
                status: Some(status.clone()),
            },
        )
        .expect("completed");
        assert_eq!(
            s.poll_decision(),
            Some(Decision::Completed {
                app: AppId(1),
                container: ContainerId(1),
                exit: ContainerExit::Success,
                status: Some(status),
            })
        );
        // The scheduler's own ends carry none.
        s.handle(
            Time(3),
            Event::Release {
                app: AppId(1),
                container: ContainerId(2),
            },
        )
        .expect("released");
        assert!(matches!(
            s.poll_decision(),
            Some(Decision::Completed {
                exit: ContainerExit::Released,
                status: None,
                ..
            })
        ));
    }

    #[test]
    fn a_submission_returns_its_placement_to_the_caller() {
        let text = r#"<allocations><queue name="root"><aclSubmitApps>alice</aclSubmitApps><aclAdministerApps> </aclAdministerApps></queue></allocations>"#;
        let types = weft_types::ResourceTypes::default();
        let (allocations, _) =
            weft_config::alloc_file::parse_allocations(text, &types).expect("a valid file");
        let mut s = Scheduler::new(
            SchedulerConfig::fair(allocations, Default::default()),
            GroupMapping::new(),
        );
        let placed = s.submit(Time(1), AppId(1), "alice".into(), Some("a".into()), None);
        assert_eq!(
            placed,
            Ok(Placement::Accepted {
                queue: "root.a".into()
            })
        );
        assert!(matches!(s.poll_decision(), Some(Decision::Accepted { .. })));
        let Ok(Placement::Rejected { reason, code }) =
            s.submit(Time(2), AppId(2), "bob".into(), Some("a".into()), None)
        else {
            panic!("bob may not submit anywhere");
        };
        assert_eq!(code, RejectCode::AclDenied);
        assert!(reason.contains("bob"), "{reason}");
        assert!(matches!(s.poll_decision(), Some(Decision::Rejected { .. })));
        assert!(matches!(
            s.submit(Time(3), AppId(1), "alice".into(), None, None),
            Err(SchedError::Duplicate(_))
        ));
        assert_eq!(s.poll_decision(), None);
    }

    /// Where the next allocation for `app` lands when both nodes heartbeat, n1 first.
    fn next_allocation_node(s: &mut Scheduler, app: u64, at: u64) -> Option<NodeId> {
        s.handle(Time(at), Event::Update).expect("update");
        for n in 1..=2 {
            s.handle(Time(at), Event::NodeHeartbeat { node: NodeId(n) })
                .expect("heartbeat");
        }
        let mut node = None;
        while let Some(d) = s.poll_decision() {
            if let Decision::Allocated {
                app: a, node: n, ..
            } = d
            {
                if a == AppId(app) && node.is_none() {
                    node = Some(n);
                }
            }
        }
        node
    }

    #[test]
    fn a_new_attempt_starts_without_the_apps_own_blacklist() {
        for config in [SchedulerConfig::default(), fifo()] {
            let mut s = cluster(config);
            // App 2's AM runs; then it lists n1 for its own containers.
            assert!(next_allocation_node(&mut s, 2, 1).is_some(), "the AM ran");
            s.handle(
                Time(2),
                Event::BlacklistUpdated {
                    app: AppId(2),
                    additions: vec!["n1".into()],
                    removals: vec![],
                },
            )
            .expect("listed");
            // The new attempt's AM may go to n1 (the system's list is empty) ...
            s.handle(
                Time(3),
                Event::AttemptRestarted {
                    app: AppId(2),
                    am_resource: Some(Resource::new(1024, 1)),
                },
            )
            .expect("restarted");
            while s.poll_decision().is_some() {}
            assert_eq!(next_allocation_node(&mut s, 2, 4), Some(NodeId(1)));
            // ... and so may its containers: the previous attempt's list is gone.
            let ask = ContainerAsk {
                priority: 1,
                resources: Resource::new(1024, 1),
                count: 1,
                hosts: vec![],
                racks: vec![],
                relax_locality: true,
                tag: AskTag::NONE,
            };
            s.handle(Time(5), Event::Ask { app: AppId(2), ask })
                .expect("ask");
            assert_eq!(next_allocation_node(&mut s, 2, 6), Some(NodeId(1)));
            assert_eq!(s.verify(), Vec::<String>::new());
        }
    }
}
