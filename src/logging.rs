//! File logging: tracing to a daily-rolling file under the state dir. Never to
//! the terminal, which belongs to the console.
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

pub const LOG_FILE_PREFIX: &str = "taloscope.log";

/// Log lines queued for the writer thread at most.
const LOG_QUEUE_LINES: usize = 1024;

/// Keeps the background writer alive; logs are flushed when it drops.
pub struct LogGuard {
    _guard: WorkerGuard,
    pub file: PathBuf,
}

/// The filter: `--log-level` wins, then `RUST_LOG`, then `info`. Either takes a
/// level (`debug`) or `target=level` pairs with an optional default level
/// (`warn,taloscope=debug`); anything else (span or field filters) means `info`.
pub fn filter(level: Option<&str>) -> Targets {
    let info = || Targets::new().with_default(tracing::Level::INFO);
    let spec = level
        .map(str::to_string)
        .or_else(|| std::env::var("RUST_LOG").ok());
    spec.and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(info)
}

/// Today's log file name as tracing-appender's daily roller writes it.
pub fn current_log_file(dir: &Path) -> PathBuf {
    let (y, m, d) = crate::clock::utc_date(std::time::SystemTime::now());
    dir.join(format!("{LOG_FILE_PREFIX}.{y:04}-{m:02}-{d:02}"))
}

/// Starts logging into `dir`. Errors (an unwritable dir) are returned, not
/// printed, so the caller decides whether the terminal may see them.
pub fn init(dir: &Path, level: Option<&str>) -> std::io::Result<LogGuard> {
    std::fs::create_dir_all(dir)?;
    // Owner only, like the journals: logs name clusters, nodes and errors.
    // The appender creates its files with the umask; the directory guards them.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
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
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(writer)
                .with_ansi(false),
        )
        .with(filter(level))
        .try_init();
    let file = current_log_file(dir);
    let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600));
    Ok(LogGuard {
        _guard: guard,
        file,
    })
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing_subscriber::filter::LevelFilter;

    use super::*;

    #[test]
    fn a_level_or_target_pairs_parse_and_anything_else_means_info() {
        let debug = filter(Some("debug"));
        assert!(debug.would_enable("h2", &Level::DEBUG));
        let pairs = filter(Some("warn,taloscope::kube=debug"));
        assert!(pairs.would_enable("taloscope::kube::client", &Level::DEBUG));
        assert!(!pairs.would_enable("taloscope::talos", &Level::INFO));
        assert!(pairs.would_enable("hyper", &Level::WARN));
        let span_filter = filter(Some("[poll{cluster=a}]=debug"));
        assert_eq!(span_filter.default_level(), Some(LevelFilter::INFO));
    }
}
