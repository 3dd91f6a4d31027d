//! The node detail: every field of one node (with the source that listed it
//! and how stale it is when it stopped answering), every problem it has, most
//! severe first, its services with health (etcd's as its member list says),
//! and its recent events, newest first. Left/Right (and `h`) step to the neighbouring rows
//! of the nodes pane.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::Look;
use super::progress_parts::render_scrolled;
use super::table::{framed, tone_style};
use crate::app::prepared;
use crate::app::rows::ready_cell;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::clock::age_text;
use crate::fleet::problems::{Problem, Severity, node_problems, node_state};
use crate::fleet::summary::role_word;
use crate::fleet::{ClusterLive, NodeStatus};
use crate::tui::Role;

/// Every field of `node`, one line each: its name, then its value in the value's style.
fn fields(
    state: &AppState,
    look: &Look,
    live: &ClusterLive,
    node: &NodeStatus,
) -> Vec<Line<'static>> {
    let s = &look.styles;
    let none = look.glyphs.none;
    let or_none = |v: Option<String>| v.unwrap_or_else(|| none.to_string());
    let yes_no = |v: Option<bool>, yes: &str, no: &str| {
        or_none(v.map(|b| if b { yes } else { no }.to_string()))
    };
    let standing = ready_cell(node_state(node));
    let unmet: Vec<String> = (node.unmet_conditions.iter())
        .map(|c| format!("{} ({})", c.name, c.reason))
        .collect();
    let unmet = match unmet.is_empty() {
        true => (none.to_string(), s.get(Role::Text)),
        false => (unmet.join(", "), s.get(Role::Warn)),
    };
    let answered = match (node.error.as_ref(), live.node_last_answer(&node.address)) {
        (None, _) => ("answered the last probe".to_string(), s.get(Role::Ok)),
        (Some(_), Some(at)) => match state.now {
            Some(now) => {
                let age = age_text(now.saturating_duration_since(at));
                (format!("{age} ago"), s.get(Role::Error))
            }
            None => ("before the last probe".to_string(), s.get(Role::Error)),
        },
        (Some(_), None) => ("never answered".to_string(), s.get(Role::Error)),
    };
    let down_since = (live.down_since.get(&node.address))
        .filter(|_| node.error.is_some())
        .map(|&since| {
            (
                "down since",
                state.zone.time_of_day(since),
                s.get(Role::Error),
            )
        });
    let text = |name, value: String| (name, value, s.get(Role::Text));
    [
        text("name", node.name.clone()),
        text("address", node.address.clone()),
        text("source", node.source.as_str().to_string()),
        text("role", role_word(node.role).to_string()),
        ("state", standing.text, tone_style(look, standing.tone)),
        text("stage", or_none(node.stage.map(|s| s.to_string()))),
        text("talos ready", yes_no(Some(node.ready), "yes", "no")),
        ("unmet", unmet.0, unmet.1),
        text("talos", or_none(node.talos_version.clone())),
        text("kubelet", or_none(node.kubelet_version.clone())),
        text("k8s ready", yes_no(node.k8s_ready, "Ready", "NotReady")),
        text("cordoned", yes_no(node.cordoned, "yes", "no")),
        ("last answer", answered.0, answered.1),
    ]
    .into_iter()
    .chain(down_since)
    .map(|(name, value, style)| {
        Line::from(vec![
            Span::styled(format!("{name:<14}"), s.get(Role::Muted)),
            Span::styled(value, style),
        ])
    })
    .collect()
}

/// Every problem of the node, most severe first (the nodes pane shows the first).
fn problems(state: &AppState, live: &ClusterLive, node: &NodeStatus) -> Vec<Problem> {
    let h = prepared::health(state, &live.status.name, live);
    node_problems(&h.all, node).into_iter().cloned().collect()
}

