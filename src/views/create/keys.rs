//! The create screen's keys, by stage: the wizard's fields and the plan with its guards (`n`
//! on the fleet opens it: the shell's table; the move keys, `:`, `?` and quit are shared).
use super::{CreateScreen, CreateStage};
use crate::app::binding::{Binding, Key, bind};
use crate::app::plan_keys::GateKey;

/// The create screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CreateKey {
    NextValue,
    PreviousValue,
    More,
    Less,
    /// Type the focused field's value.
    Edit,
    /// Ask the provider for the plan.
    MakePlan,
    /// A key of the plan screens' one gate.
    Gate(GateKey),
    Back,
}

type CreateBinding = Binding<CreateKey, CreateScreen>;

#[rustfmt::skip]
static WIZARD: &[CreateBinding] = &[
    bind(&[Key::char('l'), Key::RIGHT], CreateKey::NextValue, "next value of the field (typed fields: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], CreateKey::PreviousValue, "previous value of the field"),
    bind(&[Key::char('+')], CreateKey::More, "one more (control planes, workers)"),
    bind(&[Key::char('-')], CreateKey::Less, "one fewer (control planes, workers)"),
    bind(&[Key::char('e')], CreateKey::Edit, "type the field's value (name, versions, endpoint, patches)").footer("edit"),
    bind(&[Key::ENTER], CreateKey::MakePlan, "make the plan (asks the provider, as `taloscope create --plan`)").footer("plan"),
    bind(&[Key::ESC], CreateKey::Back, "close the wizard").footer("back"),
];

#[rustfmt::skip]
static PLAN: &[CreateBinding] = &[
    bind(&[Key::char('s')], CreateKey::Gate(GateKey::Start), "create the cluster (asks for its name)").footer("start"),
    bind(&[Key::char('a')], CreateKey::Gate(GateKey::Acknowledge), "type the acknowledgement a warning needs").footer("ack"),
    bind(&[Key::char('?')], CreateKey::Gate(GateKey::Explain), "explain the selected guard").footer("why"),
    bind(&[Key::ESC], CreateKey::Back, "back to the request").footer("back"),
];

/// The keys of `stage`.
pub(super) fn of(stage: CreateStage) -> &'static [CreateBinding] {
    match stage {
        CreateStage::Form => WIZARD,
        CreateStage::Plan => PLAN,
    }
}
