//! The plumbing `taloscope upgrade` and `taloscope upgrade-k8s` share: pick the cluster named by
//! `--context`, connect to it, find an unfinished journal, approve through the dispatcher, print
//! one progress line per change and record how the rollout ended. Exit 0 / 1 / 2.
use std::io::Write;
use std::process::ExitCode;

use super::upgrade_output::outcome_line;
use crate::approval::{ApprovedAction, AuditLog, Dispatcher, MutatingAction};
use crate::cli::GlobalArgs;
use crate::discovery::{Cluster, Discovery, Sources, discover};
use crate::fleet::ClusterStatus;
use crate::paths::Paths;
use crate::rollout::{RolloutEvent, RolloutJournal, RolloutKind, RolloutOutcome, StepProgress};
use crate::talos::{ClientOptions, TalosClient};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{RolloutHandle, RolloutInProgress};

pub(super) use super::exit::{EXIT_BLOCKED, Stop, exit_code, usage};

/// A run needs `--plan`, or `--yes` with `--confirm <cluster>`.
pub(super) fn check_mode(plan: bool, yes: bool, confirm: Option<&str>) -> Result<(), Stop> {
    if !plan && !yes {
        return Err(usage(
            "say --plan to see the plan, or --yes --confirm <cluster> to run it",
        ));
    }
    if yes && confirm.is_none() {
        return Err(usage(
            "--yes needs --confirm <cluster>, the cluster name typed in full",
        ));
    }
    Ok(())
}

/// What discovery found for the cluster named by `--context`.
pub(super) struct Chosen {
    pub paths: Paths,
    pub discovery: Discovery,
    pub cluster: Cluster,
}

/// Discovers the clusters (warning about unreadable sources) and picks the one `--context` names.
pub(super) fn choose(global: &GlobalArgs) -> Result<Chosen, Stop> {
    let Some(wanted) = global.context.as_deref() else {
        return Err(usage("name the cluster with --context"));
    };
    let paths = Paths::resolve(global.state_dir.as_deref());
    let env = |name: &str| std::env::var(name).ok();
    let (sources, source_errors) = Sources::resolve(&global.source_overrides(), &env, &paths);
    let discovery = discover(&sources);
    for err in source_errors.iter().chain(&discovery.errors) {
        eprintln!("taloscope: warning: {err}");
    }
    let cluster = select(&discovery, wanted)?;
    Ok(Chosen {
        paths,
        discovery,
        cluster,
    })
}

/// The chosen cluster, connected: its observer, its status now and any unfinished journal.
pub(super) struct Connected {
    pub runtime: tokio::runtime::Runtime,
    pub observer: ClusterObserver,
    pub status: ClusterStatus,
    pub journal: Option<RolloutJournal>,
}

pub(super) fn connect(chosen: &Chosen) -> Result<Connected, Stop> {
    let runtime = crate::commands::runtime()
        .map_err(|e| Stop(1, format!("cannot start the async runtime: {e}")))?;
    let observer = runtime.block_on(observer_for(&chosen.cluster, &chosen.discovery))?;
    let status = runtime.block_on(observer.status());
    let journal = RolloutJournal::load_unfinished(&chosen.paths.state_dir, &chosen.cluster.name)
        .map_err(|e| usage(e.to_string()))?;
    Ok(Connected {
        runtime,
        observer,
        status,
        journal,
    })
}

/// Refuses to go on while the cluster's unfinished journal is another rollout: of another
/// `kind` (when one is given) or to another target. `what` names the rollout in the message.
pub(super) fn check_journal(
    chosen: &Chosen,
    journal: Option<&RolloutJournal>,
    what: &str,
    kind: Option<RolloutKind>,
    target: &str,
) -> Result<(), Stop> {
    let Some(j) = journal else {
        return Ok(());
    };
    let cluster = &chosen.cluster.name;
    let path = RolloutJournal::path_for(&chosen.paths.state_dir, cluster);
    if kind.is_some_and(|k| k != j.kind) {
        return Err(usage(format!(
            "an unfinished {} of {cluster} to {} is in its journal {}; finish it first or move the file away",
            j.kind.describe(),
            j.target,
            path.display()
        )));
    }
    if j.target != target {
        return Err(usage(format!(
            "an unfinished {what} of {cluster} to {} is in its journal {}; finish it first (same --to) or move the file away",
            j.target,
            path.display()
        )));
    }
    Ok(())
}

