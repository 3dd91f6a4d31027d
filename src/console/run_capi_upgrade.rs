//! The CAPI-way upgrade's IO for the event loop: its plan read off the UI thread with
//! `CapiAccess::read_plan` and `tree_and_status` (what `taloscope upgrade` / `upgrade-k8s` read
//! on a cluster Cluster API owns) and the provider's VM templates, reported as an app event.
//! An approved plan runs on the console's one operation runner (`run_operation`).
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::AppEvent;
use crate::app::capi_upgrade::{CapiPlanRead, CapiPlanRequest};
use crate::upgrade::RunOptions;
use crate::upgrade::capi::{CapiAccess, CapiPlanError, CapiProduct, VmTemplates};
use crate::upgrade::launch::connect;

/// Reading the tree, the machine templates, the Secret's Talos endpoints and the status.
const PLAN_BOUND: Duration = Duration::from_secs(60);

/// Reads the plan `request` asks for; it comes back as `AppEvent::CapiUpgradePlanned`.
pub(super) fn plan(console: &Console, request: CapiPlanRequest, app_tx: &mpsc::Sender<AppEvent>) {
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
            let kube = connect(&cluster, &options).await.ok().and_then(|o| o.kube);
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
        let read = tokio::time::timeout(PLAN_BOUND, read)
            .await
            .unwrap_or_else(|_| Err(format!("the plan was not read within {PLAN_BOUND:?}")));
        let planned = match read {
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
        let _ = app
            .send(AppEvent::CapiUpgradePlanned(Box::new(planned)))
            .await;
    });
}
