//! Property tests: reading what the printer writes gives the same tree, for generated trees of
//! every form each field allows (JSON and compact notation), and reading never panics.

use std::collections::BTreeMap;

use proptest::prelude::*;
use weft_demand_lang::print::{to_compact, to_json, to_json_string};
use weft_demand_lang::{
    parse_document, parse_time_expr, parse_value, resolve, AbsTime, Anchor, DemandExpr, DemandRef,
    Field, Gang, Interval, LeaseLength, LowerBound, Outcome, Owner, ResourceDescription,
    ResourceRequest, TimeExpr, UpperBound, Zone,
};

fn seconds() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..=90_000, any::<u32>().prop_map(u64::from)].prop_map(|s| s * 1000)
}

fn strategy() -> impl Strategy<Value = weft_demand_lang::Strategy> {
    prop_oneof![
        Just(weft_demand_lang::Strategy::Strict),
        Just(weft_demand_lang::Strategy::Loose)
    ]
}

fn abs_time() -> impl Strategy<Value = AbsTime> {
    let zone = prop_oneof![
        Just(None),
        Just(Some(Zone::Utc)),
        (-1439i16..=1439).prop_map(|m| Some(Zone::Offset(m))),
    ];
    (
        (1000u16..=9999, 1u8..=12, 1u8..=28),
        (0u8..=23, 0u8..=59, 0u8..=59),
        zone,
    )
        .prop_map(
            |((year, month, day), (hour, minute, second), zone)| AbsTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                zone,
            },
        )
}

/// A lower bound; `START` only where the field allows it.
fn lower(start_allowed: bool) -> impl Strategy<Value = LowerBound> {
    let anchor = if start_allowed {
        prop_oneof![Just(Anchor::Now), Just(Anchor::Start)].boxed()
    } else {
        Just(Anchor::Now).boxed()
    };
    prop_oneof![
        (anchor, seconds()).prop_map(|(a, off)| LowerBound::Anchor(a, off)),
        abs_time().prop_map(LowerBound::Absolute),
        any::<u64>().prop_map(LowerBound::EpochMs),
    ]
}

fn upper(count_allowed: bool) -> impl Strategy<Value = UpperBound> {
    let count = if count_allowed {
        any::<u64>().prop_map(UpperBound::Count).boxed()
    } else {
        seconds().prop_map(UpperBound::Offset).boxed()
    };
    prop_oneof![
        seconds().prop_map(UpperBound::Offset),
        abs_time().prop_map(UpperBound::Absolute),
        any::<u64>().prop_map(UpperBound::EpochMs),
        count,
    ]
}

fn interval(start_allowed: bool, count_allowed: bool) -> impl Strategy<Value = Interval> {
    (
        proptest::option::of(lower(start_allowed)),
        proptest::option::of(upper(count_allowed)),
    )
        .prop_map(|(from, to)| Interval { from, to })
}

fn start_expr() -> impl Strategy<Value = TimeExpr> {
    interval(false, true)
        .prop_map(TimeExpr::Interval)
        .prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 1..4).prop_map(TimeExpr::And),
                proptest::collection::vec(inner.clone(), 1..4).prop_map(TimeExpr::Or),
                inner.prop_map(|e| TimeExpr::Not(Box::new(e))),
            ]
        })
}

fn deadline_expr() -> impl Strategy<Value = TimeExpr> {
    prop_oneof![
        interval(true, false).prop_map(TimeExpr::Interval),
        proptest::collection::vec(interval(true, false).prop_map(TimeExpr::Interval), 1..4)
            .prop_map(TimeExpr::And),
    ]
}

fn lease() -> impl Strategy<Value = LeaseLength> {
    prop_oneof![
        seconds().prop_map(LeaseLength::Length),
        // `[, +d]` reads as the length d, so the interval form is generated without it.
        interval(true, false)
            .prop_filter("[, +d] is a length", |i| {
                !(i.from.is_none() && matches!(i.to, Some(UpperBound::Offset(_))))
            })
            .prop_map(LeaseLength::Interval),
    ]
}

fn owner() -> impl Strategy<Value = Owner> {
    prop_oneof![
        (any::<u64>(), any::<u64>()).prop_map(|(cluster_timestamp, seq)| Owner::Application {
            cluster_timestamp,
            seq
        }),
        (any::<u64>(), any::<u64>()).prop_map(|(cluster_timestamp, seq)| Owner::Reservation {
            cluster_timestamp,
            seq
        }),
    ]
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Ok),
        Just(Outcome::Any),
        Just(Outcome::Failed),
        Just(Outcome::Started)
    ]
}

/// References to demands 10,000 and up, which the generated demand (below 10,000) never is.
fn demand_expr() -> impl Strategy<Value = DemandExpr> {
    (
        proptest::option::of(owner()),
        10_000u64..=i64::MAX as u64,
        proptest::option::of(outcome()),
    )
        .prop_map(|(owner, demand, outcome)| {
            DemandExpr::Ref(DemandRef {
                owner,
                demand,
                outcome,
            })
        })
        .prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 1..4).prop_map(DemandExpr::And),
                proptest::collection::vec(inner.clone(), 1..4).prop_map(DemandExpr::Or),
                inner.prop_map(|e| DemandExpr::Not(Box::new(e))),
            ]
        })
}

