//! The simulated Talos fleet: every node of a scenario serves apid's gRPC API over mutual TLS on
//! its own loopback address, with a CA, client certificates and a talosconfig written into the
//! state directory. `SimFleet::start` is the entry point; `FleetState` is the shared node state.
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

// The layers: model at the bottom; kube_api and registry; node_life; talos_api; opennebula;
// capi on top. A layer imports only those below it (tests/architecture.rs).
pub mod capi;
pub mod kube_api;
pub mod model;
pub mod node_life;
pub mod opennebula;
pub mod registry;
pub mod talos_api;

pub use model::clock::SimClock;
pub use model::error::SimError;
pub use model::injection::NoSuchNode;
pub use model::record::{BootstrapRequest, FileRead, MutatingCall, ServedCall, UpgradeWindow};
pub use model::scenario::{
    ClusterSpec, EtcdAlarmKind, Faults, NodeRole, NodeSpec, OneSpec, Scenario, VmQuotaSpec,
};
pub use model::state::{
    ClusterState, ComponentStatus, EtcdCluster, FleetState, MachineStage, NodeKubernetes,
    NodeStatus, SimNode,
};

use model::core::Core;
use model::pki;
use taloscope_proto::cluster::cluster_service_server::ClusterServiceServer;
use taloscope_proto::cosi::resource::state_server::StateServer;
use taloscope_proto::machine::image_service_server::ImageServiceServer;
use taloscope_proto::machine::lifecycle_service_server::LifecycleServiceServer;
use taloscope_proto::machine::machine_service_server::MachineServiceServer;

/// Named in errors about a scenario's own clusters.
const BUILTIN_LIST: &str = "capi, capi-stuck-rollout, capi-orphaned-member, capi-etcd-stopped";

/// How to run a sim.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Where the talosconfig is written.
    pub state_dir: PathBuf,
    /// Simulated seconds per real second (reboots, upgrades); larger is faster.
    pub time_scale: f64,
}

/// A running simulated fleet.
pub struct SimFleet {
    core: Arc<Core>,
    talosconfig: PathBuf,
    kubeconfig: PathBuf,
    kube: kube_api::clusters::KubeSide,
    one: Option<opennebula::OneSim>,
    capi: Option<capi::CapiSim>,
}

impl SimFleet {
    /// Starts every node's listener and writes the talosconfig; returns once all are up.
    pub async fn start(scenario: Scenario, opts: SimOptions) -> Result<SimFleet, SimError> {
        let clock = SimClock::new(opts.time_scale).ok_or(SimError::TimeScale(opts.time_scale))?;
        ensure_file_limit(scenario.node_count())?;
        std::fs::create_dir_all(&opts.state_dir).map_err(|source| SimError::WriteState {
            path: opts.state_dir.clone(),
            source,
        })?;
        let pki = pki::Pki::new()?;
        let fleet = Arc::new(FleetState::new(&scenario.clusters));
        let core = Arc::new(Core {
            fleet: fleet.clone(),
            pki,
            clock,
            started: std::time::Instant::now(),
            started_wall: std::time::SystemTime::now(),
            routes: Mutex::new(None),
            stop: watch::channel(false).0,
        });
        let _ = fleet.core.set(Arc::downgrade(&core));
        let routes = tonic::service::Routes::new(MachineServiceServer::new(
            talos_api::machine::MachineApi::new(core.clone()),
        ))
        .add_service(ImageServiceServer::new(
            talos_api::lifecycle::ImageApi::new(core.clone()),
        ))
        .add_service(LifecycleServiceServer::new(
            talos_api::lifecycle::LifecycleApi::new(core.clone()),
        ))
        .add_service(StateServer::new(talos_api::cosi::StateApi::new(
            core.clone(),
        )))
        .add_service(ClusterServiceServer::new(
            talos_api::health::ClusterApi::new(core.clone()),
        ))
        .prepare();
        *core.routes.lock().unwrap_or_else(|e| e.into_inner()) = Some(routes);
        for cluster in fleet.clusters() {
            for n in cluster.nodes() {
                node_life::node::start(&core, n).map_err(|source| SimError::Listen {
                    cluster: cluster.name().to_string(),
                    node: n.name().to_string(),
                    address: n.address().to_string(),
                    source,
                })?;
            }
            cluster.elect_if_leaderless();
        }
        let kube = match kube_api::clusters::start(&fleet, &scenario, &opts.state_dir).await {
            Ok(kube) => kube,
            Err(e) => {
                stop_nodes(&core);
                return Err(e);
            }
        };
        let talosconfig = opts.state_dir.join("talosconfig");
        let kubeconfig = opts.state_dir.join("kubeconfig");
        let mut sim = SimFleet {
            core,
            talosconfig,
            kubeconfig,
            kube,
            one: None,
            capi: None,
        };
        if let Err(e) = sim.write_talosconfig(&scenario) {
            sim.stop_all();
            return Err(e);
        }
        let one = opennebula::OneSim::start(
            sim.core.fleet.clone(),
            sim.core.clock,
            sim.core.pki.ca_pem(),
            &opts.state_dir,
            &scenario.opennebula,
        )
        .await;
        match one {
            Ok(one) => sim.one = Some(one),
            Err(e) => {
                sim.stop_all();
                return Err(e);
            }
        }
        if let Some(spec) = scenario.capi.clone()
            && let Err(e) = sim.start_capi(&scenario, spec)
        {
            sim.stop_all();
            return Err(e);
        }
        Ok(sim)
    }

