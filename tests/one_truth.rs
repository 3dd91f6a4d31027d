//! One truth: for every built-in sim scenario with a Talos cluster, the model the console's
//! poller folds and the models `status` and the headless commands collect are equal, and so
//! are the Talos upgrade plan (to the target offered first), the Kubernetes upgrade plan and
//! their guard verdicts, built through the console's plan screens and the CLI's functions;
//! where the scenario has a provider, so are the provision plans and their guard verdicts of
//! every cluster, role and provider, built through the console's wizard and `provision --plan`'s
//! functions.
mod talos_common;
mod truth_provision;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use talos_common::{Sim, fast, scenario, start, within};
use taloscope::app::plan_screen::set_guards;
use taloscope::discovery::{Cluster, Discovery, Sources, discover};
use taloscope::fleet::{
    ClusterStatus, CollectOptions, FleetEvent, FleetModel, PollerOptions, collect_discovered,
    kube_client_for, spawn_poller,
};
use taloscope::talos::TalosClient;
use taloscope::upgrade::kubernetes::{
    KubeGuardInput, Kubernetes, KubernetesUpgradePlan, check_removed_flags, count_removed_apis,
    kubernetes_plan_guards,
};
use taloscope::upgrade::observe::ClusterObserver;
use taloscope::upgrade::{
    Guard, GuardId, LearnedReleases, TalosOs, UpgradeOptions, UpgradePlan, offered_targets,
    plan_guards,
};
use taloscope::views::upgrade_plan::RolloutPlan;

/// `fleet` (20 clusters of 250 nodes) is the one built-in left out: the same code runs on
/// it, and 5,000 listeners would make this test the slowest of the suite.
const LEFT_OUT: &[&str] = &["fleet"];

fn discovery_of(sim: &Sim) -> Discovery {
    let sources = Sources {
        talosconfigs: vec![sim.fleet.talosconfig_path()],
        kubeconfigs: vec![sim.fleet.kubeconfig_path()],
        ..Default::default()
    };
    let discovery = discover(&sources);
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    discovery
}

fn talos_clusters(discovery: &Discovery) -> Vec<Cluster> {
    let clusters: Vec<Cluster> = discovery
        .clusters
        .iter()
        .filter(|c| c.talos.is_some())
        .cloned()
        .collect();
    assert!(!clusters.is_empty(), "no Talos cluster");
    clusters
}

/// What etcd's raft index is at depends on when it was read; everything else must match.
fn comparable(mut status: ClusterStatus) -> ClusterStatus {
    for m in &mut status.etcd.members {
        m.raft_index = None;
    }
    status
}

