//! The request form the wizards share (create, provision): fields of three kinds (a choice
//! Left/Right cycle, a count within its bounds, text typed on the input line), the focused
//! one, and the plan asked of a planner for the request, kept only from the latest answer;
//! the providers a wizard offers; drawn as the "Request" pane of label/value rows. Its steps
//! are the one wizard's (`views::wizard`).
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::table::pane_block;
use super::{Look, fit};
use crate::app::message::Message;
use crate::app::plan_screen::AskedPlan;
use crate::config::{Config, ProviderKind};
use crate::tui::Role;

/// What Left/Right, `+` / `-` and the edit key do on a field of the request `K`, and where in
/// `K` a count's or a text's value is.
#[derive(Debug)]
pub enum FieldKind<K> {
    /// Left/Right take the next or previous choice (`WizardKind::choose`).
    Choice,
    /// Left/Right and `+` / `-` count up or down within the bounds.
    Count {
        min: usize,
        max: usize,
        value: fn(&mut K) -> &mut usize,
    },
    /// Typed on the input line after `prompt`; Left/Right cycle what `WizardKind::choose` offers,
    /// else open the input line.
    Text {
        prompt: &'static str,
        value: fn(&mut K) -> &mut String,
    },
}

/// One field of a form of the request `K`, as its row names it.
#[derive(Debug)]
pub struct FormField<F, K> {
    pub field: F,
    pub title: &'static str,
    pub kind: FieldKind<K>,
}

/// The field `field`, its row titled `title`.
pub const fn field<F, K>(field: F, title: &'static str, kind: FieldKind<K>) -> FormField<F, K> {
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
    Back,
}

/// What every form holds alike: the focused field, the plan asked for its request, and the
/// text field the input line it opened types (which of the request and its plan has the keys
/// is the plan holder's `on_guards`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormState<F, P> {
    pub field: F,
    pub plan: AskedPlan<P>,
    /// Bumped per plan asked for: only the latest answer is kept.
    pub asked: u64,
    pub typing: Option<F>,
}

impl<F, P> FormState<F, P> {
    /// A form focused on `field`, no plan asked yet.
    pub fn new(field: F) -> FormState<F, P> {
        FormState {
            field,
            plan: AskedPlan::None,
            asked: 0,
            typing: None,
        }
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

/// The choice after `at` of `n` (before it, going back), wrapping around.
pub fn cycled(at: usize, n: usize, forward: bool) -> usize {
    let n = n.max(1);
    if forward {
        (at + 1) % n
    } else {
        (at + n - 1) % n
    }
}

/// The choice after `current` among `choices` (before it, going back), wrapping around.
pub fn cycled_in<'a, T: PartialEq>(choices: &'a [T], current: &T, forward: bool) -> Option<&'a T> {
    let at = choices.iter().position(|c| c == current).unwrap_or(0);
    choices.get(cycled(at, choices.len(), forward))
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
pub fn render_request<F: PartialEq, K>(
    look: &Look,
    (fields, focus): (&[FormField<F, K>], F),
    row: impl Fn(&FormField<F, K>) -> (&'static str, (String, Role)),
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
