//! The distributed-shell client: submits the AM through the RM's REST API, as YARN's
//! `Client` does over RPC, then follows the application to its end.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use crate::shell::quote;

/// Where the RM's REST API is when neither `--rm` nor `$WEFT_RM` says otherwise.
pub const DEFAULT_RM: &str = "http://127.0.0.1:8088";
/// The application type the submission carries.
pub const APPLICATION_TYPE: &str = "DISTRIBUTEDSHELL";
/// How often the client asks the RM about the application.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The bound on any single REST call.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the client keeps retrying while the RM cannot be reached (e.g. it restarts).
/// YARN's client proxies retry for 15 minutes by default; a minute covers a restart without
/// leaving a user staring at a dead RM for long.
const RM_RETRY_WINDOW: Duration = Duration::from_secs(60);
/// The pause between attempts to reach the RM.
const RM_RETRY_PAUSE: Duration = Duration::from_millis(500);

/// `weft dshell`: run a shell command in N containers. Long names are spelled as in YARN's
/// distributed shell (`-shell_command` works through the CLI's single-dash shim).
#[derive(Clone, Debug, clap::Args)]
pub struct DshellArgs {
    /// The shell command to run in each container (bash syntax).
    #[arg(long = "shell_command")]
    pub shell_command: Option<String>,
    /// A script file to run in each container instead of a command.
    #[arg(long = "shell_script")]
    pub shell_script: Option<String>,
    /// Arguments appended to the command or script.
    #[arg(long = "shell_args", num_args = 1..)]
    pub shell_args: Vec<String>,
    /// Environment for the containers, `NAME=VALUE` (repeatable).
    #[arg(long = "shell_env")]
    pub shell_env: Vec<String>,
    /// How many containers run the command.
    #[arg(long = "num_containers", default_value_t = 1)]
    pub num_containers: u32,
    /// Memory per container, MB.
    #[arg(long = "container_memory", default_value_t = 10)]
    pub container_memory: i64,
    /// Virtual cores per container.
    #[arg(long = "container_vcores", default_value_t = 1)]
    pub container_vcores: i64,
    /// Priority of the containers' asks.
    #[arg(long = "shell_cmd_priority", default_value_t = 0)]
    pub shell_cmd_priority: i32,
    /// Weft-only: run the containers in all-or-nothing gangs of this many (it must divide
    /// --num_containers): each gang's containers are handed to the AM together, when the
    /// cluster has room for all of them.
    #[arg(long = "gang")]
    pub gang: Option<u32>,
    /// The queue to submit to.
    #[arg(long = "queue", default_value = "default")]
    pub queue: String,
    /// The application's priority.
    #[arg(long = "priority", default_value_t = 0)]
    pub priority: i32,
    /// Memory for the ApplicationMaster, MB.
    #[arg(long = "master_memory", default_value_t = 128)]
    pub master_memory: i64,
    /// Virtual cores for the ApplicationMaster.
    #[arg(long = "master_vcores", default_value_t = 1)]
    pub master_vcores: i64,
    /// The application's name.
    #[arg(long = "appname", default_value = "DistributedShell")]
    pub appname: String,
    /// How long to wait for the application, in ms, before killing it.
    #[arg(long = "timeout", default_value_t = 600_000)]
    pub timeout: u64,
    /// Keep the containers running when the AM restarts.
    #[arg(long = "keep_containers_across_application_attempts")]
    pub keep_containers_across_application_attempts: bool,
    /// AM attempts allowed (0 = the cluster's default). A Weft extension.
    #[arg(long = "max_app_attempts", default_value_t = 0)]
    pub max_app_attempts: u32,
    /// Accepted for compatibility with YARN command lines and ignored: Weft's AM is built in.
    #[arg(long = "jar")]
    pub jar: Option<String>,
    /// The RM's web address [default: $WEFT_RM, else http://127.0.0.1:8088].
    #[arg(long = "rm")]
    pub rm: Option<String>,
    /// Weft-only: the containers as one time-aware demand.
    #[command(flatten)]
    pub demand: crate::demand::DemandFlags,
}

