//! Unit tests of `D`: the deletion plan opens on the fleet's selected cluster or the cluster in
//! use and asks the event loop to read it, its guards are `delete_guards`' (refused while a
//! rollout holds the Lease and for a cluster taloscope did not create, naming `--adopt`), the
//! acknowledgement is typed before Start goes to the dispatcher, and a finished delete runs
//! discovery again.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::actions::ActionRun;
use crate::app::keymap::{self, KeyContext};
use crate::app::screen::{Pane, Screen, TableKind};
use crate::app::screens::ScreenNews;
use crate::app::state::AppState;
use crate::app::test_fixtures::{
    approved_on_healthy, cluster_screen, console_of, discovered, press,
};
use crate::app::update::update;
use crate::approval::MutatingAction;
use crate::cluster_lifecycle::{DESTROYS_ACK, KnownVm, VmsKnownBy};
use crate::guards::{GuardId, Verdict};
use crate::operation::progress::ProgressEvent;
use crate::upgrade::fixtures;

fn key(state: &mut AppState, c: char) -> Vec<Effect> {
    let event = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let action = keymap::action_for(state, &event).unwrap_or_else(|| panic!("{c} is bound"));
    update(state, action)
}

fn typed(state: &mut AppState, text: &str) {
    for c in text.chars() {
        update(state, Action::Insert(c));
    }
    update(state, Action::Submit);
}

/// The plan `prepare_delete` reads for `cluster` created by taloscope: two VMs.
pub(crate) fn created_plan(cluster: &str) -> DeletePlan {
    DeletePlan {
        cluster: cluster.into(),
        provider: Some("sim-opennebula".into()),
        provider_endpoint: Some("http://127.0.0.1:2633/RPC2".into()),
        known_by: VmsKnownBy::CreateJournal,
        service: None,
        vms: vec![
            KnownVm {
                id: 7,
                name: format!("{cluster}-controlplane-1"),
            },
            KnownVm {
                id: 8,
                name: format!("{cluster}-worker-1"),
            },
        ],
        talos_context: Some(cluster.into()),
        kube_context: Some(format!("admin@{cluster}")),
        merged: None,
        secrets_bundle: None,
        journals: vec![format!("/s/clusters/{cluster}.json").into()],
        lease_holder: None,
        lease_unread: None,
    }
}

/// The task asking for the delete plan of `cluster`.
fn delete_of(cluster: String) -> ClusterPlanTask {
    ClusterPlanTask {
        cluster,
        asked: Asked::Delete,
    }
}

fn read(state: &mut AppState, news: ClusterPlanNews) -> Vec<Effect> {
    let news = ScreenNews::new(NAME, news);
    update(state, Action::Event(AppEvent::Screen(news)))
}

fn planned(state: &mut AppState, plan: DeletePlan) -> Vec<Effect> {
    let cluster = plan.cluster.clone();
    let read_ = Ok(Planned::Delete(plan, Vec::new()));
    read(
        state,
        ClusterPlanNews {
            task: delete_of(cluster),
            read: read_,
        },
    )
}

/// The plan on the cluster plan screen.
fn holder(state: &AppState) -> &ClusterPlanHolder {
    let screen = state
        .screens
        .find::<ClusterPlanScreen>()
        .expect("the screen");
    screen.plan.as_ref().expect("a plan")
}

/// The cluster whose delete plan `effects` ask the console to read.
fn reads_delete_of(effects: &[Effect]) -> Option<String> {
    let [Effect::Screen(task)] = effects else {
        return None;
    };
    let task = task.get::<ClusterPlanTask>()?;
    matches!(task.asked, Asked::Delete).then(|| task.cluster.clone())
}

/// The nodes pane of `healthy` with `D` pressed and `plan` read.
fn delete_screen(plan: DeletePlan) -> AppState {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    let effects = key(&mut state, 'D');
    assert_eq!(reads_delete_of(&effects).as_deref(), Some("healthy"));
    planned(&mut state, plan);
    state
}

fn failing(state: &AppState) -> Vec<GuardId> {
    holder(state)
        .guards
        .shown
        .iter()
        .filter(|g| g.verdict == Verdict::Fail)
        .map(|g| g.id)
        .collect()
}

#[test]
fn d_on_the_fleet_plans_the_selected_cluster_and_nothing_starts_before_it_is_read() {
    let mut state = console_of(vec![discovered("healthy"), discovered("lab")]);
    state.select(TableKind::Fleet, "lab");
    let effects = key(&mut state, 'D');
    assert_eq!(reads_delete_of(&effects).as_deref(), Some("lab"));
    assert_eq!(state.screen, Screen::Module(NAME));
    assert_eq!(keymap::context(&state), KeyContext::Screen(NAME));
    let plan = holder(&state);
    assert_eq!(plan.plan.title(&plan.cluster), "delete cluster lab");
    let refused = plan.start_refused().expect("nothing read yet");
    assert!(refused.contains("create journal"), "{refused}");
    assert!(key(&mut state, 's').is_empty(), "no plan, no gate");
    // A plan read for another cluster is not this one's.
    planned(&mut state, created_plan("healthy"));
    assert!(holder(&state).guards.shown.is_empty());
    let effects = key(&mut state, 'r');
    assert_eq!(
        reads_delete_of(&effects).as_deref(),
        Some("lab"),
        "r reads it again"
    );
    press(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Fleet);
}

