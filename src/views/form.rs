//! The request form the wizards share (create, provision): fields of three kinds (a choice
//! Left/Right cycle, a count within its bounds, text typed on the input line), the focus moved
//! through them, and the plan asked of a planner for the request, forgotten when a field
//! changes and kept only from the latest answer; drawn as the "Request" pane of label/value
//! rows. A wizard says what differs ([`Form`]); the keys, steps and rows are here once.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::table::pane_block;
use super::{Look, fit};
use crate::app::action::Effect;
use crate::app::binding::Move;
use crate::app::message::Message;
use crate::app::plan_keys::{GateKey, ack_step, gate_step};
use crate::app::plan_screen::{AskedPlan, GuardedPlan, PlanGuards};
use crate::app::screens::{Ask, Shared, Step};
use crate::config::{Config, ProviderKind};
use crate::tui::Role;

/// What Left/Right, `+` / `-` and the edit key do on a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Left/Right take the next or previous choice ([`Form::choose`]).
    Choice,
    /// Left/Right and `+` / `-` count up or down within the bounds.
    Count { min: usize, max: usize },
    /// Typed on the input line after `prompt`; Left/Right cycle what [`Form::choose`] offers,
    /// else open the input line.
    Text { prompt: &'static str },
}

/// One field of a form, as its row names it.
#[derive(Debug, Clone, Copy)]
pub struct FormField<F> {
    pub field: F,
    pub title: &'static str,
    pub kind: FieldKind,
}

/// The field `field`, its row titled `title`.
pub const fn field<F>(field: F, title: &'static str, kind: FieldKind) -> FormField<F> {
    FormField { field, title, kind }
}

/// The form keys every wizard has (its own key table binds them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKey {
    NextValue,
    PreviousValue,
    More,
    Less,
    /// Type the focused text field (a form of one text field: that one).
    Edit,
    /// Ask the planner for the request's plan.
    MakePlan,
    /// Move keys and `?` between the request's fields and the plan's guards.
    Focus,
    /// `?`: the selected guard explained while the guards have the keys, else help.
    Explain,
    /// A key of the plan screens' one gate.
    Gate(GateKey),
    Back,
}

/// What the input line the form opened holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Typing<F> {
    Field(F),
    /// The acknowledgement a guard's warning needs.
    Acknowledgement,
}

/// What every form holds alike: the focused field, the plan asked for its request with the
/// plan's guards, and what the input line it opened holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormState<F, P> {
    pub field: F,
    pub plan: AskedPlan<P>,
    /// Bumped per plan asked for: only the latest answer is kept.
    pub asked: u64,
    /// The plan's guards and the acknowledgements typed; the runner checks them again.
    pub guards: PlanGuards,
    /// The plan's guards, not the request's fields, have the move keys and `?`.
    pub guards_focused: bool,
    typing: Option<Typing<F>>,
}

impl<F, P> FormState<F, P> {
    /// A form focused on `field`, no plan asked yet.
    pub fn new(field: F) -> FormState<F, P> {
        FormState {
            field,
            plan: AskedPlan::None,
            asked: 0,
            guards: PlanGuards::default(),
            guards_focused: false,
            typing: None,
        }
    }

    /// A field changed: the plan, its guards and their acknowledgements no longer hold.
    pub fn forget(&mut self) {
        self.plan = AskedPlan::None;
        self.guards = PlanGuards::default();
    }

    /// A new plan asked for: the number its answer comes back with.
    fn ask(&mut self) -> u64 {
        self.forget();
        self.asked += 1;
        self.plan = AskedPlan::Planning(self.asked);
        self.asked
    }

    /// The planner's answer to the plan asked as `asked`; whether it was the latest (an older
    /// answer is dropped).
    pub fn answer(&mut self, asked: u64, result: Result<Box<P>, String>) -> bool {
        if asked != self.asked {
            return false;
        }
        self.plan = match result {
            Ok(plan) => AskedPlan::Ready(plan),
            Err(e) => AskedPlan::Failed(e),
        };
        true
    }
}

