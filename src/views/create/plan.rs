//! The create's plan: the plan as `taloscope create --plan` prints it (or that it is on its
//! way, or why there is none), its guards worst first with `?` explanations, and a last line
//! saying what Start does, the acknowledgement it waits for, or why it is refused.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::CreateWizard;
use crate::app::help::wrap_words;
use crate::app::plan_screen::AskedPlan;
use crate::tui::Role;
use crate::views::Look;
use crate::views::plan::{ChecksPane, NO_GUARDS_YET, WizardPlan};

pub(super) struct CreatePlanView<'a> {
    wizard: Option<&'a CreateWizard>,
    readonly: bool,
    look: &'a Look,
}

impl<'a> CreatePlanView<'a> {
    pub(super) fn new(wizard: Option<&'a CreateWizard>, readonly: bool, look: &'a Look) -> Self {
        CreatePlanView {
            wizard,
            readonly,
            look,
        }
    }

    /// The plan's lines, or what stands in for them with the last line.
    /// Plan rows are wrapped to `width` with each continuation under its value.
    fn plan(&self, w: &CreateWizard, width: usize) -> (Vec<Line<'static>>, Option<(String, Role)>) {
        let s = &self.look.styles;
        let one = |text: String, role: Role| vec![Line::from(Span::styled(text, s.get(role)))];
        match &w.plan {
            AskedPlan::None => (
                one("No plan: Esc goes back to the request.".into(), Role::Muted),
                Some(("Esc, then Enter makes the plan".into(), Role::Muted)),
            ),
            AskedPlan::Planning(_) => (
                one("Asking the provider for the plan...".into(), Role::Muted),
                Some(("planning".into(), Role::Muted)),
            ),
            AskedPlan::Failed(e) => (
                one(crate::printable::line(e), Role::Error),
                Some((
                    format!(
                        "{} no plan: Esc, fix the request, then Enter",
                        self.look.glyphs.error
                    ),
                    Role::Error,
                )),
            ),
            AskedPlan::Ready(plan) => (
                plan.table()
                    .lines()
                    .flat_map(|l| under_its_key(l, width))
                    .map(|l| Line::from(Span::styled(l, s.get(Role::Text))))
                    .collect(),
                None,
            ),
        }
    }
}

impl Widget for &CreatePlanView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(w) = self.wizard else {
            Paragraph::new("No create plan. n on the fleet opens the wizard.")
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let (lines, last) = self.plan(w, usize::from(area.width.saturating_sub(4)));
        let guard_rows = if last.is_none() {
            guards_height(w.guards.shown.len(), lines.len(), area.height)
        } else {
            0
        };
        let [head, plan_area, guards_area, last_area] = area.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(guard_rows),
            Constraint::Length(1),
        ]));
        let title = match &w.resuming {
            Some(u) if u.cluster == w.name => format!("Create {} (resuming its journal)", w.name),
            _ => format!("Create {}", w.name),
        };
        let checks = match last {
            Some(status) => Err(status),
            None => Ok(ChecksPane::of(w, NO_GUARDS_YET)),
        };
        let plan = WizardPlan {
            title,
            lines,
            checks,
        };
        let areas = [head, plan_area, guards_area, last_area];
        plan.render(self.look, self.readonly, areas, buf);
    }
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
