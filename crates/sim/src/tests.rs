//! Scenario validation (every error names its line and field), defaults, and the runner's
//! timing rules. Scheduling semantics are tested elsewhere (behaviour scenarios).

use crate::{initial_config, parse_scenario, run, Action, Scenario, ZeroClock};
use weft_sched::SchedulerKind;
use weft_types::{Resource, Time};

fn parse(text: &str) -> Scenario {
    match parse_scenario(text, "s.toml") {
        Ok(s) => s,
        Err(e) => panic!("unexpected problems:\n{e}"),
    }
}

/// The error text of a scenario that must not parse.
fn error(text: &str) -> String {
    match parse_scenario(text, "s.toml") {
        Ok(_) => panic!("the scenario parsed"),
        Err(e) => e.to_string(),
    }
}

const NODE: &str = "[[nodes]]\nhost = \"n\"\nresources = \"4096 mb, 4 vcores\"\n";

#[test]
fn defaults_apply() {
    let s = parse(NODE);
    assert_eq!(s.heartbeat_interval.as_millis(), 1_000);
    assert_eq!(s.update_interval.as_millis(), 500);
    assert_eq!(s.seed, 0);
    assert_eq!(s.end, None);
    assert_eq!(s.nodes.len(), 1);
    assert_eq!(s.nodes[0].host, "n");
    assert_eq!(s.nodes[0].rack, "/default-rack");
    assert_eq!(s.nodes[0].resources, Resource::new(4096, 4));
}

#[test]
fn node_count_expands_host_names() {
    let s = parse("[[nodes]]\nhost = \"h\"\ncount = 3\nrack = \"/r1\"\nresources = \"memory-mb=1024, vcores=1\"\n");
    let hosts: Vec<&str> = s.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts, ["h1", "h2", "h3"]);
    assert!(s.nodes.iter().all(|n| n.rack == "/r1"));
}

#[test]
fn bad_resource_names_line_and_field() {
    let text = format!(
        "{NODE}\n[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n\n[[events]]\nat = \"1s\"\ntype = \"ask\"\napp = \"a\"\ncount = 1\nresources = \"1024\"\n"
    );
    let e = error(&text);
    assert!(
        e.starts_with("s.toml: line 16, field events[1].resources: '1024' is not a resource"),
        "{e}"
    );
}