impl DshellArgs {
    /// Checks the combinations YARN's client refuses.
    pub fn validate(&self) -> Result<(), String> {
        match (&self.shell_command, &self.shell_script) {
            (None, None) => return Err("no shell command or script specified to be executed by application master (use --shell_command or --shell_script)".into()),
            (Some(_), Some(_)) => return Err("cannot specify both --shell_command and --shell_script".into()),
            _ => {}
        }
        if self.num_containers < 1 {
            return Err(format!(
                "invalid --num_containers {}: must be at least 1",
                self.num_containers
            ));
        }
        if let Some(g) = self.gang {
            if g < 1 || !self.num_containers.is_multiple_of(g) {
                return Err(format!(
                    "invalid --gang {g}: must be at least 1 and divide --num_containers {}",
                    self.num_containers
                ));
            }
        }
        for (name, v) in [
            ("container_memory", self.container_memory),
            ("container_vcores", self.container_vcores),
            ("master_memory", self.master_memory),
            ("master_vcores", self.master_vcores),
        ] {
            if v < 0 {
                return Err(format!("invalid --{name} {v}: must not be negative"));
            }
        }
        if let Some(bad) = self.shell_env.iter().find(|e| !e.contains('=')) {
            return Err(format!("invalid --shell_env '{bad}': expected NAME=VALUE"));
        }
        self.demand_description()?;
        Ok(())
    }

    /// The RM's base URL: `--rm`, else `$WEFT_RM`, else [`DEFAULT_RM`].
    pub fn rm_url(&self) -> String {
        let raw = self
            .rm
            .clone()
            .or_else(|| std::env::var("WEFT_RM").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| DEFAULT_RM.to_string());
        let raw = raw.trim_end_matches('/');
        if raw.contains("://") {
            raw.to_string()
        } else {
            format!("http://{raw}")
        }
    }

    /// The containers' demand (`None` without demand flags), for their size as it stands.
    pub fn demand_description(&self) -> Result<Option<Value>, String> {
        self.demand.description(
            self.container_memory,
            self.container_vcores,
            self.num_containers,
            self.shell_cmd_priority,
            self.gang,
        )
    }

    /// The demand's key once the RM named the application.
    pub fn demand_key(&self, app_id: &str) -> Option<String> {
        let d = self.demand_description().ok().flatten()?;
        Some(format!("{app_id}/{}", d.get("DemandID")?.as_u64()?))
    }

    /// The AM's command line: the same binary, `dshell-am`, and this run's parameters, each
    /// quoted for the bash line the NM runs.
    pub fn am_command(&self, exe: &Path) -> String {
        let mut words = vec![
            exe.to_string_lossy().into_owned(),
            "dshell-am".to_string(),
            "--num_containers".to_string(),
            self.num_containers.to_string(),
            "--container_memory".to_string(),
            self.container_memory.to_string(),
            "--container_vcores".to_string(),
            self.container_vcores.to_string(),
            "--shell_cmd_priority".to_string(),
            self.shell_cmd_priority.to_string(),
        ];
        if let Some(g) = self.gang {
            words.extend(["--gang".to_string(), g.to_string()]);
        }
        if let Some(cmd) = &self.shell_command {
            words.extend(["--shell_command".to_string(), cmd.clone()]);
        }
        if let Some(script) = &self.shell_script {
            words.extend(["--shell_script".to_string(), script.clone()]);
        }
        for env in &self.shell_env {
            words.extend(["--shell_env".to_string(), env.clone()]);
        }
        if let Ok(Some(demand)) = self.demand_description() {
            words.extend([
                "--demand_hex".to_string(),
                crate::demand::to_hex(&demand.to_string()),
            ]);
        }
        // Last: --shell_args takes every word after it.
        if !self.shell_args.is_empty() {
            words.push("--shell_args".to_string());
            words.extend(self.shell_args.iter().cloned());
        }
        words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    }

