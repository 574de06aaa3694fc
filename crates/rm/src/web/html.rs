//! HTML building blocks: escaping, the shared page layout, number and time formatting, bars.
//! Every string that did not come from this file goes through [`esc`] before it is written.

use std::fmt::Write as _;

use weft_types::{Resource, Time};

/// Escapes text for element content and double- or single-quoted attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes a value for a URL query string or path segment.
pub(crate) fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The navigation entries: (path, label).
const NAV: [(&str, &str); 6] = [
    ("/cluster", "Overview"),
    ("/cluster/scheduler", "Scheduler"),
    ("/cluster/apps", "Applications"),
    ("/cluster/nodes", "Nodes"),
    ("/cluster/nodelabels", "Node Labels"),
    ("/cluster/demands", "Demands"),
];

/// A page: what stays put (`head`: title, filters) and the part the script refreshes (`live`).
pub(crate) struct Page {
    /// The `<title>` and `<h1>` text (plain; escaped when written).
    pub(crate) title: String,
    /// Which [`NAV`] entry is current.
    pub(crate) nav: &'static str,
    /// Trusted HTML between the heading and the live part (e.g. filter controls).
    pub(crate) head: String,
    /// Trusted HTML of the live part.
    pub(crate) live: String,
}

/// The whole document around a page. `self_url` is the page's own path and query, re-fetched
/// with `fragment=1` by the refresh script; `None` for pages that must not refresh (errors).
pub(crate) fn layout(page: &Page, self_url: Option<&str>, now: Time) -> String {
    let mut nav = String::new();
    for (path, label) in NAV {
        let current = if path == page.nav {
            " class=\"current\" aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(nav, "<a href=\"{path}\"{current}>{label}</a>");
    }
    let title = esc(&page.title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · Weft ResourceManager</title>\
<link rel=\"icon\" href=\"data:,\">\
<link rel=\"stylesheet\" href=\"/static/weft.css\">\
<script src=\"/static/weft.js\" defer></script></head>\
<body><header class=\"top\"><a class=\"brand\" href=\"/cluster\"><span class=\"logo\">W</span>Weft \
<span class=\"sub\">ResourceManager</span></a><nav>{nav}</nav>\
<span class=\"live-marker\" id=\"live-marker\" title=\"The page refreshes itself every few seconds\">\
<span class=\"dot\"></span>updated <time id=\"updated\">{clock}</time></span></header>\
<main><h1>{title}</h1>{head}<div id=\"live\"{src}>{live}</div></main>\
<footer>Weft ResourceManager · <a href=\"/ws/v1/cluster/info\">REST API</a> · \
<a href=\"/metrics\">Prometheus metrics</a> · <a href=\"/healthz\">health</a></footer>\
</body></html>\n",
        clock = clock(now),
        src = self_url.map_or(String::new(), |u| format!(
            " data-src=\"{}\"",
            esc(&fragment_url(u))
        )),
        live = page.live,
        head = page.head,
    )
}

/// `url` with `fragment=1` added to its query.
fn fragment_url(url: &str) -> String {
    if url.contains('?') {
        format!("{url}&fragment=1")
    } else {
        format!("{url}?fragment=1")
    }
}

/// `hh:mm:ss` (UTC) of an epoch-millisecond time.
pub(crate) fn clock(t: Time) -> String {
    let secs = t.as_millis() / 1000;
    format!(
        "{:02}:{:02}:{:02}",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60
    )
}

/// `YYYY-MM-DD hh:mm:ss` (UTC) of an epoch-millisecond time; `-` for none.
pub(crate) fn date_time(t: Option<Time>) -> String {
    let Some(t) = t.filter(|t| t.as_millis() > 0) else {
        return "-".to_string();
    };
    let c = weft_types::CalendarTime::from_epoch_millis(t.as_millis() as i64);
    format!("{:04}-{:02}-{:02} {}", c.year, c.month, c.day, clock(t))
}

