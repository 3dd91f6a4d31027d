//! Reading files an operator names without trusting them: only regular files
//! (a FIFO would block forever, `/dev/zero` never ends), only up to a size cap,
//! opened without blocking. Every config, machine-config and theme read goes
//! here, and every HTTP answer body ([`read_body`]) is read under a cap too.
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The cap for configuration files: talosconfig, kubeconfig, taloscope.yaml,
/// themes, machine configs, credential files. Real ones are kilobytes.
pub const CONFIG_FILE_LIMIT: u64 = 16 * 1024 * 1024;

/// The cap for an HTTP answer from an API (Kubernetes, OpenNebula): a list of
/// a few thousand objects is a few megabytes; anything near this is not one.
pub const HTTP_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// An HTTP answer's body, refused (without reading on) once it passes `cap`
/// bytes: by its Content-Length when it says so, else while it streams in.
pub async fn read_body(mut resp: reqwest::Response, cap: usize) -> Result<Vec<u8>, String> {
    let too_large = || format!("the answer is larger than {} MiB", cap / (1024 * 1024));
    if resp.content_length().is_some_and(|n| n > cap as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| crate::error_chain(&e))? {
        if body.len() + chunk.len() > cap {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Opens `path` for reading if it is a regular file of at most `limit` bytes.
/// The open never blocks (O_NONBLOCK: a FIFO with no writer would otherwise
/// wait forever); the checks run on the opened file, not on the name.
pub fn open_regular(path: &Path, limit: u64) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({what})"),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(limit));
    }
    Ok(file)
}

/// Checks `path` the way [`open_regular`] does, for readers that open the
/// file themselves (the kube crate's kubeconfig reader).
pub fn check_regular(path: &Path, limit: u64) -> io::Result<()> {
    open_regular(path, limit).map(drop)
}

/// The whole of `path` as bytes: a regular file of at most `limit` bytes (a
/// file that grows past the cap while being read is refused too).
pub fn read(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path, limit)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
pub fn read_to_string(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read(path, limit)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("larger than the {} limit", human_limit(limit)),
    )
}

fn human_limit(limit: u64) -> String {
    if limit >= 1024 * 1024 && limit.is_multiple_of(1024 * 1024) {
        format!("{} MiB", limit / (1024 * 1024))
    } else {
        format!("{limit} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, "context: a\n").unwrap();
        assert_eq!(read_to_string(&path, 100).unwrap(), "context: a\n");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'a'; 101]).unwrap();
        let err = read(&path, 100).unwrap_err().to_string();
        assert_eq!(err, "larger than the 100 bytes limit");
        assert_eq!(human_limit(CONFIG_FILE_LIMIT), "16 MiB");
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let err = read(Path::new("/dev/zero"), CONFIG_FILE_LIMIT).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = read(dir.path(), CONFIG_FILE_LIMIT).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read(&fifo, CONFIG_FILE_LIMIT).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
    }

    #[test]
    fn binary_is_not_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin");
        std::fs::write(&path, [b'a', 0xff, 0xfe]).unwrap();
        let err = read_to_string(&path, 100).unwrap_err().to_string();
        assert!(err.contains("offset 1"), "{err}");
    }
}
