//! YARN's textual identifiers, which clients parse: `application_<ts>_<seq>`,
//! `appattempt_<ts>_<seq>_<attempt>` and `container_<ts>_<seq>_<attempt>_<n>`.
//!
//! `ts` is the cluster timestamp (the RM's first start, epoch ms). Sequence numbers are padded
//! (4 digits for the app, 6 for the attempt in an attempt id, 2 for the attempt and 6 for the
//! container number in a container id) but may grow wider, as in YARN. Container ids written
//! after a work-preserving restart in YARN carry an epoch (`container_e17_...`); it is accepted
//! when parsing and ignored.

use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// An application: the cluster timestamp and a sequence number starting at 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApplicationId {
    /// The RM's cluster timestamp (epoch ms).
    pub cluster_ts: u64,
    /// The sequence number within the cluster (1, 2, ...).
    pub seq: u64,
}

/// One attempt of an application (attempt numbers start at 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId {
    /// The application.
    pub app: ApplicationId,
    /// The attempt number.
    pub attempt: u32,
}

/// A container of one attempt; number 1 is the attempt's AM container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContainerId {
    /// The application.
    pub app: ApplicationId,
    /// The attempt that owns the container.
    pub attempt: u32,
    /// The container number within the attempt.
    pub n: u64,
}

impl ContainerId {
    /// The attempt this container belongs to (what an AM derives from `CONTAINER_ID`).
    pub fn attempt_id(&self) -> AttemptId {
        AttemptId {
            app: self.app,
            attempt: self.attempt,
        }
    }
}

/// Why a YARN id string could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum YarnIdError {
    /// The string does not start with the expected prefix.
    #[error("invalid {kind} id '{text}': it must start with '{prefix}'")]
    Prefix {
        /// What kind of id was expected.
        kind: &'static str,
        /// The text given.
        text: String,
        /// The prefix expected.
        prefix: &'static str,
    },
    /// The number of `_`-separated parts is wrong.
    #[error("invalid {kind} id '{text}': expected the form {form}")]
    Shape {
        /// What kind of id was expected.
        kind: &'static str,
        /// The text given.
        text: String,
        /// The expected form.
        form: &'static str,
    },
    /// A part is not a decimal number (or is out of range).
    #[error("invalid {kind} id '{text}': {part} '{value}' is not a valid number")]
    Number {
        /// What kind of id was expected.
        kind: &'static str,
        /// The text given.
        text: String,
        /// Which part.
        part: &'static str,
        /// The offending part.
        value: String,
    },
}

const APP_FORM: &str = "application_<cluster timestamp>_<sequence>";
const ATTEMPT_FORM: &str = "appattempt_<cluster timestamp>_<sequence>_<attempt>";
const CONTAINER_FORM: &str = "container_[e<epoch>_]<cluster timestamp>_<sequence>_<attempt>_<n>";

fn number<T: FromStr>(
    kind: &'static str,
    text: &str,
    part: &'static str,
    value: &str,
) -> Result<T, YarnIdError> {
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| value.parse::<T>().ok())
        .flatten()
        .ok_or_else(|| YarnIdError::Number {
            kind,
            text: text.to_string(),
            part,
            value: value.to_string(),
        })
}

/// Splits `text` after `prefix` into exactly `n` parts.
fn parts<'a>(
    kind: &'static str,
    text: &'a str,
    prefix: &'static str,
    form: &'static str,
    n: usize,
) -> Result<Vec<&'a str>, YarnIdError> {
    let rest = text
        .strip_prefix(prefix)
        .ok_or_else(|| YarnIdError::Prefix {
            kind,
            text: text.to_string(),
            prefix,
        })?;
    let parts: Vec<&str> = rest.split('_').collect();
    if parts.len() != n {
        return Err(YarnIdError::Shape {
            kind,
            text: text.to_string(),
            form,
        });
    }
    Ok(parts)
}

/// `00`, `01`, ... `99`: a number's digits two at a time.
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// An id's text built on the stack (`ContainerId::text` and the others): the RM prints a
/// container id per allocation, stop and token, and `write!` with padded numbers cost several
/// times more than the digits; callers that want the bytes (a token's identifier) or a
/// `String` take them from here without a formatter in between.
pub struct IdText {
    bytes: [u8; 96],
    len: usize,
}

