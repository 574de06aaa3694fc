//! The `weft` command. Subcommands live in their own modules or crates; this file only
//! dispatches (and accepts YARN's single-dash long flags, see [`yarn_style_args`]).

mod clock;
mod scale;
mod sim;
mod up;

use clap::{Parser, Subcommand};
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
        Command::Rm(args) => report(weft_rm::run(args)),
        Command::Nm(args) => report(weft_nm::run(args)),
        Command::Dshell(args) => report(weft_dshell::run(args)),
        Command::DshellAm(args) => report(weft_dshell::run_am(args)),
        Command::Up(args) => report(up::run(args)),
        Command::RmBench(args) => report(weft_rmbench::run(args)),
        Command::Sim { command } => sim::main(command),
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
}
