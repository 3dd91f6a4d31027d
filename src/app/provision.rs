//! What the console knows about provisioning: the wizard (provider, role,
//! template or OneFlow service, count, name pattern, the plan) and, per
//! cluster, the VMs this console started or found in a journal, folded from
//! the runner's events. Plain data; `update_provision` changes it.
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::{Config, MachineRole, NameOrId, ProviderKind};
use crate::opennebula::auth::OneEnvironment;
use crate::provision::cluster::{cluster_addresses, guards_over_status};
use crate::provision::{JournalEntry, ProvisionEvent, ProvisionPlan, ProvisionStage, VmProgress};

use super::plan_screen::{AskedPlan, GuardReading, GuardedPlan, PlanGuards, cluster_and_guards};
use crate::approval::{ApprovedAction, MutatingAction};

/// Most VMs one wizard asks for.
pub const MAX_COUNT: usize = 20;
/// Notes kept per cluster.
const MAX_NOTES: usize = 100;

/// The keys of the wizard and the progress pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProvisionKey {
    /// `p` / `:provision`: the wizard for the cluster in use.
    Open,
    /// `:provisions`: the progress pane of the cluster in use.
    Show,
    NextValue,
    PreviousValue,
    More,
    Less,
    /// Type the name pattern.
    EditPattern,
    /// Ask the provider for the plan.
    MakePlan,
    /// The selected failed VM, through the dispatcher.
    Terminate,
}

/// One thing new VMs can come from, as the provider lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceChoice {
    pub id: u64,
    pub name: String,
    /// OneFlow services: their role names; empty for VM templates.
    pub roles: Vec<String>,
}

impl SourceChoice {
    pub fn label(&self) -> String {
        if self.roles.is_empty() {
            format!("{} (id {})", self.name, self.id)
        } else {
            format!(
                "{} (id {}; roles {})",
                self.name,
                self.id,
                self.roles.join(", ")
            )
        }
    }

    fn is(&self, wanted: &NameOrId) -> bool {
        match wanted {
            NameOrId::Id(id) => *id == self.id,
            NameOrId::Name(name) => *name == self.name,
        }
    }
}

/// The provider's list, as far as it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceList {
    Loading,
    Failed(String),
    Ready(Vec<SourceChoice>),
}

/// The wizard's fields, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Provider,
    Role,
    Source,
    Count,
    Names,
}

impl Field {
    pub const ALL: [Field; 5] = [
        Field::Provider,
        Field::Role,
        Field::Source,
        Field::Count,
        Field::Names,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Field::Provider => "Provider",
            Field::Role => "Role",
            Field::Source => "Source",
            Field::Count => "Count",
            Field::Names => "Names",
        }
    }
}

/// A configured provider the wizard offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderChoice {
    pub name: String,
    pub kind: ProviderKind,
}

/// The wizard of one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wizard {
    /// The cluster as shown.
    pub cluster: String,
    /// Its key in taloscope's config.
    pub key: String,
    /// The cluster's own provider first.
    pub providers: Vec<ProviderChoice>,
    pub provider: usize,
    pub role: MachineRole,
    pub sources: SourceList,
    pub source: usize,
    pub count: usize,
    pub pattern: String,
    pub field: Field,
    pub plan: AskedPlan<ProvisionPlan>,
    /// Bumped per plan asked for: only the latest answer is kept.
    pub asked: u64,
    /// The plan's guards over live status, as `provision --plan` prints them (the same list
    /// the headless command checks), and the acknowledgements typed; the runner checks them
    /// again.
    pub guards: PlanGuards,
    /// The guards, not the request's fields, have the move keys.
    pub guards_focused: bool,
    /// The machine config's `cluster.controlPlane.endpoint`, read with the plan.
    pub machine_config_endpoint: Option<String>,
}

impl Wizard {
    pub fn provider(&self) -> Option<&ProviderChoice> {
        self.providers.get(self.provider)
    }

    pub fn chosen_source(&self) -> Option<&SourceChoice> {
        match &self.sources {
            SourceList::Ready(list) => list.get(self.source),
            _ => None,
        }
    }

