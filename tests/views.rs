//! Snapshots of the console's screens rendered into ratatui's TestBackend:
//! the cluster list at 80x24 and 160x48 in default, NO_COLOR and ASCII modes,
//! the help overlay, the errors overlay, the confirm popup, the too-small
//! screen. Each snapshot holds the text and the styles.
mod view_support;

use taloscope::app::binding::Move;
use taloscope::app::state::Overlay;
use taloscope::app::{Action, update};
use taloscope::approval::{AuditLog, Dispatcher, Gate, MutatingAction};
use view_support::{
    Mode, all_renders_default_styles, assert_ascii, assert_no_colors, look, render_buffer,
    scenarios, screen_text_at, snapshot, state,
};

fn list(mode: Mode, width: u16, height: u16) -> ratatui::buffer::Buffer {
    let mut s = state(false);
    update(&mut s, Action::Move(Move::Down));
    update(&mut s, Action::OpenSelected);
    render_buffer(&s, &look(mode), width, height)
}

#[test]
fn cluster_list_80x24_default() {
    insta::assert_snapshot!(snapshot(&list(Mode::Default, 80, 24)));
}

#[test]
fn cluster_list_80x24_no_color() {
    let buf = list(Mode::NoColor, 80, 24);
    assert_no_colors(&buf);
    insta::assert_snapshot!(snapshot(&buf));
}

#[test]
fn cluster_list_80x24_ascii() {
    let buf = list(Mode::Ascii, 80, 24);
    assert_ascii(&buf);
    insta::assert_snapshot!(snapshot(&buf));
}

#[test]
fn cluster_list_160x48_default() {
    insta::assert_snapshot!(snapshot(&list(Mode::Default, 160, 48)));
}

#[test]
fn cluster_list_160x48_no_color() {
    let buf = list(Mode::NoColor, 160, 48);
    assert_no_colors(&buf);
    insta::assert_snapshot!(snapshot(&buf));
}

#[test]
fn cluster_list_160x48_ascii() {
    let buf = list(Mode::Ascii, 160, 48);
    assert_ascii(&buf);
    insta::assert_snapshot!(snapshot(&buf));
}

#[test]
fn readonly_marker_and_filter() {
    let mut s = state(true);
    update(&mut s, Action::OpenFilter);
    for c in "prod".chars() {
        update(&mut s, Action::Insert(c));
    }
    let buf = render_buffer(&s, &look(Mode::NoColor), 80, 24);
    let text = snapshot(&buf);
    assert!(
        text.lines().next().unwrap_or("").contains("READ-ONLY"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn help_overlay() {
    let mut s = state(false);
    update(&mut s, Action::Overlay(Overlay::Help { scroll: 0 }));
    let buf = render_buffer(&s, &look(Mode::Ascii), 80, 24);
    assert_ascii(&buf);
    insta::assert_snapshot!(snapshot(&buf));
}

#[test]
fn help_overlay_tall_shows_everything() {
    let mut s = state(false);
    update(&mut s, Action::Overlay(Overlay::Help { scroll: 0 }));
    let text = snapshot(&render_buffer(&s, &look(Mode::NoColor), 160, 230));
    for needle in [
        ":ctx NAME",
        "Confirmation",
        "cancel (the default)",
        "q/Ctrl-c",
    ] {
        assert!(text.contains(needle), "help lacks {needle:?}:\n{text}");
    }
}

#[test]
fn errors_overlay() {
    let mut s = state(false);
    update(&mut s, Action::Overlay(Overlay::Errors { scroll: 0 }));
    insta::assert_snapshot!(snapshot(&render_buffer(&s, &look(Mode::Default), 80, 24)));
}

#[test]
fn confirm_popup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(MutatingAction::UpgradeTalos {
        cluster: "prod-eu".into(),
        target: "v1.12.0".into(),
    }) else {
        panic!("expected a confirmation");
    };
    let mut s = state(false);
    update(&mut s, Action::AskConfirmation(pending));
    for c in "prod".chars() {
        update(&mut s, Action::Insert(c));
    }
    let partial = snapshot(&render_buffer(&s, &look(Mode::Default), 80, 24));
    assert!(partial.contains("[ Cancel ]"), "{partial}");
    insta::assert_snapshot!("confirm_popup_typing", partial);
    for c in "-eu".chars() {
        update(&mut s, Action::Insert(c));
    }
    let matched = snapshot(&render_buffer(&s, &look(Mode::Ascii), 80, 24));
    assert!(matched.contains("name matches"), "{matched}");
    insta::assert_snapshot!("confirm_popup_matched", matched);
}

#[test]
fn too_small_screen() {
    let s = state(false);
    let text = snapshot(&render_buffer(&s, &look(Mode::Default), 79, 24));
    assert!(
        text.contains("terminal too small: 79x24, need 80x24"),
        "{text}"
    );
    insta::assert_snapshot!(snapshot(&render_buffer(&s, &look(Mode::Default), 60, 20)));
}

#[test]
fn empty_discovery() {
    let s = taloscope::app::AppState::new(Default::default(), false);
    insta::assert_snapshot!(snapshot(&render_buffer(&s, &look(Mode::Ascii), 80, 24)));
}

#[test]
fn help_starts_with_where_you_are_and_fits_the_screen() {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Open("upgrade-plan"));
    update(&mut s, Action::Overlay(Overlay::Help { scroll: 0 }));
    for (w, h) in [(80, 24), (200, 50)] {
        let text = screen_text_at(&s, w, h);
        let first = text.lines().nth(2).unwrap_or_default();
        assert!(
            first.contains("Here: Upgrade plan (u, :upgrade)"),
            "{w}x{h}:\n{text}"
        );
        let inside: String = text
            .lines()
            .map(|l| {
                l.chars()
                    .skip(3)
                    .take(usize::from(w) - 6)
                    .collect::<String>()
            })
            .collect();
        assert!(
            !inside.contains('\u{2026}'),
            "nothing cut at {w}x{h}:\n{text}"
        );
        let popup = text.lines().nth(1).unwrap_or_default();
        assert!(
            unicode_width::UnicodeWidthStr::width(popup.trim()) >= usize::from(w) - 4,
            "sized to the screen at {w}x{h}:\n{text}"
        );
    }
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn help_lists_every_command_with_a_space_after_it() {
    let mut s = state(false);
    update(&mut s, Action::Overlay(Overlay::Help { scroll: 0 }));
    // Tall enough for the whole help in two columns, the commands last.
    let text = screen_text_at(&s, 200, 230);
    assert!(
        text.contains(":upgrade-k8s [VERSION] "),
        "a space after the usage:\n{text}"
    );
    for c in taloscope::app::command::COMMANDS {
        assert!(
            text.contains(&format!(":{} ", c.name)),
            ":{}\n{text}",
            c.name
        );
    }
}
