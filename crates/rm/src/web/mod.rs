//! The RM's web UI (`/cluster/...`), Prometheus metrics (`/metrics`) and health probes.
//!
//! Pages are rendered on the server from one read of the core (see [`View`]). Each page's
//! changing part sits in `<div id="live">`; `weft.js` re-fetches the same URL with
//! `fragment=1` every few seconds and swaps that part in, so pages stay live without reloads
//! and without any script build step.

mod apps;
mod capacity;
mod demands;
mod fifo;
mod html;
mod nodelabels;
mod nodes;
mod overview;
mod scheduler;

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use weft_rm_core::{AppReport, NodeInfo, NodeLabelInfo};
use weft_sched::{SchedulerKind, Snapshot};
use weft_types::{ResourceTypes, Time};

use crate::clock;
use crate::driver::{Driver, DriverError};
use crate::rest::Rest;
use html::Page;
pub(crate) use html::UNBOUNDED;
pub(crate) use overview::{APP_STATES, NODE_STATES};

const CSS: &str = include_str!("static/weft.css");
const JS: &str = include_str!("static/weft.js");

/// How long `/readyz` waits for the driver before declaring the RM not ready.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// The web router: UI pages, static assets, metrics and probes. It has no fallback (the REST
/// router it is merged with owns that).
pub(crate) fn router(state: Rest) -> Router {
    Router::new()
        .route("/", get(|| async { Redirect::to("/cluster") }))
        .route("/cluster", get(overview_page))
        .route("/cluster/scheduler", get(scheduler_page))
        .route("/cluster/apps", get(apps_page))
        .route("/cluster/app/{id}", get(app_page))
        .route("/cluster/nodes", get(nodes_page))
        .route("/cluster/nodelabels", get(nodelabels_page))
        .route("/cluster/demands", get(demands_page))
        .route("/static/{file}", get(asset))
        .route("/metrics", get(metrics))
        // Hadoop 3.4's name for the same exposition.
        .route("/prom", get(metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/isActive", get(|| async { "I am Active!" }))
        // yarn-api-client probes /cluster with `user.name` and keeps the login cookie.
        .layer(axum::middleware::from_fn(crate::rest::auth::set_cookie))
        .with_state(state)
}

/// Everything the pages and the metrics read, taken in one driver job (one consistent view).
pub(crate) struct View {
    /// Which scheduler runs (the scheduler page's shape, `weft_scheduler_info`).
    pub(crate) kind: SchedulerKind,
    /// Queues, scheduler apps, cluster totals.
    pub(crate) snapshot: Snapshot,
    /// Every application the RM knows.
    pub(crate) apps: Vec<AppReport>,
    /// Every node.
    pub(crate) nodes: Vec<NodeInfo>,
    /// Applications and nodes by state, containers on the nodes.
    pub(crate) counts: weft_rm_core::StateCounts,
    /// Outstanding asks and reservations, summed.
    pub(crate) pending: weft_sched::PendingSummary,
    /// The cluster's node labels (resource pools and admin labels).
    pub(crate) labels: Vec<NodeLabelInfo>,
    /// Resource type names.
    pub(crate) types: ResourceTypes,
    /// Containers allocated since the start.
    pub(crate) allocations: u64,
    /// Capacity Scheduler: each queue's figures, root first (empty for other kinds).
    pub(crate) capacity: Vec<weft_sched::CapacityQueueDetails>,
    /// Capacity Scheduler: the capacity-scheduler.xml in force.
    pub(crate) capacity_file: Option<weft_config::capacity::CapacityConfig>,
    /// Time-aware demands counted by state and reason (`weft_demands`).
    pub(crate) demand_counts: Vec<(weft_rm_core::DemandState, weft_rm_core::DemandReason, u64)>,
    /// Demand outcomes since the RM started (`weft_demand_deadline_total`, ...).
    pub(crate) demand_outcomes: weft_rm_core::DemandOutcomes,
    /// Each reservable queue's plan committed share now (`weft_plan_committed_ratio`).
    pub(crate) plan_ratios: Vec<(String, f64)>,
    /// Fair Scheduler with resource pools: each pool's figures, DEFAULT first (empty
    /// without pools).
    pub(crate) pools: Vec<weft_sched::PoolStats>,
    /// With resource pools: each queue of the snapshot bound to a pool, by full name (queues
    /// bound to none run in, and are shown with, DEFAULT).
    pub(crate) queue_pools: BTreeMap<String, String>,
}

/// Each queue of `snapshot` bound to a resource pool, by full name (none without pools).
fn queue_pools(
    core: &weft_rm_core::RmCore,
    snapshot: &Snapshot,
    pools: &[weft_sched::PoolStats],
) -> BTreeMap<String, String> {
    if pools.is_empty() {
        return BTreeMap::new();
    }
    snapshot
        .queues
        .iter()
        .filter_map(|q| Some((q.name.clone(), core.queue_partition(&q.name)?)))
        .collect()
}

/// Reads a [`View`] from the core.
pub(crate) async fn view(driver: &Driver) -> Result<View, DriverError> {
    driver
        .call(|core, now| view_of(core, now, Detail::Full))
        .await
}

/// What a [`View`] lists.
#[derive(Clone, Copy, PartialEq)]
enum Detail {
    /// Every app, node and scheduler app: the pages.
    Full,
    /// Queues, counts and totals only (`apps`, `nodes` and the snapshot's lists empty): what
    /// `/metrics` exports. At 12,000 nodes and 10,000 apps the full view held the driver
    /// 0.3-0.8 s per scrape.
    Counts,
}

fn view_of(core: &mut weft_rm_core::RmCore, now: weft_types::Time, detail: Detail) -> View {
    let full = detail == Detail::Full;
    let snapshot = if full {
        core.scheduler_snapshot()
    } else {
        core.scheduler_queue_snapshot()
    };
    let pools = core.scheduler().pool_stats();
    View {
        kind: core.scheduler().kind(),
        queue_pools: queue_pools(core, &snapshot, &pools),
        pools,
        snapshot,
        apps: if full { core.app_reports() } else { Vec::new() },
        nodes: if full { core.node_infos() } else { Vec::new() },
        counts: core.state_counts(),
        pending: core.scheduler().pending_summary(),
        labels: core.node_labels(),
        types: core.scheduler().resource_types().clone(),
        allocations: core.scheduler().allocation_count(),
        demand_counts: core.demand_counts(),
        demand_outcomes: core.demand_outcomes(),
        plan_ratios: core.plan_committed_ratios(now),
        capacity: core.scheduler().capacity_details(),
        capacity_file: match core.scheduler().config() {
            weft_sched::SchedulerConfig::Capacity(c) => Some(c.capacity.clone()),
            _ => None,
        },
    }
}

/// YARN's upper-case name of a state enum (`RUNNING`, `FINISHED`, ...).
pub(crate) fn state_name(state: impl std::fmt::Debug) -> String {
    format!("{state:?}").to_uppercase()
}

type Params = Query<BTreeMap<String, String>>;

fn wants_fragment(q: &BTreeMap<String, String>) -> bool {
    q.get("fragment").is_some_and(|v| v == "1")
}

/// The page itself, or only its live part when the script asks for it.
fn respond(status: StatusCode, page: &Page, url: &str, fragment: bool, now: Time) -> Response {
    let body = if fragment {
        page.live.clone()
    } else {
        let refresh = (status == StatusCode::OK).then_some(url);
        html::layout(page, refresh, now)
    };
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// The page's own URL (path and query without `fragment`), for the refresh script.
fn self_url(path: &str, raw: Option<&str>) -> String {
    let kept: Vec<&str> = raw
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("fragment="))
        .collect();
    if kept.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

fn unavailable(e: &DriverError) -> Response {
    let page = Page {
        title: "ResourceManager unavailable".into(),
        nav: "",
        head: String::new(),
        live: format!("<p class=\"notice\">{}</p>", html::esc(&e.to_string())),
    };
    respond(
        StatusCode::SERVICE_UNAVAILABLE,
        &page,
        "/cluster",
        false,
        clock::now(),
    )
}

/// `page` with a banner on top of its live part while the allocation file on disk is refused:
/// the old queues keep running, which the user would not otherwise see anywhere but the log.
/// Inside the live part, so it appears and goes away with the page's refreshes.
fn with_reload_banner(s: &Rest, mut page: Page) -> Page {
    let status = s.refresher.status();
    if let Some(error) = &status.error {
        let file = status
            .file
            .as_ref()
            .map_or("the allocation file".to_string(), |f| {
                f.display().to_string()
            });
        // The Capacity Scheduler's file is no allocation file: say what it is.
        let what = if file.ends_with(crate::CAPACITY_FILE) {
            "Queue configuration refused"
        } else {
            "Allocation file refused"
        };
        page.live = format!(
            "<div class=\"banner bad\" id=\"reload-banner\" role=\"alert\"><strong>{what}</strong> \
(last read {when} UTC, {count} refused since start): <code>{error}</code><br>The previous queue \
configuration stays in force until {file} loads: fix it (it is re-read when it changes) or run \
<code>weft rmadmin -refreshQueues</code>.</div>{live}",
            when = html::clock(Time(status.last_attempt_ms)),
            count = status.errors_total,
            error = html::esc(error),
            file = html::esc(&file),
            live = page.live,
        );
    }
    page
}

async fn render(
    s: &Rest,
    path: &str,
    raw: Option<String>,
    q: &BTreeMap<String, String>,
    build: impl FnOnce(&View, Time) -> Page,
) -> Response {
    match view(&s.driver).await {
        Ok(v) => {
            let now = clock::now();
            let page = with_reload_banner(s, build(&v, now));
            let url = self_url(path, raw.as_deref());
            respond(StatusCode::OK, &page, &url, wants_fragment(q), now)
        }
        Err(e) => unavailable(&e),
    }
}

async fn overview_page(
    State(s): State<Rest>,
    Query(q): Params,
    RawQuery(raw): RawQuery,
) -> Response {
    render(&s, "/cluster", raw, &q, overview::page).await
}

async fn scheduler_page(
    State(s): State<Rest>,
    Query(q): Params,
    RawQuery(raw): RawQuery,
) -> Response {
    render(&s, "/cluster/scheduler", raw, &q, scheduler::page).await
}

async fn apps_page(State(s): State<Rest>, Query(q): Params, RawQuery(raw): RawQuery) -> Response {
    let filter = apps::Filter::from_query(&q);
    render(&s, "/cluster/apps", raw, &q, move |v, now| {
        apps::list_page(v, &filter, now)
    })
    .await
}

async fn nodes_page(State(s): State<Rest>, Query(q): Params, RawQuery(raw): RawQuery) -> Response {
    // `node.label=` (empty) is DEFAULT, as the node-labels page links it.
    let label = q.get("node.label").cloned();
    render(&s, "/cluster/nodes", raw, &q, move |v, now| {
        nodes::page(v, label.as_deref(), now)
    })
    .await
}

async fn nodelabels_page(
    State(s): State<Rest>,
    Query(q): Params,
    RawQuery(raw): RawQuery,
) -> Response {
    render(&s, "/cluster/nodelabels", raw, &q, |v, _| {
        nodelabels::page(v)
    })
    .await
}

/// Reads only the demands (not the whole [`View`]): a demand report carries its timeline.
async fn demands_page(
    State(s): State<Rest>,
    Query(q): Params,
    RawQuery(raw): RawQuery,
) -> Response {
    match s
        .driver
        .call(|core, _| core.demands(None, None, None))
        .await
    {
        Ok(list) => {
            let now = clock::now();
            let page = with_reload_banner(&s, demands::page(&list));
            let url = self_url("/cluster/demands", raw.as_deref());
            respond(StatusCode::OK, &page, &url, wants_fragment(&q), now)
        }
        Err(e) => unavailable(&e),
    }
}

async fn app_page(State(s): State<Rest>, Path(id): Path<String>, Query(q): Params) -> Response {
    let fragment = wants_fragment(&q);
    let url = format!("/cluster/app/{}", html::url_encode(&id));
    let parsed = id.parse::<weft_types::yarn_id::ApplicationId>();
    let Ok(app_id) = parsed else {
        let page = apps::missing(&id, "is not a valid application id");
        return respond(StatusCode::NOT_FOUND, &page, &url, fragment, clock::now());
    };
    let found = s
        .driver
        .call(move |core, _| apps::Detail::read(core, &app_id))
        .await;
    let now = clock::now();
    match found {
        Ok(Some(detail)) => respond(
            StatusCode::OK,
            &with_reload_banner(&s, apps::detail_page(&detail, now)),
            &url,
            fragment,
            now,
        ),
        Ok(None) => {
            let page = apps::missing(&id, "is not known to this ResourceManager");
            respond(StatusCode::NOT_FOUND, &page, &url, fragment, now)
        }
        Err(e) => unavailable(&e),
    }
}

async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "weft.css" => (CSS, "text/css; charset=utf-8"),
        "weft.js" => (JS, "text/javascript; charset=utf-8"),
        _ => {
            return (
                StatusCode::NOT_FOUND,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "no such file",
            )
                .into_response()
        }
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        body,
    )
        .into_response()
}

async fn metrics(State(s): State<Rest>) -> Response {
    let counts = s
        .driver
        .call(|core, now| view_of(core, now, Detail::Counts))
        .await;
    match counts {
        Ok(v) => {
            let text =
                crate::metrics::render(&v, &s.driver.stats(), s.started_on, &s.refresher.status());
            (
                [(
                    header::CONTENT_TYPE,
                    "text/plain; version=0.0.4; charset=utf-8",
                )],
                text,
            )
                .into_response()
        }
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response(),
    }
}

async fn readyz(State(s): State<Rest>) -> Response {
    match tokio::time::timeout(READY_TIMEOUT, s.driver.call(|_, _| ())).await {
        Ok(Ok(())) => (StatusCode::OK, "ready").into_response(),
        Ok(Err(e)) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response(),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "the scheduler driver did not answer in time",
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use weft_rm_core::{RmConfig, RmCore};
    use weft_sched::SchedulerConfig;
    use weft_store::MemoryStore;

    /// GET on a blocking thread (ureq is synchronous): status and body.
    async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
        let url = format!("http://{addr}{path}");
        tokio::task::spawn_blocking(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into();
            let mut r = agent.get(&url).call().expect("GET");
            let status = r.status().as_u16();
            (status, r.body_mut().read_to_string().unwrap_or_default())
        })
        .await
        .expect("join")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pages_and_probes_answer_and_readiness_follows_the_driver() {
        let core = RmCore::new(RmConfig::new(SchedulerConfig::default()), 1, Time(1));
        let (driver, driver_loop, _) = crate::driver::new(
            core,
            Arc::new(MemoryStore::default()),
            Duration::from_millis(50),
            ResourceTypes::default(),
            Default::default(),
        );
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(driver_loop.run(stop_rx));
        let state = Rest {
            driver,
            cluster_ts: 1,
            started_on: 1,
            refresher: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, router(state)).await });

        assert_eq!(get(addr, "/healthz").await, (200, "ok".to_string()));
        assert_eq!(get(addr, "/readyz").await, (200, "ready".to_string()));
        assert_eq!(
            get(addr, "/isActive").await,
            (200, "I am Active!".to_string())
        );
        for path in [
            "/",
            "/cluster",
            "/cluster/scheduler",
            "/cluster/apps",
            "/cluster/nodes",
        ] {
            let (status, body) = get(addr, path).await;
            assert_eq!(status, 200, "{path}: {body}");
            assert!(body.starts_with("<!DOCTYPE html>"), "{path}: {body}");
            assert!(
                body.contains("id=\"live\" data-src=\"/cluster"),
                "{path}: {body}"
            );
        }
        let (status, body) = get(addr, "/cluster/scheduler?fragment=1").await;
        assert_eq!(status, 200);
        assert!(
            !body.contains("<html") && body.contains("data-queue=\"root\""),
            "{body}"
        );
        let (status, body) = get(addr, "/cluster/app/application_1_1").await;
        assert_eq!(status, 404, "{body}");
        let (status, _) = get(addr, "/cluster/app/not-an-id").await;
        assert_eq!(status, 404);
        assert_eq!(get(addr, "/static/weft.js").await.0, 200);
        assert_eq!(get(addr, "/static/other.js").await.0, 404);
        let (status, body) = get(addr, "/prom").await;
        assert_eq!(status, 200);
        assert!(
            body.contains("weft_cluster_nodes{state=\"RUNNING\"} 0"),
            "{body}"
        );

        stop.send_replace(true);
        task.await.expect("driver task");
        assert_eq!(get(addr, "/readyz").await.0, 503);
        assert_eq!(
            get(addr, "/healthz").await.0,
            200,
            "liveness is the process's"
        );
        assert_eq!(get(addr, "/cluster").await.0, 503);
        assert_eq!(get(addr, "/metrics").await.0, 503);
    }

    #[test]
    fn the_refresh_url_keeps_the_query_but_not_the_fragment_flag() {
        assert_eq!(self_url("/cluster/apps", None), "/cluster/apps");
        assert_eq!(
            self_url("/cluster/apps", Some("state=RUNNING&fragment=1&user=a%20b")),
            "/cluster/apps?state=RUNNING&user=a%20b"
        );
    }
}
