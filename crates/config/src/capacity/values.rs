//! Capacity strings: percentages (`12.5`), absolute resources (`[memory=10240,vcores=12]`) and
//! weights (`2w`), as Hadoop reads them (spec §3.3-§3.5).

use super::model::{CapacityValue, MaxCapacityValue};
use crate::alloc_file::values;
use crate::site::units;
use weft_types::{Resource, ResourceTypes, MEMORY, VCORES};

/// The legal weight range (Hadoop: `[0, 10000]`, `-1w` meaning unset).
pub(crate) const MAX_WEIGHT: f32 = 10_000.0;

/// Reads a `capacity` value. `Ok(None)` is `-1w`, Hadoop's "not set". The warnings are about
/// resource types the text names that are not registered (skipped, as Hadoop skips them).
pub(crate) fn capacity(
    text: &str,
    queue: &str,
    types: &ResourceTypes,
    warnings: &mut Vec<String>,
) -> Result<Option<CapacityValue>, String> {
    let t = text.trim();
    if is_absolute(t) {
        return absolute(t, types, warnings).map(|r| Some(CapacityValue::Absolute(r)));
    }
    if let Some(number) = t.strip_suffix('w') {
        let weight = values::float(number).map_err(|e| format!("weight {e}"))?;
        if (weight + 1.0).abs() < 1e-6 {
            return Ok(None);
        }
        if !(0.0..=MAX_WEIGHT).contains(&weight) {
            return Err(format!(
                "Illegal weight={weight} for queue={queue}label=. Acceptable values: [0, 10000], -1 is same as not set"
            ));
        }
        return Ok(Some(CapacityValue::Weight(weight)));
    }
    let percent = values::float(t)?;
    if !(0.0..=100.0).contains(&percent) {
        return Err(format!(
            "Illegal capacity of {percent} for queue {queue} (a percentage from 0 to 100, \
             an absolute resource like [memory=10240,vcores=12], or a weight like 2w)"
        ));
    }
    Ok(Some(CapacityValue::Percent(percent)))
}

/// Reads a `maximum-capacity` value (`-1` is 100 percent).
pub(crate) fn maximum_capacity(
    text: &str,
    queue: &str,
    types: &ResourceTypes,
    warnings: &mut Vec<String>,
) -> Result<MaxCapacityValue, String> {
    let t = text.trim();
    if is_absolute(t) {
        return absolute(t, types, warnings).map(MaxCapacityValue::Absolute);
    }
    if t.ends_with('w') {
        return Err(format!(
            "'{t}': maximum-capacity has no weight form; write a percentage (0 to 100) or an \
             absolute resource for queue {queue}"
        ));
    }
    let percent = values::float(t)?;
    if (percent + 1.0).abs() < 1e-6 {
        return Ok(MaxCapacityValue::Percent(100.0));
    }
    if !(0.0..=100.0).contains(&percent) {
        return Err(format!(
            "Illegal maximum-capacity of {percent} for queue {queue} (a percentage from 0 to 100, \
             -1 for 100, or an absolute resource)"
        ));
    }
    Ok(MaxCapacityValue::Percent(percent))
}

/// Hadoop's `^\[[\w\.,\-_= /]+\]$`.
fn is_absolute(t: &str) -> bool {
    let Some(inner) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) else {
        return false;
    };
    !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ',' | '-' | '=' | ' ' | '/'))
}

/// `[memory=10240,vcores=12,gpu=2]`; values may carry a unit (`10Gi`), memory is converted to
/// MB. Memory must be given and positive: Hadoop takes a value without it as "not configured",
/// which silently leaves the queue without a guarantee, so Weft refuses it instead.
pub(crate) fn absolute(
    t: &str,
    types: &ResourceTypes,
    warnings: &mut Vec<String>,
) -> Result<Resource, String> {
    let inner = &t[1..t.len() - 1];
    let mut resource = Resource::ZERO;
    let mut memory_given = false;
    for term in inner.split(',') {
        let Some((key, value)) = term.split_once('=') else {
            return Err(format!(
                "'{t}': '{}' is not in key=value form (e.g. [memory=10240,vcores=12])",
                term.trim()
            ));
        };
        let key = key.trim();
        let index = match key {
            "memory" | "memory-mb" => MEMORY,
            "vcores" => VCORES,
            other => match types.index_of(other) {
                Some(i) => i,
                None => {
                    warnings.push(format!(
                        "'{t}': resource type '{other}' is not defined (yarn.resource-types); it is skipped"
                    ));
                    continue;
                }
            },
        };
        let amount = units::amount(value, index == MEMORY).map_err(|e| format!("'{t}': {e}"))?;
        if amount < 0 {
            return Err(format!("'{t}': {key} may not be negative"));
        }
        memory_given |= index == MEMORY;
        resource.set(index, amount);
    }
    if !memory_given || resource.memory_mb() == 0 {
        return Err(format!(
            "'{t}': an absolute resource must give memory above 0 (e.g. [memory=10240,vcores=12])"
        ));
    }
    Ok(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(text: &str) -> Result<Option<CapacityValue>, String> {
        capacity(text, "root.a", &ResourceTypes::default(), &mut Vec::new())
    }

    #[test]
    fn the_three_capacity_forms_are_read() {
        assert_eq!(cap(" 12.5 "), Ok(Some(CapacityValue::Percent(12.5))));
        assert_eq!(
            cap("[memory=10Gi, vcores=12]"),
            Ok(Some(CapacityValue::Absolute(Resource::new(10_240, 12))))
        );
        assert_eq!(cap("2.5w"), Ok(Some(CapacityValue::Weight(2.5))));
        assert_eq!(cap("-1w"), Ok(None));
    }

    #[test]
    fn out_of_range_and_malformed_capacities_are_refused_with_the_reason() {
        assert!(cap("100.5")
            .unwrap_err()
            .contains("Illegal capacity of 100.5 for queue root.a"));
        assert!(cap("-3").unwrap_err().contains("Illegal capacity of -3"));
        assert!(cap("10001w").unwrap_err().contains("Illegal weight=10001"));
        assert!(cap("abc").unwrap_err().contains("'abc' is not a number"));
        assert!(cap("[vcores=3]")
            .unwrap_err()
            .contains("must give memory above 0"));
        assert!(cap("[memory]").unwrap_err().contains("key=value"));
    }

    #[test]
    fn unknown_resource_types_are_skipped_with_a_warning() {
        let mut warnings = Vec::new();
        let value = capacity(
            "[memory=1024,vcores=1,fpga=2]",
            "root.a",
            &ResourceTypes::default(),
            &mut warnings,
        );
        assert_eq!(
            value,
            Ok(Some(CapacityValue::Absolute(Resource::new(1024, 1))))
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("'fpga' is not defined"));
    }

    #[test]
    fn maximum_capacity_minus_one_is_a_hundred_percent() {
        let types = ResourceTypes::default();
        let max = |t: &str| maximum_capacity(t, "root.a", &types, &mut Vec::new());
        assert_eq!(max("-1"), Ok(MaxCapacityValue::Percent(100.0)));
        assert_eq!(max("40"), Ok(MaxCapacityValue::Percent(40.0)));
        assert!(max("140")
            .unwrap_err()
            .contains("Illegal maximum-capacity of 140"));
        assert!(max("2w").unwrap_err().contains("no weight form"));
    }
}
