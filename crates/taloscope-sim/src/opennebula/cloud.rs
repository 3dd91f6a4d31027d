//! The simulated OpenNebula cloud: templates, VMs and their life over simulated time
//! (PENDING → PROLOG → BOOT → RUNNING, or a failure; terminate → SHUTDOWN → EPILOG → DONE),
//! IP leases on each cluster's loopback plan, and the hand-over to the Talos sim once a VM
//! carrying a machine config for a sim cluster runs.
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use super::machine_config;
use super::oneflow::FlowState;
use super::quota::Owner;
use super::template::{Template, Value};
use super::vm::{Boot, JoinPlan, Lcm, Vm, VmState, VmTemplate};
use crate::model::clock::SimClock;
use crate::model::scenario::NodeSpec;
use crate::model::scenario::VmQuotaSpec;
use crate::model::scenario::{DEFAULT_KUBERNETES, DEFAULT_TALOS};
use crate::model::state::FleetState;

/// Simulated seconds per step.
const PENDING_SECONDS: f64 = 2.0;
const PROLOG_SECONDS: f64 = 5.0;
const BOOT_SECONDS: f64 = 4.0;
/// From RUNNING to Talos's apid answering on the VM's address.
const TALOS_BOOT_SECONDS: f64 = 3.0;
const SHUTDOWN_SECONDS: f64 = 3.0;
const EPILOG_SECONDS: f64 = 2.0;

/// A refused call: what oned would answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    NoTemplate(i64),
    NoVm(i64),
    NotAvailable {
        action: String,
        state: String,
    },
    Unsupported(String),
    UnknownAction(String),
    BadTemplate(String),
    /// No user or group with that id (the sim has one of each).
    NoObject(&'static str, i64),
    /// Past the user's VM quota: who (uid) and Quota.cc's words.
    Quota {
        uid: i64,
        message: String,
    },
}

/// Everything the cloud holds.
pub(crate) struct Cloud {
    /// The one user everything belongs to (oneadmin unless the scenario sets a quota).
    pub owner: Owner,
    /// The scenario's VM quota on that user (`None`: its default, unlimited).
    pub user_quota: Option<VmQuotaSpec>,
    /// Never logged or printed; written only into the state dir's `one_auth`.
    pub password: String,
    pub templates: Vec<VmTemplate>,
    pub vms: BTreeMap<i64, Vm>,
    pub next_vm: i64,
    /// Sim cluster names, by index (the IP plan's third octet).
    pub clusters: Vec<String>,
    /// The network of the templates for new clusters: its index (after the scenario's) and
    /// the /24 it leases from, `127.A.B.0`, drawn per sim so that parallel sims' new nodes
    /// (on apid's fixed port 50000 and the API's 6443) do not meet.
    pub new_network: (usize, [u8; 2]),
    pub flow: FlowState,
}

/// The cloud shared by the XML-RPC and OneFlow servers and the lifecycle tasks.
pub(crate) struct OneCloud {
    state: Mutex<Cloud>,
    /// The maintenance APIs of VMs that booted without a machine config, by VM id.
    pub maintenance: Mutex<BTreeMap<i64, crate::opennebula::maintenance::MaintenanceApi>>,
    pub fleet: Arc<FleetState>,
    pub clock: SimClock,
    pub stop: watch::Sender<bool>,
}

pub(crate) use crate::model::clock::now_unix;

