//! `taloscope upgrade-k8s`: the guarded Kubernetes upgrade without the console, with the same
//! conventions as `taloscope upgrade`: `--plan` prints the steps, the removed-API counts and every
//! guard's verdict; `--yes --confirm NAME` runs it through the dispatcher with one progress line
//! per change, resuming a journal a killed run left. Exit 0 / 1 / 2.
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::headless::{self, EXIT_BLOCKED, Stop, check_mode, usage, write_stdout};
use super::upgrade_output::{GuardLine, guard_lines, guards_table, indent, labelled_progress_line};
use crate::approval::MutatingAction;
use crate::cli::{GlobalArgs, OutputFormat, UpgradeK8sArgs};
use crate::fleet::ClusterStatus;
use crate::kube::removed_apis::RemovedApiCount;
use crate::rollout::RolloutKind;
use crate::upgrade::RunOptions;
use crate::upgrade::kubernetes::{
    KubeGuardInput, KubeStep, KubeStepState, Kubernetes, KubernetesUpgradePlan, count_removed_apis,
    kubernetes_plan_guards,
};
use crate::upgrade::observe::ClusterObserver;
use crate::versions::Version;

/// The plan and its guards: the `upgrade-k8s --plan --output json` contract.
#[derive(Debug, Serialize)]
pub struct KubePlanReport<'a> {
    pub cluster: &'a str,
    pub from: String,
    pub target: String,
    pub pre_pull: bool,
    pub steps: &'a [KubeStep],
    pub removed_apis: &'a [RemovedApiCount],
    pub guards: Vec<GuardLine>,
    /// True when any guard blocks: the run would be refused.
    pub blocked: bool,
}

impl<'a> KubePlanReport<'a> {
    fn new(
        plan: &'a KubernetesUpgradePlan,
        guards: &[crate::upgrade::Guard],
        acks: &[String],
    ) -> KubePlanReport<'a> {
        let guards = guard_lines(guards, acks);
        KubePlanReport {
            cluster: &plan.cluster,
            from: plan.from.to_string(),
            target: plan.target.to_string(),
            pre_pull: plan.pre_pull,
            steps: &plan.steps,
            removed_apis: &plan.removed_apis,
            blocked: guards.iter().any(|g| g.blocks),
            guards,
        }
    }

    fn table(&self) -> String {
        let mut out = format!(
            "KUBERNETES UPGRADE {} from {} to {}\n  pre-pull images: {}\n",
            self.cluster,
            self.from,
            self.target,
            if self.pre_pull { "yes" } else { "no" }
        );
        let mut rows = vec![
            ["#", "NODE", "COMPONENT", "FROM", "NOTE"]
                .map(String::from)
                .to_vec(),
        ];
        for (i, s) in self.steps.iter().enumerate() {
            let note = match s.state {
                KubeStepState::Upgrade => "patch config, apply without reboot",
                KubeStepState::AlreadyOnTarget => "skipped (already on target)",
            };
            rows.push(vec![
                (i + 1).to_string(),
                s.node.clone(),
                s.component.as_str().to_string(),
                s.from.clone().unwrap_or_else(|| "?".into()),
                note.to_string(),
            ]);
        }
        out.push_str(&indent(&super::status::columns(&rows)));
        if !self.removed_apis.is_empty() {
            out.push_str(&format!(
                "REMOVED APIS (stored objects {} no longer serves)\n",
                self.target
            ));
            let mut rows = vec![
                ["COUNT", "API", "REMOVED IN", "MOVE TO"]
                    .map(String::from)
                    .to_vec(),
            ];
            for c in self.removed_apis {
                rows.push(vec![
                    c.count.to_string(),
                    c.api.clone(),
                    c.removed_in.clone(),
                    c.replacement.clone(),
                ]);
            }
            out.push_str(&indent(&super::status::columns(&rows)));
        }
        out.push_str(&guards_table(&self.guards, self.cluster));
        out
    }
}

pub fn run(global: &GlobalArgs, args: &UpgradeK8sArgs) -> ExitCode {
    headless::exit_code(run_inner(global, args))
}

