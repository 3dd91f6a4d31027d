//! `taloscope create`: plan a new cluster from a provider (--plan), or create it through the
//! dispatcher (--yes --confirm NAME), one line (or JSON line) per phase change; a killed run is
//! resumed by running the same command again. Exit codes from exit.rs: 0 the cluster is up and
//! its contexts written; 1 a guard blocks, refused, or a phase failed; 2 usage or configuration.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::cli::{CreateArgs, GlobalArgs};
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{
    CreateOptions, CreatePlan, CreateRequest, FingerprintPolicy, LifecycleEvent,
    PIN_FINGERPRINTS_ACK, PatchFiles, PlannedCreate, SetupError, create_runner, given_fingerprints,
    headless_fingerprints, plan_with_guards,
};
use crate::guards::Guard;
use crate::operation::create::ClusterCreate;

use super::exit::{EXIT_BLOCKED, Stop, exit_if, usage};
use super::gate::CommandGate;
use super::progress::{data, print_events};
use super::session::{Setup, check_gate, operator_files, setup};

pub(super) fn run(global: &GlobalArgs, args: &CreateArgs) -> Result<ExitCode, Stop> {
    check_gate(&args.gate, "cluster")?;
    let (s, runtime) = setup(global)?;
    runtime.block_on(create(global, args, &s))
}

fn request(args: &CreateArgs) -> CreateRequest {
    CreateRequest {
        cluster: args.name.clone(),
        provider: args.provider.clone(),
        controlplanes: args.controlplanes as usize,
        workers: args.workers as usize,
        talos: args.talos.clone(),
        kubernetes: args.kubernetes.clone(),
        endpoint: args.endpoint.clone(),
        delivery: args.deliver,
        patches: PatchFiles {
            all: args.config_patch.clone(),
            controlplane: args.config_patch_control_plane.clone(),
            worker: args.config_patch_worker.clone(),
        },
        with_secrets: args.with_secrets.clone(),
    }
}

async fn create(global: &GlobalArgs, args: &CreateArgs, s: &Setup) -> Result<ExitCode, Stop> {
    let (sources, discovery, paths, one_env) = (&s.sources, &s.discovery, &s.paths, &s.one_env);
    let files = operator_files(sources);
    let PlannedCreate {
        plan,
        guards,
        provider,
    } = plan_with_guards(
        &sources.config,
        one_env,
        &request(args),
        &paths.state_dir,
        &discovery.clusters,
        files.as_ref().map_err(|stop| stop.1.as_str()),
    )
    .await
    .map_err(|e| match e {
        SetupError::Provider(e) => Stop(EXIT_BLOCKED, e),
        SetupError::Usage(e) => usage(e),
    })?;
    let (guards, fingerprints) = headless_pinning(&plan, guards, args)?;
    // The pinning acknowledgement is a script's standing answer: taken also where no VM is
    // left to pin (user-data delivery, every fingerprint given), where no guard asks for it.
    let mut flags = args.gate.clone();
    let pinning = |g: &Guard| g.needs_ack.as_deref() == Some(PIN_FINGERPRINTS_ACK);
    if !guards.iter().any(pinning) {
        flags.ack.retain(|a| a.trim() != PIN_FINGERPRINTS_ACK);
    }
    let gate = CommandGate::new(global, paths, &flags);
    // What the run writes into, checked before anything is asked (a plan names it a guard).
    let files = if args.gate.yes { Some(files?) } else { None };
    let (approved, Some(files)) = (gate.pass(&plan, plan.action(), &guards)?, files) else {
        return Ok(ExitCode::SUCCESS);
    };
    let files = ContextFiles {
        keep_current_context: args.keep_current_context,
        ..files
    };
    let options = CreateOptions {
        poll: Duration::from_millis(args.poll_ms.max(10)),
        phase_timeout: Duration::from_secs(args.phase_timeout),
    };
    let (tx, rx) = mpsc::channel(64);
    let runner = create_runner(
        &paths.state_dir,
        plan,
        provider,
        files,
        options,
        fingerprints,
        tx,
    )
    .map_err(|e| {
        let _ = gate.dispatcher.finished(&approved, Err(e.to_string()));
        Stop(EXIT_BLOCKED, e.to_string())
    })?;
    let printer = print_events(
        ReceiverStream::new(rx),
        args.gate.output,
        |event: &LifecycleEvent| {
            let line = event.line();
            Some(match event {
                LifecycleEvent::Phase { .. } => ("phase", data(event), line),
                LifecycleEvent::Note { text } => ("note", data(text), line),
                LifecycleEvent::Finished { summary } => ("finished", data(summary), line),
            })
        },
    );
    let mut create = ClusterCreate::new(runner);
    // A create runs to its end (OperationKind::Create's cancel rule); a killed one resumes
    // from its journal. The create's own events carry its lines.
    let result = gate.run_to_its_end(&approved, &mut create, &|_| {}).await;
    let summary = create.summary(&result).await;
    drop(create);
    let _ = printer.await;
    Ok(exit_if(summary.error.is_some()))
}

/// A headless run asks nobody to confirm the VMs' maintenance fingerprints: `--yes` adds the
/// guard that wants each given with `--fingerprint VM=SHA256` or pinning the first seen
/// acknowledged, and the policy the runner checks them by. A `--fingerprint` that names no VM
/// of the plan is a usage error.
fn headless_pinning(
    plan: &CreatePlan,
    mut guards: Vec<Guard>,
    args: &CreateArgs,
) -> Result<(Vec<Guard>, FingerprintPolicy), Stop> {
    let given = given_fingerprints(plan, &args.fingerprint)
        .map_err(|e| usage(crate::printable::line(&e)))?;
    if args.gate.yes {
        guards.extend(headless_fingerprints(plan, &given));
    }
    let pin_unnamed = args
        .gate
        .ack
        .iter()
        .any(|a| a.trim() == PIN_FINGERPRINTS_ACK);
    let policy = if given.is_empty() {
        FingerprintPolicy::PinFirstSeen
    } else {
        FingerprintPolicy::Given {
            fingerprints: given,
            pin_unnamed,
        }
    };
    Ok((guards, policy))
}
