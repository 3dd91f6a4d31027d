//! The plan pane every rollout plan draws alike, whatever its kind: the kind's summary on top,
//! its steps as a table (or why there is no plan), then the guards and the last line every plan
//! draws (`views::plan_parts`); what a kind draws it says as a [`PlanKind`] (`talos`,
//! `kubernetes`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::{PlanKind, RolloutPlan, RolloutPlanScreen};
use crate::tui::Role;
use crate::views::plan_parts::{ChecksPane, NO_GUARDS_YET};
use crate::views::progress_parts::{StepTable, render_step_pane};
use crate::views::{Look, fit};

/// Draws the plan pane of the rollout plan of kind `K` open in `screen`.
pub(super) fn render<K: PlanKind>(
    screen: &RolloutPlanScreen<K>,
    readonly: bool,
    look: &Look,
    area: Rect,
    buf: &mut Buffer,
) {
    let inner_width = usize::from(area.width.saturating_sub(2));
    let summary = K::summary(screen, look, inner_width);
    let [top, steps_area, guards_area, bottom] = K::layout(screen, summary.len(), area);
    Paragraph::new(summary)
        .block(Block::new().padding(Padding::horizontal(1)))
        .render(top, buf);

    let steps_active = !screen.on_guards;
    let table = match &screen.made {
        Ok(plan) => Ok(StepTable {
            columns: K::STEP_COLUMNS,
            rows: K::step_rows(plan),
            total: screen.step_keys().len(),
            selected: screen.step.clone(),
            active: steps_active,
            empty: K::NO_STEPS,
        }),
        Err(e) => Err(e.as_str()),
    };
    let title = K::steps_title(screen);
    render_step_pane(look, title, steps_active, table, steps_area, buf);

    let checks = ChecksPane::of(screen, NO_GUARDS_YET);
    checks.render(look, readonly, guards_area, bottom, buf);
}

/// How wide a summary line's label is.
const LABEL: usize = 9;

/// A summary line's label, muted, as wide as every label of the summary.
pub(super) fn label(look: &Look, text: &str) -> Span<'static> {
    Span::styled(format!("{text:<LABEL$}"), look.styles.get(Role::Muted))
}

/// A summary line: its label, then `text` in `role`, cut to `width`.
pub(super) fn labelled(
    look: &Look,
    name: &str,
    (text, role): (&str, Role),
    width: usize,
) -> Line<'static> {
    let text = fit(text, width.saturating_sub(LABEL), look.glyphs.ellipsis);
    Line::from(vec![
        label(look, name),
        Span::styled(text, look.styles.get(role)),
    ])
}

/// The summary's first line: the target chosen, `from` (where the cluster is, if the kind
/// says), then the targets offered, cut to `width`.
pub(super) fn target_line<K: PlanKind>(
    look: &Look,
    rollout: &RolloutPlan<K>,
    from: &str,
    width: usize,
) -> Line<'static> {
    let s = &look.styles;
    let offered: Vec<String> = rollout.targets.iter().map(ToString::to_string).collect();
    let rest = format!("{from}offered: {} (t changes)", offered.join(", "));
    let target = rollout.target.to_string();
    let room = width.saturating_sub(LABEL + target.len());
    Line::from(vec![
        label(look, "Target"),
        Span::styled(target, s.get(Role::Accent)),
        Span::styled(fit(&rest, room, look.glyphs.ellipsis), s.get(Role::Muted)),
    ])
}
