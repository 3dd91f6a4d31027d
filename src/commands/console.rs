//! `taloscope` with no subcommand: sets up file logging, runs discovery before
//! the terminal is touched, starts the pollers, then runs the console until
//! `q` or a signal, and restores the terminal whatever happens.
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::EventStream;
use tokio::sync::mpsc;

use crate::app::action::AppEvent;
use crate::app::message::Message;
use crate::app::screen::{Pane, Screen, TableKind};
use crate::app::state::AppState;
use crate::approval::{AuditLog, Dispatcher};
use crate::cli::GlobalArgs;
use crate::console::run::{self, Console, Exit, Reloader};
use crate::discovery::{Cluster, Discovery};
use crate::fleet::{FleetEvent, LivePollers, PollerCommand, PollerOptions};
use crate::logging;
use crate::opennebula::auth::OneEnvironment;
use crate::paths::Paths;
use crate::tui::{Caps, Theme, terminal};
use crate::views::Look;

/// App events waiting for the loop; IO tasks wait when it is full.
const APP_EVENT_QUEUE: usize = 256;
/// Poller reports waiting to be forwarded to the loop.
const FLEET_EVENT_QUEUE: usize = 1024;
/// Seconds between polls of the cluster on screen without `--refresh`.
pub const DEFAULT_REFRESH_SECS: u64 = 5;

/// The running pollers, shared by the `:reload` that replaces them and the loop that asks.
type SharedPollers = Arc<Mutex<LivePollers>>;

