//! `taloscope upgrade`: the guarded rolling Talos upgrade without the console. `--plan` prints
//! the plan and every guard's verdict; `--yes --confirm NAME` runs it through the dispatcher,
//! one progress line per change, resuming a journal a killed run left. Exit 0 / 1 / 2.
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use super::upgrade_output::{PlanReport, outcome_line, progress_line};
use crate::app::dispatcher::{Answer, AuditLog, Dispatcher, Gate, MutatingAction, Verdict};
use crate::cli::{GlobalArgs, OutputFormat, UpgradeArgs};
use crate::discovery::{Cluster, Discovery, Sources, discover};
use crate::fleet::ClusterStatus;
use crate::paths::Paths;
use crate::rollout::{RolloutEvent, RolloutJournal, RolloutOutcome, StepProgress};
use crate::talos::{ClientOptions, TalosClient};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{
    PlanError, RolloutHandle, RolloutInProgress, RunOptions, TalosUpgradeRun, UpgradeOptions,
    UpgradePlan, blocking, plan_guards, resume_talos_upgrade_with, spawn_talos_upgrade,
};
use crate::versions::Version;

pub(super) const EXIT_BLOCKED: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// A reason to stop, with its exit code.
pub(super) struct Stop(pub(super) u8, pub(super) String);

pub(super) fn usage(message: impl Into<String>) -> Stop {
    Stop(EXIT_USAGE, message.into())
}

pub fn run(global: &GlobalArgs, args: &UpgradeArgs) -> ExitCode {
    match run_inner(global, args) {
        Ok(code) => code,
        Err(Stop(code, message)) => {
            eprintln!("taloscope: {message}");
            ExitCode::from(code)
        }
    }
}

fn run_inner(global: &GlobalArgs, args: &UpgradeArgs) -> Result<ExitCode, Stop> {
    let target = Version::parse(&args.to).map_err(|e| usage(format!("--to {:?}: {e}", args.to)))?;
    if !args.plan && !args.yes {
        return Err(usage(
            "say --plan to see the plan, or --yes --confirm <cluster> to run it",
        ));
    }
    if args.yes && args.confirm.is_none() {
        return Err(usage(
            "--yes needs --confirm <cluster>, the cluster name typed in full",
        ));
    }
    let Some(wanted) = global.context.as_deref() else {
        return Err(usage("name the cluster with --context"));
    };
    let paths = Paths::resolve();
    let env = |name: &str| std::env::var(name).ok();
    let (sources, source_errors) = Sources::resolve(global, &env, &paths);
    let discovery = discover(&sources);
    for err in source_errors.iter().chain(&discovery.errors) {
        eprintln!("taloscope: warning: {err}");
    }
    let cluster = select(&discovery, wanted)?;
    let runtime = crate::commands::runtime()
        .map_err(|e| Stop(1, format!("cannot start the async runtime: {e}")))?;
    let observer = runtime.block_on(observer_for(&cluster, &discovery))?;
    let status = runtime.block_on(observer.status());
    let journal = RolloutJournal::load_unfinished(&paths.state_dir, &cluster.name)
        .map_err(|e| usage(e.to_string()))?;
    if let Some(j) = &journal
        && j.target != target.to_string()
    {
        return Err(usage(format!(
            "an unfinished upgrade of {} to {} is in its journal {}; finish it first (same --to) or move the file away",
            cluster.name,
            j.target,
            RolloutJournal::path_for(&paths.state_dir, &cluster.name).display()
        )));
    }
    if args.plan {
        if journal.is_some() {
            eprintln!(
                "taloscope: an unfinished upgrade of {} is in its journal; --yes --confirm {} resumes it",
                cluster.name, cluster.name
            );
        }
        return runtime.block_on(print_plan(args, &status, &observer, target));
    }
    let dispatcher = Dispatcher::new(global.readonly, AuditLog::new(paths.audit_log()));
    let action = MutatingAction::UpgradeTalos {
        cluster: cluster.name.clone(),
        target: target.to_string(),
    };
    let pending = match dispatcher.request(action) {
        Gate::Refused(why) => return Err(Stop(EXIT_BLOCKED, why)),
        Gate::Confirm(p) => p,
    };
    let typed = args.confirm.clone().unwrap_or_default();
    let approved = match dispatcher.answer(pending, Answer::Typed(typed)) {
        Verdict::Proceed(a) => a,
        Verdict::Cancelled(why) => {
            return Err(usage(format!(
                "{why}; --confirm must be the cluster name {:?}",
                cluster.name
            )));
        }
    };
    let options = RunOptions {
        node_timeout: Duration::from_secs(args.node_timeout),
        poll_interval: Duration::from_millis(args.poll_ms.max(10)),
        state_dir: Some(paths.state_dir.clone()),
        kubeconfig: discovery.kubeconfig.clone(),
        drain: !args.no_drain,
        ..RunOptions::default()
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = match journal {
        Some(journal) => {
            let next = journal.summary().first_unfinished().map_or(0, |i| i + 1);
            eprintln!(
                "taloscope: resuming the upgrade of {} to {} from its journal (node {next} of {})",
                cluster.name,
                journal.target,
                journal.steps.len()
            );
            let _guard = runtime.enter();
            resume_talos_upgrade_with(journal, approved.clone(), cluster.clone(), options, tx)
        }
        None => {
            let plan = make_plan(args, &status, target.clone())?;
            let other = runtime.block_on(other_rollout(&observer));
            let guards = plan_guards(&plan, &status, observer.talos.roles(), other.as_ref());
            if blocking(&guards, &args.ack) {
                let report = PlanReport::new(&plan, &guards, &args.ack);
                print!("{}", report.table());
                let _ = dispatcher.finished(&approved, Err("refused by its guards".into()));
                return Err(Stop(
                    EXIT_BLOCKED,
                    "refused: a guard blocks the upgrade".into(),
                ));
            }
            let _guard = runtime.enter();
            spawn_talos_upgrade(
                TalosUpgradeRun {
                    approved: approved.clone(),
                    plan,
                    acks: args.ack.clone(),
                    cluster: cluster.clone(),
                    options,
                },
                tx,
            )
        }
    };
    let outcome = runtime.block_on(follow(
        handle,
        rx,
        &cluster.name,
        &target.to_string(),
        progress_line,
    ));
    let result = match &outcome {
        RolloutOutcome::Completed => Ok(()),
        other => Err(outcome_line(&cluster.name, &target.to_string(), other)),
    };
    if let Err(e) = dispatcher.finished(&approved, result) {
        eprintln!("taloscope: {e}");
    }
    Ok(if outcome == RolloutOutcome::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BLOCKED)
    })
}

