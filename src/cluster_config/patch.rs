//! Config patches as talosctl takes them (`--config-patch`, `--config-patch-control-plane`,
//! `--config-patch-worker`): a file holding an RFC 6902 JSON patch (a YAML or JSON list of
//! operations) or a strategic merge patch (upstream pkg/machinery/config/configpatcher/
//! {load,apply,json6902}.go; the merge itself is in strategic_merge.rs). Patch text is read
//! with Talos's scalar rules (`ConfigNode::parse_talos_documents`).
use std::path::{Path, PathBuf};

use super::strategic_merge;
use super::tree::ConfigNode;

/// The cap for one patch file.
const PATCH_FILE_LIMIT: u64 = 1024 * 1024;

/// Why a patch could not be read or applied; names the file and, for JSON patches, the op.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("cannot read config patch {file}: {reason}")]
    Read { file: PathBuf, reason: String },
    #[error(
        "config patch {file} is neither a JSON patch (a list of operations) nor a YAML document: {reason}"
    )]
    Parse { file: PathBuf, reason: String },
    #[error("config patch {file}, operation {index} ({op} {path}): {reason}")]
    Operation {
        file: PathBuf,
        index: usize,
        op: String,
        path: String,
        reason: String,
    },
    #[error(
        "config patch {file}: JSON6902 patches are not supported for multi-document machine configuration (use a strategic merge patch)"
    )]
    MultiDocument { file: PathBuf },
    #[error("config patch {file}: {reason}")]
    Merge { file: PathBuf, reason: String },
}

/// Which machines a patch applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchTarget {
    All,
    ControlPlane,
    Worker,
}

/// One loaded patch and the file it came from.
#[derive(Clone, Debug)]
pub struct ConfigPatch {
    pub file: PathBuf,
    pub target: PatchTarget,
    kind: PatchKind,
}

#[derive(Clone, Debug)]
enum PatchKind {
    Json(Vec<JsonOp>),
    Strategic(Vec<ConfigNode>),
}

/// One RFC 6902 operation.
#[derive(Clone, Debug)]
struct JsonOp {
    op: String,
    path: String,
    from: Option<String>,
    value: Option<ConfigNode>,
}

/// The patches of one generation, in the order given.
#[derive(Clone, Debug, Default)]
pub struct ConfigPatches(pub Vec<ConfigPatch>);

impl ConfigPatch {
    /// Reads a patch file; `arg` is a path, with or without talosctl's leading `@`.
    pub fn load(arg: &str, target: PatchTarget) -> Result<ConfigPatch, PatchError> {
        let file = PathBuf::from(arg.strip_prefix('@').unwrap_or(arg));
        let text = crate::bounded::read_to_string(&file, PATCH_FILE_LIMIT).map_err(|e| {
            PatchError::Read {
                file: file.clone(),
                reason: e.to_string(),
            }
        })?;
        Self::parse(&text, &file, target)
    }

