//! A cluster's node list from every source that knows its nodes: the talosconfig
//! context, Talos discovery (COSI `Members`), the etcd member list and the
//! Kubernetes nodes. Pure; the one collector (`round`) calls it for the console
//! and for `status` alike, and the model drops nodes that left with it.
use super::status::{NodeRole, NodeSource, NodeStatus};
use crate::kube::KubeNode;
use crate::talos::{ClusterMember, EtcdMember};

/// What is known about a node before it is probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePlan {
    pub address: String,
    pub role: NodeRole,
    pub hostname: Option<String>,
    pub source: NodeSource,
    /// Neither the etcd member list nor the Kubernetes nodes name it (Talos discovery may:
    /// the discovery service keeps a member it no longer hears from for 30 minutes,
    /// siderolabs/discovery-service README).
    pub unknown_to_etcd_and_kubernetes: bool,
}

impl NodePlan {
    fn new(address: &str, source: NodeSource) -> NodePlan {
        NodePlan {
            address: address.to_string(),
            role: NodeRole::Unknown,
            hostname: None,
            source,
            unknown_to_etcd_and_kubernetes: !matches!(
                source,
                NodeSource::Etcd | NodeSource::Kubernetes
            ),
        }
    }

    /// Whether this entry is the node reached at one of `addresses` or called `names`.
    fn is(&self, addresses: &[&str], names: &[&str]) -> bool {
        let named = |n: &str| !n.is_empty() && names.contains(&n);
        addresses.contains(&self.address.as_str())
            || named(&self.address)
            || self.hostname.as_deref().is_some_and(named)
    }

    /// Fills what this entry does not know yet.
    fn learn(&mut self, role: NodeRole, hostname: &str) {
        if self.role == NodeRole::Unknown {
            self.role = role;
        }
        if self.hostname.is_none() && !hostname.is_empty() {
            self.hostname = Some(hostname.to_string());
        }
    }
}

/// Everything the sources told this round. `None`: the source did not answer
/// (or, for Talos discovery, is disabled and lists nobody).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeSources<'a> {
    pub talosconfig: &'a [String],
    pub members: Option<&'a [ClusterMember]>,
    pub etcd: Option<&'a [EtcdMember]>,
    pub kubernetes: Option<&'a [KubeNode]>,
}

/// Which sources answered a round; a node only a silent source listed stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Answered {
    pub members: bool,
    pub etcd: bool,
    pub kubernetes: bool,
}

impl NodeSources<'_> {
    pub fn answered(&self) -> Answered {
        Answered {
            members: self.members.is_some(),
            etcd: self.etcd.is_some(),
            kubernetes: self.kubernetes.is_some(),
        }
    }
}

/// The node list: the talosconfig's nodes in its order, then every node a
/// source names that none before it did, each at an address it can be asked
/// at (a member's first IPv4 address, an etcd member's client URL host, a
/// Kubernetes node's InternalIP). Roles and hostnames come from the first
/// source that knows them.
pub fn node_list(sources: &NodeSources<'_>) -> Vec<NodePlan> {
    let mut list: Vec<NodePlan> = sources
        .talosconfig
        .iter()
        .map(|a| NodePlan::new(a, NodeSource::Talosconfig))
        .collect();
    for m in sources.members.unwrap_or_default() {
        let addresses: Vec<&str> = m.addresses.iter().map(String::as_str).collect();
        let role = match m {
            m if m.is_control_plane() => NodeRole::Controlplane,
            m if m.machine_type == "worker" => NodeRole::Worker,
            _ => NodeRole::Unknown,
        };
        let address = addresses
            .iter()
            .find(|a| a.parse::<std::net::Ipv4Addr>().is_ok())
            .or(addresses.first());
        merge(
            &mut list,
            (&addresses, &[m.hostname.as_str(), m.id.as_str()]),
            address.copied(),
            (role, &m.hostname, NodeSource::Discovery),
        );
    }
    for e in sources.etcd.unwrap_or_default() {
        let hosts: Vec<&str> = e.client_urls.iter().map(|u| url_host(u)).collect();
        let address = hosts.iter().find(|h| !h.is_empty()).copied();
        merge(
            &mut list,
            (&hosts, &[e.hostname.as_str()]),
            address,
            (NodeRole::Controlplane, &e.hostname, NodeSource::Etcd),
        );
    }
    for k in sources.kubernetes.unwrap_or_default() {
        let addresses: Vec<&str> = k.internal_ips.iter().map(String::as_str).collect();
        let role = if k
            .roles
            .iter()
            .any(|r| r == "control-plane" || r == "master")
        {
            NodeRole::Controlplane
        } else {
            NodeRole::Worker
        };
        let names = [k.name.as_str(), k.hostname.as_deref().unwrap_or_default()];
        merge(
            &mut list,
            (&addresses, &names),
            addresses.first().copied(),
            (role, &k.name, NodeSource::Kubernetes),
        );
    }
    list
}

