//! The Kubernetes half of a cluster's status: asks the kube API (server
//! version, nodes, control-plane static pods, kube-proxy, the rollout Lease)
//! and folds the answers into the Talos-side node rows, matched by address,
//! then hostname.
use kube::config::Kubeconfig;

use crate::discovery::Cluster;
use crate::kube::{KubeClient, KubeError, KubeNode, match_talos_node};
use crate::rollout::RolloutLeaseInfo;

use super::status::{ClusterStatus, ComponentReport, KubernetesReport, NodeStatus, RolloutStatus};

/// Everything the Kubernetes API told, or why it could not.
#[derive(Debug, Clone, Default)]
pub struct KubernetesFacts {
    pub report: KubernetesReport,
    pub nodes: Vec<KubeNode>,
    /// The rollout some console holds the lease for, unless it expired.
    pub rollout: Option<RolloutStatus>,
    /// Why the lease could not be read, when it could not.
    pub rollout_unread: Option<String>,
}

impl KubernetesFacts {
    /// Whether `nodes` is the API's node list: it lists some, or nothing failed
    /// (an empty list beside an error may be the failed call's).
    pub fn nodes_listed(&self) -> bool {
        !self.nodes.is_empty() || self.report.error.is_none()
    }
}

/// The rollout a lease shows, or `None` when its holder stopped renewing it.
pub fn rollout_in_progress(info: RolloutLeaseInfo) -> Option<RolloutStatus> {
    (!info.expired).then_some(info.rollout)
}

/// The kube client for a cluster's paired kube context, if it has one. May
/// run an exec plugin: call from an IO task.
pub async fn kube_client_for(
    cluster: &Cluster,
    kubeconfig: Option<&Kubeconfig>,
) -> Option<Result<KubeClient, KubeError>> {
    let kube = cluster.kube.as_ref()?;
    let Some(kubeconfig) = kubeconfig else {
        return Some(Err(KubeError::Config {
            context: kube.name.clone(),
            message: "no kubeconfig was loaded".into(),
        }));
    };
    Some(KubeClient::new(kubeconfig, &kube.name, Default::default()).await)
}