#[test]
fn the_acknowledgement_is_typed_then_start_asks_the_dispatcher_for_the_delete() {
    let mut state = delete_screen(created_plan("healthy"));
    let plan = holder(&state);
    assert_eq!(
        plan.plan.title(&plan.cluster),
        "delete cluster healthy: terminate 2 VM(s), remove its contexts"
    );
    assert!(failing(&state).is_empty());
    assert_eq!(plan.guards.ack_prompt(), Some(DESTROYS_ACK));
    assert!(
        keymap::footer_hints(&state)
            .iter()
            .any(|(k, l)| k == "a" && *l == "ack")
    );
    // Refused (and audited) before the ack, as `taloscope delete --yes` without --ack is.
    let effects = key(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { why, .. }] if why.contains("acknowledgement")),
        "{effects:?}"
    );
    key(&mut state, 'a');
    typed(&mut state, "yes");
    assert!(holder(&state).guards.acks.is_empty());
    key(&mut state, 'a');
    typed(&mut state, DESTROYS_ACK);
    assert_eq!(holder(&state).start_refused(), None);
    assert!(
        !keymap::footer_hints(&state)
            .iter()
            .any(|(_, l)| *l == "ack")
    );
    let effects = key(&mut state, 's');
    let [Effect::Gate(MutatingAction::DeleteCluster { cluster, vms: 2 })] = effects.as_slice()
    else {
        panic!("{effects:?}");
    };
    assert_eq!(cluster, "healthy");
}

#[test]
fn a_cluster_taloscope_did_not_create_is_refused_naming_adopt_and_audited() {
    let mut plan = created_plan("healthy");
    plan.known_by = VmsKnownBy::Unknown;
    plan.vms.clear();
    plan.journals.clear();
    let mut state = delete_screen(plan);
    assert_eq!(failing(&state), [GuardId::KnownVms]);
    let screen = holder(&state);
    assert!(
        screen.guards.shown[0]
            .reason
            .contains("taloscope delete --context healthy --adopt VMID"),
        "{}",
        screen.guards.shown[0].reason
    );
    let effects = key(&mut state, 's');
    let [Effect::Refuse { action, why }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(
        action,
        MutatingAction::DeleteCluster { vms: 0, .. }
    ));
    assert!(why.contains("known VMs"), "{why}");
    key(&mut state, '?');
    assert!(state.overlay.is_some(), "? explains the guard");
}

#[test]
fn a_rollout_holding_the_lease_refuses_the_delete() {
    let mut plan = created_plan("healthy");
    plan.lease_holder = Some("alice@ops1/42-1".into());
    let mut state = delete_screen(plan);
    assert_eq!(failing(&state), [GuardId::NoOtherRollout]);
    assert_eq!(
        holder(&state).guards.ack_prompt(),
        None,
        "nothing to type while a guard fails"
    );
    let effects = key(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "{effects:?}"
    );
}

#[test]
fn read_only_goes_to_the_dispatcher_which_refuses_and_audits() {
    let mut state = delete_screen(created_plan("healthy"));
    state.readonly = true;
    let effects = key(&mut state, 's');
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Gate(MutatingAction::DeleteCluster { .. })]
        ),
        "{effects:?}"
    );
}

#[test]
fn a_plan_that_cannot_be_read_says_why_and_refuses_start() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    key(&mut state, 'D');
    let failed = ClusterPlanNews {
        task: delete_of("healthy".into()),
        read: Err("taloscope.yaml: cluster \"healthy\" names no provider".into()),
    };
    read(&mut state, failed);
    let refused = holder(&state).start_refused().unwrap();
    assert!(refused.contains("names no provider"), "{refused}");
    assert!(key(&mut state, 's').is_empty());
}

#[test]
fn the_approved_delete_runs_reports_and_rediscovers_when_done() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = delete_screen(created_plan("healthy"));
    key(&mut state, 'a');
    typed(&mut state, DESTROYS_ACK);
    let action = created_plan("healthy").action();
    let other = MutatingAction::DeleteCluster {
        cluster: "healthy".into(),
        vms: 3,
    };
    let effects = update(
        &mut state,
        Action::Approved(approved_on_healthy(dir.path(), other)),
    );
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { .. }]),
        "{effects:?}"
    );
    let effects = update(
        &mut state,
        Action::Approved(approved_on_healthy(dir.path(), action)),
    );
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(run.as_ref(), ActionRun::Delete(p) if p.vms.len() == 2));
    assert_eq!(keymap::context(&state), KeyContext::Screen("progress"));
    let line = ProgressEvent::Line("VM healthy-worker-1 (8) is gone".into());
    update(
        &mut state,
        Action::Event(crate::app::action::progress(
            crate::operation::OperationKind::Delete,
            line,
        )),
    );
    let done = ProgressEvent::Finished(Ok("cluster healthy deleted".into()));
    let effects = update(
        &mut state,
        Action::Event(crate::app::action::progress(
            crate::operation::OperationKind::Delete,
            done,
        )),
    );
    assert!(
        matches!(effects.as_slice(), [Effect::ReloadDiscovery]),
        "{effects:?}"
    );
    let progress = state.progress().unwrap();
    assert!(progress.lines.iter().any(|l| l.contains("(8) is gone")));
    crate::app::test_fixtures::press(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Fleet, "the cluster view is gone");
}
