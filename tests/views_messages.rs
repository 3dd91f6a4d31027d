//! The message line is not cut at 80 columns (issue 16, item 6): a long
//! message wraps onto a second line; a longer one ends in "... :messages"
//! there, and `:messages` shows every message whole, newest first.
mod view_support;

use taloscope::app::message::Message;
use taloscope::app::state::{AppState, Overlay};
use taloscope::app::{Action, update};
use taloscope::rollout::{RolloutKind, RolloutSummary, StepProgress};
use view_support::scenarios;
use view_support::{all_renders_default_styles, screen_text_at};

/// The fleet after startup found an unfinished rollout of `healthy`.
fn with_journal() -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    let summary = RolloutSummary {
        cluster: "healthy".into(),
        kind: RolloutKind::TalosUpgrade,
        target: "v1.12.0".into(),
        holder: "op@jump1".into(),
        steps: vec![StepProgress::pending("cp-1", "upgrade to v1.12.0")],
        paused: false,
        outcome: None,
    };
    update(
        &mut s,
        Action::Event(taloscope::app::actions::ProgressNews::Journal(Box::new(summary)).told()),
    );
    s
}

fn run(s: &mut AppState, command: &str) {
    update(s, Action::OpenCommandLine);
    update(s, Action::Paste(command.into()));
    update(s, Action::Submit);
}

#[test]
fn a_long_message_wraps_at_80() {
    let s = with_journal();
    let text = screen_text_at(&s, 80, 24);
    let said =
        "a rollout of healthy did not finish: :ctx healthy then :rollout shows it, r resumes";
    let shown: String = text
        .lines()
        .rev()
        .skip(1)
        .take(2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(shown.ends_with(said), "{shown:?}\n{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn a_longer_message_points_to_the_log_which_has_it_whole() {
    let mut s = with_journal();
    let long = format!("{} the end", "word ".repeat(60));
    update(&mut s, Action::Notify(Message::warn(long.clone())));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("… :messages"), "{text}");
    assert!(!text.contains("the end"), "{text}");
    run(&mut s, "messages");
    assert!(matches!(s.overlay, Some(Overlay::Messages { .. })));
    let log = screen_text_at(&s, 80, 24);
    assert!(log.contains("the end"), "whole in :messages:\n{log}");
    assert!(log.contains("did not finish"), "older ones too:\n{log}");
    insta::assert_snapshot!(log);
}
