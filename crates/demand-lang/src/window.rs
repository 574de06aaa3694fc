//! Resolution (§3.2.3): binding `NOW` and calendar times to epoch milliseconds, the Start
//! window as a predicate P(t, k) in disjunctive normal form, and the lease and deadline a
//! demand's other fields give.

use crate::ast::{AbsTime, Anchor, Interval, LeaseLength, LowerBound, TimeExpr, UpperBound, Zone};

/// The most terms a resolved window may have: NOT over OR multiplies them, and a bound keeps
/// a hostile expression from costing more than a submission should.
pub const MAX_TERMS: usize = 256;

/// One term of a window: `from <= t < until` and `min_misses <= k <= max_misses`, where t is
/// the time (epoch ms) and k the demand's missed scheduling opportunities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// Earliest instant, inclusive.
    pub from: u64,
    /// End, exclusive; `None` for unbounded.
    pub until: Option<u64>,
    /// Fewest misses.
    pub min_misses: u64,
    /// Most misses; `None` for unbounded.
    pub max_misses: Option<u64>,
}

impl Term {
    const ALWAYS: Term = Term {
        from: 0,
        until: None,
        min_misses: 0,
        max_misses: None,
    };

    fn is_empty(&self) -> bool {
        self.until.is_some_and(|until| until <= self.from)
            || self.max_misses.is_some_and(|max| max < self.min_misses)
    }

    fn intersect(&self, other: &Term) -> Term {
        Term {
            from: self.from.max(other.from),
            until: min_option(self.until, other.until),
            min_misses: self.min_misses.max(other.min_misses),
            max_misses: min_option(self.max_misses, other.max_misses),
        }
    }

    /// Whether it holds at (t, k).
    pub fn holds(&self, t: u64, k: u64) -> bool {
        t >= self.from
            && self.until.is_none_or(|until| t < until)
            && k >= self.min_misses
            && self.max_misses.is_none_or(|max| k <= max)
    }

    /// Whether some t' >= t, k' >= k can still satisfy it.
    pub fn can_hold_later(&self, t: u64, k: u64) -> bool {
        self.until.is_none_or(|until| until > t.max(self.from))
            && self
                .max_misses
                .is_none_or(|max| max >= k.max(self.min_misses))
    }
}

fn min_option(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A resolved Start window: the union of its terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The terms, none empty.
    pub terms: Vec<Term>,
}

impl Window {
    /// Whether an allocation at time `t` after `k` misses is admissible.
    pub fn holds(&self, t: u64, k: u64) -> bool {
        self.terms.iter().any(|term| term.holds(t, k))
    }

    /// Closed for good: false now and no term can become true for any t' >= t, k' >= k.
    pub fn closed_for_good(&self, t: u64, k: u64) -> bool {
        !self.terms.iter().any(|term| term.can_hold_later(t, k))
    }

    /// The earliest instant at or after `now` at which some term can hold (for k at its
    /// lowest), or `None` when the window is empty from `now` on.
    pub fn earliest(&self, now: u64) -> Option<u64> {
        self.terms
            .iter()
            .filter(|term| term.can_hold_later(now, 0))
            .map(|term| term.from.max(now))
            .min()
    }

    /// The end of the time bound: the latest `until`, `None` when some term is unbounded in time.
    pub fn latest_end(&self) -> Option<u64> {
        let mut latest = 0;
        for term in &self.terms {
            latest = latest.max(term.until?);
        }
        Some(latest)
    }
}

/// Why a time expression cannot be resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// NOT over OR made more than [`MAX_TERMS`] terms.
    TooComplex,
}

