//! The key tables of the provision wizard, the cluster panes' `p` and the progress screen's
//! `x` on a provision's failed VM: `p` provisions wherever it is bound (live data and
//! rollouts pause on `Space`).
use super::action::Action;
use super::binding::{Binding, Key, bind, command_line, quit};
use super::provision::ProvisionKey;
use super::state::AppState;

/// `a` on the wizard's guards.
#[rustfmt::skip]
const ACKNOWLEDGE: Binding = bind(&[Key::char('a')], Action::Acknowledge, "type the acknowledgement a warning needs").footer("ack");

/// On the cluster panes, ahead of their other keys.
#[rustfmt::skip]
pub(super) static FROM_CLUSTER: &[Binding] = &[bind(&[Key::char('p')], Action::Provision(ProvisionKey::Open), "provision new nodes (the wizard; or the running provision)").footer("provision")];

#[rustfmt::skip]
pub(super) static WIZARD: &[Binding] = &[
    bind(&[Key::char('j'), Key::DOWN], Action::MoveDown, "next field (or guard, after Tab)"),
    bind(&[Key::char('k'), Key::UP], Action::MoveUp, "previous field (or guard)"),
    bind(&[Key::char('l'), Key::RIGHT], Action::Provision(ProvisionKey::NextValue), "next value of the field (Names: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], Action::Provision(ProvisionKey::PreviousValue), "previous value of the field"),
    bind(&[Key::char('+')], Action::Provision(ProvisionKey::More), "one VM more"),
    bind(&[Key::char('-')], Action::Provision(ProvisionKey::Less), "one VM fewer"),
    bind(&[Key::TAB], Action::NextPane, "switch between the request's fields and the plan's guards").footer("focus"),
    ACKNOWLEDGE,
    bind(&[Key::char('r')], Action::Refresh, "poll the cluster now (the guards follow its status)"),
    bind(&[Key::char('n')], Action::Provision(ProvisionKey::EditPattern), "type the name pattern ({cluster}, {role}, {n})"),
    bind(&[Key::ENTER], Action::Provision(ProvisionKey::MakePlan), "make the plan (asks the provider, checks the machine config)").footer("plan"),
    bind(&[Key::char('s')], Action::StartPlan, "provision the plan (asks for the cluster name)").footer("start"),
    bind(&[Key::ESC], Action::Back, "close the wizard").footer("back"),
    command_line("command line (:provisions, :q)"),
    bind(&[Key::char('?')], Action::Explain, "explain the selected guard (Tab to the guards; else help)").footer("why"),
    quit("quit"),
];

/// On the one progress screen: the action a run offers (a provision's failed VM).
#[rustfmt::skip]
pub(super) static ON_PROGRESS: &[Binding] = &[bind(&[Key::char('x')], Action::Provision(ProvisionKey::Terminate), "terminate the failed VM the provision names (asks for the cluster name)").footer("terminate").offered(offers)];

fn offers(state: &AppState) -> bool {
    state
        .actions
        .progress
        .as_ref()
        .is_some_and(|p| !p.offers.is_empty())
}
