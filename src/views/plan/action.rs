//! The plan of one node, etcd, delete or CAPI doctor fix action: what it does and to what (for
//! etcd, every member's database against the quota and the calls in their order; for a delete,
//! the VMs or service, contexts and journals), the guards worst first with their reasons (the
//! plan screens' own guards pane), and whether Start is offered or which acknowledgement to type.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::{ChecksPane, NO_GUARDS_YET};
use crate::app::actions::{ActionPlan, ActionPlanScreen};
use crate::app::plan_screen::GuardedPlan;
use crate::app::state::AppState;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::approval::NodeOperation;
use crate::etcd_maintenance::{EtcdPlan, MemberSpace};
use crate::node_actions::{NodeActionPlan, NodeSurvey};
use crate::printable::{bytes_text, line as printable};
use crate::tui::Role;
use crate::views::Look;
use crate::views::progress_parts::{StepTable, render_step_pane};

pub struct ActionPlanView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> ActionPlanView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ActionPlanView<'a> {
        ActionPlanView { state, look }
    }
}

static MEMBER_COLUMNS: &[Column] = &[
    col("MEMBER", Width::Content),
    col("ID", Width::Content),
    col("LEADER", Width::Content),
    col("HEALTHY", Width::Content),
    col("DB SIZE", Width::Content),
    col("IN USE", Width::Content),
    col("ALARM", Width::Fill(1)),
];

fn member_rows(members: &[MemberSpace]) -> Vec<TableRow> {
    let size =
        |b: Option<i64>| b.map_or_else(TableCell::unknown, |b| TableCell::plain(bytes_text(b)));
    members
        .iter()
        .map(|m| TableRow {
            key: m.id.clone(),
            cells: vec![
                TableCell::plain(printable(&m.hostname)),
                TableCell::plain(&m.id),
                TableCell::plain(if m.leader { "yes" } else { "-" }),
                if m.healthy {
                    TableCell::new("yes", Tone::Ok)
                } else {
                    TableCell::new("no", Tone::Error)
                },
                size(m.db_size),
                size(m.db_size_in_use),
                match &m.alarm {
                    Some(alarm) => TableCell::new(alarm, Tone::Error),
                    None => TableCell::plain("-"),
                },
            ],
        })
        .collect()
}

