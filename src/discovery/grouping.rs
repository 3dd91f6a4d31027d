//! Contexts that reach the same cluster become one cluster: talosconfig contexts with the same
//! CA and overlapping endpoints, or kubeconfig contexts with the same API server. The most
//! capable talos context (admin over operator over reader, valid certificates first) is used.
use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::{Cluster, KubeContext, PairedBy, TalosContext, host_of, parse_client_certificate};

/// Merges the paired clusters that reach the same cluster; the result is sorted by name.
/// `now` (seconds since the epoch) tells expired certificates from valid ones.
pub(crate) fn group(clusters: Vec<Cluster>, now: i64) -> Vec<Cluster> {
    let mut parent: Vec<usize> = (0..clusters.len()).collect();
    for i in 0..clusters.len() {
        for j in i + 1..clusters.len() {
            if same_cluster(&clusters[i], &clusters[j]) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[b.max(a)] = a.min(b);
            }
        }
    }
    let mut groups: Vec<Vec<Cluster>> = Vec::new();
    let mut slot_of_root = vec![usize::MAX; clusters.len()];
    for (i, cluster) in clusters.into_iter().enumerate() {
        let r = root(&mut parent, i);
        if slot_of_root[r] == usize::MAX {
            slot_of_root[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[slot_of_root[r]].push(cluster);
    }
    let mut merged: Vec<Cluster> = groups.into_iter().map(|g| merge(g, now)).collect();
    merged.sort_by(|a, b| a.name.cmp(&b.name));
    merged
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Same CA and an endpoint in common, or (when their Talos sides do not disagree) the same
/// Kubernetes API server.
fn same_cluster(a: &Cluster, b: &Cluster) -> bool {
    match (&a.talos, &b.talos) {
        (Some(x), Some(y)) if same_talos_cluster(x, y) => true,
        (Some(_), Some(_)) => false,
        _ => same_kube_server(a.kube.as_ref(), b.kube.as_ref()),
    }
}

fn same_talos_cluster(a: &TalosContext, b: &TalosContext) -> bool {
    let ca = a.ca_pem.trim();
    if ca.is_empty() || ca != b.ca_pem.trim() {
        return false;
    }
    let hosts: BTreeSet<String> = a.endpoints.iter().filter_map(|e| host_of(e)).collect();
    b.endpoints
        .iter()
        .filter_map(|e| host_of(e))
        .any(|h| hosts.contains(&h))
}

fn same_kube_server(a: Option<&KubeContext>, b: Option<&KubeContext>) -> bool {
    let server = |k: Option<&KubeContext>| {
        k.and_then(|k| k.server.as_deref())
            .map(|s| s.trim().trim_end_matches('/').to_ascii_lowercase())
    };
    server(a).is_some_and(|s| Some(&s) == server(b).as_ref())
}

/// How capable a talos context is: a valid certificate first, then its strongest role.
fn capability(ctx: &TalosContext, now: i64) -> (bool, u8) {
    match parse_client_certificate(&ctx.crt_pem) {
        Ok(cert) => (
            cert.valid_at(now),
            cert.roles.strongest().map_or(0, |r| r.rank()),
        ),
        Err(_) => (false, 0),
    }
}

/// One cluster from a group: the most capable talos context, the kube context that came with
/// it (else the first), the config's name when the config named one, every other context as
/// an alternate.
fn merge(mut group: Vec<Cluster>, now: i64) -> Cluster {
    if group.len() == 1 {
        return group.remove(0);
    }
    group.sort_by(|a, b| a.name.cmp(&b.name));
    let primary = group
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.talos.as_ref().map(|t| (i, t)))
        .min_by_key(|(_, t)| (Reverse(capability(t, now)), t.name.clone()))
        .map(|(i, _)| i);
    let configured = group
        .iter()
        .position(|c| c.paired_by == Some(PairedBy::Config));
    let lead = configured.or(primary).unwrap_or(0);
    let kube_holder = primary
        .filter(|&i| group[i].kube.is_some())
        .or_else(|| configured.filter(|&i| group[i].kube.is_some()))
        .or_else(|| group.iter().position(|c| c.kube.is_some()));
    let name = group[lead].name.clone();
    let paired_by = match (primary, kube_holder) {
        (Some(_), Some(k)) => group[k].paired_by.or(Some(PairedBy::Address)),
        _ => None,
    };
    let mut cluster = Cluster {
        name,
        paired_by,
        ..Cluster::default()
    };
    for (i, member) in group.into_iter().enumerate() {
        if let Some(t) = member.talos {
            if Some(i) == primary {
                cluster.talos = Some(t);
            } else {
                cluster.alternate_talos.push(t);
            }
        }
        if let Some(k) = member.kube {
            if Some(i) == kube_holder {
                cluster.kube = Some(k);
            } else {
                cluster.alternate_kube.push(k);
            }
        }
        cluster.alternate_talos.extend(member.alternate_talos);
        cluster.alternate_kube.extend(member.alternate_kube);
    }
    cluster.alternate_talos.sort_by(|a, b| a.name.cmp(&b.name));
    cluster.alternate_kube.sort_by(|a, b| a.name.cmp(&b.name));
    cluster
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::test_files::context_with_roles;

    const NOW: i64 = 1_900_000_000;

    /// A talos-only cluster whose context has `roles`, the CA `ca` and `endpoints`.
    fn talos_cluster(
        name: &str,
        roles: &[&str],
        expired: bool,
        ca: &str,
        endpoints: &[&str],
    ) -> Cluster {
        let mut ctx = context_with_roles(name, roles, expired);
        ctx.ca_pem = ca.into();
        ctx.endpoints = endpoints.iter().map(|e| e.to_string()).collect();
        Cluster {
            name: name.into(),
            talos: Some(ctx),
            ..Cluster::default()
        }
    }

    fn kube(name: &str, server: &str) -> KubeContext {
        KubeContext {
            name: name.into(),
            file: "kubeconfig".into(),
            cluster: name.into(),
            user: "admin".into(),
            server: Some(server.into()),
        }
    }

    fn summary(clusters: &[Cluster]) -> Vec<(String, Option<String>, Vec<String>)> {
        clusters
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.talos_context().map(str::to_owned),
                    c.alternate_contexts()
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn same_ca_and_an_endpoint_in_common_is_one_cluster_using_the_admin() {
        let mut prod = talos_cluster(
            "prod",
            &["os:admin"],
            false,
            "CA1",
            &["127.0.0.1:50000", "127.0.0.2"],
        );
        prod.kube = Some(kube("admin@prod", "https://127.0.0.1:6443"));
        prod.paired_by = Some(PairedBy::Name);
        let clusters = vec![
            talos_cluster("prod-reader", &["os:reader"], false, "CA1", &["127.0.0.2"]),
            talos_cluster("prod-ops", &["os:operator"], false, "CA1", &["127.0.0.1"]),
            prod,
            // Same CA, other endpoints: another cluster.
            talos_cluster("lab", &["os:admin"], false, "CA1", &["127.0.0.9"]),
            // Same endpoint, other CA: another cluster.
            talos_cluster("other", &["os:reader"], false, "CA2", &["127.0.0.1"]),
        ];
        let grouped = group(clusters, NOW);
        assert_eq!(
            summary(&grouped),
            [
                ("lab".into(), Some("lab".into()), vec![]),
                ("other".into(), Some("other".into()), vec![]),
                (
                    "prod".into(),
                    Some("prod".into()),
                    vec!["prod-ops".into(), "prod-reader".into()]
                ),
            ]
        );
        assert_eq!(grouped[2].kube_context(), Some("admin@prod"));
        assert_eq!(grouped[2].paired_by, Some(PairedBy::Name));
        assert_eq!(grouped[2].talos_roles(), "os:admin");
    }

    #[test]
    fn a_valid_operator_wins_over_an_expired_admin_and_names_the_cluster() {
        let grouped = group(
            vec![
                talos_cluster("a-expired", &["os:admin"], true, "CA", &["127.0.0.1"]),
                talos_cluster("b-operator", &["os:operator"], false, "CA", &["127.0.0.1"]),
            ],
            NOW,
        );
        assert_eq!(
            summary(&grouped),
            [(
                "b-operator".into(),
                Some("b-operator".into()),
                vec!["a-expired".into()]
            )]
        );
    }

    #[test]
    fn contexts_without_a_ca_are_never_merged() {
        let grouped = group(
            vec![
                talos_cluster("a", &["os:admin"], false, "", &["127.0.0.1"]),
                talos_cluster("b", &["os:admin"], false, "", &["127.0.0.1"]),
            ],
            NOW,
        );
        assert_eq!(grouped.len(), 2);
    }

    #[test]
    fn kube_contexts_with_the_same_server_join_the_cluster() {
        let mut prod = talos_cluster("prod", &["os:admin"], false, "CA", &["127.0.0.1"]);
        prod.kube = Some(kube("admin@prod", "https://127.0.0.1:6443"));
        let spare = Cluster {
            name: "admin@prod-spare".into(),
            kube: Some(kube("admin@prod-spare", "https://127.0.0.1:6443/")),
            ..Cluster::default()
        };
        let grouped = group(vec![spare, prod], NOW);
        assert_eq!(
            summary(&grouped),
            [(
                "prod".into(),
                Some("prod".into()),
                vec!["admin@prod-spare".into()]
            )]
        );
    }

    #[test]
    fn naming_an_alternate_context_uses_exactly_it() {
        let grouped = group(
            vec![
                talos_cluster("prod", &["os:admin"], false, "CA", &["127.0.0.1"]),
                talos_cluster("prod-reader", &["os:reader"], false, "CA", &["127.0.0.1"]),
            ],
            NOW,
        );
        let discovery = crate::discovery::Discovery {
            clusters: grouped,
            ..Default::default()
        };
        let reader = discovery
            .select("prod-reader")
            .expect("the reader's cluster");
        assert_eq!(reader.name, "prod");
        assert_eq!(reader.talos_context(), Some("prod-reader"));
        assert_eq!(reader.alternate_contexts(), ["prod"]);
        assert_eq!(reader.talos_roles(), "os:reader");
        let by_name = discovery.select("prod").expect("by name");
        assert_eq!(by_name.talos_context(), Some("prod"));
        assert!(discovery.select("nope").is_none());
        // Cluster prod through prod-reader, its alternate context named prod: naming prod
        // uses that context, on the command line as in the console's `:ctx`.
        let discovery = crate::discovery::Discovery {
            clusters: vec![reader],
            ..Default::default()
        };
        let named = discovery.select("prod").expect("by name");
        assert_eq!(named.talos_context(), Some("prod"), "{named:?}");
    }
}
