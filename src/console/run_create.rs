//! Create IO from the event loop besides its run (on the console's one runner,
//! `run_operation`): the journals of killed creates read, the plan and guards made by the CLI's
//! own functions, and the operator's answers to the run's fingerprint questions passed on.
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::screens::ScreenNews;
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{CreateOptions, plan_with_guards, unfinished_creates};
use crate::config::Config;
use crate::opennebula::auth::OneEnvironment;
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

/// What a create task takes from the console.
struct CreateIo {
    config: Arc<Config>,
    one_env: Arc<OneEnvironment>,
    state_dir: PathBuf,
    app: mpsc::Sender<AppEvent>,
}

impl CreateIo {
    async fn send(&self, news: CreateNews) {
        let _ = self
            .app
            .send(AppEvent::Screen(ScreenNews::new(NAME, news)))
            .await;
    }
}

/// Runs one create task; what comes back is fed to update.
pub(super) fn perform(
    console: &mut Console,
    task: CreateTask,
    app: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let io = CreateIo {
        config: Arc::clone(&console.state.provision.config),
        one_env: Arc::clone(&console.state.provision.one_env),
        state_dir: console.paths.state_dir.clone(),
        app: app.clone(),
    };
    match task {
        CreateTask::ReadUnfinished => {
            tokio::spawn(async move {
                let dir = io.state_dir.clone();
                let read = tokio::task::spawn_blocking(move || unfinished_creates(&dir)).await;
                let (found, errors) = read.unwrap_or_default();
                io.send(CreateNews::Unfinished { found, errors }).await;
            });
        }
        CreateTask::Plan { asked, request } => {
            let clusters = console.state.clusters.clone();
            let files = console.creates.files.clone();
            tokio::spawn(async move {
                let files = files.as_ref().map_err(String::as_str);
                let planned = plan_with_guards(
                    &io.config,
                    &io.one_env,
                    &request,
                    &io.state_dir,
                    &clusters,
                    files,
                )
                .await;
                let result = planned
                    .map(|p| (Box::new(p.plan), p.guards))
                    .map_err(|e| e.to_string());
                io.send(CreateNews::Planned { asked, result }).await;
            });
        }
        CreateTask::Answer { cluster, id, trust } => {
            let sent = console
                .creates
                .answers
                .get(&cluster)
                .is_some_and(|tx| tx.try_send((id, trust)).is_ok());
            if !sent {
                return Some(Action::Notify(crate::app::message::Message::warn(format!(
                    "the create of {cluster} no longer waits for that answer"
                ))));
            }
        }
    }
    None
}
