//! The event loop: one `select!` over the terminal's event stream, app events
//! from IO tasks (mpsc) and quit signals. Redraws only when state changed and
//! at most ten times a second; effects run here, never in views.
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::Event;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::run_upgrade_plan::{count_removed, journal_actions};
use crate::app::action::{Action, AppEvent, Effect, PollerCommand};
use crate::app::keymap;
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::app::update::apply;
use crate::approval::{Dispatcher, Gate, Verdict};
use crate::clock::unix_now;
use crate::discovery::Discovery;
use crate::paths::Paths;
use crate::views::{self, Look};

/// At most ten frames a second.
const MIN_FRAME: Duration = Duration::from_millis(100);

/// Runs discovery again; called on a blocking thread, never the render path.
pub type Reloader = Arc<dyn Fn() -> Discovery + Send + Sync>;

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Quit,
    /// SIGHUP: the SSH session or terminal went away.
    Hangup,
    /// SIGTERM.
    Terminated,
}

impl Exit {
    /// The process exit code: 0 for quit, 128 + signal number otherwise.
    pub fn code(self) -> u8 {
        match self {
            Exit::Quit => 0,
            Exit::Hangup => 129,
            Exit::Terminated => 143,
        }
    }
}

/// Hands a request to the pollers (their handle's `send`); never blocks.
pub type PollerLink = Box<dyn Fn(PollerCommand) + Send + Sync>;

/// What the loop needs besides the terminal.
pub struct Console {
    pub state: AppState,
    pub look: Look,
    pub dispatcher: Dispatcher,
    pub reload: Option<Reloader>,
    /// The pollers, when the console runs any.
    pub poller: Option<PollerLink>,
    /// The pause, resume and abort of the upgrade this console runs.
    pub rollout_control: Option<mpsc::UnboundedSender<crate::rollout::RolloutControl>>,
    /// Where journals go (the state dir), as the subcommand resolved it.
    pub paths: Paths,
    /// The log view's streams, while it is on screen.
    pub logs: super::Following,
    /// The reads a node screen (the resources screen) repeats while it is on screen.
    pub resources: super::Following,
    /// What creates need besides the state: the operator's files, fingerprint answers.
    pub creates: super::run_create::CreateRuns,
    /// The cancel of the node or etcd action this console runs.
    pub action_cancel: Option<tokio::sync::watch::Sender<bool>>,
}

/// Runs until quit, a signal, or the terminal's event stream ends or fails. The console is
/// dropped as the loop ends, and its control channels with it: that tells paused runners the
/// console is gone, and they stop without ending their journals, which stay resumable.
pub async fn run<B, E>(
    terminal: &mut Terminal<B>,
    mut console: Console,
    mut terminal_events: E,
    app_tx: mpsc::Sender<AppEvent>,
    mut app_rx: mpsc::Receiver<AppEvent>,
) -> io::Result<Exit>
where
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
    E: Stream<Item = io::Result<Event>> + Unpin,
{
    let console = &mut console;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let size = terminal.size().map_err(io::Error::other)?;
    console.state.size = (size.width, size.height);
    console.state.identity = crate::run_holder::RunHolder::this_process().to_string();
    console.state.zone = crate::clock::Zone::System;
    console.state.actions.snapshot_dir = console.paths.snapshot_dir();
    let mut pacer = FramePacer::default();
    let mut queue: VecDeque<Action> = VecDeque::new();
    // Journals left by a console that was killed: shown from the first frame.
    for action in journal_actions(&console.state, &console.paths.state_dir) {
        apply(&mut console.state, action);
    }
    super::run_upgrade_plan::learn_releases(&console.state, &console.paths.state_dir, &app_tx);
    for action in
        super::follow_provisions::startup(&console.state, &console.paths.state_dir, &app_tx)
    {
        apply(&mut console.state, action);
    }
    for action in super::run_actions::startup(console) {
        apply(&mut console.state, action);
    }
    let mut shown: Option<Shown> = None;
    let mut clock = tokio::time::interval(Duration::from_secs(1));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let ticking = console.state.screens.busy();
        if pacer.should_draw(Instant::now()) {
            crate::app::prepared::prepare(&mut console.state);
            if let Some(request) = crate::app::usage_request(&mut console.state) {
                perform(console, Effect::Poller(request), &app_tx);
            }
            if let Some(request) = crate::app::drift_request(&mut console.state) {
                perform(console, Effect::Poller(request), &app_tx);
            }
            draw_if_changed(terminal, console, &mut shown)?;
            pacer.drawn(Instant::now());
        }
        let wake = pacer.wake_at();
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => queue.extend(to_action(&console.state, event)),
                Some(Err(e)) => return Err(e),
                // The terminal is gone: nothing more can be shown or typed.
                None => return Ok(Exit::Hangup),
            },
            Some(event) = app_rx.recv() => queue.push_back(Action::Event(event)),
            _ = clock.tick(), if ticking => {
                queue.push_back(Action::Event(AppEvent::Tick(unix_now())));
            }
            _ = hangup.recv() => return Ok(Exit::Hangup),
            _ = terminate.recv() => return Ok(Exit::Terminated),
            _ = sleep_until(wake), if wake.is_some() => {}
        }
        while let Some(action) = queue.pop_front() {
            let outcome = apply(&mut console.state, action);
            if outcome.redraw {
                pacer.changed();
            }
            for effect in outcome.effects {
                match effect {
                    Effect::Quit => return Ok(Exit::Quit),
                    other => queue.extend(perform(console, other, &app_tx)),
                }
            }
        }
    }
}

