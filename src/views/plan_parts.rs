//! What every plan screen draws alike, whatever it plans: the guards worst first with their
//! one-line reasons, the last line saying whether Start is offered, refused (the guard named)
//! or waits for a typed acknowledgement, a wizard's plan box, and a plan
//! told as summary lines over a table of its subjects. Screens hold these; none of them reads
//! a screen's state.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::progress_parts::{StepTable, render_step_pane};
use super::table::{pane_block, render_listed, titled};
use super::{Look, fit};
use crate::app::plan_screen::verdict_word;
use crate::app::plan_screen::{AskedPlan, PlanGuards, PlanHolder, PlanSubject, verdict_counts};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::tui::Role;
use crate::upgrade::{Guard, Verdict};

static GUARD_COLUMNS: &[Column] = &[
    col("", Width::Content),
    col("GUARD", Width::Content),
    col("REASON", Width::Fill(1)),
];

fn guard_rows(look: &Look, guards: &[Guard]) -> Vec<TableRow> {
    let g = &look.glyphs;
    guards
        .iter()
        .map(|guard| {
            // A passing guard's reason is muted.
            let (glyph, tone, reason) = match guard.verdict {
                Verdict::Pass => (g.ok, Tone::Ok, Tone::Muted),
                Verdict::Warn => (g.warn, Tone::Warn, Tone::Warn),
                Verdict::Fail => (g.error, Tone::Error, Tone::Error),
            };
            TableRow {
                key: guard.id.title().to_string(),
                cells: vec![
                    TableCell::new(format!("{glyph} {}", verdict_word(guard.verdict)), tone),
                    TableCell::plain(guard.id.title()),
                    TableCell::new(&guard.reason, reason),
                ],
            }
        })
        .collect()
}

/// The lower part every plan screen draws alike: its guards pane and the last line under it.
pub(super) struct ChecksPane<'a> {
    pub guards: &'a PlanGuards,
    /// Whether the guards have the move keys.
    pub active: bool,
    /// What the guards pane says while no guard was evaluated.
    pub empty: &'a str,
    /// The acknowledgement to type, given only when it is the one thing left.
    pub ack_prompt: Option<&'a str>,
    /// The plan's `start_refused()`.
    pub refused: Option<String>,
    /// What the dispatcher's typed confirmation asks the name of ("cluster", "node").
    pub noun: &'a str,
}

