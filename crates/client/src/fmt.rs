//! Formatting as YARN's Java CLI prints: `Times.format` dates, `###.##%` progress, Java set
//! syntax, and reading loosely typed JSON fields (real YARN sometimes sends numbers as strings).

use serde_json::Value;

use weft_types::CalendarTime;

fn civil(ms: u64) -> CalendarTime {
    CalendarTime::from_epoch_millis(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// `Times.format`: `EEE MMM dd HH:mm:ss Z yyyy` (in UTC), `N/A` for 0.
pub(crate) fn times_format(ms: u64) -> String {
    if ms == 0 {
        return "N/A".to_string();
    }
    civil(ms).hadoop_format()
}

/// The node report's health time: `E dd/MMM/yy hh:mm:ss:SSzz` (12-hour clock, UTC).
pub(crate) fn health_time(ms: u64) -> String {
    let c = civil(ms);
    let hour12 = match c.hour % 12 {
        0 => 12,
        h => h,
    };
    format!(
        "{} {:02}/{}/{:02} {:02}:{:02}:{:02}:{:02}UTC",
        c.weekday_name(),
        c.day,
        c.month_name(),
        c.year.rem_euclid(100),
        hour12,
        c.minute,
        c.second,
        c.millis
    )
}

/// `HH:mm:ss` of the time of day (UTC).
pub(crate) fn clock_time(ms: u64) -> String {
    let c = civil(ms);
    format!("{:02}:{:02}:{:02}", c.hour, c.minute, c.second)
}

/// `DecimalFormat("###.##%")` of a progress the REST API gives in percent (0-100).
pub(crate) fn progress(percent: f64) -> String {
    if !percent.is_finite() {
        return "0%".to_string();
    }
    let text = format!("{percent:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    let text = if text == "-0" { "0" } else { text };
    format!("{text}%")
}

/// Java's `Set.toString()`: `[a, b]`.
pub(crate) fn java_set(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// A field as text: strings as they are, numbers and booleans printed, else "".
pub(crate) fn text(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A field as text, or `default` when missing or empty.
pub(crate) fn text_or(v: &Value, key: &str, default: &str) -> String {
    let t = text(v, key);
    if t.is_empty() {
        default.to_string()
    } else {
        t
    }
}

/// A numeric field (number or numeric string), 0 when missing.
pub(crate) fn num(v: &Value, key: &str) -> f64 {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// An integer field (number or numeric string), 0 when missing; negatives clamp to 0.
pub(crate) fn int(v: &Value, key: &str) -> u64 {
    match v.get(key) {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// A signed integer field, 0 when missing.
pub(crate) fn signed(v: &Value, key: &str) -> i64 {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// Jersey's lists: `{"wrapper":{"item":[..]}}`, a single object instead of a one-element list,
/// or null for none. Returns the items of `v[outer][inner]`.
pub(crate) fn list<'a>(v: &'a Value, outer: &str, inner: &str) -> Vec<&'a Value> {
    items(v.get(outer).and_then(|o| o.get(inner)))
}

/// One-or-many as a list.
pub(crate) fn items(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

/// Pretty JSON plus a newline, for `--json`.
pub(crate) fn json_text(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates_as_java_prints_them() {
        // 2023-11-14T22:13:20.123Z was a Tuesday.
        assert_eq!(
            times_format(1_700_000_000_123),
            "Tue Nov 14 22:13:20 +0000 2023"
        );
        assert_eq!(times_format(0), "N/A");
        assert_eq!(
            times_format(951_782_400_000),
            "Tue Feb 29 00:00:00 +0000 2000"
        );
        assert_eq!(
            health_time(1_700_000_000_123),
            "Tue 14/Nov/23 10:13:20:123UTC"
        );
        assert_eq!(
            health_time(1_699_920_000_005),
            "Tue 14/Nov/23 12:00:00:05UTC"
        );
        assert_eq!(clock_time(1_700_000_000_123), "22:13:20");
    }

    #[test]
    fn progress_as_decimal_format() {
        assert_eq!(progress(42.5), "42.5%");
        assert_eq!(progress(100.0), "100%");
        assert_eq!(progress(0.0), "0%");
        assert_eq!(progress(33.3333), "33.33%");
        assert_eq!(progress(f64::NAN), "0%");
    }

    #[test]
    fn loose_fields_and_lists() {
        let v = json!({"a": "12", "b": 3.5, "c": {"x": {"k": 1}}, "d": {"x": [1, 2]}, "e": null});
        assert_eq!(int(&v, "a"), 12);
        assert_eq!(num(&v, "b"), 3.5);
        assert_eq!(text(&v, "b"), "3.5");
        assert_eq!(text_or(&v, "zz", "N/A"), "N/A");
        assert_eq!(list(&v, "c", "x").len(), 1);
        assert_eq!(list(&v, "d", "x").len(), 2);
        assert!(list(&v, "e", "x").is_empty());
        assert_eq!(java_set(&["A".into(), "B".into()]), "[A, B]");
    }
}

/// Reads a positive length of time for a flag: `500ms`, `2s`, `10m`, `1h`, or whole seconds.
pub(crate) fn parse_interval(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| format!("'{s}' is not a length of time (e.g. 500ms, 2s, 10m, 1h)"))?;
    let ms = match unit {
        "ms" => Some(value),
        "" | "s" => value.checked_mul(1_000),
        "m" => value.checked_mul(60_000),
        "h" => value.checked_mul(3_600_000),
        _ => return Err(format!("'{s}': unknown unit '{unit}' (ms, s, m or h)")),
    }
    .ok_or_else(|| format!("'{s}' is too long"))?;
    if ms == 0 {
        return Err(format!("'{s}': must be more than zero"));
    }
    Ok(std::time::Duration::from_millis(ms))
}

#[cfg(test)]
mod interval_tests {
    use super::parse_interval;
    use std::time::Duration;

    #[test]
    fn lengths_of_time_read_with_their_units_and_bad_ones_are_named() {
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_interval("1h"), Ok(Duration::from_secs(3_600)));
        assert_eq!(
            parse_interval("0s"),
            Err("'0s': must be more than zero".to_owned())
        );
        assert_eq!(
            parse_interval("3d"),
            Err("'3d': unknown unit 'd' (ms, s, m or h)".to_owned())
        );
        assert!(parse_interval("soon").is_err());
    }
}
