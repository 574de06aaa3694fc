//! Weft-only: the distributed shell's containers as one time-aware demand (issue 17 item 5).
//! The flags say when the command may start, by when it must end, and which other dshell runs
//! it follows; the client writes them as a ResourceDescription (the demand language's JSON),
//! checks it, and hands it to the AM, which sends it with its first allocate call instead of
//! an ordinary ask. The RM asks for the containers only once the demand may run.

use serde_json::{json, Map, Value};
use weft_demand_lang::Strategy;

/// The demand flags of `weft dshell`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DemandFlags {
    /// Run the containers as the time-aware demand with this DemandID (its key is
    /// `<application id>/<id>`); 1 when another demand flag is given.
    #[arg(long = "demand_id")]
    pub demand_id: Option<u64>,
    /// Not before: `+30s` (from submission), or a Start time expression
    /// (`[NOW+1m, +10m]`, `2026-11-28 03:00:00`, `OR([NOW,+5m],[NOW,^3])`).
    #[arg(long = "start")]
    pub start: Option<String>,
    /// Finished by: `+10m` (from submission), or a DeadLine expression (`[, +5m]`: five
    /// minutes after the first container starts; `[, 2026-11-28 04:00:00]`).
    #[arg(long = "deadline")]
    pub deadline: Option<String>,
    /// How long the containers are expected to run (`90s`, `1h30m`): with a deadline, a strict
    /// demand fails as soon as starting now could not end in time.
    #[arg(long = "duration")]
    pub duration: Option<String>,
    /// Start only after this demand ended: `application_<ts>_<n>` (that dshell run's demand 1)
    /// or `application_<ts>_<n>/<id>`, optionally with `:ok`, `:any`, `:failed` or `:started`.
    /// Repeatable: after all of them.
    #[arg(long = "after")]
    pub after: Vec<String>,
    /// Every condition strict: the demand fails (with the reason) rather than start late, run
    /// past its deadline or follow a failed predecessor. Without it, conditions are loose: the
    /// RM notes a miss and carries on.
    #[arg(long = "strict")]
    pub strict: bool,
    /// How long allocated containers may wait to be launched before the RM takes them back.
    #[arg(long = "claim_timeout")]
    pub claim_timeout: Option<String>,
    /// A ResourceDescription file (JSON) to start from; its ResourceRequest is filled in from
    /// the container flags when absent, and the flags above override its fields.
    #[arg(long = "demand_file")]
    pub demand_file: Option<String>,
}

impl DemandFlags {
    /// Whether the containers run as a demand.
    pub fn wanted(&self) -> bool {
        self.demand_id.is_some()
            || self.start.is_some()
            || self.deadline.is_some()
            || self.duration.is_some()
            || !self.after.is_empty()
            || self.strict
            || self.claim_timeout.is_some()
            || self.demand_file.is_some()
    }

    /// The ResourceDescription for containers of the given size, count, priority and gang,
    /// checked by the demand language's parser (`None` when no demand flag is given).
    pub fn description(
        &self,
        memory_mb: i64,
        vcores: i64,
        count: u32,
        priority: i32,
        gang: Option<u32>,
    ) -> Result<Option<Value>, String> {
        if !self.wanted() {
            return Ok(None);
        }
        let mut object = match &self.demand_file {
            None => Map::new(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read --demand_file {path}: {e}"))?;
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(o)) => o,
                    Ok(_) => return Err(format!("--demand_file {path}: not a JSON object")),
                    Err(e) => return Err(format!("--demand_file {path}: not JSON: {e}")),
                }
            }
        };
        let id = self
            .demand_id
            .or_else(|| object.get("DemandID").and_then(Value::as_u64))
            .unwrap_or(1);
        object.insert("DemandID".into(), json!(id));
        object.entry("ResourceRequest").or_insert_with(|| {
            json!({
                "capability": {"memory": memory_mb, "vCores": vcores},
                "num-containers": count,
                "priority": priority,
            })
        });
        if let Some(g) = gang {
            let gang = if g == count { json!(true) } else { json!(g) };
            object.insert("Gang".into(), gang);
        }
        if let Some(start) = &self.start {
            object.insert("Start".into(), json!(start_expression(start)));
        }
        if let Some(deadline) = &self.deadline {
            object.insert("DeadLine".into(), json!(deadline_expression(deadline)));
        }
        if let Some(d) = &self.duration {
            object.insert("Duration".into(), json!(d));
        }
        if let Some(t) = &self.claim_timeout {
            object.insert("ClaimTimeout".into(), json!(t));
        }
        match self.after.as_slice() {
            [] => {}
            [one] => {
                object.insert("OrderBy".into(), json!(reference(one)));
            }
            many => {
                let all: Vec<Value> = many.iter().map(|a| json!(reference(a))).collect();
                object.insert("OrderBy".into(), json!({ "AND": all }));
            }
        }
        if self.strict {
            object.insert("Strategy".into(), json!("strict"));
        }
        let value = Value::Object(object);
        weft_demand_lang::parse_value(&value, "", Strategy::Loose, &|_| true)
            .map_err(|e| format!("the demand flags make an invalid demand: {e}"))?;
        Ok(Some(value))
    }
}

