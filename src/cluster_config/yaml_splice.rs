//! Edits of the operator's YAML files as splices of their own text: an entry added is new
//! lines written in the file's line ending and indentation, an entry removed is exactly its
//! lines cut out, a scalar set is its one line replaced. Every other byte (comments, key
//! order, quoting, CRLF) stays. The lossless tree (yaml-edit, as the upgrades' config patches
//! use it) only finds where things are.
use std::ops::Range;
use std::str::FromStr;

use yaml_edit::{Mapping, MappingEntry, YamlFile, YamlNode};

/// Why a file's text could not be edited in place; the caller names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    #[error("it does not parse as YAML: {0}")]
    Parse(String),
    #[error("its top level is not a mapping")]
    NotAMapping,
    #[error("`{key}` is a flow-style or non-list value taloscope cannot edit in place")]
    NotEditable { key: String },
}

/// The first document's top-level mapping; `None` for a file with no content.
fn root(text: &str) -> Result<Option<Mapping>, SpliceError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let file = YamlFile::from_str(text).map_err(|e| SpliceError::Parse(e.to_string()))?;
    let Some(doc) = file.documents().next() else {
        return Ok(None);
    };
    match doc.as_mapping() {
        Some(mapping) => Ok(Some(mapping)),
        None if doc.to_string().trim().is_empty() => Ok(None),
        None => Err(SpliceError::NotAMapping),
    }
}

/// The file's line break: its first one, `\n` for a file with none.
fn line_break(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

fn range_of(position: yaml_edit::TextPosition) -> Range<usize> {
    position.start as usize..position.end as usize
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// Past the line break of the line holding `at` (the text's end on its last line).
fn past_line(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |i| at + i + 1)
}

/// Where the content of `range` ends: the end of its last line that is neither blank nor a
/// comment, so that comments after an entry stay outside it.
fn content_end(text: &str, range: Range<usize>) -> usize {
    let mut end = range.end;
    loop {
        let trimmed = text[range.start..end].trim_end();
        let end_of_content = range.start + trimmed.len();
        let start = line_start(text, end_of_content).max(range.start);
        let line = text[start..end_of_content].trim_start();
        if start > range.start && (line.is_empty() || line.starts_with('#')) {
            end = start;
            continue;
        }
        return end_of_content;
    }
}

/// The lines an entry occupies: from the start of its first line to past its last content line.
fn entry_lines(text: &str, first: usize, range: Range<usize>) -> Range<usize> {
    line_start(text, first)..past_line(text, content_end(text, range))
}

/// The `-` that opens a sequence item whose content starts at `at`.
fn dash_before(text: &str, at: usize) -> usize {
    let before = text[..at].trim_end();
    if before.ends_with('-') {
        before.len() - 1
    } else {
        at
    }
}

fn column(text: &str, at: usize) -> usize {
    at - line_start(text, at)
}

/// `yaml` (a block text, `\n`-separated) with each line prefixed, in the file's line break.
fn indented(yaml: &str, first: &str, rest: &str, lb: &str) -> String {
    let mut out = String::new();
    for (i, line) in yaml.lines().enumerate() {
        if !line.is_empty() {
            out.push_str(if i == 0 { first } else { rest });
            out.push_str(line);
        }
        out.push_str(lb);
    }
    out
}

/// A string as a YAML scalar: plain when that reads back the same, quoted otherwise.
pub fn scalar(value: &str) -> String {
    serde_saphyr::to_string(&value)
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|_| format!("{value:?}"))
}

/// `value` as a scalar quoted as `like` is (double, single or plain when that reads back the
/// same), so a value set back is the text it was.
fn scalar_like(like: &str, value: &str) -> String {
    if like.starts_with('"') {
        // A JSON string is a YAML double-quoted scalar.
        serde_json::to_string(value).unwrap_or_else(|_| scalar(value))
    } else if like.starts_with('\'') {
        format!("'{}'", value.replace('\'', "''"))
    } else {
        scalar(value)
    }
}

/// `text` with `insert` placed at `at`, starting a new line when the text's last line has no
/// line break.
fn insert_lines(text: &str, at: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len() + 2);
    out.push_str(&text[..at]);
    if at > 0 && !text[..at].ends_with('\n') {
        out.push_str(line_break(text));
    }
    out.push_str(insert);
    out.push_str(&text[at..]);
    out
}