/// Binds a calendar time to UTC epoch milliseconds; a time without a zone is read at
/// `default_offset_minutes` east of UTC (`weft.demand.timezone`). Times before 1970 give 0.
pub fn epoch_ms(time: AbsTime, default_offset_minutes: i16) -> u64 {
    let days = days_from_civil(
        i64::from(time.year),
        i64::from(time.month),
        i64::from(time.day),
    );
    let offset = match time.zone {
        Some(Zone::Utc) => 0,
        Some(Zone::Offset(minutes)) => i64::from(minutes),
        None => i64::from(default_offset_minutes),
    };
    let seconds = days * 86_400
        + i64::from(time.hour) * 3600
        + i64::from(time.minute) * 60
        + i64::from(time.second)
        - offset * 60;
    u64::try_from(seconds.saturating_mul(1000)).unwrap_or(0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What `NOW` and a zone-less calendar time mean for one resolution.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// The accepting event's `now`, epoch ms.
    pub now: u64,
    /// `weft.demand.timezone`, minutes east of UTC.
    pub offset_minutes: i16,
}

impl Clock {
    fn lower(&self, bound: Option<LowerBound>) -> u64 {
        match bound {
            None | Some(LowerBound::Anchor(Anchor::Now, 0)) => self.now,
            Some(LowerBound::Anchor(_, offset)) => self.now.saturating_add(offset),
            Some(LowerBound::Absolute(time)) => epoch_ms(time, self.offset_minutes),
            Some(LowerBound::EpochMs(ms)) => ms,
        }
    }

    fn interval_term(&self, interval: &Interval) -> Term {
        let from = self.lower(interval.from);
        match interval.to {
            None => Term {
                from,
                ..Term::ALWAYS
            },
            Some(UpperBound::Offset(d)) => Term {
                from,
                until: Some(from.saturating_add(d)),
                ..Term::ALWAYS
            },
            Some(UpperBound::Absolute(time)) => Term {
                from,
                until: Some(epoch_ms(time, self.offset_minutes)),
                ..Term::ALWAYS
            },
            Some(UpperBound::EpochMs(ms)) => Term {
                from,
                until: Some(ms),
                ..Term::ALWAYS
            },
            Some(UpperBound::Count(n)) => Term {
                from,
                max_misses: Some(n),
                ..Term::ALWAYS
            },
        }
    }

    /// The Start window of `expr` (Start's anchor is NOW; the parser refuses START in Start).
    pub fn start_window(&self, expr: &TimeExpr) -> Result<Window, ResolveError> {
        let terms = self.terms(expr, false)?;
        Ok(Window { terms })
    }

    fn terms(&self, expr: &TimeExpr, negated: bool) -> Result<Vec<Term>, ResolveError> {
        match (expr, negated) {
            (TimeExpr::Interval(interval), false) => {
                let term = self.interval_term(interval);
                Ok(if term.is_empty() { vec![] } else { vec![term] })
            }
            (TimeExpr::Interval(interval), true) => Ok(complement(&self.interval_term(interval))),
            (TimeExpr::Not(inner), _) => self.terms(inner, !negated),
            // De Morgan: a negated AND is an OR of negations and the other way round.
            (TimeExpr::And(branches), false) | (TimeExpr::Or(branches), true) => {
                let mut acc = vec![Term::ALWAYS];
                for branch in branches {
                    let next = self.terms(branch, negated)?;
                    let mut product = Vec::new();
                    for a in &acc {
                        for b in &next {
                            let term = a.intersect(b);
                            if !term.is_empty() {
                                product.push(term);
                            }
                        }
                    }
                    if product.len() > MAX_TERMS {
                        return Err(ResolveError::TooComplex);
                    }
                    acc = product;
                }
                Ok(acc)
            }
            (TimeExpr::Or(branches), false) | (TimeExpr::And(branches), true) => {
                let mut acc = Vec::new();
                for branch in branches {
                    acc.extend(self.terms(branch, negated)?);
                    if acc.len() > MAX_TERMS {
                        return Err(ResolveError::TooComplex);
                    }
                }
                Ok(acc)
            }
        }
    }

    /// A DeadLine's bound: absolute when its interval is anchored at NOW or a date, relative to
    /// START otherwise. Several intervals (AND): the earliest wins, per kind.
    pub fn deadline(&self, expr: &TimeExpr) -> Deadline {
        let mut deadline = Deadline::default();
        let intervals: Vec<&Interval> = match expr {
            TimeExpr::Interval(interval) => vec![interval],
            TimeExpr::And(branches) => branches
                .iter()
                .filter_map(|b| match b {
                    TimeExpr::Interval(interval) => Some(interval),
                    _ => None,
                })
                .collect(),
            _ => vec![],
        };
        for interval in intervals {
            match self.bound_after(interval) {
                Some(Bound::At(at)) => deadline.at = min_option(deadline.at, Some(at)),
                Some(Bound::AfterStart(ms)) => {
                    deadline.after_start = min_option(deadline.after_start, Some(ms))
                }
                None => {}
            }
        }
        deadline
    }

    /// A Duration's lease: a length from START, or an absolute end.
    pub fn lease(&self, lease: &LeaseLength) -> Option<Bound> {
        match lease {
            LeaseLength::Length(ms) => Some(Bound::AfterStart(*ms)),
            LeaseLength::Interval(interval) => self.bound_after(interval),
        }
    }

    /// T2 of an interval whose empty T1 means START.
    fn bound_after(&self, interval: &Interval) -> Option<Bound> {
        let anchor = match interval.from {
            None => Bound::AfterStart(0),
            Some(LowerBound::Anchor(Anchor::Start, offset)) => Bound::AfterStart(offset),
            Some(other) => Bound::At(self.lower(Some(other))),
        };
        match interval.to? {
            UpperBound::Offset(d) => Some(match anchor {
                Bound::AfterStart(ms) => Bound::AfterStart(ms.saturating_add(d)),
                Bound::At(at) => Bound::At(at.saturating_add(d)),
            }),
            UpperBound::Absolute(time) => Some(Bound::At(epoch_ms(time, self.offset_minutes))),
            UpperBound::EpochMs(ms) => Some(Bound::At(ms)),
            UpperBound::Count(_) => None,
        }
    }
}

/// An instant a demand's field resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Epoch milliseconds.
    At(u64),
    /// Milliseconds after START.
    AfterStart(u64),
}

