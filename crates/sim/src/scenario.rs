//! The scenario model: what a valid scenario file says, with every default applied.
//!
//! [`parse_scenario`](crate::parse_scenario) builds it from TOML text; the runner replays it.
//! Lines are the scenario file's (1-based) so later messages can point back into the file.

use std::fmt;
use thiserror::Error;
use weft_sched::{ContainerAsk, GroupMapping, SchedulerKind};
use weft_types::{Duration, Resource, ResourceTypes, Time};

/// A parsed, validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file name used in messages (as the caller gave it).
    pub file: String,
    /// The optional `name`.
    pub name: Option<String>,
    /// Each node heartbeats at this period (default 1 s).
    pub heartbeat_interval: Duration,
    /// Period of the scheduler's update (default 500 ms).
    pub update_interval: Duration,
    /// Seed for anything random (default 0).
    pub seed: u64,
    /// When the run stops, if the file says (`end = "120s"`, an extension of the contract).
    pub end: Option<Time>,
    /// `[properties]`, in file order.
    pub properties: Vec<Property>,
    /// Line of the `[properties]` table (0 when absent).
    pub properties_line: u32,
    /// Where the initial allocation file comes from; `None` = an empty allocation file.
    pub allocations: Option<AllocationsSource>,
    /// `[groups]`: user -> groups, primary first.
    pub groups: GroupMapping,
    /// The nodes that join at time 0, already expanded (`count` > 1 gives `host1..hostN`).
    pub nodes: Vec<NodeSpec>,
    /// The timeline, sorted by time; events at the same instant keep file order.
    pub events: Vec<ScheduledEvent>,
    /// Memory, vcores, then custom types: those of `yarn.resource-types`, then any other type
    /// the file's resource amounts mention, in order of first mention.
    pub resource_types: ResourceTypes,
    /// The `scheduler` field (fair unless it says fifo).
    pub scheduler: SchedulerKind,
    /// What the file says that the run ignores, each with its line, in file order
    /// ([`initial_config`](crate::initial_config) passes them on with its own warnings).
    pub warnings: Vec<Problem>,
    /// What replays the file (`driver`): the scheduler alone, or the RM core.
    pub driver: Driver,
}

/// What replays a scenario (the top-level `driver` field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Driver {
    /// `driver = "scheduler"` (the default): the scheduler core alone, [`crate::run`].
    #[default]
    Scheduler,
    /// `driver = "rm"`: the RM core with virtual NodeManagers and ApplicationMasters
    /// (`weft_demand_sim::scenario`), for the events only the RM has: reservations through
    /// the planner, demands and their state machine.
    Rm,
}

impl Driver {
    /// The name the file uses.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Scheduler => "scheduler",
            Driver::Rm => "rm",
        }
    }
}

/// A reservation the planner is asked for (`reserve`, `reservation_update`): Hadoop's
/// ReservationDefinition, times since the run's start.
#[derive(Clone, Debug, PartialEq)]
pub struct ReserveSpec {
    /// The scenario's name for the reservation (outputs use it; `submit.reservation` may
    /// name it).
    pub name: String,
    /// The plan queue.
    pub queue: String,
    /// The submitting user.
    pub user: String,
    /// The earliest start.
    pub arrival: Time,
    /// The latest end.
    pub deadline: Time,
    /// How the stages combine: `all` (default), `any`, `order`, `order_no_gap`.
    pub interpreter: ReserveInterpreter,
    /// The stages.
    pub requests: Vec<ReserveRequest>,
    /// Hadoop's recurrence period, if any.
    pub recurrence: Option<Duration>,
}

/// Hadoop's ReservationRequestInterpreter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReserveInterpreter {
    /// R_ANY.
    Any,
    /// R_ALL.
    All,
    /// R_ORDER.
    Order,
    /// R_ORDER_NO_GAP.
    OrderNoGap,
}

/// One stage of a [`ReserveSpec`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReserveRequest {
    /// One container's size.
    pub resources: Resource,
    /// How many containers.
    pub count: u32,
    /// Containers that must run together (Hadoop's min-concurrency; 1 = no gang).
    pub gang: u32,
    /// How long each runs.
    pub duration: Duration,
}

impl Scenario {
    /// The file the scenario needs read before it can run (its `allocations_file`, relative to
    /// the scenario's directory), if it has not been provided yet.
    pub fn needed_file(&self) -> Option<&str> {
        match &self.allocations {
            Some(AllocationsSource::File {
                path, text: None, ..
            }) => Some(path),
            _ => None,
        }
    }

