//! The SLS readers on Hadoop's own sample files, and the presets against the config crate.

use std::collections::BTreeSet;

use weft_sim::presets::{preset, MeituanParams};
use weft_sim::sls::{nodes_from_trace, parse_nodes_file, parse_sls_trace, SlsOptions};
use weft_sim::synth::{parse_synth, SynthOptions};
use weft_sim::workload::{AppSource, Workload};
use weft_types::{Duration, Resource, Time};

const INPUTSLS: &str = include_str!("data/inputsls.json");
const SYN: &str = include_str!("data/syn.json");
const NODES: &str = include_str!("data/nodes.json");

#[test]
fn inputsls_has_two_jobs_five_maps_two_queues_three_hosts() {
    let apps = parse_sls_trace(INPUTSLS, "inputsls.json", &SlsOptions::default()).unwrap();
    assert_eq!(apps.len(), 2);
    let tasks: u64 = apps.iter().map(|a| a.task_count()).sum();
    assert_eq!(tasks, 5);
    let queues: BTreeSet<_> = apps.iter().filter_map(|a| a.queue.as_deref()).collect();
    assert_eq!(queues, BTreeSet::from(["sls_queue_1", "sls_queue_2"]));
    assert_eq!(apps[0].name, "job_1");
    assert_eq!(apps[1].submit, Time(105_204));
    assert_eq!(apps[0].user, "default");
    assert_eq!(apps[0].am, Some(Resource::new(1024, 1)));
    // Maps only: one stage; every task is distinct (different host or duration).
    assert_eq!(apps[0].stages.len(), 1);
    let g = &apps[0].stages[0].groups;
    assert_eq!(g.len(), 3);
    assert_eq!(g[0].duration, Duration(23_707 - 6_664));
    assert_eq!(g[0].priority, 20);
    assert_eq!(g[0].host.as_deref(), Some("node1"));
    assert_eq!(g[0].rack.as_deref(), Some("/default-rack"));

    let nodes = nodes_from_trace(&apps, Resource::new(10240, 10));
    let hosts: Vec<_> = nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts, ["node1", "node2", "node3"]);
    assert!(nodes.iter().all(|n| n.rack == "/default-rack"));
    assert!(nodes
        .iter()
        .all(|n| n.capability == Resource::new(10240, 10)));
}

#[test]
fn nodes_file_has_19_nodes_in_5_racks() {
    let nodes = parse_nodes_file(NODES, "nodes.json", Resource::new(10240, 10)).unwrap();
    assert_eq!(nodes.len(), 19);
    let racks: BTreeSet<_> = nodes.iter().map(|n| n.rack.as_str()).collect();
    assert_eq!(racks.len(), 5);
    assert!(racks.contains("/rack1"));
    assert_eq!(nodes[18].host, "node19");
    assert_eq!(nodes[18].rack, "/rack5");
}

#[test]
fn syn_samples_ten_jobs_on_twenty_nodes_deterministically() {
    let opts = SynthOptions::default();
    let (apps, nodes) = parse_synth(SYN, "syn.json", &opts).unwrap();
    assert_eq!(apps.len(), 10);
    assert_eq!(nodes.len(), 20);
    let racks: BTreeSet<_> = nodes.iter().map(|n| n.rack.as_str()).collect();
    assert_eq!(racks.len(), 5);
    let hosts: BTreeSet<_> = nodes.iter().map(|n| n.host.as_str()).collect();
    for a in &apps {
        assert_eq!(a.queue.as_deref(), Some("sls_queue_1"));
        assert_eq!(a.user, "foobar");
        // time_distribution: weight only on [1 s, 60 s).
        assert!((1_000..60_000).contains(&a.submit.0), "{:?}", a.submit);
        assert_eq!(a.stages.len(), 2, "{}", a.name);
        for g in &a.stages[0].groups {
            assert_eq!(g.resource, Resource::new(1024, 1));
            assert!(hosts.contains(g.host.as_deref().unwrap()));
        }
        for g in &a.stages[1].groups {
            assert_eq!(g.resource, Resource::new(2048, 2));
        }
        let maps: u32 = a.stages[0].groups.iter().map(|g| g.count).sum();
        assert!((1..=12).contains(&maps), "{maps}");
    }
    assert!(apps.windows(2).all(|w| w[0].submit <= w[1].submit));
    assert_eq!(apps[0].name, "class_1_000000");
    // Map times: log-normal around 10 s.
    let times: Vec<u64> = apps
        .iter()
        .flat_map(|a| a.stages[0].groups.iter())
        .map(|g| g.duration.as_millis())
        .collect();
    let mean = times.iter().sum::<u64>() as f64 / times.len() as f64;
    assert!((7_000.0..13_000.0).contains(&mean), "{mean}");

    let again = parse_synth(SYN, "syn.json", &opts).unwrap();
    assert_eq!(apps, again.0);
    assert_eq!(nodes, again.1);
}

