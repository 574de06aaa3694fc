//! Epoch milliseconds as a UTC calendar time, for the dates Hadoop's tools print
//! (`Times.format`, log listings, report pages). Pure arithmetic: no clock, no time zone.

const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A UTC calendar time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalendarTime {
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    /// 0 (Sunday) to 6.
    pub weekday: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

impl CalendarTime {
    /// The calendar time `ms` milliseconds after 1970-01-01 00:00 UTC (before it if negative).
    pub fn from_epoch_millis(ms: i64) -> CalendarTime {
        let secs = ms.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400) as u32;
        // Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        CalendarTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            // 1970-01-01 was a Thursday.
            weekday: (days + 4).rem_euclid(7) as u32,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
            millis: ms.rem_euclid(1000) as u32,
        }
    }

    /// `Sun` to `Sat`.
    pub fn weekday_name(&self) -> &'static str {
        WEEKDAYS[self.weekday as usize % 7]
    }

    /// `Jan` to `Dec`.
    pub fn month_name(&self) -> &'static str {
        MONTHS[(self.month as usize + 11) % 12]
    }

    /// Hadoop's `Times.format` in UTC: `Tue Nov 14 10:01:05 +0000 2023`.
    pub fn hadoop_format(&self) -> String {
        format!(
            "{} {} {:02} {:02}:{:02}:{:02} +0000 {}",
            self.weekday_name(),
            self.month_name(),
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.year
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known dates: the epoch, a leap day, a time of day with milliseconds, before the epoch.
    #[test]
    fn known_dates() {
        let epoch = CalendarTime::from_epoch_millis(0);
        assert_eq!(epoch.hadoop_format(), "Thu Jan 01 00:00:00 +0000 1970");
        let leap = CalendarTime::from_epoch_millis(951_782_400_000);
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
        assert_eq!(leap.weekday_name(), "Tue");
        let t = CalendarTime::from_epoch_millis(1_699_956_065_123);
        assert_eq!(t.hadoop_format(), "Tue Nov 14 10:01:05 +0000 2023");
        assert_eq!(t.millis, 123);
        let before = CalendarTime::from_epoch_millis(-1);
        assert_eq!(
            (
                before.year,
                before.month,
                before.day,
                before.hour,
                before.millis
            ),
            (1969, 12, 31, 23, 999)
        );
    }
}
