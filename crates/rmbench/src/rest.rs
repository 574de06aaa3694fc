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

/// Creates and submits the application; returns its id. Blocking (run it off the runtime).
pub(crate) fn submit(
    web: &str,
    queue: &str,
    am_memory_mb: i64,
    am_vcores: i64,
) -> Result<String, BenchError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(CALL_TIMEOUT))
        .build()
        .into();
    let base = if web.starts_with("http://") || web.starts_with("https://") {
        web.trim_end_matches('/').to_string()
    } else {
        format!("http://{}", web.trim_end_matches('/'))
    };
    let user = std::env::var("USER").unwrap_or_else(|_| "weft-rmbench".into());
    let new_app = call(
        &agent,
        "new-application",
        &format!("{base}/ws/v1/cluster/apps/new-application?user.name={user}"),
        None,
    )?;
    let app_id = new_app
        .get("application-id")
        .and_then(Value::as_str)
        .ok_or_else(|| BenchError::Rest {
            what: "new-application",
            message: format!("no application-id in {new_app}"),
        })?
        .to_string();
    call(
        &agent,
        "submit",
        &format!("{base}/ws/v1/cluster/apps?user.name={user}"),
        Some(&submission(&app_id, queue, am_memory_mb, am_vcores)),
    )?;
    Ok(app_id)
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