/// A span as `1h 02m`, `3m 05s` or `12s`.
pub(crate) fn span(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}h {:02}m", s / 3600, (s / 60) % 60)
    } else if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Values from here up mean "no limit" (Hadoop's unbounded max shares use `Integer.MAX_VALUE`
/// for vcores and `Long.MAX_VALUE` for memory).
pub(crate) const UNBOUNDED: i64 = i32::MAX as i64;

/// Memory in MB as `512 MB`, `4 GB` or `1.5 TB`.
pub(crate) fn mem(mb: i64) -> String {
    if mb >= UNBOUNDED {
        return "∞".to_string();
    }
    let abs = mb.unsigned_abs() as f64;
    let sign = if mb < 0 { "-" } else { "" };
    if abs >= 1024.0 * 1024.0 {
        format!("{sign}{} TB", trim(abs / (1024.0 * 1024.0)))
    } else if abs >= 1024.0 {
        format!("{sign}{} GB", trim(abs / 1024.0))
    } else {
        format!("{mb} MB")
    }
}

/// A count of vcores (or any unit), with `∞` for the unbounded value.
pub(crate) fn count(n: i64) -> String {
    if n >= UNBOUNDED {
        "∞".to_string()
    } else {
        n.to_string()
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// `<memory, vcores>` as `4 GB · 3 vcores`.
pub(crate) fn res(r: Resource) -> String {
    format!("{} · {} vcores", mem(r.memory_mb()), count(r.vcores()))
}

/// `part / whole` as a percentage in 0..=100 (0 when `whole` is 0).
pub(crate) fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 || part <= 0 {
        0.0
    } else {
        (part as f64 * 100.0 / whole as f64).min(100.0)
    }
}

/// A meter: `value` against `total`, with optional markers (fair share: a tick above the track,
/// steady fair share: a tick below it) on the same scale. `label` is trusted text shown beside it.
pub(crate) struct Bar {
    /// The filled part.
    pub(crate) value: i64,
    /// The scale (100%).
    pub(crate) total: i64,
    /// A marker above the track (instantaneous fair share).
    pub(crate) fair: Option<i64>,
    /// A marker below the track (steady fair share).
    pub(crate) steady: Option<i64>,
    /// Trusted HTML after the bar.
    pub(crate) label: String,
    /// Plain text tooltip (escaped here).
    pub(crate) tip: String,
}

impl Bar {
    /// The bar's HTML.
    pub(crate) fn html(&self) -> String {
        let fill = pct(self.value, self.total);
        let over = self.fair.is_some_and(|f| self.value > f);
        let class = if over { "fill over" } else { "fill" };
        let mut s = format!(
            "<div class=\"meter\" title=\"{tip}\"><div class=\"track\"><div class=\"{class}\" style=\"width:{fill:.2}%\"></div>",
            tip = esc(&self.tip)
        );
        if let Some(steady) = self.steady {
            let _ = write!(
                s,
                "<div class=\"mark steady\" style=\"left:{:.2}%\"></div>",
                pct(steady, self.total)
            );
        }
        if let Some(fair) = self.fair {
            let _ = write!(
                s,
                "<div class=\"mark fair\" style=\"left:{:.2}%\"></div>",
                pct(fair, self.total)
            );
        }
        let _ = write!(
            s,
            "</div><span class=\"meter-label\">{}</span></div>",
            self.label
        );
        s
    }
}

/// A state badge (`RUNNING`, `LOST`, ...); the class is derived from the state name.
pub(crate) fn badge(state: &str) -> String {
    let class: String = state
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    format!("<span class=\"badge s-{class}\">{}</span>", esc(state))
}

/// A table from a header row and rows of trusted cell HTML; `empty` is shown when no rows.
pub(crate) fn table(id: &str, headers: &[&str], rows: &[Vec<String>], empty: &str) -> String {
    let mut s = format!(
        "<div class=\"scroll\"><table class=\"grid\" id=\"{}\"><thead><tr>",
        esc(id)
    );
    for h in headers {
        let _ = write!(s, "<th>{h}</th>");
    }
    s.push_str("</tr></thead><tbody>");
    if rows.is_empty() {
        let _ = write!(
            s,
            "<tr class=\"empty\"><td colspan=\"{}\">{}</td></tr>",
            headers.len(),
            esc(empty)
        );
    }
    for row in rows {
        s.push_str("<tr>");
        for cell in row {
            let _ = write!(s, "<td>{cell}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

/// Long free text (diagnostics, health reports, names) in a table cell: wraps instead of
/// widening the table.
pub(crate) fn long_text(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    format!("<div class=\"wrap\">{}</div>", esc(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_both_quotes() {
        assert_eq!(
            esc(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(url_encode("root.a b&c"), "root.a%20b%26c");
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(date_time(Some(Time(0))), "-");
        assert_eq!(date_time(Some(Time(86_400_000))), "1970-01-02 00:00:00");
        // 2024-02-29 12:34:56 UTC (a leap day).
        assert_eq!(
            date_time(Some(Time(1_709_210_096_000))),
            "2024-02-29 12:34:56"
        );
    }

    #[test]
    fn sizes_and_spans_read_naturally() {
        assert_eq!(mem(512), "512 MB");
        assert_eq!(mem(4096), "4 GB");
        assert_eq!(mem(1536), "1.5 GB");
        assert_eq!(mem(i64::MAX), "∞");
        assert_eq!(span(65_000), "1m 05s");
        assert_eq!(span(3_720_000), "1h 02m");
        assert_eq!(pct(5, 0), 0.0);
        assert_eq!(pct(50, 200), 25.0);
    }

    #[test]
    fn a_bar_over_its_fair_share_is_marked() {
        let bar = Bar {
            value: 75,
            total: 100,
            fair: Some(50),
            steady: Some(25),
            label: "x".into(),
            tip: "<t>".into(),
        };
        let html = bar.html();
        assert!(html.contains("fill over"), "{html}");
        assert!(html.contains("width:75.00%"), "{html}");
        assert!(html.contains("mark fair\" style=\"left:50.00%"), "{html}");
        assert!(html.contains("mark steady\" style=\"left:25.00%"), "{html}");
        assert!(html.contains("title=\"&lt;t&gt;\""), "{html}");
    }
}
