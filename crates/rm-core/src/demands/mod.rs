//! Time-aware demands (seed 004's RMDemand; time-aware-demands spec §3.4): one state machine
//! per demand, every transition with its reason and time, persisted on every change so that a
//! restart loses none.
//!
//! Sans-IO like the rest of the core: inputs carry `now`; timers (claim expiry, lease end,
//! deadlines, the Start window) are checked against it in [`RmCore::tick`]. Allocations,
//! claims and completions come in through the `demand_*` inputs, which `am_path` drives for
//! demands an AM sends (issue 17 item 5: their asks reach the scheduler only while ALLOCATING);
//! a REST-only demand asks nothing and is driven through the inputs alone. An AM demand's
//! missed opportunities are the node heartbeats that give it nothing (`opportunities`); a
//! REST-only demand's come only through `demand_missed_opportunity`. A demand that needs a plan is placed by the plan of the
//! reservable queue above its queue (`planning`); under none, a strict condition that needs a
//! plan fails with `not_reservable` (§3.4 row 3) and a loose one runs best-effort.

mod am_gate;
mod am_path;
#[cfg(test)]
mod am_tests;
mod blackout;
mod bounds;
mod carrier;
#[cfg(test)]
mod carrier_tests;
mod containers;
mod dry_run;
mod inputs;
mod links;
mod opportunities;
mod order;
#[cfg(test)]
mod plan_tests;
mod planning;
mod reason;
mod record;
mod report;
#[cfg(test)]
mod restart_tests;
mod submit;
#[cfg(test)]
mod tests;
mod timers;

use std::collections::BTreeMap;

use weft_demand_lang::{DemandRef, Owner, ResolvedTimes, ResourceDescription};
use weft_store::DemandState;
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

pub(crate) use am_path::TagOutcome;
pub use am_path::{DEMAND_GANG_IDS, MAX_AM_DEMANDS_PER_APP};
pub use bounds::MAX_DEMANDS_PER_SCOPE;
pub use dry_run::DemandPreview;
pub use reason::DemandReason;
pub use report::{demand_state_name, DemandReport, DemandTransition};
pub use submit::DemandBatch;

/// At most this many demands in one submission.
pub const MAX_DEMANDS_PER_SUBMISSION: usize = 1000;

/// The key of the demand that gates the AM of `app` submitted with `weft-demand` (its first
/// ResourceDescription's DemandID), `None` when it names none.
pub(crate) fn gating_demand_key(app: ApplicationId, demand: &serde_json::Value) -> Option<String> {
    let first = match demand {
        serde_json::Value::Array(all) => all.first()?,
        one => one,
    };
    let id = first.get("DemandID")?.as_u64()?;
    Some(Scope::App(app).key(id))
}

/// Whose demand numbers a demand's DemandID is unique among.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scope {
    /// An application's.
    App(ApplicationId),
    /// A user's demands bound to no application (REST-only).
    User(String),
}

impl Scope {
    /// The demand's global key: `application_<ts>_<n>/<id>` or `~<user>/<id>`.
    pub(crate) fn key(&self, demand: u64) -> String {
        match self {
            Scope::App(app) => format!("{app}/{demand}"),
            Scope::User(user) => format!("~{user}/{demand}"),
        }
    }

    /// The key of the demand an OrderBy atom written in this scope names; `None` for a
    /// reservation's (no reservation system yet).
    pub(crate) fn target(&self, reference: &DemandRef) -> Option<String> {
        match reference.owner {
            None => Some(self.key(reference.demand)),
            Some(Owner::Application {
                cluster_timestamp,
                seq,
            }) => Some(
                Scope::App(ApplicationId {
                    cluster_ts: cluster_timestamp,
                    seq,
                })
                .key(reference.demand),
            ),
            Some(Owner::Reservation { .. }) => None,
        }
    }
}

/// One demand's machine.
pub(crate) struct Demand {
    pub(crate) key: String,
    pub(crate) scope: Scope,
    pub(crate) user: String,
    pub(crate) queue: String,
    pub(crate) spec: ResourceDescription,
    /// The spec as the printer writes it (what the store keeps).
    pub(crate) spec_json: String,
    /// The instant NOW is bound to.
    pub(crate) accepted_at: Time,
    pub(crate) times: ResolvedTimes,
    pub(crate) timeline: Vec<DemandTransition>,
    /// START.
    pub(crate) first_allocation: Option<Time>,
    pub(crate) missed: u64,
    pub(crate) allocated: u64,
    pub(crate) claimed: u64,
    pub(crate) completed: u64,
    /// Set for a demand an AM sent: the RM asks the scheduler for its containers.
    pub(crate) am: Option<am_path::AmAsks>,
    /// Its reservation, while the planner has placed it (kept after it ends, for its report).
    pub(crate) plan: Option<planning::DemandPlan>,
    /// Its live containers (persisted while it is not over, so a restart re-attaches them).
    pub(crate) containers: containers::LiveContainers,
}

