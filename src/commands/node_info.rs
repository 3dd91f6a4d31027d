//! `taloscope node info`: what runs inside one node and what it holds, as sections of text or
//! one JSON document (the `node_resources` document's fields). Read-only: `os:reader`
//! suffices.
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use super::exit::{EXIT_BLOCKED, Stop, print_report};
use super::session::{node_named, read_cluster};
use crate::cli::{GlobalArgs, NodeInfoArgs};
use crate::node_resources::text::{self, bytes};
use crate::node_resources::{NodeResources, read_node};

pub(super) fn run(global: &GlobalArgs, args: &NodeInfoArgs) -> Result<ExitCode, Stop> {
    let (_, document) = read_cluster(global, async |_, observer| {
        let id = node_named(&observer.status().await, &args.node)?.identity();
        let span = Duration::from_millis(args.sample_ms);
        read_node(&observer.talos, observer.kube.as_ref(), &id, span)
            .await
            .map_err(|e| Stop(EXIT_BLOCKED, crate::error_chain(&e)))
    })?;
    print_report(args.output, &document, table)?;
    Ok(ExitCode::SUCCESS)
}

/// The document as sections of aligned text.
fn table(d: &NodeResources) -> String {
    let mut out = format!("{}\n", text::heading(d));
    for p in &d.problems {
        let _ = writeln!(out, "  ! {p}");
    }
    for (row, _) in text::overview(d) {
        let _ = writeln!(out, "{row}");
    }
    let _ = writeln!(out, "\nDISKS");
    for disk in &d.disks {
        let _ = writeln!(out, "  {}", text::disk_row(disk));
    }
    let _ = writeln!(out, "\nVOLUMES");
    for v in &d.volumes {
        let _ = writeln!(out, "  {}", text::volume_row(v));
    }
    if !d.ephemeral_directories.is_empty() {
        let _ = writeln!(out, "\nEPHEMERAL USAGE");
        for dir in &d.ephemeral_directories {
            let _ = writeln!(out, "  {}", text::directory_row(dir));
        }
    }
    let _ = writeln!(out, "\nLINKS");
    for l in &d.links {
        let _ = writeln!(out, "  {}", text::link_row(l));
    }
    let _ = writeln!(out, "\nADDRESSES");
    for a in &d.addresses {
        let _ = writeln!(out, "  {}", text::address_row(a));
    }
    let _ = writeln!(out, "\nROUTES   {}", text::routes_summary(&d.routes));
    let _ = writeln!(out, "\nKUBESPAN PEERS");
    if d.kubespan_peers.is_empty() {
        let _ = writeln!(out, "  {}", text::NO_KUBESPAN_PEERS);
    }
    for p in &d.kubespan_peers {
        let _ = writeln!(out, "  {}", text::peer_row(p));
    }
    let _ = writeln!(out, "\nCONNECTIONS");
    for c in &d.connections {
        let _ = writeln!(out, "  {}", text::connection_row(c));
    }
    let _ = writeln!(
        out,
        "\nPROCESSES  {:>6} {:>6} {:>10}  COMMAND",
        "PID", "CPU", "RSS"
    );
    for p in &d.processes {
        let _ = writeln!(
            out,
            "           {:>6} {:>5.1}% {:>10}  {}",
            p.pid,
            p.cpu_percent,
            bytes(p.rss_bytes),
            p.command
        );
    }
    let _ = writeln!(out, "\nCONTAINERS");
    for c in &d.containers {
        let _ = writeln!(out, "  {}", text::container_row(c));
    }
    out.trim_end().to_string() + "\n"
}
