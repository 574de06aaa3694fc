use super::*;
use crate::am::DshellAmArgs;
use clap::Parser;
use std::path::PathBuf;
use std::process::Command;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: DshellArgs,
}

#[derive(Parser)]
struct AmCli {
    #[command(flatten)]
    args: DshellAmArgs,
}

fn parse(argv: &[&str]) -> DshellArgs {
    Cli::try_parse_from(std::iter::once("dshell").chain(argv.iter().copied()))
        .unwrap()
        .args
}

#[test]
fn yarn_flag_spellings_parse() {
    let a = parse(&[
        "--shell_command",
        "echo hi",
        "--num_containers",
        "3",
        "--container_memory",
        "256",
        "--container_vcores",
        "2",
        "--queue",
        "root.eng",
        "--appname",
        "smoke",
        "--master_memory",
        "64",
        "--timeout",
        "5000",
        "--shell_env",
        "A=1",
        "--shell_args",
        "x",
        "y z",
        "--jar",
        "ignored.jar",
        "--rm",
        "localhost:9999/",
    ]);
    assert_eq!(a.shell_command.as_deref(), Some("echo hi"));
    assert_eq!(a.num_containers, 3);
    assert_eq!(a.container_memory, 256);
    assert_eq!(a.container_vcores, 2);
    assert_eq!(a.queue, "root.eng");
    assert_eq!(a.appname, "smoke");
    assert_eq!(a.master_memory, 64);
    assert_eq!(a.timeout, 5000);
    assert_eq!(a.shell_env, vec!["A=1".to_string()]);
    assert_eq!(a.shell_args, vec!["x".to_string(), "y z".to_string()]);
    assert_eq!(a.rm_url(), "http://localhost:9999");
    assert_eq!(a.validate(), Ok(()));
}

#[test]
fn defaults_match_yarns_distributed_shell() {
    let a = parse(&["--shell_command", "true"]);
    assert_eq!(a.num_containers, 1);
    assert_eq!(a.container_memory, 10);
    assert_eq!(a.container_vcores, 1);
    assert_eq!(a.queue, "default");
    assert_eq!(a.appname, "DistributedShell");
    assert_eq!(a.timeout, 600_000);
    assert_eq!(a.master_vcores, 1);
    assert_eq!(a.master_memory, 128);
}

#[test]
fn validation_refuses_what_yarn_refuses() {
    assert!(parse(&[])
        .validate()
        .unwrap_err()
        .contains("no shell command"));
    assert!(parse(&["--shell_command", "a", "--shell_script", "b"])
        .validate()
        .unwrap_err()
        .contains("both"));
    assert!(parse(&["--shell_command", "a", "--num_containers", "0"])
        .validate()
        .is_err());
    assert!(parse(&["--shell_command", "a", "--container_memory=-5"])
        .validate()
        .is_err());
    assert!(parse(&["--shell_command", "a", "--shell_env", "NOEQUALS"])
        .validate()
        .is_err());
}

#[test]
fn sizes_above_the_maximum_are_lowered_and_the_user_is_told() {
    let mut a = parse(&[
        "--shell_command",
        "true",
        "--container_memory",
        "20000",
        "--container_vcores",
        "2",
        "--master_memory",
        "128",
    ]);
    let notes = a.cap_to_maximum(8192, 8);
    assert_eq!(
        notes,
        vec![
            "-container_memory 20000 is above the cluster's maximum allocation of 8192 MB; using 8192 MB"
                .to_string()
        ]
    );
    assert_eq!((a.container_memory, a.container_vcores), (8192, 2));
    assert_eq!(a.master_memory, 128, "sizes within the maximum are kept");
    assert!(
        a.am_command(std::path::Path::new("/w"))
            .contains("--container_memory 8192"),
        "the AM asks for the lowered size"
    );
    // An RM that states no maximum (0) lowers nothing.
    let mut b = parse(&["--shell_command", "true", "--container_memory", "20000"]);
    assert!(b.cap_to_maximum(0, 0).is_empty());
    assert_eq!(b.container_memory, 20000);
}

#[test]
fn the_submission_line_names_the_queue_placement_chose() {
    assert_eq!(
        submitted_line("application_5_0001", "nosuch", Some("root.default")),
        "Submitted application application_5_0001 to queue root.default (asked for nosuch; the placement rules chose root.default)"
    );
    assert_eq!(
        submitted_line("application_5_0001", "default", Some("root.default")),
        "Submitted application application_5_0001 to queue root.default"
    );
    assert_eq!(
        submitted_line("application_5_0001", "root.prod", Some("root.prod")),
        "Submitted application application_5_0001 to queue root.prod"
    );
    assert_eq!(
        submitted_line("application_5_0001", "prod", None),
        "Submitted application application_5_0001 to queue prod (placement not known yet)"
    );
}