impl OneCloud {
    pub fn new(cloud: Cloud, fleet: Arc<FleetState>, clock: SimClock) -> Arc<OneCloud> {
        Arc::new(OneCloud {
            state: Mutex::new(cloud),
            maintenance: Mutex::new(BTreeMap::new()),
            fleet,
            clock,
            stop: watch::channel(false).0,
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, Cloud> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `one.template.instantiate`: a new VM from template `id` with `extra` merged in.
    pub fn instantiate(
        self: &Arc<Self>,
        template_id: i64,
        name: &str,
        hold: bool,
        extra: &str,
    ) -> Result<i64, Refusal> {
        let extra = if extra.trim().is_empty() {
            Template::default()
        } else {
            Template::parse(extra).map_err(Refusal::BadTemplate)?
        };
        let (id, epoch) = {
            let mut cloud = self.lock();
            let source = cloud
                .templates
                .iter()
                .find(|t| t.id == template_id)
                .cloned()
                .ok_or(Refusal::NoTemplate(template_id))?;
            let mut template = source.template.clone();
            template.merge(&extra);
            super::quota::check(&cloud, &template).map_err(|message| Refusal::Quota {
                uid: cloud.owner.uid,
                message,
            })?;
            let id = cloud.next_vm;
            let ip = self
                .lease(&cloud, source.cluster)
                .ok_or_else(|| Refusal::BadTemplate("no free address on the network".into()))?;
            cloud.next_vm += 1;
            let name = if name.trim().is_empty() {
                format!("{}-{id}", source.name)
            } else {
                name.trim().to_string()
            };
            let boot = self.boot_plan(&cloud, &template, source.cluster, &name, ip);
            add_runtime_attributes(&mut template, id, template_id, source.cluster, &cloud, ip);
            let failure = template
                .get("TALOSCOPE_SIM_FAILURE")
                .and_then(Lcm::failure_named);
            let state = if hold {
                VmState::Hold
            } else {
                VmState::Pending
            };
            let vm = Vm {
                id,
                name,
                owner: cloud.owner.clone(),
                state,
                lcm: Lcm::Init,
                prev_state: state,
                prev_lcm: Lcm::Init,
                stime: now_unix(),
                etime: 0,
                template,
                user_template: Template::default(),
                ip,
                failure,
                boot,
                talos_up: false,
                epoch: 0,
            };
            cloud.vms.insert(id, vm);
            (id, 0)
        };
        if !hold {
            self.schedule(id, epoch, PENDING_SECONDS);
        }
        Ok(id)
    }

    /// A VM already running a node the sim started with (OneFlow's existing nodes).
    pub fn adopt(cloud: &mut Cloud, template_id: i64, name: &str, ip: Ipv4Addr) -> i64 {
        let id = cloud.next_vm;
        cloud.next_vm += 1;
        let (mut template, cluster) = cloud
            .templates
            .iter()
            .find(|t| t.id == template_id)
            .map(|t| (t.template.clone(), t.cluster))
            .unwrap_or_default();
        add_runtime_attributes(&mut template, id, template_id, cluster, cloud, ip);
        cloud.vms.insert(
            id,
            Vm {
                id,
                name: name.to_string(),
                owner: cloud.owner.clone(),
                state: VmState::Active,
                lcm: Lcm::Running,
                prev_state: VmState::Active,
                prev_lcm: Lcm::Boot,
                stime: now_unix() - 86_400,
                etime: 0,
                template,
                user_template: Template::default(),
                ip,
                failure: None,
                boot: None,
                talos_up: true,
                epoch: 0,
            },
        );
        id
    }

    /// The lowest free 127.10.<cluster>.<n>: not a fleet node, not leased to a live VM.
    fn lease(&self, cloud: &Cloud, cluster: usize) -> Option<Ipv4Addr> {
        let [a, b] = if cluster == cloud.new_network.0 {
            cloud.new_network.1
        } else {
            [10, (cluster % 256) as u8]
        };
        (1..=254u8).map(|n| Ipv4Addr::new(127, a, b, n)).find(|ip| {
            !self.fleet.address_taken(*ip)
                && !cloud
                    .vms
                    .values()
                    .any(|v| v.ip == *ip && v.state != VmState::Done)
        })
    }

    /// What Talos does on a VM of template `t`: join a cluster the sim started with (its
    /// config names one), or, on the new-cluster network's Talos image, boot the config (or
    /// none: maintenance). The scenario networks' VMs keep to joining: their addresses are
    /// shared by parallel sims, which apid's fixed port would make collide.
    fn boot_plan(
        &self,
        cloud: &Cloud,
        t: &Template,
        network: usize,
        vm_name: &str,
        ip: Ipv4Addr,
    ) -> Option<Boot> {
        if let Some(plan) = self.join_plan(cloud, t, vm_name, ip) {
            return Some(Boot::Join(plan));
        }
        let talos_image = t
            .vector_get("DISK", "IMAGE")
            .is_some_and(|image| image.starts_with("talos-"));
        if !talos_image || network != cloud.new_network.0 {
            return None;
        }
        let config = t.vector_get("CONTEXT", "USER_DATA").and_then(|data| {
            machine_config::read_user_data(data, t.vector_get("CONTEXT", "USER_DATA_ENCODING"))
        });
        Some(Boot::Image(config.map(Box::new)))
    }

    /// Which sim cluster the VM's machine config names, by `cluster.clusterName` or else by
    /// its control plane endpoint's address.
    fn join_plan(
        &self,
        cloud: &Cloud,
        t: &Template,
        vm_name: &str,
        ip: Ipv4Addr,
    ) -> Option<JoinPlan> {
        let user_data = t.vector_get("CONTEXT", "USER_DATA")?;
        let encoding = t.vector_get("CONTEXT", "USER_DATA_ENCODING");
        let boots = machine_config::read_user_data(user_data, encoding)?;
        let by_name = boots
            .cluster_name
            .as_deref()
            .filter(|n| cloud.clusters.iter().any(|c| c == n))
            .filter(|n| self.fleet.cluster(n).is_some_and(|c| c.formation.is_none()))
            .map(str::to_string);
        let by_endpoint = || {
            let host = boots.endpoint.as_deref()?.split("://").last()?;
            let host = host.split([':', '/']).next()?;
            let ip: Ipv4Addr = host.parse().ok()?;
            let (cluster, _) = self.fleet.node_by_address(ip)?;
            // Nodes of formed clusters join through their config's cluster (talos_boot.rs).
            cluster
                .formation
                .is_none()
                .then(|| cluster.name().to_string())
        };
        let cluster = by_name.or_else(by_endpoint)?;
        let first = self
            .fleet
            .cluster(&cluster)
            .and_then(|c| c.nodes().first().map(|n| n.status()));
        let hostname = boots
            .hostname
            .clone()
            .unwrap_or_else(|| hostname_of(vm_name));
        Some(JoinPlan {
            cluster,
            spec: NodeSpec {
                name: hostname,
                role: boots.role,
                address: ip,
                talos_version: boots
                    .talos_version
                    .or_else(|| first.as_ref().map(|s| s.talos_version.clone()))
                    .unwrap_or_else(|| DEFAULT_TALOS.into()),
                kubernetes_version: boots
                    .kubernetes_version
                    .or_else(|| first.as_ref().map(|s| s.kubernetes.kubelet.version.clone()))
                    .unwrap_or_else(|| DEFAULT_KUBERNETES.into()),
                faults: Default::default(),
                extra_args: Default::default(),
                registry_mirrors: Default::default(),
            },
        })
    }

    fn schedule(self: &Arc<Self>, id: i64, epoch: u64, sim_seconds: f64) {
        let cloud = self.clone();
        tokio::spawn(async move {
            cloud.clock.sleep(sim_seconds).await;
            if !*cloud.stop.borrow() {
                cloud.advance(id, epoch);
            }
        });
    }

    /// The next step of VM `id`, if nothing else moved it since `epoch`.
    fn advance(self: &Arc<Self>, id: i64, epoch: u64) {
        let mut join = None;
        let mut image = None;
        let next = {
            let mut cloud = self.lock();
            let Some(vm) = cloud.vms.get_mut(&id).filter(|v| v.epoch == epoch) else {
                return;
            };
            match (vm.state, vm.lcm) {
                (VmState::Pending, _) => {
                    vm.set_state(VmState::Active, Lcm::Prolog);
                    Some(PROLOG_SECONDS)
                }
                (VmState::Active, Lcm::Prolog) if vm.failure == Some(Lcm::PrologFailure) => {
                    vm.set_state(VmState::Active, Lcm::PrologFailure);
                    None
                }
                (VmState::Active, Lcm::Prolog) => {
                    vm.set_state(VmState::Active, Lcm::Boot);
                    Some(BOOT_SECONDS)
                }
                (VmState::Active, Lcm::Boot) if vm.failure == Some(Lcm::BootFailure) => {
                    vm.set_state(VmState::Active, Lcm::BootFailure);
                    None
                }
                (VmState::Active, Lcm::Boot) => {
                    vm.set_state(VmState::Active, Lcm::Running);
                    match vm.boot.take() {
                        Some(Boot::Join(plan)) => {
                            vm.boot = Some(Boot::Join(plan));
                            Some(TALOS_BOOT_SECONDS)
                        }
                        Some(Boot::Image(config)) => {
                            image = Some((vm.epoch, vm.ip, vm.name.clone(), config));
                            None
                        }
                        None => None,
                    }
                }
                (VmState::Active, Lcm::Running) => {
                    join = match vm.boot.take() {
                        Some(Boot::Join(plan)) => Some(plan),
                        _ => None,
                    };
                    vm.talos_up = join.is_some();
                    None
                }
                (VmState::Active, Lcm::Shutdown) => {
                    vm.set_state(VmState::Active, Lcm::Epilog);
                    Some(EPILOG_SECONDS)
                }
                (VmState::Active, Lcm::Epilog) => {
                    vm.set_state(VmState::Done, Lcm::Init);
                    vm.etime = now_unix();
                    None
                }
                _ => None,
            }
            .map(|secs| (vm.epoch, secs))
        };
        if let Some((epoch, secs)) = next {
            self.schedule(id, epoch, secs);
        }
        if let Some((epoch, ip, name, config)) = image {
            tokio::spawn(super::talos_boot::boot_image(
                self.clone(),
                super::talos_boot::ImageBoot {
                    vm: id,
                    epoch,
                    ip,
                    vm_name: name,
                    config,
                },
            ));
        }
        if let Some(plan) = join {
            let name = plan.spec.name.clone();
            if let Err(e) = self.fleet.add_node(&plan.cluster, plan.spec) {
                tracing::warn!(vm = id, node = %name, "Talos on the VM cannot join: {e}");
                let mut cloud = self.lock();
                if let Some(vm) = cloud.vms.get_mut(&id) {
                    vm.talos_up = false;
                    vm.user_template
                        .set("TALOSCOPE_JOIN_ERROR", Value::Single(e.to_string()));
                }
            }
        }
    }

    /// `one.vm.action` for the actions the sim models.
    pub fn action(self: &Arc<Self>, action: &str, id: i64) -> Result<i64, Refusal> {
        let mut power_off = None;
        let next = {
            let mut cloud = self.lock();
            let vm = cloud.vms.get_mut(&id).ok_or(Refusal::NoVm(id))?;
            let refuse = |vm: &Vm| Refusal::NotAvailable {
                action: action.to_string(),
                state: vm.state_name(),
            };
            let hard = action == "terminate-hard";
            match action {
                "terminate" | "terminate-hard" => match (vm.state, vm.lcm) {
                    (VmState::Pending | VmState::Hold, _) => {
                        vm.set_state(VmState::Done, Lcm::Init);
                        vm.etime = now_unix();
                        None
                    }
                    (VmState::Active, Lcm::Running) => {
                        vm.set_state(VmState::Active, Lcm::Shutdown);
                        if vm.talos_up {
                            vm.talos_up = false;
                            power_off = Some(vm.ip);
                        }
                        vm.boot = None;
                        Some(if hard { 0.5 } else { SHUTDOWN_SECONDS })
                    }
                    (VmState::Active, lcm) if lcm.is_failure() => {
                        vm.set_state(VmState::Active, Lcm::Epilog);
                        Some(EPILOG_SECONDS)
                    }
                    _ => return Err(refuse(vm)),
                },
                "hold" if vm.state == VmState::Pending => {
                    vm.set_state(VmState::Hold, Lcm::Init);
                    None
                }
                "release" if vm.state == VmState::Hold => {
                    vm.set_state(VmState::Pending, Lcm::Init);
                    Some(PENDING_SECONDS)
                }
                "hold" | "release" => return Err(refuse(vm)),
                "undeploy" | "undeploy-hard" | "poweroff" | "poweroff-hard" | "reboot"
                | "reboot-hard" | "stop" | "suspend" | "resume" | "resched" | "unresched" => {
                    if vm.state == VmState::Active && vm.lcm == Lcm::Running {
                        return Err(Refusal::Unsupported(action.to_string()));
                    }
                    return Err(refuse(vm));
                }
                _ => return Err(Refusal::UnknownAction(action.to_string())),
            }
            .map(|secs| (vm.epoch, secs))
        };
        self.maintenance_stopped(id);
        if let Some(ip) = power_off {
            self.fleet.power_off_node(ip);
            self.retire_if_empty(ip);
        }
        if let Some((epoch, secs)) = next {
            self.schedule(id, epoch, secs);
        }
        Ok(id)
    }
}

/// NIC with the leased IP, and the ids oned adds to a VM's TEMPLATE.
fn add_runtime_attributes(
    t: &mut Template,
    vm_id: i64,
    template_id: i64,
    cluster: usize,
    cloud: &Cloud,
    ip: Ipv4Addr,
) {
    let network = cloud
        .clusters
        .get(cluster)
        .map(|c| format!("talos-{c}"))
        .unwrap_or_else(|| "talos".into());
    let o = ip.octets();
    let nic = vec![
        ("BRIDGE".to_string(), "br0".to_string()),
        ("IP".to_string(), ip.to_string()),
        (
            "MAC".to_string(),
            format!("02:00:{:02x}:{:02x}:{:02x}:{:02x}", o[0], o[1], o[2], o[3]),
        ),
        ("MODEL".to_string(), "virtio".to_string()),
        ("NETWORK".to_string(), network),
        ("NETWORK_ID".to_string(), cluster.to_string()),
        ("NIC_ID".to_string(), "0".to_string()),
        ("SECURITY_GROUPS".to_string(), "0".to_string()),
    ];
    t.set("NIC", Value::Vector(nic));
    t.set("TEMPLATE_ID", Value::Single(template_id.to_string()));
    t.set("VMID", Value::Single(vm_id.to_string()));
}

/// A Talos hostname from a VM name (`worker_0_(service_3)` → `worker-0-service-3`).
pub(crate) fn hostname_of(vm_name: &str) -> String {
    let mut out = String::new();
    for c in vm_name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "talos".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostnames_from_vm_names() {
        assert_eq!(hostname_of("worker_0_(service_3)"), "worker-0-service-3");
        assert_eq!(hostname_of("W-3"), "w-3");
        assert_eq!(hostname_of("(())"), "talos");
    }
}