pub fn run(global: &GlobalArgs) -> ExitCode {
    limit_malloc_arenas();
    if !std::io::stdout().is_terminal() {
        eprintln!(
            "taloscope: stdout is not a terminal; the console needs one \
             (for scripts: `taloscope contexts --output json`)"
        );
        return ExitCode::from(super::exit::EXIT_USAGE);
    }
    let paths = Paths::resolve(global.state_dir.as_deref());
    let log = logging::init(&paths.log_dir(), global.log_level.as_deref());
    let env = |name: &str| std::env::var(name).ok();
    let caps = Caps::detect(&env, global.color, global.look.ascii);
    let (theme, theme_error) = Theme::load(global.look.theme.as_deref(), &paths.user_themes_dir());
    let discovery = load_discovery(global, &paths);
    tracing::info!(
        clusters = discovery.clusters.len(),
        errors = discovery.errors.len(),
        theme = %theme.name,
        readonly = global.readonly,
        "console starting"
    );

    let first = (discovery.clusters.clone(), discovery.kubeconfig.clone());
    let options = PollerOptions {
        focused_interval: Duration::from_secs(
            global.console.refresh.unwrap_or(DEFAULT_REFRESH_SECS),
        ),
        ..PollerOptions::default()
    };
    let (fleet_tx, fleet_rx) = mpsc::channel::<FleetEvent>(FLEET_EVENT_QUEUE);
    let pollers: SharedPollers = Arc::new(Mutex::new(LivePollers::new(options, fleet_tx)));
    let mut state = initial_state(discovery, global);
    // Providers and per-cluster sources for the provision wizard; the files a create's
    // contexts are merged into, which a delete (`D`) removes the cluster's contexts from, as
    // `taloscope create` and `delete` do.
    let sources = super::session::sources(global, &paths).0;
    let create_files = super::session::operator_files(&sources).map_err(|e| e.1);
    state.actions.context_files = create_files.clone().ok();
    state.provision.config = Arc::new(sources.config);
    state.provision.one_env = Arc::new(OneEnvironment::capture(&env));
    if let Some(err) = &theme_error {
        tracing::warn!("{err}");
        state.message = Some(Message::error(err.to_string()));
    }
    if let Err(err) = &log {
        state.message = Some(Message::warn(format!(
            "logging off: {}: {err}",
            paths.log_dir().display()
        )));
    }

    let reload: Reloader = {
        let global = global.clone();
        let paths = paths.clone();
        let pollers = Arc::clone(&pollers);
        // Runs on a blocking thread of the runtime, so the new pollers can
        // be spawned from here.
        Arc::new(move || {
            let mut discovery = load_discovery(&global, &paths);
            if let Ok(mut live) = pollers.lock() {
                live.keep_contexts(&mut discovery);
                live.start(discovery.clusters.clone(), discovery.kubeconfig.clone());
            }
            discovery
        })
    };
    let console = Console {
        state,
        look: Look::new(&theme, &caps),
        dispatcher: Dispatcher::new(global.readonly, AuditLog::new(paths.audit_log())),
        reload: Some(reload),
        poller: None,
        rollout_control: None,
        paths: paths.clone(),
        logs: Default::default(),
        resources: Default::default(),
        creates: crate::console::run_create::CreateRuns::new(create_files),
        action_cancel: None,
    };
    let runtime = match super::command_runtime() {
        Ok(rt) => rt,
        Err(stop) => return super::exit::exit_code(Err(stop)),
    };
    let result = runtime.block_on(run_in_terminal(console, (pollers, fleet_rx), first));
    match result {
        Ok(exit) => {
            tracing::info!(?exit, "console finished");
            ExitCode::from(exit.code())
        }
        Err(err) => {
            tracing::error!("console failed: {err}");
            eprintln!("taloscope: terminal error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Enters the terminal, starts the pollers, runs the loop, and restores the
/// terminal on every way out (the panic hook covers panics).
async fn run_in_terminal(
    mut console: Console,
    (pollers, mut fleet_rx): (SharedPollers, mpsc::Receiver<FleetEvent>),
    (clusters, kubeconfig): (Vec<Cluster>, Option<kube::config::Kubeconfig>),
) -> std::io::Result<Exit> {
    let mut term = terminal::enter(console.look.depth)?;
    inject_test_panic();
    let (tx, rx) = mpsc::channel(APP_EVENT_QUEUE);
    let app = tx.clone();
    tokio::spawn(async move {
        while let Some(event) = fleet_rx.recv().await {
            if app.send(AppEvent::Fleet(event)).await.is_err() {
                break;
            }
        }
    });
    if let Ok(mut live) = pollers.lock() {
        live.send(PollerCommand::Focus(console.state.current.clone()));
        live.start(clusters, kubeconfig);
    }
    let link = Arc::clone(&pollers);
    console.poller = Some(Box::new(move |request| {
        if let Ok(mut live) = link.lock() {
            live.send(request);
        }
    }));
    let result = run::run(&mut term, console, EventStream::new(), tx, rx).await;
    let restored = terminal::restore();
    drop(term);
    let handle = pollers.lock().ok().and_then(|mut live| live.take());
    if let Some(handle) = handle {
        let _ = tokio::time::timeout(Duration::from_secs(1), handle.shutdown()).await;
    }
    let exit = result?;
    // After a hangup the terminal may be gone; failing to restore it then is
    // expected and not worth an error.
    if exit == Exit::Quit {
        restored?;
    }
    Ok(exit)
}

/// Debug builds only: `TALOSCOPE_TEST_PANIC_IN_TASK=1` panics in a spawned
/// task once the console is up, so a test can check that the panic hook
/// restores the terminal and ends the process from a worker thread.
fn inject_test_panic() {
    if cfg!(debug_assertions) && std::env::var_os("TALOSCOPE_TEST_PANIC_IN_TASK").is_some() {
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            panic!("injected by TALOSCOPE_TEST_PANIC_IN_TASK");
        });
    }
}

/// Discovery as the console sees it: source (config file) errors first; a cluster reached
/// through the context `--context` names uses exactly that context.
pub fn load_discovery(global: &GlobalArgs, paths: &Paths) -> Discovery {
    let mut discovery = super::session::discovered(global, paths);
    if let Some(name) = &global.context {
        discovery.use_context(name);
    }
    discovery
}

/// The first state: `--context` puts the cluster it means in use (`Discovery::select`, the
/// rule `load_discovery` chose its context by); otherwise the cluster of the current talos
/// (or kube) context is selected.
pub fn initial_state(discovery: Discovery, global: &GlobalArgs) -> AppState {
    let current_talos = discovery.current_talos_context.clone();
    let current_kube = discovery.current_kube_context.clone();
    let chosen = (global.context.as_deref()).and_then(|name| discovery.select(name));
    let mut state = AppState::new(discovery, global.readonly).with_screens(crate::views::screens());
    state.demo_fleet = global.console.demo_fleet;
    if let Some(name) = &global.context {
        match chosen.map(|c| c.name) {
            Some(cluster) => {
                state.use_cluster(&cluster);
                state.screen = Screen::Cluster(Pane::Nodes);
            }
            None => {
                state.message = Some(Message::error(format!(
                    "--context {name}: no such cluster or context"
                )))
            }
        }
        return state;
    }
    let current = state.clusters.iter().find(|c| {
        c.talos
            .as_ref()
            .is_some_and(|t| Some(&t.name) == current_talos.as_ref())
            || c.kube
                .as_ref()
                .is_some_and(|k| Some(&k.name) == current_kube.as_ref())
    });
    state.tables.get_mut(TableKind::Clusters).selected = current.map(|c| c.name.clone());
    state
}

/// glibc gives every thread that allocates its own malloc arena, each with
/// its own free lists and slack; the console's few threads allocate little,
/// so one arena keeps the resident size down at no visible cost.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator tunable; called before the
    // runtime's threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{Cluster, KubeContext};
    use std::path::PathBuf;

    fn discovery() -> Discovery {
        let cluster = |name: &str, kube: &str| Cluster {
            name: name.into(),
            talos: None,
            kube: Some(KubeContext {
                name: kube.into(),
                file: PathBuf::from("/k"),
                cluster: name.into(),
                user: "u".into(),
                server: None,
            }),
            paired_by: None,
            ..Default::default()
        };
        Discovery {
            clusters: vec![cluster("a", "ctx-a"), cluster("b", "ctx-b")],
            current_kube_context: Some("ctx-b".into()),
            ..Discovery::default()
        }
    }

    #[test]
    fn current_context_is_selected_not_used() {
        let state = initial_state(discovery(), &GlobalArgs::default());
        assert_eq!(
            state.tables.get(TableKind::Clusters).selected.as_deref(),
            Some("b")
        );
        assert_eq!(state.current, None);
    }

    #[test]
    fn context_flag_uses_cluster_by_name_or_context() {
        let global = GlobalArgs {
            context: Some("ctx-a".into()),
            ..GlobalArgs::default()
        };
        let state = initial_state(discovery(), &global);
        assert_eq!(state.current.as_deref(), Some("a"));
        let global = GlobalArgs {
            context: Some("nope".into()),
            ..GlobalArgs::default()
        };
        let state = initial_state(discovery(), &global);
        assert_eq!(state.current, None);
        assert!(state.message.is_some_and(|m| m.text.contains("nope")));
    }

    #[test]
    fn a_cluster_named_as_another_clusters_context_is_the_one_in_use_as_discovery_chose() {
        // Cluster "a" reaches its API through a context named "b"; a cluster is named "b".
        let mut discovery = discovery();
        (discovery.clusters[0].kube.as_mut()).expect("kube").name = "b".into();
        let global = GlobalArgs {
            context: Some("b".into()),
            ..GlobalArgs::default()
        };
        let chosen = discovery.use_context("b");
        let state = initial_state(discovery, &global);
        assert_eq!(chosen.as_deref(), Some("b"));
        assert_eq!(state.current.as_deref(), Some("b"));
    }
}
