//! `taloscope provision`: plan new nodes for a cluster from its provider
//! (--plan), or carry the plan out through the dispatcher (--yes --confirm),
//! printing one line per VM change; the plan's guards are printed with it and
//! checked again before each VM. Exit codes from exit.rs: 0 every new node
//! joined; 1 a guard blocks, refused, or some did not join; 2 configuration.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::approval::MutatingAction;
use crate::cli::{GlobalArgs, ProvisionArgs};
use crate::discovery::{Cluster, Discovery};
use crate::operation::provision::Provisioning;
use crate::operation::terminate::VmTermination;
use crate::provision::cluster::{check_guards, cluster_addresses};
use crate::provision::{
    GuardInputs, PlanRequest, ProvisionEvent, ProvisionJournal, ProvisionRunner, RunnerOptions,
    connect, plan,
};

use super::progress::print_progress;

use super::create::{Setup, setup};
use super::exit::{EXIT_BLOCKED, Stop, exit_code_as, usage};
use super::gate::{RunFlags, approve, dispatcher, plan_then_approve, run_to_its_end};
use super::session::select;

pub fn run(global: &GlobalArgs, args: &ProvisionArgs) -> ExitCode {
    exit_code_as(run_inner(global, args), args.gate.output)
}

fn run_inner(global: &GlobalArgs, args: &ProvisionArgs) -> Result<ExitCode, Stop> {
    let (s, runtime) = setup(global)?;
    runtime
        .block_on(provision(global, args, &s))
        .map(|()| ExitCode::SUCCESS)
}

fn config_stop(e: impl std::fmt::Display) -> Stop {
    usage(e.to_string())
}

/// The cluster named by --context: its name, or any of its contexts, which it then uses.
fn find_cluster(discovery: &Discovery, wanted: Option<&str>) -> Result<Cluster, Stop> {
    let name = wanted.ok_or_else(|| config_stop("provision needs --context CLUSTER"))?;
    select(discovery, name, "following new nodes needs the Talos API")
}

async fn provision(global: &GlobalArgs, args: &ProvisionArgs, s: &Setup) -> Result<(), Stop> {
    let (config, discovery, paths, one_env) =
        (&s.sources.config, &s.discovery, &s.paths, &s.one_env);
    let cluster = &find_cluster(discovery, global.context.as_deref())?;
    let key = crate::provision::cluster::config_key(config, cluster);
    let request = PlanRequest {
        cluster: key.clone(),
        role: args.role.unwrap_or(crate::config::MachineRole::Worker),
        count: args.count as usize,
        provider: args.provider.clone(),
        name_pattern: args.name_pattern.clone(),
    };
    let (provider_name, provider_config) =
        crate::provision::provider::provider_for(config, &request).map_err(config_stop)?;
    let provider = connect(provider_name, provider_config, one_env).map_err(config_stop)?;
    let (checks, warning) =
        crate::provision::cluster::join_checks(cluster, discovery.kubeconfig.as_ref())
            .await
            .map_err(config_stop)?;
    if let Some(w) = warning {
        eprintln!("taloscope: warning: {w}");
    }
    let journal = match ProvisionJournal::open(&paths.state_dir, &key) {
        Ok(j) => Some(j),
        Err(e) => {
            eprintln!("taloscope: warning: {e}");
            None
        }
    };

    if let Some(vm) = args.terminate {
        if !args.gate.yes {
            return Err(config_stop(format!(
                "terminating VM {vm} changes the cluster: add --yes --confirm {key}"
            )));
        }
        let action = MutatingAction::TerminateVm {
            cluster: key.clone(),
            provider: provider.name.clone(),
            vm: vm.to_string(),
        };
        let d = dispatcher(global, paths);
        let approved = approve(&d, action, args.gate.confirm.as_deref())?;
        let mut termination = VmTermination::new((key.clone(), vm.to_string()), provider, journal);
        let (approval, given) = ((&d, &approved), (paths, args.gate.ack.as_slice()));
        run_to_its_end(approval, given, &mut termination, &|_| {})
            .await
            .map_err(config_stop)?;
        if let Some(progress) = termination.progress() {
            print_progress(args.gate.output, "vm", progress, &progress.line());
        }
        return Ok(());
    }

    let taken = crate::provision::cluster::names_in_use(&checks).await;
    let plan = plan(config, &provider, &request, &taken)
        .await
        .map_err(config_stop)?;
    let inputs = GuardInputs {
        config: config.clone(),
        addresses: cluster_addresses(cluster),
        nodes: cluster.nodes().to_vec(),
        acks: args.gate.ack.clone(),
        capi_owner: crate::capi::read_owner(
            discovery.kubeconfig.as_ref(),
            &discovery.clusters,
            &cluster.name,
        )
        .await,
    };
    let guards = check_guards(&plan, &inputs, &checks).await;
    let d = dispatcher(global, paths);
    let flags = RunFlags::of(&args.gate);
    let Some((approved, ())) = plan_then_approve(&d, &plan, &guards, &flags, || Ok(()))? else {
        return Ok(());
    };

    let (tx, mut rx) = mpsc::channel(64);
    let options = RunnerOptions {
        poll: Duration::from_millis(500),
        timeout: Duration::from_secs(args.timeout),
    };
    let runner =
        ProvisionRunner::new(plan, provider, checks, journal, options, tx).with_guards(inputs);
    let output = args.gate.output;
    let printer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            match &event {
                ProvisionEvent::Vm(p) => print_progress(output, "vm", p, &p.line()),
                ProvisionEvent::Note(n) => print_progress(output, "note", n, n),
                ProvisionEvent::Finished(s) => print_progress(output, "finished", s, &s.line()),
            }
        }
    });
    let mut provisioning = Provisioning::new(runner);
    let (approval, given) = ((&d, &approved), (paths, args.gate.ack.as_slice()));
    // The provision's own events carry its lines.
    let result = run_to_its_end(approval, given, &mut provisioning, &|_| {}).await;
    provisioning.summary(&result).await;
    drop(provisioning);
    let _ = printer.await;
    let result = result.map(|_| ());
    result.map_err(|_| Stop(EXIT_BLOCKED, String::new()))
}
