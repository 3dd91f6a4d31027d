//! Talos booting on a VM of the OpenNebula sim from its image: the live boot, maintenance mode
//! when the VM carries no machine config, the install and the reboot into the installed system,
//! then the node forming its config's cluster (a control plane with the CAs) or joining it; and
//! the cluster retiring when the last of its VMs is terminated.
use std::net::Ipv4Addr;
use std::sync::Arc;

use super::cloud::{OneCloud, hostname_of};
use super::machine_config::{BootsAs, read_user_data};
use super::template::Value;
use crate::model::formed_cluster::{ClusterSeed, Formation};
use crate::model::scenario::{DEFAULT_IMAGE_PULL_MS, DEFAULT_KUBERNETES, DEFAULT_TALOS};
use crate::model::scenario::{NodeRole, NodeSpec};

// Simulated seconds at time scale 1, after the VM is RUNNING (PENDING, PROLOG and BOOT are in
// cloud.rs: about 11 s).
/// Firmware, kernel and initramfs to machined reading its config or serving maintenance
/// (internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer.go `Initialize`).
const LIVE_BOOT_SECONDS: f64 = 20.0;
/// The installer writes partitions and the boot assets once its image is pulled (the pull
/// takes the scenario's image-pull time, 12 s): v1alpha1_sequencer.go `Install` phase.
const INSTALL_WRITE_SECONDS: f64 = 8.0;
/// A worker's trustd request is retried until a control plane of its cluster answers
/// (internal/app/machined/pkg/controllers/secrets/api.go retries the remote CSR).
const TRUSTD_RETRY_SECONDS: f64 = 3.0;

/// A VM whose Talos boots from the image.
pub(crate) struct ImageBoot {
    pub vm: i64,
    /// The VM's epoch when it reached RUNNING: any later transition (terminate) ends the boot.
    pub epoch: u64,
    pub ip: Ipv4Addr,
    pub vm_name: String,
    pub config: Option<Box<BootsAs>>,
}

impl OneCloud {
    fn still_running(&self, boot: &ImageBoot) -> bool {
        !*self.stop.borrow()
            && self
                .lock()
                .vms
                .get(&boot.vm)
                .is_some_and(|v| v.epoch == boot.epoch)
    }

    fn boot_failed(&self, vm: i64, reason: String) {
        tracing::warn!(vm, "Talos on the VM cannot come up: {reason}");
        if let Some(v) = self.lock().vms.get_mut(&vm) {
            v.user_template
                .set("TALOSCOPE_JOIN_ERROR", Value::Single(reason));
        }
    }

    /// The VM's maintenance API goes away (it was configured or terminated).
    pub(crate) fn maintenance_stopped(&self, vm: i64) {
        self.maintenance
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&vm);
    }

    /// After the VM at `ip` was terminated: a formed cluster none of whose VMs runs Talos any
    /// more disappears (its API stops, its name is free).
    pub(crate) fn retire_if_empty(&self, ip: Ipv4Addr) {
        let Some((cluster, _)) = self.fleet.node_by_address(ip) else {
            return;
        };
        let Some(formation) = &cluster.formation else {
            return;
        };
        let addresses: Vec<Ipv4Addr> = cluster.nodes().iter().map(|n| n.address()).collect();
        let live = self
            .lock()
            .vms
            .values()
            .any(|v| v.talos_up && addresses.contains(&v.ip));
        if !live {
            formation.retire();
        }
    }
}

/// The whole boot; every step gives up once the VM moved on (terminated).
pub(crate) async fn boot_image(cloud: Arc<OneCloud>, boot: ImageBoot) {
    cloud.clock.sleep(LIVE_BOOT_SECONDS).await;
    if !cloud.still_running(&boot) {
        return;
    }
    let config = match boot.config.clone() {
        Some(config) => config,
        None => match maintenance(&cloud, &boot).await {
            Some(config) => config,
            None => return,
        },
    };
    // machined loads the config before it installs (v1alpha1_sequencer.go `Initialize`); a
    // config it cannot load stops the boot there.
    if let Some(e) = &config.load_error {
        cloud.boot_failed(boot.vm, format!("failed to load the machine config: {e}"));
        return;
    }
    // Install (the installer image is pulled, the disk written), then reboot into it.
    let install = DEFAULT_IMAGE_PULL_MS as f64 / 1000.0 + INSTALL_WRITE_SECONDS;
    cloud.clock.sleep(install).await;
    if !cloud.still_running(&boot) {
        return;
    }
    cloud
        .clock
        .sleep(crate::node_life::node::REBOOT_DOWN_SECONDS)
        .await;
    if !cloud.still_running(&boot) {
        return;
    }
    match come_up(&cloud, &boot, &config).await {
        Ok(true) => {
            if let Some(v) = cloud.lock().vms.get_mut(&boot.vm) {
                v.talos_up = v.epoch == boot.epoch;
            }
        }
        Ok(false) => {}
        Err(reason) => cloud.boot_failed(boot.vm, reason),
    }
}

