//! What a Cluster API scale changes: the workload cluster's TalosControlPlane or one of its
//! MachineDeployments, its `spec.replicas` from → to, and how many Machines the provider
//! creates or deletes. Pure: built from the cluster's tree as its management cluster shows it.
use serde::Serialize;

use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, ClusterTree, Counts, MachineNode, MachineRole};
use crate::kube::ScaledKind;

/// One scale of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalePlan {
    /// The discovered cluster (its contexts): the name the operator types to confirm.
    pub cluster: String,
    /// The Cluster object that owns it, on its management cluster.
    pub owner: CapiOwner,
    pub role: MachineRole,
    pub kind: ScaledKind,
    pub namespace: String,
    pub name: String,
    /// `spec.replicas` now.
    pub from: u32,
    pub to: u32,
    /// The object's Machines now, in name order.
    pub machines: Vec<String>,
    /// Machines the provider creates (scale up) or deletes (scale down).
    pub create: u32,
    pub delete: u32,
}

impl ScalePlan {
    /// "TalosControlPlane default/w-cp".
    pub fn object(&self) -> String {
        format!("{} {}/{}", self.kind.as_str(), self.namespace, self.name)
    }

    /// What the dispatcher approves.
    pub fn action(&self) -> MutatingAction {
        MutatingAction::ScaleCapi {
            cluster: self.cluster.clone(),
            object: self.object(),
            from: self.from,
            to: self.to,
        }
    }

    /// Whether `approved` is this plan's action.
    pub fn is_approved_by(&self, approved: &MutatingAction) -> bool {
        approved == &self.action()
    }

    /// The object's Machines in `tree`: the control plane's, or those of the deployment's
    /// MachineSets.
    pub fn machines_of<'a>(&self, tree: &'a ClusterTree) -> Vec<&'a MachineNode> {
        let sets: Vec<&str> = tree
            .machine_deployments
            .iter()
            .filter(|d| d.name == self.name)
            .flat_map(|d| d.machine_sets.iter().map(|s| s.name.as_str()))
            .collect();
        tree.machines
            .iter()
            .filter(|m| match self.kind {
                ScaledKind::TalosControlPlane => {
                    m.role == MachineRole::Controlplane && m.owner == self.name
                }
                ScaledKind::MachineDeployment => sets.contains(&m.owner.as_str()),
            })
            .collect()
    }

    /// The object's counts in `tree`; `None` when it is gone.
    pub fn counts_in(&self, tree: &ClusterTree) -> Option<Counts> {
        match self.kind {
            ScaledKind::TalosControlPlane => tree
                .control_plane
                .as_ref()
                .filter(|c| c.name == self.name)
                .map(|c| c.counts),
            ScaledKind::MachineDeployment => tree
                .machine_deployments
                .iter()
                .find(|d| d.name == self.name)
                .map(|d| d.counts),
        }
    }

    /// The plan as the table `--plan` prints above its guards.
    pub fn table(&self) -> String {
        let change = match (self.create, self.delete) {
            (0, 0) => "no Machine created or deleted".to_string(),
            // cluster-api-control-plane-provider-talos controllers/scale.go
            // `scaleUpControlPlane` creates a Machine on every pass, waiting for no node or
            // etcd member (maxSurge caps rollouts only); a MachineSet creates all it lacks at
            // once (cluster-api machineset_controller.go `syncReplicas`).
            (n, 0) => match self.kind {
                ScaledKind::TalosControlPlane => format!(
                    "{n} Machine(s) created by the provider, one per reconcile without waiting for the last one's node or etcd member, so they may join etcd close together; followed until every node is Ready"
                ),
                ScaledKind::MachineDeployment => format!(
                    "{n} Machine(s) created at once by the MachineSet; followed until every node is Ready"
                ),
            },
            (_, n) => match self.kind {
                ScaledKind::TalosControlPlane => format!(
                    "{n} Machine(s) deleted, the oldest first; the provider removes each one's etcd member before deleting it"
                ),
                ScaledKind::MachineDeployment => {
                    format!("{n} Machine(s) deleted, as the MachineSet's deletePolicy chooses")
                }
            },
        };
        let machines = if self.machines.is_empty() {
            "none".to_string()
        } else {
            self.machines.join(", ")
        };
        format!(
            "SCALE {} (Cluster API {})\n  object:    {}\n  replicas:  {} -> {}\n  machines:  {change}\n  now:       {machines}\n",
            self.cluster,
            self.owner,
            self.object(),
            self.from,
            self.to
        )
    }
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScalePlanError {
    #[error(
        "Cluster {0} has no TalosControlPlane (its controlPlaneRef names another kind or none): taloscope scales Talos control planes only"
    )]
    NoControlPlane(String),
    #[error("Cluster {0} has no MachineDeployment to scale its workers by")]
    NoDeployment(String),
    #[error("Cluster {cluster} has no MachineDeployment {wanted:?} (it has: {known})")]
    UnknownDeployment {
        cluster: String,
        wanted: String,
        known: String,
    },
    #[error(
        "Cluster {cluster} has several MachineDeployments ({known}): name one with --deployment"
    )]
    SeveralDeployments { cluster: String, known: String },
}

