//! The update step: folds one [`Action`] into [`AppState`] and returns the
//! [`Effect`]s for the event loop, and whether the screen may have changed.
//! No IO happens here, so every rule is a plain unit test. The fleet, cluster
//! and node screens are in `update_panes`.
use super::action::{Action, AppEvent, Effect, PollerCommand};
use super::actions::ProgressNews;
use super::command;
use super::message::Message;
use super::screen::Screen;
use super::screens::ScreenName;
use super::state::{AppState, ConfirmState, InputKind, Overlay};
use super::update_panes as panes;
use super::update_provision as provision;
use super::update_upgrade as upgrade;
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::upgrade::InPlaceUpgrade;

/// What one action did: effects for the loop, and whether anything visible
/// may have changed (a report that changed nothing on screen says no, so the
/// loop does not draw for it).
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub effects: Vec<Effect>,
    pub redraw: bool,
}

/// Folds one action in; see [`Outcome`].
pub fn apply(state: &mut AppState, action: Action) -> Outcome {
    let before = state.message.clone();
    let outcome = apply_action(state, action);
    state.log_message(before.as_ref());
    outcome
}

fn apply_action(state: &mut AppState, action: Action) -> Outcome {
    // Reports, news and ticks: a redraw only when they changed what is on screen.
    let (redraw, effects) = match action {
        Action::Event(AppEvent::Fleet(event)) => (panes::on_fleet_event(state, event), Vec::new()),
        Action::Event(AppEvent::Screen(news)) => {
            // A configuration change's end: the nodes' configurations are compared again.
            if let Some(ProgressNews::Event(kind, ProgressEvent::Finished(_))) = news.get()
                && let Some(p) = state.progress().filter(|p| p.kind == *kind)
                && *kind == OperationKind::ConfigPatch
            {
                let cluster = p.cluster.clone();
                state.tables.drift_asked.remove(&cluster);
            }
            super::shell::on_news(state, &news)
        }
        Action::Event(AppEvent::Tick(unix)) => {
            state.wall_clock = Some(unix);
            (super::shell::on_tick(state, unix), Vec::new())
        }
        action => {
            state.generation += 1;
            let before = panes::Watching::of(state);
            let mut effects = update_inner(state, action);
            let after = panes::Watching::of(state);
            effects.extend(before.transitions(&after).into_iter().map(Effect::Poller));
            effects.extend(super::shell::settle(state));
            return Outcome {
                effects,
                redraw: true,
            };
        }
    };
    if redraw {
        state.generation += 1;
    }
    Outcome { effects, redraw }
}

/// [`apply`] without the redraw answer.
pub fn update(state: &mut AppState, action: Action) -> Vec<Effect> {
    apply(state, action).effects
}

fn update_inner(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::Quit => return quit(state),
        Action::ConfirmQuit if state.quit_question.is_some() => return vec![Effect::Quit],
        Action::Resize(w, h) => state.size = (w, h),
        Action::Notify(message) => state.message = Some(message),
        Action::Event(AppEvent::Discovered(discovery)) => on_discovered(state, *discovery),
        // Poller reports, ticks and screen news are folded in `apply_action`.
        Action::Event(_) => {}
        Action::Approved(approved) => return super::update_actions::on_approved(state, approved),
        Action::AskConfirmation(pending) => {
            state.input = None;
            state.overlay = Some(Overlay::Confirm(ConfirmState {
                pending,
                typed: String::new(),
            }));
        }
        other if state.quit_question.is_some() => {
            if matches!(other, Action::Back) {
                state.quit_question = None;
                state.message = Some(Message::info("not quitting"));
            }
        }
        other => {
            return match state.overlay.take() {
                Some(overlay) => super::update_overlay::on_overlay(state, overlay, other),
                None if state.input.is_some() => on_input(state, other),
                None => on_screen(state, other),
            };
        }
    }
    Vec::new()
}

