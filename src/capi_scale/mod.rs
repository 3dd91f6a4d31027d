//! Scaling a Cluster API workload cluster the CAPI way: `spec.replicas` of its
//! TalosControlPlane or a MachineDeployment on the management cluster, planned and guarded
//! (etcd quorum, odd control planes, no rollout in progress), then followed Machine by Machine.
pub mod follow;
pub mod guards;
pub mod live;
pub mod plan;
pub mod prepare;
pub mod run;
pub mod target;

pub use follow::{MachineChange, ScaleState, machine_changes, scale_state};
pub use guards::{ScaleFacts, follow_guards, scale_guards};
pub use live::{ScaleSources, ScaleView, talos_access};
pub use plan::{ScalePlan, ScalePlanError, plan_scale};
pub use prepare::{PrepareError, PreparedScale, ScaleRequest, prepare_scale};
pub use run::{ScaleEvent, ScaleOptions, ScaleOutcome};
pub use target::{ScaleTarget, scalable, scale_target};
