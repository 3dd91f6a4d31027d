//! The wizards (create, provision) on the one plan screen (`views::plan`): a wizard
//! ([`Wizard`]) is a kind's request and its form (`views::form`) held on the one plan holder,
//! and the plan a planner makes of the request shown with its guards behind the one gate,
//! apart from the form (Enter goes on to it, Esc back) or beside it (Tab moves the keys
//! between the fields and the guards). A kind says only what is its own ([`WizardKind`]): its
//! fields (where each count's and text's value is), keys, plan task and news, its guards, what
//! its approved plan runs, and its panes; the form's steps are here once. Pure.
use std::fmt::Debug;
use std::ops::{Deref, DerefMut};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};

use super::form::{FieldKind, FormField, FormKey, FormState};
use super::plan::{PlanOperation, PlanScreen, refresh_step};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::Binding;
use crate::app::message::Message;
use crate::app::plan_screen::{AskedPlan, GuardReading, PlanGuards, PlanHolder, PlanSubject};
use crate::app::screen::Screen;
use crate::app::screens::{Ask, Opening, ScreenName, ScreenNews, Shared, Step};
use crate::approval::MutatingAction;
use crate::guards::Guard;
use crate::tui::{Look, Role};

/// What one wizard says of itself: only what differs between wizards.
pub trait WizardKind: Debug + Clone + Send + Sync + 'static {
    const NAME: ScreenName;
    /// Its section's title in `?`.
    const TITLE: &'static str;
    /// The plan shows on a stage of its own (Enter goes on to it, Esc back to the request),
    /// else beside the request (Tab moves the keys between them).
    const PLAN_APART: bool;
    /// Where Esc leads when it was opened from nowhere else.
    const HOME: Screen;
    /// Whether it shows the cluster in use.
    const OF_CLUSTER_IN_USE: bool;
    /// What the screen says with no wizard open.
    const CLOSED: &'static str;
    /// How its plan is made, as Start's refusal says while there is none.
    const MAKE: &'static str;
    /// The fields, top to bottom.
    const FIELDS: &'static [FormField<Self::Field, Self>];
    /// What Start asks the dispatcher to approve of its ready plan.
    const ACTION: fn(&Self::Plan) -> MutatingAction;
    /// What the one runner runs for its approved plan.
    const RUN: fn(Box<Self::Plan>) -> ActionRun;
    type Field: Copy + PartialEq + Debug + Send + Sync + 'static;
    type Plan: Debug + Clone + Send + Sync;
    /// What its IO tasks report.
    type News: Send + Sync + 'static;
    /// The request's keys (the plan's are the one gate's; the move keys are added).
    const KEYS: &'static [Binding<FormKey, PlanScreen<Wizard<Self>>>];
    /// The wizard drawn (its request, its plan: as its stage says).
    const DRAW: Draw<Self>;
    /// A new wizard brought on screen from `opening`, and its step; or why it cannot show.
    fn open(opening: &Opening, shared: &Shared) -> Result<(Self, Step), Message>;
    /// The cluster its plan acts on.
    fn cluster(&self) -> &str;
    /// News from its IO task: whether it changed what it shows, and the step.
    fn on_news(h: &mut PlanHolder<Wizard<Self>>, news: &Self::News, s: &Shared) -> (bool, Step);
    /// Its ready plan's guards over `reading`.
    fn guards_over(&self, plan: Option<&Self::Plan>, reading: &GuardReading<'_>) -> Vec<Guard>;
    /// Left/Right on `field`: the next (or previous) choice taken, and the tasks it asks for;
    /// `None` when `field` offers none (nothing changed).
    fn choose(&mut self, field: Self::Field, forward: bool, shared: &Shared)
    -> Option<Vec<Effect>>;
    /// The task asking the planner for the request's plan, as `asked`.
    fn plan_task(&self, asked: u64, shared: &Shared) -> Effect;
    /// `field` was typed (trimmed): what follows.
    fn typed(&mut self, _field: Self::Field) -> Step {
        Step::default()
    }
}

/// How a wizard of kind `W` is drawn.
pub type Draw<W> = fn(&PlanHolder<Wizard<W>>, Rect, &mut Buffer, &Shared, &Look);

/// A wizard: its kind's request as typed and chosen, and the form's own state (the focused
/// field, the plan asked for the request) held once for every kind.
#[derive(Debug, Clone)]
pub struct Wizard<K: WizardKind> {
    pub request: K,
    pub form: FormState<K::Field, K::Plan>,
}

/// The request's values read and changed through the wizard.
impl<K: WizardKind> Deref for Wizard<K> {
    type Target = K;
    fn deref(&self) -> &K {
        &self.request
    }
}

