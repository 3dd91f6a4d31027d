//! The simulator's layers (crates/taloscope-sim/src), checked file by file: every top-level
//! module has a layer, no file imports a file of a layer above its own or of another module of
//! its own layer, the model imports nothing else, no import circle spans more than
//! `MAX_CIRCLE` files, and the sim's library never names the console crate. lib.rs (the fleet
//! that assembles every layer) sits above them all; test code is left out.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{block_end, import_circles, rust_files, without_test_code};

/// Bottom to top; a file may import files of its own top-level module and of the layers below.
const SIM_LAYERS: &[&[&str]] = &[
    &["model"],
    &["kube_api", "registry"],
    &["node_life"],
    &["talos_api"],
    &["opennebula"],
    &["capi"],
];

/// The most files one import circle may span.
const MAX_CIRCLE: usize = 10;

fn sim_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/taloscope-sim/src")
}

fn sim_rank(top: &str) -> Option<usize> {
    SIM_LAYERS.iter().position(|layer| layer.contains(&top))
}

/// A file's module path: `talos_api/machine.rs` is `[talos_api, machine]`, `capi/mod.rs` is
/// `[capi]`, lib.rs is `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(str::to_string))
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_string());
        }
    }
    parts
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The text without `//` comments (doc comments may name any module).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a `use` tree names, its groups expanded: `a::{b, c::{d, e}}` is `a::b`,
/// `a::c::d`, `a::c::e`.
fn expand_use(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("").trim();
        out.push(format!("{prefix}{path}"));
        return;
    };
    let head = &tree[..open];
    let inner = &tree[open + 1..block_end(tree, open) - 1];
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                expand_use(&format!("{prefix}{head}"), &inner[start..i], out);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        expand_use(&format!("{prefix}{head}"), &inner[start..], out);
    }
}

/// The `crate::` and `super::` paths `text` names, in `use` trees and in code.
fn named_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut at = 0;
    for (i, _) in text.match_indices("use ") {
        // A `use` item starts its line, after its visibility if any (not `use` in a string).
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let lead = text[line_start..i].trim();
        let item = lead.is_empty() || (lead.starts_with("pub") && !lead.contains(' '));
        if i < at || !item {
            continue;
        }
        let Some(end) = text[i..].find(';') else {
            break;
        };
        rest.push_str(&text[at..i]);
        expand_use("", &text[i + "use ".len()..i + end], &mut paths);
        at = i + end + 1;
    }
    rest.push_str(&text[at..]);
    for head in ["crate::", "super::", "self::"] {
        for (i, _) in rest.match_indices(head) {
            let before = rest[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut end = i;
            let bytes = rest.as_bytes();
            while end < rest.len() {
                let segment = ident(&rest[end..]);
                end += segment.len();
                if rest[end..].starts_with("::") && bytes.get(end + 2).is_some_and(|b| *b != b'{') {
                    end += 2;
                } else {
                    break;
                }
            }
            paths.push(rest[i..end].to_string());
        }
    }
    paths
}

/// The file a path names from the module `from`: the longest prefix that is a module.
fn resolve(
    from: &[String],
    path: &str,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<PathBuf> {
    let mut segments = path.split("::").map(str::trim).filter(|s| !s.is_empty());
    let mut base: Vec<String> = match segments.next()? {
        "crate" => Vec::new(),
        "self" => from.to_vec(),
        "super" => from[..from.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest: Vec<&str> = segments.collect();
    while rest.first() == Some(&"super") {
        base.pop();
        rest.remove(0);
    }
    for take in (0..=rest.len()).rev() {
        let mut candidate = base.clone();
        candidate.extend(rest[..take].iter().map(|s| ident(s)));
        if let Some(file) = modules.get(&candidate) {
            return Some(file.clone());
        }
    }
    None
}

/// Which files each file of the sim's library imports (outside test code and comments).
fn sim_file_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let src = sim_src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| !f.strip_prefix(&src).is_ok_and(|rel| rel.starts_with("bin")));
    files.sort();
    let mut test_files = BTreeSet::new();
    let mut texts = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        texts.push((file, without_test_code(&text, file, &mut test_files)));
    }
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).expect("under src/").to_path_buf();
            (module_path(&rel), rel)
        })
        .collect();
    let mut graph = BTreeMap::new();
    for (file, text) in texts {
        if test_files.contains(file) {
            continue;
        }
        let rel = file.strip_prefix(&src).expect("under src/").to_path_buf();
        let from = module_path(&rel);
        let targets: BTreeSet<PathBuf> = named_paths(&without_comments(&text))
            .iter()
            .filter_map(|p| resolve(&from, p, &modules))
            .filter(|target| *target != rel)
            .collect();
        graph.insert(rel, targets);
    }
    graph
}

