//! The `weft` command. Subcommands live in their own modules; this file only dispatches.

mod clock;
mod scale;
mod sim;

use clap::{Parser, Subcommand};
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
    /// The discrete-event simulator.
    Sim {
        #[command(subcommand)]
        command: sim::SimCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Sim { command } => sim::main(command),
    }
}