    /// What the source field is called for this provider.
    pub fn source_title(&self) -> &'static str {
        match self.provider().map(|p| p.kind) {
            Some(ProviderKind::Oneflow) => "Service",
            _ => "Template",
        }
    }

    /// Selects the source the config names for this cluster and role.
    pub fn select_configured_source(&mut self, config: &Config) {
        let Some(entry) = config.clusters.get(&self.key) else {
            return;
        };
        let wanted = match self.provider().map(|p| p.kind) {
            Some(ProviderKind::Oneflow) => entry.service.as_ref(),
            _ => entry.templates.get(self.role),
        };
        if let (Some(wanted), SourceList::Ready(list)) = (wanted, &self.sources)
            && let Some(i) = list.iter().position(|c| c.is(wanted))
        {
            self.source = i;
        }
    }

    /// The config the planner reads: the cluster's entry with the chosen
    /// provider's source for the chosen role, so the plan is made by the
    /// same planner the headless command uses.
    pub fn planning_config(&self, config: &Config) -> Config {
        let mut config = config.clone();
        let entry = config.clusters.entry(self.key.clone()).or_default();
        if let Some(source) = self.chosen_source() {
            let id = NameOrId::Id(source.id);
            match self.provider().map(|p| p.kind) {
                Some(ProviderKind::Oneflow) => entry.service = Some(id),
                _ => match self.role {
                    MachineRole::Worker => entry.templates.worker = Some(id),
                    MachineRole::Controlplane => entry.templates.controlplane = Some(id),
                },
            }
        }
        config
    }
}

impl GuardedPlan for Wizard {
    cluster_and_guards!();

    fn unready(&self) -> Option<String> {
        self.plan.unready("Enter makes the plan, s then provisions")
    }

    fn guards_focused(&self) -> bool {
        self.guards_focused
    }

    /// The list `provision --plan` prints, over the fleet model's live status.
    fn read_guards(&mut self, reading: &GuardReading<'_>) {
        let live = reading.live.filter(|l| l.has_data());
        let guards = match (&self.plan, live) {
            (AskedPlan::Ready(plan), Some(live)) => {
                let addresses = reading
                    .discovered
                    .map(cluster_addresses)
                    .unwrap_or_default();
                guards_over_status(
                    plan,
                    reading.config,
                    &addresses,
                    &live.status,
                    self.machine_config_endpoint.as_deref(),
                    reading.capi_owner,
                )
            }
            _ => Vec::new(),
        };
        self.guards.set(guards);
    }

    fn approval(&self) -> Option<MutatingAction> {
        self.plan.ready().map(ProvisionPlan::action)
    }

    fn approves(&self, approved: &MutatingAction) -> bool {
        self.plan
            .ready()
            .is_some_and(|plan| plan.is_approved_by(approved))
    }
}

/// One VM on the progress pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmRow {
    pub provider: String,
    pub role: String,
    pub progress: VmProgress,
    /// Wall-clock seconds when this console first saw it, and when it
    /// reached a final stage; unknown for VMs read from a journal.
    pub seen_unix: Option<u64>,
    pub final_unix: Option<u64>,
}

/// The VMs of one cluster's provisions in this console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionView {
    pub cluster: String,
    pub key: String,
    /// What runs: `2 worker node(s) via lab`, or `journal`.
    pub what: String,
    pub requested: usize,
    pub vms: Vec<VmRow>,
    /// Where the latest run's VMs start in `vms`: the rows before are earlier runs'.
    pub run_start: usize,
    pub notes: Vec<String>,
    /// A runner (new or following a journal's VMs) reports here.
    pub running: bool,
    /// How the last run ended.
    pub outcome: Option<String>,
    pub succeeded: Option<bool>,
    /// The selected VM by name.
    pub selected: Option<String>,
    /// Tab moved the move keys from the VMs to the notes.
    pub notes_focus: bool,
    /// The operator's place in the notes (they follow the newest otherwise).
    pub notes_scroll: super::scroll::Scroll,
}