/// Prints one line per step change (as `line` words it) until the rollout ends.
pub(super) async fn follow(
    handle: RolloutHandle,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<RolloutEvent>,
    cluster: &str,
    target: &str,
    line: fn(usize, usize, &StepProgress) -> String,
) -> RolloutOutcome {
    let mut shown: Vec<StepProgress> = Vec::new();
    let mut outcome = None;
    while let Some(event) = rx.recv().await {
        match event {
            RolloutEvent::Started(summary) => shown = summary.steps,
            RolloutEvent::Step {
                index, progress, ..
            } => {
                let same = shown.get(index).is_some_and(|s| {
                    s.phase == progress.phase
                        && s.detail == progress.detail
                        && s.error == progress.error
                });
                if !same {
                    println!("{}", line(index, shown.len().max(index + 1), &progress));
                    let _ = std::io::stdout().flush();
                }
                if let Some(slot) = shown.get_mut(index) {
                    *slot = progress;
                }
            }
            RolloutEvent::Finished { outcome: o, .. } => {
                println!("{}", outcome_line(cluster, target, &o));
                outcome = Some(o);
            }
            RolloutEvent::Log { .. }
            | RolloutEvent::Paused { .. }
            | RolloutEvent::Resumed { .. } => {}
        }
    }
    match handle.task.await {
        Ok(o) => outcome.unwrap_or(o),
        Err(e) => RolloutOutcome::Halted(format!("the rollout task stopped: {e}")),
    }
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

/// Writes a plan to stdout; a closed pipe (`| head`) is not an error.
pub(super) fn write_stdout(text: &str) -> Result<(), Stop> {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Stop(1, format!("cannot write output: {e}")));
    }
    Ok(())
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

/// Another console's rollout on this cluster, from its Lease (none without a kube context).
pub(super) async fn other_rollout(observer: &ClusterObserver) -> Option<RolloutInProgress> {
    let kube = observer.kube.as_ref()?;
    match kube.read_rollout_lease().await {
        Ok(info) => info.filter(|i| !i.expired).map(|i| i.as_in_progress()),
        Err(e) => {
            eprintln!("taloscope: warning: cannot read the rollout lease: {e}");
            None
        }
    }
}

/// The cluster named by --context (cluster name or talos context name); it needs the Talos API.
pub(super) fn select(discovery: &Discovery, wanted: &str) -> Result<Cluster, Stop> {
    let clusters = &discovery.clusters;
    let cluster = clusters
        .iter()
        .find(|c| c.name == wanted)
        .or_else(|| clusters.iter().find(|c| c.talos_context() == Some(wanted)))
        .ok_or_else(|| {
            usage(format!(
                "no cluster or context named {wanted:?}; `taloscope contexts` lists them"
            ))
        })?;
    if cluster.talos.is_none() {
        return Err(usage(format!(
            "cluster {wanted:?} has no talosconfig context; the upgrade needs the Talos API"
        )));
    }
    Ok(cluster.clone())
}

pub(super) async fn observer_for(
    cluster: &Cluster,
    discovery: &Discovery,
) -> Result<ClusterObserver, Stop> {
    let ctx = cluster.talos.as_ref().ok_or_else(|| {
        usage(format!(
            "cluster {} has no talosconfig context",
            cluster.name
        ))
    })?;
    let talos =
        TalosClient::new(ctx, ClientOptions::default()).map_err(|e| usage(e.to_string()))?;
    let kube = match crate::fleet::kube_client_for(cluster, discovery.kubeconfig.as_ref()).await {
        Some(Ok(client)) => Some(client),
        Some(Err(e)) => return Err(usage(e.to_string())),
        None => None,
    };
    Ok(ClusterObserver {
        cluster: cluster.name.clone(),
        talos,
        kube,
        nodes: ctx.nodes.clone(),
        options: Default::default(),
    })
}
