//! `upgrade` and `upgrade-k8s` of a cluster Cluster API owns: the same command taken the CAPI
//! way. The plan lists the objects patched and the Machines replaced in order; the run goes
//! through the dispatcher, the journal and the Lease of the upgrade body, one phase a step.
use std::process::ExitCode;

use kube::config::Kubeconfig;
use serde::Serialize;

use super::follow::progress_line;
use super::rollout::{CommandFlags, HeadlessUpgrade, run_connected};
use crate::approval::MutatingAction;
use crate::capi::CapiOwner;
use crate::cli::GlobalArgs;
use crate::commands::exit::{EXIT_BLOCKED, Stop};
use crate::commands::plan_report::{PlanText, indent};
use crate::commands::session::{Chosen, Connected, other_rollout};
use crate::commands::status::columns;
use crate::discovery::{Cluster, Sources};
use crate::fleet::ClusterStatus;
use crate::opennebula::auth::OneEnvironment;
use crate::rollout::{RolloutKind, StepProgress};
use crate::upgrade::capi::{
    CapiAccess, CapiPhase, CapiPlanError, CapiProductKind, CapiUpgradePlan, CapiWay, VmTemplates,
    capi_action, capi_read_guards, capi_run_options, product_name,
};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{Guard, InPlaceUpgrade, RunOptions};
use crate::versions::Version;

/// An in-place upgrade command, taken the CAPI way for the cluster `owner` owns.
pub(super) struct CapiCommand<'a, C: HeadlessUpgrade> {
    inner: &'a C,
    owner: CapiOwner,
    kubeconfig: Kubeconfig,
    /// The cluster's provider's VM templates (Talos upgrades only).
    vm_templates: VmTemplates,
}

/// Runs `command` the CAPI way on the chosen cluster `owner` owns.
pub(super) fn run<C: HeadlessUpgrade>(
    global: &GlobalArgs,
    command: &C,
    owner: CapiOwner,
    (chosen, connected): (Chosen, Connected),
    target: Version,
) -> Result<ExitCode, Stop> {
    let kubeconfig = chosen.discovery.kubeconfig.clone().ok_or_else(|| {
        Stop(
            1,
            format!(
                "no kubeconfig to reach the management cluster {}",
                owner.management
            ),
        )
    })?;
    let vm_templates = match C::Capi::PRODUCT {
        crate::upgrade::capi::CapiProduct::TalosOs => connected
            .runtime
            .block_on(provider_templates(global, &chosen)),
        crate::upgrade::capi::CapiProduct::Kubernetes => None,
    };
    let capi = CapiCommand {
        inner: command,
        owner,
        kubeconfig,
        vm_templates,
    };
    run_connected(global, &capi, (chosen, connected), target, None)
}

/// The VM templates of the provider taloscope's config names for the cluster; `None` when it
/// names none.
async fn provider_templates(global: &GlobalArgs, chosen: &Chosen) -> VmTemplates {
    let env = |name: &str| std::env::var(name).ok();
    let (sources, _) = Sources::resolve(&global.source_overrides(), &env, &chosen.paths);
    crate::provision::provider::provider_template_names(
        &sources.config,
        &chosen.cluster,
        &OneEnvironment::capture(&env),
    )
    .await
}

impl<C: HeadlessUpgrade> CapiCommand<'_, C> {
    async fn access(&self) -> Result<CapiAccess, Stop> {
        CapiAccess::connect(&self.kubeconfig, &self.owner)
            .await
            .map_err(|e| {
                Stop(
                    EXIT_BLOCKED,
                    format!("management cluster {}: {e}", self.owner.management),
                )
            })
    }
}

