//! The upgrade plan screen: target, installer image and options on top, the
//! node order as a table (role, from -> to, API, forfeit, batch, state), the
//! guards worst first with their one-line reasons, and a last line saying
//! whether Start is offered, refused, or waits for a typed acknowledgement.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::progress_parts::{StepTable, render_step_pane, unsorted};
use super::table::{DataTable, pane_block};
use super::{Look, fit};
use crate::app::state::{AppState, TableKind};
use crate::app::tables::{Column, TableCell, TableData, TableRow, Tone, Width, col, wide};
use crate::app::upgrade_plan::{PlanFocus, PlanScreen, api_word, verdict_counts, verdict_word};
use crate::tui::Role;
use crate::upgrade::{Guard, GuardId, StepState, UpgradePlan, Verdict};

static STEP_COLUMNS: &[Column] = &[
    col("NODE", Width::Fixed(12)).wider(Width::Fixed(24)),
    wide("ADDRESS", Width::Fixed(15)),
    col("ROLE", Width::Fixed(6)),
    col("FROM -> TO", Width::Fixed(20)),
    col("API", Width::Fixed(9)),
    col("FORFEIT", Width::Fixed(7)),
    col("BATCH", Width::Fixed(5)),
    col("STATE", Width::Fill(1)),
];

static GUARD_COLUMNS: &[Column] = &[
    col("", Width::Fixed(6)),
    col("GUARD", Width::Fixed(20)),
    col("REASON", Width::Fill(1)),
];

pub struct UpgradePlanView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> UpgradePlanView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> UpgradePlanView<'a> {
        UpgradePlanView { state, look }
    }

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
                let batch = s.batch.map(|b| (b + 1).to_string());
                TableRow {
                    key: s.node.clone(),
                    cells: vec![
                        TableCell::plain(&s.node),
                        TableCell::plain(&s.address),
                        TableCell::plain(crate::app::health::role_word(s.role)),
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
}

fn guard_rows(look: &Look, guards: &[Guard]) -> Vec<TableRow> {
    let g = &look.glyphs;
    guards
        .iter()
        .map(|guard| {
            let (glyph, tone) = match guard.verdict {
                Verdict::Pass => (g.ok, Tone::Ok),
                Verdict::Warn => (g.warn, Tone::Warn),
                Verdict::Fail => (g.error, Tone::Error),
            };
            TableRow {
                key: guard.id.title().to_string(),
                cells: vec![
                    TableCell::new(format!("{glyph} {}", verdict_word(guard.verdict)), tone),
                    TableCell::plain(guard.id.title()),
                    TableCell::new(&guard.reason, tone_of_reason(guard.verdict)),
                ],
            }
        })
        .collect()
}

impl UpgradePlanView<'_> {
    /// Target, image and options, then what the options mean here.
    fn summary(&self, screen: &PlanScreen, width: usize) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let label = |t: &str| Span::styled(format!("{t:<9}"), s.get(Role::Muted));
        let offered: Vec<String> = screen.targets.iter().map(ToString::to_string).collect();
        let mut lines = vec![Line::from(vec![
            label("Target"),
            Span::styled(screen.target.to_string(), s.get(Role::Accent)),
            Span::styled(
                fit(
                    &format!("  offered: {} (t changes)", offered.join(", ")),
                    width.saturating_sub(9 + screen.target.to_string().len()),
                    g.ellipsis,
                ),
                s.get(Role::Muted),
            ),
        ])];
        let (image, note) = match (&screen.plan, &screen.image) {
            (Ok(plan), None) => (plan.image.clone(), " (default; i edits)"),
            (Ok(plan), Some(_)) => (plan.image.clone(), " (custom; I resets)"),
            (Err(_), custom) => (custom.clone().unwrap_or_default(), ""),
        };
        lines.push(Line::from(vec![
            label("Image"),
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
            label("Options"),
            Span::styled(
                format!(
                    "stage {} (S)  preserve {preserve} (P)  max-parallel {} (+/-)",
                    on_off(o.stage),
                    o.max_parallel
                ),
                s.get(Role::Text),
            ),
        ]));
        if let Ok(plan) = &screen.plan {
            for note in plan.option_notes() {
                lines.push(Line::from(Span::styled(
                    fit(&format!("{} {note}", g.warn), width, g.ellipsis),
                    s.get(Role::Warn),
                )));
            }
        }
        lines
    }
}

