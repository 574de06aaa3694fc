//! The spec's examples (§3.2.1, §3.2.5) read as the spec explains them, and one test per class
//! of error (scenario C17 and the checks of §3.2.3 / §3.3), each naming its field and column.

use weft_demand_lang::window::{Bound, Clock};
use weft_demand_lang::*;

const MIN: u64 = 60_000;
/// 2026-11-22 00:00:00 UTC.
const NOV_22: u64 = 1_795_305_600_000;

fn none_exist(_: &DemandRef) -> bool {
    false
}

fn read(text: &str) -> Submission {
    parse_document(text, Strategy::Loose, &|r| [1200, 1201].contains(&r.demand))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn errors(text: &str) -> Vec<String> {
    match parse_document(text, Strategy::Loose, &none_exist) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

fn request(extra: &str) -> String {
    format!(
        r#"{{"DemandID": 1, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": 4}}{extra}}}"#
    )
}

fn resolved(text: &str, now: u64) -> Result<ResolvedTimes, Vec<String>> {
    let submission = read(text);
    let clock = Clock {
        now,
        offset_minutes: 0,
    };
    resolve(&submission.demands[0], "", clock, Strategy::Loose)
        .map_err(|e| e.iter().map(ToString::to_string).collect())
}

#[test]
fn example_a_is_an_ordered_loose_demand_with_a_deadline_after_start() {
    let submission = read(include_str!("data/example-a.json"));
    let demand = &submission.demands[0];
    assert_eq!(demand.demand_id, 1234);
    assert_eq!(demand.request.num_containers, 8);
    assert_eq!(demand.request.priority, Some(1));
    let order = demand.order_by.as_ref().expect("OrderBy");
    assert_eq!(
        order.value,
        DemandExpr::Ref(DemandRef {
            owner: None,
            demand: 1200,
            outcome: None
        })
    );
    assert_eq!(
        demand.effective(order, Strategy::Loose),
        Strategy::Loose,
        "OrderBy inherits loose, so the atom means 1200:any"
    );
    let times = resolved(include_str!("data/example-a.json"), 5_000).unwrap();
    assert_eq!(times.deadline.after_start, Some(20 * MIN), "START + 20 min");
    assert_eq!(times.deadline.at, None);
    assert_eq!(times.start, None, "nothing to plan");
}

#[test]
fn example_b_is_the_seed_s_or_with_a_count_branch() {
    let submission = read(include_str!("data/example-b.json"));
    let start = submission.demands[0].start.as_ref().expect("Start");
    assert_eq!(start.strategy, Some(Strategy::Strict));
    assert_eq!(
        start.value,
        parse_time_expr("OR([NOW, +5m], [NOW, ^3])").unwrap(),
        "the JSON structure and the compact string are one tree"
    );
    let window = resolved(include_str!("data/example-b.json"), 0)
        .unwrap()
        .start
        .unwrap();
    assert!(
        window.holds(6 * MIN, 3),
        "the count branch keeps it open past 5 min"
    );
    assert!(window.closed_for_good(6 * MIN, 4));
}

#[test]
fn example_c_is_a_nightly_gang_with_an_absolute_window_and_deadline() {
    let submission = read(include_str!("data/example-c.json"));
    let demand = &submission.demands[0];
    assert_eq!(demand.gang, Gang::All);
    assert_eq!(
        demand.duration.as_ref().map(|d| d.value),
        Some(LeaseLength::Length(45 * MIN))
    );
    let times = resolved(include_str!("data/example-c.json"), NOV_22).unwrap();
    let three = NOV_22 + 180 * MIN;
    assert_eq!(times.earliest_start, three);
    assert_eq!(times.start.unwrap().latest_end(), Some(three + 10 * MIN));
    assert_eq!(times.deadline.at, Some(NOV_22 + 240 * MIN));
    assert_eq!(times.lease, Some(Bound::AfterStart(45 * MIN)));
}

#[test]
fn example_d_is_a_workflow_with_a_blackout_and_outcome_atoms() {
    let submission = read(include_str!("data/example-d.json"));
    assert_eq!(submission.demands.len(), 3);
    assert_eq!(submission.pointers, ["/0", "/1", "/2"]);
    let now = NOV_22 + 60 * MIN; // 01:00
    let clock = Clock {
        now,
        offset_minutes: 0,
    };
    let window = resolve(&submission.demands[0], "/0", clock, Strategy::Loose)
        .unwrap()
        .start
        .unwrap();
    assert!(window.holds(NOV_22 + 119 * MIN, 0));
    assert!(!window.holds(NOV_22 + 120 * MIN, 0), "02:00 is blacked out");
    assert!(window.holds(NOV_22 + 150 * MIN, 0), "02:30 is open again");
    let eleven = resolve(&submission.demands[1], "/1", clock, Strategy::Loose).unwrap();
    assert_eq!(
        eleven.deadline.at,
        Some(now + 300 * MIN),
        "a wall-clock 5 h"
    );
    let twelve = submission.demands[2].order_by.as_ref().unwrap();
    let outcomes: Vec<Option<Outcome>> = references(&twelve.value)
        .iter()
        .map(|r| r.outcome)
        .collect();
    assert_eq!(outcomes, [Some(Outcome::Ok), Some(Outcome::Failed)]);
}

#[test]
fn the_full_shape_of_3_2_1_reads_every_field() {
    let submission = read(include_str!("data/example-3.2.1.json"));
    let demand = &submission.demands[0];
    assert_eq!(demand.name.as_deref(), Some("transform"));
    assert_eq!(demand.request.resources.get("yarn.io/gpu"), Some(&0));
    assert_eq!(demand.request.resource_name.as_deref(), Some("*"));
    assert_eq!(demand.request.relax_locality, Some(true));
    assert_eq!(demand.request.node_label_expression.as_deref(), Some(""));
    assert_eq!(demand.gang, Gang::Off);
    assert_eq!(demand.strategy, Some(Strategy::Loose));
    assert_eq!(demand.claim_timeout, Some(5 * MIN));
    let order = demand.order_by.as_ref().unwrap();
    assert_eq!(order.strategy, Some(Strategy::Strict));
    assert_eq!(references(&order.value).len(), 2);
}

#[test]
fn c17_an_unknown_unit_names_the_field_and_column() {
    let text = request(r#", "Start": {"Time": "[NOW, +5x]"}"#);
    assert_eq!(
        errors(&text),
        ["/Start/Time: column 9: unknown unit 'x'; expected h, m or s"]
    );
}

#[test]
fn c17_an_empty_time_expression_is_refused_at_resolution() {
    let text = request(r#", "Start": "AND([NOW,+5m],[NOW+10m,+10m])""#);
    let err = resolved(&text, 1_000).unwrap_err();
    assert_eq!(err, ["/Start: time expression is empty"]);
}

#[test]
fn c17_a_cycle_is_printed() {
    let one = r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": 2}"#;
    let two = r#"{"DemandID": 2, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": 1}"#;
    assert_eq!(
        errors(&format!("[{one}, {two}]")),
        ["/0/OrderBy: OrderBy cycle: 1 → 2 → 1"]
    );
}

#[test]
fn c17_or_in_deadline_is_refused_naming_the_operator() {
    let text = request(r#", "DeadLine": {"OR": [["NOW", "+5m"], ["NOW", "+9m"]]}"#);
    assert_eq!(errors(&text), ["/DeadLine: OR is not allowed in DeadLine"]);
    let text = request(r#", "DeadLine": "NOT([NOW, +5m])""#);
    assert_eq!(errors(&text), ["/DeadLine: NOT is not allowed in DeadLine"]);
}

#[test]
fn forms_outside_the_table_are_refused_per_field() {
    assert_eq!(
        errors(&request(r#", "DeadLine": "[NOW, ^3]""#)),
        ["/DeadLine: a count ^N is not allowed in DeadLine"]
    );
    assert_eq!(
        errors(&request(r#", "Duration": "AND([, +5m])""#)),
        ["/Duration: AND is not allowed in Duration"]
    );
    assert_eq!(
        errors(&request(r#", "Duration": ["NOW", "^2"]"#)),
        ["/Duration: a count ^N is not allowed in Duration"]
    );
    assert_eq!(
        errors(&request(r#", "Start": "[START, +5m]""#)),
        ["/Start: START cannot bound Start: it is the instant Start chooses"]
    );
}

#[test]
fn a_deadline_before_the_start_is_refused() {
    let text = request(
        r#", "Start": ["2026-11-22 03:00:00", "+10m"], "Duration": "5m", "DeadLine": [null, "2026-11-22 02:00:00"]"#,
    );
    let err = resolved(&text, NOV_22).unwrap_err();
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].starts_with("/DeadLine: the DeadLine")
            && err[0].contains("is not after the earliest Start"),
        "{err:?}"
    );
    let past = request(r#", "DeadLine": [null, "2020-01-01 00:00:00"]"#);
    let err = resolved(&past, NOV_22).unwrap_err();
    assert!(err[0].contains("is in the past"), "{err:?}");
}

#[test]
fn a_strict_deadline_the_duration_overshoots_is_refused() {
    let text =
        request(r#", "Duration": "2h", "DeadLine": {"Time": "[NOW, +1h]", "Strategy": "strict"}"#);
    let err = resolved(&text, NOV_22).unwrap_err();
    assert!(
        err[0].starts_with("/DeadLine/Time: cannot meet the strict DeadLine"),
        "{err:?}"
    );
    let loose = request(r#", "Duration": "2h", "DeadLine": "[NOW, +1h]""#);
    assert!(
        resolved(&loose, NOV_22).is_ok(),
        "loose may miss its deadline"
    );
}

#[test]
fn a_strict_plan_without_a_duration_is_refused() {
    assert_eq!(
        errors(&request(
            r#", "DeadLine": {"Time": "[NOW, +30m]", "Strategy": "strict"}"#
        )),
        ["/DeadLine: Duration is required to plan a strict Start or DeadLine"]
    );
    let start_only = request(r#", "Start": {"Time": "[NOW, +30m]", "Strategy": "strict"}"#);
    assert!(
        parse_document(&start_only, Strategy::Loose, &none_exist).is_ok(),
        "a strict Start alone is planned as an instant (example (b))"
    );
}

#[test]
fn a_gang_that_does_not_divide_the_containers_is_refused() {
    assert_eq!(
        errors(&request(r#", "Gang": 3"#)),
        ["/Gang: num-containers 4 is not a multiple of the gang size 3"]
    );
    assert_eq!(
        errors(&request(r#", "Gang": 0"#)),
        ["/Gang: expected true, false or a gang size of at least 1, found 0"]
    );
}

#[test]
fn unknown_references_are_refused_and_known_ones_accepted() {
    assert_eq!(
        errors(&request(
            r#", "OrderBy": {"AND": [7, "application_17_0003/8:started"]}"#
        )),
        [
            "/OrderBy: OrderBy names unknown demand 7",
            "/OrderBy: OrderBy names unknown demand application_17_3/8:started"
        ]
    );
    let known = parse_document(
        &request(r#", "OrderBy": "application_17_0003/8:started""#),
        Strategy::Loose,
        &|r| r.owner.is_some() && r.demand == 8,
    );
    assert!(known.is_ok(), "{known:?}");
}

#[test]
fn a_bad_reference_string_names_its_column() {
    assert_eq!(
        errors(&request(r#", "OrderBy": "12:done""#)),
        ["/OrderBy: column 4: unknown outcome 'done'; expected ok, any, failed or started"]
    );
    assert_eq!(
        errors(&request(r#", "OrderBy": {"NOT": "job_1/2"}"#)),
        ["/OrderBy/NOT: column 1: 'job_1' is not an owner; expected application_<ts>_<n> or reservation_<ts>_<n>"]
    );
}

#[test]
fn shape_errors_name_each_field_and_are_all_reported() {
    let text = r#"{"DemandID": -1, "ResourceRequest": {"capability": {"memory": "2G"}, "num-containers": 0},
                   "Strategy": "sloppy", "Colour": "red", "ClaimTimeout": "5 minutes"}"#;
    assert_eq!(
        errors(text),
        [
            "/Colour: unknown field 'Colour'; expected one of DemandID, Name, ResourceRequest, Gang, Start, Duration, DeadLine, Deadline, OrderBy, Strategy, ClaimTimeout",
            "/DemandID: expected an integer from 0 to 9223372036854775807, found -1",
            "/ResourceRequest/capability/memory: expected an integer from 0 to 9223372036854775807, found \"2G\"",
            "/ResourceRequest/capability: vCores is required",
            "/ResourceRequest/num-containers: expected an integer of at least 1, found 0",
            "/Strategy: expected \"strict\" or \"loose\", found \"sloppy\"",
            "/ClaimTimeout: column 2: unexpected ' '; expected a unit (h, m or s)",
        ]
    );
}

#[test]
fn missing_required_fields_and_non_objects_are_named() {
    assert_eq!(
        errors(r#"{"Name": "x"}"#),
        [
            "(document): DemandID is required",
            "(document): ResourceRequest is required"
        ]
    );
    assert_eq!(
        errors("[1]"),
        ["/0: a ResourceDescription must be an object, not a number"]
    );
    assert_eq!(errors("[]"), ["(document): no demands: the array is empty"]);
    let not_json = errors("{\"DemandID\": ");
    assert!(
        not_json[0].starts_with("(document): column 13: not JSON"),
        "{not_json:?}"
    );
}

#[test]
fn the_deadline_alias_is_read_with_a_warning_and_both_spellings_are_refused() {
    let submission = read(&request(r#", "Deadline": "[, +20m]""#));
    assert!(submission.demands[0].deadline.is_some());
    assert_eq!(
        submission.warnings[0].to_string(),
        "/Deadline: Deadline is read as DeadLine, the seed's spelling"
    );
    assert_eq!(
        errors(&request(
            r#", "Deadline": "[, +20m]", "DeadLine": "[, +20m]""#
        )),
        ["/Deadline: DeadLine and its alias Deadline are both given; keep one"]
    );
}

#[test]
fn interval_arrays_are_checked_bound_by_bound() {
    assert_eq!(
        errors(&request(r#", "Start": ["NOW", "+5m", "+6m"]"#)),
        ["/Start: an interval has exactly two bounds [T1, T2], found 3"]
    );
    assert_eq!(
        errors(&request(r#", "Start": ["+5m", "2026-13-01 00:00:00"]"#)),
        [
            "/Start/0: column 1: an offset cannot be T1; write NOW+offset or START+offset (T1 is an instant)",
            "/Start/1: column 6: month 13 is out of range",
        ]
    );
    assert_eq!(
        errors(&request(r#", "Start": {"AND": [], "OR": []}"#)),
        ["/Start/OR: an operator object has exactly one key, AND, OR or NOT; found 'OR'"]
    );
}

#[test]
fn epoch_milliseconds_are_accepted_in_json_intervals() {
    let text = request(r#", "Start": [1795316400000, 1795317000000]"#);
    let times = resolved(&text, NOV_22).unwrap();
    assert_eq!(times.earliest_start, 1_795_316_400_000);
}

#[test]
fn hostile_sizes_are_refused_with_their_limit() {
    let deep = format!(
        "{}[\"NOW\", \"+1m\"]{}",
        "{\"NOT\": ".repeat(40),
        "}".repeat(40)
    );
    let err = errors(&request(&format!(r#", "Start": {deep}"#)));
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].ends_with("expressions nest deeper than 32 levels"),
        "{err:?}"
    );
    let long_name = format!(r#", "Name": "{}""#, "n".repeat(257));
    assert_eq!(
        errors(&request(&long_name)),
        ["/Name: Name is longer than 256 characters"]
    );
    // An AND of ORs multiplies terms: 2^9 = 512 > 256.
    let branches: Vec<String> = (1..=9)
        .map(|i| format!("OR([NOW, +{i}h], [NOW, ^{i}])"))
        .collect();
    let complex = request(&format!(r#", "Start": "AND({})""#, branches.join(", ")));
    let err = resolved(&complex, 0).unwrap_err();
    assert_eq!(
        err,
        ["/Start: time expression is too complex (more than 256 terms in disjunctive normal form)"]
    );
}
