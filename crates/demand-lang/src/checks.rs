//! The semantic checks the schema cannot express (§3.2.3, §3.3): gang divisibility, a strict
//! plan without a Duration, OrderBy references and cycles within a submission, and, once `now`
//! is known, empty windows and deadlines that cannot be met.

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{
    DemandExpr, DemandNumber, DemandRef, Gang, Interval, LowerBound, ResourceDescription, Strategy,
    TimeExpr, UpperBound,
};
use crate::error::{child, DemandError};
use crate::window::{Bound, Clock, Deadline, ResolveError, Window};

/// Checks of one demand alone that need no clock.
pub(crate) fn check_demand(
    demand: &ResourceDescription,
    pointer: &str,
    default: Strategy,
    errors: &mut Vec<DemandError>,
) {
    if let Gang::Size(g) = demand.gang {
        if !demand.request.num_containers.is_multiple_of(g) {
            errors.push(DemandError::at(
                &child(pointer, "Gang"),
                format!(
                    "num-containers {} is not a multiple of the gang size {g}",
                    demand.request.num_containers
                ),
            ));
        }
    }
    if demand.duration.is_none() {
        // A strict Start alone is plannable as an instant inside its window (the spec's
        // example (b) has no Duration); a strict completion time is not without a length.
        if let Some(field) = &demand.deadline {
            if demand.effective(field, default) == Strategy::Strict
                && resolves_at_admission(&field.value)
            {
                errors.push(DemandError::at(
                    &child(pointer, "DeadLine"),
                    "Duration is required to plan a strict Start or DeadLine",
                ));
            }
        }
    }
}

/// Whether some bound of the expression is absolute or NOW-relative, so a plan is needed.
fn resolves_at_admission(expr: &TimeExpr) -> bool {
    match expr {
        TimeExpr::Interval(Interval { from, to }) => {
            let anchored_now = matches!(
                from,
                Some(LowerBound::Anchor(crate::ast::Anchor::Now, _))
                    | Some(LowerBound::Absolute(_))
                    | Some(LowerBound::EpochMs(_))
            );
            let time_bounded = matches!(
                to,
                Some(UpperBound::Offset(_) | UpperBound::Absolute(_) | UpperBound::EpochMs(_))
            );
            (anchored_now && time_bounded)
                || matches!(to, Some(UpperBound::Absolute(_) | UpperBound::EpochMs(_)))
        }
        TimeExpr::And(branches) | TimeExpr::Or(branches) => {
            branches.iter().any(resolves_at_admission)
        }
        TimeExpr::Not(inner) => resolves_at_admission(inner),
    }
}

/// Every atom of an OrderBy expression, in order.
pub fn references(expr: &DemandExpr) -> Vec<DemandRef> {
    let mut found = Vec::new();
    collect(expr, &mut found);
    found
}

fn collect(expr: &DemandExpr, found: &mut Vec<DemandRef>) {
    match expr {
        DemandExpr::Ref(reference) => found.push(*reference),
        DemandExpr::And(branches) | DemandExpr::Or(branches) => {
            branches.iter().for_each(|b| collect(b, found))
        }
        DemandExpr::Not(inner) => collect(inner, found),
    }
}