/// The parts of [`GuardedPlan`] every form has alike, over its `form` field: its guards, which
/// part has the keys, why there is nothing to start yet (`$make` says how a plan is made), and
/// the approval its ready plan asks for.
macro_rules! form_guards {
    ($make:literal) => {
        fn guards(&self) -> &$crate::app::plan_screen::PlanGuards {
            &self.form.guards
        }

        fn guards_mut(&mut self) -> &mut $crate::app::plan_screen::PlanGuards {
            &mut self.form.guards
        }

        fn guards_focused(&self) -> bool {
            self.form.guards_focused
        }

        fn unready(&self) -> Option<String> {
            self.form.plan.unready($make)
        }

        fn approval(&self) -> Option<$crate::approval::MutatingAction> {
            self.form.plan.ready().map(|plan| plan.action())
        }

        fn approves(&self, approved: &$crate::approval::MutatingAction) -> bool {
            (self.form.plan.ready()).is_some_and(|plan| plan.is_approved_by(approved))
        }
    };
}
pub(crate) use form_guards;

/// What a wizard says of its own fields; [`key_step`], [`move_step`], [`input_step`] and
/// [`render_request`] do the rest.
pub trait Form: GuardedPlan {
    type Field: Copy + PartialEq + 'static;
    type Plan;
    /// The fields, top to bottom.
    const FIELDS: &'static [FormField<Self::Field>];
    fn form(&mut self) -> &mut FormState<Self::Field, Self::Plan>;
    /// The value of a count field.
    fn count(&mut self, field: Self::Field) -> Option<&mut usize>;
    /// The value of a text field.
    fn text(&mut self, field: Self::Field) -> Option<&mut String>;
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

/// The field `field`'s entry.
fn entry<W: Form>(field: W::Field) -> &'static FormField<W::Field> {
    let fields = W::FIELDS;
    fields
        .iter()
        .find(|f| f.field == field)
        .unwrap_or(&fields[0])
}

/// The focused field when it is of `kind`, else the form's only one of that kind.
fn focused_or_only<W: Form>(focus: W::Field, kind: fn(&FieldKind) -> bool) -> Option<W::Field> {
    let of_kind: Vec<_> = W::FIELDS.iter().filter(|f| kind(&f.kind)).collect();
    match of_kind.as_slice() {
        _ if kind(&entry::<W>(focus).kind) => Some(focus),
        [only] => Some(only.field),
        _ => None,
    }
}

/// A form key on `w`: a value changed (the plan forgotten), the input line opened for a text,
/// the plan asked for, a key of the one gate; Focus, Explain and Back are the wizard shell's
/// (`views::wizard`).
pub fn key_step<W: Form>(w: &mut W, key: FormKey, shared: &Shared) -> Step {
    let focus = w.form().field;
    let forward = matches!(key, FormKey::NextValue | FormKey::More);
    let is_count = |k: &FieldKind| matches!(k, FieldKind::Count { .. });
    let is_text = |k: &FieldKind| matches!(k, FieldKind::Text { .. });
    let effects = match key {
        FormKey::NextValue | FormKey::PreviousValue => match entry::<W>(focus).kind {
            FieldKind::Count { .. } => counted(w, focus, forward),
            FieldKind::Choice => match w.choose(focus, forward, shared) {
                Some(effects) => effects,
                None => return Step::default(),
            },
            FieldKind::Text { .. } => match w.choose(focus, forward, shared) {
                Some(effects) => effects,
                None => return edit(w, Some(focus)),
            },
        },
        FormKey::More | FormKey::Less => match focused_or_only::<W>(focus, is_count) {
            Some(field) => counted(w, field, forward),
            None => return Step::default(),
        },
        FormKey::Edit => return edit(w, focused_or_only::<W>(focus, is_text)),
        FormKey::MakePlan => {
            let asked = w.form().ask();
            return Step::effects(vec![w.plan_task(asked, shared)]);
        }
        FormKey::Gate(key) => {
            let step = gate_step(w, key, shared.page(), shared.readonly);
            if matches!(step.ask, Some(Ask::Input { .. })) {
                w.form().typing = Some(Typing::Acknowledgement);
            }
            return step;
        }
        FormKey::Focus | FormKey::Explain | FormKey::Back => return Step::default(),
    };
    w.form().forget();
    Step::effects(effects)
}

/// One more or one fewer of the count `field`, within its bounds.
fn counted<W: Form>(w: &mut W, field: W::Field, more: bool) -> Vec<Effect> {
    if let (FieldKind::Count { min, max }, Some(value)) = (entry::<W>(field).kind, w.count(field)) {
        *value = if more {
            (*value + 1).min(max)
        } else {
            value.saturating_sub(1).max(min)
        };
    }
    Vec::new()
}

