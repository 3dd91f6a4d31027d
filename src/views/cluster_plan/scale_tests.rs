//! Unit tests of `s` on `:capi`: the replica count typed (digits only), its plan on the
//! cluster plan screen from `prepare_scale`'s read (the same plan and guards `taloscope scale`
//! makes), Start through the dispatcher, the runner's events folded into the tally and the
//! progress lines, and the end asking for the Cluster API tree again.
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::action::{Action, AppEvent, Effect, PollerCommand};
use crate::app::actions::ActionRun;
use crate::app::keymap;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::ScreenNews;
use crate::app::state::AppState;
use crate::app::test_fixtures::{approved_on_healthy, cluster_screen};
use crate::app::update::update;
use crate::capi::tree_tests::fixture_objects;
use crate::capi::{CapiOwner, CapiView, MachineRole, Management};
use crate::capi_scale::{
    MachineChange, ScaleEvent, ScaleFacts, ScaleTarget, ScaleView, plan_scale, scale_guards,
};
use crate::fleet::FleetEvent;
use crate::kube::CapiVersion;
use crate::operation::progress::ProgressEvent;
use crate::upgrade::fixtures;

fn owner() -> CapiOwner {
    CapiOwner {
        management: "mgmt".into(),
        namespace: "clusters".into(),
        name: "workload".into(),
    }
}

/// `healthy` in use, owned by the fixture's `clusters/workload`, on its `:capi` screen.
fn capi_screen() -> AppState {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    let mut view = CapiView::default();
    view.owners.insert("healthy".into(), owner());
    view.managements.push(Management {
        context: "mgmt".into(),
        objects: fixture_objects(CapiVersion::V1beta2),
        workloads: Vec::new(),
    });
    let event = FleetEvent::Capi {
        view: Box::new(view),
        at: Instant::now(),
    };
    update(&mut state, Action::Event(AppEvent::Fleet(event)));
    press(&mut state, 'C');
    assert_eq!(state.screen, Screen::Module("capi"), "{:?}", state.message);
    state
}

fn press(state: &mut AppState, c: char) -> Vec<Effect> {
    let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let action = keymap::action_for(state, &key).unwrap_or_else(|| panic!("{c} is bound"));
    update(state, action)
}

fn select(state: &mut AppState, kind: &str) {
    for _ in 0..20 {
        let capi = state.screens.find::<crate::views::capi::CapiScreen>();
        let (rows, i) = capi
            .expect("capi")
            .rows_and_selection(&crate::app::shell::shared(state));
        if rows[i].object.starts_with(kind) {
            return;
        }
        press(state, 'j');
    }
    panic!("no {kind} row");
}

/// What `prepare_scale` reads for `request` over the fixture tree and `healthy`'s status.
fn prepared(state: &AppState, role: MachineRole, md: Option<&str>, to: u32) -> PreparedScale {
    let (_, tree) = state.fleet.capi.owned_tree("healthy").expect("tree");
    let status = state.current_live().expect("status").status.clone();
    let plan = plan_scale("healthy", &owner(), &tree, (role, md), to).expect("plan");
    let guards = scale_guards(&ScaleFacts {
        plan: &plan,
        tree: &tree,
        status: &status,
        me: &state.identity,
    });
    PreparedScale {
        plan,
        guards,
        view: ScaleView { tree, status },
    }
}

fn event(state: &mut AppState, news: ClusterPlanNews) -> Vec<Effect> {
    let news = ScreenNews::new(NAME, news);
    update(state, Action::Event(AppEvent::Screen(news)))
}

fn screen(state: &AppState) -> &ClusterPlanScreen {
    state
        .screens
        .find::<ClusterPlanScreen>()
        .expect("the screen")
}

/// The object asked about and the digits typed.
fn asking(state: &AppState) -> Option<&(ScaleTarget, String)> {
    screen(state).kept.scale.as_ref()
}

/// The plan on the cluster plan screen.
fn holder(state: &AppState) -> &ClusterPlanHolder {
    screen(state).plan.as_ref().expect("a plan")
}

fn enter(state: &mut AppState) -> Vec<Effect> {
    crate::app::test_fixtures::press(state, KeyCode::Enter)
}

