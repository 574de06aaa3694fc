//! The RM's web UI in a real headless browser (Debian's chromium): every page renders its
//! content, the live refresh swaps in fresh HTML, and the browser logs no console message and
//! no uncaught exception. Also takes a screenshot of the scheduler page.

// Each test binary uses part of the shared harness.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::{wait_for, Cluster, Options};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

const CHROMIUM: &str = "/usr/bin/chromium";
const MINUTE: Duration = Duration::from_secs(60);
/// Virtual time each page gets: the script refreshes every 3 s, so at least two swaps.
const BUDGET_MS: u64 = 8_000;

/// Fails (never skips) when the browser is missing.
fn require_chromium() {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: run scripts/install-test-deps to install Debian's chromium"
    );
}

/// What one headless chromium run produced.
struct Run {
    /// `--dump-dom` output (the DOM after the virtual time budget).
    dom: String,
    /// chromium's own log (stderr), where console messages appear as `:CONSOLE` lines.
    log: String,
}

/// Runs chromium headless on `url` with `extra` flags in a fresh profile under `dir`;
/// kills its whole process group if it does not finish within a minute.
fn chromium(dir: &Path, name: &str, url: &str, extra: &[String]) -> Run {
    let profile = dir.join(format!("profile-{name}"));
    let out = dir.join(format!("{name}.dom.html"));
    let err = dir.join(format!("{name}.chromium.log"));
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    args.push(format!("--virtual-time-budget={BUDGET_MS}"));
    args.extend(extra.iter().cloned());
    args.push(url.to_string());
    let mut child = Command::new(CHROMIUM)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(File::create(&out).expect("dom file"))
        .stderr(File::create(&err).expect("log file"))
        .process_group(0)
        .spawn()
        .expect("start chromium");
    let pid = i32::try_from(child.id()).expect("pid");
    let finished = (0..600).find_map(|_| {
        let status = child.try_wait().expect("try_wait");
        if status.is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        status
    });
    if finished.is_none() {
        let _ = kill(Pid::from_raw(-pid), Signal::SIGKILL);
        let _ = child.wait();
        panic!(
            "chromium did not finish on {url} within a minute; log:\n{}",
            harness::read(&err)
        );
    }
    Run {
        dom: harness::read(&out),
        log: harness::read(&err),
    }
}

