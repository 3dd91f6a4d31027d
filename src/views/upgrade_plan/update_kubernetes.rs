//! The Kubernetes upgrade plan screen's update step: opened on the cluster in use for the
//! target named (else the newest offered), the removed-API count asked of the console once
//! per (from, target) and folded back, the steps with the move keys and `?` when focused, the
//! target and pre-pull making the plan again, the one gate's keys, and the approval handed to
//! the one operation runner. Pure.
use super::keys::KubePlanKey;
use super::{KubePlanModule, NAME, RemovedApisCounted};
use crate::app::action::{Effect, not_run};
use crate::app::actions::ActionRun;
use crate::app::binding::Move;
use crate::app::kube_plan::KubePlanScreen;
use crate::app::message::Message;
use crate::app::plan_keys::{
    GateKey, cycled, gate_step, other_focus, refused_approval, reread_guards,
};
use crate::app::plan_screen::{PlanFocus, PlanKind, PlannedRollout};
use crate::app::screens::{Ask, Opening, ScreenTask, Shared, Step};
use crate::approval::ApprovedAction;
use crate::upgrade::kubernetes::Kubernetes;

/// The plan `opening` names (its first word the target, if any) on the cluster in use.
fn plan_of(opening: &Opening, shared: &Shared) -> Result<KubePlanScreen, String> {
    let cluster = shared
        .current
        .ok_or("no cluster in use: Enter on the fleet or :ctx NAME")?;
    let live = shared.fleet.cluster(cluster).filter(|l| l.has_data());
    let live = live.ok_or_else(|| {
        format!("no status for {cluster} yet: wait for the first poll (r refreshes)")
    })?;
    KubePlanScreen::open(&live.status, opening.words.first().map(String::as_str))
}

/// The removed-API count asked of the console when `plan` has none yet (once per plan).
fn count_if_needed(plan: &mut KubePlanScreen) -> Vec<Effect> {
    let Some(wanted) = plan.needs_count().cloned() else {
        return Vec::new();
    };
    plan.counting();
    vec![Effect::Screen(ScreenTask::new(NAME, wanted))]
}

impl KubePlanModule {
    /// `U`, `:upgrade-k8s [VERSION]`: the plan with its guards read, and its removed-API count
    /// asked for.
    pub(super) fn opened(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        let mut plan = plan_of(opening, shared).map_err(Message::warn)?;
        reread_guards(&mut plan, shared);
        let effects = count_if_needed(&mut plan);
        self.plan = Some(plan);
        Ok(Step::effects(effects))
    }

    /// The count arrived: kept when it answers the plan on screen, whose guards read again.
    pub(super) fn counted(&mut self, counted: &RemovedApisCounted, shared: &Shared) -> bool {
        let Some(plan) = self.plan.as_mut().filter(|p| p.cluster == counted.cluster) else {
            return false;
        };
        plan.counted(
            &counted.from,
            &counted.target,
            counted.result.clone(),
            counted.flags.clone(),
        );
        reread_guards(plan, shared);
        true
    }

    /// A move key: through the steps, or the guards when they are focused.
    pub(super) fn moved(&mut self, to: Move, shared: &Shared) -> Step {
        let page = usize::from(shared.size.1.saturating_sub(8)).max(1);
        let Some(plan) = self.plan.as_mut() else {
            return Step::default();
        };
        if plan.focus == PlanFocus::Guards {
            return gate_step(plan, GateKey::Move(to), page, shared.readonly);
        }
        if let Some(last) = plan.steps_len().checked_sub(1) {
            let at = to.from(plan.step_index(), last, page);
            plan.step = plan.steps().get(at).map(|s| Kubernetes::step_key(at, s));
        }
        Step::default()
    }

    pub(super) fn on_intent(&mut self, key: KubePlanKey, shared: &Shared) -> Step {
        let page = usize::from(shared.size.1.saturating_sub(8)).max(1);
        let Some(plan) = self.plan.as_mut() else {
            return Step::close();
        };
        match key {
            KubePlanKey::Focus => plan.focus = other_focus(plan.focus),
            KubePlanKey::NextTarget | KubePlanKey::PreviousTarget => {
                let forward = key == KubePlanKey::NextTarget;
                if let Some(t) = cycled(&plan.targets, &plan.target, forward) {
                    plan.target = t.clone();
                }
                return self.rebuilt(shared);
            }
            KubePlanKey::PrePull => {
                plan.pre_pull = !plan.pre_pull;
                return self.rebuilt(shared);
            }
            KubePlanKey::Explain if plan.focus == PlanFocus::Guards => {
                return gate_step(plan, GateKey::Explain, page, shared.readonly);
            }
            KubePlanKey::Explain => {
                let explained = match &plan.plan {
                    Ok(p) => Kubernetes::explain_step(p, plan.step_index()),
                    Err(e) => Some(("no plan".to_string(), e.clone())),
                };
                if let Some((title, text)) = explained {
                    return Step::ask(Ask::Explain { title, text });
                }
            }
            KubePlanKey::Gate(key) => return gate_step(plan, key, page, shared.readonly),
            KubePlanKey::Back => {
                self.plan = None;
                return Step::close();
            }
        }
        Step::default()
    }

    /// The plan made again from live status (a new target or option), its guards read again
    /// and its removed-API count asked for when it is for another (from, target).
    fn rebuilt(&mut self, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::default();
        };
        if let Some(live) = shared.fleet.cluster(&plan.cluster) {
            plan.rebuild(&live.status);
        }
        reread_guards(plan, shared);
        Step::effects(count_if_needed(plan))
    }

    /// The dispatcher approved the plan on screen: it runs on the one operation runner when it
    /// still is that plan and no guard blocks now (read again over the latest status); the
    /// screen closes for the progress. `None` without a plan.
    pub(super) fn approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        let plan = self.plan.as_mut()?;
        reread_guards(plan, shared);
        if let Some(refused) = refused_approval(Some(&*plan), approved) {
            return Some(refused);
        }
        let Ok(run) = plan.plan.clone() else {
            return Some(Step::effects(not_run(approved, "there is no plan")));
        };
        let acks = plan.guards.acks.clone();
        self.plan = None;
        let run = PlannedRollout::Kubernetes(run);
        Some(Step {
            effects: vec![Effect::RunAction {
                approved: approved.clone(),
                run: Box::new(ActionRun::Upgrade(Box::new(run))),
                acks,
            }],
            ..Step::close()
        })
    }
}
