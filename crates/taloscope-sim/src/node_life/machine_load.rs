//! What moves inside a running machine: the CPUs' and each process's CPU time, the load
//! averages, memory and EPHEMERAL in use, at the node's uptime in simulated time. The counters
//! grow with the CPU shares of model::machine_inventory, so two reads a moment apart show the
//! usage those shares describe, as two reads of /proc/stat and /proc/<pid>/stat do.
use std::time::{SystemTime, UNIX_EPOCH};

use crate::model::core::Core;
use crate::model::machine_inventory::{self, Hardware, ProcessInfo};
use crate::model::state::SimNode;

/// Seconds one CPU spent in each mode since boot (the `cpu` lines of /proc/stat).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct CpuTimes {
    pub user: f64,
    pub system: f64,
    pub idle: f64,
}

/// /proc/meminfo's main figures, in KiB as the kernel writes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MemoryFigures {
    pub total_kib: u64,
    pub free_kib: u64,
    pub available_kib: u64,
    pub buffers_kib: u64,
    pub cached_kib: u64,
}

/// A machine's counters at one moment.
#[derive(Clone, Debug)]
pub(crate) struct MachineLoad {
    pub hardware: Hardware,
    /// Simulated seconds since the current boot began.
    pub uptime: f64,
    /// Unix seconds of the boot (/proc/stat `btime`), fixed for the boot.
    pub boot_time: u64,
    pub cpus: Vec<CpuTimes>,
    /// Each process with its CPU time (user + system seconds) so far.
    pub processes: Vec<(ProcessInfo, f64)>,
    pub load: [f64; 3],
    pub memory: MemoryFigures,
    /// Bytes in use on EPHEMERAL's filesystem.
    pub ephemeral_used: u64,
}

/// Real seconds since the node's current boot began.
fn since_boot(node: &SimNode) -> f64 {
    node.lock()
        .booted_at
        .map(|at| at.elapsed().as_secs_f64())
        .unwrap_or(0.0)
}

/// The machine's counters now. `kube_proxy`: the cluster runs the kube-proxy DaemonSet.
pub(crate) fn machine_load(core: &Core, node: &SimNode, kube_proxy: bool) -> MachineLoad {
    let hardware = machine_inventory::hardware(node);
    let real = since_boot(node);
    // The counters run on simulated time; the boot happened at one wall-clock moment.
    let t = real * core.clock.scale();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let processes = machine_inventory::processes(node, kube_proxy);
    // A process that spins keeps one CPU of its own busy; the rest spreads over every CPU.
    let pinned: Vec<f64> = processes
        .iter()
        .filter(|p| p.cpu_share >= 1.0)
        .map(|p| p.cpu_share)
        .collect();
    let spread: f64 = processes
        .iter()
        .filter(|p| p.cpu_share < 1.0)
        .map(|p| p.cpu_share)
        .sum();
    let cpus = (0..hardware.cpus as usize)
        .map(|i| {
            let busy = (spread / f64::from(hardware.cpus) + pinned.get(i).copied().unwrap_or(0.0))
                .min(1.0);
            CpuTimes {
                user: 0.7 * busy * t,
                system: 0.3 * busy * t,
                idle: (1.0 - busy) * t,
            }
        })
        .collect();
    let runnable = spread + pinned.iter().sum::<f64>();
    // The kernel's exponentially damped averages over 1, 5 and 15 minutes of a steady load.
    let load = [60.0, 300.0, 900.0].map(|window| runnable * (1.0 - (-t / window).exp()));
    let total_kib = hardware.memory_total / 1024;
    let used_kib = (hardware.memory_used_share * total_kib as f64) as u64;
    let cached_kib = total_kib * 15 / 100;
    let buffers_kib = total_kib / 100;
    let memory = MemoryFigures {
        total_kib,
        free_kib: total_kib.saturating_sub(used_kib + cached_kib + buffers_kib),
        available_kib: total_kib.saturating_sub(used_kib),
        buffers_kib,
        cached_kib,
    };
    let ephemeral_size = machine_inventory::volumes(&hardware)
        .iter()
        .find(|v| v.id == "EPHEMERAL")
        .map(|v| v.size)
        .unwrap_or(0);
    let ephemeral_used =
        (machine_inventory::ephemeral_used_share(node) * ephemeral_size as f64) as u64;
    MachineLoad {
        uptime: t,
        boot_time: (now - real).max(0.0) as u64,
        cpus,
        processes: processes
            .into_iter()
            .map(|p| {
                let time = p.cpu_share * t;
                (p, time)
            })
            .collect(),
        load,
        memory,
        ephemeral_used,
        hardware,
    }
}
