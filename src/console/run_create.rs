//! Create IO from the event loop: the journals of killed creates read, the plan and guards
//! made by the CLI's own functions, an approved plan run by the CLI's runner (its journal
//! resumes a killed run) with the maintenance fingerprints asked of the operator, each in a
//! task reporting through the app channel; the approval audited when the run ends.
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::create::{CreateEffect, CreateUpdate, FingerprintAsk};
use crate::approval::{ApprovedAction, Dispatcher};
use crate::clock::unix_now;
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{
    CreateOptions, CreatePlan, FingerprintPolicy, FingerprintQuestion, LifecycleEvent, RunSummary,
    create_runner, plan_with_guards, provider_named, unfinished_creates,
};
use crate::config::Config;
use crate::opennebula::auth::OneEnvironment;
use crate::operation::create::ClusterCreate;
use crate::operation::{CancelSignal, Runner};

/// An answer to a fingerprint question: its id, and whether the operator confirmed it.
type FingerprintAnswer = (u64, bool);

/// What the console's creates need besides the app state: the operator's files new contexts
/// are merged into, the runner's timing (the CLI's defaults), and a channel to each run's
/// fingerprint questions.
pub struct CreateRuns {
    /// The first talosconfig and kubeconfig in use, or why there is none.
    pub files: Result<ContextFiles, String>,
    pub options: CreateOptions,
    answers: HashMap<String, mpsc::Sender<FingerprintAnswer>>,
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
    /// Audits an approved create that ends before the operation runner (which audits its
    /// own).
    dispatcher: Dispatcher,
    app: mpsc::Sender<AppEvent>,
}

impl CreateIo {
    async fn send(&self, update: CreateUpdate) {
        let _ = self.app.send(AppEvent::Create(Box::new(update))).await;
    }
}

/// Runs one create effect; what comes back is fed to update.
pub(super) fn perform(
    console: &mut Console,
    effect: CreateEffect,
    app: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let io = CreateIo {
        config: Arc::clone(&console.state.provision.config),
        one_env: Arc::clone(&console.state.provision.one_env),
        state_dir: console.paths.state_dir.clone(),
        dispatcher: console.dispatcher.clone(),
        app: app.clone(),
    };
    match effect {
        CreateEffect::ReadUnfinished => {
            tokio::spawn(async move {
                let dir = io.state_dir.clone();
                let read = tokio::task::spawn_blocking(move || unfinished_creates(&dir)).await;
                let (found, errors) = read.unwrap_or_default();
                io.send(CreateUpdate::Unfinished { found, errors }).await;
            });
        }
        CreateEffect::Plan { asked, request } => {
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
                io.send(CreateUpdate::Planned { asked, result }).await;
            });
        }
        CreateEffect::Start { approved, plan } => {
            let (tx, rx) = mpsc::channel(8);
            console.creates.answers.insert(plan.cluster.clone(), tx);
            let files = console.creates.files.clone();
            let options = console.creates.options;
            tokio::spawn(io.start(approved, plan, files, options, rx));
        }
        CreateEffect::Answer { cluster, id, trust } => {
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

impl CreateIo {
    /// Runs the approved plan and says how it ended (also when it never started).
    async fn start(
        self,
        approved: ApprovedAction,
        plan: Box<CreatePlan>,
        files: Result<ContextFiles, String>,
        options: CreateOptions,
        answers: mpsc::Receiver<FingerprintAnswer>,
    ) {
        let cluster = plan.cluster.clone();
        let result = match files {
            Ok(files) => self.run(&approved, *plan, files, options, answers).await,
            Err(e) => Err(self.not_started(&approved, e)),
        };
        let ended = CreateUpdate::Ended {
            cluster,
            approved,
            result,
        };
        self.send(ended).await;
    }

    /// The CLI's runner over the plan, its events and questions forwarded, the operator's
    /// answers passed back, until it ends.
    async fn run(
        &self,
        approved: &ApprovedAction,
        plan: CreatePlan,
        files: ContextFiles,
        options: CreateOptions,
        mut answers: mpsc::Receiver<FingerprintAnswer>,
    ) -> Result<(), String> {
        let cluster = plan.cluster.clone();
        let (provider, _) = provider_named(&self.config, &self.one_env, &plan.provider)
            .map_err(|e| self.not_started(approved, e.to_string()))?;
        let (events_tx, mut events) = mpsc::channel(64);
        let (questions_tx, mut questions) = mpsc::channel(8);
        let runner = create_runner(
            &self.state_dir,
            plan,
            provider,
            files,
            options,
            FingerprintPolicy::Ask(questions_tx),
            events_tx,
        )
        .map_err(|e| self.not_started(approved, e.to_string()))?;
        let (approved, dispatcher) = (approved.clone(), self.dispatcher.clone());
        let state_dir = self.state_dir.clone();
        let mut task = tokio::spawn(async move {
            let mut create = ClusterCreate::new(runner);
            let runner = Runner {
                approved: &approved,
                dispatcher: &dispatcher,
                state_dir: &state_dir,
                acks: &[],
                cancel: CancelSignal::never(),
                // The create's own events carry its lines.
                events: &|_| {},
            };
            let result = crate::operation::run(&mut create, runner).await;
            create.summary(&result).await
        });
        let mut waiting: HashMap<u64, oneshot::Sender<bool>> = HashMap::new();
        let mut asked = 0u64;
        let summary: RunSummary = loop {
            tokio::select! {
                Some(event) = events.recv() => self.forward(&cluster, event).await,
                Some(q) = questions.recv() => {
                    asked += 1;
                    self.ask(&cluster, asked, q, &mut waiting).await;
                }
                Some((id, trust)) = answers.recv() => {
                    if let Some(answer) = waiting.remove(&id) {
                        let _ = answer.send(trust);
                    }
                }
                ended = &mut task => {
                    break ended.map_err(|e| format!("the run ended abnormally: {e}"))?;
                }
            }
        };
        while let Ok(event) = events.try_recv() {
            self.forward(&cluster, event).await;
        }
        summary.error.map_or(Ok(()), Err)
    }

    /// An approved create that ends before its runner: audited here, its reason returned.
    fn not_started(&self, approved: &ApprovedAction, why: String) -> String {
        if let Err(e) = self.dispatcher.finished(approved, Err(why.clone())) {
            tracing::warn!("{e}");
        }
        why
    }

    async fn forward(&self, cluster: &str, event: LifecycleEvent) {
        let at = unix_now();
        let cluster = cluster.to_string();
        self.send(CreateUpdate::Run { cluster, event, at }).await;
    }

    async fn ask(
        &self,
        cluster: &str,
        id: u64,
        q: FingerprintQuestion,
        waiting: &mut HashMap<u64, oneshot::Sender<bool>>,
    ) {
        waiting.insert(id, q.answer);
        let ask = FingerprintAsk {
            id,
            vm: q.vm,
            address: q.address,
            fingerprint: q.fingerprint,
        };
        let cluster = cluster.to_string();
        self.send(CreateUpdate::Fingerprint { cluster, ask }).await;
    }
}

impl Console {
    /// Forgets the answers channel of a create that ended.
    pub(super) fn create_audit(&mut self, update: &CreateUpdate) {
        if let CreateUpdate::Ended { cluster, .. } = update {
            self.creates.answers.remove(cluster);
        }
    }
}
