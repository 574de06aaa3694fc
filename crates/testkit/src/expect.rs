//! Expectation files for behaviour scenarios (`<name>.expect` beside `<name>.toml`).
//!
//! The simulator prints JSON lines; an expectation file states which lines must appear, which must
//! not, and how many times some must appear. It is deliberately loose about everything it does not
//! mention, so an expectation derived by hand from the spec pins exactly the facts the scenario is
//! about and nothing incidental (container ids, unrelated fields, interleaving of other lines).
//!
//! # Format
//!
//! One directive per line; blank lines and lines starting with `#` are comments.
//!
//! * `{json}` — an **ordered** expectation: some output line after the line matched by the
//!   previous ordered expectation must match `{json}`. Other output lines may come between.
//! * `! {json}` — **no** output line may match `{json}`.
//! * `count {json} N` — **exactly** `N` output lines match `{json}`.
//!
//! "Matches" means the expected JSON is a *subset* of the actual line:
//!
//! * objects: every key given must exist in the actual object and its value must match
//!   (recursively); keys not given are ignored;
//! * arrays: every expected element must match a distinct element of the actual array, in any
//!   order (so `"queues":[{"name":"root.a","usage":{"memory_mb":4096}}]` finds queue `root.a`);
//! * numbers: integers compare exactly, anything with a fraction compares with a relative
//!   tolerance of 1e-6 (so `2` matches `2.0`);
//! * strings, booleans, null: equality.
//!
//! An object whose keys all start with `$` is an operator instead of a subset:
//! `{"$contains": "text"}` (the actual string contains `text`), `{"$lt": n}`, `{"$le": n}`,
//! `{"$gt": n}`, `{"$ge": n}` (numeric comparisons, several may be combined for a range),
//! `{"$absent": true}` (the key must not exist in the actual object), and
//! `{"$any": [a, b, ...]}` (matches if any alternative matches).

use serde_json::{Map, Value};
use std::fmt::Write as _;
use thiserror::Error;

/// A malformed expectation file.
#[derive(Debug, Error)]
pub enum ParseError {
    /// A directive's JSON does not parse.
    #[error("line {line}: bad JSON in expectation: {error}")]
    Json {
        /// 1-based line number in the expectation file.
        line: usize,
        /// What serde_json said.
        error: String,
    },
    /// A `count` directive without a trailing non-negative integer.
    #[error("line {line}: `count` needs `count {{json}} N`")]
    Count {
        /// 1-based line number in the expectation file.
        line: usize,
    },
    /// An operator object (`{"$...": ..}`) with an unknown operator.
    #[error("line {line}: unknown operator `{op}`")]
    Operator {
        /// 1-based line number in the expectation file.
        line: usize,
        /// The unknown operator.
        op: String,
    },
}

/// What a directive asserts about the output.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Must match an output line after the previous ordered match.
    Ordered,
    /// Must match no output line.
    Absent,
    /// Must match exactly this many output lines.
    Count(usize),
}

/// One directive of an expectation file.
#[derive(Clone, Debug)]
pub struct Directive {
    /// 1-based line number in the expectation file (for messages).
    pub line: usize,
    /// The line as written (for messages).
    pub text: String,
    /// What it asserts.
    pub kind: Kind,
    /// The expected subset.
    pub pattern: Value,
}

const OPERATORS: &[&str] = &["$contains", "$lt", "$le", "$gt", "$ge", "$absent", "$any"];

fn check_operators(v: &Value, line: usize) -> Result<(), ParseError> {
    match v {
        Value::Object(m) => {
            for (k, sub) in m {
                if k.starts_with('$') && !OPERATORS.contains(&k.as_str()) {
                    return Err(ParseError::Operator {
                        line,
                        op: k.clone(),
                    });
                }
                check_operators(sub, line)?;
            }
            Ok(())
        }
        Value::Array(a) => a.iter().try_for_each(|x| check_operators(x, line)),
        _ => Ok(()),
    }
}

fn parse_json(s: &str, line: usize) -> Result<Value, ParseError> {
    let v: Value = serde_json::from_str(s).map_err(|e| ParseError::Json {
        line,
        error: e.to_string(),
    })?;
    check_operators(&v, line)?;
    Ok(v)
}