#[test]
fn submission_body_has_hadoops_shape() {
    let a = parse(&[
        "--shell_command",
        "echo hi",
        "--num_containers",
        "2",
        "--queue",
        "root.eng",
        "--master_memory",
        "64",
        "--master_vcores",
        "2",
        "--max_app_attempts",
        "1",
    ]);
    let body = a.submission_body("application_17_0001", Path::new("/opt/weft"));
    let obj = body.as_object().unwrap();
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        vec![
            "am-container-spec",
            "application-id",
            "application-name",
            "application-type",
            "keep-containers-across-application-attempts",
            "max-app-attempts",
            "priority",
            "queue",
            "resource",
            "unmanaged-AM",
        ]
    );
    assert_eq!(body["application-id"], "application_17_0001");
    assert_eq!(body["application-name"], "DistributedShell");
    assert_eq!(body["queue"], "root.eng");
    assert_eq!(body["application-type"], "DISTRIBUTEDSHELL");
    assert_eq!(body["max-app-attempts"], 1);
    assert_eq!(body["unmanaged-AM"], false);
    assert_eq!(body["resource"], json!({"memory": 64, "vCores": 2}));
    let spec = &body["am-container-spec"];
    assert_eq!(spec["local-resources"], json!({"entry": []}));
    assert!(spec["environment"]["entry"].is_array());
    let command = spec["commands"]["command"].as_str().unwrap();
    assert!(
        command.starts_with("/opt/weft dshell-am --num_containers 2 "),
        "{command}"
    );
    assert!(command.contains("--shell_command 'echo hi'"), "{command}");
}

/// Splits `line` into words exactly as bash would.
fn bash_words(line: &str) -> Vec<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_string)
        .collect()
}

#[test]
fn the_am_command_reaches_the_am_unchanged() {
    let a = parse(&[
        "--shell_command",
        "echo \"it's $HOSTNAME\" > out.txt; exit 3",
        "--num_containers",
        "4",
        "--container_memory",
        "512",
        "--container_vcores",
        "2",
        "--shell_cmd_priority",
        "5",
        "--shell_env",
        "GREETING=hello world",
        "--shell_args",
        "a b",
        "c",
    ]);
    let exe = PathBuf::from("/tmp/dir with space/weft");
    let words = bash_words(&a.am_command(&exe));
    assert_eq!(words[0], "/tmp/dir with space/weft");
    assert_eq!(words[1], "dshell-am");
    let am = AmCli::try_parse_from(std::iter::once("am".to_string()).chain(words[2..].to_vec()))
        .unwrap()
        .args;
    assert_eq!(am.shell_command, a.shell_command);
    assert_eq!(am.num_containers, 4);
    assert_eq!(am.container_memory, 512);
    assert_eq!(am.container_vcores, 2);
    assert_eq!(am.shell_cmd_priority, 5);
    assert_eq!(am.shell_env, vec!["GREETING=hello world".to_string()]);
    assert_eq!(am.shell_args, vec!["a b".to_string(), "c".to_string()]);
}

#[test]
fn app_reports_are_read_from_the_rest_shape() {
    let running = json!({"app": {"id": "application_1_0001", "state": "RUNNING", "finalStatus": "UNDEFINED"}});
    let r = AppReport::from_json(&running).unwrap();
    assert_eq!(r.state, "RUNNING");
    assert_eq!(r.diagnostics, "");
    assert!(!r.is_final());
    let done =
        json!({"app": {"state": "FINISHED", "finalStatus": "FAILED", "diagnostics": "1 failed"}});
    let r = AppReport::from_json(&done).unwrap();
    assert!(r.is_final());
    assert_eq!(r.final_status, "FAILED");
    assert_eq!(AppReport::from_json(&json!({"apps": null})), None);
}

mod fake_rm {
    //! `run` against a minimal HTTP/1.1 server that plays the RM's REST API.

    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// A recorded request: method, path with query, body.
    type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