#[test]
fn unknown_fields_are_errors_with_their_line() {
    let text = format!("{NODE}rack_name = \"/r\"\n");
    let e = error(&text);
    assert!(
        e.contains("line 4, field nodes[0].rack_name: unknown field"),
        "{e}"
    );
    // A field another event type allows is still unknown for this one.
    let e = error("[[events]]\nat = \"0s\"\ntype = \"snapshot\"\napp = \"a\"\n");
    assert!(
        e.contains("line 4, field events[0].app: unknown field"),
        "{e}"
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let e = error("update_interval = \"5\"\n[[events]]\ntype = \"explode\"\n");
    assert!(
        e.contains("line 1, field update_interval: '5' has no unit"),
        "{e}"
    );
    assert!(e.contains("line 2, field events[0].at: missing"), "{e}");
    assert!(
        e.contains("line 3, field events[0].type: unknown event type 'explode'"),
        "{e}"
    );
}

#[test]
fn required_event_fields_are_checked() {
    let e = error("[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\n");
    assert!(e.contains("line 1, field events[0].user: missing"), "{e}");
    let e = error("[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n[[events]]\nat = \"0s\"\ntype = \"ask\"\napp = \"a\"\nresources = \"1024 mb, 1 vcores\"\n");
    assert!(e.contains("line 6, field events[1].count: missing"), "{e}");
}

#[test]
fn apps_must_be_submitted_before_use() {
    let text = "[[events]]\nat = \"1s\"\ntype = \"finish\"\napp = \"a\"\n[[events]]\nat = \"2s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n";
    let e = error(text);
    assert!(
        e.contains("line 1, field events[0].app: app 'a' is not submitted before this event; its submit (line 5) comes later"),
        "{e}"
    );
}

#[test]
fn duplicate_and_unknown_hosts_are_errors() {
    let e = error(&format!("{NODE}{NODE}"));
    assert!(
        e.contains("line 4, field nodes: duplicate host 'n' (also at line 1)"),
        "{e}"
    );
    let e = error(&format!(
        "{NODE}[[events]]\nat = \"1s\"\ntype = \"remove_node\"\nhost = \"m\"\n"
    ));
    assert!(e.contains("no node 'm' is in the cluster"), "{e}");
}

#[test]
fn scheduler_kinds_take_their_own_configuration_text() {
    let e = error("scheduler = \"capacity\"\n");
    assert!(
        e.contains("line 1, field capacity: scheduler = \"capacity\" needs the capacity-scheduler.xml text"),
        "{e}"
    );
    let e = error("scheduler = \"capacity\"\ncapacity = \"<configuration/>\"\nallocations = \"<allocations/>\"\n");
    assert!(
        e.contains(
            "line 3, field allocations: the Capacity Scheduler reads capacity-scheduler.xml"
        ),
        "{e}"
    );
    let text = "scheduler = \"capacity\"\ncapacity = '''\n<configuration>\n<property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property>\n<property><name>yarn.scheduler.capacity.root.a.capacity</name><value>100</value></property>\n</configuration>\n'''\n";
    let scenario = parse(text);
    assert_eq!(scenario.scheduler, SchedulerKind::Capacity);
    let initial = crate::initial_config(&scenario).expect("a valid capacity-scheduler.xml");
    assert_eq!(initial.config.kind(), SchedulerKind::Capacity);
    // A bad file names its line inside the scenario: the capacity 120 is on scenario line 5.
    let bad = text.replace("<value>100</value>", "<value>120</value>");
    let e = crate::initial_config(&parse(&bad))
        .expect_err("capacity 120 is refused")
        .to_string();
    assert!(e.contains("capacity (line 5 of the scenario file)"), "{e}");
    assert_eq!(
        parse("scheduler = \"fifo\"\n").scheduler,
        SchedulerKind::Fifo
    );
    assert_eq!(parse("name = \"x\"\n").scheduler, SchedulerKind::Fair);
    let e = error("scheduler = \"fifo\"\nallocations = \"<allocations/>\"\n");
    assert!(
        e.contains("line 2, field allocations: the FIFO scheduler has no queue configuration"),
        "{e}"
    );
}

#[test]
fn toml_syntax_errors_name_the_line() {
    let e = error("name = \"x\"\nheartbeat_interval = = 1\n");
    assert!(e.starts_with("s.toml: line 2: not valid TOML"), "{e}");
}

#[test]
fn events_sort_by_time_keeping_file_order_at_an_instant() {
    let text = "[[events]]\nat = \"2s\"\ntype = \"snapshot\"\n[[events]]\nat = \"1s\"\ntype = \"snapshot\"\n[[events]]\nat = \"1000ms\"\ntype = \"snapshot\"\n";
    let s = parse(text);
    let order: Vec<(u64, usize)> = s
        .events
        .iter()
        .map(|e| (e.at.as_millis(), e.index))
        .collect();
    assert_eq!(order, [(1000, 1), (1000, 2), (2000, 0)]);
}

#[test]
fn ask_fields_and_defaults() {
    let text = format!(
        "{NODE}[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n[[events]]\nat = \"0s\"\ntype = \"ask\"\napp = \"a\"\nresources = \"2048 mb, 1 vcores, 1 gpu\"\ncount = 3\nduration = \"1m\"\nhosts = [\"n\"]\n"
    );
    let s = parse(&text);
    assert_eq!(s.resource_types.index_of("gpu"), Some(2));
    let Action::Ask { ask, duration, .. } = &s.events[1].action else {
        panic!("not an ask: {:?}", s.events[1].action);
    };
    assert_eq!(ask.resources, Resource::new(2048, 1).with(2, 1));
    assert_eq!((ask.count, ask.priority, ask.relax_locality), (3, 0, true));
    assert_eq!(ask.hosts, ["n"]);
    assert_eq!(duration.map(|d| d.as_millis()), Some(60_000));
}

#[test]
fn allocations_file_is_requested_from_the_caller() {
    let mut s = parse("allocations_file = \"conf/fs.xml\"\n");
    assert_eq!(s.needed_file(), Some("conf/fs.xml"));
    s.provide_file("<allocations/>".to_string());
    assert_eq!(s.needed_file(), None);
    let e = error("allocations_file = \"a.xml\"\nallocations = \"<allocations/>\"\n");
    assert!(e.contains("either allocations or allocations_file"), "{e}");
}

#[test]
fn embedded_allocations_know_their_first_line() {
    let s = parse("name = \"x\"\nallocations = '''\n<allocations>\n</allocations>\n'''\n");
    let Some(crate::AllocationsSource::Inline(e)) = &s.allocations else {
        panic!("no inline allocations");
    };
    assert_eq!((e.key_line, e.first_line), (2, 3));
    assert!(e.text.starts_with("<allocations>"));
}

#[test]
fn durations_must_be_strings_with_units() {
    let e = error("[[events]]\nat = 5\ntype = \"snapshot\"\n");
    assert!(
        e.contains("line 2, field events[0].at: expected a duration string such as \"500ms\""),
        "{e}"
    );
    assert!(!e.contains("missing"), "{e}");
}

#[test]
fn end_extension_sets_the_stop_time() {
    let s = parse("end = \"2m\"\n");
    assert_eq!(s.end, Some(Time(120_000)));
}

/// Runs a scenario deterministically and returns its output lines.
fn run_lines(text: &str) -> Vec<String> {
    let s = parse(text);
    let init = match initial_config(&s) {
        Ok(i) => i,
        Err(e) => panic!("{e}"),
    };
    let mut lines = Vec::new();
    let result = run(&s, init.config, &mut ZeroClock, &mut |l: &str| {
        lines.push(l.to_string())
    });
    if let Err(e) = result {
        panic!("run failed: {e}\n{}", lines.join("\n"));
    }
    lines
}

fn field<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    let pat = format!("\"{key}\":");
    let start = line.find(&pat)? + pat.len();
    let rest = &line[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim_matches('"'))
}

