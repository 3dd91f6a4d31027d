//! The create screen's keys, by stage: the wizard's fields and the plan with its guards (`n`
//! on the fleet opens it: the shell's table; the move keys, `:`, `?` and quit are shared).
use super::CreateScreen;
use crate::app::binding::{Binding, Key, bind};
use crate::app::plan_keys::GateKey;
use crate::views::form::FormKey;

type CreateBinding = Binding<FormKey, CreateScreen>;

#[rustfmt::skip]
static WIZARD: &[CreateBinding] = &[
    bind(&[Key::char('l'), Key::RIGHT], FormKey::NextValue, "next value of the field (typed fields: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], FormKey::PreviousValue, "previous value of the field"),
    bind(&[Key::char('+')], FormKey::More, "one more (control planes, workers)"),
    bind(&[Key::char('-')], FormKey::Less, "one fewer (control planes, workers)"),
    bind(&[Key::char('e')], FormKey::Edit, "type the field's value (name, versions, endpoint, patches)").footer("edit"),
    bind(&[Key::ENTER], FormKey::MakePlan, "make the plan (asks the provider, as `taloscope create --plan`)").footer("plan"),
    bind(&[Key::ESC], FormKey::Back, "close the wizard").footer("back"),
];

#[rustfmt::skip]
static PLAN: &[CreateBinding] = &[
    bind(&[Key::char('s')], FormKey::Gate(GateKey::Start), "create the cluster (asks for its name)").footer("start"),
    bind(&[Key::char('a')], FormKey::Gate(GateKey::Acknowledge), "type the acknowledgement a warning needs").footer("ack"),
    bind(&[Key::char('?')], FormKey::Gate(GateKey::Explain), "explain the selected guard").footer("why"),
    bind(&[Key::ESC], FormKey::Back, "back to the request").footer("back"),
];

/// The keys of the plan while it shows, else of the request.
pub(super) fn of(on_plan: bool) -> &'static [CreateBinding] {
    if on_plan { PLAN } else { WIZARD }
}
