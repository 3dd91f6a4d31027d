//! The machine configuration screen (`m` in node detail, `:config [NODE]`): the configuration
//! one node runs, as `taloscope config show` prints it (the `MachineConfigs` resource, os:admin
//! only; every secret redacted), split into its documents and folded by section
//! (`machine.kubelet`, `cluster.network`, a `RegistryMirrorConfig`…). Read once per opening
//! (`console::run_node_read`), again with `r`. State, keys and update step here, the drawing in
//! `view`; `p` opens the patch wizard on the one plan screen (`patch`, drawn in `patch_view`).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, bind, intent, lines_with_moves};
use crate::app::message::Message;
use crate::app::screens::{Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step};
use crate::cluster_config::ConfigNode;
use crate::machine_config::NodeConfig;
use crate::tui::Look;
use crate::views::node_read::{NodeNews, NodeReading};

pub mod patch;
mod patch_view;
mod view;

pub use patch::{PATCH, PatchNews, PatchTask, PatchWizard};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "config";

/// Where the screen opens from, when it cannot tell which node.
const WHERE_IT_OPENS: &str = "m in node detail, or :config NODE, shows a node's machine config";

/// The node's configuration, or why it could not be read (the error names the context and
/// the node; a reader's says it needs os:admin).
pub type ConfigNews = NodeNews<NodeConfig>;

/// A fold of the configuration: a section of a document and its lines of YAML.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// `machine.kubelet`, `v1alpha1` (the document's own scalars) or a typed document's title.
    pub path: String,
    pub lines: Vec<String>,
    pub open: bool,
}

/// The sections of `config`: in the v1alpha1 document each second-level mapping or list
/// (`machine.kubelet`, `cluster.network`…), the scalars of a first-level key together under
/// its name (`machine`: its type, token…), the document's own scalars under `v1alpha1`; every
/// other document whole.
pub fn sections(config: &NodeConfig) -> Vec<Section> {
    let mut out = Vec::new();
    for document in &config.documents {
        let title = document.title();
        let entries = match &document.body {
            ConfigNode::Map(entries) if document.kind == "v1alpha1" => entries,
            body => {
                out.push(section(title, body));
                continue;
            }
        };
        let (nested, scalars) = split(entries);
        if !scalars.is_empty() {
            out.push(section(title, &ConfigNode::Map(scalars)));
        }
        for (key, inner) in nested {
            let ConfigNode::Map(inner) = inner else {
                out.push(section(key.clone(), inner));
                continue;
            };
            let (nested, scalars) = split(inner);
            if !scalars.is_empty() {
                out.push(section(key.clone(), &ConfigNode::Map(scalars)));
            }
            out.extend(
                nested
                    .into_iter()
                    .map(|(sub, value)| section(format!("{key}.{sub}"), value)),
            );
        }
    }
    out
}

/// A mapping's entry: its key and value.
type Entry = (String, ConfigNode);

/// A mapping's entries that hold more (mappings and lists), and its scalars as entries.
fn split(entries: &[Entry]) -> (Vec<&Entry>, Vec<Entry>) {
    let (nested, scalars): (Vec<_>, Vec<_>) = entries
        .iter()
        .partition(|(_, v)| matches!(v, ConfigNode::Map(_) | ConfigNode::Seq(_)));
    (nested, scalars.into_iter().cloned().collect())
}

fn section(path: String, value: &ConfigNode) -> Section {
    let text = value
        .to_yaml()
        .unwrap_or_else(|e| format!("# cannot be written as YAML: {e}\n"));
    let lines = crate::printable::lines(&text)
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty() && *l != "---")
        .collect();
    Section {
        path,
        lines,
        open: false,
    }
}

/// Where a row of the screen points: a section's heading, or one of its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub section: usize,
    pub line: Option<usize>,
}

