//! `/cluster/apps` (filterable list) and `/cluster/app/{id}` (one application: details,
//! attempts, containers with links to their logs on the NodeManagers, diagnostics).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use weft_rm_core::{AppReport, AttemptReport, ContainerReport, RmCore};
use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::Time;

use super::html::{self, badge, esc, url_encode, Page};
use super::overview::APP_STATES;
use super::{state_name, View};

/// The most rows a page renders (it is re-rendered every few seconds).
pub(crate) const MAX_ROWS: usize = 500;

/// The list's server-side filters (`?state=RUNNING,ACCEPTED&queue=root.prod&user=alice`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Filter {
    states: Vec<String>,
    queue: Option<String>,
    user: Option<String>,
}

impl Filter {
    /// Reads `state` (or `states`, as REST), `queue` and `user`; empty values mean "any".
    pub(crate) fn from_query(q: &BTreeMap<String, String>) -> Filter {
        let nonempty = |k: &str| {
            q.get(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Filter {
            states: nonempty("state")
                .or_else(|| nonempty("states"))
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_uppercase())
                        .filter(|s| !s.is_empty() && s != "ALL")
                        .collect()
                })
                .unwrap_or_default(),
            queue: nonempty("queue"),
            user: nonempty("user"),
        }
    }

    fn matches(&self, a: &AppReport) -> bool {
        let state_ok = self.states.is_empty() || self.states.contains(&state_name(a.state));
        // A short queue name matches as under root, as placement rules and REST read it.
        let queue_ok = self
            .queue
            .as_ref()
            .is_none_or(|q| a.queue == *q || a.queue.strip_prefix("root.") == Some(q.as_str()));
        let user_ok = self.user.as_ref().is_none_or(|u| a.user == *u);
        state_ok && queue_ok && user_ok
    }
}

/// The list page.
pub(crate) fn list_page(v: &View, filter: &Filter, now: Time) -> Page {
    let mut apps: Vec<&AppReport> = v.apps.iter().filter(|a| filter.matches(a)).collect();
    apps.sort_by_key(|a| std::cmp::Reverse(a.id));
    let head = filter_form(v, filter);
    let matching = apps.len();
    apps.truncate(MAX_ROWS);
    let shown = if matching > MAX_ROWS {
        format!(" (showing the {MAX_ROWS} newest; narrow the filters to see others)")
    } else {
        String::new()
    };
    let live = format!(
        "<p class=\"muted\" id=\"apps-count\">{matching} of {} applications{shown}</p>{}",
        v.apps.len(),
        table(&apps, now, "No application matches.")
    );
    Page {
        title: "Applications".into(),
        nav: "/cluster/apps",
        head,
        live,
    }
}

/// The filter bar: server-side selects (a GET form) and the client-side text filter.
fn filter_form(v: &View, f: &Filter) -> String {
    let select = |name: &str, label: &str, options: &BTreeSet<String>, current: Option<&str>| {
        let mut s = format!(
            "<label>{label} <select name=\"{name}\" onchange=\"this.form.submit()\"><option value=\"\">any</option>"
        );
        for o in options {
            let sel = if current == Some(o.as_str()) {
                " selected"
            } else {
                ""
            };
            let _ = write!(s, "<option{sel} value=\"{0}\">{0}</option>", esc(o));
        }
        s.push_str("</select></label>");
        s
    };
    let states: BTreeSet<String> = APP_STATES.iter().map(|s| state_name(*s)).collect();
    let queues: BTreeSet<String> = v
        .snapshot
        .queues
        .iter()
        .filter(|q| q.leaf)
        .map(|q| q.name.clone())
        .chain(v.apps.iter().map(|a| a.queue.clone()))
        .collect();
    let users: BTreeSet<String> = v.apps.iter().map(|a| a.user.clone()).collect();
    let state = (f.states.len() == 1).then(|| f.states[0].as_str());
    format!(
        "<form class=\"filters\" method=\"get\" action=\"/cluster/apps\">{}{}{}\
<noscript><button type=\"submit\">Apply</button></noscript>\
<a class=\"reset\" href=\"/cluster/apps\">reset</a>\
<input type=\"search\" id=\"text-filter\" data-table=\"apps\" placeholder=\"Filter rows (id, name, user, queue…)\" autocomplete=\"off\"></form>",
        select("state", "State", &states, state),
        select("queue", "Queue", &queues, f.queue.as_deref()),
        select("user", "User", &users, f.user.as_deref()),
    )
}