impl<'a> ChecksPane<'a> {
    /// The checks of `plan`: its guards (`empty` said while none was evaluated), the
    /// acknowledgement it prompts for, why Start is refused, and what the typed confirmation
    /// asks the name of.
    pub(super) fn of<K: PlanSubject>(plan: &'a PlanHolder<K>, empty: &'a str) -> ChecksPane<'a> {
        ChecksPane {
            guards: &plan.guards,
            active: plan.guards_focused(),
            empty,
            ack_prompt: plan.guards.ack_prompt(),
            refused: plan.start_refused(),
            noun: plan.approval().map_or("cluster", |a| a.confirm_noun()),
        }
    }

    /// The guards into `guards_area`, the last line into `last`; read-only mode refuses
    /// Start up front, whatever the guards say.
    pub(super) fn render(
        self,
        look: &Look,
        readonly: bool,
        guards_area: Rect,
        last: Rect,
        buf: &mut Buffer,
    ) {
        self.render_guards(look, guards_area, buf);
        let width = usize::from(last.width.saturating_sub(2));
        let line = self.verdict_line(look, readonly, width);
        Paragraph::new(line)
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(last, buf);
    }

    /// The guards pane, worst first, with the selected guard; `empty` says why there is no guard
    /// yet.
    fn render_guards(&self, look: &Look, area: Rect, buf: &mut Buffer) {
        let guards = &self.guards.shown;
        let (pass, warn, fail) = verdict_counts(guards);
        let title = format!(" Guards: {pass} pass, {warn} warn, {fail} fail (? explains) ");
        let inner = titled(look, title, self.active, area, buf);
        let table = StepTable {
            columns: GUARD_COLUMNS,
            rows: guard_rows(look, guards),
            total: guards.len(),
            selected: self.guards.selected.map(|g| g.title().to_string()),
            active: self.active,
            empty: self.empty,
        };
        render_listed(look, table, &[], inner, buf);
    }

    /// The last line of a plan screen: Start offered, refused (why), or the acknowledgement to
    /// type.
    fn verdict_line(self, look: &Look, readonly: bool, width: usize) -> Line<'static> {
        let s = &look.styles;
        let g = &look.glyphs;
        let (ack_prompt, refused) = if readonly {
            let why = "read-only mode (--readonly); the plan is for reading".to_string();
            (None, Some(why))
        } else {
            (self.ack_prompt, self.refused)
        };
        if let Some(needed) = ack_prompt {
            return Line::from(vec![
                Span::styled(format!("{} ", g.warn), s.get(Role::Warn)),
                Span::styled("a", s.get(Role::Key)),
                Span::styled(", then type: ", s.get(Role::Warn)),
                Span::styled(needed.to_string(), s.get(Role::Accent)),
            ]);
        }
        match refused {
            Some(why) => fitted(
                look,
                &format!("{} Start refused: {why}", g.error),
                Role::Error,
                width,
            ),
            None => Line::from(vec![
                Span::styled(format!("{} guards pass: ", g.ok), s.get(Role::Ok)),
                Span::styled("s", s.get(Role::Key)),
                Span::styled(
                    format!(" starts (you type the {} name to confirm)", self.noun),
                    s.get(Role::Text),
                ),
            ]),
        }
    }
}

/// A wizard's plan (create, provision): its title on the first line, its lines in a "Plan"
/// box, and under them its checks once the plan is ready, else the line saying where the plan
/// stands.
pub(super) struct WizardPlan<'a> {
    pub title: String,
    pub lines: Vec<Line<'static>>,
    /// `Err((text, role))` while there is no plan to check.
    pub checks: Result<ChecksPane<'a>, (String, Role)>,
}

/// What a wizard's plan pane says before its plan is ready: with no plan asked (the pane, then
/// the last line), and the last line under a failed plan's error.
pub(super) struct NoPlanYet {
    pub none: &'static str,
    pub none_last: &'static str,
    pub failed_last: &'static str,
}

impl<'a> WizardPlan<'a> {
    /// `asked` on its plan pane: the ready plan's `rows` with the checks of `plan`, else what
    /// stands in for them (nothing asked, on its way, why it failed) over a last line saying so.
    pub(super) fn of<P, K: PlanSubject>(
        title: String,
        asked: &AskedPlan<P>,
        plan: &'a PlanHolder<K>,
        says: &NoPlanYet,
        rows: impl FnOnce(&P) -> Vec<String>,
        look: &Look,
    ) -> WizardPlan<'a> {
        let style = |role| look.styles.get(role);
        let one = |text: &str, role| vec![Line::from(Span::styled(text.to_string(), style(role)))];
        let (lines, checks) = match asked {
            AskedPlan::None => (
                one(says.none, Role::Muted),
                Err((says.none_last.into(), Role::Muted)),
            ),
            AskedPlan::Planning(_) => (
                one("Asking the provider for the plan...", Role::Muted),
                Err(("planning".into(), Role::Muted)),
            ),
            AskedPlan::Failed(e) => (
                one(&crate::printable::line(e), Role::Error),
                Err((
                    format!("{} {}", look.glyphs.error, says.failed_last),
                    Role::Error,
                )),
            ),
            AskedPlan::Ready(ready) => (
                (rows(ready).into_iter())
                    .map(|l| Line::from(Span::styled(l, style(Role::Text))))
                    .collect(),
                Ok(ChecksPane::of(plan, NO_GUARDS_YET)),
            ),
        };
        WizardPlan {
            title,
            lines,
            checks,
        }
    }

    /// Into the title's, the plan's, the guards' and the last line's areas (the caller lays
    /// them out around its own panes).
    pub(super) fn render(self, look: &Look, readonly: bool, areas: [Rect; 4], buf: &mut Buffer) {
        let [head, plan_area, guards_area, last] = areas;
        let s = &look.styles;
        let pad = Block::new().padding(Padding::horizontal(1));
        let width = usize::from(head.width.saturating_sub(2));
        let title = fit(&self.title, width, look.glyphs.ellipsis);
        Paragraph::new(Span::styled(title, s.get(Role::Title)))
            .block(pad.clone())
            .render(head, buf);
        let block = pane_block(
            look,
            vec![Span::styled(" Plan ", s.get(Role::Title))],
            false,
        );
        let inner = block.inner(plan_area);
        block.render(plan_area, buf);
        Paragraph::new(self.lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
        match self.checks {
            Ok(checks) => checks.render(look, readonly, guards_area, last, buf),
            Err((text, role)) => {
                let line = Span::styled(fit(&text, width, look.glyphs.ellipsis), s.get(role));
                Paragraph::new(line).block(pad).render(last, buf);
            }
        }
    }
}

