//! The plan pane every rollout plan draws alike, whatever its kind: the kind's summary on top,
//! its steps as a table (or why there is no plan), then the guards and the last line every plan
//! draws (`views::plan_parts`); what a kind draws is its [`PlanPane`] (`talos_view`,
//! `kubernetes_view`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::{PlanFocus, PlanKind, RolloutPlanScreen};
use crate::app::tables::{Column, TableRow};
use crate::tui::Role;
use crate::views::Look;
use crate::views::plan_parts::{ChecksPane, NO_GUARDS_YET};
use crate::views::progress_parts::{StepTable, render_step_pane};

/// What a kind of rollout draws on the plan pane.
pub trait PlanPane: PlanKind {
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

/// The plan pane of a rollout plan of kind `K`, if one is open.
pub struct PlanView<'a, K: PlanPane> {
    screen: Option<&'a RolloutPlanScreen<K>>,
    readonly: bool,
    look: &'a Look,
}

impl<'a, K: PlanPane> PlanView<'a, K> {
    pub fn new(
        screen: Option<&'a RolloutPlanScreen<K>>,
        readonly: bool,
        look: &'a Look,
    ) -> PlanView<'a, K> {
        PlanView {
            screen,
            readonly,
            look,
        }
    }
}

impl<K: PlanPane> Widget for &PlanView<'_, K> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(screen) = self.screen else {
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
        let table = match &screen.made {
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
        checks.render(self.look, self.readonly, guards_area, bottom, buf);
    }
}