/// Checks across one submission's demands: DemandIDs unique, every OrderBy reference to a
/// demand in the batch or one `exists` knows, and no cycle among the batch's demands.
pub(crate) fn check_batch(
    demands: &[ResourceDescription],
    pointers: &[String],
    exists: &dyn Fn(&DemandRef) -> bool,
    errors: &mut Vec<DemandError>,
) {
    let mut index: BTreeMap<DemandNumber, usize> = BTreeMap::new();
    for (i, demand) in demands.iter().enumerate() {
        if let Some(first) = index.insert(demand.demand_id, i) {
            index.insert(demand.demand_id, first);
            errors.push(DemandError::at(
                &child(&pointers[i], "DemandID"),
                format!(
                    "DemandID {} is given twice in this submission (first at {})",
                    demand.demand_id, pointers[first]
                ),
            ));
        }
    }
    for (i, demand) in demands.iter().enumerate() {
        let Some(order) = &demand.order_by else {
            continue;
        };
        for reference in references(&order.value) {
            let in_batch = reference.owner.is_none() && index.contains_key(&reference.demand);
            if !in_batch && !exists(&reference) {
                errors.push(DemandError::at(
                    &child(&pointers[i], "OrderBy"),
                    format!(
                        "OrderBy names unknown demand {}",
                        crate::print::reference_text(&reference)
                    ),
                ));
            }
        }
    }
    if let Some(cycle) = find_cycle(demands, &index) {
        let first = index.get(&cycle[0]).copied().unwrap_or(0);
        let path: Vec<String> = cycle.iter().map(u64::to_string).collect();
        errors.push(DemandError::at(
            &child(&pointers[first], "OrderBy"),
            format!("OrderBy cycle: {}", path.join(" → ")),
        ));
    }
}

