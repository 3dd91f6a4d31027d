//! `taloscope status`: discovery, then one-shot status of every cluster with a
//! talosconfig context (or the one named by --context), collected concurrently
//! and printed as a table or as the JSON contract, all within one deadline
//! (`--timeout`). Exit 0/1/2: all answered / some nodes or a Kubernetes API
//! did not / configuration error. A node only the talosconfig still names (no
//! longer an etcd member nor a Kubernetes node) is listed as not a member and
//! does not fail it.
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::{GlobalArgs, OutputFormat};
use crate::discovery::{Cluster, Discovery};
use crate::fleet::kubernetes::unusable_kube_context;
use crate::fleet::problems::{ProblemsByNode, Readings, Severity, cluster_problems};
use crate::fleet::{
    ClusterStatus, CollectOptions, FleetStatus, NodeStatus, apply_kubernetes, collect_discovered,
};
use crate::kube::KubeError;
use crate::paths::Paths;
use crate::printable::{self, table, yes_no};

use super::exit::{EXIT_BLOCKED, EXIT_USAGE, Stop, print_report, usage};

pub(super) fn run(
    global: &GlobalArgs,
    output: OutputFormat,
    deadline: Duration,
) -> Result<ExitCode, Stop> {
    let discovery =
        super::session::discovered(global, &Paths::resolve(global.state_dir.as_deref()));
    let selected = select(&discovery, global.context.as_deref());
    let warning = if selected.is_ok() { "warning: " } else { "" };
    for err in &discovery.errors {
        eprintln!("taloscope: {warning}{}", printable::line(&err.to_string()));
    }
    let clusters = selected?;
    let runtime = super::command_runtime()?;
    let options = CollectOptions::default();
    let kubeconfig = discovery.kubeconfig.clone().map(std::sync::Arc::new);
    let mut fleet = runtime.block_on(async {
        let asks = clusters
            .iter()
            .map(|c| cluster_status(c, kubeconfig.clone(), options, deadline));
        FleetStatus {
            clusters: futures::future::join_all(asks).await,
        }
    });
    // Whatever still runs (a kube exec plugin, a dial) is dropped, not awaited.
    runtime.shutdown_background();
    let code = exit_code(&fleet);
    fleet.clusters.iter_mut().for_each(name_total_failure);
    print_report(output, &fleet, fleet_table)?;
    Ok(code)
}

/// One cluster's status through the collector the console uses, cut off at
/// `deadline`: a cluster that has not answered by then is reported as such.
async fn cluster_status(
    c: &Cluster,
    kubeconfig: Option<std::sync::Arc<kube::config::Kubeconfig>>,
    options: CollectOptions,
    deadline: Duration,
) -> ClusterStatus {
    match tokio::time::timeout(deadline, collect_discovered(c, kubeconfig, options)).await {
        Ok(status) => status,
        Err(_) => unanswered_within(c, deadline),
    }
}

/// What `status` reports for a cluster whose round outlived `--timeout`: each
/// named node and the Kubernetes side failed with the bound named.
fn unanswered_within(c: &Cluster, deadline: Duration) -> ClusterStatus {
    let late = format!("no complete answer within the --timeout of {deadline:?}");
    let nodes = c.talos.as_ref().map_or_else(Vec::new, |ctx| {
        ctx.nodes
            .iter()
            .map(|n| NodeStatus::failed(n, format!("context {:?}: {late}", ctx.name)))
            .collect()
    });
    let mut status = ClusterStatus {
        name: c.name.clone(),
        nodes,
        ..Default::default()
    };
    if let Some(k) = &c.kube {
        let err = KubeError::Unreachable {
            context: k.name.clone(),
            message: late,
        };
        apply_kubernetes(&mut status, unusable_kube_context(&err));
    }
    status
}

/// A cluster none of whose nodes answered says so itself, with the first
/// node's error, instead of leaving `error` empty.
fn name_total_failure(c: &mut ClusterStatus) {
    if c.error.is_some() {
        return;
    }
    let mut errors = c.nodes.iter().map(|n| n.error.as_deref());
    if let Some(Some(first)) = errors.next()
        && errors.all(|e| e.is_some())
    {
        c.error = Some(format!("every node failed: {first}"));
    }
}