/// Teaches the entry that is this node what the source knows, or adds the
/// node at `address` (a node with no address to ask at is left out).
fn merge(
    list: &mut Vec<NodePlan>,
    (addresses, names): (&[&str], &[&str]),
    address: Option<&str>,
    (role, hostname, source): (NodeRole, &str, NodeSource),
) {
    if let Some(known) = list.iter_mut().find(|p| p.is(addresses, names)) {
        known.learn(role, hostname);
        if matches!(source, NodeSource::Etcd | NodeSource::Kubernetes) {
            known.unknown_to_etcd_and_kubernetes = false;
        }
    } else if let Some(address) = address {
        let mut plan = NodePlan::new(address, source);
        plan.learn(role, hostname);
        list.push(plan);
    }
}

/// `https://127.10.0.1:2379` → `127.10.0.1`.
fn url_host(url: &str) -> &str {
    let rest = url.rsplit("//").next().unwrap_or(url);
    let rest = rest.split('/').next().unwrap_or(rest);
    let host = match rest.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => rest,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Whether `node`, as `plan` lists it after a round whose sources `answered`, is a node the
/// talosconfig or Talos discovery still names although it left the cluster: it does not
/// answer, and etcd and Kubernetes both answered without it. A removed node leaves both
/// (Talos's "How to scale down a Talos cluster": `talosctl reset` leaves etcd, then `kubectl
/// delete node`; a Cluster API Machine's deletion does the same), but nothing edits the
/// operator's talosconfig, and the discovery service keeps a member it no longer hears from
/// until its TTL (30 minutes, siderolabs/discovery-service README).
pub fn left_the_cluster(node: &NodeStatus, plan: &NodePlan, answered: Answered) -> bool {
    node.error.is_some()
        && matches!(plan.source, NodeSource::Talosconfig | NodeSource::Discovery)
        && plan.unknown_to_etcd_and_kubernetes
        && answered.etcd
        && answered.kubernetes
}

/// Whether a known node stays after a round that listed `list`: it is listed,
/// or only a source that did not answer this round ever named it.
pub fn still_in_cluster(node: &NodeStatus, list: &[NodePlan], answered: Answered) -> bool {
    list.iter().any(|p| p.address == node.address)
        || match node.source {
            NodeSource::Talosconfig => false,
            NodeSource::Discovery => !answered.members,
            NodeSource::Etcd => !answered.etcd,
            NodeSource::Kubernetes => !answered.kubernetes,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(host: &str, addresses: &[&str], machine_type: &str) -> ClusterMember {
        ClusterMember {
            id: host.to_string(),
            hostname: host.to_string(),
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            machine_type: machine_type.to_string(),
            operating_system: String::new(),
        }
    }

    fn etcd(host: &str, address: &str) -> EtcdMember {
        EtcdMember {
            id: 1,
            hostname: host.into(),
            peer_urls: vec![format!("https://{address}:2380")],
            client_urls: vec![format!("https://{address}:2379")],
            is_learner: false,
        }
    }

    fn kube(name: &str, ip: &str, roles: &[&str]) -> KubeNode {
        KubeNode {
            roles: roles.iter().map(|r| r.to_string()).collect(),
            ..crate::kube::test_node(name, ip)
        }
    }

    fn addresses(list: &[NodePlan]) -> Vec<(&str, NodeSource)> {
        list.iter()
            .map(|p| (p.address.as_str(), p.source))
            .collect()
    }

    fn cluster_of_five() -> Vec<ClusterMember> {
        vec![
            member("cp-1", &["127.10.0.1"], "controlplane"),
            member("cp-2", &["127.10.0.2"], "controlplane"),
            member("cp-3", &["127.10.0.3"], "controlplane"),
            member("w-1", &["fd00::4", "127.10.0.4"], "worker"),
            member("w-2", &["127.10.0.5"], "worker"),
        ]
    }

    #[test]
    fn discovery_adds_every_node_the_talosconfig_does_not_name() {
        let talosconfig = ["127.10.0.1".to_string()];
        let members = cluster_of_five();
        let list = node_list(&NodeSources {
            talosconfig: &talosconfig,
            members: Some(&members),
            ..Default::default()
        });
        use NodeSource::*;
        assert_eq!(
            addresses(&list),
            [
                ("127.10.0.1", Talosconfig),
                ("127.10.0.2", Discovery),
                ("127.10.0.3", Discovery),
                ("127.10.0.4", Discovery),
                ("127.10.0.5", Discovery),
            ]
        );
        assert_eq!(list[0].role, NodeRole::Controlplane);
        assert_eq!(list[0].hostname.as_deref(), Some("cp-1"));
        assert_eq!(list[4].role, NodeRole::Worker);
    }

    #[test]
    fn a_node_named_by_hostname_in_the_talosconfig_is_not_added_twice() {
        let talosconfig = ["127.10.0.1".to_string(), "w-1".to_string()];
        let members = cluster_of_five();
        let list = node_list(&NodeSources {
            talosconfig: &talosconfig,
            members: Some(&members),
            ..Default::default()
        });
        assert_eq!(list.len(), 5);
        assert_eq!(list[1].address, "w-1");
        assert_eq!(list[1].role, NodeRole::Worker);
        assert_eq!(list.iter().filter(|p| p.address == "127.10.0.4").count(), 0);
    }

    #[test]
    fn with_discovery_disabled_etcd_and_kubernetes_still_name_every_node() {
        let talosconfig = ["127.10.0.1".to_string()];
        let etcd = [
            etcd("cp-1", "127.10.0.1"),
            etcd("cp-2", "127.10.0.2"),
            etcd("cp-3", "127.10.0.3"),
        ];
        let kube = [
            kube("cp-1", "127.10.0.1", &["control-plane"]),
            kube("cp-2", "127.10.0.2", &["control-plane"]),
            kube("w-1", "127.10.0.4", &[]),
        ];
        let sources = NodeSources {
            talosconfig: &talosconfig,
            members: None,
            etcd: Some(&etcd),
            kubernetes: Some(&kube),
        };
        let list = node_list(&sources);
        use NodeSource::*;
        assert_eq!(
            addresses(&list),
            [
                ("127.10.0.1", Talosconfig),
                ("127.10.0.2", Etcd),
                ("127.10.0.3", Etcd),
                ("127.10.0.4", Kubernetes),
            ]
        );
        let roles: Vec<NodeRole> = list.iter().map(|p| p.role).collect();
        use NodeRole::*;
        assert_eq!(roles, [Controlplane, Controlplane, Controlplane, Worker]);
        assert_eq!(list[3].hostname.as_deref(), Some("w-1"));
        assert_eq!(
            sources.answered(),
            Answered {
                members: false,
                etcd: true,
                kubernetes: true
            }
        );
    }

    fn known(address: &str, source: NodeSource) -> NodeStatus {
        NodeStatus {
            name: address.into(),
            address: address.into(),
            source,
            ..Default::default()
        }
    }

    #[test]
    fn a_silent_talosconfig_node_etcd_and_kubernetes_forgot_left_the_cluster() {
        // 127.10.0.1's Machine was deleted: discovery still lists it (its TTL), etcd and
        // Kubernetes do not. 127.10.0.2 is a worker only Kubernetes knows.
        let talosconfig = ["127.10.0.1".to_string(), "127.10.0.2".to_string()];
        let members = [member("cp-1", &["127.10.0.1"], "controlplane")];
        let etcd = [etcd("cp-3", "127.10.0.3")];
        let kube = [
            kube("w-1", "127.10.0.2", &[]),
            kube("cp-3", "127.10.0.3", &[]),
        ];
        let sources = NodeSources {
            talosconfig: &talosconfig,
            members: Some(&members),
            etcd: Some(&etcd),
            kubernetes: Some(&kube),
        };
        let list = node_list(&sources);
        let silent = |address: &str| NodeStatus {
            error: Some("connection refused".into()),
            ..known(address, NodeSource::Talosconfig)
        };
        let answered = sources.answered();
        assert!(left_the_cluster(&silent("127.10.0.1"), &list[0], answered));
        assert!(!left_the_cluster(&silent("127.10.0.2"), &list[1], answered));
        // A node that answers is in the cluster whatever the lists say.
        let talking = known("127.10.0.1", NodeSource::Talosconfig);
        assert!(!left_the_cluster(&talking, &list[0], answered));
        // Forgotten by the talosconfig, it is still not a member while discovery lists it.
        let discovered = node_list(&NodeSources {
            talosconfig: &[],
            ..sources
        });
        let gone = discovered
            .iter()
            .find(|p| p.address == "127.10.0.1")
            .expect("discovery lists it");
        assert_eq!(gone.source, NodeSource::Discovery);
        let silent_member = NodeStatus {
            source: NodeSource::Discovery,
            ..silent("127.10.0.1")
        };
        assert!(left_the_cluster(&silent_member, gone, answered));
        // Without Kubernetes' answer nobody can tell: the node stays DOWN.
        let unsure = Answered {
            kubernetes: false,
            ..answered
        };
        assert!(!left_the_cluster(&silent("127.10.0.1"), &list[0], unsure));
    }

    #[test]
    fn a_node_that_joins_is_listed_and_one_that_leaves_goes() {
        let talosconfig = ["127.10.0.1".to_string()];
        let mut members = cluster_of_five();
        members.push(member("w-3", &["127.10.0.6"], "worker"));
        let joined = node_list(&NodeSources {
            talosconfig: &talosconfig,
            members: Some(&members),
            ..Default::default()
        });
        assert_eq!(joined.len(), 6);
        assert_eq!(joined[5].source, NodeSource::Discovery);

        members.retain(|m| m.hostname != "w-2");
        let sources = NodeSources {
            talosconfig: &talosconfig,
            members: Some(&members),
            ..Default::default()
        };
        let left = node_list(&sources);
        let w2 = known("127.10.0.5", NodeSource::Discovery);
        assert!(!still_in_cluster(&w2, &left, sources.answered()));
        let w3 = known("127.10.0.6", NodeSource::Discovery);
        assert!(still_in_cluster(&w3, &left, sources.answered()));
    }

    #[test]
    fn a_silent_source_keeps_the_nodes_only_it_named() {
        let talosconfig = ["127.10.0.1".to_string()];
        let quiet = NodeSources {
            talosconfig: &talosconfig,
            ..Default::default()
        };
        let list = node_list(&quiet);
        assert_eq!(addresses(&list), [("127.10.0.1", NodeSource::Talosconfig)]);
        for source in [
            NodeSource::Discovery,
            NodeSource::Etcd,
            NodeSource::Kubernetes,
        ] {
            let node = known("127.10.0.9", source);
            assert!(
                still_in_cluster(&node, &list, quiet.answered()),
                "{source:?}"
            );
        }
        let dropped = known("127.10.0.8", NodeSource::Talosconfig);
        assert!(!still_in_cluster(&dropped, &list, quiet.answered()));
    }

    #[test]
    fn etcd_urls_give_their_host() {
        assert_eq!(url_host("https://127.10.0.1:2379"), "127.10.0.1");
        assert_eq!(url_host("https://[fd00::1]:2379"), "fd00::1");
        assert_eq!(url_host("cp.lab"), "cp.lab");
    }
}
