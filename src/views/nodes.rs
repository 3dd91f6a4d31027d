//! The nodes pane: name, role, address, the source that listed the node
//! (talosconfig, discovery, etcd, kubernetes), machine stage, Ready (a word),
//! Talos and kubelet versions, cordon, and the issue: how stale a node that
//! stopped answering is and why, or which conditions it waits for.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use super::Look;
use super::table::DataTable;
use crate::app::prepared;
use crate::app::screen::TableKind;
use crate::app::state::AppState;

pub struct NodesPane<'a> {
    state: &'a AppState,
    look: &'a Look,
    active: bool,
}

impl<'a> NodesPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look, active: bool) -> NodesPane<'a> {
        NodesPane {
            state,
            look,
            active,
        }
    }
}

impl Widget for &NodesPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let data = prepared::table(self.state, TableKind::Nodes);
        DataTable {
            data: &data,
            view: &self.state.tables.nodes,
            look: self.look,
            title: "Nodes",
            active: self.active,
            empty: "No node has answered yet.",
        }
        .render_block(area, buf);
    }
}