fn field<T: std::fmt::Debug + Clone>(
    value: impl Strategy<Value = T>,
) -> impl Strategy<Value = Field<T>> {
    (value, proptest::option::of(strategy()))
        .prop_map(|(value, strategy)| Field { value, strategy })
}

fn request() -> impl Strategy<Value = (ResourceRequest, Gang)> {
    let gang = prop_oneof![Just(None), Just(Some(0u64)), (1u64..=64).prop_map(Some)];
    (
        (0u64..=i64::MAX as u64, 0u64..=i64::MAX as u64),
        proptest::collection::btree_map("[a-z][a-z./-]{0,12}", 0u64..=i64::MAX as u64, 0..3),
        (1u64..=100_000, gang),
        proptest::option::of(any::<i32>()),
        proptest::option::of("\\PC{0,12}"),
        proptest::option::of(any::<bool>()),
        proptest::option::of("\\PC{0,12}"),
    )
        .prop_map(
            |((memory_mb, vcores), resources, (n, gang), priority, name, relax, label)| {
                let (num_containers, gang) = match gang {
                    None => (n, Gang::Off),
                    Some(0) => (n, Gang::All),
                    Some(g) => (g * (1 + n % 50), Gang::Size(g)),
                };
                (
                    ResourceRequest {
                        memory_mb,
                        vcores,
                        resources: resources.into_iter().collect::<BTreeMap<_, _>>(),
                        num_containers,
                        priority,
                        resource_name: name,
                        relax_locality: relax,
                        node_label_expression: label,
                    },
                    gang,
                )
            },
        )
}

fn demand() -> impl Strategy<Value = ResourceDescription> {
    (
        (0u64..10_000, proptest::option::of("\\PC{0,40}"), request()),
        proptest::option::of(field(start_expr())),
        proptest::option::of(field(lease())),
        proptest::option::of(field(deadline_expr())),
        proptest::option::of(field(demand_expr())),
        proptest::option::of(strategy()),
        proptest::option::of(seconds()),
    )
        .prop_map(
            |(
                (demand_id, name, (request, gang)),
                start,
                duration,
                deadline,
                order_by,
                strategy,
                claim,
            )| {
                let mut demand = ResourceDescription {
                    demand_id,
                    name,
                    request,
                    gang,
                    start,
                    duration,
                    deadline,
                    order_by,
                    strategy,
                    claim_timeout: claim,
                };
                // A strict DeadLine needs a Duration (§3.3); keep generated demands valid.
                if demand.duration.is_none() {
                    if let Some(deadline) = &mut demand.deadline {
                        deadline.strategy = Some(weft_demand_lang::Strategy::Loose);
                    }
                }
                demand
            },
        )
}

fn anything_exists(_: &DemandRef) -> bool {
    true
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn reading_the_printed_json_gives_the_same_demand(demand in demand()) {
        let printed = to_json(&demand);
        let read = parse_value(&printed, "", weft_demand_lang::Strategy::Loose, &anything_exists)
            .map_err(|e| TestCaseError::fail(format!("{e}\nprinted: {printed}")))?;
        prop_assert_eq!(&read.demands, &vec![demand.clone()]);
        let text = to_json_string(&demand);
        let again = parse_document(&text, weft_demand_lang::Strategy::Loose, &anything_exists)
            .map_err(|e| TestCaseError::fail(format!("{e}\nprinted: {text}")))?;
        prop_assert_eq!(again.demands, vec![demand]);
    }

    #[test]
    fn reading_the_printed_compact_string_gives_the_same_expression(expr in start_expr()) {
        if let Some(text) = to_compact(&expr) {
            let read = parse_time_expr(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\nprinted: {text}")))?;
            prop_assert_eq!(read, expr);
        }
    }

    #[test]
    fn reading_arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse_document(&text, weft_demand_lang::Strategy::Loose, &anything_exists);
        let _ = parse_time_expr(&text);
    }

    #[test]
    fn reading_compact_like_text_never_panics(text in "[\\[\\](),+^ 0-9hmsNOWSTARTANDOROTZ:-]{0,80}") {
        let _ = parse_time_expr(&text);
        let document = format!(
            r#"{{"DemandID":1,"ResourceRequest":{{"capability":{{"memory":1,"vCores":1}},"num-containers":1}},"Start":"{t}","Duration":"{t}","DeadLine":"{t}"}}"#,
            t = text
        );
        if let Ok(submission) = parse_document(&document, weft_demand_lang::Strategy::Strict, &anything_exists) {
            let clock = weft_demand_lang::window::Clock { now: 1_000, offset_minutes: 0 };
            let _ = resolve(&submission.demands[0], "", clock, weft_demand_lang::Strategy::Strict);
        }
    }

    #[test]
    fn resolving_generated_demands_never_panics(demand in demand(), now in any::<u64>()) {
        let clock = weft_demand_lang::window::Clock { now, offset_minutes: 330 };
        let _ = resolve(&demand, "", clock, weft_demand_lang::Strategy::Strict);
    }
}
