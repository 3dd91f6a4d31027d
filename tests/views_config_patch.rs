//! Snapshots of the config screen's patch wizard (`p` on `:config w-1`) at 80x24 and 200x50
//! in default, NO_COLOR and ASCII modes: the form with a file typed and every worker chosen,
//! in try mode with its timeout; the plan from each worker's dry run (the node's own "no
//! reboot", the one changed path) above the guards; and a no-reboot plan the control planes
//! refuse with upstream's reason, Start refused by the guard it names.
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::operation::config_patch::ConfigPatchPlan;
use taloscope::views::config::{NAME, PATCH, PatchNews, PatchWizard};
use view_support::{all_renders, press, scenarios};

/// The wizard of `:config w-1` on a cluster like the sim's, `file` typed and the targets
/// moved `rights` choices on.
fn wizard(file: &str, rights: usize) -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::OpenCommandLine);
    for c in "config w-1".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Module(NAME));
    press(&mut s, KeyCode::Char('p'));
    for c in file.chars() {
        press(&mut s, KeyCode::Char(c));
    }
    press(&mut s, KeyCode::Tab);
    for _ in 0..rights {
        press(&mut s, KeyCode::Right);
    }
    s
}

/// The plan `json` (as `config patch --plan --output json` prints it) read for the ask on
/// screen.
fn planned(s: &mut AppState, json: &str) {
    let wizard = s.screens.find::<PatchWizard>().expect("the wizard");
    let asked = wizard.plan.as_ref().expect("a plan asked").plan.asked.asked;
    let plan: ConfigPatchPlan = serde_json::from_str(json).expect("a plan");
    let news = PatchNews {
        asked,
        read: Ok(plan),
    };
    update(
        s,
        Action::Event(AppEvent::Screen(ScreenNews::new(PATCH, news))),
    );
}

const WORKERS: &str = r#"{"cluster":"healthy","patches":["kubelet.yaml"],"mode":"auto","try_timeout_seconds":null,
"nodes":[
 {"node":"w-1","address":"10.5.0.4","role":"worker","changes":[{"path":"machine.kubelet.extraArgs.max-pods","before":null,"after":"250"}],
  "mode":"no-reboot","reboots":false,"mode_details":"Applied configuration without a reboot (skipped in dry-run).","warnings":[],"refused":null},
 {"node":"w-2","address":"10.5.0.5","role":"worker","changes":[{"path":"machine.kubelet.extraArgs.max-pods","before":null,"after":"250"}],
  "mode":"no-reboot","reboots":false,"mode_details":"Applied configuration without a reboot (skipped in dry-run).","warnings":[],"refused":null}],
"unchanged":[]}"#;

const REFUSED: &str = r#"{"cluster":"healthy","patches":["env.yaml"],"mode":"no-reboot","try_timeout_seconds":null,
"nodes":[
 {"node":"cp-1","address":"10.5.0.1","role":"controlplane","changes":[{"path":"machine.env.GRPC_GO_LOG_SEVERITY_LEVEL","before":null,"after":"error"}],
  "mode":"no-reboot","reboots":false,"mode_details":"","warnings":[],
  "refused":"rpc error: code = InvalidArgument desc = this config change can't be applied in immediate mode"}],
"unchanged":[]}"#;

#[test]
fn the_wizard_with_a_file_every_worker_and_try_mode() {
    let mut s = wizard("/home/op/patches/kubelet.yaml", 1);
    insta::assert_snapshot!("config_patch_wizard", all_renders(&s));
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Left);
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Right);
    let text = all_renders(&s);
    assert!(
        text.contains("< try >") && text.contains("< 2m00s >"),
        "{text}"
    );
    insta::assert_snapshot!("config_patch_wizard_try", text);
}

#[test]
fn the_plan_of_every_worker_from_their_dry_runs() {
    let mut s = wizard("kubelet.yaml", 1);
    press(&mut s, KeyCode::Enter);
    insta::assert_snapshot!("config_patch_plan_reading", all_renders(&s));
    planned(&mut s, WORKERS);
    let text = all_renders(&s);
    assert!(
        text.contains("w-2 (10.5.0.5, worker): no reboot - Applied configuration"),
        "{text}"
    );
    insta::assert_snapshot!("config_patch_plan_workers", text);
}

#[test]
fn a_no_reboot_plan_the_control_planes_refuse() {
    let mut s = wizard("env.yaml", 2);
    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Right);
    press(&mut s, KeyCode::Enter);
    planned(&mut s, REFUSED);
    let text = all_renders(&s);
    assert!(
        text.contains("can't be applied in immediate mode")
            && text.contains("Start refused: guard failing: config accepted"),
        "{text}"
    );
    insta::assert_snapshot!("config_patch_plan_refused", text);
}