    /// Serves canned answers: the app is RUNNING on the first GET and then `final_state`.
    #[allow(clippy::disallowed_methods)] // a test server thread, outside any core
    fn serve(final_state: (&'static str, &'static str), submit_status: u16) -> (String, Seen) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen: Seen = Arc::default();
        let log = seen.clone();
        std::thread::spawn(move || {
            let mut gets = 0;
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let mut parts = line.split_whitespace();
                    let method = parts.next().unwrap_or("").to_string();
                    let path = parts.next().unwrap_or("").to_string();
                    let mut len = 0;
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        if h.trim().is_empty() {
                            break;
                        }
                        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    log.lock().unwrap().push((
                        method.clone(),
                        path.clone(),
                        String::from_utf8(body).unwrap(),
                    ));
                    let (status, answer) = if path.contains("new-application") {
                        (200, r#"{"application-id":"application_5_0001","maximum-resource-capability":{"memory":8192,"vCores":4}}"#.to_string())
                    } else if method == "POST" && submit_status != 202 {
                        (submit_status, r#"{"RemoteException":{"exception":"BadRequestException","message":"queue root.nope does not exist"}}"#.to_string())
                    } else if method == "POST" {
                        (202, String::new())
                    } else {
                        gets += 1;
                        let (state, fin) = if gets == 1 {
                            ("RUNNING", "UNDEFINED")
                        } else {
                            final_state
                        };
                        (
                            200,
                            format!(
                                r#"{{"app":{{"id":"application_5_0001","state":"{state}","finalStatus":"{fin}","diagnostics":"1 of 1 containers succeeded"}}}}"#
                            ),
                        )
                    };
                    let head = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                        answer.len()
                    );
                    if out.write_all(head.as_bytes()).is_err()
                        || out.write_all(answer.as_bytes()).is_err()
                    {
                        break;
                    }
                }
            }
        });
        (base, seen)
    }

    fn args(base: &str) -> DshellArgs {
        parse(&[
            "--shell_command",
            "true",
            "--rm",
            base,
            "--timeout",
            "20000",
        ])
    }

    #[test]
    fn submits_then_follows_the_app_to_success() {
        let (base, seen) = serve(("FINISHED", "SUCCEEDED"), 202);
        run(args(&base)).unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].0, "POST");
        assert!(seen[0].1.starts_with("/ws/v1/cluster/apps/new-application"));
        assert_eq!(seen[0].2, "", "new-application is sent with an empty body");
        assert!(seen[1].1.starts_with("/ws/v1/cluster/apps"));
        let body: Value = serde_json::from_str(&seen[1].2).unwrap();
        assert_eq!(body["application-id"], "application_5_0001");
        assert!(seen[2]
            .1
            .starts_with("/ws/v1/cluster/apps/application_5_0001"));
        assert_eq!(seen.len(), 4, "polls until the final state");
    }

    #[test]
    fn a_failed_app_makes_the_client_fail() {
        let (base, _) = serve(("FINISHED", "FAILED"), 202);
        let err = run(args(&base)).unwrap_err();
        assert!(err.to_string().contains("final status FAILED"), "{err}");
    }

    #[test]
    fn a_refused_submission_reports_the_rms_message() {
        let (base, _) = serve(("FINISHED", "SUCCEEDED"), 400);
        let err = format!("{:#}", run(args(&base)).unwrap_err());
        assert!(
            err.contains("HTTP 400: queue root.nope does not exist"),
            "{err}"
        );
    }
}

mod retry {
    //! Riding out an unreachable RM: transport failures are retried for a bounded window,
    //! HTTP answers (even errors) are not.

    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{SocketAddr, TcpListener, TcpStream};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// What the fake RM does with each successive connection.
    #[derive(Clone, Copy)]
    enum Act {
        /// Reads the request and answers with this status and a small JSON body.
        Answer(u16),
        /// Reads the request and closes the connection without answering.
        HangUp,
    }

    fn rm(addr: SocketAddr, window: Duration) -> Rm {
        let mut rm = Rm::new(format!("http://{addr}"));
        rm.retry_window = window;
        rm.retry_pause = Duration::from_millis(50);
        rm
    }

    /// A loopback address on which nothing listens (for now).
    fn free_addr() -> SocketAddr {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    }

    fn read_request(stream: &TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut len = 0;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
    }

