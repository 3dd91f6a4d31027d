//! Fills the status model from the Talos API: plan the nodes (roles and names
//! from cluster discovery), probe every node with bounded concurrency, then
//! read etcd from the control planes. Pollers reuse the steps for partial results.
use std::collections::HashMap;

use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};

use super::quorum::Quorum;
use super::status::{
    ClusterStatus, EtcdAlarmReport, EtcdMemberReport, EtcdReport, NodeRole, NodeStatus,
};
use crate::discovery::TalosContext;
use crate::talos::{
    ClientOptions, ClusterMember, EtcdMember, EtcdMemberStatus, TalosClient, TalosError, fan_out,
    fan_out_stream, member_id_hex,
};

/// How collection behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectOptions {
    pub client: ClientOptions,
    /// How many nodes are asked at once for the cluster's member list.
    pub member_sources: usize,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            client: ClientOptions::default(),
            member_sources: 3,
        }
    }
}

/// What is known about a node before it is probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePlan {
    pub address: String,
    pub role: NodeRole,
    pub hostname: Option<String>,
}

/// The result of probing one node.
#[derive(Debug, Clone)]
pub struct NodeProbe {
    pub status: NodeStatus,
    /// Its etcd member's own view, on control planes that answered.
    pub etcd: Option<EtcdMemberStatus>,
    /// Whether the node answered anything at all.
    pub answered: bool,
}

