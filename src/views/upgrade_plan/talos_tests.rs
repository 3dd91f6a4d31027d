//! Unit tests of the Talos plan screen and the upgrade on the progress screen: keys to
//! state, guards re-evaluated on status changes, the releases learned at run time, the typed
//! acknowledgement and the installer image, the confirm flow through the dispatcher, read-only
//! refusal, progress events, pause / resume / cancel, and resuming a journal.
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::kubernetes_tests::capi_owner_read;
use super::talos::PlanScreen;
use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::actions::ActionRun;
use crate::app::keymap::{self, KeyContext};
use crate::app::screen::Pane;
use crate::app::state::{AppState, Overlay};
use crate::app::test_fixtures::{approved_on_healthy, cluster_screen, healthy_rollout, press};
use crate::app::update::{apply, update};
use crate::approval::{AuditLog, Dispatcher, Gate, MutatingAction, Verdict};
use crate::fleet::{ClusterStatus, FleetEvent};
use crate::operation::progress::{ProgressEvent, StepState as ProgressStep};
use crate::upgrade::fixtures;
use crate::upgrade::{GuardId, SINGLE_CONTROL_PLANE_ACK, Verdict as GuardVerdict};

/// The cluster screen of `status`'s cluster, its status known.
fn state_with(status: ClusterStatus) -> AppState {
    cluster_screen(status, Pane::Nodes)
}

fn plan_of(status: ClusterStatus) -> AppState {
    let mut state = state_with(status);
    let key = KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE);
    let action = keymap::action_for(&state, &key).expect("u is bound on the cluster screen");
    update(&mut state, action);
    assert_eq!(
        state.screen,
        Screen::Module(TALOS_PLAN),
        "{:?}",
        state.message
    );
    assert_eq!(keymap::context(&state), KeyContext::Screen(TALOS_PLAN));
    state
}

/// Presses the character `c` as the console does: through the keymap, then update.
fn key(state: &mut AppState, c: char) -> Vec<Effect> {
    press(state, KeyCode::Char(c))
}

fn dispatcher(dir: &std::path::Path, readonly: bool) -> Dispatcher {
    Dispatcher::new(readonly, AuditLog::new(dir.join("audit.log")))
}

fn plan(state: &AppState) -> &PlanScreen {
    let module = state.screens.find::<TalosPlanModule>().expect("the module");
    module.plan.as_ref().expect("plan open")
}

fn gate(effects: Vec<Effect>) -> MutatingAction {
    match effects.as_slice() {
        [Effect::Gate(action)] => action.clone(),
        other => panic!("expected one Gate, got {other:?}"),
    }
}

#[test]
fn u_opens_the_plan_with_guards_and_the_running_minors_newest_patch() {
    let state = plan_of(fixtures::healthy());
    let p = plan(&state);
    assert_eq!(p.target.to_string(), "v1.11.6", "not a minor jump");
    assert!(p.targets.iter().any(|t| t.to_string() == "v1.12.11"));
    assert_eq!(
        crate::app::plan_screen::verdict_counts(&p.guards.shown).2,
        0,
        "healthy: no guard fails: {:?}",
        p.guards
    );
    assert_eq!(p.start_refused(), None);
    let order: Vec<&str> = p
        .made
        .as_ref()
        .unwrap()
        .steps
        .iter()
        .map(|s| s.node.as_str())
        .collect();
    assert_eq!(order.last(), Some(&"w-2"));
    assert_eq!(
        order[2], "cp-1",
        "the etcd leader goes last of the control planes"
    );
}

#[test]
fn upgrade_command_takes_a_known_release_and_refuses_others() {
    let mut state = state_with(fixtures::healthy());
    update(&mut state, Action::OpenCommandLine);
    for c in "upgrade v1.13.0".chars() {
        update(&mut state, Action::Insert(c));
    }
    update(&mut state, Action::Submit);
    let p = plan(&state);
    assert_eq!(p.target.to_string(), "v1.13.0");
    let path = p
        .guards
        .shown
        .iter()
        .find(|g| g.id == GuardId::VersionPath)
        .unwrap();
    assert_eq!(
        path.verdict,
        GuardVerdict::Fail,
        "a skipped minor fails its guard"
    );
    assert!(p.start_refused().is_some());

    let mut state = state_with(fixtures::healthy());
    update(
        &mut state,
        Action::OpenWith("upgrade-plan", "upgrade v9.9.9".into()),
    );
    assert_eq!(state.screen, Screen::Cluster(Pane::Nodes));
    assert!(
        state
            .screens
            .find::<TalosPlanModule>()
            .unwrap()
            .plan
            .is_none()
    );
    assert!(state.message.unwrap().text.contains("not a known release"));
}

