//! The object a scale of a cluster's tree is for, picked from one row of it: the row's
//! MachineDeployment, else the TalosControlPlane (saying so when another row was picked). The
//! console's `s` on `:capi` asks it for the replica count and makes its [`ScaleRequest`].
use super::prepare::ScaleRequest;
use crate::capi::{ClusterTree, MachineRole};
use crate::kube::ScaledKind;

/// The object a scale is for: one object of the cluster's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleTarget {
    pub cluster: String,
    pub role: MachineRole,
    /// The MachineDeployment, for workers.
    pub deployment: Option<String>,
    /// "TalosControlPlane default/w-cp", as the plan names it.
    pub object: String,
    /// `spec.replicas` as the tree shows it.
    pub replicas: u32,
    /// Why this object when the row picked is not it ("the selected row is a Machine").
    pub note: Option<String>,
}

impl ScaleTarget {
    pub fn request(&self, replicas: u32) -> ScaleRequest {
        ScaleRequest {
            role: self.role,
            deployment: self.deployment.clone(),
            replicas,
        }
    }
}

/// Whether `tree` has anything to scale: a TalosControlPlane or a MachineDeployment.
pub fn scalable(tree: &ClusterTree) -> bool {
    tree.control_plane.is_some() || !tree.machine_deployments.is_empty()
}

/// What scaling discovered cluster `cluster` from its tree's row `selected` (`Machine/…`,
/// `MachineDeployment/…`) scales: that MachineDeployment, else the TalosControlPlane.
pub fn scale_target(
    cluster: &str,
    tree: &ClusterTree,
    selected: &str,
) -> Result<ScaleTarget, String> {
    let object =
        |kind: ScaledKind, name: &str| format!("{} {}/{name}", kind.as_str(), tree.namespace);
    if let Some(name) = selected.strip_prefix("MachineDeployment/")
        && let Some(md) = tree.machine_deployments.iter().find(|d| d.name == name)
    {
        return Ok(ScaleTarget {
            cluster: cluster.to_string(),
            role: MachineRole::Worker,
            deployment: Some(md.name.clone()),
            object: object(ScaledKind::MachineDeployment, &md.name),
            replicas: md.counts.replicas,
            note: None,
        });
    }
    let cp = tree.control_plane.as_ref().ok_or_else(|| {
        format!(
            "{}/{} has no TalosControlPlane: select a MachineDeployment to scale its workers",
            tree.namespace, tree.cluster
        )
    })?;
    let note = (!selected.starts_with("TalosControlPlane/")).then(|| {
        let kind = selected.split('/').next().unwrap_or("no");
        format!(
            "the selected row is a {kind}, not a MachineDeployment: the control plane is scaled"
        )
    });
    Ok(ScaleTarget {
        cluster: cluster.to_string(),
        role: MachineRole::Controlplane,
        deployment: None,
        object: object(ScaledKind::TalosControlPlane, &cp.name),
        replicas: cp.counts.replicas,
        note,
    })
}
