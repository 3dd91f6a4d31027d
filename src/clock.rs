//! The wall clock and calendar arithmetic, in one place: seconds since the
//! Unix epoch, UTC dates from day numbers, RFC 3339 timestamps, and local
//! time through a [`Zone`] chosen at the edge (the system's, or a fixed
//! offset for tests). (The simulator keeps its own clock, which it can speed up.)
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, now (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    unix_seconds(SystemTime::now())
}

/// Seconds since the Unix epoch at `t` (0 before 1970).
pub fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (UTC).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

/// The UTC date of `t`: (year, month, day).
pub fn utc_date(t: SystemTime) -> (i64, u32, u32) {
    civil_from_days((unix_seconds(t) / 86_400) as i64)
}

/// RFC 3339 UTC, seconds precision: "2026-11-30T15:20:57Z".
pub fn utc_timestamp(t: SystemTime) -> String {
    let secs = unix_seconds(t);
    let (y, m, d) = utc_date(t);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// How local time is reckoned. The console and the headless commands use
/// the system's zone (TZ, /etc/localtime); tests and the default use UTC or
/// a fixed offset, so what they print does not depend on the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zone {
    #[default]
    Utc,
    /// Seconds east of UTC.
    Fixed(i32),
    System,
}

impl Zone {
    /// Seconds east of UTC at `unix` (daylight saving included).
    pub fn offset_at(self, unix: u64) -> i32 {
        match self {
            Zone::Utc => 0,
            Zone::Fixed(offset) => offset,
            Zone::System => system_offset(unix),
        }
    }

    /// Local time of day, "15:20:57": what event and progress lines start with.
    pub fn time_of_day(self, unix: u64) -> String {
        let local = unix as i64 + i64::from(self.offset_at(unix));
        let s = local.rem_euclid(86_400);
        format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
    }

    /// RFC 3339 local time with its offset, "2026-11-30T16:20:57+01:00"
    /// (UTC ends in "Z"), for JSON.
    pub fn timestamp(self, unix: u64) -> String {
        let offset = self.offset_at(unix);
        if offset == 0 {
            return utc_timestamp(UNIX_EPOCH + std::time::Duration::from_secs(unix));
        }
        let local = unix as i64 + i64::from(offset);
        let (y, m, d) = civil_from_days(local.div_euclid(86_400));
        let s = local.rem_euclid(86_400);
        let sign = if offset < 0 { '-' } else { '+' };
        let off = offset.unsigned_abs() / 60;
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
            s / 3600,
            (s / 60) % 60,
            s % 60,
            off / 60,
            off % 60
        )
    }
}

/// The system zone's offset at `unix`, from localtime_r (0 if it fails).
fn system_offset(unix: u64) -> i32 {
    let Ok(t) = libc::time_t::try_from(unix) else {
        return 0;
    };
    // SAFETY: localtime_r reads `t` and writes only into `tm`, which we own;
    // tm is plain data, so zeroed is a valid value.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        i32::try_from(tm.tm_gmtoff).unwrap_or(0)
    }
}

/// An RFC 3339 timestamp ("2026-11-30T15:20:57Z", fractions and offsets
/// allowed) as a time; `None` when it is not one.
pub fn parse_utc_timestamp(text: &str) -> Option<SystemTime> {
    let b = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        std::str::from_utf8(b.get(r)?).ok()?.parse().ok()
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let mut rest = &b[19..];
    while let [b'.' | b'0'..=b'9', tail @ ..] = rest {
        rest = tail;
    }
    let offset = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let two = |a: u8, b: u8| -> Option<i64> {
                Some(i64::from(a.checked_sub(b'0')?) * 10 + i64::from(b.checked_sub(b'0')?))
            };
            let minutes = two(*h1, *h2)? * 60 + two(*m1, *m2)?;
            if *sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return None,
    };
    // Days from civil (the inverse of `civil_from_days`).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss - offset;
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + std::time::Duration::from_secs(s))
}

/// A span of seconds as a progress line says it: `42s`, `3m05s`, `1h02m`.
pub fn short_duration(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s / 60) % 60),
    }
}

/// An age as the panes and `capi status` say it: `35s`, `12m`, `3h`, `2d`; coarse on purpose,
/// so it changes seldom.
pub fn age_text(age: std::time::Duration) -> String {
    let s = age.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_coarse() {
        use std::time::Duration;
        assert_eq!(age_text(Duration::from_secs(35)), "35s");
        assert_eq!(age_text(Duration::from_secs(125)), "2m");
        assert_eq!(age_text(Duration::from_secs(7300)), "2h");
    }

    #[test]
    fn timestamps_parse_back() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_795_965_657);
        assert_eq!(parse_utc_timestamp(&utc_timestamp(t)), Some(t));
        assert_eq!(
            parse_utc_timestamp("2026-11-30T16:20:57.123+01:00"),
            parse_utc_timestamp("2026-11-30T15:20:57Z")
        );
        assert_eq!(parse_utc_timestamp("2026-13-30T15:20:57Z"), None);
        assert_eq!(parse_utc_timestamp("yesterday"), None);
    }
    use std::time::Duration;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn local_time_follows_the_zone() {
        let t = 1_796_052_057; // 2026-11-30T15:20:57Z
        assert_eq!(Zone::Utc.time_of_day(t), "15:20:57");
        assert_eq!(Zone::Utc.timestamp(t), "2026-11-30T15:20:57Z");
        assert_eq!(Zone::Fixed(3600).time_of_day(t), "16:20:57");
        assert_eq!(Zone::Fixed(3600).timestamp(t), "2026-11-30T16:20:57+01:00");
        // West of UTC, across midnight.
        assert_eq!(
            Zone::Fixed(-16 * 3600 - 1800).timestamp(t),
            "2026-11-29T22:50:57-16:30"
        );
        assert_eq!(
            parse_utc_timestamp(&Zone::Fixed(-5 * 3600).timestamp(t)),
            Some(UNIX_EPOCH + Duration::from_secs(t))
        );
        // The system's offset is a real one (within a day).
        assert!(Zone::System.offset_at(t).abs() < 86_400);
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_052_057);
        assert_eq!(utc_timestamp(t), "2026-11-30T15:20:57Z");
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(utc_date(t), (2026, 11, 30));
    }
}