/// Summary, steps, guards and last line of `area`, from top to bottom, for `top` summary lines,
/// `steps` rows and `guards` rows: the guards keep up to half of what the summary leaves, the
/// steps take what they need of the rest, and the guards any surplus.
pub(super) fn guards_keep_half(area: Rect, top: usize, steps: usize, guards: usize) -> [Rect; 4] {
    let top_height = top as u16;
    let left = area.height.saturating_sub(top_height + 1);
    let guards_height = (guards as u16 + 3).min((left / 2).max(4));
    let steps_height = (steps as u16 + 3).min(left.saturating_sub(guards_height));
    area.layout(&Layout::vertical([
        Constraint::Length(top_height),
        Constraint::Length(steps_height),
        Constraint::Fill(1),
        Constraint::Length(1),
    ]))
}

/// What the guards pane says before any guard was evaluated.
pub(super) const NO_GUARDS_YET: &str = "No status yet: the guards run when the cluster answers.";

/// A plan told as lines (what it does and to what), over a table of its subjects when it has
/// one (an etcd plan's members), then its checks: the actions' plans.
pub(super) struct SummaryPlan<'a> {
    pub summary: Vec<Line<'static>>,
    /// The subjects' pane title and table.
    pub subjects: Option<(String, StepTable<'a>)>,
    pub checks: ChecksPane<'a>,
}

impl SummaryPlan<'_> {
    pub(super) fn render(self, look: &Look, readonly: bool, area: Rect, buf: &mut Buffer) {
        // Wrapped summary lines, roughly.
        let width = usize::from(area.width.saturating_sub(2)).max(1);
        let summary_rows: usize = self.summary.iter().map(|l| l.width() / width + 1).sum();
        let subject_rows = (self.subjects.as_ref()).map_or(0, |(_, t)| t.total as u16 + 3);
        let [top, subjects_area, guards_area, bottom] = area.layout(&Layout::vertical([
            Constraint::Length(summary_rows as u16),
            Constraint::Length(subject_rows),
            Constraint::Min(4),
            Constraint::Length(1),
        ]));
        Paragraph::new(self.summary)
            .block(Block::new().padding(Padding::horizontal(1)))
            .wrap(Wrap { trim: true })
            .render(top, buf);
        if let Some((title, table)) = self.subjects {
            render_step_pane(look, title, false, Ok(table), subjects_area, buf);
        }
        self.checks.render(look, readonly, guards_area, bottom, buf);
    }
}

/// `text` in `role` on one line, cut to `width` (a plan's summary line, a screen's hint).
pub(super) fn fitted(look: &Look, text: &str, role: Role, width: usize) -> Line<'static> {
    let text = fit(text, width, look.glyphs.ellipsis);
    Line::from(Span::styled(text, look.styles.get(role)))
}

/// `text` with its first letter upper case (a plan's title on its first line).
pub(super) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