/// Console output and uncaught exceptions in chromium's log. Headless chromium logs every
/// console message (log, warn and error alike) as `INFO:CONSOLE:<line>] "<text>", source: ...`
/// and an uncaught exception as such a line whose text starts with `Uncaught`; the UI's script
/// logs nothing, so any of them is a problem.
fn console_problems(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

fn assert_clean(run: &Run, url: &str) {
    let problems = console_problems(&run.log);
    assert!(
        problems.is_empty(),
        "the browser logged console messages on {url}:\n{}",
        problems.join("\n")
    );
}

/// The number of live refreshes the page's script recorded on `<body data-refreshed="N">`.
fn refreshes(dom: &str) -> u32 {
    dom.split("data-refreshed=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The `<tr>` of the apps table that mentions `needle`.
fn row_of<'a>(dom: &'a str, needle: &str) -> &'a str {
    let at = dom
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in the DOM"));
    let start = dom[..at].rfind("<tr").expect("row start");
    let end = at + dom[at..].find("</tr>").expect("row end");
    &dom[start..end]
}

fn http_status(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut r = agent.get(url).call().expect("GET");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

fn post_json(url: &str, body: &serde_json::Value) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut r = agent.post(url).send_json(body).expect("POST");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// A name that would run script (and so log to the console) if a page forgot to escape it.
const HOSTILE_NAME: &str = "<img src=x onerror=\"console.error('unescaped')\">ui-test";

#[test]
fn every_page_renders_refreshes_live_and_logs_nothing_to_the_console() {
    require_chromium();
    let c = Cluster::start(2, 4096, &Options::default());
    let base = format!("http://{}", c.web);

    let mut quick = c.dshell(
        "quick",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-appname",
            HOSTILE_NAME,
            "-shell_command",
            "echo hello",
        ],
    );
    let finished = c.submitted_app(&mut quick);
    assert!(quick.wait(MINUTE).success(), "{}", quick.output());
    c.wait_app_state(&finished, &["FINISHED"], MINUTE);

    let mut long = c.dshell(
        "long",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "512",
            "-queue",
            "prod",
            "-shell_command",
            "sleep 300",
        ],
    );
    let running = c.submitted_app(&mut long);
    c.wait_app_state(&running, &["RUNNING"], MINUTE);
    wait_for(MINUTE, "the long app's containers to run", || {
        (c.app(&running)["runningContainers"].as_u64() >= Some(3)).then_some(())
    });
    let node = c.nms[0].node_id.clone();
    // A demand whose queue would run script if the demands page forgot to escape it.
    let demand = serde_json::json!({"queue": HOSTILE_NAME, "demands": [{"DemandID": 1,
        "ResourceRequest": {"capability": {"memory": 128, "vCores": 1}, "num-containers": 3}}]});
    let (status, body) = post_json(
        &format!("{base}/ws/v1/cluster/demands?user.name=alice"),
        &demand,
    );
    assert_eq!(status, 202, "{body}");

    let dir = c.path("browser");
    std::fs::create_dir_all(&dir).expect("browser dir");
    let pages: Vec<(&str, String, Vec<String>)> = vec![
        (
            "overview",
            "/cluster".into(),
            vec![
                "Cluster overview".into(),
                "id=\"apps-by-state\"".into(),
                "id=\"nodes-by-state\"".into(),
                running.clone(),
                finished.clone(),
            ],
        ),
        (
            "scheduler",
            "/cluster/scheduler".into(),
            vec![
                "data-queue=\"root\"".into(),
                "data-queue=\"root.prod\"".into(),
                "data-queue=\"root.default\"".into(),
                "data-queue=\"root.dev\"".into(),
                "class=\"mark fair\"".into(),
                "class=\"mark steady\"".into(),
                "class=\"fill".into(),
                "<th>Preemptable</th>".into(),
                running.clone(),
            ],
        ),
        (
            "apps",
            "/cluster/apps".into(),
            vec![
                running.clone(),
                finished.clone(),
                "id=\"text-filter\"".into(),
                "&lt;img src=x".into(),
            ],
        ),
        (
            "app",
            format!("/cluster/app/{running}"),
            vec![
                running.clone(),
                "root.prod".into(),
                "id=\"attempts\"".into(),
                "id=\"containers\"".into(),
                "/ws/v1/node/containerlogs/container_".into(),
                "<dt>Containers preempted</dt><dd>0 non-AM · 0 AM</dd>".into(),
            ],
        ),
        (
            // A finished app still lists every container, each with its log links.
            "app-finished",
            format!("/cluster/app/{finished}"),
            (1..=3)
                .map(|n| {
                    let cid = finished.replacen("application_", "container_", 1);
                    format!("/ws/v1/node/containerlogs/{cid}_01_{n:06}/stdout")
                })
                .chain(["COMPLETE".to_string()])
                .collect(),
        ),
        (
            "nodes",
            "/cluster/nodes".into(),
            vec![node.clone(), "RUNNING".into(), "Node Labels".into()],
        ),
        (
            // No pools here: DEFAULT holds both NMs.
            "nodelabels",
            "/cluster/nodelabels".into(),
            vec![
                "&lt;DEFAULT_PARTITION&gt;".into(),
                "Exclusive Partition".into(),
                "/cluster/nodes?node.label=\">2<".into(),
                "&lt;memory:8192, vCores:16&gt;".into(),
            ],
        ),
        (
            "demands",
            "/cluster/demands".into(),
            vec![
                "/ws/v1/cluster/demands/~alice/1".into(),
                "ALLOCATING".into(),
                "eligible".into(),
                "0 / 3".into(),
                "ui-test".into(),
            ],
        ),
    ];
    for (name, path, expected) in &pages {
        let url = format!("{base}{path}");
        let run = chromium(&dir, name, &url, &["--dump-dom".to_string()]);
        for needle in expected {
            assert!(
                run.dom.contains(needle.as_str()),
                "{url}: {needle:?} is not in the DOM:\n{}",
                run.dom
            );
        }
        assert!(
            refreshes(&run.dom) >= 1,
            "{url}: the live refresh never swapped in a fragment:\n{}\nchromium log:\n{}",
            run.dom,
            run.log
        );
        assert_clean(&run, &url);
    }

    // Server-side filters: only FINISHED apps; the client-side filter box, prefilled from the
    // link, hides rows that do not match.
    let url = format!("{base}/cluster/apps?state=FINISHED");
    let run = chromium(&dir, "apps-finished", &url, &["--dump-dom".to_string()]);
    assert!(run.dom.contains(&finished), "{}", run.dom);
    assert!(!run.dom.contains(&running), "{}", run.dom);
    assert_clean(&run, &url);
    let url = format!("{base}/cluster/apps#filter={finished}");
    let run = chromium(&dir, "apps-text", &url, &["--dump-dom".to_string()]);
    assert!(
        !row_of(&run.dom, &finished).contains("hidden"),
        "{}",
        run.dom
    );
    assert!(row_of(&run.dom, &running).contains("hidden"), "{}", run.dom);
    assert_clean(&run, &url);

    // Sorting from the link: the ID column ascending puts the older (finished) app first,
    // where the default order (newest first) has it last; kept through the refreshes.
    let first_row = |dom: &str| {
        let at = |id: &str| dom.find(&format!(">{id}</a>")).unwrap_or(usize::MAX);
        at(&finished) < at(&running)
    };
    let url = format!("{base}/cluster/apps");
    let run = chromium(
        &dir,
        "apps-default-order",
        &url,
        &["--dump-dom".to_string()],
    );
    assert!(
        !first_row(&run.dom),
        "newest first by default:\n{}",
        run.dom
    );
    let url = format!("{base}/cluster/apps#sort=1");
    let run = chromium(&dir, "apps-sorted", &url, &["--dump-dom".to_string()]);
    assert!(first_row(&run.dom), "sorted by ID ascending:\n{}", run.dom);
    assert!(run.dom.contains("class=\"sorted-asc\""), "{}", run.dom);
    assert!(refreshes(&run.dom) >= 1, "{}", run.dom);
    assert_clean(&run, &url);

    // An unknown application is a 404 page in the same layout, which does not refresh.
    let (status, body) = http_status(&format!("{base}/cluster/app/application_1_9999"));
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("Application not found"), "{body}");
    assert!(!body.contains("data-src"), "{body}");
    for asset in ["/static/weft.css", "/static/weft.js"] {
        assert_eq!(http_status(&format!("{base}{asset}")).0, 200, "{asset}");
    }

    // The scheduler page as a picture, for people (and the closing note).
    let shot = dir.join("scheduler.png");
    let run = chromium(
        &dir,
        "screenshot",
        &format!("{base}/cluster/scheduler"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000".to_string(),
        ],
    );
    assert_clean(&run, "the scheduler screenshot");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(png.len() > 10_000, "the screenshot looks empty");
    if let Some(out) = std::env::var_os("WEFT_UI_SCREENSHOT_DIR") {
        let out = PathBuf::from(out);
        std::fs::create_dir_all(&out).expect("screenshot dir");
        std::fs::copy(&shot, out.join("scheduler.png")).expect("copy screenshot");
    }

    let _ = c.put(
        &format!("/ws/v1/cluster/apps/{running}/state"),
        &serde_json::json!({"state": "KILLED"}),
    );
}

