//! `taloscope upgrade`: the guarded rolling Talos upgrade without the console. `--plan` prints
//! the plan and every guard's verdict; `--yes --confirm NAME` runs it through the dispatcher,
//! one progress line per change, resuming a journal a killed run left. Exit 0 / 1 / 2. The body
//! is headless's; this command brings the Talos plan, its guards and its report.
use std::time::Duration;

use super::headless::{
    self, CommandFlags, EXIT_BLOCKED, HeadlessUpgrade, PlanText, Stop, other_rollout, usage,
};
use super::upgrade_output::{PlanReport, progress_line};
use crate::approval::MutatingAction;
use crate::cli::{GlobalArgs, UpgradeArgs};
use crate::discovery::Cluster;
use crate::fleet::ClusterStatus;
use crate::rollout::{RolloutKind, StepProgress};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{
    Guard, InPlaceUpgrade, PlanError, RunOptions, TalosOs, UpgradeOptions, UpgradePlan, plan_guards,
};
use crate::versions::Version;

impl HeadlessUpgrade for UpgradeArgs {
    type Kind = TalosOs;
    const WHAT: &'static str = "upgrade";
    const UNIT: &'static str = "node";
    /// Any unfinished journal to another target is refused; its kind is the runner's to check.
    const JOURNAL_KIND: Option<RolloutKind> = None;
    const IN_PLACE: InPlaceUpgrade = InPlaceUpgrade::TalosOs;
    type Capi = crate::upgrade::capi::TalosMachineTemplate;
    const LINE: fn(usize, usize, &StepProgress) -> String = progress_line;

    fn flags(&self) -> CommandFlags<'_> {
        headless::command_flags!(self)
    }

    fn check_cluster(&self, _: &GlobalArgs, _: &Cluster) -> Result<(), Stop> {
        Ok(())
    }

    fn target_text(target: &Version) -> String {
        target.to_string()
    }

    fn action(&self, cluster: String, target: String) -> MutatingAction {
        MutatingAction::UpgradeTalos { cluster, target }
    }

    fn options(&self) -> RunOptions {
        RunOptions {
            node_timeout: Duration::from_secs(self.node_timeout),
            drain: !self.no_drain,
            ..RunOptions::default()
        }
    }

    async fn plan(
        &self,
        status: &ClusterStatus,
        _: &ClusterObserver,
        target: Version,
    ) -> Result<UpgradePlan, Stop> {
        make_plan(self, status, target)
    }

    async fn guards(
        &self,
        plan: &UpgradePlan,
        status: &ClusterStatus,
        observer: &ClusterObserver,
    ) -> Vec<Guard> {
        let other = other_rollout(observer).await;
        plan_guards(plan, status, observer.talos.roles(), other.as_ref())
    }

    fn report(&self, plan: &UpgradePlan, guards: &[Guard]) -> impl PlanText {
        PlanReport::new(plan, guards, &self.ack)
    }
}

fn make_plan(
    args: &UpgradeArgs,
    status: &ClusterStatus,
    target: Version,
) -> Result<UpgradePlan, Stop> {
    let options = UpgradeOptions {
        stage: args.stage,
        preserve: args.preserve,
        max_parallel: args.max_parallel,
        allow_downgrade: args.allow_downgrade,
        ..UpgradeOptions::default()
    };
    let mut plan = UpgradePlan::new(status, target, options).map_err(|e| match e {
        PlanError::NothingToUpgrade { .. } => Stop(0, e.to_string()),
        PlanError::UnknownTarget { .. } => Stop(EXIT_BLOCKED, e.to_string()),
        other => usage(other.to_string()),
    })?;
    if let Some(image) = &args.image {
        plan.set_image(image).map_err(|e| usage(e.to_string()))?;
    }
    Ok(plan)
}
