//! Files for discovery's unit tests: the committed fixtures and scratch files.
use std::fs;
use std::path::{Path, PathBuf};

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, PKCS_ED25519};

use super::TalosContext;

/// A file in `tests/fixtures/discovery/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery")
        .join(name)
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let file = dir.join(name);
    fs::write(&file, text).unwrap();
    file
}

/// A talosconfig context whose client certificate carries `org` as its roles; `expired`: valid only during 2020, else the rcgen default (1975..4096).
pub fn context_with_roles(name: &str, org: &[&str], expired: bool) -> TalosContext {
    let key = KeyPair::generate_for(&PKCS_ED25519).expect("key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    let mut dn = DistinguishedName::new();
    for o in org {
        dn.push(DnType::OrganizationName, *o);
    }
    params.distinguished_name = dn;
    if expired {
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let cert = params.self_signed(&key).expect("cert");
    let key_pem = key
        .serialize_pem()
        .replace("BEGIN PRIVATE KEY", "BEGIN ED25519 PRIVATE KEY")
        .replace("END PRIVATE KEY", "END ED25519 PRIVATE KEY");
    TalosContext {
        name: name.into(),
        file: "/tmp/talosconfig".into(),
        endpoints: vec!["127.0.0.1".into()],
        nodes: vec![],
        ca_pem: cert.pem(),
        crt_pem: cert.pem(),
        key_pem,
    }
}
