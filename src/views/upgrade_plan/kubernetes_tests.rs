//! Unit tests of the Kubernetes plan screen: `U` and `:upgrade-k8s` open it,
//! the removed-API count is asked once (its screen task) and folded back (its
//! news), its acknowledgement and the single control plane's, Start through the
//! dispatcher (read-only refuses), and the progress pane resuming a Kubernetes
//! journal.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::kubernetes::{CHECKING, KubePlanScreen};
use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::keymap::{self, KeyContext};
use crate::app::plan_screen::PlannedRollout;
use crate::app::screen::Pane;
use crate::app::screens::ScreenNews;
use crate::app::state::AppState;
use crate::app::test_fixtures::{approved_on_healthy, cluster_screen, healthy_rollout};
use crate::app::update::update;
use crate::approval::MutatingAction;
use crate::approval::{AuditLog, Dispatcher, Gate};
use crate::fleet::ClusterStatus;
use crate::kube::removed_apis::RemovedApiCount;
use crate::rollout::RolloutKind;
use crate::rollout::StepProgress;
use crate::upgrade::fixtures;
use crate::upgrade::kubernetes::KubernetesUpgradePlan;
use crate::upgrade::kubernetes::REMOVED_APIS_ACK;
use crate::upgrade::{GuardId, SINGLE_CONTROL_PLANE_ACK, Verdict as GuardVerdict};

fn state_with(status: ClusterStatus) -> AppState {
    cluster_screen(status, Pane::Versions)
}

/// Talos 1.12 runs Kubernetes 1.35, so 1.35 releases are offered.
fn on_112() -> ClusterStatus {
    with_static_pods(fixtures::healthy_on("v1.12.0"))
}

/// The control-plane static pods on 1.34.1, ready, as the poller reports them.
fn with_static_pods(mut status: ClusterStatus) -> ClusterStatus {
    let control_planes: Vec<String> = status
        .nodes
        .iter()
        .filter(|n| n.role == crate::fleet::NodeRole::Controlplane)
        .map(|n| n.name.clone())
        .collect();
    if let Some(kube) = status.kubernetes.as_mut() {
        kube.kube_proxy_version = Some("v1.34.1".into());
        for node in control_planes {
            for name in [
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
            ] {
                kube.components.push(crate::fleet::ComponentReport {
                    node: node.clone(),
                    name: name.into(),
                    version: "v1.34.1".into(),
                    ready: true,
                });
            }
        }
    }
    status
}

/// The plan the removed-API count is asked for in `effects`, if it is.
fn count_asked(effects: &[Effect]) -> Option<KubernetesUpgradePlan> {
    match effects {
        [Effect::Screen(task)] if task.screen == KUBE_PLAN => task.get().cloned(),
        _ => None,
    }
}

/// `U` on the versions pane; returns the count the screen asked for.
fn open(state: &mut AppState) -> KubernetesUpgradePlan {
    let key = KeyEvent::new(KeyCode::Char('U'), KeyModifiers::SHIFT);
    let action = keymap::action_for(state, &key).expect("U is bound on the cluster panes");
    let effects = update(state, action);
    assert_eq!(
        state.screen,
        Screen::Module(KUBE_PLAN),
        "{:?}",
        state.message
    );
    assert_eq!(keymap::context(state), KeyContext::Screen(KUBE_PLAN));
    count_asked(&effects)
        .unwrap_or_else(|| panic!("expected the removed-API count asked for, got {effects:?}"))
}

fn counted(plan: &KubernetesUpgradePlan, counts: Vec<RemovedApiCount>) -> Action {
    let news = RemovedApisCounted {
        cluster: plan.cluster.clone(),
        from: plan.from.to_string(),
        target: plan.target.to_string(),
        result: Ok(counts),
        flags: Ok(Vec::new()),
    };
    Action::Event(AppEvent::Screen(ScreenNews::new(KUBE_PLAN, news)))
}

/// Presses `c` as the console does: through the keymap, then update.
fn press(state: &mut AppState, c: char) -> Vec<Effect> {
    let event = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let action = keymap::action_for(state, &event).unwrap_or_else(|| panic!("{c} is bound"));
    update(state, action)
}

fn screen(state: &AppState) -> &KubePlanScreen {
    let module = state.screens.find::<KubePlanModule>().expect("the module");
    module.plan.as_ref().expect("Kubernetes plan open")
}

fn guard(state: &AppState, id: GuardId) -> crate::upgrade::Guard {
    screen(state)
        .guards
        .shown
        .iter()
        .find(|g| g.id == id)
        .cloned()
        .unwrap_or_else(|| panic!("no {id:?} guard"))
}