/// Quits, unless an operation runs here: then asks first (y/N), saying what becomes of it.
fn quit(state: &mut AppState) -> Vec<Effect> {
    let running = state.progress().filter(|p| p.running());
    let Some(kind) = running.map(|p| p.kind) else {
        return vec![Effect::Quit];
    };
    use OperationKind as K;
    // What runs, and what becomes of it next time; none: it stops with taloscope.
    let (what, next_time) = match kind {
        K::TalosUpgrade | K::KubernetesUpgrade => ("a rollout", Some("the journal resumes it")),
        K::Provision => ("a provision", Some("VMs still joining are followed")),
        K::Create => ("a create", Some("its journal resumes it (n, Enter)")),
        _ => ("a node, etcd or delete action", None),
    };
    let question = match next_time {
        Some(_) if state.demo_fleet && kind != K::Create => {
            format!("{what} is running and the demo fleet stops with taloscope; quit? y/N")
        }
        Some(next_time) => format!("{what} is running; {next_time} next time; quit? y/N"),
        None => format!("{what} is running and stops with taloscope; quit? y/N"),
    };
    state.message = Some(Message::warn(question.clone()));
    state.quit_question = Some(question);
    Vec::new()
}

/// Discovery ran again (`:reload`): its clusters replace the list; the cluster in use stays
/// when it is still there.
fn on_discovered(state: &mut AppState, discovery: crate::discovery::Discovery) {
    state.provision.kubeconfig = discovery.kubeconfig.clone();
    state.clusters = discovery.clusters;
    state.errors = discovery.errors;
    if let Some(current) = &state.current
        && !state.clusters.iter().any(|c| &c.name == current)
    {
        state.current = None;
    }
    state.message = Some(Message::info(format!(
        "reloaded: {} clusters, {} discovery errors",
        state.clusters.len(),
        state.errors.len()
    )));
}

/// `:ctx NAME`: the cluster `--context NAME` means (`discovery::select_among`: the cluster of
/// that name, else the cluster one of whose contexts it is), which from now on uses the
/// context so named: the cluster's poller from its next round, the plans and rollouts started
/// here, and the header says it.
fn use_cluster_or_context(state: &mut AppState, name: &str) -> Vec<Effect> {
    let chosen = crate::discovery::select_among(&state.clusters, name);
    let found =
        chosen.and_then(|c| Some((state.clusters.iter().position(|d| d.name == c.name)?, c)));
    let Some((i, chosen)) = found else {
        let error = format!("no cluster named {name:?} (Tab completes names)");
        state.message = Some(Message::error(error));
        return Vec::new();
    };
    let cluster = chosen.name.clone();
    let mut message = format!("using cluster {cluster}");
    let mut effects = Vec::new();
    if chosen != state.clusters[i] {
        state.clusters[i] = chosen;
        message = format!("{message} through context {name}");
        effects.push(Effect::Poller(PollerCommand::UseContext {
            cluster: cluster.clone(),
            context: name.to_string(),
        }));
    }
    state.use_cluster(&cluster);
    panes::open_cluster(state);
    state.message = Some(Message::info(message));
    effects
}

fn on_input(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(mut line) = state.input.take() else {
        return Vec::new();
    };
    match action {
        Action::Back => {
            if line.kind == InputKind::Filter {
                set_filter(state, String::new());
            }
            return Vec::new();
        }
        Action::Submit => {
            return match line.kind {
                InputKind::Filter => Vec::new(),
                InputKind::Command => run_command(state, &line.text),
                InputKind::Screen(_) => super::shell::on_input(state, &line.text),
            };
        }
        Action::Insert(c) => line.text.push(c),
        // One line only: a pasted newline must not run a command.
        Action::Paste(text) => line.text.push_str(text.lines().next().unwrap_or("")),
        Action::DeleteBack => {
            line.text.pop();
        }
        Action::Complete if line.kind == InputKind::Command => {
            let done = command::complete(&line.text, &state.ctx_names());
            line.text = done.line;
            line.candidates = done.candidates;
        }
        _ => {}
    }
    if line.kind == InputKind::Filter {
        set_filter(state, line.text.clone());
    }
    state.input = Some(line);
    Vec::new()
}