impl IdText {
    fn new(prefix: &str) -> IdText {
        // Zeros: a number's padding is what its digits leave unwritten.
        let mut text = IdText {
            bytes: [b'0'; 96],
            len: 0,
        };
        text.push(prefix.as_bytes());
        text
    }

    fn push(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        self.bytes[self.len..end].copy_from_slice(bytes);
        self.len = end;
    }

    /// `value` in decimal, zero-padded to `width` digits (wider when it needs more), after
    /// an underscore unless it is the first part.
    fn number(&mut self, mut value: u64, width: usize) {
        if self.len == 0 || self.bytes[self.len - 1] != b'_' {
            self.bytes[self.len] = b'_';
            self.len += 1;
        }
        // Written in place from the last digit, two at a time; the padding is the zeros the
        // buffer starts with (ids are formatted per container on the RM's hot paths: tokens,
        // replies).
        let digits = value.checked_ilog10().map_or(1, |log| log as usize + 1);
        let end = self.len + digits.max(width);
        let mut at = end;
        while value >= 100 {
            let pair = (value % 100) as usize * 2;
            value /= 100;
            at -= 2;
            self.bytes[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        }
        if value >= 10 {
            let pair = value as usize * 2;
            self.bytes[at - 2..at].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        } else {
            self.bytes[at - 1] = b'0' + value as u8;
        }
        self.len = end;
    }

    /// The text (what `Display` writes).
    pub fn as_str(&self) -> &str {
        // Only ASCII prefixes and digits were pushed.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The text's bytes (ASCII).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl ApplicationId {
    /// The id's text (`application_<ts>_<seq>`), on the stack.
    pub fn text(&self) -> IdText {
        let mut text = IdText::new("application_");
        text.number(self.cluster_ts, 0);
        text.number(self.seq, 4);
        text
    }
}

impl fmt::Display for ApplicationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

impl FromStr for ApplicationId {
    type Err = YarnIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const K: &str = "application";
        let p = parts(K, s, "application_", APP_FORM, 2)?;
        Ok(ApplicationId {
            cluster_ts: number(K, s, "cluster timestamp", p[0])?,
            seq: number(K, s, "sequence number", p[1])?,
        })
    }
}

impl AttemptId {
    /// The id's text (`appattempt_<ts>_<seq>_<attempt>`), on the stack.
    pub fn text(&self) -> IdText {
        let mut text = IdText::new("appattempt_");
        text.number(self.app.cluster_ts, 0);
        text.number(self.app.seq, 4);
        text.number(u64::from(self.attempt), 6);
        text
    }
}

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

impl FromStr for AttemptId {
    type Err = YarnIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const K: &str = "application attempt";
        let p = parts(K, s, "appattempt_", ATTEMPT_FORM, 3)?;
        Ok(AttemptId {
            app: ApplicationId {
                cluster_ts: number(K, s, "cluster timestamp", p[0])?,
                seq: number(K, s, "sequence number", p[1])?,
            },
            attempt: number(K, s, "attempt number", p[2])?,
        })
    }
}

impl ContainerId {
    /// The id's text (`container_<ts>_<seq>_<attempt>_<n>`), on the stack.
    pub fn text(&self) -> IdText {
        let mut text = IdText::new("container_");
        text.number(self.app.cluster_ts, 0);
        text.number(self.app.seq, 4);
        text.number(u64::from(self.attempt), 2);
        text.number(self.n, 6);
        text
    }
}

impl fmt::Display for ContainerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

