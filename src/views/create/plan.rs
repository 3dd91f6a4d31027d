//! The create's plan: the plan as `taloscope create --plan` prints it (or that it is on its
//! way, or why there is none), its guards worst first with `?` explanations, and a last line
//! saying what Start does, the acknowledgement it waits for, or why it is refused.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};

use super::CreateWizard;
use crate::app::help::wrap_words;
use crate::app::plan_screen::PlanHolder;
use crate::cluster_lifecycle::CreatePlan;
use crate::views::Look;
use crate::views::plan::{NoPlanYet, WizardPlan};

/// What the plan pane says while there is no plan to show.
const NO_PLAN: NoPlanYet = NoPlanYet {
    none: "No plan: Esc goes back to the request.",
    none_last: "Esc, then Enter makes the plan",
    failed_last: "no plan: Esc, fix the request, then Enter",
};

/// The plan of `w` with its guards: its rows wrapped to the pane, each continuation under its
/// value; the guards give way to the plan (down to three rows) so every plan line shows.
pub(super) fn draw(
    w: &PlanHolder<CreateWizard>,
    readonly: bool,
    look: &Look,
    area: Rect,
    buf: &mut Buffer,
) {
    let title = match &w.resuming {
        Some(u) if u.cluster == w.name => format!("Create {} (resuming its journal)", w.name),
        _ => format!("Create {}", w.name),
    };
    let width = usize::from(area.width.saturating_sub(4));
    let rows = |plan: &CreatePlan| {
        let table = plan.table();
        table
            .lines()
            .flat_map(|l| under_its_key(l, width))
            .collect()
    };
    let plan = WizardPlan::of(title, &w.form.plan, w, &NO_PLAN, rows, look);
    let guard_rows = match plan.checks {
        Ok(_) => guards_height(w.guards.shown.len(), plan.lines.len(), area.height),
        Err(_) => 0,
    };
    let [head, plan_area, guards_area, last_area] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(guard_rows),
        Constraint::Length(1),
    ]));
    let areas = [head, plan_area, guards_area, last_area];
    plan.render(look, readonly, areas, buf);
}

/// Column where a plan row's value starts (`VMS        a, b`).
const VALUE_COLUMN: usize = 11;

/// One plan row in lines of at most `width` cells, continuations indented to the value.
fn under_its_key(row: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let keyed = row.len() > VALUE_COLUMN
        && row.is_char_boundary(VALUE_COLUMN)
        && row[..VALUE_COLUMN].ends_with(' ')
        && !row[VALUE_COLUMN..].starts_with(' ');
    if row.width() <= width || !keyed || width <= VALUE_COLUMN + 8 {
        return vec![row.to_string()];
    }
    let (key, value) = row.split_at(VALUE_COLUMN);
    let indent = " ".repeat(VALUE_COLUMN);
    wrap_words(value, width - VALUE_COLUMN)
        .into_iter()
        .enumerate()
        .map(|(i, part)| format!("{}{part}", if i == 0 { key } else { &indent }))
        .collect()
}

/// The guards pane's rows: all guards when the plan fits beside them, else fewer (at
/// least three guard rows; the pane keeps the selected one in view) so every plan line shows.
fn guards_height(guards: usize, plan_lines: usize, height: u16) -> u16 {
    let full = guards.max(1) as u16 + 3;
    let plan_pane = plan_lines as u16 + 2;
    let room = height.saturating_sub(2);
    if plan_pane + full <= room {
        full
    } else {
        room.saturating_sub(plan_pane).clamp(full.min(6), full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_row_continues_under_its_value() {
        let row = "VMS        lab-controlplane-1, lab-controlplane-2, lab-worker-1, lab-worker-2";
        let lines = under_its_key(row, 60);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("VMS        lab-controlplane-1,"));
        assert!(lines[1].starts_with("           lab-"), "{lines:?}");
        assert!(lines.iter().all(|l| l.len() <= 60), "{lines:?}");
        assert_eq!(under_its_key("short", 60), vec!["short".to_string()]);
    }

    #[test]
    fn guards_give_way_to_the_plan_down_to_three_rows() {
        assert_eq!(guards_height(5, 6, 40), 8);
        assert_eq!(guards_height(5, 10, 20), 6);
        assert_eq!(guards_height(5, 30, 20), 6);
        assert_eq!(guards_height(2, 30, 20), 5);
    }
}
