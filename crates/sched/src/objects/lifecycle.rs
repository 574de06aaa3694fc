//! Lifecycle events of a driver that restarts and retries (the RM): containers recovered on
//! their nodes after a restart. Each checks everything before it changes anything, so a
//! refusal leaves the state as it was; the usage itself is written by the ledger.

use weft_types::{AppId, ContainerId, NodeId, Resource};

use crate::api::SchedError;
use crate::engine::Engine;
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
        self.charge_recovered(container, app_slot, node_slot, size, am);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use weft_types::{AppId, ContainerId, NodeId, Resource, Time};

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
}