#[test]
fn broken_traces_name_file_line_and_field() {
    let opts = SlsOptions::default();
    let broken = INPUTSLS.replacen("\"job.start.ms\": 105204", "\"job.start.ms\": \"abc\"", 1);
    let e = parse_sls_trace(&broken, "inputsls.json", &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "inputsls.json: job 2 (line 37): job.start.ms: expected a number, found \"abc\""
    );

    let broken = INPUTSLS.replacen("\"container.end.ms\": 21593", "\"container.end.ms\": 1", 1);
    let e = parse_sls_trace(&broken, "inputsls.json", &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "inputsls.json: job 1 (line 20): job.tasks[1].container.end.ms: \
         the task ends at 1, not after its start at 6665"
    );

    let broken = INPUTSLS.replacen("\"job.tasks\": [", "\"job.tasks\": [}", 1);
    let e = parse_sls_trace(&broken, "inputsls.json", &opts).unwrap_err();
    assert!(e.to_string().starts_with("inputsls.json:8:"), "{e}");
    assert!(e.to_string().contains("invalid JSON"), "{e}");

    let broken = NODES.replacen(
        "\"node\": \"node6\"",
        "\"node\": \"node6\", \"vcores\": -2",
        1,
    );
    let e = parse_nodes_file(&broken, "nodes.json", Resource::new(1, 1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "nodes.json: rack entry 2 (line 25): nodes[1].vcores: must not be negative, found -2"
    );

    let broken = SYN.replacen("\"mtasks_avg\": 5", "\"mtasks_avg\": [5]", 1);
    let e = parse_synth(&broken, "syn.json", &SynthOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "syn.json:18: workloads[0].job_classes[0].mtasks_avg: expected a number, found [5]"
    );
}

fn check_config(w: &Workload) -> usize {
    let xml = w.allocations_xml.as_deref().unwrap();
    let (alloc, warnings) = weft_config::alloc_file::parse_allocations(xml, &w.resource_types)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(alloc.queue_max_am_share_default, -1.0);
    let pairs = w.properties.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let (props, warnings) =
        weft_config::site::from_pairs(pairs).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(props.assign_multiple);
    assert!(!props.dynamic_max_assign);
    assert_eq!(props.max_assign, -1);
    assert_eq!(props.update_interval_ms, 500);
    // Every queue apps are sent to is a declared leaf.
    let leaves: Vec<&String> = alloc
        .queues
        .keys()
        .filter(|k| k.matches('.').count() == 2)
        .collect();
    if let AppSource::ClosedLoop(cl) = &w.apps {
        assert!(cl.queues.iter().all(|q| alloc.queues.contains_key(q)));
    }
    leaves.len()
}

#[test]
fn meituan_at_full_scale() {
    let w = preset("meituan", 1.0, 42).unwrap();
    assert_eq!(w.nodes.len(), 12_000);
    assert_eq!(w.nodes[0].capability, Resource::new(409_600, 100));
    let racks: BTreeSet<_> = w.nodes.iter().map(|n| n.rack.as_str()).collect();
    assert_eq!(racks.len(), 300);
    let hosts: BTreeSet<_> = w.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts.len(), 12_000);
    assert_eq!(w.heartbeat_interval, Duration::from_secs(1));
    assert_eq!(w.update_interval, Duration::from_millis(500));
    assert_eq!(w.end, Some(Time(120_000)));
    let AppSource::ClosedLoop(cl) = &w.apps else {
        panic!("meituan is a closed loop");
    };
    assert_eq!(cl.concurrent, 10_000);
    assert_eq!(cl.queues.len(), 2_000);
    assert_eq!(cl.container, Resource::new(4096, 1));
    assert_eq!(cl.task_duration_ms, (40_000, 40_000));
    // Demand above capacity from the start: each app wants more than its ~120-container share.
    let capacity = 12_000 * 100 / 10_000;
    assert!(cl.tasks_per_app.0 > capacity);
    let parents: BTreeSet<_> = cl
        .queues
        .iter()
        .map(|q| q.split('.').nth(1).unwrap())
        .collect();
    assert_eq!(parents.len(), 50);
    assert_eq!(check_config(&w), 2_000);
}

#[test]
fn meituan_at_five_percent() {
    let w = preset("meituan", 0.05, 42).unwrap();
    assert_eq!(w.nodes.len(), 600);
    let AppSource::ClosedLoop(cl) = &w.apps else {
        panic!("meituan is a closed loop");
    };
    assert_eq!(cl.concurrent, 500);
    assert_eq!(cl.queues.len(), 100);
    assert_eq!(check_config(&w), 100);
    assert_eq!(MeituanParams::full().scaled(0.05).parents, 3);
}

#[test]
fn small_preset_is_a_mixed_trace() {
    let w = preset("small", 1.0, 1).unwrap();
    assert_eq!(w.nodes.len(), 100);
    assert_eq!(check_config(&w), 20);
    let AppSource::Trace(apps) = &w.apps else {
        panic!("small is a trace");
    };
    assert_eq!(apps.len(), 200);
    let sizes: BTreeSet<_> = apps
        .iter()
        .flat_map(|a| a.stages.iter().flat_map(|s| s.groups.iter()))
        .map(|g| g.resource)
        .collect::<Vec<_>>()
        .into_iter()
        .map(|r| (r.memory_mb(), r.vcores()))
        .collect();
    assert!(sizes.len() > 5, "{sizes:?}");
    assert!(apps.windows(2).all(|p| p[0].submit <= p[1].submit));
    let again = preset("small", 1.0, 1).unwrap();
    let AppSource::Trace(again) = &again.apps else {
        unreachable!()
    };
    assert_eq!(apps, again);
    let w = preset("small", 0.05, 1).unwrap();
    assert_eq!(w.nodes.len(), 5);
}
