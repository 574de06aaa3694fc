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