/// The clusters to ask: the one named (by cluster name, or by any of its contexts, which it
/// then uses), or every cluster that has a talosconfig context.
fn select(discovery: &Discovery, wanted: Option<&str>) -> Result<Vec<Cluster>, Stop> {
    match wanted {
        Some(name) => Ok(vec![super::session::select(
            discovery,
            name,
            "status needs the Talos API",
        )?]),
        None => {
            let with_talos: Vec<Cluster> = (discovery.clusters.iter())
                .filter(|c| c.talos.is_some())
                .cloned()
                .collect();
            if with_talos.is_empty() {
                return Err(usage(
                    "no talosconfig context found; pass --talosconfig FILE or set TALOSCONFIG",
                ));
            }
            Ok(with_talos)
        }
    }
}

fn exit_code(fleet: &FleetStatus) -> ExitCode {
    let kube_failed = fleet
        .clusters
        .iter()
        .any(|c| c.kubernetes.as_ref().is_some_and(|k| k.error.is_some()));
    if fleet.clusters.iter().any(|c| c.error.is_some()) {
        ExitCode::from(EXIT_USAGE)
    } else if fleet.every_node_answered() && !kube_failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BLOCKED)
    }
}

fn fleet_table(fleet: &FleetStatus) -> String {
    let mut out = String::new();
    for (i, c) in fleet.clusters.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let reach = if c.reachable {
            "reachable"
        } else {
            "UNREACHABLE"
        };
        out.push_str(&format!("CLUSTER {}  ({reach}, role {})\n", c.name, c.role));
        if let Some(err) = &c.error {
            out.push_str(&format!("  error: {err}\n"));
            if let Some(k) = &c.kubernetes {
                out.push_str(&kubernetes_lines(k));
            }
            continue;
        }
        let problems = cluster_problems(c, Readings::default(), &|_| None);
        let problems = ProblemsByNode::new(&problems);
        let rows = c.nodes.iter().map(|n| {
            // Most severe first, in the console's order; what a node waits for with its reason.
            let problem = problems
                .of(n)
                .iter()
                .map(|p| match p.severity {
                    Severity::NotReady if !n.unmet_conditions.is_empty() => n
                        .unmet_conditions
                        .iter()
                        .map(|u| format!("{}: {}", u.name, u.reason))
                        .collect::<Vec<_>>()
                        .join("; "),
                    _ => p.on_node.clone(),
                })
                .collect::<Vec<_>>()
                .join("; ");
            vec![
                n.name.clone(),
                n.address.clone(),
                n.role.as_str().to_string(),
                n.talos_version.clone().unwrap_or_else(|| "-".into()),
                n.stage.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
                if n.not_a_member {
                    "not a member".into()
                } else if n.error.is_some() {
                    "-".into()
                } else {
                    yes_no(n.ready).into()
                },
                n.kubelet_version.clone().unwrap_or_else(|| "-".into()),
                match (n.k8s_ready, n.cordoned) {
                    (None, _) => "-".into(),
                    (Some(ready), Some(true)) => {
                        format!("{},cordoned", if ready { "Ready" } else { "NotReady" })
                    }
                    (Some(ready), _) => (if ready { "Ready" } else { "NotReady" }).into(),
                },
                problem,
            ]
        });
        let header = [
            "NODE", "ADDRESS", "ROLE", "TALOS", "STAGE", "READY", "KUBELET", "K8S", "PROBLEM",
        ];
        out.push_str(&table(&header, rows));
        let q = &c.etcd.quorum;
        let leader = c
            .etcd
            .leader()
            .map(|m| m.hostname.as_str())
            .unwrap_or("none");
        out.push_str(&format!(
            "\netcd: {} member{}, {} healthy, quorum needs {}, tolerates {} more failure{}; leader {leader}\n",
            q.members,
            if q.members == 1 { "" } else { "s" },
            q.healthy,
            q.needed,
            q.tolerates,
            if q.tolerates == 1 { "" } else { "s" },
        ));
        if !c.etcd.members.is_empty() {
            let rows = c.etcd.members.iter().map(|m| {
                let learner = if m.is_learner { " (learner)" } else { "" };
                vec![
                    m.id.clone(),
                    format!("{}{learner}", m.hostname),
                    if m.leader { "*".into() } else { String::new() },
                    yes_no(m.healthy).into(),
                    m.db_size
                        .map(printable::bytes_text)
                        .unwrap_or_else(|| "-".into()),
                    m.raft_term
                        .map(|t| t.to_string())
                        .unwrap_or_else(|| "-".into()),
                    m.errors.join("; "),
                ]
            });
            let header = [
                "MEMBER", "HOSTNAME", "LEADER", "HEALTHY", "DB SIZE", "TERM", "ERRORS",
            ];
            out.push_str(&table(&header, rows));
        }
        for a in &c.etcd.alarms {
            let who = a.hostname.as_deref().unwrap_or(&a.member_id);
            out.push_str(&format!("ALARM {} on {who} ({})\n", a.alarm, a.member_id));
        }
        if let Some(k) = &c.kubernetes {
            out.push_str(&kubernetes_lines(k));
        }
    }
    out
}