/// The running scale's event, as the console's runner tells it.
fn scale_event(state: &mut AppState, event: ScaleEvent) -> Vec<Effect> {
    let mut effects = Vec::new();
    for e in crate::operation::runner_events::scale(event) {
        effects.extend(update(
            state,
            Action::Event(crate::app::action::progress(
                crate::operation::OperationKind::Scale,
                e,
            )),
        ));
    }
    effects
}

/// The running scale's counts: created, got a node, Ready.
fn counts(state: &AppState) -> Vec<u32> {
    let tally = state.progress().unwrap().tally.as_ref();
    tally.unwrap().counts.iter().map(|(_, n)| *n).collect()
}

#[test]
fn another_row_scales_the_control_plane_and_says_so() {
    let mut state = capi_screen();
    select(&mut state, "Machine/");
    press(&mut state, 's');
    let target = asking(&state).expect("asking").0.clone();
    assert_eq!(target.role, MachineRole::Controlplane);
    assert_eq!(target.object, "TalosControlPlane clusters/workload-cp");
    assert!(
        target
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("the control plane is scaled"),
        "{target:?}"
    );
    // Esc cancels: nothing asked any more.
    crate::app::test_fixtures::press(&mut state, KeyCode::Esc);
    assert!(asking(&state).is_none());
    assert_eq!(state.screen, Screen::Module("capi"));
}

#[test]
fn workers_scale_from_the_count_to_the_plan_the_confirmation_and_the_progress() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = capi_screen();
    assert!(
        keymap::footer_hints(&state)
            .iter()
            .any(|(k, l)| k == "s" && *l == "scale"),
        "{:?}",
        keymap::footer_hints(&state)
    );
    select(&mut state, "MachineDeployment/");
    press(&mut state, 's');
    assert_eq!(state.screen, Screen::Module(NAME));
    // Digits only.
    for c in ['x', '3', '-'] {
        press(&mut state, c);
    }
    assert_eq!(asking(&state).unwrap().1, "3");
    let effects = enter(&mut state);
    let request = requested(&effects);
    assert_eq!(
        request,
        (MachineRole::Worker, Some("workload-workers".into()), 3)
    );
    assert_eq!(state.screen, Screen::Module(NAME));
    let plan = holder(&state);
    assert!(
        plan.start_refused().unwrap().contains("reading"),
        "{plan:?}"
    );

    // The plan read: the same plan and guards the command makes.
    let read = prepared(&state, MachineRole::Worker, Some("workload-workers"), 3);
    let guards = read.guards.clone();
    let task = scale_asked(&state);
    event(
        &mut state,
        ClusterPlanNews {
            task,
            read: Ok(Planned::Scale(read)),
        },
    );
    let plan = holder(&state);
    assert_eq!(plan.guards.shown.len(), guards.len());
    assert_eq!(plan.start_refused(), None, "{:?}", plan.guards);
    let action = plan.approval().expect("an action");
    assert_eq!(
        action.describe(),
        "scale MachineDeployment clusters/workload-workers from 2 to 3 replicas (Cluster API)"
    );
    // `r` reads it again.
    assert_eq!(requested(&press(&mut state, 'r')).2, 3);
    let effects = press(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Gate(a)] if *a == action),
        "{effects:?}"
    );

    // Confirmed: the run starts with the plan and its acks.
    let approved = approved_on_healthy(dir.path(), action);
    let effects = update(&mut state, Action::Approved(approved));
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let ActionRun::CapiScale(plan) = run.as_ref() else {
        panic!("{run:?}");
    };
    assert_eq!((plan.from, plan.to), (2, 3));
    assert!(state.operation_running());

    // The runner's events.
    let machine = |change| ScaleEvent::Machine(change);
    scale_event(
        &mut state,
        machine(MachineChange::Created {
            machine: "workload-workers-7f9c-n3w".into(),
            phase: "Provisioning".into(),
        }),
    );
    scale_event(
        &mut state,
        ScaleEvent::Waiting {
            reason: "Machine workload-workers-7f9c-n3w has no node yet".into(),
        },
    );
    scale_event(
        &mut state,
        machine(MachineChange::GotNode {
            machine: "workload-workers-7f9c-n3w".into(),
            node: "w-3".into(),
        }),
    );
    scale_event(
        &mut state,
        machine(MachineChange::Ready {
            machine: "workload-workers-7f9c-n3w".into(),
            node: "w-3".into(),
        }),
    );
    assert_eq!(counts(&state)[..3], [1, 1, 1]);
    let done = ProgressEvent::Finished(Ok("3 Machines, every node Ready".into()));
    let effects = update(
        &mut state,
        Action::Event(crate::app::action::progress(
            crate::operation::OperationKind::Scale,
            done,
        )),
    );
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Poller(PollerCommand::RefreshAll)]
        ),
        "{effects:?}"
    );
    let progress = state.progress().unwrap();
    assert!(!progress.running());
    let lines: Vec<&String> = progress.lines.iter().collect();
    assert!(
        lines.iter().any(|l| l.contains("node w-3 Ready")),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().unwrap().as_str(),
        "done: 3 Machines, every node Ready"
    );
    // Esc goes back to :capi.
    crate::app::test_fixtures::press(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Module("capi"));
}

