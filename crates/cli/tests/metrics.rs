//! `/metrics` on a real cluster: valid Prometheus text, every documented family present (and
//! nothing undocumented), sane values after an application ran; and the health probes.

// Each test binary uses part of the shared harness.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use harness::{Cluster, Options};

const MINUTE: Duration = Duration::from_secs(60);

/// One sample: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A parsed exposition: HELP and TYPE per family, and the samples.
#[derive(Debug, Default)]
struct Exposition {
    help: BTreeMap<String, String>,
    kind: BTreeMap<String, String>,
    samples: Vec<Sample>,
}

fn valid_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn parse_value(v: &str) -> Result<f64, String> {
    match v {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => v
            .parse::<f64>()
            .map_err(|e| format!("bad value {v:?}: {e}")),
    }
}

/// `k="v",...}` after the opening brace; returns the labels and the rest after `}`.
fn parse_labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    let mut rest = s;
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        let (key, after) = rest.split_once("=\"").ok_or("label without =\"")?;
        if !valid_name(key) {
            return Err(format!("bad label name {key:?}"));
        }
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    _ => return Err("bad escape".into()),
                },
                Some((_, c)) => value.push(c),
            }
        };
        labels.insert(key.to_string(), value);
        rest = &after[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

/// Parses the text format strictly: every line is a HELP, a TYPE, or a sample of a family
/// whose TYPE came before it.
fn parse(text: &str) -> Result<Exposition, String> {
    let mut e = Exposition::default();
    for (i, line) in text.lines().enumerate() {
        let err = |m: String| format!("line {}: {m}: {line:?}", i + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest
                .split_once(' ')
                .ok_or_else(|| err("HELP without text".into()))?;
            if !valid_name(name) || help.trim().is_empty() {
                return Err(err("bad HELP".into()));
            }
            e.help.insert(name.to_string(), help.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest
                .split_once(' ')
                .ok_or_else(|| err("TYPE without type".into()))?;
            if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                return Err(err(format!("unknown type {kind}")));
            }
            if e.kind.insert(name.to_string(), kind.to_string()).is_some() {
                return Err(err("TYPE given twice".into()));
            }
            continue;
        }
        if line.starts_with('#') {
            return Err(err("unexpected comment".into()));
        }
        let end = line
            .find(['{', ' '])
            .ok_or_else(|| err("sample without value".into()))?;
        let name = &line[..end];
        if !valid_name(name) {
            return Err(err("bad metric name".into()));
        }
        let (labels, rest) = if line[end..].starts_with('{') {
            parse_labels(&line[end + 1..]).map_err(err)?
        } else {
            (BTreeMap::new(), &line[end..])
        };
        let value = rest
            .strip_prefix(' ')
            .ok_or_else(|| err("no space before the value".into()))?;
        let value = parse_value(value.trim_end()).map_err(err)?;
        if !e.kind.contains_key(name) || !e.help.contains_key(name) {
            return Err(err("sample before its HELP and TYPE".into()));
        }
        e.samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok(e)
}

impl Exposition {
    /// The value of the one sample of `name` whose labels include `labels`.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let found: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .collect();
        assert_eq!(found.len(), 1, "{name} {labels:?}: {found:?}");
        found[0].value
    }
}

/// The metric names `crates/rm/METRICS.md` documents (backquoted `weft_...` in its tables).
fn documented() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../rm/METRICS.md"))
        .expect("crates/rm/METRICS.md");
    doc.lines()
        .filter(|l| l.starts_with("| `weft_"))
        // Families only the Capacity Scheduler exports (this cluster runs Fair; the Capacity
        // end-to-end test checks them).
        .filter(|l| !l.contains("| *Capacity.*"))
        // Families only resource pools export (this cluster has none; `pools.rs` checks them).
        .filter(|l| !l.contains("| *Pools.*"))
        // Families only reservable queues export (this cluster has none; the reservations
        // test in crates/rm checks them).
        .filter(|l| !l.contains("| *Plans.*"))
        .filter_map(|l| l.split('`').nth(1))
        .map(str::to_string)
        .collect()
}

fn get(c: &Cluster, path: &str) -> (u16, String, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut r = agent
        .get(&format!("http://{}{path}", c.web))
        .call()
        .expect("GET");
    let kind = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let status = r.status().as_u16();
    (
        status,
        kind,
        r.body_mut().read_to_string().unwrap_or_default(),
    )
}

