//! The Kubernetes upgrade on the plan pane every rollout plan shares (`views::plan`):
//! target and pre-pull on top with the removed-API count ("checking" until it arrives), the
//! steps in upstream order (component, node, from -> to), the guards keeping up to half of
//! what is left.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::PlanPane;
use super::kubernetes::{CHECKING, KubePlanScreen};
use super::view::{label, target_line};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::tui::Role;
use crate::upgrade::kubernetes::{KubeStepState, Kubernetes, KubernetesUpgradePlan};
use crate::views::plan_parts::guards_keep_half;
use crate::views::{Look, fit};

static STEP_COLUMNS: &[Column] = &[
    col("#", Width::Content),
    col("COMPONENT", Width::Content),
    col("NODE", Width::Fill(1)),
    wide("ADDRESS", Width::Content),
    col("FROM -> TO", Width::Content),
    col("STATE", Width::Fill(1)),
];

impl PlanPane for Kubernetes {
    const NOT_OPEN: &'static str = "No Kubernetes upgrade plan open: U on a cluster plans one.";
    const NO_STEPS: &'static str = "No steps.";
    const STEP_COLUMNS: &'static [Column] = STEP_COLUMNS;

    fn step_rows(plan: &KubernetesUpgradePlan) -> Vec<TableRow> {
        plan.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let from = s.from.as_deref().unwrap_or("?");
                let (state, tone) = match s.state {
                    KubeStepState::Upgrade => ("apply", Tone::Plain),
                    KubeStepState::AlreadyOnTarget => ("on target", Tone::Muted),
                    KubeStepState::NoKubeProxy => ("no kube-proxy", Tone::Muted),
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
    fn summary(screen: &KubePlanScreen, look: &Look, width: usize) -> Vec<Line<'static>> {
        let s = &look.styles;
        let g = &look.glyphs;
        let rest = width.saturating_sub(9);
        let from = match &screen.made {
            Ok(plan) => format!(" from {}; ", plan.from),
            Err(_) => "; ".to_string(),
        };
        let mut lines = vec![target_line(look, screen, &from, width)];
        let on_off = if screen.pre_pull { "on" } else { "off" };
        lines.push(Line::from(vec![
            label(look, "Pre-pull"),
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
            None => (CHECKING.to_string(), Role::Muted),
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
            label(look, "Removed"),
            Span::styled(fit(&text, rest, g.ellipsis), s.get(role)),
        ]));
        lines
    }

    fn steps_title(screen: &KubePlanScreen) -> String {
        match &screen.made {
            Ok(plan) => format!(
                " Kubernetes {} -> {} on {}: {} of {} steps ",
                plan.from,
                plan.target,
                screen.cluster,
                plan.steps_to_run().count(),
                plan.steps.len()
            ),
            Err(_) => format!(" Kubernetes upgrade of {}: no plan ", screen.cluster),
        }
    }

    fn layout(screen: &KubePlanScreen, summary_lines: usize, area: Rect) -> [Rect; 4] {
        let guards = screen.guards.shown.len();
        guards_keep_half(area, summary_lines, screen.steps_len(), guards)
    }
}
