//! The create screen (`n` on the fleet): the new cluster's request and the plan the CLI's own
//! planner makes of it with its guards; the approved create runs on the console's one runner
//! and shows on the one progress screen (where `y` / `n` answer the maintenance fingerprints
//! it asks about). The request here (name, provider, counts, versions, endpoint, delivery,
//! patches, as the CLI's flags make it, and the guards the CLI's own planner made with its
//! plan), its keys and pure update step (what the create says of itself as a wizard on the
//! one plan screen, `views::wizard`) in `update`, the drawing in `view` and `plan`; the
//! console reads the journals and plans (`console::run_create`).
use crate::app::screens::ScreenName;
use crate::cluster_lifecycle::{CreatePlan, CreateRequest, Delivery, PatchFiles, UnfinishedCreate};
use crate::guards::Guard;
use crate::views::form::ProviderChoice;
use crate::views::plan::PlanScreen;
use crate::views::wizard::Wizard;

mod plan;
mod update;
mod view;

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "create";

/// The create wizard: the new cluster asked for and its form.
pub type CreateWizard = Wizard<NewCluster>;

/// The create screen: the wizard on the one plan screen.
pub type CreateScreen = PlanScreen<CreateWizard>;

/// The wizard's fields, top to bottom (their rows and kinds: `update`'s `WizardKind::FIELDS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateField {
    Name,
    Provider,
    ControlPlanes,
    Workers,
    Talos,
    Kubernetes,
    Endpoint,
    Delivery,
    Patches,
}

/// The new cluster as the create wizard asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCluster {
    pub name: String,
    /// taloscope's configured providers, by name.
    pub providers: Vec<ProviderChoice>,
    pub provider: usize,
    pub controlplanes: usize,
    pub workers: usize,
    pub talos: String,
    /// The releases Left/Right cycle through, newest first.
    pub talos_offered: Vec<String>,
    /// Empty: the CLI's default (talosctl's default for that Talos release).
    pub kubernetes: String,
    /// Empty: the gateway role's address, else the first control plane's.
    pub endpoint: String,
    pub delivery: Delivery,
    /// Comma-separated files; `cp:FILE` for control planes only, `worker:FILE` for workers.
    pub patches: String,
    /// The guards the CLI's own planner evaluated with the plan.
    pub guards: Vec<Guard>,
    /// The creates killed runs left, as read when the wizard opened.
    pub unfinished: Vec<UnfinishedCreate>,
    /// The unfinished create the fields were taken from (its run resumes from the journal).
    pub resuming: Option<UnfinishedCreate>,
}

impl NewCluster {
    pub fn new(providers: Vec<ProviderChoice>, talos_offered: Vec<String>) -> NewCluster {
        NewCluster {
            name: String::new(),
            providers,
            provider: 0,
            controlplanes: 3,
            workers: 2,
            talos: talos_offered.first().cloned().unwrap_or_default(),
            talos_offered,
            kubernetes: String::new(),
            endpoint: String::new(),
            delivery: Delivery::default(),
            patches: String::new(),
            guards: Vec::new(),
            unfinished: Vec::new(),
            resuming: None,
        }
    }

    pub fn provider(&self) -> Option<&str> {
        self.providers.get(self.provider).map(|p| p.name.as_str())
    }

    /// The request the CLI's flags would make of these fields.
    pub fn request(&self) -> CreateRequest {
        let optional = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_string());
        CreateRequest {
            cluster: self.name.trim().to_string(),
            provider: self.provider().unwrap_or_default().to_string(),
            controlplanes: self.controlplanes,
            workers: self.workers,
            talos: self.talos.trim().to_string(),
            kubernetes: optional(&self.kubernetes),
            endpoint: optional(&self.endpoint),
            delivery: self.delivery,
            patches: patch_files(&self.patches),
            with_secrets: None,
        }
    }

    /// Fills the fields from `request` (an unfinished create's).
    pub fn take_request(&mut self, request: &CreateRequest) {
        self.name = request.cluster.clone();
        let named = |p: &ProviderChoice| p.name == request.provider;
        if let Some(i) = self.providers.iter().position(named) {
            self.provider = i;
        }
        self.controlplanes = request.controlplanes;
        self.workers = request.workers;
        self.talos = request.talos.clone();
        self.kubernetes = request.kubernetes.clone().unwrap_or_default();
        self.endpoint = request.endpoint.clone().unwrap_or_default();
        self.delivery = request.delivery;
        self.patches = patch_text(&request.patches);
    }
}

/// The patch field's text as the CLI's three patch flags.
pub fn patch_files(text: &str) -> PatchFiles {
    let mut files = PatchFiles::default();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        match entry.split_once(':') {
            Some(("cp", path)) => files.controlplane.push(path.trim().into()),
            Some(("worker", path)) => files.worker.push(path.trim().into()),
            _ => files.all.push(entry.into()),
        }
    }
    files
}

/// [`patch_files`] the other way.
pub fn patch_text(files: &PatchFiles) -> String {
    let all = files.all.iter().map(|p| p.display().to_string());
    let cp = files
        .controlplane
        .iter()
        .map(|p| format!("cp:{}", p.display()));
    let worker = files
        .worker
        .iter()
        .map(|p| format!("worker:{}", p.display()));
    all.chain(cp).chain(worker).collect::<Vec<_>>().join(", ")
}

/// IO the screen asks of the console.
#[derive(Debug, Clone)]
pub enum CreateTask {
    /// Read the create journals killed runs left.
    ReadUnfinished,
    /// Plan `request` and evaluate its guards as the CLI does.
    Plan {
        asked: u64,
        request: Box<CreateRequest>,
    },
}

/// What the console's create tasks report.
#[derive(Debug, Clone)]
pub enum CreateNews {
    /// The create journals killed runs left.
    Unfinished {
        found: Vec<UnfinishedCreate>,
        errors: Vec<String>,
    },
    /// The plan and guards asked for as `asked`.
    Planned {
        asked: u64,
        result: Result<(Box<CreatePlan>, Vec<Guard>), String>,
    },
}

#[cfg(test)]
mod tests;
