//! `taloscope delete --context NAME`: plan a cluster's deletion (--plan) or carry it out through
//! the dispatcher (--yes --confirm NAME --ack "this destroys the cluster and its data"):
//! terminate its VMs, follow until gone, then remove its contexts (backups kept) and journals.
//! Refused while a rollout holds the cluster, and for clusters taloscope did not create unless
//! --adopt names their VMs. Exit 0 / 1 / 2 as `create`.
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::{DeleteArgs, GlobalArgs};
use crate::cluster_lifecycle::{
    DELETE_BOUNDS, DeleteSources, ProviderDelete, RunSummary, delete_guards, prepare_delete,
};
use crate::operation::delete::ClusterDelete;

use super::exit::{Stop, exit_if, usage};
use super::gate::CommandGate;
use super::progress::{print_progress, progress_printer};
use super::session::{Setup, check_gate, context, operator_files, setup};

pub(super) fn run(global: &GlobalArgs, args: &DeleteArgs) -> Result<ExitCode, Stop> {
    check_gate(&args.gate, "cluster")?;
    let (s, runtime) = setup(global)?;
    runtime.block_on(delete(global, args, &s))
}

async fn delete(global: &GlobalArgs, args: &DeleteArgs, s: &Setup) -> Result<ExitCode, Stop> {
    let (sources, discovery, paths, one_env) = (&s.sources, &s.discovery, &s.paths, &s.one_env);
    let name = context(global, "delete needs --context CLUSTER")?.to_string();
    let sources_in = DeleteSources {
        config: &sources.config,
        discovery,
        one_env,
        state_dir: &paths.state_dir,
    };
    let prepared = prepare_delete(&sources_in, &name, &args.adopt)
        .await
        .map_err(usage)?;
    for warning in &prepared.warnings {
        eprintln!("taloscope: warning: {warning}");
    }
    let (plan, provider) = (prepared.plan, prepared.provider);
    let guards = delete_guards(&plan);
    // What the run removes the contexts from, checked before anything is asked.
    let files = if args.gate.yes {
        Some(operator_files(sources)?)
    } else {
        None
    };
    let gate = CommandGate::new(global, paths, &args.gate);
    let (approved, Some(files)) = (gate.pass(&plan, plan.action(), &guards)?, files) else {
        return Ok(ExitCode::SUCCESS);
    };
    let provider =
        provider.ok_or_else(|| usage(format!("{name}: no provider to delete through")))?;
    let world = ProviderDelete { provider, files };
    let bounds = (DELETE_BOUNDS.0, Duration::from_secs(args.timeout));
    let mut operation = ClusterDelete::new(plan, world, bounds);
    let output = args.gate.output;
    let printer = progress_printer(output, Some("note"));
    let result = gate
        .run_to_its_end(&approved, &mut operation, &printer)
        .await;
    let summary = RunSummary {
        cluster: name,
        what: "delete".into(),
        reached: None,
        error: result.err(),
    };
    print_progress(output, "finished", &summary, &summary.line());
    Ok(exit_if(summary.error.is_some()))
}
