//! The Kubernetes upgrade plan screen's state: the offered targets, the
//! pre-pull option, the step table, the removed-API count (fetched in the
//! background, "checking" until it arrives), the guards and the typed
//! acknowledgements. Pure; shares the guard list rules with the Talos plan.
use super::upgrade_plan::{
    PlanFocus, guards_refusal, missing_ack, roles_of, set_guards, verdict_counts,
};
use crate::fleet::ClusterStatus;
use crate::kube::removed_apis::RemovedApiCount;
use crate::upgrade::kubernetes::{
    KubeGuardInput, KubeStepState, KubernetesUpgradePlan, kubernetes_plan_guards,
    offered_kubernetes_targets, target_text,
};
use crate::upgrade::{Guard, GuardId, RolloutInProgress, Verdict};
use crate::versions::{KubeVersion, Version};

/// The removed-API guard's reason while the count is still under way.
pub const CHECKING: &str = "checking\u{2026} (counting objects in the background)";

/// Everything the Kubernetes plan screen shows and edits for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubePlanScreen {
    pub cluster: String,
    /// The offered targets (plus one named on the command line).
    pub targets: Vec<KubeVersion>,
    pub target: KubeVersion,
    pub pre_pull: bool,
    /// The plan, or why none could be made (one line).
    pub plan: Result<KubernetesUpgradePlan, String>,
    /// The removed-API count for `counted_for`; `None` while it is checked.
    pub removed_apis: Option<Result<Vec<RemovedApiCount>, String>>,
    /// The (from, target) the count answers; a new plan asks again.
    pub counted_for: Option<(String, String)>,
    /// Worst first, as on the Talos plan.
    pub guards: Vec<Guard>,
    pub acks: Vec<String>,
    pub focus: PlanFocus,
    /// The selected step (index into the plan's steps).
    pub step: usize,
    pub guard: Option<GuardId>,
}

impl KubePlanScreen {
    /// The plan for `status`, on `target` when given, else the newest offered.
    /// A named target need not be offered: the version-path guard decides.
    pub fn open(status: &ClusterStatus, target: Option<&str>) -> Result<KubePlanScreen, String> {
        let mut targets = offered_kubernetes_targets(status);
        let target = match target {
            None => targets.last().cloned().ok_or_else(|| {
                format!(
                    "no Kubernetes upgrade target is offered for {} (already on the newest its Talos runs, or versions unknown)",
                    status.name
                )
            })?,
            Some(text) => {
                let wanted =
                    Version::parse(text).map_err(|e| format!(":upgrade-k8s {text}: {e}"))?;
                if !targets.contains(&wanted) {
                    targets.push(wanted.clone());
                    targets.sort();
                }
                wanted
            }
        };
        let mut screen = KubePlanScreen {
            cluster: status.name.clone(),
            targets,
            target,
            pre_pull: false,
            plan: Err(String::new()),
            removed_apis: None,
            counted_for: None,
            guards: Vec::new(),
            acks: Vec::new(),
            focus: PlanFocus::Nodes,
            step: 0,
            guard: None,
        };
        screen.rebuild(status);
        Ok(screen)
    }

    /// Makes the plan again from live status; a plan for another (from,
    /// target) forgets the removed-API count, which is then asked again.
    pub fn rebuild(&mut self, status: &ClusterStatus) {
        // The fleet model keeps the node list's order, as `status` does, so the
        // plan is the one `upgrade-k8s --plan` makes.
        self.plan = KubernetesUpgradePlan::new(status, &self.target, self.pre_pull)
            .map_err(|e| e.to_string());
        if self.counted_for != self.wanted_count() {
            self.removed_apis = None;
            self.counted_for = None;
        }
        if let Ok(plan) = &mut self.plan
            && let Some(Ok(counts)) = &self.removed_apis
        {
            plan.removed_apis = counts.clone();
        }
        self.step = self.step.min(self.steps_len().saturating_sub(1));
    }

    /// The (from, target) a removed-API count must answer for this plan.
    pub fn wanted_count(&self) -> Option<(String, String)> {
        self.plan
            .as_ref()
            .ok()
            .map(|p| (p.from.to_string(), p.target.to_string()))
    }

    /// A plan whose removed-API count still has to be asked for.
    pub fn needs_count(&self) -> Option<&KubernetesUpgradePlan> {
        let plan = self.plan.as_ref().ok()?;
        (self.counted_for.is_none() && self.removed_apis.is_none()).then_some(plan)
    }

    /// Marks the count as asked for, so it is asked once per plan.
    pub fn counting(&mut self) {
        self.counted_for = self.wanted_count();
    }

    /// The count arrived; kept only when it answers this plan.
    pub fn counted(
        &mut self,
        from: &str,
        target: &str,
        result: Result<Vec<RemovedApiCount>, String>,
    ) {
        if self.wanted_count() != Some((from.to_string(), target.to_string())) {
            return;
        }
        if let (Ok(plan), Ok(counts)) = (&mut self.plan, &result) {
            plan.removed_apis = counts.clone();
        }
        self.counted_for = self.wanted_count();
        self.removed_apis = Some(result);
    }

