//! Client-side health checks (talosctl's `health --server=false`) for a role that may not call
//! `ClusterService/HealthCheck`: upstream's checks that the cluster status model can answer,
//! evaluated on it as a pure function, as the progress items the server's stream yields.
//!
//! Which of upstream's `DefaultClusterChecks` (siderolabs/talos v1.11.3
//! pkg/cluster/check/default.go) are here, and which are omitted and why. The role this path
//! exists for, `os:etcd:backup`, may call only the etcd reads and EtcdSnapshot
//! (internal/app/machined/pkg/system/services/machined.go): Version, ServiceInfo and the COSI
//! reads are refused, so the model has etcd and (from the kubeconfig) Kubernetes, and nothing
//! of a node's services. A check the model cannot answer is OMITTED rather than shown
//! failing: failing it would make every client-side run unhealthy whatever the cluster's state.
//! - here: `etcd to be healthy` (etcd.go/service.go; from each member's EtcdStatus, not the
//!   etcd service's health), `etcd members to be control plane nodes` (etcd.go; by hostname,
//!   the model has no peer URLs), `all k8s nodes to report` (kubernetes.go; each node the
//!   model lists has a Kubernetes node), `all control plane components to be ready`
//!   (kubernetes.go; from the control-plane static pods' readiness the model reads),
//!   `all k8s nodes to report ready`, `all k8s nodes to report schedulable` (kubernetes.go).
//!   The Kubernetes checks need a paired kube context; without one they fail saying so.
//! - omitted: `etcd members to be consistent across nodes` (the model keeps one node's member
//!   list, so there is nothing to compare), `apid to be ready`, `all nodes memory sizes`,
//!   `all nodes disk sizes`, `no diagnostics`, `kubelet to be healthy`, `all nodes to finish
//!   boot sequence`, `all control plane static pods to be running` (Version, Memory, COSI and
//!   ServiceInfo, which the role may not call), `kube-proxy to report ready` and
//!   `coredns to report ready` (the model has kube-proxy's version only, and no CoreDNS).
use super::status::{ClusterStatus, NodeRole, NodeStatus};
use crate::talos::{CheckState, HealthProgress};

/// A check: `Ok`, or why it fails, nodes named by address.
type Check = fn(&ClusterStatus) -> Result<(), String>;

/// The checks, in upstream's order.
const CHECKS: [(&str, Check); 6] = [
    ("etcd to be healthy", etcd_healthy),
    (
        "etcd members to be control plane nodes",
        etcd_on_control_planes,
    ),
    ("all k8s nodes to report", k8s_nodes_report),
    ("all control plane components to be ready", components_ready),
    ("all k8s nodes to report ready", k8s_nodes_ready),
    ("all k8s nodes to report schedulable", k8s_nodes_schedulable),
];

/// The nodes the checks look at, then one `Check` per check the model answers, in upstream's
/// order, each passing or failing with nodes named (addresses, which the checklist names).
pub fn client_side_checks(status: &ClusterStatus) -> Vec<HealthProgress> {
    let nodes = status.nodes.iter().map(|n| n.address.clone()).collect();
    let mut out = vec![HealthProgress::Discovered(nodes)];
    out.extend(
        CHECKS
            .into_iter()
            .map(|(name, check)| HealthProgress::Check {
                name: name.to_string(),
                state: match check(status) {
                    Ok(()) => CheckState::Passed,
                    Err(why) => CheckState::Failing(why),
                },
            }),
    );
    out
}

fn control_planes(status: &ClusterStatus) -> impl Iterator<Item = &NodeStatus> {
    status
        .nodes
        .iter()
        .filter(|n| n.role == NodeRole::Controlplane)
}