fn top_of(rel: &Path) -> String {
    rel.components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .map(|s| s.trim_end_matches(".rs").to_string())
        .expect("a top-level component")
}

#[test]
fn every_sim_module_has_a_layer() {
    let unplaced: BTreeSet<String> = sim_file_graph()
        .keys()
        .map(|rel| top_of(rel))
        .filter(|top| top != "lib" && sim_rank(top).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "sim modules without a layer in tests/architecture/sim_layers.rs: {unplaced:?}"
    );
}

#[test]
fn sim_arrows_only_point_down() {
    let mut upward = Vec::new();
    for (from, targets) in sim_file_graph() {
        let from_top = top_of(&from);
        let Some(from_rank) = sim_rank(&from_top) else {
            continue;
        };
        for to in targets {
            let to_top = top_of(&to);
            if to_top == from_top {
                continue;
            }
            // lib.rs and its re-exports (`crate::NodeRole`) sit above every layer.
            let to_rank = sim_rank(&to_top).unwrap_or(usize::MAX);
            if to_rank >= from_rank {
                upward.push(format!("{} -> {}", from.display(), to.display()));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "sim files importing a layer at or above their own (the model imports only itself):\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_sim_import_circle_spans_more_than_ten_files() {
    let graph = sim_file_graph();
    let too_big: Vec<String> = import_circles(&graph)
        .iter()
        .filter(|c| c.len() > MAX_CIRCLE)
        .map(|c| format!("{} files: {c:?}", c.len()))
        .collect();
    assert!(
        too_big.is_empty(),
        "sim import circles over {MAX_CIRCLE} files:\n{}",
        too_big.join("\n")
    );
}

#[test]
fn the_sim_library_never_names_the_console() {
    let manifest = std::fs::read_to_string(sim_src().join("../Cargo.toml")).expect("Cargo.toml");
    let dependencies = manifest
        .split("\n[")
        .find(|section| section.starts_with("dependencies]"))
        .unwrap_or("");
    assert!(
        !dependencies
            .lines()
            .any(|line| line.trim_start().starts_with("taloscope ")
                || line.trim_start().starts_with("taloscope=")),
        "crates/taloscope-sim/Cargo.toml depends on the console crate"
    );
    let mut files = Vec::new();
    rust_files(&sim_src(), &mut files);
    let naming: Vec<_> = files
        .iter()
        .filter(|f| {
            let code = without_comments(&std::fs::read_to_string(f).expect("readable source"));
            code.match_indices("taloscope::").any(|(i, _)| {
                !code[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .collect();
    assert!(
        naming.is_empty(),
        "sim files naming the console crate: {naming:?}"
    );
}

#[test]
fn the_sim_reader_resolves_grouped_and_relative_imports() {
    let modules: BTreeMap<Vec<String>, PathBuf> = [
        (vec![], "lib.rs"),
        (vec!["model".into()], "model/mod.rs"),
        (vec!["model".into(), "state".into()], "model/state.rs"),
        (vec!["model".into(), "clock".into()], "model/clock.rs"),
        (vec!["capi".into()], "capi/mod.rs"),
        (vec!["capi".into(), "store".into()], "capi/store.rs"),
    ]
    .into_iter()
    .map(|(m, f)| (m, PathBuf::from(f)))
    .collect();
    let from = vec!["model".to_string(), "state".to_string()];
    // The last line's `use` is in a string: the path after it is code, and still counted.
    let text = "use super::{state};\npub(crate) use crate::capi::store::{self, X};\n\
                fn f() { crate::NodeRole::Worker; let _ = super::super::capi::Ctx; }\n\
                g(\"we use it\", crate::model::clock::X);";
    let found: BTreeSet<PathBuf> = named_paths(text)
        .iter()
        .filter_map(|p| resolve(&from, p, &modules))
        .collect();
    let expected: BTreeSet<PathBuf> = [
        "model/clock.rs",
        "model/state.rs",
        "capi/store.rs",
        "lib.rs",
        "capi/mod.rs",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect();
    assert_eq!(found, expected);
    assert_eq!(
        without_comments("use a; // crate::capi\n/// crate::x\n"),
        "use a; \n"
    );
}