/// A resolved DeadLine: completion must come by `at` and by START + `after_start`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deadline {
    /// An absolute deadline, epoch ms.
    pub at: Option<u64>,
    /// A deadline relative to START, ms.
    pub after_start: Option<u64>,
}

fn complement(term: &Term) -> Vec<Term> {
    let mut pieces = Vec::new();
    if term.from > 0 {
        pieces.push(Term {
            until: Some(term.from),
            ..Term::ALWAYS
        });
    }
    if let Some(until) = term.until {
        pieces.push(Term {
            from: until,
            ..Term::ALWAYS
        });
    }
    if term.min_misses > 0 {
        pieces.push(Term {
            max_misses: Some(term.min_misses - 1),
            ..Term::ALWAYS
        });
    }
    if let Some(max) = term.max_misses {
        pieces.push(Term {
            min_misses: max.saturating_add(1),
            ..Term::ALWAYS
        });
    }
    pieces.retain(|t| !t.is_empty());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::parse_time_expr;

    const MIN: u64 = 60_000;

    fn window(text: &str, now: u64) -> Window {
        let clock = Clock {
            now,
            offset_minutes: 0,
        };
        clock.start_window(&parse_time_expr(text).unwrap()).unwrap()
    }

    #[test]
    fn or_stays_open_while_either_branch_can_hold() {
        let w = window("OR([NOW,+5m],[NOW,^3])", 0);
        assert!(w.holds(2 * MIN, 10), "the time branch");
        assert!(w.holds(10 * MIN, 3), "the count branch");
        assert!(!w.holds(10 * MIN, 4));
        assert!(w.closed_for_good(10 * MIN, 4));
        assert!(
            !w.closed_for_good(4 * MIN, 4),
            "the time branch is still open"
        );
    }

    #[test]
    fn and_closes_at_the_first_exhaustion() {
        let w = window("AND([NOW,+5m],[NOW,^3])", 0);
        assert!(w.holds(MIN, 3));
        assert!(w.closed_for_good(MIN, 4));
        assert!(w.closed_for_good(5 * MIN, 0));
    }

    #[test]
    fn not_cuts_a_blackout_out_of_a_window() {
        let w = window("AND([NOW, +2h], NOT([NOW+10m, +60m]))", 0);
        assert!(w.holds(5 * MIN, 0));
        assert!(!w.holds(10 * MIN, 0));
        assert!(!w.holds(69 * MIN, 0));
        assert!(w.holds(70 * MIN, 0));
        assert!(!w.holds(120 * MIN, 0));
        assert_eq!(w.earliest(10 * MIN), Some(70 * MIN));
    }

    #[test]
    fn an_unsatisfiable_expression_has_no_terms() {
        let w = window("AND([NOW,+5m],[NOW+10m,+10m])", 1_000);
        assert!(w.terms.is_empty());
        assert_eq!(w.earliest(1_000), None);
    }

    #[test]
    fn calendar_times_take_their_zone_or_the_default_offset() {
        let utc = crate::compact::parse_lower("2026-11-22 03:00:00Z").unwrap();
        let LowerBound::Absolute(time) = utc else {
            panic!("a date");
        };
        assert_eq!(epoch_ms(time, 0), 1_795_316_400_000);
        let local = AbsTime { zone: None, ..time };
        assert_eq!(epoch_ms(local, 60), 1_795_316_400_000 - 3_600_000);
    }

    #[test]
    fn a_relative_deadline_waits_for_start_and_an_anchored_one_does_not() {
        let clock = Clock {
            now: 1_000,
            offset_minutes: 0,
        };
        let relative = clock.deadline(&parse_time_expr("[, +20m]").unwrap());
        assert_eq!(relative.after_start, Some(20 * MIN));
        assert_eq!(relative.at, None);
        let anchored = clock.deadline(&parse_time_expr("[NOW, +5h]").unwrap());
        assert_eq!(anchored.at, Some(1_000 + 300 * MIN));
        let both = clock.deadline(&parse_time_expr("AND([NOW, +5h], [NOW, +1h])").unwrap());
        assert_eq!(
            both.at,
            Some(1_000 + 60 * MIN),
            "the earliest deadline wins"
        );
    }
}
