//! `taloscope upgrade-k8s`: the guarded Kubernetes upgrade without the console, with the same
//! conventions as `taloscope upgrade`: `--plan` prints the steps, the removed-API counts and every
//! guard's verdict; `--yes --confirm NAME` runs it through the dispatcher with one progress line
//! per change, resuming a journal a killed run left. Exit 0 / 1 / 2.
use std::time::Duration;

use super::rollout::HeadlessUpgrade;
use crate::cli::UpgradeK8sArgs;
use crate::commands::exit::{EXIT_BLOCKED, Stop};
use crate::commands::plan_report::{PlanText, indent, steps_table};
use crate::fleet::ClusterStatus;
use crate::printable::{table, yes_no};
use crate::upgrade::kubernetes::{
    KubeStepState, Kubernetes, KubernetesUpgradePlan, count_removed_apis, learn_target,
    read_plan_guards,
};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{Guard, RolloutInProgress, RunOptions};
use crate::versions::{Version, is_known_kubernetes_release};

/// The Kubernetes upgrade's part of its plan report: the plan's fields are the `upgrade-k8s
/// --plan --output json` contract beside the guards.
impl PlanText for &KubernetesUpgradePlan {
    fn table(&self) -> String {
        let plan = self;
        let mut out = format!(
            "KUBERNETES UPGRADE {} from {} to {}\n  pre-pull images: {}\n",
            plan.cluster,
            plan.from,
            plan.target,
            yes_no(plan.pre_pull)
        );
        let rows = plan.steps.iter().map(|s| {
            let note = match s.state {
                KubeStepState::Upgrade => "patch config, apply without reboot",
                KubeStepState::AlreadyOnTarget => "skipped (already on target)",
                KubeStepState::NoKubeProxy => {
                    "skipped (no kube-proxy DaemonSet: kube-proxy disabled)"
                }
            };
            vec![
                s.node.clone(),
                s.component.as_str().to_string(),
                s.from.clone().unwrap_or_else(|| "?".into()),
                note.to_string(),
            ]
        });
        out.push_str(&steps_table(&["NODE", "COMPONENT", "FROM", "NOTE"], rows));
        if !plan.removed_apis.is_empty() {
            out.push_str(&format!(
                "REMOVED APIS (stored objects {} no longer serves)\n",
                plan.target
            ));
            let rows = plan.removed_apis.iter().map(|c| {
                let count = c.count.to_string();
                vec![
                    count,
                    c.api.clone(),
                    c.removed_in.clone(),
                    c.replacement.clone(),
                ]
            });
            out.push_str(&indent(&table(
                &["COUNT", "API", "REMOVED IN", "MOVE TO"],
                rows,
            )));
        }
        out
    }
}

impl HeadlessUpgrade for UpgradeK8sArgs {
    type Kind = Kubernetes;

    fn options(&self) -> RunOptions {
        RunOptions {
            node_timeout: Duration::from_secs(self.step_timeout),
            ..RunOptions::default()
        }
    }

    /// The plan, with the removed-API counts filled in when the API answered.
    async fn plan(
        &self,
        status: &ClusterStatus,
        observer: &ClusterObserver,
        target: Version,
    ) -> Result<KubernetesUpgradePlan, Stop> {
        let mut plan = KubernetesUpgradePlan::new(status, &target, !self.no_pre_pull)
            .map_err(|e| Stop(EXIT_BLOCKED, e.to_string()))?;
        if !is_known_kubernetes_release(&target) {
            learn_target(&mut plan).await;
        }
        if let Ok(counts) = count_removed_apis(observer, &plan).await {
            plan.removed_apis = counts;
        }
        Ok(plan)
    }

    async fn guards(
        &self,
        plan: &KubernetesUpgradePlan,
        status: &ClusterStatus,
        observer: &ClusterObserver,
        other: Option<&RolloutInProgress>,
    ) -> Vec<Guard> {
        read_plan_guards(observer, plan, status, other, &self.rollout.gate.ack).await
    }

    fn report<'a>(&self, plan: &'a KubernetesUpgradePlan) -> impl PlanText + 'a {
        plan
    }
}
