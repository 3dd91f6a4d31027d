//! `taloscope node info`: what runs inside one node and what it holds, as sections of text or
//! one JSON document (the `node_resources` document's fields). Read-only: `os:reader`
//! suffices.
use std::process::ExitCode;
use std::time::Duration;

use super::exit::usage;
use super::exit::{EXIT_BLOCKED, Stop, print_report};
use super::session::read_cluster;
use crate::cli::{GlobalArgs, NodeInfoArgs};
use crate::node_resources::text::{self, bytes};
use crate::node_resources::{NodeResources, read_node};

pub(super) fn run(global: &GlobalArgs, args: &NodeInfoArgs) -> Result<ExitCode, Stop> {
    let (_, document) = read_cluster(global, async |_, observer| {
        let status = observer.status().await;
        let id = status.node_named(&args.node).map_err(usage)?.identity();
        let span = Duration::from_millis(args.sample_ms);
        read_node(&observer.talos, observer.kube.as_ref(), &id, span)
            .await
            .map_err(|e| Stop(EXIT_BLOCKED, crate::error_chain(&e)))
    })?;
    print_report(args.read.output, &document, table)?;
    Ok(ExitCode::SUCCESS)
}

/// The document as sections of aligned text: the resources screen's sections, and every
/// connection, process and container.
fn table(d: &NodeResources) -> String {
    let mut lines = text::overview_lines(d);
    text::disks_and_volumes(&mut lines, d);
    if !d.ephemeral_directories.is_empty() {
        text::ephemeral(&mut lines, d);
    }
    text::links_and_addresses(&mut lines, d);
    let routes = format!("ROUTES   {}", text::routes_summary(&d.routes));
    text::section(&mut lines, &routes, Vec::new());
    text::kubespan_peers(&mut lines, d);
    let rows = |rows: Vec<String>| rows.into_iter().map(text::plain).collect();
    let connections = d.connections.iter().map(text::connection_row);
    text::section(&mut lines, "CONNECTIONS", rows(connections.collect()));
    let head = format!(
        "PROCESSES  {:>6} {:>6} {:>10}  COMMAND",
        "PID", "CPU", "RSS"
    );
    let processes = d.processes.iter().map(|p| {
        let (pid, cpu, rss) = (p.pid, p.cpu_percent, bytes(p.rss_bytes));
        format!("         {pid:>6} {cpu:>5.1}% {rss:>10}  {}", p.command)
    });
    text::section(&mut lines, &head, rows(processes.collect()));
    let containers = d.containers.iter().map(text::container_row);
    text::section(&mut lines, "CONTAINERS", rows(containers.collect()));
    let out: String = lines.into_iter().map(|(line, _)| line + "\n").collect();
    out.trim_end().to_string() + "\n"
}
