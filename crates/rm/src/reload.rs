//! Reloading the scheduler's queue file (fair-scheduler.xml, or capacity-scheduler.xml under
//! the Capacity Scheduler): polled when it changes (as Hadoop's
//! `AllocationFileLoaderService` does for the Fair Scheduler) and on demand
//! (`PUT /ws/v1/cluster/admin/refresh-queues`, `weft rmadmin -refreshQueues`). A bad file is
//! refused with its file and line, a refresh the scheduler refuses (the Capacity Scheduler's
//! refresh rules) with its reasons; the old queues stay.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::{mpsc, oneshot, watch};
use weft_config::{AllocationConfig, SchedulerProperties};
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig};

use crate::driver::Driver;

/// Reads and validates an allocation file.
pub(crate) fn load(path: &Path, props: &SchedulerProperties) -> Result<AllocationConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (config, warnings) =
        weft_config::alloc_file::parse_allocations(&text, &props.resource_types)
            .map_err(|d| format!("{}: {d}", path.display()))?;
    for w in warnings {
        tracing::warn!(file = %path.display(), "{w}");
    }
    Ok(config)
}

/// Reads and validates capacity-scheduler.xml over yarn-site's Capacity keys (`site`), with
/// the load-time rule that needs yarn-site (no queue's maximum allocation above the
/// cluster's).
pub(crate) fn load_capacity(
    path: &Path,
    site: &[(String, String)],
    props: &SchedulerProperties,
) -> Result<CapacitySchedulerConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e} (the Capacity Scheduler reads capacity-scheduler.xml from the configuration directory; see --conf-dir)",
            path.display()
        )
    })?;
    let refused = |d: weft_config::Diagnostics| {
        let from_site = if d.0.iter().any(|x| x.line == 0) {
            " (a problem without a line is in a yarn.scheduler.capacity.* property of yarn-site.xml)"
        } else {
            ""
        };
        format!("{}{from_site}: {d}", path.display())
    };
    let (capacity, warnings) =
        weft_config::capacity::parse_capacity_over_site(&text, site, &props.resource_types)
            .map_err(refused)?;
    weft_config::capacity::check_maximum_allocations(&capacity, props.maximum_allocation)
        .map_err(refused)?;
    for w in warnings {
        tracing::warn!(file = %path.display(), "{w}");
    }
    Ok(CapacitySchedulerConfig {
        capacity,
        properties: props.clone(),
    })
}

/// The file the scheduler's queues come from, and how to read it.
#[derive(Clone, Debug)]
pub(crate) enum QueueFile {
    /// The Fair Scheduler's allocation file.
    Fair(PathBuf),
    /// The Capacity Scheduler's capacity-scheduler.xml, read over yarn-site's Capacity keys.
    Capacity {
        /// The file.
        path: PathBuf,
        /// yarn-site's `yarn.scheduler.capacity.*` (and preemption) properties.
        site: Vec<(String, String)>,
    },
}

impl QueueFile {
    /// The file watched and named in messages.
    pub(crate) fn path(&self) -> &Path {
        match self {
            QueueFile::Fair(path) | QueueFile::Capacity { path, .. } => path,
        }
    }

    /// The whole scheduler configuration the file gives, or why it is refused.
    pub(crate) fn read(&self, props: &SchedulerProperties) -> Result<SchedulerConfig, String> {
        match self {
            QueueFile::Fair(path) => Ok(SchedulerConfig::fair(load(path, props)?, props.clone())),
            QueueFile::Capacity { path, site } => {
                Ok(SchedulerConfig::Capacity(load_capacity(path, site, props)?))
            }
        }
    }
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Why an on-demand refresh did not apply; the old queues stay in every case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RefreshError {
    /// The file is unreadable or invalid (the message names the file and line).
    #[error("{0}")]
    Invalid(String),
    /// The RM is stopping or could not record the change.
    #[error("{0}")]
    Unavailable(String),
}

/// What an on-demand refresh applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refreshed {
    /// The allocation file was re-read and swapped in.
    File(PathBuf),
    /// The RM runs without an allocation file: nothing to re-read.
    NoFile,
}

/// What the allocation-file reloads did so far: shown as a banner on every web UI page while
/// the file on disk is refused, exported in `/metrics`, and served at
/// `GET /ws/v1/cluster/admin/allocation-file` (which `weft up` polls to tell its terminal).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReloadStatus {
    /// The allocation file, if the RM has one.
    pub(crate) file: Option<PathBuf>,
    /// When the file was last read (at startup or a reload), epoch ms.
    pub(crate) last_attempt_ms: u64,
    /// When the file last loaded successfully, epoch ms.
    pub(crate) last_success_ms: u64,
    /// Why the last read was refused; `None` once a good file loads.
    pub(crate) error: Option<String>,
    /// Refused reloads since the RM started.
    pub(crate) errors_total: u64,
}

impl ReloadStatus {
    /// The status of an RM that has just loaded `file` (or runs without one) at `now_ms`.
    pub(crate) fn loaded_at_start(file: Option<PathBuf>, now_ms: u64) -> ReloadStatus {
        ReloadStatus {
            file,
            last_attempt_ms: now_ms,
            last_success_ms: now_ms,
            error: None,
            errors_total: 0,
        }
    }
}

