//! `weft rmadmin -refreshQueues`: Weft's admin endpoint `PUT /ws/v1/cluster/admin/refresh-queues`
//! re-reads the allocation file. Silent on success, like `yarn rmadmin`.

use std::io::Write;

use clap::{ArgGroup, Args};
use serde_json::json;

use crate::fmt;
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

/// The admin endpoint (not part of Hadoop's REST API).
const REFRESH_QUEUES: &str = "/ws/v1/cluster/admin/refresh-queues";

/// Administers the ResourceManager.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["refresh_queues"])))]
pub struct RmAdminArgs {
    /// Re-read the scheduler's queue configuration (the fair allocation file).
    #[arg(long = "refreshQueues")]
    pub refresh_queues: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

impl Verb for RmAdminArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        match rm.put(REFRESH_QUEUES, &json!({})) {
            Ok((_, answer)) => {
                if self.conn.json {
                    let v = if answer.is_null() { json!({}) } else { answer };
                    write!(out, "{}", fmt::json_text(&v))?;
                }
                Ok(Outcome::Success)
            }
            Err(e) => {
                eprintln!(
                    "refreshQueues: {}",
                    refresh_failure(&e, &rm.url(REFRESH_QUEUES))
                );
                Ok(Outcome::Failed)
            }
        }
    }
}

/// What to tell the user when the refresh failed: a missing endpoint (an RM that is not Weft,
/// e.g. a real YARN RM, whose admin commands go over its admin RPC port) gets its own message.
pub(crate) fn refresh_failure(e: &ClientError, url: &str) -> String {
    match e.status() {
        Some(404) | Some(405) => format!(
            "the RM at {url} has no refresh-queues endpoint ({}); it is Weft's admin REST extension, so this RM is not Weft (a YARN RM takes `yarn rmadmin -refreshQueues` on its admin RPC port)",
            e.remote_message()
        ),
        // A refused file: the RM keeps running the queues it had, which the user must know.
        Some(400) => format!(
            "{}; the ResourceManager keeps the previous queue configuration",
            e.remote_message()
        ),
        Some(_) => e.remote_message(),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_their_cause() {
        let url = "http://rm:8088/ws/v1/cluster/admin/refresh-queues";
        let missing = ClientError::Http {
            url: url.into(),
            status: 404,
            body: String::new(),
        };
        let m = refresh_failure(&missing, url);
        assert!(m.contains("has no refresh-queues endpoint"), "{m}");
        let bad = ClientError::Remote {
            url: url.into(),
            status: 400,
            exception: "BadRequestException".into(),
            message: "fair-scheduler.xml line 3: unknown element".into(),
        };
        assert_eq!(
            refresh_failure(&bad, url),
            "fair-scheduler.xml line 3: unknown element; the ResourceManager keeps the previous queue configuration"
        );
    }
}
