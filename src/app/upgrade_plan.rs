//! The upgrade plan screen's state: the offered targets, the options and
//! installer image the operator chose, the edits to the node order (replayed
//! whenever the plan is rebuilt), the guards re-evaluated on every status
//! change, the typed acknowledgements, and what `?` explains. Pure.
use crate::fleet::{ClusterStatus, NodeRole};
use crate::talos::{Role, Roles};
use crate::upgrade::{
    Direction, Guard, GuardId, PlanStep, RolloutInProgress, UpgradeApi, UpgradeOptions,
    UpgradePlan, Verdict, blocking, offered_targets, plan_guards,
};
use crate::versions::TalosVersion;

/// Which list of the plan screen has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFocus {
    Nodes,
    Guards,
}

/// One operator edit of the node order; replayed on every rebuild so a new
/// target or option keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanEdit {
    Move(String, Direction),
    LeaveOut(String),
    Include(String),
}

/// Everything the plan screen shows and edits for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanScreen {
    pub cluster: String,
    /// Only these may be chosen (`offered_targets`).
    pub targets: Vec<TalosVersion>,
    pub target: TalosVersion,
    pub options: UpgradeOptions,
    /// A custom or factory installer image; `None` uses the default.
    pub image: Option<String>,
    pub edits: Vec<PlanEdit>,
    /// The plan, or why none could be made (one line).
    pub plan: Result<UpgradePlan, String>,
    /// Worst first (fail, warn, pass), each group in the guards' own order.
    pub guards: Vec<Guard>,
    /// Acknowledgements typed so far.
    pub acks: Vec<String>,
    pub focus: PlanFocus,
    /// The selected step, by node name.
    pub step: Option<String>,
    /// The selected guard.
    pub guard: Option<GuardId>,
    /// Whether any node runs a Talos old enough for `preserve` to matter.
    pub preserve_applies: bool,
}

impl PlanScreen {
    /// The plan screen for `status`, on `target` when given and offered, else
    /// the first offered target. Errors are one line for the message line.
    pub fn open(status: &ClusterStatus, target: Option<&str>) -> Result<PlanScreen, String> {
        let targets = offered_targets(status, false);
        let Some(first) = targets.first().cloned() else {
            return Err(format!(
                "no Talos upgrade target is offered for {} (every node on the newest release, or versions unknown)",
                status.name
            ));
        };
        let mut targets = targets;
        let target = match target {
            // The newest offered: the next minor's latest patch when there is one.
            None => targets.last().cloned().unwrap_or(first),
            Some(text) => {
                let wanted = crate::versions::Version::parse(text)
                    .map_err(|e| format!(":upgrade {text}: {e}"))?;
                // Named explicitly: any known release may be planned; the
                // version-path guard then says whether it may be taken.
                if !targets.contains(&wanted) {
                    if !crate::versions::is_known_talos_release(&wanted) {
                        let list: Vec<String> = targets.iter().map(ToString::to_string).collect();
                        return Err(format!(
                            "Talos {wanted} is not a known release (offered for {}: {})",
                            status.name,
                            list.join(", ")
                        ));
                    }
                    targets.push(wanted.clone());
                    targets.sort();
                }
                wanted
            }
        };
        let preserve_applies = status.nodes.iter().any(|n| {
            n.talos_version
                .as_deref()
                .and_then(|v| crate::versions::Version::parse(v).ok())
                .is_some_and(|v| UpgradeOptions::preserve_applies(&v))
        });
        let mut screen = PlanScreen {
            cluster: status.name.clone(),
            targets,
            target,
            options: UpgradeOptions::default(),
            image: None,
            edits: Vec::new(),
            plan: Err(String::new()),
            guards: Vec::new(),
            acks: Vec::new(),
            focus: PlanFocus::Nodes,
            step: None,
            guard: None,
            preserve_applies,
        };
        screen.rebuild(status);
        Ok(screen)
    }

    /// Makes the plan again from live status, replaying the operator's edits
    /// (an edit that no longer applies is dropped).
    pub fn rebuild(&mut self, status: &ClusterStatus) {
        let made = UpgradePlan::new(status, self.target.clone(), self.options.clone());
        self.plan = made.map_err(|e| e.to_string()).and_then(|mut plan| {
            if let Some(image) = &self.image {
                plan.set_image(image).map_err(|e| e.to_string())?;
            }
            self.edits
                .retain(|edit| apply_edit(&mut plan, edit).is_ok());
            Ok(plan)
        });
        if self.step.is_none() {
            self.step = self.steps().first().map(|s| s.node.clone());
        }
    }

    pub fn steps(&self) -> &[PlanStep] {
        self.plan
            .as_ref()
            .map(|p| p.steps.as_slice())
            .unwrap_or(&[])
    }

    /// The guards again, over live status; keeps the selection by guard.
    pub fn evaluate(&mut self, status: &ClusterStatus, other: Option<&RolloutInProgress>) {
        let Ok(plan) = &self.plan else {
            self.guards.clear();
            return;
        };
        let guards = plan_guards(plan, status, &roles_of(status), other);
        set_guards(&mut self.guards, &mut self.guard, guards);
    }