/// The shared, updatable [`ReloadStatus`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ReloadLog(Arc<Mutex<ReloadStatus>>);

impl ReloadLog {
    pub(crate) fn new(status: ReloadStatus) -> ReloadLog {
        ReloadLog(Arc::new(Mutex::new(status)))
    }

    /// A copy of the status now.
    pub(crate) fn status(&self) -> ReloadStatus {
        // A poisoned lock still holds a whole status (every update is one assignment).
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn record(&self, now_ms: u64, outcome: Result<(), String>) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.last_attempt_ms = now_ms;
        match outcome {
            Ok(()) => {
                s.last_success_ms = now_ms;
                s.error = None;
            }
            Err(e) => {
                s.errors_total += 1;
                s.error = Some(e);
            }
        }
    }
}

/// A refresh request to a watcher, answered once the reload is applied or refused.
type Request = oneshot::Sender<Result<PathBuf, RefreshError>>;

/// The REST side of on-demand refreshes: a line to the allocation-file watcher, if the RM has
/// an allocation file, and what the reloads did.
#[derive(Clone, Default)]
pub(crate) struct Refresher {
    requests: Option<mpsc::Sender<Request>>,
    log: ReloadLog,
}

/// The watcher's side of a [`Refresher`].
pub(crate) struct Requests(mpsc::Receiver<Request>);

/// A connected refresher and the requests it sends, for [`watch_file`], sharing `log`.
pub(crate) fn refresh_channel(log: ReloadLog) -> (Refresher, Requests) {
    let (tx, rx) = mpsc::channel(4);
    let refresher = Refresher {
        requests: Some(tx),
        log,
    };
    (refresher, Requests(rx))
}

impl Refresher {
    /// A refresher for an RM without an allocation file (nothing to re-read).
    pub(crate) fn without_file(log: ReloadLog) -> Refresher {
        Refresher {
            requests: None,
            log,
        }
    }

    /// What the reloads did so far.
    pub(crate) fn status(&self) -> ReloadStatus {
        self.log.status()
    }

    /// Re-reads the allocation file now.
    pub(crate) async fn refresh(&self) -> Result<Refreshed, RefreshError> {
        let Some(tx) = &self.requests else {
            return Ok(Refreshed::NoFile);
        };
        let stopping = || RefreshError::Unavailable("the ResourceManager is shutting down".into());
        let (reply, answer) = oneshot::channel();
        tx.send(reply).await.map_err(|_| stopping())?;
        answer.await.map_err(|_| stopping())?.map(Refreshed::File)
    }
}

/// Parses `file` and, if valid, swaps it into the core (which may still refuse it).
async fn apply(
    file: &QueueFile,
    props: &SchedulerProperties,
    driver: &Driver,
) -> Result<(), RefreshError> {
    let config = file.read(props).map_err(RefreshError::Invalid)?;
    let path = file.path().to_path_buf();
    match driver.call(move |core, now| core.reload(now, config)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(RefreshError::Invalid(format!("{}: {e}", path.display()))),
        Err(e) => Err(RefreshError::Unavailable(e.to_string())),
    }
}

/// Records a reload's outcome in `log` (a refusal the RM could not even try, because it is
/// stopping, is not the file's fault and is not counted).
fn note(log: &ReloadLog, result: &Result<(), RefreshError>) {
    let now_ms = crate::clock::now().as_millis();
    match result {
        Ok(()) => log.record(now_ms, Ok(())),
        Err(RefreshError::Invalid(e)) => log.record(now_ms, Err(e.clone())),
        Err(RefreshError::Unavailable(_)) => {}
    }
}

/// Polls `path` every `every` until `stop`; each change is parsed and, if valid, swapped in.
/// Also serves the on-demand refreshes of its [`Refresher`]; every outcome goes to `log`.
pub(crate) async fn watch_file(
    file: QueueFile,
    every: Duration,
    props: SchedulerProperties,
    driver: Driver,
    Requests(mut requests): Requests,
    log: ReloadLog,
    mut stop: watch::Receiver<bool>,
) {
    let path = file.path().to_path_buf();
    let mut last = stamp(&path);
    loop {
        // The select only picks what woke us: its output holds a `watch::Ref`, which must
        // not live across the awaits below.
        let request = tokio::select! {
            _ = tokio::time::sleep(every) => None,
            _ = stop.wait_for(|s| *s) => break,
            Some(reply) = requests.recv() => Some(reply),
        };
        if let Some(reply) = request {
            last = stamp(&path);
            let result = apply(&file, &props, &driver).await;
            note(&log, &result);
            match &result {
                Ok(()) => {
                    tracing::info!(file = %path.display(), "allocation file refreshed on request")
                }
                Err(e) => tracing::error!(error = %e, "refresh refused; keeping the old queues"),
            }
            let _ = reply.send(result.map(|()| path.clone()));
            continue;
        }
        let now = stamp(&path);
        if now == last {
            continue;
        }
        last = now;
        let result = apply(&file, &props, &driver).await;
        note(&log, &result);
        match result {
            Ok(()) => tracing::info!(file = %path.display(), "allocation file reloaded"),
            Err(e) => {
                tracing::error!(error = %e, "allocation file refused; keeping the old queues")
            }
        }
    }
}
