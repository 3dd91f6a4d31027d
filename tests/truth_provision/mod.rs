//! The provision half of one_truth: for one cluster of a scenario with a provider, every role
//! on every provider planned through the console's wizard (its pure update step, the task it
//! asks for answered by the same functions the console's IO calls, its guards over the
//! console's fleet model) and through `provision --plan`'s functions, compared field by field.
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};
use taloscope::app::plan_screen::{AskedPlan, PlanHolder, set_guards};
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, Effect, update};
use taloscope::capi::read_owner;
use taloscope::config::{Config, MachineRole};
use taloscope::discovery::{Cluster, Discovery};
use taloscope::fleet::FleetModel;
use taloscope::guards::{Guard, GuardId};
use taloscope::opennebula::auth::OneEnvironment;
use taloscope::provision::cluster::{
    GuardInputs, check_guards, cluster_addresses, config_key, join_checks, machine_config_endpoint,
    names_in_use,
};
use taloscope::provision::provider::provider_for;
use taloscope::provision::{PlanRequest, Provider, ProviderClients, ProvisionPlan, connect, plan};
use taloscope::views::provision::{
    NAME, ProvisionNews, ProvisionScreen, ProvisionTask, SourceChoice, Wizard,
};

use super::talos_common::{Sim, within};

const ROLES: [MachineRole; 2] = [MachineRole::Worker, MachineRole::Controlplane];

fn no_env() -> OneEnvironment {
    OneEnvironment::default()
}

fn provider_named(config: &Config, name: &str) -> Provider {
    let cfg = config.providers.get(name).expect("configured provider");
    connect(name, cfg, &no_env()).expect("provider")
}

/// The provider's list as the console's IO gives it to the wizard.
async fn sources(provider: &Provider) -> Vec<SourceChoice> {
    match &provider.clients {
        ProviderClients::Templates(client) => client
            .templates()
            .await
            .expect("templates")
            .into_iter()
            .map(|t| SourceChoice {
                id: t.id,
                name: t.name,
                roles: Vec::new(),
            })
            .collect(),
        ProviderClients::Flow { flow, .. } => flow
            .services()
            .await
            .expect("services")
            .into_iter()
            .map(|s| SourceChoice {
                id: s.id,
                name: s.name,
                roles: s.roles.into_iter().map(|r| r.name).collect(),
            })
            .collect(),
    }
}

fn provision_task(effects: Vec<Effect>) -> ProvisionTask {
    match effects.as_slice() {
        [Effect::Screen(t)] if t.get::<ProvisionTask>().is_some() => t
            .get::<ProvisionTask>()
            .cloned()
            .expect("the wizard's task"),
        other => panic!("expected one task of the wizard, got {other:?}"),
    }
}

/// A key pressed on the wizard.
fn key(state: &mut AppState, code: KeyCode) -> Vec<Effect> {
    update(state, Action::ScreenKey(KeyEvent::from(code)))
}

/// What the wizard's IO tells it.
fn tell(state: &mut AppState, news: ProvisionNews) {
    update(
        state,
        Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
    );
}

fn wizard(state: &AppState) -> &PlanHolder<Wizard> {
    let screen = state.screens.find::<ProvisionScreen>();
    screen.and_then(|s| s.plan.as_ref()).expect("wizard")
}

