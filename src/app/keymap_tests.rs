//! The keymap's unit tests: which key does what in which context, and what the footer offers.
use super::*;
use crate::app::state::InputLine;
use crate::discovery::Discovery;
use crossterm::event::{KeyCode, KeyModifiers};

/// The shell's bindings of `ctx` (less the shared move keys), in help and footer order.
fn bindings(ctx: KeyContext) -> Vec<&'static Binding> {
    (ctx.place().parts.iter())
        .flat_map(|part| match part {
            Keys(table) => table.iter().collect(),
            Moves => Vec::new(),
        })
        .collect()
}

fn press(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

#[test]
fn list_keys() {
    let state = AppState::new(Discovery::default(), false);
    let q = action_for(&state, &press(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(matches!(q, Some(Action::Quit)));
    let big_g = action_for(&state, &press(KeyCode::Char('G'), KeyModifiers::SHIFT));
    assert!(matches!(big_g, Some(Action::Move(Move::Last))));
    let ctrl_c = action_for(&state, &press(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(matches!(ctrl_c, Some(Action::Quit)));
    assert!(action_for(&state, &press(KeyCode::Char('z'), KeyModifiers::NONE)).is_none());
}

#[test]
fn text_contexts_type_unbound_keys() {
    let mut state = AppState::new(Discovery::default(), false);
    state.input = Some(InputLine {
        kind: InputKind::Command,
        text: String::new(),
        candidates: Vec::new(),
    });
    let q = action_for(&state, &press(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(matches!(q, Some(Action::Insert('q'))));
    let esc = action_for(&state, &press(KeyCode::Esc, KeyModifiers::NONE));
    assert!(matches!(esc, Some(Action::Back)));
}

#[test]
fn footer_comes_from_the_table() {
    let state = AppState::new(Discovery::default(), false);
    let hints = footer_hints(&state);
    assert!(hints.contains(&("?".to_string(), "help")));
    assert!(hints.contains(&("q/Ctrl-c".to_string(), "quit")));
}

#[test]
fn ctrl_c_quits_from_every_overlay() {
    let ctrl_c = press(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for overlay in [
        Overlay::Help { scroll: 0 },
        Overlay::Errors { scroll: 0 },
        Overlay::Explain {
            title: "guard".into(),
            text: "why".into(),
            scroll: 0,
        },
    ] {
        let mut state = AppState::new(Discovery::default(), false);
        state.overlay = Some(overlay.clone());
        let action = action_for(&state, &ctrl_c);
        assert!(matches!(action, Some(Action::Quit)), "{overlay:?}");
    }
}

#[test]
fn the_too_small_screen_takes_only_quit() {
    let mut state = AppState::new(Discovery::default(), false);
    state.size = (79, 24);
    assert_eq!(context(&state), KeyContext::TooSmall);
    for c in ['j', 'u', 'U', 'p', ':', '/', '?', ' '] {
        let key = press(KeyCode::Char(c), KeyModifiers::NONE);
        assert!(action_for(&state, &key).is_none(), "{c:?} acted");
    }
    assert!(action_for(&state, &press(KeyCode::Enter, KeyModifiers::NONE)).is_none());
    let q = action_for(&state, &press(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(matches!(q, Some(Action::Quit)));
    state.size = (80, 24);
    assert_eq!(context(&state), KeyContext::Screen("fleet"));
}

#[test]
fn p_provisions_and_space_pauses_wherever_they_are_bound() {
    for ctx in KeyContext::all() {
        for b in bindings(ctx) {
            if b.keys.contains(&Key::char('p')) {
                assert!(
                    matches!(b.action, Action::Open("provision")),
                    "p is {:?} in {ctx:?}",
                    b.action
                );
            }
            if matches!(b.action, Action::TogglePause) {
                assert_eq!(b.keys, &[Key::char(' ')], "{ctx:?}");
            }
        }
    }
}

#[test]
fn enter_is_offered_only_where_it_opens_something() {
    use crate::app::screen::{Pane, Screen};
    let mut state = AppState::new(Discovery::default(), false);
    for (pane, offered) in [
        (Pane::Nodes, true),
        (Pane::Etcd, false),
        (Pane::Versions, false),
    ] {
        state.screen = Screen::Cluster(pane);
        let has_node = footer_hints(&state).iter().any(|(_, l)| *l == "node");
        assert_eq!(has_node, offered, "{pane:?}");
    }
}

#[test]
fn big_u_plans_a_kubernetes_upgrade_from_the_fleet() {
    let state = AppState::new(Discovery::default(), false);
    let big_u = press(KeyCode::Char('U'), KeyModifiers::SHIFT);
    assert!(matches!(
        action_for(&state, &big_u),
        Some(Action::Open("kube-plan"))
    ));
}

#[test]
fn labels_are_ascii() {
    for ctx in KeyContext::all() {
        for b in bindings(ctx) {
            assert!(b.key_labels().is_ascii());
        }
    }
}
