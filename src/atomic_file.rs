//! Files replaced whole or not at all: a temporary file in the same directory, given its mode,
//! written and synced, renamed over the old one, then the directory synced, so a crash leaves
//! the old file or the whole new one, and the rename itself survives a power cut.
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// Writes `bytes` to `path` with permission `mode` (0o600 for journals and secrets), replacing
/// what was there atomically. The directory must exist. The error is the failing step's; the
/// caller names the file.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Created 0600 by tempfile; the mode is set before a byte is written.
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.write_all(bytes)?;
    persist_synced(tmp, path)
}

/// Syncs a complete temporary file, renames it over `path` (same directory), then syncs the
/// directory: the one ending of every whole-or-nothing write, also of streamed ones.
pub fn persist_synced(tmp: tempfile::NamedTempFile, path: &Path) -> std::io::Result<()> {
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // The rename is an entry in the directory: synced too, or a crash may forget it.
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_has_its_bytes_and_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.json");
        write_atomically(&path, b"{}\n", 0o600).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
        assert_eq!(mode_of(&path), 0o600);
    }

    #[test]
    fn an_old_file_is_replaced_whole_with_the_new_mode_and_no_temp_file_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, "an older and longer text").unwrap();
        write_atomically(&path, b"new", 0o640).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode_of(&path), 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("config")]);
    }

    #[test]
    fn a_missing_directory_fails_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent").join("file");
        let err = write_atomically(&path, b"x", 0o600).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(!path.exists());
    }
}