impl Demand {
    /// A demand just read from a submission: no transition, nothing allocated, no plan.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn submitted(
        key: String,
        scope: Scope,
        user: &str,
        queue: String,
        spec: ResourceDescription,
        spec_json: String,
        accepted_at: Time,
        times: ResolvedTimes,
    ) -> Demand {
        Demand {
            key,
            scope,
            user: user.to_owned(),
            queue,
            spec,
            spec_json,
            accepted_at,
            times,
            timeline: Vec::new(),
            first_allocation: None,
            missed: 0,
            allocated: 0,
            claimed: 0,
            completed: 0,
            am: None,
            plan: None,
            containers: Default::default(),
        }
    }

    pub(crate) fn state(&self) -> DemandState {
        self.timeline
            .last()
            .map(|t| t.state)
            .unwrap_or(DemandState::New)
    }

    pub(crate) fn reason(&self) -> DemandReason {
        self.timeline
            .last()
            .map(|t| t.reason)
            .unwrap_or(DemandReason::Submitted)
    }

    /// Whether a transition with `reason` was ever taken (one-off notes such as
    /// `window_missed` are taken once).
    pub(crate) fn noted(&self, reason: DemandReason) -> bool {
        self.timeline.iter().any(|t| t.reason == reason)
    }

    pub(crate) fn ever_in(&self, state: DemandState) -> bool {
        self.timeline.iter().any(|t| t.state == state)
    }

    pub(crate) fn requested(&self) -> u64 {
        self.spec.request.num_containers
    }
}

/// Every demand, by key.
#[derive(Default)]
pub(crate) struct Demands {
    pub(crate) by_key: BTreeMap<String, Demand>,
    /// The scheduler gangs asked for AM demands -> the demand's key.
    pub(crate) gang_owner: BTreeMap<(weft_types::AppId, u64), String>,
    /// The last gang id handed out (from [`DEMAND_GANG_IDS`] up).
    pub(crate) last_gang: u64,
    /// A demand's reservation was placed or removed since the scheduler's plan follower was
    /// last told.
    pub(crate) plans_changed: bool,
    /// The plans' capacity was set from the scheduler's shares within the current input (a
    /// snapshot per input, not per demand placed).
    pub(crate) plan_capacity_fresh: bool,
    /// Applications whose AM waits for their demand's time (`am_gate`) -> that demand's key.
    pub(crate) am_gates: BTreeMap<ApplicationId, String>,
    /// After a restart: containers demands listed that no NM has reported again yet -> the
    /// DemandID (of the container's app).
    pub(crate) unreported: BTreeMap<weft_types::yarn_id::ContainerId, u64>,
    /// Demands whose container lists changed in the current scheduler decisions.
    pub(crate) unwritten: std::collections::BTreeSet<String>,
    /// The AM demands whose containers are asked of the scheduler now (ALLOCATING): those a
    /// node heartbeat may give nothing, a missed opportunity (`opportunities`).
    pub(crate) asking: std::collections::BTreeSet<String>,
    /// Outcomes counted since this RM started (`/metrics`).
    pub(crate) outcomes: DemandOutcomes,
}

/// Demand outcomes counted since the RM started (spec §3.6's counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DemandOutcomes {
    /// Demands with a deadline that ended FINISHED without missing it.
    pub deadline_hit: u64,
    /// Demands with a deadline that missed it: FINISHED `late`, or FAILED `deadline_missed` /
    /// `deadline_unreachable`.
    pub deadline_miss: u64,
    /// Demands FAILED `claim_expired` (containers allocated and never launched in time).
    pub claim_expired: u64,
}

impl Demands {
    /// A fresh scheduler gang id for a demand's gang.
    pub(crate) fn next_gang_id(&mut self) -> u64 {
        self.last_gang = self.last_gang.max(DEMAND_GANG_IDS).saturating_add(1);
        self.last_gang
    }
}
