//! The CAPI-way upgrade's looks on the `healthy` view scenario owned by the fixture's
//! `clusters/workload` of `mgmt` (tests/fixtures/capi v1beta2): `U` opens the plan while it is
//! read, then the plan read (phases, their patches and the Machines replaced oldest first, the
//! guards worst first), and the progress screen after Start as the operation runner reports
//! the Machines created, Ready and deleted (counting phases, not nodes). Snapshots at
//! 80x24 and 200x50 in default, NO_COLOR and ASCII.
mod view_support;

use std::time::{Duration, Instant};

use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, Effect, update};
use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use taloscope::capi::{CapiOwner, CapiView, ClusterTree, cluster_trees};
use taloscope::fleet::FleetEvent;
use taloscope::kube::CapiVersion;
use taloscope::operation::{OperationEvent, OperationKind, runner_events};
use taloscope::upgrade::capi::{PlanFacts, capi_action, capi_plan};
use taloscope::views::cluster_plan::{
    self, Asked, ClusterPlanNews, ClusterPlanScreen, ClusterPlanTask, Planned,
};
use view_support::scenarios;
use view_support::{all_renders, text_at};

/// 2026-12-01T12:00:00Z.
const NOW: u64 = 1_796_126_400;

/// The fixture's tree, its control-plane Machines' nodes the scenario's control planes, every
/// Machine settled on v1.34.1, and created out of name order (cp-c first, then cp-a, cp-b).
fn tree() -> ClusterTree {
    let objects = view_support::capi_fixture::capi_objects_keeping(CapiVersion::V1beta2, |_| true);
    let mut tree = cluster_trees("mgmt", &objects).remove(0);
    for (i, m) in tree.machines.iter_mut().enumerate() {
        m.version = "v1.34.1".into();
        m.up_to_date = true;
        m.ready = true;
        m.created_unix = Some(match m.name.as_str() {
            "workload-cp-c" => 100,
            "workload-cp-a" => 200,
            _ => 300 + i as u64,
        });
    }
    // The provider's own word agrees once its Machines are settled.
    for c in &mut tree
        .control_plane
        .as_mut()
        .expect("a control plane")
        .conditions
    {
        if c.kind == "MachinesSpecUpToDate" {
            c.status = "True".into();
        }
    }
    tree
}

fn owner() -> CapiOwner {
    CapiOwner {
        management: "mgmt".into(),
        namespace: "clusters".into(),
        name: "workload".into(),
    }
}

/// The `healthy` scenario's nodes pane, owned, after `U`.
fn opened() -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    let mut view = CapiView::default();
    view.owners.insert("healthy".into(), owner());
    let capi = FleetEvent::Capi {
        view: Box::new(view),
        at: Instant::now(),
    };
    update(&mut s, Action::Event(AppEvent::Fleet(capi)));
    update(&mut s, Action::Event(AppEvent::Tick(NOW)));
    update(&mut s, Action::OpenSelected);
    let effects = update(
        &mut s,
        Action::OpenWith("kube-plan", "upgrade-k8s 1.34.2".into()),
    );
    assert_eq!(
        s.screen,
        Screen::Module(cluster_plan::NAME),
        "{:?}",
        s.message
    );
    assert!(
        matches!(effects.as_slice(), [Effect::Screen(t)] if matches!(t.get::<ClusterPlanTask>(), Some(ClusterPlanTask { asked: Asked::Upgrade(_), .. }))),
        "{effects:?}"
    );
    s
}

/// [`opened`], the plan read: made by `capi_plan` from the fixture's tree.
fn planned() -> AppState {
    let mut s = opened();
    let screen = s.screens.find::<ClusterPlanScreen>().unwrap();
    let asked = screen.plan.as_ref().unwrap().plan.asked.clone();
    let Asked::Upgrade(request) = &asked else {
        panic!("an upgrade: {asked:?}");
    };
    let tree = tree();
    let plan = capi_plan(
        "healthy",
        &tree,
        request.product,
        (&request.version, &request.target),
        &PlanFacts::default(),
    )
    .expect("a plan");
    let status = s.fleet.cluster("healthy").unwrap().status.clone();
    let read = ClusterPlanNews {
        task: ClusterPlanTask {
            cluster: "healthy".into(),
            asked: asked.clone(),
        },
        read: Ok(Planned::Upgrade(plan, Ok((tree, status)), None)),
    };
    let news = ScreenNews::new(cluster_plan::NAME, read);
    update(&mut s, Action::Event(AppEvent::Screen(news)));
    s
}