    /// Lowers the AM's and the containers' sizes to the cluster's maximum allocation (the
    /// `maximum-resource-capability` of the new-application answer), as YARN's client does
    /// rather than letting the RM refuse the app; returns one line per lowered size, for the user.
    pub fn cap_to_maximum(&mut self, max_memory_mb: i64, max_vcores: i64) -> Vec<String> {
        let mut notes = Vec::new();
        for (flag, value, max, unit) in [
            (
                "master_memory",
                &mut self.master_memory,
                max_memory_mb,
                "MB",
            ),
            (
                "master_vcores",
                &mut self.master_vcores,
                max_vcores,
                "vcores",
            ),
            (
                "container_memory",
                &mut self.container_memory,
                max_memory_mb,
                "MB",
            ),
            (
                "container_vcores",
                &mut self.container_vcores,
                max_vcores,
                "vcores",
            ),
        ] {
            if max > 0 && *value > max {
                notes.push(format!(
                    "-{flag} {value} is above the cluster's maximum allocation of {max} {unit}; using {max} {unit}"
                ));
                *value = max;
            }
        }
        notes
    }

    /// The submission (`ApplicationSubmissionContextInfo`, Hadoop's JSON shape) for `app_id`,
    /// launching the AM through `exe`.
    pub fn submission_body(&self, app_id: &str, exe: &Path) -> Value {
        // The AM inherits only the logging setting: the NM gives it the rest of its environment.
        let env: Vec<Value> = std::env::var("RUST_LOG")
            .ok()
            .map(|v| json!({"key": "RUST_LOG", "value": v}))
            .into_iter()
            .collect();
        json!({
            "application-id": app_id,
            "application-name": self.appname,
            "queue": self.queue,
            "priority": self.priority,
            "am-container-spec": {
                "local-resources": {"entry": []},
                "environment": {"entry": env},
                "commands": {"command": self.am_command(exe)},
            },
            "unmanaged-AM": false,
            "max-app-attempts": self.max_app_attempts,
            "resource": {"memory": self.master_memory, "vCores": self.master_vcores},
            "application-type": APPLICATION_TYPE,
            "keep-containers-across-application-attempts":
                self.keep_containers_across_application_attempts,
        })
    }
}

/// The parts of an application report the client acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppReport {
    /// YarnApplicationState (`ACCEPTED`, `RUNNING`, `FINISHED`, ...).
    pub state: String,
    /// FinalApplicationStatus (`UNDEFINED`, `SUCCEEDED`, `FAILED`, `KILLED`).
    pub final_status: String,
    /// The RM's and AM's diagnostics.
    pub diagnostics: String,
}

impl AppReport {
    /// Reads `{"app": {...}}` as `GET /ws/v1/cluster/apps/{id}` answers.
    pub fn from_json(v: &Value) -> Option<AppReport> {
        let app = v.get("app")?;
        let text = |k: &str| app.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Some(AppReport {
            state: app.get("state")?.as_str()?.to_string(),
            final_status: text("finalStatus"),
            diagnostics: text("diagnostics"),
        })
    }

    /// True once the application can no longer change (FINISHED, FAILED or KILLED).
    pub fn is_final(&self) -> bool {
        matches!(self.state.as_str(), "FINISHED" | "FAILED" | "KILLED")
    }
}

/// Whether a call may be sent again after a failure in transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repeat {
    /// Sending it twice does no harm (GET, kill, asking for a new id): any transport
    /// failure is retried.
    Safe,
    /// The RM may have acted on it before the connection broke (a submission): retried only
    /// when it cannot have been delivered, i.e. no connection was made.
    IfUndelivered,
}

/// How a failed exchange with the RM is handled.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    /// The RM is (perhaps briefly) unreachable: worth another try.
    Transient,
    /// Retrying cannot help or could do harm.
    Fatal,
}

/// Sorts a transport error: connection-level trouble is what an RM restart looks like, while
/// malformed requests or TLS problems would fail the same way every time. HTTP error statuses
/// never get here (they are answers, not failures to reach the RM).
fn classify(err: &ureq::Error, repeat: Repeat) -> Failure {
    use std::io::ErrorKind as K;
    use ureq::Timeout as T;
    let undelivered = match err {
        ureq::Error::ConnectionFailed => true,
        ureq::Error::Timeout(t) => matches!(t, T::Resolve | T::Connect),
        ureq::Error::Io(e) => match e.kind() {
            K::ConnectionRefused | K::AddrNotAvailable | K::NotConnected => true,
            K::ConnectionReset
            | K::ConnectionAborted
            | K::BrokenPipe
            | K::UnexpectedEof
            | K::TimedOut
            | K::WouldBlock
            | K::Interrupted => false,
            _ => return Failure::Fatal,
        },
        _ => return Failure::Fatal,
    };
    if undelivered || repeat == Repeat::Safe {
        Failure::Transient
    } else {
        Failure::Fatal
    }
}

