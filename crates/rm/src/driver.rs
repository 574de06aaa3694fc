//! The one task that owns the [`RmCore`]: it runs jobs sent by the RPC and REST handlers, ticks
//! the core, and hands each round's `Persist` outputs, answers and NM calls to the store
//! writer (`store_writer`), which makes the writes durable *before* answering the jobs that
//! caused them and carrying out AM launches and container stops through the NMs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::sync::{mpsc, oneshot, watch};
use weft_proto::auth::with_nm_token;
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::{
    ContainerLaunchContext, LocalResourceType, StartContainerRequest, StartContainersRequest,
};
use weft_rm_core::{AmLaunch, LocalResourceKind, Output, RmCore, Write};
use weft_store::StateStore;
use weft_types::{ResourceTypes, Time};

use crate::clock;
use crate::groups::{Change, GroupCache, GroupSettings};
use crate::store_writer::{Batch, StoreWriter, WriteStats};
use crate::verification::{Verifier, VerifyStats};

/// What a job hands back: run after the job's writes are durable.
pub(crate) type Reply = Box<dyn FnOnce() + Send>;
/// A job's reply, and whether it may be given before the writes of earlier rounds are
/// durable (when the job itself wrote nothing: see [`Driver::call_periodic_unordered`]).
struct Answer {
    reply: Reply,
    unordered: bool,
}
/// A unit of work on the core.
type Job = Box<dyn FnOnce(&mut RmCore, Time) -> Answer + Send>;
/// A job and the type name of the closure it runs (its call site, for the timing metrics).
type Sent = (&'static str, Job);

/// Jobs taken from each lane in one round before the store is written (one transaction for
/// all of them).
const BATCH: usize = 256;
/// Core time a round gives each lane (after its first job) while the lane has jobs.
const LANE_BUDGET: Duration = Duration::from_millis(10);
/// Jobs each lane holds before senders wait.
pub(crate) const LANE_CAPACITY: usize = 4096;

/// Why a job got no answer.
#[derive(Debug, Error)]
pub(crate) enum DriverError {
    /// The driver has stopped.
    #[error("the ResourceManager is shutting down")]
    Stopped,
    /// The store refused the job's writes; the change was not acknowledged.
    #[error("the state store could not record the change")]
    NotPersisted,
}

/// A handle to send jobs to the driver; cheap to clone.
///
/// Jobs come in two lanes: the periodic calls every NM and AM repeats (heartbeats, Allocates:
/// thousands a second at scale, each superseded by the next) and everything else (AM
/// register and finish, submissions, REST, admin: rare, and a caller may give up on them).
/// Every round of the driver takes what the control lane holds first, so a finish waits for
/// at most one round of heartbeats instead of the whole heartbeat backlog (with 10,000 AMs
/// finishing at once behind 12,000 NMs' heartbeats, finishes went unanswered for 30 s).
#[derive(Clone)]
pub(crate) struct Driver {
    control: mpsc::Sender<Sent>,
    periodic: mpsc::Sender<Sent>,
    stats: Arc<Mutex<DriverStats>>,
    groups: Arc<GroupCache>,
}

impl Driver {
    /// Runs `f` on the core and returns its result once the writes it caused are durable.
    pub(crate) async fn call<T: Send + 'static, F>(&self, f: F) -> Result<T, DriverError>
    where
        F: FnOnce(&mut RmCore, Time) -> T + Send + 'static,
    {
        Self::send(&self.control, f, None).await
    }

    /// [`Driver::call`] for the calls NMs and AMs repeat every interval (node heartbeats,
    /// Allocates): they queue behind the control calls of each round.
    pub(crate) async fn call_periodic<T: Send + 'static, F>(&self, f: F) -> Result<T, DriverError>
    where
        F: FnOnce(&mut RmCore, Time) -> T + Send + 'static,
    {
        Self::send(&self.periodic, f, None).await
    }

    /// [`Driver::call_periodic`] for a call whose answer may skip the queue of writes: when
    /// the call itself wrote nothing and `reveals_nothing` holds for its result, the result is
    /// answered as soon as its job has run, even while earlier jobs' writes are still being
    /// made durable. Only for results that show nothing a write decided (a heartbeat answer
    /// without container stops, app clean-ups or a new key): everything else waits, so no
    /// caller ever acts on a change the store could still lose.
    ///
    /// Why: at scale, app finishes and submissions keep the store writer busy, and every
    /// answer queued behind its fsyncs; a heartbeat waited for writes it has nothing to do
    /// with.
    pub(crate) async fn call_periodic_unordered<T: Send + 'static, F>(
        &self,
        f: F,
        reveals_nothing: fn(&T) -> bool,
    ) -> Result<T, DriverError>
    where
        F: FnOnce(&mut RmCore, Time) -> T + Send + 'static,
    {
        Self::send(&self.periodic, f, Some(reveals_nothing)).await
    }

    /// Jobs waiting in the periodic lane (for tests).
    #[cfg(test)]
    pub(crate) fn periodic_queued(&self) -> usize {
        LANE_CAPACITY - self.periodic.capacity()
    }

    /// Jobs waiting in the control lane (for tests).
    #[cfg(test)]
    pub(crate) fn control_queued(&self) -> usize {
        LANE_CAPACITY - self.control.capacity()
    }

    async fn send<T: Send + 'static, F>(
        lane: &mpsc::Sender<Sent>,
        f: F,
        reveals_nothing: Option<fn(&T) -> bool>,
    ) -> Result<T, DriverError>
    where
        F: FnOnce(&mut RmCore, Time) -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |core, now| {
            let value = f(core, now);
            let unordered = reveals_nothing.is_some_and(|reveals| reveals(&value));
            Answer {
                reply: Box::new(move || {
                    let _ = tx.send(value);
                }),
                unordered,
            }
        });
        let site = std::any::type_name::<F>();
        lane.send((site, job))
            .await
            .map_err(|_| DriverError::Stopped)?;
        rx.await.map_err(|_| DriverError::NotPersisted)
    }

    /// Makes sure the core knows `user`'s groups as the group mapping gives them now: looked
    /// up (off the async threads) when the cached answer is missing or stale, and handed to
    /// the core when it changed. Call it before core calls that read the caller's groups
    /// (placement, queue ACLs, `yarn.admin.acl`).
    pub(crate) async fn ensure_groups(&self, user: &str) -> Result<(), DriverError> {
        if self.groups.fresh(user, clock::now()) {
            return Ok(());
        }
        let cache = Arc::clone(&self.groups);
        let who = user.to_string();
        let change = tokio::task::spawn_blocking(move || cache.resolve(&who, clock::now()))
            .await
            .unwrap_or_default();
        if change == Change::default() {
            return Ok(());
        }
        let user = user.to_string();
        self.call(move |core, now| {
            if let Some(evicted) = change.evicted {
                core.set_user_groups(now, &evicted, Vec::new());
            }
            if let Some(groups) = change.groups {
                core.set_user_groups(now, &user, groups);
            }
        })
        .await
    }

    /// Forgets every cached group lookup (`rmadmin -refreshUserToGroupsMappings`).
    pub(crate) fn refresh_groups(&self) {
        self.groups.clear();
    }

    /// The driver's timing figures as of its last tick (at most one tick old).
    pub(crate) fn stats(&self) -> DriverStats {
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// How often and how long the driver ran the core for one kind of work.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct KindStats {
    /// `module.function` of the handler that sent the job, or `tick` / `update` for the
    /// driver's own ticks (`update` when the tick ran the scheduler's periodic update).
    pub(crate) kind: String,
    /// Jobs (or ticks) run.
    pub(crate) calls: u64,
    /// Seconds spent in the core for them.
    pub(crate) seconds: f64,
}