/// Two leaves under root: default (40%) and prod (60%, at most 80% of the cluster).
const CAPACITY_QUEUES: &str = r#"<?xml version="1.0"?>
<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>default,prod</value></property>
  <property><name>yarn.scheduler.capacity.root.default.capacity</name><value>40</value></property>
  <property><name>yarn.scheduler.capacity.root.prod.capacity</name><value>60</value></property>
  <property><name>yarn.scheduler.capacity.root.prod.maximum-capacity</name><value>80</value></property>
  <property><name>yarn.scheduler.capacity.root.prod.maximum-am-resource-percent</name><value>0.5</value></property>
</configuration>
"#;

/// Under the Capacity Scheduler the scheduler page shows the capacity tree: each queue's bar of
/// use against its capacity and maximum capacity, the running app with its user, refreshed
/// live, fitting a 1400 px window, with nothing in the browser's console. Also its screenshot
/// (`capacity-scheduler.png` in `$WEFT_UI_SCREENSHOT_DIR`).
#[test]
fn the_capacity_scheduler_page_shows_the_capacity_tree_with_no_console_errors() {
    require_chromium();
    let opts = Options {
        capacity: Some(CAPACITY_QUEUES),
        ..Options::default()
    };
    let c = Cluster::start(2, 4096, &opts);
    let base = format!("http://{}", c.web);
    let mut long = c.dshell(
        "long",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "512",
            "-queue",
            "prod",
            "-appname",
            "nightly-sessionization",
            "-shell_command",
            "sleep 300",
        ],
    );
    let running = c.submitted_app(&mut long);
    c.wait_app_state(&running, &["RUNNING"], MINUTE);
    wait_for(MINUTE, "the long app's containers to run", || {
        (c.app(&running)["runningContainers"].as_u64() >= Some(3)).then_some(())
    });

    let dir = c.path("browser");
    std::fs::create_dir_all(&dir).expect("browser dir");
    let url = format!("{base}/cluster/scheduler");
    let run = chromium(
        &dir,
        "capacity",
        &url,
        &[
            "--dump-dom".to_string(),
            "--window-size=1400,1000".to_string(),
        ],
    );
    assert_eq!(
        overflow(&run.dom),
        Some(0),
        "the capacity page fits a 1400 px window:\n{}",
        run.dom
    );
    for needle in [
        "<b>Capacity Scheduler</b>",
        "data-queue=\"root\"",
        "data-queue=\"root.default\"",
        "data-queue=\"root.prod\"",
        "class=\"mark fair\"",
        "class=\"mark steady\"",
        "class=\"fill",
        "60.0% · 80.0%",
        "s-running",
        running.as_str(),
    ] {
        assert!(
            run.dom.contains(needle),
            "{url}: {needle:?} is not in the DOM:\n{}",
            run.dom
        );
    }
    // The prod row lists the app's user with the usage and limit.
    let prod = row_of(&run.dom, "data-queue=\"root.prod\"");
    assert!(prod.contains("class=\"user\""), "{prod}");
    assert!(
        refreshes(&run.dom) >= 1,
        "{url}: the live refresh never swapped in a fragment:\n{}\nchromium log:\n{}",
        run.dom,
        run.log
    );
    assert_clean(&run, &url);

    let shot = dir.join("capacity-scheduler.png");
    let run = chromium(
        &dir,
        "capacity-screenshot",
        &url,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000".to_string(),
        ],
    );
    assert_clean(&run, "the capacity scheduler screenshot");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    if let Some(out) = std::env::var_os("WEFT_UI_SCREENSHOT_DIR") {
        let out = PathBuf::from(out);
        std::fs::create_dir_all(&out).expect("screenshot dir");
        std::fs::copy(&shot, out.join("capacity-scheduler.png")).expect("copy screenshot");
    }
    let _ = c.put(
        &format!("/ws/v1/cluster/apps/{running}/state"),
        &serde_json::json!({"state": "KILLED"}),
    );
}

