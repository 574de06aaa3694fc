//! `/cluster/demands` (Weft only): every time-aware demand with its state and reason, its
//! containers, when it was accepted and its deadline; each key links to the demand's REST
//! answer, which carries the whole timeline.

use weft_rm_core::{demand_state_name, DemandReport};

use super::html::{self, esc, Page};

/// The demands page.
pub(crate) fn page(demands: &[DemandReport]) -> Page {
    let rows: Vec<Vec<String>> = demands
        .iter()
        .map(|d| {
            let detail = d
                .timeline
                .last()
                .map(|t| t.detail.as_str())
                .filter(|t| !t.is_empty())
                .map(|t| format!(" <span class=\"sub\">{}</span>", esc(t)))
                .unwrap_or_default();
            vec![
                format!(
                    "<a href=\"/ws/v1/cluster/demands/{}\">{}</a>",
                    esc(&d.key),
                    esc(&d.key)
                ),
                match &d.application {
                    Some(app) => format!(
                        "<a href=\"/cluster/app/{}\">{}</a>",
                        html::url_encode(app),
                        esc(app)
                    ),
                    None => "-".to_string(),
                },
                esc(&d.user),
                esc(&d.queue),
                html::badge(demand_state_name(d.state)),
                format!("{}{detail}", esc(d.reason.as_str())),
                format!("{} / {}", d.allocated, d.requested),
                html::date_time(Some(d.accepted_at)),
                html::date_time(d.deadline),
                d.missed_opportunities.to_string(),
            ]
        })
        .collect();
    let live = html::table(
        "demands",
        &[
            "Demand",
            "Application",
            "User",
            "Queue",
            "State",
            "Reason",
            "Allocated / Requested",
            "Accepted",
            "Deadline",
            "Missed Opportunities",
        ],
        &rows,
        "No demands.",
    );
    Page {
        title: "Demands".into(),
        nav: "/cluster/demands",
        head: String::new(),
        live,
    }
}
