//! The guard that refuses an in-place upgrade of a cluster Cluster API owns, naming the CAPI
//! way instead; fed by the pairing of the management clusters' workload clusters with the
//! discovered clusters (`capi::pair_workloads`).
use super::CapiOwner;
use crate::guards::{Guard, GuardId};

/// Which in-place upgrade is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InPlaceUpgrade {
    TalosOs,
    Kubernetes,
}

/// `None` when no management cluster owns the cluster; else a failing guard that names the
/// owner and the CAPI way to upgrade.
pub fn capi_owned(owner: Option<&CapiOwner>, kind: InPlaceUpgrade) -> Option<Guard> {
    let owner = owner?;
    // What an in-place upgrade really leaves behind: the providers compare no Talos version
    // and only Machine.spec.version with TalosControlPlane.spec.version
    // (cluster-api-control-plane-provider-talos controllers/controlplane.go
    // `MachinesNeedingRollout`), so nothing undoes it at once; the next Machines they create
    // come from the old spec.
    let drift = match kind {
        InPlaceUpgrade::Kubernetes => {
            "an in-place upgrade leaves TalosControlPlane.spec.version and every Machine's spec.version at the old version, so each Machine the providers create next (a scale-up, a remediation, the next rollout) comes up at the old Kubernetes version beside the upgraded nodes"
        }
        InPlaceUpgrade::TalosOs => {
            "an in-place upgrade leaves the Machines running an image their infrastructure templates do not name; the providers compare no Talos version, so nothing undoes it at once, but each Machine they create next (a scale-up, a remediation, the next rollout) boots the old image the template names"
        }
    };
    let way = match kind {
        InPlaceUpgrade::Kubernetes => format!(
            "upgrade Kubernetes through it: TalosControlPlane.spec.version, then each MachineDeployment's spec.template.spec.version, in namespace {} of {}",
            owner.namespace, owner.management
        ),
        InPlaceUpgrade::TalosOs => format!(
            "upgrade Talos through it: a copy of the infrastructure machine template with the new image, pointed to from TalosControlPlane.spec.infrastructureTemplate and each MachineDeployment's spec.template.spec.infrastructureRef, in namespace {} of {}",
            owner.namespace, owner.management
        ),
    };
    Some(Guard::fail(
        GuardId::CapiOwned,
        format!("this cluster is owned by Cluster API ({owner}); {drift}. Instead, {way}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::Verdict;

    #[test]
    fn an_owned_cluster_is_refused_with_the_capi_way_named() {
        assert_eq!(capi_owned(None, InPlaceUpgrade::Kubernetes), None);
        let owner = CapiOwner {
            management: "mgmt".into(),
            namespace: "clusters".into(),
            name: "workload".into(),
        };
        let k8s = capi_owned(Some(&owner), InPlaceUpgrade::Kubernetes).unwrap();
        assert_eq!(k8s.verdict, Verdict::Fail);
        assert!(
            k8s.reason
                .contains("owned by Cluster API (mgmt/clusters/workload)"),
            "{}",
            k8s.reason
        );
        assert!(k8s.reason.contains("TalosControlPlane.spec.version"));
        let os = capi_owned(Some(&owner), InPlaceUpgrade::TalosOs).unwrap();
        assert!(os.reason.contains("infrastructure machine template"));
        assert!(os.reason.contains("boots the old image"), "{}", os.reason);
        assert!(
            k8s.reason.contains("at the old Kubernetes version"),
            "{}",
            k8s.reason
        );
        assert!(os.blocks(std::slice::from_ref(&os.reason)));
    }
}
