//! The provision wizard's IO from the event loop: the provider's sources listed and the plan
//! made with the headless command's planner, each in a task that reports through the app
//! channel.
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::app::action::{Action, AppEvent};
use crate::app::provision::{ProvisionEffect, ProvisionUpdate, SourceChoice};
use crate::app::state::AppState;
use crate::cluster_lifecycle::provider_named;
use crate::config::Config;
use crate::discovery::Cluster;
use crate::opennebula::auth::OneEnvironment;
use crate::provision::cluster::{join_checks, machine_config_endpoint, names_in_use};
use crate::provision::{PlanRequest, Provider, ProviderClients, plan};

pub(super) type Kubeconfig = Option<kube::config::Kubeconfig>;

fn send(app: &mpsc::Sender<AppEvent>, update: ProvisionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Provision(Box::new(update))).await;
    }
}

pub(super) fn provider(
    config: &Config,
    env: &OneEnvironment,
    name: &str,
) -> Result<Provider, String> {
    provider_named(config, env, name)
        .map(|(provider, _)| provider)
        .map_err(|e| e.to_string())
}

async fn list_sources(provider: Provider) -> Result<Vec<SourceChoice>, String> {
    match &provider.clients {
        ProviderClients::Templates(client) => client
            .templates()
            .await
            .map(|list| {
                list.into_iter()
                    .map(|t| SourceChoice {
                        id: t.id,
                        name: t.name,
                        roles: Vec::new(),
                    })
                    .collect()
            })
            .map_err(|e| e.to_string()),
        ProviderClients::Flow { flow, .. } => flow
            .services()
            .await
            .map(|list| {
                list.into_iter()
                    .map(|s| SourceChoice {
                        id: s.id,
                        name: s.name,
                        roles: s.roles.into_iter().map(|r| r.name).collect(),
                    })
                    .collect()
            })
            .map_err(|e| e.to_string()),
    }
}

/// Runs one effect of the wizard; what comes back is fed to update.
pub(super) fn perform(
    state: &AppState,
    effect: ProvisionEffect,
    app: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let io = ProvisionIo {
        one_env: Arc::clone(&state.provision.one_env),
        kubeconfig: state.provision.kubeconfig.clone(),
        app: app.clone(),
    };
    match effect {
        ProvisionEffect::ListSources { cluster, provider } => {
            let config = Arc::clone(&state.provision.config);
            tokio::spawn(io.list_sources(config, cluster, provider));
        }
        ProvisionEffect::Plan {
            cluster: name,
            asked,
            config,
            request,
        } => {
            let found = super::cluster(state, &name);
            tokio::spawn(io.plan(found, name, asked, config, request));
        }
    }
    None
}

/// What a provisioning task (the wizard's, a journal's follower) takes from the console:
/// OpenNebula's environment, the kubeconfig, and the app channel it reports on.
pub(super) struct ProvisionIo {
    pub(super) one_env: Arc<OneEnvironment>,
    pub(super) kubeconfig: Kubeconfig,
    pub(super) app: mpsc::Sender<AppEvent>,
}

impl ProvisionIo {
    /// The provider's templates or services, for the plan form.
    async fn list_sources(self, config: Arc<Config>, cluster: String, name: String) {
        let result = match provider(&config, &self.one_env, &name) {
            Ok(p) => list_sources(p).await,
            Err(e) => Err(e),
        };
        let update = ProvisionUpdate::Sources {
            cluster,
            provider: name,
            result,
        };
        send(&self.app, update).await;
    }
    /// The plan, made with the headless command's planner and the names already taken, and its
    /// machine config's endpoint (read here: the wizard's guards are evaluated in update).
    async fn plan(
        self,
        found: Result<Cluster, String>,
        cluster: String,
        asked: u64,
        planning: Box<Config>,
        request: PlanRequest,
    ) {
        let result = async {
            let found = found?;
            let name = request.provider.clone().unwrap_or_default();
            let provider = provider(&planning, &self.one_env, &name)?;
            let (checks, _) = join_checks(&found, self.kubeconfig.as_ref()).await?;
            let taken = names_in_use(&checks).await;
            plan(&planning, &provider, &request, &taken)
                .await
                .map(Box::new)
                .map_err(|e| e.to_string())
        }
        .await;
        let machine_config_endpoint = result
            .as_ref()
            .ok()
            .and_then(|p| machine_config_endpoint(p));
        let update = ProvisionUpdate::Planned {
            cluster,
            asked,
            result,
            machine_config_endpoint,
        };
        send(&self.app, update).await;
    }
}
