//! `taloscope delete --context NAME`: plan a cluster's deletion (--plan) or carry it out through
//! the dispatcher (--yes --confirm NAME --ack "this destroys the cluster and its data"):
//! terminate its VMs, follow until gone, then remove its contexts (backups kept) and journals.
//! Refused while a rollout holds the cluster, and for clusters taloscope did not create unless
//! --adopt names their VMs. Exit 0 / 1 / 2 as `create`.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::cli::{DeleteArgs, GlobalArgs};
use crate::cluster_lifecycle::{
    CreateJournal, DeleteInputs, KnownVm, ProviderDelete, delete_guards, plan_delete, run_delete,
};
use crate::discovery::{Discovery, Sources};
use crate::provision::{Provider, connect};

use super::create::{Setup, finish, operator_files, setup};
use super::exit::{Stop, dispatcher, exit_code_as, plan_then_approve, run_flags, usage};

pub fn run(global: &GlobalArgs, args: &DeleteArgs) -> ExitCode {
    exit_code_as(run_inner(global, args), args.output)
}

fn run_inner(global: &GlobalArgs, args: &DeleteArgs) -> Result<ExitCode, Stop> {
    let (s, runtime) = setup(global)?;
    runtime
        .block_on(delete(global, args, &s))
        .map(|()| ExitCode::SUCCESS)
}

/// The provider the cluster's VMs are on: the create journal's, else the cluster's entry in
/// taloscope's config.
fn provider_name(
    sources: &Sources,
    cluster: &str,
    from_journal: Option<&str>,
) -> Result<String, Stop> {
    from_journal
        .map(str::to_string)
        .or_else(|| {
            sources
                .config
                .clusters
                .get(cluster)
                .and_then(|c| c.provider.clone())
        })
        .ok_or_else(|| {
            usage(format!(
                "{}: cluster {cluster:?} names no provider; add provider: NAME to its entry under clusters:",
                sources.config.file_label()
            ))
        })
}

async fn delete(global: &GlobalArgs, args: &DeleteArgs, s: &Setup) -> Result<(), Stop> {
    let (sources, discovery, paths, one_env) = (&s.sources, &s.discovery, &s.paths, &s.one_env);
    let name = global
        .context
        .clone()
        .ok_or_else(|| usage("delete needs --context CLUSTER"))?;
    let record = CreateJournal::read(&paths.state_dir, &name).map_err(|e| usage(e.to_string()))?;
    let cluster = discovery.select(&name);
    if cluster.is_none() && record.is_none() && args.adopt.is_empty() {
        return Err(usage(format!(
            "no cluster, context or create journal named {name:?}; `taloscope contexts` lists them"
        )));
    }
    let journal_provider = record.as_ref().map(|r| r.plan.provider.as_str());
    let pname = provider_name(sources, &name, journal_provider)?;
    let pcfg = sources.config.providers.get(&pname).ok_or_else(|| {
        usage(format!(
            "{}: no provider named {pname:?} under providers:",
            sources.config.file_label()
        ))
    })?;
    let provider = connect(&pname, pcfg, one_env).map_err(|e| usage(e.to_string()))?;
    let adopted = adopted_vms(&provider, &args.adopt).await?;
    let lease_holder = match &cluster {
        Some(c) => rollout_holder(c, discovery).await,
        None => None,
    };
    let plan = plan_delete(
        DeleteInputs {
            cluster: name.clone(),
            record,
            adopted,
            provider: Some((provider.name.clone(), provider.endpoint.clone())),
            talos_context: cluster
                .as_ref()
                .and_then(|c| c.talos_context().map(str::to_string)),
            kube_context: cluster
                .as_ref()
                .and_then(|c| c.kube_context().map(str::to_string)),
            lease_holder,
        },
        &paths.state_dir,
    );
    let guards = delete_guards(&plan);
    let d = dispatcher(global, paths);
    let flags = run_flags!(args);
    let ready = || operator_files(sources);
    let Some((approved, files)) = plan_then_approve(&d, &plan, &guards, &flags, ready)? else {
        return Ok(());
    };
    let steps = ProviderDelete { provider, files };
    let (tx, rx) = mpsc::channel(64);
    let bounds = (Duration::from_secs(1), Duration::from_secs(args.timeout));
    let for_run = approved.clone();
    let task = tokio::spawn(async move { run_delete(&plan, &steps, &for_run, bounds, tx).await });
    finish(&d, &approved, task, rx, args.output).await
}

/// The VMs `--adopt` names, each read from the provider (an id it does not know is refused).
async fn adopted_vms(provider: &Provider, ids: &[u64]) -> Result<Vec<KnownVm>, Stop> {
    let mut vms = Vec::new();
    for id in ids {
        let vm = provider
            .vm_client()
            .vm(*id)
            .await
            .map_err(|e| usage(format!("--adopt {id}: {e}")))?;
        vms.push(KnownVm {
            id: *id,
            name: vm.name,
        });
    }
    Ok(vms)
}

/// Who holds the cluster's rollout Lease now (none without a kube context or when it cannot
/// be read, which is said).
async fn rollout_holder(
    cluster: &crate::discovery::Cluster,
    discovery: &Discovery,
) -> Option<String> {
    let kube = match crate::fleet::kube_client_for(cluster, discovery.kubeconfig.as_ref()).await? {
        Ok(k) => k,
        Err(e) => {
            eprintln!("taloscope: warning: cannot read the rollout lease: {e}");
            return None;
        }
    };
    super::headless::live_rollout_lease(&kube)
        .await
        .map(|i| i.holder.clone())
}