fn services(
    look: &Look,
    live: &ClusterLive,
    node: &NodeStatus,
    problems: &[Problem],
) -> Vec<Line<'static>> {
    let s = &look.styles;
    let g = &look.glyphs;
    match live.services.get(&node.address) {
        None => vec![Line::from(Span::styled(
            "waiting for the node's services",
            s.get(Role::Muted),
        ))],
        Some((Err(e), _)) => vec![Line::from(Span::styled(
            format!("{} {e}", g.error),
            s.get(Role::Error),
        ))],
        Some((Ok(services), _)) => {
            let mut lines = vec![Line::from(Span::styled(
                format!("{:<14}{:<10}{}", "SERVICE", "STATE", "HEALTH"),
                s.get(Role::Header),
            ))];
            // The etcd service runs and answers its health check while its member
            // has an alarm or is unhealthy in the member list: say what etcd says.
            let etcd_problem = (problems.iter())
                .find(|p| p.severity == Severity::Etcd)
                .map(|p| p.on_node.to_uppercase());
            for svc in services {
                let (health, role) = match (svc.healthy, &etcd_problem) {
                    (_, Some(problem)) if svc.id == "etcd" => (problem.as_str(), Role::Error),
                    (Some(true), _) => ("ok", Role::Ok),
                    (Some(false), _) => ("UNHEALTHY", Role::Error),
                    (None, _) => ("?", Role::Muted),
                };
                let mut spans = vec![
                    Span::styled(
                        format!("{:<14}{:<10}", svc.id, svc.state),
                        s.get(Role::Text),
                    ),
                    Span::styled(health.to_string(), s.get(role)),
                ];
                if svc.healthy == Some(false) && !svc.last_message.is_empty() {
                    spans.push(Span::styled(
                        format!(" {}", svc.last_message),
                        s.get(Role::Muted),
                    ));
                }
                lines.push(Line::from(spans));
            }
            lines
        }
    }
}

fn events(
    state: &AppState,
    look: &Look,
    live: &ClusterLive,
    node: &NodeStatus,
) -> Vec<Line<'static>> {
    let s = &look.styles;
    match live.events.get(&node.address) {
        Some(log) if !log.is_empty() => log
            .iter()
            .rev()
            .map(|(_, unix, summary)| {
                let at = state.zone.time_of_day(*unix);
                Line::from(Span::styled(format!("{at} {summary}"), s.get(Role::Text)))
            })
            .collect(),
        _ => vec![Line::from(Span::styled(
            "no events yet",
            s.get(Role::Muted),
        ))],
    }
}

/// Draws the detail of the nodes table's selected node into `area`.
pub fn render(state: &AppState, look: &Look, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let data = prepared::table(state, TableKind::Nodes);
    let view = state.tables.get(TableKind::Nodes);
    let index = data.selected_index(view);
    let found = state.current_live().and_then(|live| {
        let key = data.selected_key(view)?;
        Some((live, live.status.nodes.iter().find(|n| n.address == key)?))
    });
    let Some((live, node)) = found else {
        let inner = framed(look, vec![Span::raw(" Node ")], true, area, buf);
        Paragraph::new("No such node any more. Esc goes back to the nodes pane.")
            .style(s.get(Role::Muted))
            .render(inner, buf);
        return;
    };
    let title = vec![
        Span::styled(format!(" Node {} ", node.name), s.get(Role::Title)),
        Span::styled(
            format!(
                "({} of {}, Left/Right for the others) ",
                index + 1,
                data.rows.len()
            ),
            s.get(Role::Muted),
        ),
    ];
    let inner = framed(look, title, true, area, buf);
    let fields = fields(state, look, live, node);
    let problems = problems(state, live, node);
    let listed: Vec<&str> = problems.iter().map(|p| p.on_node.as_str()).collect();
    let error = Line::from(vec![
        Span::styled(format!("{:<14}", "problems"), s.get(Role::Muted)),
        match problems.first() {
            Some(worst) if worst.severity.is_warning() => {
                Span::styled(listed.join("; "), s.get(Role::Error))
            }
            Some(_) => Span::styled(listed.join("; "), s.get(Role::Text)),
            None => Span::styled(look.glyphs.none, s.get(Role::Text)),
        },
    ]);
    let error_height = if inner.width > 0 {
        (error.width() as u16).div_ceil(inner.width).max(1)
    } else {
        1
    };
    let [top, error_area, events_area] = inner.layout(&Layout::vertical([
        Constraint::Length(fields.len() as u16),
        Constraint::Length(error_height),
        Constraint::Fill(1),
    ]));
    Paragraph::new(error)
        .wrap(Wrap { trim: true })
        .render(error_area, buf);
    let [left, right] = top.layout(&Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Fill(1),
    ]));
    Paragraph::new(fields)
        .wrap(Wrap { trim: true })
        .render(left, buf);
    Paragraph::new(services(look, live, node, &problems))
        .wrap(Wrap { trim: true })
        .render(right, buf);
    let [heading, events_area] = events_area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
    ]));
    Paragraph::new(Line::from(Span::styled(
        "Recent events (j/k scroll)",
        s.get(Role::Title),
    )))
    .render(heading, buf);
    let lines = events(state, look, live, node);
    let scroll = &state.node_events;
    let selected = scroll.at(lines.len(), 0);
    let marked = scroll.is_set().then_some(selected);
    render_scrolled(look, lines, selected, marked, events_area, buf);
}
