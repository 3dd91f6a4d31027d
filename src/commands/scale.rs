//! `taloscope scale`: a Cluster API workload cluster (--context) scaled the CAPI way. --plan
//! prints the plan (which object, spec.replicas from -> to, Machines created or deleted) and
//! every guard; --yes --confirm NAME runs it through the dispatcher and prints one line per
//! Machine change and etcd check until done. Exit 0 done / 1 refused or failed / 2 usage.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use super::exit::{EXIT_BLOCKED, Stop, exit_code_as, usage};
use super::gate::{RunFlags, dispatcher, plan_then_approve, run_to_its_end};
use super::progress::print_progress;
use super::session::discover_all;
use crate::capi::CapiOwner;
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

pub fn run(global: &GlobalArgs, args: &ScaleArgs) -> ExitCode {
    exit_code_as(run_inner(global, args), args.gate.output)
}

fn run_inner(global: &GlobalArgs, args: &ScaleArgs) -> Result<ExitCode, Stop> {
    let (paths, discovery) = discover_all(global);
    let runtime = crate::commands::runtime()
        .map_err(|e| Stop(EXIT_BLOCKED, format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(scale(global, args, &discovery, &paths))?;
    Ok(ExitCode::SUCCESS)
}

/// The workload cluster --context names.
fn workload(discovery: &Discovery, wanted: Option<&str>) -> Result<Cluster, Stop> {
    let name = wanted.ok_or_else(|| usage("scale needs --context CLUSTER"))?;
    discovery.select(name).ok_or_else(|| {
        usage(format!(
            "no cluster or context named {name:?}; `taloscope contexts` lists them"
        ))
    })
}

/// The Cluster object that owns `cluster`, among the management clusters of the kube contexts.
async fn owner_of(cluster: &Cluster, discovery: &Discovery) -> Result<CapiOwner, Stop> {
    let Some(kubeconfig) = discovery.kubeconfig.as_ref() else {
        return Err(usage("no kubeconfig was read; name one with --kubeconfig"));
    };
    let view = crate::capi::read_view(kubeconfig, &discovery.clusters).await;
    view.owner(&cluster.name).cloned().ok_or_else(|| {
        let unread = if view.errors.is_empty() {
            String::new()
        } else {
            format!(" (not read: {})", view.errors.join("; "))
        };
        Stop(
            EXIT_BLOCKED,
            format!(
                "{} is owned by no Cluster API management cluster among the kube contexts{unread}; add nodes to it with `taloscope provision`",
                cluster.name
            ),
        )
    })
}

async fn scale(
    global: &GlobalArgs,
    args: &ScaleArgs,
    discovery: &Discovery,
    paths: &Paths,
) -> Result<(), Stop> {
    let cluster = workload(discovery, global.context.as_deref())?;
    let owner = owner_of(&cluster, discovery).await?;
    let kubeconfig = discovery
        .kubeconfig
        .as_ref()
        .ok_or_else(|| usage("no kubeconfig was read"))?;
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
    let d = dispatcher(global, paths);
    let flags = RunFlags::of(&args.gate);
    let Some((approved, ())) = plan_then_approve(&d, &plan, &guards, &flags, || Ok(()))? else {
        return Ok(());
    };
    let options = ScaleOptions {
        poll: Duration::from_millis(args.poll_ms.max(10)),
        timeout: Duration::from_secs(args.timeout),
        lease_duration: Duration::from_secs(60),
    };
    let output = args.gate.output;
    let (tx, mut rx) = mpsc::channel(64);
    let printer = tokio::spawn(async move {
        let mut last_etcd = String::new();
        while let Some(event) = rx.recv().await {
            // Every poll checks etcd; a table says so when what it found changes.
            if let (ScaleEvent::Etcd { reason, .. }, OutputFormat::Table) = (&event, output) {
                if *reason == last_etcd {
                    continue;
                }
                last_etcd = reason.clone();
            }
            print_progress(output, "progress", &event, &event.line());
        }
    });
    let started = std::time::Instant::now();
    let mut operation = CapiScale::new(plan, sources, options, tx);
    let (approval, given) = ((&d, &approved), (paths, args.gate.ack.as_slice()));
    // The scale's own typed events carry its lines.
    let result = run_to_its_end(approval, given, &mut operation, &|_| {}).await;
    let outcome = operation.outcome(result, started.elapsed().as_secs());
    drop(operation);
    let _ = printer.await;
    print_progress(output, "finished", &outcome, &outcome.line());
    if outcome.succeeded {
        Ok(())
    } else {
        Err(Stop(EXIT_BLOCKED, String::new()))
    }
}
