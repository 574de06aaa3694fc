//! Hadoop's "value [unit]" amounts for per-resource-type allocation properties
//! (`yarn.resource-types.memory-mb.increment-allocation = 1 Gi`).

/// Parses `<integer>[ ]<unit>?` and converts it to the type's default unit (`Mi` for memory,
/// none for the others).
pub(crate) fn amount(text: &str, is_memory: bool) -> Result<i64, String> {
    let t = text.trim();
    let digits_end = t
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || (*i == 0 && (*c == '-' || *c == '+'))))
        .map_or(t.len(), |(i, _)| i);
    let (number, unit) = t.split_at(digits_end);
    let unit = unit.trim_start();
    let value: i64 = number
        .parse()
        .map_err(|_| format!("'{t}' is not in \"value [unit]\" form (e.g. '1024' or '1 Gi')"))?;
    if unit.is_empty() {
        return Ok(value);
    }
    let from = factor(unit).ok_or_else(|| {
        format!("'{t}': unknown unit '{unit}' (known: k, M, G, T, P, Ki, Mi, Gi, Ti, Pi)")
    })?;
    let to = if is_memory { 1_i128 << 20 } else { 1 };
    let converted = i128::from(value) * from / to;
    i64::try_from(converted).map_err(|_| format!("'{t}' is out of range"))
}

fn factor(unit: &str) -> Option<i128> {
    Some(match unit {
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "P" => 1_000_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "Pi" => 1 << 50,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_the_default_unit() {
        assert_eq!(amount("256", true), Ok(256));
        assert_eq!(amount("1 Gi", true), Ok(1024));
        assert_eq!(amount("1Gi", true), Ok(1024));
        assert_eq!(amount("10", false), Ok(10));
        assert_eq!(amount("1k", false), Ok(1000));
        assert!(amount("1 Xi", true)
            .unwrap_err()
            .contains("unknown unit 'Xi'"));
        assert!(amount("abc", false).is_err());
    }
}
