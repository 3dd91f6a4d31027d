//! The scenario file format (YAML, documented on `scenario`): parsing with serde-saphyr and
//! validation into a `Scenario`, every error carrying the line it refers to.
use std::collections::HashMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::scenario::{
    ClusterSpec, DEFAULT_IMAGE_PULL_MS, DEFAULT_KUBERNETES, DEFAULT_TALOS, Faults, NodeRole,
    NodeSpec, OneSpec, Scenario, VmQuotaSpec, control_planes, default_address, parse_loopback,
    parse_version,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileScenario {
    clusters: Vec<FileCluster>,
    #[serde(default)]
    opennebula: Option<FileOne>,
}

/// `opennebula:`: a VM quota on the sim's user and `max_vms` of the new-cluster roles.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOne {
    #[serde(default)]
    user_quota: Option<VmQuotaSpec>,
    #[serde(default)]
    new_cluster_max_vms: std::collections::BTreeMap<String, usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCluster {
    name: Spanned<String>,
    #[serde(default)]
    talos_version: Option<String>,
    #[serde(default)]
    kubernetes_version: Option<String>,
    #[serde(default)]
    expired_client_context: bool,
    #[serde(default)]
    expiring_client_context: bool,
    #[serde(default)]
    talosconfig_nodes: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    etcd: Option<FileEtcd>,
    #[serde(default)]
    removed_api_objects: std::collections::BTreeMap<String, usize>,
    #[serde(default)]
    image_pull_ms: Option<u64>,
    #[serde(default)]
    kube_proxy_disabled: bool,
    #[serde(default)]
    discovery_disabled: bool,
    #[serde(default)]
    kubespan: bool,
    #[serde(default)]
    extra_args: std::collections::BTreeMap<String, super::component_names::ExtraArgs>,
    nodes: Vec<FileNode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEtcd {
    #[serde(default)]
    members: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    leader: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileNode {
    name: Spanned<String>,
    role: NodeRole,
    #[serde(default)]
    address: Option<Spanned<String>>,
    #[serde(default)]
    talos_version: Option<Spanned<String>>,
    #[serde(default)]
    kubernetes_version: Option<String>,
    #[serde(default)]
    faults: Faults,
    #[serde(default)]
    registry_mirrors: std::collections::BTreeMap<String, Vec<String>>,
}

type LineError = (u64, String);

fn line_of<T>(s: &Spanned<T>) -> u64 {
    s.referenced.line()
}

/// Parses and validates scenario YAML; errors carry the 1-based line they refer to (0 if unknown).
pub(crate) fn parse_scenario(name: &str, text: &str) -> Result<Scenario, LineError> {
    let file: FileScenario = serde_saphyr::from_str(text).map_err(|e| {
        let msg = e.to_string();
        (line_in_message(&msg), msg)
    })?;
    if file.clusters.is_empty() {
        return Err((1, "a scenario needs at least one cluster".into()));
    }
    let mut clusters = Vec::with_capacity(file.clusters.len());
    let mut seen_addresses = HashMap::new();
    for (ci, fc) in file.clusters.into_iter().enumerate() {
        let cluster = cluster_from_file(ci, fc)?;
        for spec in &cluster.nodes {
            if let Some(other) = seen_addresses.insert(spec.address, spec.name.clone()) {
                return Err((
                    0,
                    format!(
                        "address {} of node {} in cluster {} is already used by node {other}",
                        spec.address, spec.name, cluster.name
                    ),
                ));
            }
        }
        if clusters
            .iter()
            .any(|c: &ClusterSpec| c.name == cluster.name)
        {
            return Err((0, format!("cluster name {} is used twice", cluster.name)));
        }
        clusters.push(cluster);
    }
    let opennebula = file
        .opennebula
        .map_or_else(OneSpec::default, |one| OneSpec {
            user_quota: one.user_quota,
            new_cluster_max_vms: one.new_cluster_max_vms.into_iter().collect(),
        });
    Ok(Scenario {
        name: name.to_string(),
        clusters,
        capi: None,
        opennebula,
    })
}

fn cluster_from_file(ci: usize, fc: FileCluster) -> Result<ClusterSpec, LineError> {
    let cluster_name = fc.name.value.trim().to_string();
    if cluster_name.is_empty() {
        return Err((line_of(&fc.name), "cluster name is empty".into()));
    }
    let talos = fc.talos_version.unwrap_or_else(|| DEFAULT_TALOS.into());
    let kube = fc
        .kubernetes_version
        .unwrap_or_else(|| DEFAULT_KUBERNETES.into());
    if fc.nodes.is_empty() {
        return Err((
            line_of(&fc.name),
            format!("cluster {cluster_name} has no nodes"),
        ));
    }
    if let Some(unknown) = fc
        .extra_args
        .keys()
        .find(|c| super::component_names::section_key(c).is_none())
    {
        return Err((
            line_of(&fc.name),
            format!(
                "cluster {cluster_name}: extra_args names {unknown:?}; expected kube-apiserver, kube-controller-manager, kube-scheduler or kubelet"
            ),
        ));
    }
    let mut nodes: Vec<NodeSpec> = Vec::with_capacity(fc.nodes.len());
    for (ni, fnode) in fc.nodes.into_iter().enumerate() {
        let name = fnode.name.value.trim().to_string();
        if name.is_empty() || nodes.iter().any(|n| n.name == name) {
            return Err((
                line_of(&fnode.name),
                format!("node name {name:?} is empty or used twice in cluster {cluster_name}"),
            ));
        }
        let address = match &fnode.address {
            Some(a) => parse_loopback(&a.value).map_err(|m| (line_of(a), m))?,
            None if ci < 256 && ni < 255 => default_address(ci, ni),
            None => {
                return Err((
                    line_of(&fnode.name),
                    format!(
                        "node {name} needs an address: default addresses cover 255 nodes in each of 256 clusters"
                    ),
                ));
            }
        };
        let talos_version = match &fnode.talos_version {
            Some(v) => {
                parse_version(&v.value).ok_or_else(|| {
                    (
                        line_of(v),
                        format!("talos_version {:?} is not like v1.11.3", v.value),
                    )
                })?;
                v.value.clone()
            }
            None => talos.clone(),
        };
        nodes.push(NodeSpec {
            name,
            role: fnode.role,
            address,
            talos_version,
            kubernetes_version: fnode.kubernetes_version.unwrap_or_else(|| kube.clone()),
            faults: fnode.faults,
            extra_args: fc.extra_args.clone(),
            registry_mirrors: fnode.registry_mirrors,
        });
    }
    let (members, leader) = match fc.etcd {
        None => {
            let m = control_planes(&nodes);
            (m.clone(), m.first().copied())
        }
        Some(etcd) => {
            let members = match etcd.members {
                None => control_planes(&nodes),
                Some(list) => {
                    let mut out = Vec::new();
                    for m in list {
                        let i = find_control_plane(&nodes, &m, &cluster_name)?;
                        out.push(i);
                    }
                    out
                }
            };
            let leader = match etcd.leader {
                None => members.first().copied(),
                Some(l) => {
                    let i = find_control_plane(&nodes, &l, &cluster_name)?;
                    if !members.contains(&i) {
                        return Err((
                            line_of(&l),
                            format!("etcd leader {} is not an etcd member", l.value),
                        ));
                    }
                    Some(i)
                }
            };
            (members, leader)
        }
    };
    let talosconfig_nodes = match fc.talosconfig_nodes {
        None => None,
        Some(names) => {
            let mut out = Vec::new();
            for n in names {
                let i = nodes
                    .iter()
                    .position(|s| s.name == n.value.trim())
                    .ok_or_else(|| {
                        (
                            line_of(&n),
                            format!(
                                "talosconfig_nodes: no node {} in cluster {cluster_name}",
                                n.value
                            ),
                        )
                    })?;
                out.push(i);
            }
            Some(out)
        }
    };
    Ok(ClusterSpec {
        talosconfig_nodes,
        name: cluster_name,
        nodes,
        etcd_members: members,
        etcd_leader: leader,
        expired_client_context: fc.expired_client_context,
        expiring_client_context: fc.expiring_client_context,
        removed_api_objects: fc.removed_api_objects.into_iter().collect(),
        oneflow_max_vms: Vec::new(),
        image_pull_ms: fc.image_pull_ms.unwrap_or(DEFAULT_IMAGE_PULL_MS),
        kube_proxy_disabled: fc.kube_proxy_disabled,
        discovery_disabled: fc.discovery_disabled,
        kubespan: fc.kubespan,
    })
}

fn find_control_plane(
    nodes: &[NodeSpec],
    name: &Spanned<String>,
    cluster: &str,
) -> Result<usize, LineError> {
    nodes
        .iter()
        .position(|n| n.name == name.value && n.role == NodeRole::ControlPlane)
        .ok_or_else(|| {
            (
                line_of(name),
                format!(
                    "etcd member {} is not a control plane node of cluster {cluster}",
                    name.value
                ),
            )
        })
}

fn line_in_message(msg: &str) -> u64 {
    // serde-saphyr messages say "... at line N column M".
    msg.split("line ")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn file_format_parses_with_defaults() {
        let text = "clusters:\n  - name: lab\n    etcd:\n      leader: cp-2\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: cp-2\n        role: controlplane\n        talos_version: v1.13.0\n      - name: w-1\n        role: worker\n        faults:\n          slow_ms: 50\n";
        let s = parse_scenario("lab", text).expect("parses");
        let c = &s.clusters[0];
        assert_eq!(c.etcd_members, vec![0, 1]);
        assert_eq!(c.etcd_leader, Some(1));
        assert_eq!(c.nodes[1].talos_version, "v1.13.0");
        assert_eq!(c.nodes[2].faults.slow_ms, 50);
        assert_eq!(c.nodes[2].address, Ipv4Addr::new(127, 10, 0, 3));
        assert!(!c.discovery_disabled);
        let off = text.replace("    etcd:", "    discovery_disabled: true\n    etcd:");
        let s = parse_scenario("lab", &off).expect("parses");
        assert!(s.clusters[0].discovery_disabled);
    }

    #[test]
    fn a_nodes_registry_mirrors_land_in_its_spec_only() {
        let text = "clusters:\n  - name: lab\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n        registry_mirrors:\n          ghcr.io: [https://127.0.0.1:5443]\n";
        let s = parse_scenario("lab", text).expect("parses");
        let nodes = &s.clusters[0].nodes;
        assert!(nodes[0].registry_mirrors.is_empty());
        assert_eq!(
            nodes[1].registry_mirrors.get("ghcr.io"),
            Some(&vec!["https://127.0.0.1:5443".to_string()])
        );
    }

    #[test]
    fn an_opennebula_quota_and_new_cluster_max_vms_are_read() {
        let text = "opennebula:\n  user_quota: {vms: 8, memory_mb: 32768}\n  new_cluster_max_vms: {worker: 1}\nclusters:\n  - name: lab\n    nodes:\n      - name: cp-1\n        role: controlplane\n";
        let s = parse_scenario("lab", text).expect("parses");
        let quota = s.opennebula.user_quota.expect("a quota");
        assert_eq!(
            (quota.vms, quota.cpu, quota.memory_mb),
            (Some(8), None, Some(32768))
        );
        assert_eq!(
            s.opennebula.new_cluster_max_vms,
            [("worker".to_string(), 1)]
        );
        let bad = text.replace("vms: 8", "disks: 8");
        assert!(parse_scenario("lab", &bad).is_err());
    }

    #[test]
    fn non_loopback_address_is_refused_with_its_line() {
        let text = "clusters:\n  - name: lab\n    nodes:\n      - name: cp-1\n        role: controlplane\n        address: 10.0.0.1\n";
        let (line, msg) = parse_scenario("lab", text).expect_err("refused");
        assert_eq!(line, 6);
        assert!(msg.contains("outside 127.0.0.0/8"), "{msg}");
    }

    #[test]
    fn unknown_field_is_an_error() {
        let text = "clusters:\n  - name: lab\n    nodes:\n      - name: cp-1\n        role: controlplane\n        colour: red\n";
        let (_, msg) = parse_scenario("lab", text).expect_err("refused");
        assert!(msg.contains("colour"), "{msg}");
    }

    #[test]
    fn more_than_255_nodes_need_explicit_addresses() {
        let mut text = String::from("clusters:\n  - name: big\n    nodes:\n");
        for i in 0..256 {
            text.push_str(&format!("      - name: n-{i}\n        role: worker\n"));
        }
        let (line, msg) = parse_scenario("big", &text).expect_err("refused");
        assert!(msg.contains("n-255 needs an address"), "{msg}");
        assert_eq!(line, 4 + 255 * 2);
    }
}