#[test]
fn capi_upgrade_plan_reading() {
    let s = opened();
    let text = text_at(&s, 80, 24);
    assert!(
        text.contains("reading the plan from the management cluster"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn capi_upgrade_plan() {
    let s = planned();
    let text = text_at(&s, 200, 50);
    assert!(
        text.contains("Upgrade healthy the Cluster API way through mgmt/clusters/workload"),
        "{text}"
    );
    // The control plane's oldest Machine first.
    assert!(
        text.contains("workload-cp-c, workload-cp-a, workload-cp-b"),
        "{text}"
    );
    assert!(text.contains("spec.version v1.34.2"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

/// [`planned`], confirmed through the dispatcher and started: the progress screen.
fn started() -> AppState {
    let mut s = planned();
    let screen = s.screens.find::<ClusterPlanScreen>().unwrap();
    let plan = screen
        .plan
        .as_ref()
        .unwrap()
        .plan
        .upgrade()
        .unwrap()
        .clone();
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(capi_action(&plan)) else {
        panic!("a confirmation");
    };
    let Verdict::Proceed(approved) = d.answer(pending, Answer::Typed("healthy".into())) else {
        panic!("the typed name matched");
    };
    let effects = update(&mut s, Action::Approved(approved));
    assert!(
        matches!(effects.as_slice(), [Effect::RunAction { .. }]),
        "{effects:?}"
    );
    assert_eq!(s.screen, Screen::Module("progress"));
    s
}

/// An event of the one operation runner, told to the app as the console's runner tells it.
fn tell(s: &mut AppState, event: OperationEvent) {
    for e in runner_events::operation(&event, None) {
        update(
            s,
            Action::Event(taloscope::app::action::progress(
                OperationKind::CapiUpgrade,
                e,
            )),
        );
    }
}

/// Phase `index` of two begins.
fn phase(s: &mut AppState, index: usize, what: &str) {
    let timeout = Duration::from_secs(900 * 4);
    let what = what.to_string();
    tell(
        s,
        OperationEvent::Step {
            index,
            total: 2,
            what,
            timeout,
        },
    );
}

/// A line of phase `index`, `at` seconds after the start.
fn line(s: &mut AppState, index: usize, at: u64, text: &str) {
    update(s, Action::Event(AppEvent::Tick(NOW + at)));
    let (elapsed, timeout) = (Duration::from_secs(at), Duration::from_secs(900 * 4));
    let text = text.to_string();
    tell(
        s,
        OperationEvent::Line {
            index,
            total: 2,
            elapsed,
            timeout,
            text,
        },
    );
}

#[test]
fn capi_upgrade_progress() {
    let mut s = started();
    phase(
        &mut s,
        0,
        "TalosControlPlane/workload-cp: 3 machine(s) to v1.34.2",
    );
    let events = [
        "TalosControlPlane/workload-cp patched to v1.34.2",
        "TalosControlPlane/workload-cp: machine workload-cp-d created",
        "TalosControlPlane/workload-cp: node workload-cp-d Ready",
        "TalosControlPlane/workload-cp: old machine workload-cp-c deleted",
    ];
    for (i, text) in events.iter().enumerate() {
        line(&mut s, 0, i as u64 + 1, text);
    }
    let text = text_at(&s, 200, 50);
    assert!(text.contains("old machine workload-cp-c deleted"), "{text}");
    assert!(text.contains("0 of 2 phases"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

/// The control plane's phase done, the workers' under way: the screen counts phases, not
/// nodes.
#[test]
fn capi_upgrade_progress_second_phase() {
    let mut s = started();
    phase(
        &mut s,
        0,
        "TalosControlPlane/workload-cp: 3 machine(s) to v1.34.2",
    );
    line(
        &mut s,
        0,
        5,
        "TalosControlPlane/workload-cp: every Machine on v1.34.2, Ready",
    );
    phase(
        &mut s,
        1,
        "MachineDeployment/workload-workers: 2 machine(s) to v1.34.2",
    );
    line(
        &mut s,
        1,
        9,
        "MachineDeployment/workload-workers patched to v1.34.2",
    );
    let text = text_at(&s, 80, 24);
    assert!(text.contains("1 of 2 phases"), "{text}");
    assert!(!text.contains("nodes done"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}