/// The applications table (also used by the overview).
pub(crate) fn table(apps: &[&AppReport], now: Time, empty: &str) -> String {
    let rows: Vec<Vec<String>> = apps
        .iter()
        .map(|a| {
            let id = a.id.to_string();
            let elapsed = a
                .finish_time
                .unwrap_or(now)
                .as_millis()
                .saturating_sub(a.submit_time.as_millis());
            vec![
                format!(
                    "<a href=\"/cluster/app/{}\">{}</a>",
                    url_encode(&id),
                    esc(&id)
                ),
                esc(&a.user),
                html::long_text(&a.name),
                format!("<span class=\"small\">{}</span>", esc(&a.application_type)),
                esc(&a.queue),
                state_cell(a),
                progress(a.progress),
                html::date_time(Some(a.submit_time)),
                html::span(elapsed),
                a.running_containers.to_string(),
                html::res(a.allocated),
            ]
        })
        .collect();
    html::table(
        "apps",
        &[
            "ID",
            "User",
            "Name",
            "Type",
            "Queue",
            "State",
            "Progress",
            "Submitted (UTC)",
            "Elapsed",
            "Containers",
            "Allocated",
        ],
        &rows,
        empty,
    )
}

/// The state badge, and the final status under it once there is one (one narrow column
/// instead of two keeps the table within a 1400 px window).
fn state_cell(a: &AppReport) -> String {
    let state = badge(&state_name(a.state));
    if a.state.is_final() {
        format!(
            "<div class=\"stack\">{state}{}</div>",
            badge(&state_name(a.final_status))
        )
    } else {
        state
    }
}

fn progress(p: f32) -> String {
    let pct = (f64::from(p) * 100.0).clamp(0.0, 100.0);
    format!(
        "<div class=\"progress\" title=\"{pct:.0}%\"><div style=\"width:{pct:.1}%\"></div><span>{pct:.0}%</span></div>"
    )
}

/// What the detail page shows, read in one driver job.
pub(crate) struct Detail {
    report: AppReport,
    attempts: Vec<AttemptReport>,
    containers: Vec<ContainerReport>,
    /// node id -> web address, for log links.
    node_http: BTreeMap<String, String>,
    /// Leaf queues, the targets of a move.
    leaves: Vec<String>,
}

impl Detail {
    /// Reads an application's detail from the core; `None` when it is unknown.
    pub(crate) fn read(core: &mut RmCore, id: &ApplicationId) -> Option<Detail> {
        let report = core.app_report(id)?;
        let attempts = core.attempt_reports(id).unwrap_or_default();
        let containers = core.container_reports(id).unwrap_or_default();
        let node_http = core
            .node_infos()
            .into_iter()
            .filter(|n| !n.http_address.is_empty())
            .map(|n| (n.node_id, n.http_address))
            .collect();
        let leaves = core
            .scheduler_snapshot()
            .queues
            .into_iter()
            .filter(|q| q.leaf)
            .map(|q| q.name)
            .collect();
        Some(Detail {
            report,
            attempts,
            containers,
            node_http,
            leaves,
        })
    }

    fn log_links(&self, node: &str, container: &ContainerId, known: Option<&str>) -> String {
        let http = known.or_else(|| self.node_http.get(node).map(String::as_str));
        match http {
            Some(http) => {
                let base = format!("http://{http}/ws/v1/node/containerlogs/{container}");
                format!(
                    "<a href=\"{0}/stdout\">stdout</a> · <a href=\"{0}/stderr\">stderr</a>",
                    esc(&base)
                )
            }
            None => "<span class=\"muted\">node web address unknown</span>".to_string(),
        }
    }
}

