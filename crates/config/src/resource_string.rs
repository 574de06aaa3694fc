//! Hadoop's resource string syntaxes (spec §14.3).
//!
//! Allocation files write resources three ways, chosen by content: new style
//! (`memory-mb=1024, vcores=2` or `memory-mb=50%, vcores=25%`), old-style percentages
//! (`50%`, `50% memory, 25% cpu`) and old-style absolute amounts (`1024 mb, 2 vcores`).
//! Scenario files use a simpler absolute form ([`parse_quantity`]).

use crate::ConfiguredResource;
use weft_types::{Resource, ResourceTypes, MAX_RESOURCE_TYPES, MEMORY, VCORES};

/// What the types a resource string leaves out get (new-style absolute strings only, as in
/// Hadoop; old-style absolute strings always leave custom types at 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingTypes {
    /// Missing types are 0 (`minResources`).
    Zero,
    /// Missing types are unbounded (`maxResources` and the other maximum-type fields).
    Unbounded,
}

const EXAMPLES: &str = "expected e.g. '1024 mb, 2 vcores' or 'memory-mb=1024, vcores=2'";

/// Parses a resource string of an allocation file in any of Hadoop's three syntaxes.
///
/// The error says what is wrong with the text, in words a person can act on.
pub fn parse_resource(
    text: &str,
    types: &ResourceTypes,
    missing: MissingTypes,
) -> Result<ConfiguredResource, String> {
    if text.trim().is_empty() {
        return Err(format!("the resource string is empty: {EXAMPLES}"));
    }
    if text.contains('=') {
        parse_new_style(text, types, missing)
    } else if text.contains('%') {
        parse_old_style_percent(text).map(ConfiguredResource::Percent)
    } else {
        parse_old_style_absolute(text).map(ConfiguredResource::Absolute)
    }
}

/// Parses an absolute amount of a scenario file (node sizes, asks): `8192 mb, 8 vcores`,
/// optionally with `<n> <custom type>` terms (`8192 mb, 8 vcores, 2 gpu`), or new style
/// `memory-mb=1024, vcores=1, gpu=2`. Missing types are 0; percentages are refused; every
/// named type must be registered in `types`.
pub fn parse_quantity(text: &str, types: &ResourceTypes) -> Result<Resource, String> {
    if text.trim().is_empty() {
        return Err(format!("the resource amount is empty: {EXAMPLES}"));
    }
    if text.contains('%') {
        return Err(format!(
            "'{}' is a percentage; an absolute amount is needed here ({EXAMPLES})",
            text.trim()
        ));
    }
    if text.contains('=') {
        return match parse_new_style(text, types, MissingTypes::Zero)? {
            ConfiguredResource::Absolute(r) => Ok(r),
            // Unreachable in practice: '%' was refused above.
            ConfiguredResource::Percent(_) => Err(format!("'{}' is a percentage", text.trim())),
        };
    }
    let mut out = Resource::ZERO;
    let mut seen = [false; MAX_RESOURCE_TYPES];
    for term in amount_terms(text) {
        let (number, unit, term) = term.map_err(|bad| {
            format!("'{bad}' is not an amount: expected a number and a unit, e.g. '1024 mb' or '2 vcores'")
        })?;
        let index = quantity_unit_index(unit, types).ok_or_else(|| {
            format!(
                "'{term}': unknown resource type '{unit}' (known: mb, vcores{}); custom types must be declared in yarn.resource-types",
                custom_names(types)
            )
        })?;
        if seen[index] {
            return Err(format!(
                "'{}' names {} twice",
                text.trim(),
                types.name(index)
            ));
        }
        seen[index] = true;
        let value =
            integer_part(number).ok_or_else(|| format!("'{term}': '{number}' is too large"))?;
        if value < 0 {
            return Err(format!("'{term}': the amount must not be negative"));
        }
        if index == VCORES && value > i64::from(i32::MAX) {
            return Err(format!(
                "'{term}': at most {} vcores are supported",
                i32::MAX
            ));
        }
        out.set(index, value);
    }
    if !seen.iter().any(|s| *s) {
        return Err(format!(
            "'{}' is not a resource amount: {EXAMPLES}",
            text.trim()
        ));
    }
    Ok(out)
}

