//! The JSON Schema of spec §3.2.4 (`schema/resource-description-v1.schema.json`) against the
//! parser: every example of §3.2.5 valid under both, and documents of the wrong shape refused
//! by both. The schema checks shape only, so the spec's semantically invalid demands (C17) pass
//! it and are refused by the parser alone.
//!
//! The validator below implements the keywords that schema uses (draft 2020-12): `$ref` into
//! `$defs`, `type`, `enum`, `pattern`, `oneOf`, `not`, `required`, `properties`,
//! `additionalProperties`, `prefixItems`, `items`, `minItems`, `maxItems`, `minimum`,
//! `maximum`, `minLength`, `maxLength`. An unknown keyword fails the test, so the subset cannot
//! silently drift from the file.

use regex::Regex;
use serde_json::Value;
use weft_demand_lang::{parse_document, DemandRef, Strategy};

const SCHEMA: &str = include_str!("../schema/resource-description-v1.schema.json");

const KNOWN: &[&str] = &[
    "$schema",
    "$id",
    "title",
    "description",
    "$defs",
    "$ref",
    "type",
    "enum",
    "pattern",
    "oneOf",
    "not",
    "required",
    "properties",
    "additionalProperties",
    "prefixItems",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
];

fn valid(schema: &Value, root: &Value, value: &Value) -> bool {
    let Some(rules) = schema.as_object() else {
        panic!("a schema must be an object: {schema}");
    };
    for key in rules.keys() {
        assert!(
            KNOWN.contains(&key.as_str()),
            "keyword {key} is not implemented"
        );
    }
    if let Some(reference) = rules.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("unsupported $ref {reference}"));
        if !valid(&root["$defs"][name], root, value) {
            return false;
        }
    }
    if let Some(kind) = rules.get("type").and_then(Value::as_str) {
        let ok = match kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            other => panic!("type {other}"),
        };
        if !ok {
            return false;
        }
    }
    if let Some(options) = rules.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            return false;
        }
    }
    if let (Some(pattern), Some(text)) =
        (rules.get("pattern").and_then(Value::as_str), value.as_str())
    {
        let regex = Regex::new(pattern).unwrap_or_else(|e| panic!("pattern {pattern}: {e}"));
        if !regex.is_match(text) {
            return false;
        }
    }
    if let Some(text) = value.as_str() {
        let chars = text.chars().count() as u64;
        if rules
            .get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|min| chars < min)
            || rules
                .get("maxLength")
                .and_then(Value::as_u64)
                .is_some_and(|max| chars > max)
        {
            return false;
        }
    }
    if value.is_i64() || value.is_u64() {
        let n = value
            .as_i64()
            .map(i128::from)
            .or(value.as_u64().map(i128::from));
        let bound = |key: &str| {
            rules
                .get(key)
                .and_then(|b| b.as_i64().map(i128::from).or(b.as_u64().map(i128::from)))
        };
        if let (Some(n), Some(min)) = (n, bound("minimum")) {
            if n < min {
                return false;
            }
        }
        if let (Some(n), Some(max)) = (n, bound("maximum")) {
            if n > max {
                return false;
            }
        }
    }
    if let Some(options) = rules.get("oneOf").and_then(Value::as_array) {
        if options.iter().filter(|o| valid(o, root, value)).count() != 1 {
            return false;
        }
    }
    if let Some(negated) = rules.get("not") {
        if valid(negated, root, value) {
            return false;
        }
    }
    if let Some(object) = value.as_object() {
        if let Some(required) = rules.get("required").and_then(Value::as_array) {
            if required
                .iter()
                .any(|k| !object.contains_key(k.as_str().unwrap_or("")))
            {
                return false;
            }
        }
        let properties = rules.get("properties").and_then(Value::as_object);
        for (key, item) in object {
            let schema = match properties.and_then(|p| p.get(key)) {
                Some(schema) => schema,
                None => match rules.get("additionalProperties") {
                    Some(Value::Bool(false)) => return false,
                    Some(schema @ Value::Object(_)) => schema,
                    _ => continue,
                },
            };
            if !valid(schema, root, item) {
                return false;
            }
        }
    }
    if let Some(items) = value.as_array() {
        let len = items.len() as u64;
        if rules
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|min| len < min)
            || rules
                .get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|max| len > max)
        {
            return false;
        }
        let prefix = rules.get("prefixItems").and_then(Value::as_array);
        for (i, item) in items.iter().enumerate() {
            let schema = prefix.and_then(|p| p.get(i)).or(rules.get("items"));
            if let Some(schema) = schema {
                if !valid(schema, root, item) {
                    return false;
                }
            }
        }
    }
    true
}

