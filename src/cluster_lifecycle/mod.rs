//! Whole clusters created and deleted: the create plan (VMs per role from the provider, config
//! delivery, endpoint, versions) and its guards, the runner that goes from VMs to written
//! contexts through a journal that makes it resumable, and the delete plan (read one way for the
//! command line and the console), guards and runner.
pub mod create_setup;
pub mod delete;
pub mod delete_setup;
pub mod fingerprints;
pub mod guards;
pub mod journal;
pub mod materials;
pub mod plan;
pub mod planner;
pub mod progress;
pub mod provider_steps;
pub mod runner;
pub mod steps;

pub use create_setup::{
    PlannedCreate, SetupError, UnfinishedCreate, context_names, create_runner,
    offered_talos_releases, plan_with_guards, provider_named, unfinished_creates,
};
pub use delete::{
    DELETE_BOUNDS, DeleteInputs, DeleteSteps, ProviderDelete, plan_delete, remove_bundle,
};
pub use delete_setup::{DeleteSources, PreparedDelete, delete_provider, prepare_delete};
pub use fingerprints::{
    FINGERPRINT_SHOWN_AT, PIN_FINGERPRINTS_ACK, given_fingerprints, headless_fingerprints,
};
pub use guards::{CreateFacts, DESTROYS_ACK, create_guards, delete_guards};
pub use journal::{CreateJournal, CreateJournalError, CreateRecord, CreatedVm};
pub use materials::Materials;
pub use plan::{
    CreatePlan, DeletePlan, Delivery, EndpointChoice, KnownVm, PatchFiles, PlannedVm, TemplateRef,
    VmSource, VmsKnownBy,
};
pub use planner::{CreateRequest, MAX_CONTROLPLANES, MAX_WORKERS, PlanError, plan_create};
pub use progress::{CreatePhase, LifecycleEvent, PhaseState, RunSummary};
pub use provider_steps::ProviderSteps;
pub use runner::{CreateOptions, CreateRunner, FingerprintPolicy, FingerprintQuestion};
pub use steps::{
    BootView, BootstrapAnswer, ContextsMerged, CreateSteps, EtcdForming, NewVms, NodesReady, VmBoot,
};
