//! The `capi` scenario's management cluster: the CAPI, Talos-provider and OpenNebula-provider
//! objects its Kubernetes API serves (kubectl can list, patch, scale, create and delete them) and
//! a controller, driven by the sim clock, that reconciles them the way the providers do.
//!
//! Facts for clients (scenario `capi`; `capi-stuck-rollout`, `capi-orphaned-member`,
//! `capi-etcd-stopped`, `capi-etcd-leaving` and `capi-no-node-ref` add one stuck fault each; `capi-clusterctl` serves the kubeadm
//! providers' and Cluster API Provider AWS's CRDs beside, so `controlplane.*`, `bootstrap.*`
//! and `infrastructure.*` prefer v1beta2, which none of the scenario's objects are served in):
//! - Talos clusters `capi-mgmt` (one control plane `cp-1`) and `capi-work`; talosconfig
//!   contexts `capi-mgmt`, `capi-work`; kube contexts `admin@capi-mgmt` (the management cluster,
//!   serving the CAPI CRDs) and `admin@capi-work` (the workload cluster).
//! - In namespace `default` of the management cluster: Cluster `capi-work` (ONECluster
//!   `capi-work`), TalosControlPlane `capi-work-cp` (3 replicas; 1 in `capi-etcd-stopped`),
//!   MachineDeployment `capi-work-md-0` (2 replicas) with MachineSet `capi-work-md-0-<hash>`,
//!   ONEMachineTemplates `capi-work-controlplane` and `capi-work-worker` (spec.template.spec.
//!   templateName `talos-capi-work-controlplane` / `talos-capi-work-worker`, Talos v1.11.3),
//!   TalosConfigTemplate `capi-work-md-0`, Secret `capi-work-kubeconfig` (data.value: a
//!   kubeconfig whose server is the `admin@capi-work` server), Secret `capi-work-talosconfig`
//!   (data.talosconfig: a talosconfig, context `capi-work`, whose endpoints are the running
//!   control planes' `address:port`, kept current through scale-ups and rollouts).
//! - Machine names are node names: seeded `capi-work-cp-xxxxx` and `capi-work-md-0-xxxxx`;
//!   created ones `capi-work-cp-xxxxx` and `capi-work-md-0-<hash>-xxxxx`.
//! - OpenNebula VM templates `talos-capi-work-{controlplane,worker}-<v>` exist for Talos v1.10.7,
//!   v1.11.3, v1.12.0 and v1.13.0: a copied ONEMachineTemplate naming one rolls to that version.
pub(crate) mod admission;
pub(crate) mod conditions;
pub(crate) mod control_plane;
pub(crate) mod convert;
pub(crate) mod machines;
pub(crate) mod resources;
pub(crate) mod routes;
mod seed;
pub(crate) mod store;
pub(crate) mod table;
mod talosconfig_secret;
pub(crate) mod workers;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::opennebula::capone_side::CaponeSide;
use crate::{FleetState, SimClock};
use store::CapiStore;

/// The known deadlocks of the Talos control-plane provider, injected at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StuckFault {
    /// A control-plane rollout (TalosControlPlane `spec.version` at the next patch, v1.34.2)
    /// whose surge Machine already runs it, and whose oldest outdated control plane has an
    /// unhealthy etcd member: scale-down waits "for etcd to become healthy before scaling down"
    /// forever (the scenario starts in that state).
    /// Fixed by deleting (or removing the etcd member of) the stuck Machine.
    StuckRollout,
    /// An etcd member left behind by a Machine deleted out of band (its node powered off), with
    /// the provider's etcd audit off, as in provider releases before `auditEtcd`: etcd health
    /// fails with "expected to have 3 members, got 4". Fixed by EtcdRemoveMemberByID.
    OrphanedMember,
    /// A one-control-plane cluster whose only etcd service stopped with its data intact: no
    /// quorum, the Kubernetes API down, until a reboot starts etcd again (etcd_service).
    SingleMemberStopped,
    /// A control-plane Machine, not deleting, whose node already left etcd (a scale-down's
    /// `gracefulEtcdLeave` done, the Machine's deletion not: CACPPT #237, #225, #193): the
    /// health check fails forever ("expected to have 3 members, got 2" / etcd not Running on
    /// the node). Fixed by deleting the Machine: scale-up makes a replacement that joins.
    EtcdLeft,
    /// A control-plane rollout (to v1.34.2) whose first surge Machine never gets a VM, so
    /// never a node or addresses: the scale-down waits for every node to boot, the health
    /// check cannot reach it (configs.go "no addresses were found for node"). Fixed by
    /// deleting the surge Machine; the next surge boots.
    NodeRefLessSurge,
}

