//! Unit tests of the actions screen: `a` opens the menu of the selection, a choice opens the
//! plan the headless commands make, the guards gate Start (refused and audited when one
//! blocks, read-only through the dispatcher), the approval runs only the plan on screen, and
//! the runner's lines fold into the progress.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::actions::{ActionChoice, ActionRun};
use crate::app::keymap::{self, KeyContext};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::ScreenNews;
use crate::app::state::{AppState, InputKind, Overlay};
use crate::app::test_fixtures::{cluster_screen, press};
use crate::app::update::update;
use crate::approval::{Answer, AuditLog, Dispatcher, Gate, MutatingAction, NodeOperation, Verdict};
use crate::fleet::ClusterStatus;
use crate::guards::{GuardId, Verdict as GuardVerdict};
use crate::node_actions::NodeSurvey;
use crate::operation::progress::ProgressEvent;
use crate::upgrade::fixtures;

fn screen(state: &AppState) -> &ActionsScreen {
    state
        .screens
        .find::<ActionsScreen>()
        .expect("the actions screen")
}

fn menu(state: &AppState) -> Option<&crate::app::actions::ActionMenu> {
    screen(state)
        .kept
        .menu
        .as_ref()
        .filter(|_| state.screen == Screen::Module(NAME))
}

fn plan(state: &AppState) -> Option<&ChoicePlanScreen> {
    screen(state).plan.as_ref()
}

fn key(state: &mut AppState, c: char) -> Vec<Effect> {
    let event = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let action = keymap::action_for(state, &event).unwrap_or_else(|| panic!("{c} is bound"));
    update(state, action)
}

/// The nodes pane of `status` with `node` selected.
fn nodes_pane(status: ClusterStatus, node: &str) -> AppState {
    let mut state = cluster_screen(status, Pane::Nodes);
    assert!(state.select_node(node), "node in the fixture");
    state
}

/// `a`, then Enter on the menu entry `label` starts with.
fn choose(state: &mut AppState, label: &str) -> Vec<Effect> {
    key(state, 'a');
    let menu = menu(state).expect("the menu opens");
    let subject = menu.subject.clone();
    let i = menu
        .items
        .iter()
        .position(|item| item.label(&subject).starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in {:?}", menu.items));
    for _ in 0..i {
        press(state, KeyCode::Down);
    }
    press(state, KeyCode::Enter)
}

/// The survey a node with no pods and no Kubernetes side reads.
fn surveyed(state: &mut AppState, node: &str) {
    let cluster = state.current.clone().unwrap();
    let survey = Ok(NodeSurvey::default());
    update(
        state,
        Action::Event(AppEvent::Screen(ScreenNews::new(
            NAME,
            Surveyed {
                cluster,
                node: node.into(),
                survey,
            },
        ))),
    );
}

fn guard(state: &AppState, id: GuardId) -> GuardVerdict {
    let plan = plan(state).expect("plan open");
    plan.guards
        .shown
        .iter()
        .find(|g| g.id == id)
        .unwrap_or_else(|| panic!("no {id:?} in {:?}", plan.guards))
        .verdict
}

/// `action` confirmed with `typed` on the dispatcher `d`.
fn approved_by(
    d: &Dispatcher,
    action: MutatingAction,
    typed: &str,
) -> crate::approval::ApprovedAction {
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("expected a confirmation")
    };
    match d.answer(pending, Answer::Typed(typed.into())) {
        Verdict::Proceed(approved) => approved,
        Verdict::Cancelled(why) => panic!("{why}"),
    }
}

fn reboot_of(cluster: &str, node: &str) -> MutatingAction {
    MutatingAction::Node {
        cluster: cluster.into(),
        node: node.into(),
        operation: NodeOperation::Reboot,
    }
}

#[test]
fn a_opens_the_menu_and_reboot_opens_its_plan_which_reads_the_survey_first() {
    let mut state = nodes_pane(fixtures::healthy(), "cp-2");
    let effects = choose(&mut state, "reboot");
    assert!(menu(&state).is_none());
    assert_eq!(state.screen, Screen::Module(NAME));
    assert_eq!(keymap::context(&state), KeyContext::Screen(NAME));
    let [Effect::Screen(task)] = effects.as_slice() else {
        panic!("expected the survey, got {effects:?}");
    };
    let SurveyNode(plan) = task.get::<SurveyNode>().expect("the survey");
    assert_eq!(
        (plan.node.as_str(), &plan.operation),
        ("cp-2", &NodeOperation::Reboot)
    );
    // No guard before the survey, and no start.
    assert!(self::plan(&state).unwrap().guards.shown.is_empty());
    assert!(key(&mut state, 's').is_empty());
    assert!(
        state
            .message
            .as_ref()
            .unwrap()
            .text
            .contains("reading the node")
    );
    surveyed(&mut state, "cp-2");
    assert_eq!(guard(&state, GuardId::EtcdQuorum), GuardVerdict::Pass);
    assert_eq!(guard(&state, GuardId::NodeActionRole), GuardVerdict::Pass);
    let effects = key(&mut state, 's');
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("expected the dispatcher, got {effects:?}");
    };
    assert_eq!(action, &reboot_of("healthy", "cp-2"));
    assert_eq!(action.confirm_name(), "cp-2", "the node's name confirms");
    key(&mut state, '?');
    assert!(matches!(state.overlay, Some(Overlay::Explain { .. })));
}