impl ProvisionView {
    pub fn new(cluster: &str, key: &str, what: String, requested: usize) -> ProvisionView {
        ProvisionView {
            cluster: cluster.to_string(),
            key: key.to_string(),
            what,
            requested,
            vms: Vec::new(),
            run_start: 0,
            notes: Vec::new(),
            running: false,
            outcome: None,
            succeeded: None,
            selected: None,
            notes_focus: false,
            notes_scroll: Default::default(),
        }
    }

    /// From a journal read at startup: its VMs with their last known state.
    pub fn from_journal(cluster: &str, key: &str, entries: &[JournalEntry]) -> ProvisionView {
        let mut view = ProvisionView::new(cluster, key, "from the journal".into(), entries.len());
        view.vms = entries
            .iter()
            .map(|e| VmRow {
                provider: e.provider.clone(),
                role: e.role.clone(),
                progress: e.progress.clone(),
                seen_unix: None,
                final_unix: None,
            })
            .collect();
        view.selected = view.vms.first().map(|v| v.progress.name.clone());
        view
    }

    /// Tab, and the move keys while the notes have the focus: switch lists or
    /// scroll the notes (`page` lines for PgUp/PgDn). False for other keys and
    /// for moves among the VMs.
    pub fn scroll_notes(&mut self, action: &super::action::Action, page: usize) -> bool {
        if matches!(action, super::action::Action::NextPane) {
            self.notes_focus = !self.notes_focus;
            return true;
        }
        let len = self.notes.len();
        self.notes_focus
            && self
                .notes_scroll
                .apply(action, len, len.saturating_sub(1), page)
    }

    pub fn unfinished(&self) -> Vec<&VmRow> {
        self.vms
            .iter()
            .filter(|v| !v.progress.stage.is_final())
            .collect()
    }

    /// The latest run's VMs (a run's summary counts only its own).
    fn run_vms(&self) -> &[VmRow] {
        self.vms.get(self.run_start..).unwrap_or_default()
    }

    /// The latest run's VMs that joined.
    pub fn joined(&self) -> usize {
        self.run_vms()
            .iter()
            .filter(|v| v.progress.stage == ProvisionStage::Joined)
            .count()
    }

    /// What `joined` is out of: the nodes the latest run asked for, or more when it has more
    /// VMs still counting. A VM the operator terminated is out of the run, as the run's
    /// summary has it.
    pub fn total(&self) -> usize {
        let counting = self
            .run_vms()
            .iter()
            .filter(|v| v.progress.stage != ProvisionStage::Terminated)
            .count();
        self.requested.max(counting)
    }

    /// A new run starts: its VMs are the ones folded from here on.
    pub fn start_run(&mut self, what: String, requested: usize) {
        self.what = what;
        self.requested = requested;
        self.run_start = self.vms.len();
        self.running = true;
        self.outcome = None;
        self.succeeded = None;
    }

    pub fn selected_index(&self) -> usize {
        self.selected
            .as_ref()
            .and_then(|s| self.vms.iter().position(|v| &v.progress.name == s))
            .unwrap_or(0)
    }

    pub fn selected_vm(&self) -> Option<&VmRow> {
        self.vms.get(self.selected_index())
    }

    pub fn push_note(&mut self, note: String) {
        self.notes.push(note);
        if self.notes.len() > MAX_NOTES {
            self.notes.remove(0);
        }
    }

    /// Folds one VM change (a new VM, or a known one by id, else by name).
    pub fn fold_vm(&mut self, provider: &str, role: &str, progress: VmProgress, now: Option<u64>) {
        let at = self
            .vms
            .iter()
            .position(|v| match (v.progress.id, progress.id) {
                (Some(a), Some(b)) => a == b,
                _ => v.progress.name == progress.name,
            });
        let final_now = progress.stage.is_final().then_some(now).flatten();
        // A new VM, or the selected one terminated: the selection may have to move.
        let moved = at.is_none() || self.selected.as_deref() == Some(progress.name.as_str());
        match at {
            Some(i) => {
                let row = &mut self.vms[i];
                if row.progress.stage != progress.stage {
                    self.notes.push(format!(
                        "{}: {} -> {}",
                        progress.name,
                        row.progress.stage.as_str(),
                        progress.stage.as_str()
                    ));
                }
                if row.final_unix.is_none() {
                    row.final_unix = final_now;
                }
                row.seen_unix = row.seen_unix.or(now);
                row.progress = progress;
            }
            None => {
                self.notes
                    .push(format!("{}: {}", progress.name, progress.stage.as_str()));
                self.vms.push(VmRow {
                    provider: provider.to_string(),
                    role: role.to_string(),
                    progress,
                    seen_unix: now,
                    final_unix: final_now,
                });
            }
        }
        if self.notes.len() > MAX_NOTES {
            let extra = self.notes.len() - MAX_NOTES;
            self.notes.drain(..extra);
        }
        if moved || self.selected.is_none() {
            self.reselect();
        }
    }

