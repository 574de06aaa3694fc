//! The sans-IO rule, checked mechanically: the scheduler core (and the crates it builds on) never
//! reads a clock, spawns a thread, uses async, or touches files and sockets. And the scheduler
//! crate's layering: the shared objects never use a scheduler's rules, and one scheduler's
//! rules never use another's.

use std::path::Path;

const FORBIDDEN: &[(&str, &str)] = &[
    ("Instant::now", "reads the clock"),
    ("SystemTime", "reads the clock"),
    ("std::thread", "spawns threads"),
    ("thread::spawn", "spawns threads"),
    ("async fn", "uses async"),
    (".await", "uses async"),
    ("tokio", "uses an async runtime"),
    ("std::fs", "touches files"),
    ("File::open", "touches files"),
    ("std::net", "touches sockets"),
    ("rand::thread_rng", "seeds randomness from entropy"),
    ("HashMap", "may iterate in a random order (use BTreeMap)"),
    ("HashSet", "may iterate in a random order (use BTreeSet)"),
];

fn check_dir(dir: &Path, problems: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        problems.push(format!("cannot read {}", dir.display()));
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            check_dir(&path, problems);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (lineno, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for (needle, why) in FORBIDDEN {
                    if code.contains(needle) {
                        problems.push(format!(
                            "{}:{}: `{}` {}",
                            path.display(),
                            lineno + 1,
                            needle,
                            why
                        ));
                    }
                }
            }
        }
    }
}

#[test]
fn sans_io_crates_do_no_io_and_read_no_clock() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    for name in ["types", "config", "sched"] {
        check_dir(&crates.join(name).join("src"), &mut problems);
        let manifest =
            std::fs::read_to_string(crates.join(name).join("Cargo.toml")).unwrap_or_default();
        if manifest.contains("tokio") {
            problems.push(format!("crates/{name}/Cargo.toml depends on tokio"));
        }
    }
    // The scheduler core's facade is apart from its engine source (`crates/sched/facade`).
    check_dir(&crates.join("sched").join("facade"), &mut problems);
    assert!(
        problems.is_empty(),
        "sans-IO violations:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_catches_a_violation() {
    let dir = std::env::temp_dir().join(format!("weft-tidy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("bad.rs"),
        "fn f() { let _ = std::time::Instant::now(); }\n",
    )
    .expect("write");
    let mut problems = Vec::new();
    check_dir(&dir, &mut problems);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(problems.len(), 1, "{problems:?}");
}

/// Each scheduler's rules module (a directory under `crates/sched/src`).
const RULE_MODULES: &[&str] = &["fair", "fifo", "capacity"];

/// Modules (files or directories under `crates/sched/src`) that every scheduler shares.
const SHARED_MODULES: &[&str] = &[
    "api.rs",
    "engine.rs",
    "rules.rs",
    "verify.rs",
    "objects",
    "queues",
    "order",
    "walk",
];

/// Every line of `path` (a file, or every `.rs` file below a directory) that names one of the
/// `forbidden` rule modules, as `file:line: module`.
fn imports_of(path: &Path, forbidden: &[&str], out: &mut Vec<String>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            out.push(format!("cannot read {}", path.display()));
            return;
        };
        for entry in entries.flatten() {
            imports_of(&entry.path(), forbidden, out);
        }
        return;
    }
    if path.extension().is_none_or(|e| e != "rs") {
        return;
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for (lineno, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for module in forbidden {
            if code.contains(&format!("crate::{module}")) {
                out.push(format!(
                    "{}:{}: uses crate::{module}",
                    path.display(),
                    lineno + 1
                ));
            }
        }
    }
}

#[test]
fn shared_objects_never_use_a_schedulers_rules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for shared in SHARED_MODULES {
        let path = src.join(shared);
        assert!(
            path.exists(),
            "{} is listed as shared but missing",
            path.display()
        );
        imports_of(&path, RULE_MODULES, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "shared modules reaching into a scheduler's rules:\n{}",
        problems.join("\n")
    );
}

#[test]
fn rule_modules_never_use_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for rules in RULE_MODULES {
        let others: Vec<&str> = RULE_MODULES
            .iter()
            .copied()
            .filter(|m| m != rules)
            .collect();
        imports_of(&src.join(rules), &others, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "one scheduler's rules using another's:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_layering_check_catches_a_violation() {
    let dir = std::env::temp_dir().join(format!("weft-tidy-layers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("walk.rs"),
        "use crate::fair::policy::compare; // a shared module using Fair's comparator\n",
    )
    .expect("write");
    let mut problems = Vec::new();
    imports_of(&dir, RULE_MODULES, &mut problems);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(problems.len(), 1, "{problems:?}");
}
