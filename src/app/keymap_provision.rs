//! The key tables of the provision wizard and the provision progress pane,
//! and the cluster panes' `p`: `p` provisions wherever it is bound (live
//! data and rollouts pause on `Space`).
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};
use super::keymap_upgrade::ACKNOWLEDGE;
use super::provision::ProvisionKey;

/// On the cluster panes, ahead of their other keys.
pub(super) static FROM_CLUSTER: &[Binding] = &[Binding {
    keys: &[Key::char('p')],
    action: Action::Provision(ProvisionKey::Open),
    help: "provision new nodes (the wizard; or the running provision)",
    footer: Some("provision"),
    offered: None,
}];

pub(super) static WIZARD: &[Binding] = &[
    Binding {
        keys: &[Key::char('j'), Key::plain(KeyCode::Down)],
        action: Action::MoveDown,
        help: "next field (or guard, after Tab)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('k'), Key::plain(KeyCode::Up)],
        action: Action::MoveUp,
        help: "previous field (or guard)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('l'), Key::plain(KeyCode::Right)],
        action: Action::Provision(ProvisionKey::NextValue),
        help: "next value of the field (Names: edit)",
        footer: Some("change"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('h'), Key::plain(KeyCode::Left)],
        action: Action::Provision(ProvisionKey::PreviousValue),
        help: "previous value of the field",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('+')],
        action: Action::Provision(ProvisionKey::More),
        help: "one VM more",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('-')],
        action: Action::Provision(ProvisionKey::Less),
        help: "one VM fewer",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Tab)],
        action: Action::NextPane,
        help: "switch between the request's fields and the plan's guards",
        footer: Some("focus"),
        offered: None,
    },
    ACKNOWLEDGE,
    Binding {
        keys: &[Key::char('r')],
        action: Action::Refresh,
        help: "poll the cluster now (the guards follow its status)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('n')],
        action: Action::Provision(ProvisionKey::EditPattern),
        help: "type the name pattern ({cluster}, {role}, {n})",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::Provision(ProvisionKey::MakePlan),
        help: "make the plan (asks the provider, checks the machine config)",
        footer: Some("plan"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('s')],
        action: Action::Provision(ProvisionKey::Start),
        help: "provision the plan (asks for the cluster name)",
        footer: Some("start"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "close the wizard",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line (:provisions, :q)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('?')],
        action: Action::Explain,
        help: "explain the selected guard (Tab to the guards; else help)",
        footer: Some("why"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('q'), Key::ctrl('c')],
        action: Action::Quit,
        help: "quit",
        footer: None,
        offered: None,
    },
];

pub(super) static PROGRESS: &[Binding] = &[
    Binding {
        keys: &[Key::char('x')],
        action: Action::Provision(ProvisionKey::Terminate),
        help: "terminate the selected failed VM (asks for the cluster name)",
        footer: Some("terminate"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('p')],
        action: Action::Provision(ProvisionKey::Open),
        help: "provision more nodes once this run ended",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the cluster (the provision goes on)",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line (:provisions, :fleet, :q)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('?')],
        action: Action::OpenHelp,
        help: "help",
        footer: Some("help"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('q'), Key::ctrl('c')],
        action: Action::Quit,
        help: "quit (VMs still joining are followed again on restart)",
        footer: Some("quit"),
        offered: None,
    },
];

/// The provision progress's two lists: the move keys scroll the one in focus.
pub(super) static PROGRESS_FOCUS: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Tab)],
    action: Action::NextPane,
    help: "switch between the VMs and the notes (the move keys go to the one in focus)",
    footer: Some("focus"),
    offered: None,
}];
