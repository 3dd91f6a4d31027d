//! The node resources screen (`i` in node detail, `:resources [NODE]`): what runs inside one
//! node and what it holds, the document `taloscope node info` prints (`node_resources`), read
//! again every 2 s while the screen is on top and not otherwise (`console::run_node_read`);
//! `p` shows its processes as `taloscope top --node` lists them, sorted by CPU or memory, as a
//! tree (`t`) and filtered by their command line (`/`); `s`
//! its storage (disks, volumes, what fills EPHEMERAL), `n` its network (links, addresses,
//! routes, KubeSpan peers, connections filtered by state and port with `/`), `o` its pods'
//! containers. State, keys and update step here, the drawing in `view`.
use std::time::Duration;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::action::Effect;
use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, bind, intent, lines_with_moves};
use crate::app::message::Message;
use crate::app::screens::{Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step};
use crate::node_resources::{NodeResources, SortKey};
use crate::tui::Look;
use crate::views::node_read::{NodeNews, NodeReading};

mod view;

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "resources";

/// The logs screen's name, which `Enter` on a container opens (by name: screens never
/// import each other).
const LOGS: ScreenName = "logs";

/// How often the node is read while the screen is on top.
pub const REFRESH: Duration = Duration::from_secs(2);

/// Where the screen opens from, when it cannot tell which node.
const WHERE_IT_OPENS: &str = "i in node detail, or :resources NODE, shows a node's resources";

/// One read of the node, or why it failed.
pub type ResourcesNews = NodeNews<NodeResources>;

/// The node shown, its latest document and how far it is scrolled.
#[derive(Debug, Clone, Default)]
pub struct ResourcesScreen {
    pub node: NodeReading<NodeResources>,
    pub scroll: usize,
    /// What of the document is shown.
    pub section: Section,
    /// The processes' order.
    pub sort: SortKey,
    /// The connections shown in the network section: by state (`listen`), port (`6443`) or
    /// both, as typed after `/`.
    pub connections: ConnectionFilter,
    /// The container selected in the containers section, by its place.
    pub selected: usize,
    /// The processes as a tree, each under its parent.
    pub tree: bool,
    /// The processes shown: those whose command line holds this text (any case), as typed
    /// after `/` (with their parents in the tree).
    pub process_filter: String,
}

/// What of the node the screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Section {
    /// CPU, memory, load, uptime, disks, volumes, links, addresses and routes at a glance.
    #[default]
    Overview,
    Processes,
    Storage,
    Network,
    Containers,
}

/// Which connections the network section lists; empty: all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionFilter {
    pub state: Option<String>,
    pub port: Option<u32>,
}

impl ConnectionFilter {
    /// `listen`, `6443`, `established 2379`: a number is a port, a word a state.
    pub fn parse(text: &str) -> ConnectionFilter {
        let mut filter = ConnectionFilter::default();
        for word in text.split_whitespace() {
            match word.parse::<u32>() {
                Ok(port) => filter.port = Some(port),
                Err(_) => filter.state = Some(word.to_ascii_uppercase()),
            }
        }
        filter
    }