fn replace(text: &str, range: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// Where a new top-level key goes: past the last content line of the document.
fn end_of_root(text: &str, root: Option<&Mapping>) -> usize {
    root.map_or(text.len(), |m| {
        past_line(text, content_end(text, range_of(m.byte_range())))
    })
}

fn entry_of(root: Option<&Mapping>, key: &str) -> Option<MappingEntry> {
    root?.find_entry_by_key(key)
}

/// The lines of a top-level entry, the key's line through its value's last content line.
fn top_entry_lines(text: &str, entry: &MappingEntry) -> Range<usize> {
    let range = range_of(entry.byte_range());
    entry_lines(text, range.start, range)
}

/// Whether a value node is a list or map in block style, which entries can be added to
/// line by line; an empty or null value is not one, but can be replaced whole.
enum ValueShape {
    Block(YamlNode),
    Empty,
    Other,
}

fn shape(value: Option<YamlNode>) -> ValueShape {
    let Some(value) = value else {
        return ValueShape::Empty;
    };
    if let Some(seq) = value.as_sequence() {
        return match (seq.is_flow_style(), seq.is_empty()) {
            (false, false) => ValueShape::Block(value),
            (_, true) => ValueShape::Empty,
            (true, false) => ValueShape::Other,
        };
    }
    if let Some(map) = value.as_mapping() {
        return match (map.is_flow_style(), map.is_empty()) {
            (false, false) => ValueShape::Block(value),
            (_, true) => ValueShape::Empty,
            (true, false) => ValueShape::Other,
        };
    }
    match value.as_scalar() {
        Some(s) if s.is_null() => ValueShape::Empty,
        _ => ValueShape::Other,
    }
}

/// Adds `item` (a block mapping's text) to the top-level list `key` (`clusters`, `users`,
/// `contexts` of a kubeconfig) after its last item, at that list's indentation; a missing or
/// empty list becomes one holding the item.
pub fn append_list_item(text: &str, key: &str, item: &str) -> Result<String, SpliceError> {
    let root = root(text)?;
    let lb = line_break(text);
    let entry = entry_of(root.as_ref(), key);
    match entry.as_ref().map(|e| shape(e.value_node())) {
        Some(ValueShape::Block(value)) => {
            let seq = value
                .as_sequence()
                .ok_or_else(|| SpliceError::NotEditable {
                    key: key.to_string(),
                })?;
            let first = seq.first().expect("a non-empty list");
            let dash = dash_before(text, first.byte_range().start as usize);
            let indent = " ".repeat(column(text, dash));
            let last = seq.last().expect("a non-empty list");
            let at = past_line(text, content_end(text, range_of(last.byte_range())));
            let lines = indented(item, &format!("{indent}- "), &format!("{indent}  "), lb);
            Ok(insert_lines(text, at, &lines))
        }
        Some(ValueShape::Other) => Err(SpliceError::NotEditable {
            key: key.to_string(),
        }),
        Some(ValueShape::Empty) => {
            let entry = entry.expect("matched an entry");
            let lines = format!("{key}:{lb}{}", indented(item, "- ", "  ", lb));
            Ok(replace(text, top_entry_lines(text, &entry), &lines))
        }
        None => {
            let lines = format!("{key}:{lb}{}", indented(item, "- ", "  ", lb));
            Ok(insert_lines(text, end_of_root(text, root.as_ref()), &lines))
        }
    }
}

/// Takes out the item of top-level list `key` whose `name` is `name`: exactly its lines.
/// `None` when there is no such item.
pub fn remove_list_item(text: &str, key: &str, name: &str) -> Result<Option<String>, SpliceError> {
    let root = root(text)?;
    let Some(seq) = root.as_ref().and_then(|r| r.get_sequence(key)) else {
        return Ok(None);
    };
    if seq.is_flow_style() {
        return Err(SpliceError::NotEditable {
            key: key.to_string(),
        });
    }
    let found = seq.values().find(|item| {
        item.as_mapping()
            .and_then(|m| m.get("name"))
            .and_then(|n| n.as_scalar().map(|s| s.as_string()))
            .is_some_and(|n| n == name)
    });
    Ok(found.map(|item| {
        let range = range_of(item.byte_range());
        let lines = entry_lines(text, dash_before(text, range.start), range);
        replace(text, lines, "")
    }))
}

/// Takes the item `value` out of list `list` of entry `entry` in the top-level map `map_key`
/// (a talosconfig context's `nodes` or `endpoints`): exactly its lines, or in a flow list
/// (`[a, b]`, as talosctl writes none but other tools do) the item and one separator. `None`
/// when the list has no such item.
pub fn remove_nested_list_scalar(
    text: &str,
    (map_key, entry, list): (&str, &str, &str),
    value: &str,
) -> Result<Option<String>, SpliceError> {
    let root = root(text)?;
    let Some(seq) = (root.as_ref())
        .and_then(|r| r.get_mapping(map_key))
        .and_then(|m| m.get_mapping(entry))
        .and_then(|e| e.get_sequence(list))
    else {
        return Ok(None);
    };
    let items: Vec<YamlNode> = seq.values().collect();
    let Some(at) =
        (items.iter()).position(|item| item.as_scalar().is_some_and(|s| s.as_string() == value))
    else {
        return Ok(None);
    };
    let range = range_of(items[at].byte_range());
    if !seq.is_flow_style() {
        let lines = entry_lines(text, dash_before(text, range.start), range);
        return Ok(Some(replace(text, lines, "")));
    }
    // `[a, b, c]`: the item with the separator after it, or before it for the last one.
    let cut = match (items.get(at + 1), at.checked_sub(1).map(|i| &items[i])) {
        (Some(next), _) => range.start..range_of(next.byte_range()).start,
        (None, Some(previous)) => range_of(previous.byte_range()).end..range.end,
        (None, None) => range,
    };
    if !text[cut.clone()].chars().all(|c| c != '#' && c != '\n') {
        return Err(SpliceError::NotEditable {
            key: format!("{map_key}.{entry}.{list}"),
        });
    }
    Ok(Some(replace(text, cut, "")))
}

/// Adds `key: value` (`value` a block mapping's text) to the top-level map `map_key` (a
/// talosconfig's `contexts`) after its last entry, at that map's indentation; a missing or empty
/// map becomes one holding the entry.
pub fn add_map_entry(
    text: &str,
    map_key: &str,
    key: &str,
    value: &str,
) -> Result<String, SpliceError> {
    let root = root(text)?;
    let lb = line_break(text);
    let entry = entry_of(root.as_ref(), map_key);
    let block = |indent: &str| {
        format!(
            "{indent}{}:{lb}{}",
            scalar(key),
            indented(value, &format!("{indent}  "), &format!("{indent}  "), lb)
        )
    };
    match entry.as_ref().map(|e| shape(e.value_node())) {
        Some(ValueShape::Block(node)) => {
            let map = node.as_mapping().ok_or_else(|| SpliceError::NotEditable {
                key: map_key.to_string(),
            })?;
            let entries: Vec<MappingEntry> = map.entries().collect();
            let first = entries.first().expect("a non-empty map");
            let indent = " ".repeat(column(text, first.byte_range().start as usize));
            let last = entries.last().expect("a non-empty map");
            let at = past_line(text, content_end(text, range_of(last.byte_range())));
            Ok(insert_lines(text, at, &block(&indent)))
        }
        Some(ValueShape::Other) => Err(SpliceError::NotEditable {
            key: map_key.to_string(),
        }),
        Some(ValueShape::Empty) => {
            let entry = entry.expect("matched an entry");
            let lines = format!("{map_key}:{lb}{}", block("  "));
            Ok(replace(text, top_entry_lines(text, &entry), &lines))
        }
        None => {
            let lines = format!("{map_key}:{lb}{}", block("  "));
            Ok(insert_lines(text, end_of_root(text, root.as_ref()), &lines))
        }
    }
}

/// Takes entry `key` out of the top-level map `map_key`: exactly its lines. `None` when absent.
pub fn remove_map_entry(
    text: &str,
    map_key: &str,
    key: &str,
) -> Result<Option<String>, SpliceError> {
    let root = root(text)?;
    let Some(map) = root.as_ref().and_then(|r| r.get_mapping(map_key)) else {
        return Ok(None);
    };
    if map.is_flow_style() {
        return Err(SpliceError::NotEditable {
            key: map_key.to_string(),
        });
    }
    Ok(map.find_entry_by_key(key).map(|entry| {
        let range = range_of(entry.byte_range());
        replace(text, entry_lines(text, range.start, range), "")
    }))
}

/// Sets top-level `key` to the string `value`, replacing that entry's lines (the entry is
/// added at the end when missing).
pub fn set_top_scalar(text: &str, key: &str, value: &str) -> Result<String, SpliceError> {
    let root = root(text)?;
    let lb = line_break(text);
    let line = format!("{key}: {}{lb}", scalar(value));
    let Some(entry) = entry_of(root.as_ref(), key) else {
        return Ok(insert_lines(text, end_of_root(text, root.as_ref()), &line));
    };
    // The scalar alone when there is one, so a comment on its line stays.
    let present = entry
        .value_node()
        .filter(|v| v.as_scalar().is_some_and(|s| !s.is_null()))
        .map(|v| range_of(v.byte_range()))
        .filter(|r| !text[r.clone()].trim().is_empty());
    Ok(match present {
        Some(range) => replace(text, range.clone(), &scalar_like(&text[range], value)),
        None => replace(text, top_entry_lines(text, &entry), &line),
    })
}

/// Takes top-level `key` out (its lines); the text unchanged when it has none.
pub fn remove_top_key(text: &str, key: &str) -> Result<String, SpliceError> {
    let root = root(text)?;
    Ok(match entry_of(root.as_ref(), key) {
        Some(entry) => replace(text, top_entry_lines(text, &entry), ""),
        None => text.to_string(),
    })
}

#[cfg(test)]
#[path = "yaml_splice_tests.rs"]
mod tests;
