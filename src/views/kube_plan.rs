//! The Kubernetes upgrade plan screen: target and pre-pull on top with the
//! removed-API count ("checking" until it arrives), the steps in upstream
//! order (component, node, from -> to), then the guards and the Start line,
//! drawn with the same guard pane and verdict line as the Talos plan.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::progress_parts::{StepTable, render_step_pane};
use super::upgrade_plan::{render_guards, verdict_line};
use super::{Look, fit};
use crate::app::kube_plan::KubePlanScreen;
use crate::app::state::AppState;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::app::upgrade_plan::PlanFocus;
use crate::tui::Role;
use crate::upgrade::kubernetes::{KubeStepState, KubernetesUpgradePlan};

static STEP_COLUMNS: &[Column] = &[
    col("#", Width::Fixed(2)),
    col("COMPONENT", Width::Fixed(23)),
    col("NODE", Width::Fixed(10)).wider(Width::Fixed(24)),
    wide("ADDRESS", Width::Fixed(15)),
    col("FROM -> TO", Width::Fixed(20)),
    col("STATE", Width::Fill(1)),
];

pub struct KubePlanView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> KubePlanView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> KubePlanView<'a> {
        KubePlanView { state, look }
    }

    fn step_rows(plan: &KubernetesUpgradePlan) -> Vec<TableRow> {
        plan.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let from = s.from.as_deref().unwrap_or("?");
                let (state, tone) = match s.state {
                    KubeStepState::Upgrade => ("apply", Tone::Plain),
                    KubeStepState::AlreadyOnTarget => ("on target", Tone::Muted),
                };
                TableRow {
                    key: i.to_string(),
                    cells: vec![
                        TableCell::plain((i + 1).to_string()),
                        TableCell::plain(s.component.as_str()),
                        TableCell::plain(&s.node),
                        TableCell::plain(&s.address),
                        TableCell::new(format!("{from} -> {}", plan.target), tone),
                        TableCell::new(state, tone),
                    ],
                }
            })
            .collect()
    }

    /// Target, pre-pull and the removed-API count, one line each.
    fn summary(&self, screen: &KubePlanScreen, width: usize) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let label = |t: &str| Span::styled(format!("{t:<9}"), s.get(Role::Muted));
        let rest = width.saturating_sub(9);
        let offered: Vec<String> = screen.targets.iter().map(ToString::to_string).collect();
        let from = match &screen.plan {
            Ok(plan) => format!(" from {}", plan.from),
            Err(_) => String::new(),
        };
        let target = screen.target.to_string();
        let mut lines = vec![Line::from(vec![
            label("Target"),
            Span::styled(target.clone(), s.get(Role::Accent)),
            Span::styled(
                fit(
                    &format!("{from}; offered: {} (t changes)", offered.join(", ")),
                    rest.saturating_sub(target.len()),
                    g.ellipsis,
                ),
                s.get(Role::Muted),
            ),
        ])];
        let on_off = if screen.pre_pull { "on" } else { "off" };
        lines.push(Line::from(vec![
            label("Pre-pull"),
            Span::styled(
                fit(
                    &format!(
                        "{on_off} (P): pull every new image on every node before the first step"
                    ),
                    rest,
                    g.ellipsis,
                ),
                s.get(Role::Text),
            ),
        ]));
        let (text, role) = match &screen.removed_apis {
            None => (crate::app::kube_plan::CHECKING.to_string(), Role::Muted),
            Some(Err(e)) => (format!("cannot count: {e}"), Role::Error),
            Some(Ok(counts)) => {
                let stored: Vec<String> = counts
                    .iter()
                    .filter(|c| c.count > 0)
                    .map(|c| format!("{} {}", c.count, c.api))
                    .collect();
                if counts.is_empty() {
                    (
                        "none: the target removes no API version in use here".to_string(),
                        Role::Ok,
                    )
                } else if stored.is_empty() {
                    (
                        format!("none stored ({} API versions checked)", counts.len()),
                        Role::Ok,
                    )
                } else {
                    (stored.join(", "), Role::Warn)
                }
            }
        };
        lines.push(Line::from(vec![
            label("Removed"),
            Span::styled(fit(&text, rest, g.ellipsis), s.get(role)),
        ]));
        lines
    }
}

impl Widget for &KubePlanView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(screen) = self.state.kube_upgrade.as_ref() else {
            Paragraph::new("No Kubernetes upgrade plan open: U on a cluster plans one.")
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let inner_width = usize::from(area.width.saturating_sub(2));
        let summary = self.summary(screen, inner_width);
        // The guards keep up to half of what is left; the steps take what
        // they need of the rest, and the guards any surplus.
        let top_height = summary.len() as u16;
        let left = area.height.saturating_sub(top_height + 1);
        let guards_height = (screen.guards.len() as u16 + 3).min((left / 2).max(4));
        let steps_height = (screen.steps_len() as u16 + 3).min(left.saturating_sub(guards_height));
        let [top, steps_area, guards_area, bottom] = area.layout(&Layout::vertical([
            Constraint::Length(top_height),
            Constraint::Length(steps_height),
            Constraint::Fill(1),
            Constraint::Length(1),
        ]));
        Paragraph::new(summary)
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(top, buf);

        let title = match &screen.plan {
            Ok(plan) => format!(
                " Kubernetes {} -> {} on {}: {} of {} steps ",
                plan.from,
                plan.target,
                screen.cluster,
                plan.steps_to_run().count(),
                plan.steps.len()
            ),
            Err(_) => format!(" Kubernetes upgrade of {}: no plan ", screen.cluster),
        };
        let steps_active = screen.focus == PlanFocus::Nodes;
        let table = match &screen.plan {
            Ok(plan) => Ok(StepTable {
                columns: STEP_COLUMNS,
                rows: KubePlanView::step_rows(plan),
                total: plan.steps.len(),
                selected: Some(screen.step.to_string()),
                active: steps_active,
                empty: "No steps.",
            }),
            Err(e) => Err(e.as_str()),
        };
        render_step_pane(self.look, title, steps_active, table, steps_area, buf);

        render_guards(
            self.look,
            &screen.guards,
            screen.guard,
            screen.focus == PlanFocus::Guards,
            guards_area,
            buf,
        );
        let verdict = verdict_line(
            self.look,
            screen.ack_prompt(),
            screen.start_refused(),
            inner_width,
        );
        Paragraph::new(verdict)
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(bottom, buf);
    }
}
