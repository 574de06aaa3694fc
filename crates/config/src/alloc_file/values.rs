//! Reading element values the way Hadoop's Java parsing reads them, with messages that say
//! what is wrong. Each returns the value or a message starting with the quoted text.

const EMPTY: &str = "the value is empty; a number is needed";

/// `Integer.parseInt` of the trimmed text.
pub(crate) fn int(text: &str) -> Result<i32, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(EMPTY.to_string());
    }
    t.parse::<i32>().map_err(|_| {
        if is_integer_text(t) {
            format!("'{t}' is out of range (at most {})", i32::MAX)
        } else {
            format!("'{t}' is not a whole number")
        }
    })
}

/// `Long.parseLong` of the trimmed text.
pub(crate) fn long(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(EMPTY.to_string());
    }
    t.parse::<i64>().map_err(|_| {
        if is_integer_text(t) {
            format!("'{t}' is out of range")
        } else {
            format!("'{t}' is not a whole number")
        }
    })
}

/// A number of seconds, as milliseconds (saturating instead of Java's silent wrap-around).
pub(crate) fn seconds_as_ms(text: &str) -> Result<i64, String> {
    long(text).map(|s| s.saturating_mul(1000))
}

/// `Double.parseDouble` of the trimmed text (Java's optional `f`/`d` suffix accepted); NaN is
/// refused because no setting means anything with it.
pub(crate) fn double(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(EMPTY.to_string());
    }
    let digits = t
        .strip_suffix(['f', 'F', 'd', 'D'])
        .filter(|d| !d.is_empty())
        .unwrap_or(t);
    // Rust also reads "inf"/"nan" spellings that Java does not; only Java's are let through.
    let java_word = matches!(digits.trim_start_matches(['+', '-']), "Infinity");
    let numeric = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    match digits.parse::<f64>() {
        Ok(v) if (numeric || java_word) && !v.is_nan() => Ok(v),
        _ => Err(format!("'{t}' is not a number")),
    }
}

/// `Float.parseFloat` of the trimmed text.
pub(crate) fn float(text: &str) -> Result<f32, String> {
    double(text).map(|v| v as f32)
}

/// Java's `Boolean.parseBoolean`: only "true" in any case is true.
pub(crate) fn java_bool(text: &str) -> bool {
    text.trim().eq_ignore_ascii_case("true")
}

fn is_integer_text(t: &str) -> bool {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_java_reads_them() {
        assert_eq!(int(" 42 "), Ok(42));
        assert_eq!(int("-1"), Ok(-1));
        assert!(int("4.5").unwrap_err().contains("not a whole number"));
        assert!(int("2147483648").unwrap_err().contains("out of range"));
        assert_eq!(seconds_as_ms("30"), Ok(30_000));
        assert_eq!(seconds_as_ms("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(float("1.5f"), Ok(1.5));
        assert_eq!(float("2e0"), Ok(2.0));
        assert_eq!(float("-1"), Ok(-1.0));
        assert_eq!(double("Infinity"), Ok(f64::INFINITY));
        assert_eq!(float("1.5x"), Err("'1.5x' is not a number".to_string()));
        assert!(float("NaN").is_err());
        assert!(float("inf").is_err());
        assert_eq!(float(" "), Err(EMPTY.to_string()));
        assert_eq!(int(""), Err(EMPTY.to_string()));
        assert!(java_bool("TRUE"));
        assert!(!java_bool("yes"));
    }
}
