//! The one plan screen: every guarded operation's plan on one screen module generic over the
//! operation ([`PlanScreen`] over a [`PlanOperation`]: a node or etcd action, a delete or a
//! CAPI scale, an in-place or a CAPI-way upgrade), with the one gate's keys alike on every
//! plan (the move keys, Tab and `?` on its guards or its own list, `a`, `s`, `r`, Esc; their
//! steps in `gate`) and the guards and last line every plan draws (`views::plan_parts`); and
//! the typed confirmation the dispatcher asks for. What an operation adds (a menu or a count
//! before its plan, its own keys, its news, its drawing) it says through [`PlanOperation`].
//! Pure.
pub mod confirm;
mod gate;

use std::fmt::Debug;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::Look;
pub(super) use super::plan_parts::{NoPlanYet, WizardPlan};
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, bind, intent, key_lines, typed_char};
use crate::app::message::Message;
use crate::app::plan_screen::{PlanHolder, PlanSubject};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{
    Ask, FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::approval::ApprovedAction;
use crate::fleet::ClusterStatus;
pub use gate::{ACK_PROMPT, closed_with, refresh_step, reread_guards};
use gate::{ack_step, acknowledge_step, approved_step, explain_step, list_move, start_step};

/// What one operation says of its plan screen: only what differs between operations.
pub trait PlanOperation: PlanSubject + Send + Sync + 'static {
    const NAME: ScreenName;
    /// Its section's title in `?`.
    const TITLE: &'static str;
    /// Whether it shows the cluster in use.
    const OF_CLUSTER_IN_USE: bool = true;
    /// What the screen keeps beyond its plan: across plans, or before one (a menu, a count).
    type Kept: Debug + Clone + Default + Send + Sync;
    /// The operation's own key intents (`Infallible` for an operation with none).
    type Key: Debug + Copy + Send + Sync + 'static;
    /// Its own keys as the screen stands (before its plan, the only ones); none unless it says.
    fn own_keys(_screen: &PlanScreen<Self>) -> &'static [Binding<Self::Key, PlanScreen<Self>>] {
        &[]
    }
    /// Brought on screen from `opening`: the step, or why it cannot show now.
    fn open(
        screen: &mut PlanScreen<Self>,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message>;
    /// One of its own keys.
    fn on_key(_screen: &mut PlanScreen<Self>, _key: Self::Key, _shared: &Shared) -> Step {
        Step::default()
    }
    /// News from its IO task: whether it changed what the screen shows.
    fn on_news(_screen: &mut PlanScreen<Self>, _news: &ScreenNews, _shared: &Shared) -> bool {
        false
    }
    /// News that asks something of the shell too: whether it changed what the screen shows,
    /// and the step.
    fn on_news_step(
        screen: &mut PlanScreen<Self>,
        news: &ScreenNews,
        shared: &Shared,
    ) -> (bool, Step) {
        (Self::on_news(screen, news, shared), Step::default())
    }
    /// Enter on the input line one of its own keys asked for.
    fn on_input(_screen: &mut PlanScreen<Self>, _text: &str, _shared: &Shared) -> Step {
        Step::default()
    }
    /// Whether a stage before its plan shows (a menu, a count or a form typed): its own keys
    /// are the only ones then.
    fn before_plan(_screen: &PlanScreen<Self>) -> bool {
        false
    }
    /// Whether the move keys move through its list (or guards) now: once its plan shows,
    /// unless it says (a form's fields before its plan).
    fn moves(screen: &PlanScreen<Self>) -> bool {
        !Self::before_plan(screen)
    }
    /// A character typed that no table binds, and what it is typed into (keys, help), while
    /// the screen takes one.
    fn typing(_screen: &PlanScreen<Self>) -> Option<(&'static str, &'static str)> {
        None
    }
    fn on_char(_screen: &mut PlanScreen<Self>, _c: char) -> Step {
        Step::default()
    }
    /// The plan's own list beside its guards (steps, phases): the selected row and how many.
    fn list(&self) -> (usize, usize) {
        (0, 0)
    }
    fn select(&mut self, _at: usize) {}
    /// `?` on its own list's selected row: title and text.
    fn explain(&self) -> Option<(String, String)> {
        None
    }
    /// `r`: the plan's cluster polled now (an operation that reads its plan reads it again).
    fn refresh(screen: &mut PlanScreen<Self>, _shared: &Shared) -> Step {
        (screen.plan.as_ref()).map_or_else(Step::default, |plan| refresh_step(&plan.cluster))
    }
    /// Esc on the plan: it closes with the screen (a wizard's goes back to its form).
    fn back(screen: &mut PlanScreen<Self>) -> Step {
        screen.plan = None;
        Step::close()
    }
    /// What the one runner runs for the approved plan, or why it cannot run.
    fn run(holder: &PlanHolder<Self>, shared: &Shared) -> Result<ActionRun, String>;
    /// Where Esc leads when it was opened from nowhere else.
    fn home() -> Screen {
        Screen::Cluster(Pane::Nodes)
    }
    /// The screen drawn under it, when it is a popup over one.
    fn drawn_over(_screen: &PlanScreen<Self>) -> Option<Screen> {
        None
    }
    fn draw(screen: &PlanScreen<Self>, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look);
}

