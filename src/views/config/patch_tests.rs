//! Unit tests of the patch wizard's update step: `p` opens it for the node on screen, its
//! fields make the plan's request, a form without a file says so, news of an earlier ask is
//! dropped, the plan's guards gate Start, and the approved plan runs as a config patch on the
//! one runner with one pending step per node on the progress.
use crossterm::event::KeyCode;

use super::*;
use crate::app::action::{Action, AppEvent};
use crate::app::keymap::{self, KeyContext};
use crate::app::screen::Pane;
use crate::app::screens::ScreenNews;
use crate::app::state::AppState;
use crate::app::test_fixtures::{approved_on_healthy, cluster_screen, press};
use crate::app::update::update;
use crate::upgrade::fixtures;
use crate::views::config::{ConfigScreen, NAME, PATCH};

const WORKERS: &str = r#"{"cluster":"healthy","patches":["kubelet.yaml"],"mode":"auto","try_timeout_seconds":null,
"nodes":[{"node":"w-1","address":"10.5.0.4","role":"worker","changes":[{"path":"machine.kubelet.extraArgs.max-pods","before":null,"after":"250"}],
  "mode":"no-reboot","reboots":false,"mode_details":"Applied configuration without a reboot","warnings":[],"refused":null},
 {"node":"w-2","address":"10.5.0.5","role":"worker","changes":[{"path":"machine.kubelet.extraArgs.max-pods","before":null,"after":"250"}],
  "mode":"no-reboot","reboots":false,"mode_details":"Applied configuration without a reboot","warnings":[],"refused":null}],
"unchanged":[]}"#;

/// The patch wizard of the first node's configuration on `healthy`.
fn wizard() -> AppState {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    update(&mut s, Action::OpenSelected);
    press(&mut s, KeyCode::Char('m'));
    assert_eq!(s.screen, crate::app::screen::Screen::Module(NAME));
    press(&mut s, KeyCode::Char('p'));
    s
}

fn patch(s: &AppState) -> &PatchWizard {
    assert_eq!(
        keymap::context(s),
        KeyContext::Screen(PATCH),
        "the wizard on top"
    );
    s.screens.find::<PatchWizard>().expect("the wizard")
}

fn typed(s: &mut AppState, text: &str) {
    for c in text.chars() {
        press(s, KeyCode::Char(c));
    }
}

fn tasks(effects: &[Effect]) -> Vec<PatchTask> {
    let tasks = effects.iter().filter_map(|e| match e {
        Effect::Screen(task) => task.get::<PatchTask>().cloned(),
        _ => None,
    });
    tasks.collect()
}

fn news(asked: u64, json: &str) -> Action {
    let plan = serde_json::from_str(json).map_err(|e| e.to_string());
    let news = PatchNews { asked, read: plan };
    Action::Event(AppEvent::Screen(ScreenNews::new(PATCH, news)))
}

#[test]
fn p_opens_the_wizard_for_the_node_on_screen_and_esc_closes_it() {
    let mut s = wizard();
    let node = {
        let screen = s.screens.find::<ConfigScreen>().unwrap();
        screen.node.request.as_ref().unwrap().node.name.clone()
    };
    let form = &patch(&s).kept;
    assert_eq!(
        (form.targets, form.nodes.as_str()),
        (Targets::Named, node.as_str())
    );
    assert_eq!((form.mode, form.field), (ApplyMode::Auto, Field::File));
    let footer: Vec<&str> = keymap::footer_hints(&s)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert!(
        footer.contains(&"plan") && footer.contains(&"cancel"),
        "{footer:?}"
    );
    // Typed text goes to the field, `q` included.
    typed(&mut s, "q.yaml");
    assert_eq!(patch(&s).kept.file, "q.yaml");
    press(&mut s, KeyCode::Backspace);
    assert_eq!(patch(&s).kept.file, "q.yam");
    press(&mut s, KeyCode::Esc);
    assert_ne!(
        keymap::context(&s),
        KeyContext::Screen(PATCH),
        "the wizard closed"
    );
    assert_eq!(s.screen, crate::app::screen::Screen::Module(NAME));
}