#[test]
fn start_is_refused_while_a_guard_fails() {
    let mut state = plan_of(fixtures::cp2_down());
    let failing: Vec<GuardId> = plan(&state)
        .guards
        .shown
        .iter()
        .filter(|g| g.verdict == GuardVerdict::Fail)
        .map(|g| g.id)
        .collect();
    assert!(failing.contains(&GuardId::EtcdHealthy), "{failing:?}");
    assert_eq!(
        plan(&state).guards.shown[0].verdict,
        GuardVerdict::Fail,
        "worst first"
    );
    let effects = key(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    assert!(state.message.unwrap().text.starts_with("Start refused"));
}

#[test]
fn guards_follow_live_status() {
    let mut state = plan_of(fixtures::healthy());
    assert_eq!(plan(&state).start_refused(), None);
    let mut etcd = fixtures::healthy().etcd;
    etcd.members[1].healthy = false;
    etcd.members[1].errors = vec!["context deadline exceeded".into()];
    let event = FleetEvent::Etcd {
        cluster: "healthy".into(),
        etcd,
        at: Instant::now(),
    };
    let outcome = apply(&mut state, Action::Event(AppEvent::Fleet(event)));
    assert!(outcome.redraw, "a guard changed, so the plan redraws");
    let etcd = plan(&state)
        .guards
        .shown
        .iter()
        .find(|g| g.id == GuardId::EtcdHealthy)
        .unwrap();
    assert_eq!(etcd.verdict, GuardVerdict::Fail);
    assert!(plan(&state).start_refused().is_some());
}

#[test]
fn a_single_control_plane_needs_the_typed_acknowledgement() {
    let mut state = plan_of(fixtures::single_cp());
    assert_eq!(
        plan(&state).guards.missing_ack(),
        Some(SINGLE_CONTROL_PLANE_ACK),
        "{:?}",
        plan(&state).guards
    );
    let effects = key(&mut state, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    key(&mut state, 'a');
    assert_eq!(keymap::context(&state), KeyContext::TextField);
    for c in "the API will be down".chars() {
        update(&mut state, Action::Insert(c));
    }
    update(&mut state, Action::Submit);
    assert!(
        plan(&state).guards.missing_ack().is_some(),
        "a wrong text is no ack"
    );
    key(&mut state, 'a');
    update(&mut state, Action::Paste(SINGLE_CONTROL_PLANE_ACK.into()));
    update(&mut state, Action::Submit);
    assert_eq!(plan(&state).guards.missing_ack(), None);
    let action = gate(key(&mut state, 's'));
    assert_eq!(action.cluster(), "single");
}

#[test]
fn the_acknowledged_message_does_not_outlive_the_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dispatcher(dir.path(), false);
    let mut state = plan_of(fixtures::single_cp());
    key(&mut state, 'a');
    update(&mut state, Action::Paste(SINGLE_CONTROL_PLANE_ACK.into()));
    update(&mut state, Action::Submit);
    let said = |s: &AppState| s.message.as_ref().map(|m| m.text.clone());
    assert_eq!(said(&state).as_deref(), Some("acknowledged; s starts"));
    let action = gate(key(&mut state, 's'));
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("not read-only: expected a confirmation");
    };
    update(&mut state, Action::AskConfirmation(pending));
    update(&mut state, Action::Paste("single".into()));
    let effects = update(&mut state, Action::Submit);
    let [Effect::Answer(pending, answer)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let Verdict::Proceed(approved) = d.answer(pending.clone(), answer.clone()) else {
        panic!("the typed name matched");
    };
    update(&mut state, Action::Approved(approved));
    let starting = said(&state).unwrap_or_default();
    assert!(starting.starts_with("starting the upgrade"), "{starting}");
    let done = ProgressEvent::Finished(Ok("completed: every node done or skipped".into()));
    told(&mut state, done);
    let said = said(&state).unwrap_or_default();
    assert!(
        said.ends_with("done: completed: every node done or skipped"),
        "{said}"
    );
    let log: Vec<&str> = state.messages.iter().map(|m| m.text.as_str()).collect();
    assert!(log.contains(&"acknowledged; s starts"), "{log:?}");
}

#[test]
fn confirm_flow_starts_the_plan_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dispatcher(dir.path(), false);
    let mut state = plan_of(fixtures::healthy());
    press(&mut state, KeyCode::Down);
    key(&mut state, 'x'); // leave cp-3 out
    let action = gate(key(&mut state, 's'));
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("not read-only: expected a confirmation");
    };
    update(&mut state, Action::AskConfirmation(pending));
    assert_eq!(keymap::context(&state), KeyContext::Confirm);
    for c in "healthy".chars() {
        update(&mut state, Action::Insert(c));
    }
    let effects = update(&mut state, Action::Submit);
    let [Effect::Answer(pending, answer)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let Verdict::Proceed(approved) = d.answer(pending.clone(), answer.clone()) else {
        panic!("the typed name matched");
    };
    let effects = update(&mut state, Action::Approved(approved));
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let ActionRun::Upgrade(planned) = run.as_ref() else {
        panic!("an upgrade: {run:?}");
    };
    let crate::app::plan_screen::PlannedRollout::Talos(plan) = planned.as_ref() else {
        panic!("a Talos plan: {planned:?}");
    };
    assert_eq!(plan.cluster, "healthy");
    let cp3 = plan.steps.iter().find(|s| s.node == "cp-3").unwrap();
    assert!(cp3.is_skipped(), "the plan runs as edited");
    assert_eq!(state.screen, Screen::Module("progress"));
    let progress = state.progress().unwrap();
    assert!(progress.running());
    assert_eq!(progress.steps_word, "nodes");
    assert!(
        matches!(progress.steps[1].state, ProgressStep::Skipped(_)),
        "{:?}",
        progress.steps
    );
    // Another plan on the same cluster now waits for this rollout.
    crate::app::test_fixtures::press(&mut state, KeyCode::Esc);
    update(&mut state, Action::Open("upgrade-plan"));
    assert_eq!(state.screen, Screen::Module("progress"));
}

