//! The behaviour suite (Fair, Capacity in the `capacity-*` scenarios, FIFO in the `fifo-*` ones): scenario files replayed by the simulator and compared with
//! expectations derived BY HAND from `fair-scheduler-spec.md` (never copied from a run).
//!
//! # Layout
//!
//! * `crates/testkit/scenarios/<name>.toml` — a scenario (`scenario-format.md`); its comment header
//!   says what it checks and how the expected numbers follow from the spec.
//! * `crates/testkit/scenarios/<name>.expect` — what the output must contain.
//! * `examples/<name>.toml` at the repository root — user-facing examples; each must run, and
//!   `crates/testkit/scenarios/examples/<name>.expect`, when present, is checked too.
//!
//! # The `.expect` format
//!
//! One directive per line; blank lines and `#` lines are comments.
//!
//! * `{json}` — ordered: an output line after the previous ordered match must match.
//! * `! {json}` — no output line may match.
//! * `count {json} N` — exactly N output lines match.
//!
//! A line matches when the expected JSON is a subset of it: objects by the keys given (others
//! ignored), arrays as unordered subsets (each expected element matches a distinct actual one),
//! numbers numerically (`2` matches `2.0`). Operator objects: `{"$contains": "s"}`,
//! `{"$lt"|"$le"|"$gt"|"$ge": n}` (combinable), `{"$absent": true}`, `{"$any": [..]}`.
//! Full reference: `weft_testkit::expect`.
//!
//! # Known failures
//!
//! A scenario whose expectation is right by the spec but which the code does not meet yet is listed
//! in [`KNOWN_FAILING`] with the reason; its test prints the failures and passes, and fails as soon
//! as the scenario passes (so the entry gets removed).

use std::path::{Path, PathBuf};
use weft_sim::{initial_config, parse_scenario, run, Driver, ZeroClock};
use weft_testkit::expect;

/// Scenarios whose expectation follows the spec but whose run does not match it yet, with why.
/// Keep a comment per entry; remove the entry when the code is fixed.
const KNOWN_FAILING: &[(&str, &str)] = &[];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Runs one scenario file through the simulator and returns its JSON lines.
fn simulate(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let shown = path.display().to_string();
    let mut scenario = parse_scenario(&text, &shown).map_err(|e| e.to_string())?;
    if let Some(needed) = scenario.needed_file().map(str::to_string) {
        let file = path.parent().unwrap_or(Path::new(".")).join(&needed);
        let contents =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        scenario.provide_file(contents);
    }
    let initial = initial_config(&scenario).map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    let mut sink = |l: &str| lines.push(l.to_string());
    match scenario.driver {
        Driver::Scheduler => run(&scenario, initial.config, &mut ZeroClock, &mut sink)
            .map(|_| ())
            .map_err(|e| e.to_string())?,
        Driver::Rm => weft_demand_sim::run_scenario(&scenario, initial.config, &mut sink)
            .map(|_| ())
            .map_err(|e| e.to_string())?,
    }
    Ok(lines)
}

/// Checks `toml` against `expect_file` (if any); returns a report of every failure.
fn evaluate(name: &str, toml: &Path, expect_file: Option<&Path>) -> Result<(), String> {
    let output = simulate(toml).map_err(|e| format!("scenario `{name}` did not run: {e}"))?;
    let Some(expect_file) = expect_file else {
        return Ok(());
    };
    let text = std::fs::read_to_string(expect_file)
        .map_err(|e| format!("{}: {e}", expect_file.display()))?;
    let directives = expect::parse(&text).map_err(|e| format!("{}: {e}", expect_file.display()))?;
    let failures = expect::check(&directives, &output);
    if failures.is_empty() {
        return Ok(());
    }
    let mut report = expect::report(name, &failures);
    if std::env::var_os("WEFT_SHOW_OUTPUT").is_some() {
        report.push_str("\nfull output:\n");
        for (i, l) in output.iter().enumerate() {
            report.push_str(&format!("  #{}: {l}\n", i + 1));
        }
    } else {
        report.push_str("(set WEFT_SHOW_OUTPUT=1 to print the whole output)\n");
    }
    Err(report)
}

/// Applies the KNOWN_FAILING policy to a result.
fn conclude(name: &str, result: Result<(), String>) {
    let known = KNOWN_FAILING.iter().find(|(n, _)| *n == name);
    match (result, known) {
        (Ok(()), None) => {}
        (Err(report), None) => panic!("{report}"),
        (Err(report), Some((_, why))) => {
            eprintln!("KNOWN FAILING `{name}` ({why}):\n{report}");
        }
        (Ok(()), Some(_)) => panic!(
            "scenario `{name}` passes now: remove it from KNOWN_FAILING in tests/behaviour.rs"
        ),
    }
}

