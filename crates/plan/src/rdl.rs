//! The reservation definition language (Hadoop's `ReservationDefinition`,
//! `ReservationRequests`, `ReservationRequest` and `ReservationRequestInterpreter`), the
//! reservation id, and the checks Hadoop's `ReservationInputValidator` and
//! `IterativePlanner.validateInputStage` make before planning.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;
use weft_types::{Duration, Resource, Time, MAX_RESOURCE_TYPES};

/// Hadoop's `ReservationId`: `reservation_<cluster timestamp>_<sequence, at least 4 digits>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReservationId {
    /// The RM's start time, as in application ids.
    pub cluster_timestamp: u64,
    /// The sequence number within that RM.
    pub sequence: u64,
}

impl fmt::Display for ReservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reservation_{}_{:04}",
            self.cluster_timestamp, self.sequence
        )
    }
}

/// A string that is not a reservation id.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("'{0}' is not a reservation id (expected reservation_<cluster timestamp>_<sequence>)")]
pub struct BadReservationId(pub String);

impl FromStr for ReservationId {
    type Err = BadReservationId;

    fn from_str(s: &str) -> Result<ReservationId, BadReservationId> {
        let bad = || BadReservationId(s.to_string());
        let rest = s.strip_prefix("reservation_").ok_or_else(bad)?;
        let (ts, seq) = rest.split_once('_').ok_or_else(bad)?;
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(ts) || !digits(seq) {
            return Err(bad());
        }
        Ok(ReservationId {
            cluster_timestamp: ts.parse().map_err(|_| bad())?,
            sequence: seq.parse().map_err(|_| bad())?,
        })
    }
}

/// How the stages of a definition combine (REST integers 0..3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Interpreter {
    /// Exactly one of the stages, the agent's choice.
    Any,
    /// Every stage, in any order.
    All,
    /// Every stage, each ending before the next starts (gaps allowed).
    Order,
    /// Every stage, each starting exactly when the previous one ends.
    OrderNoGap,
}

impl Interpreter {
    /// Hadoop's enum name (`R_ANY`, ...).
    pub fn hadoop_name(self) -> &'static str {
        match self {
            Interpreter::Any => "R_ANY",
            Interpreter::All => "R_ALL",
            Interpreter::Order => "R_ORDER",
            Interpreter::OrderNoGap => "R_ORDER_NO_GAP",
        }
    }

    /// The REST encoding, the enum's ordinal.
    pub fn ordinal(self) -> u8 {
        match self {
            Interpreter::Any => 0,
            Interpreter::All => 1,
            Interpreter::Order => 2,
            Interpreter::OrderNoGap => 3,
        }
    }

    /// From Hadoop's name or its ordinal as text.
    pub fn parse(s: &str) -> Option<Interpreter> {
        [
            Interpreter::Any,
            Interpreter::All,
            Interpreter::Order,
            Interpreter::OrderNoGap,
        ]
        .into_iter()
        .find(|i| i.hadoop_name() == s || i.ordinal().to_string() == s)
    }

    fn is_ordered(self) -> bool {
        matches!(self, Interpreter::Order | Interpreter::OrderNoGap)
    }
}

/// One stage: `num_containers` containers of `capability`, in gangs of `concurrency` that each
/// hold for `duration`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReservationRequest {
    /// One container's size.
    pub capability: Resource,
    /// How many containers in all.
    pub num_containers: u32,
    /// The gang size (Hadoop's `min-concurrency`): containers that must run together.
    pub concurrency: u32,
    /// How long each gang runs.
    pub duration: Duration,
}

impl ReservationRequest {
    /// One gang's resources, `capability × concurrency` (`None` on overflow).
    pub fn gang(&self) -> Option<Resource> {
        scale(self.capability, i64::from(self.concurrency))
    }

    /// How many gangs the stage places.
    pub fn gang_count(&self) -> u32 {
        self.num_containers
            .checked_div(self.concurrency)
            .unwrap_or(0)
    }
}