/// What the `capi` scenarios hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapiSpec {
    /// The Talos cluster whose kube API is the management cluster.
    pub management: String,
    /// The workload cluster CAPI owns (also the Cluster object's name).
    pub workload: String,
    pub namespace: String,
    pub fault: Option<StuckFault>,
    /// The kubeadm providers and Cluster API Provider AWS installed beside the Talos and
    /// OpenNebula providers, as `clusterctl init` leaves a management cluster
    /// (resources.rs `CLUSTERCTL_DEFAULTS`).
    pub clusterctl_defaults: bool,
}

/// Switches of the controller.
#[derive(Default)]
pub(crate) struct Knobs {
    no_etcd_audit: AtomicBool,
    /// The next control-plane Machine created gets no VM (NodeRefLessSurge).
    pub stall_next_control_plane: AtomicBool,
    /// Machines whose VM never comes.
    pub stalled: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl Knobs {
    pub fn audits_etcd(&self) -> bool {
        !self.no_etcd_audit.load(Ordering::Relaxed)
    }
}

/// What every reconcile pass shares.
pub(crate) struct Ctx {
    pub store: Arc<CapiStore>,
    pub fleet: Arc<FleetState>,
    pub one: CaponeSide,
    pub spec: CapiSpec,
    pub knobs: Knobs,
    /// Machines deleted whose VM may still be booting: terminated and removed once it can be.
    pub released: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

/// The running management cluster: its objects and the controller task.
pub struct CapiSim {
    ctx: Arc<Ctx>,
    task: tokio::task::JoinHandle<()>,
}

/// The version `capi-stuck-rollout` rolls the control planes to.
pub(crate) const ROLLOUT_VERSION: &str = "v1.34.2";

/// Simulated seconds between two reconciles without a change (the providers requeue after
/// 10-20 s; the sim is quicker so tests stay short).
const RESYNC_SECONDS: f64 = 2.0;

impl CapiSim {
    /// Seeds the objects, serves them on the management cluster's API and starts the controller.
    pub(crate) fn start(
        spec: CapiSpec,
        fleet: Arc<FleetState>,
        one: CaponeSide,
        clock: SimClock,
        mgmt_api: &crate::kube_api::KubeApiServer,
        workload: seed::WorkloadAccess,
        talos: TalosAccess,
    ) -> CapiSim {
        let store = Arc::new(CapiStore::serving(resources::Installed::new(
            spec.clusterctl_defaults,
        )));
        one.add_versioned_templates(
            &spec.workload,
            &["v1.10.7", "v1.11.3", "v1.12.0", "v1.13.0"],
        );
        let ctx = Arc::new(Ctx {
            store: store.clone(),
            fleet,
            one,
            spec,
            knobs: Knobs::default(),
            released: Default::default(),
        });
        seed::seed(&ctx, &workload);
        seed::inject(&ctx);
        mgmt_api.serve_capi(store);
        let task = tokio::spawn(run(ctx.clone(), clock, talos));
        CapiSim { ctx, task }
    }

    /// Every object of `plural` (e.g. `machines`) in the storage version.
    pub fn list(&self, plural: &str) -> Vec<Value> {
        self.ctx.store.list(plural, None)
    }

    /// One object in the storage version.
    pub fn get(&self, plural: &str, name: &str) -> Option<Value> {
        self.ctx.store.get(plural, &self.ctx.spec.namespace, name)
    }

