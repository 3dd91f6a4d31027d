//! `taloscope upgrade`: the guarded rolling Talos upgrade without the console. The Talos
//! releases are learned once the cluster is connected (the installer's registry or its
//! mirrors, else the built-in table); `--plan` without `--to` lists the offered targets;
//! `--plan` prints the plan and every guard's verdict; `--yes --confirm NAME` runs it through
//! the dispatcher, one progress line per change, resuming a journal a killed run left. Exit
//! 0 / 1 / 2. The body is `rollout`'s, shared with `upgrade-k8s` and the Cluster API way; this
//! command brings the Talos plan, its guards and its part of the plan report.
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

mod capi;
mod kubernetes;
pub(super) mod rollout;

use super::exit::{Stop, print_report, usage};
use super::plan_report::{PlanText, indent, steps_table};
use super::session::{choose, connect};
use crate::cli::{GlobalArgs, UpgradeArgs};
use crate::fleet::ClusterStatus;
use crate::paths::Paths;
use crate::printable::yes_no;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::plan::{TalosTargets, running_talos_versions, talos_targets};
use crate::upgrade::{
    Guard, PlanError, ReleaseLookup, ReleasesOrigin, RolloutInProgress, RunOptions, TalosOs,
    UpgradeOptions, UpgradePlan, plan_guards, unknown_target,
};
use crate::versions::{OfferedRelease, TalosVersion, Version};
use rollout::HeadlessUpgrade;

/// Runs `taloscope upgrade` to its exit code.
pub(super) fn run(global: &GlobalArgs, args: &UpgradeArgs) -> Result<ExitCode, Stop> {
    if args.to.is_empty() && !args.rollout.gate.plan {
        return Err(usage(
            "name the target with --to VERSION, or list the offered targets with --plan",
        ));
    }
    let lookup = release_lookup(global, args);
    if args.to.is_empty() {
        return list_offered(global, args, &lookup);
    }
    let talos = TalosUpgrade { args, lookup };
    rollout::run(global, &args.to, &args.rollout, &talos)
}

/// Where the releases are learned for the cluster `--context` names (the console's plan
/// screen learns them alike).
fn release_lookup(global: &GlobalArgs, args: &UpgradeArgs) -> ReleaseLookup {
    let paths = Paths::resolve(global.state_dir.as_deref());
    let (sources, _) = super::session::sources(global, &paths);
    let cluster = global.context.as_deref();
    ReleaseLookup::for_cluster(&sources.config, cluster, &paths.state_dir, args.pre_release)
}

/// `--plan` without `--to`: the offered targets and where they were learned.
#[derive(Serialize)]
struct OfferedTargets<'a> {
    cluster: &'a str,
    running: Vec<String>,
    offered: Vec<OfferedRelease>,
    /// The target offered first: the running minor's newest patch, else the next minor's.
    default: Option<TalosVersion>,
    releases: &'a ReleasesOrigin,
}

fn list_offered(
    global: &GlobalArgs,
    args: &UpgradeArgs,
    lookup: &ReleaseLookup,
) -> Result<ExitCode, Stop> {
    let chosen = choose(global)?;
    let connected = connect(&chosen)?;
    let learned = connected.runtime.block_on(lookup.learn());
    let status = &connected.status;
    let mut running: Vec<String> = running_talos_versions(status)
        .iter()
        .map(Version::to_string)
        .collect();
    running.sort();
    running.dedup();
    let TalosTargets { offered, default } = talos_targets(status, args.allow_downgrade, &learned);
    let report = OfferedTargets {
        cluster: &chosen.cluster.name,
        running,
        default,
        offered,
        releases: &learned.origin,
    };
    print_report(args.rollout.gate.output, &report, offered_table)?;
    Ok(ExitCode::SUCCESS)
}

/// The offered targets, the default marked, and where they were learned.
fn offered_table(report: &OfferedTargets) -> String {
    let mut out = format!(
        "TARGETS for {} (running Talos {})\n",
        report.cluster,
        report.running.join(", ")
    );
    let rows: String = report
        .offered
        .iter()
        .map(|o| {
            let default = if report.default.as_ref() == Some(&o.version) {
                "  (default)"
            } else {
                ""
            };
            format!("{}  {}{default}\n", o.version, o.source.as_str())
        })
        .collect();
    if rows.is_empty() {
        out.push_str("  no target offered\n");
    } else {
        out.push_str(&indent(&rows));
    }
    out + &format!(
        "{}\nplan one with --to VERSION --plan\n",
        report.releases.describe()
    )
}

