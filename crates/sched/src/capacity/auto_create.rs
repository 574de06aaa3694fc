//! Legacy auto-created leaves (spec §3.13): a parent with `auto-create-child-queue.enabled`
//! (a managed parent) creates a leaf from its `leaf-queue-template.*` when a queue mapping
//! places an app in a child of it that does not exist yet (`u:%user:parent.%user`). The leaf
//! joins the tree as a refresh would add it (`refresh::apply_file`), with the template's
//! capacity while the parent's children still fit in 100 percent and 0 after
//! (`CapacityConfig::add_auto_created_leaf`, a creation-time reading of Hadoop's
//! `GuaranteedOrZeroCapacityOverTimePolicy`). Created leaves are kept, as Hadoop keeps legacy
//! auto-created leaves: across refreshes too, while the parent stays a managed parent.
//!
//! A submission naming a missing child of a managed parent without a mapping is refused as an
//! unknown queue; one naming an existing auto-created leaf without a mapping is refused too
//! (Hadoop accepts auto-created leaves only through a placement).

use weft_types::AppId;

use crate::api::RejectCode;
use crate::queues::QueueId;

use super::CapacityEngine;

impl CapacityEngine {
    /// Whether `q` is a leaf under a managed parent.
    pub(crate) fn is_auto_created(&self, q: QueueId) -> bool {
        let Some(parent) = self.queues.get(q).parent else {
            return false;
        };
        self.rules
            .file
            .queues
            .get(self.queues.get(parent).rules_cold.index)
            .is_some_and(|p| p.is_managed_parent())
    }

    /// Creates the leaf a mapping placed the app in when it is a missing child of a managed
    /// parent; refuses a direct submission to an auto-created leaf.
    pub(crate) fn cs_auto_create(
        &mut self,
        app: AppId,
        user: &str,
        requested: Option<&str>,
    ) -> Result<(), (RejectCode, String)> {
        if self.rules.file.leaf_templates.is_empty() {
            return Ok(());
        }
        let name = requested
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or("default");
        let Ok(mapped) = self.mapped_queue(app, user, name) else {
            // `cs_place` reports the mapping's failure.
            return Ok(());
        };
        let Some(target) = mapped else {
            if let Some(q) = self.resolve_queue(name) {
                if self.queues.get(q).is_leaf && self.is_auto_created(q) {
                    return Err((
                        RejectCode::PlacementRejected,
                        format!(
                            "Application {app} submitted by user {user} to auto-created leaf queue {} without a queue mapping",
                            self.queues.get(q).name
                        ),
                    ));
                }
            }
            return Ok(());
        };
        if self.resolve_queue(&target).is_some() {
            return Ok(());
        }
        let Some((parent, leaf)) = target.rsplit_once('.') else {
            return Ok(());
        };
        let Some(p) = self.resolve_queue(parent) else {
            return Ok(());
        };
        let parent_path = self.queues.get(p).name.clone();
        if !self.rules.file.leaf_templates.contains_key(&parent_path) {
            return Ok(());
        }
        let mut file = self.rules.file.clone();
        let refused = |why: String| {
            (
                RejectCode::PlacementRejected,
                format!("Application {app} submitted by user {user}: could not auto-create queue {parent_path}.{leaf}: {why}"),
            )
        };
        file.add_auto_created_leaf(&parent_path, leaf)
            .map_err(refused)?;
        let (maximum, priority) = (self.properties.maximum_allocation, self.rules.max_priority);
        self.apply_file(file, crate::lanes::outward(maximum), priority)
            .map_err(|e| refused(e.to_string()))
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use crate::lanes::Resource;
    use weft_config::capacity::parse_capacity;
    use weft_config::SchedulerProperties;
    use weft_types::{AppId, ResourceTypes, Time};

    use crate::api::{CapacitySchedulerConfig, Event, SchedulerConfig};
    use crate::capacity::CapacityEngine;

    fn config(template: &str) -> CapacitySchedulerConfig {
        let xml = format!("<configuration>\
            <property><name>yarn.scheduler.capacity.root.queues</name><value>a,p</value></property>\
            <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>50</value></property>\
            <property><name>yarn.scheduler.capacity.root.p.capacity</name><value>50</value></property>\
            <property><name>yarn.scheduler.capacity.root.p.auto-create-child-queue.enabled</name><value>true</value></property>\
            <property><name>yarn.scheduler.capacity.root.p.leaf-queue-template.capacity</name><value>{template}</value></property>\
            <property><name>yarn.scheduler.capacity.queue-mappings</name><value>u:%user:p.%user</value></property>\
            </configuration>");
        let (capacity, _) = parse_capacity(&xml, &ResourceTypes::default()).expect("valid");
        CapacitySchedulerConfig {
            capacity,
            properties: SchedulerProperties {
                minimum_allocation: Resource::new(1024, 1),
                ..Default::default()
            },
        }
    }

    /// A mapping to a missing child of a managed parent creates it; a refresh with the
    /// administrator's file (which never lists created leaves) keeps it, its app and its
    /// accounting, with the new template's capacity.
    #[test]
    fn created_leaves_survive_a_refresh_and_take_the_new_template() {
        let mut e = CapacityEngine::new_capacity(config("40"), Default::default());
        e.handle(
            Time(0),
            Event::AppSubmitted {
                app: AppId(1),
                user: "alice".into(),
                queue: None,
                am_resource: None,
            },
        )
        .expect("accepted");
        let leaf = e.queues.lookup("root.p.alice").expect("created");
        assert_eq!(e.apps.get(&AppId(1)).map(|a| a.queue), Some(leaf));
        assert!(e.is_auto_created(leaf));
        e.handle(
            Time(1),
            Event::Reload(Box::new(SchedulerConfig::Capacity(config("30")))),
        )
        .expect("refreshed");
        let leaf = e.queues.lookup("root.p.alice").expect("kept");
        assert_eq!(e.apps.get(&AppId(1)).map(|a| a.queue), Some(leaf));
        let index = e.queues.get(leaf).rules_cold.index;
        assert_eq!(
            e.rules.file.queues[index].capacity,
            weft_config::capacity::CapacityValue::Percent(30.0)
        );
        assert_eq!(e.verify(), Vec::<String>::new());
    }
}