#[test]
fn cancel_is_the_default_and_readonly_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = plan_of(fixtures::healthy());
    let action = gate(key(&mut state, 's'));
    let Gate::Refused(msg) = dispatcher(dir.path(), true).request(action.clone()) else {
        panic!("read-only must refuse");
    };
    assert!(msg.contains("read-only"), "{msg}");
    let d = dispatcher(dir.path(), false);
    let Gate::Confirm(pending) = d.request(action) else {
        panic!()
    };
    update(&mut state, Action::AskConfirmation(pending));
    // Enter with a partial name cancels.
    for c in "healt".chars() {
        update(&mut state, Action::Insert(c));
    }
    let effects = update(&mut state, Action::Submit);
    let [Effect::Answer(pending, answer)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(
        d.answer(pending.clone(), answer.clone()),
        Verdict::Cancelled(_)
    ));
    assert!(state.progress().is_none());
}

#[test]
fn approval_after_the_plan_closed_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = plan_of(fixtures::healthy());
    let action = gate(key(&mut state, 's'));
    let approved = approved_on_healthy(dir.path(), action);
    press(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Cluster(Pane::Nodes));
    let effects = update(&mut state, Action::Approved(approved));
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { .. }]),
        "{effects:?}"
    );
}

#[test]
fn edits_survive_a_new_target_and_explain_says_why() {
    let mut state = plan_of(fixtures::healthy());
    key(&mut state, 'J'); // cp-2 after cp-3
    let order = |s: &AppState| -> Vec<String> {
        plan(s)
            .made
            .as_ref()
            .unwrap()
            .steps
            .iter()
            .map(|s| s.node.clone())
            .collect()
    };
    assert_eq!(order(&state)[..3], ["cp-3", "cp-2", "cp-1"]);
    key(&mut state, 't');
    assert_eq!(order(&state)[..3], ["cp-3", "cp-2", "cp-1"], "replayed");
    press(&mut state, KeyCode::Down); // cp-1, the leader
    key(&mut state, 'J');
    let said = state
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.contains("control planes go before workers"), "{said}");
    key(&mut state, '?');
    let Some(Overlay::Explain { title, text, .. }) = &state.overlay else {
        panic!("{:?}", state.overlay);
    };
    assert_eq!(title, "cp-1");
    assert!(text.contains("hands leadership"), "{text}");
    press(&mut state, KeyCode::Esc);
    press(&mut state, KeyCode::Tab);
    key(&mut state, '?');
    let Some(Overlay::Explain { text, .. }) = &state.overlay else {
        panic!()
    };
    assert!(text.contains("Now: pass"), "{text}");
}

