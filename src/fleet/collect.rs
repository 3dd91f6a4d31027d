//! The Talos-side steps of a poll round: ask a few nodes for the cluster's
//! members and etcd members, probe every listed node with bounded concurrency,
//! then read etcd from the control planes. The one collector (`round`) runs them.
use std::collections::HashMap;

use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};

pub use super::membership::NodePlan;
use super::quorum::Quorum;
use super::status::{
    EtcdAlarmReport, EtcdMemberReport, EtcdReport, NodeRole, NodeSource, NodeStatus,
};
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

/// The first non-empty list any node gives for `ask`, asking `sources` nodes at a time
/// (endpoints first: they are usually control planes) and the next one whenever one fails
/// to answer,
/// so a talosconfig whose first nodes were removed still finds the list. `None` when nobody
/// answered with one.
pub async fn first_list<'a, T, F, Fut>(
    client: &'a TalosClient,
    nodes: &'a [String],
    sources: usize,
    ask: F,
) -> Option<Vec<T>>
where
    F: Fn(&'a str) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<T>, TalosError>>,
{
    let endpoint_hosts: Vec<&str> = client.endpoints().iter().map(|e| host_of(e)).collect();
    let mut order: Vec<&'a String> = nodes.iter().collect();
    order.sort_by_key(|n| !endpoint_hosts.contains(&n.as_str()));
    let mut waiting = order.into_iter();
    let mut asks: FuturesUnordered<_> = waiting
        .by_ref()
        .take(sources.max(1))
        .map(|n| ask(n.as_str()))
        .collect();
    while let Some(result) = asks.next().await {
        match result {
            Ok(list) if !list.is_empty() => return Some(list),
            // An empty list is an answer (discovery disabled): only a failure asks another.
            Ok(_) => {}
            Err(_) => asks.extend(waiting.next().map(|n| ask(n.as_str()))),
        }
    }
    None
}

/// The cluster's Talos discovery members (COSI `Members`), from the first of a few nodes that
/// lists any; `None` when nobody did (discovery disabled, or nobody answered).
pub async fn cluster_members(
    client: &TalosClient,
    nodes: &[String],
    sources: usize,
) -> Option<Vec<ClusterMember>> {
    first_list(client, nodes, sources, |n| client.cluster_members(n)).await
}

/// The etcd member list, from the first of a few nodes that gives one.
pub async fn etcd_members(
    client: &TalosClient,
    nodes: &[String],
    sources: usize,
) -> Option<Vec<EtcdMember>> {
    first_list(client, nodes, sources, |n| client.etcd_member_list(n)).await
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
            source: plan.source,
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
            source: NodeSource::Talosconfig,
            unknown_to_etcd_and_kubernetes: false,
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
            let alarmed: Vec<&str> = alarms
                .iter()
                .filter(|a| a.member_id == m.id)
                .map(|a| a.kind.as_str())
                .collect();
            EtcdMemberReport {
                id: member_id_hex(m.id),
                hostname: m.hostname.clone(),
                is_learner: m.is_learner,
                leader: leader != 0 && m.id == leader,
                healthy: status.is_some_and(|s| s.errors.iter().all(|e| is_alarm_report(e)))
                    && alarmed.is_empty(),
                db_size: status.map(|s| s.db_size),
                db_size_in_use: status.map(|s| s.db_size_in_use),
                raft_term: status.map(|s| s.raft_term),
                raft_index: status.map(|s| s.raft_index),
                errors: member_errors(m.id, status, &alarmed),
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
/// and asks members without a status directly: those not probed (not in the context's nodes)
/// and those whose node answered its probe before its etcd member joined.
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
        // A node that did not answer its probe is not asked twice; one that answered before
        // its etcd joined (a new control plane) is asked again, as is any member not probed.
        let unanswered: Vec<&str> = probes
            .iter()
            .filter(|p| !p.answered)
            .map(|p| p.status.address.as_str())
            .collect();
        let unprobed: Vec<String> = list
            .iter()
            .filter(|m| !statuses.contains_key(&m.id))
            .filter_map(|m| m.client_urls.first())
            .map(|url| host_of(url.rsplit("//").next().unwrap_or(url)).to_string())
            .filter(|host| !host.is_empty() && !unanswered.contains(&host.as_str()))
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

/// A member's errors as the console prints them: etcd's own, with the member
/// ids it writes in decimal (`memberID:2 alarm:NOSPACE`) in hex as everywhere
/// else, and each active alarm of the member that etcd did not list itself.
/// An alarm makes the member unhealthy: NOSPACE and CORRUPT stop its writes.
fn member_errors(id: u64, status: Option<&EtcdMemberStatus>, alarms: &[&str]) -> Vec<String> {
    let mut errors: Vec<String> = status
        .map(|s| s.errors.iter().map(|e| member_ids_in_hex(e)).collect())
        .unwrap_or_default();
    for alarm in alarms {
        let own = format!("memberID:{} alarm:{alarm}", member_id_hex(id));
        if !errors.iter().any(|e| e.trim() == own) {
            errors.push(own);
        }
    }
    errors
}

/// etcd lists the cluster's active alarms among every member's status errors
/// (`memberID:N alarm:NOSPACE`): another member's alarm does not make this one
/// unhealthy; its own (from the alarm list) does. An alarm leaves the member answering.
pub fn is_alarm_report(error: &str) -> bool {
    error
        .split_whitespace()
        .any(|word| word.starts_with("alarm:"))
}

/// `memberID:N` words of an etcd error with N in hex (16 digits).
fn member_ids_in_hex(error: &str) -> String {
    error
        .split(' ')
        .map(
            |word| match word.strip_prefix("memberID:").map(str::parse::<u64>) {
                Some(Ok(id)) => format!("memberID:{}", member_id_hex(id)),
                _ => word.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join(" ")
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
    fn an_alarm_makes_its_member_unhealthy_and_ids_print_in_hex() {
        let members = vec![member(1, "cp-1")];
        let statuses = HashMap::from([(1, status(1, 1, &["memberID:18 alarm:NOSPACE "]))]);
        let alarms = vec![EtcdAlarm {
            member_id: 1,
            kind: EtcdAlarmKind::Nospace,
        }];
        let r = etcd_report(Some(members), &statuses, &alarms, &HashMap::new());
        assert!(!r.members[0].healthy, "NOSPACE stops the member's writes");
        assert_eq!(r.quorum.healthy, 0);
        assert_eq!(r.alarms[0].alarm, "NOSPACE");
        assert_eq!(
            r.members[0].errors,
            [
                "memberID:0000000000000012 alarm:NOSPACE ",
                "memberID:0000000000000001 alarm:NOSPACE"
            ],
            "etcd's line in hex, and the member's own alarm it did not list"
        );
    }

    #[test]
    fn silent_and_alarmed_members_are_unhealthy() {
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
        // cp-2 is silent and cp-3's NOSPACE alarm stops its writes: one healthy.
        assert!(!r.members[2].healthy);
        assert_eq!(r.quorum, Quorum::from_counts(3, 1));
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
    fn endpoint_hosts() {
        assert_eq!(host_of("127.10.0.2:50000"), "127.10.0.2");
        assert_eq!(host_of("[fd00::1]:50000"), "fd00::1");
        assert_eq!(host_of("cp.lab"), "cp.lab");
    }
}