/// Timing figures of the driver loop, for `/metrics`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DriverStats {
    /// Per kind, sorted by kind.
    pub(crate) kinds: Vec<KindStats>,
    /// Seconds the last scheduler update (the tick that ran it) took.
    pub(crate) last_update_seconds: f64,
    /// Store transactions written.
    pub(crate) store_writes: u64,
    /// Seconds spent writing them.
    pub(crate) store_write_seconds: f64,
    /// The periodic verifications of the scheduler's state.
    pub(crate) verify: VerifyStats,
}

/// The loop's own counters: written without locking on every job, published once per tick.
#[derive(Default)]
struct Counters {
    index: HashMap<&'static str, usize>,
    stats: DriverStats,
}

impl Counters {
    fn record(&mut self, site: &'static str, took: Duration) {
        self.record_many(site, 1, took);
    }

    /// Records `calls` jobs of one kind that took `took` together.
    fn record_many(&mut self, site: &'static str, calls: usize, took: Duration) {
        let i = match self.index.get(site) {
            Some(i) => *i,
            None => {
                let i = self.stats.kinds.len();
                self.stats.kinds.push(KindStats {
                    kind: call_site(site),
                    ..KindStats::default()
                });
                self.index.insert(site, i);
                i
            }
        };
        let k = &mut self.stats.kinds[i];
        k.calls += calls as u64;
        k.seconds += took.as_secs_f64();
    }

