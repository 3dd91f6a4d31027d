//! The actions screen drawn: the menu as a popup over the pane it was opened on (the chosen
//! entry marked; Enter opens its plan, nothing runs yet), or the chosen action's plan: what it
//! does and to what (for etcd, every member's database against the quota and the calls in
//! their order), then the guards and the last line every plan draws.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::{ActionsScreen, ChoicePlan, ChoicePlanScreen};
use crate::app::actions::ActionMenu;
use crate::app::screens::Shared;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::capi_doctor::FixPlan;
use crate::etcd_maintenance::{MEMBER_HEADER, MemberSpace};
use crate::node_actions::{NodeActionPlan, NodeSurvey};
use crate::printable::{bytes_text, line as printable};
use crate::tui::Role;
use crate::views::explain::popup_block;
use crate::views::plan_parts::{ChecksPane, NO_GUARDS_YET, SummaryPlan, capitalised, fitted};
use crate::views::progress_parts::StepTable;
use crate::views::{Look, centered};

const MENU_WIDTH: u16 = 56;

pub(super) fn draw(
    screen: &ActionsScreen,
    area: Rect,
    buf: &mut Buffer,
    shared: &Shared,
    look: &Look,
) {
    if let Some(plan) = &screen.plan {
        draw_plan(plan, area, buf, shared.readonly, look);
    } else if let Some(menu) = &screen.kept.menu {
        draw_menu(menu, area, buf, look);
    }
}

fn draw_menu(menu: &ActionMenu, area: Rect, buf: &mut Buffer, look: &Look) {
    let s = &look.styles;
    let height = u16::try_from(menu.items.len())
        .unwrap_or(u16::MAX)
        .saturating_add(4);
    let popup = centered(area, MENU_WIDTH, height);
    let room = usize::from(popup.width.saturating_sub(4));
    let subject = printable(&menu.subject);
    let mut lines: Vec<Line> = (menu.items.iter().enumerate())
        .map(|(i, item)| {
            let role = if i == menu.selected {
                Role::Selection
            } else {
                Role::Text
            };
            let text = format!("{} {}", i + 1, item.label(&subject));
            fitted(look, &text, role, room)
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled("Enter", s.get(Role::Key)),
        Span::styled(" shows the plan and guards", s.get(Role::Muted)),
    ]));
    let block = popup_block(look, format!(" Actions: {} in {} ", subject, menu.cluster));
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .block(block)
        .style(s.get(Role::Popup))
        .render(popup, buf);
}

fn draw_plan(screen: &ChoicePlanScreen, area: Rect, buf: &mut Buffer, readonly: bool, look: &Look) {
    let members = match &screen.plan {
        ChoicePlan::Etcd { plan: Ok(plan), .. }
        | ChoicePlan::CapiFix {
            plan: Ok(FixPlan::Etcd(plan)),
            ..
        } => Some(plan),
        _ => None,
    };
    let subjects = members.map(|plan| {
        let table = StepTable {
            columns: MEMBER_COLUMNS,
            rows: member_rows(&plan.members),
            total: plan.members.len(),
            selected: None,
            active: false,
            empty: "no etcd member reported",
        };
        (
            format!(" Members (quota {}) ", bytes_text(plan.quota)),
            table,
        )
    });
    // No guard yet: the reason Start is refused says what is still awaited (the node's
    // survey, the plan's own error), never "no status" while there is one.
    let waiting = screen.start_refused();
    let plan = SummaryPlan {
        summary: summary(screen, look),
        subjects,
        checks: ChecksPane::of(screen, waiting.as_deref().unwrap_or(NO_GUARDS_YET)),
    };
    plan.render(look, readonly, area, buf);
}

static MEMBER_COLUMNS: &[Column] = &[
    col(MEMBER_HEADER[0], Width::Content),
    col(MEMBER_HEADER[1], Width::Content),
    col(MEMBER_HEADER[2], Width::Content),
    col(MEMBER_HEADER[3], Width::Content),
    col(MEMBER_HEADER[4], Width::Content),
    col(MEMBER_HEADER[5], Width::Content),
    col(MEMBER_HEADER[6], Width::Fill(1)),
];

