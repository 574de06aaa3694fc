//! The NodeManager's web service (YARN's NM REST API on port 8042): node facts, the
//! applications and containers this NM ran, and their log files, with Hadoop's paths,
//! JSON shapes and `RemoteException` errors.
//!
//! Logs are found from the log directory layout rather than the container table, so they
//! stay reachable after the application finished (Weft has no log aggregation).

mod logs;
mod stream;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::table::{Entry, Table};
use logs::{hadoop_time, LogError, LogRoot, OpenLog};
use stream::Chunks;

/// What the NM knows about itself, for `/ws/v1/node/info`.
#[derive(Debug, Clone)]
pub(crate) struct NodeFacts {
    pub(crate) node_id: String,
    pub(crate) hostname: String,
    /// `host:port` of this web service, as registered with the RM.
    pub(crate) http_address: String,
    pub(crate) memory_mb: i64,
    pub(crate) vcores: i64,
    pub(crate) started_ms: i64,
}

/// What the handlers share.
#[derive(Debug, Clone)]
pub(crate) struct Web {
    facts: Arc<NodeFacts>,
    logs: LogRoot,
    table: Table,
}

impl Web {
    pub(crate) fn new(facts: NodeFacts, log_dir: std::path::PathBuf, table: Table) -> Web {
        Web {
            facts: Arc::new(facts),
            logs: LogRoot::new(log_dir),
            table,
        }
    }
}

/// A `RemoteException` answer, as Hadoop's web services give.
#[derive(Debug)]
struct WebError {
    status: StatusCode,
    exception: &'static str,
    java: &'static str,
    message: String,
}

impl WebError {
    fn bad_request(message: String) -> WebError {
        WebError {
            status: StatusCode::BAD_REQUEST,
            exception: "BadRequestException",
            java: "org.apache.hadoop.yarn.webapp.BadRequestException",
            message,
        }
    }
    fn not_found(message: String) -> WebError {
        WebError {
            status: StatusCode::NOT_FOUND,
            exception: "NotFoundException",
            java: "org.apache.hadoop.yarn.webapp.NotFoundException",
            message,
        }
    }
}