impl<K: WizardKind> DerefMut for Wizard<K> {
    fn deref_mut(&mut self) -> &mut K {
        &mut self.request
    }
}

/// A wizard's plan on the one plan holder: its request's plan as the planner answered it, its
/// guards as the kind reads them. A plan apart is approved only while it shows.
impl<W: WizardKind> PlanSubject for Wizard<W> {
    fn unready(&self) -> Option<String> {
        self.form.plan.unready(W::MAKE)
    }

    fn evaluate(&mut self, _: &str, reading: &GuardReading<'_>, _: &[String]) -> Vec<Guard> {
        self.request.guards_over(self.form.plan.ready(), reading)
    }

    const OWN_LIST: bool = true;
    const APART: bool = W::PLAN_APART;

    fn approval(&self, _: &str) -> Option<MutatingAction> {
        self.form.plan.ready().map(W::ACTION)
    }
}

/// The plan apart from the request shows (its guards have the keys).
fn on_plan<W: WizardKind>(screen: &PlanScreen<Wizard<W>>) -> bool {
    W::PLAN_APART && (screen.plan.as_ref()).is_some_and(|h| h.on_guards)
}

/// A wizard on the one plan screen: the request's keys before (or beside) its plan, the move
/// keys through its fields while the guards do not have them, `r` and Esc as its stage says.
impl<W: WizardKind> PlanOperation for Wizard<W> {
    const NAME: ScreenName = W::NAME;
    const TITLE: &'static str = W::TITLE;
    const OF_CLUSTER_IN_USE: bool = W::OF_CLUSTER_IN_USE;
    type Kept = ();
    type Key = FormKey;

    fn own_keys(screen: &PlanScreen<Self>) -> &'static [Binding<FormKey, PlanScreen<Self>>] {
        if on_plan(screen) { &[] } else { W::KEYS }
    }

    fn before_plan(screen: &PlanScreen<Self>) -> bool {
        W::PLAN_APART && !on_plan(screen)
    }

    fn moves(_: &PlanScreen<Self>) -> bool {
        true
    }

    fn open(
        screen: &mut PlanScreen<Self>,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message> {
        let (request, step) = W::open(opening, shared)?;
        let cluster = request.cluster().to_string();
        let form = FormState::new(W::FIELDS[0].field);
        screen.plan = Some(PlanHolder::new(&cluster, Wizard { request, form }));
        Ok(step)
    }

    fn on_key(screen: &mut PlanScreen<Self>, key: FormKey, shared: &Shared) -> Step {
        match screen.plan.as_mut() {
            Some(h) if key != FormKey::Back => key_step(h, key, shared),
            Some(_) => Self::back(screen),
            None => Step::close(),
        }
    }

    fn on_news_step(
        screen: &mut PlanScreen<Self>,
        news: &ScreenNews,
        shared: &Shared,
    ) -> (bool, Step) {
        match (screen.plan.as_mut(), news.get::<W::News>()) {
            (Some(h), Some(news)) => W::on_news(h, news, shared),
            _ => (false, Step::default()),
        }
    }

    /// Enter on a field's input line (an acknowledgement's is the gate's): the field typed,
    /// its plan forgotten.
    fn on_input(screen: &mut PlanScreen<Self>, text: &str, _: &Shared) -> Step {
        let Some(h) = screen.plan.as_mut() else {
            return Step::default();
        };
        let Some(field) = h.form.typing.take() else {
            return Step::default();
        };
        if let FieldKind::Text { value, .. } = &entry::<W>(field).kind {
            *value(&mut h.plan.request) = text.trim().to_string();
        }
        forget(h);
        h.typed(field)
    }

    /// The fields are its own list.
    fn list(&self) -> (usize, usize) {
        let at = W::FIELDS.iter().position(|f| f.field == self.form.field);
        (at.unwrap_or(0), W::FIELDS.len())
    }

    fn select(&mut self, at: usize) {
        if let Some(f) = W::FIELDS.get(at) {
            self.form.field = f.field;
        }
    }

    /// `r`: a plan apart (the planner's, guards and all) asked again; a plan beside the request
    /// follows its cluster's status, polled now.
    fn refresh(screen: &mut PlanScreen<Self>, shared: &Shared) -> Step {
        match screen.plan.as_mut() {
            Some(h) if W::PLAN_APART => key_step(h, FormKey::MakePlan, shared),
            Some(h) => refresh_step(&h.cluster),
            None => Step::default(),
        }
    }

    /// Esc: from a plan apart back to the request, else the wizard closed.
    fn back(screen: &mut PlanScreen<Self>) -> Step {
        let on_plan = on_plan(screen);
        match screen.plan.as_mut() {
            Some(h) if on_plan => {
                h.on_guards = false;
                Step::default()
            }
            _ => {
                screen.plan = None;
                Step::close()
            }
        }
    }

    fn run(holder: &PlanHolder<Self>, _: &Shared) -> Result<ActionRun, String> {
        let plan = holder.form.plan.ready().ok_or("the plan is not ready")?;
        Ok((W::RUN)(Box::new(plan.clone())))
    }

    fn home() -> Screen {
        W::HOME
    }

    fn draw(screen: &PlanScreen<Self>, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        match &screen.plan {
            Some(h) => (W::DRAW)(h, area, buf, shared, look),
            None => Paragraph::new(W::CLOSED)
                .style(look.styles.get(Role::Muted))
                .render(area, buf),
        }
    }
}

