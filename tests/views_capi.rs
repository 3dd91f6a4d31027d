//! The CAPI screen (`:capi`) and the fleet's CAPI column on the fixture management cluster of
//! tests/fixtures/capi, read as v1beta1 and as v1beta2: both draw the same tree. Snapshots at
//! 80x24 and 200x50 in default, NO_COLOR and ASCII modes; Enter shows every condition; `C`
//! opens it from the cluster panes; the doctor's finding (cp2-down's member under a rollout)
//! shown under the tree, and `f` opening its fix's plan and guards; a single control plane
//! whose etcd stopped, and `f` opening the plan of its node's reboot.
mod view_support;

use std::time::Instant;

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, Effect, update};
use taloscope::capi::{CapiOwner, CapiView, Management};
use taloscope::fleet::{EtcdReport, FleetEvent, KubernetesFacts, KubernetesReport};
use taloscope::kube::{CapiObjects, CapiVersion};
use taloscope::talos::UnmetCondition;
use taloscope::views::actions;
use taloscope::views::cluster_plan::{self, ClusterPlanNews, ClusterPlanScreen};
use view_support::scenarios;
use view_support::{all_renders, press, text_at};

/// 2026-12-01T12:00:00Z: ten minutes after the fixtures' last transitions.
const NOW: u64 = 1_796_126_400;

fn objects(version: CapiVersion) -> CapiObjects {
    objects_keeping(version, |_| true)
}

fn objects_keeping(version: CapiVersion, keep: impl Fn(&serde_json::Value) -> bool) -> CapiObjects {
    view_support::capi_fixture::capi_objects_keeping(version, keep)
}

/// The `healthy` cluster, owned by the fixture's `clusters/workload` of `mgmt`.
fn owned(version: CapiVersion) -> AppState {
    owned_scenario("healthy", version)
}

/// The view scenario `scenario`, owned by the fixture's `clusters/workload` of `mgmt`.
fn owned_scenario(scenario: &str, version: CapiVersion) -> AppState {
    owned_by(scenario, objects(version))
}

/// The view scenario `scenario`, owned by `clusters/workload` of `mgmt` made of `objects`.
fn owned_by(scenario: &str, objects: CapiObjects) -> AppState {
    let mut s = scenarios::state(&[scenario]);
    let cluster = s.clusters[0].name.clone();
    let mut view = CapiView::default();
    view.owners.insert(
        cluster,
        CapiOwner {
            management: "mgmt".into(),
            namespace: "clusters".into(),
            name: "workload".into(),
        },
    );
    view.managements.push(Management {
        context: "mgmt".into(),
        objects,
        workloads: Vec::new(),
    });
    let capi = FleetEvent::Capi {
        view: Box::new(view),
        at: Instant::now(),
    };
    update(&mut s, Action::Event(AppEvent::Fleet(capi)));
    update(&mut s, Action::Event(AppEvent::Tick(NOW)));
    s
}

fn command(s: &mut AppState, text: &str) {
    update(s, Action::OpenCommandLine);
    update(s, Action::Paste(text.into()));
    update(s, Action::Submit);
}

fn capi_screen(version: CapiVersion) -> AppState {
    capi_screen_of(owned(version))
}

fn capi_screen_of(mut s: AppState) -> AppState {
    update(&mut s, Action::OpenSelected);
    command(&mut s, "capi");
    assert_eq!(s.screen, Screen::Module("capi"), "{:?}", s.message);
    s
}

#[test]
fn the_fleet_row_names_the_owner() {
    let s = owned(CapiVersion::V1beta2);
    let text = text_at(&s, 200, 50);
    assert!(text.contains("CAPI: mgmt/clusters/workload"), "{text}");
}

#[test]
fn the_tree_is_the_same_read_as_v1beta1_or_v1beta2() {
    let v1 = text_at(&capi_screen(CapiVersion::V1beta1), 200, 50).replace("(v1beta1)", "(v1beta2)");
    let v2 = text_at(&capi_screen(CapiVersion::V1beta2), 200, 50);
    assert_eq!(v1, v2);
    assert!(
        v2.contains("MachinesSpecUpToDate False (Warning) RollingUpdateInProgress"),
        "{v2}"
    );
}

