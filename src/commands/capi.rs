//! `taloscope capi status`: the workload clusters one management cluster (--context) owns,
//! as `clusterctl describe cluster` shows them, with the discovered context each one is.
//! The rows are the console's CAPI pane's (`capi::tree_rows`). Exit 0 / 1 / 2.
use std::collections::BTreeMap;
use std::process::ExitCode;

use serde::Serialize;

use super::exit::{EXIT_BLOCKED, Stop, print_report, usage};
use super::session::{context, discover_all, named};
use crate::capi::{
    self, CapiOwner, ClusterTree, Management, ManagementError, TREE_HEADER, pair_workloads,
    tree_rows, trees_named,
};
use crate::cli::{CapiStatusArgs, GlobalArgs};
use crate::discovery::Discovery;

/// One workload cluster in `--output json`: its tree and the discovered cluster it is.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClusterReport<'a> {
    #[serde(flatten)]
    tree: &'a ClusterTree,
    /// The discovered cluster (talos and kube contexts) this workload cluster is, if any.
    paired_with: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusReport<'a> {
    management: &'a str,
    /// `cluster.x-k8s.io/v1beta2` or `/v1beta1`, as read.
    api_version: String,
    clusters: Vec<ClusterReport<'a>>,
    /// Lists cut at the read bound: the counts may be incomplete.
    truncated: &'a [String],
}

pub(super) fn run(global: &GlobalArgs, args: &CapiStatusArgs) -> Result<ExitCode, Stop> {
    let wanted = context(global, "name the management cluster with --context")?;
    let (_, discovery) = discover_all(global);
    let context = management_context(&discovery, wanted)?;
    let management = read_management(&discovery, &context)?;
    let trees =
        trees_named(management.trees(), args.cluster.as_deref(), &context).map_err(usage)?;
    let paired: BTreeMap<CapiOwner, String> =
        pair_workloads(&management.workloads, &discovery.clusters)
            .into_iter()
            .map(|(cluster, owner)| (owner, cluster))
            .collect();
    let paired_with = |t: &ClusterTree| paired.get(&t.owner()).map(String::as_str);
    let report = StatusReport {
        management: &management.context,
        api_version: api_version(&management),
        clusters: (trees.iter())
            .map(|tree| ClusterReport {
                tree,
                paired_with: paired_with(tree),
            })
            .collect(),
        truncated: &management.objects.truncated,
    };
    print_report(args.read.output, &report, |r| {
        table(&management, &r.clusters)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The kube context `--context` names: a kube context, or the cluster whose kube context it is.
fn management_context(discovery: &Discovery, wanted: &str) -> Result<String, Stop> {
    let cluster = named(discovery, wanted)?;
    cluster.kube_context().map(str::to_string).ok_or_else(|| {
        usage(format!(
            "{wanted} has no kube context: a management cluster is read through the Kubernetes API"
        ))
    })
}

fn read_management(discovery: &Discovery, context: &str) -> Result<Management, Stop> {
    let Some(kubeconfig) = discovery.kubeconfig.as_ref() else {
        return Err(usage("no kubeconfig was read; name one with --kubeconfig"));
    };
    let read = capi::read_management(kubeconfig, &discovery.clusters, context);
    super::command_runtime()?
        .block_on(read)
        .map_err(|e| match e {
            ManagementError::NotManagement { .. } => usage(e.to_string()),
            ManagementError::Unread(e) => Stop(EXIT_BLOCKED, e),
        })
}

fn api_version(m: &Management) -> String {
    let version = m.objects.version.map_or("?", |v| v.as_str());
    format!("{}/{version}", crate::kube::CAPI_GROUP)
}

fn table(m: &Management, clusters: &[ClusterReport]) -> String {
    let mut out = format!("Cluster API of {} ({})\n", m.context, api_version(m));
    if clusters.is_empty() {
        out.push_str("no workload clusters\n");
    }
    for path in &m.objects.truncated {
        out.push_str(&format!(
            "warning: {path} was cut at the read bound; counts may be incomplete\n"
        ));
    }
    let now = crate::clock::unix_now();
    for ClusterReport { tree, paired_with } in clusters {
        let context = paired_with.unwrap_or("no discovered context");
        out.push_str(&format!(
            "\n{}/{}  endpoint {}  context {context}\n",
            tree.namespace,
            tree.cluster,
            tree.endpoint_text(),
        ));
        out.push_str(&tree_table(tree, now));
    }
    out
}

/// The tree's rows in columns, each followed by its conditions that need attention.
fn tree_table(tree: &ClusterTree, now: u64) -> String {
    let rows = tree_rows(tree);
    let cells = rows.iter().map(|r| r.cells(true).to_vec());
    let text = crate::printable::table(&TREE_HEADER, cells);
    let mut lines = text.lines();
    let mut out = String::new();
    if let Some(header) = lines.next() {
        out.push_str(header);
        out.push('\n');
    }
    for (row, line) in rows.iter().zip(lines) {
        out.push_str(line);
        out.push('\n');
        for attention in row.attention_lines(now, true, "!") {
            out.push_str(&attention);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::tree_tests::fixture_tree;
    use crate::kube::CapiVersion;

    /// 2026-12-01T12:00:00Z: ten minutes after the fixtures' last transitions.
    const NOW: u64 = 1_796_126_400;

    #[test]
    fn the_table_is_the_trees_rows_with_their_conditions() {
        let v1 = tree_table(&fixture_tree(CapiVersion::V1beta1), NOW);
        let v2 = tree_table(&fixture_tree(CapiVersion::V1beta2), NOW);
        assert_eq!(v1, v2);
        insta::assert_snapshot!(v2);
    }

    #[test]
    fn the_json_names_are_the_contract() {
        let tree = fixture_tree(CapiVersion::V1beta2);
        let report = ClusterReport {
            tree: &tree,
            paired_with: Some("workload"),
        };
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["cluster"], "workload");
        assert_eq!(json["namespace"], "clusters");
        assert_eq!(json["pairedWith"], "workload");
        let cp = &json["controlPlane"];
        for (field, want) in [
            ("replicas", 3),
            ("ready", 3),
            ("upToDate", 2),
            ("available", 3),
        ] {
            assert_eq!(cp[field], want, "controlPlane.{field}");
        }
        assert_eq!(cp["version"], "v1.34.1");
        let md = &json["machineDeployments"][0];
        assert_eq!(
            (md["replicas"].as_u64(), md["ready"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(
            md["machineSets"][0]["machines"].as_array().map(Vec::len),
            Some(2)
        );
        let machine = &json["machines"][0];
        assert_eq!(machine["name"], "workload-cp-a");
        assert_eq!(machine["node"], "cp-a");
        assert_eq!(machine["role"], "controlplane");
        assert_eq!(machine["upToDate"], true);
        let condition = &json["conditions"][0];
        assert!(condition["type"].is_string() && condition["lastTransitionTime"].is_string());
    }
}
