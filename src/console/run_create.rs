//! Create IO from the event loop besides its run (on the console's one runner,
//! `run_operation`): the journals of killed creates read, the plan and guards made by the CLI's
//! own functions, and the operator's answers to the run's fingerprint questions (`y` / `n` on
//! the one progress screen) passed on.
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{CreateOptions, plan_with_guards, unfinished_creates};
use crate::views::create::{CreateNews, CreateTask, NAME};

/// An answer to a fingerprint question: its id, and whether the operator confirmed it.
pub(super) type FingerprintAnswer = (u64, bool);

/// What the console's creates need besides the app state: the operator's files new contexts
/// are merged into, the runner's timing (the CLI's defaults), and a channel to each run's
/// fingerprint questions.
pub struct CreateRuns {
    /// The first talosconfig and kubeconfig in use, or why there is none.
    pub files: Result<ContextFiles, String>,
    pub options: CreateOptions,
    /// Where each running create's fingerprint answers go, by cluster.
    pub(super) answers: HashMap<String, mpsc::Sender<FingerprintAnswer>>,
}

impl CreateRuns {
    /// Creates whose contexts go into `files`.
    pub fn new(files: Result<ContextFiles, String>) -> CreateRuns {
        CreateRuns {
            files,
            ..CreateRuns::default()
        }
    }
}

impl Default for CreateRuns {
    fn default() -> CreateRuns {
        CreateRuns {
            files: Err("no talosconfig or kubeconfig file to write the new contexts into".into()),
            options: CreateOptions {
                poll: Duration::from_secs(1),
                phase_timeout: Duration::from_secs(600),
            },
            answers: HashMap::new(),
        }
    }
}

/// Runs one create task; what comes back is fed to update as the screen's news.
pub(super) fn perform(console: &Console, task: CreateTask, app: &mpsc::Sender<AppEvent>) {
    let state_dir = console.paths.state_dir.clone();
    match task {
        CreateTask::ReadUnfinished => super::answer(app, NAME, async move {
            let read = tokio::task::spawn_blocking(move || unfinished_creates(&state_dir)).await;
            let (found, errors) = read.unwrap_or_default();
            CreateNews::Unfinished { found, errors }
        }),
        CreateTask::Plan { asked, request } => {
            let state = &console.state;
            let config = Arc::clone(&state.provision.config);
            let one_env = Arc::clone(&state.provision.one_env);
            let clusters = state.clusters.clone();
            let files = console.creates.files.clone();
            super::answer(app, NAME, async move {
                let files = files.as_ref().map_err(String::as_str);
                let planned =
                    plan_with_guards(&config, &one_env, &request, &state_dir, &clusters, files);
                let result = (planned.await)
                    .map(|p| (Box::new(p.plan), p.guards))
                    .map_err(|e| e.to_string());
                CreateNews::Planned { asked, result }
            });
        }
    }
}

/// The operator's answer to a fingerprint question of the create of `cluster`, passed on to
/// its run; a warning when the run no longer waits for it.
pub(super) fn answer(
    console: &Console,
    cluster: &str,
    answer: FingerprintAnswer,
) -> Option<Action> {
    let sent = (console.creates.answers.get(cluster)).is_some_and(|tx| tx.try_send(answer).is_ok());
    (!sent).then(|| {
        Action::Notify(crate::app::message::Message::warn(format!(
            "the create of {cluster} no longer waits for that answer"
        )))
    })
}