/// A Talos upgrade of `healthy` started through the confirmation, on its progress screen.
fn rollout_state() -> AppState {
    let dir = tempfile::tempdir().unwrap();
    let mut state = plan_of(fixtures::healthy());
    let action = gate(key(&mut state, 's'));
    let approved = approved_on_healthy(dir.path(), action);
    let effects = update(&mut state, Action::Approved(approved));
    assert!(
        matches!(effects.as_slice(), [Effect::RunAction { .. }]),
        "{effects:?}"
    );
    assert_eq!(keymap::context(&state), KeyContext::Screen("progress"));
    state
}

/// A progress event of the Talos upgrade running here.
fn told(state: &mut AppState, event: ProgressEvent) {
    let kind = crate::operation::OperationKind::TalosUpgrade;
    update(
        state,
        Action::Event(crate::app::action::progress(kind, event)),
    );
}

#[test]
fn pause_resume_and_cancel_go_to_the_runner() {
    let mut state = rollout_state();
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let action = keymap::action_for(&state, &key(' ')).unwrap();
    let effects = update(&mut state, action);
    assert!(matches!(effects.as_slice(), [Effect::HoldAction(true)]));
    told(&mut state, ProgressEvent::Paused(true));
    let action = keymap::action_for(&state, &key('r')).unwrap();
    let effects = update(&mut state, action);
    assert!(matches!(effects.as_slice(), [Effect::HoldAction(false)]));
    told(&mut state, ProgressEvent::Paused(false));
    let action = keymap::action_for(&state, &key('c')).unwrap();
    let effects = update(&mut state, action);
    assert!(matches!(effects.as_slice(), [Effect::CancelAction]));
}

#[test]
fn a_journal_is_shown_and_resumed_through_the_dispatcher() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = state_with(fixtures::healthy());
    let mut summary = healthy_rollout(
        crate::rollout::RolloutKind::TalosUpgrade,
        "v1.12.0",
        vec![
            crate::rollout::StepProgress::pending("cp-2", "upgrade"),
            crate::rollout::StepProgress::pending("cp-1", "upgrade"),
        ],
    );
    summary.steps[0].phase = crate::rollout::StepPhase::Done;
    update(
        &mut state,
        Action::Event(crate::app::actions::ProgressNews::Journal(Box::new(summary)).told()),
    );
    assert!(
        state
            .message
            .as_ref()
            .unwrap()
            .text
            .contains("did not finish")
    );
    // The plan refuses while the journal's rollout has not ended.
    update(&mut state, Action::Open("upgrade-plan"));
    assert_eq!(state.screen, Screen::Module("progress"));
    let progress = state.progress().unwrap();
    assert!(!progress.running() && progress.resumable.is_some());
    assert_eq!(
        progress.lines.back().unwrap(),
        "journal: stopped at node 2 of 2; r resumes after the guards pass again"
    );
    assert_eq!(
        footer_labels(&state),
        ["resume", "focus", "back", "help", "quit"]
    );
    let action = gate(press(&mut state, KeyCode::Char('r')));
    let approved = approved_on_healthy(dir.path(), action);
    let effects = update(&mut state, Action::Approved(approved));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::RunAction { run, .. }] if matches!(run.as_ref(), ActionRun::ResumeUpgrade)
        ),
        "{effects:?}"
    );
    let progress = state.progress().unwrap();
    assert!(progress.running() && progress.resumable.is_none());
}