    /// Makes the management cluster's API serve the CAPI objects and starts their controller.
    fn start_capi(&mut self, scenario: &Scenario, spec: capi::CapiSpec) -> Result<(), SimError> {
        let index_of = |name: &str| scenario.clusters.iter().position(|c| c.name == name);
        let missing = |name: &str| SimError::UnknownScenario {
            name: format!("{} (no cluster {name})", scenario.name),
            builtins: BUILTIN_LIST.into(),
        };
        let mgmt = index_of(&spec.management).ok_or_else(|| missing(&spec.management))?;
        let work = index_of(&spec.workload).ok_or_else(|| missing(&spec.workload))?;
        let (Some(api), Some(drain), Some(server), Some(one)) = (
            self.kube.server(mgmt),
            self.kube.server(work).map(|w| w.drainer()),
            self.kube.url(work).map(String::from),
            self.one.as_ref(),
        ) else {
            return Err(missing(&spec.management));
        };
        let kubeconfig = kube_api::kubeconfig::only_context(
            &self.kubeconfig,
            &format!("admin@{}", spec.workload),
        )
        .map_err(|source| SimError::ReadScenario {
            path: self.kubeconfig.clone(),
            source,
        })?;
        let (crt_pem, key_pem) = self
            .core
            .pki
            .client_cert(&["os:admin"], pki::Validity::Current)?;
        let talos = capi::TalosAccess {
            ca_pem: self.core.pki.ca_pem().to_string(),
            crt_pem,
            key_pem,
        };
        self.capi = Some(capi::CapiSim::start(
            spec,
            self.core.fleet.clone(),
            one.capone_side(),
            self.core.clock,
            api,
            capi::WorkloadAccess {
                server,
                kubeconfig,
                drain,
            },
            talos,
        ));
        Ok(())
    }

    /// The Cluster API management cluster of the `capi` scenarios.
    pub fn capi(&self) -> Option<&capi::CapiSim> {
        self.capi.as_ref()
    }

