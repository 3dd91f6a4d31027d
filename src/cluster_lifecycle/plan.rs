//! What a create or a delete will do, as values: the new cluster's VMs per role and where they
//! come from, how its configs reach them, its endpoint and versions; the VMs (or service),
//! contexts and journals a delete removes. Pure: `planner.rs` fills them from the provider.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::approval::MutatingAction;
use crate::cluster_config::MergedEntries;
use crate::config::{MachineRole, ProviderKind};

/// How each machine config reaches its VM (`create --deliver`; each variant's doc comment is
/// its help there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Base64 USER_DATA in each VM's CONTEXT (anyone who can read the VM can read it; needs
    /// --endpoint).
    UserData,
    /// Boot into maintenance mode; apply each config over the Talos API to the certificate
    /// fingerprint shown.
    #[default]
    Maintenance,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::UserData => "user-data",
            Delivery::Maintenance => "maintenance",
        }
    }
}

/// Where the Kubernetes API endpoint (`cluster.controlPlane.endpoint`) points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "address", rename_all = "snake_case")]
pub enum EndpointChoice {
    /// `--endpoint ADDR`.
    Given(String),
    /// The OneFlow service's `gateway` role's address.
    Gateway,
    /// The first control plane's address.
    FirstControlPlane,
}

impl EndpointChoice {
    /// The choice in the operator's words.
    pub fn describe(&self) -> String {
        match self {
            EndpointChoice::Given(a) => format!("{a} (given)"),
            EndpointChoice::Gateway => "the gateway role's address".into(),
            EndpointChoice::FirstControlPlane => "the first control plane's address".into(),
        }
    }

    /// `https://HOST:6443` for an address the VMs got, or the given one as given (a bare host
    /// gets the scheme and port).
    pub fn url_for(address: &str) -> String {
        if address.starts_with("https://") {
            return address.to_string();
        }
        if address.contains(':') && !address.starts_with('[') && address.matches(':').count() > 1 {
            return format!("https://[{address}]:6443");
        }
        if address.contains(':') {
            format!("https://{address}")
        } else {
            format!("https://{address}:6443")
        }
    }
}

/// A VM template as the provider named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateRef {
    pub id: u64,
    pub name: String,
}

/// Where the new cluster's VMs come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VmSource {
    /// One `one.template.instantiate` per VM, of each role's template.
    Templates {
        controlplane: TemplateRef,
        worker: TemplateRef,
    },
    /// One OneFlow service instantiated from a service template whose roles are scaled to the
    /// counts asked for.
    Service {
        template: TemplateRef,
        service_name: String,
        /// The template has a `gateway` role.
        gateway: bool,
    },
}

/// The config patch files, as given (`--config-patch*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchFiles {
    pub all: Vec<PathBuf>,
    pub controlplane: Vec<PathBuf>,
    pub worker: Vec<PathBuf>,
}

impl PatchFiles {
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.controlplane.is_empty() && self.worker.is_empty()
    }
}

/// One VM the plan creates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedVm {
    pub name: String,
    pub role: MachineRole,
}

/// A new cluster, as the operator confirms it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatePlan {
    pub cluster: String,
    pub provider: String,
    pub provider_kind: ProviderKind,
    /// The provider's endpoint (its VM ids belong to it).
    pub provider_endpoint: String,
    pub source: VmSource,
    pub controlplanes: usize,
    pub workers: usize,
    /// Template providers: every VM by name, control planes first. OneFlow names its own.
    pub vms: Vec<PlannedVm>,
    /// `v1.11.3`.
    pub talos: String,
    /// `1.34.3`, without the `v` (as Talos' machine config writes it).
    pub kubernetes: String,
    /// The Kubernetes version was not asked for: the newest known the Talos release runs.
    pub kubernetes_defaulted: bool,
    pub delivery: Delivery,
    pub endpoint: EndpointChoice,
    pub patches: PatchFiles,
    /// Where the secrets bundle is kept (owner only); adding nodes later needs it.
    pub bundle_path: PathBuf,
    /// The bundle the operator named to make the cluster with (`--with-secrets`), copied to
    /// `bundle_path` instead of a new one generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_secrets: Option<PathBuf>,
    /// The create journal of this cluster.
    pub journal_path: PathBuf,
    /// What the provider said about room for the VMs, for the guards (planned again on resume).
    #[serde(skip)]
    pub room: crate::provision::room::ProviderRoom,
}

