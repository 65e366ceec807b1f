//! Simulated time: integer milliseconds since a fixed epoch, printed as Kubernetes prints time.
//!
//! Kubernetes serialises `metav1.Time` as RFC 3339 with second precision (`2025-01-01T00:00:05Z`).
//! The simulator never reads the OS clock; the CLI converts `--now` through [`SimTime::parse_rfc3339`],
//! and `converge serve` in real time moves the epoch to its start ([`anchor_epoch`]).

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch of the simulated world's usual start, 2025-01-01T00:00:00Z.
pub const EPOCH_UNIX_MS: i64 = 1_735_689_600_000;

/// The epoch in use: [`EPOCH_UNIX_MS`], unless [`anchor_epoch`] moved it.
static EPOCH: AtomicI64 = AtomicI64::new(EPOCH_UNIX_MS);

/// Milliseconds since the Unix epoch of the simulated world's start.
pub fn epoch_unix_ms() -> i64 {
    EPOCH.load(Ordering::Relaxed)
}

/// Starts simulated time at `unix_ms` (rounded down to a whole second) instead of
/// [`EPOCH_UNIX_MS`], for the whole process. Only `converge serve` in real time does this, so
/// that clients which compare timestamps with their own clock (`kubectl describe`'s event ages,
/// `kubectl events`) see simulated ages; everything deterministic (traces, `--manual`, the
/// playground) keeps the fixed epoch. Call it before any world is built.
pub fn anchor_epoch(unix_ms: i64) {
    EPOCH.store(unix_ms - unix_ms.rem_euclid(1000), Ordering::Relaxed);
}

/// A point in simulated time: milliseconds since [`epoch_unix_ms`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub fn from_ms(ms: u64) -> Self {
        SimTime(ms)
    }

    pub fn as_ms(self) -> u64 {
        self.0
    }

    /// `self + ms`, saturating.
    pub fn plus_ms(self, ms: u64) -> Self {
        SimTime(self.0.saturating_add(ms))
    }

    /// Milliseconds since the Unix epoch.
    pub fn unix_ms(self) -> i64 {
        epoch_unix_ms().saturating_add(i64::try_from(self.0).unwrap_or(i64::MAX))
    }

    /// RFC 3339 with second precision, as `metav1.Time` marshals (`2025-01-01T00:00:05Z`).
    pub fn rfc3339(self) -> String {
        format_unix_seconds(self.unix_ms().div_euclid(1000))
    }

    /// Parses an RFC 3339 timestamp (`Z` or `±hh:mm` offset, optional fraction) into simulated time.
    /// Times before the simulated epoch clamp to [`SimTime::ZERO`]; use [`parse_rfc3339_unix_ms`]
    /// when the absolute value matters.
    pub fn parse_rfc3339(s: &str) -> Option<SimTime> {
        let unix_ms = parse_rfc3339_unix_ms(s)?;
        Some(SimTime(
            u64::try_from(unix_ms - epoch_unix_ms()).unwrap_or(0),
        ))
    }
}