/// The status of the cluster in use that an upgrade plan is made from, or the warning why
/// there is none yet (no cluster in use, or no poll answered).
pub fn status_in_use<'a>(shared: &Shared<'a>) -> Result<&'a ClusterStatus, Message> {
    let cluster = shared.cluster_in_use()?;
    let live = shared.fleet.cluster(cluster).filter(|l| l.has_data());
    let live = live.ok_or_else(|| Message::no_status_yet(cluster))?;
    Ok(&live.status)
}

/// The plan screen of operation `K`: its plan on the one plan holder while open, what the
/// operation keeps beyond it, and whether the input line open is a field of the operation's
/// own (else the acknowledgement's).
#[derive(Debug, Clone)]
pub struct PlanScreen<K: PlanOperation> {
    pub plan: Option<PlanHolder<K>>,
    pub kept: K::Kept,
    own_field: bool,
}

impl<K: PlanOperation> Default for PlanScreen<K> {
    fn default() -> Self {
        PlanScreen {
            plan: None,
            kept: K::Kept::default(),
            own_field: false,
        }
    }
}

/// The keys every plan answers alike once it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Common {
    /// The selected guard explained, or the plan's own selected row.
    Explain,
    /// The acknowledgement a guard needs, typed on the input line.
    Acknowledge,
    Start,
    Refresh,
    Back,
}

/// The one gate's keys; `bool`: whether an acknowledgement is the one thing left (the footer
/// offers `a` then).
#[rustfmt::skip]
static GATE: &[Binding<Common, bool>] = &[
    bind(&[Key::char('?')], Common::Explain, "why: what the selected guard (or row) checks or does").footer("why"),
    bind(&[Key::char('a')], Common::Acknowledge, "type the acknowledgement a guard needs").footer("ack").offered(ack_pending),
    bind(&[Key::char('s')], Common::Start, "start (refused while a guard blocks; asks for the name)").footer("start"),
    bind(&[Key::char('r')], Common::Refresh, "read the cluster (and the plan) again").footer("refresh"),
    bind(&[Key::ESC], Common::Back, "close the plan").footer("back"),
];

fn ack_pending(pending: &bool) -> bool {
    *pending
}

/// Tab, on a plan with a list of its own beside its guards ([`PlanSubject::OWN_LIST`], not
/// apart): the holder's `on_guards` switched.
#[derive(Debug, Clone, Copy)]
struct Switch;

#[rustfmt::skip]
static SWITCH: &[Binding<Switch, ()>] = &[
    bind(&[Key::TAB], Switch, "switch between the plan's rows and its guards").footer("focus"),
];

impl<K: PlanOperation> PlanScreen<K> {
    /// Whether Tab switches between the plan's own list and its guards (before any plan:
    /// whether every plan of the operation has that list).
    fn tab(&self) -> bool {
        let list = (self.plan.as_ref()).map_or(K::OWN_LIST, |p| p.plan.has_list());
        list && !K::APART
    }