/// `failures` joined, or `Ok` when there are none.
fn none_of(failures: Vec<String>) -> Result<(), String> {
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// The address of the node named `hostname` (or the hostname when no node has it).
fn address_of(status: &ClusterStatus, hostname: &str) -> String {
    status
        .node(hostname)
        .map_or_else(|| hostname.to_string(), |n| n.address.clone())
}

/// Every member answers with no errors and no alarm; every control plane has a member.
fn etcd_healthy(status: &ClusterStatus) -> Result<(), String> {
    let members = &status.etcd.members;
    if members.is_empty() {
        return Err("no etcd member answered".into());
    }
    let mut failures: Vec<String> = members
        .iter()
        .filter(|m| !m.healthy)
        .map(|m| {
            let why = if m.errors.is_empty() {
                "does not answer".to_string()
            } else {
                m.errors.join(", ")
            };
            format!(
                "{}: etcd is not healthy: {why}",
                address_of(status, &m.hostname)
            )
        })
        .collect();
    failures.extend(
        control_planes(status)
            .filter(|n| !members.iter().any(|m| m.hostname == n.name))
            .map(|n| format!("{}: no etcd member", n.address)),
    );
    none_of(failures)
}

/// Every etcd member is a control plane node of the model (by hostname).
fn etcd_on_control_planes(status: &ClusterStatus) -> Result<(), String> {
    let strays: Vec<&str> = status
        .etcd
        .members
        .iter()
        .filter(|m| !control_planes(status).any(|n| n.name == m.hostname))
        .map(|m| m.hostname.as_str())
        .collect();
    if strays.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "etcd members {strays:?} are not control plane nodes"
        ))
    }
}

/// The Kubernetes report, or why there is none to check.
fn kubernetes(status: &ClusterStatus) -> Result<(), String> {
    match &status.kubernetes {
        None => Err("no kube context is paired with this cluster".into()),
        Some(k) => match &k.error {
            Some(e) => Err(format!("Kubernetes API: {e}")),
            None => Ok(()),
        },
    }
}

/// Every node of the model has a Kubernetes node.
fn k8s_nodes_report(status: &ClusterStatus) -> Result<(), String> {
    kubernetes(status)?;
    none_of(
        status
            .nodes
            .iter()
            .filter(|n| n.k8s_ready.is_none())
            .map(|n| format!("can't find expected node {}", n.address))
            .collect(),
    )
}

/// kube-apiserver, kube-controller-manager and kube-scheduler ready on every control plane.
fn components_ready(status: &ClusterStatus) -> Result<(), String> {
    kubernetes(status)?;
    let components = status
        .kubernetes
        .as_ref()
        .map_or(&[][..], |k| &k.components[..]);
    let mut failures = Vec::new();
    for node in control_planes(status) {
        for name in [
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
        ] {
            let found = components
                .iter()
                .find(|c| c.name == name && (c.node == node.name || c.node == node.address));
            match found {
                None => failures.push(format!("{}: {name} is missing", node.address)),
                Some(c) if !c.ready => {
                    failures.push(format!("{}: {name} is not ready", node.address))
                }
                Some(_) => {}
            }
        }
    }
    none_of(failures)
}

/// Every Kubernetes node is Ready.
fn k8s_nodes_ready(status: &ClusterStatus) -> Result<(), String> {
    kubernetes(status)?;
    named_nodes(
        status,
        |n| n.k8s_ready == Some(false),
        "some nodes are not ready",
    )
}

/// No Kubernetes node is cordoned.
fn k8s_nodes_schedulable(status: &ClusterStatus) -> Result<(), String> {
    kubernetes(status)?;
    named_nodes(
        status,
        |n| n.cordoned == Some(true),
        "some nodes are not schedulable",
    )
}

/// `what: [addresses]` for the nodes `bad` picks, upstream's wording.
fn named_nodes(
    status: &ClusterStatus,
    bad: impl Fn(&NodeStatus) -> bool,
    what: &str,
) -> Result<(), String> {
    let picked: Vec<&str> = status
        .nodes
        .iter()
        .filter(|n| bad(n))
        .map(|n| n.address.as_str())
        .collect();
    if picked.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: [{}]", picked.join(" ")))
    }
}

#[cfg(test)]
#[path = "client_checks_tests.rs"]
mod tests;
