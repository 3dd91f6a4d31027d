//! `taloscope node info`: what runs inside one node and what it holds, as sections of text or
//! one JSON document (the `node_resources` document's fields). Read-only: `os:reader`
//! suffices.
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use super::exit::{EXIT_BLOCKED, Stop, exit_code, print_report};
use super::session::{node_named, read_cluster};
use crate::cli::{GlobalArgs, NodeInfoArgs};
use crate::fleet::ClusterStatus;
use crate::node_resources::{NodeIdentity, NodeResources, read_node};
use crate::printable::bytes_text;

pub fn run(global: &GlobalArgs, args: &NodeInfoArgs) -> ExitCode {
    exit_code(run_inner(global, args))
}

fn run_inner(global: &GlobalArgs, args: &NodeInfoArgs) -> Result<ExitCode, Stop> {
    let (_, document) = read_cluster(global, async |_, observer| {
        let id = node_identity(&observer.status().await, &args.node)?;
        let span = Duration::from_millis(args.sample_ms);
        read_node(&observer.talos, observer.kube.as_ref(), &id, span)
            .await
            .map_err(|e| Stop(EXIT_BLOCKED, crate::error_chain(&e)))
    })?;
    print_report(args.output, &document, table)?;
    Ok(ExitCode::SUCCESS)
}

/// The node `--node` names, as the resource reads name it.
pub(super) fn node_identity(status: &ClusterStatus, wanted: &str) -> Result<NodeIdentity, Stop> {
    let n = node_named(status, wanted)?;
    Ok(NodeIdentity {
        name: n.name.clone(),
        address: n.address.clone(),
        machine_type: n.role.as_str().to_string(),
    })
}

pub(super) fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"))
}

pub(super) fn bytes(value: u64) -> String {
    bytes_text(i64::try_from(value).unwrap_or(i64::MAX))
}

/// The document as sections of aligned text.
fn table(d: &NodeResources) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "NODE {} ({}) {} Talos {}  {}",
        d.node,
        d.address,
        d.machine_type,
        d.talos_version,
        d.level.as_str().to_uppercase()
    );
    for p in &d.problems {
        let _ = writeln!(out, "  ! {p}");
    }
    if let Some(kernel) = &d.kernel_version {
        let _ = writeln!(out, "KERNEL   {kernel}");
    }
    let _ = writeln!(
        out,
        "CPU      {} × {} @ {:.0} MHz, {} busy",
        d.cpu.count,
        d.cpu.model,
        d.cpu.mhz,
        percent(d.cpu.usage_percent)
    );
    let _ = writeln!(
        out,
        "MEMORY   {} of {} used ({}), {} available, pressure {}",
        bytes(d.memory.used_bytes),
        bytes(d.memory.total_bytes),
        percent(d.memory.used_percent),
        bytes(d.memory.available_bytes),
        d.memory.pressure.as_str()
    );
    let _ = writeln!(
        out,
        "LOAD     {:.2} {:.2} {:.2}",
        d.load.load1, d.load.load5, d.load.load15
    );
    let _ = writeln!(
        out,
        "UPTIME   {} (booted {})",
        crate::clock::short_duration(d.uptime_seconds),
        d.boot_time
    );
    let _ = writeln!(out, "\nDISKS");
    for disk in &d.disks {
        let _ = writeln!(
            out,
            "  {:<8} {:>10} {:<16} {:<8} {}{}",
            disk.id,
            bytes(disk.size_bytes),
            disk.model,
            disk.transport,
            disk.serial,
            if disk.system_disk {
                "  (system disk)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(out, "\nVOLUMES");
    for v in &d.volumes {
        let _ = writeln!(
            out,
            "  {:<10} {:<6} {:>10} {:<5} {:<14} {:>7} {}",
            v.id,
            v.phase,
            bytes(v.size_bytes),
            v.filesystem,
            v.mount_point,
            percent(v.used_percent),
            v.level.as_str()
        );
    }
    if !d.ephemeral_directories.is_empty() {
        let _ = writeln!(out, "\nEPHEMERAL USAGE");
        for dir in &d.ephemeral_directories {
            let _ = writeln!(out, "  {:>10}  {}", bytes_text(dir.size_bytes), dir.path);
        }
    }
    let _ = writeln!(out, "\nLINKS");
    for l in &d.links {
        let speed = l
            .speed_mbps
            .map_or_else(|| "-".to_string(), |s| format!("{s} Mb/s"));
        let _ = writeln!(
            out,
            "  {:<10} {:<9} {:<5} mtu {:<6} {:<11} {}",
            l.name,
            l.kind,
            if l.up { "up" } else { "down" },
            l.mtu,
            speed,
            l.hardware_address
        );
    }
    let _ = writeln!(out, "\nADDRESSES");
    for a in &d.addresses {
        let _ = writeln!(out, "  {:<22} {:<8} {}", a.address, a.link, a.scope);
    }
    let _ = writeln!(
        out,
        "\nROUTES   {} (default via {})",
        d.routes.count,
        if d.routes.default_gateways.is_empty() {
            "none".to_string()
        } else {
            d.routes.default_gateways.join(", ")
        }
    );
    let _ = writeln!(out, "\nKUBESPAN PEERS");
    if d.kubespan_peers.is_empty() {
        let _ = writeln!(out, "  none (KubeSpan off, or no peer yet)");
    }
    for p in &d.kubespan_peers {
        let _ = writeln!(out, "  {:<20} {:<22} {}", p.label, p.endpoint, p.state);
    }
    let _ = writeln!(out, "\nCONNECTIONS");
    for c in &d.connections {
        let _ = writeln!(
            out,
            "  {:<4} {:>21} {:>21} {:<12} {}",
            c.protocol,
            format!("{}:{}", c.local_address, c.local_port),
            format!("{}:{}", c.remote_address, c.remote_port),
            c.state,
            c.process
        );
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
        let restarts = c
            .restarts
            .map_or_else(|| "-".to_string(), |r| r.to_string());
        let _ = writeln!(
            out,
            "  {:<12} {:<40} {:<24} {:<8} {:>3} {}",
            c.namespace, c.pod, c.name, c.state, restarts, c.image
        );
    }
    out.trim_end().to_string() + "\n"
}