/// The field `field`'s entry.
fn entry<W: WizardKind>(field: W::Field) -> &'static FormField<W::Field, W> {
    let fields = W::FIELDS;
    fields
        .iter()
        .find(|f| f.field == field)
        .unwrap_or(&fields[0])
}

/// The focused field when it is of `kind`, else the form's only one of that kind.
fn focused_or_only<W: WizardKind>(
    focus: W::Field,
    kind: fn(&FieldKind<W>) -> bool,
) -> Option<W::Field> {
    let of_kind: Vec<_> = W::FIELDS.iter().filter(|f| kind(&f.kind)).collect();
    match of_kind.as_slice() {
        _ if kind(&entry::<W>(focus).kind) => Some(focus),
        [only] => Some(only.field),
        _ => None,
    }
}

/// A field changed: the plan, its guards and their acknowledgements no longer hold.
fn forget<W: WizardKind>(h: &mut PlanHolder<Wizard<W>>) {
    h.form.plan = AskedPlan::None;
    h.guards = PlanGuards::default();
}

/// A request key on `h`: a value changed (the plan forgotten), the input line opened for a
/// text, the plan asked for (and shown, when apart).
fn key_step<W: WizardKind>(h: &mut PlanHolder<Wizard<W>>, key: FormKey, shared: &Shared) -> Step {
    let focus = h.form.field;
    let forward = matches!(key, FormKey::NextValue | FormKey::More);
    let is_count = |k: &FieldKind<W>| matches!(k, FieldKind::Count { .. });
    let is_text = |k: &FieldKind<W>| matches!(k, FieldKind::Text { .. });
    let effects = match key {
        FormKey::NextValue | FormKey::PreviousValue => match &entry::<W>(focus).kind {
            FieldKind::Count { .. } => counted(&mut h.plan.request, focus, forward),
            FieldKind::Choice => match h.choose(focus, forward, shared) {
                Some(effects) => effects,
                None => return Step::default(),
            },
            FieldKind::Text { .. } => match h.choose(focus, forward, shared) {
                Some(effects) => effects,
                None => return edit(&mut h.plan, Some(focus)),
            },
        },
        FormKey::More | FormKey::Less => match focused_or_only::<W>(focus, is_count) {
            Some(field) => counted(&mut h.plan.request, field, forward),
            None => return Step::default(),
        },
        FormKey::Edit => return edit(&mut h.plan, focused_or_only::<W>(focus, is_text)),
        FormKey::MakePlan => {
            forget(h);
            h.cluster = h.plan.cluster().to_string();
            h.on_guards |= W::PLAN_APART;
            let form = &mut h.plan.form;
            form.asked += 1;
            let asked = form.asked;
            form.plan = AskedPlan::Planning(asked);
            return Step::effects(vec![h.plan_task(asked, shared)]);
        }
        FormKey::Back => return Step::default(),
    };
    forget(h);
    Step::effects(effects)
}

/// One more or one fewer of the count `field`, within its bounds.
fn counted<W: WizardKind>(w: &mut W, field: W::Field, more: bool) -> Vec<Effect> {
    if let FieldKind::Count { min, max, value } = &entry::<W>(field).kind {
        let value = value(w);
        *value = if more {
            (*value + 1).min(*max)
        } else {
            value.saturating_sub(1).max(*min)
        };
    }
    Vec::new()
}

/// The input line opened on the text `field`; on any other, a note that Left/Right change it.
fn edit<W: WizardKind>(w: &mut Wizard<W>, field: Option<W::Field>) -> Step {
    let focus = entry::<W>(w.form.field);
    let Some((field, FieldKind::Text { prompt, value })) = field.map(|f| (f, &entry::<W>(f).kind))
    else {
        let text = format!("{}: Left/Right change it", focus.title);
        return Step::message(Message::info(text));
    };
    let text = value(&mut w.request).clone();
    w.form.typing = Some(field);
    Step::ask(Ask::Input { prompt, text })
}
