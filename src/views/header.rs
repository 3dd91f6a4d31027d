//! The top line: product name, the cluster in use, cluster and error counts,
//! a `PAUSED` marker while live data is frozen, and a `READ-ONLY` marker (a
//! word, not only a colour) under --readonly.
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{Look, fit};
use crate::app::state::AppState;
use crate::tui::Role;

/// ` via CONTEXT (ROLE)` when other contexts reach the cluster too: which one is in use.
fn context_in_use(state: &AppState, name: &str) -> String {
    let Some(cluster) = state.clusters.iter().find(|c| c.name == name) else {
        return String::new();
    };
    match cluster.talos_context() {
        Some(ctx) if !cluster.alternate_contexts().is_empty() => {
            let roles = cluster.talos_roles();
            if roles.is_empty() {
                format!(" via {ctx}")
            } else {
                format!(" via {ctx} ({roles})")
            }
        }
        _ => String::new(),
    }
}

/// Draws the top line into `area`.
pub fn render(state: &AppState, look: &Look, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let g = &look.glyphs;
    let mut right = Vec::new();
    let errors = state.errors.len();
    if errors > 0 {
        let plural = if errors == 1 { "" } else { "s" };
        let text = format!("{} {errors} error{plural} ", g.warn);
        right.push(Span::styled(text, s.get(Role::Warn)));
    }
    if state.paused {
        right.push(Span::styled(" PAUSED ", s.get(Role::ReadOnly)));
    }
    if state.readonly {
        right.push(Span::styled(" READ-ONLY ", s.get(Role::ReadOnly)));
    }
    let right = Line::from(right);
    let [left_area, right_area] = area.layout(&Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(right.width() as u16),
    ]));
    let sep = Span::styled(format!(" {} ", g.separator), s.get(Role::Muted));
    let count = format!("{} clusters", state.clusters.len());
    // The fixed parts, so the cluster name can be cut to what is left.
    let fixed =
        " taloscope".len() + 2 * (2 + g.separator.len()) + "cluster: ".len() + count.len() + 1;
    let room = (left_area.width as usize).saturating_sub(fixed);
    let cluster = match &state.current {
        Some(name) => {
            let shown = format!("{name}{}", context_in_use(state, name));
            Span::styled(fit(&shown, room, g.ellipsis), s.get(Role::Accent))
        }
        None => Span::styled("none", s.get(Role::Muted)),
    };
    let left = Line::from(vec![
        Span::styled(" taloscope", s.get(Role::Header)),
        sep.clone(),
        Span::styled("cluster: ", s.get(Role::Muted)),
        cluster,
        sep,
        Span::styled(count, s.get(Role::Text)),
    ]);
    Paragraph::new(left).render(left_area, buf);
    Paragraph::new(right)
        .alignment(Alignment::Right)
        .render(right_area, buf);
}
