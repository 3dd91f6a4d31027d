//! The `Kubeconfig` stream's payload (upstream MachineService/Kubeconfig: a gzipped tar holding
//! one file, `kubeconfig`), read under caps: the compressed size, the unpacked size and the
//! entry count are all bounded, so a hostile node cannot make the console unpack without end.
use std::io::Read as _;

/// The cap on the archive as received, and on the kubeconfig inside it.
pub const KUBECONFIG_ARCHIVE_LIMIT: usize = 4 * 1024 * 1024;
/// Entries looked at before giving up (upstream writes one).
const MAX_ENTRIES: usize = 16;

/// Why the stream's bytes are not a kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigArchiveError {
    #[error("the kubeconfig archive is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the kubeconfig archive is not a gzipped tar: {0}")]
    Corrupt(String),
    #[error("the kubeconfig archive holds no file named kubeconfig")]
    Missing,
    #[error("the kubeconfig in the archive is not UTF-8 text")]
    NotText,
}

/// The text of the archive's `kubeconfig` file.
pub fn kubeconfig_from_tar_gz(bytes: &[u8]) -> Result<String, KubeconfigArchiveError> {
    let limit = KUBECONFIG_ARCHIVE_LIMIT;
    if bytes.len() > limit {
        return Err(KubeconfigArchiveError::TooLarge { limit });
    }
    let corrupt = |e: std::io::Error| KubeconfigArchiveError::Corrupt(e.to_string());
    // The tar stream itself is capped: headers and padding count against the limit too.
    let gunzipped = flate2::read::GzDecoder::new(bytes).take(limit as u64 * 2);
    let mut archive = tar::Archive::new(gunzipped);
    for (seen, entry) in archive.entries().map_err(corrupt)?.enumerate() {
        if seen >= MAX_ENTRIES {
            break;
        }
        let entry = entry.map_err(corrupt)?;
        let is_kubeconfig = entry
            .path()
            .map_err(corrupt)?
            .to_str()
            .is_some_and(|p| p.trim_start_matches("./") == "kubeconfig");
        if !is_kubeconfig || !entry.header().entry_type().is_file() {
            continue;
        }
        if entry.size() > limit as u64 {
            return Err(KubeconfigArchiveError::TooLarge { limit });
        }
        let mut text = Vec::new();
        entry
            .take(limit as u64 + 1)
            .read_to_end(&mut text)
            .map_err(corrupt)?;
        if text.len() > limit {
            return Err(KubeconfigArchiveError::TooLarge { limit });
        }
        return String::from_utf8(text).map_err(|_| KubeconfigArchiveError::NotText);
    }
    Err(KubeconfigArchiveError::Missing)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn archive(files: &[(&str, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut builder = tar::Builder::new(gz);
        for (name, body) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(body.len() as u64);
            header.set_mode(0o600);
            header.set_cksum();
            builder.append_data(&mut header, name, *body).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn reads_the_one_file() {
        let bytes = archive(&[("kubeconfig", b"apiVersion: v1\nkind: Config\n")]);
        assert_eq!(
            kubeconfig_from_tar_gz(&bytes).unwrap(),
            "apiVersion: v1\nkind: Config\n"
        );
    }

    #[test]
    fn refuses_missing_corrupt_and_oversized() {
        let other = archive(&[("other", b"x")]);
        assert!(matches!(
            kubeconfig_from_tar_gz(&other),
            Err(KubeconfigArchiveError::Missing)
        ));
        assert!(matches!(
            kubeconfig_from_tar_gz(b"not gzip at all"),
            Err(KubeconfigArchiveError::Corrupt(_))
        ));
        // A bomb: 8 MiB of zeros compresses to a few KiB.
        let zeros = vec![0u8; 2 * KUBECONFIG_ARCHIVE_LIMIT];
        let bomb = archive(&[("kubeconfig", &zeros)]);
        assert!(bomb.len() < KUBECONFIG_ARCHIVE_LIMIT);
        assert!(matches!(
            kubeconfig_from_tar_gz(&bomb),
            Err(KubeconfigArchiveError::TooLarge { .. })
        ));
        let mut big = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
        big.write_all(&vec![1u8; KUBECONFIG_ARCHIVE_LIMIT + 1])
            .unwrap();
        assert!(matches!(
            kubeconfig_from_tar_gz(&big.finish().unwrap()),
            Err(KubeconfigArchiveError::TooLarge { .. })
        ));
    }
}
