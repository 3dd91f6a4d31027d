//! The key tables of creating a cluster: the fleet's `n`, the wizard's request, the plan with
//! its guards, and the progress screen's fingerprint answers.
use super::action::Action;
use super::binding::{Binding, HELP, Key, bind, command_line, quit};
use super::create::CreateKey;
use super::keymap_upgrade::ACKNOWLEDGE;
use super::state::AppState;

/// The run asks whether the maintenance certificate shown is the VM's.
fn asking_trust(state: &AppState) -> bool {
    state
        .create
        .progress
        .as_ref()
        .is_some_and(|p| p.asking.is_some())
}

/// On the fleet, after its other keys (not in the footer: the help lists it).
#[rustfmt::skip]
pub(super) static FROM_FLEET: &[Binding] = &[bind(&[Key::char('n')], Action::Create(CreateKey::Open), "create a new cluster (the wizard; or the create running here)")];

#[rustfmt::skip]
const QUIT: Binding = quit("quit (a running create resumes from its journal)");

#[rustfmt::skip]
const COMMAND: Binding = command_line("command line (:fleet, :q)");

#[rustfmt::skip]
pub(super) static WIZARD: &[Binding] = &[
    bind(&[Key::char('l'), Key::RIGHT], Action::Create(CreateKey::NextValue), "next value of the field (typed fields: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], Action::Create(CreateKey::PreviousValue), "previous value of the field"),
    bind(&[Key::char('+')], Action::Create(CreateKey::More), "one more (control planes, workers)"),
    bind(&[Key::char('-')], Action::Create(CreateKey::Less), "one fewer (control planes, workers)"),
    bind(&[Key::char('e')], Action::Create(CreateKey::Edit), "type the field's value (name, versions, endpoint, patches)").footer("edit"),
    bind(&[Key::ENTER], Action::Create(CreateKey::MakePlan), "make the plan (asks the provider, as `taloscope create --plan`)").footer("plan"),
    bind(&[Key::ESC], Action::Back, "close the wizard").footer("back"),
    COMMAND,
    HELP,
    QUIT,
];

#[rustfmt::skip]
pub(super) static PLAN: &[Binding] = &[
    bind(&[Key::char('s')], Action::StartPlan, "create the cluster (asks for its name)").footer("start"),
    ACKNOWLEDGE,
    bind(&[Key::char('?')], Action::Explain, "explain the selected guard").footer("why"),
    bind(&[Key::ESC], Action::Back, "back to the request").footer("back"),
    COMMAND,
    QUIT,
];

#[rustfmt::skip]
pub(super) static PROGRESS: &[Binding] = &[
    bind(&[Key::char('y')], Action::Create(CreateKey::Trust), "the maintenance certificate fingerprint shown is the VM's: apply its config").footer("confirm").offered(asking_trust),
    bind(&[Key::char('n')], Action::Create(CreateKey::Distrust), "it is not: the run stops before applying any config to it").footer("refuse").offered(asking_trust),
    bind(&[Key::ESC], Action::Back, "back to the fleet (the create goes on; n shows it again)").footer("back"),
    COMMAND,
    HELP,
    QUIT,
];
