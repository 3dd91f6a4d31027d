//! The upgrade plan screen's update step, whatever the kind: opened on the cluster in use for
//! the target named (else the one the kind offers first), a new target making the plan again;
//! the kind's own keys and news are its own, the one gate's keys and Tab every plan's
//! (`views::plan`). Pure.
use super::keys::RolloutKey;
use super::{RolloutPlan, RolloutPlanModule, RolloutScreen};
use crate::app::message::Message;
use crate::app::screens::{Opening, Shared, Step};
use crate::views::form::cycled_in;
use crate::views::plan::reread_guards;

impl<K: RolloutScreen> RolloutPlanModule<K> {
    /// The plan `opening` names (its first word the target, if any) on the cluster in use,
    /// with its guards read and what it asks of the console.
    pub(super) fn opened(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        let cluster = shared
            .current
            .ok_or_else(|| Message::warn("no cluster in use: Enter on the fleet or :ctx NAME"))?;
        let live = shared.fleet.cluster(cluster).filter(|l| l.has_data());
        let live = live.ok_or_else(|| {
            Message::warn(format!(
                "no status for {cluster} yet: wait for the first poll (r refreshes)"
            ))
        })?;
        let named = opening.words.first().map(String::as_str);
        let releases = K::releases(&self.kept, cluster);
        let mut plan =
            RolloutPlan::<K>::open_among(&live.status, named, &releases).map_err(Message::warn)?;
        reread_guards(&mut plan, shared);
        let effects = K::asks(&mut plan);
        self.plan = Some(plan);
        Ok(Step::effects(effects))
    }

    pub(super) fn on_intent(&mut self, key: RolloutKey<K::Key>, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::close();
        };
        match key {
            RolloutKey::NextTarget | RolloutKey::PreviousTarget => {
                let forward = key == RolloutKey::NextTarget;
                if let Some(t) = cycled_in(&plan.targets, &plan.target, forward) {
                    plan.target = t.clone();
                }
                self.rebuilt(shared)
            }
            RolloutKey::Own(key) => K::on_own_key(self, key, shared),
        }
    }

    /// The plan made again from live status (a new target or option), its guards read again
    /// and what it asks of the console asked.
    pub(super) fn rebuilt(&mut self, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::default();
        };
        if let Some(live) = shared.fleet.cluster(&plan.cluster) {
            plan.rebuild(&live.status);
        }
        reread_guards(plan, shared);
        Step::effects(K::asks(plan))
    }
}
