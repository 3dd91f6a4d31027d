//! The key tables of the Talos and Kubernetes upgrade plan screens, the
//! progress pane, its abort question and the plan's text fields (installer
//! image, acknowledgement).
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};
use super::rollout::RolloutView;
use super::state::AppState;

/// This console's rollout of the cluster in use, which the progress pane shows.
fn rollout_on_screen(state: &AppState) -> Option<&RolloutView> {
    state.current.as_ref().and_then(|c| state.rollouts.get(c))
}

pub(super) static PLAN: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Tab)],
        action: Action::NextPane,
        help: "switch between the node order and the guards",
        footer: Some("focus"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('K')],
        action: Action::MoveStepUp,
        help: "move the selected node earlier",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('J')],
        action: Action::MoveStepDown,
        help: "move the selected node later",
        footer: Some("order"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('x')],
        action: Action::ToggleStep,
        help: "leave the selected node out, or include it again",
        footer: Some("skip"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('t')],
        action: Action::NextTarget,
        help: "next offered target version",
        footer: Some("target"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('T')],
        action: Action::PreviousTarget,
        help: "previous offered target version",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('i')],
        action: Action::EditImage,
        help: "type a custom or factory installer image",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('I')],
        action: Action::ResetImage,
        help: "back to the default installer image",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('S')],
        action: Action::ToggleStage,
        help: "stage the upgrade (install on the next boot; legacy API only)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('P')],
        action: Action::TogglePreserve,
        help: "preserve EPHEMERAL (only nodes below Talos 1.8)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('+')],
        action: Action::MoreParallel,
        help: "more workers at once (max-parallel)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('-')],
        action: Action::LessParallel,
        help: "fewer workers at once",
        footer: None,
        offered: None,
    },
    ACKNOWLEDGE,
    Binding {
        keys: &[Key::char('?')],
        action: Action::Explain,
        help: "explain the selected guard or node (:help lists keys)",
        footer: Some("why"),
        offered: None,
    },
];

/// The end of both plans' keys: start, poll, close.
pub(super) static PLAN_CLOSE: &[Binding] = &[
    Binding {
        keys: &[Key::char('s')],
        action: Action::StartUpgrade,
        help: "start (refused while a guard blocks; asks for the name)",
        footer: Some("start"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('r')],
        action: Action::Refresh,
        help: "poll the cluster now",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "close the plan",
        footer: Some("back"),
        offered: None,
    },
];

pub(super) static PLAN_COMMAND: &[Binding] = &[Binding {
    keys: &[Key::char(':')],
    action: Action::OpenCommandLine,
    help: "command line (:help, :upgrade vX.Y.Z, :q)",
    footer: None,
    offered: None,
}];

pub(super) static PLAN_QUIT: &[Binding] = &[Binding {
    keys: &[Key::char('q'), Key::ctrl('c')],
    action: Action::Quit,
    help: "quit (a running rollout resumes from its journal)",
    footer: None,
    offered: None,
}];

pub(super) static KUBE_PLAN: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Tab)],
        action: Action::NextPane,
        help: "switch between the steps and the guards",
        footer: Some("focus"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('t')],
        action: Action::NextTarget,
        help: "next offered Kubernetes version",
        footer: Some("target"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('T')],
        action: Action::PreviousTarget,
        help: "previous offered Kubernetes version",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('P')],
        action: Action::TogglePrePull,
        help: "pull the new images on every node before the first step",
        footer: Some("pre-pull"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('a')],
        action: Action::Acknowledge,
        help: "type the acknowledgement a guard needs",
        footer: Some("ack"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('?')],
        action: Action::Explain,
        help: "explain the selected guard or step (:help lists keys)",
        footer: Some("why"),
        offered: None,
    },
];

pub(super) static KUBE_PLAN_COMMAND: &[Binding] = &[Binding {
    keys: &[Key::char(':')],
    action: Action::OpenCommandLine,
    help: "command line (:help, :upgrade-k8s 1.35.0, :q)",
    footer: None,
    offered: None,
}];

pub(super) static ROLLOUT: &[Binding] = &[
    Binding {
        keys: &[Key::char(' ')],
        action: Action::PauseRollout,
        help: "pause after the current node",
        footer: Some("pause"),
        offered: Some(|state| rollout_on_screen(state).is_some_and(RolloutView::can_pause)),
    },
    Binding {
        keys: &[Key::char('r')],
        action: Action::ResumeRollout,
        help: "resume (a journal's rollout: after confirming the name)",
        footer: Some("resume"),
        offered: Some(|state| rollout_on_screen(state).is_some_and(RolloutView::can_resume)),
    },
    Binding {
        keys: &[Key::char('A')],
        action: Action::AbortRollout,
        help: "abort before the next node (asks y/n)",
        footer: Some("abort"),
        offered: Some(|state| rollout_on_screen(state).is_some_and(RolloutView::can_abort)),
    },
    Binding {
        keys: &[Key::char('u')],
        action: Action::OpenUpgrade(None),
        help: "plan another upgrade once this one ended",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the cluster (the rollout goes on)",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line (:rollout, :fleet, :q)",
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
        help: "quit (a running rollout resumes from its journal)",
        footer: Some("quit"),
        offered: None,
    },
];

/// The progress pane's two lists: the move keys scroll the one in focus.
pub(super) static ROLLOUT_FOCUS: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Tab)],
    action: Action::NextPane,
    help: "switch between the steps and the events (j/k, PgUp/PgDn, g/G scroll)",
    footer: Some("focus"),
    offered: None,
}];

pub(super) static ABORT: &[Binding] = &[
    Binding {
        keys: &[Key::char('y')],
        action: Action::ConfirmAbort,
        help: "abort: no next node starts",
        footer: Some("abort"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('n'), Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "go on (any other key too)",
        footer: Some("go on"),
        offered: None,
    },
];

pub(super) static TEXT_FIELD: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Enter)],
    action: Action::Submit,
    help: "set",
    footer: Some("set"),
    offered: None,
}];

pub(super) static TEXT_FIELD_CANCEL: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Esc), Key::ctrl('c')],
    action: Action::Back,
    help: "cancel",
    footer: Some("cancel"),
    offered: None,
}];

pub(super) static EXPLAIN_CLOSE: &[Binding] = &[Binding {
    keys: &[
        Key::plain(KeyCode::Esc),
        Key::char('?'),
        Key::char('q'),
        Key::plain(KeyCode::Enter),
    ],
    action: Action::Back,
    help: "close",
    footer: Some("close"),
    offered: None,
}];

/// `a` on every plan with guards (both upgrade plans and the provision wizard).
pub(super) const ACKNOWLEDGE: Binding = Binding {
    keys: &[Key::char('a')],
    action: Action::Acknowledge,
    help: "type the acknowledgement a warning needs",
    footer: Some("ack"),
    offered: None,
};