/// Each member's cells as `etcd alarms` prints them, its health and any alarm in their tones.
fn member_rows(members: &[MemberSpace]) -> Vec<TableRow> {
    let row = |m: &MemberSpace| {
        // The cells under MEMBER_HEADER: HEALTHY is the fourth, ALARM the last.
        let tone = |at: usize| match at {
            3 if m.healthy => Tone::Ok,
            3 => Tone::Error,
            6 if m.alarm.is_some() => Tone::Error,
            _ => Tone::Plain,
        };
        let cells = (m.cells().into_iter().enumerate())
            .map(|(at, cell)| {
                cell.map_or_else(TableCell::unknown, |t| {
                    TableCell::new(printable(&t), tone(at))
                })
            })
            .collect();
        TableRow {
            key: m.id.clone(),
            cells,
        }
    };
    members.iter().map(row).collect()
}

/// The plan's title, then what it does and to what.
fn summary(screen: &ChoicePlanScreen, look: &Look) -> Vec<Line<'static>> {
    let s = &look.styles;
    let title = capitalised(&screen.plan.title(&screen.cluster));
    let mut lines = vec![Line::from(Span::styled(title, s.get(Role::Title)))];
    let text = |t: String| Line::from(Span::styled(t, s.get(Role::Text)));
    let error = |e: &str| Line::from(Span::styled(printable(e), s.get(Role::Error)));
    match &screen.plan {
        ChoicePlan::Node { plan, survey } => {
            let member = (plan.etcd_member.as_ref())
                .map_or("no etcd member".to_string(), |m| format!("etcd member {m}"));
            lines.push(text(format!(
                "{} at {}, {}, {member}; {}",
                plan.node,
                plan.address,
                plan.role.as_str(),
                survey_line(plan, survey.as_ref())
            )));
            lines.push(text(format!("Steps: {}", plan.operation.does(&plan.node))));
        }
        ChoicePlan::Etcd { plan: Ok(plan), .. } => {
            let steps = (plan.steps.iter()).map(|s| format!("{} {}", s.call.as_str(), s.node));
            lines.push(text(format!("Steps: {}", numbered(steps))));
        }
        ChoicePlan::CapiFix { finding, plan } => {
            lines.push(text(printable(&finding.summary)));
            match plan {
                Ok(plan) => lines.push(text(format!("Steps: {}", numbered(plan.steps().iter())))),
                Err(e) => lines.push(error(e)),
            }
        }
        ChoicePlan::Forget { plan: Ok(plan), .. } => {
            lines.push(text(printable(&format!(
                "{} at {}: remove it from the {} of talosconfig context {}",
                plan.node,
                plan.address,
                plan.lists(),
                plan.context
            ))));
            lines.push(text(printable(&format!(
                "File {}; backup first: {}",
                plan.file.display(),
                plan.backup_named()
            ))));
            lines.push(text(
                "Role: none needed (it only edits a local file; no Talos API call)".into(),
            ));
        }
        ChoicePlan::Etcd { plan: Err(e), .. } | ChoicePlan::Forget { plan: Err(e), .. } => {
            lines.push(error(e))
        }
    }
    lines
}

fn survey_line(plan: &NodeActionPlan, survey: Option<&NodeSurvey>) -> String {
    let Some(survey) = survey else {
        return "reading the node's pods and services...".to_string();
    };
    let kube = match &survey.kube_node {
        Some(name) => format!("Kubernetes node {name}"),
        None => "no Kubernetes node".to_string(),
    };
    match (&survey.workloads, plan.drains()) {
        (Some(Ok(w)), true) => {
            let evict = w.pods.iter().filter(|p| p.must_evict()).count();
            format!("{kube}; {evict} pods to evict")
        }
        _ => kube,
    }
}

/// `1. first, 2. second`: a plan's steps in their order, each in printable text.
fn numbered<S: AsRef<str>>(steps: impl Iterator<Item = S>) -> String {
    (steps.enumerate())
        .map(|(i, step)| format!("{}. {}", i + 1, printable(step.as_ref())))
        .collect::<Vec<_>>()
        .join(", ")
}