fn run_inner(global: &GlobalArgs, args: &UpgradeK8sArgs) -> Result<ExitCode, Stop> {
    let target = Version::parse(&args.to).map_err(|e| usage(format!("--to {:?}: {e}", args.to)))?;
    check_mode(args.plan, args.yes, args.confirm.as_deref())?;
    let chosen = headless::choose(global)?;
    let cluster = &chosen.cluster;
    if cluster.kube.is_none() {
        let wanted = global.context.as_deref().unwrap_or_default();
        return Err(usage(format!(
            "cluster {wanted:?} has no kube context; the Kubernetes upgrade needs the Kubernetes API"
        )));
    }
    let headless::Connected {
        runtime,
        observer,
        status,
        journal,
    } = headless::connect(&chosen)?;
    let state_dir = &chosen.paths.state_dir;
    let wanted_target = target.to_string().trim_start_matches('v').to_string();
    headless::check_journal(
        &chosen,
        journal.as_ref(),
        "Kubernetes upgrade",
        Some(RolloutKind::KubernetesUpgrade),
        &wanted_target,
    )?;
    if args.plan {
        headless::plan_notice(journal.as_ref(), "Kubernetes upgrade", &cluster.name);
        return runtime.block_on(print_plan(args, &status, &observer, target));
    }
    let action = MutatingAction::UpgradeKubernetes {
        cluster: cluster.name.clone(),
        target: wanted_target.clone(),
    };
    let (dispatcher, approved) =
        headless::approve(global, &chosen, action, args.confirm.as_deref())?;
    let options = RunOptions {
        node_timeout: Duration::from_secs(args.step_timeout),
        poll_interval: Duration::from_millis(args.poll_ms.max(10)),
        state_dir: Some(state_dir.clone()),
        kubeconfig: chosen.discovery.kubeconfig.clone(),
        ..RunOptions::default()
    };
    let run = headless::Approved {
        runtime: &runtime,
        cluster,
        journal,
        dispatcher: &dispatcher,
        approved: &approved,
        options,
        what: "Kubernetes upgrade",
        unit: "step",
        target: &wanted_target,
        acks: &args.ack,
        line: labelled_progress_line,
    };
    headless::run_rollout::<Kubernetes>(run, || {
        let plan = runtime.block_on(make_plan(args, &status, &observer, target.clone()))?;
        let (guards, blocked) = runtime.block_on(guards_for(&plan, &status, &observer, args));
        if blocked {
            let report = KubePlanReport::new(&plan, &guards, &args.ack);
            print!("{}", report.table());
            let what = "Kubernetes upgrade";
            return Err(headless::refuse(&dispatcher, &approved, what));
        }
        Ok(plan)
    })
}

/// The plan, with the removed-API counts filled in when the API answered.
async fn make_plan(
    args: &UpgradeK8sArgs,
    status: &ClusterStatus,
    observer: &ClusterObserver,
    target: Version,
) -> Result<KubernetesUpgradePlan, Stop> {
    let mut plan = KubernetesUpgradePlan::new(status, &target, args.pre_pull)
        .map_err(|e| Stop(EXIT_BLOCKED, e.to_string()))?;
    if let Ok(counts) = count_removed_apis(observer, &plan).await {
        plan.removed_apis = counts;
    }
    Ok(plan)
}

/// Every guard of the plan and whether any blocks, given `--ack`.
async fn guards_for(
    plan: &KubernetesUpgradePlan,
    status: &ClusterStatus,
    observer: &ClusterObserver,
    args: &UpgradeK8sArgs,
) -> (Vec<crate::upgrade::Guard>, bool) {
    let removed = count_removed_apis(observer, plan).await;
    let other = headless::other_rollout(observer).await;
    let guards = kubernetes_plan_guards(
        plan,
        status,
        KubeGuardInput {
            roles: observer.talos.roles(),
            other_rollout: other.as_ref(),
            removed_apis: &removed,
            acks: &args.ack,
        },
    );
    let blocked = crate::upgrade::blocking(&guards, &args.ack);
    (guards, blocked)
}

async fn print_plan(
    args: &UpgradeK8sArgs,
    status: &ClusterStatus,
    observer: &ClusterObserver,
    target: Version,
) -> Result<ExitCode, Stop> {
    let plan = make_plan(args, status, observer, target).await?;
    let (guards, _) = guards_for(&plan, status, observer, args).await;
    let report = KubePlanReport::new(&plan, &guards, &args.ack);
    let text = match args.output {
        OutputFormat::Table => report.table(),
        OutputFormat::Json => serde_json::to_string_pretty(&report)
            .map(|j| j + "\n")
            .map_err(|e| Stop(1, format!("cannot encode the plan as JSON: {e}")))?,
    };
    write_stdout(&text)?;
    let _ = std::io::stdout().flush();
    Ok(if report.blocked {
        ExitCode::from(EXIT_BLOCKED)
    } else {
        ExitCode::SUCCESS
    })
}
