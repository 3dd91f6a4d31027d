//! The `capi` scenario's management cluster: the CAPI, Talos-provider and OpenNebula-provider
//! objects its Kubernetes API serves (kubectl can list, patch, scale, create and delete them) and
//! a controller, driven by the sim clock, that reconciles them the way the providers do.
//!
//! Facts for clients (scenario `capi`; `capi-stuck-rollout`, `capi-orphaned-member`,
//! `capi-etcd-stopped`, `capi-etcd-leaving` and `capi-no-node-ref` add one stuck fault each; `capi-clusterctl` serves the kubeadm
//! providers' and Cluster API Provider AWS's CRDs beside, so `controlplane.*`, `bootstrap.*`
//! and `infrastructure.*` prefer v1beta2, which none of the scenario's objects are served in;
//! `capi-fqdn` names the workload's Nodes `<hostname>.example.internal` in each Machine's
//! nodeRef and `Hostname` address, its etcd members keeping the short hostname;
//! `capi-drain-blocked` deletes a worker Machine whose drain a PodDisruptionBudget refuses):
//! - Talos clusters `capi-mgmt` (one control plane `cp-1`) and `capi-work`; talosconfig
//!   contexts `capi-mgmt`, `capi-work`; kube contexts `admin@capi-mgmt` (the management cluster,
//!   serving the CAPI CRDs) and `admin@capi-work` (the workload cluster).
//! - In namespace `default` of the management cluster: Cluster `capi-work` (ONECluster
//!   `capi-work`), TalosControlPlane `capi-work-cp` (3 replicas; 1 in `capi-etcd-stopped`),
//!   MachineDeployment `capi-work-md-0` (2 replicas) with MachineSet `capi-work-md-0-<hash>`,
//!   ONEMachineTemplates `capi-work-cp` and `capi-work-md-0` (spec.template.spec.
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
pub(crate) mod machine_deletion;
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

use crate::kube_api::NodeDrainer;
use crate::model::clock::SimClock;
use crate::model::state::FleetState;
use crate::opennebula::capone_side::CaponeSide;
use store::CapiStore;

pub use crate::model::capi_scenarios::{CapiSpec, StuckFault};

/// Switches of the controller.
#[derive(Default)]
pub(crate) struct Knobs {
    no_etcd_audit: AtomicBool,
    /// The next control-plane Machine created gets no VM (NodeRefLessSurge).
    pub stall_next_control_plane: AtomicBool,
    /// A worker Machine is to be deleted once it has a Node (DrainBlocked).
    pub delete_a_worker_once_it_has_a_node: AtomicBool,
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
    /// Drains the workload cluster's nodes (a deleting Machine's drain).
    pub workload_drain: NodeDrainer,
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

pub(crate) use crate::model::capi_scenarios::ROLLOUT_VERSION;

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
            workload_drain: workload.drain.clone(),
            spec,
            knobs: Knobs::default(),
            released: Default::default(),
        });
        seed::seed(&ctx, &workload);
        seed::inject(&ctx);
        mgmt_api.serve_custom(store);
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
        seed::delete_a_worker_for_a_blocked_drain(&ctx);
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
