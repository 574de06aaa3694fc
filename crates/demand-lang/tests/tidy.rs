//! The demand language is pure (spec §3.7): no files, sockets, threads, async or clock.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::thread",
    "std::process",
    "Instant::now",
    "SystemTime",
    "tokio",
    "async fn",
];

fn check(dir: &Path, problems: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            check(&path, problems);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (line, content) in text.lines().enumerate() {
                for needle in FORBIDDEN {
                    if content.contains(needle) {
                        problems.push(format!("{}:{}: {needle}", path.display(), line + 1));
                    }
                }
            }
        }
    }
}

#[test]
fn the_parser_does_no_io_and_reads_no_clock() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    check(&src, &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .unwrap_or_default();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or_default();
    for line in deps.lines().filter(|l| l.contains('=')) {
        let name = line.split('=').next().unwrap_or_default().trim();
        assert!(
            [
                "weft-types.workspace",
                "serde_json.workspace",
                "thiserror.workspace"
            ]
            .contains(&name),
            "unexpected dependency {name}"
        );
    }
}
