//! Durations and instants as scenario files write them: `"500ms"`, `"1s"`, `"2m"`, `"1h"`.

use weft_types::Duration;

/// Parses a scenario duration: a non-negative number (decimals allowed when the result is a
/// whole number of milliseconds) followed by `ms`, `s`, `m` or `h`.
///
/// The error says what is wrong in words a person can act on.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    if number.is_empty() {
        return Err(format!(
            "'{text}' is not a duration: a number must come before the unit"
        ));
    }
    let per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" => {
            return Err(format!(
                "'{text}' has no unit: write e.g. \"500ms\", \"1s\", \"2m\" or \"1h\""
            ))
        }
        other => {
            return Err(format!(
                "'{text}': unknown unit '{other}' (use ms, s, m or h)"
            ))
        }
    };
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if frac.contains('.') || (whole.is_empty() && frac.is_empty()) {
        return Err(format!(
            "'{text}' is not a duration: '{number}' is not a number"
        ));
    }
    let too_long = || format!("'{text}' is too long a duration");
    let whole_ms = if whole.is_empty() {
        0
    } else {
        whole
            .parse::<u64>()
            .map_err(|_| too_long())?
            .checked_mul(per_unit)
            .ok_or_else(too_long)?
    };
    // The fraction is scaled digit by digit so that "1.5s" is exactly 1500 ms, never 1499.
    let mut frac_ms: u64 = 0;
    let mut scale = per_unit;
    for d in frac.bytes() {
        let digit = u64::from(d - b'0');
        if !scale.is_multiple_of(10) {
            if digit != 0 {
                return Err(format!(
                    "'{text}' is finer than a millisecond; durations are whole milliseconds"
                ));
            }
            continue;
        }
        scale /= 10;
        frac_ms += digit * scale;
    }
    whole_ms
        .checked_add(frac_ms)
        .map(Duration::from_millis)
        .ok_or_else(too_long)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> u64 {
        parse_duration(text).unwrap().as_millis()
    }

    #[test]
    fn accepts_the_four_units() {
        assert_eq!(ms("500ms"), 500);
        assert_eq!(ms("1s"), 1_000);
        assert_eq!(ms("2m"), 120_000);
        assert_eq!(ms("1h"), 3_600_000);
        assert_eq!(ms("0s"), 0);
        assert_eq!(ms(" 30 s "), 30_000);
    }

    #[test]
    fn decimals_must_be_whole_milliseconds() {
        assert_eq!(ms("1.5s"), 1_500);
        assert_eq!(ms("0.25m"), 15_000);
        assert_eq!(ms(".5s"), 500);
        assert!(parse_duration("1.5ms")
            .unwrap_err()
            .contains("finer than a millisecond"));
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        assert!(parse_duration("500").unwrap_err().contains("no unit"));
        assert!(parse_duration("5d")
            .unwrap_err()
            .contains("unknown unit 'd'"));
        assert!(parse_duration("-1s")
            .unwrap_err()
            .contains("not a duration"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("s")
            .unwrap_err()
            .contains("number must come before"));
        assert!(parse_duration("1.2.3s")
            .unwrap_err()
            .contains("not a number"));
        assert!(parse_duration("99999999999999999999h")
            .unwrap_err()
            .contains("too long"));
    }
}