/// A thin REST client for the RM.
struct Rm {
    agent: ureq::Agent,
    base: String,
    user: Option<String>,
    /// How long to keep trying while the RM is unreachable.
    retry_window: Duration,
    /// The pause between tries.
    retry_pause: Duration,
}

impl Rm {
    fn new(base: String) -> Rm {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(CALL_TIMEOUT))
            .build()
            .into();
        // Hadoop's simple auth names the caller with `user.name`; without it the RM would see
        // the anonymous web user, whom queue ACLs and placement rules may treat differently.
        let user = weft_client::login_user();
        Rm {
            agent,
            base,
            user,
            retry_window: RM_RETRY_WINDOW,
            retry_pause: RM_RETRY_PAUSE,
        }
    }

    fn url(&self, path: &str) -> String {
        match &self.user {
            Some(u) => format!("{}{path}?user.name={u}", self.base),
            None => format!("{}{path}", self.base),
        }
    }

    /// One exchange: the status and the body's text.
    fn exchange(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Result<(u16, String), ureq::Error>> {
        let url = self.url(path);
        let result = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("POST", Some(b)) => self.agent.post(&url).send_json(b),
            ("POST", None) => self.agent.post(&url).send_empty(),
            ("PUT", Some(b)) => self.agent.put(&url).send_json(b),
            _ => bail!("unsupported request {method} {path}"),
        };
        Ok(result.and_then(|mut response| {
            let status = response.status().as_u16();
            // A connection cut while the body streams in is a transport failure too: an empty
            // body would otherwise pass for a (nonsensical) answer.
            let text = response.body_mut().read_to_string()?;
            Ok((status, text))
        }))
    }

    /// Sends a request and returns the JSON body (`Null` when empty); non-2xx become errors
    /// carrying the RM's `RemoteException` message. While the RM cannot be reached (refused
    /// or broken connections, timeouts) the call is retried for the retry window, as YARN's
    /// clients ride out an RM restart; a single line says so.
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        repeat: Repeat,
    ) -> anyhow::Result<Value> {
        let mut give_up_at = None;
        let (status, text) = loop {
            match self.exchange(method, path, body)? {
                Ok(answer) => break answer,
                Err(e) if classify(&e, repeat) == Failure::Transient => {
                    let t = now();
                    let deadline = *give_up_at.get_or_insert_with(|| {
                        eprintln!(
                            "RM unreachable at {} ({e}), retrying for up to {} s",
                            self.base,
                            self.retry_window.as_secs()
                        );
                        t + self.retry_window
                    });
                    if t >= deadline {
                        return Err(anyhow::Error::new(e)).with_context(|| {
                            format!(
                                "cannot reach the RM at {} (gave up after {} s)",
                                self.base,
                                self.retry_window.as_secs()
                            )
                        });
                    }
                    thread::sleep(self.retry_pause);
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e))
                        .with_context(|| format!("cannot reach the RM at {}", self.base))
                }
            }
        };
        if give_up_at.is_some() {
            eprintln!("RM reachable again at {}", self.base);
        }
        let json: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        if !(200..300).contains(&status) {
            let message = json
                .pointer("/RemoteException/message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| json.to_string());
            bail!("{method} {path} failed with HTTP {status}: {message}");
        }
        Ok(json)
    }
}