#[test]
fn another_consoles_lease_fails_the_guard_but_our_own_does_not() {
    let mut status = fixtures::healthy();
    status.rollout = Some(crate::fleet::status::RolloutStatus {
        holder: "bob@jump2".into(),
        node_index: 2,
        node_count: 5,
        ..Default::default()
    });
    let mut state = state_with(status.clone());
    state.identity = "alice@ops1".into();
    update(&mut state, Action::Open("upgrade-plan"));
    let guard = plan(&state)
        .guards
        .shown
        .iter()
        .find(|g| g.id == GuardId::NoOtherRollout)
        .unwrap();
    assert_eq!(guard.verdict, GuardVerdict::Fail);
    assert!(
        guard.reason.contains("bob@jump2, node 2 of 5"),
        "{}",
        guard.reason
    );

    let mut state = state_with(status);
    state.identity = "bob@jump2".into();
    update(&mut state, Action::Open("upgrade-plan"));
    assert_eq!(plan(&state).start_refused(), None);
}

fn footer_labels(state: &AppState) -> Vec<&'static str> {
    keymap::footer_hints(state)
        .into_iter()
        .map(|(_, l)| l)
        .collect()
}

#[test]
fn the_footer_offers_only_what_the_rollout_can_do_now() {
    let mut state = rollout_state();
    assert_eq!(
        footer_labels(&state),
        ["cancel", "pause", "focus", "back", "help", "quit"]
    );
    press(&mut state, KeyCode::Char(' '));
    assert_eq!(
        state.message.as_ref().unwrap().text,
        "pausing after the current node"
    );
    told(&mut state, ProgressEvent::Paused(true));
    assert_eq!(
        footer_labels(&state),
        ["cancel", "resume", "focus", "back", "help", "quit"]
    );
    let aborted = ProgressEvent::Finished(Err("cancelled before the next node".into()));
    told(&mut state, aborted);
    assert_eq!(footer_labels(&state), ["focus", "back", "help", "quit"]);
    // The key still says why, as a warning, not a green tick.
    press(&mut state, KeyCode::Char(' '));
    let m = state.message.as_ref().unwrap();
    assert_eq!(m.level, crate::app::message::Level::Warn);
    assert!(m.text.contains("ended: nothing to pause"), "{}", m.text);
}

#[test]
fn quitting_while_a_rollout_runs_asks_first() {
    let mut state = rollout_state();
    let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    let action = keymap::action_for(&state, &q).unwrap();
    assert!(update(&mut state, action).is_empty(), "no quit yet");
    assert_eq!(keymap::context(&state), KeyContext::QuitQuestion);
    assert_eq!(
        state.message.as_ref().unwrap().text,
        "a rollout is running; the journal resumes it next time; quit? y/N"
    );
    // n (and Esc, q, Ctrl-C) stay; the question closes.
    let n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE);
    let action = keymap::action_for(&state, &n).unwrap();
    assert!(update(&mut state, action).is_empty());
    assert_eq!(keymap::context(&state), KeyContext::Screen("progress"));
    // Ctrl-C asks too, and y quits.
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let action = keymap::action_for(&state, &ctrl_c).unwrap();
    assert!(update(&mut state, action).is_empty());
    let y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
    let action = keymap::action_for(&state, &y).unwrap();
    assert!(matches!(
        update(&mut state, action).as_slice(),
        [Effect::Quit]
    ));
    // In the demo, the question says the fleet stops with it.
    let mut demo = rollout_state();
    demo.demo_fleet = true;
    update(&mut demo, Action::Quit);
    let text = &demo.quit_question.as_ref().unwrap();
    assert!(text.contains("demo fleet stops"), "{text}");
    // Once it ended, q quits at once.
    let mut ended = rollout_state();
    told(&mut ended, ProgressEvent::Finished(Ok("completed".into())));
    assert!(matches!(
        update(&mut ended, Action::Quit).as_slice(),
        [Effect::Quit]
    ));
}

#[test]
fn a_capi_owned_clusters_talos_plan_is_refused_naming_the_capi_way() {
    let mut state = plan_of(fixtures::healthy());
    assert_eq!(plan(&state).start_refused(), None, "not owned yet");
    // The management clusters are read after the plan opened: it is re-evaluated.
    update(&mut state, capi_owner_read("healthy"));
    let guard = plan(&state)
        .guards
        .shown
        .iter()
        .find(|g| g.id == GuardId::CapiOwned)
        .cloned()
        .expect("the CAPI guard");
    assert_eq!(guard.verdict, GuardVerdict::Fail);
    let reason = &guard.reason;
    assert!(
        reason.contains("owned by Cluster API (mgmt/clusters/workload)"),
        "{reason}"
    );
    assert!(
        reason.contains("infrastructure machine template"),
        "{reason}"
    );
    assert!(plan(&state).start_refused().is_some());
}

