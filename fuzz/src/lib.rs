//! What each fuzz target feeds its bytes to: the parsers of files an operator
//! names and of replies a server sends. Shared by the libFuzzer targets
//! (`cargo +nightly fuzz run NAME`) and by tests/fuzz_seeds.rs, which runs
//! every seed of fuzz/corpus/ through these on stable `cargo test`.
use std::path::{Path, PathBuf};

use taloscope::config::{Config, MachineRole};
use taloscope::discovery::{load_kubeconfig_texts, load_talosconfig_texts};
use taloscope::opennebula::{oneflow, xml, xmlrpc};
use taloscope::provision::machine_config;
use taloscope::versions::Version;

/// A fuzz target: bytes in, a panic when something is wrong.
pub type Target = fn(&[u8]);

/// The targets by name, as `scripts/fuzz` and the seed test know them.
pub const TARGETS: &[(&str, Target)] = &[
    ("talosconfig", talosconfig),
    ("kubeconfig", kubeconfig),
    ("taloscope_yaml", taloscope_yaml),
    ("xmlrpc_reply", xmlrpc_reply),
    ("oneflow_json", oneflow_json),
    ("machine_config", machine_config),
    ("version", version),
];

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Two files: the bytes split at the first NUL, so merging is fuzzed too.
fn two_files(data: &str) -> Vec<(PathBuf, String)> {
    let mut parts = data.splitn(2, '\0');
    let first = parts.next().unwrap_or_default();
    let mut files = vec![(PathBuf::from("/fuzz/a"), first.to_string())];
    if let Some(second) = parts.next() {
        files.push((PathBuf::from("/fuzz/b"), second.to_string()));
    }
    files
}

pub fn talosconfig(data: &[u8]) {
    if let Some(t) = text(data) {
        let load = load_talosconfig_texts(&two_files(t));
        for err in &load.errors {
            assert!(err.to_string().contains("/fuzz/"), "{err}");
        }
    }
}

pub fn kubeconfig(data: &[u8]) {
    if let Some(t) = text(data) {
        let load = load_kubeconfig_texts(&two_files(t));
        for err in &load.errors {
            assert!(err.to_string().contains("/fuzz/"), "{err}");
        }
    }
}

pub fn taloscope_yaml(data: &[u8]) {
    if let Some(t) = text(data)
        && let Err(err) = Config::parse(Path::new("/fuzz/taloscope.yaml"), t)
    {
        assert!(err.to_string().contains("/fuzz/taloscope.yaml"), "{err}");
    }
}

pub fn xmlrpc_reply(data: &[u8]) {
    if let Some(t) = text(data) {
        if let Ok(xmlrpc::Response::Value(v)) = xmlrpc::decode_response(t)
            && let Ok(xmlrpc::OneReply::Ok(xmlrpc::Value::Str(doc))) = xmlrpc::one_reply(v)
        {
            let _ = xml::parse(&doc);
        }
        let _ = xml::parse(t);
    }
}

pub fn oneflow_json(data: &[u8]) {
    if let Some(t) = text(data) {
        let _ = oneflow::error_message(t);
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(t) {
            let _ = oneflow::services_from_pool(&doc);
            let _ = oneflow::parse_service(doc.get("DOCUMENT").unwrap_or(&doc));
        }
    }
}

pub fn machine_config(data: &[u8]) {
    if let Some(t) = text(data) {
        for role in [MachineRole::Controlplane, MachineRole::Worker] {
            if let Err(err) = machine_config::check(Path::new("/fuzz/cp.yaml"), t, role) {
                assert!(err.to_string().contains("/fuzz/cp.yaml"), "{err}");
            }
        }
    }
}

pub fn version(data: &[u8]) {
    if let Some(t) = text(data)
        && let Ok(v) = Version::parse(t)
    {
        // What parses prints back to something that parses.
        assert!(
            Version::parse(&v.to_string()).is_ok(),
            "{t:?} printed as {v}"
        );
    }
}
