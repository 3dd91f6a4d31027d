//! The Talos OS upgrade's part of the plan screen: the options and installer
//! image the operator chose, the edits to the node order (replayed whenever the
//! plan is rebuilt), the target offered only when it is a known release, and
//! what `?` explains about a node. Pure.
use super::{PlanKind, RolloutPlan, RolloutPlanScreen};
use crate::app::plan_screen::{PlannedRollout, roles_of};
use crate::fleet::{ClusterStatus, NodeRole};
use crate::upgrade::{
    Direction, Guard, LearnedReleases, PlanStep, RolloutInProgress, StepState, TalosOs, UpgradeApi,
    UpgradeOptions, UpgradePlan, chosen_talos_target, plan_guards,
};
use crate::versions::{TalosVersion, Version};

/// The Talos OS upgrade plan screen.
pub type PlanScreen = RolloutPlanScreen<TalosOs>;

/// One operator edit of the node order; replayed on every rebuild so a new
/// target or option keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanEdit {
    Move(String, Direction),
    LeaveOut(String),
    Include(String),
}

/// What the Talos plan screen keeps beyond every plan's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosSettings {
    pub options: UpgradeOptions,
    /// A custom or factory installer image; `None` uses the default.
    pub image: Option<String>,
    pub edits: Vec<PlanEdit>,
    /// Whether any node runs a Talos old enough for `preserve` to matter.
    pub preserve_applies: bool,
    /// The releases the targets were offered from (a registry's listing, else the table).
    pub releases: LearnedReleases,
}

impl RolloutPlan<TalosOs> {
    /// Edits the plan; the edit is kept for rebuilds when it applied.
    pub fn edit(&mut self, edit: PlanEdit) -> Result<(), String> {
        let Ok(plan) = &mut self.made else {
            return Err("there is no plan to edit".to_string());
        };
        apply_edit(plan, &edit).map_err(|e| e.to_string())?;
        self.edits.push(edit);
        Ok(())
    }
}

impl PlanKind for TalosOs {
    type Settings = TalosSettings;
    type Step = PlanStep;
    fn targets_among(
        status: &ClusterStatus,
        named: Option<&str>,
        learned: &LearnedReleases,
    ) -> Result<(Vec<Version>, Version), String> {
        chosen_talos_target(status, named, learned)
    }

    fn settings(status: &ClusterStatus, learned: &LearnedReleases) -> TalosSettings {
        let preserve_applies = status.nodes.iter().any(|n| {
            n.talos_version
                .as_deref()
                .and_then(|v| Version::parse(v).ok())
                .is_some_and(|v| UpgradeOptions::preserve_applies(&v))
        });
        TalosSettings {
            options: UpgradeOptions::default(),
            image: None,
            edits: Vec::new(),
            preserve_applies,
            releases: learned.clone(),
        }
    }

    /// Replays the operator's edits (an edit that no longer applies is dropped).
    fn make_plan(
        status: &ClusterStatus,
        target: &TalosVersion,
        settings: &mut TalosSettings,
    ) -> Result<UpgradePlan, String> {
        let options = settings.options.clone();
        let made = UpgradePlan::among(status, target.clone(), options, &settings.releases);
        made.map_err(|e| e.to_string()).and_then(|mut plan| {
            if let Some(image) = &settings.image {
                plan.set_image(image).map_err(|e| e.to_string())?;
            }
            settings
                .edits
                .retain(|edit| apply_edit(&mut plan, edit).is_ok());
            Ok(plan)
        })
    }

    fn steps(plan: &UpgradePlan) -> &[PlanStep] {
        &plan.steps
    }

    fn step_key(_: usize, step: &PlanStep) -> String {
        step.node.clone()
    }

    fn reselect(previous: Option<String>, keys: &[String]) -> Option<String> {
        previous.or_else(|| keys.first().cloned())
    }