/// Queues `default` and `prod` bound to no pool (they run in DEFAULT, where the NMs are) and
/// `blue_q` bound by prefix to the pool `blue`, which lists no hosts.
const POOLED_ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<allocations>
  <resourcePools unboundQueues="defaultPartition">
    <resourcePool name="blue"/>
  </resourcePools>
  <queue name="root">
    <queue name="default"/>
    <queue name="prod"/>
    <queue name="blue_q"/>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="default" queue="default"/>
  </queuePlacementPolicy>
</allocations>
"#;

/// With resource pools the Fair scheduler page is grouped by pool (resource-pools spec §13): a
/// section for DEFAULT (both NMs, the unbound queues) and one for `blue` (no nodes, its queue),
/// each queue badged with its pool, refreshed live, fitting a 1400 px window, with nothing in
/// the browser's console.
#[test]
fn with_pools_the_scheduler_page_groups_queues_by_pool_with_no_console_errors() {
    require_chromium();
    let opts = Options {
        allocations: POOLED_ALLOCATIONS,
        ..Options::default()
    };
    let c = Cluster::start(2, 4096, &opts);
    let base = format!("http://{}", c.web);
    let dir = c.path("browser");
    std::fs::create_dir_all(&dir).expect("browser dir");
    let url = format!("{base}/cluster/scheduler");
    let run = chromium(
        &dir,
        "pools",
        &url,
        &[
            "--dump-dom".to_string(),
            "--window-size=1400,1000".to_string(),
        ],
    );
    let section = |pool: &str| -> &str {
        let needle = format!("data-pool=\"{pool}\"");
        let start = run
            .dom
            .find(&needle)
            .unwrap_or_else(|| panic!("{url}: no section for pool {pool:?}:\n{}", run.dom));
        let end = start + run.dom[start..].find("</section>").expect("section end");
        &run.dom[start..end]
    };
    let default = section("");
    assert!(default.contains("Nodes <b>2</b>"), "{default}");
    for q in ["root.default", "root.prod"] {
        assert!(
            default.contains(&format!("data-queue=\"{q}\"")),
            "{q}: {default}"
        );
    }
    assert!(!default.contains("root.blue_q"), "{default}");
    let blue = section("blue");
    assert!(blue.contains("data-queue=\"root.blue_q\""), "{blue}");
    assert!(blue.contains("class=\"tag pool\""), "{blue}");
    assert!(blue.contains("Nodes <b>0</b>"), "{blue}");
    assert_eq!(
        overflow(&run.dom),
        Some(0),
        "the pooled page fits a 1400 px window:\n{}",
        run.dom
    );
    assert!(
        refreshes(&run.dom) >= 1,
        "{url}: the live refresh never swapped in a fragment:\n{}\nchromium log:\n{}",
        run.dom,
        run.log
    );
    assert_clean(&run, &url);
}