fn host_of(endpoint: &str) -> &str {
    let host = match endpoint.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => endpoint,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// The first member list any of a few nodes gives (endpoints first: they are
/// usually control planes). `None` when nobody answered.
pub async fn cluster_members(
    client: &TalosClient,
    nodes: &[String],
    sources: usize,
) -> Option<Vec<ClusterMember>> {
    let endpoint_hosts: Vec<&str> = client.endpoints().iter().map(|e| host_of(e)).collect();
    let mut order: Vec<&String> = nodes.iter().collect();
    order.sort_by_key(|n| !endpoint_hosts.contains(&n.as_str()));
    let mut asks: FuturesUnordered<_> = order
        .into_iter()
        .take(sources.max(1))
        .map(|n| client.cluster_members(n))
        .collect();
    while let Some(result) = asks.next().await {
        if let Ok(members) = result
            && !members.is_empty()
        {
            return Some(members);
        }
    }
    None
}

/// The context's nodes plus every cluster member none of them names, at the member's first
/// IPv4 address (else its first address): a node that joined after the talosconfig was written
/// (a provisioned VM, say) is shown without editing the operator's talosconfig.
pub fn with_discovered_members(
    mut nodes: Vec<String>,
    members: Option<&[ClusterMember]>,
) -> Vec<String> {
    for m in members.unwrap_or_default() {
        let known = nodes
            .iter()
            .any(|n| *n == m.hostname || m.addresses.iter().any(|a| a == n));
        let address = m
            .addresses
            .iter()
            .find(|a| a.parse::<std::net::Ipv4Addr>().is_ok())
            .or_else(|| m.addresses.first());
        if !known && let Some(address) = address {
            nodes.push(address.clone());
        }
    }
    nodes
}

/// Roles and hostnames for each address, from the member list when there is one.
pub fn plan_nodes(nodes: &[String], members: Option<&[ClusterMember]>) -> Vec<NodePlan> {
    nodes
        .iter()
        .map(|address| {
            let member = members.and_then(|ms| {
                ms.iter()
                    .find(|m| m.addresses.iter().any(|a| a == address) || m.hostname == *address)
            });
            NodePlan {
                address: address.clone(),
                role: match member {
                    Some(m) if m.is_control_plane() => NodeRole::Controlplane,
                    Some(m) if m.machine_type == "worker" => NodeRole::Worker,
                    _ => NodeRole::Unknown,
                },
                hostname: member.map(|m| m.hostname.clone()).filter(|h| !h.is_empty()),
            }
        })
        .collect()
}

/// Asks one node for its version, machine status, and (when it may be a
/// control plane) its etcd member status, all at once; each call is bounded by
/// the client's call timeout, so a dead node costs at most that.
pub async fn probe_node(client: &TalosClient, plan: &NodePlan) -> NodeProbe {
    let addr = plan.address.as_str();
    let want_hostname = plan.hostname.is_none();
    let want_etcd = plan.role != NodeRole::Worker;
    let (version, machine, hostname, etcd) = tokio::join!(
        client.version(addr),
        client.machine_status(addr),
        async {
            if want_hostname {
                Some(client.hostname(addr).await)
            } else {
                None
            }
        },
        async {
            if want_etcd {
                Some(client.etcd_status(addr).await)
            } else {
                None
            }
        },
    );
    let answered_etcd = etcd.as_ref().is_some_and(|e| e.is_ok());
    let answered = version.is_ok()
        || machine.is_ok()
        || answered_etcd
        || hostname.as_ref().is_some_and(|h| h.is_ok());
    let role = match (&etcd, plan.role) {
        (Some(Ok(_)), _) => NodeRole::Controlplane,
        (_, NodeRole::Unknown)
            if answered
                && etcd
                    .as_ref()
                    .is_some_and(|e| e.as_ref().is_err_and(|e| !e.is_unreachable())) =>
        {
            // It answered, but has no etcd to report on.
            NodeRole::Worker
        }
        (_, role) => role,
    };
    let name = match (&hostname, &plan.hostname) {
        (Some(Ok(h)), _) if !h.is_empty() => h.clone(),
        (_, Some(h)) => h.clone(),
        _ => plan.address.clone(),
    };
    let error = match (&version, &machine) {
        (Err(e), _) | (_, Err(e)) => Some(e.to_string()),
        _ => None,
    };
    let (stage, ready, unmet_conditions) = match machine {
        Ok(m) => (Some(m.stage), m.ready, m.unmet_conditions),
        Err(_) => (None, false, Vec::new()),
    };
    NodeProbe {
        status: NodeStatus {
            name,
            address: plan.address.clone(),
            role,
            talos_version: version.ok().map(|v| v.tag),
            stage,
            ready,
            unmet_conditions,
            error,
            ..NodeStatus::default()
        },
        etcd: etcd.and_then(Result::ok),
        answered,
    }
}

/// Probes every planned node, at most `concurrency` at once, yielding each
/// result as it arrives.
pub fn probe_nodes(
    client: &TalosClient,
    plans: Vec<NodePlan>,
) -> impl Stream<Item = NodeProbe> + '_ {
    let concurrency = client.options().concurrency;
    let by_address: HashMap<String, NodePlan> = plans
        .iter()
        .map(|p| (p.address.clone(), p.clone()))
        .collect();
    let addresses = plans.into_iter().map(|p| p.address).collect();
    fan_out_stream(addresses, concurrency, move |address| {
        let plan = by_address.get(&address).cloned().unwrap_or(NodePlan {
            address,
            role: NodeRole::Unknown,
            hostname: None,
        });
        async move { probe_node(client, &plan).await }
    })
    .map(|(_, probe)| probe)
}

/// The id of the leader most members follow (0 when none reports one).
fn leader_of(statuses: &HashMap<u64, EtcdMemberStatus>) -> u64 {
    let mut votes: HashMap<u64, usize> = HashMap::new();
    for s in statuses.values().filter(|s| s.leader != 0) {
        *votes.entry(s.leader).or_default() += 1;
    }
    votes
        .into_iter()
        .max_by_key(|(id, n)| (*n, std::cmp::Reverse(*id)))
        .map(|(id, _)| id)
        .unwrap_or(0)
}

