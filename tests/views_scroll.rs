//! Every step list and event log scrolls (issue 16, item 1): the Kubernetes
//! rollout on the progress screen keeps its STEP column at 80 columns, counts steps, and its
//! steps and lines scroll with j/k, PgUp/PgDn and g/G (Tab switches); the
//! Talos plan answers g/G; node detail's events scroll. Keys go through the
//! keymap and the update step as in the console; snapshots at 80x24 and
//! 200x50.
mod view_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use taloscope::app::keymap::action_for;
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::fleet::FleetEvent;
use taloscope::operation::OperationKind;
use taloscope::operation::progress::ProgressEvent;
use taloscope::rollout::{RolloutKind, RolloutSummary, StepProgress};
use taloscope::views::upgrade_plan;
use view_support::scenarios;
use view_support::{all_renders_default_styles, screen_text_at};

/// Presses `c` as the console would: through the keymap, then update.
fn press(s: &mut AppState, code: KeyCode) {
    let event = KeyEvent::new(code, KeyModifiers::NONE);
    let action = action_for(s, &event).unwrap_or_else(|| panic!("{code:?} does nothing here"));
    update(s, action);
}

/// The Kubernetes rollout of healthy-112's plan as a journal left it, on the progress screen,
/// with `lines` more lines told.
fn kube_rollout(lines: usize) -> AppState {
    let mut s = scenarios::state(&[scenarios::HEALTHY_112]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Open("kube-plan"));
    let plan = s
        .screens
        .find::<taloscope::views::upgrade_plan::KubePlanModule>()
        .and_then(|m| m.plan.as_ref())
        .and_then(|p| p.made.clone().ok())
        .expect("a plan");
    let steps: Vec<StepProgress> = plan
        .steps
        .iter()
        .map(|step| StepProgress::pending(&step.node, &step.label(&plan.target)))
        .collect();
    assert_eq!(steps.len(), 17);
    press(&mut s, KeyCode::Esc);
    let journal = RolloutSummary {
        cluster: plan.cluster.clone(),
        kind: RolloutKind::KubernetesUpgrade,
        target: plan.target.to_string(),
        holder: "op@jump1".into(),
        steps,
        paused: false,
        outcome: None,
    };
    update(
        &mut s,
        Action::Event(taloscope::app::actions::ProgressNews::Journal(Box::new(journal)).told()),
    );
    for i in 0..lines {
        let line = ProgressEvent::Line(format!("event line {i:02}"));
        let told = taloscope::app::action::progress(OperationKind::KubernetesUpgrade, line);
        update(&mut s, Action::Event(told));
    }
    update(&mut s, Action::OpenWith("progress", "rollout".into()));
    assert_eq!(s.screen, Screen::Module("progress"), "{:?}", s.message);
    s
}

#[test]
fn the_kubernetes_rollout_keeps_its_steps_at_80_and_counts_steps() {
    let s = kube_rollout(3);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("0 of 17 steps"), "{text}");
    assert!(text.contains("STEP"), "{text}");
    assert!(text.contains("kube-apiserver"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn the_kubernetes_rollout_steps_scroll_to_the_last() {
    let mut s = kube_rollout(3);
    let progress = s.progress().expect("the journal's progress");
    let last = progress.steps[16].label.clone();
    let shown = |text: &str| text.lines().any(|l| l.contains(&last));
    assert!(!shown(&screen_text_at(&s, 80, 24)));
    press(&mut s, KeyCode::Char('G'));
    let text = screen_text_at(&s, 80, 24);
    assert!(shown(&text), "G shows the 17th step:\n{text}");
    press(&mut s, KeyCode::Char('g'));
    press(&mut s, KeyCode::PageDown);
    press(&mut s, KeyCode::Char('k'));
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn the_rollout_log_scrolls_back_and_follows_again() {
    let mut s = kube_rollout(40);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("event line 39"), "{text}");
    assert!(!text.contains("event line 00"), "{text}");
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Char('g'));
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("event line 00"),
        "g: the oldest line:\n{text}"
    );
    press(&mut s, KeyCode::Char('j'));
    press(&mut s, KeyCode::PageDown);
    insta::assert_snapshot!(all_renders_default_styles(&s));
    press(&mut s, KeyCode::Char('G'));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("event line 39"), "G follows again:\n{text}");
}

#[test]
fn the_talos_plan_answers_g_and_shift_g() {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Open("upgrade-plan"));
    assert_eq!(s.screen, Screen::Module(upgrade_plan::TALOS_PLAN));
    let step = |s: &AppState| {
        let module = s.screens.find::<upgrade_plan::TalosPlanModule>();
        module.and_then(|m| m.plan.as_ref()).map(|p| p.step_index())
    };
    press(&mut s, KeyCode::Char('G'));
    assert_eq!(step(&s), Some(4));
    press(&mut s, KeyCode::Char('g'));
    assert_eq!(step(&s), Some(0));
    press(&mut s, KeyCode::PageDown);
    assert_eq!(step(&s), Some(4));
}

#[test]
fn node_detail_events_scroll() {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    let at = s.now.expect("reports arrived");
    let address = s.current_live().unwrap().status.nodes[0].address.clone();
    for i in 0..30 {
        let event = FleetEvent::NodeEvent {
            cluster: "healthy".into(),
            node: address.clone(),
            summary: format!("machine event {i:02}"),
            at,
            unix: 1_796_052_057 + i,
            id: None,
        };
        update(&mut s, Action::Event(AppEvent::Fleet(event)));
    }
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::NodeDetail);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("machine event 29"), "newest first:\n{text}");
    assert!(!text.contains("machine event 00"), "{text}");
    press(&mut s, KeyCode::Char('G'));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("machine event 00"), "G: the oldest:\n{text}");
    press(&mut s, KeyCode::PageUp);
    insta::assert_snapshot!(all_renders_default_styles(&s));
}
