//! The node resources pane: the node's problems first, then CPU, memory, load and uptime,
//! its disks, volumes (coloured by how full), links, addresses and routes, in the words of
//! `node info` (`node_resources::text`); or its processes as `top` lists them, in the
//! screen's order. Scrolled by the screen's move keys.
use ratatui::buffer::Buffer;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{REFRESH, ResourcesScreen};
use crate::node_resources::text;
use crate::node_resources::{Level, NodeResources, SortKey, sort_processes};
use crate::tui::{Look, Role};
use crate::views::table::pane_block;

pub struct ResourcesPane<'a> {
    screen: &'a ResourcesScreen,
    look: &'a Look,
}

fn role(level: Level) -> Role {
    match level {
        Level::Ok => Role::Text,
        Level::Warning => Role::Warn,
        Level::Failing => Role::Error,
    }
}

/// The document's lines, each with the role it is drawn in.
fn lines(d: &NodeResources) -> Vec<(String, Role)> {
    let mut out = vec![(text::heading(d), role(d.level))];
    out.extend(
        d.problems
            .iter()
            .map(|p| (format!("  ! {p}"), role(d.level))),
    );
    out.extend(text::overview(d).into_iter().map(|(t, l)| (t, role(l))));
    let mut section = |title: &str, rows: Vec<(String, Role)>| {
        out.push((String::new(), Role::Text));
        out.push((title.to_string(), Role::Header));
        out.extend(rows.into_iter().map(|(t, r)| (format!("  {t}"), r)));
    };
    let plain = |t: String| (t, Role::Text);
    section(
        "DISKS",
        d.disks.iter().map(|x| plain(text::disk_row(x))).collect(),
    );
    let volumes = d
        .volumes
        .iter()
        .map(|v| (text::volume_row(v), role(v.level)));
    section("VOLUMES", volumes.collect());
    section(
        "LINKS",
        d.links.iter().map(|x| plain(text::link_row(x))).collect(),
    );
    let addresses = d.addresses.iter().map(|x| plain(text::address_row(x)));
    section("ADDRESSES", addresses.collect());
    section("ROUTES", vec![plain(text::routes_summary(&d.routes))]);
    out
}

/// The node's heading, then its processes in the screen's order.
fn process_lines(d: &NodeResources, sort: SortKey) -> Vec<(String, Role)> {
    let mut processes = d.processes.clone();
    sort_processes(&mut processes, sort);
    let mut out = vec![(text::heading(d), role(d.level))];
    out.push((text::process_header(), Role::Header));
    out.extend(processes.iter().map(|p| (text::process_row(p), Role::Text)));
    out
}

fn on_view(screen: &ResourcesScreen, d: &NodeResources) -> Vec<(String, Role)> {
    match screen.processes {
        true => process_lines(d, screen.sort),
        false => lines(d),
    }
}

/// How many lines the screen's view of the document takes (the scroll's bound).
pub(super) fn line_count(screen: &ResourcesScreen, d: &NodeResources) -> usize {
    on_view(screen, d).len()
}

impl<'a> ResourcesPane<'a> {
    pub fn new(screen: &'a ResourcesScreen, look: &'a Look) -> ResourcesPane<'a> {
        ResourcesPane { screen, look }
    }
}

impl Widget for &ResourcesPane<'_> {
    fn render(self, area: ratatui::layout::Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let node = self.screen.request.as_ref().map(|r| &r.node);
        let what = match (self.screen.processes, self.screen.sort) {
            (false, _) => "Resources",
            (true, SortKey::Cpu) => "Processes, busiest first,",
            (true, SortKey::Memory) => "Processes, by memory,",
        };
        let title = format!(
            " {what} of {}, read every {} s ",
            node.map_or_else(String::new, |n| crate::printable::line(&n.name)),
            REFRESH.as_secs()
        );
        let block = pane_block(
            self.look,
            vec![Span::styled(title, s.get(Role::Title))],
            true,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        let mut shown: Vec<Line> = Vec::new();
        if let Some(why) = &self.screen.error {
            let why = crate::printable::line(why);
            shown.push(Line::from(Span::styled(why, s.get(Role::Error))));
        }
        match &self.screen.document {
            None if self.screen.error.is_none() => {
                let name = node.map_or_else(String::new, |n| crate::printable::line(&n.address));
                let reading = format!("reading {name} (CPU is measured over a second)...");
                shown.push(Line::from(Span::styled(reading, s.get(Role::Muted))));
            }
            None => {}
            Some(d) => {
                let rows = on_view(self.screen, d);
                let skip = self
                    .screen
                    .scroll
                    .min(rows.len().saturating_sub(usize::from(inner.height)));
                let rows = rows.into_iter().skip(skip);
                shown.extend(rows.map(|(t, r)| Line::from(Span::styled(t, s.get(r)))));
            }
        }
        let wrap = self.screen.document.is_none();
        let paragraph = Paragraph::new(shown);
        match wrap {
            true => paragraph.wrap(Wrap { trim: true }).render(inner, buf),
            false => paragraph.render(inner, buf),
        }
    }
}