/// `text` as lowercase hex, to cross a launch command untouched.
pub(crate) fn to_hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The text [`to_hex`] wrote.
pub(crate) fn from_hex(hex: &str) -> anyhow::Result<String> {
    let digits = hex.as_bytes();
    if !digits.len().is_multiple_of(2) {
        anyhow::bail!("odd number of hex digits");
    }
    let bytes = digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| anyhow::anyhow!("not hex: {}", String::from_utf8_lossy(pair)))
        })
        .collect::<anyhow::Result<Vec<u8>>>()?;
    Ok(String::from_utf8(bytes)?)
}

/// `+30s` is "not before 30 s from now"; anything else is a Start expression.
fn start_expression(flag: &str) -> String {
    match flag.trim() {
        offset if offset.starts_with('+') => format!("[NOW{offset}, ]"),
        other => other.to_owned(),
    }
}

/// `+10m` is "by 10 min from now"; an interval or operator is a DeadLine expression; an
/// absolute time is the interval that ends there.
fn deadline_expression(flag: &str) -> String {
    match flag.trim() {
        offset if offset.starts_with('+') => format!("[NOW, {offset}]"),
        expr if expr.starts_with('[') || expr.starts_with("AND") => expr.to_owned(),
        absolute => format!("[, {absolute}]"),
    }
}

/// An application id alone names that dshell run's demand 1.
fn reference(flag: &str) -> String {
    let flag = flag.trim();
    let (target, outcome) = match flag.split_once(':') {
        Some((t, o)) => (t, Some(o)),
        None => (flag, None),
    };
    let target = if target.starts_with("application_") && !target.contains('/') {
        format!("{target}/1")
    } else {
        target.to_owned()
    };
    match outcome {
        Some(o) => format!("{target}:{o}"),
        None => target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_junk() {
        let text = r#"{"a":{"b":"é"}}"#;
        assert_eq!(from_hex(&to_hex(text)).unwrap(), text);
        assert!(!to_hex(text).contains('}'));
        assert!(from_hex("7").is_err());
        assert!(from_hex("zz").is_err());
    }

    #[test]
    fn no_flag_is_no_demand() {
        let flags = DemandFlags::default();
        assert_eq!(flags.description(10, 1, 2, 0, None), Ok(None));
    }

    #[test]
    fn the_flags_make_one_checked_resource_description() {
        let flags = DemandFlags {
            start: Some("+30s".into()),
            deadline: Some("+10m".into()),
            duration: Some("2m".into()),
            after: vec![
                "application_1_0001".into(),
                "application_1_0002/4:any".into(),
            ],
            strict: true,
            ..DemandFlags::default()
        };
        let v = flags
            .description(512, 1, 4, 3, Some(2))
            .expect("valid")
            .expect("a demand");
        assert_eq!(
            v,
            json!({
                "DemandID": 1,
                "ResourceRequest": {"capability": {"memory": 512, "vCores": 1}, "num-containers": 4, "priority": 3},
                "Gang": 2,
                "Start": "[NOW+30s, ]",
                "DeadLine": "[NOW, +10m]",
                "Duration": "2m",
                "OrderBy": {"AND": ["application_1_0001/1", "application_1_0002/4:any"]},
                "Strategy": "strict",
            })
        );
        let whole_gang = DemandFlags {
            demand_id: Some(9),
            ..DemandFlags::default()
        };
        let v = whole_gang
            .description(512, 1, 4, 0, Some(4))
            .unwrap()
            .unwrap();
        assert_eq!(
            (v["DemandID"].clone(), v["Gang"].clone()),
            (json!(9), json!(true))
        );
    }

    #[test]
    fn a_bad_flag_is_refused_with_the_parser_s_words() {
        let flags = DemandFlags {
            deadline: Some("+5x".into()),
            ..DemandFlags::default()
        };
        let err = flags.description(512, 1, 1, 0, None).unwrap_err();
        assert!(err.contains("unknown unit 'x'"), "{err}");
    }
}
