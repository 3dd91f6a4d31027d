//! The node resources pane: the node's problems first, then CPU, memory, load and uptime,
//! its disks, volumes (coloured by how full), links, addresses and routes, in the words of
//! `node info` (`node_resources::text`); or one section of them: its processes as `top` lists
//! them in the screen's order, its storage, its network with the connections the screen's
//! filter lets through, its containers. Scrolled by the screen's move keys.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ConnectionFilter, REFRESH, ResourcesScreen, Section};
use crate::node_resources::text::{self, Lines, Tone, heading_lines, plain, section};
use crate::node_resources::{Level, NodeResources, SortKey, shown_processes};
use crate::tui::{Look, Role};
use crate::views::table::titled;

fn role(tone: Tone) -> Role {
    match tone {
        Tone::Text | Tone::At(Level::Ok) => Role::Text,
        Tone::Title => Role::Header,
        Tone::Quiet => Role::Muted,
        Tone::At(Level::Warning) => Role::Warn,
        Tone::At(Level::Failing) => Role::Error,
    }
}

/// The overview: CPU, memory, load and uptime, disks, volumes, links, addresses, routes.
fn overview(d: &NodeResources) -> Lines {
    let mut out = text::overview_lines(d);
    text::disks_and_volumes(&mut out, d);
    text::links_and_addresses(&mut out, d);
    section(
        &mut out,
        "ROUTES",
        vec![plain(text::routes_summary(&d.routes))],
    );
    out
}

/// Disks, volumes by fill and what fills EPHEMERAL, largest first.
fn storage(d: &NodeResources) -> Lines {
    let mut out = heading_lines(d);
    text::disks_and_volumes(&mut out, d);
    text::ephemeral(&mut out, d);
    out
}

/// Links, addresses, every route, KubeSpan peers, and the connections `filter` lets through.
fn network(d: &NodeResources, filter: &ConnectionFilter) -> Lines {
    let mut out = heading_lines(d);
    text::links_and_addresses(&mut out, d);
    let routes = d.routes.routes.iter().map(|r| plain(text::route_row(r)));
    let title = format!("ROUTES {}", text::routes_summary(&d.routes));
    section(&mut out, &title, routes.collect());
    text::kubespan_peers(&mut out, d);
    let shown: Vec<_> = (d.connections.iter())
        .filter(|c| c.matches(filter.state.as_deref(), filter.port))
        .collect();
    let title = match filter.text() {
        all if all.is_empty() => format!("CONNECTIONS {} (/ filters)", d.connections.len()),
        typed => format!(
            "CONNECTIONS {} of {} matching {typed:?}",
            shown.len(),
            d.connections.len()
        ),
    };
    let mut rows = vec![(text::connection_header(), Tone::Title)];
    rows.extend(shown.into_iter().map(|c| plain(text::connection_row(c))));
    section(&mut out, &title, rows);
    out
}

/// The pods' containers, a column head over them, the selected one marked (`Enter` opens its
/// logs).
fn containers(d: &NodeResources, selected: usize) -> Lines {
    let mut out = heading_lines(d);
    let mut rows = vec![(text::container_header(), Tone::Title)];
    rows.extend(d.containers.iter().map(|c| {
        let tone = match c.state.as_str() {
            "running" => Tone::Text,
            "exited" | "unknown" => Tone::At(Level::Warning),
            _ => Tone::Quiet,
        };
        (text::container_row(c), tone)
    }));
    let title = format!("CONTAINERS {} (Enter: logs)", d.containers.len());
    section(&mut out, &title, rows);
    if let Some(line) = selected_container_line(d, selected) {
        let marked = format!("> {}", &out[line].0[2..]);
        out[line].0 = marked;
    }
    out
}

/// Where the selected container's row is among the containers section's lines.
pub(super) fn selected_container_line(d: &NodeResources, selected: usize) -> Option<usize> {
    // The heading and problems, a blank line, the title and the column head.
    let first = 1 + d.problems.len() + 3;
    (selected < d.containers.len()).then_some(first + selected)
}

/// The node's heading, then its processes in the screen's order, as a list or a tree (each
/// command under its parent's, indented), only those whose command line holds `filter`.
fn process_lines(d: &NodeResources, screen: &ResourcesScreen) -> Lines {
    let filter = &screen.process_filter;
    let shown = shown_processes(&d.processes, screen.sort, screen.tree, filter);
    let mut out = vec![(text::heading(d), Tone::At(d.level))];
    if !filter.is_empty() {
        let count = shown.iter().filter(|(_, p)| p.matches(filter)).count();
        let what = format!(
            "{count} of {} processes matching {filter:?}",
            d.processes.len(),
        );
        out.push((what, Tone::Quiet));
    }
    out.push((text::process_header(), Tone::Title));
    out.extend(shown.into_iter().map(|(depth, mut p)| {
        let indent = "  ".repeat(depth);
        p.args = format!("{indent}{}", p.args);
        p.command = format!("{indent}{}", p.command);
        (text::process_row(&p), Tone::Text)
    }));
    out
}

fn on_view(screen: &ResourcesScreen, d: &NodeResources) -> Lines {
    match screen.section {
        Section::Overview => overview(d),
        Section::Processes => process_lines(d, screen),
        Section::Storage => storage(d),
        Section::Network => network(d, &screen.connections),
        Section::Containers => containers(d, screen.selected),
    }
}

/// How many lines the screen's view of the document takes (the scroll's bound).
pub(super) fn line_count(screen: &ResourcesScreen, d: &NodeResources) -> usize {
    on_view(screen, d).len()
}

/// Draws the resources pane of `screen` into `area`.
pub(super) fn render(screen: &ResourcesScreen, look: &Look, area: Rect, buf: &mut Buffer) {
    let node = screen.node.request.as_ref().map(|r| &r.node);
    let what = match (screen.section, screen.sort, screen.tree) {
        (Section::Overview, _, _) => "Resources",
        (Section::Processes, SortKey::Cpu, false) => "Processes, busiest first,",
        (Section::Processes, SortKey::Memory, false) => "Processes, by memory,",
        (Section::Processes, SortKey::Cpu, true) => "Process tree, busiest first,",
        (Section::Processes, SortKey::Memory, true) => "Process tree, by memory,",
        (Section::Storage, _, _) => "Storage",
        (Section::Network, _, _) => "Network",
        (Section::Containers, _, _) => "Containers",
    };
    let title = format!(
        " {what} of {}, read every {} s ",
        node.map_or_else(String::new, |n| crate::printable::line(&n.name)),
        REFRESH.as_secs()
    );
    let inner = titled(look, title, true, area, buf);
    let waiting = |node: &str| format!("reading {node} (CPU is measured over a second)...");
    let lines = |_| {
        let Some(d) = &screen.node.document else {
            return Vec::new();
        };
        let rows = on_view(screen, d);
        // Scrolled as far as the whole pane's height allows (`line_count` bounds the scroll).
        let skip = (screen.scroll).min(rows.len().saturating_sub(usize::from(inner.height)));
        let selected = (screen.section == Section::Containers)
            .then(|| selected_container_line(d, screen.selected))
            .flatten();
        let rows = rows.into_iter().enumerate().skip(skip);
        rows.map(|(at, (t, tone))| {
            let role = if Some(at) == selected {
                Role::Selection
            } else {
                role(tone)
            };
            Line::from(Span::styled(t, look.styles.get(role)))
        })
        .collect()
    };
    screen.node.render(look, waiting, lines, inner, buf);
}