    fn write_talosconfig(&self, scenario: &Scenario) -> Result<(), SimError> {
        let pki = &self.core.pki;
        let mut contexts = Vec::new();
        for (spec, cluster) in scenario.clusters.iter().zip(self.core.fleet.clusters()) {
            let endpoints: Vec<String> = cluster
                .nodes()
                .iter()
                .filter(|n| n.role() == NodeRole::ControlPlane)
                .map(|n| n.endpoint())
                .collect();
            let nodes: Vec<String> = cluster
                .nodes()
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    spec.talosconfig_nodes
                        .as_ref()
                        .is_none_or(|only| only.contains(i))
                })
                .map(|(_, n)| n.address().to_string())
                .collect();
            let mut add =
                |suffix: &str, roles: &[&str], validity: pki::Validity| -> Result<(), SimError> {
                    let (crt_pem, key_pem) = pki.client_cert(roles, validity)?;
                    contexts.push(pki::TalosContext {
                        name: format!("{}{suffix}", cluster.name()),
                        endpoints: endpoints.clone(),
                        nodes: nodes.clone(),
                        crt_pem,
                        key_pem,
                    });
                    Ok(())
                };
            add("", &["os:admin"], pki::Validity::Current)?;
            add("-reader", &["os:reader"], pki::Validity::Current)?;
            if spec.expired_client_context {
                add("-expired", &["os:admin"], pki::Validity::Expired)?;
            }
            if spec.expiring_client_context {
                add("-expiring", &["os:admin"], pki::Validity::ExpiresInDays(10))?;
            }
        }
        let text = pki::render_talosconfig(pki.ca_pem(), &contexts);
        pki::write_private(&self.talosconfig, &text)
    }

    /// `DIR/talosconfig`.
    pub fn talosconfig_path(&self) -> PathBuf {
        self.talosconfig.clone()
    }

    /// `DIR/kubeconfig`, with an `admin@<cluster>` context per cluster.
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.kubeconfig.clone()
    }

    /// The Kubernetes API server URL of the cluster at `index` (scenario order).
    pub fn kube_api_url(&self, index: usize) -> Option<&str> {
        self.kube.url(index)
    }

    /// The Kubernetes API server of the cluster at `index` (scenario order): its record of
    /// cordons and evictions, and the disruption-budget knob.
    pub fn kube_api(&self, index: usize) -> Option<&kube_api::KubeApiServer> {
        self.kube.server(index)
    }

    /// The shared node state.
    pub fn state(&self) -> Arc<FleetState> {
        self.core.fleet.clone()
    }

    /// The sim's CA certificate (PEM), as written into the talosconfig.
    pub fn ca_pem(&self) -> String {
        self.core.pki.ca_pem().to_string()
    }

    /// A client certificate of the sim's CA carrying `roles` (PEM cert, Talos key PEM), for
    /// callers with roles no talosconfig context has (`os:operator`, `os:etcd:backup`).
    pub fn client_cert(&self, roles: &[&str]) -> Result<(String, String), SimError> {
        self.core.pki.client_cert(roles, pki::Validity::Current)
    }

    /// The simulated clock (time scale).
    pub fn clock(&self) -> SimClock {
        self.core.clock
    }

    /// The OpenNebula and OneFlow sims (endpoints, `one_auth`, `taloscope.yaml`).
    pub fn opennebula(&self) -> Option<&opennebula::OneSim> {
        self.one.as_ref()
    }

    fn stop_all(&self) {
        if let Some(capi) = &self.capi {
            capi.stop();
        }
        if let Some(one) = &self.one {
            one.stop();
        }
        self.kube.stop();
        stop_nodes(&self.core);
    }

    /// Stops every listener and open connection.
    pub async fn shutdown(self) {
        self.stop_all();
        tokio::task::yield_now().await;
    }
}

impl Drop for SimFleet {
    fn drop(&mut self) {
        self.stop_all();
    }
}

fn stop_nodes(core: &Core) {
    core.stop.send_replace(true);
    for cluster in core.fleet.clusters() {
        for n in cluster.nodes() {
            node_life::apid_listener::stop_serving(n);
            n.lock().listener = None;
            n.events.close();
        }
    }
    core.routes.lock().unwrap_or_else(|e| e.into_inner()).take();
}

/// 5,000 listeners need 5,000 descriptors: raise the soft limit to the hard one when short.
fn ensure_file_limit(nodes: usize) -> Result<(), SimError> {
    let needed = nodes as u64 + 256;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read or write the struct passed by reference.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Ok(());
        }
        if limit.rlim_cur >= needed {
            return Ok(());
        }
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            limit.rlim_cur = limit.rlim_max;
            tracing::info!("raised the open-file limit to {}", limit.rlim_cur);
        }
    }
    if limit.rlim_cur < nodes as u64 {
        return Err(SimError::FileLimit {
            nodes,
            limit: limit.rlim_cur,
        });
    }
    Ok(())
}

/// A tokio runtime with two workers (these are 2-core machines) for a sim served by a process
/// of its own: the `sim` command, and the demo beside the console's runtime.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Reads a talosconfig path's directory; used by the `sim` command's ready line.
pub fn ready_line(talosconfig: &Path) -> String {
    format!("ready talosconfig={}", talosconfig.display())
}