    /// After `delay`, listens on `addr` and plays `acts`, one per connection, then stops
    /// listening. Returns the number of connections served so far.
    #[allow(clippy::disallowed_methods)] // a test server thread, outside any core
    fn serve_late(addr: SocketAddr, delay: Duration, acts: Vec<Act>) -> Arc<AtomicUsize> {
        let served = Arc::new(AtomicUsize::new(0));
        let count = served.clone();
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            let listener = TcpListener::bind(addr).unwrap();
            for act in acts {
                let (mut stream, _) = listener.accept().unwrap();
                read_request(&stream);
                count.fetch_add(1, Ordering::SeqCst);
                if let Act::Answer(status) = act {
                    let body = r#"{"RemoteException":{"message":"busy"},"ok":true}"#;
                    let head = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    stream.write_all(head.as_bytes()).unwrap();
                    stream.write_all(body.as_bytes()).unwrap();
                }
            }
        });
        served
    }

    #[allow(clippy::disallowed_methods)] // a test's stopwatch
    fn stopwatch() -> Instant {
        Instant::now()
    }

    #[test]
    fn a_refused_connection_is_retried_until_the_rm_comes_up() {
        let addr = free_addr();
        let served = serve_late(addr, Duration::from_millis(700), vec![Act::Answer(200)]);
        let started = stopwatch();
        let json = rm(addr, Duration::from_secs(20))
            .call("GET", "/ws/v1/cluster/apps/x", None, Repeat::Safe)
            .unwrap();
        assert_eq!(json["ok"], true);
        assert_eq!(served.load(Ordering::SeqCst), 1);
        assert!(started.elapsed() >= Duration::from_millis(600));
    }

    #[test]
    fn a_submission_is_retried_while_the_connection_is_refused() {
        let addr = free_addr();
        serve_late(addr, Duration::from_millis(300), vec![Act::Answer(202)]);
        let body = json!({"application-id": "application_1_0001"});
        rm(addr, Duration::from_secs(20))
            .call(
                "POST",
                "/ws/v1/cluster/apps",
                Some(&body),
                Repeat::IfUndelivered,
            )
            .unwrap();
    }

    #[test]
    fn the_client_gives_up_after_the_retry_window() {
        let addr = free_addr();
        let started = stopwatch();
        let err = rm(addr, Duration::from_millis(400))
            .call("GET", "/ws/v1/cluster/apps/x", None, Repeat::Safe)
            .unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("cannot reach the RM"), "{text}");
        assert!(text.contains("gave up"), "{text}");
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(400), "{took:?}");
        assert!(took < Duration::from_secs(10), "{took:?}");
    }

    #[test]
    fn http_error_statuses_are_answers_not_retried() {
        let addr = free_addr();
        let served = serve_late(addr, Duration::ZERO, vec![Act::Answer(503)]);
        // Waits for the listener so the first try is the one answered.
        let client = rm(addr, Duration::from_secs(20));
        let err = client
            .call("GET", "/ws/v1/cluster/apps/x", None, Repeat::Safe)
            .unwrap_err();
        assert!(err.to_string().contains("HTTP 503: busy"), "{err}");
        assert_eq!(served.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_broken_exchange_is_retried_only_when_repeating_is_harmless() {
        let addr = free_addr();
        let served = serve_late(addr, Duration::ZERO, vec![Act::HangUp, Act::Answer(200)]);
        let json = rm(addr, Duration::from_secs(20))
            .call("GET", "/ws/v1/cluster/apps/x", None, Repeat::Safe)
            .unwrap();
        assert_eq!(json["ok"], true);
        assert_eq!(served.load(Ordering::SeqCst), 2);

        // The RM may have accepted a submission whose answer was lost: sending it again
        // would be refused as a duplicate, so the client reports the break instead.
        let addr = free_addr();
        let served = serve_late(addr, Duration::ZERO, vec![Act::HangUp, Act::Answer(202)]);
        let body = json!({"application-id": "application_1_0001"});
        let err = rm(addr, Duration::from_secs(20))
            .call(
                "POST",
                "/ws/v1/cluster/apps",
                Some(&body),
                Repeat::IfUndelivered,
            )
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("cannot reach the RM"),
            "{err:#}"
        );
        assert_eq!(served.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn transport_errors_are_sorted_by_whether_the_request_left() {
        use std::io::{Error as IoError, ErrorKind};
        let io = |k: ErrorKind| ureq::Error::Io(IoError::from(k));
        for repeat in [Repeat::Safe, Repeat::IfUndelivered] {
            assert_eq!(
                classify(&io(ErrorKind::ConnectionRefused), repeat),
                Failure::Transient
            );
            assert_eq!(
                classify(&ureq::Error::Timeout(ureq::Timeout::Connect), repeat),
                Failure::Transient
            );
            assert_eq!(
                classify(&ureq::Error::StatusCode(500), repeat),
                Failure::Fatal
            );
            assert_eq!(
                classify(&ureq::Error::BadUri("x".into()), repeat),
                Failure::Fatal
            );
            assert_eq!(
                classify(&io(ErrorKind::PermissionDenied), repeat),
                Failure::Fatal
            );
        }
        assert_eq!(
            classify(&io(ErrorKind::ConnectionReset), Repeat::Safe),
            Failure::Transient
        );
        assert_eq!(
            classify(&io(ErrorKind::ConnectionReset), Repeat::IfUndelivered),
            Failure::Fatal
        );
        assert_eq!(
            classify(
                &ureq::Error::Timeout(ureq::Timeout::RecvResponse),
                Repeat::Safe
            ),
            Failure::Transient
        );
    }
}
