//! The upgrade plan screen's update step, whatever the kind: opened on the cluster in use for
//! the target named (else the one the kind offers first), the steps with the move keys and `?`
//! when focused, a new target making the plan again, the one gate's keys, and the approval
//! handed to the one operation runner. The kind's own keys and news are its own. Pure.
use super::keys::PlanKey;
use super::{RolloutPlanModule, RolloutScreen};
use crate::app::actions::ActionRun;
use crate::app::binding::Move;
use crate::app::message::Message;
use crate::app::plan_keys::{
    approved_step, cycled, explain_step, gate_step, list_move, other_focus, reread_guards,
};
use crate::app::plan_screen::RolloutPlanScreen;
use crate::app::screens::{Opening, Shared, Step};
use crate::approval::ApprovedAction;

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
        let mut plan = RolloutPlanScreen::<K>::open_among(&live.status, named, &releases)
            .map_err(Message::warn)?;
        reread_guards(&mut plan, shared);
        let effects = K::asks(&mut plan);
        self.plan = Some(plan);
        Ok(Step::effects(effects))
    }

    /// A move key: through the steps, or the guards when they are focused.
    pub(super) fn moved(&mut self, to: Move, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::default();
        };
        let list = (plan.step_index(), plan.steps_len());
        if let Some(at) = list_move(plan, to, list, shared) {
            plan.step = plan.steps().get(at).map(|s| K::step_key(at, s));
        }
        Step::default()
    }

    pub(super) fn on_intent(&mut self, key: PlanKey, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::close();
        };
        match key {
            PlanKey::Focus => plan.focus = other_focus(plan.focus),
            PlanKey::NextTarget | PlanKey::PreviousTarget => {
                let forward = key == PlanKey::NextTarget;
                if let Some(t) = cycled(&plan.targets, &plan.target, forward) {
                    plan.target = t.clone();
                }
                return self.rebuilt(shared);
            }
            PlanKey::Explain => {
                let explained = match &plan.made {
                    Ok(p) => K::explain_step(p, plan.step_index()),
                    Err(e) => Some(("no plan".to_string(), e.clone())),
                };
                return explain_step(plan, explained, shared);
            }
            PlanKey::Gate(key) => return gate_step(plan, key, shared.page(), shared.readonly),
            PlanKey::Back => {
                self.plan = None;
                return Step::close();
            }
        }
        Step::default()
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

    /// The dispatcher approved the plan on screen: it runs on the one operation runner when it
    /// still is that plan and no guard blocks now (read again over the latest status); the
    /// screen closes for the progress.
    pub(super) fn approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        let step = approved_step(self.plan.as_mut(), approved, shared, |plan, _| {
            let run = K::planned(plan.made.clone().ok()?);
            Some(ActionRun::Upgrade(Box::new(run)))
        })?;
        if step.close {
            self.plan = None;
        }
        Some(step)
    }
}
