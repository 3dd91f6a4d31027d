//! The key tables of creating a cluster: the fleet's `n`, the wizard's request, the plan with
//! its guards, and the progress screen's fingerprint answers.
use crossterm::event::KeyCode;

use super::action::Action;
use super::create::CreateKey;
use super::create::CreateStage;
use super::keymap::{Binding, Key, KeyContext};
use super::keymap_upgrade::ACKNOWLEDGE;
use super::state::AppState;

/// Where the keys go on the create screen: its stage's table.
pub(super) fn context(state: &AppState) -> KeyContext {
    match state.create.stage {
        CreateStage::Form => KeyContext::CreateWizard,
        CreateStage::Plan => KeyContext::CreatePlan,
        CreateStage::Progress => KeyContext::CreateProgress,
    }
}

/// On the fleet, after its other keys (not in the footer: the help lists it).
pub(super) static FROM_FLEET: &[Binding] = &[Binding {
    keys: &[Key::char('n')],
    action: Action::Create(CreateKey::Open),
    help: "create a new cluster (the wizard; or the create running here)",
    footer: None,
    offered: None,
}];

const HELP: Binding = Binding {
    keys: &[Key::char('?')],
    action: Action::OpenHelp,
    help: "help",
    footer: Some("help"),
    offered: None,
};

const QUIT: Binding = Binding {
    keys: &[Key::char('q'), Key::ctrl('c')],
    action: Action::Quit,
    help: "quit (a running create resumes from its journal)",
    footer: None,
    offered: None,
};

const COMMAND: Binding = Binding {
    keys: &[Key::char(':')],
    action: Action::OpenCommandLine,
    help: "command line (:fleet, :q)",
    footer: None,
    offered: None,
};

pub(super) static WIZARD: &[Binding] = &[
    Binding {
        keys: &[Key::char('l'), Key::plain(KeyCode::Right)],
        action: Action::Create(CreateKey::NextValue),
        help: "next value of the field (typed fields: edit)",
        footer: Some("change"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('h'), Key::plain(KeyCode::Left)],
        action: Action::Create(CreateKey::PreviousValue),
        help: "previous value of the field",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('+')],
        action: Action::Create(CreateKey::More),
        help: "one more (control planes, workers)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('-')],
        action: Action::Create(CreateKey::Less),
        help: "one fewer (control planes, workers)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('e')],
        action: Action::Create(CreateKey::Edit),
        help: "type the field's value (name, versions, endpoint, patches)",
        footer: Some("edit"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::Create(CreateKey::MakePlan),
        help: "make the plan (asks the provider, as `taloscope create --plan`)",
        footer: Some("plan"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "close the wizard",
        footer: Some("back"),
        offered: None,
    },
    COMMAND,
    HELP,
    QUIT,
];

pub(super) static PLAN: &[Binding] = &[
    Binding {
        keys: &[Key::char('s')],
        action: Action::Create(CreateKey::Start),
        help: "create the cluster (asks for its name)",
        footer: Some("start"),
        offered: None,
    },
    ACKNOWLEDGE,
    Binding {
        keys: &[Key::char('?')],
        action: Action::Explain,
        help: "explain the selected guard",
        footer: Some("why"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the request",
        footer: Some("back"),
        offered: None,
    },
    COMMAND,
    QUIT,
];

pub(super) static PROGRESS: &[Binding] = &[
    Binding {
        keys: &[Key::char('y')],
        action: Action::Create(CreateKey::Trust),
        help: "the maintenance certificate fingerprint shown is the VM's: apply its config",
        footer: Some("confirm"),
        offered: Some(|s| {
            s.create
                .progress
                .as_ref()
                .is_some_and(|p| p.asking.is_some())
        }),
    },
    Binding {
        keys: &[Key::char('n')],
        action: Action::Create(CreateKey::Distrust),
        help: "it is not: the run stops before applying any config to it",
        footer: Some("refuse"),
        offered: Some(|s| {
            s.create
                .progress
                .as_ref()
                .is_some_and(|p| p.asking.is_some())
        }),
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the fleet (the create goes on; n shows it again)",
        footer: Some("back"),
        offered: None,
    },
    COMMAND,
    HELP,
    QUIT,
];
