//! Hadoop's `RemoteException` error answers and how core errors map onto them.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use weft_rm_core::RmError;

use crate::driver::DriverError;

/// A `RemoteException` answer: the status and the exception Hadoop's handler would name.
#[derive(Debug)]
pub(crate) struct RestError {
    pub(crate) status: StatusCode,
    exception: &'static str,
    java: &'static str,
    pub(crate) message: String,
}

impl RestError {
    /// 400 `BadRequestException`.
    pub(crate) fn bad_request(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::BAD_REQUEST,
            exception: "BadRequestException",
            java: "org.apache.hadoop.yarn.webapp.BadRequestException",
            message: message.into(),
        }
    }
    /// 404 `NotFoundException`.
    pub(crate) fn not_found(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::NOT_FOUND,
            exception: "NotFoundException",
            java: "org.apache.hadoop.yarn.webapp.NotFoundException",
            message: message.into(),
        }
    }
    /// 409 as a `WebApplicationException` (yarn.webapp has no conflict exception of its own).
    pub(crate) fn conflict(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::CONFLICT,
            exception: "WebApplicationException",
            java: "javax.ws.rs.WebApplicationException",
            message: message.into(),
        }
    }
    /// 403 `ForbiddenException`.
    pub(crate) fn forbidden(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::FORBIDDEN,
            exception: "ForbiddenException",
            java: "org.apache.hadoop.yarn.webapp.ForbiddenException",
            message: message.into(),
        }
    }
    /// 401 `AuthorizationException`: the caller is not an administrator.
    pub(crate) fn unauthorized(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::UNAUTHORIZED,
            exception: "AuthorizationException",
            java: "org.apache.hadoop.security.authorize.AuthorizationException",
            message: message.into(),
        }
    }
    /// 405, as Jersey answers a path that exists under another method.
    pub(crate) fn method_not_allowed() -> RestError {
        RestError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            exception: "WebApplicationException",
            java: "javax.ws.rs.WebApplicationException",
            message: "HTTP method not allowed on this resource".to_string(),
        }
    }
    /// 503 `YarnException`: the RM cannot answer now.
    pub(crate) fn unavailable(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            exception: "YarnException",
            java: "org.apache.hadoop.yarn.exceptions.YarnException",
            message: message.into(),
        }
    }
}

/// Middleware: an error answer that did not come from a handler (axum's own rejections, such
/// as 413 for a body over the size limit, which are plain text) becomes a `RemoteException`
/// like every other error, with the same status.
pub(crate) async fn remote_exception_for_plain_errors(resp: Response) -> Response {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return resp;
    }
    let text = axum::body::to_bytes(resp.into_body(), 64 << 10)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    RestError {
        status,
        exception: "WebApplicationException",
        java: "javax.ws.rs.WebApplicationException",
        message,
    }
    .into_response()
}

impl From<DriverError> for RestError {
    fn from(e: DriverError) -> RestError {
        RestError::unavailable(e.to_string())
    }
}

impl From<RmError> for RestError {
    fn from(e: RmError) -> RestError {
        let m = e.to_string();
        match e {
            RmError::UnknownApp(id) => RestError::not_found(format!("app with id: {id} not found")),
            RmError::UnknownAttempt(_) | RmError::UnknownNode(_) | RmError::UnknownDemand(_) => {
                RestError::not_found(m)
            }
            RmError::DemandFinal { .. } => RestError::conflict(m),
            RmError::Forbidden(_) | RmError::InvalidToken(_) => RestError::forbidden(m),
            RmError::Corrupt(_) | RmError::Scheduler(_) => RestError::unavailable(m),
            _ => RestError::bad_request(m),
        }
    }
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        let body = json!({"RemoteException": {
            "exception": self.exception,
            "message": self.message,
            "javaClassName": self.java,
        }});
        (self.status, Json(body)).into_response()
    }
}