/// Parses an expectation file.
pub fn parse(text: &str) -> Result<Vec<Directive>, ParseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (kind, pattern) = if let Some(rest) = t.strip_prefix('!') {
            (Kind::Absent, parse_json(rest.trim(), line)?)
        } else if let Some(rest) = t.strip_prefix("count") {
            let rest = rest.trim();
            let (json, n) = rest
                .rsplit_once(char::is_whitespace)
                .ok_or(ParseError::Count { line })?;
            let n: usize = n.trim().parse().map_err(|_| ParseError::Count { line })?;
            (Kind::Count(n), parse_json(json.trim(), line)?)
        } else {
            (Kind::Ordered, parse_json(t, line)?)
        };
        out.push(Directive {
            line,
            text: t.to_string(),
            kind,
            pattern,
        });
    }
    Ok(out)
}

fn is_operator(m: &Map<String, Value>) -> bool {
    !m.is_empty() && m.keys().all(|k| k.starts_with('$'))
}

fn num_eq(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0),
        _ => false,
    }
}

/// Why `actual` does not match `expected`, as a path and a short explanation; `None` if it matches.
pub fn mismatch(expected: &Value, actual: &Value) -> Option<String> {
    mismatch_at(expected, Some(actual), "")
}

/// The longest prefix of `s` of at most `n` bytes that ends on a char boundary.
fn cut(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!("{}...", cut(&s, 200))
    } else {
        s
    }
}

fn operator_mismatch(
    ops: &Map<String, Value>,
    actual: Option<&Value>,
    path: &str,
) -> Option<String> {
    for (op, arg) in ops {
        let fail = |why: String| Some(format!("{path}: {why}"));
        match op.as_str() {
            "$absent" => {
                let want_absent = arg.as_bool().unwrap_or(true);
                if want_absent && actual.is_some() {
                    return fail(format!("expected no such key, got {}", show(actual?)));
                }
                if !want_absent && actual.is_none() {
                    return fail("expected the key to exist".into());
                }
            }
            "$any" => {
                let alts = arg.as_array().cloned().unwrap_or_default();
                if !alts.iter().any(|a| mismatch_at(a, actual, path).is_none()) {
                    return fail(format!(
                        "none of {} matches {}",
                        show(arg),
                        actual.map(show).unwrap_or_else(|| "<missing>".into())
                    ));
                }
            }
            "$contains" => {
                let Some(Value::String(s)) = actual else {
                    return fail(format!(
                        "expected a string containing {}, got {}",
                        show(arg),
                        actual.map(show).unwrap_or_else(|| "<missing>".into())
                    ));
                };
                let needle = arg.as_str().unwrap_or_default();
                if !s.contains(needle) {
                    return fail(format!(
                        "{} does not contain {}",
                        show(&Value::String(s.clone())),
                        show(arg)
                    ));
                }
            }
            cmp => {
                let (Some(x), Some(y)) = (actual.and_then(Value::as_f64), arg.as_f64()) else {
                    return fail(format!(
                        "expected a number {cmp} {}, got {}",
                        show(arg),
                        actual.map(show).unwrap_or_else(|| "<missing>".into())
                    ));
                };
                let ok = match cmp {
                    "$lt" => x < y,
                    "$le" => x <= y,
                    "$gt" => x > y,
                    _ => x >= y,
                };
                if !ok {
                    return fail(format!("{x} is not {cmp} {y}"));
                }
            }
        }
    }
    None
}

fn mismatch_at(expected: &Value, actual: Option<&Value>, path: &str) -> Option<String> {
    if let Value::Object(m) = expected {
        if is_operator(m) {
            return operator_mismatch(m, actual, path);
        }
    }
    let Some(actual) = actual else {
        return Some(format!("{path}: missing (expected {})", show(expected)));
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if let Some(why) = mismatch_at(ev, a.get(k), &p) {
                    return Some(why);
                }
            }
            None
        }
        (Value::Array(e), Value::Array(a)) => {
            let mut used = vec![false; a.len()];
            for (i, ev) in e.iter().enumerate() {
                let hit = a
                    .iter()
                    .enumerate()
                    .find(|(j, av)| !used[*j] && mismatch_at(ev, Some(av), path).is_none());
                match hit {
                    Some((j, _)) => used[j] = true,
                    None => {
                        // Point at the closest candidate: an element sharing a "name"/"app"/"host" key.
                        let key_hint = ev.as_object().and_then(|o| {
                            ["name", "app", "host"]
                                .iter()
                                .find_map(|k| o.get(*k).map(|v| (*k, v.clone())))
                        });
                        let near = key_hint.and_then(|(k, v)| {
                            a.iter()
                                .find(|av| av.get(k) == Some(&v))
                                .map(|av| (k, v, av))
                        });
                        return Some(match near {
                            Some((k, v, av)) => mismatch_at(ev, Some(av), &format!("{path}[{k}={v}]"))
                                .unwrap_or_else(|| {
                                    format!("{path}[{k}={v}]: already matched by an earlier expected element")
                                }),
                            None => format!("{path}[{i}]: no element matches {}", show(ev)),
                        });
                    }
                }
            }
            None
        }
        (Value::Number(e), Value::Number(a)) => {
            (!num_eq(e, a)).then(|| format!("{path}: expected {e}, got {a}"))
        }
        (e, a) => (e != a).then(|| format!("{path}: expected {}, got {}", show(e), show(a))),
    }
}

