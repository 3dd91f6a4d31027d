//! `taloscope provision`: plan new nodes for a cluster from its provider
//! (--plan), or carry the plan out through the dispatcher (--yes --confirm),
//! printing one line per VM change; the plan's guards are printed with it and
//! checked again before each VM. Exit codes from exit.rs: 0 every new node
//! joined; 1 a guard blocks, refused, or some did not join; 2 configuration.
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::approval::MutatingAction;
use crate::cli::{GlobalArgs, ProvisionArgs};
use crate::operation::provision::Provisioning;
use crate::operation::terminate::VmTermination;
use crate::provision::cluster::check_guards;
use crate::provision::{
    GuardInputs, PlanRequest, ProvisionEvent, ProvisionJournal, ProvisionRunner, RunnerOptions,
    connect, plan,
};

use super::exit::{Stop, exit_if, usage};
use super::gate::CommandGate;
use super::progress::{data, print_events, print_progress};
use super::session::{Setup, check_gate, context, select, setup};

pub(super) fn run(global: &GlobalArgs, args: &ProvisionArgs) -> Result<ExitCode, Stop> {
    if args.terminate.is_none() {
        check_gate(&args.gate, "cluster")?;
    }
    let (s, runtime) = setup(global)?;
    runtime.block_on(provision(global, args, &s))
}

fn config_stop(e: impl std::fmt::Display) -> Stop {
    usage(e.to_string())
}

async fn provision(global: &GlobalArgs, args: &ProvisionArgs, s: &Setup) -> Result<ExitCode, Stop> {
    let (config, discovery, paths, one_env) =
        (&s.sources.config, &s.discovery, &s.paths, &s.one_env);
    let wanted = context(global, "provision needs --context CLUSTER")?;
    let cluster = &select(discovery, wanted, "following new nodes needs the Talos API")?;
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
    let gate = CommandGate::new(global, paths, &args.gate);

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
        let approved = gate.confirm(action)?;
        let mut termination = VmTermination::new((key.clone(), vm.to_string()), provider, journal);
        (gate
            .run_to_its_end(&approved, &mut termination, &|_| {})
            .await)
            .map_err(config_stop)?;
        if let Some(progress) = termination.progress() {
            print_progress(args.gate.output, "vm", progress, &progress.line());
        }
        return Ok(ExitCode::SUCCESS);
    }

    let taken = crate::provision::cluster::names_in_use(&checks).await;
    let plan = plan(config, &provider, &request, &taken)
        .await
        .map_err(config_stop)?;
    let (kubeconfig, clusters) = (discovery.kubeconfig.as_ref(), &discovery.clusters);
    let owner = crate::capi::read_owner(kubeconfig, clusters, &cluster.name).await;
    let inputs = GuardInputs::of(config, cluster, args.gate.ack.clone(), owner);
    let guards = check_guards(&plan, &inputs, &checks).await;
    let approved = gate.pass(&plan, plan.action(), &guards)?;

    let (tx, rx) = mpsc::channel(64);
    let options = RunnerOptions {
        poll: Duration::from_millis(500),
        timeout: Duration::from_secs(args.timeout),
    };
    let runner =
        ProvisionRunner::new(plan, provider, checks, journal, options, tx).with_guards(inputs);
    let printer = print_events(
        ReceiverStream::new(rx),
        args.gate.output,
        |event: &ProvisionEvent| {
            Some(match event {
                ProvisionEvent::Vm(p) => ("vm", data(p), p.line()),
                ProvisionEvent::Note(n) => ("note", data(n), n.clone()),
                ProvisionEvent::Finished(s) => ("finished", data(s), s.line()),
            })
        },
    );
    let mut provisioning = Provisioning::new(runner);
    // The provision's own events carry its lines.
    let result = gate
        .run_to_its_end(&approved, &mut provisioning, &|_| {})
        .await;
    provisioning.summary(&result).await;
    drop(provisioning);
    let _ = printer.await;
    Ok(exit_if(result.is_err()))
}
