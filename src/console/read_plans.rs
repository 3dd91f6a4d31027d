//! The plans the cluster plan screen shows, read off the UI thread with the functions the
//! headless commands call, each within one bound: a cluster's delete (`prepare_delete`, as
//! `taloscope delete`), a CAPI scale (`prepare_scale`, as `taloscope scale`; the connection to
//! both sides of the cluster is shared with its run on the console's one runner,
//! `run_operation`) and a CAPI-way upgrade (`read_capi_plan`, as `taloscope upgrade` /
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
use crate::provision::provider::provider_template_names;
use crate::upgrade::RunOptions;
use crate::upgrade::capi::{CapiPlanAsk, read_capi_plan};
use crate::views::cluster_plan::{
    Asked, CapiPlanRequest, ClusterPlanNews, ClusterPlanTask, NAME, Planned,
};

/// Reading a plan: the create journal, the provider's VMs, the Cluster API tree, the
/// machine templates, the workload cluster's etcd and status, the rollout Lease.
const PLAN_BOUND: Duration = Duration::from_secs(60);

/// Reads the plan the cluster plan screen asks for; it comes back to it as news.
pub(super) fn cluster_plan(
    console: &Console,
    task: ClusterPlanTask,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let cluster = task.cluster.clone();
    let read = match &task.asked {
        Asked::Delete => delete(console, cluster),
        Asked::Scale { request, .. } => scale(console, cluster, request.clone()),
        Asked::Upgrade(request) => upgrade(console, request.clone()),
    };
    super::answer(app_tx, NAME, async move {
        let read = super::within(PLAN_BOUND, "the plan", read).await;
        ClusterPlanNews { task, read }
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

/// Reads the CAPI-way upgrade plan `request` asks for, with what its guards look at.
fn upgrade(console: &Console, request: CapiPlanRequest) -> Reading<Planned> {
    let state = &console.state;
    let kubeconfig = state.provision.kubeconfig.clone();
    let cluster = super::cluster(state, &request.cluster);
    // The workload cluster's own Kubernetes API, as the runner connects to it.
    let connecting = super::connect(state, &request.cluster);
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    Box::pin(async move {
        let cluster = cluster?;
        let ask = CapiPlanAsk {
            owner: &request.owner,
            cluster: &request.cluster,
            product: request.product,
            target: (&request.version, &request.target),
            machine_timeout_secs: RunOptions::default().node_timeout.as_secs(),
        };
        let kube = connecting.await.ok().and_then(|o| o.kube);
        let templates = provider_template_names(&config, &cluster, &one_env);
        let read = read_capi_plan(kubeconfig.as_ref(), ask, kube, templates).await;
        let read = read.map_err(|e| e.to_string())?;
        Ok(Planned::Upgrade(read.plan, read.facts, read.vm_templates))
    })
}