/// The node shown, its configuration's sections and the row the cursor is on.
#[derive(Debug, Clone, Default)]
pub struct ConfigScreen {
    /// The node and its configuration as read once per opening, again with `r`.
    pub node: NodeReading<NodeConfig>,
    pub sections: Vec<Section>,
    pub cursor: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConfigKey {
    /// The section under the cursor the other way (`None`), or every section opened or folded.
    Fold(Option<bool>),
    Read,
    Patch,
    Back,
}

#[rustfmt::skip]
static KEYS: &[Binding<ConfigKey, ConfigScreen>] = &[
    bind(&[Key::ENTER, Key::char(' ')], ConfigKey::Fold(None), "open or fold the section under the cursor").footer("fold").offered(has_sections),
    bind(&[Key::char('+')], ConfigKey::Fold(Some(true)), "open every section").footer("open all").offered(has_sections),
    bind(&[Key::char('-')], ConfigKey::Fold(Some(false)), "fold every section").offered(has_sections),
    bind(&[Key::char('r')], ConfigKey::Read, "read the configuration again").footer("reread"),
    bind(&[Key::char('p')], ConfigKey::Patch, "patch the configuration: file, nodes, mode, then the plan").footer("patch").offered(has_request),
    bind(&[Key::ESC, Key::char('q')], ConfigKey::Back, "back where the screen was opened").footer("back"),
];

fn has_sections(screen: &ConfigScreen) -> bool {
    !screen.sections.is_empty()
}

fn has_request(screen: &ConfigScreen) -> bool {
    screen.node.request.is_some()
}

impl ConfigScreen {
    /// The rows the screen shows: each section's heading, and its lines when it is open.
    pub fn rows(&self) -> Vec<Row> {
        let rows = self.sections.iter().enumerate().flat_map(|(at, section)| {
            let open = if section.open { section.lines.len() } else { 0 };
            let lines = std::iter::once(None).chain((0..open).map(Some));
            lines.map(move |line| Row { section: at, line })
        });
        rows.collect()
    }

    /// Opens or folds the section under the cursor (`all`: every section, open or folded);
    /// the cursor goes to the heading of the section it was in.
    fn fold(&mut self, all: Option<bool>) {
        let at = self.rows().get(self.cursor).map(|r| r.section);
        for (i, section) in self.sections.iter_mut().enumerate() {
            match all {
                Some(open) => section.open = open,
                None if Some(i) == at => section.open = !section.open,
                None => {}
            }
        }
        self.cursor = at
            .and_then(|s| self.rows().iter().position(|r| r.section == s))
            .unwrap_or(0);
    }

    /// The read's configuration on screen; the sections open before stay open.
    fn shown(&mut self) {
        let Some(config) = &self.node.document else {
            return;
        };
        let open: Vec<String> = self
            .sections
            .iter()
            .filter(|s| s.open)
            .map(|s| s.path.clone())
            .collect();
        self.sections = sections(config);
        for section in &mut self.sections {
            section.open = open.contains(&section.path);
        }
        self.cursor = self.cursor.min(self.rows().len().saturating_sub(1));
    }

    /// The patch wizard of the node on screen (by name: screens never import each other's
    /// opening); its close shows the configuration again.
    fn open_patch(&self) -> Step {
        let Some(request) = &self.node.request else {
            return Step::default();
        };
        let words = vec![
            PATCH.into(),
            request.cluster.clone(),
            request.node.name.clone(),
        ];
        Step::open(PATCH, words)
    }
}

impl ScreenModule for ConfigScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Machine configuration (m in node detail, :config NODE)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(KEYS, self)
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        *self = ConfigScreen {
            node: self.node.open(opening, shared, WHERE_IT_OPENS)?,
            ..ConfigScreen::default()
        };
        Ok(Step::effects(self.node.read(NAME, false)))
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match intent(KEYS, event) {
            Some(ConfigKey::Back) => return Step::close(),
            Some(ConfigKey::Patch) => return self.open_patch(),
            Some(ConfigKey::Read) => return Step::effects(self.node.read(NAME, true)),
            Some(ConfigKey::Fold(all)) => self.fold(*all),
            None => {}
        }
        if let Some(step) = intent(MOVE_KEYS, event) {
            let last = self.rows().len().saturating_sub(1);
            self.cursor = step.from(self.cursor, last, shared.pane_rows());
        }
        Step::default()
    }

    fn on_news(&mut self, news: &ScreenNews, _shared: &Shared) -> bool {
        let folded = self.node.on_news(news);
        if folded && self.node.error.is_none() {
            self.shown();
        }
        folded
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, _shared: &Shared, look: &Look) {
        view::render(self, look, area, buf);
    }
}

#[cfg(test)]
mod tests;