/// The input line opened on the text `field`; on any other, a note that Left/Right change it.
fn edit<W: Form>(w: &mut W, field: Option<W::Field>) -> Step {
    let focus = entry::<W>(w.form().field);
    let Some((field, FieldKind::Text { prompt })) = field.map(|f| (f, entry::<W>(f).kind)) else {
        let text = format!("{}: Left/Right change it", focus.title);
        return Step::message(Message::info(text));
    };
    let text = w.text(field).map(|t| t.clone()).unwrap_or_default();
    w.form().typing = Some(Typing::Field(field));
    Step::ask(Ask::Input { prompt, text })
}

/// A move key: through the plan's guards while they have the keys, else through the request's
/// fields (`page` of them for PgUp/PgDn).
pub fn move_step<W: Form>(w: &mut W, to: Move, page: usize, shared: &Shared) {
    if w.form().guards_focused {
        gate_step(w, GateKey::Move(to), shared.page(), shared.readonly);
        return;
    }
    let fields = W::FIELDS;
    let form = w.form();
    let at = fields
        .iter()
        .position(|f| f.field == form.field)
        .unwrap_or(0);
    form.field = fields[to.from(at, fields.len() - 1, page)].field;
}

/// Enter on the input line the form opened: the field typed (its plan forgotten), or the
/// acknowledgement a guard needs.
pub fn input_step<W: Form>(w: &mut W, text: &str, shared: &Shared) -> Step {
    match w.form().typing.take() {
        Some(Typing::Field(field)) => {
            if let Some(value) = w.text(field) {
                *value = text.trim().to_string();
            }
            w.form().forget();
            w.typed(field)
        }
        Some(Typing::Acknowledgement) => ack_step(w, text, shared),
        None => Step::default(),
    }
}

/// The choice after `at` of `n` (before it, going back), wrapping around.
pub fn cycled(at: usize, n: usize, forward: bool) -> usize {
    let n = n.max(1);
    if forward {
        (at + 1) % n
    } else {
        (at + n - 1) % n
    }
}

/// A configured provider a wizard offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderChoice {
    pub name: String,
    pub kind: ProviderKind,
}

/// taloscope's configured providers by name, `own` (a cluster's own provider) first.
pub fn providers(config: &Config, own: Option<&str>) -> Vec<ProviderChoice> {
    let mut providers: Vec<ProviderChoice> = (config.providers.iter())
        .map(|(name, p)| ProviderChoice {
            name: name.clone(),
            kind: p.kind,
        })
        .collect();
    providers.sort_by_key(|p| Some(p.name.as_str()) != own);
    providers
}

/// What a wizard says when the config names no provider.
pub fn no_providers(config: &Config) -> Message {
    Message::error(format!(
        "{}: no providers: add one under providers: (kind: opennebula or oneflow)",
        config.file_label()
    ))
}

/// The provider row's value: the one at `at` of `list` with its kind (marked when it is the
/// cluster's `own`) and where it stands in the list.
pub fn provider_value(list: &[ProviderChoice], at: usize, own: Option<&str>) -> (String, Role) {
    let Some(p) = list.get(at) else {
        return ("none configured".into(), Role::Error);
    };
    let mark = if own == Some(p.name.as_str()) {
        ", the cluster's"
    } else {
        ""
    };
    let (name, kind, of) = (&p.name, p.kind, list.len());
    (
        format!("{name} ({kind}{mark})  [{} of {of}]", at + 1),
        Role::Text,
    )
}

/// The form's "Request" pane: a row a field (its title, then its value in its role, as `row`
/// says), the one focused on marked, the titles padded to the longest; `active` while the
/// fields have the keys.
pub fn render_request<F: PartialEq>(
    look: &Look,
    (fields, focus): (&[FormField<F>], F),
    row: impl Fn(&FormField<F>) -> (&'static str, (String, Role)),
    active: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    let title = Span::styled(" Request ", look.styles.get(Role::Title));
    let block = pane_block(look, vec![title], active);
    let inner = block.inner(area);
    block.render(area, buf);
    let rows: Vec<_> = fields.iter().map(|f| (f.field == focus, row(f))).collect();
    let pad = rows.iter().map(|(_, (t, _))| t.chars().count()).max();
    let (s, g, pad) = (&look.styles, &look.glyphs, pad.unwrap_or(0) + 1);
    let lines: Vec<_> = (rows.into_iter())
        .map(|(focused, (title, (value, role)))| {
            let mark = if focused { g.selected } else { " " };
            let head = format!("{mark} {title:<pad$} ");
            let room = usize::from(inner.width).saturating_sub(head.chars().count());
            let title_role = if focused { Role::Accent } else { Role::Muted };
            Line::from(vec![
                Span::styled(head, s.get(title_role)),
                Span::styled(fit(&value, room, g.ellipsis), s.get(role)),
            ])
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}
