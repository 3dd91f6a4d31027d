//! talosconfig files (talosctl's client config): `context` plus `contexts`
//! with endpoints, nodes and base64 PEM credentials. Several files merge like
//! kubeconfig: the first file that defines a context name wins.
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};

use super::credentials::{decode_certificate, decode_key};
use super::{DiscoveryError, TalosContext, describe_yaml_error};

/// What the talosconfig files gave.
#[derive(Debug, Default)]
pub struct TalosLoad {
    /// Contexts whose credentials decoded, in merged order.
    pub contexts: Vec<TalosContext>,
    pub current_context: Option<String>,
    pub errors: Vec<DiscoveryError>,
    /// Files read and parsed.
    pub files: Vec<PathBuf>,
}

/// The file as written. Contexts stay loosely typed until each is converted on
/// its own, so one malformed context does not lose the rest of the file.
#[derive(Debug, Default, Deserialize)]
struct TalosconfigFile {
    #[serde(default)]
    context: Option<String>,
    #[serde(default)]
    contexts: Option<NamedContexts>,
}

/// The `contexts:` map in file order, duplicates kept so they can be reported.
#[derive(Debug, Default)]
struct NamedContexts(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for NamedContexts {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = NamedContexts;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of context names to contexts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, serde_json::Value>()? {
                    entries.push(entry);
                }
                Ok(NamedContexts(entries))
            }
        }
        de.deserialize_map(EntriesVisitor)
    }
}

/// One context as written. `auth` and `proxy` are read only to refuse them; other unknown
/// keys (cluster) are ignored.
#[derive(Debug, Default, Deserialize)]
struct TalosContextEntry {
    /// Before `endpoints` existed talosctl wrote a single `target`.
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    endpoints: Option<Vec<String>>,
    #[serde(default)]
    nodes: Option<Vec<String>>,
    #[serde(default)]
    ca: Option<String>,
    #[serde(default)]
    crt: Option<String>,
    #[serde(default)]
    key: Option<String>,
    /// SideroV1 or basic auth (pkg/machinery/client/config/config.go `Auth`).
    #[serde(default)]
    auth: Option<serde_json::Value>,
    #[serde(default)]
    proxy: Option<serde_json::Value>,
}

impl TalosContextEntry {
    /// Contexts taloscope cannot dial as written: it speaks mutual TLS directly, so a
    /// context that authenticates otherwise or goes through a proxy is refused by name
    /// rather than tried as a plain one.
    fn unsupported(&self) -> Option<&'static str> {
        let set = |v: &Option<serde_json::Value>| {
            v.as_ref().is_some_and(|v| {
                !v.is_null()
                    && v.as_object()
                        .is_none_or(|o| o.values().any(|x| !x.is_null()))
            })
        };
        if set(&self.auth) {
            Some(
                "uses `auth` (SideroV1 or basic authentication), which taloscope does not support: use a context with a client certificate (crt/key)",
            )
        } else if set(&self.proxy) {
            Some(
                "goes through a `proxy`, which taloscope does not support: use a context that reaches the endpoints directly",
            )
        } else {
            None
        }
    }
}

/// Reads each file on its own and merges them, first definition winning.
pub(crate) fn load(files: &[PathBuf]) -> TalosLoad {
    load_with(files, read)
}

/// Merges talosconfig texts as [`load`] merges files (`file` names each in
/// errors); what the fuzz targets and the bad-input tests drive.
pub fn load_texts(texts: &[(PathBuf, String)]) -> TalosLoad {
    let (files, read) = super::texts_as_files(texts, parse);
    load_with(&files, read)
}

fn load_with(
    files: &[PathBuf],
    read: impl Fn(&Path) -> Result<TalosconfigFile, DiscoveryError>,
) -> TalosLoad {
    let mut load = TalosLoad::default();
    // Names defined by an earlier file, loaded or not: a broken first
    // definition still shadows later ones, as in kubectl.
    let mut defined: HashSet<String> = HashSet::new();
    let mut current: Option<(String, PathBuf)> = None;

    for file in files {
        let parsed = match read(file) {
            Ok(parsed) => parsed,
            Err(err) => {
                load.errors.push(err);
                continue;
            }
        };
        load.files.push(file.clone());
        if current.is_none()
            && let Some(name) = parsed.context.filter(|c| !c.is_empty())
        {
            current = Some((name, file.clone()));
        }
        let mut in_this_file = HashSet::new();
        for (name, value) in parsed.contexts.unwrap_or_default().0 {
            if !in_this_file.insert(name.clone()) {
                load.errors.push(DiscoveryError::new(
                    file,
                    Some(&name),
                    "context is defined twice in this file; the first one is used",
                ));
                continue;
            }
            if !defined.insert(name.clone()) {
                continue;
            }
            match convert(file, &name, value) {
                Ok(context) => load.contexts.push(context),
                Err(err) => load.errors.push(err),
            }
        }
    }

    if let Some((name, file)) = current {
        if load.contexts.iter().any(|c| c.name == name) {
            load.current_context = Some(name);
        } else if !defined.contains(&name) {
            load.errors.push(DiscoveryError::new(
                &file,
                Some(&name),
                "the current context (`context:`) is not defined in any talosconfig",
            ));
        }
    }
    load
}

