//! A small blocking client for the RM's REST API (and NodeManager web services): JSON in and
//! out, Hadoop's `RemoteException` turned into [`ClientError::Remote`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use crate::{address, ClientError};

/// Options every verb takes: where the RM is and whether to print JSON (global, so verbs with
/// subcommands, `weft reservation list --rm URL`, take them after the subcommand too).
#[derive(Args, Clone, Debug, Default)]
pub struct Connection {
    /// The ResourceManager's web address (http://host:port or host:port); else $WEFT_RM, else
    /// yarn-site.xml in $HADOOP_CONF_DIR, else http://127.0.0.1:8088.
    #[arg(long = "rm", value_name = "URL", global = true)]
    pub rm: Option<String>,
    /// Print JSON (the RM's own answers) instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
}

impl Connection {
    /// A client for the RM this invocation names, asking as the current user.
    pub fn connect(&self) -> Result<Rm, ClientError> {
        let env = std::env::var("WEFT_RM").ok();
        let conf = std::env::var_os("HADOOP_CONF_DIR").map(PathBuf::from);
        let base = address::resolve_rm(self.rm.as_deref(), env.as_deref(), conf.as_deref())?;
        Ok(Rm::new(base, login_user()))
    }
}

/// Who this client says it is under Hadoop's simple auth: HADOOP_USER_NAME overrides as in
/// YARN, then the login name from the environment, then the account of this process's uid
/// (containers and minimal shells often have no USER).
pub fn login_user() -> Option<String> {
    ["HADOOP_USER_NAME", "USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|u| !u.is_empty()))
        .or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name)
        })
}

/// The RM at one base URL.
pub struct Rm {
    base: String,
    user: Option<String>,
    agent: ureq::Agent,
}

/// At most this much of an unexpected body goes into an error message.
const BODY_IN_ERROR: usize = 300;

impl Rm {
    /// A client for `base` (e.g. `http://127.0.0.1:8088`); mutating calls carry `user.name`.
    pub fn new(base: String, user: Option<String>) -> Rm {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Rm { base, user, agent }
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET a path of the RM as JSON.
    pub fn get(&self, path: &str, query: &[(&str, String)]) -> Result<Value, ClientError> {
        let url = self.url(path);
        let text = self.get_text_at(&url, query)?;
        parse_json(&url, &text)
    }

    /// GET an absolute URL (a NodeManager's) as JSON.
    pub fn get_json_at(&self, url: &str, query: &[(&str, String)]) -> Result<Value, ClientError> {
        let text = self.get_text_at(url, query)?;
        parse_json(url, &text)
    }

    /// GET an absolute URL; the body of a 2xx answer.
    pub fn get_text_at(&self, url: &str, query: &[(&str, String)]) -> Result<String, ClientError> {
        let reply = self
            .agent
            .get(url)
            .header("Accept", "application/json")
            .query_pairs(query.iter().map(|(k, v)| (*k, v.as_str())))
            .call();
        finish(url, reply)
    }

    /// PUT JSON to a path of the RM as the current user: the HTTP status and the JSON answer
    /// (Null when empty) of a 2xx answer.
    pub fn put(&self, path: &str, body: &Value) -> Result<(u16, Value), ClientError> {
        let url = self.url(path);
        let mut req = self.agent.put(&url).header("Accept", "application/json");
        if let Some(u) = &self.user {
            req = req.query("user.name", u);
        }
        let reply = req.send_json(body);
        let status = match &reply {
            Ok(r) => r.status().as_u16(),
            Err(_) => 0,
        };
        let text = finish(&url, reply)?;
        let value = if text.trim().is_empty() {
            Value::Null
        } else {
            parse_json(&url, &text)?
        };
        Ok((status, value))
    }
}

impl Rm {
    /// POST to a path of the RM as the current user, with `query` and an optional JSON body:
    /// the JSON answer (Null when empty) of a 2xx answer.
    pub fn post(
        &self,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let url = self.url(path);
        let mut req = self
            .agent
            .post(&url)
            .header("Accept", "application/json")
            .query_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        if let Some(u) = &self.user {
            req = req.query("user.name", u);
        }
        let reply = match body {
            Some(b) => req.send_json(b),
            None => req.send_empty(),
        };
        let text = finish(&url, reply)?;
        if text.trim().is_empty() {
            Ok(Value::Null)
        } else {
            parse_json(&url, &text)
        }
    }
}

fn parse_json(url: &str, text: &str) -> Result<Value, ClientError> {
    serde_json::from_str(text).map_err(|e| ClientError::BadAnswer {
        url: url.to_string(),
        cause: format!("not JSON ({e}): {}", snippet(text)),
    })
}

fn snippet(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(BODY_IN_ERROR) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}

/// The body of a 2xx answer, or the error the answer (or its absence) means.
fn finish(
    url: &str,
    reply: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<String, ClientError> {
    let mut resp = reply.map_err(|e| ClientError::Unreachable {
        url: url.to_string(),
        cause: e.to_string(),
    })?;
    let status = resp.status().as_u16();
    // Container logs can be large; the default 10 MB cap would cut them.
    let text = resp
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_string()
        .map_err(|e| ClientError::Unreachable {
            url: url.to_string(),
            cause: format!("reading the answer: {e}"),
        })?;
    if (200..300).contains(&status) {
        return Ok(text);
    }
    Err(answer_error(url, status, &text))
}

/// A non-2xx answer as an error: Hadoop's RemoteException when the body is one.
fn answer_error(url: &str, status: u16, text: &str) -> ClientError {
    let remote = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("RemoteException").cloned());
    match remote {
        Some(r) => ClientError::Remote {
            url: url.to_string(),
            status,
            exception: r["exception"]
                .as_str()
                .unwrap_or("RemoteException")
                .to_string(),
            message: r["message"].as_str().unwrap_or_default().to_string(),
        },
        None => ClientError::Http {
            url: url.to_string(),
            status,
            body: snippet(text),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_exceptions_carry_the_rm_message() {
        let body = r#"{"RemoteException":{"exception":"NotFoundException","message":"app with id: application_1_0001 not found","javaClassName":"x"}}"#;
        let e = answer_error("http://rm/ws/v1/cluster/apps/application_1_0001", 404, body);
        assert_eq!(e.status(), Some(404));
        assert_eq!(
            e.remote_message(),
            "app with id: application_1_0001 not found"
        );
        let text = e.to_string();
        assert!(
            text.contains("http://rm/ws/v1/cluster/apps/application_1_0001"),
            "{text}"
        );
        assert!(text.contains("NotFoundException"), "{text}");
        let e = answer_error("http://rm/x", 405, "<html>nope</html>");
        assert!(matches!(e, ClientError::Http { status: 405, .. }));
        assert!(e.to_string().contains("nope"));
    }

    #[test]
    fn an_unreachable_rm_names_the_url_and_cause() {
        // Port 1 on loopback is closed on any sane machine: connection refused.
        let rm = Rm::new("http://127.0.0.1:1".to_string(), None);
        let e = rm.get("/ws/v1/cluster/info", &[]).expect_err("refused");
        let text = e.to_string();
        assert!(matches!(e, ClientError::Unreachable { .. }), "{text}");
        assert!(
            text.contains("http://127.0.0.1:1/ws/v1/cluster/info"),
            "{text}"
        );
    }
}
