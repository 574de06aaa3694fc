use super::*;
use std::collections::HashMap;

fn am_args(cmd: &str) -> DshellAmArgs {
    DshellAmArgs {
        shell_command: Some(cmd.to_string()),
        shell_script: None,
        shell_args: vec![],
        shell_env: vec!["A=1=2".to_string()],
        num_containers: 2,
        container_memory: 64,
        container_vcores: 1,
        shell_cmd_priority: 0,
    }
}

#[test]
fn launch_context_runs_the_command_under_bash_c() {
    let ctx = am_args("echo 'hi' > out").launch_context();
    assert_eq!(ctx.command, vec!["bash", "-c", r"'echo '\''hi'\'' > out'"]);
    // The NM joins the words with spaces and runs the line with bash: check the round trip.
    let line = ctx.command.join(" ");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("set -- {line}; printf %s \"$3\""))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "echo 'hi' > out");
    assert_eq!(ctx.environment.get("A").map(String::as_str), Some("1=2"));
    assert!(ctx.local_resources.is_empty());
}

#[test]
fn a_script_is_localized_and_run_with_its_args() {
    let mut a = am_args("unused");
    a.shell_command = None;
    a.shell_script = Some("/abs/job.sh".to_string());
    a.shell_args = vec!["x y".to_string()];
    assert_eq!(a.container_command(), "bash ExecScript.sh 'x y'");
    let ctx = a.launch_context();
    assert_eq!(ctx.local_resources["ExecScript.sh"].resource, "/abs/job.sh");
}

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn the_attempt_is_derived_from_container_id() {
    let env = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_RM_SCHEDULER_ADDRESS", "127.0.0.1:8030"),
        ("WEFT_AM_TOKEN", "tok"),
        ("CONTAINER_ID", "container_1700000000000_0007_02_000001"),
        ("USER", "alice"),
    ]))
    .unwrap();
    assert_eq!(env.scheduler_address, "127.0.0.1:8030");
    assert_eq!(
        env.credentials.attempt_id,
        "appattempt_1700000000000_0007_000002"
    );
    assert_eq!(env.credentials.token, "tok");
    assert_eq!(env.application_id, "application_1700000000000_0007");
    assert_eq!(env.user, "alice");
}

#[test]
fn an_explicit_attempt_id_wins_and_missing_variables_are_named() {
    let env = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_RM_SCHEDULER_ADDRESS", "rm:8030"),
        ("WEFT_AM_TOKEN", "tok"),
        ("APPLICATION_ATTEMPT_ID", "appattempt_5_0001_000003"),
        ("CONTAINER_ID", "container_5_0001_01_000001"),
    ]))
    .unwrap();
    assert_eq!(env.credentials.attempt_id, "appattempt_5_0001_000003");

    let err = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_AM_TOKEN", "tok"),
        ("CONTAINER_ID", "container_5_0001_01_000001"),
    ]))
    .unwrap_err();
    assert!(
        err.to_string().contains("WEFT_RM_SCHEDULER_ADDRESS"),
        "{err}"
    );
    let err = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_RM_SCHEDULER_ADDRESS", "rm:8030"),
        ("WEFT_AM_TOKEN", "tok"),
        ("CONTAINER_ID", "garbage"),
    ]))
    .unwrap_err();
    assert!(format!("{err:#}").contains("CONTAINER_ID"), "{err:#}");
}