/// The console: the wizard on `cluster` with `provider` and `role` chosen, its plan asked for
/// and answered as the console's IO answers it. The wizard's plan and guards (worst first).
async fn wizard_plan(
    state: &mut AppState,
    cluster: &Cluster,
    kubeconfig: Option<&kube::config::Kubeconfig>,
    provider: &str,
    role: MachineRole,
) -> (Result<ProvisionPlan, String>, Vec<Guard>) {
    state.use_cluster(&cluster.name);
    state.screen = Screen::Cluster(Pane::Nodes);
    let mut effect = provision_task(update(state, Action::Open("provision")));
    loop {
        let ProvisionTask::ListSources { provider: p, .. } = &effect else {
            panic!("{effect:?}");
        };
        let list = sources(&provider_named(&state.provision.config, p)).await;
        let answer = ProvisionNews::Sources {
            cluster: cluster.name.clone(),
            provider: p.clone(),
            result: Ok(list),
        };
        tell(state, answer);
        if wizard(state).provider().map(|p| p.name.as_str()) == Some(provider) {
            break;
        }
        effect = provision_task(key(state, KeyCode::Char('l')));
    }
    if role == MachineRole::Controlplane {
        key(state, KeyCode::Down);
        key(state, KeyCode::Char('l'));
    }
    let ProvisionTask::Plan {
        asked,
        config,
        request,
        ..
    } = provision_task(key(state, KeyCode::Enter))
    else {
        panic!("expected the plan effect");
    };
    // What the console's IO does with the effect.
    let p = provider_named(&config, request.provider.as_deref().unwrap_or_default());
    let (checks, _) = join_checks(cluster, kubeconfig).await.expect("join checks");
    let taken = names_in_use(&checks).await;
    let result = plan(&config, &p, &request, &taken)
        .await
        .map(Box::new)
        .map_err(|e| e.to_string());
    let endpoint = result
        .as_ref()
        .ok()
        .and_then(|p| machine_config_endpoint(p));
    let answer = ProvisionNews::Planned {
        cluster: cluster.name.clone(),
        asked,
        result,
        machine_config_endpoint: endpoint,
    };
    tell(state, answer);
    let w = wizard(state);
    let plan = match &w.form.plan {
        AskedPlan::Ready(plan) => Ok((**plan).clone()),
        AskedPlan::Failed(e) => Err(e.clone()),
        other => panic!("{other:?}"),
    };
    (plan, w.guards.shown.clone())
}

/// `provision --context CLUSTER --role ROLE --provider PROVIDER --plan`, as commands/provision.rs
/// makes it: the plan and its guards (worst first, as the wizard lists them).
async fn command_plan(
    config: &Config,
    discovery: &Discovery,
    cluster: &Cluster,
    kubeconfig: Option<&kube::config::Kubeconfig>,
    provider: &str,
    role: MachineRole,
) -> (Result<ProvisionPlan, String>, Vec<Guard>) {
    let request = PlanRequest {
        cluster: config_key(config, cluster),
        role,
        count: 1,
        provider: Some(provider.to_string()),
        name_pattern: None,
    };
    let (name, cfg) = provider_for(config, &request).expect("provider");
    let p = connect(name, cfg, &no_env()).expect("provider");
    let (checks, _) = join_checks(cluster, kubeconfig).await.expect("join checks");
    let taken = names_in_use(&checks).await;
    let plan = match plan(config, &p, &request, &taken).await {
        Ok(plan) => plan,
        Err(e) => return (Err(e.to_string()), Vec::new()),
    };
    let inputs = GuardInputs {
        config: config.clone(),
        addresses: cluster_addresses(cluster),
        nodes: cluster.nodes().to_vec(),
        acks: Vec::new(),
        capi_owner: read_owner(kubeconfig, &discovery.clusters, &cluster.name).await,
    };
    let guards = check_guards(&plan, &inputs, &checks).await;
    let (mut shown, mut selected) = (Vec::new(), None::<GuardId>);
    set_guards(&mut shown, &mut selected, guards);
    (Ok(plan), shown)
}

/// How many provision plans of `cluster` were compared (none without a config entry).
pub async fn compare(
    sim: &Sim,
    discovery: &Discovery,
    fleet: &FleetModel,
    cluster: &Cluster,
    label: &str,
) -> usize {
    let Some(one) = sim.fleet.opennebula() else {
        return 0;
    };
    let config = Config::load(Path::new(&one.config_file()), true).expect("the sim's config");
    if !config.clusters.contains_key(&config_key(&config, cluster)) {
        return 0;
    }
    let mut state =
        AppState::new(discovery.clone(), false).with_screens(taloscope::views::screens());
    state.fleet = fleet.clone();
    state.provision.config = Arc::new(config.clone());
    let kubeconfig = discovery.kubeconfig.as_ref();
    let providers: BTreeSet<String> = config.providers.keys().cloned().collect();
    let mut compared = 0;
    for provider in &providers {
        for role in ROLES {
            let what = format!("{label}: {role} via {provider}");
            let console = within(
                60,
                "the wizard's plan",
                wizard_plan(&mut state, cluster, kubeconfig, provider, role),
            )
            .await;
            let cli = within(
                60,
                "the command's plan",
                command_plan(&config, discovery, cluster, kubeconfig, provider, role),
            )
            .await;
            assert_eq!(console.0, cli.0, "{what}: provision plan");
            if cli.0.is_ok() {
                assert_eq!(console.1, cli.1, "{what}: provision guards");
                assert_eq!(cli.1.len(), GuardId::PROVISION.len(), "{what}: {:?}", cli.1);
                compared += 1;
            }
        }
    }
    compared
}
