//! `upgrade` and `upgrade-k8s` of a cluster Cluster API owns: the same command taken the CAPI
//! way. The plan lists the objects patched and the Machines replaced in order; the run is the
//! CAPI-way upgrade operation (`operation::capi_upgrade`) through the one gate and the one
//! runner, one phase a step. A run a killed one left in the cluster's action journal is
//! resumed: each phase the cluster shows patched is followed, not patched again.
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::rollout::HeadlessUpgrade;
use crate::capi::CapiOwner;
use crate::cli::{GlobalArgs, RolloutArgs};
use crate::commands::exit::{EXIT_BLOCKED, Stop, nothing_to_do};
use crate::commands::gate::CommandGate;
use crate::commands::plan_report::{PlanText, steps_table};
use crate::commands::session::{Chosen, Connected, other_rollout};
use crate::opennebula::auth::OneEnvironment;
use crate::operation::capi_upgrade::{
    CapiUpgrade, CapiUpgradeOptions, first_phase_to_roll, interrupted_run,
};
use crate::upgrade::UpgradeKind;
use crate::upgrade::capi::{
    CapiPhase, CapiPlanAsk, CapiPlanError, CapiPlanReading, CapiProduct, CapiReadError,
    CapiUpgradePlan, VmTemplates, capi_action, capi_read_guards, product_name, read_capi_plan,
};
use crate::versions::Version;

/// Runs `command` the CAPI way on the chosen cluster `owner` owns.
pub(super) fn run<C: HeadlessUpgrade>(
    global: &GlobalArgs,
    flags: &RolloutArgs,
    command: &C,
    owner: CapiOwner,
    (chosen, connected): (Chosen, Connected),
    target: Version,
) -> Result<ExitCode, Stop> {
    let gate = &flags.gate;
    let Connected {
        runtime, observer, ..
    } = connected;
    let cluster = chosen.cluster.name.clone();
    let (version, text) = (target.to_string(), C::Kind::version_text(&target));
    let ask = CapiPlanAsk {
        owner: &owner,
        cluster: &cluster,
        product: CapiProduct::of(C::Kind::IN_PLACE),
        target: (&version, &text),
        machine_timeout_secs: command.options().node_timeout.as_secs(),
    };
    let kubeconfig = chosen.discovery.kubeconfig.as_ref();
    let templates = provider_templates(global, &chosen);
    let read = read_capi_plan(kubeconfig, ask, observer.kube.clone(), templates);
    let CapiPlanReading {
        access,
        plan,
        facts: read,
        vm_templates,
    } = match runtime.block_on(read) {
        Ok(reading) => reading,
        Err(CapiReadError::Plan(e @ CapiPlanError::NothingToUpgrade { .. })) => {
            return nothing_to_do(gate, e.to_string());
        }
        Err(e) => return Err(Stop(EXIT_BLOCKED, e.to_string())),
    };
    let resumed = interrupted_run(&chosen.paths.state_dir, &plan);
    // Whose Lease the run takes over: the interrupted run's, or the one `--take-over` names.
    let displaces = resumed
        .as_ref()
        .map(|r| r.holder.clone())
        .or_else(|| flags.take_over.clone());
    let guards = runtime.block_on(async {
        // The Lease this run takes over is not another rollout.
        let other = other_rollout(&observer)
            .await
            .filter(|o| displaces.as_ref() != Some(&o.holder));
        capi_read_guards(
            &plan,
            read.as_ref().map(|(t, s)| (t, s)).map_err(String::as_str),
            other.as_ref(),
            &vm_templates,
        )
    });
    let command_gate = CommandGate::new(global, &chosen.paths, gate);
    let approved = command_gate.pass(CapiPlanText::new(&plan), capi_action(&plan), &guards)?;
    if let (Some(_), Ok((tree, _))) = (&resumed, &read) {
        eprintln!(
            "taloscope: resuming the CAPI-way upgrade of {cluster} to {} from its journal (phase {} of {})",
            plan.target,
            first_phase_to_roll(&plan, tree),
            plan.phases.len()
        );
    }
    let options = CapiUpgradeOptions {
        poll: Duration::from_millis(flags.poll_ms.max(10)),
        displaces,
        ..CapiUpgradeOptions::default()
    };
    // What the run changed: the `--yes --output json` outcome's subject.
    let subject = serde_json::json!({"cluster": cluster, "target": plan.target});
    let mut operation = CapiUpgrade::new(plan, access, observer.kube.clone(), options);
    command_gate.run_to_exit(&runtime, &approved, &mut operation, subject)
}

/// The VM templates of the provider taloscope's config names for the cluster; `None` when it
/// names none.
async fn provider_templates(global: &GlobalArgs, chosen: &Chosen) -> VmTemplates {
    let (sources, _) = crate::commands::session::sources(global, &chosen.paths);
    let env = OneEnvironment::capture(&|name: &str| std::env::var(name).ok());
    crate::provision::provider::provider_template_names(&sources.config, &chosen.cluster, &env)
        .await
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
    #[serde(rename = "action")]
    pub describe: String,
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
            describe: capi_action(plan).describe(),
        }
    }
}

impl PlanText for CapiPlanText<'_> {
    fn table(&self) -> String {
        let mut out = format!(
            "UPGRADE {} THE CLUSTER API WAY through {}\n  {} {} -> {}\n",
            self.cluster, self.owner, self.product, self.from, self.target
        );
        let rows = (self.phases.iter())
            .map(|p| vec![p.label(), p.replicas.to_string(), p.patch_text(self.target)]);
        out.push_str(&steps_table(&["OBJECT", "REPLICAS", "PATCH"], rows));
        out.push_str("MACHINES REPLACED, in order (each: a new Machine, its node Ready, then the old one deleted; maxSurge 1)\n");
        for p in self.phases {
            out.push_str(&format!("  {}: {}\n", p.label(), p.replace_text()));
        }
        out
    }
}