/// Builds the etcd report from member statuses and the member list. Pure.
pub fn etcd_report(
    members: Option<Vec<EtcdMember>>,
    statuses: &HashMap<u64, EtcdMemberStatus>,
    alarms: &[crate::talos::EtcdAlarm],
    hostnames: &HashMap<u64, String>,
) -> EtcdReport {
    let members = members.unwrap_or_else(|| {
        statuses
            .values()
            .map(|s| EtcdMember {
                id: s.member_id,
                hostname: hostnames.get(&s.member_id).cloned().unwrap_or_default(),
                peer_urls: vec![],
                client_urls: vec![],
                is_learner: s.is_learner,
            })
            .collect()
    });
    let leader = leader_of(statuses);
    let mut reports: Vec<EtcdMemberReport> = members
        .iter()
        .map(|m| {
            let status = statuses.get(&m.id);
            EtcdMemberReport {
                id: member_id_hex(m.id),
                hostname: m.hostname.clone(),
                is_learner: m.is_learner,
                leader: leader != 0 && m.id == leader,
                healthy: status.is_some_and(|s| s.errors.iter().all(|e| is_alarm_report(e))),
                db_size: status.map(|s| s.db_size),
                db_size_in_use: status.map(|s| s.db_size_in_use),
                raft_term: status.map(|s| s.raft_term),
                raft_index: status.map(|s| s.raft_index),
                errors: status.map(|s| s.errors.clone()).unwrap_or_default(),
            }
        })
        .collect();
    reports.sort_by(|a, b| a.hostname.cmp(&b.hostname).then(a.id.cmp(&b.id)));
    let alarms = alarms
        .iter()
        .map(|a| EtcdAlarmReport {
            member_id: member_id_hex(a.member_id),
            hostname: members
                .iter()
                .find(|m| m.id == a.member_id)
                .map(|m| m.hostname.clone()),
            alarm: a.kind.as_str().to_string(),
        })
        .collect();
    let quorum = Quorum::of_members(reports.iter().map(|m| (m.is_learner, m.healthy)));
    EtcdReport {
        members: reports,
        alarms,
        quorum,
    }
}

/// Reads the member list and alarms from the first control plane that answers,
/// and asks members that were not probed (not in the context's nodes) directly.
pub async fn collect_etcd(client: &TalosClient, probes: &[NodeProbe]) -> EtcdReport {
    let answering: Vec<&NodeProbe> = probes.iter().filter(|p| p.etcd.is_some()).collect();
    let mut statuses: HashMap<u64, EtcdMemberStatus> = HashMap::new();
    let mut hostnames = HashMap::new();
    for p in &answering {
        if let Some(s) = &p.etcd {
            statuses.insert(s.member_id, s.clone());
            hostnames.insert(s.member_id, p.status.name.clone());
        }
    }
    let mut members = None;
    let mut alarms = Vec::new();
    for p in &answering {
        if let Ok(list) = client.etcd_member_list(&p.status.address).await {
            members = Some(list);
            alarms = client
                .etcd_alarm_list(&p.status.address)
                .await
                .unwrap_or_default();
            break;
        }
    }
    if let Some(list) = &members {
        let probed: Vec<&str> = probes.iter().map(|p| p.status.address.as_str()).collect();
        let unprobed: Vec<String> = list
            .iter()
            .filter(|m| !statuses.contains_key(&m.id))
            .filter_map(|m| m.client_urls.first())
            .map(|url| host_of(url.rsplit("//").next().unwrap_or(url)).to_string())
            .filter(|host| !host.is_empty() && !probed.contains(&host.as_str()))
            .collect();
        let concurrency = client.options().concurrency;
        for (_, status) in fan_out(&unprobed, concurrency, |n| async move {
            client.etcd_status(&n).await
        })
        .await
        {
            if let Ok(s) = status {
                statuses.insert(s.member_id, s);
            }
        }
    }
    etcd_report(members, &statuses, &alarms, &hostnames)
}

/// etcd lists active alarms among a member's status errors
/// (`memberID:N alarm:NOSPACE`). An alarm does not stop the member from
/// answering and voting, so it does not make it unhealthy or cost quorum; the
/// alarm itself is reported in `alarms`.
fn is_alarm_report(error: &str) -> bool {
    error
        .split_whitespace()
        .any(|word| word.starts_with("alarm:"))
}