#[test]
fn the_quorum_guard_refuses_rebooting_cp_1_on_cp2_down_and_the_refusal_is_audited() {
    let mut state = nodes_pane(fixtures::cp2_down(), "cp-1");
    choose(&mut state, "reboot");
    surveyed(&mut state, "cp-1");
    assert_eq!(guard(&state, GuardId::EtcdQuorum), GuardVerdict::Fail);
    let effects = key(&mut state, 's');
    let [Effect::Refuse { action, why }] = effects.as_slice() else {
        panic!("expected a refusal, got {effects:?}");
    };
    assert_eq!(action, &reboot_of("cp2-down", "cp-1"));
    assert!(why.contains("etcd quorum"), "{why}");
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let said = d.refused(action, why);
    assert!(
        said.starts_with("refused: reboot node cp-1 in cp2-down"),
        "{said}"
    );
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    assert!(
        audit.contains("outcome=\"refused: guard failing"),
        "{audit}"
    );
}

#[test]
fn a_reader_context_is_refused_by_the_role_guard() {
    let mut status = fixtures::healthy();
    status.role = "os:reader".into();
    let mut state = nodes_pane(status, "w-1");
    choose(&mut state, "reboot");
    surveyed(&mut state, "w-1");
    assert_eq!(guard(&state, GuardId::NodeActionRole), GuardVerdict::Fail);
    let effects = key(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "{effects:?}"
    );
}

#[test]
fn read_only_goes_to_the_dispatcher_which_refuses_it() {
    let mut state = nodes_pane(fixtures::healthy(), "cp-2");
    state.readonly = true;
    choose(&mut state, "reboot");
    surveyed(&mut state, "cp-2");
    let effects = key(&mut state, 's');
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("expected the dispatcher, got {effects:?}");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(true, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Refused(msg) = d.request(action.clone()) else {
        panic!("read-only let a node action through");
    };
    assert!(msg.contains("read-only mode: reboot node cp-2"), "{msg}");
}

#[test]
fn only_the_plan_on_screen_runs_once_approved_and_its_lines_fold_into_the_progress() {
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let mut state = nodes_pane(fixtures::healthy(), "cp-2");
    choose(&mut state, "reboot");
    surveyed(&mut state, "cp-2");
    let other = approved_by(&d, reboot_of("healthy", "cp-3"), "cp-3");
    let effects = update(&mut state, Action::Approved(other));
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { .. }]),
        "{effects:?}"
    );
    let approved = approved_by(&d, reboot_of("healthy", "cp-2"), "cp-2");
    let effects = update(&mut state, Action::Approved(approved));
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("expected the run, got {effects:?}");
    };
    assert!(matches!(run.as_ref(), ActionRun::Node(p) if p.node == "cp-2"));
    assert_eq!(keymap::context(&state), KeyContext::Screen("progress"));
    assert!(state.operation_running());
    let send = |state: &mut AppState, e: ProgressEvent| {
        update(
            state,
            Action::Event(crate::app::action::progress(
                crate::operation::OperationKind::NodeReboot,
                e,
            )),
        );
    };
    send(
        &mut state,
        ProgressEvent::Line("cp-2: reboot requested".into()),
    );
    send(
        &mut state,
        ProgressEvent::Finished(Ok("cp-2 rebooted and back".into())),
    );
    let progress = state.progress().unwrap();
    assert!(!progress.running());
    assert_eq!(
        progress
            .lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        [
            "starting: reboot node cp-2 in healthy",
            "cp-2: reboot requested",
            "done: cp-2 rebooted and back"
        ]
    );
    crate::app::test_fixtures::press(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Cluster(Pane::Nodes));
}

#[test]
fn cordon_needs_a_paired_kube_context_and_says_so() {
    let mut state = nodes_pane(fixtures::healthy(), "w-1");
    let effects = choose(&mut state, "cordon");
    assert!(effects.is_empty(), "{effects:?}");
    assert!(plan(&state).is_none());
    let said = &state.message.as_ref().unwrap().text;
    assert!(said.contains("no paired kube context"), "{said}");
}

