//! `driver = "rm"` scenario files end to end: the same file gives the same bytes, bad input is
//! named by file, line, event and field, and a demand the language refuses is the RM's answer
//! (a `demand_refused` line with the parser's pointer and column, as REST's 400).

use weft_demand_sim::run_scenario;
use weft_sim::{initial_config, parse_scenario};

const CLUSTER: &str = r#"
driver = "rm"
allocations = '''
<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>1</weight></queue>
  <queue name="default"><weight>0</weight></queue>
</allocations>
'''

[[nodes]]
host = "n"
count = 4
resources = "8192 mb, 8 vcores"

[[events]]
at = "0s"
type = "submit"
app = "a"
user = "alice"
queue = "prod"
"#;

fn run(text: &str) -> Result<Vec<String>, String> {
    let scenario = parse_scenario(text, "test.toml").map_err(|e| e.to_string())?;
    let initial = initial_config(&scenario).map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    run_scenario(&scenario, initial.config, &mut |l: &str| {
        lines.push(l.to_string())
    })
    .map_err(|e| e.to_string())?;
    Ok(lines)
}

fn with_events(events: &str) -> String {
    format!("{CLUSTER}\n{events}")
}

#[test]
fn the_same_file_gives_the_same_bytes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testkit/scenarios/demand-c2.toml"
    );
    let text = std::fs::read_to_string(path).expect("the C2 scenario");
    let first = run(&text).expect("runs");
    let second = run(&text).expect("runs");
    assert!(first.len() > 40, "{}", first.len());
    assert_eq!(first, second);
}

/// C17's first case: the demand language's own message with the field's pointer and the
/// column inside the compact string, on a `demand_refused` line naming the event; nothing
/// else happens to the app.
#[test]
fn a_demand_the_language_refuses_is_a_refusal_naming_the_event_pointer_and_column() {
    let text = with_events(
        r#"
[[events]]
at = "2s"
type = "demand"
app = "a"
demand = '''
{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1},
 "Start": {"Time": "[NOW, +5x]"}}
'''
"#,
    );
    let lines = run(&text).expect("runs");
    let refused: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("demand_refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{lines:#?}");
    let line = refused[0];
    assert!(line.contains(r#""at_ms":2000"#), "{line}");
    assert!(line.contains(r#""event":1"#), "{line}");
    assert!(line.contains(r#""field":"events[1].demand""#), "{line}");
    assert!(line.contains(r#""status":400"#), "{line}");
    assert!(
        line.contains("/Start/Time: column 9: unknown unit 'x'"),
        "{line}"
    );
    assert!(!lines.iter().any(|l| l.contains("demand_state")));
}

/// C17's cycle: both demands in one event are one batch; the batch is refused whole.
#[test]
fn an_order_cycle_in_one_batch_is_refused_with_the_cycle() {
    let text = with_events(
        r#"
[[events]]
at = "2s"
type = "demand"
app = "a"
demand = '''
[{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1, "priority": 1}, "OrderBy": 2},
 {"DemandID": 2, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1, "priority": 2}, "OrderBy": 1}]
'''
"#,
    );
    let lines = run(&text).expect("runs");
    let refused = lines
        .iter()
        .find(|l| l.contains("demand_refused"))
        .expect("refused");
    assert!(refused.contains("OrderBy cycle: 1 → 2 → 1"), "{refused}");
    assert!(!lines.iter().any(|l| l.contains("demand_state")));
}

#[test]
fn text_that_is_not_json_is_a_file_error_naming_line_and_field() {
    let text = with_events(
        r#"
[[events]]
at = "2s"
type = "demand"
app = "a"
demand = '''
{"DemandID": 1,
 "ResourceRequest": nope}
'''
"#,
    );
    let err = run(&text).expect_err("refused");
    let json_line = text
        .lines()
        .position(|l| l.contains("nope"))
        .expect("the bad line")
        + 1;
    assert!(
        err.starts_with(&format!(
            "test.toml: line {json_line}, field events[1].demand: not JSON:"
        )),
        "{err}"
    );
}

#[test]
fn a_demand_without_the_rm_driver_is_a_file_error_that_names_the_switch() {
    let text = with_events(
        r#"
[[events]]
at = "2s"
type = "demand_kill"
app = "a"
demand = 1
"#,
    )
    .replace("driver = \"rm\"", "");
    let err = run(&text).expect_err("refused");
    assert!(err.contains("field events[1].type"), "{err}");
    assert!(
        err.contains("needs the RM core: add driver = \"rm\""),
        "{err}"
    );
}

#[test]
fn an_event_the_rm_driver_does_not_replay_is_a_file_error() {
    let text = with_events(
        r#"
[[events]]
at = "2s"
type = "release"
app = "a"
count = 1
"#,
    );
    let err = run(&text).expect_err("refused");
    assert!(
        err.contains("event type 'release' is not replayed by driver = \"rm\""),
        "{err}"
    );
}

#[test]
fn a_reserve_stage_names_its_bad_field() {
    let text = with_events(
        r#"
[[events]]
at = "0s"
type = "reserve"
name = "r"
queue = "prod"
user = "alice"
arrival = "60s"
deadline = "120s"
requests = [{resources = "1024 mb, 1 vcores", count = 0, duration = "60s"}]
"#,
    );
    let err = run(&text).expect_err("refused");
    assert!(err.contains("events[1].requests[0].count"), "{err}");
}