/// The filter of what is on screen: a screen module's, or the table's.
fn set_filter(state: &mut AppState, text: String) {
    if super::shell::set_filter(state, &text) {
        return;
    }
    if let Some(kind) = state.active_table() {
        state.tables.get_mut(kind).filter = text;
    }
}

/// A `:` command: the action it asks, taken as a key's would be.
fn run_command(state: &mut AppState, text: &str) -> Vec<Effect> {
    match command::parse(text) {
        Ok(Some(action)) => update_inner(state, action),
        Ok(None) => Vec::new(),
        Err(e) => {
            state.message = Some(Message::error(e.to_string()));
            Vec::new()
        }
    }
}

/// How the shell opens a screen a key or a `:` command names, when opening it reads more of
/// the console than a screen module is lent: the selection's menu, a rollout or provision
/// that runs here, who owns the cluster. It is given the screen's name and the words, the
/// command's (its name first), none for a key.
type Opener = fn(&mut AppState, ScreenName, Vec<String>) -> Vec<Effect>;

/// The screens opened by a rule of the shell's, by name; any other opens as it stands
/// (`shell::open_with`).
#[rustfmt::skip]
static OPENERS: &[(ScreenName, Opener)] = &[
    ("actions", |state, name, _| super::update_actions::open_menu(state, name)),
    ("provision", |state, name, _| provision::open(state, name)),
    ("upgrade-plan", |state, name, words| upgrade::open_plan(state, name, InPlaceUpgrade::TalosOs, words.get(1).cloned())),
    ("kube-plan", |state, name, words| upgrade::open_plan(state, name, InPlaceUpgrade::Kubernetes, words.get(1).cloned())),
    ("capi", |state, name, words| match upgrade::usable_cluster(state) {
        Some(_) => super::shell::open_with(state, name, words),
        None => Vec::new(),
    }),
    // `:rollout` and `:provisions`: the progress of the cluster in use's of that kind.
    (super::shell::PROGRESS, |state, name, words| match words.first().map(String::as_str) {
        Some("rollout") => upgrade::show_rollout(state),
        Some("provisions") => provision::show(state),
        _ => super::shell::open_with(state, name, words),
    }),
];

/// `Action::Open` and `OpenWith`: screen `name` by its rule, else as it stands.
fn open(state: &mut AppState, name: ScreenName, words: Vec<String>) -> Vec<Effect> {
    match OPENERS.iter().find(|(n, _)| *n == name) {
        Some((_, rule)) => rule(state, name, words),
        None => super::shell::open_with(state, name, words),
    }
}

/// An action with no overlay or input line open: what opens a screen, an overlay or the
/// command line, whatever the screen (a key or a `:` command asked it); else the module on
/// top's keys, or the fleet's, the cluster panes' and node detail's (`update_panes`).
fn on_screen(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::Open(name) => return open(state, name, Vec::new()),
        Action::OpenWith(name, line) => {
            let words = line.split_whitespace().map(String::from).collect();
            return open(state, name, words);
        }
        Action::UseCluster(name) => return use_cluster_or_context(state, &name),
        Action::Reload => {
            state.message = Some(Message::info("reloading kubeconfig and talosconfig..."));
            return vec![Effect::ReloadDiscovery];
        }
        Action::ScreenKey(event) => return super::shell::on_key(state, &event),
        Action::Show(Screen::Cluster(pane)) => panes::show_pane(state, pane),
        Action::Show(screen) => state.screen = screen,
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        Action::Overlay(overlay) => state.overlay = Some(overlay),
        // The rest are a screen's own keys; a module on top takes its own as `ScreenKey`.
        _ if matches!(state.screen, Screen::Module(_)) => {}
        other => return panes::on_screen(state, other),
    }
    Vec::new()
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