#[test]
fn the_etcd_pane_offers_the_etcd_actions_and_defrag_fails_on_an_unhealthy_member() {
    let mut state = cluster_screen(fixtures::cp2_down(), Pane::Etcd);
    assert!(state.select_member(&format!("{:016x}", 1)));
    key(&mut state, 'a');
    let menu = menu(&state).expect("menu");
    assert_eq!(menu.subject, "cp-1");
    // No alarm to disarm, and cp-1 runs its member: neither disarm nor remove-member.
    let labels: Vec<String> = menu.items.iter().map(|i| i.label("cp-1")).collect();
    assert!(
        labels
            .iter()
            .all(|l| !l.starts_with("disarm") && !l.starts_with("remove")),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|l| l.starts_with("defragment")),
        "{labels:?}"
    );
    press(&mut state, KeyCode::Esc);
    assert!(self::menu(&state).is_none());
    assert_eq!(state.screen, Screen::Cluster(Pane::Etcd));
    let effects = choose(&mut state, "defragment");
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(guard(&state, GuardId::EtcdHealthy), GuardVerdict::Fail);
    let plan = plan(&state).unwrap();
    assert!(plan.start_refused().unwrap().contains("guard failing"));
}

#[test]
fn a_snapshot_asks_for_its_file_in_the_state_dir_then_plans_it() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Etcd);
    state.actions.snapshot_dir = "/state/snapshots".into();
    assert!(state.select_member(&format!("{:016x}", 2)));
    choose(&mut state, "snapshot");
    let line = state.input.as_ref().expect("the file is asked for");
    assert_eq!(line.kind, InputKind::Screen("snapshot to> "));
    assert_eq!(line.text, "/state/snapshots/healthy-cp-2.snapshot");
    update(&mut state, Action::Submit);
    let plan = plan(&state).expect("the snapshot's plan");
    let ChoicePlan::Etcd { plan: Ok(plan), .. } = &plan.plan else {
        panic!("{:?}", plan.plan)
    };
    assert_eq!(plan.target, "cp-2");
}

#[test]
fn node_detail_offers_a_restart_of_the_services_talos_restarts() {
    use crate::talos::ServiceStatus;
    let mut state = nodes_pane(fixtures::healthy(), "w-1");
    state.screen = Screen::NodeDetail;
    let service = |id: &str| ServiceStatus {
        id: id.into(),
        state: "Running".into(),
        healthy: Some(true),
        last_message: String::new(),
    };
    let live = state.fleet.clusters.get_mut("healthy").unwrap();
    live.services.insert(
        "127.10.0.5".into(),
        (
            Ok(vec![
                service("etcd"),
                service("kubelet"),
                service("ext-iscsid"),
            ]),
            std::time::Instant::now(),
        ),
    );
    key(&mut state, 'a');
    let menu = menu(&state).unwrap();
    let restarts: Vec<String> = menu
        .items
        .iter()
        .filter(|i| matches!(i, ActionChoice::Node(NodeOperation::ServiceRestart(_))))
        .map(|i| i.label("w-1"))
        .collect();
    assert_eq!(
        restarts,
        ["restart service kubelet", "restart service ext-iscsid"]
    );
}

#[test]
fn a_node_that_is_not_a_member_is_offered_only_its_forget_whose_plan_gates_on_its_guards() {
    let mut status = fixtures::healthy();
    let gone = status.nodes.iter_mut().find(|n| n.name == "w-1").unwrap();
    gone.error = Some("connection refused".into());
    gone.not_a_member = true;
    let address = gone.address.clone();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("talosconfig");
    std::fs::write(
        &file,
        format!(
            "context: healthy\ncontexts:\n  healthy:\n    endpoints:\n      - 127.10.0.2\n    nodes:\n      - 127.10.0.2\n      - {address}\n"
        ),
    )
    .unwrap();
    let mut state = nodes_pane(status, "w-1");
    let talos = state.clusters[0].talos.as_mut().unwrap();
    talos.file = file.clone();
    talos.nodes = vec!["127.10.0.2".into(), address.clone()];

    key(&mut state, 'a');
    let menu = menu(&state).expect("the menu opens");
    assert_eq!(menu.items, vec![ActionChoice::Forget]);
    press(&mut state, KeyCode::Esc);
    let effects = choose(&mut state, "forget");
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(state.screen, Screen::Module(NAME));
    let screen = plan(&state).expect("the plan screen");
    assert!(matches!(
        screen.plan,
        ChoicePlan::Forget { plan: Ok(_), .. }
    ));
    assert_eq!(guard(&state, GuardId::NotAMember), GuardVerdict::Pass);
    assert_eq!(guard(&state, GuardId::ContextFiles), GuardVerdict::Pass);
    assert_eq!(guard(&state, GuardId::OtherNodesLeft), GuardVerdict::Pass);
    let effects = key(&mut state, 's');
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("expected the dispatcher, got {effects:?}");
    };
    assert_eq!(
        action,
        &MutatingAction::ForgetNode {
            cluster: "healthy".into(),
            context: "healthy".into(),
            address: address.clone(),
        }
    );
    assert_eq!(action.confirm_name(), address, "the address confirms");
}