fn type_ack(state: &mut AppState, text: &str) {
    press(state, 'a');
    for c in text.chars() {
        update(state, Action::Insert(c));
    }
    update(state, Action::Submit);
}

#[test]
fn u_opens_the_plan_and_the_removed_api_guard_checks_until_the_count_arrives() {
    let mut state = state_with(on_112());
    let plan = open(&mut state);
    assert_eq!(
        Some(&plan.target),
        screen(&state).targets.last(),
        "the newest"
    );
    assert_eq!((plan.target.major, plan.target.minor), (1, 35));
    assert_eq!(
        plan.steps[0].component.as_str(),
        "kube-apiserver",
        "upstream order"
    );
    let removed = guard(&state, GuardId::RemovedApis);
    assert_eq!(removed.reason, CHECKING);
    assert!(screen(&state).start_refused().is_some(), "no count yet");

    update(&mut state, counted(&plan, vec![]));
    assert_eq!(
        guard(&state, GuardId::RemovedApis).verdict,
        GuardVerdict::Pass
    );
    assert_eq!(
        screen(&state).start_refused(),
        None,
        "{:?}",
        screen(&state).guards
    );

    // A count for another plan (an older target) is not taken.
    let effects = press(&mut state, 't');
    assert_ne!(screen(&state).target, plan.target);
    let fresh = screen(&state).removed_apis.clone();
    assert_eq!(fresh, None, "a new target is counted again");
    let asked = count_asked(&effects).expect("the new target's count asked for");
    assert_eq!(asked.target, screen(&state).target);
    update(&mut state, counted(&plan, vec![]));
    assert_eq!(screen(&state).removed_apis, None, "{:?}", screen(&state));
}

#[test]
fn upgrade_k8s_command_takes_a_named_version_and_the_path_guard_decides() {
    let mut state = state_with(on_112());
    update(&mut state, Action::OpenCommandLine);
    for c in "upgrade-k8s 1.36.0".chars() {
        update(&mut state, Action::Insert(c));
    }
    let effects = update(&mut state, Action::Submit);
    assert!(count_asked(&effects).is_some(), "{effects:?}");
    assert_eq!(screen(&state).target.to_string(), "v1.36.0");
    assert_eq!(
        guard(&state, GuardId::KubernetesPath).verdict,
        GuardVerdict::Fail,
        "a skipped minor fails its guard"
    );
    assert!(screen(&state).start_refused().is_some());
}

#[test]
fn stored_objects_in_removed_apis_need_the_typed_acknowledgement() {
    let mut state = state_with(on_112());
    let plan = open(&mut state);
    let counts = vec![RemovedApiCount {
        api: "flowschemas.v1beta3.flowcontrol.apiserver.k8s.io".into(),
        removed_in: "1.32".into(),
        replacement: "flowcontrol.apiserver.k8s.io/v1".into(),
        count: 2,
    }];
    update(&mut state, counted(&plan, counts));
    let removed = guard(&state, GuardId::RemovedApis);
    assert_eq!(removed.verdict, GuardVerdict::Fail);
    assert!(removed.reason.contains("flowschemas"), "{}", removed.reason);
    assert_eq!(screen(&state).guards.missing_ack(), Some(REMOVED_APIS_ACK));
    let effects = press(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "refused: {effects:?}"
    );

    type_ack(&mut state, "objects in removed API versions");
    assert!(
        screen(&state).guards.acks.is_empty(),
        "a partial text is not taken"
    );
    type_ack(&mut state, REMOVED_APIS_ACK);
    assert_eq!(
        guard(&state, GuardId::RemovedApis).verdict,
        GuardVerdict::Warn
    );
    assert_eq!(screen(&state).start_refused(), None);
}

#[test]
fn a_single_control_plane_asks_for_its_acknowledgement() {
    let mut status = with_static_pods(fixtures::single_cp());
    for node in &mut status.nodes {
        node.talos_version = Some("v1.12.0".into());
    }
    let mut state = state_with(status);
    let plan = open(&mut state);
    update(&mut state, counted(&plan, vec![]));
    assert_eq!(
        screen(&state).guards.missing_ack(),
        Some(SINGLE_CONTROL_PLANE_ACK)
    );
    type_ack(&mut state, SINGLE_CONTROL_PLANE_ACK);
    assert_eq!(screen(&state).start_refused(), None);
}