/// What a node action does, in the order the runner does it.
fn node_steps(plan: &NodeActionPlan) -> String {
    let node = &plan.node;
    match &plan.operation {
        NodeOperation::Reboot => format!(
            "cordon and drain {node}, reboot it, follow it until it is back (booted again, \
             running, ready, Kubernetes Ready, etcd healthy), uncordon"
        ),
        NodeOperation::Shutdown => {
            format!("cordon and drain {node}, shut it down, wait until it stops answering")
        }
        NodeOperation::Cordon => format!("mark {node} unschedulable"),
        NodeOperation::Uncordon => format!("mark {node} schedulable again"),
        NodeOperation::Drain => {
            format!("cordon {node}, evict its pods as their disruption budgets allow")
        }
        NodeOperation::ServiceRestart(service) => {
            format!("restart {service} on {node}, wait until it runs healthy again")
        }
    }
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

impl ActionPlanView<'_> {
    fn summary(&self, screen: &ActionPlanScreen) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let mut lines = vec![Line::from(Span::styled(
            capitalised(&screen.title()),
            s.get(Role::Title),
        ))];
        let text = |t: String| Line::from(Span::styled(t, s.get(Role::Text)));
        match &screen.plan {
            ActionPlan::Node { plan, survey } => {
                let member = plan
                    .etcd_member
                    .as_ref()
                    .map_or("no etcd member".to_string(), |m| format!("etcd member {m}"));
                lines.push(text(format!(
                    "{} at {}, {}, {member}; {}",
                    plan.node,
                    plan.address,
                    plan.role.as_str(),
                    survey_line(plan, survey.as_ref())
                )));
                lines.push(text(format!("Steps: {}", node_steps(plan))));
            }
            ActionPlan::Etcd { plan: Ok(plan), .. } => {
                lines.push(text(format!("Steps: {}", etcd_steps(plan))));
            }
            ActionPlan::Etcd { plan: Err(e), .. } => {
                lines.push(Line::from(Span::styled(e.clone(), s.get(Role::Error))));
            }
            ActionPlan::CapiFix { finding, plan } => {
                lines.push(text(printable(&finding.summary)));
                match plan {
                    Ok(plan) => {
                        let steps: Vec<String> = plan
                            .steps()
                            .iter()
                            .enumerate()
                            .map(|(i, step)| format!("{}. {}", i + 1, printable(step)))
                            .collect();
                        lines.push(text(format!("Steps: {}", steps.join(", "))));
                    }
                    Err(e) => {
                        lines.push(Line::from(Span::styled(printable(e), s.get(Role::Error))))
                    }
                }
            }
            ActionPlan::Delete { plan, warnings } => {
                match plan {
                    None => lines.push(Line::from(Span::styled(
                        "reading the create journal, the provider and the rollout Lease...",
                        s.get(Role::Muted),
                    ))),
                    Some(Ok(plan)) => {
                        lines.extend(plan.table().lines().map(|l| text(printable(l))))
                    }
                    Some(Err(e)) => {
                        lines.push(Line::from(Span::styled(printable(e), s.get(Role::Error))))
                    }
                }
                for w in warnings {
                    lines.push(Line::from(Span::styled(printable(w), s.get(Role::Warn))));
                }
            }
            ActionPlan::CapiScale(plan) => {
                lines.extend(super::capi_scale::summary_lines(self.look, plan))
            }
            ActionPlan::Forget { plan: Ok(plan), .. } => {
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
            ActionPlan::Forget { plan: Err(e), .. } => {
                lines.push(Line::from(Span::styled(printable(e), s.get(Role::Error))));
            }
        }
        lines
    }
}

fn etcd_steps(plan: &EtcdPlan) -> String {
    plan.steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            format!(
                "{}. {} {}",
                i + 1,
                step.call.as_str(),
                printable(&step.node)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Widget for &ActionPlanView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Some(screen) = self.state.actions.plan.as_ref() else {
            return;
        };
        let summary = self.summary(screen);
        let members = match &screen.plan {
            ActionPlan::Etcd { plan: Ok(plan), .. } => Some(plan),
            ActionPlan::CapiFix {
                plan: Ok(crate::capi_doctor::FixPlan::Etcd(plan)),
                ..
            } => Some(plan),
            _ => None,
        };
        // Wrapped summary lines, roughly.
        let width = usize::from(area.width.saturating_sub(2)).max(1);
        let summary_rows: usize = summary.iter().map(|l| l.width() / width + 1).sum();
        let members_rows = members.map_or(0, |p| p.members.len() as u16 + 3);
        let [top, members_area, guards_area, bottom] = area.layout(&Layout::vertical([
            Constraint::Length(summary_rows as u16),
            Constraint::Length(members_rows),
            Constraint::Min(4),
            Constraint::Length(1),
        ]));
        Paragraph::new(summary)
            .block(Block::new().padding(Padding::horizontal(1)))
            .wrap(Wrap { trim: true })
            .render(top, buf);
        if let Some(plan) = members {
            let table = StepTable {
                columns: MEMBER_COLUMNS,
                rows: member_rows(&plan.members),
                total: plan.members.len(),
                selected: None,
                active: false,
                empty: "no etcd member reported",
            };
            let title = format!(" Members (quota {}) ", bytes_text(plan.quota));
            render_step_pane(self.look, title, false, Ok(table), members_area, buf);
        }
        // No guard yet: the reason Start is refused says what is still awaited (the node's
        // survey, the plan's own error), never "no status" while there is one.
        let waiting = screen.start_refused();
        let checks = ChecksPane::of(screen, waiting.as_deref().unwrap_or(NO_GUARDS_YET));
        checks.render(self.look, self.state.readonly, guards_area, bottom, buf);
    }
}