/// The scale of `role` in `tree` to `to` replicas; `deployment` names the MachineDeployment
/// when the cluster has several.
pub fn plan_scale(
    cluster: &str,
    owner: &CapiOwner,
    tree: &ClusterTree,
    (role, deployment): (MachineRole, Option<&str>),
    to: u32,
) -> Result<ScalePlan, ScalePlanError> {
    let qualified = format!("{}/{}", tree.namespace, tree.cluster);
    let (kind, name, from) = match role {
        MachineRole::Controlplane => {
            let cp = tree
                .control_plane
                .as_ref()
                .ok_or(ScalePlanError::NoControlPlane(qualified))?;
            (
                ScaledKind::TalosControlPlane,
                cp.name.clone(),
                cp.counts.replicas,
            )
        }
        MachineRole::Worker => {
            let known = || {
                let names: Vec<&str> = tree
                    .machine_deployments
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect();
                names.join(", ")
            };
            let chosen = match (deployment, tree.machine_deployments.as_slice()) {
                (_, []) => return Err(ScalePlanError::NoDeployment(qualified)),
                (Some(wanted), all) => all.iter().find(|d| d.name == wanted).ok_or_else(|| {
                    ScalePlanError::UnknownDeployment {
                        cluster: qualified.clone(),
                        wanted: wanted.to_string(),
                        known: known(),
                    }
                })?,
                (None, [one]) => one,
                (None, _) => {
                    return Err(ScalePlanError::SeveralDeployments {
                        cluster: qualified,
                        known: known(),
                    });
                }
            };
            (
                ScaledKind::MachineDeployment,
                chosen.name.clone(),
                chosen.counts.replicas,
            )
        }
    };
    let mut plan = ScalePlan {
        cluster: cluster.to_string(),
        owner: owner.clone(),
        role,
        kind,
        namespace: tree.namespace.clone(),
        name,
        from,
        to,
        machines: Vec::new(),
        create: to.saturating_sub(from),
        delete: from.saturating_sub(to),
    };
    plan.machines = plan
        .machines_of(tree)
        .iter()
        .map(|m| m.name.clone())
        .collect();
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::tree_tests::fixture_tree;
    use crate::kube::CapiVersion;

    fn owner() -> CapiOwner {
        CapiOwner {
            management: "mgmt".into(),
            namespace: "clusters".into(),
            name: "workload".into(),
        }
    }

    #[test]
    fn control_planes_scale_the_talos_control_plane() {
        let tree = fixture_tree(CapiVersion::V1beta2);
        let plan = plan_scale(
            "workload",
            &owner(),
            &tree,
            (MachineRole::Controlplane, None),
            5,
        )
        .unwrap();
        assert_eq!(plan.kind, ScaledKind::TalosControlPlane);
        assert_eq!((plan.from, plan.to, plan.create, plan.delete), (3, 5, 2, 0));
        assert_eq!(plan.machines.len(), 3, "{:?}", plan.machines);
        assert_eq!(
            plan.action().describe(),
            format!("scale {} from 3 to 5 replicas (Cluster API)", plan.object())
        );
        assert!(
            plan.table().contains("replicas:  3 -> 5"),
            "{}",
            plan.table()
        );
    }

    #[test]
    fn workers_scale_the_one_machine_deployment_or_the_one_named() {
        let tree = fixture_tree(CapiVersion::V1beta2);
        let plan = plan_scale("workload", &owner(), &tree, (MachineRole::Worker, None), 1).unwrap();
        assert_eq!(plan.kind, ScaledKind::MachineDeployment);
        assert_eq!((plan.from, plan.to, plan.delete), (2, 1, 1));
        assert_eq!(plan.machines.len(), 2);
        let wrong = plan_scale(
            "workload",
            &owner(),
            &tree,
            (MachineRole::Worker, Some("md-9")),
            1,
        );
        assert!(
            matches!(wrong, Err(ScalePlanError::UnknownDeployment { .. })),
            "{wrong:?}"
        );
        let mut two = tree.clone();
        let mut other = two.machine_deployments[0].clone();
        other.name = "md-1".into();
        two.machine_deployments.push(other);
        let several = plan_scale("workload", &owner(), &two, (MachineRole::Worker, None), 1);
        assert!(
            matches!(several, Err(ScalePlanError::SeveralDeployments { .. })),
            "{several:?}"
        );
        let mut none = tree;
        none.control_plane = None;
        let no_cp = plan_scale("w", &owner(), &none, (MachineRole::Controlplane, None), 3);
        assert!(matches!(no_cp, Err(ScalePlanError::NoControlPlane(_))));
    }
}
