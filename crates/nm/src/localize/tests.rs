use std::io::Cursor;

use super::*;

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in entries {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(0o755);
        if name.ends_with('/') {
            w.add_directory(*name, options).unwrap();
        } else {
            w.start_file(*name, options).unwrap();
            w.write_all(data).unwrap();
        }
    }
    w.finish().unwrap().into_inner()
}

/// A tar whose names are written raw into the header (the builder refuses hostile ones).
fn tar_of(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data, kind) in entries {
        let mut h = tar::Header::new_old();
        let raw = &mut h.as_old_mut().name;
        raw[..name.len()].copy_from_slice(name.as_bytes());
        h.set_entry_type(*kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    format!("file://{}", path.display())
}

fn archive(url: String) -> LocalResourceSpec {
    LocalResourceSpec {
        url,
        kind: ResourceKind::Archive,
        pattern: None,
        timestamp: None,
    }
}

#[test]
fn a_zip_archive_unpacks_under_its_link_name() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(
        dir.path(),
        "conf.ZIP",
        &zip_of(&[
            ("__hadoop_conf__/", b""),
            ("__hadoop_conf__/core-site.xml", b"<configuration/>"),
            ("run.sh", b"#!/bin/sh\n"),
        ]),
    );
    let dest = dir.path().join("__spark_conf__");
    localize(&archive(url), &dest, &Limits::default()).unwrap();
    assert_eq!(
        fs::read_to_string(dest.join("__hadoop_conf__/core-site.xml")).unwrap(),
        "<configuration/>"
    );
    let mode = fs::metadata(dest.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn a_file_resource_is_copied_even_when_it_is_a_zip() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = zip_of(&[("a.txt", b"a")]);
    let url = write(dir.path(), "app.zip", &bytes);
    let dest = dir.path().join("linked.zip");
    localize(&LocalResourceSpec::file(url), &dest, &Limits::default()).unwrap();
    assert_eq!(fs::read(&dest).unwrap(), bytes);
}

#[test]
fn an_archive_without_a_known_extension_is_copied_as_is() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(dir.path(), "data.bin", b"raw");
    let dest = dir.path().join("data");
    localize(&archive(url), &dest, &Limits::default()).unwrap();
    assert_eq!(fs::read(&dest).unwrap(), b"raw");
}

#[test]
fn tar_and_tgz_archives_unpack() {
    let dir = tempfile::tempdir().unwrap();
    let tar = tar_of(&[
        ("lib/", b"", tar::EntryType::Directory),
        ("lib/x.py", b"print(1)\n", tar::EntryType::Regular),
    ]);
    let url = write(dir.path(), "env.tar", &tar);
    let dest = dir.path().join("env");
    localize(&archive(url), &dest, &Limits::default()).unwrap();
    assert_eq!(
        fs::read_to_string(dest.join("lib/x.py")).unwrap(),
        "print(1)\n"
    );

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    let url = write(dir.path(), "env.tgz", &gz.finish().unwrap());
    let dest = dir.path().join("env2");
    localize(&archive(url), &dest, &Limits::default()).unwrap();
    assert!(dest.join("lib/x.py").is_file());
}

#[test]
fn a_pattern_jar_unpacks_only_matching_entries_and_keeps_the_jar() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(
        dir.path(),
        "job.jar",
        &zip_of(&[
            ("classes/A.class", b"A"),
            ("lib/dep.jar", b"D"),
            ("META-INF/MANIFEST.MF", b"M"),
        ]),
    );
    let dest = dir.path().join("job.jar-link");
    let spec = LocalResourceSpec {
        url,
        kind: ResourceKind::Pattern,
        pattern: Some("(?:classes/|lib/).*".into()),
        timestamp: None,
    };
    localize(&spec, &dest, &Limits::default()).unwrap();
    assert!(dest.join("classes/A.class").is_file());
    assert!(dest.join("lib/dep.jar").is_file());
    assert!(!dest.join("META-INF").exists());
    assert!(dest.join("job.jar").is_file());
}

