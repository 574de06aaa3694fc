//! An AM's blacklist handed to the scheduler, which skips the listed places in its walk.
//!
//! The AM names hosts (or racks, or a node id `host:port`). The scheduler knows one node per
//! host name: a further NM on a host it already has goes by its node id (`nodes::add_to_sched`).
//! So a listed host also lists, in the scheduler, every such NM of that host, including NMs that
//! register after the update.

use weft_sched::Event;
use weft_types::Time;

use crate::core::RmCore;
use crate::error::RmError;
use weft_types::yarn_id::AttemptId;

use crate::model::AllocateRequest;

/// Hadoop's `ResourceRequest.ANY`, which no blacklist may hold.
const ANY: &str = "*";

/// Refuses an update that lists every place or an empty name (Hadoop's
/// InvalidResourceBlacklistRequestException), before anything of the request applies.
pub(crate) fn check_update(req: &AllocateRequest) -> Result<(), RmError> {
    if let Some(bad) = req
        .blacklist_additions
        .iter()
        .find(|n| n.as_str() == ANY || n.trim().is_empty())
    {
        return Err(RmError::InvalidRequest(format!(
            "cannot add '{bad}' to the blacklist: name a host or a rack"
        )));
    }
    Ok(())
}

impl RmCore {
    /// Applies an AM's blacklist changes: kept with the attempt (in the AM's words) and handed
    /// to the scheduler (in its node names).
    pub(crate) fn update_blacklist(
        &mut self,
        now: Time,
        attempt: AttemptId,
        additions: &[String],
        removals: &[String],
    ) -> Result<(), RmError> {
        if additions.is_empty() && removals.is_empty() {
            return Ok(());
        }
        if let Some(t) = self
            .apps
            .get_mut(&attempt.app)
            .and_then(|a| a.current_mut())
        {
            t.blacklist.extend(additions.iter().cloned());
            for n in removals {
                t.blacklist.remove(n);
            }
        }
        let event = Event::BlacklistUpdated {
            app: weft_types::AppId(attempt.app.seq),
            additions: self.sched_places(additions),
            removals: self.sched_places(removals),
        };
        self.sched.handle(now, event)?;
        Ok(())
    }

    /// The scheduler's names for the places an AM named: each name, and for a host, the node
    /// ids its further NMs go by.
    fn sched_places(&self, names: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            out.push(name.clone());
            out.extend(
                self.nodes
                    .by_id()
                    .filter(|n| {
                        n.in_sched && n.sched_host == n.id && host_of(&n.id) == name.as_str()
                    })
                    .map(|n| n.id.clone()),
            );
        }
        out
    }

    /// A further NM of `host` joined the scheduler as `node_id`: apps whose AM listed the host
    /// list it too.
    pub(crate) fn blacklist_new_node_of_host(&mut self, now: Time, node_id: &str) {
        let host = host_of(node_id);
        let listing: Vec<u64> = self
            .apps
            .values()
            .filter_map(|a| a.current())
            .filter(|t| t.blacklist.contains(host))
            .map(|t| t.id.app.seq)
            .collect();
        for seq in listing {
            // Only an app the scheduler no longer knows refuses this; it has nothing to skip.
            let _ = self.sched.handle(
                now,
                Event::BlacklistUpdated {
                    app: weft_types::AppId(seq),
                    additions: vec![node_id.to_string()],
                    removals: Vec::new(),
                },
            );
        }
    }
}

/// The host part of a node id `host:port`.
fn host_of(node_id: &str) -> &str {
    node_id.rsplit_once(':').map_or(node_id, |(h, _)| h)
}
