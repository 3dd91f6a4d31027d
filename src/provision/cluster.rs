//! A discovered cluster as a provision sees it: its key in taloscope's
//! config, the join checks built from its talos and kube contexts, the
//! node names already in use there and its guards checked against it now. Shared by the headless command and the
//! console.
use std::collections::BTreeSet;

use crate::capi::CapiOwner;
use crate::config::Config;
use crate::discovery::{Cluster, host_of};
use crate::fleet::{ClusterStatus, CollectOptions, collect_cluster, kube_client_for};
use crate::guards::Guard;
use crate::talos::{ClientOptions, TalosClient};

use super::guards::{ProvisionFacts, cluster_hosts, provision_guards};
use super::machine_config::MachineConfig;
use super::plan::ProvisionPlan;
use super::runner::JoinChecks;

/// The key of the cluster's entry in taloscope's config: its name, else its
/// talos context, else (no entry) its name.
pub fn config_key(config: &Config, cluster: &Cluster) -> String {
    [Some(cluster.name.as_str()), cluster.talos_context()]
        .into_iter()
        .flatten()
        .find(|k| config.clusters.contains_key(*k))
        .unwrap_or(cluster.name.as_str())
        .to_string()
}

/// The discovered cluster whose key in taloscope's config is `key`, as a provision's plan
/// names it ([`config_key`]).
pub fn keyed<'a>(config: &Config, clusters: &'a [Cluster], key: &str) -> Option<&'a Cluster> {
    clusters.iter().find(|c| config_key(config, c) == key)
}

/// The checks that tell a new node joined `cluster`, and a warning when its
/// Kubernetes API cannot be used (joined then means a Talos member).
pub async fn join_checks(
    cluster: &Cluster,
    kubeconfig: Option<&kube::config::Kubeconfig>,
) -> Result<(JoinChecks, Option<String>), String> {
    let talos_ctx = cluster.talos.as_ref().ok_or_else(|| {
        format!(
            "cluster {:?} has no talosconfig context; following new nodes needs the Talos API",
            cluster.name
        )
    })?;
    let talos = TalosClient::new(talos_ctx, ClientOptions::default()).map_err(|e| e.to_string())?;
    let (kube, warning) = match kube_client_for(cluster, kubeconfig).await {
        Some(Ok(k)) => (Some(k), None),
        Some(Err(e)) => (
            None,
            Some(format!("{e}; joined will mean a Talos member only")),
        ),
        None => (None, None),
    };
    let member_node = talos_ctx
        .nodes
        .first()
        .cloned()
        .or_else(|| talos_ctx.endpoints.first().and_then(|e| host_of(e)));
    Ok((
        JoinChecks {
            talos,
            member_node,
            kube,
        },
        warning,
    ))
}

/// Kubernetes node names and Talos member ids and hostnames in use; what
/// cannot be read is left out (the provider's VM names are added by the
/// planner).
pub async fn names_in_use(checks: &JoinChecks) -> BTreeSet<String> {
    let mut taken = BTreeSet::new();
    if let Some(k) = &checks.kube
        && let Ok(nodes) = k.nodes().await
    {
        taken.extend(nodes.into_iter().map(|n| n.name));
    }
    if let Some(node) = &checks.member_node
        && let Ok(members) = checks.talos.cluster_members(node).await
    {
        taken.extend(members.into_iter().flat_map(|m| [m.id, m.hostname]));
    }
    taken
}

/// The addresses of `cluster` the guards accept as its own: hosts of its talos endpoints and
/// nodes (alternate contexts too) and its kube server.
pub fn cluster_addresses(cluster: &Cluster) -> BTreeSet<String> {
    let talos = cluster.talos.iter().chain(&cluster.alternate_talos);
    let addresses = talos.flat_map(|t| t.endpoints.iter().chain(&t.nodes));
    let kube = cluster.kube.iter().chain(&cluster.alternate_kube);
    let servers = kube.filter_map(|k| k.server.as_ref());
    cluster_hosts(addresses.chain(servers).map(String::as_str))
}

/// The inputs of a guard check the runner repeats before each VM: the config, the cluster's
/// addresses and the acknowledgements typed.
#[derive(Debug, Clone, Default)]
pub struct GuardInputs {
    pub config: Config,
    pub addresses: BTreeSet<String>,
    /// The talosconfig context's nodes (empty: its endpoints), asked for etcd.
    pub nodes: Vec<String>,
    pub acks: Vec<String>,
    /// The cluster's Cluster API owner as `capi::read_owner` read it before the plan.
    pub capi_owner: Option<CapiOwner>,
}

impl GuardInputs {
    /// The inputs of a provision of `cluster`: the config, its addresses and talosconfig
    /// nodes, the acknowledgements typed and its Cluster API owner as read before the plan
    /// (`taloscope provision` and the console's wizard alike).
    pub fn of(
        config: &Config,
        cluster: &Cluster,
        acks: Vec<String>,
        capi_owner: Option<CapiOwner>,
    ) -> GuardInputs {
        GuardInputs {
            config: config.clone(),
            addresses: cluster_addresses(cluster),
            nodes: cluster.nodes().to_vec(),
            acks,
            capi_owner,
        }
    }
}

/// The plan's guards against the cluster as it is now: etcd and the members' addresses asked
/// through `checks`, the machine config read again.
pub async fn check_guards(
    plan: &ProvisionPlan,
    inputs: &GuardInputs,
    checks: &JoinChecks,
) -> Vec<Guard> {
    let options = CollectOptions::default();
    let status = collect_cluster(&checks.talos, &plan.cluster, &inputs.nodes, &options).await;
    let endpoint = machine_config_endpoint(plan);
    guards_over_status(
        plan,
        &inputs.config,
        &inputs.addresses,
        &status,
        endpoint.as_deref(),
        inputs.capi_owner.as_ref(),
    )
}

/// The `cluster.controlPlane.endpoint` of the plan's machine config, read from disk now
/// (`None`: no machine config, unreadable, or not set).
pub fn machine_config_endpoint(plan: &ProvisionPlan) -> Option<String> {
    plan.machine_config
        .as_ref()
        .and_then(|path| MachineConfig::load(path, plan.role).ok())
        .and_then(|mc| mc.endpoint())
}

/// The plan's guards over a status of its cluster (collected now by the CLI and the runner,
/// the console's live fleet model in the wizard): the one list both show. Pure.
pub fn guards_over_status(
    plan: &ProvisionPlan,
    config: &Config,
    addresses: &BTreeSet<String>,
    status: &ClusterStatus,
    machine_config_endpoint: Option<&str>,
    capi_owner: Option<&CapiOwner>,
) -> Vec<Guard> {
    let mut addresses = addresses.clone();
    addresses.extend(cluster_hosts(
        status.nodes.iter().map(|n| n.address.as_str()),
    ));
    provision_guards(&ProvisionFacts {
        plan,
        config,
        etcd: &status.etcd,
        cluster_hosts: &addresses,
        machine_config_endpoint,
        capi_owner,
    })
}
