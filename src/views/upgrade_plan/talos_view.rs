//! The Talos OS upgrade on the plan pane: target, installer image and options
//! on top, the node order as a table (role, from -> to, API, forfeit, batch,
//! state), a summary of at most four lines over steps that take what they need.
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use super::PlanPane;
use super::talos::{PlanScreen, api_word};
use super::view::{label, target_line};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::tui::Role;
use crate::upgrade::{StepState, TalosOs, UpgradePlan};
use crate::views::{Look, fit};

static STEP_COLUMNS: &[Column] = &[
    col("NODE", Width::Fill(1)),
    wide("ADDRESS", Width::Content),
    col("ROLE", Width::Content),
    col("FROM -> TO", Width::Content),
    col("API", Width::Content),
    col("FORFEIT", Width::Content),
    col("BATCH", Width::Content),
    col("STATE", Width::Fill(1)),
];

impl PlanPane for TalosOs {
    const NOT_OPEN: &'static str = "No upgrade plan open: u on a cluster plans one.";
    const NO_STEPS: &'static str = "No nodes.";
    const STEP_COLUMNS: &'static [Column] = STEP_COLUMNS;

    fn step_rows(plan: &UpgradePlan) -> Vec<TableRow> {
        plan.steps
            .iter()
            .map(|s| {
                let from = s.from.as_ref().map_or("?".to_string(), ToString::to_string);
                let (state, tone) = match s.state {
                    StepState::Upgrade => ("upgrade", Tone::Plain),
                    StepState::AlreadyOnTarget => ("on target", Tone::Muted),
                    StepState::LeftOut => ("left out", Tone::Warn),
                };
                let batch = s.batch.map(|b| b.to_string());
                TableRow {
                    key: s.node.clone(),
                    cells: vec![
                        TableCell::plain(&s.node),
                        TableCell::plain(&s.address),
                        TableCell::plain(crate::fleet::summary::role_word(s.role)),
                        TableCell::new(
                            format!("{from} -> {}", plan.target),
                            if s.is_skipped() {
                                Tone::Muted
                            } else {
                                Tone::Plain
                            },
                        ),
                        TableCell::plain(api_word(s.api)),
                        TableCell::maybe(s.forfeit_leadership.then_some("yes")),
                        TableCell::maybe(batch.as_deref()),
                        TableCell::new(state, tone),
                    ],
                }
            })
            .collect()
    }

    /// Target, image and options, then what the options mean here.
    fn summary(screen: &PlanScreen, look: &Look, width: usize) -> Vec<Line<'static>> {
        let s = &look.styles;
        let g = &look.glyphs;
        let mut lines = vec![target_line(look, screen, "  ", width)];
        let (image, note) = match (&screen.made, &screen.image) {
            (Ok(plan), None) => (plan.image.clone(), " (default; i edits)"),
            (Ok(plan), Some(_)) => (plan.image.clone(), " (custom; I resets)"),
            (Err(_), custom) => (custom.clone().unwrap_or_default(), ""),
        };
        lines.push(Line::from(vec![
            label(look, "Image"),
            Span::styled(
                fit(&image, width.saturating_sub(9 + note.len()), g.ellipsis),
                s.get(Role::Text),
            ),
            Span::styled(note, s.get(Role::Muted)),
        ]));
        let o = &screen.options;
        let on_off = |b: bool| if b { "on" } else { "off" };
        let preserve = if screen.preserve_applies {
            on_off(o.preserve)
        } else {
            "n/a"
        };
        lines.push(Line::from(vec![
            label(look, "Options"),
            Span::styled(
                format!(
                    "stage {} (S)  preserve {preserve} (P)  max-parallel {} (+/-)",
                    on_off(o.stage),
                    o.max_parallel
                ),
                s.get(Role::Text),
            ),
        ]));
        if let Ok(plan) = &screen.made {
            for note in plan.option_notes() {
                lines.push(Line::from(Span::styled(
                    fit(&format!("{} {note}", g.warn), width, g.ellipsis),
                    s.get(Role::Warn),
                )));
            }
        }
        lines
    }

    fn steps_title(screen: &PlanScreen) -> String {
        match &screen.made {
            Ok(plan) => {
                let upgrading = plan.nodes_to_upgrade().count();
                format!(
                    " Upgrade {} to {}: {upgrading} of {} nodes ",
                    screen.cluster,
                    plan.target,
                    plan.steps.len()
                )
            }
            Err(_) => format!(" Upgrade {}: no plan ", screen.cluster),
        }
    }

    fn layout(screen: &PlanScreen, summary_lines: usize, area: Rect) -> [Rect; 4] {
        let steps = screen.steps().len() as u16;
        let summary_height = (summary_lines as u16).min(4);
        area.layout(&Layout::vertical([
            Constraint::Length(summary_height),
            Constraint::Length((steps + 3).max(4)),
            Constraint::Min(4),
            Constraint::Length(1),
        ]))
    }
}