/// Status of one cluster through an existing client. `nodes` empty: the endpoints.
pub async fn collect_cluster(
    client: &TalosClient,
    name: &str,
    nodes: &[String],
    options: &CollectOptions,
) -> ClusterStatus {
    let nodes: Vec<String> = if nodes.is_empty() {
        client
            .endpoints()
            .iter()
            .map(|e| host_of(e).to_string())
            .collect()
    } else {
        nodes.to_vec()
    };
    let members = cluster_members(client, &nodes, options.member_sources).await;
    let nodes = with_discovered_members(nodes, members.as_deref());
    let plans = plan_nodes(&nodes, members.as_deref());
    let mut probes: Vec<NodeProbe> = probe_nodes(client, plans).collect().await;
    let position: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    probes.sort_by_key(|p| {
        position
            .get(p.status.address.as_str())
            .copied()
            .unwrap_or(usize::MAX)
    });
    let etcd = collect_etcd(client, &probes).await;
    ClusterStatus {
        name: name.to_string(),
        reachable: probes.iter().any(|p| p.answered),
        role: client.roles().to_string(),
        nodes: probes.into_iter().map(|p| p.status).collect(),
        etcd,
        kubernetes: None,
        rollout: None,
        error: None,
    }
}

/// Status of one cluster from its talosconfig context. A context whose
/// certificates or endpoints are unusable yields a cluster with `error` set.
pub async fn collect_context(
    name: &str,
    ctx: &TalosContext,
    options: &CollectOptions,
) -> ClusterStatus {
    match TalosClient::new(ctx, options.client) {
        Ok(client) => collect_cluster(&client, name, &ctx.nodes, options).await,
        Err(err) => unusable_context(name, ctx, &err),
    }
}

