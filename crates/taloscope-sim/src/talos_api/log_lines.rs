//! The text a simulated node's logs hold, line by line, in the format each writer uses on
//! Talos v1.11: etcd's zap JSON, kubelet's klog, apid's and machined's Go `log` lines,
//! containerd's logrus, the CRI log files of the static pods, and the kernel's kmsg records as
//! `Dmesg` formats them. Line `i` of a log is always the same text: the sim keeps no buffers.
use crate::model::clock::calendar_date;

/// A wall-clock instant in microseconds since the Unix epoch.
pub(crate) type Micros = i64;

/// Who writes a log, which decides its line format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Writer {
    /// etcd v3.6's zap JSON logger (go.etcd.io/etcd/server/v3 v3.6.4 in upstream go.mod).
    Etcd,
    /// kubelet's klog text header (`Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg`).
    Kubelet,
    /// apid and trustd: Go's `log` with `Ldate|Ltime|Lmicroseconds|Lshortfile`
    /// (siderolabs/talos internal/app/apid/main.go, `log.SetFlags`).
    GoLog,
    /// machined: Go's `log` with the `[talos] ` prefix and the standard flags
    /// (internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_controller.go, `setupLogging`).
    Machined,
    /// containerd and the CRI plugin: logrus text (`time="…" level=info msg="…"`).
    Logrus,
    /// A pod's container: the CRI log file format (`<RFC3339Nano> <stream> F <line>`) around
    /// the container's own line (the Kubernetes components' klog on stderr, stress-ng's text
    /// on stdout).
    Cri { component: String },
}

/// The peer an etcd member cannot reach, named in its warnings (its member id), if any.
#[derive(Clone, Debug, Default)]
pub(crate) struct EtcdPeers {
    pub unreachable: Option<(u64, String)>,
}

/// A stable pseudo-random pick for line `i` of a log (no state, same answer every time).
fn pick(seed: u64, i: u64, n: usize) -> usize {
    let mut x = seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (x % n as u64) as usize
}

