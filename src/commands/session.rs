//! The cluster a command acts on: the operator's files read, the cluster `--context` names among
//! the discovered ones, connected (its Talos and Kubernetes clients, its status now), the
//! `--plan`/`--yes` mode check and the rollout Lease other consoles hold; what provision,
//! create and delete read (`Setup`) and write into. The rollout journal is the upgrade
//! commands' own read, so a bad one stops only them.
use std::path::PathBuf;

use super::exit::{Stop, usage};
use crate::cli::{GateArgs, GlobalArgs};
use crate::cluster_config::ContextFiles;
use crate::discovery::{Cluster, Discovery, DiscoveryError, Sources, discover};
use crate::fleet::ClusterStatus;
use crate::opennebula::auth::OneEnvironment;
use crate::paths::Paths;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{RolloutInProgress, RunOptions};

/// A run needs `--plan`, or `--yes` with `--confirm <cluster>`: said before anything is read.
/// `what` is the name `--confirm` takes: "cluster", or "node" for a node action.
pub(super) fn check_gate(gate: &GateArgs, what: &str) -> Result<(), Stop> {
    if !gate.plan && !gate.yes {
        return Err(usage(format!(
            "nothing done: say --plan to see the plan, or --yes --confirm <{what}> to run it"
        )));
    }
    if gate.yes && gate.confirm.is_none() {
        return Err(usage(format!(
            "--yes needs --confirm <{what}>, the {what} name typed in full"
        )));
    }
    Ok(())
}

/// The cluster `--context` names, connected, once the gate's flags ask for a plan or a run
/// ([`check_gate`]): how a command acting on one connected cluster opens.
pub(super) fn open(
    global: &GlobalArgs,
    gate: &GateArgs,
    what: &str,
) -> Result<(Chosen, Connected), Stop> {
    check_gate(gate, what)?;
    let chosen = choose(global)?;
    let connected = connect(&chosen)?;
    Ok((chosen, connected))
}

/// What discovery found for the cluster named by `--context`.
pub(super) struct Chosen {
    pub paths: Paths,
    pub discovery: Discovery,
    pub cluster: Cluster,
}

impl Chosen {
    /// The Cluster API management cluster that owns the cluster, if any among the kube contexts.
    pub async fn capi_owner(&self) -> Option<crate::capi::CapiOwner> {
        let (discovery, name) = (&self.discovery, &self.cluster.name);
        crate::capi::read_owner(discovery.kubeconfig.as_ref(), &discovery.clusters, name).await
    }
}

/// The name `--context` gives; without one, a usage error saying `missing`.
pub(super) fn context<'g>(global: &'g GlobalArgs, missing: &str) -> Result<&'g str, Stop> {
    global.context.as_deref().ok_or_else(|| usage(missing))
}

/// Discovers the clusters (warning about unreadable sources) and picks the one `--context` names.
pub(super) fn choose(global: &GlobalArgs) -> Result<Chosen, Stop> {
    let wanted = context(global, "name the cluster with --context")?;
    let (paths, discovery) = discover_all(global);
    let cluster = select(&discovery, wanted, "this command needs the Talos API")?;
    Ok(Chosen {
        paths,
        discovery,
        cluster,
    })
}

/// The operator's files as the flags and the environment name them, and the problems met.
pub(super) fn sources(global: &GlobalArgs, paths: &Paths) -> (Sources, Vec<DiscoveryError>) {
    let env = |name: &str| std::env::var(name).ok();
    Sources::resolve(&global.source_overrides(), &env, paths)
}

/// Every cluster the operator's files name, the problems with the files themselves first
/// (they can explain a missing pairing).
pub(super) fn discovered(global: &GlobalArgs, paths: &Paths) -> Discovery {
    let (sources, source_errors) = sources(global, paths);
    let mut discovery = discover(&sources);
    discovery.errors.splice(0..0, source_errors);
    discovery
}

/// Discovers every cluster, warning on stderr about sources it could not read.
pub(super) fn discover_all(global: &GlobalArgs) -> (Paths, Discovery) {
    let paths = Paths::resolve(global.state_dir.as_deref());
    let discovery = discovered(global, &paths);
    for err in &discovery.errors {
        eprintln!("taloscope: warning: {err}");
    }
    (paths, discovery)
}

/// The chosen cluster, connected: its observer and its status now.
pub(super) struct Connected {
    pub runtime: tokio::runtime::Runtime,
    pub observer: ClusterObserver,
    pub status: ClusterStatus,
}

