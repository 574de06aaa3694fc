//! The time-aware demands' yarn-site keys (Weft's own; time-aware-demands spec §3.2.1,
//! §3.2.2): `weft.demand.default-strategy` (loose), `weft.demand.timezone` (a fixed offset,
//! UTC), `weft.demand.admit-unplanned` (false) and `weft.demand.am-lead` (60 s; milliseconds,
//! or a number with `ms`, `s` or `m`, as Hadoop's time durations). A bad value names its key.

use std::collections::BTreeMap;

use weft_rm_core::{DemandStrategy, RmConfig};

use crate::settings::SettingsError;

/// The demands' settings, read from yarn-site's pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemandSettings {
    /// `weft.demand.default-strategy`.
    pub default_strategy: DemandStrategy,
    /// `weft.demand.timezone`, minutes east of UTC.
    pub timezone_minutes: i16,
    /// `weft.demand.admit-unplanned`.
    pub admit_unplanned: bool,
    /// `weft.demand.am-lead`, ms.
    pub am_lead_ms: u64,
}

impl Default for DemandSettings {
    fn default() -> DemandSettings {
        DemandSettings {
            default_strategy: DemandStrategy::Loose,
            timezone_minutes: 0,
            admit_unplanned: false,
            am_lead_ms: 60_000,
        }
    }
}

impl DemandSettings {
    /// Reads the keys present in `pairs`; absent ones keep their defaults.
    pub(crate) fn read(pairs: &BTreeMap<String, String>) -> Result<DemandSettings, SettingsError> {
        let mut settings = DemandSettings::default();
        if let Some(v) = pairs.get("weft.demand.default-strategy").map(|v| v.trim()) {
            settings.default_strategy = match v {
                "loose" => DemandStrategy::Loose,
                "strict" => DemandStrategy::Strict,
                _ => {
                    return Err(SettingsError::Invalid(format!(
                        "weft.demand.default-strategy: '{v}' is not strict or loose"
                    )))
                }
            };
        }
        if let Some(v) = pairs.get("weft.demand.timezone").map(|v| v.trim()) {
            settings.timezone_minutes = offset_minutes(v).ok_or_else(|| {
                SettingsError::Invalid(format!(
                    "weft.demand.timezone: '{v}' is not a fixed offset (UTC, Z, +hh:mm or -hh:mm); named zones are not supported"
                ))
            })?;
        }
        if let Some(v) = pairs.get("weft.demand.admit-unplanned").map(|v| v.trim()) {
            settings.admit_unplanned = match v {
                _ if v.eq_ignore_ascii_case("true") => true,
                _ if v.eq_ignore_ascii_case("false") => false,
                _ => {
                    return Err(SettingsError::Invalid(format!(
                        "weft.demand.admit-unplanned: '{v}' is not true or false"
                    )))
                }
            };
        }
        if let Some(v) = pairs.get("weft.demand.am-lead").map(|v| v.trim()) {
            settings.am_lead_ms = duration_ms(v).ok_or_else(|| {
                SettingsError::Invalid(format!(
                    "weft.demand.am-lead: '{v}' is not a duration (milliseconds, or a number with ms, s or m)"
                ))
            })?;
        }
        Ok(settings)
    }

    /// Puts them into the core's configuration.
    pub(crate) fn apply(&self, config: &mut RmConfig) {
        config.demand_default_strategy = self.default_strategy;
        config.demand_timezone_minutes = self.timezone_minutes;
        config.demand_admit_unplanned = self.admit_unplanned;
        config.demand_am_lead = weft_types::Duration::from_millis(self.am_lead_ms);
    }
}

/// `60000`, `60000ms`, `60s`, `1m` as milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "ms"),
    };
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(scale)
}

/// `UTC`, `Z`, `+05:30`, `-08:00` as minutes east of UTC.
fn offset_minutes(text: &str) -> Option<i16> {
    if text == "UTC" || text == "Z" {
        return Some(0);
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    if hours.len() != 2 || minutes.len() != 2 {
        return None;
    }
    let hours: i16 = hours.parse().ok().filter(|h| (0..24).contains(h))?;
    let minutes: i16 = minutes.parse().ok().filter(|m| (0..60).contains(m))?;
    Some(sign * (hours * 60 + minutes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn absent_keys_keep_the_defaults() {
        assert_eq!(
            DemandSettings::read(&pairs(&[])).unwrap(),
            DemandSettings::default()
        );
    }

    #[test]
    fn each_key_is_read() {
        let read = DemandSettings::read(&pairs(&[
            ("weft.demand.default-strategy", "strict"),
            ("weft.demand.timezone", "-05:30"),
            ("weft.demand.admit-unplanned", "TRUE"),
            ("weft.demand.am-lead", "90s"),
        ]))
        .unwrap();
        assert_eq!(
            read,
            DemandSettings {
                default_strategy: DemandStrategy::Strict,
                timezone_minutes: -330,
                admit_unplanned: true,
                am_lead_ms: 90_000,
            }
        );
        for (text, ms) in [("250", 250), ("250ms", 250), ("2m", 120_000)] {
            let read = DemandSettings::read(&pairs(&[("weft.demand.am-lead", text)])).unwrap();
            assert_eq!(read.am_lead_ms, ms, "{text}");
        }
    }

    #[test]
    fn bad_values_name_their_key() {
        for (key, value, needle) in [
            (
                "weft.demand.default-strategy",
                "firm",
                "is not strict or loose",
            ),
            (
                "weft.demand.timezone",
                "Europe/Paris",
                "named zones are not supported",
            ),
            ("weft.demand.timezone", "+24:00", "is not a fixed offset"),
            ("weft.demand.admit-unplanned", "yes", "is not true or false"),
            ("weft.demand.am-lead", "1h", "is not a duration"),
        ] {
            let err = DemandSettings::read(&pairs(&[(key, value)])).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(key) && text.contains(needle), "{text}");
        }
    }
}
