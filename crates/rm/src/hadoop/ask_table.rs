//! An AM's asks as Hadoop's AMRMClient sends them: the absolute outstanding count per
//! (priority, resource name, capability), and only for the keys that changed since the last
//! call. The table keeps the last count of every key per attempt, so each call can be turned
//! into rm-core's form: one ask per priority whose count is the `*` (ANY) entry's and whose
//! places are the hosts and racks still counted. rm-core takes that count as the absolute
//! total too (it asks or cancels the difference from what the scheduler still holds, and
//! lowers its copy as containers are allocated), so a lowered total withdraws asks.

use std::collections::{BTreeMap, BTreeSet};

use weft_proto::hadoop::yarn::{ExecutionTypeProto, ResourceRequestProto};
use weft_proto::hadoop::{self as wire};
use weft_rm_core::ResourceAsk;
use weft_types::Resource;

/// Hadoop's `ResourceRequest.ANY`.
const ANY: &str = "*";

/// Keys one attempt may hold with a non-zero count (hosts and racks of every priority): a
/// bound on what an AM can make the RM keep.
pub(super) const MAX_ENTRIES: usize = 10_000;

/// (priority, resource name, memory MB, vcores).
type Key = (i32, String, i64, i64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    count: u32,
    relax_locality: bool,
}

/// The outstanding asks of one attempt, as its AM last stated them.
#[derive(Clone, Debug, Default)]
pub(super) struct AskTable {
    entries: BTreeMap<Key, Entry>,
}

/// Why an ask is refused (Hadoop's InvalidResourceRequestException).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct AskError(pub(super) String);

fn key_of(r: &ResourceRequestProto) -> Result<(Key, Entry), AskError> {
    let priority = r
        .priority
        .and_then(|p| p.priority)
        .ok_or_else(|| AskError("a resource request has no priority".into()))?;
    let capability = r.capability.as_ref().ok_or_else(|| {
        AskError(format!(
            "the resource request at priority {priority} has no capability"
        ))
    })?;
    let size = wire::resource(capability);
    let name = r.resource_name.clone().unwrap_or_default();
    if name.trim().is_empty() {
        return Err(AskError(format!(
            "the resource request at priority {priority} has no resource name (use * for any place)"
        )));
    }
    let count = u32::try_from(r.num_containers.unwrap_or(0)).map_err(|_| {
        AskError(format!(
            "invalid number of containers {} at priority {priority}",
            r.num_containers.unwrap_or(0)
        ))
    })?;
    if r.node_label_expression
        .as_deref()
        .is_some_and(|l| !l.trim().is_empty())
    {
        return Err(AskError(format!(
            "node label expressions in resource requests are not supported by Weft (priority {priority})"
        )));
    }
    if r.execution_type_request
        .is_some_and(|e| e.execution_type() == ExecutionTypeProto::Opportunistic)
    {
        return Err(AskError(format!(
            "OPPORTUNISTIC containers are not supported by Weft (priority {priority})"
        )));
    }
    Ok((
        (priority, name, size.memory_mb(), size.vcores()),
        Entry {
            count,
            relax_locality: r.relax_locality(),
        },
    ))
}

impl AskTable {
    /// The table after `requests`, and rm-core's ask for every priority they touch. `self` is
    /// unchanged: the caller keeps the new table only once the RM accepted the asks (a refused
    /// call changes nothing).
    pub(super) fn apply(
        &self,
        requests: &[ResourceRequestProto],
    ) -> Result<(AskTable, Vec<ResourceAsk>), AskError> {
        let mut next = self.clone();
        let mut touched: BTreeSet<i32> = BTreeSet::new();
        for r in requests {
            let (key, entry) = key_of(r)?;
            touched.insert(key.0);
            next.entries.insert(key, entry);
        }
        let asks = touched
            .iter()
            .map(|&p| next.ask_at(p))
            .collect::<Result<Vec<_>, _>>()?;
        next.entries.retain(|_, e| e.count > 0);
        if next.entries.len() > MAX_ENTRIES {
            return Err(AskError(format!(
                "more than {MAX_ENTRIES} outstanding resource requests (priority, place, size)"
            )));
        }
        Ok((next, asks.into_iter().flatten().collect()))
    }

