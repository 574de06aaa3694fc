//! Plan queues (Hadoop's `PlanQueue` / `ReservationQueue`): a `reservable` leaf of the file
//! runs as a parent with a `<name>-default` leaf taking all of its capacity, to which the
//! plan follower adds one leaf per active reservation and from which it removes them.
//! Hadoop's `CapacitySchedulerQueueManager` makes the same conversion when it builds the
//! tree; the file itself still names a leaf.

use super::model::{
    inherited_labels, CapacityConfig, CapacityValue, CsQueue, MaxCapacityValue, QueueKind,
    QueueOrdering, QueueState,
};

/// Hadoop's `CapacitySchedulerConfiguration.DEFAULT_MAXIMUM_SYSTEM_APPLICATIIONS`, which its
/// PlanQueue uses for its reservation queues' application limit.
const DEFAULT_MAXIMUM_SYSTEM_APPLICATIONS: i32 = 10_000;

impl CapacityConfig {
    /// Turns every `reservable` leaf into a plan queue: a parent whose one child
    /// `<path>.<name>-default` has the leaf's settings and all of its capacity. Idempotent.
    pub fn expand_plan_queues(&mut self) {
        let plans: Vec<String> = self.reservable.keys().cloned().collect();
        for path in plans {
            let Some(index) = self.index_of(&path) else {
                continue;
            };
            let mut settings = match &self.queues[index].kind {
                QueueKind::Leaf(s) => s.clone(),
                QueueKind::Parent { .. } => continue,
            };
            // Hadoop's PlanQueue: every reservation queue takes the plan's
            // `maximum-applications`, else Hadoop's default system limit (the constant 10,000,
            // not the configured one) times the plan's absolute capacity.
            if settings.maximum_applications.is_none() {
                settings.maximum_applications = self
                    .absolute_percent_capacity(index)
                    .map(|abs| (DEFAULT_MAXIMUM_SYSTEM_APPLICATIONS as f32 * abs) as i32);
            }
            self.queues[index].kind = QueueKind::Parent {
                children: Vec::new(),
                ordering: QueueOrdering::Utilization,
                allow_zero_capacity_sum: false,
                auto_create_child_queue: false,
            };
            let name = format!("{}-default", self.queues[index].name);
            let default = self.push_plan_child(index, &name, QueueKind::Leaf(settings));
            self.queues[default].capacity = CapacityValue::Percent(100.0);
        }
    }

    /// The absolute capacity of queue `index` (a fraction) when it and its ancestors have
    /// percentages (f32, as Hadoop computes it); `None` with absolute or weight capacities.
    fn absolute_percent_capacity(&self, index: usize) -> Option<f32> {
        let mut fraction = 1.0f32;
        let mut at = Some(index);
        while let Some(i) = at {
            let q = &self.queues[i];
            if q.parent.is_some() {
                match q.capacity {
                    CapacityValue::Percent(c) => fraction *= c / 100.0,
                    _ => return None,
                }
            }
            at = q.parent;
        }
        Some(fraction)
    }

    /// Whether `path` is a plan queue (reservable, expanded into a parent).
    pub fn is_plan_queue(&self, path: &str) -> bool {
        self.reservable.contains_key(path) && self.queue(path).is_some_and(|q| !q.is_leaf())
    }

    /// Adds reservation leaf `name` under plan queue `plan` with capacity 0 and the settings
    /// of the plan's default leaf (Hadoop's `ReservationQueue` copies its parent's); returns
    /// its index, or why not.
    pub fn add_plan_leaf(&mut self, plan: &str, name: &str) -> Result<usize, String> {
        if !self.is_plan_queue(plan) {
            return Err(format!("{plan} is not a plan (reservable) queue"));
        }
        if name.is_empty() || name.contains('.') || name.trim() != name {
            return Err(format!("'{name}' cannot be a queue name"));
        }
        let path = format!("{plan}.{name}");
        if self.index_of(&path).is_some() {
            return Err(format!("{path} already exists"));
        }
        let pi = self.index_of(plan).unwrap_or(0);
        let short = &self.queues[pi].name;
        let settings = self
            .queue(&format!("{plan}.{short}-default"))
            .and_then(|q| match &q.kind {
                QueueKind::Leaf(s) => Some(s.clone()),
                QueueKind::Parent { .. } => None,
            })
            .ok_or_else(|| format!("{plan} has no default leaf"))?;
        Ok(self.push_plan_child(pi, name, QueueKind::Leaf(settings)))
    }

    /// The leaves under plan queues other than their default leaves: (plan, name).
    pub fn plan_leaves(&self) -> Vec<(String, String)> {
        self.queues
            .iter()
            .filter(|q| q.is_leaf() && !q.name.ends_with("-default"))
            .filter_map(|q| {
                let p = &self.queues[q.parent?];
                self.is_plan_queue(&p.path)
                    .then(|| (p.path.clone(), q.name.clone()))
            })
            .collect()
    }