    /// Merges kinds that share a label (closures of one handler have distinct types).
    fn snapshot(&self) -> DriverStats {
        let mut merged: std::collections::BTreeMap<&str, KindStats> = Default::default();
        for k in &self.stats.kinds {
            let m = merged.entry(&k.kind).or_insert_with(|| KindStats {
                kind: k.kind.clone(),
                ..KindStats::default()
            });
            m.calls += k.calls;
            m.seconds += k.seconds;
        }
        DriverStats {
            kinds: merged.into_values().collect(),
            ..self.stats.clone()
        }
    }
}

/// `module.function` from a closure's type name such as
/// `weft_rm::rest::submit::{{closure}}` or, for trait methods,
/// `<weft_rm::tracker::Tracker as weft_proto::...::ResourceTracker>::node_heartbeat::{{closure}}`
/// (there the module is the implementing type's).
pub(crate) fn call_site(type_name: &str) -> String {
    let mut plain = String::with_capacity(type_name.len());
    let mut first_group = String::new();
    let mut groups = 0usize;
    let mut depth = 0usize;
    for c in type_name.chars() {
        match c {
            '<' => {
                depth += 1;
                if depth == 1 {
                    groups += 1;
                }
            }
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ if groups == 1 => first_group.push(c),
            _ => {}
        }
    }
    let segments = |path: &str| -> Vec<String> {
        path.split("::")
            .filter(|p| !p.is_empty() && !p.starts_with('{'))
            .map(str::to_string)
            .collect()
    };
    let parts = segments(&plain);
    let Some(function) = parts.last() else {
        return "unknown".to_string();
    };
    if parts.len() >= 2 {
        return format!("{}.{function}", parts[parts.len() - 2]);
    }
    // `<Type as Trait>::method`: the module that defines the type.
    let self_type = first_group
        .split(" as ")
        .next()
        .unwrap_or_default()
        .trim_start_matches("impl ");
    let type_path = segments(self_type);
    match type_path.len() {
        0 | 1 => function.clone(),
        n => format!("{}.{function}", type_path[n - 2]),
    }
}