    /// Deleted Machines whose VM is not DONE yet (terminated as soon as oned allows).
    pub fn pending_releases(&self) -> usize {
        self.ctx
            .released
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// Every request the providers' admission webhooks refused so far (admission.rs).
    pub fn admission_refusals(&self) -> Vec<AdmissionRefusal> {
        self.ctx.store.refusals()
    }

    /// The scenario's names.
    pub fn spec(&self) -> &CapiSpec {
        &self.ctx.spec
    }

    /// Turns the control-plane provider's etcd audit off (`false`) or on again.
    pub fn set_etcd_audit(&self, on: bool) {
        self.ctx.knobs.no_etcd_audit.store(!on, Ordering::Relaxed);
    }

    pub(crate) fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for CapiSim {
    fn drop(&mut self) {
        self.stop();
    }
}

pub use admission::AdmissionRefusal;
pub(crate) use seed::WorkloadAccess;
pub(crate) use talosconfig_secret::TalosAccess;

/// The built-in `capi` scenarios: management cluster `capi-mgmt` (index 0), workload cluster
/// `capi-work` (index 1: 3 control planes and 2 workers; 4 control planes with
/// `capi-orphaned-member`, 1 with `capi-etcd-stopped`).
pub(crate) fn builtin(name: &str) -> Option<crate::Scenario> {
    use crate::NodeRole::{ControlPlane, Worker};
    let clusterctl_defaults = name == "capi-clusterctl";
    let fault = match name {
        "capi" | "capi-clusterctl" => None,
        "capi-stuck-rollout" => Some(StuckFault::StuckRollout),
        "capi-orphaned-member" => Some(StuckFault::OrphanedMember),
        "capi-etcd-stopped" => Some(StuckFault::SingleMemberStopped),
        "capi-etcd-leaving" => Some(StuckFault::EtcdLeft),
        "capi-no-node-ref" => Some(StuckFault::NodeRefLessSurge),
        _ => return None,
    };
    let control_planes = match fault {
        Some(StuckFault::OrphanedMember | StuckFault::StuckRollout) => 4,
        Some(StuckFault::SingleMemberStopped) => 1,
        _ => 3,
    };
    let names: Vec<(String, crate::NodeRole)> = (0..control_planes)
        .map(|i| {
            (
                format!("capi-work-cp-{}", store::random_suffix(11 + i)),
                ControlPlane,
            )
        })
        .chain((0..2).map(|i| {
            (
                format!("capi-work-md-0-{}", store::random_suffix(101 + i)),
                Worker,
            )
        }))
        .collect();
    let refs: Vec<(&str, crate::NodeRole)> = names.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    Some(crate::Scenario {
        name: name.to_string(),
        clusters: vec![
            crate::scenario::build_cluster("capi-mgmt", 0, &[("cp-1", ControlPlane)], |_| {}),
            // The stuck rollout starts where it sticks: the surge Machine (the 4th control
            // plane) already runs the new version.
            crate::scenario::build_cluster("capi-work", 1, &refs, |n| {
                if fault == Some(StuckFault::StuckRollout)
                    && Some(&n.name) == names.get(3).map(|(n, _)| n)
                {
                    n.kubernetes_version = ROLLOUT_VERSION.into();
                }
            }),
        ],
        capi: Some(CapiSpec {
            management: "capi-mgmt".into(),
            workload: "capi-work".into(),
            namespace: "default".into(),
            fault,
            clusterctl_defaults,
        }),
        opennebula: Default::default(),
    })
}

/// cluster-api util/annotations/helpers.go `IsPaused`: the Cluster's `spec.paused`, or the
/// `cluster.x-k8s.io/paused` annotation on the Cluster or on `obj`. Every controller of the
/// scenario returns before reconciling such an object (cluster-api-control-plane-provider-talos
/// controllers/taloscontrolplane_controller.go; cluster-api internal/controllers/
/// machinedeployment and machineset `Reconcile`).
pub(crate) fn is_paused(ctx: &Ctx, obj: &Value) -> bool {
    let annotated = |o: &Value| {
        o["metadata"]["annotations"]
            .get(PAUSED_ANNOTATION)
            .is_some()
    };
    let cluster = ctx
        .store
        .get("clusters", &ctx.spec.namespace, &ctx.spec.workload);
    cluster
        .as_ref()
        .is_some_and(|c| c["spec"]["paused"] == Value::Bool(true) || annotated(c))
        || annotated(obj)
}

const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

/// The controller: reconciles on every change of the objects or the workload nodes, and every
/// `RESYNC_SECONDS` of simulated time.
async fn run(ctx: Arc<Ctx>, clock: SimClock, talos: TalosAccess) {
    let mut objects = ctx.store.changes.subscribe();
    let mut nodes = ctx.fleet.subscribe();
    loop {
        // Each pass's own writes bump the counter; mark them seen so only outside changes wake.
        machines::reconcile(&ctx);
        control_plane::reconcile(&ctx);
        workers::reconcile(&ctx);
        seed::cluster_status(&ctx);
        talosconfig_secret::reconcile(&ctx, &talos);
        objects.borrow_and_update();
        nodes.borrow_and_update();
        tokio::select! {
            _ = clock.sleep(RESYNC_SECONDS) => {}
            changed = objects.changed() => if changed.is_err() { return },
            changed = nodes.changed() => if changed.is_err() { return },
        }
    }
}