    /// Removes leaf `path` (a reservation leaf the follower dropped), renumbering the rest.
    pub fn remove_plan_leaf(&mut self, path: &str) {
        let Some(gone) = self.index_of(path) else {
            return;
        };
        if !self.queues[gone].is_leaf() {
            return;
        }
        self.queues.remove(gone);
        let shift = |i: usize| if i > gone { i - 1 } else { i };
        for q in &mut self.queues {
            q.parent = q.parent.map(shift);
            if let QueueKind::Parent { children, .. } = &mut q.kind {
                children.retain(|c| *c != gone);
                for c in children.iter_mut() {
                    *c = shift(*c);
                }
            }
        }
    }

    fn push_plan_child(&mut self, parent: usize, name: &str, kind: QueueKind) -> usize {
        let p = &self.queues[parent];
        let child = CsQueue {
            path: format!("{}.{name}", p.path),
            name: name.to_string(),
            parent: Some(parent),
            depth: p.depth + 1,
            kind,
            capacity: CapacityValue::Percent(0.0),
            maximum_capacity: MaxCapacityValue::Percent(100.0),
            state: QueueState::Running,
            state_configured: false,
            acl_submit_applications: p.acl_submit_applications.clone(),
            acl_administer_queue: p.acl_administer_queue.clone(),
            priority: 0,
            disable_preemption: p.disable_preemption,
            intra_queue_disable_preemption: p.intra_queue_disable_preemption,
            max_parallel_apps: None,
            maximum_allocation: p.maximum_allocation,
            maximum_application_lifetime: p.maximum_application_lifetime,
            default_application_lifetime: p.default_application_lifetime,
            labels: inherited_labels(&p.labels),
        };
        let index = self.queues.len();
        self.queues.push(child);
        if let QueueKind::Parent { children, .. } = &mut self.queues[parent].kind {
            children.push(index);
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use crate::capacity::parse_capacity;
    use crate::capacity::{CapacityConfig, CapacityValue};
    use weft_types::ResourceTypes;

    fn file() -> CapacityConfig {
        let mut xml = String::from("<configuration>\n");
        for (name, value) in [
            ("root.queues", "prod,adhoc"),
            ("root.prod.capacity", "75"),
            ("root.prod.reservable", "true"),
            ("root.prod.user-limit-factor", "2"),
            ("root.adhoc.capacity", "25"),
        ] {
            xml.push_str(&format!(
                "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
            ));
        }
        xml.push_str("</configuration>\n");
        parse_capacity(&xml, &ResourceTypes::default())
            .expect("valid")
            .0
    }

    fn user_limit_factor(c: &CapacityConfig, path: &str) -> Option<f32> {
        match &c.queue(path)?.kind {
            super::QueueKind::Leaf(s) => Some(s.user_limit_factor),
            super::QueueKind::Parent { .. } => None,
        }
    }

    #[test]
    fn a_reservable_leaf_becomes_a_plan_with_a_default_leaf_of_its_settings() {
        let mut c = file();
        c.expand_plan_queues();
        c.expand_plan_queues();
        assert!(c.is_plan_queue("root.prod"));
        let default = c.queue("root.prod.prod-default").expect("added once");
        assert_eq!(default.capacity, CapacityValue::Percent(100.0));
        assert_eq!(user_limit_factor(&c, "root.prod.prod-default"), Some(2.0));
        // 10,000 x prod's 75 percent, for the default leaf and every reservation leaf.
        let max_apps = match &default.kind {
            super::QueueKind::Leaf(s) => s.maximum_applications,
            super::QueueKind::Parent { .. } => None,
        };
        assert_eq!(max_apps, Some(7_500));
        assert_eq!(c.queue("root.prod").map(|q| q.children().len()), Some(1));
        assert!(c.plan_leaves().is_empty());
    }

    #[test]
    fn plan_leaves_are_added_and_removed_keeping_the_indices_straight() {
        let mut c = file();
        c.expand_plan_queues();
        assert!(c.add_plan_leaf("root.adhoc", "r1").is_err(), "not a plan");
        assert!(c.add_plan_leaf("root.prod", "a.b").is_err());
        c.add_plan_leaf("root.prod", "r1").expect("added");
        c.add_plan_leaf("root.prod", "r2").expect("added");
        assert!(c.add_plan_leaf("root.prod", "r1").is_err(), "twice");
        assert_eq!(user_limit_factor(&c, "root.prod.r2"), Some(2.0));
        c.remove_plan_leaf("root.prod.r1");
        assert!(c.queue("root.prod.r1").is_none());
        assert_eq!(
            c.plan_leaves(),
            vec![("root.prod".to_string(), "r2".to_string())]
        );
        // Every parent index and child list points at the right queue after the shift.
        for (i, q) in c.queues.iter().enumerate() {
            for child in q.children() {
                assert_eq!(
                    c.queues[*child].parent,
                    Some(i),
                    "{}",
                    c.queues[*child].path
                );
            }
            if let Some(p) = q.parent {
                assert!(q.path.starts_with(&c.queues[p].path));
            }
        }
    }
}