/// The cluster `--context` names and what `read` makes of it over its observer, on a runtime
/// of its own: the one way the read-only commands (logs, node info, top, health, config) reach
/// a cluster.
pub(super) fn read_cluster<T>(
    global: &GlobalArgs,
    read: impl AsyncFnOnce(&Chosen, ClusterObserver) -> Result<T, Stop>,
) -> Result<(Chosen, T), Stop> {
    let chosen = choose(global)?;
    let runtime = super::command_runtime()?;
    let read = runtime.block_on(async {
        let observer = observer_for(&chosen.cluster, &chosen.discovery).await?;
        read(&chosen, observer).await
    })?;
    Ok((chosen, read))
}

pub(super) fn connect(chosen: &Chosen) -> Result<Connected, Stop> {
    let runtime = super::command_runtime()?;
    let observer = runtime.block_on(observer_for(&chosen.cluster, &chosen.discovery))?;
    let status = runtime.block_on(observer.status());
    Ok(Connected {
        runtime,
        observer,
        status,
    })
}

/// Another console's rollout on this cluster, from its Lease (none without a kube context, or
/// when the Lease cannot be read, which is said).
pub(super) async fn other_rollout(observer: &ClusterObserver) -> Option<RolloutInProgress> {
    rollout_lease_read(observer).await.unwrap_or_else(|e| {
        eprintln!("taloscope: warning: cannot read the rollout lease: {e}");
        None
    })
}

/// The cluster's rollout Lease as the guards read it (the operations' own reading).
pub(super) use crate::operation::node::rollout_lease_read;

/// The cluster `wanted` (--context) names: its name, or any of its contexts, which it then uses.
pub(super) fn named(discovery: &Discovery, wanted: &str) -> Result<Cluster, Stop> {
    discovery.select(wanted).ok_or_else(|| {
        usage(format!(
            "no cluster or context named {wanted:?}; `taloscope contexts` lists them"
        ))
    })
}

/// The cluster named by --context, which needs the Talos API: `why` says for what.
pub(super) fn select(discovery: &Discovery, wanted: &str, why: &str) -> Result<Cluster, Stop> {
    let cluster = named(discovery, wanted)?;
    if cluster.talos.is_none() {
        return Err(usage(format!(
            "cluster {wanted:?} has no talosconfig context; {why}"
        )));
    }
    Ok(cluster)
}

/// The cluster's observer, connected as the console's operations connect (its talosconfig
/// context, its kube context through the operator's kubeconfig).
pub(super) async fn observer_for(
    cluster: &Cluster,
    discovery: &Discovery,
) -> Result<ClusterObserver, Stop> {
    if cluster.talos.is_none() {
        let name = &cluster.name;
        return Err(usage(format!("cluster {name} has no talosconfig context")));
    }
    let options = RunOptions {
        kubeconfig: discovery.kubeconfig.clone(),
        ..RunOptions::default()
    };
    crate::upgrade::launch::connect(cluster, &options)
        .await
        .map_err(usage)
}

/// What provision, create and delete read once, at the edge: where taloscope's files are, the operator's
/// files and what discovery found in them, and OpenNebula's environment.
pub(super) struct Setup {
    pub paths: Paths,
    pub sources: Sources,
    pub discovery: Discovery,
    pub one_env: OneEnvironment,
}

/// Reads the [`Setup`] and starts the runtime the command runs on.
pub(super) fn setup(global: &GlobalArgs) -> Result<(Setup, tokio::runtime::Runtime), Stop> {
    let paths = Paths::resolve(global.state_dir.as_deref());
    let (sources, source_errors) = sources(global, &paths);
    if let Some((last, earlier)) = source_errors.split_last() {
        for err in earlier {
            eprintln!("taloscope: {err}");
        }
        return Err(usage(last.to_string()));
    }
    let discovery = discover(&sources);
    let runtime = super::command_runtime()?;
    let one_env = OneEnvironment::capture(&|name: &str| std::env::var(name).ok());
    let setup = Setup {
        paths,
        sources,
        discovery,
        one_env,
    };
    Ok((setup, runtime))
}

/// The operator's talosconfig and kubeconfig files new contexts are merged into (the first of
/// each in use).
pub(super) fn operator_files(sources: &Sources) -> Result<ContextFiles, Stop> {
    let first = |files: &[PathBuf], what: &str| {
        files.first().cloned().ok_or_else(|| {
            usage(format!(
                "no {what} file to write the new context into; pass --{what}"
            ))
        })
    };
    Ok(ContextFiles {
        talosconfig: first(&sources.talosconfigs, "talosconfig")?,
        kubeconfig: first(&sources.kubeconfigs, "kubeconfig")?,
        keep_current_context: false,
        kept_backups: sources.config.kept_backups(),
    })
}