/// Sleeps until the core's next timeout (wall-clock epoch milliseconds), or forever when it
/// has none: the driver wakes the core exactly when something is due, not at the next tick.
async fn sleep_until_due(due: Option<weft_types::Time>) {
    match due {
        Some(due) => {
            let wait = due.as_millis().saturating_sub(clock::now().as_millis());
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        None => std::future::pending().await,
    }
}

/// The clock for durations only; the core never sees it.
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

/// The driver loop's state.
pub(crate) struct Loop {
    core: RmCore,
    store: Arc<dyn StateStore>,
    control: mpsc::Receiver<Sent>,
    periodic: mpsc::Receiver<Sent>,
    driver: Driver,
    tick: Duration,
    types: ResourceTypes,
    counters: Counters,
    /// When the core's next scheduler update is due (mirrors its rule, to label ticks).
    next_update: Time,
    /// Set (once) when the store refused a write: the loop has stopped, see [`StoreFailure`].
    failure: watch::Sender<Option<String>>,
    verifier: Verifier,
    /// Channels to the NMs for stopping containers.
    nm_channels: crate::nm_stops::NmChannels,
    /// The store writer's figures (its thread updates them).
    write_stats: Arc<WriteStats>,
}

/// Tells whether the driver stopped because the state store failed, and why.
///
/// A refused write leaves the core ahead of the store, and rolling the core back is not
/// possible, so the driver stops at once: nothing after the write is answered or carried out,
/// every later call fails, and the RM stops (`run` exits with the message). Restarted, the RM
/// recovers exactly what the store holds (Hadoop's RM also stops on a state-store failure
/// unless HA is on: `yarn.resourcemanager.fail-fast`).
#[derive(Clone)]
pub(crate) struct StoreFailure(watch::Receiver<Option<String>>);

impl StoreFailure {
    /// Waits until the store failed and returns the message; never returns otherwise.
    pub(crate) async fn wait(mut self) -> String {
        match self.0.wait_for(Option::is_some).await {
            Ok(message) => message.clone().unwrap_or_default(),
            Err(_) => std::future::pending().await,
        }
    }
}

/// A driver around `core`; spawn [`Loop::run`] and hand out the [`Driver`].
pub(crate) fn new(
    core: RmCore,
    store: Arc<dyn StateStore>,
    tick: Duration,
    types: ResourceTypes,
    groups: GroupSettings,
) -> (Driver, Loop, StoreFailure) {
    let (control, control_rx) = mpsc::channel(LANE_CAPACITY);
    let (periodic, periodic_rx) = mpsc::channel(LANE_CAPACITY);
    let (failure, failed) = watch::channel(None);
    let driver = Driver {
        control,
        periodic,
        stats: Arc::default(),
        groups: Arc::new(GroupCache::new(groups)),
    };
    let state = Loop {
        core,
        store,
        control: control_rx,
        periodic: periodic_rx,
        driver: driver.clone(),
        tick,
        types,
        counters: Counters::default(),
        next_update: Time(0),
        failure,
        verifier: Verifier::new(0),
        nm_channels: Default::default(),
        write_stats: Arc::default(),
    };
    (driver, state, StoreFailure(failed))
}

impl Loop {
    /// Verifies the scheduler's state every `interval_ms` (0: never).
    pub(crate) fn verify_every(&mut self, interval_ms: u64) {
        self.verifier = Verifier::new(interval_ms);
    }

    /// Writes what the core produced so far (used once at start for recovery's writes).
    pub(crate) fn flush_startup(&mut self) -> Result<(), weft_store::StoreError> {
        let (writes, rest) = split(&mut self.core);
        if !writes.is_empty() {
            self.store.apply(&writes)?;
        }
        self.carrier().carry_out(rest);
        Ok(())
    }

    /// Runs until `stop` turns true, the store fails, or every handle is gone.
    pub(crate) async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let writer = match self.start_writer() {
            Ok(writer) => writer,
            Err(e) => {
                let message = format!("the state store writer thread could not start: {e}");
                tracing::error!("{message}");
                self.failure.send_replace(Some(message));
                return;
            }
        };
        let carrier = self.carrier();
        let mut failed = self.failure.subscribe();
        let mut ticker = tokio::time::interval(self.tick);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let mut slice_ran = false;
            tokio::select! {
                job = self.control.recv() => {
                    let Some(job) = job else { break };
                    let replies = self.round(job);
                    if !self.flush(&writer, &carrier, replies) {
                        break; // the replies are dropped: their callers get an error
                    }
                }
                job = self.periodic.recv() => {
                    let Some(job) = job else { break };
                    let replies = self.round(job);
                    if !self.flush(&writer, &carrier, replies) {
                        break;
                    }
                }
                // Deferred heartbeats' scheduling passes (`RmCore::node_heartbeat_deferred`):
                // a slice of them whenever any wait, taking turns with the lanes (select!
                // picks among ready branches at random), so a burst of passes delays a
                // heartbeat's answer by one slice, not by the whole burst.
                _ = std::future::ready(()), if self.core.node_updates_due() > 0 => {
                    self.run_node_updates();
                    if !self.flush(&writer, &carrier, Vec::new()) {
                        break;
                    }
                    slice_ran = true;
                }
                // A verification round's slices (`Verifier`), one per tick, taking turns with
                // the lanes the same way: a slice holds the driver for a few milliseconds, and
                // the round is spread over seconds.
                _ = std::future::ready(()), if self.verifier.slice_due() => {
                    let took = self
                        .verifier
                        .run_slice(&mut self.core, &mut self.counters.stats.verify);
                    self.counters.record("verify", took);
                    if !self.flush(&writer, &carrier, Vec::new()) {
                        break;
                    }
                    slice_ran = true;
                }
                _ = sleep_until_due(self.core.poll_timeout()) => {
                    let start = stopwatch();
                    self.core.timeout(clock::now());
                    self.counters.record("timeout", start.elapsed());
                    if !self.flush(&writer, &carrier, Vec::new()) {
                        break;
                    }
                }
                _ = ticker.tick() => {
                    self.run_tick();
                    if !self.flush(&writer, &carrier, Vec::new()) {
                        break;
                    }
                    *self.driver.stats.lock().unwrap_or_else(PoisonError::into_inner) =
                        self.snapshot();
                }
                _ = failed.wait_for(Option::is_some) => break,
                _ = stop.wait_for(|s| *s) => break,
            }
            if slice_ran {
                // The passes' and the verification's branches are always ready while they
                // have work and spend no cooperative budget: without a yield the loop would
                // keep the worker thread from the connection tasks that read the next calls
                // and write the answers.
                tokio::task::yield_now().await;
            }
        }
        // What is queued is still written and answered (unless the store failed).
        let thread = writer.finish();
        let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        tracing::info!("driver stopped");
    }

    /// Carries out outputs on the current runtime.
    fn carrier(&self) -> Carrier {
        Carrier {
            driver: self.driver.clone(),
            types: self.types.clone(),
            nm_channels: self.nm_channels.clone(),
            runtime: tokio::runtime::Handle::current(),
        }
    }

    fn start_writer(&self) -> std::io::Result<StoreWriter> {
        let carrier = self.carrier();
        StoreWriter::spawn(
            Arc::clone(&self.store),
            Arc::clone(&self.write_stats),
            self.failure.clone(),
            move |outputs| carrier.carry_out(outputs),
        )
    }

    fn snapshot(&self) -> DriverStats {
        let mut stats = self.counters.snapshot();
        stats.store_writes = self.write_stats.transactions();
        stats.store_write_seconds = self.write_stats.seconds();
        stats
    }

    /// Runs `first`, then what the control lane holds, then what the periodic lane holds:
    /// from each lane at least one job and then more while the lane's [`LANE_BUDGET`] of core
    /// time lasts (at most [`BATCH`]), so that in a storm of costly finishes both finishes and
    /// heartbeats get about half of the driver (counts alone gave either lane all of it).
    fn round(&mut self, first: Sent) -> Vec<Reply> {
        let mut replies = Vec::with_capacity(16);
        self.run_job(first, &mut replies);
        let start = stopwatch();
        for taken in 0..BATCH {
            if taken > 0 && start.elapsed() >= LANE_BUDGET {
                break;
            }
            match self.control.try_recv() {
                Ok(job) => self.run_job(job, &mut replies),
                Err(_) => break,
            }
        }
        let start = stopwatch();
        for taken in 0..BATCH {
            if taken > 0 && start.elapsed() >= LANE_BUDGET {
                break;
            }
            match self.periodic.try_recv() {
                Ok(job) => self.run_job(job, &mut replies),
                Err(_) => break,
            }
        }
        replies
    }

    /// Runs waiting node passes for up to [`LANE_BUDGET`] of core time (at least one batch).
    fn run_node_updates(&mut self) {
        /// Passes run between two looks at the budget's clock.
        const STEP: usize = 8;
        let start = stopwatch();
        let mut ran = 0;
        loop {
            let taken = self.core.run_node_updates(clock::now(), STEP);
            ran += taken;
            if taken < STEP || start.elapsed() >= LANE_BUDGET {
                break;
            }
        }
        self.counters
            .record_many("node_update", ran, start.elapsed());
    }

    /// Runs one job: its reply is given at once when it may skip the writes' queue (it wrote
    /// nothing and its result shows nothing a write decided), else added to `replies`.
    fn run_job(&mut self, (site, job): Sent, replies: &mut Vec<Reply>) {
        let start = stopwatch();
        let writes_before = self.core.writes_made();
        let answer = job(&mut self.core, clock::now());
        self.counters.record(site, start.elapsed());
        if answer.unordered && self.core.writes_made() == writes_before {
            (answer.reply)();
        } else {
            replies.push(answer.reply);
        }
    }

    fn run_tick(&mut self) {
        let now = clock::now();
        let update = now >= self.next_update;
        let start = stopwatch();
        self.core.tick(now);
        let took = start.elapsed();
        if update {
            self.next_update = now + self.core.update_interval();
            self.counters.stats.last_update_seconds = took.as_secs_f64();
            self.counters.record("update", took);
        } else {
            self.counters.record("tick", took);
        }
        self.verifier.tick(now);
    }

    /// Hands the round's writes, answers and NM calls to the store writer, or answers and
    /// carries them out at once when the round wrote nothing and no earlier round is still
    /// with the writer (nothing it shows can be ahead of the store). False once the writer
    /// has stopped (the store refused a write): nothing more is answered.
    fn flush(&mut self, writer: &StoreWriter, carrier: &Carrier, replies: Vec<Reply>) -> bool {
        let (writes, outputs) = split(&mut self.core);
        if writes.is_empty() && replies.is_empty() && outputs.is_empty() {
            return true;
        }
        if writes.is_empty() && writer.idle() {
            for reply in replies {
                reply();
            }
            if !outputs.is_empty() {
                carrier.carry_out(outputs);
            }
            return true;
        }
        writer.send(Batch {
            writes,
            replies,
            outputs,
        })
    }
}