fn schema_accepts(document: &Value) -> bool {
    let root: Value = serde_json::from_str(SCHEMA).expect("the schema file is JSON");
    match document {
        Value::Array(items) => items.iter().all(|item| valid(&root, &root, item)),
        single => valid(&root, &root, single),
    }
}

fn known(reference: &DemandRef) -> bool {
    [1200, 1201].contains(&reference.demand)
}

fn parser_accepts(text: &str) -> bool {
    parse_document(text, Strategy::Loose, &known).is_ok()
}

const EXAMPLES: [(&str, &str); 5] = [
    ("3.2.1", include_str!("data/example-3.2.1.json")),
    ("(a)", include_str!("data/example-a.json")),
    ("(b)", include_str!("data/example-b.json")),
    ("(c)", include_str!("data/example-c.json")),
    ("(d)", include_str!("data/example-d.json")),
];

#[test]
fn every_example_is_valid_under_the_schema_and_the_parser() {
    for (name, text) in EXAMPLES {
        let document: Value = serde_json::from_str(text).expect("examples are JSON");
        assert!(
            schema_accepts(&document),
            "the schema refuses example {name}"
        );
        assert!(parser_accepts(text), "the parser refuses example {name}");
    }
}

#[test]
fn the_spec_s_schema_as_written_refuses_a_bare_duration_length() {
    // §3.2.4 gives `compact` no pattern, so "45m" matches both `length` and `interval` in
    // durationValue's oneOf and example (c) fails: the reason our copy adds a pattern.
    let mut root: Value = serde_json::from_str(SCHEMA).expect("JSON");
    root["$defs"]["compact"]
        .as_object_mut()
        .expect("an object")
        .remove("pattern");
    let example: Value = serde_json::from_str(EXAMPLES[3].1).expect("JSON");
    assert!(
        !valid(&root, &root, &example),
        "the unpatched schema would accept (c)"
    );
}

/// Documents of the wrong shape: both refuse each.
const WRONG_SHAPE: &[&str] = &[
    r#"{"ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}}"#,
    r#"{"DemandID": 1}"#,
    r#"{"DemandID": -1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 0}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1}, "num-containers": 1}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1, "colour": 1}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Extra": 1}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Gang": 0}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Strategy": "firm"}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "DeadLine": "[, +1m]", "Deadline": "[, +1m]"}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Start": ["now", "+5m"]}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Start": ["NOW", "+5m", null]}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Start": {"AND": []}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Start": {"Time": "[NOW, +1m]", "Strategy": "strict", "x": 1}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Duration": "20 minutes"}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "ClaimTimeout": "5"}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": "12:done"}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": -3}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": {"After": 1200, "Strategy": "strict", "Also": 1}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Name": 5}"#,
];

#[test]
fn documents_of_the_wrong_shape_are_refused_by_both() {
    for text in WRONG_SHAPE {
        let document: Value = serde_json::from_str(text).expect("JSON");
        assert!(!schema_accepts(&document), "the schema accepts {text}");
        assert!(!parser_accepts(text), "the parser accepts {text}");
    }
}

/// The spec's invalid demands (C17 and §3.2.3's rules): well shaped, so the schema accepts
/// them; the parser refuses each.
const SEMANTICALLY_WRONG: &[&str] = &[
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "Start": {"Time": "[NOW, +5x]"}}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "DeadLine": {"OR": [["NOW", "+5m"], ["NOW", "+9m"]]}}"#,
    r#"[{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": 2},
        {"DemandID": 2, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": 1}]"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 4}, "Gang": 3}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "OrderBy": 77}"#,
    r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 1}, "DeadLine": "[NOW, ^3]"}"#,
];

#[test]
fn semantically_wrong_demands_pass_the_schema_and_are_refused_by_the_parser() {
    for text in SEMANTICALLY_WRONG {
        let document: Value = serde_json::from_str(text).expect("JSON");
        assert!(schema_accepts(&document), "the schema refuses {text}");
        assert!(!parser_accepts(text), "the parser accepts {text}");
    }
}
