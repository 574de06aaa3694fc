//! The demand language's syntax tree (spec §3.2): what a ResourceDescription says, with `NOW`
//! and `START` left symbolic. Both notations (JSON structure and the seed's compact strings)
//! parse to the same tree, so the tree keeps no trace of which one was written.

use std::collections::BTreeMap;

/// A client-chosen demand number, unique within its application (or user, for REST-only
/// demands); JSON allows 0 to `i64::MAX`.
pub type DemandNumber = u64;

/// Whether a condition must hold (strict) or should (loose), per field (§3.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// Honour the condition or reject / fail the demand.
    Strict,
    /// Try to honour it; postpone or continue when it cannot be.
    Loose,
}

impl Strategy {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Strict => "strict",
            Strategy::Loose => "loose",
        }
    }
}

/// A symbolic instant the core binds: `NOW` at acceptance, `START` at the first allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The `now` of the event that accepts the demand.
    Now,
    /// The demand's first allocation (the whole gang's, for a gang).
    Start,
}

/// A UTC offset written after an absolute time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Zone {
    /// `Z`.
    Utc,
    /// `+hh:mm` or `-hh:mm`, in minutes east of UTC.
    Offset(i16),
}

/// A calendar time as written (`YY-MM-DD hh:mm:ss`, two-digit years already read as 20YY);
/// without a zone it is read in `weft.demand.timezone` when resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AbsTime {
    /// Four-digit year.
    pub year: u16,
    /// 1-12.
    pub month: u8,
    /// 1 to the month's length.
    pub day: u8,
    /// 0-23.
    pub hour: u8,
    /// 0-59.
    pub minute: u8,
    /// 0-59.
    pub second: u8,
    /// The written offset, if any.
    pub zone: Option<Zone>,
}

/// An interval's lower bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LowerBound {
    /// `NOW`, `START`, `NOW+10m`: an anchor and an offset in milliseconds (0 when absent).
    Anchor(Anchor, u64),
    /// A calendar time.
    Absolute(AbsTime),
    /// UTC epoch milliseconds (a JSON number, RDL style).
    EpochMs(u64),
}

/// An interval's upper bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpperBound {
    /// `+1h30m`: milliseconds after the resolved lower bound (or the field's anchor).
    Offset(u64),
    /// A calendar time.
    Absolute(AbsTime),
    /// UTC epoch milliseconds.
    EpochMs(u64),
    /// `^N`: at most N missed scheduling opportunities.
    Count(u64),
}

/// `[T1, T2]`, half-open `[a, b)`; a missing bound means the field's anchor (T1) or unbounded (T2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    /// T1.
    pub from: Option<LowerBound>,
    /// T2.
    pub to: Option<UpperBound>,
}

/// A time expression: the predicate P(t, k) of §3.2.3.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TimeExpr {
    /// One interval.
    Interval(Interval),
    /// Every branch holds.
    And(Vec<TimeExpr>),
    /// Some branch holds.
    Or(Vec<TimeExpr>),
    /// The branch does not hold.
    Not(Box<TimeExpr>),
}

/// The state of a referenced demand that satisfies an OrderBy atom (Slurm's dependency types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// FINISHED with outcome ok (`afterok`).
    Ok,
    /// FINISHED or FAILED (`afterany`).
    Any,
    /// FAILED (`afternotok`).
    Failed,
    /// Reached ALLOCATED (`after`).
    Started,
}

impl Outcome {
    /// The spelling after the colon.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Any => "any",
            Outcome::Failed => "failed",
            Outcome::Started => "started",
        }
    }
}

/// Whose demand an OrderBy atom names, when not the submitter's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// `application_<ts>_<n>`.
    Application {
        /// Cluster timestamp.
        cluster_timestamp: u64,
        /// Sequence number.
        seq: u64,
    },
    /// `reservation_<ts>_<n>`.
    Reservation {
        /// Cluster timestamp.
        cluster_timestamp: u64,
        /// Sequence number.
        seq: u64,
    },
}

/// One OrderBy atom: `1200`, `"1200:ok"`, `"application_1_2/1200:started"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DemandRef {
    /// Another application's or reservation's demand; `None` for the submitter's own.
    pub owner: Option<Owner>,
    /// The referenced DemandID.
    pub demand: DemandNumber,
    /// The awaited outcome; `None` takes the field's strategy default (ok strict, any loose).
    pub outcome: Option<Outcome>,
}

/// An OrderBy expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DemandExpr {
    /// One atom.
    Ref(DemandRef),
    /// Every branch holds.
    And(Vec<DemandExpr>),
    /// Some branch holds.
    Or(Vec<DemandExpr>),
    /// The branch does not hold.
    Not(Box<DemandExpr>),
}

/// `Duration`: a bare length, or one interval whose length is T2 − anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseLength {
    /// `"20m"`, `"+1h30m"`: milliseconds.
    Length(u64),
    /// `"[, +20m]"`.
    Interval(Interval),
}

/// A field's value with the strategy written beside it (`None`: the top-level default).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field<T> {
    /// The expression.
    pub value: T,
    /// The field's own strategy.
    pub strategy: Option<Strategy>,
}

/// `Gang`: all-or-nothing delivery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Gang {
    /// `false` or absent.
    #[default]
    Off,
    /// `true`: all `num-containers` at once.
    All,
    /// g at a time; `num-containers` is a multiple of g.
    Size(u64),
}

/// The wrapped ask, in Hadoop's REST naming.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceRequest {
    /// `capability.memory`, MiB.
    pub memory_mb: u64,
    /// `capability.vCores`.
    pub vcores: u64,
    /// `capability.resources`: custom resource types by name.
    pub resources: BTreeMap<String, u64>,
    /// `num-containers`, at least 1.
    pub num_containers: u64,
    /// `priority`.
    pub priority: Option<i32>,
    /// `resource-name` (`*` when absent).
    pub resource_name: Option<String>,
    /// `relax-locality`.
    pub relax_locality: Option<bool>,
    /// `node-label-expression`.
    pub node_label_expression: Option<String>,
}

/// One demand: seed 004's ResourceDescription v1 (§3.2.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceDescription {
    /// `DemandID`.
    pub demand_id: DemandNumber,
    /// `Name`.
    pub name: Option<String>,
    /// `ResourceRequest`.
    pub request: ResourceRequest,
    /// `Gang`.
    pub gang: Gang,
    /// `Start`: the admissible allocation instants.
    pub start: Option<Field<TimeExpr>>,
    /// `Duration`: the lease length.
    pub duration: Option<Field<LeaseLength>>,
    /// `DeadLine` (or its alias `Deadline`): completion must be at or before T2.
    pub deadline: Option<Field<TimeExpr>>,
    /// `OrderBy`: eligibility from other demands' states.
    pub order_by: Option<Field<DemandExpr>>,
    /// `Strategy`: the default for fields without one.
    pub strategy: Option<Strategy>,
    /// `ClaimTimeout`, milliseconds.
    pub claim_timeout: Option<u64>,
}

impl ResourceDescription {
    /// The strategy a field follows: its own, else the demand's, else `default`
    /// (`weft.demand.default-strategy`, loose unless configured).
    pub fn effective<T>(&self, field: &Field<T>, default: Strategy) -> Strategy {
        field.strategy.or(self.strategy).unwrap_or(default)
    }
}