/// Carries out a durable batch's AM launches and container stops (from the store writer's
/// thread, or the driver's for a batch it answers itself, onto the runtime).
struct Carrier {
    driver: Driver,
    types: ResourceTypes,
    nm_channels: crate::nm_stops::NmChannels,
    runtime: tokio::runtime::Handle,
}

impl Carrier {
    fn carry_out(&self, outputs: Vec<Output>) {
        let mut stops = Vec::new();
        for o in outputs {
            match o {
                Output::LaunchAm(launch) => {
                    let driver = self.driver.clone();
                    let types = self.types.clone();
                    let channels = self.nm_channels.clone();
                    self.runtime
                        .spawn(launch_am(driver, *launch, types, channels));
                }
                Output::StopContainer {
                    node_address,
                    container,
                    nm_token,
                    ..
                } => stops.push((node_address, nm_token, container)),
                Output::Persist(_) => {}
            }
        }
        for batch in crate::nm_stops::batches(stops) {
            self.runtime.spawn(self.nm_channels.clone().stop(batch));
        }
    }
}

/// The core's outputs, writes (in order, as one batch) apart from the rest.
fn split(core: &mut RmCore) -> (Vec<Write>, Vec<Output>) {
    let mut writes = Vec::new();
    let mut rest = Vec::new();
    while let Some(o) = core.poll_output() {
        match o {
            Output::Persist(w) => writes.extend(w),
            other => rest.push(other),
        }
    }
    (writes, rest)
}