/// `r × n` per component, `None` on overflow.
pub(crate) fn scale(r: Resource, n: i64) -> Option<Resource> {
    let mut out = Resource::ZERO;
    for i in 0..MAX_RESOURCE_TYPES {
        out.set(i, r.get(i).checked_mul(n)?);
    }
    Some(out)
}

/// A reservation's definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservationDefinition {
    /// The earliest start, ms.
    pub arrival: Time,
    /// The latest end, ms.
    pub deadline: Time,
    /// A mnemonic, not an id.
    pub name: String,
    /// Lower is more important (kept, not used by the greedy agent).
    pub priority: i32,
    /// Hadoop's `recurrence-expression`: the period in ms; `None` for `"0"` or absent.
    pub recurrence: Option<Duration>,
    /// How the stages combine.
    pub interpreter: Interpreter,
    /// The stages, in order.
    pub requests: Vec<ReservationRequest>,
}

/// Parses Hadoop's `recurrence-expression` ("0" or absent: not recurring).
pub fn parse_recurrence(expression: &str) -> Result<Option<Duration>, ContractError> {
    let text = expression.trim();
    if text.is_empty() {
        return Ok(None);
    }
    // Hadoop parses it with Long.parseLong, so a sign is allowed and a negative period is its
    // own error.
    match text.parse::<i64>() {
        Ok(0) => Ok(None),
        Ok(p) if p < 0 => Err(ContractError::NegativePeriod(p)),
        Ok(p) => Ok(Some(Duration(p.unsigned_abs()))),
        Err(_) => Err(ContractError::BadRecurrence(expression.to_string())),
    }
}

/// What the checks need to know of the plan and the moment.
#[derive(Clone, Copy, Debug)]
pub struct ValidationContext {
    /// The plan's capacity (its largest value over the definition's window).
    pub capacity: Resource,
    /// The largest container the scheduler grants.
    pub maximum_allocation: Resource,
    /// `yarn.resourcemanager.reservation-system.max-periodicity`.
    pub max_periodicity: Duration,
    /// The moment of the submission.
    pub now: Time,
}

