//! The cluster plan's own keys: the replica count's popup (digits typed, Enter for the plan, Esc
//! to cancel); once the plan shows, the one gate's keys every plan has (`views::plan`), `r`
//! reading the plan again. `D` on the fleet and a cluster, `s` on `:capi` open it (the shell's
//! tables).
use super::ClusterPlanScreen;
use crate::app::binding::{Binding, Key, bind};

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanKey {
    /// The plan of the replica count typed.
    MakePlan,
    /// The last digit typed erased.
    Erase,
    Back,
}

#[rustfmt::skip]
static REPLICAS: &[Binding<PlanKey, ClusterPlanScreen>] = &[
    bind(&[Key::ENTER], PlanKey::MakePlan, "the plan and guards of the count typed (nothing runs yet)").footer("plan"),
    bind(&[Key::BACKSPACE], PlanKey::Erase, "erase the last digit"),
    bind(&[Key::ESC], PlanKey::Back, "cancel: nothing is scaled").footer("cancel"),
];

/// The keys while `screen` shows what it shows: the count's while one is typed.
pub(super) fn of(screen: &ClusterPlanScreen) -> &'static [Binding<PlanKey, ClusterPlanScreen>] {
    if screen.kept.is_some() { REPLICAS } else { &[] }
}
