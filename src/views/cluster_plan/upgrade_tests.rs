//! Unit tests of the CAPI-way upgrade in the console: `u` / `U` on a cluster Cluster API owns
//! open the CAPI-way plan on the cluster plan screen (never the in-place one) and ask the event
//! loop to read it; the read
//! plan's guards are `capi_read_guards`' worst first; Start asks the dispatcher for the CAPI-way
//! action; the approval runs it on the one operation runner with its phases on the progress
//! screen; a changed plan, or one approved while another action runs here, is not run.
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::actions::ActionRun;
use crate::app::keymap;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{FleetChange, ScreenNews};
use crate::app::state::AppState;
use crate::app::test_fixtures::{approved_on_healthy, cluster_screen};
use crate::app::update::update;
use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, CapiView};
use crate::fleet::FleetEvent;
use crate::guards::Verdict;
use crate::upgrade::GuardId;
use crate::upgrade::capi::CapiProduct;
use crate::upgrade::capi::plan::tests::k8s_plan;
use crate::upgrade::fixtures;
use crate::upgrade::kubernetes::guards::tests::with_components;

fn owner() -> CapiOwner {
    CapiOwner {
        management: "mgmt".into(),
        namespace: "clusters".into(),
        name: "workload".into(),
    }
}

/// The `healthy` fixture cluster with its control-plane components ready on v1.34.1.
fn healthy() -> ClusterStatus {
    with_components(fixtures::healthy(), "v1.34.1")
}

/// The `healthy` fixture cluster's nodes pane, its owner known.
fn owned_console() -> AppState {
    let mut state = cluster_screen(healthy(), Pane::Nodes);
    let mut view = CapiView::default();
    view.owners.insert("healthy".into(), owner());
    let event = FleetEvent::Capi {
        view: Box::new(view),
        at: Instant::now(),
    };
    update(&mut state, Action::Event(AppEvent::Fleet(event)));
    state
}

/// The cluster plan screen.
fn screen(state: &AppState) -> &ClusterPlanScreen {
    state
        .screens
        .find::<ClusterPlanScreen>()
        .expect("the module")
}

/// The plan on the cluster plan screen.
fn holder(state: &AppState) -> &ClusterPlanHolder {
    screen(state).plan.as_ref().expect("the plan screen")
}

/// The CAPI-way upgrade asked on the plan screen.
fn request(state: &AppState) -> &CapiPlanRequest {
    match &holder(state).plan.asked {
        Asked::Upgrade(request) => request,
        other => panic!("an upgrade: {other:?}"),
    }
}

fn press(state: &mut AppState, c: char) -> Vec<Effect> {
    press_code(state, KeyCode::Char(c))
}

fn press_code(state: &mut AppState, code: KeyCode) -> Vec<Effect> {
    let key = KeyEvent::new(code, KeyModifiers::NONE);
    let action = keymap::action_for(state, &key).unwrap_or_else(|| panic!("{code} is bound"));
    update(state, action)
}

/// The tree of the healthy fixture's cluster: its Machines settled on v1.34.1, each one's node
/// one of the fixture's nodes.
fn settled_tree() -> ClusterTree {
    let mut tree = crate::upgrade::capi::guards::tests::settled_tree();
    let status = fixtures::healthy();
    for (m, node) in tree.machines.iter_mut().zip(&status.nodes) {
        m.node = node.name.clone();
    }
    tree
}

/// What the event loop reads for the plan on screen: a Kubernetes plan to v1.34.2.
fn read_for(
    state: &AppState,
    facts: Result<(ClusterTree, ClusterStatus), String>,
) -> ClusterPlanNews {
    let request = request(state).clone();
    let tree = settled_tree();
    let mut plan = k8s_plan(&tree, "v1.34.2");
    plan.cluster = "healthy".into();
    plan.product = request.product;
    plan.target = request.target.clone();
    plan.version = request.version.clone();
    ClusterPlanNews {
        task: ClusterPlanTask {
            cluster: request.cluster.clone(),
            asked: Asked::Upgrade(request),
        },
        read: Ok(Planned::Upgrade(plan, facts, None)),
    }
}

/// The plan in `read`.
fn plan_in(read: &ClusterPlanNews) -> CapiUpgradePlan {
    match &read.read {
        Ok(Planned::Upgrade(plan, ..)) => plan.clone(),
        other => panic!("an upgrade plan: {other:?}"),
    }
}

/// The event loop's read arrives.
fn shown(state: &mut AppState, read: ClusterPlanNews) {
    let news = ScreenNews::new(NAME, read);
    update(state, Action::Event(AppEvent::Screen(news)));
}

