//! `taloscope top`: what runs on a cluster's nodes, busiest first: with `--node` that node's
//! processes (CPU % of one CPU over the sample span, RSS), else every node's CPU, memory and
//! fullest volume, the worst level first. Text or JSON (`{"node", "processes"}` or
//! `{"cluster", "nodes"}`). Read-only: `os:reader` suffices.
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::exit::{EXIT_BLOCKED, Stop, print_report, usage};
use super::session::read_cluster;
use crate::cli::{GlobalArgs, TopArgs};
use crate::fleet::{ClusterStatus, NodeStatus};
use crate::node_resources::text::{self, percent};
use crate::node_resources::{
    NodeIdentity, NodeUsage, ProcessUsage, SortKey, read_processes, read_usage, sort_nodes,
};
use crate::upgrade::observe::ClusterObserver;

/// `top --node N --output json`.
#[derive(Serialize)]
struct NodeProcesses {
    node: String,
    address: String,
    sort: &'static str,
    processes: Vec<ProcessUsage>,
}

/// `top --output json`.
#[derive(Serialize)]
struct ClusterUsage {
    cluster: String,
    sort: &'static str,
    nodes: Vec<NodeUsage>,
}

pub(super) fn run(global: &GlobalArgs, args: &TopArgs) -> Result<ExitCode, Stop> {
    let span = Duration::from_millis(args.sample_ms);
    let key = args.sort;
    let sort = match key {
        SortKey::Cpu => "cpu",
        SortKey::Memory => "mem",
    };
    read_cluster(global, async |_, observer| {
        let status = observer.status().await;
        let Some(wanted) = &args.node else {
            let nodes = cluster_usage(&observer, &status, span, key).await;
            let cluster = crate::printable::line(&status.name);
            let report = ClusterUsage {
                cluster,
                sort,
                nodes,
            };
            return print_report(args.read.output, &report, nodes_table);
        };
        let id = status.node_named(wanted).map_err(usage)?.identity();
        let processes = read_processes(&observer.talos, &id, span, key)
            .await
            .map_err(|e| Stop(EXIT_BLOCKED, crate::error_chain(&e)))?;
        let report = NodeProcesses {
            node: id.name,
            address: id.address,
            sort,
            processes,
        };
        print_report(args.read.output, &report, processes_table)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Every node's usage, read at once (as many calls as the client allows), busiest first.
async fn cluster_usage(
    observer: &ClusterObserver,
    status: &ClusterStatus,
    span: Duration,
    key: SortKey,
) -> Vec<NodeUsage> {
    let ids: Vec<NodeIdentity> = (status.nodes.iter())
        .filter(|n| !n.address.is_empty())
        .map(NodeStatus::identity)
        .collect();
    let addresses: Vec<String> = ids.iter().map(|i| i.address.clone()).collect();
    let talos = &observer.talos;
    let concurrency = talos.options().concurrency;
    let read = crate::talos::fan_out(&addresses, concurrency, |address| {
        let id = ids.iter().find(|i| i.address == address).cloned();
        async move { Some(read_usage(talos, &id?, span).await) }
    })
    .await;
    let mut nodes: Vec<NodeUsage> = read.into_iter().filter_map(|(_, u)| u).collect();
    sort_nodes(&mut nodes, key);
    nodes
}

fn processes_table(r: &NodeProcesses) -> String {
    let mut out = format!(
        "NODE {} ({}), by {}\n{}\n",
        r.node,
        r.address,
        r.sort,
        text::process_header()
    );
    for p in &r.processes {
        let _ = writeln!(out, "{}", text::process_row(p));
    }
    out.trim_end().to_string() + "\n"
}

fn nodes_table(r: &ClusterUsage) -> String {
    let mut out = format!(
        "CLUSTER {}, by {}\n{:<16} {:>7} {:>7} {:>7} {:<8}\n",
        r.cluster, r.sort, "NODE", "CPU", "MEM", "DISK", "LEVEL"
    );
    for n in &r.nodes {
        let _ = writeln!(
            out,
            "{:<16} {:>7} {:>7} {:>7} {:<8}{}",
            n.node,
            percent(n.cpu_percent),
            percent(n.memory_percent),
            percent(n.disk_percent),
            n.level.as_str(),
            n.error
                .as_deref()
                .map(|e| format!(" {e}"))
                .unwrap_or_default()
        );
    }
    out.trim_end().to_string() + "\n"
}
