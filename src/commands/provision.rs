//! `taloscope provision`: plan new nodes for a cluster from its provider
//! (--plan), or carry the plan out through the dispatcher (--yes --confirm),
//! printing one line per VM change; the plan's guards are printed with it and
//! checked again before each VM. Exit codes from exit.rs: 0 every new node
//! joined; 1 a guard blocks, refused, or some did not join; 2 configuration.
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::approval::{AuditLog, Dispatcher, MutatingAction};
use crate::cli::{GlobalArgs, OutputFormat, ProvisionArgs};
use crate::config::Config;
use crate::discovery::{Cluster, Discovery, Sources, discover};
use crate::guards::{Guard, blocking};
use crate::opennebula::auth::OneEnvironment;
use crate::paths::Paths;
use crate::provision::cluster::{check_guards, cluster_addresses};
use crate::provision::{
    GuardInputs, PlanRequest, ProvisionEvent, ProvisionJournal, ProvisionPlan, ProvisionRunner,
    RunnerOptions, connect, plan, terminate,
};

use super::upgrade_output::{guarded_plan, stamped};
use crate::clock::{Zone, unix_now};

use super::exit::{
    EXIT_BLOCKED, EXIT_USAGE, Stop, approve, approve_unless_blocked, exit_code_as, json_line,
    json_line_at, plan_only,
};

pub fn run(global: &GlobalArgs, args: &ProvisionArgs) -> ExitCode {
    exit_code_as(run_inner(global, args), args.output)
}

fn run_inner(global: &GlobalArgs, args: &ProvisionArgs) -> Result<ExitCode, Stop> {
    let env = |name: &str| std::env::var(name).ok();
    let paths = Paths::resolve(global.state_dir.as_deref());
    let (sources, source_errors) = Sources::resolve(&global.source_overrides(), &env, &paths);
    if let Some((last, earlier)) = source_errors.split_last() {
        for err in earlier {
            eprintln!("taloscope: {err}");
        }
        return Err(config_stop(last));
    }
    let discovery = discover(&sources);
    let runtime = crate::commands::runtime()
        .map_err(|e| Stop(EXIT_BLOCKED, format!("cannot start the async runtime: {e}")))?;
    let one_env = OneEnvironment::capture(&env);
    let outcome = runtime.block_on(provision(
        global,
        args,
        &sources.config,
        &discovery,
        &paths,
        &one_env,
    ));
    outcome.map(|()| ExitCode::SUCCESS)
}

fn config_stop(e: impl std::fmt::Display) -> Stop {
    Stop(EXIT_USAGE, e.to_string())
}

/// The cluster named by --context: its name, or any of its contexts, which it then uses.
fn find_cluster(discovery: &Discovery, wanted: Option<&str>) -> Result<Cluster, Stop> {
    let name = wanted.ok_or_else(|| config_stop("provision needs --context CLUSTER"))?;
    let cluster = discovery.select(name).ok_or_else(|| {
        config_stop(format!(
            "no cluster or context named {name:?}; `taloscope contexts` lists them"
        ))
    })?;
    if cluster.talos.is_none() {
        return Err(config_stop(format!(
            "cluster {name:?} has no talosconfig context; following new nodes needs the Talos API"
        )));
    }
    Ok(cluster)
}

fn dispatcher(global: &GlobalArgs, paths: &Paths) -> Dispatcher {
    Dispatcher::new(global.readonly, AuditLog::new(paths.audit_log()))
}

async fn provision(
    global: &GlobalArgs,
    args: &ProvisionArgs,
    config: &Config,
    discovery: &Discovery,
    paths: &Paths,
    one_env: &OneEnvironment,
) -> Result<(), Stop> {
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
        if !args.yes {
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
        let approved = approve(&d, action, args.confirm.as_deref())?;
        let mut journal = journal;
        let result = terminate(&approved, &provider, journal.as_mut()).await;
        let _ = d.finished(
            &approved,
            result.as_ref().map(|_| ()).map_err(|e| e.to_string()),
        );
        let progress = result.map_err(config_stop)?;
        match args.output {
            OutputFormat::Table => println!("{}", progress.line()),
            OutputFormat::Json => println!("{}", json_line("vm", &progress)),
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
        acks: args.ack.clone(),
    };
    let guards = check_guards(&plan, &inputs, &checks).await;
    let blocked = blocking(&guards, &args.ack);

    if !args.yes {
        print(&render_plan(&plan, &guards, &args.ack, args.output)?);
        return plan_only(
            args.plan,
            blocked,
            &format!("--yes --confirm {key} to provision"),
        );
    }
    let d = dispatcher(global, paths);
    let table = args.output == OutputFormat::Table;
    let shown = render_plan(&plan, &guards, &args.ack, args.output)?;
    let approved = approve_unless_blocked(
        &d,
        plan.action(),
        args.confirm.as_deref(),
        blocked,
        "provision",
        || {
            if table {
                print(&shown);
            }
        },
    )?;

    let (tx, mut rx) = mpsc::channel(64);
    let options = RunnerOptions {
        poll: Duration::from_millis(500),
        timeout: Duration::from_secs(args.timeout),
    };
    let runner =
        ProvisionRunner::new(plan, provider, checks, journal, options, tx).with_guards(inputs);
    let approved_for_runner = approved.clone();
    let task = tokio::spawn(async move { runner.run(&approved_for_runner).await });
    while let Some(event) = rx.recv().await {
        let at = (Zone::System, unix_now());
        let line = match (&event, args.output) {
            (ProvisionEvent::Vm(p), OutputFormat::Table) => stamped(at.0, at.1, &p.line()),
            (ProvisionEvent::Note(n), OutputFormat::Table) => stamped(at.0, at.1, n),
            (ProvisionEvent::Finished(s), OutputFormat::Table) => stamped(at.0, at.1, &s.line()),
            (ProvisionEvent::Vm(p), OutputFormat::Json) => json_line_at("vm", p, at),
            (ProvisionEvent::Note(n), OutputFormat::Json) => json_line_at("note", n, at),
            (ProvisionEvent::Finished(s), OutputFormat::Json) => json_line_at("finished", s, at),
        };
        print(&format!("{line}\n"));
    }
    let summary = task.await.map_err(|e| {
        Stop(
            EXIT_BLOCKED,
            format!("the provision task ended abnormally: {e}"),
        )
    })?;
    let result = if summary.succeeded() {
        Ok(())
    } else {
        Err(summary.line())
    };
    if let Err(e) = d.finished(&approved, result.clone()) {
        eprintln!("taloscope: warning: {e}");
    }
    result.map_err(|_| Stop(EXIT_BLOCKED, String::new()))
}

/// The plan and its GUARDS section (the same table form as `upgrade --plan`), or the JSON.
fn render_plan(
    plan: &ProvisionPlan,
    guards: &[Guard],
    acks: &[String],
    output: OutputFormat,
) -> Result<String, Stop> {
    let json = output == OutputFormat::Json;
    guarded_plan(plan, &plan.table(), &plan.cluster, guards, acks, json)
        .map_err(|e| Stop(EXIT_USAGE, e))
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_progress_lines_carry_local_time_with_its_offset() {
        let line = json_line_at("note", &"VM 41 created", (Zone::Fixed(3600), 1_796_052_057));
        let value: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(value["event"], "note");
        assert_eq!(value["time"], "2026-11-30T16:20:57+01:00");
        assert_eq!(value["data"], "VM 41 created");
    }
}