    /// Provides the text of the file [`Scenario::needed_file`] named.
    pub fn provide_file(&mut self, contents: String) {
        if let Some(AllocationsSource::File { text, .. }) = &mut self.allocations {
            *text = Some(contents);
        }
    }
}

/// One `[properties]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// Hadoop's property name.
    pub name: String,
    /// Its value as text (TOML booleans and numbers are written as Hadoop would read them).
    pub value: String,
    /// Line in the scenario file.
    pub line: u32,
}

/// A configuration text embedded in the scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddedText {
    /// The text.
    pub text: String,
    /// The scenario line holding the text's first line, so that a diagnostic at line L of the
    /// text can be reported at scenario line `first_line + L - 1`.
    pub first_line: u32,
    /// Line of the key (`allocations = ...`).
    pub key_line: u32,
}

/// Where the initial `fair-scheduler.xml` text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocationsSource {
    /// Written inline (`allocations = '''...'''`).
    Inline(EmbeddedText),
    /// Named by `allocations_file`; the caller reads it and hands the text back with
    /// [`Scenario::provide_file`].
    File {
        /// Path relative to the scenario's directory, as written.
        path: String,
        /// Line of the key.
        line: u32,
        /// The contents, once provided.
        text: Option<String>,
    },
}

/// A node of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Host name (unique among live nodes).
    pub host: String,
    /// Rack path (default `/default-rack`).
    pub rack: String,
    /// Total resources.
    pub resources: Resource,
    /// Its node label (exclusive partition) for the Capacity Scheduler; `None`: DEFAULT.
    pub label: Option<String>,
    /// Line in the scenario file.
    pub line: u32,
}

/// One `[[events]]` entry, placed in time.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledEvent {
    /// When it applies.
    pub at: Time,
    /// Its position among the file's events (0-based), the tie-break at one instant.
    pub index: usize,
    /// Line of its `[[events]]` header.
    pub line: u32,
    /// What happens.
    pub action: Action,
}