/// Starts an AM container; a failure fails the attempt (which is retried).
async fn launch_am(
    driver: Driver,
    launch: AmLaunch,
    types: ResourceTypes,
    channels: crate::nm_stops::NmChannels,
) {
    let container = launch.container;
    let result = start(&launch, &types, &channels).await;
    match result {
        Ok(()) => tracing::info!(%container, node = %launch.node_id, "AM container started"),
        Err(e) => {
            tracing::warn!(%container, node = %launch.node_id, error = %e, "AM launch failed");
            let _ = driver
                .call(move |core, now| core.am_launch_failed(now, container, &e))
                .await;
        }
    }
}

async fn start(
    launch: &AmLaunch,
    types: &ResourceTypes,
    channels: &crate::nm_stops::NmChannels,
) -> Result<(), String> {
    let mut nm = ContainerManagementClient::new(channels.channel(&launch.node_address)?);
    let ctx = &launch.launch;
    let request = StartContainerRequest {
        container_id: launch.container.to_string(),
        application_id: launch.container.app.to_string(),
        user: launch.user.clone(),
        resource: Some(weft_proto::v1::Resource::from_types(
            &launch.resource,
            types,
        )),
        container_launch_context: Some(ContainerLaunchContext {
            local_resources: ctx
                .local_resources
                .iter()
                .map(|(k, r)| {
                    let kind = match r.kind {
                        LocalResourceKind::File => LocalResourceType::File,
                        LocalResourceKind::Archive => LocalResourceType::Archive,
                        LocalResourceKind::Pattern => LocalResourceType::Pattern,
                    };
                    let wire = weft_proto::v1::LocalResource {
                        resource: r.url.clone(),
                        r#type: kind as i32,
                        ..Default::default()
                    };
                    (k.clone(), wire)
                })
                .collect(),
            environment: ctx.environment.clone().into_iter().collect(),
            command: ctx.commands.clone(),
            tokens: ctx.tokens.clone(),
            hadoop_quoting: ctx.hadoop_quoting,
        }),
        container_token: launch.container_token.clone(),
    };
    let request = with_nm_token(
        StartContainersRequest {
            start_container_request: vec![request],
        },
        &launch.nm_token,
    )
    .map_err(|e| e.to_string())?;
    let reply = nm
        .start_containers(request)
        .await
        .map_err(|s| format!("StartContainers: {}", s.message()))?
        .into_inner();
    match reply.failed_requests.first() {
        Some(f) => Err(f.exception.clone()),
        None => Ok(()),
    }
}