#[test]
fn an_owned_clusters_upgrade_key_opens_the_capi_way_plan_and_asks_for_it_to_be_read() {
    let mut state = owned_console();
    let effects = press(&mut state, 'u');
    assert_eq!(state.screen, Screen::Module(NAME), "{:?}", state.message);
    let plan = holder(&state);
    let request = request(&state);
    assert_eq!(request.product, CapiProduct::TalosOs);
    assert_eq!(request.owner, owner());
    assert!(request.version.starts_with('v'));
    assert!(
        matches!(effects.as_slice(), [Effect::Screen(t)] if t.get::<ClusterPlanTask>().map(|t| &t.asked) == Some(&plan.plan.asked)),
        "{effects:?}"
    );
    assert_eq!(
        plan.start_refused().as_deref(),
        Some("the plan is still being read")
    );
    // Esc closes it.
    press_code(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Cluster(Pane::Nodes));
    assert!(screen(&state).plan.is_none());
}

#[test]
fn an_unowned_cluster_keeps_the_in_place_plan() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    let effects = press(&mut state, 'u');
    assert_eq!(state.screen, Screen::Module("upgrade-plan"));
    assert!(screen(&state).plan.is_none());
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Screen(_))),
        "{effects:?}"
    );
}

#[test]
fn a_plan_whose_facts_cannot_be_read_is_refused_by_its_guard() {
    let mut state = owned_console();
    press(&mut state, 'u');
    let read = read_for(&state, Err("Secret has no talosconfig".into()));
    shown(&mut state, read);
    let plan = holder(&state);
    assert_eq!(plan.guards.shown.len(), 1);
    assert_eq!(plan.guards.shown[0].id, GuardId::CapiRolloutSettled);
    assert!(
        plan.guards.shown[0]
            .reason
            .contains("cannot read mgmt/clusters/workload"),
        "{}",
        plan.guards.shown[0].reason
    );
    let effects = press(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    let said = &state.message.as_ref().unwrap().text;
    assert!(said.contains("Start refused"), "{said}");
}

#[test]
fn start_goes_through_the_dispatcher_and_the_approval_starts_the_capi_way_runner() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = owned_console();
    press(&mut state, 'U');
    let read = read_for(&state, Ok((settled_tree(), healthy())));
    let plan = plan_in(&read);
    // A read for another request (the target changed meanwhile) is not shown.
    let mut stale = read.clone();
    if let Asked::Upgrade(request) = &mut stale.task.asked {
        request.version = "v0.0.1".into();
    }
    shown(&mut state, stale);
    assert!(holder(&state).plan.read.is_none());
    shown(&mut state, read);
    let plan_on_screen = holder(&state);
    let worst: Vec<Verdict> = plan_on_screen
        .guards
        .shown
        .iter()
        .map(|g| g.verdict)
        .collect();
    let mut sorted = worst.clone();
    sorted.sort_by_key(|v| match v {
        Verdict::Fail => 0,
        Verdict::Warn => 1,
        Verdict::Pass => 2,
    });
    assert_eq!(worst, sorted, "worst first");
    assert_eq!(
        plan_on_screen.start_refused(),
        None,
        "{:?}",
        plan_on_screen.guards
    );
    // ? on the control plane's phase says what it patches and the Machines in order.
    press(&mut state, '?');
    let Some(crate::app::state::Overlay::Explain { title, text, .. }) = &state.overlay else {
        panic!("an explanation: {:?}", state.overlay);
    };
    assert_eq!(title, "TalosControlPlane/workload-cp");
    assert!(
        text.contains("workload-cp-a, workload-cp-b, workload-cp-c"),
        "{text}"
    );
    state.overlay = None;

    let effects = press(&mut state, 's');
    let action = capi_action(&plan);
    assert!(
        matches!(effects.as_slice(), [Effect::Gate(a)] if *a == action),
        "{effects:?}"
    );
    assert!(matches!(action, MutatingAction::CapiUpgrade { .. }));
    let approved = approved_on_healthy(dir.path(), action);
    let effects = update(&mut state, Action::Approved(approved));
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("the operation started: {effects:?}");
    };
    assert!(matches!(run.as_ref(), ActionRun::CapiUpgrade(p) if **p == plan));
    assert_eq!(state.screen, Screen::Module("progress"));
    assert!(screen(&state).plan.is_none());
    let progress = state.progress().expect("the progress screen");
    assert_eq!(progress.kind, crate::operation::OperationKind::CapiUpgrade);
    assert!(progress.cancellable(), "a cancel stops it between phases");
    let steps: Vec<&str> = progress.steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        steps,
        [
            "TalosControlPlane/workload-cp: 3 machine(s) to v1.34.3",
            "MachineDeployment/workload-workers: 2 machine(s) to v1.34.3"
        ]
    );
    assert_eq!(progress.steps_word, "phases");
    let bound = progress.timeout.expect("its bound");
    assert_eq!(bound.as_secs(), plan.machine_timeout_secs * (4 + 3));
}