/// The first cycle among the batch's own references, as DemandIDs with the first repeated at
/// the end (`1 → 2 → 1`). Depth-first, iterative, in submission order.
fn find_cycle(
    demands: &[ResourceDescription],
    index: &BTreeMap<DemandNumber, usize>,
) -> Option<Vec<DemandNumber>> {
    let edges: Vec<Vec<usize>> = demands
        .iter()
        .map(|demand| {
            let mut next: Vec<usize> = demand
                .order_by
                .as_ref()
                .map(|order| references(&order.value))
                .unwrap_or_default()
                .iter()
                .filter(|r| r.owner.is_none())
                .filter_map(|r| index.get(&r.demand).copied())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            next.shrink_to_fit();
            next
        })
        .collect();
    // 0 unvisited, 1 on the current path, 2 done.
    let mut state = vec![0u8; demands.len()];
    for root in 0..demands.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {
                        let start = stack.iter().position(|(n, _)| *n == to).unwrap_or(0);
                        let mut cycle: Vec<DemandNumber> = stack[start..]
                            .iter()
                            .map(|(n, _)| demands[*n].demand_id)
                            .collect();
                        cycle.push(demands[to].demand_id);
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// A demand's times bound to one `now` (§3.2.3's resolution).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedTimes {
    /// The Start window; `None` when Start is absent (any time from acceptance).
    pub start: Option<Window>,
    /// The earliest admissible start, epoch ms.
    pub earliest_start: u64,
    /// The lease, when Duration gives one.
    pub lease: Option<Bound>,
    /// The deadline.
    pub deadline: Deadline,
}

/// Resolves `demand` at `clock` and refuses what cannot hold from then on: an empty Start
/// window, a deadline already past or not after the earliest start, and (strict) a deadline
/// the earliest start plus the Duration overshoots.
pub fn resolve(
    demand: &ResourceDescription,
    pointer: &str,
    clock: Clock,
    default: Strategy,
) -> Result<ResolvedTimes, Vec<DemandError>> {
    let mut errors = Vec::new();
    let mut earliest_start = clock.now;
    let start = match &demand.start {
        None => None,
        Some(field) => {
            let at = field_pointer(pointer, "Start", field.strategy.is_some());
            match clock.start_window(&field.value) {
                Err(ResolveError::TooComplex) => {
                    errors.push(DemandError::at(
                        &at,
                        format!(
                            "time expression is too complex (more than {} terms in disjunctive normal form)",
                            crate::window::MAX_TERMS
                        ),
                    ));
                    None
                }
                Ok(window) => match window.earliest(clock.now) {
                    None => {
                        errors.push(DemandError::at(&at, "time expression is empty"));
                        None
                    }
                    Some(earliest) => {
                        earliest_start = earliest;
                        Some(window)
                    }
                },
            }
        }
    };
    let lease = demand
        .duration
        .as_ref()
        .and_then(|field| clock.lease(&field.value));
    let deadline = demand
        .deadline
        .as_ref()
        .map(|field| clock.deadline(&field.value))
        .unwrap_or_default();
    if let (Some(field), Some(at)) = (&demand.deadline, deadline.at) {
        let here = field_pointer(pointer, "DeadLine", field.strategy.is_some());
        if at <= clock.now {
            errors.push(DemandError::at(
                &here,
                format!(
                    "the DeadLine ({at} ms) is in the past (now {} ms)",
                    clock.now
                ),
            ));
        } else if at <= earliest_start {
            errors.push(DemandError::at(
                &here,
                format!(
                    "the DeadLine ({at} ms) is not after the earliest Start ({earliest_start} ms)"
                ),
            ));
        } else if demand.effective(field, default) == Strategy::Strict {
            let needed = match lease {
                Some(Bound::AfterStart(ms)) => Some(earliest_start.saturating_add(ms)),
                Some(Bound::At(end)) => Some(end),
                None => None,
            };
            if let Some(end) = needed.filter(|end| *end > at) {
                errors.push(DemandError::at(
                    &here,
                    format!(
                        "cannot meet the strict DeadLine ({at} ms): the earliest Start plus the Duration ends at {end} ms"
                    ),
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(ResolvedTimes {
            start,
            earliest_start,
            lease,
            deadline,
        })
    } else {
        Err(errors)
    }
}

fn field_pointer(pointer: &str, field: &str, value_object: bool) -> String {
    let at = child(pointer, field);
    if value_object {
        child(&at, "Time")
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demand(id: u64, order: Option<DemandExpr>) -> ResourceDescription {
        ResourceDescription {
            demand_id: id,
            name: None,
            request: crate::ast::ResourceRequest {
                memory_mb: 1024,
                vcores: 1,
                resources: BTreeMap::new(),
                num_containers: 1,
                priority: None,
                resource_name: None,
                relax_locality: None,
                node_label_expression: None,
            },
            gang: Gang::Off,
            start: None,
            duration: None,
            deadline: None,
            order_by: order.map(|value| crate::ast::Field {
                value,
                strategy: None,
            }),
            strategy: None,
            claim_timeout: None,
        }
    }

    fn after(id: u64) -> Option<DemandExpr> {
        Some(DemandExpr::Ref(DemandRef {
            owner: None,
            demand: id,
            outcome: None,
        }))
    }

    #[test]
    fn a_cycle_is_printed_from_the_first_demand_in_it() {
        let demands = [demand(1, after(2)), demand(2, after(1))];
        let pointers = vec!["/0".to_owned(), "/1".to_owned()];
        let mut errors = Vec::new();
        check_batch(&demands, &pointers, &|_| false, &mut errors);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            errors[0].to_string(),
            "/0/OrderBy: OrderBy cycle: 1 → 2 → 1"
        );
    }

    #[test]
    fn a_longer_cycle_behind_an_acyclic_start_is_found() {
        let demands = [
            demand(5, after(6)),
            demand(6, after(7)),
            demand(7, after(8)),
            demand(8, after(6)),
        ];
        let pointers: Vec<String> = (0..4).map(|i| format!("/{i}")).collect();
        let mut errors = Vec::new();
        check_batch(&demands, &pointers, &|_| false, &mut errors);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].message.ends_with("6 → 7 → 8 → 6"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn unknown_and_duplicate_demands_are_named() {
        let demands = [demand(1, after(99)), demand(1, None)];
        let pointers = vec!["/0".to_owned(), "/1".to_owned()];
        let mut errors = Vec::new();
        check_batch(&demands, &pointers, &|r| r.demand == 42, &mut errors);
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "/1/DemandID: DemandID 1 is given twice in this submission (first at /0)",
                "/0/OrderBy: OrderBy names unknown demand 99",
            ]
        );
        let mut errors = Vec::new();
        check_batch(
            &[demand(3, after(42))],
            &["/0".to_owned()],
            &|r| r.demand == 42,
            &mut errors,
        );
        assert!(errors.is_empty(), "an existing demand: {errors:?}");
    }
}
