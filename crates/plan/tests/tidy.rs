//! The sans-IO rule for the planner, checked mechanically: no clock, threads, async, files,
//! sockets or hash-ordered maps in `src/`.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "Instant::now",
    "SystemTime",
    "std::thread",
    "async fn",
    ".await",
    "tokio",
    "std::fs",
    "std::net",
    "HashMap",
    "HashSet",
];

fn scan(dir: &Path, problems: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("src is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, problems);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("readable source");
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for needle in FORBIDDEN {
                    if code.contains(needle) {
                        problems.push(format!("{}:{}: {needle}", path.display(), i + 1));
                    }
                }
            }
        }
    }
}

#[test]
fn plan_is_sans_io() {
    let mut problems = Vec::new();
    scan(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut problems,
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
