//! The document's figures as the operator reads them, the same words in `node info`'s table
//! and the console's resources screen: the overview lines (CPU, memory, load, uptime), one
//! row per disk, volume, directory filling EPHEMERAL, link, address, route, KubeSpan peer,
//! connection and container, each with the level it stands at, and `top`'s process rows.
use super::document::*;
use super::usage::Level;
use crate::printable::bytes_text;

/// What the KubeSpan section says without peers.
pub const NO_KUBESPAN_PEERS: &str = "none (KubeSpan off, or no peer yet)";

/// `12.5%`, `-` when unknown.
pub fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"))
}

pub fn bytes(value: u64) -> String {
    bytes_text(i64::try_from(value).unwrap_or(i64::MAX))
}

/// `NODE w-1 (10.5.0.3) worker Talos v1.12.0  FAILING`.
pub fn heading(d: &NodeResources) -> String {
    format!(
        "NODE {} ({}) {} Talos {}  {}",
        d.node,
        d.address,
        d.machine_type,
        d.talos_version,
        d.level.as_str().to_uppercase()
    )
}

/// The kernel (when Kubernetes named it), CPU, memory (at its pressure), load and uptime.
pub fn overview(d: &NodeResources) -> Vec<(String, Level)> {
    let mut rows = Vec::new();
    if let Some(kernel) = &d.kernel_version {
        rows.push((format!("KERNEL   {kernel}"), Level::Ok));
    }
    let cpu = format!(
        "CPU      {} x {} @ {:.0} MHz, {} busy",
        d.cpu.count,
        d.cpu.model,
        d.cpu.mhz,
        percent(d.cpu.usage_percent)
    );
    let memory = format!(
        "MEMORY   {} of {} used ({}), {} available, pressure {}",
        bytes(d.memory.used_bytes),
        bytes(d.memory.total_bytes),
        percent(d.memory.used_percent),
        bytes(d.memory.available_bytes),
        d.memory.pressure.as_str()
    );
    let load = format!(
        "LOAD     {:.2} {:.2} {:.2}",
        d.load.load1, d.load.load5, d.load.load15
    );
    let uptime = format!(
        "UPTIME   {} (booted {})",
        crate::clock::short_duration(d.uptime_seconds),
        d.boot_time
    );
    rows.push((cpu, Level::Ok));
    rows.push((memory, d.memory.pressure));
    rows.push((load, Level::Ok));
    rows.push((uptime, Level::Ok));
    rows
}

pub fn disk_row(disk: &Disk) -> String {
    format!(
        "{:<8} {:>10} {:<16} {:<8} {}{}",
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
    )
}

pub fn volume_row(v: &Volume) -> String {
    format!(
        "{:<10} {:<6} {:>10} {:<5} {:<14} {:>7} {}",
        v.id,
        v.phase,
        bytes(v.size_bytes),
        v.filesystem,
        v.mount_point,
        percent(v.used_percent),
        v.level.as_str()
    )
}

pub fn link_row(l: &Link) -> String {
    let speed = l
        .speed_mbps
        .map_or_else(|| "-".to_string(), |s| format!("{s} Mb/s"));
    format!(
        "{:<10} {:<9} {:<5} mtu {:<6} {:<11} {}",
        l.name,
        l.kind,
        if l.up { "up" } else { "down" },
        l.mtu,
        speed,
        l.hardware_address
    )
}

pub fn address_row(a: &Address) -> String {
    format!("{:<22} {:<8} {}", a.address, a.link, a.scope)
}

/// `3 (default via 10.5.0.1)`.
pub fn routes_summary(r: &RoutesSummary) -> String {
    let via = if r.default_gateways.is_empty() {
        "none".to_string()
    } else {
        r.default_gateways.join(", ")
    };
    format!("{} (default via {via})", r.count)
}

/// The processes' column heads, over [`process_row`]s.
pub fn process_header() -> String {
    format!(
        "{:>7} {:>7} {:>6} {:>10} {:<3} COMMAND",
        "PID", "PPID", "CPU", "RSS", "S"
    )
}

/// One process as `top` lists it: its command line, else its command.
pub fn process_row(p: &ProcessUsage) -> String {
    format!(
        "{:>7} {:>7} {:>5.1}% {:>10} {:<3} {}",
        p.pid,
        p.ppid,
        p.cpu_percent,
        bytes(p.rss_bytes),
        p.state,
        if p.args.is_empty() {
            &p.command
        } else {
            &p.args
        }
    )
}

/// A directory under `/var` and how much it holds.
pub fn directory_row(d: &DirectorySize) -> String {
    format!("{:>10}  {}", bytes_text(d.size_bytes), d.path)
}