impl CreatePlan {
    /// The action the operator confirms (by typing the new cluster's name).
    pub fn action(&self) -> MutatingAction {
        MutatingAction::CreateCluster {
            cluster: self.cluster.clone(),
            provider: self.provider.clone(),
            controlplanes: self.controlplanes,
            workers: self.workers,
            talos: self.talos.clone(),
        }
    }

    pub fn is_approved_by(&self, action: &MutatingAction) -> bool {
        *action == self.action()
    }

    /// Every node the cluster gets.
    pub fn node_count(&self) -> usize {
        self.controlplanes + self.workers
    }

    /// The plan as operators read it.
    pub fn table(&self) -> String {
        let source = match &self.source {
            VmSource::Templates {
                controlplane,
                worker,
            } => format!(
                "VM templates {} (id {}) for control planes, {} (id {}) for workers",
                controlplane.name, controlplane.id, worker.name, worker.id
            ),
            VmSource::Service {
                template,
                service_name,
                gateway,
            } => format!(
                "OneFlow service {service_name} from service template {} (id {}){}",
                template.name,
                template.id,
                if *gateway {
                    ", with its gateway role"
                } else {
                    ""
                }
            ),
        };
        let kube_note = if self.kubernetes_defaulted {
            " (talosctl's default for it)"
        } else {
            ""
        };
        let mut out = format!(
            "CREATE     cluster {}: {} control plane(s), {} worker(s)\n\
             PROVIDER   {} ({}, {})\nSOURCE     {source}\n\
             VERSIONS   Talos {}, Kubernetes {}{kube_note}\n\
             DELIVERY   {}\nENDPOINT   {}\nSECRETS    {}\n",
            self.cluster,
            self.controlplanes,
            self.workers,
            self.provider,
            self.provider_kind,
            self.provider_endpoint,
            self.talos,
            self.kubernetes,
            self.delivery.as_str(),
            self.endpoint.describe(),
            match &self.with_secrets {
                Some(from) => format!(
                    "{} (copied from {}, --with-secrets)",
                    self.bundle_path.display(),
                    from.display()
                ),
                None => self.bundle_path.display().to_string(),
            },
        );
        if !self.vms.is_empty() {
            let names: Vec<&str> = self.vms.iter().map(|v| v.name.as_str()).collect();
            out.push_str(&format!("VMS        {}\n", names.join(", ")));
        }
        for (label, files) in [
            ("PATCH", &self.patches.all),
            ("PATCH CP", &self.patches.controlplane),
            ("PATCH W", &self.patches.worker),
        ] {
            for f in files {
                out.push_str(&format!("{label:<10} {}\n", f.display()));
            }
        }
        out
    }
}

/// A VM a delete terminates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownVm {
    pub id: u64,
    pub name: String,
}

/// How the delete knows the cluster's VMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VmsKnownBy {
    /// taloscope's create journal.
    CreateJournal,
    /// `--adopt VM_ID,...`.
    Adopted,
    /// Neither: the delete is refused.
    Unknown,
}