#[test]
fn capi_tree() {
    let s = capi_screen(CapiVersion::V1beta2);
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn enter_shows_every_condition_of_the_selection() {
    let mut s = capi_screen(CapiVersion::V1beta2);
    // Cluster, TalosControlPlane, cp-a, cp-b, cp-c.
    for _ in 0..4 {
        press(&mut s, KeyCode::Char('j'));
    }
    press(&mut s, KeyCode::Enter);
    let text = text_at(&s, 80, 24);
    assert!(text.contains("Machine/workload-cp-c"), "{text}");
    assert!(
        text.contains("UpToDate False NotUpToDate, since 10m ago"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_cluster_no_management_cluster_owns_has_no_capi_screen() {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    command(&mut s, "capi");
    assert_ne!(s.screen, Screen::Module("capi"));
    let message = s
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(message.contains("not owned by Cluster API"), "{message}");
}

#[test]
fn c_on_the_cluster_panes_opens_the_capi_screen() {
    let mut s = owned(CapiVersion::V1beta2);
    update(&mut s, Action::OpenSelected);
    press(&mut s, KeyCode::Char('C'));
    assert_eq!(s.screen, Screen::Module("capi"), "{:?}", s.message);
    assert!(
        !text_at(&s, 80, 24).contains("stuck"),
        "a healthy cluster has no findings"
    );
}

/// cp2-down under the fixture's rollout (workload-cp-c outdated): the rollout is stuck on
/// workload-cp-b, whose node's etcd member is down.
fn stuck_screen() -> AppState {
    capi_screen_of(owned_scenario("cp2-down", CapiVersion::V1beta2))
}

#[test]
fn capi_doctor_finding() {
    let s = stuck_screen();
    let text = text_at(&s, 200, 50);
    assert!(
        text.contains("rollout stuck: etcd member cp-2 of Machine workload-cp-b is unhealthy"),
        "{text}"
    );
    assert!(text.contains("f: fix a stuck state"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn capi_doctor_fix_plan() {
    let mut s = stuck_screen();
    press(&mut s, KeyCode::Char('f'));
    let menu = text_at(&s, 80, 24);
    assert!(menu.contains("fix stuck-rollout/workload-cp-b"), "{menu}");
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.screen, Screen::Module(actions::NAME), "{:?}", s.message);
    let text = text_at(&s, 200, 50);
    assert!(
        text.contains("Delete stuck Machine clusters/workload-cp-b (Cluster API replaces it)"),
        "{text}"
    );
    assert!(text.contains("machine is the stuck one"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

/// The doctor's Machine deletion, confirmed, becomes a run of the fix (not an upgrade's).
#[test]
fn capi_doctor_machine_deletion_runs_once_approved() {
    use taloscope::app::Effect;
    use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, MutatingAction, Verdict};
    let mut s = stuck_screen();
    press(&mut s, KeyCode::Char('f'));
    press(&mut s, KeyCode::Enter);
    let action = MutatingAction::CapiDeleteMachine {
        cluster: s.current.clone().expect("a cluster in use"),
        namespace: "clusters".into(),
        machine: "workload-cp-b".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(action.clone()) else {
        panic!("expected a confirmation")
    };
    let typed = Answer::Typed(action.confirm_name().to_string());
    let Verdict::Proceed(approved) = d.answer(pending, typed) else {
        panic!("the typed name matched")
    };
    let effects = update(&mut s, Action::Approved(approved));
    assert!(
        matches!(effects.as_slice(), [Effect::RunAction { .. }]),
        "{effects:?} {:?}",
        s.message
    );
}

/// single-cp owned by a tree of one control-plane Machine (workload-cp-a, node cp-1) whose
/// etcd service stopped: etcd answers nothing, Talos says "etcd not running".
fn stopped_screen() -> AppState {
    let objects = objects_keeping(CapiVersion::V1beta2, |m| {
        m["metadata"]["name"] == "workload-cp-a"
            || m["metadata"]["labels"]
                .get("cluster.x-k8s.io/control-plane")
                .is_none()
    });
    let mut s = owned_by("single-cp", objects);
    let cluster = s.clusters[0].name.clone();
    let mut node = s
        .fleet
        .cluster(&cluster)
        .and_then(|l| l.status.node("cp-1").cloned())
        .expect("cp-1");
    node.ready = false;
    node.unmet_conditions = vec![UnmetCondition {
        name: "services".into(),
        reason: "etcd not running".into(),
    }];
    let at = Instant::now();
    let node = FleetEvent::Node {
        cluster: cluster.clone(),
        node,
        at,
    };
    update(&mut s, Action::Event(AppEvent::Fleet(node)));
    let etcd = FleetEvent::Etcd {
        cluster,
        etcd: EtcdReport::default(),
        at,
    };
    update(&mut s, Action::Event(AppEvent::Fleet(etcd)));
    update(&mut s, Action::Event(AppEvent::Tick(NOW)));
    capi_screen_of(s)
}

#[test]
fn capi_doctor_etcd_stopped_fix_plan() {
    let mut s = stopped_screen();
    let text = text_at(&s, 200, 50);
    assert!(
        text.contains("the only etcd member (cp-1, Machine workload-cp-a) stopped"),
        "{text}"
    );
    press(&mut s, KeyCode::Char('f'));
    let menu = text_at(&s, 80, 24);
    assert!(menu.contains("fix etcd-stopped/workload-cp-a"), "{menu}");
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.screen, Screen::Module(actions::NAME), "{:?}", s.message);
    let text = text_at(&s, 200, 50);
    assert!(text.contains("Reboot node cp-1"), "{text}");
    assert!(text.contains("only etcd member stopped"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

/// [`stopped_screen`] as a real cluster in that state shows: its kube-apiserver reaches only
/// the stopped etcd, so the Kubernetes API answers nothing from storage and the rollout Lease
/// is not read.
fn stopped_api_down_screen() -> AppState {
    let mut s = stopped_screen();
    let timeout = "kube context admin@single-cp: Timeout: request did not complete within \
                   requested timeout - context deadline exceeded";
    let facts = KubernetesFacts {
        report: KubernetesReport {
            error: Some(timeout.into()),
            ..Default::default()
        },
        rollout_unread: Some(timeout.into()),
        ..Default::default()
    };
    let kube = FleetEvent::Kubernetes {
        cluster: s.clusters[0].name.clone(),
        facts: Box::new(facts),
        at: Instant::now(),
    };
    update(&mut s, Action::Event(AppEvent::Fleet(kube)));
    s
}

#[test]
fn capi_doctor_etcd_stopped_fix_plan_with_the_api_down() {
    let mut s = stopped_api_down_screen();
    press(&mut s, KeyCode::Char('f'));
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.screen, Screen::Module(actions::NAME), "{:?}", s.message);
    let text = text_at(&s, 200, 50);
    // The Lease guard says it could not read, and asks for the acknowledgement.
    assert!(
        text.contains("the rollout Lease of single-cp cannot be read"),
        "{text}"
    );
    assert!(
        text.contains("no one else is changing this cluster"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
    // Refused (and audited) until acknowledged.
    let effects = press(&mut s, KeyCode::Char('s'));
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { why, .. }] if why.contains("acknowledge")),
        "{effects:?}"
    );
    press(&mut s, KeyCode::Char('a'));
    update(
        &mut s,
        Action::Paste("no one else is changing this cluster".into()),
    );
    update(&mut s, Action::Submit);
    let actions = s.screens.find::<actions::ActionsScreen>();
    let plan = actions.and_then(|a| a.plan.as_ref()).expect("the plan");
    assert_eq!(
        plan.start_refused(),
        None,
        "acknowledged: {:?}",
        plan.guards
    );
    // `?` on the guard says why the Lease cannot be read and what to check first.
    press(&mut s, KeyCode::Char('?'));
    let why = text_at(&s, 200, 50);
    assert!(why.contains("the Lease cannot be read"), "{why}");
}

// Scaling the CAPI way (`s` on `:capi`): the replica count, the plan, the progress.

/// The `:capi` screen with the MachineDeployment selected and `s` pressed.
fn scale_asked() -> AppState {
    let mut s = capi_screen(CapiVersion::V1beta2);
    let selected = |s: &AppState| {
        let capi = s.screens.find::<taloscope::views::capi::CapiScreen>();
        capi.and_then(|c| c.selected.clone()).unwrap_or_default()
    };
    while !selected(&s).starts_with("MachineDeployment/") {
        press(&mut s, KeyCode::Char('j'));
    }
    press(&mut s, KeyCode::Char('s'));
    s
}

/// The plan of the workers to `to`, as `prepare_scale` reads it for the screen.
fn scale_planned(to: char) -> AppState {
    use taloscope::app::screens::ScreenNews;
    use taloscope::capi::MachineRole;
    use taloscope::capi_scale::{PreparedScale, ScaleFacts, ScaleView, plan_scale, scale_guards};
    let mut s = scale_asked();
    press(&mut s, KeyCode::Char(to));
    press(&mut s, KeyCode::Enter);
    let cluster = s.current.clone().expect("in use");
    let (owner, tree) = s.fleet.capi.owned_tree(&cluster).expect("a tree");
    let owner = owner.clone();
    let status = s.current_live().expect("status").status.clone();
    let replicas = to.to_digit(10).unwrap();
    let role = (MachineRole::Worker, Some("workload-workers"));
    let plan = plan_scale(&cluster, &owner, &tree, role, replicas).expect("plan");
    let facts = ScaleFacts {
        plan: &plan,
        tree: &tree,
        status: &status,
        me: "",
    };
    let guards = scale_guards(&facts);
    let read = Ok(cluster_plan::Planned::Scale(PreparedScale {
        plan,
        guards,
        view: ScaleView { tree, status },
    }));
    // The task the screen asked, answered.
    let screen = s
        .screens
        .find::<ClusterPlanScreen>()
        .expect("the plan screen");
    let asked = screen.plan.as_ref().expect("a plan").plan.asked.clone();
    let task = cluster_plan::ClusterPlanTask { cluster, asked };
    let planned = ClusterPlanNews { task, read };
    let news = ScreenNews::new(cluster_plan::NAME, planned);
    update(&mut s, Action::Event(AppEvent::Screen(news)));
    s
}

#[test]
fn capi_scale_replicas() {
    let mut s = scale_asked();
    press(&mut s, KeyCode::Char('3'));
    let text = text_at(&s, 80, 24);
    assert!(
        text.contains("MachineDeployment clusters/workload-workers"),
        "{text}"
    );
    assert!(text.contains("New replicas: 3"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn capi_scale_plan() {
    let s = scale_planned('3');
    let text = text_at(&s, 200, 50);
    assert!(
        text.contains("Scale MachineDeployment clusters/workload-workers from 2 to 3 replicas"),
        "{text}"
    );
    assert!(text.contains("replicas:  2 -> 3"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn capi_scale_progress() {
    use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
    use taloscope::capi_scale::{MachineChange, ScaleEvent};
    use taloscope::operation::progress::ProgressEvent;
    use taloscope::operation::runner_events;
    let mut s = scale_planned('3');
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let screen = s
        .screens
        .find::<ClusterPlanScreen>()
        .expect("the cluster plan");
    let action = screen.plan.as_ref().unwrap().approval().unwrap();
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("a confirmation")
    };
    let cluster = s.current.clone().unwrap();
    let Verdict::Proceed(approved) = d.answer(pending, Answer::Typed(cluster)) else {
        panic!("confirmed")
    };
    update(&mut s, Action::Approved(approved));
    let machine = "workload-workers-7f9c-n3wq".to_string();
    let events = [
        ScaleEvent::Note {
            text: "MachineDeployment clusters/workload-workers: spec.replicas 2 -> 3".into(),
        },
        ScaleEvent::Machine(MachineChange::Created {
            machine: machine.clone(),
            phase: "Provisioning".into(),
        }),
        ScaleEvent::Waiting {
            reason: format!("Machine {machine} has no node yet"),
        },
        ScaleEvent::Machine(MachineChange::GotNode {
            machine: machine.clone(),
            node: "w-3".into(),
        }),
    ];
    for event in events {
        for e in runner_events::scale(event) {
            update(
                &mut s,
                Action::Event(taloscope::app::action::progress(
                    taloscope::operation::OperationKind::Scale,
                    e,
                )),
            );
        }
    }
    let text = text_at(&s, 80, 24);
    assert!(text.contains("1 created, 1 got a node, 0 Ready"), "{text}");
    insta::assert_snapshot!("capi_scale_progress_running", all_renders(&s));
    let ready = ScaleEvent::Machine(MachineChange::Ready {
        machine,
        node: "w-3".into(),
    });
    for e in runner_events::scale(ready) {
        update(
            &mut s,
            Action::Event(taloscope::app::action::progress(
                taloscope::operation::OperationKind::Scale,
                e,
            )),
        );
    }
    let done = ProgressEvent::Finished(Ok("3 Machines, every node Ready (4 polls, 9 s)".into()));
    update(
        &mut s,
        Action::Event(taloscope::app::action::progress(
            taloscope::operation::OperationKind::Scale,
            done,
        )),
    );
    insta::assert_snapshot!("capi_scale_progress_done", all_renders(&s));
}