/// With `--plan`: says on stderr that `--yes` resumes the unfinished journal, if there is one.
pub(super) fn plan_notice(journal: Option<&RolloutJournal>, what: &str, cluster: &str) {
    if journal.is_some() {
        eprintln!(
            "taloscope: an unfinished {what} of {cluster} is in its journal; --yes --confirm {cluster} resumes it"
        );
    }
}

/// Asks the dispatcher for `action`, answering its confirmation with `--confirm`.
pub(super) fn approve(
    global: &GlobalArgs,
    chosen: &Chosen,
    action: MutatingAction,
    confirm: Option<&str>,
) -> Result<(Dispatcher, ApprovedAction), Stop> {
    let dispatcher = Dispatcher::new(global.readonly, AuditLog::new(chosen.paths.audit_log()));
    let approved = super::exit::approve(&dispatcher, action, confirm)?;
    Ok((dispatcher, approved))
}

/// Records in the audit log that the plan's guards refused the approved run; the stop says so.
pub(super) fn refuse(dispatcher: &Dispatcher, approved: &ApprovedAction, what: &str) -> Stop {
    let _ = dispatcher.finished(approved, Err("refused by its guards".into()));
    Stop(EXIT_BLOCKED, format!("refused: a guard blocks the {what}"))
}

/// Says on stderr which step a resumed run starts from (`unit` is "node" or "step").
pub(super) fn resume_notice(what: &str, unit: &str, cluster: &str, journal: &RolloutJournal) {
    let next = journal.summary().first_unfinished().map_or(0, |i| i + 1);
    eprintln!(
        "taloscope: resuming the {what} of {cluster} to {} from its journal ({unit} {next} of {})",
        journal.target,
        journal.steps.len()
    );
}

/// How a spawned rollout is followed to its end.
pub(super) struct Follow<'a> {
    pub dispatcher: &'a Dispatcher,
    pub approved: &'a ApprovedAction,
    pub cluster: &'a str,
    pub target: &'a str,
    pub line: fn(usize, usize, &StepProgress) -> String,
}

/// Prints the rollout's progress until it ends, records the outcome in the audit log and
/// returns the exit code: 0 when it completed, 1 otherwise.
pub(super) fn finish(
    runtime: &tokio::runtime::Runtime,
    handle: RolloutHandle,
    rx: tokio::sync::mpsc::UnboundedReceiver<RolloutEvent>,
    how: Follow<'_>,
) -> ExitCode {
    let outcome = runtime.block_on(follow(handle, rx, how.cluster, how.target, how.line));
    let result = match &outcome {
        RolloutOutcome::Completed => Ok(()),
        other => Err(outcome_line(how.cluster, how.target, other)),
    };
    if let Err(e) = how.dispatcher.finished(how.approved, result) {
        eprintln!("taloscope: {e}");
    }
    if outcome == RolloutOutcome::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BLOCKED)
    }
}

/// Prints one line per step change (as `line` words it) until the rollout ends.
async fn follow(
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

/// The cluster named by --context (its name, or any of its contexts, which it then uses); it
/// needs the Talos API.
fn select(discovery: &Discovery, wanted: &str) -> Result<Cluster, Stop> {
    let cluster = discovery.select(wanted).ok_or_else(|| {
        usage(format!(
            "no cluster or context named {wanted:?}; `taloscope contexts` lists them"
        ))
    })?;
    if cluster.talos.is_none() {
        return Err(usage(format!(
            "cluster {wanted:?} has no talosconfig context; the upgrade needs the Talos API"
        )));
    }
    Ok(cluster)
}

async fn observer_for(cluster: &Cluster, discovery: &Discovery) -> Result<ClusterObserver, Stop> {
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
