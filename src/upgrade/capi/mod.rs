//! The upgrade of a cluster Cluster API owns, the CAPI way: Kubernetes by the
//! TalosControlPlane's and then each MachineDeployment's version, Talos by a copied machine
//! template naming the target's VM template; the providers replace the Machines, and
//! `operation::capi_upgrade` patches and follows them, one phase a step.
pub mod guards;
pub mod phase;
pub mod plan;
pub mod read;

pub use guards::{
    CapiGuardInput, VmTemplates, capi_phase_guards, capi_plan_guards, capi_read_guards,
    phase_wait_can_finish,
};
pub use plan::{
    CapiPhase, CapiPlanError, CapiProduct, CapiUpgradePlan, PhaseObject, PlanFacts, TemplateCopy,
    capi_action, capi_plan, product_name, versioned_name,
};
pub use read::{
    CapiAccess, CapiPlanAsk, CapiPlanReading, CapiReadError, read_capi_plan, secret_observer,
};