/// `default via 10.5.0.1 dev eth0` or `10.244.0.0/16 dev cni0`, with its table and priority.
pub fn route_row(r: &Route) -> String {
    let destination = if r.destination.is_empty() {
        "default"
    } else {
        &r.destination
    };
    let via = if r.gateway.is_empty() {
        String::new()
    } else {
        format!(" via {}", r.gateway)
    };
    format!(
        "{destination}{via} dev {} table {} priority {}",
        r.link, r.table, r.priority
    )
}

pub fn peer_row(p: &KubeSpanPeer) -> String {
    format!("{:<20} {:<22} {}", p.label, p.endpoint, p.state)
}

/// The connections' column heads, over [`connection_row`]s.
pub fn connection_header() -> String {
    format!(
        "{:<4} {:>21} {:>21} {:<12} PROCESS",
        "PROT", "LOCAL", "REMOTE", "STATE"
    )
}

pub fn connection_row(c: &Connection) -> String {
    format!(
        "{:<4} {:>21} {:>21} {:<12} {}",
        c.protocol,
        format!("{}:{}", c.local_address, c.local_port),
        format!("{}:{}", c.remote_address, c.remote_port),
        c.state,
        c.process
    )
}

/// The containers' column heads, over [`container_row`]s.
pub fn container_header() -> String {
    format!(
        "{:<12} {:<40} {:<24} {:<8} {:>3} IMAGE",
        "NAMESPACE", "POD", "CONTAINER", "STATE", "RST"
    )
}

/// One container: its pod's namespace and name, its name, state, restarts (`-` unknown), image.
pub fn container_row(c: &ContainerState) -> String {
    let restarts = c
        .restarts
        .map_or_else(|| "-".to_string(), |r| r.to_string());
    format!(
        "{:<12} {:<40} {:<24} {:<8} {:>3} {}",
        c.namespace, c.pod, c.name, c.state, restarts, c.image
    )
}

/// How a line of the document's text reads: plain, a section's title, a quiet note, or at the
/// level of what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Text,
    Title,
    Quiet,
    At(Level),
}

/// The document's text, line by line, each in its tone: `node info` prints the text, the
/// resources screen draws each line in its tone.
pub type Lines = Vec<(String, Tone)>;

/// A line of plain text.
pub fn plain(text: String) -> (String, Tone) {
    (text, Tone::Text)
}

/// The heading and the node's problems, at the node's level.
pub fn heading_lines(d: &NodeResources) -> Lines {
    let mut out = vec![(heading(d), Tone::At(d.level))];
    let problems = d
        .problems
        .iter()
        .map(|p| (format!("  ! {p}"), Tone::At(d.level)));
    out.extend(problems);
    out
}

/// The heading and problems, then the kernel, CPU, memory, load and uptime.
pub fn overview_lines(d: &NodeResources) -> Lines {
    let mut out = heading_lines(d);
    out.extend(overview(d).into_iter().map(|(t, l)| (t, Tone::At(l))));
    out
}

/// A blank line, `title`, then `rows` indented.
pub fn section(out: &mut Lines, title: &str, rows: Lines) {
    out.push((String::new(), Tone::Text));
    out.push((title.to_string(), Tone::Title));
    out.extend(rows.into_iter().map(|(t, tone)| (format!("  {t}"), tone)));
}

/// The disks, then the volumes at how full each is.
pub fn disks_and_volumes(out: &mut Lines, d: &NodeResources) {
    section(
        out,
        "DISKS",
        d.disks.iter().map(|x| plain(disk_row(x))).collect(),
    );
    let volumes = d.volumes.iter().map(|v| (volume_row(v), Tone::At(v.level)));
    section(out, "VOLUMES", volumes.collect());
}

/// What fills EPHEMERAL, largest first.
pub fn ephemeral(out: &mut Lines, d: &NodeResources) {
    let directories = d.ephemeral_directories.iter();
    let directories = directories.map(|x| plain(directory_row(x)));
    section(out, "EPHEMERAL USAGE", directories.collect());
}

/// The links, then the addresses.
pub fn links_and_addresses(out: &mut Lines, d: &NodeResources) {
    section(
        out,
        "LINKS",
        d.links.iter().map(|x| plain(link_row(x))).collect(),
    );
    let addresses = d.addresses.iter().map(|x| plain(address_row(x)));
    section(out, "ADDRESSES", addresses.collect());
}

/// The KubeSpan peers, or that there is none.
pub fn kubespan_peers(out: &mut Lines, d: &NodeResources) {
    let peers = match d.kubespan_peers.is_empty() {
        true => vec![(NO_KUBESPAN_PEERS.to_string(), Tone::Quiet)],
        false => (d.kubespan_peers.iter())
            .map(|p| plain(peer_row(p)))
            .collect(),
    };
    section(out, "KUBESPAN PEERS", peers);
}