#[test]
fn timing_events_before_heartbeats_completions_first_and_end_after_last_completion() {
    let text = format!(
        "{NODE}[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\nqueue = \"default\"\n[[events]]\nat = \"0s\"\ntype = \"ask\"\napp = \"a\"\nresources = \"1024 mb, 1 vcores\"\ncount = 1\nduration = \"2s\"\n[[events]]\nat = \"2s\"\ntype = \"snapshot\"\n"
    );
    let lines = run_lines(&text);
    let kinds: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                field(l, "type").unwrap_or(""),
                field(l, "at_ms").unwrap_or(""),
            )
        })
        .collect();
    // The submit and ask at 0 apply before node n's first heartbeat at 0; the completion due
    // at 2000 applies before the snapshot at 2000; the run ends one heartbeat after it.
    assert_eq!(
        kinds,
        [
            ("accepted", "0"),
            ("allocated", "0"),
            ("completed", "2000"),
            ("snapshot", "2000"),
            ("summary", "3000")
        ],
        "{}",
        lines.join("\n")
    );
    assert_eq!(field(&lines[2], "exit"), Some("success"));
    assert_eq!(field(&lines[4], "allocations"), Some("1"));
    assert_eq!(field(&lines[4], "scheduler_cpu_ms"), Some("0.0"));
}