impl fmt::Display for SimTime {
    /// Human form used in traces: `t=12.345s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

impl SimTime {
    /// Appends the [`Display`](fmt::Display) form (`t=12.345s`) without the `fmt` machinery:
    /// every trace line starts with it.
    pub fn push_to(self, out: &mut String) {
        out.push_str("t=");
        push_u64(out, self.0 / 1000);
        out.push('.');
        let ms = self.0 % 1000;
        for digit in [ms / 100, ms / 10 % 10, ms % 10] {
            out.push(char::from(b'0' + digit as u8));
        }
        out.push('s');
    }
}

/// Appends `n` in decimal, as `{n}` prints it, without the `fmt` machinery.
pub fn push_u64(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`. The digits are written
/// directly: every Event and condition carries such a time, and `format!` with six padded
/// fields cost about 2,800 instructions a call (callgrind), most of it the `fmt` machinery.
pub fn format_unix_seconds(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        // Past four digits `{:04}` widens the year or signs it; keep its exact answer.
        return format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            (rem % 3600) / 60,
            rem % 60
        );
    }
    // Into a fixed buffer, then one copy into the string (a `push` per character checked the
    // capacity and encoded the char each time).
    let mut out = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, width: usize, mut n: i64| {
        for place in (at..at + width).rev() {
            out[place] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, rem / 3600);
    put(14, 2, (rem % 3600) / 60);
    put(17, 2, rem % 60);
    std::str::from_utf8(&out).expect("ASCII digits").to_owned()
}

/// Parses RFC 3339 (`2025-01-01T00:00:05Z`, `2025-01-01T01:00:05.5+01:00`) to Unix milliseconds.
pub fn parse_rfc3339_unix_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits = &s[start..i.min(start + 3)];
        frac_ms = digits.parse::<i64>().ok()? * 10i64.pow(3 - digits.len() as u32);
    }
    let offset_s = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            let off = oh * 3600 + om * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    Some(secs * 1000 + frac_ms)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `translateTimestampSince`: `<unknown>` without a time (or one that does not parse), else the
/// age at `now` as [`human_duration`] prints it.
pub fn since(ts: Option<&str>, now: SimTime) -> String {
    match ts.and_then(SimTime::parse_rfc3339) {
        Some(t) => human_duration(now.as_ms() as i64 - t.as_ms() as i64),
        None => "<unknown>".into(),
    }
}

/// `duration.HumanDuration` [apimachinery pkg/util/duration]: at most two units, coarser as
/// the duration grows.
pub fn human_duration(ms: i64) -> String {
    let seconds = ms / 1000;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        let y = hours / 24 / 365;
        return if dy == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{dy}d")
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_prints_as_the_first_second_of_2025() {
        assert_eq!(SimTime::ZERO.rfc3339(), "2025-01-01T00:00:00Z");
        assert_eq!(SimTime(65_999).rfc3339(), "2025-01-01T00:01:05Z");
        assert_eq!(SimTime(86_400_000 * 59).rfc3339(), "2025-03-01T00:00:00Z");
    }

    proptest::proptest! {
        /// The digits written by hand are `format!`'s, for any second of years 0-9999 and
        /// around them (where the `format!` path answers).
        #[test]
        fn unix_seconds_print_as_format_prints_them(secs in -62_300_000_000_i64..253_500_000_000) {
            let days = secs.div_euclid(86_400);
            let rem = secs.rem_euclid(86_400);
            let (y, m, d) = civil_from_days(days);
            let want = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                rem / 3600,
                (rem % 3600) / 60,
                rem % 60
            );
            proptest::prop_assert_eq!(format_unix_seconds(secs), want);
        }
    }

    proptest::proptest! {
        /// The trace's hand-written time and numbers are `Display`'s.
        #[test]
        fn pushed_times_and_numbers_print_as_display_does(ms in proptest::num::u64::ANY) {
            let mut out = String::new();
            SimTime(ms).push_to(&mut out);
            proptest::prop_assert_eq!(&out, &SimTime(ms).to_string());
            let mut n = String::new();
            push_u64(&mut n, ms);
            proptest::prop_assert_eq!(n, ms.to_string());
        }
    }

    #[test]
    fn rfc3339_round_trips_through_parse() {
        for ms in [0u64, 1000, 59_000, 86_399_000, 31_536_000_000] {
            let t = SimTime(ms);
            assert_eq!(SimTime::parse_rfc3339(&t.rfc3339()), Some(t));
        }
    }

    #[test]
    fn offsets_and_fractions_are_honoured() {
        assert_eq!(
            SimTime::parse_rfc3339("2025-01-01T01:00:05.250+01:00"),
            Some(SimTime(5250))
        );
        assert_eq!(
            parse_rfc3339_unix_ms("1970-01-01T00:00:00Z"),
            Some(0),
            "unix epoch"
        );
    }

    #[test]
    fn malformed_timestamps_are_rejected() {
        for bad in [
            "",
            "2025-01-01",
            "2025-13-01T00:00:00Z",
            "2025-02-30T00:00:00Z",
            "2025-01-01T00:00:00",
            "2025-01-01T00:00:00+0100",
            "2025-01-01T00:00:00.Z",
            "2025-01-01T00:00:00Zjunk",
        ] {
            assert_eq!(parse_rfc3339_unix_ms(bad), None, "{bad:?}");
        }
    }
}
