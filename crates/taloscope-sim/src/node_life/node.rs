//! A simulated machine's life: first start, boot (events, stage booting → running), and the
//! reboot and upgrade sequences during which apid goes away for ~20 simulated seconds before the
//! node comes back with a new boot id, on the new version if one was staged.
use std::sync::Arc;
use std::time::Duration;

use super::apid_listener as apid;
use crate::model::clock::random_u64;
use crate::model::core::Core;
use crate::model::events::{machine_status, phase, sequence, service, task};
use crate::model::kube_components::{ConfigImages, image_tag, parse_config_images};
use crate::model::scenario::NodeRole;
use crate::model::state::{ClusterState, MachineStage, SimNode};
use taloscope_proto::machine::{phase_event, sequence_event, service_state_event, task_event};

/// apid's port (siderolabs/talos pkg/machinery/constants/constants.go `ApidPort`).
pub(crate) const APID_PORT: u16 = 50000;
/// Simulated seconds a rebooting node stays unreachable.
pub(crate) const REBOOT_DOWN_SECONDS: f64 = 20.0;
/// Simulated seconds from apid answering again to the node being ready.
const BOOT_TO_READY_SECONDS: f64 = 4.0;

/// What kind of reboot a sequence ends in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sequence {
    Reboot,
    /// `RebootRequest.Mode.FORCE` (v1.12 and later): straight to the reboot phase, skipping
    /// the cleanup, dbus and stop phases
    /// (siderolabs/talos internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer.go,
    /// `Reboot`).
    ForceReboot,
    Upgrade,
    /// `MachineService.Shutdown`: the machine powers off at the end and stays off
    /// (v1alpha1_sequencer.go `Shutdown`: storeShutdown, drain unless forced, cleanup, dbus,
    /// the stop phases, shutdown).
    Shutdown {
        force: bool,
    },
}

/// The services a node runs, in ServiceList order.
pub(crate) fn service_ids(role: NodeRole) -> &'static [&'static str] {
    match role {
        NodeRole::ControlPlane => &[
            "apid",
            "containerd",
            "cri",
            "etcd",
            "kubelet",
            "machined",
            "syslogd",
            "trustd",
            "udevd",
        ],
        NodeRole::Worker => &[
            "apid",
            "containerd",
            "cri",
            "kubelet",
            "machined",
            "syslogd",
            "udevd",
        ],
    }
}