#[test]
fn start_goes_through_the_dispatcher_and_runs_the_plan_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = state_with(on_112());
    let plan = open(&mut state);
    update(&mut state, counted(&plan, vec![]));
    // Pre-pull starts on (as talosctl's --pre-pull-images); toggled off, the run has it off.
    press(&mut state, 'P');
    let effects = press(&mut state, 's');
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let target = screen(&state).target_text();
    assert!(!target.starts_with('v'), "{target}");
    assert_eq!(
        *action,
        MutatingAction::UpgradeKubernetes {
            cluster: "healthy".into(),
            target: target.clone(),
        }
    );
    let readonly = Dispatcher::new(true, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Refused(msg) = readonly.request(action.clone()) else {
        panic!("read-only must refuse");
    };
    assert!(msg.contains("read-only"), "{msg}");

    let approved = approved_on_healthy(dir.path(), action.clone());
    let effects = update(&mut state, Action::Approved(approved));
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let crate::app::actions::ActionRun::Upgrade(planned) = run.as_ref() else {
        panic!("an upgrade: {run:?}");
    };
    let PlannedRollout::Kubernetes(plan) = planned.as_ref() else {
        panic!("a Kubernetes plan: {planned:?}");
    };
    assert!(!plan.pre_pull, "the plan runs as shown");
    assert_eq!(state.screen, Screen::Module("progress"));
    let progress = state.progress().unwrap();
    assert_eq!(
        progress.kind,
        crate::operation::OperationKind::KubernetesUpgrade
    );
    assert!(
        progress.steps[0]
            .label
            .ends_with(&format!("kube-apiserver v{target}")),
        "{:?}",
        progress.steps[0]
    );
    // While it runs, U shows the progress screen, not another plan.
    crate::app::test_fixtures::press(&mut state, KeyCode::Esc);
    assert_ne!(state.screen, Screen::Module("progress"));
    update(&mut state, Action::Open("kube-plan"));
    assert_eq!(state.screen, Screen::Module("progress"));
}

#[test]
fn a_kubernetes_journal_resumes_through_the_dispatcher_as_a_kubernetes_upgrade() {
    let mut state = state_with(on_112());
    let summary = healthy_rollout(
        RolloutKind::KubernetesUpgrade,
        "1.35.0",
        vec![StepProgress::pending("cp-1", "kube-apiserver v1.35.0")],
    );
    update(
        &mut state,
        Action::Event(crate::app::actions::ProgressNews::Journal(Box::new(summary)).told()),
    );
    update(&mut state, Action::OpenWith("progress", "rollout".into()));
    assert_eq!(state.screen, Screen::Module("progress"));
    let effects = press(&mut state, 'r');
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(action, MutatingAction::UpgradeKubernetes { .. }));
    let dir = tempfile::tempdir().unwrap();
    let approved = approved_on_healthy(dir.path(), action.clone());
    let effects = update(&mut state, Action::Approved(approved));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::RunAction { run, .. }]
                if matches!(run.as_ref(), crate::app::actions::ActionRun::ResumeUpgrade)
        ),
        "{effects:?}"
    );
}

#[test]
fn big_u_on_the_fleet_plans_the_selected_clusters_kubernetes_upgrade() {
    let mut state = state_with(on_112());
    state.current = None;
    state.screen = Screen::Fleet;
    let big_u = KeyEvent::new(KeyCode::Char('U'), KeyModifiers::SHIFT);
    let action = keymap::action_for(&state, &big_u).expect("U is bound on the fleet");
    update(&mut state, action);
    assert_eq!(
        state.screen,
        Screen::Module(KUBE_PLAN),
        "{:?}",
        state.message
    );
    assert_eq!(state.current.as_deref(), Some(on_112().name.as_str()));
}

#[test]
fn a_capi_owned_clusters_kubernetes_plan_is_refused_naming_the_capi_way() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    open(&mut state);
    // The management clusters are read after the plan opened: it is re-evaluated.
    update(&mut state, capi_owner_read("healthy"));
    assert_eq!(
        state.screen,
        Screen::Module(KUBE_PLAN),
        "{:?}",
        state.message
    );
    let guard = guard(&state, GuardId::CapiOwned);
    assert!(
        guard.reason.contains("TalosControlPlane.spec.version"),
        "{}",
        guard.reason
    );
    assert!(screen(&state).start_refused().is_some());
}

/// The management clusters read: `cluster` owned by `mgmt`'s `clusters/workload`.
pub(super) fn capi_owner_read(cluster: &str) -> Action {
    let mut view = crate::capi::CapiView::default();
    let owner = crate::capi::CapiOwner {
        management: "mgmt".into(),
        namespace: "clusters".into(),
        name: "workload".into(),
    };
    view.owners.insert(cluster.into(), owner);
    let event = crate::fleet::FleetEvent::Capi {
        view: Box::new(view),
        at: std::time::Instant::now(),
    };
    Action::Event(AppEvent::Fleet(event))
}
