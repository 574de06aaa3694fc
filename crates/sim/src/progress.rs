//! A one-line progress bar for long runs, as text for the caller to write to stderr.
//!
//! The library reads no clock, so redraws are throttled by progress instead of time: a line is
//! produced only when the whole percentage changes, at most 101 lines a run whatever the number
//! of updates. Disabled (stderr is not a terminal), it produces nothing at all.

const BAR_WIDTH: usize = 30;

/// Progress through a run of `total` units (virtual ms to simulate).
#[derive(Clone, Debug)]
pub struct Progress {
    total: u64,
    enabled: bool,
    shown_percent: Option<u64>,
    last_len: usize,
    last_extra: String,
    finished: bool,
}

impl Progress {
    /// A bar for `total` units; `enabled` is whether to draw at all (the CLI passes whether
    /// stderr is a terminal).
    pub fn new(total: u64, enabled: bool) -> Progress {
        Progress {
            total,
            enabled,
            shown_percent: None,
            last_len: 0,
            last_extra: String::new(),
            finished: false,
        }
    }

    /// Records that `done` units are done; `extra` is shown after the percentage (e.g.
    /// `"t=1m20s allocs=1.2M"`). Returns a `\r`-prefixed line to write when the whole
    /// percentage moved since the last line, else `None`. Cheap when it returns `None`.
    pub fn update(&mut self, done: u64, extra: &str) -> Option<String> {
        if !self.enabled || self.finished {
            return None;
        }
        let percent = self.percent(done);
        if self.shown_percent.is_some_and(|shown| percent <= shown) {
            return None;
        }
        self.shown_percent = Some(percent);
        self.last_extra.clear();
        self.last_extra.push_str(extra);
        Some(self.line(percent))
    }

    /// The closing line (the bar at 100% with the last `extra`, ending in a newline), once;
    /// `None` when disabled or already finished.
    pub fn finish(&mut self) -> Option<String> {
        if !self.enabled || self.finished {
            return None;
        }
        self.finished = true;
        let mut line = self.line(100);
        line.push('\n');
        Some(line)
    }

    fn percent(&self, done: u64) -> u64 {
        if self.total == 0 {
            return 100;
        }
        // u128: done * 100 overflows u64 for totals near u64::MAX.
        (u128::from(done.min(self.total)) * 100 / u128::from(self.total)) as u64
    }

    fn line(&mut self, percent: u64) -> String {
        let filled = (percent as usize * BAR_WIDTH) / 100;
        let mut body = String::with_capacity(BAR_WIDTH + 16 + self.last_extra.len());
        body.push('[');
        body.extend(std::iter::repeat_n('#', filled));
        body.extend(std::iter::repeat_n('.', BAR_WIDTH - filled));
        body.push_str(&format!("] {percent:>3}%"));
        if !self.last_extra.is_empty() {
            body.push(' ');
            // A control character (a newline above all) would break the single-line redraw.
            body.extend(
                self.last_extra
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c }),
            );
        }
        let len = body.chars().count();
        // Blank out what a longer previous line left behind.
        let pad = self.last_len.saturating_sub(len);
        self.last_len = len;
        let mut out = String::with_capacity(1 + len + pad);
        out.push('\r');
        out.push_str(&body);
        out.extend(std::iter::repeat_n(' ', pad));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_never_draws() {
        let mut p = Progress::new(1000, false);
        for done in [0, 10, 500, 1000] {
            assert_eq!(p.update(done, "x"), None);
        }
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn draws_only_when_the_percentage_moves() {
        let mut p = Progress::new(1000, true);
        let first = p.update(0, "t=0").unwrap();
        assert_eq!(first, format!("\r[{}]   0% t=0", ".".repeat(30)));
        // 0.9% is still 0%.
        assert_eq!(p.update(9, "t=9"), None);
        let line = p.update(10, "t=10").unwrap();
        assert!(line.starts_with('\r'));
        assert!(line.contains("  1% t=10"), "{line}");
        let drawn = (0..=1000)
            .filter_map(|d| p.update(d, "").map(|_| d))
            .collect::<Vec<_>>();
        // 2% .. 100%: one line per whole percent, at its first unit.
        assert_eq!(drawn.len(), 99);
        assert_eq!(drawn[0], 20);
        assert_eq!(*drawn.last().unwrap(), 1000);
        // Going backwards draws nothing.
        assert_eq!(p.update(500, ""), None);
    }

    #[test]
    fn bar_fills_with_progress_and_pads_over_longer_lines() {
        let mut p = Progress::new(200, true);
        p.update(0, "a long extra text").unwrap();
        let half = p.update(100, "short").unwrap();
        assert!(half.contains(&format!("[{}{}]", "#".repeat(15), ".".repeat(15))));
        // The previous line was 12 characters longer; the new one blanks them.
        assert!(
            half.ends_with(&format!("short{}", " ".repeat(12))),
            "{half:?}"
        );
    }

    #[test]
    fn finish_once_at_full_with_newline() {
        let mut p = Progress::new(100, true);
        p.update(30, "allocs=5\nbad").unwrap();
        let end = p.finish().unwrap();
        assert!(end.starts_with(&format!("\r[{}] 100% allocs=5 bad", "#".repeat(30))));
        assert!(end.ends_with('\n'));
        assert_eq!(p.finish(), None);
        assert_eq!(p.update(100, ""), None);
    }

    #[test]
    fn zero_and_huge_totals() {
        let mut p = Progress::new(0, true);
        assert!(p.update(0, "").unwrap().contains("100%"));
        let mut p = Progress::new(u64::MAX, true);
        assert!(p.update(u64::MAX / 2, "").unwrap().contains(" 49%"));
        assert!(p.update(u64::MAX, "").unwrap().contains("100%"));
        // Beyond the total is clamped, not over 100%.
        let mut p = Progress::new(10, true);
        assert!(p.update(50, "").unwrap().contains("100%"));
    }
}
