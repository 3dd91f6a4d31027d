//! Adds joined nodes to the `nodes:` list of the talosconfig context that
//! made the cluster, as an operator would by hand, so `talosctl -n` and
//! `taloscope status` see them. Everything else in the file is kept; the
//! file is replaced atomically and stays private (0600).
use std::path::{Path, PathBuf};

use serde_json::Value;

#[derive(Debug, thiserror::Error)]
#[error("talosconfig {}: {message}", path.display())]
pub struct TalosconfigError {
    pub path: PathBuf,
    pub message: String,
}

/// Appends the `ips` not listed yet to context `context`'s nodes in `file`;
/// returns the ones added (nothing is written when there are none).
pub fn add_nodes(
    file: &Path,
    context: &str,
    ips: &[String],
) -> Result<Vec<String>, TalosconfigError> {
    let err = |message: String| TalosconfigError {
        path: file.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(file).map_err(|e| err(format!("cannot read: {e}")))?;
    let mut doc: Value =
        serde_saphyr::from_str(&text).map_err(|e| err(format!("not YAML: {e}")))?;
    let ctx = doc
        .get_mut("contexts")
        .and_then(|c| c.get_mut(context))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| err(format!("no context {context:?}")))?;
    let nodes = ctx
        .entry("nodes")
        .or_insert_with(|| Value::Array(Vec::new()));
    if nodes.is_null() {
        *nodes = Value::Array(Vec::new());
    }
    let list = nodes
        .as_array_mut()
        .ok_or_else(|| err(format!("context {context:?}: nodes is not a list")))?;
    let mut added = Vec::new();
    for ip in ips {
        if !list.iter().any(|n| n.as_str() == Some(ip.as_str())) && !added.contains(ip) {
            list.push(Value::String(ip.clone()));
            added.push(ip.clone());
        }
    }
    if added.is_empty() {
        return Ok(added);
    }
    let out = serde_saphyr::to_string(&doc).map_err(|e| err(format!("cannot encode: {e}")))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| err(format!("cannot write: {e}")))?;
    std::io::Write::write_all(&mut tmp, out.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| err(format!("cannot write: {e}")))?;
    tmp.persist(file)
        .map_err(|e| err(format!("cannot replace: {}", e.error)))?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_new_nodes_only_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("talosconfig");
        std::fs::write(
            &f,
            "context: a\ncontexts:\n  a:\n    endpoints: [\"127.0.0.1\"]\n    nodes: [\"127.0.0.1\"]\n    ca: Y2E=\n  b:\n    endpoints:\n      - 127.0.0.9\n",
        )
        .unwrap();
        let added = add_nodes(&f, "a", &["127.0.0.1".into(), "127.0.0.7".into()]).unwrap();
        assert_eq!(added, ["127.0.0.7"]);
        let doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        assert_eq!(doc["context"], "a");
        assert_eq!(
            doc["contexts"]["a"]["nodes"],
            serde_json::json!(["127.0.0.1", "127.0.0.7"])
        );
        assert_eq!(doc["contexts"]["a"]["ca"], "Y2E=");
        assert_eq!(
            doc["contexts"]["b"]["endpoints"],
            serde_json::json!(["127.0.0.9"])
        );
        // a context without nodes gets the list
        assert_eq!(
            add_nodes(&f, "b", &["127.0.0.8".into()]).unwrap(),
            ["127.0.0.8"]
        );
        assert!(
            add_nodes(&f, "a", &["127.0.0.7".into()])
                .unwrap()
                .is_empty()
        );
        let e = add_nodes(&f, "zz", &["1.1.1.1".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("talosconfig") && e.contains("zz"), "{e}");
    }
}
