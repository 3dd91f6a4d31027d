//! A Cluster API scale made ready to confirm: both sides read through [`ScaleSources`], the
//! plan made and every guard evaluated over what was read. `taloscope scale` and the
//! console's `s` on `:capi` both call [`prepare_scale`], so they show the same plan and guards.
use crate::capi::MachineRole;
use crate::guards::Guard;

use super::guards::{ScaleFacts, scale_guards};
use super::live::{ScaleSources, ScaleView};
use super::plan::{ScalePlan, ScalePlanError, plan_scale};

/// What the operator asks: the role's object (the named MachineDeployment for workers, when
/// the cluster has several) to `replicas`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleRequest {
    pub role: MachineRole,
    pub deployment: Option<String>,
    pub replicas: u32,
}

/// The plan, its guards, and what they were evaluated over.
#[derive(Debug, Clone)]
pub struct PreparedScale {
    pub plan: ScalePlan,
    pub guards: Vec<Guard>,
    pub view: ScaleView,
}

/// Why no plan was made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// The management cluster could not be read.
    #[error("{0}")]
    Unread(String),
    /// The request names nothing the cluster has.
    #[error(transparent)]
    Plan(#[from] ScalePlanError),
}

/// Reads both sides, plans `request` over them and evaluates every guard for holder `me`.
pub async fn prepare_scale(
    sources: &ScaleSources,
    request: &ScaleRequest,
    me: &str,
) -> Result<PreparedScale, PrepareError> {
    let view = sources.read().await.map_err(PrepareError::Unread)?;
    let plan = plan_scale(
        &sources.cluster.name,
        &sources.owner,
        &view.tree,
        (request.role, request.deployment.as_deref()),
        request.replicas,
    )?;
    let guards = scale_guards(&ScaleFacts {
        plan: &plan,
        tree: &view.tree,
        status: &view.status,
        me,
    });
    Ok(PreparedScale { plan, guards, view })
}