    /// As typed: `ESTABLISHED 2379`.
    pub fn text(&self) -> String {
        let port = self.port.map(|p| p.to_string());
        (self.state.iter().cloned().chain(port))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResourcesKey {
    Show(Section),
    Sort(SortKey),
    Filter,
    Tree,
    Logs,
    Back,
}

#[rustfmt::skip]
static KEYS: &[Binding<ResourcesKey, ResourcesScreen>] = &[
    bind(&[Key::char('p')], ResourcesKey::Show(Section::Processes), "the node's processes, or back to its resources").footer("processes").offered(showing_overview),
    bind(&[Key::char('s')], ResourcesKey::Show(Section::Storage), "its disks, volumes and what fills EPHEMERAL, or back").footer("storage").offered(showing_overview),
    bind(&[Key::char('n')], ResourcesKey::Show(Section::Network), "its links, addresses, routes, KubeSpan peers and connections, or back").footer("network").offered(showing_overview),
    bind(&[Key::char('o')], ResourcesKey::Show(Section::Containers), "its pods' containers, or back").footer("pods").offered(showing_overview),
    bind(&[Key::char('c')], ResourcesKey::Sort(SortKey::Cpu), "processes busiest first").footer("by CPU").offered(showing_processes),
    bind(&[Key::char('m')], ResourcesKey::Sort(SortKey::Memory), "processes by resident memory").footer("by memory").offered(showing_processes),
    bind(&[Key::char('t')], ResourcesKey::Tree, "processes as a tree, each under its parent, or a list").footer("tree").offered(showing_processes),
    bind(&[Key::char('/')], ResourcesKey::Filter, "processes by their command line; connections by state and port (`listen`, `6443`, `established 2379`)").footer("filter").offered(filtering),
    bind(&[Key::ENTER], ResourcesKey::Logs, "the selected container's logs (the logs screen)").footer("logs").offered(showing_containers),
    bind(&[Key::ESC, Key::char('q')], ResourcesKey::Back, "back to the overview, from it where the screen was opened").footer("back"),
];

fn showing_overview(screen: &ResourcesScreen) -> bool {
    screen.section == Section::Overview
}

fn showing_processes(screen: &ResourcesScreen) -> bool {
    screen.section == Section::Processes
}

fn showing_containers(screen: &ResourcesScreen) -> bool {
    screen.section == Section::Containers
}

fn filtering(screen: &ResourcesScreen) -> bool {
    matches!(screen.section, Section::Network | Section::Processes)
}

impl ResourcesScreen {
    /// The logs screen on the selected container (`:logs namespace/pod:container NODE`).
    fn container_logs(&self) -> Step {
        let container = (self.node.document.as_ref()).and_then(|d| d.containers.get(self.selected));
        let (Some(c), Some(request)) = (container, &self.node.request) else {
            return Step::message(Message::info("no container to read the logs of"));
        };
        let id = format!("{}/{}:{}", c.namespace, c.pod, c.name);
        let words = vec!["logs".to_string(), id, request.node.name.clone()];
        Step::open(LOGS, words)
    }
}

impl ScreenModule for ResourcesScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Node resources, processes, storage, network and containers (i in node detail, :resources NODE)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(KEYS, self)
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        *self = ResourcesScreen {
            node: self.node.open(opening, shared, WHERE_IT_OPENS)?,
            ..ResourcesScreen::default()
        };
        Ok(Step::default())
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match intent(KEYS, event) {
            Some(ResourcesKey::Back) if self.section == Section::Overview => return Step::close(),
            Some(ResourcesKey::Back) => {
                self.section = Section::Overview;
                self.scroll = 0;
            }
            Some(ResourcesKey::Show(section)) => {
                // The key of the section on screen goes back to the overview.
                self.section = match self.section == *section {
                    true => Section::Overview,
                    false => *section,
                };
                self.scroll = 0;
            }
            Some(ResourcesKey::Sort(key)) if self.section == Section::Processes => {
                self.sort = *key;
                self.scroll = 0;
            }
            Some(ResourcesKey::Filter) if filtering(self) => {
                let typed = match self.section {
                    Section::Processes => self.process_filter.clone(),
                    _ => self.connections.text(),
                };
                return Step::filter(typed);
            }
            Some(ResourcesKey::Tree) if self.section == Section::Processes => {
                self.tree = !self.tree;
                self.scroll = 0;
            }
            Some(ResourcesKey::Logs) if self.section == Section::Containers => {
                return self.container_logs();
            }
            Some(
                ResourcesKey::Sort(_)
                | ResourcesKey::Filter
                | ResourcesKey::Tree
                | ResourcesKey::Logs,
            )
            | None => {}
        }
        let (Some(step), Some(d)) = (intent(MOVE_KEYS, event), &self.node.document) else {
            return Step::default();
        };
        let rows = shared.pane_rows();
        if self.section == Section::Containers {
            let last = d.containers.len().saturating_sub(1);
            self.selected = step.from(self.selected, last, rows);
            // The selected row stays in view.
            let line = view::selected_container_line(d, self.selected).unwrap_or(0);
            self.scroll = self.scroll.min(line).max((line + 1).saturating_sub(rows));
        } else {
            let last = view::line_count(self, d).saturating_sub(rows);
            self.scroll = step.from(self.scroll, last, rows);
        }
        Step::default()
    }

    fn set_filter(&mut self, text: &str) {
        match self.section {
            Section::Processes => self.process_filter = text.trim().to_string(),
            _ => self.connections = ConnectionFilter::parse(text),
        }
        self.scroll = 0;
    }

    fn on_news(&mut self, news: &ScreenNews, _shared: &Shared) -> bool {
        self.node.on_news(news)
    }

    /// Reads run while the screen is on top, and stop as it leaves.
    fn settle(&mut self, on_top: bool) -> Vec<Effect> {
        self.node.settle(NAME, REFRESH, on_top)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, _shared: &Shared, look: &Look) {
        view::render(self, look, area, buf);
    }
}

#[cfg(test)]
mod tests;
