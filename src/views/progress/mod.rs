//! The one progress screen of the operation run from this console, whatever the operation (a
//! node or etcd action, an upgrade, a create, a delete, a scale, a provision, a CAPI fix...):
//! its state (the progress its runner's events build, where it is scrolled, where Esc leads),
//! its keys as data, its pure update step (`update`) and its view (`view`).
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::actions::ProgressNews;
use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, Move, bind, intent, lines_with_moves};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{ScreenModule, ScreenName, ScreenNews, Shared, Step};
use crate::app::scroll::Scroll;
use crate::approval::ApprovedAction;
use crate::operation::progress::OperationProgress;
use crate::operation::runner_events;
use crate::tui::Look;

mod update;
mod view;

/// The screen's state: the operation's progress, the operator's place in it, where Esc leads.
#[derive(Debug, Clone)]
pub struct ProgressScreen {
    /// The operation running (or last run, or left in a journal) from this console, as its
    /// runner's events built it.
    pub progress: Option<OperationProgress>,
    pub scroll: ProgressScroll,
    /// Where Esc leads: where the plan it runs was opened from.
    pub back: Screen,
}

impl Default for ProgressScreen {
    fn default() -> ProgressScreen {
        ProgressScreen {
            progress: None,
            scroll: ProgressScroll::default(),
            back: Screen::Cluster(Pane::Nodes),
        }
    }
}

/// The operator's place in the steps (following the step under way) and the lines
/// (following the newest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgressScroll {
    /// The move keys scroll the lines, not the steps (Tab switches).
    pub on_lines: bool,
    pub steps: Scroll,
    pub lines: Scroll,
}

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProgressKey {
    Cancel,
    Pause,
    Resume,
    Answer(bool),
    Focus,
    Back,
    Terminate,
}

#[rustfmt::skip]
static KEYS: &[Binding<ProgressKey, ProgressScreen>] = &[
    bind(&[Key::char('c')], ProgressKey::Cancel, "cancel the running action after its current step (says what it leaves)").footer("cancel").offered(ProgressScreen::cancellable),
    bind(&[Key::char(' ')], ProgressKey::Pause, "pause the upgrade after the current node").footer("pause").offered(|s| acts(update::pause(s))),
    bind(&[Key::char('r')], ProgressKey::Resume, "resume the paused upgrade (one a journal kept: after confirming the name)").footer("resume").offered(|s| acts(update::resume(s))),
    bind(&[Key::char('y')], ProgressKey::Answer(true), "the maintenance certificate fingerprint shown is the VM's: apply its config").footer("confirm").offered(ProgressScreen::asking),
    bind(&[Key::char('n')], ProgressKey::Answer(false), "it is not: the run stops before applying any config to it").footer("refuse").offered(ProgressScreen::asking),
    bind(&[Key::TAB], ProgressKey::Focus, "switch between the steps and the lines (j/k, PgUp/PgDn, g/G scroll)").footer("focus").offered(ProgressScreen::has_steps),
    bind(&[Key::ESC], ProgressKey::Back, "back to the pane (the action goes on; a shows it again)").footer("back"),
    bind(&[Key::char('x')], ProgressKey::Terminate, "terminate the failed VM the provision names (asks for the cluster name)").footer("terminate").offered(|s| acts(update::take_offer(s))),
];

/// Whether a key's step, taken now, asks for anything: the footer offers Space, `r` and `x`
/// exactly where their step acts.
fn acts(step: Step) -> bool {
    !step.effects.is_empty()
}

impl ProgressScreen {
    /// The in-place upgrade it shows, running or left in a journal.
    fn rollout(&self) -> Option<&OperationProgress> {
        self.progress.as_ref().filter(|p| p.is_rollout())
    }

    fn running(&self) -> Option<&OperationProgress> {
        self.progress.as_ref().filter(|p| p.running())
    }

    fn cancellable(&self) -> bool {
        self.running()
            .is_some_and(|p| p.cancellable() && !p.cancelling)
    }

