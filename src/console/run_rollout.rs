//! Running rollouts from the event loop: the upgrade operation started or
//! resumed for an approved upgrade (its events forwarded to the app channel,
//! its control channel kept per cluster; the runner audits how it ended), and
//! the journals of unfinished rollouts read at startup.
use std::path::Path;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent, RemovedApisCounted, StartRollout};
use crate::app::message::Message;
use crate::app::plan_screen::PlannedRollout;
use crate::app::state::AppState;
use crate::approval::{ApprovedAction, Dispatcher};
use crate::discovery::Cluster;
use crate::operation::upgrade::{UpgradeRun, resume_upgrade_with, spawn_upgrade};
use crate::rollout::{RolloutControl, RolloutEvent, RolloutJournal, RolloutKind, RolloutOutcome};
use crate::upgrade::kubernetes::{
    Kubernetes, KubernetesUpgradePlan, check_removed_flags, count_removed_apis,
};
use crate::upgrade::launch::connect;
use crate::upgrade::{RolloutHandle, RunOptions, TalosOs, UpgradeKind};

/// A rollout this console started or resumed.
pub struct RunningRollout {
    pub control: mpsc::UnboundedSender<RolloutControl>,
}

impl Console {
    /// Forgets the runner of a rollout of `cluster` that ended (the runner audited how).
    pub(super) fn rollout_ended(&mut self, cluster: &str) {
        self.rollouts.remove(cluster);
    }

    /// Audits an approved action that does not run, and says why.
    pub(super) fn not_run(&self, approved: &ApprovedAction, why: String) -> Action {
        let audit = self.dispatcher.finished(approved, Err(why.clone()));
        let text = match audit {
            Ok(()) => format!("{}: {why}", approved.action().describe()),
            Err(e) => format!("{}: {why}; {e}", approved.action().describe()),
        };
        Action::Notify(Message::warn(text))
    }
}

/// An approved new rollout, whatever its kind, its journal to go in `state_dir`.
struct Fresh<'a> {
    approved: ApprovedAction,
    dispatcher: Dispatcher,
    acks: Vec<String>,
    cluster: Cluster,
    state_dir: &'a Path,
}

impl Fresh<'_> {
    fn spawn<K: UpgradeKind>(
        self,
        plan: K::Plan,
        events: mpsc::UnboundedSender<RolloutEvent>,
    ) -> RolloutHandle {
        let options = RunOptions {
            state_dir: Some(self.state_dir.to_path_buf()),
            ..RunOptions::default()
        };
        self.spawn_with::<K>(plan, options, events)
    }

    fn spawn_with<K: UpgradeKind>(
        self,
        plan: K::Plan,
        options: RunOptions,
        events: mpsc::UnboundedSender<RolloutEvent>,
    ) -> RolloutHandle {
        spawn_upgrade(
            UpgradeRun::<K> {
                approved: self.approved,
                dispatcher: self.dispatcher,
                plan,
                acks: self.acks,
                cluster: self.cluster,
                options,
            },
            events,
        )
    }
}

/// A journal to resume, its runner's events to go to `events`.
struct Resumed<'a> {
    journal: RolloutJournal,
    approved: ApprovedAction,
    dispatcher: Dispatcher,
    cluster: Cluster,
    state_dir: &'a Path,
    events: mpsc::UnboundedSender<RolloutEvent>,
}

impl Resumed<'_> {
    /// Resumes it as kind `K`: timings from the journal, the journal kept in the state dir.
    fn run<K: UpgradeKind>(self) -> RolloutHandle {
        let options = RunOptions {
            state_dir: Some(self.state_dir.to_path_buf()),
            ..RunOptions::from_journal(&self.journal.options)
        };
        resume_upgrade_with::<K>(
            self.journal,
            self.approved,
            self.dispatcher,
            self.cluster,
            options,
            self.events,
        )
    }
}