    /// rm-core's ask at `priority`: the counted `*` entry's size and count with the hosts and
    /// racks of that size still counted; a zero count (withdrawing what is outstanding) when
    /// no `*` entry counts; `None` when the AM never sent a `*` entry there (nothing to ask,
    /// as Hadoop's scheduler allocates nothing without one).
    fn ask_at(&self, priority: i32) -> Result<Option<ResourceAsk>, AskError> {
        let at = |(p, ..): &&Key| *p == priority;
        let any: Vec<(&Key, &Entry)> = self
            .entries
            .iter()
            .filter(|(k, _)| at(k) && k.1 == ANY)
            .collect();
        let counted: Vec<&(&Key, &Entry)> = any.iter().filter(|(_, e)| e.count > 0).collect();
        let (key, entry): (&Key, Entry) = match (counted.as_slice(), any.first()) {
            ([one], _) => (one.0, *one.1),
            ([], Some((k, e))) => (k, **e),
            ([], None) => return Ok(None),
            _ => {
                return Err(AskError(format!(
                    "outstanding requests of {} sizes at priority {priority}: Weft keeps one size per priority; ask each size at its own priority",
                    counted.len()
                )))
            }
        };
        let (memory, vcores) = (key.2, key.3);
        let count = if counted.is_empty() { 0 } else { entry.count };
        let places = self
            .entries
            .iter()
            .filter(|(k, e)| at(k) && k.1 != ANY && e.count > 0 && k.2 == memory && k.3 == vcores);
        let (mut hosts, mut racks) = (Vec::new(), Vec::new());
        for ((_, name, ..), _) in places {
            if name.starts_with('/') {
                racks.push(name.clone());
            } else {
                hosts.push(name.clone());
            }
        }
        Ok(Some(ResourceAsk {
            priority,
            resource: Resource::new(memory, vcores),
            count,
            hosts,
            racks,
            relax_locality: entry.relax_locality,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_proto::hadoop::yarn::PriorityProto;

    fn request(priority: i32, name: &str, memory: i64, count: i32) -> ResourceRequestProto {
        ResourceRequestProto {
            priority: Some(PriorityProto {
                priority: Some(priority),
            }),
            resource_name: Some(name.into()),
            capability: Some(wire::resource_proto(Resource::new(memory, 1))),
            num_containers: Some(count),
            ..Default::default()
        }
    }

    #[test]
    fn the_any_entry_counts_and_counted_places_are_preferences() {
        let t = AskTable::default();
        let (t, asks) = t
            .apply(&[
                request(1, "*", 1024, 3),
                request(1, "h1", 1024, 2),
                request(1, "/rack-a", 1024, 2),
                request(1, "h2", 1024, 1),
            ])
            .unwrap();
        assert_eq!(asks.len(), 1);
        assert_eq!(asks[0].count, 3);
        assert_eq!(asks[0].hosts, vec!["h1".to_string(), "h2".to_string()]);
        assert_eq!(asks[0].racks, vec!["/rack-a".to_string()]);
        assert!(asks[0].relax_locality);
        // Only changed keys come next: h2 drops out, the total goes to 1; h1 and the rack
        // are still remembered.
        let (t, asks) = t
            .apply(&[request(1, "*", 1024, 1), request(1, "h2", 1024, 0)])
            .unwrap();
        assert_eq!(asks[0].count, 1);
        assert_eq!(asks[0].hosts, vec!["h1".to_string()]);
        assert_eq!(asks[0].racks, vec!["/rack-a".to_string()]);
        // Zero withdraws, and zero entries are forgotten.
        let (t, asks) = t
            .apply(&[
                request(1, "*", 1024, 0),
                request(1, "h1", 1024, 0),
                request(1, "/rack-a", 1024, 0),
            ])
            .unwrap();
        assert_eq!((asks[0].count, asks[0].hosts.len()), (0, 0));
        assert!(t.entries.is_empty());
    }

    #[test]
    fn only_touched_priorities_are_asked_and_a_size_may_change() {
        let (t, _) = AskTable::default()
            .apply(&[request(1, "*", 1024, 2), request(2, "*", 2048, 1)])
            .unwrap();
        let (t, asks) = t.apply(&[request(2, "*", 2048, 4)]).unwrap();
        assert_eq!(asks.len(), 1);
        assert_eq!((asks[0].priority, asks[0].count), (2, 4));
        // The AM moves priority 2 to another size: the old one goes to zero in the same call.
        let (_, asks) = t
            .apply(&[request(2, "*", 2048, 0), request(2, "*", 4096, 1)])
            .unwrap();
        assert_eq!(asks.len(), 1);
        assert_eq!((asks[0].resource.memory_mb(), asks[0].count), (4096, 1));
    }

    #[test]
    fn refusals_leave_the_table_as_it_was() {
        let (t, _) = AskTable::default()
            .apply(&[request(1, "*", 1024, 2)])
            .unwrap();
        let two_sizes = t.apply(&[request(1, "*", 2048, 1)]).unwrap_err();
        assert!(two_sizes.0.contains("priority 1"), "{two_sizes:?}");
        assert_eq!(t.entries.len(), 1);
        assert!(t.apply(&[request(1, "*", 1024, -1)]).is_err());
        let mut labelled = request(3, "*", 1024, 1);
        labelled.node_label_expression = Some("gpu".into());
        assert!(t.apply(&[labelled]).unwrap_err().0.contains("label"));
        let mut no_priority = request(3, "*", 1024, 1);
        no_priority.priority = None;
        assert!(t.apply(&[no_priority]).is_err());
        // Only a place without the ANY entry: nothing to ask yet.
        let (_, asks) = t.apply(&[request(5, "h1", 1024, 1)]).unwrap();
        assert!(asks.is_empty());
    }

    #[test]
    fn the_table_is_bounded() {
        let many: Vec<_> = (0..=MAX_ENTRIES)
            .map(|i| request(1, &format!("h{i}"), 1024, 1))
            .collect();
        let e = AskTable::default().apply(&many).unwrap_err();
        assert!(e.0.contains("outstanding"), "{e:?}");
    }
}