    fn guards(
        _: &RolloutPlan<TalosOs>,
        plan: &UpgradePlan,
        status: &ClusterStatus,
        other: Option<&RolloutInProgress>,
        _: &[String],
    ) -> Vec<Guard> {
        plan_guards(plan, status, &roles_of(status), other)
    }

    fn gate_target(screen: &RolloutPlan<TalosOs>) -> String {
        screen.target.to_string()
    }

    fn planned(plan: UpgradePlan) -> PlannedRollout {
        PlannedRollout::Talos(plan)
    }

    fn explain_step(plan: &UpgradePlan, index: usize) -> Option<(String, String)> {
        let step = plan.steps.get(index)?;
        Some((step.node.clone(), explain_step(plan, index)))
    }
}

fn apply_edit(plan: &mut UpgradePlan, edit: &PlanEdit) -> Result<(), crate::upgrade::PlanError> {
    match edit {
        PlanEdit::Move(node, direction) => plan.move_node(node, *direction),
        PlanEdit::LeaveOut(node) => plan.leave_out(node),
        PlanEdit::Include(node) => plan.include(node),
    }
}

/// `legacy` or `lifecycle`: the API column.
pub fn api_word(api: Option<UpgradeApi>) -> &'static str {
    match api {
        Some(UpgradeApi::MachineUpgrade) => "legacy",
        Some(UpgradeApi::Lifecycle) => "lifecycle",
        None => "?",
    }
}

/// What `?` says about one step: what happens to that node, in order, and
/// why it sits where it does.
pub fn explain_step(plan: &UpgradePlan, index: usize) -> String {
    let Some(step) = plan.steps.get(index) else {
        return String::new();
    };
    let from = step
        .from
        .as_ref()
        .map_or("an unknown version".to_string(), ToString::to_string);
    let mut parts = Vec::new();
    match step.state {
        StepState::AlreadyOnTarget => {
            return format!(
                "{} already runs {}: it is skipped and nothing is sent to it. The guards still check that it is up and ready, because the cluster counts on it while the others reboot.",
                step.node, plan.target
            );
        }
        StepState::LeftOut => {
            return format!(
                "{} is left out of this rollout (x includes it again). It stays on {from}; the guards still check that it is up and ready, because the cluster counts on it while the others reboot.",
                step.node
            );
        }
        StepState::Upgrade => {}
    }
    let api = match step.api {
        Some(UpgradeApi::MachineUpgrade) => format!(
            "It runs {from}, below Talos 1.13, so taloscope calls MachineService.Upgrade with {}; the node pulls the image, installs it and reboots on its own.",
            plan.image
        ),
        Some(UpgradeApi::Lifecycle) => format!(
            "It runs {from} (Talos 1.13 or later), so taloscope pulls {} through ImageService.Pull, installs it with LifecycleService.Upgrade and then reboots it with MachineService.Reboot. The server no longer checks etcd itself; taloscope's guards are the only gate.",
            plan.image
        ),
        None => "Its Talos version is unknown, so the API cannot be chosen yet.".to_string(),
    };
    parts.push(format!(
        "{} ({}): upgraded from {from} to {}.",
        step.node,
        step.role.as_str(),
        plan.target
    ));
    parts.push("Before it goes down the guards are checked again against live status: every node back and ready, etcd healthy with no alarms, and quorum kept without this node.".to_string());
    if step.forfeit_leadership {
        parts.push("It leads etcd, so it goes last among the control planes and first hands leadership to another member (forfeit): otherwise the cluster would hold an election while a member is already down, and writes stall meanwhile.".to_string());
    } else if step.role == NodeRole::Controlplane {
        parts.push("Control planes go one at a time: each takes one etcd member and one API server away while it reboots.".to_string());
    } else if let Some(batch) = step.batch {
        parts.push(format!(
            "Workers go in batches of max-parallel ({}); this one is in batch {}.",
            plan.options.max_parallel, batch
        ));
    }
    parts.push(api);
    parts.push("It is done when it is back, running and ready on the target, its Kubernetes node is Ready and its etcd member healthy; only then does the next node start.".to_string());
    parts.join(" ")
}