    /// The plan with its guards, else a step that does nothing.
    fn common(&mut self, key: Common, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::default();
        };
        match key {
            Common::Explain => explain_step(plan, plan.plan.explain()),
            Common::Acknowledge => acknowledge_step(plan),
            Common::Start => start_step(plan, shared.readonly),
            Common::Refresh => K::refresh(self, shared),
            Common::Back => K::back(self),
        }
    }

    /// A move key: through the plan's own list, or its guards when they have the keys.
    fn moved(&mut self, to: crate::app::binding::Move, shared: &Shared) -> Step {
        if let Some(plan) = self.plan.as_mut() {
            let list = plan.plan.list();
            if let Some(at) = list_move(plan, to, list, shared.page()) {
                plan.plan.select(at);
            }
        }
        Step::default()
    }
}

impl<K: PlanOperation> ScreenModule for PlanScreen<K> {
    fn name(&self) -> ScreenName {
        K::NAME
    }

    fn title(&self) -> &'static str {
        K::TITLE
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = Vec::new();
        if self.tab() {
            lines.extend(key_lines(SWITCH, &()));
        }
        if let Some((keys, help)) = K::typing(self) {
            lines.push(KeyLine {
                keys: keys.to_string(),
                bound: &[],
                help,
                footer: None,
            });
        }
        lines.extend(key_lines(K::own_keys(self), self));
        if !K::before_plan(self) {
            let ack = self
                .plan
                .as_ref()
                .is_some_and(|p| p.guards.ack_prompt().is_some());
            lines.extend(key_lines(GATE, &ack));
        }
        if K::moves(self) {
            lines.extend(key_lines(MOVE_KEYS, &()));
        }
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        let gate = !K::before_plan(self) && intent(GATE, event).is_some();
        let moves = K::moves(self) && intent(MOVE_KEYS, event).is_some();
        let typing = K::typing(self).is_some() && typed_char(event).is_some();
        let switch = self.tab() && intent(SWITCH, event).is_some();
        typing || switch || intent(K::own_keys(self), event).is_some() || gate || moves
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        K::open(self, opening, shared)
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        // A key reaches the screen only once the input line closed.
        self.own_field = false;
        if let Some(key) = intent(K::own_keys(self), event) {
            let step = K::on_key(self, *key, shared);
            self.own_field = matches!(step.ask, Some(Ask::Input { .. }));
            return step;
        }
        if self.tab() && intent(SWITCH, event).is_some() {
            if let Some(plan) = self.plan.as_mut() {
                plan.on_guards = !plan.on_guards;
            }
            return Step::default();
        }
        if let Some(to) = intent(MOVE_KEYS, event).filter(|_| K::moves(self)) {
            return self.moved(*to, shared);
        }
        if let Some(key) = intent(GATE, event).filter(|_| !K::before_plan(self)) {
            return self.common(*key, shared);
        }
        match typed_char(event).filter(|_| K::typing(self).is_some()) {
            Some(c) => K::on_char(self, c),
            None => Step::default(),
        }
    }

    fn on_news_step(&mut self, news: &ScreenNews, shared: &Shared) -> (bool, Step) {
        K::on_news_step(self, news, shared)
    }

    /// A poller report of its plan's cluster or of the Cluster API: its guards read again.
    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        let plan = self.plan.as_mut();
        plan.is_some_and(|plan| {
            (change.capi || change.cluster == plan.cluster) && reread_guards(plan, shared)
        })
    }

    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        if std::mem::take(&mut self.own_field) {
            return K::on_input(self, text, shared);
        }
        match self.plan.as_mut() {
            Some(plan) => ack_step(plan, text, shared),
            None => Step::default(),
        }
    }

    /// The dispatcher approved the plan on screen: it runs on the one runner when it still is
    /// that plan and no guard blocks now; the screen closes for the progress.
    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        let step = approved_step(self.plan.as_mut(), approved, shared, |p| K::run(p, shared));
        if step.close {
            self.plan = None;
        }
        Some(step)
    }

    fn drawn_over(&self) -> Option<Screen> {
        K::drawn_over(self)
    }

    fn of_cluster_in_use(&self) -> bool {
        K::OF_CLUSTER_IN_USE
    }

    fn home(&self) -> Screen {
        K::home()
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        K::draw(self, area, buf, shared, look);
    }
}
