//! Which discovered cluster each CAPI workload cluster is: its kubeconfig secret's server, or
//! its `spec.controlPlaneEndpoint`, against the kube contexts' servers and the talos
//! contexts' endpoints. Pure.
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::discovery::{Cluster, host_of};

/// The management cluster, namespace and name of the Cluster object that owns a cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CapiOwner {
    /// The management cluster's kube context.
    pub management: String,
    pub namespace: String,
    pub name: String,
}

impl fmt::Display for CapiOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.management, self.namespace, self.name)
    }
}

/// What pairing knows of one workload cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadCluster {
    pub owner: CapiOwner,
    /// `spec.controlPlaneEndpoint` as `host:port` (empty until set).
    pub endpoint: String,
    /// The `server:` of its `<name>-kubeconfig` secret, when there is one.
    pub kubeconfig_server: Option<String>,
}

/// Host and port of a URL or `host:port` (443 when a URL names none).
pub fn host_port(address: &str) -> Option<(String, u16)> {
    let host = host_of(address)?;
    let rest = address
        .trim()
        .split_once("://")
        .map_or(address.trim(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let port = authority
        .rsplit_once(':')
        .filter(|(h, _)| !h.is_empty() && (authority.matches(':').count() == 1 || h.ends_with(']')))
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or(443);
    Some((host, port))
}

/// The discovered cluster (by name) each workload cluster is. A cluster's kube server equal
/// to the kubeconfig secret's server (host and port) pairs first; then one equal to the
/// control-plane endpoint; then a talos context with the endpoint's host among its
/// endpoints, when exactly one has it.
pub fn pair_workloads(
    workloads: &[WorkloadCluster],
    clusters: &[Cluster],
) -> BTreeMap<String, CapiOwner> {
    let mut paired = BTreeMap::new();
    for w in workloads {
        if let Some(name) = paired_cluster(w, clusters) {
            paired.entry(name).or_insert_with(|| w.owner.clone());
        }
    }
    paired
}

fn paired_cluster(w: &WorkloadCluster, clusters: &[Cluster]) -> Option<String> {
    let server_is = |wanted: &(String, u16)| {
        clusters
            .iter()
            .find(|c| c.kube_server().and_then(host_port).as_ref() == Some(wanted))
            .map(|c| c.name.clone())
    };
    let by_secret = w.kubeconfig_server.as_deref().and_then(host_port);
    if let Some(name) = by_secret.as_ref().and_then(server_is) {
        return Some(name);
    }
    let endpoint = host_port(&w.endpoint)?;
    if let Some(name) = server_is(&endpoint) {
        return Some(name);
    }
    let by_talos: Vec<&Cluster> = clusters
        .iter()
        .filter(|c| {
            c.endpoints()
                .iter()
                .any(|e| host_of(e).as_deref() == Some(&endpoint.0))
        })
        .collect();
    match by_talos.as_slice() {
        [one] => Some(one.name.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{KubeContext, TalosContext};

    fn cluster(name: &str, server: Option<&str>, endpoints: &[&str]) -> Cluster {
        Cluster {
            name: name.to_string(),
            kube: server.map(|s| KubeContext {
                name: format!("admin@{name}"),
                file: "kubeconfig".into(),
                cluster: name.to_string(),
                user: "admin".to_string(),
                server: Some(s.to_string()),
            }),
            talos: (!endpoints.is_empty()).then(|| TalosContext {
                name: name.to_string(),
                file: "talosconfig".into(),
                endpoints: endpoints.iter().map(|e| e.to_string()).collect(),
                nodes: Vec::new(),
                ca_pem: String::new(),
                crt_pem: String::new(),
                key_pem: String::new(),
            }),
            ..Cluster::default()
        }
    }

    fn workload(name: &str, endpoint: &str, secret: Option<&str>) -> WorkloadCluster {
        WorkloadCluster {
            owner: CapiOwner {
                management: "mgmt".to_string(),
                namespace: "clusters".to_string(),
                name: name.to_string(),
            },
            endpoint: endpoint.to_string(),
            kubeconfig_server: secret.map(str::to_string),
        }
    }

    #[test]
    fn host_and_port_come_from_urls_and_addresses() {
        assert_eq!(
            host_port("https://127.0.0.1:6443"),
            Some(("127.0.0.1".into(), 6443))
        );
        assert_eq!(
            host_port("https://api.example.com"),
            Some(("api.example.com".into(), 443))
        );
        assert_eq!(
            host_port("127.0.0.2:7443"),
            Some(("127.0.0.2".into(), 7443))
        );
        assert_eq!(host_port("https://[::1]:6443/"), Some(("::1".into(), 6443)));
    }

    #[test]
    fn the_secrets_server_pairs_before_the_endpoint() {
        let clusters = [
            cluster("a", Some("https://127.0.0.1:6443"), &[]),
            cluster("b", Some("https://127.0.0.1:7443"), &[]),
        ];
        // The endpoint says a, the secret says b: the secret wins.
        let w = workload("w", "127.0.0.1:6443", Some("https://127.0.0.1:7443"));
        let paired = pair_workloads(&[w], &clusters);
        assert_eq!(
            paired.get("b").map(|o| o.to_string()).as_deref(),
            Some("mgmt/clusters/w")
        );
        assert!(!paired.contains_key("a"));
    }

    #[test]
    fn the_endpoint_pairs_by_server_then_by_a_single_talos_endpoint() {
        let clusters = [
            cluster("k", Some("https://127.0.0.5:6443"), &[]),
            cluster("t", None, &["127.0.0.9:50000"]),
        ];
        let paired = pair_workloads(
            &[
                workload("w1", "127.0.0.5:6443", None),
                workload("w2", "127.0.0.9:6443", None),
            ],
            &clusters,
        );
        assert_eq!(paired["k"].name, "w1");
        assert_eq!(paired["t"].name, "w2");
        // A port that matches no server and a host two talos contexts share: no pairing.
        let two = [
            cluster("x", None, &["127.0.0.9"]),
            cluster("y", None, &["127.0.0.9"]),
        ];
        assert!(pair_workloads(&[workload("w", "127.0.0.9:6443", None)], &two).is_empty());
    }
}
