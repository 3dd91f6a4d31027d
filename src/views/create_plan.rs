//! The create's plan: the plan as `taloscope create --plan` prints it (or that it is on its
//! way, or why there is none), its guards worst first with `?` explanations, and a last line
//! saying what Start does, the acknowledgement it waits for, or why it is refused.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::plan::{render_guards, verdict_line};
use super::table::pane_block;
use super::{Look, fit};
use crate::app::create::{CreatePlanState, CreateWizard};
use crate::app::state::AppState;
use crate::tui::Role;

pub struct CreatePlanView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> CreatePlanView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> CreatePlanView<'a> {
        CreatePlanView { state, look }
    }

    /// The plan's lines, or what stands in for them with the last line.
    fn plan(&self, w: &CreateWizard) -> (Vec<Line<'static>>, Option<(String, Role)>) {
        let s = &self.look.styles;
        let one = |text: String, role: Role| vec![Line::from(Span::styled(text, s.get(role)))];
        match &w.plan {
            CreatePlanState::None => (
                one("No plan: Esc goes back to the request.".into(), Role::Muted),
                Some(("Esc, then Enter makes the plan".into(), Role::Muted)),
            ),
            CreatePlanState::Planning(_) => (
                one("Asking the provider for the plan...".into(), Role::Muted),
                Some(("planning".into(), Role::Muted)),
            ),
            CreatePlanState::Failed(e) => (
                one(crate::printable::line(e), Role::Error),
                Some((
                    format!(
                        "{} no plan: Esc, fix the request, then Enter",
                        self.look.glyphs.error
                    ),
                    Role::Error,
                )),
            ),
            CreatePlanState::Ready(plan) => (
                plan.table()
                    .lines()
                    .map(|l| Line::from(Span::styled(l.to_string(), s.get(Role::Text))))
                    .collect(),
                None,
            ),
        }
    }
}

impl Widget for &CreatePlanView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(w) = self.state.create.wizard.as_ref() else {
            Paragraph::new("No create plan. n on the fleet opens the wizard.")
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let (lines, last) = self.plan(w);
        let guard_rows = if last.is_none() {
            w.guards.len().max(1) as u16 + 3
        } else {
            0
        };
        let [head, plan_area, guards_area, last_area] = area.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(guard_rows),
            Constraint::Length(1),
        ]));
        let pad = Block::new().padding(Padding::horizontal(1));
        let width = usize::from(area.width.saturating_sub(2));
        let title = match &w.resuming {
            Some(u) if u.cluster == w.name => format!("Create {} (resuming its journal)", w.name),
            _ => format!("Create {}", w.name),
        };
        Paragraph::new(Span::styled(
            fit(&title, width, self.look.glyphs.ellipsis),
            s.get(Role::Title),
        ))
        .block(pad.clone())
        .render(head, buf);
        let block = pane_block(
            self.look,
            vec![Span::styled(" Plan ", s.get(Role::Title))],
            false,
        );
        let inner = block.inner(plan_area);
        block.render(plan_area, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
        let last_line = match last {
            Some((text, role)) => Line::from(Span::styled(
                fit(&text, width, self.look.glyphs.ellipsis),
                s.get(role),
            )),
            None => {
                render_guards(self.look, &w.guards, w.selected, true, guards_area, buf);
                verdict_line(
                    self.look,
                    self.state.readonly,
                    w.ack_prompt(),
                    w.start_refused(),
                    width,
                )
            }
        };
        Paragraph::new(last_line).block(pad).render(last_area, buf);
    }
}
