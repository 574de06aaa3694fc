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