/// The last frame written to the terminal and its cursor.
struct Shown {
    frame: Buffer,
    cursor: Option<Position>,
}

/// Renders off screen and writes to the terminal only when the frame or the
/// cursor differs from the last one written: a state change that shows
/// nothing new costs no bytes on the wire. Returns whether it wrote.
fn draw_if_changed<B>(
    terminal: &mut Terminal<B>,
    console: &Console,
    shown: &mut Option<Shown>,
) -> io::Result<bool>
where
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let size = terminal.size().map_err(io::Error::other)?;
    let area = Rect::new(0, 0, size.width, size.height);
    let mut frame = Buffer::empty(area);
    let cursor = views::render(area, &mut frame, &console.state, &console.look);
    if shown
        .as_ref()
        .is_some_and(|s| s.frame == frame && s.cursor == cursor)
    {
        return Ok(false);
    }
    terminal
        .draw(|f| {
            if f.area() == area {
                f.buffer_mut().content.clone_from_slice(&frame.content);
                if let Some(at) = cursor {
                    f.set_cursor_position(at);
                }
            } else {
                views::draw(f, &console.state, &console.look);
            }
        })
        .map_err(io::Error::other)?;
    *shown = Some(Shown { frame, cursor });
    Ok(true)
}

/// Decides when to draw: only after a change, and not within [`MIN_FRAME`]
/// of the last frame. Starts dirty so the first frame is drawn at once.
#[derive(Debug, Clone, Copy)]
struct FramePacer {
    dirty: bool,
    last_draw: Option<Instant>,
}

impl Default for FramePacer {
    fn default() -> FramePacer {
        FramePacer {
            dirty: true,
            last_draw: None,
        }
    }
}

impl FramePacer {
    fn changed(&mut self) {
        self.dirty = true;
    }

    fn should_draw(&self, now: Instant) -> bool {
        self.dirty && self.last_draw.is_none_or(|t| now >= t + MIN_FRAME)
    }

    fn drawn(&mut self, now: Instant) {
        self.dirty = false;
        self.last_draw = Some(now);
    }

    /// When the loop must wake to draw a pending change; `None` when there
    /// is nothing to draw, so an idle console sleeps until an event.
    fn wake_at(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(self.last_draw.map_or_else(Instant::now, |t| t + MIN_FRAME))
    }
}

async fn sleep_until(when: Option<Instant>) {
    if let Some(when) = when {
        tokio::time::sleep_until(when).await;
    }
}

fn to_action(state: &AppState, event: Event) -> Option<Action> {
    match event {
        Event::Key(key) => keymap::action_for(state, &key),
        Event::Paste(text) => Some(Action::Paste(text)),
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        _ => None,
    }
}