    /// Edits the plan; the edit is kept for rebuilds when it applied.
    pub fn edit(&mut self, edit: PlanEdit) -> Result<(), String> {
        let Ok(plan) = &mut self.plan else {
            return Err("there is no plan to edit".to_string());
        };
        apply_edit(plan, &edit).map_err(|e| e.to_string())?;
        self.edits.push(edit);
        Ok(())
    }

    /// The index of the selected step.
    pub fn step_index(&self) -> usize {
        let steps = self.steps();
        self.step
            .as_ref()
            .and_then(|name| steps.iter().position(|s| &s.node == name))
            .unwrap_or(0)
    }

    pub fn guard_index(&self) -> usize {
        self.guard
            .and_then(|id| self.guards.iter().position(|g| g.id == id))
            .unwrap_or(0)
    }

    /// The acknowledgement still to type, when a guard needs one.
    pub fn missing_ack(&self) -> Option<&str> {
        missing_ack(&self.guards, &self.acks)
    }

    /// Why Start is refused, or `None` when it is offered.
    pub fn start_refused(&self) -> Option<String> {
        let plan = match &self.plan {
            Ok(plan) => plan,
            Err(e) => return Some(e.clone()),
        };
        guards_refusal(&plan.cluster, &self.guards, &self.acks)
    }

    /// How many guards pass, warn and fail.
    pub fn counts(&self) -> (usize, usize, usize) {
        verdict_counts(&self.guards)
    }
}

/// Puts freshly evaluated guards on a plan screen, worst first (fail, warn,
/// pass, each group in the guards' own order), keeping the selection by guard.
/// Both the Talos and the Kubernetes plan screens show guards this way.
pub fn set_guards(shown: &mut Vec<Guard>, selected: &mut Option<GuardId>, mut guards: Vec<Guard>) {
    guards.sort_by_key(|g| match g.verdict {
        Verdict::Fail => 0,
        Verdict::Warn => 1,
        Verdict::Pass => 2,
    });
    *shown = guards;
    if selected.is_none_or(|id| !shown.iter().any(|g| g.id == id)) {
        *selected = shown.first().map(|g| g.id);
    }
}

/// The acknowledgement still to type, when a warning needs one.
pub fn missing_ack<'a>(guards: &'a [Guard], acks: &[String]) -> Option<&'a str> {
    guards
        .iter()
        .filter(|g| g.verdict == Verdict::Warn)
        .filter_map(|g| g.needs_ack.as_deref())
        .find(|needed| !acks.iter().any(|a| a.trim() == *needed))
}

/// Why the guards refuse Start on `cluster`, or `None` when they allow it.
pub fn guards_refusal(cluster: &str, guards: &[Guard], acks: &[String]) -> Option<String> {
    if guards.is_empty() {
        return Some(format!("no status for {cluster} yet"));
    }
    let failing: Vec<&str> = guards
        .iter()
        .filter(|g| g.verdict == Verdict::Fail)
        .map(|g| g.id.title())
        .collect();
    if !failing.is_empty() {
        return Some(format!("guard failing: {}", failing.join(", ")));
    }
    if let Some(needed) = missing_ack(guards, acks) {
        return Some(format!("type the acknowledgement first (a): {needed}"));
    }
    blocking(guards, acks).then(|| "a guard blocks the start".to_string())
}

/// How many guards pass, warn and fail.
pub fn verdict_counts(guards: &[Guard]) -> (usize, usize, usize) {
    let n = |v: Verdict| guards.iter().filter(|g| g.verdict == v).count();
    (n(Verdict::Pass), n(Verdict::Warn), n(Verdict::Fail))
}

fn apply_edit(plan: &mut UpgradePlan, edit: &PlanEdit) -> Result<(), crate::upgrade::PlanError> {
    match edit {
        PlanEdit::Move(node, direction) => plan.move_node(node, *direction),
        PlanEdit::LeaveOut(node) => plan.leave_out(node),
        PlanEdit::Include(node) => plan.include(node),
    }
}

/// The client certificate's roles as the status reports them (`os:admin`).
pub fn roles_of(status: &ClusterStatus) -> Roles {
    Roles(
        status
            .role
            .split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(Role::parse)
            .collect(),
    )
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
        crate::upgrade::StepState::AlreadyOnTarget => {
            return format!(
                "{} already runs {}: it is skipped and nothing is sent to it. The guards still check that it is up and ready, because the cluster counts on it while the others reboot.",
                step.node, plan.target
            );
        }
        crate::upgrade::StepState::LeftOut => {
            return format!(
                "{} is left out of this rollout (x includes it again). It stays on {from}; the guards still check that it is up and ready, because the cluster counts on it while the others reboot.",
                step.node
            );
        }
        crate::upgrade::StepState::Upgrade => {}
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
            plan.options.max_parallel,
            batch + 1
        ));
    }
    parts.push(api);
    parts.push("It is done when it is back, running and ready on the target, its Kubernetes node is Ready and its etcd member healthy; only then does the next node start.".to_string());
    parts.join(" ")
}

/// What `?` says about one guard: its title and explanation, then its verdict.
pub fn explain_guard(guard: &Guard) -> String {
    format!(
        "{}\n\nNow: {} - {}",
        guard.id.explain(),
        verdict_word(guard.verdict),
        guard.reason
    )
}

pub fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Warn => "warn",
        Verdict::Fail => "fail",
    }
}