/// The detail page of one application.
pub(crate) fn detail_page(d: &Detail, now: Time) -> Page {
    let a = &d.report;
    let id = a.id.to_string();
    let mut live =
        String::from("<section class=\"cards\"><div class=\"card wide\"><dl class=\"kv details\">");
    let elapsed = a
        .finish_time
        .unwrap_or(now)
        .as_millis()
        .saturating_sub(a.submit_time.as_millis());
    let tags: Vec<&str> = a.tags.iter().map(String::as_str).collect();
    let tracking = match &a.tracking_url {
        Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
            format!("<a href=\"{0}\">{0}</a>", esc(u))
        }
        Some(u) if !u.is_empty() => esc(u),
        _ => "-".to_string(),
    };
    let p = &a.preemption;
    let fields: [(&str, String); 17] = [
        ("Name", esc(&a.name)),
        ("User", esc(&a.user)),
        (
            "Queue",
            format!(
                "<a href=\"/cluster/apps?queue={}\">{}</a>",
                url_encode(&a.queue),
                esc(&a.queue)
            ),
        ),
        ("Type", esc(&a.application_type)),
        ("State", badge(&state_name(a.state))),
        ("Final status", badge(&state_name(a.final_status))),
        ("Progress", progress(a.progress)),
        ("Priority", a.priority.to_string()),
        ("Submitted (UTC)", html::date_time(Some(a.submit_time))),
        ("Launched (UTC)", html::date_time(a.launch_time)),
        ("Finished (UTC)", html::date_time(a.finish_time)),
        ("Elapsed", html::span(elapsed)),
        (
            "Running containers",
            format!("{} · {}", a.running_containers, html::res(a.allocated)),
        ),
        ("Tracking URL", tracking),
        // Hadoop's app attempt page: total resource preempted, AM and non-AM containers
        // preempted, aggregate preempted resource allocation (every attempt summed here).
        ("Resource preempted", html::res(p.resource)),
        (
            "Containers preempted",
            format!("{} non-AM · {} AM", p.non_am_containers, p.am_containers),
        ),
        (
            "Preempted allocation",
            format!(
                "{} MB-seconds, {} vcore-seconds",
                p.memory_mb_seconds, p.vcore_seconds
            ),
        ),
    ];
    for (k, v) in fields {
        let _ = write!(live, "<dt>{k}</dt><dd>{v}</dd>");
    }
    if !tags.is_empty() {
        let _ = write!(live, "<dt>Tags</dt><dd>{}</dd>", esc(&tags.join(", ")));
    }
    live.push_str("</dl></div></section>");

    let diagnostics = if a.diagnostics.is_empty() {
        "<p class=\"muted\">None.</p>".to_string()
    } else {
        format!("<pre class=\"diag\">{}</pre>", esc(&a.diagnostics))
    };
    let _ = write!(live, "<section><h2>Diagnostics</h2>{diagnostics}</section>");

    let mut attempts: Vec<&AttemptReport> = d.attempts.iter().collect();
    if attempts.is_empty() {
        attempts.extend(a.current_attempt.as_ref());
    }
    let rows: Vec<Vec<String>> = attempts
        .iter()
        .map(|t| {
            let node = t.am_node.clone().unwrap_or_default();
            let logs = match (&t.am_container, t.am_node.as_deref()) {
                (Some(c), Some(n)) => d.log_links(n, c, None),
                _ => "-".to_string(),
            };
            let am = t.am_container.map(|c| c.to_string()).unwrap_or_default();
            vec![
                esc(&t.id.to_string()),
                badge(&state_name(t.state)),
                format!("<span title=\"on {}\">{}</span>", esc(&node), esc(&am)),
                html::date_time(Some(t.start_time)),
                html::date_time(t.finish_time),
                logs,
                html::long_text(&t.diagnostics),
            ]
        })
        .collect();
    let _ = write!(
        live,
        "<section><h2>Attempts</h2>{}</section>",
        html::table(
            "attempts",
            &[
                "Attempt",
                "State",
                "AM container",
                "Started (UTC)",
                "Finished (UTC)",
                "AM logs",
                "Diagnostics",
            ],
            &rows,
            "No attempt yet.",
        )
    );

    let rows: Vec<Vec<String>> = d
        .containers
        .iter()
        .map(|c| {
            let role = if c.is_am {
                " <span class=\"tag\">AM</span>"
            } else {
                ""
            };
            let exit = match c.exit_status {
                Some(status) if c.diagnostics.is_empty() => status.to_string(),
                Some(status) => format!("<span title=\"{}\">{status}</span>", esc(&c.diagnostics)),
                None => "-".to_string(),
            };
            vec![
                format!("{}{role}", esc(&c.id.to_string())),
                esc(&c.node_id),
                badge(c.state.container_state()),
                html::date_time(Some(c.start_time)),
                html::date_time(c.finish_time),
                exit,
                html::res(c.resource),
                d.log_links(&c.node_id, &c.id, c.node_http_address.as_deref()),
            ]
        })
        .collect();
    let _ = write!(
        live,
        "<section><h2>Containers</h2><p class=\"muted\">Live containers and the latest {} ended ones of each application.</p>{}</section>",
        weft_rm_core::ENDED_CONTAINERS_KEPT,
        html::table(
            "containers",
            &[
                "Container",
                "Node",
                "State",
                "Started (UTC)",
                "Finished (UTC)",
                "Exit",
                "Resource",
                "Logs",
            ],
            &rows,
            "No container yet.",
        )
    );
    Page {
        title: format!("Application {id}"),
        nav: "/cluster/apps",
        head: actions(d),
        live,
    }
}