fn kubernetes_lines(k: &crate::fleet::KubernetesReport) -> String {
    let mut out = format!(
        "\nkubernetes: API server {}",
        k.server_version.as_deref().unwrap_or("unknown")
    );
    if let Some(proxy) = &k.kube_proxy_version {
        out.push_str(&format!(", kube-proxy {proxy}"));
    }
    out.push('\n');
    if let Some(err) = &k.error {
        out.push_str(&format!("  error: {err}\n"));
    }
    if !k.components.is_empty() {
        let rows = k.components.iter().map(|comp| {
            vec![
                comp.node.clone(),
                comp.name.clone(),
                comp.version.clone(),
                yes_no(comp.ready).into(),
            ]
        });
        out.push_str(&table(&["NODE", "COMPONENT", "VERSION", "READY"], rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{ClusterStatus, NodeRole, NodeStatus, Quorum};

    #[test]
    fn table_names_unreachable_nodes_and_quorum() {
        let mut c = ClusterStatus {
            name: "lab".into(),
            reachable: true,
            role: "os:admin".into(),
            ..Default::default()
        };
        c.nodes.push(NodeStatus {
            name: "cp-2".into(),
            address: "127.10.0.3".into(),
            role: NodeRole::Controlplane,
            error: Some("node 127.10.0.3 is unreachable: down".into()),
            ..Default::default()
        });
        c.etcd.quorum = Quorum::from_counts(3, 2);
        let fleet = FleetStatus { clusters: vec![c] };
        let text = fleet_table(&fleet);
        assert!(text.contains("cp-2  127.10.0.3  controlplane"), "{text}");
        assert!(text.contains("unreachable: down"), "{text}");
        assert!(text.contains("tolerates 0 more failures"), "{text}");
        assert_eq!(exit_code(&fleet), ExitCode::from(EXIT_BLOCKED));
    }

    #[test]
    fn a_node_no_longer_a_member_is_listed_as_such_and_does_not_fail() {
        let mut c = ClusterStatus {
            name: "capi-work".into(),
            reachable: true,
            ..Default::default()
        };
        c.nodes.push(NodeStatus {
            name: "127.10.5.9".into(),
            address: "127.10.5.9".into(),
            error: Some("node 127.10.5.9 is unreachable: connection refused".into()),
            not_a_member: true,
            ..Default::default()
        });
        let fleet = FleetStatus { clusters: vec![c] };
        let text = fleet_table(&fleet);
        let row = text
            .lines()
            .find(|l| l.starts_with("127.10.5.9"))
            .expect("the node's row");
        assert!(row.contains("not a member"), "{text}");
        assert!(!row.contains("DOWN"), "{text}");
        assert_eq!(exit_code(&fleet), ExitCode::SUCCESS);
    }

    #[test]
    fn an_unusable_context_is_a_configuration_error() {
        let fleet = FleetStatus {
            clusters: vec![ClusterStatus {
                name: "lab".into(),
                error: Some("context \"lab\": TLS: the client certificate expired".into()),
                ..Default::default()
            }],
        };
        assert_eq!(exit_code(&fleet), ExitCode::from(EXIT_USAGE));
        assert!(fleet_table(&fleet).contains("certificate expired"));
        let all_fine = FleetStatus {
            clusters: vec![ClusterStatus::default()],
        };
        assert_eq!(exit_code(&all_fine), ExitCode::SUCCESS);
    }

    #[test]
    fn unknown_context_is_a_configuration_error() {
        let Err(Stop(code, err)) = select(&Discovery::default(), Some("nope")) else {
            panic!("unknown")
        };
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("\"nope\""), "{err}");
        assert!(select(&Discovery::default(), None).is_err());
    }
}
