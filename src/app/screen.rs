//! Where the operator is: the main screen, the pane of the cluster view, and
//! how each of its tables is looked at (selection, sort, filter).

/// The main pane, under any overlay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Screen {
    /// One row per cluster with its health: the first screen.
    #[default]
    Fleet,
    /// How discovery paired contexts (`:contexts`): files, endpoints, pairing.
    Clusters,
    /// The cluster in use, on one pane (all three side by side when wide).
    Cluster(Pane),
    /// Every field of one node (the nodes table's selection), its services
    /// and recent events.
    NodeDetail,
    /// A screen that is a module of its own (`views/<screen>/`), by name.
    Module(super::screen_io::ScreenName),
}

impl Screen {
    /// Its name: a main screen's (`fleet`, `contexts`, `cluster`, `node`: where `keymap` finds
    /// its keys), a module's.
    pub fn name(self) -> super::screen_io::ScreenName {
        match self {
            Screen::Fleet => "fleet",
            Screen::Clusters => "contexts",
            Screen::Cluster(_) => "cluster",
            Screen::NodeDetail => "node",
            Screen::Module(name) => name,
        }
    }

    /// Whether it is one of the main screens of the cluster in use: its panes, node detail.
    pub fn of_cluster_in_use(self) -> bool {
        matches!(self, Screen::Cluster(_) | Screen::NodeDetail)
    }
}

/// The panes of the cluster view, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Nodes,
    Etcd,
    Versions,
}

impl Pane {
    pub const ALL: [Pane; 3] = [Pane::Nodes, Pane::Etcd, Pane::Versions];

    pub fn next(self) -> Pane {
        Pane::ALL[(self as usize + 1) % Pane::ALL.len()]
    }

    pub fn table(self) -> TableKind {
        match self {
            Pane::Nodes => TableKind::Nodes,
            Pane::Etcd => TableKind::Etcd,
            Pane::Versions => TableKind::Versions,
        }
    }
}

/// The tables the operator can filter, sort and select in; each one's spec is
/// `TableKind::spec` (`rows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableKind {
    Fleet,
    /// The discovery list (`:contexts`).
    Clusters,
    Nodes,
    Etcd,
    Versions,
}

/// How one table is looked at: the selected row by identity (cluster name,
/// node address, member id), the sort column and direction, the filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableView {
    pub selected: Option<String>,
    pub sort: usize,
    pub reverse: bool,
    pub filter: String,
}