/// A cluster deletion, as the operator confirms it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletePlan {
    pub cluster: String,
    pub provider: Option<String>,
    pub provider_endpoint: Option<String>,
    pub known_by: VmsKnownBy,
    /// The OneFlow service deleted with its VMs (services the create instantiated).
    pub service: Option<u64>,
    pub vms: Vec<KnownVm>,
    pub talos_context: Option<String>,
    pub kube_context: Option<String>,
    /// The entries the create merged into the operator's files (its journal's record): the
    /// delete removes exactly these, when unchanged, and nothing else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Box<MergedEntries>>,
    /// The create's secrets bundle: copied to a backup (listed), then removed, so a later
    /// cluster of the name never gets this one's keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets_bundle: Option<PathBuf>,
    /// Journals removed at the end (create, provision, rollout of this cluster).
    pub journals: Vec<PathBuf>,
    /// The rollout Lease's holder, when a rollout holds the cluster.
    pub lease_holder: Option<String>,
    /// Why the rollout Lease could not be read (no kube context of the cluster, its API not
    /// answering): then no one can tell whether a rollout holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_unread: Option<String>,
}

impl DeletePlan {
    pub fn action(&self) -> MutatingAction {
        MutatingAction::DeleteCluster {
            cluster: self.cluster.clone(),
            vms: self.vms.len(),
        }
    }

    pub fn is_approved_by(&self, action: &MutatingAction) -> bool {
        *action == self.action()
    }

    pub fn table(&self) -> String {
        let vms: Vec<String> = self
            .vms
            .iter()
            .map(|v| format!("{} ({})", v.name, v.id))
            .collect();
        let known = match self.known_by {
            VmsKnownBy::CreateJournal => "from taloscope's create journal",
            VmsKnownBy::Adopted => "named with --adopt",
            VmsKnownBy::Unknown => "unknown",
        };
        let mut out = format!(
            "DELETE     cluster {}\nPROVIDER   {}\nVMS        {} ({known})\n",
            self.cluster,
            self.provider.as_deref().unwrap_or("-"),
            if vms.is_empty() {
                "none".to_string()
            } else {
                vms.join(", ")
            },
        );
        if let Some(s) = self.service {
            out.push_str(&format!("SERVICE    OneFlow service {s}\n"));
        }
        match &self.merged {
            Some(m) => {
                out.push_str(&format!(
                    "TALOSCTX   {} in {} (the create's; removed if unchanged, the file backed up first)\n",
                    m.talos_context.name,
                    m.talosconfig.display()
                ));
                out.push_str(&format!(
                    "KUBECTX    {}, cluster {}, user {} in {} (the create's; removed if unchanged, the file backed up first)\n",
                    m.kube_context.name,
                    m.kube_cluster.name,
                    m.kube_user.name,
                    m.kubeconfig.display()
                ));
                out.push_str("KEEPS      every other entry of both files\n");
            }
            None => {
                for (label, ctx) in [
                    ("TALOSCTX", &self.talos_context),
                    ("KUBECTX", &self.kube_context),
                ] {
                    if let Some(c) = ctx {
                        out.push_str(&format!(
                            "{label:<10} {c} (removed; the file is backed up first)\n"
                        ));
                    }
                }
            }
        }
        if let Some(b) = &self.secrets_bundle {
            out.push_str(&format!(
                "SECRETS    {} (removed; a backup owner-only beside it first)\n",
                b.display()
            ));
        }
        for j in &self.journals {
            out.push_str(&format!("JOURNAL    {}\n", j.display()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_get_a_scheme_and_the_api_port() {
        assert_eq!(EndpointChoice::url_for("10.0.0.5"), "https://10.0.0.5:6443");
        assert_eq!(
            EndpointChoice::url_for("10.0.0.5:443"),
            "https://10.0.0.5:443"
        );
        assert_eq!(EndpointChoice::url_for("fd00::5"), "https://[fd00::5]:6443");
        assert_eq!(
            EndpointChoice::url_for("https://k8s.lab:6443"),
            "https://k8s.lab:6443"
        );
    }

    #[test]
    fn delivery_and_endpoint_keep_their_json_names() {
        assert_eq!(
            serde_json::to_value(Delivery::UserData).unwrap(),
            "user-data"
        );
        let e = serde_json::to_value(EndpointChoice::Given("10.0.0.5".into())).unwrap();
        assert_eq!(e["kind"], "given");
        assert_eq!(e["address"], "10.0.0.5");
    }
}
