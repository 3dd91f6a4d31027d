//! File logging: tracing to a daily-rolling file under the state dir. Never to
//! the terminal, which belongs to the console.
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

pub const LOG_FILE_PREFIX: &str = "taloscope.log";

/// Log lines queued for the writer thread at most.
const LOG_QUEUE_LINES: usize = 1024;

/// Keeps the background writer alive; logs are flushed when it drops.
pub struct LogGuard {
    _guard: WorkerGuard,
    pub file: PathBuf,
}

/// The filter: `--log-level` wins, then `RUST_LOG`, then `info`.
pub fn filter(level: Option<&str>) -> EnvFilter {
    match level {
        Some(l) => EnvFilter::try_new(l).unwrap_or_else(|_| EnvFilter::new("info")),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
    }
}

/// Today's log file name as tracing-appender's daily roller writes it.
pub fn current_log_file(dir: &Path) -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((now / 86_400) as i64);
    dir.join(format!("{LOG_FILE_PREFIX}.{y:04}-{m:02}-{d:02}"))
}

/// Starts logging into `dir`. Errors (an unwritable dir) are returned, not
/// printed, so the caller decides whether the terminal may see them.
pub fn init(dir: &Path, level: Option<&str>) -> std::io::Result<LogGuard> {
    std::fs::create_dir_all(dir)?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix(LOG_FILE_PREFIX)
        .max_log_files(7)
        .build(dir)
        .map_err(std::io::Error::other)?;
    // The default queue pre-allocates 128,000 line slots (about 4 MB resident);
    // a console logs a few lines a second, and lines beyond the queue are
    // dropped rather than blocking the UI.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(appender);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter(level))
        .with_writer(writer)
        .with_ansi(false)
        .try_init();
    Ok(LogGuard {
        _guard: guard,
        file: current_log_file(dir),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
