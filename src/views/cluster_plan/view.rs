//! The plan of a cluster's delete or a CAPI scale on the action screen: what it does and to
//! what (the VMs or service, contexts and journals; the replicas and Machines), then the
//! guards worst first and whether Start is offered or which acknowledgement to type.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{ChecksPane, NO_GUARDS_YET};
use crate::app::actions::{ActionPlan, ActionPlanScreen};
use crate::app::plan_screen::GuardedPlan;
use crate::app::state::AppState;
use crate::printable::line as printable;
use crate::tui::Role;
use crate::views::Look;
use crate::views::plan_parts::{SummaryPlan, capitalised};

pub struct ActionPlanView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> ActionPlanView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ActionPlanView<'a> {
        ActionPlanView { state, look }
    }

    fn summary(&self, screen: &ActionPlanScreen) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let mut lines = vec![Line::from(Span::styled(
            capitalised(&screen.title()),
            s.get(Role::Title),
        ))];
        match &screen.plan {
            ActionPlan::Delete { plan, warnings } => {
                match plan {
                    None => lines.push(Line::from(Span::styled(
                        "reading the create journal, the provider and the rollout Lease...",
                        s.get(Role::Muted),
                    ))),
                    Some(Ok(plan)) => lines.extend(
                        (plan.table().lines())
                            .map(|l| Line::from(Span::styled(printable(l), s.get(Role::Text)))),
                    ),
                    Some(Err(e)) => {
                        lines.push(Line::from(Span::styled(printable(e), s.get(Role::Error))))
                    }
                }
                for w in warnings {
                    lines.push(Line::from(Span::styled(printable(w), s.get(Role::Warn))));
                }
            }
            ActionPlan::CapiScale(plan) => {
                lines.extend(super::capi_scale::summary_lines(self.look, plan))
            }
        }
        lines
    }
}

impl Widget for &ActionPlanView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Some(screen) = self.state.actions.plan.as_ref() else {
            return;
        };
        // No guard yet: the reason Start is refused says what is still awaited (the plan's
        // read, its own error), never "no status" while there is one.
        let waiting = screen.start_refused();
        let plan = SummaryPlan {
            summary: self.summary(screen),
            subjects: None,
            checks: ChecksPane::of(screen, waiting.as_deref().unwrap_or(NO_GUARDS_YET)),
        };
        plan.render(self.look, self.state.readonly, area, buf);
    }
}