#[test]
fn an_approval_for_another_plan_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = owned_console();
    press(&mut state, 'U');
    let read = read_for(&state, Ok((settled_tree(), healthy())));
    shown(&mut state, read);
    let other = MutatingAction::CapiUpgrade {
        cluster: "healthy".into(),
        owner: owner().to_string(),
        product: "Kubernetes".into(),
        target: "9.9.9".into(),
    };
    let effects = update(
        &mut state,
        Action::Approved(approved_on_healthy(dir.path(), other)),
    );
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { why, .. }] if why.contains("changed")),
        "{effects:?}"
    );
    assert_eq!(state.screen, Screen::Module(NAME));
}

#[test]
fn an_approval_while_another_action_runs_here_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = owned_console();
    press(&mut state, 'U');
    let read = read_for(&state, Ok((settled_tree(), healthy())));
    shown(&mut state, read);
    let plan = holder(&state).plan.upgrade().expect("a plan").clone();
    let running = crate::operation::progress::OperationProgress::start(
        crate::operation::OperationKind::NodeReboot,
        "healthy",
        "reboot node cp-1",
        "reboot node cp-1 in healthy".into(),
        crate::operation::CancelRule::AfterStep,
        None,
    );
    *crate::app::test_fixtures::progress_mut(&mut state) = Some(running);
    let approved = approved_on_healthy(dir.path(), capi_action(&plan));
    let effects = update(&mut state, Action::Approved(approved));
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { why, .. }] if why.contains("already runs")),
        "{effects:?}"
    );
    assert_eq!(state.screen, Screen::Module(NAME));
}

#[test]
fn another_consoles_rollout_seen_later_refuses_the_plan() {
    let mut state = owned_console();
    press(&mut state, 'U');
    let read = read_for(&state, Ok((settled_tree(), healthy())));
    shown(&mut state, read);
    assert_eq!(holder(&state).start_refused(), None);
    state.identity = "alice@ops1".into();
    let live = state.fleet.clusters.get_mut("healthy").unwrap();
    live.status.rollout = Some(crate::fleet::status::RolloutStatus {
        holder: "bob@jump2".into(),
        node_index: 1,
        node_count: 2,
        ..Default::default()
    });
    let change = FleetChange {
        cluster: "healthy",
        certificates: false,
        capi: false,
    };
    assert!(crate::app::shell::on_fleet_change(&mut state, &change));
    let plan = holder(&state);
    assert_eq!(plan.guards.shown[0].id, GuardId::NoOtherRollout);
    assert_eq!(plan.guards.shown[0].verdict, Verdict::Fail);
    assert!(plan.start_refused().is_some());
}

/// `:upgrade WORDS` typed on the command line.
fn upgrade_command(state: &mut AppState, words: &str) {
    update(state, Action::OpenCommandLine);
    for c in format!("upgrade {words}").trim_end().chars() {
        update(state, Action::Insert(c));
    }
    update(state, Action::Submit);
}

/// The releases a registry lists for `healthy`, told as the console tells them: the built-in
/// table's and `tag`, a patch released after it.
fn learned_with(tag: &str) -> Action {
    let learned = fixtures::registry_releases(tag);
    let cluster = "healthy".to_string();
    let news = ScreenNews::new(NAME, crate::upgrade::ReleasesLearned { cluster, learned });
    Action::Event(AppEvent::Screen(news))
}

#[test]
fn a_talos_patch_released_after_the_table_is_a_capi_way_target_once_learned() {
    let mut state = owned_console();
    upgrade_command(&mut state, "v1.11.9");
    assert_ne!(state.screen, Screen::Module(NAME));
    let refused = state.message.take().expect("the refusal").text;
    assert!(
        refused.contains("v1.11.9 is not a known release"),
        "{refused}"
    );
    assert_eq!(
        default_target(&mut state),
        "v1.11.6",
        "the built-in table's"
    );

    update(&mut state, learned_with("v1.11.9"));
    assert_eq!(default_target(&mut state), "v1.11.9", "the learned default");
    upgrade_command(&mut state, "v1.11.9");
    assert_eq!(state.screen, Screen::Module(NAME), "{:?}", state.message);
    assert_eq!(request(&state).version, "v1.11.9");
    assert_eq!(request(&state).product, CapiProduct::TalosOs);
}

/// The target `u` opens the CAPI-way plan on, the plan closed again after.
fn default_target(state: &mut AppState) -> String {
    press(state, 'u');
    let version = request(state).version.clone();
    press_code(state, KeyCode::Esc);
    version
}
