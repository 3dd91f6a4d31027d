//! The layer map of `src/lib.rs`, checked: every top-level module of src/ has
//! a layer, no module names (`crate::<module>`) one in its own layer or above,
//! and so the modules form no cycle; a view never imports an update step (the app's, or a
//! screen module's own `update`); and
//! no import circle among the crate's files spans more than ten files. Test code
//! (`#[cfg(test)]` modules and the files they declare) may reach anywhere and
//! is left out. A screen's module (`src/views/<screen>/`) imports no other
//! screen's. The simulator's layers are checked file by file in
//! architecture/sim_layers.rs.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "architecture/one_pipeline.rs"]
mod one_pipeline;
#[path = "architecture/sim_layers.rs"]
mod sim_layers;

/// Bottom to top; a module may use modules of the layers below its own only.
const LAYERS: &[&[&str]] = &[
    &["bounded", "printable", "natural", "atomic_file"],
    &["proto", "clock", "paths", "config"],
    &["logging", "versions", "tui", "guards", "run_holder"],
    &["journal"],
    &["discovery"],
    &["cluster_config"],
    &["talos", "kube", "opennebula", "registry"],
    &["rollout", "approval"],
    &["capi", "node_resources", "machine_config"],
    &["fleet"],
    &["upgrade", "provision"],
    &["node_actions", "capi_scale"],
    &["etcd_maintenance"],
    &["cluster_lifecycle", "capi_doctor"],
    &["operation"],
    &["app"],
    &["views"],
    &["console"],
    &["cli"],
    &["commands"],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level modules: `src/x.rs` and `src/x/`, but not lib.rs or main.rs.
fn top_level_modules() -> BTreeSet<String> {
    std::fs::read_dir(src())
        .expect("src/")
        .map(|e| e.expect("dir entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            match name.strip_suffix(".rs") {
                Some(stem) if stem != "lib" && stem != "main" => Some(stem.to_string()),
                Some(_) => None,
                None => p.is_dir().then_some(name),
            }
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The index just past the `}` closing the `{` at `open`.
fn block_end(text: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The text without its `#[cfg(test)] mod x { … }` blocks; the names of the
/// `#[cfg(test)] mod x;` files it declares go into `test_files`.
fn without_test_code(text: &str, file: &Path, test_files: &mut BTreeSet<PathBuf>) -> String {
    let mut kept = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        // `pub(crate) mod x;`: test fixtures other modules' tests use.
        let after = after.strip_prefix("pub(crate) ").unwrap_or(after);
        let item_start = rest.len() - after.len();
        let Some(decl) = after.strip_prefix("mod ") else {
            // cfg(test) on something else (a fn, a use): drop that one line.
            let line_end = after.find('\n').map_or(rest.len(), |n| item_start + n);
            rest = &rest[line_end..];
            continue;
        };
        let name: String = decl
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let semicolon = decl.find(';');
        let brace = decl.find('{');
        match (semicolon, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => {
                test_files.insert(module_dir(file).join(format!("{name}.rs")));
                rest = &rest[item_start + "mod ".len() + s + 1..];
            }
            (_, Some(b)) => {
                let open = item_start + "mod ".len() + b;
                rest = &rest[block_end(rest, open)..];
            }
            _ => rest = "",
        }
    }
    kept.push_str(rest);
    kept
}

/// Where the files of `file`'s child modules live.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().expect("a parent dir");
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => parent.to_path_buf(),
        Some(stem) => parent.join(stem),
        None => parent.to_path_buf(),
    }
}

/// The top-level modules `text` names as `crate::x` or in `crate::{x, y::z}`.
fn crate_references(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if rest.starts_with('{') {
            let inner = &rest[1..block_end(rest, 0) - 1];
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if item_start && depth == 0 => {
                        found.insert(ident(&inner[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found
}

/// Which top-level modules each top-level module uses (outside test code).
fn module_graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<PathBuf>>> {
    let modules = top_level_modules();
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<PathBuf>>> = BTreeMap::new();
    for (rel, top, text) in library_sources() {
        if !modules.contains(&top) {
            continue;
        }
        for target in crate_references(&text) {
            if target != top && modules.contains(&target) {
                graph
                    .entry(top.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(rel.clone());
            }
        }
    }
    graph
}

/// Each file of the library without its test code, as `(path under src/, top-level module,
/// text)`; the `*_tests.rs` files and those a `#[cfg(test)] mod x;` declares are left out.
fn library_sources() -> Vec<(PathBuf, String, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut test_files = BTreeSet::new();
    let mut texts = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        texts.push((file, without_test_code(&text, file, &mut test_files)));
    }
    let mut sources = Vec::new();
    for (file, text) in texts {
        let rel = file.strip_prefix(src()).expect("under src/");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs").to_string())
            .expect("a top-level component");
        if test_files.contains(file) || file_is_tests(rel) {
            continue;
        }
        sources.push((rel.to_path_buf(), top, text));
    }
    sources
}

/// `*_tests.rs`: the unit tests of the file beside it, declared `#[cfg(test)]`.
fn file_is_tests(rel: &Path) -> bool {
    rel.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.ends_with("_tests"))
}

#[test]
fn every_module_has_a_layer() {
    let modules = top_level_modules();
    let unplaced: Vec<_> = modules.iter().filter(|m| rank(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "modules without a layer in tests/architecture.rs and src/lib.rs: {unplaced:?}"
    );
    let stale: Vec<_> = LAYERS
        .iter()
        .flat_map(|layer| layer.iter())
        .filter(|m| !modules.contains(**m))
        .collect();
    assert!(
        stale.is_empty(),
        "layers name modules src/ lacks: {stale:?}"
    );
}

#[test]
fn arrows_only_point_down() {
    let mut upward = Vec::new();
    for (from, targets) in module_graph() {
        let Some(from_rank) = rank(&from) else {
            continue;
        };
        for (to, files) in targets {
            let Some(to_rank) = rank(&to) else {
                continue;
            };
            if to_rank >= from_rank {
                upward.push(format!("{from} -> {to} (in {files:?})"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a module in the same layer or above:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_cycle_between_modules() {
    let graph = module_graph();
    // Depth-first search; a module met again while still on the path closes a cycle.
    fn visit<'a>(
        at: &'a str,
        graph: &'a BTreeMap<String, BTreeMap<String, BTreeSet<PathBuf>>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| *m == at) {
            let mut cycle: Vec<String> = path[start..].iter().map(|m| m.to_string()).collect();
            cycle.push(at.to_string());
            return Some(cycle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for next in graph.get(at).into_iter().flat_map(|t| t.keys()) {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        let cycle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "modules in a cycle: {}",
            cycle.unwrap().join(" -> ")
        );
    }
}

#[test]
fn the_reader_sees_test_code_and_grouped_imports_as_meant() {
    let refs = crate_references("use crate::{app::{a, b}, fleet::X};\nlet x = crate::views::draw;");
    assert_eq!(
        refs,
        BTreeSet::from(["app".into(), "fleet".into(), "views".into()])
    );
    let mut test_files = BTreeSet::new();
    let file = Path::new("/x/src/upgrade/guards.rs");
    let text = "use crate::fleet;\n#[cfg(test)]\nmod tests {\n    use crate::app::{x};\n}\n#[cfg(test)]\nmod guards_tests;\n";
    let kept = without_test_code(text, file, &mut test_files);
    assert_eq!(crate_references(&kept), BTreeSet::from(["fleet".into()]));
    assert!(test_files.contains(Path::new("/x/src/upgrade/guards/guards_tests.rs")));
}

/// The paths `text` names from `prefix` on (`crate::`, `super::`), with `{a, b::c}` groups
/// spread out: `crate::{app::{a, b}, fleet::X}` gives `app::a`, `app::b` and `fleet::X`.
fn paths_after(text: &str, prefix: &str) -> Vec<String> {
    fn spread(head: &str, rest: &str, out: &mut Vec<String>) {
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let after = &rest[path.len()..];
        if (path.is_empty() || path.ends_with("::")) && after.starts_with('{') {
            let inner = &after[1..block_end(after, 0) - 1];
            let mut depth = 0usize;
            let mut start = 0;
            for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let item: String = inner[start..i].split_whitespace().collect();
                        if !item.is_empty() {
                            spread(&format!("{head}{path}"), &item, out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(format!("{head}{}", path.trim_end_matches("::")));
        }
    }
    let mut out = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        let rest: String = text[at + prefix.len()..]
            .chars()
            .take(4000)
            .collect::<String>();
        let rest = rest.trim_start();
        spread("", rest, &mut out);
    }
    out
}

/// The module path of a file below src/: `app/keymap.rs` is `app::keymap`, `app/mod.rs` is `app`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(str::to_string))
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" && stem != "main" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// The file a module path lives in: the deepest of its prefixes that is a file of `files`.
fn file_of(path: &[String], files: &BTreeSet<PathBuf>) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| {
        let base: PathBuf = path[..n].iter().collect();
        [base.with_extension("rs"), base.join("mod.rs")]
            .into_iter()
            .find(|candidate| files.contains(candidate))
    })
}

/// Which crate files each file names (`crate::…`, `super::…`, `self::…`), outside test code;
/// paths relative to src/.
fn file_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut all = Vec::new();
    rust_files(&src(), &mut all);
    let mut test_files = BTreeSet::new();
    let mut texts = Vec::new();
    for file in &all {
        let text = std::fs::read_to_string(file).expect("readable source");
        texts.push((
            file.clone(),
            without_test_code(&text, file, &mut test_files),
        ));
    }
    let rel = |file: &Path| file.strip_prefix(src()).expect("under src/").to_path_buf();
    let files: BTreeSet<PathBuf> = all
        .iter()
        .filter(|f| !test_files.contains(*f) && !file_is_tests(&rel(f)))
        .map(|f| rel(f))
        .collect();
    let mut graph = BTreeMap::new();
    for (file, text) in texts {
        let from = rel(&file);
        if !files.contains(&from) {
            continue;
        }
        let own = module_path(&from);
        let mut targets = BTreeSet::new();
        let mut named = Vec::new();
        for path in paths_after(&text, "crate::") {
            named.push(path.split("::").map(str::to_string).collect::<Vec<_>>());
        }
        for (prefix, up) in [("super::", 1), ("self::", 0)] {
            for path in paths_after(&text, prefix) {
                let mut segments: Vec<String> = path.split("::").map(str::to_string).collect();
                let mut base = own[..own.len().saturating_sub(up)].to_vec();
                while segments.first().is_some_and(|s| s == "super") {
                    segments.remove(0);
                    base.pop();
                }
                base.extend(segments);
                named.push(base);
            }
        }
        for path in named {
            if let Some(to) = file_of(&path, &files).filter(|to| *to != from) {
                targets.insert(to);
            }
        }
        graph.insert(from, targets);
    }
    graph
}

/// The strongly connected components of `graph` (Tarjan), largest first.
fn import_circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a Path, usize>,
        low: BTreeMap<&'a Path, usize>,
        stack: Vec<&'a Path>,
        on_stack: BTreeSet<&'a Path>,
        circles: Vec<Vec<PathBuf>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, at: &'a Path) {
            let n = self.index.len();
            self.index.insert(at, n);
            self.low.insert(at, n);
            self.stack.push(at);
            self.on_stack.insert(at);
            let graph = self.graph;
            for next in graph.get(at).into_iter().flatten() {
                let next = next.as_path();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[at].min(self.low[next]);
                    self.low.insert(at, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[at].min(self.index[next]);
                    self.low.insert(at, low);
                }
            }
            if self.low[at] == self.index[at] {
                let mut circle = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    circle.push(member.to_path_buf());
                    if member == at {
                        break;
                    }
                }
                circle.sort();
                self.circles.push(circle);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        circles: Vec::new(),
    };
    for file in graph.keys() {
        if !walk.index.contains_key(file.as_path()) {
            walk.visit(file);
        }
    }
    walk.circles.sort_by_key(|c| std::cmp::Reverse(c.len()));
    walk.circles
}

/// The most files one import circle may span.
const MAX_CIRCLE: usize = 10;

#[test]
fn no_import_circle_spans_more_than_ten_files() {
    let graph = file_graph();
    assert!(
        graph.len() > 100 && graph.values().map(BTreeSet::len).sum::<usize>() > 300,
        "the file graph was read: {} files",
        graph.len()
    );
    let too_large: Vec<String> = import_circles(&graph)
        .into_iter()
        .filter(|circle| circle.len() > MAX_CIRCLE)
        .map(|circle| format!("{} files (at most {MAX_CIRCLE}): {circle:?}", circle.len()))
        .collect();
    assert!(
        too_large.is_empty(),
        "import circles too large:\n{}",
        too_large.join("\n")
    );
}

/// An update step: `app/update*.rs`, or a screen module's `views/<screen>/update*.rs`.
fn is_update_step(file: &Path) -> bool {
    let update = file
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s == "update" || s.starts_with("update_"));
    update && (file.starts_with("app") || screen_of(file).is_some())
}

/// The imports of an update step by drawing code: a view of views/ (a screen's own update
/// step included; its module file wires the two and is not drawing code).
fn views_importing_update_steps(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<String> {
    let drawing = |file: &Path| {
        file.starts_with("views") && !is_update_step(file) && !file.ends_with("mod.rs")
    };
    graph
        .iter()
        .filter(|(from, _)| drawing(from))
        .flat_map(|(from, targets)| {
            targets
                .iter()
                .filter(|to| is_update_step(to))
                .map(move |to| format!("{} -> {}", from.display(), to.display()))
        })
        .collect()
}

#[test]
fn a_view_never_imports_an_update_step() {
    let graph = file_graph();
    let offending = views_importing_update_steps(&graph);
    assert!(
        offending.is_empty(),
        "views that import an update step:\n{}",
        offending.join("\n")
    );
    let screens = BTreeMap::from([
        (
            PathBuf::from("views/health/view.rs"),
            BTreeSet::from([
                PathBuf::from("views/health/update.rs"),
                PathBuf::from("views/health/checklist.rs"),
            ]),
        ),
        (
            PathBuf::from("views/health/mod.rs"),
            BTreeSet::from([PathBuf::from("views/health/update.rs")]),
        ),
        (
            PathBuf::from("views/fleet.rs"),
            BTreeSet::from([PathBuf::from("app/update_panes.rs")]),
        ),
    ]);
    assert_eq!(
        views_importing_update_steps(&screens),
        [
            "views/fleet.rs -> app/update_panes.rs",
            "views/health/view.rs -> views/health/update.rs"
        ]
    );
}

/// The screen a file below src/ belongs to: `views/plan/update.rs` is in screen `plan`; a file
/// of views/ itself (shared drawing parts) is in none.
fn screen_of(rel: &Path) -> Option<&str> {
    let mut parts = rel.components().map(|c| c.as_os_str().to_str());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Some("views")), Some(Some(screen)), Some(_)) => Some(screen),
        _ => None,
    }
}

/// The one plan screen's and the one progress screen's generic drawing, which every screen
/// with a plan or a run of its own draws them with (issue 26: one plan screen and one progress
/// screen for every operation).
const SHARED_SCREEN_PARTS: [&str; 2] = ["views/plan/mod.rs", "views/progress/mod.rs"];

/// The imports from one screen's module (`src/views/<screen>/`) into another's, but for its
/// shared parts.
fn cross_screen_imports(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<String> {
    graph
        .iter()
        .filter_map(|(from, targets)| Some((from, screen_of(from)?, targets)))
        .flat_map(|(from, screen, targets)| {
            targets
                .iter()
                .filter(|to| !SHARED_SCREEN_PARTS.iter().any(|p| Path::new(p) == *to))
                .filter(move |to| screen_of(to).is_some_and(|other| other != screen))
                .map(move |to| format!("{} -> {}", from.display(), to.display()))
        })
        .collect()
}

#[test]
fn a_screen_never_imports_another_screen() {
    let graph = file_graph();
    assert!(
        graph.keys().any(|f| screen_of(f).is_some()),
        "no screen module under src/views/<screen>/ was read"
    );
    let offending = cross_screen_imports(&graph);
    assert!(
        offending.is_empty(),
        "screens that import another screen (put what both need below them, in app/):\n{}",
        offending.join("\n")
    );
    let pair = BTreeMap::from([
        (
            PathBuf::from("views/plan/view.rs"),
            BTreeSet::from([
                PathBuf::from("views/plan/mod.rs"),
                PathBuf::from("views/table.rs"),
                PathBuf::from("views/progress/mod.rs"),
                PathBuf::from("views/health/view.rs"),
            ]),
        ),
        (PathBuf::from("views/table.rs"), BTreeSet::new()),
    ]);
    assert_eq!(
        cross_screen_imports(&pair),
        ["views/plan/view.rs -> views/health/view.rs"]
    );
}

#[test]
fn the_file_graph_reads_grouped_and_relative_paths() {
    let paths = paths_after(
        "use crate::{app::{state::AppState, screen::{Pane, Screen}}, fleet::X};",
        "crate::",
    );
    assert_eq!(
        paths,
        [
            "app::state::AppState",
            "app::screen::Pane",
            "app::screen::Screen",
            "fleet::X"
        ]
    );
    assert_eq!(
        paths_after("use super::logs::{LogKey, LogView};", "super::"),
        ["logs::LogKey", "logs::LogView"]
    );
    let files = BTreeSet::from([PathBuf::from("app/mod.rs"), PathBuf::from("app/state.rs")]);
    let path = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        file_of(&path("app::state::AppState"), &files),
        Some(PathBuf::from("app/state.rs"))
    );
    assert_eq!(
        file_of(&path("app::Action"), &files),
        Some(PathBuf::from("app/mod.rs"))
    );
    assert_eq!(module_path(Path::new("app/keymap.rs")), ["app", "keymap"]);
    assert_eq!(module_path(Path::new("app/mod.rs")), ["app"]);
    let graph = BTreeMap::from([
        (PathBuf::from("a"), BTreeSet::from([PathBuf::from("b")])),
        (
            PathBuf::from("b"),
            BTreeSet::from([PathBuf::from("a"), PathBuf::from("c")]),
        ),
        (PathBuf::from("c"), BTreeSet::new()),
    ]);
    assert_eq!(
        import_circles(&graph)[0],
        [PathBuf::from("a"), PathBuf::from("b")]
    );
}