/// A definition refused before planning, with the text Hadoop's clients see where Hadoop has
/// one.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ContractError {
    /// The deadline is not in the future.
    #[error(
        "The specified deadline: {0} is the past. Please try again with deadline in the future."
    )]
    DeadlineInPast(u64),
    /// No stage.
    #[error("No resources have been specified to reserve. Please try again by specifying the resources to reserve.")]
    NoRequests,
    /// The window is shorter than the stages need (not checked for R_ANY, as in Hadoop).
    #[error("The time difference ({window}) between arrival ({arrival}) and deadline ({deadline}) must  be greater or equal to the minimum resource duration ({min_duration})")]
    WindowTooShort {
        /// deadline − arrival (0 when the deadline precedes the arrival).
        window: u64,
        /// The arrival.
        arrival: u64,
        /// The deadline.
        deadline: u64,
        /// The longest stage (R_ALL) or the sum of stages (ORDER kinds).
        min_duration: u64,
    },
    /// The largest gang exceeds the plan (not checked for R_ANY; the typo is Hadoop's).
    #[error("The size of the largest gang in the reservation refinition ({gang:?}) exceed the capacity available ({capacity:?} )")]
    GangExceedsCapacity {
        /// The largest gang.
        gang: Resource,
        /// The plan's capacity.
        capacity: Resource,
    },
    /// Stage `stage` (0-based) has a gang size below one.
    #[error("Gang Size should be >= 1 (stage {stage})")]
    ZeroConcurrency {
        /// The stage's index.
        stage: usize,
    },
    /// Stage `stage` asks for no container.
    #[error("Num containers should be > 0 (stage {stage})")]
    ZeroContainers {
        /// The stage's index.
        stage: usize,
    },
    /// Stage `stage`'s container count is not a multiple of its gang size.
    #[error("Parallelism must be an exact multiple of gang size (stage {stage}: {num_containers} containers, gangs of {concurrency})")]
    NotMultipleOfGang {
        /// The stage's index.
        stage: usize,
        /// Its containers.
        num_containers: u32,
        /// Its gang size.
        concurrency: u32,
    },
    /// Stage `stage`'s container exceeds the largest container the scheduler grants.
    #[error("Individual capability requests should not exceed cluster's maxAlloc (stage {stage}: {capability:?} over {maximum:?})")]
    CapabilityOverMaximum {
        /// The stage's index.
        stage: usize,
        /// Its container.
        capability: Resource,
        /// The maximum allocation.
        maximum: Resource,
    },
    /// Stage `stage`'s container asks for nothing or for a negative amount (Weft refuses what
    /// Hadoop would plan as an empty allocation).
    #[error("stage {stage}: the capability {capability:?} must be non-negative and ask for some resource")]
    EmptyCapability {
        /// The stage's index.
        stage: usize,
        /// Its container.
        capability: Resource,
    },
    /// Stage `stage` has a zero duration.
    #[error("stage {stage}: the duration must be positive")]
    ZeroDuration {
        /// The stage's index.
        stage: usize,
    },
    /// Stage `stage`'s gang overflows a resource component.
    #[error("stage {stage}: capability × concurrency overflows")]
    GangOverflow {
        /// The stage's index.
        stage: usize,
    },
    /// The recurrence expression is not an integer.
    #[error("the recurrence expression '{0}' is not a period in milliseconds")]
    BadRecurrence(String),
    /// The recurrence expression is negative.
    #[error("Negative Period : {0}")]
    NegativePeriod(i64),
    /// The period does not divide the maximum periodicity.
    #[error("The maximum periodicity: {max} must be divisible by the recurrence expression provided: {period}. Please try again with a recurrence expression that satisfies this requirement.")]
    PeriodNotDividingMax {
        /// The configured maximum.
        max: u64,
        /// The period asked for.
        period: u64,
    },
    /// The window does not fit in one period.
    #[error("The time difference ({window}) between arrival ({arrival}) and deadline ({deadline}) must be less than or equal to the recurrence period ({period})")]
    WindowLongerThanPeriod {
        /// deadline − arrival.
        window: u64,
        /// The arrival.
        arrival: u64,
        /// The deadline.
        deadline: u64,
        /// The period.
        period: u64,
    },
}

impl ReservationDefinition {
    /// The checks made before planning, in Hadoop's order: the definition-level ones
    /// (`ReservationInputValidator`), then each stage's (`validateInputStage`).
    pub fn validate(&self, ctx: &ValidationContext) -> Result<(), ContractError> {
        if self.deadline <= ctx.now {
            return Err(ContractError::DeadlineInPast(self.deadline.0));
        }
        if self.requests.is_empty() {
            return Err(ContractError::NoRequests);
        }
        let min_duration: u64 = if self.interpreter.is_ordered() {
            self.requests
                .iter()
                .fold(0u64, |acc, rr| acc.saturating_add(rr.duration.0))
        } else {
            self.requests
                .iter()
                .map(|rr| rr.duration.0)
                .max()
                .unwrap_or(0)
        };
        let window = self.deadline.0.saturating_sub(self.arrival.0);
        if self.interpreter != Interpreter::Any && window < min_duration {
            return Err(ContractError::WindowTooShort {
                window,
                arrival: self.arrival.0,
                deadline: self.deadline.0,
                min_duration,
            });
        }
        if self.interpreter != Interpreter::Any {
            for (stage, rr) in self.requests.iter().enumerate() {
                let gang = rr.gang().ok_or(ContractError::GangOverflow { stage })?;
                if !gang.fits_in(&ctx.capacity) {
                    return Err(ContractError::GangExceedsCapacity {
                        gang,
                        capacity: ctx.capacity,
                    });
                }
            }
        }
        if let Some(period) = self.recurrence {
            if !ctx.max_periodicity.0.is_multiple_of(period.0) {
                return Err(ContractError::PeriodNotDividingMax {
                    max: ctx.max_periodicity.0,
                    period: period.0,
                });
            }
            if window > period.0 {
                return Err(ContractError::WindowLongerThanPeriod {
                    window,
                    arrival: self.arrival.0,
                    deadline: self.deadline.0,
                    period: period.0,
                });
            }
        }
        for (stage, rr) in self.requests.iter().enumerate() {
            validate_stage(stage, rr, ctx)?;
        }
        Ok(())
    }
}

