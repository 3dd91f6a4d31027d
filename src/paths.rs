//! Where taloscope keeps its own files: config (XDG config dir), state (XDG
//! state dir: logs, journals, audit log). One place so `info` can print them.
use std::path::{Path, PathBuf};

use directories::ProjectDirs;

/// taloscope's directories, resolved once by the subcommand and passed down
/// as a value.
#[derive(Debug, Clone)]
pub struct Paths {
    pub config_dir: PathBuf,
    pub state_dir: PathBuf,
}

impl Paths {
    /// Resolves the XDG directories. `state_dir` (`--state-dir`,
    /// `TALOSCOPE_STATE_DIR`) overrides the state dir: tests and the demo use
    /// it to keep away from the user's own files.
    pub fn resolve(state_dir: Option<&Path>) -> Paths {
        let dirs = ProjectDirs::from("dev", "taloscope", "taloscope");
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        let config_dir = dirs
            .as_ref()
            .map(|d| d.config_dir().to_path_buf())
            .unwrap_or_else(|| home.join(".config/taloscope"));
        let state_dir = match state_dir {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => dirs
                .as_ref()
                .and_then(|d| d.state_dir().map(|p| p.to_path_buf()))
                .unwrap_or_else(|| home.join(".local/state/taloscope")),
        };
        Paths {
            config_dir,
            state_dir,
        }
    }

    /// taloscope's own config file unless `--config`/`TALOSCOPE_CONFIG` names one.
    pub fn default_config_file(&self) -> PathBuf {
        self.config_dir.join("config.yaml")
    }

    /// User themes: `<config dir>/themes/NAME.yaml`.
    pub fn user_themes_dir(&self) -> PathBuf {
        self.config_dir.join("themes")
    }

    pub fn log_dir(&self) -> PathBuf {
        self.state_dir.join("logs")
    }

    /// The audit log: one line per mutating action, whatever its outcome.
    pub fn audit_log(&self) -> PathBuf {
        self.state_dir.join("audit.log")
    }

    /// Where the console's etcd snapshots go unless the operator names another file:
    /// `snapshots/` in the state dir, made owner-only (a snapshot holds every secret of its
    /// cluster) so the file guard passes.
    pub fn snapshot_dir(&self) -> PathBuf {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.state_dir.join("snapshots");
        if let Err(e) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
        {
            tracing::warn!("cannot make {}: {e}", dir.display());
        }
        dir
    }
}