    /// Keeps a VM that still counts selected: none selected, or a terminated one (its message
    /// is over), moves to the latest run's first VM that is not terminated, if any.
    fn reselect(&mut self) {
        let terminated = |v: &VmRow| v.progress.stage == ProvisionStage::Terminated;
        let selected_is_out = match self.selected_vm() {
            None => true,
            Some(row) => self.selected.is_none() || terminated(row),
        };
        if !selected_is_out {
            return;
        }
        let next = self
            .run_vms()
            .iter()
            .chain(self.vms.iter())
            .find(|v| !terminated(v))
            .or_else(|| self.vms.first());
        self.selected = next.map(|v| v.progress.name.clone());
    }
}

/// Everything about provisioning in the console.
#[derive(Debug, Clone, Default)]
pub struct ProvisionState {
    /// taloscope's config (providers, per-cluster sources and machine configs).
    pub config: Arc<Config>,
    /// OpenNebula's environment (ONE_AUTH, ONE_XMLRPC…), as commands/ captured it.
    pub one_env: Arc<OneEnvironment>,
    /// The merged kubeconfig the join checks are built from.
    pub kubeconfig: Option<kube::config::Kubeconfig>,
    pub wizard: Option<Wizard>,
    /// By cluster as shown.
    pub views: BTreeMap<String, ProvisionView>,
}

impl ProvisionState {
    pub fn any_running(&self) -> bool {
        self.views.values().any(|v| v.running)
    }
}

/// What provisioning IO tasks report to the app.
#[derive(Debug, Clone)]
pub enum ProvisionUpdate {
    /// The provider's templates or OneFlow services.
    Sources {
        cluster: String,
        provider: String,
        result: Result<Vec<SourceChoice>, String>,
    },
    /// The plan asked for as `asked`.
    Planned {
        cluster: String,
        asked: u64,
        result: Result<Box<ProvisionPlan>, String>,
        /// The plan's machine config endpoint, read with it (for its guard).
        machine_config_endpoint: Option<String>,
    },
    /// A runner's event on `cluster`'s VMs of `provider` and `role`.
    Run {
        cluster: String,
        provider: String,
        role: String,
        event: ProvisionEvent,
    },
    /// A run ended (its approval is audited by the loop); `None` for
    /// following a journal's VMs, which needed no approval.
    Ended {
        cluster: String,
        approved: Option<ApprovedAction>,
        result: Result<(), String>,
    },
    /// A journal found at startup; `following` when its unfinished VMs are
    /// being followed again.
    Journal {
        cluster: String,
        key: String,
        entries: Vec<JournalEntry>,
        following: bool,
    },
    /// A terminate ran.
    Terminated {
        cluster: String,
        approved: ApprovedAction,
        result: Result<VmProgress, String>,
    },
}

/// Work for the event loop.
#[derive(Debug, Clone)]
pub enum ProvisionEffect {
    /// List the provider's templates or services.
    ListSources { cluster: String, provider: String },
    /// Make the plan with the headless command's planner.
    Plan {
        cluster: String,
        asked: u64,
        config: Box<Config>,
        request: crate::provision::PlanRequest,
    },
    /// Run an approved plan; the runner re-checks its guards with `acks`.
    Start {
        cluster: String,
        approved: ApprovedAction,
        plan: Box<ProvisionPlan>,
        acks: Vec<String>,
    },
    /// Terminate an approved VM.
    Terminate {
        cluster: String,
        approved: ApprovedAction,
    },
}