/// `taloscope upgrade --to VERSION`, learning the releases when it plans.
struct TalosUpgrade<'a> {
    args: &'a UpgradeArgs,
    lookup: ReleaseLookup,
}

impl HeadlessUpgrade for TalosUpgrade<'_> {
    type Kind = TalosOs;

    async fn check_target(&self, status: &ClusterStatus, target: &Version) -> Result<(), Stop> {
        let learned = self.lookup.learn().await;
        unknown_target(status, target, self.args.allow_downgrade, &learned).map_err(usage)
    }

    fn options(&self) -> RunOptions {
        RunOptions {
            node_timeout: Duration::from_secs(self.args.node_timeout),
            drain: !self.args.no_drain,
            ..RunOptions::default()
        }
    }

    async fn plan(
        &self,
        status: &ClusterStatus,
        _: &ClusterObserver,
        target: Version,
    ) -> Result<UpgradePlan, Stop> {
        let (args, learned) = (self.args, self.lookup.learn().await);
        let options = UpgradeOptions {
            stage: args.stage,
            preserve: args.preserve,
            max_parallel: args.max_parallel,
            allow_downgrade: args.allow_downgrade,
            ..UpgradeOptions::default()
        };
        let among = UpgradePlan::among(status, target, options, &learned);
        let mut plan = among.map_err(|e| match e {
            PlanError::NothingToUpgrade { .. } => Stop(0, e.to_string()),
            other => usage(other.to_string()),
        })?;
        if let Some(image) = &args.image {
            plan.set_image(image).map_err(|e| usage(e.to_string()))?;
        }
        Ok(plan)
    }

    async fn guards(
        &self,
        plan: &UpgradePlan,
        status: &ClusterStatus,
        observer: &ClusterObserver,
        other: Option<&RolloutInProgress>,
    ) -> Vec<Guard> {
        plan_guards(plan, status, observer.talos.roles(), other)
    }

    fn report<'a>(&self, plan: &'a UpgradePlan) -> impl PlanText + 'a {
        let notes = plan.option_notes();
        TalosPlanText { plan, notes }
    }
}

/// The Talos upgrade's part of its plan report: the plan's fields (the `upgrade --plan
/// --output json` contract) and the notes its options call for, beside the guards.
#[derive(Debug, Serialize)]
pub struct TalosPlanText<'a> {
    #[serde(flatten)]
    pub plan: &'a UpgradePlan,
    pub notes: Vec<String>,
}

impl PlanText for TalosPlanText<'_> {
    fn table(&self) -> String {
        let plan = self.plan;
        let o = &plan.options;
        let mut out = format!(
            "UPGRADE {} to Talos {}\n  image {}\n  max-parallel {}, stage {}, preserve {}, allow-downgrade {}\n",
            plan.cluster,
            plan.target,
            plan.image,
            o.max_parallel,
            yes_no(o.stage),
            yes_no(o.preserve),
            yes_no(o.allow_downgrade),
        );
        let rows = plan.steps.iter().map(|s| {
            let note = match (s.is_skipped(), s.api) {
                (true, _) => format!("skipped ({:?})", s.state).to_lowercase(),
                (false, Some(api)) => {
                    let mut note = api.calls().to_string();
                    if s.forfeit_leadership {
                        note.push_str("; etcd leader: hands leadership over first");
                    }
                    note
                }
                (false, None) => "version unknown".to_string(),
            };
            vec![
                s.node.clone(),
                s.role.as_str().to_string(),
                s.from.as_ref().map_or("?".to_string(), ToString::to_string),
                s.batch.map_or("-".to_string(), |b| b.to_string()),
                note,
            ]
        });
        let header = ["NODE", "ROLE", "FROM", "BATCH", "API / NOTE"];
        out.push_str(&steps_table(&header, rows));
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        let offered: Vec<String> = plan
            .offered
            .iter()
            .map(|o| format!("{} ({})", o.version, o.source.as_str()))
            .collect();
        out.push_str(&format!(
            "  offered: {}\n  {}\n",
            if offered.is_empty() {
                "none".to_string()
            } else {
                offered.join(", ")
            },
            plan.releases.describe()
        ));
        out
    }
}