#[test]
fn entries_that_escape_are_refused() {
    for name in ["../evil.txt", "/abs/evil.txt", "a/../../evil.txt"] {
        let dir = tempfile::tempdir().unwrap();
        let url = write(dir.path(), "bad.zip", &zip_of(&[(name, b"x")]));
        let err = localize(&archive(url), &dir.path().join("out"), &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("leaves the archive"), "{name}: {err}");
        assert!(!dir.path().join("evil.txt").exists());

        let url = write(
            dir.path(),
            "bad.tar",
            &tar_of(&[(name, b"x", tar::EntryType::Regular)]),
        );
        let err = localize(&archive(url), &dir.path().join("out2"), &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("leaves the archive") || err.contains("not a readable tar"),
            "{name}: {err}"
        );
        assert!(!dir.path().join("evil.txt").exists());
    }
}

#[test]
fn links_inside_archives_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(
        dir.path(),
        "links.tar",
        &tar_of(&[("etc", b"", tar::EntryType::Symlink)]),
    );
    let err = localize(&archive(url), &dir.path().join("out"), &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("link"), "{err}");
}

#[test]
fn bombs_stop_at_the_byte_and_entry_bounds() {
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB of zeros deflates to about a kilobyte.
    let zeros = vec![0u8; 1 << 20];
    let url = write(dir.path(), "bomb.zip", &zip_of(&[("zeros", &zeros)]));
    let small = Limits {
        max_bytes: 64 * 1024,
        ..Limits::default()
    };
    let err = localize(&archive(url.clone()), &dir.path().join("out"), &small)
        .unwrap_err()
        .to_string();
    assert!(err.contains("more than 65536 bytes"), "{err}");
    let written = fs::metadata(dir.path().join("out/zeros")).unwrap().len();
    assert!(written <= 64 * 1024 + 1, "{written}");

    let many: Vec<(String, &[u8])> = (0..20).map(|i| (format!("f{i}"), &b"x"[..])).collect();
    let refs: Vec<(&str, &[u8])> = many.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let url = write(dir.path(), "many.zip", &zip_of(&refs));
    let few = Limits {
        max_entries: 10,
        ..Limits::default()
    };
    let err = localize(&archive(url), &dir.path().join("out2"), &few)
        .unwrap_err()
        .to_string();
    assert!(err.contains("more than the 10 allowed"), "{err}");
    assert!(!dir.path().join("out2/f0").exists());
}

#[test]
fn garbage_is_not_an_archive() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(dir.path(), "junk.zip", b"PK\x03\x04 not really");
    assert!(localize(&archive(url), &dir.path().join("o"), &Limits::default()).is_err());
    let url = write(dir.path(), "junk.tgz", b"\x1f\x8b garbage");
    assert!(localize(&archive(url), &dir.path().join("o2"), &Limits::default()).is_err());
}

#[test]
fn a_source_changed_since_the_application_saw_it_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(dir.path(), "app.jar", b"v1");
    let seen = modified_ms(&dir.path().join("app.jar")).unwrap();
    let mut spec = LocalResourceSpec::file(url);
    spec.timestamp = Some(seen);
    localize(&spec, &dir.path().join("same"), &Limits::default()).unwrap();
    spec.timestamp = Some(seen - 1000);
    let err = localize(&spec, &dir.path().join("changed"), &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("changed on the source file system"), "{err}");
    assert!(!dir.path().join("changed").exists());
}

#[test]
fn devices_are_not_copied() {
    let dir = tempfile::tempdir().unwrap();
    let err = localize(
        &LocalResourceSpec::file("file:///dev/zero"),
        &dir.path().join("zeros"),
        &Limits::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("regular file"), "{err}");
}

#[test]
fn contained_paths() {
    assert_eq!(contained_path("a/./b"), Some(PathBuf::from("a/b")));
    assert_eq!(contained_path("./"), None);
    assert_eq!(contained_path("a/../b"), None);
    assert_eq!(contained_path("/a"), None);
    assert_eq!(contained_path("a\0b"), None);
}

#[test]
fn resources_accept_paths_and_file_urls_only() {
    assert_eq!(resource_path("file:///tmp").unwrap(), PathBuf::from("/tmp"));
    assert_eq!(resource_path("/tmp").unwrap(), PathBuf::from("/tmp"));
    assert!(resource_path("hdfs://nn/x").is_err());
    assert!(resource_path("file://host/tmp").is_err());
    assert!(resource_path("/definitely/not/here").is_err());
}