/// Whether `actual` matches the expected subset `expected`.
pub fn matches(expected: &Value, actual: &Value) -> bool {
    mismatch(expected, actual).is_none()
}

/// One failed directive, rendered for a developer.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The directive that failed.
    pub directive: Directive,
    /// What went wrong and the nearby actual output.
    pub detail: String,
}

fn short(line: &str) -> String {
    if line.len() > 400 {
        format!("{}...", cut(line, 400))
    } else {
        line.to_string()
    }
}

/// Checks parsed output lines against the directives; returns every failure (empty = pass).
///
/// `output` holds the raw lines; lines that are not JSON objects never match anything.
pub fn check(directives: &[Directive], output: &[String]) -> Vec<Failure> {
    let parsed: Vec<Value> = output
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect();
    let mut failures = Vec::new();
    let mut pos = 0usize; // first output index the next ordered directive may match
    let mut last_match: Option<usize> = None;
    for d in directives {
        match d.kind {
            Kind::Ordered => {
                if let Some(i) = (pos..parsed.len()).find(|&i| matches(&d.pattern, &parsed[i])) {
                    pos = i + 1;
                    last_match = Some(i);
                    continue;
                }
                let mut detail = String::new();
                if let Some(i) =
                    (0..pos.min(parsed.len())).find(|&i| matches(&d.pattern, &parsed[i]))
                {
                    let _ = writeln!(
                        detail,
                        "  order problem: it matches output line {} but that is before the previous \
                         expectation's match (output line {})",
                        i + 1,
                        last_match.map(|m| m + 1).unwrap_or(0)
                    );
                }
                let _ = writeln!(detail, "  no match at or after output line {}", pos + 1);
                near_misses(&d.pattern, &parsed, output, pos, &mut detail);
                failures.push(Failure {
                    directive: d.clone(),
                    detail,
                });
            }
            Kind::Absent => {
                let hits: Vec<usize> = (0..parsed.len())
                    .filter(|&i| matches(&d.pattern, &parsed[i]))
                    .collect();
                if !hits.is_empty() {
                    let mut detail =
                        format!("  {} output line(s) match but none should:\n", hits.len());
                    for &i in hits.iter().take(5) {
                        let _ = writeln!(detail, "    #{}: {}", i + 1, short(&output[i]));
                    }
                    failures.push(Failure {
                        directive: d.clone(),
                        detail,
                    });
                }
            }
            Kind::Count(n) => {
                let hits: Vec<usize> = (0..parsed.len())
                    .filter(|&i| matches(&d.pattern, &parsed[i]))
                    .collect();
                if hits.len() != n {
                    let mut detail =
                        format!("  expected {n} matching line(s), found {}:\n", hits.len());
                    for &i in hits.iter().take(12) {
                        let _ = writeln!(detail, "    #{}: {}", i + 1, short(&output[i]));
                    }
                    if hits.len() > 12 {
                        let _ = writeln!(detail, "    ...");
                    }
                    if hits.is_empty() {
                        near_misses(&d.pattern, &parsed, output, 0, &mut detail);
                    }
                    failures.push(Failure {
                        directive: d.clone(),
                        detail,
                    });
                }
            }
        }
    }
    failures
}

/// Appends the output lines of the same `type` as the pattern (from `from` on, at most 8) with the
/// first field that differs, so the developer sees what the scheduler did instead.
fn near_misses(
    pattern: &Value,
    parsed: &[Value],
    output: &[String],
    from: usize,
    detail: &mut String,
) {
    let ty = pattern.get("type");
    let same_type: Vec<usize> = (from..parsed.len())
        .filter(|&i| ty.is_none() || parsed[i].get("type") == ty)
        .collect();
    if same_type.is_empty() {
        let _ = writeln!(detail, "  no output line of that type from there on");
        return;
    }
    let _ = writeln!(detail, "  nearby actual output of that type:");
    for &i in same_type.iter().take(8) {
        let why = mismatch(pattern, &parsed[i]).unwrap_or_default();
        let _ = writeln!(
            detail,
            "    #{}: {}\n        -> {}",
            i + 1,
            short(&output[i]),
            why
        );
    }
    if same_type.len() > 8 {
        let _ = writeln!(detail, "    ... ({} more)", same_type.len() - 8);
    }
}