impl From<LogError> for WebError {
    fn from(e: LogError) -> WebError {
        let message = e.to_string();
        match e {
            LogError::BadContainer(_) | LogError::BadApp(_) | LogError::BadFile(_) => {
                WebError::bad_request(message)
            }
            LogError::NoContainer(_) | LogError::NoApp(_) | LogError::NoFile { .. } => {
                WebError::not_found(message)
            }
            LogError::Io { .. } => {
                tracing::warn!("web service: {message}");
                WebError {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    exception: "WebApplicationException",
                    java: "javax.ws.rs.WebApplicationException",
                    message,
                }
            }
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let body = json!({"RemoteException": {
            "exception": self.exception,
            "message": self.message,
            "javaClassName": self.java,
        }});
        (self.status, Json(body)).into_response()
    }
}

type Params = Query<BTreeMap<String, String>>;

/// The NM web service's routes.
pub(crate) fn router(web: Web) -> Router {
    Router::new()
        .route("/ws/v1/node", get(node_info))
        .route("/ws/v1/node/info", get(node_info))
        .route("/ws/v1/node/apps", get(list_apps))
        .route("/ws/v1/node/apps/{appid}", get(get_app))
        .route("/ws/v1/node/containers", get(list_containers))
        .route("/ws/v1/node/containers/{cid}", get(get_container))
        .route("/ws/v1/node/containers/{cid}/logs", get(container_logs))
        .route("/ws/v1/node/containers/{cid}/logs/{file}", get(log_file))
        .route("/ws/v1/node/containerlogs/{cid}/{file}", get(log_file))
        .route("/node/containerlogs/{cid}/{user}", get(log_page))
        .route(
            "/node/containerlogs/{cid}/{user}/{file}",
            get(log_page_file),
        )
        .fallback(not_found)
        .with_state(web)
}

/// Serves `router` on `listener` until `stop` turns true.
pub(crate) async fn serve(listener: TcpListener, web: Web, mut stop: watch::Receiver<bool>) {
    let result = axum::serve(listener, router(web))
        .with_graceful_shutdown(async move {
            let _ = stop.wait_for(|s| *s).await;
        })
        .await;
    if let Err(e) = result {
        tracing::error!("NM web service failed: {e}");
    }
}

async fn not_found(uri: axum::http::Uri) -> WebError {
    WebError::not_found(format!("no such resource: {}", uri.path()))
}

async fn node_info(State(web): State<Web>) -> Json<Value> {
    let f = &web.facts;
    Json(json!({"nodeInfo": {
        "id": f.node_id,
        "nodeHostName": f.hostname,
        "nodeHealthy": true,
        "healthReport": "",
        "lastNodeUpdateTime": crate::clock::now_ms(),
        "totalPmemAllocatedContainersMB": f.memory_mb,
        "totalVCoresAllocatedContainers": f.vcores,
        "pmemCheckEnabled": true,
        "vmemCheckEnabled": false,
        "nodeManagerVersion": env!("CARGO_PKG_VERSION"),
        "nodeManagerBuildVersion": concat!("weft ", env!("CARGO_PKG_VERSION")),
        "nmStartupTime": f.started_ms,
        "httpAddress": f.http_address,
    }}))
}

/// Hadoop's `AppInfo` for an app with log directories here.
fn app_json(web: &Web, app: &str, containers: Vec<String>) -> Value {
    let state = if web.table.app_running(app) {
        "RUNNING"
    } else {
        "FINISHED"
    };
    json!({
        "id": app,
        "state": state,
        "user": web.table.user_of(app).unwrap_or_default(),
        "containerids": containers,
    })
}

async fn list_apps(State(web): State<Web>) -> Json<Value> {
    let apps: Vec<Value> = web
        .logs
        .apps()
        .into_iter()
        .filter_map(|app| {
            let containers = web.logs.containers_of(&app).ok()?;
            Some(app_json(&web, &app, containers))
        })
        .collect();
    Json(json!({"apps": {"app": apps}}))
}

async fn get_app(State(web): State<Web>, Path(app): Path<String>) -> Result<Json<Value>, WebError> {
    let containers = web.logs.containers_of(&app)?;
    // The canonical spelling, which the directory (and the table) use.
    let id = logs::parse_app(&app)?.to_string();
    Ok(Json(json!({"app": app_json(&web, &id, containers)})))
}

/// Hadoop's `ContainerInfo` for a container in the table.
fn container_json(web: &Web, e: &Entry) -> Value {
    let completion = e.handle.completion();
    let (state, exit) = match &completion {
        Some(c) => ("DONE", c.exit_status),
        None => ("RUNNING", weft_proto::exit_status::INVALID),
    };
    let id = e.handle.id();
    let files: Vec<String> = web
        .logs
        .list(id)
        .map(|fs| fs.into_iter().map(|f| f.name).collect())
        .unwrap_or_default();
    json!({
        "id": id,
        "state": state,
        "exitCode": exit,
        "diagnostics": completion.map(|c| c.diagnostics).unwrap_or_default(),
        "user": e.user,
        "totalMemoryNeededMB": e.capability.memory_mb,
        "totalVCoresNeeded": e.capability.vcores,
        "containerLogsLink": format!(
            "http://{}/node/containerlogs/{id}/{}",
            web.facts.http_address, e.user
        ),
        "nodeId": web.facts.node_id,
        "containerLogFiles": files,
    })
}

async fn list_containers(State(web): State<Web>) -> Json<Value> {
    let containers: Vec<Value> = web
        .table
        .all()
        .iter()
        .map(|e| container_json(&web, e))
        .collect();
    Json(json!({"containers": {"container": containers}}))
}

async fn get_container(
    State(web): State<Web>,
    Path(cid): Path<String>,
) -> Result<Json<Value>, WebError> {
    logs::parse_container(&cid)?;
    let entry = web
        .table
        .get(&cid)
        .ok_or_else(|| WebError::not_found(format!("container with id, {cid}, not found")))?;
    Ok(Json(json!({"container": container_json(&web, &entry)})))
}

/// Hadoop 3's `ContainerLogsInfo` list (local logs only: Weft does not aggregate).
async fn container_logs(
    State(web): State<Web>,
    Path(cid): Path<String>,
) -> Result<Response, WebError> {
    let files: Vec<Value> = web
        .logs
        .list(&cid)?
        .into_iter()
        .map(|f| {
            json!({
                "fileName": f.name,
                "fileSize": f.size.to_string(),
                "lastModifiedTime": hadoop_time(f.modified_ms),
            })
        })
        .collect();
    let body = json!([{
        "containerLogInfo": files,
        "logAggregationType": "LOCAL",
        "containerId": cid,
        "nodeId": web.facts.node_id,
    }]);
    Ok(([(header::X_CONTENT_TYPE_OPTIONS, "nosniff")], Json(body)).into_response())
}

fn size_param(q: &BTreeMap<String, String>) -> Result<Option<i64>, WebError> {
    match q.get("size").map(|s| s.trim()).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| WebError::bad_request(format!("invalid size {s:?}: not an integer"))),
    }
}