/// The value of `<body data-overflow="N">`: how many tables (and the page itself) are wider
/// than the window, as the page's script counts them; `None` if the script did not run.
fn overflow(dom: &str) -> Option<u32> {
    dom.split("data-overflow=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|n| n.parse().ok())
}

/// Every page fits a 1400 px and a 1920 px window: no table cuts off columns (nor scrolls
/// sideways) and the page is not wider than the window, with realistic names in the tables.
/// Also takes the README's screenshots at 1400 px (copied to `$WEFT_UI_SCREENSHOT_DIR`).
#[test]
fn every_page_fits_1400_and_1920_px_windows() {
    require_chromium();
    let c = Cluster::start(2, 8192, &Options::default());
    let base = format!("http://{}", c.web);
    let mut done = c.dshell(
        "done",
        &[
            "-num_containers",
            "3",
            "-container_memory",
            "256",
            "-appname",
            "wordcount-nightly-etl-with-a-long-name",
            "-shell_command",
            "echo done",
        ],
    );
    let finished = c.submitted_app(&mut done);
    assert!(done.wait(MINUTE).success(), "{}", done.output());
    let mut running = Vec::new();
    for (name, queue, n) in [
        ("spark-sql-long-running-analytics-job", "prod", "3"),
        ("notebook", "dev", "2"),
    ] {
        let mut d = c.dshell(
            name,
            &[
                "-num_containers",
                n,
                "-container_memory",
                "512",
                "-queue",
                queue,
                "-appname",
                name,
                "-shell_command",
                "sleep 300",
            ],
        );
        running.push((c.submitted_app(&mut d), d));
    }
    for (id, _) in &running {
        c.wait_app_state(id, &["RUNNING"], MINUTE);
    }
    let app = running[0].0.clone();
    wait_for(MINUTE, "the analytics app's containers", || {
        (c.app(&app)["runningContainers"].as_u64() >= Some(4)).then_some(())
    });

    let dir = c.path("browser");
    std::fs::create_dir_all(&dir).expect("browser dir");
    let pages = [
        ("overview", "/cluster".to_string()),
        ("scheduler", "/cluster/scheduler".to_string()),
        ("apps", "/cluster/apps".to_string()),
        ("app", format!("/cluster/app/{app}")),
        ("app-finished", format!("/cluster/app/{finished}")),
        ("nodes", "/cluster/nodes".to_string()),
        ("nodelabels", "/cluster/nodelabels".to_string()),
        ("demands", "/cluster/demands".to_string()),
    ];
    let mut wide = Vec::new();
    for width in [1400, 1920] {
        for (name, path) in &pages {
            let url = format!("{base}{path}");
            let run = chromium(
                &dir,
                &format!("{name}-{width}"),
                &url,
                &[
                    "--dump-dom".to_string(),
                    format!("--window-size={width},1000"),
                ],
            );
            assert_clean(&run, &url);
            match overflow(&run.dom) {
                Some(0) => {}
                Some(n) => wide.push(format!("{url} at {width} px: {n} overflowing")),
                None => panic!(
                    "{url}: the page's script did not count overflows:\n{}",
                    run.dom
                ),
            }
        }
    }
    assert!(
        wide.is_empty(),
        "pages wider than the window:\n{}",
        wide.join("\n")
    );

    // The README's pictures.
    if let Some(out) = std::env::var_os("WEFT_UI_SCREENSHOT_DIR") {
        let out = PathBuf::from(out);
        std::fs::create_dir_all(&out).expect("screenshot dir");
        for (name, path) in [
            ("scheduler-page", "/cluster/scheduler".to_string()),
            ("apps-page", "/cluster/apps".to_string()),
            ("app-page", format!("/cluster/app/{app}")),
        ] {
            let shot = out.join(format!("{name}.png"));
            let run = chromium(
                &dir,
                &format!("shot-{name}"),
                &format!("{base}{path}"),
                &[
                    format!("--screenshot={}", shot.display()),
                    "--window-size=1400,900".to_string(),
                ],
            );
            assert_clean(&run, &path);
            let png = std::fs::read(&shot).expect("screenshot written");
            assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
        }
    }
    for (id, _) in &running {
        let _ = c.put(
            &format!("/ws/v1/cluster/apps/{id}/state"),
            &serde_json::json!({"state": "KILLED"}),
        );
    }
}

/// A refused allocation file is on every page (and in /metrics) until a good file loads: the
/// old queues keep running, and the UI must not let the user believe the edit took effect.
#[test]
fn a_refused_allocation_file_shows_a_banner_on_every_page_until_a_good_one_loads() {
    require_chromium();
    let c = Cluster::rm_only(&Options::default());
    let base = format!("http://{}", c.web);
    let pages = [
        "/cluster",
        "/cluster/scheduler",
        "/cluster/apps",
        "/cluster/nodes",
        "/cluster/nodelabels",
        "/cluster/demands",
    ];
    for p in pages {
        let (status, body) = http_status(&format!("{base}{p}"));
        assert_eq!(status, 200, "{p}");
        assert!(!body.contains("id=\"reload-banner\""), "{p}: no banner yet");
    }
    let allocations = c.path("fair-scheduler.xml");
    std::fs::write(&allocations, "<allocations><queue name=\"root\">").expect("break the file");
    let (status, _) = c.put(
        "/ws/v1/cluster/admin/refresh-queues",
        &serde_json::json!({}),
    );
    assert_eq!(status, 400, "the broken file is refused");
    for p in pages {
        for url in [format!("{base}{p}"), format!("{base}{p}?fragment=1")] {
            let (status, body) = http_status(&url);
            assert_eq!(status, 200, "{url}");
            assert!(body.contains("id=\"reload-banner\""), "{url}:\n{body}");
            assert!(body.contains("Allocation file refused"), "{url}");
            assert!(body.contains("fair-scheduler.xml"), "{url}: names the file");
        }
    }
    let (_, metrics) = http_status(&format!("{base}/metrics"));
    assert!(
        metrics.contains("\nweft_allocation_reload_success 0\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nweft_allocation_reload_errors_total 1\n"),
        "{metrics}"
    );
    let (_, status) = c.get("/ws/v1/cluster/admin/allocation-file");
    assert_eq!(status["allocationFile"]["loaded"], false, "{status}");
    assert_eq!(status["allocationFile"]["errorCount"], 1, "{status}");

    // In a real browser the banner is rendered and the page stays clean.
    let dir = c.path("browser");
    std::fs::create_dir_all(&dir).expect("browser dir");
    let url = format!("{base}/cluster/scheduler");
    let run = chromium(&dir, "banner", &url, &["--dump-dom".to_string()]);
    assert!(run.dom.contains("id=\"reload-banner\""), "{}", run.dom);
    assert!(refreshes(&run.dom) >= 1, "{}", run.dom);
    assert_clean(&run, &url);

    // A good file loads: the banner goes, from whole pages and from live refreshes alike.
    std::fs::write(&allocations, harness::ALLOCATIONS).expect("fix the file");
    let (status, _) = c.put(
        "/ws/v1/cluster/admin/refresh-queues",
        &serde_json::json!({}),
    );
    assert_eq!(status, 200);
    for p in pages {
        for url in [format!("{base}{p}"), format!("{base}{p}?fragment=1")] {
            let (_, body) = http_status(&url);
            assert!(!body.contains("id=\"reload-banner\""), "{url}:\n{body}");
        }
    }
    let (_, metrics) = http_status(&format!("{base}/metrics"));
    assert!(
        metrics.contains("\nweft_allocation_reload_success 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nweft_allocation_reload_errors_total 1\n"),
        "{metrics}"
    );
}

/// The console check above must be able to fail: a page that calls console.error and one that
/// throws are both caught, with chromium's exact wording.
#[test]
fn the_console_check_catches_console_errors_and_uncaught_exceptions() {
    require_chromium();
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            "console-error",
            "console.error('planted error');",
            "planted error",
        ),
        (
            "uncaught",
            "setTimeout(function () { throw new Error('planted throw'); }, 0);",
            "Uncaught Error: planted throw",
        ),
    ];
    for (name, script, wording) in cases {
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(
            &page,
            format!("<!DOCTYPE html><html><body><p>x</p><script>{script}</script></body></html>"),
        )
        .expect("page");
        let url = format!("file://{}", page.display());
        let run = chromium(dir.path(), name, &url, &["--dump-dom".to_string()]);
        let problems = console_problems(&run.log);
        assert!(
            problems.iter().any(|l| l.contains(wording)),
            "{name}: no console line with {wording:?}; log:\n{}",
            run.log
        );
    }
}