/// Starts the runner of an approved rollout, its events forwarded to the
/// app channel; returns its control channel, or why it could not start.
fn spawn_rollout(
    state: &AppState,
    state_dir: &Path,
    dispatcher: &Dispatcher,
    start: RolloutStart,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Result<mpsc::UnboundedSender<RolloutControl>, String> {
    let name = start.approved().action().cluster().to_string();
    let cluster = state
        .clusters
        .iter()
        .find(|c| c.name == name)
        .cloned()
        .ok_or_else(|| format!("cluster {name} is no longer in the talosconfig"))?;
    let (events, mut rx) = mpsc::unbounded_channel();
    let handle = match start {
        RolloutStart::Fresh(start) => {
            let StartRollout {
                approved,
                plan,
                acks,
            } = *start;
            let fresh = Fresh {
                approved,
                dispatcher: dispatcher.clone(),
                acks,
                cluster,
                state_dir,
            };
            match plan {
                PlannedRollout::Talos(plan) => fresh.spawn::<TalosOs>(plan, events),
                PlannedRollout::Kubernetes(plan) => fresh.spawn::<Kubernetes>(plan, events),
            }
        }
        RolloutStart::Resume(approved) => {
            let dir = state_dir.to_path_buf();
            let journal = RolloutJournal::load_unfinished(&dir, &name)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| {
                    format!(
                        "no unfinished rollout journal of {name} under {}",
                        dir.display()
                    )
                })?;
            let journal_kind = journal.kind;
            let resumed = Resumed {
                journal,
                approved,
                dispatcher: dispatcher.clone(),
                cluster,
                state_dir,
                events,
            };
            match journal_kind {
                RolloutKind::TalosUpgrade => resumed.run::<TalosOs>(),
                RolloutKind::KubernetesUpgrade => resumed.run::<Kubernetes>(),
            }
        }
    };
    let app = app_tx.clone();
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            if app.send(AppEvent::Rollout(event)).await.is_err() {
                break;
            }
        }
    });
    Ok(handle.control)
}

/// The unfinished rollout journals of the discovered clusters, read once at
/// startup so the console shows them and offers to resume; a journal that
/// cannot be read is said on the message line.
pub(super) fn journal_actions(state: &AppState, dir: &Path) -> Vec<Action> {
    state
        .clusters
        .iter()
        .filter_map(|c| match RolloutJournal::load_unfinished(dir, &c.name) {
            Ok(Some(journal)) => Some(Action::Event(AppEvent::Journal(Box::new(
                journal.summary(),
            )))),
            Ok(None) => None,
            Err(e) => Some(Action::Notify(Message::error(e.to_string()))),
        })
        .collect()
}

/// What a runner is started with: a fresh plan, or a journal to resume.
pub(super) enum RolloutStart {
    Fresh(Box<StartRollout>),
    Resume(ApprovedAction),
}

impl RolloutStart {
    fn approved(&self) -> &ApprovedAction {
        match self {
            RolloutStart::Fresh(start) => &start.approved,
            RolloutStart::Resume(approved) => approved,
        }
    }
}

/// Spawns the runner, or ends the rollout on screen with why it could not.
pub(super) fn start_rollout(
    console: &mut Console,
    start: RolloutStart,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let approved = start.approved().clone();
    let cluster = approved.action().cluster().to_string();
    let dispatcher = &console.dispatcher;
    match spawn_rollout(
        &console.state,
        &console.paths.state_dir,
        dispatcher,
        start,
        app_tx,
    ) {
        Ok(control) => {
            console.rollouts.insert(cluster, RunningRollout { control });
            None
        }
        Err(why) => {
            let _ = console.dispatcher.finished(&approved, Err(why.clone()));
            Some(Action::Event(AppEvent::Rollout(RolloutEvent::Finished {
                cluster,
                outcome: RolloutOutcome::Halted(why),
            })))
        }
    }
}

/// Counts the objects stored in API versions `plan`'s target removes, off
/// the event loop; the answer comes back as `AppEvent::RemovedApis`.
pub(super) fn count_removed(
    state: &AppState,
    plan: KubernetesUpgradePlan,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let cluster = state
        .clusters
        .iter()
        .find(|c| c.name == plan.cluster)
        .cloned();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let (result, flags) = match cluster {
            None => {
                let gone = format!("cluster {} is no longer in the talosconfig", plan.cluster);
                (Err(gone.clone()), Err(gone))
            }
            Some(cluster) => match connect(&cluster, &RunOptions::default()).await {
                Ok(observer) => tokio::join!(
                    count_removed_apis(&observer, &plan),
                    check_removed_flags(&observer, &plan)
                ),
                Err(e) => (Err(e.clone()), Err(e)),
            },
        };
        let counted = RemovedApisCounted {
            cluster: plan.cluster.clone(),
            from: plan.from.to_string(),
            target: plan.target.to_string(),
            result,
            flags,
        };
        let _ = app.send(AppEvent::RemovedApis(Box::new(counted))).await;
    });
}