fn unusable_context(name: &str, ctx: &TalosContext, err: &TalosError) -> ClusterStatus {
    let role = crate::talos::tls::read_client_certificate(&ctx.name, &ctx.crt_pem)
        .map(|c| c.roles.to_string())
        .unwrap_or_default();
    ClusterStatus {
        name: name.to_string(),
        reachable: false,
        role,
        nodes: ctx
            .nodes
            .iter()
            .map(|n| NodeStatus::failed(n, err.to_string()))
            .collect(),
        etcd: EtcdReport::default(),
        kubernetes: None,
        rollout: None,
        error: Some(err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::talos::{EtcdAlarm, EtcdAlarmKind};

    fn status(id: u64, leader: u64, errors: &[&str]) -> EtcdMemberStatus {
        EtcdMemberStatus {
            member_id: id,
            leader,
            db_size: 100,
            raft_term: 3,
            errors: errors.iter().map(|e| e.to_string()).collect(),
            ..Default::default()
        }
    }

    fn member(id: u64, host: &str) -> EtcdMember {
        EtcdMember {
            id,
            hostname: host.into(),
            peer_urls: vec![],
            client_urls: vec![],
            is_learner: false,
        }
    }

    #[test]
    fn an_alarm_alone_does_not_make_a_member_unhealthy() {
        let members = vec![member(1, "cp-1")];
        let statuses = HashMap::from([(1, status(1, 1, &["memberID:1 alarm:NOSPACE "]))]);
        let alarms = vec![EtcdAlarm {
            member_id: 1,
            kind: EtcdAlarmKind::Nospace,
        }];
        let r = etcd_report(Some(members), &statuses, &alarms, &HashMap::new());
        assert!(r.members[0].healthy);
        assert_eq!(r.quorum.tolerates, 0);
        assert_eq!(r.quorum.healthy, 1);
        assert_eq!(r.alarms[0].alarm, "NOSPACE");
        assert_eq!(r.members[0].errors.len(), 1, "the alarm is still listed");
    }

    #[test]
    fn a_silent_member_is_unhealthy_and_costs_the_tolerance() {
        let members = vec![member(1, "cp-1"), member(2, "cp-2"), member(3, "cp-3")];
        let statuses: HashMap<u64, EtcdMemberStatus> =
            [(1, status(1, 1, &[])), (3, status(3, 1, &[]))]
                .into_iter()
                .collect();
        let alarms = [EtcdAlarm {
            member_id: 3,
            kind: EtcdAlarmKind::Nospace,
        }];
        let r = etcd_report(Some(members), &statuses, &alarms, &HashMap::new());
        assert_eq!(r.members.len(), 3);
        assert_eq!(r.leader().map(|m| m.hostname.as_str()), Some("cp-1"));
        let cp2 = &r.members[1];
        assert!(!cp2.healthy && cp2.db_size.is_none());
        assert_eq!(r.quorum, Quorum::from_counts(3, 2));
        assert_eq!(r.alarms[0].hostname.as_deref(), Some("cp-3"));
        assert_eq!(r.alarms[0].alarm, "NOSPACE");
        assert_eq!(r.alarms[0].member_id, "0000000000000003");
    }

    #[test]
    fn errors_make_a_member_unhealthy_and_members_fall_back_to_statuses() {
        let statuses: HashMap<u64, EtcdMemberStatus> =
            [(1, status(1, 1, &[])), (2, status(2, 1, &["slow disk"]))]
                .into_iter()
                .collect();
        let hostnames = [(1, "cp-1".to_string()), (2, "cp-2".to_string())]
            .into_iter()
            .collect();
        let r = etcd_report(None, &statuses, &[], &hostnames);
        assert_eq!(r.members.len(), 2);
        assert!(r.members[0].healthy && !r.members[1].healthy);
        assert_eq!(r.members[1].errors, ["slow disk"]);
        assert_eq!(r.quorum.tolerates, 0);
    }

    #[test]
    fn plans_take_roles_and_names_from_members() {
        let members = vec![
            ClusterMember {
                id: "cp-1".into(),
                hostname: "cp-1".into(),
                addresses: vec!["127.10.0.2".into()],
                machine_type: "controlplane".into(),
                operating_system: String::new(),
            },
            ClusterMember {
                id: "w-1".into(),
                hostname: "w-1".into(),
                addresses: vec!["127.10.0.5".into()],
                machine_type: "worker".into(),
                operating_system: String::new(),
            },
        ];
        let nodes = vec![
            "127.10.0.2".to_string(),
            "127.10.0.5".into(),
            "127.10.0.9".into(),
        ];
        let plans = plan_nodes(&nodes, Some(&members));
        assert_eq!(plans[0].role, NodeRole::Controlplane);
        assert_eq!(plans[1].role, NodeRole::Worker);
        assert_eq!(plans[1].hostname.as_deref(), Some("w-1"));
        assert_eq!(plans[2].role, NodeRole::Unknown);
        assert_eq!(plans[2].hostname, None);
    }

    #[test]
    fn members_missing_from_the_context_are_added_once() {
        let nodes = vec!["10.0.0.1".to_string(), "w-1".to_string()];
        let members = vec![
            member_at("cp-1", &["10.0.0.1"]),
            member_at("w-1", &["10.0.0.4"]),
            member_at("w-new", &["fd00::9", "10.0.0.9"]),
        ];
        let all = with_discovered_members(nodes, Some(&members));
        assert_eq!(all, ["10.0.0.1", "w-1", "10.0.0.9"]);
        assert_eq!(with_discovered_members(vec!["a".into()], None), ["a"]);
    }

    fn member_at(host: &str, addresses: &[&str]) -> ClusterMember {
        ClusterMember {
            id: host.to_string(),
            hostname: host.to_string(),
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            machine_type: "worker".to_string(),
            operating_system: String::new(),
        }
    }

    #[test]
    fn endpoint_hosts() {
        assert_eq!(host_of("127.10.0.2:50000"), "127.10.0.2");
        assert_eq!(host_of("[fd00::1]:50000"), "fd00::1");
        assert_eq!(host_of("cp.lab"), "cp.lab");
    }
}
