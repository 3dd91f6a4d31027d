//! Simulated time and identifiers: the time scale (simulated seconds per real second) that
//! lets tests run reboots in milliseconds, and the time-sortable event ids, actor ids and boot
//! ids the simulated machines hand out.
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Converts simulated durations into real ones.
#[derive(Clone, Copy, Debug)]
pub struct SimClock {
    scale: f64,
}

impl SimClock {
    /// `scale` simulated seconds pass per real second; must be finite and > 0.
    pub fn new(scale: f64) -> Option<SimClock> {
        (scale.is_finite() && scale > 0.0).then_some(SimClock { scale })
    }

    /// Simulated seconds per real second.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The real duration of `sim_seconds` simulated seconds.
    pub fn real(&self, sim_seconds: f64) -> Duration {
        Duration::from_secs_f64((sim_seconds / self.scale).max(0.0))
    }

    /// Sleeps for `sim_seconds` of simulated time.
    pub async fn sleep(&self, sim_seconds: f64) {
        tokio::time::sleep(self.real(sim_seconds)).await;
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A cheap non-cryptographic random number (ids only, never secrets).
pub fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

const BASE32HEX: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
static EVENT_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A 20-character id shaped like Talos's xid: seconds since the epoch, a fixed process part and
/// a counter, base32hex-encoded so that ids sort by creation time.
pub fn event_id() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as u32;
    let count = EVENT_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut raw = [0u8; 12];
    raw[..4].copy_from_slice(&secs.to_be_bytes());
    raw[4..7].copy_from_slice(b"sim");
    // 5 bytes of counter: ids from one process stay ordered within a second.
    raw[7..12].copy_from_slice(&count.to_be_bytes()[3..8]);
    encode_base32hex(&raw)
}

fn encode_base32hex(raw: &[u8; 12]) -> String {
    let mut bits: u128 = 0;
    for b in raw {
        bits = (bits << 8) | u128::from(*b);
    }
    bits <<= 4; // 96 bits + 4 padding bits = 20 × 5 bits
    (0..20)
        .rev()
        .map(|i| BASE32HEX[((bits >> (i * 5)) & 0x1f) as usize] as char)
        .collect()
}

/// A UUID-shaped actor id, as Talos returns for Reboot and Upgrade.
pub fn actor_id() -> String {
    let a = random_u64();
    let b = random_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0x3fff | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// Seconds since the Unix epoch, now (object timestamps, archive entries).
pub(crate) fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The proleptic Gregorian date `days` days after 1970-01-01, counted a year and then a month
/// at a time (timestamps the sim writes are a few decades from the epoch either way).
pub(crate) fn calendar_date(mut days: i64) -> (i64, u32, i64) {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let year_length = |y: i64| if leap(y) { 366 } else { 365 };
    let mut year = 1970;
    while days < 0 {
        year -= 1;
        days += year_length(year);
    }
    while days >= year_length(year) {
        days -= year_length(year);
        year += 1;
    }
    let month_lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 1;
    for length in month_lengths {
        if days < length {
            break;
        }
        days -= length;
        month += 1;
    }
    (year, month, days + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_sort_by_creation() {
        let ids: Vec<String> = (0..50).map(|_| event_id()).collect();
        assert!(ids.iter().all(|i| i.len() == 20));
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn clock_scales() {
        let c = SimClock::new(100.0).expect("valid");
        assert_eq!(c.real(20.0), Duration::from_millis(200));
        assert!(SimClock::new(0.0).is_none());
        assert!(SimClock::new(f64::NAN).is_none());
    }

    #[test]
    fn actor_ids_look_like_uuids() {
        let id = actor_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.matches('-').count(), 4);
    }
}
