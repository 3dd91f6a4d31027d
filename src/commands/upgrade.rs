//! `taloscope upgrade`: the guarded rolling Talos upgrade without the console. `--plan` prints
//! the plan and every guard's verdict; `--yes --confirm NAME` runs it through the dispatcher,
//! one progress line per change, resuming a journal a killed run left. Exit 0 / 1 / 2.
use std::process::ExitCode;
use std::time::Duration;

use super::headless::{self, EXIT_BLOCKED, Stop, check_mode, other_rollout, usage, write_stdout};
use super::upgrade_output::{PlanReport, progress_line};
use crate::approval::MutatingAction;
use crate::cli::{GlobalArgs, OutputFormat, UpgradeArgs};
use crate::fleet::ClusterStatus;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{
    PlanError, RunOptions, TalosOs, UpgradeOptions, UpgradePlan, blocking, plan_guards,
};
use crate::versions::Version;

pub fn run(global: &GlobalArgs, args: &UpgradeArgs) -> ExitCode {
    headless::exit_code(run_inner(global, args))
}

fn run_inner(global: &GlobalArgs, args: &UpgradeArgs) -> Result<ExitCode, Stop> {
    let target = Version::parse(&args.to).map_err(|e| usage(format!("--to {:?}: {e}", args.to)))?;
    check_mode(args.plan, args.yes, args.confirm.as_deref())?;
    let chosen = headless::choose(global)?;
    let cluster = &chosen.cluster;
    let headless::Connected {
        runtime,
        observer,
        status,
        journal,
    } = headless::connect(&chosen)?;
    let state_dir = &chosen.paths.state_dir;
    let wanted_target = target.to_string();
    headless::check_journal(&chosen, journal.as_ref(), "upgrade", None, &wanted_target)?;
    if args.plan {
        headless::plan_notice(journal.as_ref(), "upgrade", &cluster.name);
        return runtime.block_on(print_plan(args, &status, &observer, target));
    }
    let action = MutatingAction::UpgradeTalos {
        cluster: cluster.name.clone(),
        target: target.to_string(),
    };
    let (dispatcher, approved) =
        headless::approve(global, &chosen, action, args.confirm.as_deref())?;
    let options = RunOptions {
        node_timeout: Duration::from_secs(args.node_timeout),
        poll_interval: Duration::from_millis(args.poll_ms.max(10)),
        state_dir: Some(state_dir.clone()),
        kubeconfig: chosen.discovery.kubeconfig.clone(),
        drain: !args.no_drain,
        ..RunOptions::default()
    };
    let run = headless::Approved {
        runtime: &runtime,
        cluster,
        journal,
        dispatcher: &dispatcher,
        approved: &approved,
        options,
        what: "upgrade",
        unit: "node",
        target: &wanted_target,
        acks: &args.ack,
        line: progress_line,
    };
    headless::run_rollout::<TalosOs>(run, || {
        let plan = make_plan(args, &status, target.clone())?;
        let other = runtime.block_on(other_rollout(&observer));
        let guards = plan_guards(&plan, &status, observer.talos.roles(), other.as_ref());
        if blocking(&guards, &args.ack) {
            let report = PlanReport::new(&plan, &guards, &args.ack);
            print!("{}", report.table());
            return Err(headless::refuse(&dispatcher, &approved, "upgrade"));
        }
        Ok(plan)
    })
}

async fn print_plan(
    args: &UpgradeArgs,
    status: &ClusterStatus,
    observer: &ClusterObserver,
    target: Version,
) -> Result<ExitCode, Stop> {
    let plan = match make_plan(args, status, target) {
        Ok(plan) => plan,
        Err(Stop(0, message)) => {
            println!("{message}");
            return Ok(ExitCode::SUCCESS);
        }
        Err(stop) => return Err(stop),
    };
    let other = other_rollout(observer).await;
    let guards = plan_guards(&plan, status, observer.talos.roles(), other.as_ref());
    let report = PlanReport::new(&plan, &guards, &args.ack);
    let text = match args.output {
        OutputFormat::Table => report.table(),
        OutputFormat::Json => serde_json::to_string_pretty(&report)
            .map(|j| j + "\n")
            .map_err(|e| Stop(1, format!("cannot encode the plan as JSON: {e}")))?,
    };
    write_stdout(&text)?;
    Ok(if report.blocked {
        ExitCode::from(EXIT_BLOCKED)
    } else {
        ExitCode::SUCCESS
    })
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
