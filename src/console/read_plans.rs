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
use crate::app::screens::ScreenNews;
use crate::capi_scale::{ScaleRequest, ScaleSources, prepare_scale};
use crate::cluster_lifecycle::{DeleteSources, prepare_delete};
use crate::discovery::Discovery;
use crate::fleet::CollectOptions;
use crate::upgrade::RunOptions;
use crate::upgrade::capi::{CapiAccess, CapiPlanError, CapiProduct, VmTemplates};
use crate::upgrade::launch::connect as connect_cluster;
use crate::views::capi_upgrade::{self, CapiPlanRead, CapiPlanRequest};
use crate::views::cluster_plan::{Asked, ClusterPlanNews, ClusterPlanTask, NAME, Planned};

/// Reading a plan: the create journal, the provider's VMs, the Cluster API tree, the
/// machine templates, the workload cluster's etcd and status, the rollout Lease.
const PLAN_BOUND: Duration = Duration::from_secs(60);

/// `read` within [`PLAN_BOUND`], or why not.
async fn within_bound<T>(read: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::time::timeout(PLAN_BOUND, read)
        .await
        .unwrap_or_else(|_| Err(format!("the plan was not read within {PLAN_BOUND:?}")))
}

async fn send(app: mpsc::Sender<AppEvent>, news: ClusterPlanNews) {
    let _ = app
        .send(AppEvent::Screen(ScreenNews::new(NAME, news)))
        .await;
}

/// Reads the plan the cluster plan screen asks for; it comes back to it as news.
pub(super) fn cluster_plan(
    console: &Console,
    task: ClusterPlanTask,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let cluster = task.cluster;
    match task.asked {
        Asked::Delete => delete(console, cluster, app_tx),
        Asked::Scale { request, .. } => scale(console, cluster, request, app_tx),
    }
}

/// Reads the delete plan of `cluster`.
fn delete(console: &Console, cluster: String, app_tx: &mpsc::Sender<AppEvent>) {
    let state = &console.state;
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    let discovery = Discovery {
        clusters: state.clusters.clone(),
        kubeconfig: state.provision.kubeconfig.clone(),
        ..Discovery::default()
    };
    let state_dir = console.paths.state_dir.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let sources = DeleteSources {
            config: &config,
            discovery: &discovery,
            one_env: &one_env,
            state_dir: &state_dir,
        };
        let read = within_bound(prepare_delete(&sources, &cluster, &[])).await;
        let read = read.map(|p| Planned::Delete(p.plan, p.warnings));
        send(app, ClusterPlanNews { cluster, read }).await;
    });
}

/// Both sides of a cluster being connected to.
pub(super) type Connecting = Pin<Box<dyn Future<Output = Result<ScaleSources, String>> + Send>>;

/// What connecting to both sides of `cluster` needs, taken from the console's state.
pub(super) fn connect(console: &Console, cluster: &str) -> Result<Connecting, String> {
    let state = &console.state;
    let found = state
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .cloned()
        .ok_or_else(|| format!("cluster {cluster} is no longer discovered"))?;
    let owner = state
        .fleet
        .capi
        .owner(cluster)
        .cloned()
        .ok_or_else(|| format!("{cluster} is no longer owned by Cluster API"))?;
    let kubeconfig = state.provision.kubeconfig.clone().ok_or_else(|| {
        "no kubeconfig was read: the management cluster cannot be reached".to_string()
    })?;
    Ok(Box::pin(async move {
        ScaleSources::connect(&found, &owner, &kubeconfig, CollectOptions::default()).await
    }))
}

/// Reads the scale plan `request` of `cluster`.
fn scale(
    console: &Console,
    cluster: String,
    request: ScaleRequest,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let sources = connect(console, &cluster);
    let me = console.state.identity.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let read = async {
            let sources = sources?.await?;
            prepare_scale(&sources, &request, &me)
                .await
                .map_err(|e| e.to_string())
        };
        let read = within_bound(read).await.map(Planned::Scale);
        send(app, ClusterPlanNews { cluster, read }).await;
    });
}

/// Reads the plan `request` asks for; it comes back as the CAPI-way plan screen's news.
pub(super) fn capi_upgrade(
    console: &Console,
    request: CapiPlanRequest,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let state = &console.state;
    let kubeconfig = state.provision.kubeconfig.clone();
    let cluster = state
        .clusters
        .iter()
        .find(|c| c.name == request.cluster)
        .cloned();
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    let app = app_tx.clone();
    tokio::spawn(async move {
        let read = async {
            let kubeconfig = kubeconfig.ok_or_else(|| {
                format!(
                    "no kubeconfig to reach the management cluster {}",
                    request.owner.management
                )
            })?;
            let cluster = cluster.ok_or_else(|| {
                format!(
                    "cluster {} is no longer in the talosconfig",
                    request.cluster
                )
            })?;
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
            // The workload cluster's own Kubernetes API, as the runner connects to it.
            let options = RunOptions {
                kubeconfig: Some(kubeconfig),
                ..RunOptions::default()
            };
            let kube = connect_cluster(&cluster, &options)
                .await
                .ok()
                .and_then(|o| o.kube);
            let facts = access.tree_and_status(&plan, kube, options.client).await;
            let vm_templates: VmTemplates = match request.product {
                CapiProduct::TalosOs => {
                    crate::provision::provider::provider_template_names(&config, &cluster, &one_env)
                        .await
                }
                CapiProduct::Kubernetes => None,
            };
            Ok::<_, String>((plan, facts, vm_templates))
        };
        let planned = match within_bound(read).await {
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
        };
        let news = ScreenNews::new(capi_upgrade::NAME, planned);
        let _ = app.send(AppEvent::Screen(news)).await;
    });
}