/// The task asking for the scale plan on screen, as the console answers it.
fn scale_asked(state: &AppState) -> ClusterPlanTask {
    let plan = holder(state);
    ClusterPlanTask {
        cluster: plan.cluster.clone(),
        asked: plan.plan.asked.clone(),
    }
}

/// The request a plan effect asks to read.
fn requested(effects: &[Effect]) -> (MachineRole, Option<String>, u32) {
    let [Effect::Screen(task)] = effects else {
        panic!("{effects:?}");
    };
    let Some(ClusterPlanTask {
        cluster,
        asked: Asked::Scale { request: r, .. },
    }) = task.get()
    else {
        panic!("{task:?}");
    };
    assert_eq!(cluster, "healthy");
    (r.role, r.deployment.clone(), r.replicas)
}

#[test]
fn an_even_control_plane_count_waits_for_its_acknowledgement_and_runs_with_it() {
    use crate::provision::guards::EVEN_MEMBERS_ACK;
    let dir = tempfile::tempdir().unwrap();
    let mut state = capi_screen();
    select(&mut state, "TalosControlPlane/");
    press(&mut state, 's');
    assert_eq!(asking(&state).unwrap().0.note, None);
    press(&mut state, '4');
    enter(&mut state);
    // The fixture's control plane is mid-rollout; settled here, as after its rollout.
    let mut read = prepared(&state, MachineRole::Controlplane, None, 4);
    read.view
        .tree
        .machines
        .iter_mut()
        .for_each(|m| m.up_to_date = true);
    read.guards = scale_guards(&ScaleFacts {
        plan: &read.plan,
        tree: &read.view.tree,
        status: &read.view.status,
        me: "",
    });
    let planned = ClusterPlanNews {
        task: scale_asked(&state),
        read: Ok(Planned::Scale(read)),
    };
    event(&mut state, planned);
    let plan = holder(&state);
    assert_eq!(
        plan.guards.ack_prompt(),
        Some(EVEN_MEMBERS_ACK),
        "{:?}",
        plan.guards
    );
    assert!(plan.start_refused().is_some());
    press(&mut state, 'a');
    for c in EVEN_MEMBERS_ACK.chars() {
        update(&mut state, Action::Insert(c));
    }
    update(&mut state, Action::Submit);
    let plan = holder(&state);
    assert_eq!(plan.start_refused(), None, "{:?}", plan.guards);
    let action = plan.approval().unwrap();
    assert!(matches!(
        press(&mut state, 's').as_slice(),
        [Effect::Gate(_)]
    ));
    let effects = update(
        &mut state,
        Action::Approved(approved_on_healthy(dir.path(), action)),
    );
    let [Effect::RunAction { run, acks, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(run.as_ref(), ActionRun::CapiScale(_)), "{run:?}");
    assert_eq!(*acks, vec![EVEN_MEMBERS_ACK.to_string()]);
    // etcd on every poll: the tally counts them, the log tells the changes.
    let etcd = ScaleEvent::Etcd {
        healthy: true,
        members: 3,
        reason: "3 of 3 members healthy".into(),
    };
    scale_event(&mut state, etcd.clone());
    scale_event(&mut state, etcd);
    let progress = state.progress().unwrap();
    let lines = progress
        .lines
        .iter()
        .filter(|l| l.contains("etcd: 3 of 3"))
        .count();
    assert_eq!(
        (progress.checks[0].polls, progress.checks[0].passed, lines),
        (2, 2, 1)
    );
}
