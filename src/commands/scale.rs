//! `taloscope scale`: a Cluster API workload cluster (--context) scaled the CAPI way. --plan
//! prints the plan (which object, spec.replicas from -> to, Machines created or deleted) and
//! every guard; --yes --confirm NAME runs it through the dispatcher and prints one line per
//! Machine change and etcd check until done. Exit 0 done / 1 refused or failed / 2 usage.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::exit::{EXIT_BLOCKED, Stop, exit_if, usage};
use super::gate::CommandGate;
use super::progress::{data, print_events, print_progress};
use super::session::{check_gate, context, discover_all, named};
use crate::capi_scale::{
    PrepareError, PreparedScale, ScaleEvent, ScaleOptions, ScaleRequest, ScaleSources,
    prepare_scale,
};
use crate::cli::{GlobalArgs, OutputFormat, ScaleArgs};
use crate::discovery::{Cluster, Discovery};
use crate::fleet::CollectOptions;
use crate::operation::scale::CapiScale;
use crate::paths::Paths;
use crate::run_holder::RunHolder;

pub(super) fn run(global: &GlobalArgs, args: &ScaleArgs) -> Result<ExitCode, Stop> {
    check_gate(&args.gate, "cluster")?;
    let (paths, discovery) = discover_all(global);
    super::command_runtime()?.block_on(scale(global, args, &discovery, &paths))
}

/// `cluster` is owned by no Cluster API management cluster: what to use instead, and the
/// management clusters that could not be read.
fn unowned(cluster: &Cluster, unread: &[String]) -> Stop {
    let unread = match unread.is_empty() {
        true => String::new(),
        false => format!(" (not read: {})", unread.join("; ")),
    };
    Stop(
        EXIT_BLOCKED,
        format!(
            "{} is owned by no Cluster API management cluster among the kube contexts{unread}; add nodes to it with `taloscope provision`",
            cluster.name
        ),
    )
}

async fn scale(
    global: &GlobalArgs,
    args: &ScaleArgs,
    discovery: &Discovery,
    paths: &Paths,
) -> Result<ExitCode, Stop> {
    let cluster = named(discovery, context(global, "scale needs --context CLUSTER")?)?;
    let Some(kubeconfig) = discovery.kubeconfig.as_ref() else {
        return Err(usage("no kubeconfig was read; name one with --kubeconfig"));
    };
    let view = crate::capi::read_view(kubeconfig, &discovery.clusters).await;
    let owner =
        (view.owner(&cluster.name).cloned()).ok_or_else(|| unowned(&cluster, &view.errors))?;
    let sources = ScaleSources::connect(&cluster, &owner, kubeconfig, CollectOptions::default())
        .await
        .map_err(|e| Stop(EXIT_BLOCKED, e))?;
    let holder = RunHolder::this_process().to_string();
    let request = ScaleRequest {
        role: args.role,
        deployment: args.deployment.clone(),
        replicas: args.replicas,
    };
    let PreparedScale { plan, guards, .. } = prepare_scale(&sources, &request, &holder)
        .await
        .map_err(|e| match e {
            PrepareError::Unread(e) => Stop(EXIT_BLOCKED, e),
            PrepareError::Plan(e) => usage(e.to_string()),
        })?;
    let gate = CommandGate::new(global, paths, &args.gate);
    let approved = gate.pass(&plan, plan.action(), &guards)?;
    let options = ScaleOptions {
        poll: Duration::from_millis(args.poll_ms.max(10)),
        timeout: Duration::from_secs(args.timeout),
        ..ScaleOptions::DEFAULT
    };
    let output = args.gate.output;
    let (tx, rx) = mpsc::channel(64);
    let mut last_etcd = String::new();
    let events = ReceiverStream::new(rx);
    let printer = print_events(events, output, move |event: &ScaleEvent| {
        // Every poll checks etcd; a table says so when what it found changes.
        if let (ScaleEvent::Etcd { reason, .. }, OutputFormat::Table) = (event, output) {
            if *reason == last_etcd {
                return None;
            }
            last_etcd = reason.clone();
        }
        Some(("progress", data(event), event.line()))
    });
    let started = std::time::Instant::now();
    let mut operation = CapiScale::new(plan, sources, options, tx);
    // The scale's own typed events carry its lines.
    let result = gate
        .run_to_its_end(&approved, &mut operation, &|_| {})
        .await;
    let outcome = operation.outcome(result, started.elapsed().as_secs());
    drop(operation);
    let _ = printer.await;
    print_progress(output, "finished", &outcome, &outcome.line());
    Ok(exit_if(!outcome.succeeded))
}
