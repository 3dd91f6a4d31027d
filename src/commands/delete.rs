//! `taloscope delete --context NAME`: plan a cluster's deletion (--plan) or carry it out through
//! the dispatcher (--yes --confirm NAME --ack "this destroys the cluster and its data"):
//! terminate its VMs, follow until gone, then remove its contexts (backups kept) and journals.
//! Refused while a rollout holds the cluster, and for clusters taloscope did not create unless
//! --adopt names their VMs. Exit 0 / 1 / 2 as `create`.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::cli::{DeleteArgs, GlobalArgs, OutputFormat};
use crate::cluster_lifecycle::{
    DeletePlan, DeleteSources, ProviderDelete, delete_guards, prepare_delete, run_delete,
};
use crate::guards::{Guard, blocking};

use super::create::{Setup, dispatcher, finish, operator_files, print_plan, setup};
use super::exit::{EXIT_BLOCKED, EXIT_USAGE, Stop, approve_unless_blocked, exit_code_as, usage};
use super::upgrade_output::guarded_plan;

pub fn run(global: &GlobalArgs, args: &DeleteArgs) -> ExitCode {
    exit_code_as(run_inner(global, args), args.output)
}

fn run_inner(global: &GlobalArgs, args: &DeleteArgs) -> Result<ExitCode, Stop> {
    let (s, runtime) = setup(global)?;
    runtime
        .block_on(delete(global, args, &s))
        .map(|()| ExitCode::SUCCESS)
}

async fn delete(global: &GlobalArgs, args: &DeleteArgs, s: &Setup) -> Result<(), Stop> {
    let (sources, discovery, paths, one_env) = (&s.sources, &s.discovery, &s.paths, &s.one_env);
    let name = global
        .context
        .clone()
        .ok_or_else(|| usage("delete needs --context CLUSTER"))?;
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
    let blocked = blocking(&guards, &args.ack);
    if !args.yes {
        print_plan(&render_plan(&plan, &guards, &args.ack, args.output)?);
        if args.plan {
            return if blocked {
                Err(Stop(EXIT_BLOCKED, String::new()))
            } else {
                Ok(())
            };
        }
        return Err(usage(format!(
            "nothing done: add --yes --confirm {name} --ack {:?} to delete, or --plan to only plan",
            crate::cluster_lifecycle::DESTROYS_ACK
        )));
    }
    let files = operator_files(sources)?;
    let d = dispatcher(global, paths);
    let table = args.output == OutputFormat::Table;
    let shown = render_plan(&plan, &guards, &args.ack, args.output)?;
    let approved = approve_unless_blocked(
        &d,
        plan.action(),
        args.confirm.as_deref(),
        blocked,
        "delete",
        || {
            if table {
                print_plan(&shown);
            }
        },
    )?;
    let provider =
        provider.ok_or_else(|| usage(format!("{name}: no provider to delete through")))?;
    let steps = ProviderDelete { provider, files };
    let (tx, rx) = mpsc::channel(64);
    let bounds = (Duration::from_secs(1), Duration::from_secs(args.timeout));
    let for_run = approved.clone();
    let task = tokio::spawn(async move { run_delete(&plan, &steps, &for_run, bounds, tx).await });
    finish(&d, &approved, task, rx, args.output).await
}

fn render_plan(
    plan: &DeletePlan,
    guards: &[Guard],
    acks: &[String],
    output: OutputFormat,
) -> Result<String, Stop> {
    let json = output == OutputFormat::Json;
    guarded_plan(plan, &plan.table(), &plan.cluster, guards, acks, json)
        .map_err(|e| Stop(EXIT_USAGE, e))
}
