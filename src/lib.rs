//! taloscope: a terminal operations console for Talos Linux Kubernetes clusters.
//!
//! The layers, top to bottom. A module uses only modules of the layers below
//! its own (tests/architecture.rs checks it); a type two layers need lives in
//! the lower one. See the project's STYLE.md for the why.
//!
//! - `commands`: one file per subcommand; reads the environment and the flags
//!   once (`Paths`, discovery sources) and passes them down as values. Every
//!   mutating command passes the one gate (`gate`: the plan report, the
//!   dispatcher's approval, the run on the one runner), prints progress through
//!   the one printer and ends by the one exit rule (`exit`).
//! - `cli`: the command line's shape (clap); parsing only; the gate's flags
//!   (the files it reads, `--plan`, `--yes`, `--confirm`, `--ack`, `--output`)
//!   flattened into each mutating command.
//! - `console`: the interactive console's IO: the event loop and the effect
//!   runner that starts every operation on its one runner (`run_operation`:
//!   node and etcd actions, CAPI fixes, cluster creates and deletes, CAPI
//!   scales, the Talos, Kubernetes and CAPI-way upgrades started or resumed from their
//!   journal, provisions and VM terminates, through `operation::run`, their events told
//!   as progress events)
//!   and the screen modules' tasks (the health checks, the log screen's streams, one
//!   node's reading for the config and resources screens (`run_node_read`), the
//!   create and provision screens' plans and journals; a running create's answers); it reads the delete, CAPI scale and CAPI-way
//!   upgrade plans as the commands do (`read_plans`).
//! - `views`: draw-only panes, one per file, and a screen's panes in a folder
//!   of its own (`views/<screen>/`: `plan`, every guarded operation's plan, the one
//!   gate's keys (`gate`: moving through the guards, taking an acknowledgement, Start, the
//!   dispatcher's approval checked) and its typed confirmation); functions of `app`'s state; what every plan draws alike in
//!   `plan_parts`, what plans and the progress draw alike in `progress_parts`; the request
//!   form the create and provision wizards share in `form`, and the wizards on the one plan
//!   screen (`wizard`: a `WizardKind` says only its fields, plan and panes); what the screens
//!   of one node's reading (config, resources) hold alike in `node_read`. The screen modules (`actions`,
//!   `capi`, `certs`, `cluster_plan`: the delete, CAPI scale and CAPI-way upgrade plans the console
//!   reads, `config` and its patch wizard (`config-patch`, a plan screen of its own that
//!   the config screen's `p` opens), `create`, `health`, `logs`, `progress`: the one progress screen of any
//!   operation run here, `provision`, `upgrade_plan`: the Talos and Kubernetes upgrade plans, one module
//!   generic over the kind) are whole screens in their folder: state, keys as data, pure
//!   update step and view, implementing `app::screens::ScreenModule`
//!   (`views::screens` lists them). A screen's folder imports no other
//!   screen's, but for the generic parts of `plan`.
//! - `app`: the shell: the screen modules' trait and registry (`screens`; their
//!   names, tasks and news in `screen_io`) and its routing of keys, news,
//!   poller reports, ticks and drawing to the module on top (`shell`);
//!   state (the screen and message vocabulary apart from `AppState`;
//!   each screen's state module holds data and pure queries, below `AppState`),
//!   key intents
//!   (`Action`), the pure update step (`update_*`, above the state), the `:`
//!   line (each command parsed into the `Action` a key gives), and the key
//!   tables as data (`binding`: one `bind(keys, action, help)` line a key; the
//!   footer and `?` are generated from them); each console table described once, as data
//!   (`rows`: `TableKind::spec`, its columns, rows, sort, title); what every plan screen holds
//!   and does alike (`plan_screen`'s `PlanHolder` and `PlanGuards`: the guards
//!   worst first, the selected one, the typed acknowledgements; the one gate's
//!   keys are the one plan screen's, `views::plan`); the action menu a selection offers (its screen
//!   is `views::actions`) and `D`, a cluster's delete (its plan screen is
//!   `views::cluster_plan`); every approved run handed to the one runner and
//!   told to the one progress screen (`update_actions`; `views::progress` folds its
//!   events, journals and keys as its news, `shell::show_progress` brings it on top);
//!   the CAPI doctor's fixes as the action menu offers them (`actions`); `p` and `:provisions` (`update_provision`; the wizard is
//!   `views::provision`); the CAPI-way upgrade plan that `u` / `U`
//!   open on a cluster Cluster API owns (on the `views::cluster_plan` screen), run on the one
//!   operation runner and shown on the one progress screen.
//! - `node_actions`: guarded actions on one node (reboot, drain, a service restart...;
//!   each one's facts said once, by `approval::NodeOperation`): plans and guards; reuses
//!   the upgrade's quorum guard (`operation::node` carries them out).
//! - `etcd_maintenance`: plans, guards and each step's call of the etcd actions
//!   (disarm, defragment, snapshot, forfeit, remove member); it reuses the
//!   upgrade's etcd health guards (`operation::etcd` runs the steps).
//! - `cluster_lifecycle`: whole clusters created and deleted: plans, guards,
//!   the resumable create's phases and its journal (`operation::create` runs
//!   them), what a create does before
//!   its runner runs (`create_setup`) and what a delete plan is read from
//!   (`prepare_delete`), each shared by the command and the console, and the
//!   delete's world (`operation::delete` carries it out).
//! - `capi_doctor`: the Talos control-plane provider's stuck states (a rollout
//!   waiting for etcd forever, an orphaned etcd member, a stopped single member)
//!   found from etcd over the Talos API against the Machines, explained, and
//!   fixed (`operation::capi_fix`) through etcd_maintenance's plan, a Machine's
//!   deletion or a node's reboot.
//! - `capi_scale`: a Cluster API workload cluster scaled the CAPI way: the plan
//!   (`spec.replicas` of its TalosControlPlane or a MachineDeployment), its guards
//!   (reusing the upgrade's etcd health), its events and outcome (`operation::scale`
//!   patches and follows the Machines); `prepare` reads both sides and
//!   evaluates the guards for the command and the console's `s` on `:capi` alike;
//!   `target` is the object a row of the tree scales.
//! - `operation`: the one operation pipeline: the `Operation` trait, its runner
//!   (`operation::run`: the approval checked, the action journal or the operation's own,
//!   steps a killed run left settled, batches of steps run at once, guards again before
//!   each step, step timeouts, cancel and hold between steps, a Lease renewed, progress
//!   events, audit) and the operations it runs (the Talos, Kubernetes and CAPI-way
//!   upgrades, node and etcd actions, CAPI doctor fixes, scale, provision, terminate,
//!   create, delete); every operation by kind (`OperationKind::of` names the kind of each
//!   action the dispatcher approves), each kind's journal, cancel rule and implementation;
//!   the one progress vocabulary every run is told in and the state it folds into
//!   (`progress`), and each runner's events mapped into it (`runner_events`); what the
//!   runner runs for an approved plan and how its progress starts (`planned`: `ActionRun`,
//!   `ActionRun::progress`, `PlannedRollout`), so a new operation needs no edit to the
//!   progress screen.
//! - `upgrade`, `provision`: plans, guards, steps and journals of the Talos
//!   and Kubernetes upgrades and of new VMs (`operation::upgrade` and
//!   `operation::provision` run their steps; `provision::follow` follows again the VMs a
//!   killed run's journal left); each run holds the cluster's
//!   rollout Lease (fleet's), so one run changes a cluster at a time;
//!   `upgrade::capi` is the same upgrade of a cluster Cluster API owns, the
//!   CAPI way (patched objects, a copied machine template, the providers'
//!   Machine replacement followed by `operation::capi_upgrade`); what `?` on the plan
//!   screens says each step of the three does, as `guards` says what each guard checks
//!   (`upgrade::explain`).
//! - `machine_config`: a node's running machine configuration read over the Talos API
//!   (os:admin only), its documents with every secret redacted unless revealed, the
//!   drift among the nodes of one role, and each node's mark against its role (read by
//!   `config drift` and the fleet poller alike).
//! - `node_resources`: what runs inside a node (CPU, memory, load, uptime, disks, volumes,
//!   network, processes, containers) read through the Talos client into one document, with
//!   the usage arithmetic and its warning and failing thresholds.
//! - `fleet`: the status model, the pollers, the rollout Lease, the health
//!   checklist, certificate expiry and each cluster summed up in words (`summary`).
//! - `capi`: Cluster API: the management clusters among the kube contexts, the
//!   workload clusters they own paired with the discovered clusters, and each
//!   one's tree as `clusterctl describe cluster` groups it.
//! - `rollout`, `approval`: what an upgrade rollout keeps and tells (its
//!   journal, step progress, pause/abort, what it writes into its Lease); the
//!   one gate for mutating actions
//!   (read-only refusal, typed confirmation, audit log, `ApprovedAction`).
//! - `talos`, `kube`, `opennebula`, `registry`: protocol clients, bytes on the
//!   wire to typed values and back (`registry`: OCI tags listings).
//! - `cluster_config`: what a new cluster is made from, natively: the secrets
//!   bundle, machine configs of a Talos version with config patches, the
//!   talosconfig, the operator's contexts merged in and removed, the
//!   `Kubeconfig` stream's archive read under caps. Uses discovery's readers.
//! - `discovery`: kubeconfig + talosconfig + taloscope's config -> clusters.
//! - `journal`: the one journal of every operation (rollouts, provisions,
//!   creates, node and etcd actions): one path rule, one atomic writer, one
//!   exclusive claim (`flock` on `<journal>.lock`, so of two runs started
//!   together exactly one runs), one rule for a live holder.
//! - `logging`, `versions`, `tui`, `guards`, `run_holder`: the log file;
//!   version rules and upgrade paths; terminal setup, capabilities, glyphs,
//!   themes and the 16-colour output of 16-colour terminals; a guard's verdict
//!   and acknowledgement, and every guard's `?` explanation (upgrades and
//!   provisions build their guard lists from them); who runs a mutating action
//!   (`user@host/pid-start`) and whether that process is still alive.
//! - `proto`, `clock`, `paths`, `config`: generated Talos API types; the wall
//!   clock and dates; where taloscope's files live; its config file.
//! - `bounded`, `printable`, `natural`, `atomic_file`: the floor: reading
//!   operator-named files only when regular and under a size cap; text from
//!   elsewhere made safe to print; the natural order of names (`w-2` before
//!   `w-10`); files replaced whole or not at all (temp file, fsync, rename).
//!
//! The simulated fleet the tests and the demo run against is the separate
//! crate `taloscope-sim` (crates/taloscope-sim): it shares only the generated
//! protocol types (crates/taloscope-proto) with the console.
pub mod app;
pub mod approval;
pub mod atomic_file;
pub mod bounded;
pub mod capi;
pub mod capi_doctor;
pub mod capi_scale;
pub mod cli;
pub mod clock;
pub mod cluster_config;
pub mod cluster_lifecycle;
pub mod commands;
pub mod config;
pub mod console;
pub mod discovery;
pub mod etcd_maintenance;
pub mod fleet;
pub mod guards;
pub mod journal;
pub mod kube;
pub mod logging;
pub mod machine_config;
pub mod natural;
pub mod node_actions;
pub mod node_resources;
pub mod opennebula;
pub mod operation;
pub mod paths;
pub mod printable;
pub mod proto;
pub mod provision;
pub mod registry;
pub mod rollout;
pub mod run_holder;
pub mod talos;
pub mod tui;
pub mod upgrade;
pub mod versions;
pub mod views;

/// Installs ring as the process-wide rustls crypto provider. Called first thing
/// in `main` and in tests: two providers compiled in would otherwise panic.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An error and its whole source chain, joined with ": "; a source whose text
/// the message already holds (reqwest and hyper repeat theirs) is said once.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !message.contains(&s_text) {
            message = format!("{message}: {s_text}");
        }
        source = s.source();
    }
    message
}