/// Maintenance mode until a config is applied (internal/app/maintenance/server.go); `None`
/// when the VM went away first.
async fn maintenance(cloud: &Arc<OneCloud>, boot: &ImageBoot) -> Option<Box<BootsAs>> {
    let (api, mut applied) = match crate::opennebula::maintenance::start(boot.ip) {
        Ok(started) => started,
        Err(e) => {
            cloud.boot_failed(boot.vm, format!("maintenance API cannot listen: {e}"));
            return None;
        }
    };
    cloud
        .maintenance
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(boot.vm, api);
    let data = loop {
        tokio::select! {
            data = &mut applied => break data.ok(),
            _ = cloud.clock.sleep(1.0) => {
                if !cloud.still_running(boot) {
                    break None;
                }
            }
        }
    };
    cloud.maintenance_stopped(boot.vm);
    let text = String::from_utf8(data?).ok()?;
    read_user_data(&text, None).map(Box::new)
}

/// The node's apid comes up in its config's cluster: formed here by a control plane carrying
/// the CAs when the sim has no such cluster, else joined (a worker waits for one).
/// `Ok(false)`: the VM went away while waiting.
async fn come_up(
    cloud: &Arc<OneCloud>,
    boot: &ImageBoot,
    config: &BootsAs,
) -> Result<bool, String> {
    let name = config
        .cluster_name
        .clone()
        .ok_or("the machine config has no cluster.clusterName")?;
    let spec = NodeSpec {
        name: config
            .hostname
            .clone()
            .unwrap_or_else(|| hostname_of(&boot.vm_name)),
        role: config.role,
        address: boot.ip,
        talos_version: config
            .talos_version
            .clone()
            .unwrap_or_else(|| DEFAULT_TALOS.into()),
        kubernetes_version: config
            .kubernetes_version
            .clone()
            .unwrap_or_else(|| DEFAULT_KUBERNETES.into()),
        faults: Default::default(),
        extra_args: Default::default(),
        registry_mirrors: Default::default(),
    };
    loop {
        if let Some(cluster) = cloud.fleet.cluster(&name) {
            if let Some(f) = &cluster.formation {
                if !f.same_os_ca(&config.secrets.os_ca.crt) {
                    return Err(format!(
                        "cluster {name} exists with another OS CA (machine.ca.crt differs)"
                    ));
                }
                if f.machine_token != config.secrets.machine_token {
                    return Err(format!(
                        "trustd of cluster {name} refuses the node: machine.token differs"
                    ));
                }
            }
            cloud
                .fleet
                .add_node(&name, spec)
                .map_err(|e| e.to_string())?;
            return Ok(true);
        }
        if config.role == NodeRole::ControlPlane {
            let formation = Formation::new(&seed(config)?)?;
            // Another control plane may have formed it meanwhile: then join it.
            let _ = cloud.fleet.create_cluster(&name, formation);
            continue;
        }
        cloud.clock.sleep(TRUSTD_RETRY_SECONDS).await;
        if !cloud.still_running(boot) {
            return Ok(false);
        }
    }
}

fn seed(config: &BootsAs) -> Result<ClusterSeed, String> {
    let s = &config.secrets;
    Ok(ClusterSeed {
        endpoint: config
            .endpoint
            .clone()
            .ok_or("the machine config has no cluster.controlPlane.endpoint")?,
        os_ca: (s.os_ca.crt.clone(), s.os_ca.key.clone()),
        cluster_ca: (s.cluster_ca.crt.clone(), s.cluster_ca.key.clone()),
        machine_token: s.machine_token.clone(),
    })
}