fn run_scenario(name: &str) {
    let dir = scenarios_dir();
    let toml = dir.join(format!("{name}.toml"));
    let exp = dir.join(format!("{name}.expect"));
    assert!(exp.exists(), "{} is missing", exp.display());
    conclude(name, evaluate(name, &toml, Some(&exp)));
}

fn run_example(name: &str) {
    let toml = repo_root().join("examples").join(format!("{name}.toml"));
    let exp = scenarios_dir()
        .join("examples")
        .join(format!("{name}.expect"));
    let key = format!("examples/{name}");
    conclude(
        &key,
        evaluate(&key, &toml, exp.exists().then_some(exp.as_path())),
    );
}

macro_rules! scenarios {
    ($($test:ident => $file:literal),* $(,)?) => {
        $( #[test] fn $test() { run_scenario($file) } )*
        const LISTED: &[&str] = &[$($file),*];
    };
}

macro_rules! examples {
    ($($test:ident => $file:literal),* $(,)?) => {
        $( #[test] fn $test() { run_example($file) } )*
        const LISTED_EXAMPLES: &[&str] = &[$($file),*];
    };
}

scenarios! {
    capacity_worked_example => "capacity-worked-example",
    capacity_user_limit => "capacity-user-limit",
    capacity_labels_confinement => "capacity-labels-confinement",
    capacity_labels_expressions => "capacity-labels-expressions",
    capacity_submission => "capacity-submission",
    capacity_mappings => "capacity-mappings",
    capacity_mappings_override => "capacity-mappings-override",
    capacity_ordering => "capacity-ordering",
    capacity_locality => "capacity-locality",
    capacity_locality_delay_off => "capacity-locality-delay-off",
    capacity_reservation => "capacity-reservation",
    capacity_reservation_wait => "capacity-reservation-wait",
    capacity_reservation_follower => "capacity-reservation-follower",
    capacity_assignments => "capacity-assignments",
    capacity_fair_leaf => "capacity-fair-leaf",
    capacity_app_priority => "capacity-app-priority",
    capacity_priority_utilization => "capacity-priority-utilization",
    capacity_seed001 => "capacity-seed001",
    capacity_reserved_usage => "capacity-reserved-usage",
    capacity_blocked_headroom => "capacity-blocked-headroom",
    capacity_move => "capacity-move",
    capacity_max_parallel => "capacity-max-parallel",
    capacity_auto_create => "capacity-auto-create",
    fifo_order => "fifo-order",
    gang_all_at_once => "gang-all-at-once",
    gang_unpackable => "gang-unpackable",
    gang_single_holder => "gang-single-holder",
    gang_hold_timeout => "gang-hold-timeout",
    reservation_follower => "reservation-follower",
    reservation_guarantee => "reservation-guarantee",
    reservation_kill_on_expiry => "reservation-kill-on-expiry",
    fifo_key_break => "fifo-key-break",
    fifo_memory_only => "fifo-memory-only",
    fifo_locality_and_limits => "fifo-locality-and-limits",
    acl => "acl",
    acl_defaults => "acl-defaults",
    pools_confinement => "pools-confinement",
    pools_unbound_rejected => "pools-unbound-rejected",
    pools_empty_pool_rejected => "pools-empty-pool-rejected",
    pools_default_partition => "pools-default-partition",
    pools_fair_share => "pools-fair-share",
    pools_fair_share_cluster_scope => "pools-fair-share-cluster-scope",
    pools_max_percent => "pools-max-percent",
    pools_longest_prefix => "pools-longest-prefix",
    pools_dead_pool_waits => "pools-dead-pool-waits",
    pools_cross_move => "pools-cross-move",
    pools_placement => "pools-placement",
    pools_preempt_within_pool => "pools-preempt-within-pool",
    pools_preempt_pool_threshold => "pools-preempt-pool-threshold",
    pools_preempt_pool_threshold_not_reached => "pools-preempt-pool-threshold-not-reached",
    pools_host_move => "pools-host-move",
    pools_foreign_timeout => "pools-foreign-timeout",
    pools_drain => "pools-drain",
    pools_preempt_global => "pools-preempt-global",
    alloc_resource_syntax => "alloc-resource-syntax",
    am_usage_sticky => "am-usage-sticky",
    blacklist => "blacklist",
    cancel_keeps_durations => "cancel-keeps-durations",
    fair_shares => "fair-shares",
    fair_shares_drf => "fair-shares-drf",
    fair_shares_drf_truncation => "fair-shares-drf-truncation",
    fifo_leaf => "fifo-leaf",
    max_am_share => "max-am-share",
    max_child_resources => "max-child-resources",
    max_container_allocation => "max-container-allocation",
    max_container_allocation_inherit => "max-container-allocation-inherit",
    max_resources_parent => "max-resources-parent",
    max_running_apps => "max-running-apps",
    min_resources => "min-resources",
    move_app => "move",
    node_remove => "node-remove",
    placement_default_policy => "placement-default-policy",
    placement_no_user_queue => "placement-no-user-queue",
    placement_reject => "placement-reject",
    placement_rules => "placement-rules",
    queue_max_apps_default_root => "queue-max-apps-default-root",
    queue_names => "queue-names",
    release_cancel => "release-cancel",
    reload => "reload",
    reload_lower_limit => "reload-lower-limit",
    resources_increment => "resources-increment",
    resources_normalization => "resources-normalization",
    starvation_min_share => "starvation-min-share",
    preemption_global_decision => "preemption-global-decision",
    preemption_global_worked_example => "preemption-global-worked-example",
    preemption_global_drop_quirk => "preemption-global-drop-quirk",
    preemption_global_not_preemptable => "preemption-global-not-preemptable",
    preemption_global_released_before_kill => "preemption-global-released-before-kill",
    preemption_global_drf => "preemption-global-drf",
    seed001_preemption_global => "seed001-preemption-global",
    preempt_worked_example => "preempt-worked-example",
    preempt_allow_preemption_from => "preempt-allow-preemption-from",
    preempt_released_during_warning => "preempt-released-during-warning",
    preempt_am_last => "preempt-am-last",
    preempt_am_only_choice => "preempt-am-only-choice",
    preempt_am_switch_off => "preempt-am-switch-off",
    preempt_drf => "preempt-drf",
    preempt_zero_wait => "preempt-zero-wait",
    preempt_min_share => "preempt-min-share",
    preempt_nested => "preempt-nested",
    preempt_handoff_not_limited => "preempt-handoff-not-limited",
    preempt_node_request_am_retry => "preempt-node-request-am-retry",
    user_limits => "user-limits",
    walk_assignmultiple => "walk-assignmultiple",
    walk_drf => "walk-drf",
    walk_dynamic_max_assign => "walk-dynamic-max-assign",
    walk_locality => "walk-locality",
    walk_ordering => "walk-ordering",
    walk_priorities => "walk-priorities",
    walk_reservation => "walk-reservation",
    weights => "weights",
    zero_weight_order => "zero-weight-order",
    capacity_preempt_ideal => "capacity-preempt-ideal",
    capacity_preempt_observe_only => "capacity-preempt-observe-only",
    capacity_preempt_natural_termination => "capacity-preempt-natural-termination",
    capacity_preempt_round_cap => "capacity-preempt-round-cap",
    capacity_preempt_disabled_queue => "capacity-preempt-disabled-queue",
    capacity_preempt_max_capacity => "capacity-preempt-max-capacity",
    capacity_preempt_dead_zone => "capacity-preempt-dead-zone",
    capacity_preempt_dead_zone_narrow => "capacity-preempt-dead-zone-narrow",
    capacity_preempt_victim_order => "capacity-preempt-victim-order",
    capacity_preempt_am_last => "capacity-preempt-am-last",
    capacity_preempt_pressure_gone => "capacity-preempt-pressure-gone",
    // `driver = "rm"`: the RM core with virtual NMs and AMs (time-aware demands spec §5 C).
    demand_c1 => "demand-c1",
    demand_c1_strict => "demand-c1-strict",
    demand_c2 => "demand-c2",
    demand_c4 => "demand-c4",
    demand_c9 => "demand-c9",
    demand_c13 => "demand-c13",
    demand_c14 => "demand-c14",
    reserve_events => "reserve-events",
    reservation_early_submission => "reservation-early-submission",
    demand_c3 => "demand-c3",
    demand_c5 => "demand-c5",
    demand_c6 => "demand-c6",
    demand_c7 => "demand-c7",
    demand_c7_strict => "demand-c7-strict",
    demand_c7_loose => "demand-c7-loose",
    demand_c8 => "demand-c8",
    demand_c8_unchecked => "demand-c8-unchecked",
    demand_c10 => "demand-c10",
    demand_c11 => "demand-c11",
    demand_c12 => "demand-c12",
    demand_c15 => "demand-c15",
    demand_c16_plain => "demand-c16-plain",
    demand_c16_wrapped => "demand-c16-wrapped",
    demand_c17 => "demand-c17",
    // B5 (plan follower): the replanner after node loss, through the RM core.
    demand_b5 => "demand-b5",
}

examples! {
    example_quickstart => "quickstart",
    example_seed001_big_and_small => "seed001-big-and-small",
    example_seed001_preemption => "seed001-preemption",
}

fn stems(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every scenario file has a test (and an expectation), so none is silently skipped.
#[test]
fn every_scenario_is_listed() {
    let dir = scenarios_dir();
    for name in stems(&dir, "toml") {
        assert!(
            LISTED.contains(&name.as_str()),
            "scenarios/{name}.toml has no test: add it to `scenarios!` in tests/behaviour.rs"
        );
    }
    for name in stems(&dir, "expect") {
        assert!(
            LISTED.contains(&name.as_str()),
            "scenarios/{name}.expect has no scenario test"
        );
    }
    for name in stems(&repo_root().join("examples"), "toml") {
        assert!(
            LISTED_EXAMPLES.contains(&name.as_str()),
            "examples/{name}.toml has no test: add it to `examples!` in tests/behaviour.rs"
        );
    }
    for (name, why) in KNOWN_FAILING {
        assert!(
            !why.is_empty(),
            "KNOWN_FAILING entry `{name}` needs a reason"
        );
    }
}

/// The scenario's output lines without the `demand_state` lines and with no container's
/// `demand` tag: what C16 compares.
fn allocation_trace(name: &str) -> Vec<String> {
    let toml = scenarios_dir().join(format!("{name}.toml"));
    let lines = simulate(&toml).unwrap_or_else(|e| panic!("{e}"));
    lines
        .iter()
        .filter_map(|l| {
            let mut v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}"));
            let kind = v.get("type").and_then(serde_json::Value::as_str);
            if kind == Some("demand_state") {
                return None;
            }
            if let Some(o) = v.as_object_mut() {
                o.remove("demand");
            }
            Some(v.to_string())
        })
        .collect()
}

/// C16 (time-aware-demands spec §5, §3.1 principle 5): the same trace with every ask wrapped
/// as an unconstrained demand allocates exactly as plain asks: the same lines in the same
/// order apart from the `demand_state` lines and the containers' `demand` tag (each file's
/// `.expect` checks the rest: the tags, and that no planner decision was made).
#[test]
fn c16_wrapped_asks_allocate_exactly_as_plain_asks() {
    let plain = allocation_trace("demand-c16-plain");
    let wrapped = allocation_trace("demand-c16-wrapped");
    let allocated = plain.iter().filter(|l| l.contains("\"allocated\"")).count();
    assert!(allocated >= 45, "a trace worth comparing: {allocated}");
    let first = plain.iter().zip(&wrapped).position(|(a, b)| a != b);
    assert_eq!(
        first.map(|i| (&plain[i], &wrapped[i])),
        None,
        "the traces part at line {first:?}"
    );
    assert_eq!(plain.len(), wrapped.len());
}

/// C18 (time-aware-demands spec §5, first half): every `driver = "rm"` scenario run twice
/// prints the same bytes (each run builds its core afresh, with new hash seeds). The second
/// half, a kill -9 of the RM mid-way and a restart, is checked with real processes
/// (crates/cli/tests/gangs.rs) and in rm-core (`demands::restart_tests`).
#[test]
fn c18_demand_scenarios_replay_byte_identically() {
    let mut checked = 0;
    for name in LISTED {
        let toml = scenarios_dir().join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&toml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let driver = parse_scenario(&text, name)
            .map(|s| s.driver)
            .unwrap_or_else(|e| panic!("{e}"));
        if driver != Driver::Rm {
            continue;
        }
        let first = simulate(&toml).unwrap_or_else(|e| panic!("{e}"));
        let second = simulate(&toml).unwrap_or_else(|e| panic!("{e}"));
        let part = first.iter().zip(&second).position(|(a, b)| a != b);
        assert_eq!(
            part.map(|i| (&first[i], &second[i])),
            None,
            "{name}: the two runs part at line {part:?}"
        );
        assert_eq!(first.len(), second.len(), "{name}");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} demand scenarios");
}