/// The report for a kube context whose client could not even be built.
pub fn unusable_kube_context(err: &KubeError) -> KubernetesFacts {
    KubernetesFacts {
        report: KubernetesReport {
            error: Some(err.to_string()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Asks the API server. Calls run concurrently; the report carries the first
/// error when the server could not be reached, and whatever did answer. The
/// rollout Lease is read too; reading it may be forbidden to a viewer (the
/// built-in `view` role has no leases), which is not a cluster problem.
pub async fn collect_kubernetes(client: &KubeClient) -> KubernetesFacts {
    let (version, nodes, components, proxy, lease) = tokio::join!(
        client.server_version(),
        client.nodes(),
        client.control_plane_components(),
        client.kube_proxy_version(),
        client.read_rollout_lease(),
    );
    let (rollout, rollout_unread) = match lease {
        Ok(lease) => (lease.and_then(rollout_in_progress), None),
        Err(e) => {
            tracing::debug!(context = %client.context(), "rollout lease not read: {e}");
            (None, Some(e.to_string()))
        }
    };
    let error = [
        version.as_ref().err(),
        nodes.as_ref().err(),
        components.as_ref().err(),
        proxy.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    .next()
    .map(|e| e.to_string());
    KubernetesFacts {
        report: KubernetesReport {
            server_version: version.ok(),
            components: components
                .unwrap_or_default()
                .into_iter()
                .map(|c| ComponentReport {
                    node: c.node,
                    name: c.name,
                    version: c.version,
                    ready: c.ready,
                })
                .collect(),
            kube_proxy_version: proxy.ok().flatten(),
            error,
        },
        nodes: nodes.unwrap_or_default(),
        rollout,
        rollout_unread,
    }
}

/// Puts the Kubernetes facts into `status`: the report, and per node the
/// kubelet version, Ready and cordon. A node Kubernetes does not know keeps
/// `null`s.
pub fn apply_kubernetes(status: &mut ClusterStatus, facts: KubernetesFacts) {
    for node in &mut status.nodes {
        apply_kube_node(node, &facts.nodes);
    }
    status.rollout = facts.rollout;
    status.rollout_unread = facts.rollout_unread;
    status.kubernetes = Some(facts.report);
}

/// One node's kubelet version, Ready and cordon from the Kubernetes node that
/// is it (matched by address, then hostname); `null`s when there is none.
pub fn apply_kube_node(node: &mut NodeStatus, kube_nodes: &[KubeNode]) {
    let matched = match_talos_node(&node.address, &node.name, kube_nodes);
    node.kubelet_version = matched.map(|k| k.kubelet_version.clone());
    node.k8s_ready = matched.map(|k| k.ready);
    node.cordoned = matched.map(|k| k.unschedulable);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kube_node(name: &str, ip: &str, ready: bool) -> KubeNode {
        KubeNode {
            name: name.into(),
            roles: vec![],
            ready,
            conditions: vec![],
            kubelet_version: "v1.34.1".into(),
            internal_ips: vec![ip.into()],
            hostname: Some(name.into()),
            taints: vec![],
            unschedulable: name == "w-1",
            cordoned_by: None,
        }
    }

    #[test]
    fn folds_kube_nodes_into_talos_rows() {
        let mut status = ClusterStatus {
            nodes: vec![
                NodeStatus {
                    name: "cp-1".into(),
                    address: "127.10.0.1".into(),
                    ..Default::default()
                },
                NodeStatus {
                    name: "w-1".into(),
                    address: "127.10.0.4".into(),
                    ..Default::default()
                },
                NodeStatus {
                    name: "127.10.0.9".into(),
                    address: "127.10.0.9".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let facts = KubernetesFacts {
            report: KubernetesReport {
                server_version: Some("v1.34.1".into()),
                ..Default::default()
            },
            nodes: vec![
                kube_node("cp-1", "127.10.0.1", true),
                kube_node("w-1", "127.10.0.4", false),
            ],
            ..Default::default()
        };
        apply_kubernetes(&mut status, facts);
        assert_eq!(status.nodes[0].k8s_ready, Some(true));
        assert_eq!(status.nodes[0].cordoned, Some(false));
        assert_eq!(status.nodes[1].k8s_ready, Some(false));
        assert_eq!(status.nodes[1].cordoned, Some(true));
        assert_eq!(status.nodes[1].kubelet_version.as_deref(), Some("v1.34.1"));
        assert_eq!(status.nodes[2].kubelet_version, None);
        assert_eq!(
            status
                .kubernetes
                .as_ref()
                .and_then(|k| k.server_version.as_deref()),
            Some("v1.34.1")
        );
    }

    fn lease(expired: bool) -> RolloutLeaseInfo {
        RolloutLeaseInfo {
            rollout: RolloutStatus {
                holder: "bob@jump2".into(),
                kind: None,
                target: Some("v1.12.0".into()),
                node_index: 2,
                node_count: 5,
                current_node: Some("cp-2".into()),
                phase: Some("rebooting".into()),
            },
            expired,
        }
    }

    #[test]
    fn an_expired_lease_is_no_rollout() {
        assert_eq!(rollout_in_progress(lease(true)), None);
        let live = rollout_in_progress(lease(false)).expect("a live lease");
        assert_eq!(live.holder, "bob@jump2");
        assert_eq!((live.node_index, live.node_count), (2, 5));
        assert_eq!(live.current_node.as_deref(), Some("cp-2"));
        let mut status = ClusterStatus::default();
        apply_kubernetes(
            &mut status,
            KubernetesFacts {
                rollout: Some(live.clone()),
                ..Default::default()
            },
        );
        assert_eq!(status.rollout, Some(live));
        apply_kubernetes(&mut status, KubernetesFacts::default());
        assert_eq!(status.rollout, None, "a released lease clears the rollout");
    }
}
