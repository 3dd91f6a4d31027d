//! The provision wizard's IO (its screen tasks): the provider's sources listed
//! (`Provider::sources`) and the plan made with the headless command's planner, each in a
//! task that tells the screen.
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::app::action::AppEvent;
use crate::app::state::AppState;
use crate::cluster_lifecycle::provider_named;
use crate::config::Config;
use crate::opennebula::auth::OneEnvironment;
use crate::provision::cluster::{join_checks, machine_config_endpoint, names_in_use};
use crate::provision::{Provider, plan};
use crate::views::provision::{NAME, ProvisionNews, ProvisionTask};

pub(super) fn provider(
    config: &Config,
    env: &OneEnvironment,
    name: &str,
) -> Result<Provider, String> {
    provider_named(config, env, name)
        .map(|(provider, _)| provider)
        .map_err(|e| e.to_string())
}

/// Runs one task of the wizard; its answer goes to the screen.
pub(super) fn perform(state: &AppState, task: ProvisionTask, app: &mpsc::Sender<AppEvent>) {
    let one_env = Arc::clone(&state.provision.one_env);
    match task {
        ProvisionTask::ListSources {
            cluster,
            provider: name,
        } => {
            let config = Arc::clone(&state.provision.config);
            super::answer(app, NAME, async move {
                let result = async {
                    let provider = provider(&config, &one_env, &name)?;
                    provider.sources().await.map_err(|e| e.to_string())
                };
                let result = result.await;
                ProvisionNews::Sources {
                    cluster,
                    provider: name,
                    result,
                }
            });
        }
        ProvisionTask::Plan {
            cluster,
            asked,
            config: planning,
            request,
        } => {
            let found = super::cluster(state, &cluster);
            let kubeconfig = state.provision.kubeconfig.clone();
            super::answer(app, NAME, async move {
                // The plan, made with the headless command's planner and the names already
                // taken, and its machine config's endpoint (for the wizard's guards).
                let result = async {
                    let found = found?;
                    let name = request.provider.clone().unwrap_or_default();
                    let provider = provider(&planning, &one_env, &name)?;
                    let (checks, _) = join_checks(&found, kubeconfig.as_ref()).await?;
                    let taken = names_in_use(&checks).await;
                    let planned = plan(&planning, &provider, &request, &taken).await;
                    planned.map(Box::new).map_err(|e| e.to_string())
                }
                .await;
                let endpoint = result
                    .as_ref()
                    .ok()
                    .and_then(|p| machine_config_endpoint(p));
                ProvisionNews::Planned {
                    cluster,
                    asked,
                    result,
                    machine_config_endpoint: endpoint,
                }
            });
        }
    }
}
