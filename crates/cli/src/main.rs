//! The `weft` command. Subcommands live in their own modules or crates; this file only
//! dispatches (and accepts YARN's single-dash long flags, see [`yarn_style_args`]).

mod allocator;
mod clock;
mod pools;
mod scale;
mod sim;
mod sim_deadline;
mod sim_summary;
mod up;
mod up_hadoop_conf;
mod up_reloads;

use clap::{Parser, Subcommand};

/// mimalloc rather than glibc's malloc: the RM's per-heartbeat churn (decoded statuses, minted
/// tokens) spent about a fifth of its CPU in glibc's free-list consolidation (issue 20).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::ffi::OsString;
use std::process::ExitCode;

/// Weft: a YARN-style cluster resource manager.
#[derive(Parser)]
#[command(name = "weft", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The ResourceManager daemon.
    Rm(weft_rm::RmArgs),
    /// The NodeManager daemon.
    Nm(weft_nm::NmArgs),
    /// The distributed shell: run a shell command in N containers of the cluster.
    Dshell(weft_dshell::DshellArgs),
    /// The distributed shell's ApplicationMaster (launched by the cluster, not by people).
    #[command(name = "dshell-am", hide = true)]
    DshellAm(weft_dshell::DshellAmArgs),
    /// A whole cluster on this machine: one RM and N NMs, until Ctrl-C.
    Up(up::UpArgs),
    /// Benchmark a real RM: simulated NMs and one greedy AM over loopback gRPC.
    #[command(name = "rm-bench")]
    RmBench(weft_rmbench::RmBenchArgs),
    /// Applications: -list, -status, -kill, -movetoqueue, -updatePriority (as `yarn application`).
    #[command(alias = "app")]
    Application(weft_client::ApplicationArgs),
    /// Application attempts: -list, -status (as `yarn applicationattempt`).
    #[command(name = "applicationattempt")]
    ApplicationAttempt(weft_client::AttemptArgs),
    /// Containers of an attempt: -list, -status (as `yarn container`).
    Container(weft_client::ContainerArgs),
    /// NodeManagers: -list [-all|-states], -status (as `yarn node`).
    Node(weft_client::NodeArgs),
    /// A queue's report: -status (as `yarn queue`).
    Queue(weft_client::QueueArgs),
    /// The cluster's node labels: --list-node-labels (as `yarn cluster`).
    Cluster(weft_client::ClusterArgs),
    /// ResourceManager administration: -refreshQueues and the node-label verbs (as
    /// `yarn rmadmin`).
    #[command(name = "rmadmin")]
    RmAdmin(weft_client::RmAdminArgs),
    /// Time-aware demands (Weft only): submit FILE, list, status KEY, kill KEY.
    Demand(weft_client::DemandArgs),
    /// Container logs of an application, from the NodeManagers (as `yarn logs`).
    Logs(weft_client::LogsArgs),
    /// A live view of the cluster and its running applications (as `yarn top`).
    Top(weft_client::TopArgs),
    /// Reservations of reservable queues over Hadoop's reservation REST API: new, submit
    /// FILE, update FILE, delete ID, list (Hadoop's `yarn` has no such verb).
    Reservation(weft_client::ReservationArgs),
    /// Resource pools: `check FILE` validates an allocation file's pools and shows the bindings.
    Pools {
        #[command(subcommand)]
        command: pools::PoolsCommand,
    },
    /// The discrete-event simulator.
    Sim {
        #[command(subcommand)]
        command: sim::SimCommand,
    },
}

/// YARN's tools take long options with one dash (`-shell_command`, `-appStates`); clap reads
/// those as bundles of short flags. Rewrite any `-word` of two or more letters to `--word`
/// (single-letter flags such as `-h` and values like `-1` are left alone).
fn yarn_style_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    args.into_iter()
        .map(|arg| match arg.to_str() {
            Some(s)
                if s.len() > 2
                    && s.starts_with('-')
                    && !s.starts_with("--")
                    && s[1..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic())
                    && s[1..]
                        .chars()
                        .take_while(|c| *c != '=')
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                OsString::from(format!("-{s}"))
            }
            _ => arg,
        })
        .collect()
}

fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(yarn_style_args(std::env::args_os()));
    match cli.command {
        Command::Rm(args) => {
            allocator::settle_for_rm();
            report(weft_rm::run(args))
        }
        Command::Nm(args) => report(weft_nm::run(args)),
        Command::Dshell(args) => report(weft_dshell::run(args)),
        Command::DshellAm(args) => report(weft_dshell::run_am(args)),
        Command::Up(args) => report(up::run(args)),
        Command::RmBench(args) => report(weft_rmbench::run(args)),
        Command::Application(args) => weft_client::main(&args),
        Command::ApplicationAttempt(args) => weft_client::main(&args),
        Command::Container(args) => weft_client::main(&args),
        Command::Node(args) => weft_client::main(&args),
        Command::Queue(args) => weft_client::main(&args),
        Command::RmAdmin(args) => weft_client::main(&args),
        Command::Cluster(args) => weft_client::main(&args),
        Command::Logs(args) => weft_client::main(&args),
        Command::Demand(args) => weft_client::main(&args),
        Command::Top(args) => weft_client::main(&args),
        Command::Reservation(args) => weft_client::main(&args),
        Command::Sim { command } => sim::main(command),
        Command::Pools { command } => report(pools::main(command)),
    }
}

#[cfg(test)]
mod tests {
    use super::yarn_style_args;
    use std::ffi::OsString;

    fn rewrite(args: &[&str]) -> Vec<String> {
        yarn_style_args(args.iter().map(OsString::from))
            .into_iter()
            .map(|a| a.into_string().expect("utf-8"))
            .collect()
    }

    #[test]
    fn single_dash_long_flags_become_double_dash() {
        assert_eq!(
            rewrite(&[
                "weft",
                "dshell",
                "-shell_command",
                "ls -l",
                "-num_containers",
                "4"
            ]),
            [
                "weft",
                "dshell",
                "--shell_command",
                "ls -l",
                "--num_containers",
                "4"
            ]
        );
        assert_eq!(
            rewrite(&["-appStates=ALL", "--json", "-h", "-1", "-", "a-b"]),
            ["--appStates=ALL", "--json", "-h", "-1", "-", "a-b"]
        );
    }

    #[test]
    fn client_verbs_take_yarn_flags() {
        assert_eq!(
            rewrite(&[
                "application",
                "-list",
                "-appStates",
                "RUNNING,FINISHED",
                "-appTypes",
                "YARN"
            ]),
            [
                "application",
                "--list",
                "--appStates",
                "RUNNING,FINISHED",
                "--appTypes",
                "YARN"
            ]
        );
        assert_eq!(
            rewrite(&[
                "app",
                "-movetoqueue",
                "application_1_0001",
                "-queue",
                "root.prod"
            ]),
            [
                "app",
                "--movetoqueue",
                "application_1_0001",
                "--queue",
                "root.prod"
            ]
        );
        assert_eq!(
            rewrite(&["app", "-changeQueue", "dev", "-appId", "application_1_0001"]),
            [
                "app",
                "--changeQueue",
                "dev",
                "--appId",
                "application_1_0001"
            ]
        );
        assert_eq!(
            rewrite(&[
                "logs",
                "-applicationId",
                "a",
                "-log_files",
                "stdout",
                "-size",
                "-100"
            ]),
            [
                "logs",
                "--applicationId",
                "a",
                "--log_files",
                "stdout",
                "--size",
                "-100"
            ]
        );
        assert_eq!(
            rewrite(&["rmadmin", "-refreshQueues"]),
            ["rmadmin", "--refreshQueues"]
        );
        assert_eq!(
            rewrite(&["node", "-list", "-all"]),
            ["node", "--list", "--all"]
        );
    }

    #[test]
    fn client_verbs_parse() {
        use clap::Parser as _;
        let parse = |args: &[&str]| {
            let mut all = vec!["weft"];
            all.extend_from_slice(args);
            super::Cli::try_parse_from(yarn_style_args(all.iter().map(OsString::from)))
        };
        match parse(&[
            "app",
            "-kill",
            "application_1_0001",
            "application_1_0002",
            "--rm",
            "h:1",
        ])
        .expect("parses")
        .command
        {
            super::Command::Application(a) => {
                assert_eq!(a.kill, ["application_1_0001", "application_1_0002"]);
                assert_eq!(a.conn.rm.as_deref(), Some("h:1"));
            }
            _ => panic!("not application"),
        }
        match parse(&["logs", "-applicationId", "a", "-size", "-100"])
            .expect("parses")
            .command
        {
            super::Command::Logs(l) => assert_eq!(l.size, Some(-100)),
            _ => panic!("not logs"),
        }
        assert!(
            parse(&["application", "-movetoqueue", "a"]).is_err(),
            "-queue required"
        );
        assert!(parse(&["application"]).is_err(), "an action is required");
        assert!(parse(&["queue", "-status", "default", "--json"]).is_ok());
        assert!(parse(&["top", "--once", "-delay", "1", "-queues", "a,b"]).is_ok());
        assert!(parse(&["applicationattempt", "-list", "application_1_0001"]).is_ok());
        assert!(parse(&["rmadmin", "-refreshQueues"]).is_ok());
    }
}