/// What a scenario event does. Apps are named by the scenario's own names.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Submit an application.
    Submit {
        /// The scenario's name for it.
        app: String,
        /// The submitting user.
        user: String,
        /// The requested queue, if any.
        queue: Option<String>,
        /// The AM container's size; `None` = unmanaged AM.
        am: Option<Resource>,
        /// Application priority (default 0), sent after the submission (`AppPriorityChanged`).
        priority: i32,
        /// Application type, if given; not yet passed to the scheduler.
        app_type: Option<String>,
        /// The reservation it is submitted into (its id), if any.
        reservation: Option<String>,
        /// Its node label expression (Capacity Scheduler; `None`: its queue's default).
        label: Option<String>,
        /// `driver = "rm"`: Weft's `weft-demand` (a ResourceDescription or an array of them)
        /// bound to the app; its AM is asked at the first demand's planned start.
        demand: Option<serde_json::Value>,
        /// `driver = "rm"`: false = the virtual AM never launches the containers it gets
        /// (claim expiry).
        claim: bool,
    },
    /// Add outstanding container asks.
    Ask {
        /// The application.
        app: String,
        /// The asks.
        ask: ContainerAsk,
        /// Each container completes this long after it is allocated, when given.
        duration: Option<Duration>,
    },
    /// Release the newest `count` running containers.
    Release {
        /// The application.
        app: String,
        /// How many.
        count: u32,
        /// Only containers allocated at this request priority.
        priority: Option<i32>,
    },
    /// Withdraw outstanding asks.
    Cancel {
        /// The application.
        app: String,
        /// Only this priority; `None` = all.
        priority: Option<i32>,
        /// At most this many; `None` = all.
        count: Option<u32>,
    },
    /// The application finishes.
    Finish {
        /// The application.
        app: String,
    },
    /// Kill the application.
    Kill {
        /// The application.
        app: String,
        /// Who asks (`None` = the administrator).
        user: Option<String>,
    },
    /// Move the application.
    Move {
        /// The application.
        app: String,
        /// Target queue.
        queue: String,
    },
    /// A node joins.
    AddNode(NodeSpec),
    /// A node is lost.
    RemoveNode {
        /// Its host.
        host: String,
    },
    /// A new allocation file.
    Reload {
        /// The new text.
        allocations: EmbeddedText,
    },
    /// Recompute and print the state.
    Snapshot,
    /// An all-or-nothing ask for `ask.size` containers (Weft's gang; the scheduler's
    /// `Event::GangAsk`).
    Gang {
        /// The application.
        app: String,
        /// The gang (its tag set by the run from `duration`).
        ask: weft_sched::GangAsk,
        /// Each member completes this long after the gang is delivered.
        duration: Option<weft_types::Duration>,
    },
    /// Withdraw a gang (held members are released unseen).
    GangCancel {
        /// The application.
        app: String,
        /// The gang's id.
        gang: u64,
    },
    /// A reservation of a plan queue (Hadoop's reservation system, planned elsewhere): the
    /// plan's reservations so far, this one added, go to the scheduler's plan follower
    /// (`Event::PlanChanged`).
    Reservation {
        /// The plan queue (full name).
        queue: String,
        /// Apps of ended reservations move to the plan's default queue (else are killed).
        move_on_expiry: bool,
        /// The reservation, holding `resources` over `[start, end)`.
        reservation: weft_sched::PlannedReservation,
    },
    /// `driver = "rm"`: ask the planner for a reservation (Hadoop's submit).
    Reserve(ReserveSpec),
    /// `driver = "rm"`: replace a reservation's definition (Hadoop's update), by its name.
    ReservationUpdate(ReserveSpec),
    /// `driver = "rm"`: delete a reservation (Hadoop's delete), by its name.
    ReservationDelete {
        /// The reservation's scenario name.
        name: String,
        /// Who asks.
        user: String,
    },
    /// `driver = "rm"`: the app's AM sends demands with its next Allocate call.
    Demand {
        /// The application.
        app: String,
        /// The ResourceDescription JSON (one object or an array), as written.
        demand: serde_json::Value,
        /// Each of its containers completes this long after its launch (`None`: it runs
        /// until the app finishes).
        duration: Option<Duration>,
    },
    /// `driver = "rm"`: kill one of the app's demands (REST's `PUT .../state KILLED`).
    DemandKill {
        /// The application.
        app: String,
        /// The DemandID.
        demand: u64,
        /// Who asks (`None`: the app's user).
        user: Option<String>,
    },
    /// Change the application's blacklist (hosts or racks the scheduler gives it nothing on).
    Blacklist {
        /// The application.
        app: String,
        /// Places to list.
        add: Vec<String>,
        /// Places to take off the list.
        remove: Vec<String>,
    },
}

impl Action {
    /// The event's `type` as written in the file.
    pub fn type_name(&self) -> &'static str {
        match self {
            Action::Submit { .. } => "submit",
            Action::Ask { .. } => "ask",
            Action::Release { .. } => "release",
            Action::Cancel { .. } => "cancel",
            Action::Finish { .. } => "finish",
            Action::Kill { .. } => "kill",
            Action::Move { .. } => "move",
            Action::AddNode(_) => "add_node",
            Action::RemoveNode { .. } => "remove_node",
            Action::Reload { .. } => "reload",
            Action::Snapshot => "snapshot",
            Action::Blacklist { .. } => "blacklist",
            Action::Gang { .. } => "gang",
            Action::GangCancel { .. } => "gang_cancel",
            Action::Reservation { .. } => "reservation",
            Action::Reserve(_) => "reserve",
            Action::ReservationUpdate(_) => "reservation_update",
            Action::ReservationDelete { .. } => "reservation_delete",
            Action::Demand { .. } => "demand",
            Action::DemandKill { .. } => "demand_kill",
        }
    }
}

/// One problem found in a scenario file (or in its initial configuration).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line in the scenario file; 0 when the problem has no single line.
    pub line: u32,
    /// The field's path, e.g. `events[2].resources` (0-based indices); may be empty.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    /// `line 14, field events[2].resources: '1024' is not a resource: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.field.is_empty()) {
            (0, true) => write!(f, "{}", self.message),
            (0, false) => write!(f, "field {}: {}", self.field, self.message),
            (l, true) => write!(f, "line {l}: {}", self.message),
            (l, false) => write!(f, "line {l}, field {}: {}", self.field, self.message),
        }
    }
}

/// A scenario that cannot run: every problem found, in file order, each prefixed by the file.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct ScenarioError {
    /// The file name used in messages.
    pub file: String,
    /// The problems.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {p}", self.file)?;
        }
        Ok(())
    }
}