#[test]
fn the_form_makes_the_request_and_says_what_it_lacks() {
    let mut s = wizard();
    let effects = press(&mut s, KeyCode::Enter);
    assert!(tasks(&effects).is_empty());
    let said = s.message.as_ref().map(|m| m.text.clone());
    assert_eq!(said.as_deref(), Some("type the patch file's path first"));
    typed(&mut s, "kubelet.yaml");
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Right);
    assert_eq!(
        patch(&s).kept.fields(),
        [Field::File, Field::Targets, Field::Mode]
    );
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Left);
    assert_eq!(patch(&s).kept.mode, ApplyMode::Try);
    assert!(patch(&s).kept.fields().contains(&Field::TryTimeout));
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Right);
    let asked = tasks(&press(&mut s, KeyCode::Enter));
    let [task] = asked.as_slice() else {
        panic!("one ask: {asked:?}");
    };
    assert_eq!(task.file, "kubelet.yaml");
    assert_eq!((task.role, task.nodes.len()), (Some(NodeRole::Worker), 0));
    assert_eq!(
        (task.mode, task.try_timeout),
        (ApplyMode::Try, Duration::from_secs(120))
    );
    // Esc on the plan: the wizard again, as it was.
    press(&mut s, KeyCode::Esc);
    assert!(patch(&s).plan.is_none());
    assert_eq!(patch(&s).kept.file, "kubelet.yaml");
}

#[test]
fn the_plan_read_gates_start_and_the_approved_patch_runs_node_by_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = wizard();
    typed(&mut s, "kubelet.yaml");
    press(&mut s, KeyCode::Enter);
    press(&mut s, KeyCode::Char('r'));
    let asked = patch(&s).kept.asked;
    assert_eq!(asked, 2, "r asks again");
    let effects = press(&mut s, KeyCode::Char('s'));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Gate(_))),
        "nothing read yet"
    );
    update(&mut s, news(asked - 1, WORKERS));
    assert!(
        patch(&s).plan.as_ref().unwrap().plan.read.is_none(),
        "an earlier ask dropped"
    );
    update(&mut s, news(asked, WORKERS));
    let holder = patch(&s).plan.as_ref().unwrap();
    assert!(
        holder.start_refused().is_none(),
        "{:?}",
        holder.guards.shown
    );
    let effects = press(&mut s, KeyCode::Char('s'));
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(
        matches!(action, MutatingAction::ConfigPatch { nodes, .. } if nodes == &["w-1", "w-2"])
    );
    let effects = update(
        &mut s,
        Action::Approved(approved_on_healthy(dir.path(), action.clone())),
    );
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(run.as_ref(), ActionRun::ConfigPatch(p) if p.nodes.len() == 2));
    assert_eq!(keymap::context(&s), KeyContext::Screen("progress"));
    let progress = s.progress().expect("the progress");
    let steps: Vec<&str> = progress.steps.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        steps,
        [
            "w-1: apply (no-reboot), wait until back and healthy",
            "w-2: apply (no-reboot), wait until back and healthy"
        ]
    );
}

#[test]
fn a_plan_a_node_refuses_names_its_guard_and_start_is_refused_and_audited() {
    let mut s = wizard();
    typed(&mut s, "env.yaml");
    press(&mut s, KeyCode::Enter);
    let refused = WORKERS.replacen(
        r#""refused":null"#,
        r#""refused":"this config change can't be applied in immediate mode""#,
        1,
    );
    let asked = patch(&s).kept.asked;
    update(&mut s, news(asked, &refused));
    let effects = press(&mut s, KeyCode::Char('s'));
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { why, .. }] if why == "guard failing: config accepted"),
        "{effects:?}"
    );
}
