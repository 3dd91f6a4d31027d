//! The cluster plan's keys: the replica count's popup (digits typed, Enter for the plan, Esc
//! to cancel) and the plan's, the one gate's keys (`app::plan_keys::GateKey`) with `r`
//! reading the plan again. `D` on the fleet and a cluster, `s` on `:capi` open it (the
//! shell's tables).
use super::ClusterPlanScreen;
use crate::app::binding::{Binding, Key, Move, bind};
use crate::app::plan_keys::GateKey;

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlanKey {
    Gate(GateKey),
    /// Read the plan again.
    ReadAgain,
    /// The plan of the replica count typed.
    MakePlan,
    /// The last digit typed erased.
    Erase,
    Back,
}

type PlanBinding = Binding<PlanKey, ClusterPlanScreen>;

#[rustfmt::skip]
pub(super) static REPLICAS: &[PlanBinding] = &[
    bind(&[Key::ENTER], PlanKey::MakePlan, "the plan and guards of the count typed (nothing runs yet)").footer("plan"),
    bind(&[Key::BACKSPACE], PlanKey::Erase, "erase the last digit"),
    bind(&[Key::ESC], PlanKey::Back, "cancel: nothing is scaled").footer("cancel"),
];

#[rustfmt::skip]
pub(super) static PLAN: &[PlanBinding] = &[
    bind(&[Key::char('j'), Key::DOWN], PlanKey::Gate(GateKey::Move(Move::Down)), "next guard"),
    bind(&[Key::char('k'), Key::UP], PlanKey::Gate(GateKey::Move(Move::Up)), "previous guard"),
    bind(&[Key::char('?')], PlanKey::Gate(GateKey::Explain), "why: what the selected guard checks").footer("why"),
    bind(&[Key::char('a')], PlanKey::Gate(GateKey::Acknowledge), "type the acknowledgement a guard needs (a delete's)").footer("ack").offered(ack_needed),
    bind(&[Key::char('s')], PlanKey::Gate(GateKey::Start), "run it (through the typed confirmation)").footer("start"),
    bind(&[Key::char('r')], PlanKey::ReadAgain, "read the cluster (and the plan) again").footer("refresh"),
    bind(&[Key::ESC], PlanKey::Back, "close the plan").footer("back"),
];

/// The keys while `screen` shows what it shows.
pub(super) fn of(screen: &ClusterPlanScreen) -> &'static [PlanBinding] {
    if screen.asking.is_some() {
        REPLICAS
    } else {
        PLAN
    }
}

fn ack_needed(screen: &ClusterPlanScreen) -> bool {
    (screen.plan.as_ref()).is_some_and(|p| p.guards.ack_prompt().is_some())
}