#[test]
fn a_member_is_not_offered_the_forget() {
    let mut state = nodes_pane(fixtures::healthy(), "w-1");
    key(&mut state, 'a');
    let menu = menu(&state).expect("the menu opens");
    assert!(!menu.items.contains(&ActionChoice::Forget), "{menu:?}");
}

/// The workload cluster of the CAPI fixture tree, cp-c's member unhealthy under its rollout
/// (the doctor's stuck rollout), on the CAPI screen with its management cluster read.
fn stuck_rollout_on_capi() -> AppState {
    use crate::capi::tree_tests::{fixture_objects, fixture_tree};
    use crate::capi::{CapiOwner, CapiView, Management};
    use crate::fleet::NodeRole;
    use crate::kube::CapiVersion;
    use crate::upgrade::fixtures::{cluster, node, set_member_healthy};
    let nodes = vec![
        node("cp-a", 0, NodeRole::Controlplane, "v1.11.3"),
        node("cp-b", 1, NodeRole::Controlplane, "v1.11.3"),
        node("cp-c", 2, NodeRole::Controlplane, "v1.11.3"),
        node("w-1", 3, NodeRole::Worker, "v1.11.3"),
    ];
    let mut status = cluster("workload", nodes, "cp-a");
    set_member_healthy(&mut status, "cp-c", false);
    let mut state = cluster_screen(status, Pane::Nodes);
    let tree = fixture_tree(CapiVersion::V1beta2);
    let owner = CapiOwner {
        management: tree.management.clone(),
        namespace: tree.namespace.clone(),
        name: tree.cluster.clone(),
    };
    state.fleet.capi = CapiView {
        managements: vec![Management {
            context: tree.management.clone(),
            objects: fixture_objects(CapiVersion::V1beta2),
            workloads: Vec::new(),
        }],
        owners: [("workload".to_string(), owner)].into(),
        errors: Vec::new(),
    };
    crate::app::shell::open_with(&mut state, "capi", Vec::new());
    assert_eq!(state.screen, Screen::Module("capi"), "{:?}", state.message);
    state
}

#[test]
fn a_doctor_finding_on_capi_is_fixed_through_its_plan_and_the_one_runner() {
    let mut state = stuck_rollout_on_capi();
    let effects = choose(&mut state, "fix stuck-rollout/workload-cp-c");
    assert!(effects.is_empty(), "{effects:?}");
    let screen = plan(&state).expect("the fix's plan");
    assert!(
        matches!(&screen.plan, ChoicePlan::CapiFix { plan: Ok(_), .. }),
        "{:?}",
        screen.plan
    );
    assert_eq!(guard(&state, GuardId::StuckMachine), GuardVerdict::Pass);
    let effects = key(&mut state, 's');
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("expected the dispatcher, got {effects:?}");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let approved = approved_by(&d, action.clone(), "workload");
    let effects = update(&mut state, Action::Approved(approved));
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("expected the run, got {effects:?}");
    };
    let ActionRun::CapiFix(fix) = run.as_ref() else {
        panic!("{run:?}")
    };
    assert_eq!(fix.owner.name, "workload");
    assert_eq!(
        state.screen,
        Screen::Module("progress"),
        "the progress shows"
    );
    assert!(plan(&state).is_none());
}

#[test]
fn the_menu_offers_a_rollback_whose_plan_takes_os_admin_and_guards_its_wait() {
    let mut state = nodes_pane(fixtures::healthy(), "cp-2");
    choose(&mut state, "roll back");
    let Some(ChoicePlan::Node { plan, .. }) = self::plan(&state).map(|p| &p.plan) else {
        panic!("expected the rollback's plan");
    };
    assert_eq!(plan.operation, NodeOperation::Rollback);
    surveyed(&mut state, "cp-2");
    assert_eq!(guard(&state, GuardId::NodeActionRole), GuardVerdict::Pass);
    assert_eq!(guard(&state, GuardId::WaitCanFinish), GuardVerdict::Pass);
    assert_eq!(guard(&state, GuardId::EtcdQuorum), GuardVerdict::Pass);
    let mut status = fixtures::healthy();
    status.role = "os:operator".into();
    let mut state = nodes_pane(status, "cp-2");
    choose(&mut state, "roll back");
    surveyed(&mut state, "cp-2");
    assert_eq!(guard(&state, GuardId::NodeActionRole), GuardVerdict::Fail);
}
