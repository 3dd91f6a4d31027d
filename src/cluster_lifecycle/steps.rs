//! What the create runner asks of the world, as a trait: the provider's VMs, the machine
//! configs, the Talos and Kubernetes APIs of the new cluster and the operator's context files.
//! The runner only orders these and journals between them, so its resume rules are tested
//! with a fake; `provider_steps.rs` is the real one.
use std::path::Path;

use futures::future::BoxFuture;

use super::journal::CreatedVm;
use crate::cluster_config::MergedEntries;

/// VMs the create made (or found), and the OneFlow service holding them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewVms {
    pub vms: Vec<CreatedVm>,
    pub service: Option<u64>,
}

/// One VM as the provider shows it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmBoot {
    pub vm: CreatedVm,
    pub running: bool,
    /// Why it will not come up by itself (a failure state).
    pub failure: Option<String>,
}

/// The VMs as the provider shows them now: a OneFlow service's appear as it deploys them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootView {
    pub vms: Vec<VmBoot>,
    /// The gateway role's address, when the service has one running.
    pub gateway_ip: Option<String>,
}

/// etcd as the first control plane reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EtcdForming {
    pub members: usize,
    /// The leader's member name, once there is one.
    pub leader: Option<String>,
}

/// Kubernetes nodes: how many are Ready of how many registered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodesReady {
    pub ready: usize,
    pub registered: usize,
}

/// The create's world. Every call is bounded by the implementation; the runner bounds the
/// waits around them. None returns a secret.
pub trait CreateSteps: Send + Sync + 'static {
    /// VMs of the plan that already exist (a run killed while asking for them): the
    /// template VMs by their planned names, or the OneFlow service by its name.
    fn find_vms(&self) -> BoxFuture<'_, Result<NewVms, String>>;
    /// Asks for the plan's VMs that are not in `existing`.
    fn create_vms<'a>(&'a self, existing: &'a NewVms) -> BoxFuture<'a, Result<NewVms, String>>;
    /// The VMs as they are now.
    fn look_at_vms<'a>(&'a self, vms: &'a NewVms) -> BoxFuture<'a, Result<BootView, String>>;
    /// The secrets bundle at `bundle` (generated and saved there when `fresh`, else loaded),
    /// and the machine configs and talosconfig for `endpoint`, kept in memory.
    fn prepare_configs<'a>(
        &'a self,
        endpoint: &'a str,
        bundle: &'a Path,
        fresh: bool,
    ) -> BoxFuture<'a, Result<(), String>>;
    /// The maintenance API's certificate fingerprint on the VM's address.
    fn fingerprint<'a>(&'a self, vm: &'a CreatedVm) -> BoxFuture<'a, Result<String, String>>;
    /// Applies the VM's role config over the maintenance API, pinned to `fingerprint`.
    fn apply_config<'a>(
        &'a self,
        vm: &'a CreatedVm,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<(), String>>;
    /// Whether the VM's Talos answers with the new cluster's credentials.
    fn talos_answers<'a>(&'a self, vm: &'a CreatedVm) -> BoxFuture<'a, Result<bool, String>>;
    /// Sends Bootstrap to `node`. The runner sends it again only after a
    /// [`BootstrapAnswer::NotAvailableYet`] (upstream did not bootstrap then).
    fn bootstrap<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<BootstrapAnswer, String>>;
    fn etcd<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<EtcdForming, String>>;
    /// `Some(what answered)` once the Kubernetes API answers (the kubeconfig fetched first).
    fn api<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<Option<String>, String>>;
    /// Kubernetes nodes as the API through `node` reports them.
    fn nodes_ready<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<NodesReady, String>>;
    /// Merges the talos context (endpoints: the control planes) and the kube context into
    /// the operator's files (backups first); says what was written where.
    fn write_contexts<'a>(
        &'a self,
        control_planes: &'a [String],
    ) -> BoxFuture<'a, Result<ContextsMerged, String>>;
}

/// What the merge of the new contexts said, and the entries it wrote (journaled: a delete
/// removes exactly those).
#[derive(Debug, Clone)]
pub struct ContextsMerged {
    pub said: String,
    pub entries: Option<MergedEntries>,
}

/// What a node answered to Bootstrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootstrapAnswer {
    /// Bootstrap started etcd.
    Accepted,
    /// `FailedPrecondition: bootstrap is not available yet`: upstream answers it before it
    /// touches etcd (CRI not up), so nothing was bootstrapped and it may be sent again.
    NotAvailableYet(String),
    /// `AlreadyExists: etcd data directory is not empty`: an earlier send bootstrapped it.
    AlreadyBootstrapped,
}