/// The console's model: the poller's first round of every cluster, folded as the app folds it,
/// and its first reading of the management clusters when one owns a cluster (the provision
/// plans' `capi_owned` row reads the owner from it).
async fn console_models(discovery: &Discovery) -> FleetModel {
    let clusters = talos_clusters(discovery);
    let wanted = clusters.len();
    let owned = match discovery.kubeconfig.as_ref() {
        Some(k) => !taloscope::capi::read_view(k, &clusters)
            .await
            .owners
            .is_empty(),
        None => false,
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let options = PollerOptions {
        client: fast(),
        focused_interval: Duration::from_secs(3600),
        background_interval: Duration::from_secs(3600),
        ..Default::default()
    };
    let poller = spawn_poller(clusters, discovery.kubeconfig.clone(), options, tx);
    let mut fleet = FleetModel::default();
    let (mut finished, mut capi_read) = (0, false);
    while finished < wanted || (owned && !capi_read) {
        let event = rx.recv().await.expect("the poller reports");
        finished += usize::from(matches!(event, FleetEvent::PollFinished { .. }));
        capi_read |= matches!(event, FleetEvent::Capi { .. });
        fleet.apply(event);
    }
    poller.shutdown().await;
    fleet
}

fn comparable_models(fleet: &FleetModel) -> BTreeMap<String, ClusterStatus> {
    fleet
        .clusters
        .iter()
        .map(|(name, live)| (name.clone(), comparable(live.status.clone())))
        .collect()
}

async fn observer_for(cluster: &Cluster, discovery: &Discovery) -> ClusterObserver {
    let ctx = cluster.talos.as_ref().expect("talos context");
    let kube = kube_client_for(cluster, discovery.kubeconfig.as_ref())
        .await
        .map(|client| client.expect("kube client"));
    ClusterObserver {
        cluster: cluster.name.clone(),
        talos: TalosClient::new(ctx, fast()).expect("talos client"),
        kube,
        nodes: ctx.nodes.clone(),
        options: CollectOptions {
            client: fast(),
            ..Default::default()
        },
    }
}

/// The releases a plan is offered from when no registry is asked (the built-in table).
fn built_in() -> LearnedReleases {
    LearnedReleases::built_in("no registry was asked")
}

/// The CLI's guards in the order the plan screens show them (worst first).
fn as_listed(guards: Vec<Guard>) -> Vec<Guard> {
    let (mut shown, mut selected) = (Vec::new(), None::<GuardId>);
    set_guards(&mut shown, &mut selected, guards);
    shown
}

/// The Talos plan and guards: the console's plan screen against `upgrade --plan`'s functions.
fn compare_talos_plans(
    name: &str,
    console: &ClusterStatus,
    cli: &ClusterStatus,
    roles: &taloscope::talos::Roles,
) -> bool {
    let screen = match RolloutPlan::<TalosOs>::open_among(console, None, &built_in()) {
        Ok(mut screen) => {
            let guards = screen.plan.guards(console, None, None, &[]);
            screen.guards.set(guards);
            screen
        }
        Err(_) => {
            assert_eq!(
                offered_targets(cli, false),
                [],
                "{name}: the CLI offers a target"
            );
            return false;
        }
    };
    let plan = UpgradePlan::new(cli, screen.target.clone(), UpgradeOptions::default())
        .map_err(|e| e.to_string());
    assert_eq!(screen.made, plan, "{name}: Talos upgrade plan");
    if let Ok(plan) = &plan {
        let guards = as_listed(plan_guards(plan, cli, roles, None));
        assert_eq!(screen.guards.shown, guards, "{name}: Talos upgrade guards");
    }
    true
}

/// The Kubernetes plan and guards: the console's `U` screen (its removed-API count answered,
/// as the console asks for it) against `upgrade-k8s --plan`'s functions.
async fn compare_kube_plans(
    name: &str,
    console: &ClusterStatus,
    cli: &ClusterStatus,
    observer: &ClusterObserver,
) -> bool {
    let Ok(mut screen) = RolloutPlan::<Kubernetes>::open_among(console, None, &built_in()) else {
        return false;
    };
    let plan = KubernetesUpgradePlan::new(cli, &screen.target, true).map_err(|e| e.to_string());
    if let Ok(plan) = &plan {
        let removed = count_removed_apis(observer, plan).await;
        let flags = check_removed_flags(observer, plan).await;
        screen.counted(
            &plan.from.to_string(),
            &plan.target.to_string(),
            removed.clone(),
            flags.clone(),
        );
        let guards = screen.plan.guards(console, None, None, &[]);
        screen.guards.set(guards);
        let mut cli_plan = plan.clone();
        if let Ok(counts) = &removed {
            cli_plan.removed_apis = counts.clone();
        }
        assert_eq!(
            screen.made,
            Ok(cli_plan.clone()),
            "{name}: Kubernetes upgrade plan"
        );
        let input = KubeGuardInput {
            roles: observer.talos.roles(),
            other_rollout: None,
            removed_apis: &removed,
            removed_flags: &flags,
            acks: &[],
        };
        let guards = as_listed(kubernetes_plan_guards(&cli_plan, cli, input));
        assert_eq!(
            screen.guards.shown, guards,
            "{name}: Kubernetes upgrade guards"
        );
    } else {
        assert_eq!(screen.made, plan, "{name}: Kubernetes upgrade plan");
    }
    true
}

/// How many Talos, Kubernetes and provision plans were compared.
async fn compare_scenario(name: &str) -> (usize, usize, usize) {
    let sim = start(scenario(name)).await;
    let discovery = discovery_of(&sim);
    let fleet = within(60, "the console's first rounds", console_models(&discovery)).await;
    let console = comparable_models(&fleet);
    let kubeconfig = discovery.kubeconfig.clone().map(Arc::new);
    let options = CollectOptions {
        client: fast(),
        ..Default::default()
    };
    let mut compared = (0, 0, 0);
    for cluster in talos_clusters(&discovery) {
        let label = format!("{name}/{}", cluster.name);
        let status = within(
            60,
            "status",
            collect_discovered(&cluster, kubeconfig.clone(), options),
        )
        .await;
        let status = comparable(status);
        let observer = observer_for(&cluster, &discovery).await;
        let headless = comparable(within(60, "the headless status", observer.status()).await);
        let shown = console
            .get(&cluster.name)
            .unwrap_or_else(|| panic!("{label}: not polled"));
        assert_eq!(shown, &status, "{label}: the console's model and status's");
        assert_eq!(
            headless, status,
            "{label}: the headless commands' model and status's"
        );
        if cluster.name == "sparse" || cluster.name == "discovery-disabled" {
            let with_kubelet = shown.nodes.iter().filter(|n| n.kubelet_version.is_some());
            assert_eq!(with_kubelet.count(), 5, "{label}: {shown:?}");
        }
        compared.0 += usize::from(compare_talos_plans(
            &label,
            shown,
            &status,
            observer.talos.roles(),
        ));
        compared.1 += usize::from(compare_kube_plans(&label, shown, &status, &observer).await);
        compared.2 += truth_provision::compare(&sim, &discovery, &fleet, &cluster, &label).await;
    }
    compared
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_and_cli_see_plan_and_guard_the_same_on_every_builtin_scenario() {
    let names: Vec<&str> = taloscope_sim::Scenario::builtin_names()
        .iter()
        .copied()
        .filter(|n| !LEFT_OUT.contains(n))
        .collect();
    assert!(names.contains(&"sparse"), "{names:?}");
    let (mut talos, mut kube, mut provision) = (0, 0, 0);
    for name in names {
        let (t, k, p) = compare_scenario(name).await;
        (talos, kube, provision) = (talos + t, kube + k, provision + p);
    }
    // Most clusters are offered both upgrades; a test that compared nothing proves nothing.
    assert!(
        talos >= 10 && kube >= 10 && provision >= 20,
        "compared {talos} Talos, {kube} Kubernetes and {provision} provision plans"
    );
}

/// Each node's name, the source that put it in the list and whether its kubelet version is known.
fn sources_of(status: &ClusterStatus) -> Vec<(String, &'static str, bool)> {
    let mut nodes: Vec<_> = status
        .nodes
        .iter()
        .map(|n| {
            (
                n.name.clone(),
                n.source.as_str(),
                n.kubelet_version.is_some(),
            )
        })
        .collect();
    nodes.sort();
    nodes
}

/// Talos discovery off (`discovery-disabled`: no COSI Members, a talosconfig naming cp-1):
/// etcd names the other control planes and Kubernetes the workers, and the console's model
/// and `status`'s (one collector) list all five nodes, each with the source that found it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_discovery_disabled_etcd_and_kubernetes_still_name_every_node() {
    let sim = start(scenario("discovery-disabled")).await;
    let discovery = discovery_of(&sim);
    let cluster = discovery
        .cluster("discovery-disabled")
        .cloned()
        .expect("the discovery-disabled cluster");
    assert_eq!(cluster.nodes().len(), 1, "the talosconfig names one node");
    let client = TalosClient::new(cluster.talos.as_ref().expect("talos"), fast()).expect("client");
    let members = within(10, "members", client.cluster_members(&cluster.nodes()[0])).await;
    assert_eq!(members.map(|m| m.len()).ok(), Some(0), "discovery is off");

    let fleet = within(60, "the console's first round", console_models(&discovery)).await;
    let kubeconfig = discovery.kubeconfig.clone().map(Arc::new);
    let options = CollectOptions {
        client: fast(),
        ..Default::default()
    };
    let status = within(
        60,
        "status",
        collect_discovered(&cluster, kubeconfig, options),
    )
    .await;
    let expected: Vec<(String, &str, bool)> = [
        ("cp-1", "talosconfig"),
        ("cp-2", "etcd"),
        ("cp-3", "etcd"),
        ("w-1", "kubernetes"),
        ("w-2", "kubernetes"),
    ]
    .iter()
    .map(|(name, source)| (name.to_string(), *source, true))
    .collect();
    assert_eq!(sources_of(&status), expected, "status: {status:?}");
    let shown = &fleet.clusters["discovery-disabled"].status;
    assert_eq!(sources_of(shown), expected, "the console: {shown:?}");
    assert_eq!(comparable(shown.clone()), comparable(status));
}