    pub fn steps_len(&self) -> usize {
        self.plan.as_ref().map_or(0, |p| p.steps.len())
    }

    /// The guards again, over live status; keeps the selection by guard.
    pub fn evaluate(&mut self, status: &ClusterStatus, other: Option<&RolloutInProgress>) {
        let Ok(plan) = &self.plan else {
            self.guards.clear();
            return;
        };
        let roles = roles_of(status);
        let checking = Err(String::new());
        let removed = self.removed_apis.as_ref().unwrap_or(&checking);
        let input = KubeGuardInput {
            roles: &roles,
            other_rollout: other,
            removed_apis: removed,
            acks: &self.acks,
        };
        let guards = kubernetes_plan_guards(plan, status, input)
            .into_iter()
            .map(|g| self.as_shown(g))
            .collect();
        set_guards(&mut self.guards, &mut self.guard, guards);
    }

    /// The console's view of the removed-API guard: "checking" until the
    /// count arrives.
    fn as_shown(&self, guard: Guard) -> Guard {
        match guard.id {
            GuardId::RemovedApis if self.removed_apis.is_none() => Guard {
                verdict: Verdict::Warn,
                reason: CHECKING.to_string(),
                needs_ack: None,
                ..guard
            },
            _ => guard,
        }
    }

    pub fn guard_index(&self) -> usize {
        self.guard
            .and_then(|id| self.guards.iter().position(|g| g.id == id))
            .unwrap_or(0)
    }

    /// The acknowledgement still to type: a warning's, or the removed-API
    /// guard's, which fails until it is typed.
    pub fn missing_ack(&self) -> Option<&str> {
        missing_ack(&self.guards, &self.acks).or_else(|| {
            self.guards
                .iter()
                .filter(|g| g.verdict == Verdict::Fail)
                .filter_map(|g| g.needs_ack.as_deref())
                .find(|needed| !self.acks.iter().any(|a| a.trim() == *needed))
        })
    }

    /// The acknowledgement to prompt for: only once nothing else fails.
    pub fn ack_prompt(&self) -> Option<&str> {
        let other_failing = self
            .guards
            .iter()
            .any(|g| g.verdict == Verdict::Fail && g.needs_ack.is_none());
        self.missing_ack().filter(|_| !other_failing)
    }

    /// Why Start is refused, or `None` when it is offered.
    pub fn start_refused(&self) -> Option<String> {
        let plan = match &self.plan {
            Ok(plan) => plan,
            Err(e) => return Some(e.clone()),
        };
        if self.removed_apis.is_none() {
            return Some("the removed-API check has not answered yet".to_string());
        }
        if let Some(needed) = self.ack_prompt() {
            return Some(format!("type the acknowledgement first (a): {needed}"));
        }
        guards_refusal(&plan.cluster, &self.guards, &self.acks)
    }

    pub fn counts(&self) -> (usize, usize, usize) {
        verdict_counts(&self.guards)
    }

    /// The target as the dispatcher and the journal name it (`1.35.0`).
    pub fn target_text(&self) -> String {
        match &self.plan {
            Ok(plan) => target_text(plan),
            Err(_) => self.target.to_string().trim_start_matches('v').to_string(),
        }
    }
}

/// What `?` says about one step: what happens to that component on that node.
pub fn explain_kube_step(plan: &KubernetesUpgradePlan, index: usize) -> String {
    let Some(step) = plan.steps.get(index) else {
        return String::new();
    };
    let component = step.component.as_str();
    let from = step.from.as_deref().unwrap_or("an unknown version");
    if step.state == KubeStepState::AlreadyOnTarget {
        return format!(
            "{component} on {} already runs {}: the step is skipped and its machine config is left alone.",
            step.node, plan.target
        );
    }
    let (section, key) = step.component.config_path();
    let mut parts = vec![format!(
        "{component} on {} ({}): {from} -> {}.",
        step.node,
        step.role.as_str(),
        plan.target
    )];
    parts.push(format!(
        "taloscope reads the node's machine config, sets {section}.{key}.image to {}, and applies it with ApplyConfiguration in no-reboot mode: the node does not restart, only this component does.",
        step.component.image(&plan.target)
    ));
    parts.push(match step.component {
        c if c.is_static_pod() => "It is done when the static pod runs the new version and is ready. The order is upstream's: every kube-apiserver first (one control plane at a time), then the controller managers, then the schedulers, so the API server is never older than the components that talk to it.".to_string(),
        crate::upgrade::kubernetes::Component::KubeProxy => "kube-proxy runs as a DaemonSet rendered from the control planes' config; it is done when the DaemonSet runs the new image everywhere.".to_string(),
        _ => "The kubelet restarts with the new image; it is done when the node reports the new kubelet version and is Ready again. Control planes go first, then the workers, one at a time.".to_string(),
    });
    parts.push("Before every step the guards are checked again against live status: nodes ready, etcd healthy with no alarms, every control-plane component ready. A step that does not finish within its timeout halts the rollout with the reason.".to_string());
    parts.join(" ")
}
