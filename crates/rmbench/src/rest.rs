//! Submitting the greedy application through the RM's REST API, as any client would.

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::BenchError;

/// The bound on each REST call.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The application type the submission carries.
pub(crate) const APPLICATION_TYPE: &str = "WEFT-RMBENCH";

/// The submission body (Hadoop's `ApplicationSubmissionContextInfo` JSON) for `app_id`. The
/// command is never run: the bench's simulated NM receives the launch and the bench plays the AM.
pub(crate) fn submission(app_id: &str, queue: &str, am_memory_mb: i64, am_vcores: i64) -> Value {
    json!({
        "application-id": app_id,
        "application-name": "weft rm-bench greedy app",
        "queue": queue,
        "am-container-spec": {
            "local-resources": {"entry": []},
            "environment": {"entry": []},
            "commands": {"command": "true"},
        },
        "unmanaged-AM": false,
        "max-app-attempts": 1,
        "resource": {"memory": am_memory_mb, "vCores": am_vcores},
        "application-type": APPLICATION_TYPE,
    })
}

fn call(
    agent: &ureq::Agent,
    what: &'static str,
    url: &str,
    body: Option<&Value>,
) -> Result<Value, BenchError> {
    let err = |message: String| BenchError::Rest { what, message };
    let result = match body {
        Some(b) => agent.post(url).send_json(b),
        None => agent.post(url).send_empty(),
    };
    let mut response = result.map_err(|e| err(format!("cannot reach {url}: {e}")))?;
    let status = response.status();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    if !status.is_success() {
        return Err(err(format!("HTTP {}: {text}", status.as_u16())));
    }
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| err(format!("bad JSON ({e}): {text}")))
}

/// The RM's REST API with one agent for every call. Blocking (run it off the runtime).
pub(crate) struct Rest {
    agent: ureq::Agent,
    base: String,
}

/// Bytes a JSON answer may have (ureq's own default for a body read whole).
const JSON_LIMIT: u64 = 10 * 1024 * 1024;

impl Rest {
    /// A client for the RM at `web` (host:port or URL).
    pub(crate) fn new(web: &str) -> Rest {
        // Every submitter keeps its connection: ureq keeps 3 per host by default, so the
        // others would connect anew for every call.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(CALL_TIMEOUT))
            .max_idle_connections(2 * crate::fleet::SUBMITTERS)
            .max_idle_connections_per_host(2 * crate::fleet::SUBMITTERS)
            .build()
            .into();
        let base = if web.starts_with("http://") || web.starts_with("https://") {
            web.trim_end_matches('/').to_string()
        } else {
            format!("http://{}", web.trim_end_matches('/'))
        };
        Rest { agent, base }
    }

    /// Creates and submits an application for `user` (default: `$USER`); returns its id.
    pub(crate) fn submit(
        &self,
        user: Option<&str>,
        queue: &str,
        am_memory_mb: i64,
        am_vcores: i64,
    ) -> Result<String, BenchError> {
        let app_id = self.new_application(user)?;
        self.submit_app(user, &app_id, queue, am_memory_mb, am_vcores)?;
        Ok(app_id)
    }

    fn user(user: Option<&str>) -> String {
        match user {
            Some(u) => u.to_string(),
            None => std::env::var("USER").unwrap_or_else(|_| "weft-rmbench".into()),
        }
    }

    /// A new application id (`new-application`).
    pub(crate) fn new_application(&self, user: Option<&str>) -> Result<String, BenchError> {
        let new_app = call(
            &self.agent,
            "new-application",
            &format!(
                "{}/ws/v1/cluster/apps/new-application?user.name={}",
                self.base,
                Rest::user(user)
            ),
            None,
        )?;
        new_app
            .get("application-id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| BenchError::Rest {
                what: "new-application",
                message: format!("no application-id in {new_app}"),
            })
    }

    /// Submits application `app_id` to `queue` for `user`.
    pub(crate) fn submit_app(
        &self,
        user: Option<&str>,
        app_id: &str,
        queue: &str,
        am_memory_mb: i64,
        am_vcores: i64,
    ) -> Result<(), BenchError> {
        call(
            &self.agent,
            "submit",
            &format!(
                "{}/ws/v1/cluster/apps?user.name={}",
                self.base,
                Rest::user(user)
            ),
            Some(&submission(app_id, queue, am_memory_mb, am_vcores)),
        )?;
        Ok(())
    }

    /// `GET path` (e.g. `/ws/v1/cluster/metrics`) as JSON.
    pub(crate) fn get(&self, what: &'static str, path: &str) -> Result<Value, BenchError> {
        let text = self.get_text(what, path, JSON_LIMIT)?;
        serde_json::from_str(&text).map_err(|e| BenchError::Rest {
            what,
            message: format!("bad JSON ({e}): {text}"),
        })
    }

    /// `GET path` as text of at most `limit` bytes (e.g. the RM's `/metrics`).
    pub(crate) fn get_text(
        &self,
        what: &'static str,
        path: &str,
        limit: u64,
    ) -> Result<String, BenchError> {
        let err = |message: String| BenchError::Rest { what, message };
        let url = format!("{}{path}", self.base);
        let mut response = self
            .agent
            .get(&url)
            .call()
            .map_err(|e| err(format!("cannot reach {url}: {e}")))?;
        let status = response.status();
        let text = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(|e| err(format!("reading {url}: {e}")))?;
        if !status.is_success() {
            return Err(err(format!("HTTP {}: {text}", status.as_u16())));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submission_has_hadoops_shape() {
        let body = submission("application_1_0001", "default", 1024, 1);
        assert_eq!(body["application-id"], "application_1_0001");
        assert_eq!(body["queue"], "default");
        assert_eq!(body["resource"], json!({"memory": 1024, "vCores": 1}));
        assert_eq!(body["am-container-spec"]["commands"]["command"], "true");
        assert_eq!(body["max-app-attempts"], 1);
    }
}