/// Runs one effect; what comes back is fed to update as actions.
fn perform(
    console: &mut Console,
    effect: Effect,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    match effect {
        Effect::Quit => None,
        Effect::Gate(mutating) => Some(match console.dispatcher.request(mutating) {
            Gate::Refused(msg) => Action::Notify(Message::warn(msg)),
            Gate::Confirm(pending) => Action::AskConfirmation(pending),
        }),
        Effect::Answer(pending, answer) => {
            Some(match console.dispatcher.answer(pending, answer) {
                Verdict::Cancelled(msg) => Action::Notify(Message::info(msg)),
                // Update decides whether the plan on screen still holds.
                Verdict::Proceed(approved) => Action::Approved(approved),
            })
        }
        Effect::NotRun { approved, why } => Some(console.not_run(&approved, why)),
        // A guard refused the action on its plan: audited as the command line's refusal is.
        Effect::Refuse { action, why } => Some(Action::Notify(Message::warn(
            console.dispatcher.refused(&action, &why),
        ))),
        Effect::RunAction {
            approved,
            run,
            acks,
        } => {
            super::run_operation::run(console, approved, (*run, acks), app_tx);
            None
        }
        Effect::CancelAction => {
            console.cancel_action();
            None
        }
        Effect::HoldAction(hold) => console.hold_action(hold),
        Effect::AnswerAction { cluster, id, trust } => {
            super::run_create::answer(console, &cluster, (id, trust))
        }
        Effect::Poller(request) => {
            if let Some(poller) = &console.poller {
                poller(request);
            }
            None
        }
        Effect::Screen(task) => {
            if let Some(run) = task.get::<crate::views::health::HealthRun>() {
                super::run_health::start_health_check(run.clone(), app_tx);
            }
            if let Some(plan) = task.get::<crate::upgrade::kubernetes::KubernetesUpgradePlan>() {
                count_removed(&console.state, plan.clone(), app_tx);
            }
            if let Some(survey) = task.get::<crate::views::actions::SurveyNode>() {
                super::run_actions::survey(&console.state, survey.0.clone(), app_tx);
            }
            if let Some(read) = task.get::<crate::views::cluster_plan::ClusterPlanTask>() {
                super::read_plans::cluster_plan(console, read.clone(), app_tx);
            }
            if let Some(create) = task.get::<crate::views::create::CreateTask>() {
                super::run_create::perform(console, create.clone(), app_tx);
            }
            if let Some(task) = task.get::<crate::views::provision::ProvisionTask>() {
                super::run_provision_wizard::perform(&console.state, task.clone(), app_tx);
            }
            if let Some(task) = task.get::<crate::views::config::PatchTask>() {
                super::run_config::plan_patch(&console.state, task.clone(), app_tx);
            }
            if let Some(read) = task.get::<crate::views::node_read::NodeTask>() {
                let (reads, state) = (&mut console.resources, &console.state);
                return super::run_node_read::perform(reads, state, (task.screen, read), app_tx);
            }
            let logs = task.get::<crate::views::logs::LogTask>();
            logs.and_then(|task| super::run_logs::perform(console, task.clone(), app_tx))
        }
        Effect::ReloadDiscovery => match &console.reload {
            Some(reload) => {
                let reload = Arc::clone(reload);
                let tx = app_tx.clone();
                tokio::spawn(async move {
                    if let Ok(discovery) = tokio::task::spawn_blocking(move || reload()).await {
                        let _ = tx.send(AppEvent::Discovered(Box::new(discovery))).await;
                    }
                });
                None
            }
            None => Some(Action::Notify(Message::warn(
                "reload is not available here",
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::binding::Move;
    use crate::app::message::Level;
    use crate::app::state::Overlay;
    use crate::approval::{AuditLog, MutatingAction};
    use crate::tui::{Caps, ColorDepth, Theme};

    fn console(readonly: bool, audit: std::path::PathBuf) -> Console {
        let caps = Caps {
            color: ColorDepth::None,
            no_color_env: true,
            utf8: false,
        };
        Console {
            state: AppState::new(Discovery::default(), readonly),
            look: Look::new(&Theme::default_theme(), &caps),
            dispatcher: Dispatcher::new(readonly, AuditLog::new(audit)),
            reload: None,
            poller: None,
            rollout_control: None,
            paths: Paths {
                config_dir: "/nonexistent/config".into(),
                state_dir: "/nonexistent/state".into(),
            },
            logs: Default::default(),
            resources: Default::default(),
            creates: Default::default(),
            action_cancel: None,
        }
    }

    fn upgrade() -> MutatingAction {
        MutatingAction::UpgradeTalos {
            cluster: "lab".into(),
            target: "v1.12.0".into(),
        }
    }

    fn notice(action: Option<Action>) -> Message {
        match action {
            Some(Action::Notify(m)) => m,
            other => panic!("expected a notice, got {other:?}"),
        }
    }

    #[test]
    fn frames_only_after_changes_and_at_most_ten_a_second() {
        let t0 = Instant::now();
        let mut pacer = FramePacer::default();
        assert!(pacer.should_draw(t0), "the first frame is drawn at once");
        pacer.drawn(t0);
        assert!(
            !pacer.should_draw(t0 + Duration::from_secs(5)),
            "idle: no redraw"
        );
        assert_eq!(pacer.wake_at(), None, "idle: no wake-up");
        pacer.changed();
        assert!(!pacer.should_draw(t0 + Duration::from_millis(40)));
        assert_eq!(pacer.wake_at(), Some(t0 + MIN_FRAME));
        assert!(pacer.should_draw(t0 + MIN_FRAME));
        // A burst of changes inside one frame interval is one frame.
        let t1 = t0 + MIN_FRAME;
        pacer.drawn(t1);
        let mut frames = 0;
        for ms in 0..1000u64 {
            let now = t1 + Duration::from_millis(ms);
            pacer.changed();
            if pacer.should_draw(now) {
                pacer.drawn(now);
                frames += 1;
            }
        }
        assert!(frames <= 10, "{frames} frames in one second");
    }

    #[test]
    fn a_frame_that_shows_nothing_new_is_not_written() {
        use crate::app::action::AppEvent;
        use crate::fleet::{EtcdMemberReport, EtcdReport, FleetEvent};
        let dir = tempfile::tempdir().unwrap();
        let mut c = console(false, dir.path().join("audit.log"));
        c.state.clusters = vec![crate::discovery::Cluster {
            name: "lab".into(),
            talos: None,
            kube: None,
            paired_by: None,
            ..Default::default()
        }];
        let mut terminal = Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
        let mut shown = None;
        assert!(draw_if_changed(&mut terminal, &c, &mut shown).unwrap());
        assert!(!draw_if_changed(&mut terminal, &c, &mut shown).unwrap());
        // A raft index moving changes the model, not the fleet screen.
        let etcd = |index| FleetEvent::Etcd {
            cluster: "lab".into(),
            etcd: EtcdReport {
                members: vec![EtcdMemberReport {
                    id: "01".into(),
                    hostname: "cp-1".into(),
                    healthy: true,
                    raft_index: Some(index),
                    ..Default::default()
                }],
                ..Default::default()
            },
            at: Instant::now().into_std(),
        };
        apply(&mut c.state, Action::Event(AppEvent::Fleet(etcd(1))));
        draw_if_changed(&mut terminal, &c, &mut shown).unwrap();
        let outcome = apply(&mut c.state, Action::Event(AppEvent::Fleet(etcd(2))));
        assert!(outcome.redraw, "the model changed");
        assert!(
            !draw_if_changed(&mut terminal, &c, &mut shown).unwrap(),
            "but nothing on screen did"
        );
        c.state.size = (80, 24);
        apply(&mut c.state, Action::Move(Move::Down));
        apply(&mut c.state, Action::Overlay(Overlay::Help { scroll: 0 }));
        assert!(draw_if_changed(&mut terminal, &c, &mut shown).unwrap());
    }

    #[test]
    fn readonly_request_becomes_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = console(true, dir.path().join("audit.log"));
        let (tx, _rx) = mpsc::channel(1);
        let m = notice(perform(&mut c, Effect::Gate(upgrade()), &tx));
        assert_eq!(m.level, Level::Warn);
        assert!(m.text.contains("read-only"));
    }

    #[tokio::test]
    async fn reload_sends_discovery_over_the_channel() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = console(false, dir.path().join("audit.log"));
        c.reload = Some(Arc::new(|| Discovery {
            clusters: Vec::new(),
            errors: Vec::new(),
            ..Discovery::default()
        }));
        let (tx, mut rx) = mpsc::channel(1);
        assert!(perform(&mut c, Effect::ReloadDiscovery, &tx).is_none());
        let event = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("reload finished in time");
        assert!(matches!(event, Some(AppEvent::Discovered(_))));
    }
}
