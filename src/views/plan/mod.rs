//! The plan screen: every guarded operation's plan drawn the same way (its summary on top, its
//! subjects as a table, the guards worst first with their one-line reasons, and a last line
//! saying whether Start is offered, refused, or waits for a typed acknowledgement), and the
//! typed confirmation the dispatcher asks for. One file per kind of plan says what the kind
//! shows; the upgrade rollouts share [`PlanView`], parameterised by [`PlanPane`].
pub mod action;
pub mod capi_scale;
pub mod capi_upgrade;
pub mod confirm;
pub mod kube;
pub mod upgrade;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::progress_parts::{StepTable, render_step_pane, unsorted};
use super::table::{DataTable, pane_block};
use super::{Look, fit};
use crate::app::plan_screen::{
    GuardedPlan, PlanFocus, PlanGuards, RolloutPlanScreen, verdict_counts, verdict_word,
};
use crate::app::screen::TableKind;
use crate::app::state::{AppState, PlanSlot};
use crate::app::tables::{Column, TableCell, TableData, TableRow, Tone, Width, col};
use crate::tui::Role;
use crate::upgrade::{Guard, GuardId, Verdict};

/// What a kind of rollout draws on the plan pane.
pub trait PlanPane: PlanSlot {
    /// What the pane says while no plan of this kind is open.
    const NOT_OPEN: &'static str;
    /// What the step table says with no rows.
    const NO_STEPS: &'static str;
    const STEP_COLUMNS: &'static [Column];
    /// The lines above the steps (target, options, findings).
    fn summary(screen: &RolloutPlanScreen<Self>, look: &Look, width: usize) -> Vec<Line<'static>>;
    fn step_rows(plan: &Self::Plan) -> Vec<TableRow>;
    /// The step table's title.
    fn steps_title(screen: &RolloutPlanScreen<Self>) -> String;
    /// Summary, steps, guards and last line, from top to bottom.
    fn layout(screen: &RolloutPlanScreen<Self>, summary_lines: usize, area: Rect) -> [Rect; 4];
}

pub struct PlanView<'a, K: PlanPane> {
    state: &'a AppState,
    look: &'a Look,
    kind: std::marker::PhantomData<K>,
}

impl<'a, K: PlanPane> PlanView<'a, K> {
    pub fn new(state: &'a AppState, look: &'a Look) -> PlanView<'a, K> {
        PlanView {
            state,
            look,
            kind: std::marker::PhantomData,
        }
    }
}

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
    pub(super) fn of(plan: &'a dyn GuardedPlan, empty: &'a str) -> ChecksPane<'a> {
        ChecksPane {
            guards: plan.guards(),
            active: plan.guards_focused(),
            empty,
            ack_prompt: plan.ack_prompt(),
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
        let g = self.guards;
        render_guards(
            look,
            &g.shown,
            g.selected,
            self.active,
            self.empty,
            guards_area,
            buf,
        );
        let width = usize::from(last.width.saturating_sub(2));
        let line = verdict_line(
            look,
            readonly,
            self.ack_prompt,
            self.refused,
            width,
            self.noun,
        );
        Paragraph::new(line)
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(last, buf);
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

impl WizardPlan<'_> {
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

/// The last line of a plan screen: Start offered, refused (why), or the acknowledgement to
/// type.
fn verdict_line(
    look: &Look,
    readonly: bool,
    ack_prompt: Option<&str>,
    refused: Option<String>,
    width: usize,
    noun: &str,
) -> Line<'static> {
    let s = &look.styles;
    let g = &look.glyphs;
    let (ack_prompt, refused) = if readonly {
        let why = "read-only mode (--readonly); the plan is for reading".to_string();
        (None, Some(why))
    } else {
        (ack_prompt, refused)
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
                format!(" starts (you type the {noun} name to confirm)"),
                s.get(Role::Text),
            ),
        ]),
    }
}

/// What the guards pane says before any guard was evaluated.
pub(super) const NO_GUARDS_YET: &str = "No status yet: the guards run when the cluster answers.";

/// The guards pane of a plan screen, worst first, with the selected guard; `empty` says why
/// there is no guard yet.
fn render_guards(
    look: &Look,
    guards: &[Guard],
    selected: Option<GuardId>,
    active: bool,
    empty: &str,
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
        empty,
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

impl<K: PlanPane> Widget for &PlanView<'_, K> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(screen) = K::slot(self.state) else {
            Paragraph::new(K::NOT_OPEN)
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let inner_width = usize::from(area.width.saturating_sub(2));
        let summary = K::summary(screen, self.look, inner_width);
        let [top, steps_area, guards_area, bottom] = K::layout(screen, summary.len(), area);
        Paragraph::new(summary)
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(top, buf);

        let steps_active = screen.focus == PlanFocus::Nodes;
        let table = match &screen.plan {
            Ok(plan) => Ok(StepTable {
                columns: K::STEP_COLUMNS,
                rows: K::step_rows(plan),
                total: screen.steps_len(),
                selected: screen.step.clone(),
                active: steps_active,
                empty: K::NO_STEPS,
            }),
            Err(e) => Err(e.as_str()),
        };
        let title = K::steps_title(screen);
        render_step_pane(self.look, title, steps_active, table, steps_area, buf);

        let checks = ChecksPane::of(screen, NO_GUARDS_YET);
        checks.render(self.look, self.state.readonly, guards_area, bottom, buf);
    }
}