    /// The running operation asks a question (a create's fingerprint).
    fn asking(&self) -> bool {
        self.progress.as_ref().is_some_and(|p| p.asking.is_some())
    }

    /// `Tab` switches lists, offered where the steps run long: an upgrade's nodes beside its
    /// lines.
    fn has_steps(&self) -> bool {
        self.rollout().is_some_and(|p| !p.steps.is_empty())
    }

    /// A move key over the list in focus: the steps following the one under way, or the
    /// lines following the newest.
    fn scroll_by(&mut self, step: Move, page: usize) {
        let Some(p) = &self.progress else {
            return;
        };
        if self.scroll.on_lines {
            let newest = p.lines.len().saturating_sub(1);
            self.scroll.lines.go(step, p.lines.len(), newest, page);
        } else {
            (self.scroll.steps).go(step, p.steps.len(), p.current_step(), page);
        }
    }
}

impl ScreenModule for ProgressScreen {
    fn name(&self) -> ScreenName {
        crate::app::shell::PROGRESS
    }

    fn title(&self) -> &'static str {
        "Progress of the operation run here"
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(KEYS, self)
    }

    /// Tab and the move keys scroll its steps and lines, Esc back (the operation goes on),
    /// `c` cancels it after its current step, Space pauses an upgrade and `r` resumes it,
    /// `y` / `n` answer its question, `x` takes the action it offers.
    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        if let Some(step) = intent(MOVE_KEYS, event) {
            self.scroll_by(*step, shared.page());
            return Step::default();
        }
        let now = shared.wall_clock;
        match intent(KEYS, event) {
            Some(ProgressKey::Cancel) => update::cancel(self, now),
            Some(ProgressKey::Pause) => update::pause(self),
            Some(ProgressKey::Resume) => update::resume(self),
            Some(ProgressKey::Answer(trust)) => update::answer(self, *trust, now),
            Some(ProgressKey::Terminate) => update::take_offer(self),
            Some(ProgressKey::Focus) => {
                self.scroll.on_lines = !self.scroll.on_lines;
                Step::default()
            }
            Some(ProgressKey::Back) => Step::close(),
            None => Step::default(),
        }
    }

    /// What the shell tells it: a run started, its events, what journals left, shown again.
    fn on_news_step(&mut self, news: &ScreenNews, shared: &Shared) -> (bool, Step) {
        let Some(news) = news.get::<ProgressNews>() else {
            return (false, Step::default());
        };
        let now = shared.wall_clock;
        let step = match news {
            ProgressNews::Started { progress, back } => {
                update::show(self, (**progress).clone(), *back)
            }
            ProgressNews::Event(kind, event) => update::on_event(self, *kind, event.clone(), now),
            ProgressNews::Journal(summary) => {
                let left = runner_events::interrupted_rollout(summary);
                update::left(self, left, ("rollout", ":rollout shows it, r resumes"))
            }
            ProgressNews::Provisions(vms) => {
                let left = runner_events::provisions_left(&vms.clusters, &vms.vms, now);
                update::left(self, left, ("provision", ":provisions shows its VMs"))
            }
            ProgressNews::Shown { back } => {
                self.back = *back;
                Step::default()
            }
        };
        (true, step)
    }

    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        update::resume_approved(self, approved, shared.wall_clock)
    }

    /// An operation started before the first tick takes its start from it; a running one's
    /// elapsed time moves.
    fn on_tick(&mut self, wall: u64) -> bool {
        let Some(p) = self.progress.as_mut() else {
            return false;
        };
        p.clock_known(wall);
        p.running()
    }

    fn busy(&self) -> bool {
        self.running().is_some()
    }

    fn operation(&self) -> Option<&OperationProgress> {
        self.progress.as_ref()
    }

    fn home(&self) -> Screen {
        self.back
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        let view = view::ProgressView {
            progress: self.progress.as_ref(),
            clock: shared.wall_clock,
            look,
            scroll: self.scroll,
        };
        (&view).render(area, buf);
    }
}