/// The releases a registry lists for `healthy`: the built-in table and one newer patch.
fn learned_with(tag: &str) -> Action {
    let learned = fixtures::registry_releases(tag);
    let cluster = "healthy".to_string();
    let news = ScreenNews::new(
        TALOS_PLAN,
        crate::upgrade::ReleasesLearned { cluster, learned },
    );
    Action::Event(AppEvent::Screen(news))
}

#[test]
fn learned_releases_move_a_plan_on_its_default_target_and_open_the_next_one_on_theirs() {
    let mut state = plan_of(fixtures::healthy());
    assert_eq!(plan(&state).target.to_string(), "v1.11.6");
    let outcome = apply(&mut state, learned_with("v1.11.9"));
    assert!(outcome.redraw, "the plan on screen changed");
    assert_eq!(
        plan(&state).target.to_string(),
        "v1.11.9",
        "the new default"
    );
    assert!(plan(&state).made.is_ok(), "{:?}", plan(&state).made);
    // A target the operator chose stays chosen.
    key(&mut state, 't');
    let chosen = plan(&state).target.clone();
    update(&mut state, learned_with("v1.11.10"));
    assert_eq!(plan(&state).target, chosen);
    // Closed and opened again: on the learned releases' default.
    press(&mut state, KeyCode::Esc);
    key(&mut state, 'u');
    assert_eq!(plan(&state).target.to_string(), "v1.11.10");
}

#[test]
fn the_installer_image_is_typed_and_a_bad_one_is_refused() {
    fn field(s: &mut AppState) -> &mut String {
        &mut s.input.as_mut().expect("the field").text
    }
    let mut state = plan_of(fixtures::healthy());
    key(&mut state, 'i');
    assert_eq!(keymap::context(&state), KeyContext::TextField);
    assert_eq!(field(&mut state), "ghcr.io/siderolabs/installer:v1.11.6");
    *field(&mut state) = "factory.talos.dev/installer/abc:v1.11.6".into();
    update(&mut state, Action::Submit);
    let image = |s: &AppState| plan(s).made.as_ref().map(|p| p.image.clone()).unwrap();
    assert_eq!(image(&state), "factory.talos.dev/installer/abc:v1.11.6");
    assert!(plan(&state).image.is_some());
    key(&mut state, 'i');
    *field(&mut state) = "not an image".into();
    update(&mut state, Action::Submit);
    let said = state.message.as_ref().unwrap();
    assert_eq!(said.level, crate::app::message::Level::Error);
    assert!(plan(&state).image.is_none(), "dropped for the default");
    assert_eq!(image(&state), "ghcr.io/siderolabs/installer:v1.11.6");
}

#[test]
fn the_acknowledgement_typed_after_the_image_field_was_left_is_an_acknowledgement() {
    let mut state = plan_of(fixtures::single_cp());
    key(&mut state, 'i');
    press(&mut state, KeyCode::Esc);
    key(&mut state, 'a');
    update(&mut state, Action::Paste(SINGLE_CONTROL_PLANE_ACK.into()));
    update(&mut state, Action::Submit);
    assert_eq!(plan(&state).guards.missing_ack(), None);
    assert!(plan(&state).image.is_none());
}

#[test]
fn the_options_make_the_plan_again() {
    let mut state = plan_of(fixtures::healthy());
    let parallel = |s: &AppState| plan(s).options.max_parallel;
    let before = parallel(&state);
    key(&mut state, '+');
    assert_eq!(parallel(&state), before + 1);
    key(&mut state, '-');
    key(&mut state, '-');
    key(&mut state, '-');
    assert_eq!(parallel(&state), 1, "never below one");
    key(&mut state, 'S');
    assert!(plan(&state).options.stage);
    key(&mut state, 'P');
    assert!(
        !plan(&state).options.preserve,
        "no node below Talos 1.8 here"
    );
    let said = state.message.as_ref().unwrap();
    assert!(said.text.contains("preserve only matters"), "{}", said.text);
}
