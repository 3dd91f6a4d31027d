//! `taloscope create` and `taloscope delete`: whole clusters. Parsing only.
use std::path::PathBuf;

use clap::Args;

use super::GateArgs;
use crate::cluster_lifecycle::{DELETE_BOUNDS, Delivery};

/// `taloscope create`: plan with --plan; run with --yes --confirm NAME.
#[derive(Args, Debug, Clone)]
pub struct CreateArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// The new cluster's name (its talos and kube contexts get it).
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// Provider from taloscope's config.
    #[arg(long, value_name = "NAME")]
    pub provider: String,
    /// Control planes (odd: 1, 3, 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::cluster_lifecycle::MAX_CONTROLPLANES as u64))]
    pub controlplanes: u64,
    /// Workers.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=crate::cluster_lifecycle::MAX_WORKERS as u64))]
    pub workers: u64,
    /// Talos version, e.g. v1.11.3.
    #[arg(long, value_name = "VERSION")]
    pub talos: String,
    /// Kubernetes version (default: talosctl's for that Talos release, its DefaultKubernetesVersion).
    #[arg(long, value_name = "VERSION")]
    pub kubernetes: Option<String>,
    /// Kubernetes API endpoint address (default: the gateway role's, else the first control
    /// plane's).
    #[arg(long, value_name = "ADDR")]
    pub endpoint: Option<String>,
    #[arg(long, value_enum, default_value_t = Delivery::Maintenance)]
    pub deliver: Delivery,
    /// A config patch for every node (RFC 6902 JSON patch or strategic merge YAML).
    #[arg(long, value_name = "FILE")]
    pub config_patch: Vec<PathBuf>,
    /// A config patch for control planes only.
    #[arg(long, value_name = "FILE")]
    pub config_patch_control_plane: Vec<PathBuf>,
    /// A config patch for workers only.
    #[arg(long, value_name = "FILE")]
    pub config_patch_worker: Vec<PathBuf>,
    /// Make the cluster with this secrets bundle (a `talosctl gen secrets` file, or the one a
    /// cluster of this name left), as `talosctl gen config --with-secrets` does; a bundle left
    /// at the name is used only when named here.
    #[arg(long, value_name = "FILE")]
    pub with_secrets: Option<PathBuf>,
    /// Leave the current kube and talos contexts as they are; by default the new cluster's
    /// become current, as `talosctl kubeconfig` and `talosctl config merge` make them.
    #[arg(long)]
    pub keep_current_context: bool,
    /// Seconds one phase (booting, etcd forming, nodes Ready…) may take.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub phase_timeout: u64,
    /// A VM's maintenance certificate fingerprint, as its VNC console in Sunstone shows it in
    /// the maintenance-mode banner (repeat per VM): its config goes only to that certificate.
    #[arg(long, value_name = "VM=SHA256")]
    pub fingerprint: Vec<String>,
    /// Milliseconds between looks while waiting.
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true)]
    pub poll_ms: u64,
}

/// `taloscope delete --context NAME`: plan with --plan; run with --yes --confirm NAME.
#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// The cluster's VMs by id, for a cluster taloscope did not create.
    #[arg(long, value_name = "VM_ID,...", value_delimiter = ',')]
    pub adopt: Vec<u64>,
    /// Seconds the VMs may take to be gone.
    #[arg(long, value_name = "SECS", default_value_t = DELETE_BOUNDS.1.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}