fn read(file: &Path) -> Result<TalosconfigFile, DiscoveryError> {
    let text = crate::bounded::read_to_string(file, crate::bounded::CONFIG_FILE_LIMIT)
        .map_err(|e| DiscoveryError::new(file, None, format!("cannot read: {e}")))?;
    parse(file, &text)
}

fn parse(file: &Path, text: &str) -> Result<TalosconfigFile, DiscoveryError> {
    if text.trim().is_empty() {
        return Ok(TalosconfigFile::default());
    }
    let mut options = serde_saphyr::Options::default();
    // Repeated context names reach our visitor, which reports them instead of
    // failing the whole file.
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| DiscoveryError::new(file, None, describe_yaml_error(&e)))
}

fn convert(
    file: &Path,
    name: &str,
    value: serde_json::Value,
) -> Result<TalosContext, DiscoveryError> {
    let error = |message: String| DiscoveryError::new(file, Some(name), message);
    let entry: TalosContextEntry = if value.is_null() {
        return Err(error("context is empty".into()));
    } else {
        serde_json::from_value(value).map_err(|e| error(format!("malformed context: {e}")))?
    };
    if let Some(why) = entry.unsupported() {
        return Err(error(why.into()));
    }
    let mut endpoints: Vec<String> = entry.endpoints.unwrap_or_default();
    // talosctl appends the legacy target to the endpoints.
    endpoints.extend(entry.target);
    endpoints.retain(|e| !e.trim().is_empty());
    let mut nodes = entry.nodes.unwrap_or_default();
    nodes.retain(|n| !n.trim().is_empty());

    let field = |s: Option<String>| s.unwrap_or_default();
    let ca_pem = decode_certificate("ca", &field(entry.ca)).map_err(|e| error(e.to_string()))?;
    let crt_pem = decode_certificate("crt", &field(entry.crt)).map_err(|e| error(e.to_string()))?;
    let key_pem = decode_key("key", &field(entry.key)).map_err(|e| error(e.to_string()))?;
    Ok(TalosContext {
        name: name.to_owned(),
        file: file.to_path_buf(),
        endpoints,
        nodes,
        ca_pem,
        crt_pem,
        key_pem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::credentials::tests::fixture_credentials;
    use crate::discovery::test_files::{fixture, write};

    fn names(load: &TalosLoad) -> Vec<&str> {
        load.contexts.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn contexts_with_auth_or_a_proxy_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "talosconfig",
            "context: plain\ncontexts:\n  plain:\n    endpoints: [127.0.0.1]\n  omni:\n    endpoints: [127.0.0.2]\n    auth:\n      siderov1:\n        identity: me@example.com\n  basic:\n    endpoints: [127.0.0.3]\n    auth:\n      basic:\n        username: u\n  proxied:\n    endpoints: [127.0.0.4]\n    proxy:\n      url: http://127.0.0.5:3128\n  empty-auth:\n    endpoints: [127.0.0.6]\n    auth: {}\n",
        );
        let load = load(&[file]);
        assert_eq!(names(&load), ["plain", "empty-auth"]);
        let refused: Vec<String> = load.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert!(
            refused[0].contains("omni") && refused[0].contains("SideroV1"),
            "{refused:?}"
        );
        assert!(
            refused[1].contains("basic") && refused[1].contains("auth"),
            "{refused:?}"
        );
        assert!(
            refused[2].contains("proxied") && refused[2].contains("proxy"),
            "{refused:?}"
        );
    }

    #[test]
    fn fixture_loads_every_context_with_normalised_keys() {
        let load = load(&[fixture("c.yaml")]);
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert_eq!(names(&load), ["alpha", "bravo", "charlie", "delta", "echo"]);
        assert_eq!(load.current_context.as_deref(), Some("alpha"));
        for ctx in &load.contexts {
            assert!(
                ctx.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"),
                "{}",
                ctx.name
            );
            assert!(
                ctx.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"),
                "{}",
                ctx.name
            );
            assert!(
                ctx.crt_pem.starts_with("-----BEGIN CERTIFICATE-----"),
                "{}",
                ctx.name
            );
        }
    }

    #[test]
    fn legacy_target_folds_into_endpoints() {
        let load = load(&[fixture("c.yaml")]);
        let delta = load.contexts.iter().find(|c| c.name == "delta").unwrap();
        assert_eq!(delta.endpoints, ["127.0.0.41"]);
    }

    #[test]
    fn debug_output_never_shows_credentials() {
        let load = load(&[fixture("c.yaml")]);
        let shown = format!("{:?}", load.contexts[0]);
        assert!(!shown.contains("PRIVATE KEY"), "{shown}");
        assert!(!shown.contains("CERTIFICATE"), "{shown}");
    }

    #[test]
    fn first_file_wins_and_sets_the_current_context() {
        let dir = tempfile::tempdir().unwrap();
        let first = write(
            dir.path(),
            "first.yaml",
            "context: one\ncontexts:\n  one:\n    endpoints: [127.0.0.1]\n",
        );
        let second = write(
            dir.path(),
            "second.yaml",
            "context: two\ncontexts:\n  one:\n    endpoints: [127.0.0.9]\n  two:\n    endpoints: [127.0.0.2]\n",
        );
        let load = load(&[first.clone(), second.clone()]);
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert_eq!(names(&load), ["one", "two"]);
        assert_eq!(load.contexts[0].endpoints, ["127.0.0.1"]);
        assert_eq!(load.contexts[0].file, first);
        assert_eq!(load.contexts[1].file, second);
        assert_eq!(load.current_context.as_deref(), Some("one"));
    }

    #[test]
    fn broken_file_names_the_line_and_other_files_still_load() {
        let load = load(&[fixture("c.yaml"), fixture("broken.yaml")]);
        assert_eq!(load.errors.len(), 1, "{:?}", load.errors);
        let err = &load.errors[0];
        assert_eq!(err.file, fixture("broken.yaml"));
        assert!(err.message.contains("line 5"), "{}", err.message);
        assert_eq!(load.contexts.len(), 5);
        assert_eq!(load.files, vec![fixture("c.yaml")]);
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let missing = PathBuf::from("/nonexistent/taloscope/talosconfig");
        let load = load(std::slice::from_ref(&missing));
        assert_eq!(load.errors.len(), 1);
        assert_eq!(load.errors[0].file, missing);
        assert!(load.errors[0].message.starts_with("cannot read"));
    }

    #[test]
    fn bad_credentials_drop_only_that_context() {
        let (ca, crt, key) = fixture_credentials();
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "creds.yaml",
            &format!(
                "context: good
contexts:
  good:
    endpoints: [127.0.0.1]
    ca: {ca}
    crt: {crt}
    key: {key}
  bad-base64:
    endpoints: [127.0.0.2]
    ca: '%%%not-base64%%%'
  bad-pem:
    endpoints: [127.0.0.3]
    ca: {ca}
    crt: {crt}
    key: {pem_junk}
  cert-as-key:
    endpoints: [127.0.0.4]
    key: {crt}
",
                pem_junk = base64_of(
                    "-----BEGIN ED25519 PRIVATE KEY-----\nAAAA\n-----END ED25519 PRIVATE KEY-----\n"
                ),
            ),
        );
        let load = load(std::slice::from_ref(&file));
        assert_eq!(names(&load), ["good"]);
        assert_eq!(load.errors.len(), 3, "{:?}", load.errors);
        for (ctx, needle) in [
            ("bad-base64", "ca is not valid base64"),
            ("bad-pem", "key is not a usable private key"),
            ("cert-as-key", "key holds no PEM private key"),
        ] {
            let err = load
                .errors
                .iter()
                .find(|e| e.context.as_deref() == Some(ctx))
                .unwrap_or_else(|| panic!("no error for {ctx}"));
            assert_eq!(err.file, file);
            assert!(err.message.contains(needle), "{ctx}: {}", err.message);
        }
        for err in &load.errors {
            assert!(!err.message.contains("BEGIN"), "{}", err.message);
        }
    }

    #[test]
    fn duplicate_context_in_one_file_is_an_error_and_first_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "dup.yaml",
            "contexts:\n  x:\n    endpoints: [127.0.0.1]\n  x:\n    endpoints: [127.0.0.2]\n  y: {}\n",
        );
        let load = load(std::slice::from_ref(&file));
        assert_eq!(load.errors.len(), 1, "{:?}", load.errors);
        assert_eq!(load.errors[0].context.as_deref(), Some("x"));
        assert!(load.errors[0].message.contains("twice"));
        assert_eq!(names(&load), ["x", "y"]);
        assert_eq!(load.contexts[0].endpoints, ["127.0.0.1"]);
    }

    #[test]
    fn missing_current_context_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "cur.yaml",
            "context: gone\ncontexts:\n  here:\n    endpoints: [127.0.0.1]\n",
        );
        let load = load(std::slice::from_ref(&file));
        assert_eq!(load.errors.len(), 1, "{:?}", load.errors);
        assert_eq!(load.errors[0].context.as_deref(), Some("gone"));
        assert_eq!(load.current_context, None);
        assert_eq!(names(&load), ["here"]);
    }

    #[test]
    fn malformed_context_does_not_lose_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "shape.yaml",
            "contexts:\n  odd:\n    endpoints: {a: b}\n  empty:\n  fine:\n    nodes: [127.0.0.1]\n",
        );
        let load = load(std::slice::from_ref(&file));
        assert_eq!(names(&load), ["fine"]);
        assert_eq!(load.errors.len(), 2, "{:?}", load.errors);
    }

    #[test]
    fn empty_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "empty.yaml", "\n");
        let load = load(std::slice::from_ref(&file));
        assert!(load.errors.is_empty());
        assert!(load.contexts.is_empty());
        assert_eq!(load.files, vec![file]);
    }

    fn base64_of(text: &str) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(text)
    }
}
