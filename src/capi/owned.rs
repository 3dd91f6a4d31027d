//! The guard that refuses a change made behind Cluster API's back (an in-place upgrade, new
//! VMs provisioned beside its Machines), naming the CAPI way instead; and the one lookup of a
//! cluster's owner among the kube contexts that the commands and the console's runners read.
use kube::config::Kubeconfig;

use super::CapiOwner;
use crate::discovery::Cluster;
use crate::guards::{Guard, GuardId};

/// The Cluster object that owns `cluster` among the management clusters of the kube contexts
/// (`None`: no kubeconfig, or no management cluster read owns it). What the console's fleet
/// model holds in its `CapiView`, read now for a command or a run.
pub async fn read_owner(
    kubeconfig: Option<&Kubeconfig>,
    clusters: &[Cluster],
    cluster: &str,
) -> Option<CapiOwner> {
    let view = super::read_view(kubeconfig?, clusters).await;
    view.owner(cluster).cloned()
}

/// The provision guard row, shown whether or not a management cluster owns the cluster: a
/// VM added beside Cluster API's Machines is refused, naming `taloscope scale` instead.
pub fn capi_owned_nodes(owner: Option<&CapiOwner>, cluster: &str) -> Guard {
    let Some(owner) = owner else {
        return Guard::pass(
            GuardId::CapiOwned,
            "no Cluster API management cluster among the kube contexts owns it",
        );
    };
    // A MachineSet counts only the Machines it owns (cluster-api
    // internal/controllers/machineset/machineset_controller.go `syncReplicas`) and the
    // control-plane provider only its own Machines (cluster-api-control-plane-provider-talos
    // controllers/scale.go): a VM joined by hand is no Machine, so no
    // provider counts, upgrades or replaces it and a scale-down never removes it.
    Guard::fail(
        GuardId::CapiOwned,
        format!(
            "this cluster is owned by Cluster API ({owner}); a node provisioned beside its Machines is no Machine: the providers neither count, upgrade nor replace it. Instead, add nodes the CAPI way: taloscope scale --context {cluster} --role worker|controlplane --replicas N (or `s` on :capi)"
        ),
    )
}

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

    #[test]
    fn the_provision_row_is_shown_always_and_fails_only_for_an_owned_cluster() {
        let free = capi_owned_nodes(None, "lab");
        assert_eq!((free.id, free.verdict), (GuardId::CapiOwned, Verdict::Pass));
        let owner = CapiOwner {
            management: "mgmt".into(),
            namespace: "default".into(),
            name: "capi-work".into(),
        };
        let owned = capi_owned_nodes(Some(&owner), "capi-work");
        assert_eq!(owned.verdict, Verdict::Fail);
        assert!(
            owned.reason.contains("(mgmt/default/capi-work)")
                && owned.reason.contains("taloscope scale --context capi-work"),
            "{}",
            owned.reason
        );
    }
}
