//! The sans-IO rule for the RM core, checked mechanically: no clock, threads, async, files,
//! sockets or hash-ordered maps in `src/`. The one exception is `id_map.rs`, whose maps have a
//! fixed hasher (or, for the node ids NMs choose, `NameMap`, a hasher keyed by the RM's
//! secret, never iterated) and hand out their entries in hash order only through methods named
//! `unordered`, so that no output can follow a hash order unnoticed.

use std::path::Path;

/// The module allowed to name a hash map (it wraps them for lookups by id, and by node id
/// under a secret hash key: one place to review what may follow a hash order).
const HASH_MAP_MODULE: &str = "id_map.rs";

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
            let hash_maps_allowed = path.file_name().is_some_and(|f| f == HASH_MAP_MODULE);
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for needle in FORBIDDEN {
                    let hash_map = needle.starts_with("Hash");
                    if code.contains(needle) && !(hash_map && hash_maps_allowed) {
                        problems.push(format!("{}:{}: {needle}", path.display(), i + 1));
                    }
                }
            }
        }
    }
}

#[test]
fn rm_core_is_sans_io() {
    let mut problems = Vec::new();
    scan(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut problems,
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
