//! The user's side of Weft: `weft application`, `node`, `queue`, `logs`, `top` and friends.
//!
//! Every verb talks only to the ResourceManager's REST API (and, for `logs`, to the
//! NodeManagers' web services), so the same commands work against Weft and against a real YARN
//! ResourceManager. Tables follow `yarn`'s printf layouts (shared/spec/yarn-cli.md); `--json`
//! prints the RM's JSON instead, for scripts.

mod address;
mod application;
mod attempt;
mod error;
mod fmt;
mod logs;
mod node;
mod queue;
mod rest;
mod rmadmin;
mod top;

use std::io::Write;
use std::process::ExitCode;

pub use address::{normalize_url, resolve_rm, rm_from_site_xml, DEFAULT_RM};
pub use application::ApplicationArgs;
pub use attempt::{AttemptArgs, ContainerArgs};
pub use error::ClientError;
pub use logs::LogsArgs;
pub use node::NodeArgs;
pub use queue::QueueArgs;
pub use rest::{Connection, Rm};
pub use rmadmin::RmAdminArgs;
pub use top::TopArgs;

/// How a verb ended when it did not fail outright: YARN's tools return -1 (255 in the shell)
/// after printing their own message for "not found"-style outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// The verb already explained the problem; exit 255.
    Failed,
}

/// A CLI verb: runs against the RM and writes its report to `out`.
pub trait Verb {
    /// Runs the verb. Messages about partial failures go to stderr; `out` gets the report.
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError>;
}

/// Runs a verb with stdout as its output and turns the result into the process exit status
/// (0 on success, 255 like YARN's -1 otherwise, with the error on stderr).
pub fn main(verb: &dyn Verb) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = verb.run(&mut out);
    let _ = out.flush();
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(255),
        // The reader went away (`weft logs ... | head`): nothing left to tell anyone.
        Err(ClientError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(255)
        }
    }
}