/// Renders failures as one report naming the scenario.
pub fn report(scenario: &str, failures: &[Failure]) -> String {
    let mut s = format!(
        "scenario `{scenario}`: {} expectation(s) failed\n",
        failures.len()
    );
    for f in failures {
        let _ = writeln!(
            s,
            "- expect line {}: {}",
            f.directive.line, f.directive.text
        );
        s.push_str(&f.detail);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(v: &[Value]) -> Vec<String> {
        v.iter().map(Value::to_string).collect()
    }

    #[test]
    fn subset_objects_and_numbers() {
        let a = json!({"type":"allocated","at_ms":1000,"resources":{"memory_mb":2048,"vcores":1},"x":1});
        assert!(matches(
            &json!({"type":"allocated","resources":{"memory_mb":2048}}),
            &a
        ));
        assert!(!matches(&json!({"resources":{"memory_mb":1024}}), &a));
        assert!(!matches(&json!({"missing":1}), &a));
        assert!(matches(&json!({"w":2}), &json!({"w":2.0})));
        assert!(!matches(&json!({"w":2}), &json!({"w":2.5})));
    }

    #[test]
    fn arrays_are_unordered_subsets() {
        let a = json!({"queues":[{"name":"root.a","u":1},{"name":"root.b","u":2}]});
        assert!(matches(
            &json!({"queues":[{"name":"root.b","u":2},{"name":"root.a"}]}),
            &a
        ));
        assert!(!matches(&json!({"queues":[{"name":"root.b","u":1}]}), &a));
        let why = mismatch(&json!({"queues":[{"name":"root.b","u":1}]}), &a).unwrap();
        assert!(
            why.contains("root.b") && why.contains("expected 1, got 2"),
            "{why}"
        );
    }

    #[test]
    fn operators() {
        let a = json!({"reason":"queue root.p is not a leaf queue","at_ms":1500});
        assert!(matches(&json!({"reason":{"$contains":"not a leaf"}}), &a));
        assert!(!matches(&json!({"reason":{"$contains":"acl"}}), &a));
        assert!(matches(&json!({"at_ms":{"$ge":1000,"$lt":2000}}), &a));
        assert!(!matches(&json!({"at_ms":{"$lt":1500}}), &a));
        assert!(matches(&json!({"nope":{"$absent":true}}), &a));
        assert!(!matches(&json!({"at_ms":{"$absent":true}}), &a));
        assert!(matches(&json!({"at_ms":{"$any":[1,1500]}}), &a));
    }

    #[test]
    fn parse_and_check_all_kinds() {
        let d = parse(
            "# c\n{\"type\":\"a\",\"n\":1}\n{\"type\":\"a\",\"n\":3}\n! {\"type\":\"z\"}\ncount {\"type\":\"a\"} 3\n",
        )
        .unwrap();
        assert_eq!(d.len(), 4);
        assert_eq!(d[3].kind, Kind::Count(3));
        let out = lines(&[
            json!({"type":"a","n":1}),
            json!({"type":"a","n":2}),
            json!({"type":"a","n":3}),
        ]);
        assert!(check(&d, &out).is_empty());
        // Order matters for ordered directives.
        let rev = lines(&[
            json!({"type":"a","n":3}),
            json!({"type":"a","n":2}),
            json!({"type":"a","n":1}),
        ]);
        let f = check(&d, &rev);
        assert_eq!(f.len(), 1);
        assert!(f[0].detail.contains("order problem"), "{}", f[0].detail);
        // Absent and count failures.
        let bad = lines(&[
            json!({"type":"a","n":1}),
            json!({"type":"z"}),
            json!({"type":"a","n":3}),
        ]);
        let f = check(&d, &bad);
        assert_eq!(f.len(), 2, "{}", report("t", &f));
        assert!(report("t", &f).contains("scenario `t`"));
    }

    #[test]
    fn parse_errors() {
        assert!(matches!(
            parse("{oops"),
            Err(ParseError::Json { line: 1, .. })
        ));
        assert!(matches!(
            parse("count {\"a\":1}"),
            Err(ParseError::Count { line: 1 })
        ));
        assert!(matches!(
            parse("{\"a\":{\"$foo\":1}}"),
            Err(ParseError::Operator { .. })
        ));
    }
}
