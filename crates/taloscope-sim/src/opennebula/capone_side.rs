//! What a Cluster API infrastructure provider asks of the OpenNebula sim, as CAPONE does
//! (OpenNebula/cluster-api-provider-opennebula: an ONEMachine instantiates the VM template its
//! `spec.templateName` names, with the bootstrap data as `CONTEXT/USER_DATA`, and terminates it
//! when the ONEMachine goes); plus Talos templates at other versions for image rollouts.
use std::net::Ipv4Addr;
use std::sync::Arc;

use super::cloud::OneCloud;
use super::machine_config::{self, ConfigFor};
use super::setup::{role_extra, talos_template};
use super::vm::{Lcm, VmState, VmTemplate};
use crate::model::scenario::NodeRole;

/// A VM as the infrastructure provider sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProviderVm {
    pub id: i64,
    pub ip: Ipv4Addr,
    /// ACTIVE/RUNNING.
    pub running: bool,
    /// Ended in a failure state (BOOT_FAILURE, PROLOG_FAILURE).
    pub failed: bool,
    /// DONE (terminated).
    pub done: bool,
}

/// The cloud, seen through the provider's calls.
#[derive(Clone)]
pub(crate) struct CaponeSide {
    pub(super) cloud: Arc<OneCloud>,
    pub(super) ca_pem: String,
}

impl CaponeSide {
    /// The newest VM named `name` that is not DONE, or else the newest one.
    pub fn vm_by_name(&self, name: &str) -> Option<ProviderVm> {
        let cloud = self.cloud.lock();
        let mut vms: Vec<_> = cloud.vms.values().filter(|v| v.name == name).collect();
        vms.sort_by_key(|v| (v.state != VmState::Done, v.id));
        vms.last().map(|v| ProviderVm {
            id: v.id,
            ip: v.ip,
            running: v.state == VmState::Active && v.lcm == Lcm::Running,
            failed: v.lcm.is_failure(),
            done: v.state == VmState::Done,
        })
    }

    /// The Talos version a template's disk image carries (`IMAGE = "talos-v1.11.3-nocloud"`).
    pub fn template_talos_version(&self, template_name: &str) -> Option<String> {
        let cloud = self.cloud.lock();
        let t = cloud.templates.iter().find(|t| t.name == template_name)?;
        let image = t.template.vector_get("DISK", "IMAGE")?;
        let version = image.strip_prefix("talos-")?.strip_suffix("-nocloud")?;
        Some(version.to_string())
    }

    /// Adds `talos-<cluster>-<role>-<version>` templates (controlplane and worker) for each
    /// version, as an operator uploads a new Talos image and template before a rollout.
    pub fn add_versioned_templates(&self, cluster: &str, versions: &[&str]) {
        let mut cloud = self.cloud.lock();
        let Some(ci) = cloud.clusters.iter().position(|c| c == cluster) else {
            return;
        };
        for version in versions {
            for role in ["controlplane", "worker"] {
                let name = format!("talos-{cluster}-{role}-{version}");
                if cloud.templates.iter().any(|t| t.name == name) {
                    continue;
                }
                let id = cloud.templates.iter().map(|t| t.id).max().unwrap_or(-1) + 1;
                cloud.templates.push(VmTemplate {
                    id,
                    name,
                    regtime: super::cloud::now_unix(),
                    cluster: ci,
                    template: talos_template(cluster, role, version, false),
                });
            }
        }
    }

    /// Instantiates `template_name` as VM `vm_name` booting a `role` machine config of
    /// `cluster` at the template's Talos version and `kubernetes_version`.
    pub fn create_vm(
        &self,
        template_name: &str,
        vm_name: &str,
        cluster: &str,
        role: NodeRole,
        kubernetes_version: &str,
    ) -> Result<i64, String> {
        let talos = self
            .template_talos_version(template_name)
            .ok_or_else(|| format!("VM template {template_name:?} not found"))?;
        let template_id = {
            let cloud = self.cloud.lock();
            cloud
                .templates
                .iter()
                .find(|t| t.name == template_name)
                .map(|t| t.id)
                .ok_or_else(|| format!("VM template {template_name:?} not found"))?
        };
        let endpoint = self
            .cloud
            .fleet
            .cluster(cluster)
            .and_then(|c| {
                c.nodes()
                    .iter()
                    .find(|n| n.role() == NodeRole::ControlPlane)
                    .map(|n| format!("https://{}:6443", n.address()))
            })
            .unwrap_or_else(|| "https://127.0.0.1:6443".into());
        let config = machine_config::generate(&ConfigFor {
            cluster,
            endpoint: &endpoint,
            role,
            talos_version: &talos,
            kubernetes_version,
            ca_pem: &self.ca_pem,
            seed: cluster.len() as u64,
        });
        self.cloud
            .instantiate(template_id, vm_name, false, &role_extra(&config))
            .map_err(|e| format!("{e:?}"))
    }

    /// `one.vm.action terminate` (a VM not running any more is left as it is).
    pub fn terminate(&self, id: i64) {
        let _ = self.cloud.action("terminate-hard", id);
    }
}