fn validate_stage(
    stage: usize,
    rr: &ReservationRequest,
    ctx: &ValidationContext,
) -> Result<(), ContractError> {
    if rr.concurrency < 1 {
        return Err(ContractError::ZeroConcurrency { stage });
    }
    if rr.num_containers == 0 {
        return Err(ContractError::ZeroContainers { stage });
    }
    if !rr.num_containers.is_multiple_of(rr.concurrency) {
        return Err(ContractError::NotMultipleOfGang {
            stage,
            num_containers: rr.num_containers,
            concurrency: rr.concurrency,
        });
    }
    if !rr.capability.fits_in(&ctx.maximum_allocation) {
        return Err(ContractError::CapabilityOverMaximum {
            stage,
            capability: rr.capability,
            maximum: ctx.maximum_allocation,
        });
    }
    let values = rr.capability.values();
    if values.iter().any(|v| *v < 0) || values.iter().all(|v| *v == 0) {
        return Err(ContractError::EmptyCapability {
            stage,
            capability: rr.capability,
        });
    }
    if rr.duration.0 == 0 {
        return Err(ContractError::ZeroDuration { stage });
    }
    if rr.gang().is_none() {
        return Err(ContractError::GangOverflow { stage });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ValidationContext {
        ValidationContext {
            capacity: Resource::new(100 * 1024, 100),
            maximum_allocation: Resource::new(8192, 8),
            max_periodicity: Duration(86_400_000),
            now: Time(1_000),
        }
    }

    fn stage(mb: i64, n: u32, gang: u32, ms: u64) -> ReservationRequest {
        ReservationRequest {
            capability: Resource::new(mb, 1),
            num_containers: n,
            concurrency: gang,
            duration: Duration(ms),
        }
    }

    fn def(interpreter: Interpreter, requests: Vec<ReservationRequest>) -> ReservationDefinition {
        ReservationDefinition {
            arrival: Time(10_000),
            deadline: Time(20_000),
            name: "r".into(),
            priority: 0,
            recurrence: None,
            interpreter,
            requests,
        }
    }

    #[test]
    fn reservation_ids_print_and_parse_as_hadoop_writes_them() {
        let id = ReservationId {
            cluster_timestamp: 1_700_000_000_000,
            sequence: 7,
        };
        assert_eq!(id.to_string(), "reservation_1700000000000_0007");
        assert_eq!("reservation_1700000000000_0007".parse(), Ok(id));
        assert_eq!(
            "reservation_1_12345"
                .parse::<ReservationId>()
                .map(|i| i.sequence),
            Ok(12345)
        );
        for bad in [
            "application_1_0001",
            "reservation_1",
            "reservation__1",
            "reservation_1_x",
        ] {
            assert!(bad.parse::<ReservationId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn interpreters_parse_from_names_and_ordinals() {
        assert_eq!(
            Interpreter::parse("R_ORDER_NO_GAP"),
            Some(Interpreter::OrderNoGap)
        );
        assert_eq!(Interpreter::parse("0"), Some(Interpreter::Any));
        assert_eq!(Interpreter::parse("R_SOME"), None);
    }

    #[test]
    fn ordered_kinds_need_the_sum_of_durations_and_all_needs_the_longest() {
        let stages = vec![stage(1024, 1, 1, 6_000), stage(1024, 1, 1, 6_000)];
        assert_eq!(
            def(Interpreter::All, stages.clone()).validate(&ctx()),
            Ok(())
        );
        let err = def(Interpreter::Order, stages.clone())
            .validate(&ctx())
            .unwrap_err();
        assert_eq!(
            err,
            ContractError::WindowTooShort {
                window: 10_000,
                arrival: 10_000,
                deadline: 20_000,
                min_duration: 12_000
            }
        );
        assert!(err
            .to_string()
            .starts_with("The time difference (10000) between arrival"));
        // R_ANY skips the window check, as Hadoop does.
        let long = vec![stage(1024, 1, 1, 60_000)];
        assert_eq!(def(Interpreter::Any, long).validate(&ctx()), Ok(()));
    }

    #[test]
    fn stage_checks_name_the_stage_and_use_hadoops_words() {
        let cases = [
            (stage(1024, 4, 0, 1000), "Gang Size should be >= 1 (stage 1)"),
            (stage(1024, 0, 1, 1000), "Num containers should be > 0 (stage 1)"),
            (
                stage(1024, 5, 2, 1000),
                "Parallelism must be an exact multiple of gang size (stage 1: 5 containers, gangs of 2)",
            ),
        ];
        for (bad, text) in cases {
            let d = def(Interpreter::All, vec![stage(1024, 1, 1, 1000), bad]);
            assert_eq!(d.validate(&ctx()).unwrap_err().to_string(), text);
        }
        let big = def(Interpreter::All, vec![stage(16_384, 1, 1, 1000)]);
        assert!(matches!(
            big.validate(&ctx()),
            Err(ContractError::CapabilityOverMaximum { stage: 0, .. })
        ));
    }

    #[test]
    fn a_gang_larger_than_the_plan_is_refused_except_for_any() {
        let huge = vec![stage(8192, 26, 13, 1000)]; // 13 × 8 GB > 100 GB
        let err = def(Interpreter::All, huge.clone())
            .validate(&ctx())
            .unwrap_err();
        assert!(matches!(err, ContractError::GangExceedsCapacity { .. }));
        assert!(err.to_string().contains("refinition"));
        assert_eq!(def(Interpreter::Any, huge).validate(&ctx()), Ok(()));
    }

    #[test]
    fn a_deadline_not_in_the_future_is_refused() {
        let mut d = def(Interpreter::All, vec![stage(1024, 1, 1, 1000)]);
        d.deadline = Time(1_000);
        assert_eq!(
            d.validate(&ctx()),
            Err(ContractError::DeadlineInPast(1_000))
        );
    }

    #[test]
    fn recurrence_expressions_follow_hadoop() {
        assert_eq!(parse_recurrence("0"), Ok(None));
        assert_eq!(parse_recurrence(""), Ok(None));
        assert_eq!(parse_recurrence("3600000"), Ok(Some(Duration(3_600_000))));
        assert_eq!(
            parse_recurrence("-5"),
            Err(ContractError::NegativePeriod(-5))
        );
        assert!(matches!(
            parse_recurrence("1h"),
            Err(ContractError::BadRecurrence(_))
        ));
        let mut d = def(Interpreter::All, vec![stage(1024, 1, 1, 1000)]);
        d.recurrence = Some(Duration(7_000_000));
        assert!(matches!(
            d.validate(&ctx()),
            Err(ContractError::PeriodNotDividingMax { .. })
        ));
        d.recurrence = Some(Duration(8_000));
        assert!(matches!(
            d.validate(&ctx()),
            Err(ContractError::WindowLongerThanPeriod { .. })
        ));
        d.recurrence = Some(Duration(3_600_000));
        assert_eq!(d.validate(&ctx()), Ok(()));
    }
}
