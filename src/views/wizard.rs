//! The one wizard shell: a screen module generic over the wizard ([`WizardScreen`] over a
//! [`WizardKind`]: create, provision) that opens it, closes it, routes its keys through the
//! request's one form (`views::form`), folds its news, reads its guards again with the fleet,
//! takes the typed input and hands the approved plan to the one runner through the plan
//! screens' one gate. A kind says only what is its own: its fields, its key table, its plan
//! task and news, what its approved plan runs, and its panes. Pure.
use std::fmt::Debug;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};

use super::form::{self, Form, FormKey};
use crate::app::actions::ActionRun;
use crate::app::binding::lines_with_moves;
use crate::app::binding::{Binding, KeyLine, MOVE_KEYS, intent};
use crate::app::message::Message;
use crate::app::plan_keys::{GateKey, approved_step, reread_guards};
use crate::app::screen::Screen;
use crate::app::screens::{
    Ask, FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::approval::ApprovedAction;
use crate::operation::OperationKind;
use crate::tui::{Look, Role};

/// What one wizard says of its screen: only what differs between wizards.
pub trait WizardKind: Form + Debug + Clone + Send + Sync + 'static {
    const NAME: ScreenName;
    /// The operation its approved plan runs.
    const OPERATION: OperationKind;
    /// The plan shows on a stage of its own (Enter goes on to it, Esc back to the request),
    /// else beside the request (Tab moves the keys between them).
    const PLAN_APART: bool;
    /// Where Esc leads when it was opened from nowhere else.
    const HOME: Screen;
    /// Whether it shows the cluster in use.
    const OF_CLUSTER_IN_USE: bool;
    /// What the screen says with no wizard open.
    const CLOSED: &'static str;
    /// What its IO tasks report.
    type News: Send + Sync + 'static;
    /// Its section's title in `?`, while the plan's guards have the keys or not.
    fn title(on_plan: bool) -> &'static str;
    /// Its keys, while the plan's guards have them or not (the move keys are added).
    fn keys(on_plan: bool) -> &'static [Binding<FormKey, WizardScreen<Self>>];
    /// A new wizard brought on screen from `opening`, and its step; or why it cannot show.
    fn open(opening: &Opening, shared: &Shared) -> Result<(Self, Step), Message>;
    /// News from its IO task: whether it changed what it shows, and the step.
    fn on_news(&mut self, news: &Self::News, shared: &Shared) -> (bool, Step);
    /// What the one runner runs for its plan, once ready.
    fn run(&self) -> Option<ActionRun>;
    /// The wizard drawn (its request, its plan: as its stage says).
    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look);
}

/// The screen of wizard `W`: the wizard while open.
#[derive(Debug, Clone)]
pub struct WizardScreen<W> {
    pub wizard: Option<W>,
}

impl<W> Default for WizardScreen<W> {
    fn default() -> Self {
        WizardScreen { wizard: None }
    }
}

impl<W: WizardKind> WizardScreen<W> {
    /// The plan's guards have the keys (a plan apart: the plan shows instead of the request).
    pub fn on_plan(&self) -> bool {
        self.wizard.as_ref().is_some_and(|w| w.guards_focused())
    }

    fn close(&mut self) -> Step {
        self.wizard = None;
        Step::close()
    }
}

impl<W: WizardKind> ScreenModule for WizardScreen<W> {
    fn name(&self) -> ScreenName {
        W::NAME
    }

    fn title(&self) -> &'static str {
        W::title(self.on_plan())
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(W::keys(self.on_plan()), self)
    }

    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        let opening = Opening {
            from: W::HOME,
            node: None,
            words: Vec::new(),
        };
        self.open_from(&opening, shared)
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        let (wizard, step) = W::open(opening, shared)?;
        self.wizard = Some(wizard);
        Ok(step)
    }

    /// A move key through the request's fields or the plan's guards; Tab between them; `?` on
    /// the selected guard (else help); Esc back to the request from a plan apart, else closing
    /// the wizard; Enter asking for the plan (on to it, when apart); the others the form's.
    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        let keys = W::keys(self.on_plan());
        let Some(w) = self.wizard.as_mut() else {
            return Step::close();
        };
        if let Some(to) = intent(MOVE_KEYS, event) {
            form::move_step(w, *to, shared.page(), shared);
            return Step::default();
        }
        let Some(key) = intent(keys, event) else {
            return Step::default();
        };
        let state = w.form();
        let key = match *key {
            FormKey::Focus => {
                state.guards_focused = !state.guards_focused;
                return Step::default();
            }
            FormKey::Explain if state.guards_focused => FormKey::Gate(GateKey::Explain),
            FormKey::Explain => return Step::ask(Ask::Help),
            FormKey::Back if state.guards_focused && W::PLAN_APART => {
                state.guards_focused = false;
                return Step::default();
            }
            FormKey::Back => return self.close(),
            FormKey::MakePlan if W::PLAN_APART => {
                state.guards_focused = true;
                FormKey::MakePlan
            }
            key => key,
        };
        form::key_step(w, key, shared)
    }

    fn on_news_step(&mut self, news: &ScreenNews, shared: &Shared) -> (bool, Step) {
        match (self.wizard.as_mut(), news.get::<W::News>()) {
            (Some(w), Some(news)) => w.on_news(news, shared),
            _ => (false, Step::default()),
        }
    }

    /// A poller report of the wizard's cluster or of the Cluster API: its guards read again.
    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        let Some(w) = self.wizard.as_mut() else {
            return false;
        };
        (w.cluster() == change.cluster || change.capi) && reread_guards(w, shared)
    }

    /// Enter on the input line the wizard opened: a field's value or an acknowledgement.
    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        (self.wizard.as_mut()).map_or_else(Step::default, |w| form::input_step(w, text, shared))
    }

    /// The dispatcher approved a run of this wizard's operation: it runs when it is the plan
    /// on screen and its guards, read again, still allow it (the one gate's rule), the wizard
    /// closed for its progress. `None` for any other operation.
    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        if OperationKind::of(approved.action()) != W::OPERATION {
            return None;
        }
        let on_plan = self.on_plan();
        let shown = (self.wizard.as_mut()).filter(|_| on_plan || !W::PLAN_APART);
        let step = approved_step(shown, approved, shared, |w| {
            w.run().ok_or_else(|| "the plan is not ready".into())
        });
        if step.close {
            self.wizard = None;
        }
        Some(step)
    }

    fn of_cluster_in_use(&self) -> bool {
        W::OF_CLUSTER_IN_USE
    }

    fn home(&self) -> Screen {
        W::HOME
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        match &self.wizard {
            Some(w) => w.draw(area, buf, shared, look),
            None => Paragraph::new(W::CLOSED)
                .style(look.styles.get(Role::Muted))
                .render(area, buf),
        }
    }
}