/// The last line of a plan screen: Start offered, refused (why), or the
/// acknowledgement to type (`ack_prompt`: given only when it is the one
/// thing left). `refused` is the plan's `start_refused()`.
pub(super) fn verdict_line(
    look: &Look,
    ack_prompt: Option<&str>,
    refused: Option<String>,
    width: usize,
) -> Line<'static> {
    let s = &look.styles;
    let g = &look.glyphs;
    if let Some(needed) = ack_prompt {
        return Line::from(vec![
            Span::styled(format!("{} ", g.warn), s.get(Role::Warn)),
            Span::styled("a", s.get(Role::Key)),
            Span::styled(", then type: ", s.get(Role::Warn)),
            Span::styled(needed.to_string(), s.get(Role::Accent)),
        ]);
    }
    match refused {
        Some(why) => Line::from(Span::styled(
            fit(
                &format!("{} Start refused: {why}", g.error),
                width,
                g.ellipsis,
            ),
            s.get(Role::Error),
        )),
        None => Line::from(vec![
            Span::styled(format!("{} guards pass: ", g.ok), s.get(Role::Ok)),
            Span::styled("s", s.get(Role::Key)),
            Span::styled(
                " starts (you type the cluster name to confirm)",
                s.get(Role::Text),
            ),
        ]),
    }
}

/// The guards pane of a plan screen, worst first, with the selected guard.
pub(super) fn render_guards(
    look: &Look,
    guards: &[Guard],
    selected: Option<GuardId>,
    active: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    let (pass, warn, fail) = verdict_counts(guards);
    let block = pane_block(
        look,
        vec![Span::styled(
            format!(" Guards: {pass} pass, {warn} warn, {fail} fail (? explains) "),
            look.styles.get(Role::Title),
        )],
        active,
    );
    let inner = block.inner(area);
    block.render(area, buf);
    let data = TableData {
        kind: TableKind::Nodes,
        columns: GUARD_COLUMNS,
        rows: guard_rows(look, guards),
        total: guards.len(),
    };
    let view = unsorted(selected.map(|g| g.title().to_string()));
    DataTable {
        data: &data,
        view: &view,
        look,
        title: "",
        active,
        empty: "No status yet: the guards run when the cluster answers.",
    }
    .render_rows(inner, buf);
}

fn tone_of_reason(verdict: Verdict) -> Tone {
    match verdict {
        Verdict::Pass => Tone::Muted,
        Verdict::Warn => Tone::Warn,
        Verdict::Fail => Tone::Error,
    }
}

impl Widget for &UpgradePlanView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(screen) = self.state.upgrade.as_ref() else {
            Paragraph::new("No upgrade plan open: u on a cluster plans one.")
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let inner_width = usize::from(area.width.saturating_sub(2));
        let summary = self.summary(screen, inner_width);
        let steps = screen.steps().len() as u16;
        let summary_height = (summary.len() as u16).min(4);
        let [top, nodes_area, guards_area, bottom] = area.layout(&Layout::vertical([
            Constraint::Length(summary_height),
            Constraint::Length((steps + 3).max(4)),
            Constraint::Min(4),
            Constraint::Length(1),
        ]));
        Paragraph::new(summary)
            .block(ratatui::widgets::Block::new().padding(ratatui::widgets::Padding::horizontal(1)))
            .render(top, buf);

        let nodes_title = match &screen.plan {
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
        };
        let nodes_active = screen.focus == PlanFocus::Nodes;
        let table = match &screen.plan {
            Ok(plan) => Ok(StepTable {
                columns: STEP_COLUMNS,
                rows: UpgradePlanView::step_rows(plan),
                total: plan.steps.len(),
                selected: screen.step.clone(),
                active: nodes_active,
                empty: "No nodes.",
            }),
            Err(e) => Err(e.as_str()),
        };
        render_step_pane(self.look, nodes_title, nodes_active, table, nodes_area, buf);

        render_guards(
            self.look,
            &screen.guards,
            screen.guard,
            screen.focus == PlanFocus::Guards,
            guards_area,
            buf,
        );
        // With nothing failing, the acknowledgement is the one thing left.
        let ack_prompt = screen.missing_ack().filter(|_| screen.counts().2 == 0);
        let verdict = verdict_line(self.look, ack_prompt, screen.start_refused(), inner_width);
        Paragraph::new(verdict)
            .block(ratatui::widgets::Block::new().padding(ratatui::widgets::Padding::horizontal(1)))
            .render(bottom, buf);
    }
}