/// Runs the distributed shell: submit, follow, and succeed only if the application's final
/// status is SUCCEEDED.
pub fn run(args: DshellArgs) -> anyhow::Result<()> {
    args.validate().map_err(|e| anyhow!(e))?;
    let mut args = args;
    if let Some(script) = &args.shell_script {
        // The AM and containers start elsewhere, so a relative path would mean nothing there.
        let abs = std::fs::canonicalize(script)
            .with_context(|| format!("cannot read --shell_script {script}"))?;
        args.shell_script = Some(abs.to_string_lossy().into_owned());
    }
    let exe = std::env::current_exe().context("cannot find the weft binary to run the AM")?;
    let rm = Rm::new(args.rm_url());

    let new_app = rm.call(
        "POST",
        "/ws/v1/cluster/apps/new-application",
        None,
        Repeat::Safe,
    )?;
    let app_id = new_app
        .get("application-id")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("the RM's new-application answer has no application-id: {new_app}"))?
        .to_string();
    if let Some(max) = new_app.get("maximum-resource-capability") {
        let field = |k: &str| max.get(k).and_then(Value::as_i64).unwrap_or(0);
        for note in args.cap_to_maximum(field("memory"), field("vCores")) {
            println!("{note}");
        }
    }
    let body = args.submission_body(&app_id, &exe);
    rm.call(
        "POST",
        "/ws/v1/cluster/apps",
        Some(&body),
        Repeat::IfUndelivered,
    )
    .with_context(|| format!("submitting {app_id}"))?;
    let placed = rm
        .call(
            "GET",
            &format!("/ws/v1/cluster/apps/{app_id}"),
            None,
            Repeat::Safe,
        )
        .ok()
        .and_then(|v| {
            v.pointer("/app/queue")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    println!(
        "{}",
        submitted_line(&app_id, &args.queue, placed.as_deref())
    );
    if let Some(key) = args.demand_key(&app_id) {
        println!("Its containers run as demand {key} (weft demand status {key})");
    }

    let report = follow(&rm, &app_id, Duration::from_millis(args.timeout))?;
    println!(
        "Application {app_id} ended: state {}, final status {}",
        report.state, report.final_status
    );
    if !report.diagnostics.trim().is_empty() {
        println!("Diagnostics:\n{}", report.diagnostics.trim_end());
    }
    if report.final_status == "SUCCEEDED" {
        Ok(())
    } else {
        bail!(
            "application {app_id} did not succeed (state {}, final status {})",
            report.state,
            report.final_status
        )
    }
}

/// Where the app went: the queue the RM placed it in (placement rules may choose another
/// than the one asked for), or the one asked for when the RM did not say.
pub(crate) fn submitted_line(app_id: &str, asked: &str, placed: Option<&str>) -> String {
    let Some(placed) = placed.filter(|p| !p.is_empty()) else {
        return format!(
            "Submitted application {app_id} to queue {asked} (placement not known yet)"
        );
    };
    let same = placed == asked || placed.strip_prefix("root.") == Some(asked);
    if same {
        format!("Submitted application {app_id} to queue {placed}")
    } else {
        format!(
            "Submitted application {app_id} to queue {placed} (asked for {asked}; the placement rules chose {placed})"
        )
    }
}

/// The wall clock, read only here: the client is a driver and its timeout is real time.
#[allow(clippy::disallowed_methods)] // the client's single clock read
fn now() -> Instant {
    Instant::now()
}

/// Polls the application until it ends; past `timeout` it is killed, as YARN's client does.
fn follow(rm: &Rm, app_id: &str, timeout: Duration) -> anyhow::Result<AppReport> {
    let path = format!("/ws/v1/cluster/apps/{app_id}");
    let deadline = now() + timeout;
    let mut last_state = String::new();
    loop {
        let json = rm.call("GET", &path, None, Repeat::Safe)?;
        let report = AppReport::from_json(&json)
            .ok_or_else(|| anyhow!("unexpected application report: {json}"))?;
        if report.state != last_state {
            println!("Application {app_id} is {}", report.state);
            last_state.clone_from(&report.state);
        }
        if report.is_final() {
            return Ok(report);
        }
        if now() >= deadline {
            let kill = rm.call(
                "PUT",
                &format!("{path}/state"),
                Some(&json!({"state": "KILLED"})),
                Repeat::Safe,
            );
            let note = match kill {
                Ok(_) => "killed it".to_string(),
                Err(e) => format!("could not kill it: {e:#}"),
            };
            bail!(
                "application {app_id} did not finish within {} ms; {note}",
                timeout.as_millis()
            );
        }
        thread::sleep(POLL_INTERVAL);
    }
}

#[cfg(test)]
mod tests;