/// A seed from a node and log name, so two nodes' logs differ.
pub(crate) fn seed(node: &str, log: &str) -> u64 {
    node.bytes()
        .chain(log.bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

struct Clock {
    year: i64,
    month: u32,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
}

fn clock(at: Micros) -> Clock {
    let secs = at.div_euclid(1_000_000);
    let (year, month, day) = calendar_date(secs.div_euclid(86_400));
    let of_day = secs.rem_euclid(86_400);
    Clock {
        year,
        month,
        day,
        hour: of_day / 3600,
        minute: (of_day / 60) % 60,
        second: of_day % 60,
        micros: at.rem_euclid(1_000_000),
    }
}

/// RFC 3339 in UTC with `digits` fractional digits (6 for zap, 9 for Go's RFC3339Nano as the
/// CRI and kmsg use; the sim's clock has microseconds, so nanoseconds end in 000).
fn rfc3339(at: Micros, nanos: bool) -> String {
    let c = clock(at);
    let fraction = if nanos {
        format!("{:06}000", c.micros)
    } else {
        format!("{:06}", c.micros)
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{fraction}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// Go's `log` date and time (`2026/12/01 17:59:28`, `.123456` with microseconds).
fn go_log_time(at: Micros, micros: bool) -> String {
    let c = clock(at);
    let base = format!(
        "{:04}/{:02}/{:02} {:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    );
    if micros {
        format!("{base}.{:06}", c.micros)
    } else {
        base
    }
}

/// klog's header: severity, month and day, time with microseconds, thread id, file:line.
fn klog(severity: char, at: Micros, thread: u32, file: &str, msg: &str) -> String {
    let c = clock(at);
    format!(
        "{severity}{:02}{:02} {:02}:{:02}:{:02}.{:06} {thread:>7} {file}] {msg}",
        c.month, c.day, c.hour, c.minute, c.second, c.micros
    )
}

const ETCD_INFO: &[(&str, &str)] = &[
    ("mvcc/index.go:214", "compact tree index"),
    (
        "mvcc/kvstore_compaction.go:72",
        "finished scheduled compaction",
    ),
    ("etcdserver/server.go:1390", "triggering snapshot"),
    ("v3rpc/interceptor.go:207", "request stats"),
];

fn etcd_line(i: u64, seed: u64, at: Micros, peers: &EtcdPeers) -> String {
    let ts = rfc3339(at, false);
    if let Some((id, address)) = &peers.unreachable
        && i.is_multiple_of(3)
    {
        return format!(
            r#"{{"level":"warn","ts":"{ts}","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","round-tripper-name":"ROUND_TRIPPER_RAFT_MESSAGE","remote-peer-id":"{id:x}","rtt":"0s","error":"dial tcp {address}:2380: connect: connection refused"}}"#
        );
    }
    let (caller, msg) = ETCD_INFO[pick(seed, i, ETCD_INFO.len())];
    format!(
        r#"{{"level":"info","ts":"{ts}","caller":"{caller}","msg":"{msg}","revision":{}}}"#,
        1000 + i * 7
    )
}

const KUBELET: &[(&str, &str)] = &[
    (
        "kubelet.go:2546",
        r#""SyncLoop (probe)" probe="readiness" status="ready""#,
    ),
    (
        "kubelet_node_status.go:724",
        r#""Recording event message for node" event="NodeReady""#,
    ),
    (
        "reconciler_common.go:251",
        r#""operationExecutor.VerifyControllerAttachedVolume started""#,
    ),
    (
        "kubelet_getters.go:218",
        r#""Pod status is inconsistent with cached status for pod, a reconciliation should be triggered""#,
    ),
];

const APID: &[(&str, &str)] = &[
    (
        "director.go:106",
        "proxying /machine.MachineService/Version",
    ),
    (
        "director.go:106",
        "proxying /machine.MachineService/ServiceList",
    ),
    ("backend.go:75", "backend connection ready"),
];

const MACHINED: &[&str] = &[
    "service[etcd](Running): Health check successful",
    "service[kubelet](Running): Health check successful",
    r#"controller runtime: reconciled {"component": "controller-runtime", "controller": "k8s.NodeStatusController"}"#,
    r#"time synchronized {"component": "controller-runtime", "controller": "time.SyncController"}"#,
];

const LOGRUS: &[&str] = &[
    "loading plugin \\\"io.containerd.grpc.v1.cri\\\"...",
    "ImageCreate event name:\\\"registry.k8s.io/pause:3.10\\\"",
    "shim disconnected",
    "cleaning up dead shim",
];

const COMPONENT: &[(&str, &str)] = &[
    ("cacher.go:847", "\"cacher: terminating watcher\""),
    ("controller.go:615", "\"quota admission added evaluator\""),
    ("leaderelection.go:271", "\"successfully renewed lease\""),
];

/// kube-proxy's klog lines in iptables mode (kubernetes pkg/proxy/iptables/proxier.go,
/// pkg/proxy/config/config.go).
const KUBE_PROXY: &[(&str, &str)] = &[
    ("proxier.go:805", "\"Syncing iptables rules\""),
    (
        "proxier.go:1494",
        "\"Reloading service iptables data\" numServices=12 numEndpoints=14",
    ),
    (
        "proxier.go:799",
        "\"SyncProxyRules complete\" elapsed=\"9.4ms\"",
    ),
    ("config.go:120", "\"Calling handler.OnEndpointSliceUpdate\""),
];

/// stress-ng's progress as the spinning workload prints it.
const STRESS: &[&str] = &[
    "stress-ng: info:  [1] dispatching hogs: 2 cpu",
    "stress-ng: info:  [1] cpu: cpu stressor still running",
];

/// Line `i` of a log, written at `at`, ending in a newline.
pub(crate) fn log_line(
    writer: &Writer,
    i: u64,
    seed: u64,
    at: Micros,
    peers: &EtcdPeers,
) -> String {
    let mut line = match writer {
        Writer::Etcd => etcd_line(i, seed, at, peers),
        Writer::Kubelet => {
            let (file, msg) = KUBELET[pick(seed, i, KUBELET.len())];
            klog('I', at, 2051, file, msg)
        }
        Writer::GoLog => {
            let (file, msg) = APID[pick(seed, i, APID.len())];
            format!("{} {file}: {msg}", go_log_time(at, true))
        }
        Writer::Machined => {
            let msg = MACHINED[pick(seed, i, MACHINED.len())];
            format!("[talos] {} {msg}", go_log_time(at, false))
        }
        Writer::Logrus => {
            let msg = LOGRUS[pick(seed, i, LOGRUS.len())];
            format!("time=\"{}\" level=info msg=\"{msg}\"", rfc3339(at, true))
        }
        Writer::Cri { component } => {
            let (stream, inner) = match component.as_str() {
                "kube-proxy" => {
                    let (file, msg) = KUBE_PROXY[pick(seed, i, KUBE_PROXY.len())];
                    ("stderr", klog('I', at, 1, file, msg))
                }
                "spinner" => ("stdout", STRESS[pick(seed, i, STRESS.len())].to_string()),
                _ => {
                    let (file, msg) = COMPONENT[pick(seed, i, COMPONENT.len())];
                    let msg = format!("{msg} component=\"{component}\"");
                    ("stderr", klog('I', at, 1, file, &msg))
                }
            };
            format!("{} {stream} F {inner}", rfc3339(at, true))
        }
    };
    line.push('\n');
    line
}

/// The kernel's boot messages (facility, priority, text), as kmsg holds them from boot.
const BOOT_MESSAGES: &[(&str, &str, &str)] = &[
    (
        "kern",
        "notice",
        "Linux version 6.12.43-talos (@buildkitsandbox) (gcc (GCC) 14.2.0) #1 SMP",
    ),
    (
        "kern",
        "info",
        "Command line: talos.platform=metal console=ttyS0 init_on_alloc=1 slab_nomerge pti=on",
    ),
    ("kern", "info", "BIOS-provided physical RAM map:"),
    (
        "kern",
        "info",
        "ACPI: Early table checksum verification disabled",
    ),
    ("kern", "info", "Memory: 8021404K/8388088K available"),
    (
        "kern",
        "info",
        "x86/fpu: Supporting XSAVE feature 0x001: 'x87 floating point registers'",
    ),
    ("kern", "info", "clocksource: tsc: mask: 0xffffffffffffffff"),
    (
        "kern",
        "info",
        "virtio_blk virtio2: [vda] 20971520 512-byte logical blocks (10.7 GB/10.0 GiB)",
    ),
    (
        "kern",
        "info",
        "EXT4-fs (vda5): mounted filesystem with ordered data mode",
    ),
    ("user", "warning", "[talos] task setupLogger (1/1): done"),
    (
        "user",
        "warning",
        "[talos] phase systemRequirements (2/16): done",
    ),
    (
        "user",
        "warning",
        "[talos] service[machined](Running): Health check successful",
    ),
    (
        "kern",
        "info",
        "IPVS: Registered protocols (TCP, UDP, SCTP, AH, ESP)",
    ),
    (
        "user",
        "warning",
        "[talos] service[apid](Running): Health check successful",
    ),
    ("user", "warning", "[talos] boot sequence: done"),
];

/// What the kernel keeps saying after boot.
const RUNNING_MESSAGES: &[(&str, &str, &str)] = &[
    (
        "kern",
        "info",
        "cni0: port 1(veth3f2a1b) entered forwarding state",
    ),
    (
        "kern",
        "info",
        "IPv6: ADDRCONF(NETDEV_CHANGE): veth3f2a1b: link becomes ready",
    ),
    (
        "kern",
        "notice",
        "audit: type=1400 audit: apparmor=\"STATUS\"",
    ),
    (
        "user",
        "warning",
        "[talos] service[kubelet](Running): Health check successful",
    ),
];

/// How many of the kernel log's first records are boot messages.
pub(crate) const BOOT_RECORDS: u64 = BOOT_MESSAGES.len() as u64;

/// Kernel record `i` as upstream's `Dmesg` sends it:
/// `"%s: %7s: [%s]: %s"` of facility, priority, RFC 3339 (nanoseconds) time and text
/// (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go,
/// `Dmesg`); the record's text keeps the newline kmsg ends it with.
pub(crate) fn kernel_record(i: u64, seed: u64, at: Micros) -> String {
    let (facility, priority, text) = match BOOT_MESSAGES.get(i as usize) {
        Some(m) => *m,
        None => RUNNING_MESSAGES[pick(seed, i, RUNNING_MESSAGES.len())],
    };
    format!(
        "{facility}: {priority:>7}: [{}]: {text}\n",
        rfc3339(at, true)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-12-01T17:59:28.123456Z
    const AT: Micros = 1_796_147_968_123_456;

    #[test]
    fn each_writer_has_its_format() {
        let peers = EtcdPeers::default();
        let etcd = log_line(&Writer::Etcd, 1, 7, AT, &peers);
        assert!(
            etcd.starts_with(r#"{"level":"info","ts":"2026-12-01T17:59:28.123456Z","caller":""#),
            "{etcd}"
        );
        assert!(etcd.ends_with("}\n"));
        let kubelet = log_line(&Writer::Kubelet, 1, 7, AT, &peers);
        assert!(
            kubelet.starts_with("I1201 17:59:28.123456    2051 "),
            "{kubelet}"
        );
        let apid = log_line(&Writer::GoLog, 1, 7, AT, &peers);
        assert!(apid.starts_with("2026/12/01 17:59:28.123456 "), "{apid}");
        let machined = log_line(&Writer::Machined, 1, 7, AT, &peers);
        assert!(
            machined.starts_with("[talos] 2026/12/01 17:59:28 "),
            "{machined}"
        );
        let cri = log_line(
            &Writer::Cri {
                component: "kube-apiserver".into(),
            },
            1,
            7,
            AT,
            &peers,
        );
        assert!(
            cri.starts_with("2026-12-01T17:59:28.123456000Z stderr F I1201 "),
            "{cri}"
        );
    }

    #[test]
    fn an_unreachable_peer_is_named_in_etcd_warnings() {
        let peers = EtcdPeers {
            unreachable: Some((0xabc, "10.5.0.3".into())),
        };
        let line = log_line(&Writer::Etcd, 3, 7, AT, &peers);
        assert!(
            line.contains(r#""remote-peer-id":"abc""#) && line.contains("10.5.0.3:2380"),
            "{line}"
        );
    }

    #[test]
    fn kernel_records_pad_the_priority_to_seven() {
        assert_eq!(
            kernel_record(0, 7, AT),
            "kern:  notice: [2026-12-01T17:59:28.123456000Z]: Linux version 6.12.43-talos (@buildkitsandbox) (gcc (GCC) 14.2.0) #1 SMP\n"
        );
        assert!(kernel_record(2, 7, AT).starts_with("kern:    info: "));
    }
}
