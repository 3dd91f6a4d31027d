//! The plans the plan screens show, read off the UI thread with the functions the headless
//! commands call, each within one bound: a cluster's delete (`prepare_delete`, as `taloscope
//! delete`), a CAPI scale (`prepare_scale`, as `taloscope scale`; the connection to both sides
//! of the cluster is shared with its run on the console's one runner, `run_operation`) and a
//! CAPI-way upgrade (`CapiAccess::read_plan` and `tree_and_status`, as `taloscope upgrade` /
//! `upgrade-k8s` on a cluster Cluster API owns, with the provider's VM templates).
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::AppEvent;
use crate::capi_scale::{ScaleRequest, ScaleSources, prepare_scale};
use crate::cluster_lifecycle::{DeleteSources, prepare_delete};
use crate::discovery::Discovery;
use crate::fleet::CollectOptions;
use crate::upgrade::RunOptions;
use crate::upgrade::capi::{CapiAccess, CapiPlanError, CapiProduct, VmTemplates};
use crate::views::capi_upgrade::{self, CapiPlanRead, CapiPlanRequest};
use crate::views::cluster_plan::{Asked, ClusterPlanNews, ClusterPlanTask, NAME, Planned};

/// Reading a plan: the create journal, the provider's VMs, the Cluster API tree, the
/// machine templates, the workload cluster's etcd and status, the rollout Lease.
const PLAN_BOUND: Duration = Duration::from_secs(60);

/// Reads the plan the cluster plan screen asks for; it comes back to it as news.
pub(super) fn cluster_plan(
    console: &Console,
    task: ClusterPlanTask,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let cluster = task.cluster;
    let read = match task.asked {
        Asked::Delete => delete(console, cluster.clone()),
        Asked::Scale { request, .. } => scale(console, cluster.clone(), request),
    };
    super::answer(app_tx, NAME, async move {
        let read = super::within(PLAN_BOUND, "the plan", read).await;
        ClusterPlanNews { cluster, read }
    });
}

/// A plan being read.
type Reading<T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send>>;

/// Reads the delete plan of `cluster`.
fn delete(console: &Console, cluster: String) -> Reading<Planned> {
    let state = &console.state;
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    let discovery = Discovery {
        clusters: state.clusters.clone(),
        kubeconfig: state.provision.kubeconfig.clone(),
        ..Discovery::default()
    };
    let state_dir = console.paths.state_dir.clone();
    Box::pin(async move {
        let sources = DeleteSources {
            config: &config,
            discovery: &discovery,
            one_env: &one_env,
            state_dir: &state_dir,
        };
        let prepared = prepare_delete(&sources, &cluster, &[]).await?;
        Ok(Planned::Delete(prepared.plan, prepared.warnings))
    })
}

/// Connects to both sides of `cluster`, with what that needs taken from the console's state.
pub(super) fn connect(console: &Console, cluster: &str) -> Reading<ScaleSources> {
    let state = &console.state;
    let found = super::cluster(state, cluster);
    let owner = (state.fleet.capi.owner(cluster).cloned())
        .ok_or_else(|| format!("{cluster} is no longer owned by Cluster API"));
    let kubeconfig = (state.provision.kubeconfig.clone()).ok_or_else(|| {
        "no kubeconfig was read: the management cluster cannot be reached".to_string()
    });
    Box::pin(async move {
        let (found, owner, kubeconfig) = (found?, owner?, kubeconfig?);
        ScaleSources::connect(&found, &owner, &kubeconfig, CollectOptions::default()).await
    })
}

/// Reads the scale plan `request` of `cluster`.
fn scale(console: &Console, cluster: String, request: ScaleRequest) -> Reading<Planned> {
    let sources = connect(console, &cluster);
    let me = console.state.identity.clone();
    Box::pin(async move {
        let prepared = prepare_scale(&sources.await?, &request, &me).await;
        prepared.map(Planned::Scale).map_err(|e| e.to_string())
    })
}

/// Reads the plan `request` asks for; it comes back as the CAPI-way plan screen's news.
pub(super) fn capi_upgrade(
    console: &Console,
    request: CapiPlanRequest,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let state = &console.state;
    let kubeconfig = state.provision.kubeconfig.clone();
    let cluster = super::cluster(state, &request.cluster);
    // The workload cluster's own Kubernetes API, as the runner connects to it.
    let connecting = super::connect(state, &request.cluster);
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    super::answer(app_tx, capi_upgrade::NAME, async move {
        let read = async {
            let kubeconfig = kubeconfig.ok_or_else(|| {
                format!(
                    "no kubeconfig to reach the management cluster {}",
                    request.owner.management
                )
            })?;
            let cluster = cluster?;
            let access = CapiAccess::connect(&kubeconfig, &request.owner)
                .await
                .map_err(|e| format!("management cluster {}: {e}", request.owner.management))?;
            let mut plan = access
                .read_plan(
                    &request.cluster,
                    request.product,
                    (&request.version, &request.target),
                )
                .await?
                .map_err(|e: CapiPlanError| e.to_string())?;
            plan.machine_timeout_secs = RunOptions::default().node_timeout.as_secs();
            let kube = connecting.await.ok().and_then(|o| o.kube);
            let facts = access
                .tree_and_status(&plan, kube, Default::default())
                .await;
            let vm_templates: VmTemplates = match request.product {
                CapiProduct::TalosOs => {
                    crate::provision::provider::provider_template_names(&config, &cluster, &one_env)
                        .await
                }
                CapiProduct::Kubernetes => None,
            };
            Ok::<_, String>((plan, facts, vm_templates))
        };
        match super::within(PLAN_BOUND, "the plan", read).await {
            Ok((plan, facts, vm_templates)) => CapiPlanRead {
                request,
                plan: Ok(plan),
                facts,
                vm_templates,
            },
            Err(e) => CapiPlanRead {
                request,
                plan: Err(e.clone()),
                facts: Err(e),
                vm_templates: None,
            },
        }
    });
}