#[test]
fn a_bad_reload_is_an_output_and_the_run_goes_on() {
    let text = format!(
        "{NODE}[[events]]\nat = \"1s\"\ntype = \"reload\"\nallocations = \"<allocations><queue name=\\\"a\\\"><weight>x</weight></queue></allocations>\"\n"
    );
    let lines = run_lines(&text);
    assert!(
        lines[0].starts_with(r#"{"type":"config_refused","at_ms":1000,"error":""#),
        "{}",
        lines.join("\n")
    );
    assert!(
        lines[1].starts_with(r#"{"type":"summary","at_ms":2000,"#),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn events_for_an_app_that_is_gone_are_skipped_not_sent() {
    let text = format!(
        "{NODE}[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n[[events]]\nat = \"1s\"\ntype = \"finish\"\napp = \"a\"\n[[events]]\nat = \"2s\"\ntype = \"ask\"\napp = \"a\"\nresources = \"1024 mb, 1 vcores\"\ncount = 1\n"
    );
    let lines = run_lines(&text);
    assert!(
        lines.contains(&r#"{"type":"finished","at_ms":1000,"app":"a"}"#.to_string()),
        "{}",
        lines.join("\n")
    );
    assert!(
        lines.contains(
            &r#"{"type":"skipped","at_ms":2000,"event":"ask","app":"a","reason":"a has finished"}"#
                .to_string()
        ),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn cpu_time_comes_from_the_injected_clock() {
    let s = parse(NODE);
    let init = initial_config(&s).unwrap();
    let mut t = 0u64;
    let mut clock = move || {
        t += 500_000; // every reading is 0.5 ms after the previous one
        t
    };
    let summary = run(&s, init.config, &mut clock, &mut |_: &str| {}).unwrap();
    // Each call into the scheduler is bracketed by two readings: 0.5 ms per call.
    assert!(summary.scheduler_cpu_ms >= 1.0, "{summary:?}");
    assert_eq!(
        summary.scheduler_cpu_ms.fract() * 2.0 % 1.0,
        0.0,
        "{summary:?}"
    );
}

#[test]
fn a_bad_property_names_its_line() {
    let text = "[properties]\n\"yarn.scheduler.fair.preemption\" = \"maybe\"\n";
    let s = parse(text);
    let e = initial_config(&s).unwrap_err().to_string();
    assert!(
        e.starts_with("s.toml: line 2, field properties.\"yarn.scheduler.fair.preemption\":"),
        "{e}"
    );
}

/// The warnings `initial_config` gives for `text` (each prefixed by the file name).
fn warnings(text: &str) -> Vec<String> {
    match initial_config(&parse(text)) {
        Ok(initial) => initial.warnings,
        Err(e) => panic!("unexpected problems:\n{e}"),
    }
}

#[test]
fn a_top_level_key_after_the_properties_header_is_a_warning_naming_its_line() {
    let text = format!(
        "[properties]\n\"yarn.scheduler.fair.assignmultiple\" = \"true\"\n\
         allocations = '''\n<allocations><queue name=\"a\"/></allocations>\n'''\n{NODE}"
    );
    let s = parse(&text);
    assert_eq!(s.allocations, None, "TOML put it inside [properties]");
    assert_eq!(
        s.properties.len(),
        1,
        "the misplaced key is not passed on as a property"
    );
    let w = warnings(&text);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("s.toml: line 3, field properties.allocations: 'allocations' is a top-level scenario key")
            && w[0].contains("move it above the first [table] header"),
        "{w:?}"
    );
}

#[test]
fn an_unknown_top_level_key_is_a_warning_naming_its_line_and_the_run_goes_on() {
    let text = format!("name = \"t\"\nheartbeat_intervall = \"1s\"\n{NODE}");
    let s = parse(&text);
    assert_eq!(s.heartbeat_interval.0, 1_000, "the misspelt key is ignored");
    let w = warnings(&text);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with(
            "s.toml: line 2, field heartbeat_intervall: unknown key, ignored (did you mean 'heartbeat_interval'?)"
        ),
        "{w:?}"
    );
}

#[test]
fn unknown_property_names_are_warnings_naming_their_line() {
    let text = format!(
        "name = \"w\"\n[properties]\nassignmultiple = \"true\"\n\
         \"yarn.scheduler.fair.assignmultipel\" = \"true\"\n\
         \"yarn.nodemanager.vmem-check-enabled\" = \"false\"\n{NODE}"
    );
    let w = warnings(&text);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with(
            "s.toml: line 3, field properties.assignmultiple: not a YARN or Weft property"
        ),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("s.toml: line 4, field properties.\"yarn.scheduler.fair.assignmultipel\": unknown scheduler property"),
        "{w:?}"
    );
    // A well-formed file says nothing.
    assert_eq!(warnings(NODE), Vec::<String>::new());
}

#[test]
fn a_blacklist_event_needs_places_and_cannot_list_every_place() {
    let submit = "[[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n";
    let e = error(&format!(
        "{NODE}{submit}[[events]]\nat = \"1s\"\ntype = \"blacklist\"\napp = \"a\"\nadd = [\"n\", \"*\"]\n"
    ));
    assert!(
        e.contains("line 13, field events[1].add: '*' cannot be blacklisted"),
        "{e}"
    );
    let e = error(&format!(
        "{NODE}{submit}[[events]]\nat = \"1s\"\ntype = \"blacklist\"\napp = \"a\"\n"
    ));
    assert!(
        e.contains("field events[1].add: a blacklist event lists"),
        "{e}"
    );
    let s = parse(&format!(
        "{NODE}{submit}[[events]]\nat = \"1s\"\ntype = \"blacklist\"\napp = \"a\"\nadd = [\"n\"]\nremove = [\"/r\"]\n"
    ));
    assert!(matches!(
        &s.events[1].action,
        Action::Blacklist { app, add, remove } if app == "a" && add == &["n"] && remove == &["/r"]
    ));
}