#[test]
fn metrics_are_valid_prometheus_text_with_the_documented_names_and_sane_values() {
    let c = Cluster::start(2, 4096, &Options::default());
    let mut d = c.dshell(
        "metrics",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-queue",
            "prod",
            "-shell_command",
            "true",
        ],
    );
    let id = c.submitted_app(&mut d);
    assert!(d.wait(MINUTE).success(), "{}", d.output());
    c.wait_app_state(&id, &["FINISHED"], MINUTE);
    // Timing figures are published on the driver's tick (100 ms).
    std::thread::sleep(Duration::from_millis(500));

    let (status, kind, text) = get(&c, "/metrics");
    assert_eq!(status, 200, "{text}");
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let e = parse(&text).unwrap_or_else(|err| panic!("{err}\n{text}"));

    let exposed: BTreeSet<String> = e.kind.keys().cloned().collect();
    let documented = documented();
    assert_eq!(
        exposed, documented,
        "/metrics and crates/rm/METRICS.md must list the same families"
    );
    for (name, kind) in &e.kind {
        assert_eq!(
            name.ends_with("_total"),
            kind == "counter",
            "{name}: counters (and only they) end in _total"
        );
        assert!(
            e.samples.iter().any(|s| &s.name == name),
            "{name} has no sample"
        );
    }

    let mem = ("resource", "memory-mb");
    assert_eq!(e.value("weft_cluster_capacity", &[mem]), 8192.0);
    assert_eq!(
        e.value("weft_cluster_capacity", &[("resource", "vcores")]),
        16.0
    );
    assert_eq!(e.value("weft_cluster_allocated", &[mem]), 0.0);
    assert_eq!(e.value("weft_cluster_available", &[mem]), 8192.0);
    assert_eq!(e.value("weft_cluster_nodes", &[("state", "RUNNING")]), 2.0);
    assert_eq!(e.value("weft_cluster_nodes", &[("state", "LOST")]), 0.0);
    assert_eq!(e.value("weft_cluster_apps", &[("state", "FINISHED")]), 1.0);
    assert_eq!(e.value("weft_cluster_apps", &[("state", "RUNNING")]), 0.0);
    assert_eq!(e.value("weft_cluster_containers_running", &[]), 0.0);
    // The AM and two shell containers.
    assert!(e.value("weft_scheduler_allocations_total", &[]) >= 3.0);

    let prod = ("queue", "root.prod");
    let root = ("queue", "root");
    assert_eq!(e.value("weft_queue_weight", &[prod]), 1.0);
    assert_eq!(
        e.value("weft_queue_steady_fair_share", &[root, mem]),
        8192.0
    );
    let steady = e.value("weft_queue_steady_fair_share", &[prod, mem]);
    assert!(steady > 0.0 && steady < 8192.0, "{steady}");
    assert_eq!(e.value("weft_queue_usage", &[prod, mem]), 0.0);
    assert_eq!(e.value("weft_queue_apps_running", &[prod]), 0.0);
    assert_eq!(
        e.value("weft_queue_max_resources", &[prod, mem]),
        f64::INFINITY
    );

    let kinds = |name: &str| -> BTreeMap<String, f64> {
        e.samples
            .iter()
            .filter(|s| s.name == name)
            .map(|s| (s.labels["kind"].clone(), s.value))
            .collect()
    };
    let calls = kinds("weft_scheduler_calls_total");
    let seconds = kinds("weft_scheduler_call_seconds_total");
    // The AM's Allocates come over the framed transport or the stream when the RM offers them
    // (dshell's AM takes them; both answer through `allocate_stream::answer`), else as unary
    // calls: either kind counts as the AM's.
    let am_allocate = ["allocate_stream.answer", "am_service.allocate"]
        .into_iter()
        .find(|kind| calls.contains_key(*kind))
        .unwrap_or("am_service.allocate");
    for kind in ["update", "tracker.node_heartbeat", am_allocate] {
        assert!(
            calls.get(kind).is_some_and(|n| *n >= 1.0),
            "{kind}: {calls:?}"
        );
        assert!(
            seconds.get(kind).is_some_and(|s| *s > 0.0),
            "{kind}: {seconds:?}"
        );
    }
    assert!(
        calls.keys().any(|k| k.ends_with("submit")),
        "the submission was counted: {calls:?}"
    );
    let update = e.value("weft_scheduler_update_duration_seconds", &[]);
    assert!(update > 0.0 && update < 1.0, "{update}");
    assert!(e.value("weft_store_writes_total", &[]) >= 1.0);
    // The harness verifies the scheduler's state every 200 ms: it ran during the app's life
    // and never found drift.
    assert!(e.value("weft_scheduler_verifications_total", &[]) >= 1.0);
    assert_eq!(e.value("weft_scheduler_verify_drift", &[]), 0.0);
    assert_eq!(e.value("weft_scheduler_verify_drift_total", &[]), 0.0);
    let verify = e.value("weft_scheduler_verify_duration_seconds", &[]);
    assert!((0.0..1.0).contains(&verify), "{verify}");

    // Counters only grow.
    std::thread::sleep(Duration::from_millis(1200));
    let (_, _, later) = get(&c, "/metrics");
    let later = parse(&later).expect("second scrape");
    assert!(
        later.value("weft_scheduler_calls_total", &[("kind", "update")]) > calls["update"],
        "the periodic update keeps running"
    );
}

#[test]
fn health_probes_answer() {
    let c = Cluster::rm_only(&Options::default());
    let (status, _, body) = get(&c, "/healthz");
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, _, body) = get(&c, "/readyz");
    assert_eq!((status, body.as_str()), (200, "ready"));
    let (status, _, body) = get(&c, "/isActive");
    assert_eq!((status, body.as_str()), (200, "I am Active!"));
    let (status, _, body) = get(&c, "/cluster");
    assert_eq!(status, 200, "{body}");
}

#[test]
fn the_parser_rejects_malformed_exposition() {
    assert!(parse("# HELP a x\n# TYPE a gauge\na 1\n").is_ok());
    assert!(parse("a 1\n").is_err(), "sample without TYPE");
    assert!(parse("# HELP a x\n# TYPE a gauge\na{b=\"c} 1\n").is_err());
    assert!(parse("# HELP a x\n# TYPE a gauge\na one\n").is_err());
    assert!(parse("# HELP a x\n# TYPE a gauge\n1a 1\n").is_err());
    assert!(parse("# HELP a x\n# TYPE a weird\na 1\n").is_err());
    let e = parse("# HELP a x\n# TYPE a gauge\na{q=\"r\\\"s\",t=\"u\"} +Inf\n").expect("escapes");
    assert_eq!(e.samples[0].labels["q"], "r\"s");
    assert_eq!(e.samples[0].value, f64::INFINITY);
}