impl<C: HeadlessUpgrade> HeadlessUpgrade for CapiCommand<'_, C> {
    type Kind = CapiWay<C::Capi>;
    type Capi = C::Capi;
    const WHAT: &'static str = "CAPI-way upgrade";
    const UNIT: &'static str = "phase";
    const JOURNAL_KIND: Option<RolloutKind> = Some(C::Capi::ROLLOUT);
    const IN_PLACE: InPlaceUpgrade = C::IN_PLACE;
    const LINE: fn(usize, usize, &StepProgress) -> String = progress_line;

    fn flags(&self) -> CommandFlags<'_> {
        self.inner.flags()
    }

    fn check_cluster(&self, _: &GlobalArgs, _: &Cluster) -> Result<(), Stop> {
        Ok(())
    }

    fn target_text(target: &Version) -> String {
        C::target_text(target)
    }

    fn action(&self, cluster: String, target: String) -> MutatingAction {
        MutatingAction::CapiUpgrade {
            cluster,
            owner: self.owner.to_string(),
            product: product_name(C::Capi::PRODUCT).to_string(),
            target,
        }
    }

    fn options(&self) -> RunOptions {
        capi_run_options(self.inner.options())
    }

    async fn plan(
        &self,
        _: &ClusterStatus,
        observer: &ClusterObserver,
        target: Version,
    ) -> Result<CapiUpgradePlan, Stop> {
        let access = self.access().await?;
        let version = target.to_string();
        let text = C::target_text(&target);
        let mut plan = access
            .read_plan(&observer.cluster, C::Capi::PRODUCT, (&version, &text))
            .await
            .map_err(|e| Stop(EXIT_BLOCKED, e))?
            .map_err(|e| match e {
                CapiPlanError::NothingToUpgrade { .. } => Stop(0, e.to_string()),
                other => Stop(EXIT_BLOCKED, other.to_string()),
            })?;
        plan.machine_timeout_secs = self.inner.options().node_timeout.as_secs();
        Ok(plan)
    }

    async fn guards(
        &self,
        plan: &CapiUpgradePlan,
        _: &ClusterStatus,
        observer: &ClusterObserver,
    ) -> Vec<Guard> {
        let read = async {
            CapiAccess::connect(&self.kubeconfig, &self.owner)
                .await?
                .tree_and_status(plan, observer.kube.clone(), Default::default())
                .await
        };
        let read = read.await;
        let other = other_rollout(observer).await;
        capi_read_guards(
            plan,
            read.as_ref().map(|(t, s)| (t, s)).map_err(String::as_str),
            other.as_ref(),
            &self.vm_templates,
        )
    }

    fn report<'a>(&self, plan: &'a CapiUpgradePlan) -> impl PlanText + 'a {
        CapiPlanText::new(plan)
    }
}

/// The CAPI way's part of its plan report: the CAPI-way `--plan --output json` fields beside
/// the guards.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapiPlanText<'a> {
    pub cluster: &'a str,
    /// `management/namespace/name` of the Cluster object.
    pub owner: String,
    pub way: &'static str,
    pub product: &'static str,
    pub from: &'a str,
    pub target: &'a str,
    pub phases: &'a [CapiPhase],
    /// What the dispatcher will ask to confirm.
    pub action: String,
}

impl<'a> CapiPlanText<'a> {
    fn new(plan: &'a CapiUpgradePlan) -> CapiPlanText<'a> {
        CapiPlanText {
            cluster: &plan.cluster,
            owner: plan.owner().to_string(),
            way: "capi",
            product: product_name(plan.product),
            from: &plan.from,
            target: &plan.version,
            phases: &plan.phases,
            action: capi_action(plan).describe(),
        }
    }
}

impl PlanText for CapiPlanText<'_> {
    fn table(&self) -> String {
        let mut out = format!(
            "UPGRADE {} THE CLUSTER API WAY through {}\n  {} {} -> {}\n",
            self.cluster, self.owner, self.product, self.from, self.target
        );
        let mut rows = vec![
            ["#", "OBJECT", "REPLICAS", "PATCH"]
                .map(String::from)
                .to_vec(),
        ];
        for (i, p) in self.phases.iter().enumerate() {
            rows.push(vec![
                (i + 1).to_string(),
                p.label(),
                p.replicas.to_string(),
                p.patch_text(self.target),
            ]);
        }
        out.push_str(&indent(&columns(&rows)));
        out.push_str("MACHINES REPLACED, in order (each: a new Machine, its node Ready, then the old one deleted; maxSurge 1)\n");
        for p in self.phases {
            out.push_str(&format!("  {}: {}\n", p.label(), p.replace_text()));
        }
        out
    }
}