impl FromStr for ContainerId {
    type Err = YarnIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const K: &str = "container";
        let rest = s
            .strip_prefix("container_")
            .ok_or_else(|| YarnIdError::Prefix {
                kind: K,
                text: s.to_string(),
                prefix: "container_",
            })?;
        // Parsed without collecting the parts: NMs report every container in every heartbeat.
        let mut parts = [""; 5];
        let mut count = 0;
        for part in rest.split('_') {
            if count == parts.len() {
                count += 1;
                break;
            }
            parts[count] = part;
            count += 1;
        }
        let p = match count {
            4 => &parts[..4],
            5 => {
                // An epoch part (`e17`) written by a restarted YARN RM: validate and drop it.
                let digits = parts[0].strip_prefix('e').unwrap_or("");
                number::<u64>(K, s, "epoch", digits)?;
                &parts[1..]
            }
            _ => {
                return Err(YarnIdError::Shape {
                    kind: K,
                    text: s.to_string(),
                    form: CONTAINER_FORM,
                })
            }
        };
        Ok(ContainerId {
            app: ApplicationId {
                cluster_ts: number(K, s, "cluster timestamp", p[0])?,
                seq: number(K, s, "sequence number", p[1])?,
            },
            attempt: number(K, s, "attempt number", p[2])?,
            n: number(K, s, "container number", p[3])?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: ApplicationId = ApplicationId {
        cluster_ts: 1_700_000_000_000,
        seq: 7,
    };

    #[test]
    fn ids_print_as_padded_formatting_prints_them() {
        let values = [
            0u64,
            1,
            9,
            10,
            99,
            100,
            9_999,
            10_000,
            999_999,
            1_000_000,
            u64::MAX,
        ];
        for &ts in &[0u64, 1, 1_700_000_000_000, u64::MAX] {
            for &seq in &values {
                for &attempt in &[0u32, 1, 10, 123_456_789, u32::MAX] {
                    for &n in &values {
                        let app = ApplicationId {
                            cluster_ts: ts,
                            seq,
                        };
                        let c = ContainerId { app, attempt, n };
                        assert_eq!(
                            c.to_string(),
                            format!("container_{ts}_{seq:04}_{attempt:02}_{n:06}")
                        );
                        assert_eq!(
                            c.attempt_id().to_string(),
                            format!("appattempt_{ts}_{seq:04}_{attempt:06}")
                        );
                        assert_eq!(app.to_string(), format!("application_{ts}_{seq:04}"));
                    }
                }
            }
        }
    }

    #[test]
    fn application_round_trip() {
        assert_eq!(APP.to_string(), "application_1700000000000_0007");
        assert_eq!("application_1700000000000_0007".parse(), Ok(APP));
        let big = ApplicationId {
            cluster_ts: 1,
            seq: 123_456,
        };
        assert_eq!(big.to_string(), "application_1_123456");
        assert_eq!(big.to_string().parse(), Ok(big));
    }

    #[test]
    fn attempt_round_trip() {
        let a = AttemptId {
            app: APP,
            attempt: 2,
        };
        assert_eq!(a.to_string(), "appattempt_1700000000000_0007_000002");
        assert_eq!(a.to_string().parse(), Ok(a));
    }

    #[test]
    fn container_round_trip_and_epoch() {
        let c = ContainerId {
            app: APP,
            attempt: 1,
            n: 1,
        };
        assert_eq!(c.to_string(), "container_1700000000000_0007_01_000001");
        assert_eq!(c.to_string().parse(), Ok(c));
        assert_eq!("container_e17_1700000000000_0007_01_000001".parse(), Ok(c));
        assert_eq!(
            c.attempt_id(),
            AttemptId {
                app: APP,
                attempt: 1
            }
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let e = "app_1_0001".parse::<ApplicationId>().unwrap_err();
        assert!(
            e.to_string().contains("must start with 'application_'"),
            "{e}"
        );
        let e = "application_1".parse::<ApplicationId>().unwrap_err();
        assert!(matches!(e, YarnIdError::Shape { .. }), "{e}");
        let e = "application_1_x2".parse::<ApplicationId>().unwrap_err();
        assert!(e.to_string().contains("sequence number 'x2'"), "{e}");
        let e = "application_1_+2".parse::<ApplicationId>().unwrap_err();
        assert!(matches!(e, YarnIdError::Number { .. }), "{e}");
        let e = "appattempt_1_0001".parse::<AttemptId>().unwrap_err();
        assert!(matches!(e, YarnIdError::Shape { .. }), "{e}");
        let e = "container_ex_1_0001_01_000001"
            .parse::<ContainerId>()
            .unwrap_err();
        assert!(e.to_string().contains("epoch"), "{e}");
        let e = "container_1_0001_01".parse::<ContainerId>().unwrap_err();
        assert!(matches!(e, YarnIdError::Shape { .. }), "{e}");
        let e = "container_e1_1_0001_01_000001_7"
            .parse::<ContainerId>()
            .unwrap_err();
        assert!(matches!(e, YarnIdError::Shape { .. }), "{e}");
        let e = "application_99999999999999999999999_1"
            .parse::<ApplicationId>()
            .unwrap_err();
        assert!(e.to_string().contains("cluster timestamp"), "{e}");
    }
}