/// Best effort: the container is also in the node's next heartbeat reply.
#[cfg(test)]
mod tests {
    use super::*;

    fn site_of<F: FnOnce()>(_: F) -> String {
        call_site(std::any::type_name::<F>())
    }

    #[test]
    fn call_sites_name_the_handler_module_and_function() {
        assert_eq!(
            call_site("weft_rm::tracker::<impl weft_proto::v1::resource_tracker_server::ResourceTracker for weft_rm::tracker::Tracker>::node_heartbeat::{{closure}}::{{closure}}"),
            "tracker.node_heartbeat"
        );
        assert_eq!(
            call_site("weft_rm::rest::submit::{{closure}}"),
            "rest.submit"
        );
        assert_eq!(call_site("update"), "update");
        assert_eq!(
            site_of(|| ()),
            "tests.call_sites_name_the_handler_module_and_function"
        );
    }

    #[test]
    fn counters_merge_closures_of_one_handler() {
        let mut c = Counters::default();
        c.record(
            "weft_rm::rest::submit::{{closure}}",
            Duration::from_millis(2),
        );
        c.record(
            "weft_rm::rest::submit::{{closure}}::{{closure}}",
            Duration::from_millis(3),
        );
        c.record("tick", Duration::from_millis(1));
        let s = c.snapshot();
        assert_eq!(s.kinds.len(), 2);
        assert_eq!(s.kinds[0].kind, "rest.submit");
        assert_eq!(s.kinds[0].calls, 2);
        assert!((s.kinds[0].seconds - 0.005).abs() < 1e-9);
        assert_eq!(s.kinds[1].kind, "tick");
    }
}

#[cfg(test)]
#[path = "driver_test_support.rs"]
mod test_support;

#[cfg(test)]
#[path = "driver_store_failure.rs"]
mod store_failure;

#[cfg(test)]
#[path = "driver_lanes.rs"]
mod lanes;
#[cfg(test)]
#[path = "driver_unordered.rs"]
mod unordered;