/// Kill and move buttons for a live application. `weft.js` asks for confirmation and then
/// calls the REST API (`PUT .../state`, `PUT .../queue`) as the browser's user, so the same
/// ACL checks apply as to any REST client; a refusal is shown beside the buttons. With no
/// other leaf to go to (the FIFO scheduler's one queue) there is no move control.
fn actions(d: &Detail) -> String {
    let a = &d.report;
    if a.state.is_final() {
        return String::new();
    }
    let mut options = String::new();
    for q in d.leaves.iter().filter(|q| **q != a.queue) {
        let _ = write!(options, "<option value=\"{0}\">{0}</option>", esc(q));
    }
    let app = esc(&a.id.to_string());
    let move_control = if options.is_empty() {
        String::new()
    } else {
        format!(
            "<label>Move to <select name=\"queue\"><option value=\"\">queue…</option>{options}</select></label>\
<button type=\"button\" data-action=\"move\">Move</button>"
        )
    };
    format!(
        "<div class=\"actions\" id=\"app-actions\" data-app=\"{app}\">\
<button type=\"button\" class=\"danger\" data-action=\"kill\">Kill application</button>\
{move_control}<span class=\"action-status\" role=\"status\"></span></div>"
    )
}

/// The page for an id that names no application (served with 404).
pub(crate) fn missing(id: &str, why: &str) -> Page {
    Page {
        title: "Application not found".into(),
        nav: "/cluster/apps",
        head: String::new(),
        live: format!(
            "<p class=\"notice\">Application <code>{}</code> {}. <a href=\"/cluster/apps\">All applications</a></p>",
            esc(id),
            esc(why)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_rm_core::{AppState, FinalStatus};
    use weft_types::Resource;

    fn app(seq: u64, queue: &str, user: &str, state: AppState, name: &str) -> AppReport {
        AppReport {
            id: ApplicationId {
                cluster_ts: 1_700_000_000_000,
                seq,
            },
            name: name.into(),
            user: user.into(),
            queue: queue.into(),
            state,
            final_status: FinalStatus::Undefined,
            diagnostics: String::new(),
            application_type: "YARN".into(),
            tags: BTreeSet::new(),
            priority: 0,
            progress: 0.5,
            submit_time: Time(1_700_000_000_000 + seq),
            launch_time: None,
            finish_time: None,
            current_attempt: None,
            allocated: Resource::new(1024, 1),
            running_containers: 1,
            tracking_url: None,
            aggregate: Default::default(),
            preemption: Default::default(),
        }
    }

    fn query(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn filters_match_states_queues_with_or_without_root_and_users() {
        let a = app(1, "root.prod", "alice", AppState::Running, "a");
        let f = Filter::from_query(&query(&[("state", "running,accepted")]));
        assert!(f.matches(&a));
        let f = Filter::from_query(&query(&[("states", "FINISHED")]));
        assert!(!f.matches(&a));
        let f = Filter::from_query(&query(&[("state", "ALL"), ("queue", "prod")]));
        assert!(f.matches(&a));
        let f = Filter::from_query(&query(&[("queue", "root.prod"), ("user", "bob")]));
        assert!(!f.matches(&a));
        let f = Filter::from_query(&query(&[("queue", ""), ("user", "alice")]));
        assert!(f.matches(&a));
    }

    fn detail(state: AppState) -> Detail {
        Detail {
            report: app(3, "root.prod", "alice", state, "job"),
            attempts: Vec::new(),
            containers: Vec::new(),
            node_http: BTreeMap::new(),
            leaves: vec!["root.dev".into(), "root.prod".into(), "root.<x>".into()],
        }
    }

    #[test]
    fn a_live_app_has_kill_and_move_actions_and_a_finished_one_none() {
        let page = detail_page(&detail(AppState::Running), Time(1_700_000_100_000));
        let head = &page.head;
        assert!(
            head.contains("data-app=\"application_1700000000000_0003\""),
            "{head}"
        );
        assert!(head.contains("data-action=\"kill\""), "{head}");
        assert!(head.contains("data-action=\"move\""), "{head}");
        // Every other leaf is a target, escaped; the app's own queue is not.
        assert!(head.contains("<option value=\"root.dev\">"), "{head}");
        assert!(head.contains("root.&lt;x&gt;"), "{head}");
        assert!(!head.contains("<option value=\"root.prod\">"), "{head}");
        let done = detail_page(&detail(AppState::Finished), Time(1_700_000_100_000));
        assert!(done.head.is_empty(), "{}", done.head);
        // The app's queue is the only leaf (FIFO's `default`): a kill, but nothing to move to.
        let mut alone = detail(AppState::Running);
        alone.leaves = vec!["root.prod".into()];
        let head = detail_page(&alone, Time(1_700_000_100_000)).head;
        assert!(head.contains("data-action=\"kill\""), "{head}");
        assert!(!head.contains("data-action=\"move\""), "{head}");
        assert!(!head.contains("<select"), "{head}");
    }

    #[test]
    fn the_app_page_shows_the_preemption_totals() {
        let mut d = detail(AppState::Running);
        d.report.preemption = weft_rm_core::PreemptionReport {
            resource: weft_types::Resource::new(2048, 2),
            am_containers: 0,
            non_am_containers: 2,
            memory_mb_seconds: 40_960,
            vcore_seconds: 40,
        };
        let live = detail_page(&d, Time(1_700_000_100_000)).live;
        assert!(
            live.contains("<dt>Containers preempted</dt><dd>2 non-AM · 0 AM</dd>"),
            "{live}"
        );
        assert!(
            live.contains(
                "<dt>Preempted allocation</dt><dd>40960 MB-seconds, 40 vcore-seconds</dd>"
            ),
            "{live}"
        );
        assert!(live.contains("<dt>Resource preempted</dt>"), "{live}");
    }

    #[test]
    fn the_table_escapes_user_strings_and_links_each_app() {
        let a = app(
            7,
            "root.<q>",
            "<u>",
            AppState::Accepted,
            "<script>x</script>",
        );
        let html = table(&[&a], Time(1_700_000_100_000), "none");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
        assert!(
            html.contains("root.&lt;q&gt;") && html.contains("&lt;u&gt;"),
            "{html}"
        );
        assert!(
            html.contains("href=\"/cluster/app/application_1700000000000_0007\""),
            "{html}"
        );
        assert!(html.contains("s-accepted"), "{html}");
    }
}
