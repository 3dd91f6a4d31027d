//! The provision wizard (`p` on a cluster, `:provision`): the request's fields (provider,
//! role, template or OneFlow service, count, name pattern) and the plan the headless
//! command's planner makes of it, with its guards behind the plan screens' one gate (a wizard
//! on the one plan screen, `views::wizard`). The request and plan here, the keys and pure
//! update step in `update`, the drawing in `view`;
//! the console lists the sources and makes the plan (`console::run_provision_wizard`), and
//! the approved run goes to the one runner and progress screen (`app::provision`).
use crate::app::screens::ScreenName;
use crate::config::{Config, MachineRole, NameOrId, ProviderKind};
pub use crate::provision::SourceChoice;
use crate::provision::{PlanRequest, ProvisionPlan};
use crate::views::form::ProviderChoice;
use crate::views::plan::PlanScreen;
use crate::views::wizard;

mod update;
mod view;

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "provision";

/// The provider's list, as far as it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceList {
    Loading,
    Failed(String),
    Ready(Vec<SourceChoice>),
}

/// The wizard's fields, top to bottom (their rows and kinds: `update`'s `WizardKind::FIELDS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Provider,
    Role,
    Source,
    Count,
    Names,
}

/// The new nodes of one cluster as the provision wizard asks for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNodes {
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
    /// The machine config's `cluster.controlPlane.endpoint`, read with the plan.
    pub machine_config_endpoint: Option<String>,
}

impl NewNodes {
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

/// The provision wizard: the new nodes asked for and its form.
pub type Wizard = wizard::Wizard<NewNodes>;

/// The provision wizard's screen: the wizard on the one plan screen.
pub type ProvisionScreen = PlanScreen<Wizard>;

/// IO the wizard asks of the console.
#[derive(Debug, Clone)]
pub enum ProvisionTask {
    /// List the provider's templates or services.
    ListSources { cluster: String, provider: String },
    /// Make the plan with the headless command's planner.
    Plan {
        cluster: String,
        asked: u64,
        config: Box<Config>,
        request: PlanRequest,
    },
}

/// What the wizard's IO tasks report.
#[derive(Debug, Clone)]
pub enum ProvisionNews {
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
}

#[cfg(test)]
mod tests;