fn plain_text(body: Chunks) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// Opens off the async runtime (the open walks the directories one `openat` at a time).
async fn open(
    web: &Web,
    cid: String,
    file: String,
    size: Option<i64>,
) -> Result<OpenLog, WebError> {
    let logs = web.logs.clone();
    tokio::task::spawn_blocking(move || logs.open(&cid, &file, size))
        .await
        .map_err(|e| {
            WebError::from(LogError::Io {
                path: std::path::PathBuf::new(),
                source: std::io::Error::other(e.to_string()),
            })
        })?
        .map_err(WebError::from)
}

fn chunks(log: OpenLog) -> Result<Chunks, WebError> {
    stream::chunks(log).map_err(|source| {
        WebError::from(LogError::Io {
            path: std::path::PathBuf::new(),
            source,
        })
    })
}

/// The raw contents of one log file (`?size=N`: the first N bytes, or the last |N|).
async fn log_file(
    State(web): State<Web>,
    Path((cid, file)): Path<(String, String)>,
    Query(q): Params,
) -> Result<Response, WebError> {
    let size = size_param(&q)?;
    Ok(plain_text(chunks(open(&web, cid, file, size).await?)?))
}

/// The page the RM's log links point at: every log file of the container, one after the
/// other in the `yarn logs` layout, as plain text (`?size=` applies to each file). Each file
/// is streamed whole, however large.
async fn log_page(
    State(web): State<Web>,
    Path((cid, _user)): Path<(String, String)>,
    Query(q): Params,
) -> Result<Response, WebError> {
    use std::os::unix::fs::FileExt;
    let size = size_param(&q)?;
    let mut parts = Vec::new();
    for f in web.logs.list(&cid)? {
        let log = open(&web, cid.clone(), f.name.clone(), size).await?;
        let mut last = [0u8];
        let ends_with_newline = log.count == 0
            || log
                .file
                .read_at(&mut last, log.offset + log.count - 1)
                .is_ok_and(|n| n == 1 && last[0] == b'\n');
        parts.push(stream::text(format!(
            "LogType:{}\nLogLastModifiedTime:{}\nLogLength:{}\nLogContents:\n",
            f.name,
            hadoop_time(f.modified_ms),
            log.len
        )));
        parts.push(chunks(log)?);
        let newline = if ends_with_newline { "" } else { "\n" };
        parts.push(stream::text(format!(
            "{newline}End of LogType:{}\n\n",
            f.name
        )));
    }
    Ok(plain_text(stream::concat(parts)))
}

async fn log_page_file(
    State(web): State<Web>,
    Path((cid, _user, file)): Path<(String, String, String)>,
    Query(q): Params,
) -> Result<Response, WebError> {
    let size = size_param(&q)?;
    Ok(plain_text(chunks(open(&web, cid, file, size).await?)?))
}