fn boot_id() -> String {
    let a = random_u64();
    let b = random_u64();
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// First start: binds the node's address (recording the port); a node with the `down` fault
/// then lets the listener go, every other node boots straight to running.
pub(crate) fn start(core: &Arc<Core>, node: &Arc<SimNode>) -> std::io::Result<()> {
    let listener = apid::bind(node.address())?;
    let port = listener.local_addr()?.port();
    node.port.store(port, std::sync::atomic::Ordering::Relaxed);
    core.fleet.update(node, |s| s.port = port);
    node.lock().listener = Some(listener);
    if node.spec.faults.down {
        apid::stop_serving(node);
        return Ok(());
    }
    begin_boot(core, node);
    finish_boot(core, node);
    apid::start_serving(core, node)
}

/// A node that joins at run time (a provisioned VM booting Talos): it binds its address and
/// boots; it is ready after the usual boot-to-ready time, and a control plane then joins etcd.
pub(crate) fn join(
    core: &Arc<Core>,
    cluster: &Arc<ClusterState>,
    node: &Arc<SimNode>,
) -> std::io::Result<()> {
    // A formed cluster's nodes answer on apid's own port, as a real VM's Talos does
    // (pkg/machinery/constants: ApidPort); the scenario's share addresses across sims.
    let listener = match &cluster.formation {
        Some(_) => apid::bind_at(std::net::SocketAddr::from((node.address(), APID_PORT)))?,
        None => apid::bind(node.address())?,
    };
    let port = listener.local_addr()?.port();
    node.port.store(port, std::sync::atomic::Ordering::Relaxed);
    core.fleet.update(node, |s| s.port = port);
    if cluster.formation.is_some() {
        // Not Ready until its kubelet registers and the CNI runs (formation.rs).
        core.fleet.update(node, |s| {
            s.kubernetes.kubelet.ready = false;
            for pod in &mut s.kubernetes.static_pods {
                pod.ready = false;
            }
        });
    }
    {
        let mut m = node.lock();
        m.listener = Some(listener);
        m.busy = true;
    }
    begin_boot(core, node);
    apid::start_serving(core, node)?;
    let (core, cluster, node) = (core.clone(), cluster.clone(), node.clone());
    tokio::spawn(async move {
        core.clock.sleep(BOOT_TO_READY_SECONDS).await;
        if *core.stop.borrow() || !node.status().up {
            return;
        }
        if cluster.formation.is_some() {
            finish_boot_as(&core, &node, false);
            super::formation::node_booted(&core, &cluster, &node);
            return;
        }
        finish_boot(&core, &node);
        if node.role() == NodeRole::ControlPlane {
            let mut etcd = cluster.etcd_lock();
            if !etcd.members.contains(&node.node_index) {
                etcd.members.push(node.node_index);
                etcd.raft_index += 3;
            }
        }
        cluster.elect_if_leaderless();
    });
    Ok(())
}

/// The machine is switched off: apid goes away and the node stays down.
pub(crate) fn power_off(fleet: &crate::model::state::FleetState, node: &SimNode) {
    node.events.close();
    apid::stop_serving(node);
    fleet.update(node, |s| {
        s.up = false;
        s.ready = false;
    });
}

/// A new boot: fresh event buffer, boot id, staged version; apid answers, not ready yet.
fn begin_boot(core: &Core, node: &SimNode) {
    let running = node.status.borrow().talos_version.clone();
    let staged = {
        let mut mutable = node.lock();
        mutable.booted_at = Some(std::time::Instant::now());
        let staged = mutable.staged_version.take();
        if staged.is_some() {
            // The install it ran until now stays in the other boot entry (A/B).
            mutable.previous_version = Some(running);
        }
        staged
    };
    let booted_config = boot_config(node);
    node.events.reset();
    node.events
        .push("", sequence("boot", sequence_event::Action::Start));
    node.events
        .push("", machine_status(MachineStage::Booting, false));
    for p in ["systemRequirements", "initialize", "startEverything"] {
        node.events.push("", phase(p, phase_event::Action::Start));
        node.events.push("", phase(p, phase_event::Action::Stop));
    }
    core.fleet.update(node, |s| {
        if let Some(v) = staged {
            s.talos_version = v;
        }
        if let Some(images) = &booted_config {
            s.kubernetes.config_generation += 1;
            for (component, image) in images.by_component() {
                let tag = image_tag(image);
                if let Some(c) = s.kubernetes.component_mut(component)
                    && !tag.is_empty()
                    && c.version != tag
                {
                    c.version = tag.to_string();
                    c.config_resource_version += 1;
                    c.config_version = c.config_resource_version;
                }
            }
        }
        s.boot += 1;
        s.boot_id = boot_id();
        // The boot sequence starts every service again, etcd among them; with its data intact
        // in /var/lib/etcd its PreFunc finds the member and it starts as that member
        // (siderolabs/talos internal/app/machined/pkg/system/services/etcd.go `PreFunc`).
        s.etcd_stopped = false;
        s.up = true;
        s.rebooting = true;
        s.ready = false;
        s.stage = MachineStage::Booting;
    });
}

/// The configuration a boot runs: the persisted one (v1alpha1_server.go: `STAGED` and `REBOOT`
/// call `SetPersistedConfig`), so a `TRY` configuration still on trial is gone and a staged
/// one takes over; the components start on it. Some: the images of a configuration that
/// changed at this boot.
fn boot_config(node: &SimNode) -> Option<ConfigImages> {
    let mut m = node.lock();
    m.apply_rebooting = false;
    let mut changed = false;
    if let Some(tried) = m.config_try.take() {
        m.applied_config = tried.previous;
        changed = true;
    }
    if let Some(staged) = m.staged_config.take() {
        m.applied_config = Some(staged);
        changed = true;
    }
    let config = m.applied_config.clone();
    drop(m);
    let text = match config {
        Some(c) if changed => c,
        _ => return None,
    };
    parse_config_images(&text).ok()
}

/// Services come up, the boot sequence ends, the node is running and ready.
fn finish_boot(core: &Core, node: &SimNode) {
    finish_boot_as(core, node, true);
}

/// As `finish_boot`; a node of a forming cluster runs but is not ready until etcd and its
/// kubelet are (Talos's machine status readiness, controllers/runtime/machine_status.go).
fn finish_boot_as(core: &Core, node: &SimNode, ready: bool) {
    for id in service_ids(node.role()) {
        node.events
            .push("", service(id, service_state_event::Action::Running));
    }
    node.events
        .push("", sequence("boot", sequence_event::Action::Stop));
    node.events
        .push("", machine_status(MachineStage::Running, ready));
    core.fleet.update(node, |s| {
        s.rebooting = false;
        s.ready = ready;
        s.stage = MachineStage::Running;
    });
    node.lock().busy = false;
    let cluster = core.fleet.clusters.get(node.cluster_index);
    if let Some(cluster) = cluster {
        core.fleet.record.upgrade_ended(cluster.name(), node.name());
    }
}

/// Starts a reboot (or upgrade-then-reboot) in the background; false if one is already running.
pub(crate) fn spawn_reboot(
    core: &Arc<Core>,
    cluster: &Arc<ClusterState>,
    node: &Arc<SimNode>,
    actor_id: String,
    kind: Sequence,
) -> bool {
    {
        let mut m = node.lock();
        if m.busy {
            return false;
        }
        m.busy = true;
    }
    tokio::spawn(reboot(
        core.clone(),
        cluster.clone(),
        node.clone(),
        actor_id,
        kind,
    ));
    true
}

async fn reboot(
    core: Arc<Core>,
    cluster: Arc<ClusterState>,
    node: Arc<SimNode>,
    actor: String,
    kind: Sequence,
) {
    let clock = core.clock;
    let (name, stage) = match kind {
        Sequence::Reboot | Sequence::ForceReboot => ("reboot", MachineStage::Rebooting),
        Sequence::Upgrade => ("upgrade", MachineStage::Upgrading),
        Sequence::Shutdown { .. } => ("shutdown", MachineStage::ShuttingDown),
    };
    let log = &node.events;
    log.push(&actor, sequence(name, sequence_event::Action::Start));
    core.fleet.update(&node, |s| {
        s.stage = stage;
        s.ready = false;
        s.rebooting = true;
    });
    log.push(&actor, machine_status(stage, false));
    let phases: &[&str] = match kind {
        Sequence::Reboot => &[
            "drain",
            "cleanup",
            "dbus",
            "stopServices",
            "unmount",
            "reboot",
        ],
        Sequence::ForceReboot => &["reboot"],
        Sequence::Shutdown { force: false } => &[
            "storeShutdown",
            "drain",
            "cleanup",
            "dbus",
            "stopServices",
            "unmount",
            "shutdown",
        ],
        Sequence::Shutdown { force: true } => &[
            "storeShutdown",
            "cleanup",
            "dbus",
            "stopServices",
            "unmount",
            "shutdown",
        ],
        Sequence::Upgrade => &[
            "drain",
            "cleanup",
            "dbus",
            "stopServices",
            "unmount",
            "upgrade",
            "meta",
            "kexec",
            "stopEverything",
            "reboot",
        ],
    };
    for p in phases {
        log.push(&actor, phase(p, phase_event::Action::Start));
        if *p == "stopServices" {
            log.push(&actor, task("stopAllServices", task_event::Action::Start));
        }
        clock.sleep(0.3).await;
        log.push(&actor, phase(p, phase_event::Action::Stop));
    }
    if let Sequence::Shutdown { .. } = kind {
        cluster.move_leader_from(node.node_index);
        power_off(&core.fleet, &node);
        cluster.move_leader_from(node.node_index);
        node.lock().busy = false;
        return;
    }
    core.fleet
        .update(&node, |s| s.stage = MachineStage::Rebooting);
    log.push(&actor, machine_status(MachineStage::Rebooting, false));
    cluster.move_leader_from(node.node_index);
    // machined stops: Events streams end with EOF, then apid goes away.
    log.close();
    tokio::time::sleep(Duration::from_millis(30)).await;
    apid::stop_serving(&node);
    core.fleet.update(&node, |s| s.up = false);
    cluster.move_leader_from(node.node_index);
    clock.sleep(REBOOT_DOWN_SECONDS).await;
    // An injected hold keeps the node down until the test lets it come back.
    while node.injected.never_returns() && !*core.stop.borrow() {
        clock.sleep(0.5).await;
    }
    if node.spec.faults.never_returns_after_reboot || *core.stop.borrow() {
        return;
    }
    begin_boot(&core, &node);
    if let Err(e) = apid::resume_serving(&core, &node) {
        tracing::warn!(node = node.name(), "cannot listen again: {e}");
        core.fleet.update(&node, |s| s.up = false);
        return;
    }
    cluster.elect_if_leaderless();
    clock.sleep(BOOT_TO_READY_SECONDS).await;
    if *core.stop.borrow() {
        return;
    }
    // A forming cluster's node is ready again only once its kubelet had registered.
    let ready = cluster.kubelet_registered(node.node_index);
    finish_boot_as(&core, &node, ready);
    join_etcd_if_wiped(&core, &cluster, &node);
    cluster.elect_if_leaderless();
}

/// A control plane whose member left the cluster (EtcdLeaveCluster emptied /var/lib/etcd)
/// joins etcd again as it boots: etcd's PreFunc finds no data and adds the node to the
/// cluster, as a learner promoted once it caught up (siderolabs/talos
/// internal/app/machined/pkg/system/services/etcd.go `argsForControlPlane`, `addMember`,
/// `promoteMember`). The sim keeps the node's member id; a real join gets a new one.
fn join_etcd_if_wiped(core: &Core, cluster: &ClusterState, node: &SimNode) {
    if !node.status().etcd_data_wiped {
        return;
    }
    core.fleet.update(node, |s| s.etcd_data_wiped = false);
    let mut etcd = cluster.etcd_lock();
    if node.role() == NodeRole::ControlPlane && !etcd.members.contains(&node.node_index) {
        etcd.members.push(node.node_index);
        etcd.raft_index += 3;
    }
}
