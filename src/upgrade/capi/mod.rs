//! The upgrade of a cluster Cluster API owns, the CAPI way: Kubernetes by the
//! TalosControlPlane's and then each MachineDeployment's version, Talos by a copied machine
//! template naming the target's VM template; the providers replace the Machines, this follows.
pub mod guards;
pub mod kind;
pub mod phase;
pub mod plan;
pub mod read;

pub use guards::{
    CapiGuardInput, VmTemplates, capi_phase_guards, capi_plan_guards, capi_read_guards,
};
pub use kind::{
    CapiProductKind, CapiWay, KubernetesVersion, TalosMachineTemplate, capi_action,
    capi_run_options, product_name,
};
pub use plan::{
    CapiPhase, CapiPlanError, CapiProduct, CapiUpgradePlan, PhaseObject, PlanFacts, TemplateCopy,
    capi_plan, versioned_name,
};
pub use read::{CapiAccess, secret_observer};
