//! `weft-fuzz [TARGET|all] [SECONDS] [SEED]`: runs fuzz targets for longer than the test does,
//! printing executions and crashes; exits 1 if any target crashed (the inputs are written to
//! `fuzz-crash-<target>-<n>.bin` in the current directory).

use std::time::Duration;

use weft_fuzz::targets::{run, TARGETS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("all", String::as_str);
    let seconds: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let names: Vec<&str> = if which == "all" {
        TARGETS.to_vec()
    } else {
        vec![which]
    };
    let mut crashed = false;
    for name in names {
        let Some(report) = run(name, Duration::from_secs(seconds), seed) else {
            eprintln!("unknown target '{name}'; targets: {}", TARGETS.join(", "));
            std::process::exit(2);
        };
        println!(
            "{}: {} executions, {} crashes",
            report.target,
            report.executions,
            report.crashes.len()
        );
        for (i, crash) in report.crashes.iter().enumerate() {
            crashed = true;
            let file = format!("fuzz-crash-{name}-{i}.bin");
            let _ = std::fs::write(&file, &crash.input);
            println!("  crash: {} (input in {file})", crash.message);
        }
    }
    if crashed {
        std::process::exit(1);
    }
}