    /// Reads patch text; `file` names it in errors. A top-level list is a JSON patch, anything
    /// else a strategic merge patch (one or more YAML documents).
    pub fn parse(text: &str, file: &Path, target: PatchTarget) -> Result<ConfigPatch, PatchError> {
        let parse_err = |reason: String| PatchError::Parse {
            file: file.to_path_buf(),
            reason,
        };
        let docs = ConfigNode::parse_talos_documents(text)
            .map_err(|e| parse_err(crate::discovery::describe_yaml_error(&e)))?;
        let docs: Vec<ConfigNode> = docs
            .into_iter()
            .filter(|d| *d != ConfigNode::Null)
            .collect();
        let kind = match docs.as_slice() {
            [] => return Err(parse_err("it is empty".into())),
            [ConfigNode::Seq(ops)] => PatchKind::Json(
                ops.iter()
                    .enumerate()
                    .map(|(i, op)| {
                        json_op(op).map_err(|r| parse_err(format!("operation {i}: {r}")))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            docs if docs.iter().all(|d| matches!(d, ConfigNode::Map(_))) => {
                PatchKind::Strategic(docs.to_vec())
            }
            _ => return Err(parse_err("a document is not a map".into())),
        };
        Ok(ConfigPatch {
            file: file.to_path_buf(),
            target,
            kind,
        })
    }

    /// Applies this patch to a machine config's documents.
    pub fn apply(&self, documents: &mut Vec<ConfigNode>) -> Result<(), PatchError> {
        match &self.kind {
            PatchKind::Json(ops) => {
                let [config] = documents.as_mut_slice() else {
                    return Err(PatchError::MultiDocument {
                        file: self.file.clone(),
                    });
                };
                for (index, op) in ops.iter().enumerate() {
                    apply_op(config, op).map_err(|reason| PatchError::Operation {
                        file: self.file.clone(),
                        index,
                        op: op.op.clone(),
                        path: op.path.clone(),
                        reason,
                    })?;
                }
                Ok(())
            }
            PatchKind::Strategic(patch_docs) => {
                strategic_merge::merge_documents(documents, patch_docs).map_err(|reason| {
                    PatchError::Merge {
                        file: self.file.clone(),
                        reason,
                    }
                })
            }
        }
    }
}

impl ConfigPatches {
    /// Applies, in order, the patches meant for `target` (and those for every machine).
    pub(crate) fn apply(
        &self,
        documents: &mut Vec<ConfigNode>,
        target: PatchTarget,
    ) -> Result<(), PatchError> {
        for patch in &self.0 {
            if patch.target == PatchTarget::All || patch.target == target {
                patch.apply(documents)?;
            }
        }
        Ok(())
    }
}

fn json_op(node: &ConfigNode) -> Result<JsonOp, String> {
    let text = |key: &str| {
        node.get(key)
            .and_then(ConfigNode::as_str)
            .map(str::to_string)
    };
    let op = text("op").ok_or("it has no \"op\"")?;
    let path = text("path").ok_or("it has no \"path\"")?;
    if !["add", "remove", "replace", "move", "copy", "test"].contains(&op.as_str()) {
        return Err(format!("unknown op {op:?}"));
    }
    Ok(JsonOp {
        from: text("from"),
        value: node.get("value").cloned(),
        op,
        path,
    })
}

/// RFC 6901 pointer tokens (`~1` is `/`, `~0` is `~`).
fn pointer(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| format!("path {path:?} must start with '/'"))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn apply_op(doc: &mut ConfigNode, op: &JsonOp) -> Result<(), String> {
    let path = pointer(&op.path)?;
    let value = || {
        op.value
            .clone()
            .ok_or_else(|| "it has no \"value\"".to_string())
    };
    match op.op.as_str() {
        "add" => add(doc, &path, value()?),
        "remove" => remove(doc, &path).map(|_| ()),
        "replace" => {
            remove(doc, &path)?;
            add(doc, &path, value()?)
        }
        "move" | "copy" => {
            let from = pointer(op.from.as_deref().ok_or("it has no \"from\"")?)?;
            let moved = if op.op == "move" {
                remove(doc, &from)?
            } else {
                lookup(doc, &from)?.clone()
            };
            add(doc, &path, moved)
        }
        "test" => {
            if *lookup(doc, &path)? == value()? {
                Ok(())
            } else {
                Err("the value differs".into())
            }
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

fn lookup<'a>(doc: &'a ConfigNode, path: &[String]) -> Result<&'a ConfigNode, String> {
    path.iter().try_fold(doc, |node, token| match node {
        ConfigNode::Map(_) => node.get(token).ok_or_else(|| format!("no key {token:?}")),
        ConfigNode::Seq(items) => index(token, items.len())
            .and_then(|i| items.get(i).ok_or_else(|| format!("no item {token}"))),
        _ => Err(format!("{token:?} is below a scalar")),
    })
}

fn lookup_mut<'a>(doc: &'a mut ConfigNode, path: &[String]) -> Result<&'a mut ConfigNode, String> {
    let mut node = doc;
    for token in path {
        node = match node {
            ConfigNode::Map(_) => node
                .get_mut(token)
                .ok_or_else(|| format!("no key {token:?}"))?,
            ConfigNode::Seq(items) => {
                let i = index(token, items.len())?;
                items.get_mut(i).ok_or_else(|| format!("no item {token}"))?
            }
            _ => return Err(format!("{token:?} is below a scalar")),
        };
    }
    Ok(node)
}

fn index(token: &str, len: usize) -> Result<usize, String> {
    if token.is_empty()
        || !token.bytes().all(|b| b.is_ascii_digit())
        || (token.len() > 1 && token.starts_with('0'))
    {
        return Err(format!("{token:?} is not a list index"));
    }
    let i: usize = token
        .parse()
        .map_err(|_| format!("{token:?} is not a list index"))?;
    if i >= len {
        return Err(format!("index {i} is past the list's end ({len} items)"));
    }
    Ok(i)
}

fn add(doc: &mut ConfigNode, path: &[String], value: ConfigNode) -> Result<(), String> {
    let Some((last, parent_path)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    match lookup_mut(doc, parent_path)? {
        node @ ConfigNode::Map(_) => {
            node.set(last, value);
            Ok(())
        }
        ConfigNode::Seq(items) => {
            // `-` or the length itself appends (RFC 6902 4.1).
            let at = if last == "-" || *last == items.len().to_string() {
                items.len()
            } else {
                index(last, items.len())?
            };
            items.insert(at, value);
            Ok(())
        }
        _ => Err("the parent is a scalar".into()),
    }
}

fn remove(doc: &mut ConfigNode, path: &[String]) -> Result<ConfigNode, String> {
    let (last, parent_path) = path
        .split_last()
        .ok_or("cannot remove the whole document")?;
    match lookup_mut(doc, parent_path)? {
        node @ ConfigNode::Map(_) => node.remove(last).ok_or_else(|| format!("no key {last:?}")),
        ConfigNode::Seq(items) => {
            let i = index(last, items.len())?;
            Ok(items.remove(i))
        }
        _ => Err("the parent is a scalar".into()),
    }
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