/// The custom resource type names a quantity string mentions, in order of first mention,
/// so that a caller can register them before calling [`parse_quantity`]. Never fails: text it
/// cannot read contributes no names.
pub fn quantity_type_names(text: &str) -> Vec<String> {
    let mentioned: Vec<String> = if text.contains('=') {
        text.split(',')
            .filter_map(|term| term.split_once('='))
            .map(|(name, _)| name.trim().to_string())
            .collect()
    } else {
        amount_terms(text)
            .into_iter()
            .flatten()
            .map(|(_, unit, _)| unit.to_string())
            .collect()
    };
    let mut names: Vec<String> = Vec::new();
    for name in mentioned {
        let builtin = matches!(
            name.to_ascii_lowercase().as_str(),
            "mb" | "memory" | "memory-mb" | "vcores" | "vcore"
        );
        if !name.is_empty() && !builtin && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Splits an absolute amount into `(number, unit, term)` triples; terms are separated by commas
/// or spaces (`8192 mb, 8 vcores` or `8192 mb 8 vcores`). `Err` carries text that is not a
/// `<number> <unit>` term.
fn amount_terms(text: &str) -> Vec<Result<(&str, &str, &str), &str>> {
    let is_sep = |c: char| c.is_whitespace() || c == ',';
    let mut out = Vec::new();
    let mut rest = text.trim_start_matches(is_sep);
    while !rest.is_empty() {
        let start = rest;
        let up_to_comma = || start.split(',').next().unwrap_or(start).trim();
        let Some(n) = number_prefix_len(rest.as_bytes()) else {
            out.push(Err(up_to_comma()));
            rest = &start[start.find(',').unwrap_or(start.len())..];
            rest = rest.trim_start_matches(is_sep);
            continue;
        };
        let after = rest[n..].trim_start();
        let unit_len = after.find(is_sep).unwrap_or(after.len());
        if unit_len == 0 {
            out.push(Err(up_to_comma()));
            rest = after.trim_start_matches(is_sep);
            continue;
        }
        let consumed = start.len() - after.len() + unit_len;
        out.push(Ok((&start[..n], &after[..unit_len], &start[..consumed])));
        rest = after[unit_len..].trim_start_matches(is_sep);
    }
    out
}

fn quantity_unit_index(unit: &str, types: &ResourceTypes) -> Option<usize> {
    match unit.to_ascii_lowercase().as_str() {
        "mb" | "memory-mb" => Some(MEMORY),
        "vcores" | "vcore" => Some(VCORES),
        _ => types.index_of(unit).filter(|i| *i >= 2),
    }
}

fn custom_names(types: &ResourceTypes) -> String {
    (2..types.len())
        .map(|i| format!(", {}", types.name(i)))
        .collect()
}

/// Length of the leading `-?\d+(\.\d*)?` of `b`, if it starts with one.
fn number_prefix_len(b: &[u8]) -> Option<usize> {
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    Some(i)
}

/// The integer part of a `-?\d+(\.\d*)?` number (Hadoop drops the fraction); `None` when it
/// does not fit in an `i64`.
fn integer_part(number: &str) -> Option<i64> {
    let int = number.split('.').next().unwrap_or(number);
    int.parse().ok()
}

/// Java's `String.split`: trailing empty pieces are dropped (but a lone empty input stays).
fn java_split(text: &str, sep: char) -> Vec<&str> {
    let mut parts: Vec<&str> = text.split(sep).collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

fn parse_new_style(
    text: &str,
    types: &ResourceTypes,
    missing: MissingTypes,
) -> Result<ConfiguredResource, String> {
    let as_percent = text.contains('%');
    let mut percents = [1.0_f64; MAX_RESOURCE_TYPES];
    let mut amounts = match missing {
        MissingTypes::Zero => Resource::ZERO,
        MissingTypes::Unbounded => Resource::UNBOUNDED,
    };
    for piece in java_split(text, ',') {
        let parts = java_split(piece, '=');
        if parts.len() != 2 {
            return Err(format!(
                "'{}' in '{}' is not of the form name=value (e.g. 'memory-mb=1024, vcores=2')",
                piece.trim(),
                text.trim()
            ));
        }
        let name = parts[0].trim();
        let value = parts[1].trim();
        // Hadoop knows memory only as `memory-mb` in this syntax.
        let index = types
            .index_of(name)
            .filter(|_| name != "memory")
            .ok_or_else(|| unknown_type(name, types))?;
        if as_percent {
            let p = percentage(value).ok_or_else(|| {
                format!(
                    "{name}: '{value}' is not a percentage; when one value is a percentage all must be (e.g. 'memory-mb=50%, vcores=25%')"
                )
            })?;
            if p < 0.0 {
                return Err(format!(
                    "{name}: '{value}' is negative; percentages must not be negative"
                ));
            }
            percents[index] = p;
        } else {
            let v: i64 = value.parse().map_err(|_| {
                let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
                if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                    format!("{name}: '{value}' is too large (at most {})", i64::MAX)
                } else {
                    format!("{name}: '{value}' is not an integer (no units in this syntax: 'memory-mb=1024')")
                }
            })?;
            if v < 0 {
                return Err(format!(
                    "{name}: '{value}' is negative; amounts must not be negative"
                ));
            }
            let v = if index == VCORES {
                v.min(i64::from(i32::MAX))
            } else {
                v
            };
            amounts.set(index, v);
        }
    }
    Ok(if as_percent {
        ConfiguredResource::Percent(percents)
    } else {
        ConfiguredResource::Absolute(amounts)
    })
}

fn unknown_type(name: &str, types: &ResourceTypes) -> String {
    let known: Vec<&str> = (0..types.len()).map(|i| types.name(i)).collect();
    format!(
        "unknown resource type '{name}' (known: {}); custom types must be declared in yarn.resource-types",
        known.join(", ")
    )
}

/// `-?\d+(\.\d*)?\s*%` (the whole of an already trimmed value) as a fraction.
fn percentage(value: &str) -> Option<f64> {
    percentage_with_suffix(value, "")
}

/// `-?\d+(\.\d*)?\s*%\s*<suffix>` (the whole of an already trimmed value) as a fraction.
fn percentage_with_suffix(value: &str, suffix: &str) -> Option<f64> {
    let end = number_prefix_len(value.as_bytes())?;
    let (number, rest) = value.split_at(end);
    let rest = rest.trim_start().strip_prefix('%')?.trim_start();
    if rest != suffix {
        return None;
    }
    number.parse::<f64>().ok().map(|p| p / 100.0)
}

fn parse_old_style_percent(text: &str) -> Result<[f64; MAX_RESOURCE_TYPES], String> {
    let lower = text.to_lowercase();
    let values = java_split(&lower, ',');
    if values.len() == 1 {
        let value = values[0].trim();
        let p = percentage(value).ok_or_else(|| {
            format!(
                "'{}' is not a percentage: expected e.g. '50%' or '50% memory, 25% cpu'",
                text.trim()
            )
        })?;
        if p < 0.0 {
            return Err(format!(
                "'{}' is negative; percentages must not be negative",
                text.trim()
            ));
        }
        return Ok([p; MAX_RESOURCE_TYPES]);
    }
    // As in Hadoop, the two-type form leaves custom types at 0%.
    let mut out = [0.0; MAX_RESOURCE_TYPES];
    for (index, name) in [(MEMORY, "memory"), (VCORES, "cpu")] {
        let Some(value) = values.iter().find(|v| v.contains(name)).map(|v| v.trim()) else {
            let mixed = values
                .iter()
                .any(|v| !v.trim().is_empty() && !v.contains('%'));
            return Err(if mixed {
                format!(
                    "'{}' mixes percentages and absolute amounts: write e.g. '50% memory, 25% cpu' or '1024 mb, 2 vcores'",
                    text.trim()
                )
            } else {
                format!(
                    "'{}' is missing the {name} percentage: expected e.g. '50% memory, 25% cpu'",
                    text.trim()
                )
            });
        };
        let p = percentage_with_suffix(value, name).ok_or_else(|| {
            format!("'{value}' is not a percentage of {name}: expected e.g. '50% {name}'")
        })?;
        if p < 0.0 {
            return Err(format!(
                "'{value}' is negative; percentages must not be negative"
            ));
        }
        out[index] = p;
    }
    Ok(out)
}

fn parse_old_style_absolute(text: &str) -> Result<Resource, String> {
    let lower = text.to_lowercase();
    let mut parts: Vec<&str> = java_split(&lower, ',');
    if parts.len() != 2 {
        parts = find_amount_tokens(&lower);
        if parts.len() != 2 {
            return Err(format!("'{}' is not a resource: {EXAMPLES}", text.trim()));
        }
    }
    let memory = old_style_amount(&parts, "mb", "memory", text)?;
    let vcores = old_style_amount(&parts, "vcores", "vcores", text)?;
    Ok(Resource::new(memory, vcores))
}

/// Hadoop's fallback for space-separated terms: every `-?\d+(\.\d*)?\s*[a-z]+\s*` in order.
fn find_amount_tokens(lower: &str) -> Vec<&str> {
    let b = lower.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match amount_token_len(&b[i..]) {
            Some(len) => {
                out.push(&lower[i..i + len]);
                i += len;
            }
            None => i += 1,
        }
    }
    out
}

fn amount_token_len(b: &[u8]) -> Option<usize> {
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let mut i = number_prefix_len(b)?;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    let letters = i;
    while i < b.len() && b[i].is_ascii_lowercase() {
        i += 1;
    }
    if i == letters {
        return None;
    }
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    Some(i)
}

/// The amount of the first part containing `unit`: its leading integer (fraction dropped),
/// which Hadoop reads as a Java int.
fn old_style_amount(parts: &[&str], unit: &str, what: &str, text: &str) -> Result<i64, String> {
    let Some(part) = parts.iter().find(|p| p.contains(unit)).map(|p| p.trim()) else {
        return Err(format!(
            "'{}' has no {what} amount: {EXAMPLES}",
            text.trim()
        ));
    };
    let invalid =
        || format!("'{part}' is not a valid {what} amount: expected e.g. '1024 mb, 2 vcores'");
    let end = number_prefix_len(part.as_bytes()).ok_or_else(invalid)?;
    if !part[end..].trim_start().starts_with(unit) {
        return Err(invalid());
    }
    let value: i64 = integer_part(&part[..end])
        .filter(|v| i32::try_from(*v).is_ok())
        .ok_or_else(|| {
            format!(
                "'{part}': {what} is too large for this syntax (at most {}; use e.g. 'memory-mb={}' for larger values)",
                i32::MAX,
                i64::MAX
            )
        })?;
    if value < 0 {
        return Err(format!("'{part}': {what} must not be negative"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests;
