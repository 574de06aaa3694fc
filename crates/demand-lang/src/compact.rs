//! The seed's compact notation (§3.2.2): `[NOW, +5m]`, `OR([NOW,+5m],[NOW,^3])`, lengths such
//! as `1h30m`, and the bounds a JSON interval's strings hold. Errors carry the 1-based column of
//! the offending character.

use crate::ast::{AbsTime, Anchor, Interval, LowerBound, TimeExpr, UpperBound, Zone};

/// How deep AND/OR/NOT may nest, so hostile input cannot exhaust the stack.
pub const MAX_NESTING: usize = 32;

/// A problem at a column of the string being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ColumnError {
    pub(crate) column: usize,
    pub(crate) message: String,
}

type Parsed<T> = Result<T, ColumnError>;

struct Cursor {
    chars: Vec<char>,
    pos: usize,
}

impl Cursor {
    fn new(text: &str) -> Cursor {
        Cursor {
            chars: text.chars().collect(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn column(&self) -> usize {
        self.pos + 1
    }

    fn error<T>(&self, message: impl Into<String>) -> Parsed<T> {
        Err(ColumnError {
            column: self.column(),
            message: message.into(),
        })
    }

    /// An error at the current character: "found 'x'" or "found the end".
    fn unexpected<T>(&self, expected: &str) -> Parsed<T> {
        match self.peek() {
            Some(c) => self.error(format!("unexpected '{c}'; expected {expected}")),
            None => self.error(format!("unexpected end; expected {expected}")),
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, expected: &str) -> Parsed<()> {
        if self.eat(c) {
            Ok(())
        } else {
            self.unexpected(expected)
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn starts_with(&self, word: &str) -> bool {
        (self.pos..)
            .zip(word.chars())
            .all(|(i, c)| self.chars.get(i) == Some(&c))
    }

    /// A run of ASCII letters (for keyword diagnostics).
    fn word(&self) -> String {
        self.chars[self.pos..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect()
    }

    fn digits(&mut self) -> Option<(usize, String)> {
        let start = self.pos;
        while matches!(self.peek(), Some('0'..='9')) {
            self.pos += 1;
        }
        (self.pos > start).then(|| (start, self.chars[start..self.pos].iter().collect()))
    }

    fn number(&mut self, what: &str) -> Parsed<u64> {
        let column = self.column();
        let Some((_, digits)) = self.digits() else {
            return self.unexpected(what);
        };
        digits.parse::<u64>().map_err(|_| ColumnError {
            column,
            message: format!("{digits} is too large"),
        })
    }

    /// Exactly `n` digits as a number.
    fn fixed(&mut self, n: usize, what: &str) -> Parsed<u32> {
        let mut value = 0u32;
        for _ in 0..n {
            match self.peek() {
                Some(c @ '0'..='9') => {
                    value = value * 10 + (c as u32 - '0' as u32);
                    self.pos += 1;
                }
                _ => return self.unexpected(what),
            }
        }
        Ok(value)
    }

    fn finish(&mut self) -> Parsed<()> {
        self.skip_ws();
        if self.at_end() {
            Ok(())
        } else {
            self.unexpected("the end of the expression")
        }
    }
}

/// Parses a whole compact time expression.
pub(crate) fn parse_time_expr(text: &str) -> Parsed<TimeExpr> {
    let mut cursor = Cursor::new(text);
    let expr = time_expr(&mut cursor, 0)?;
    cursor.finish()?;
    Ok(expr)
}

/// Parses a compact string that must be one interval (Duration's and DeadLine's forms), naming
/// the operator when it is not.
pub(crate) fn parse_interval(text: &str) -> Parsed<Interval> {
    let mut cursor = Cursor::new(text);
    cursor.skip_ws();
    let interval = interval(&mut cursor)?;
    cursor.finish()?;
    Ok(interval)
}

/// A JSON interval's lower bound string: `NOW`, `START+5m`, a calendar time.
pub(crate) fn parse_lower(text: &str) -> Parsed<LowerBound> {
    let mut cursor = Cursor::new(text);
    let bound = lower(&mut cursor)?;
    if !cursor.at_end() {
        return cursor.unexpected("the end of the bound");
    }
    Ok(bound)
}

/// A JSON interval's upper bound string: `+5m`, `^3`, a calendar time.
pub(crate) fn parse_upper(text: &str) -> Parsed<UpperBound> {
    let mut cursor = Cursor::new(text);
    let bound = upper(&mut cursor)?;
    if !cursor.at_end() {
        return cursor.unexpected("the end of the bound");
    }
    Ok(bound)
}

/// A length (`20m`, `+1h30m`) in milliseconds.
pub(crate) fn parse_length(text: &str) -> Parsed<u64> {
    let mut cursor = Cursor::new(text);
    cursor.eat('+');
    let ms = amounts(&mut cursor)?;
    if !cursor.at_end() {
        return cursor.unexpected("a digit or the end of the length");
    }
    Ok(ms)
}

/// True when `text` reads as the start of an operator or interval rather than a length.
pub(crate) fn looks_like_expression(text: &str) -> bool {
    let trimmed = text.trim_start();
    ["[", "AND", "OR", "NOT"]
        .iter()
        .any(|lead| trimmed.starts_with(lead))
}

fn time_expr(cursor: &mut Cursor, depth: usize) -> Parsed<TimeExpr> {
    cursor.skip_ws();
    if depth > MAX_NESTING {
        return cursor.error(format!("expressions nest deeper than {MAX_NESTING} levels"));
    }
    if cursor.peek() == Some('[') {
        return interval(cursor).map(TimeExpr::Interval);
    }
    for (keyword, is_not) in [("AND", false), ("OR", false), ("NOT", true)] {
        if cursor.starts_with(keyword) {
            cursor.pos += keyword.len();
            cursor.skip_ws();
            cursor.expect('(', &format!("'(' after {keyword}"))?;
            let first = time_expr(cursor, depth + 1)?;
            cursor.skip_ws();
            if is_not {
                cursor.expect(')', "')' closing NOT (NOT takes one expression)")?;
                return Ok(TimeExpr::Not(Box::new(first)));
            }
            let mut branches = vec![first];
            while cursor.eat(',') {
                branches.push(time_expr(cursor, depth + 1)?);
                cursor.skip_ws();
            }
            cursor.expect(')', &format!("',' or ')' in {keyword}"))?;
            return Ok(if keyword == "AND" {
                TimeExpr::And(branches)
            } else {
                TimeExpr::Or(branches)
            });
        }
    }
    let word = cursor.word();
    if ["and", "or", "not"].contains(&word.to_ascii_lowercase().as_str()) {
        return cursor.error(format!(
            "'{word}': keywords are upper-case ({})",
            word.to_ascii_uppercase()
        ));
    }
    cursor.unexpected("'[', AND, OR or NOT")
}

fn interval(cursor: &mut Cursor) -> Parsed<Interval> {
    cursor.expect('[', "'['")?;
    cursor.skip_ws();
    let from = if cursor.peek() == Some(',') {
        None
    } else {
        Some(lower(cursor)?)
    };
    cursor.skip_ws();
    cursor.expect(',', "',' between T1 and T2")?;
    cursor.skip_ws();
    let to = if cursor.peek() == Some(']') {
        None
    } else {
        Some(upper(cursor)?)
    };
    cursor.skip_ws();
    cursor.expect(']', "']' closing the interval")?;
    cursor.skip_ws();
    Ok(Interval { from, to })
}

fn lower(cursor: &mut Cursor) -> Parsed<LowerBound> {
    for (keyword, anchor) in [("NOW", Anchor::Now), ("START", Anchor::Start)] {
        if cursor.starts_with(keyword) {
            cursor.pos += keyword.len();
            let offset = if cursor.eat('+') { amounts(cursor)? } else { 0 };
            return Ok(LowerBound::Anchor(anchor, offset));
        }
    }
    match cursor.peek() {
        Some('0'..='9') => abs_time(cursor).map(LowerBound::Absolute),
        Some('+') => cursor
            .error("an offset cannot be T1; write NOW+offset or START+offset (T1 is an instant)"),
        Some('^') => cursor.error("a count ^N cannot be T1; it bounds T2"),
        _ => {
            let word = cursor.word();
            if ["now", "start"].contains(&word.to_ascii_lowercase().as_str()) {
                return cursor.error(format!(
                    "'{word}': keywords are upper-case ({})",
                    word.to_ascii_uppercase()
                ));
            }
            cursor.unexpected("NOW, START or a date (YYYY-MM-DD hh:mm:ss)")
        }
    }
}

fn upper(cursor: &mut Cursor) -> Parsed<UpperBound> {
    match cursor.peek() {
        Some('+') => {
            cursor.pos += 1;
            amounts(cursor).map(UpperBound::Offset)
        }
        Some('^') => {
            cursor.pos += 1;
            cursor.number("digits after '^'").map(UpperBound::Count)
        }
        Some('0'..='9') => abs_time(cursor).map(UpperBound::Absolute),
        _ => {
            if cursor.starts_with("NOW") || cursor.starts_with("START") {
                return cursor.error(
                    "T2 cannot be an anchor; write an offset (+5m), a date or a count (^3)",
                );
            }
            cursor.unexpected("an offset (+5m), a date or a count (^3)")
        }
    }
}

/// `amount { amount }` with amount = digits (h | m | s), summed in milliseconds.
fn amounts(cursor: &mut Cursor) -> Parsed<u64> {
    let mut total: u64 = 0;
    let mut any = false;
    loop {
        let column = cursor.column();
        let Some((_, digits)) = cursor.digits() else {
            if any {
                return Ok(total);
            }
            return cursor.unexpected("digits and a unit (h, m or s)");
        };
        let unit_ms: u64 = match cursor.peek() {
            Some('h') => 3_600_000,
            Some('m') => 60_000,
            Some('s') => 1_000,
            Some(c) if c.is_alphabetic() => {
                return cursor.error(format!("unknown unit '{c}'; expected h, m or s"));
            }
            _ => return cursor.unexpected("a unit (h, m or s)"),
        };
        cursor.pos += 1;
        let too_large = || ColumnError {
            column,
            message: format!("{digits} is too large"),
        };
        let amount = digits.parse::<u64>().map_err(|_| too_large())?;
        let ms = amount.checked_mul(unit_ms).ok_or_else(too_large)?;
        total = total.checked_add(ms).ok_or_else(too_large)?;
        any = true;
    }
}

fn abs_time(cursor: &mut Cursor) -> Parsed<AbsTime> {
    let year_column = cursor.column();
    let Some((_, year_digits)) = cursor.digits() else {
        return cursor.unexpected("a date");
    };
    let year: u16 = match year_digits.len() {
        2 => 2000 + year_digits.parse::<u16>().unwrap_or(0),
        4 => year_digits.parse::<u16>().unwrap_or(0),
        _ => {
            return Err(ColumnError {
                column: year_column,
                message: format!("year '{year_digits}' must have 2 or 4 digits"),
            })
        }
    };
    cursor.expect('-', "'-' after the year")?;
    let month_column = cursor.column();
    let month = cursor.fixed(2, "a two-digit month")?;
    cursor.expect('-', "'-' after the month")?;
    let day_column = cursor.column();
    let day = cursor.fixed(2, "a two-digit day")?;
    if !cursor.eat(' ') && !cursor.eat('T') {
        return cursor.unexpected("' ' or 'T' between the date and the time");
    }
    let hour_column = cursor.column();
    let hour = cursor.fixed(2, "a two-digit hour")?;
    cursor.expect(':', "':' after the hour")?;
    let minute_column = cursor.column();
    let minute = cursor.fixed(2, "two-digit minutes")?;
    cursor.expect(':', "':' after the minutes")?;
    let second_column = cursor.column();
    let second = cursor.fixed(2, "two-digit seconds")?;
    let out_of_range = |column: usize, what: &str, value: u32| ColumnError {
        column,
        message: format!("{what} {value} is out of range"),
    };
    if !(1..=12).contains(&month) {
        return Err(out_of_range(month_column, "month", month));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(out_of_range(day_column, "day", day));
    }
    if hour > 23 {
        return Err(out_of_range(hour_column, "hour", hour));
    }
    if minute > 59 {
        return Err(out_of_range(minute_column, "minute", minute));
    }
    if second > 59 {
        return Err(out_of_range(second_column, "second", second));
    }
    let zone = zone(cursor)?;
    Ok(AbsTime {
        year,
        month: month as u8,
        day: day as u8,
        hour: hour as u8,
        minute: minute as u8,
        second: second as u8,
        zone,
    })
}

fn zone(cursor: &mut Cursor) -> Parsed<Option<Zone>> {
    if cursor.eat('Z') {
        return Ok(Some(Zone::Utc));
    }
    let sign = match cursor.peek() {
        Some('+') => 1i16,
        Some('-') => -1i16,
        _ => return Ok(None),
    };
    cursor.pos += 1;
    let hour_column = cursor.column();
    let hours = cursor.fixed(2, "a two-digit offset hour")?;
    cursor.expect(':', "':' in the offset")?;
    let minute_column = cursor.column();
    let minutes = cursor.fixed(2, "two-digit offset minutes")?;
    if hours > 23 {
        return Err(ColumnError {
            column: hour_column,
            message: format!("offset hour {hours} is out of range"),
        });
    }
    if minutes > 59 {
        return Err(ColumnError {
            column: minute_column,
            message: format!("offset minutes {minutes} are out of range"),
        });
    }
    Ok(Some(Zone::Offset(sign * (hours * 60 + minutes) as i16)))
}

/// Days in `month` of `year` (proleptic Gregorian).
pub(crate) fn days_in_month(year: u16, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

fn is_leap(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_s_or_example_reads_as_two_intervals() {
        let expr = parse_time_expr("OR([NOW, +5m], [NOW, ^3])").unwrap();
        let now = Some(LowerBound::Anchor(Anchor::Now, 0));
        assert_eq!(
            expr,
            TimeExpr::Or(vec![
                TimeExpr::Interval(Interval {
                    from: now,
                    to: Some(UpperBound::Offset(300_000))
                }),
                TimeExpr::Interval(Interval {
                    from: now,
                    to: Some(UpperBound::Count(3))
                }),
            ])
        );
    }

    #[test]
    fn an_unknown_unit_names_its_column() {
        let err = parse_time_expr("[NOW, +5x]").unwrap_err();
        assert_eq!(err.column, 9);
        assert_eq!(err.message, "unknown unit 'x'; expected h, m or s");
    }

    #[test]
    fn offsets_sum_their_amounts_and_lengths_take_an_optional_plus() {
        assert_eq!(parse_length("1h30m").unwrap(), 5_400_000);
        assert_eq!(parse_length("+20m").unwrap(), 1_200_000);
        assert_eq!(
            parse_lower("NOW+10m").unwrap(),
            LowerBound::Anchor(Anchor::Now, 600_000)
        );
        assert!(parse_length("").is_err());
        assert!(parse_length("20").is_err());
    }

    #[test]
    fn two_digit_years_are_this_century_and_zones_are_kept() {
        let bound = parse_upper("26-11-22T02:30:00-05:30").unwrap();
        let UpperBound::Absolute(time) = bound else {
            panic!("a date: {bound:?}");
        };
        assert_eq!((time.year, time.month, time.day), (2026, 11, 22));
        assert_eq!(time.zone, Some(Zone::Offset(-330)));
    }

    #[test]
    fn impossible_dates_are_refused_at_the_field() {
        let err = parse_lower("2026-02-29 00:00:00").unwrap_err();
        assert_eq!(
            (err.column, err.message.as_str()),
            (9, "day 29 is out of range")
        );
        assert!(parse_lower("2028-02-29 00:00:00").is_ok(), "a leap day");
        let err = parse_lower("2026-01-01 24:00:00").unwrap_err();
        assert_eq!(err.column, 12);
    }

    #[test]
    fn lower_case_keywords_are_named() {
        let err = parse_time_expr("[now, +5m]").unwrap_err();
        assert_eq!(err.column, 2);
        assert!(err.message.contains("upper-case (NOW)"), "{}", err.message);
        let err = parse_time_expr("and([NOW,+1m])").unwrap_err();
        assert!(err.message.contains("upper-case (AND)"), "{}", err.message);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}[NOW,+1m]{}", "NOT(".repeat(40), ")".repeat(40));
        let err = parse_time_expr(&deep).unwrap_err();
        assert!(err.message.contains("nest deeper"), "{}", err.message);
    }

    #[test]
    fn trailing_text_is_refused_where_it_starts() {
        let err = parse_time_expr("[NOW,+1m] x").unwrap_err();
        assert_eq!(err.column, 11);
    }
}
