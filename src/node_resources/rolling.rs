//! A node's usage read one call per refresh, as the nodes pane reads the nodes on screen: each
//! refresh asks the node for one measure only, the one whose turn it is, and the figures of
//! the others are the last ones read. Pure but for `read_next_measure`.
//!
//! The turns go `SystemStat`, `Mounts`, `SystemStat`, `Memory`: every other refresh reads
//! the CPU counters, so CPU % is the busy share between two `SystemStat` samples two refreshes
//! apart, and the disk and memory figures are read in turn between them (each at most four
//! refreshes old; a fresh node shows CPU % from its third read on). One call per node and
//! refresh rather than Talos apid's one-to-many proxying (`nodes` metadata): apid still
//! makes one backend call per node (siderolabs/talos internal/app/apid/pkg/director/
//! director.go, `aggregateDirector`), so the nodes' cost is the same, and v1.14 deprecates
//! multi-node proxying ("refactor: deprecate multi-node proxying"), while one-to-one `node`
//! routing stays.
use super::collect::NodeIdentity;
use super::document::NodeUsage;
use super::usage::{
    Level, cpu_percent, memory_level, memory_used, percent_of, tenth, volume_level,
};
use crate::printable::line;
use crate::talos::machine_reads::{MemoryFigures, MountUsage, SystemStatSample};
use crate::talos::{TalosClient, TalosError};

/// What one refresh asks a node for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    SystemStat,
    Memory,
    Mounts,
}

/// The measures in the order the refreshes read them, round and round.
const TURNS: [Measure; 4] = [
    Measure::SystemStat,
    Measure::Mounts,
    Measure::SystemStat,
    Measure::Memory,
];

/// One measure's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    SystemStat(SystemStatSample),
    Memory(MemoryFigures),
    Mounts(Vec<MountUsage>),
}

/// What the refreshes so far learned of one node; a node that left the screen starts afresh
/// with the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RollingUsage {
    /// How many reads were folded in (the next turn is this one, modulo the turns).
    reads: usize,
    /// The last `SystemStat` sample, which the next one measures CPU % against.
    stat: Option<SystemStatSample>,
    cpu_percent: Option<f64>,
    memory_percent: Option<f64>,
    disk_percent: Option<f64>,
}

impl RollingUsage {
    /// The measure the next refresh reads.
    pub fn next_measure(&self) -> Measure {
        TURNS[self.reads % TURNS.len()]
    }

    /// Folds in one reading: its own figure changes, the others stay as last read.
    pub fn fold(mut self, reading: Reading) -> RollingUsage {
        self.reads += 1;
        match reading {
            Reading::SystemStat(stat) => {
                // A reboot between the samples (counters went back) leaves CPU % unknown.
                self.cpu_percent = (self.stat.as_ref())
                    .and_then(|before| cpu_percent(&before.total, &stat.total))
                    .map(tenth);
                self.stat = Some(stat);
            }
            Reading::Memory(memory) => self.memory_percent = memory_percent(&memory),
            Reading::Mounts(mounts) => self.disk_percent = disk_percent(&mounts),
        }
        self
    }

    /// The node's figures as known now, judged by the gauges' thresholds.
    pub fn usage(&self, id: &NodeIdentity) -> NodeUsage {
        judged(id, self.cpu_percent, self.memory_percent, self.disk_percent)
    }
}

/// Reads the measure whose turn it is; a failed read reports why with no figures, and the
/// node starts afresh (its CPU sample may be from before a reboot).
pub async fn read_next_measure(
    talos: &TalosClient,
    id: &NodeIdentity,
    held: RollingUsage,
) -> (NodeUsage, RollingUsage) {
    let a = id.address.as_str();
    let reading = match held.next_measure() {
        Measure::SystemStat => talos.system_stat(a).await.map(Reading::SystemStat),
        Measure::Memory => talos.memory(a).await.map(Reading::Memory),
        Measure::Mounts => talos.mounts(a).await.map(Reading::Mounts),
    };
    match reading {
        Ok(reading) => {
            let held = held.fold(reading);
            (held.usage(id), held)
        }
        Err(e) => (unread(id, &e), RollingUsage::default()),
    }
}

/// Memory in use, in percent of all of it.
pub(super) fn memory_percent(memory: &MemoryFigures) -> Option<f64> {
    percent_of(memory_used(memory), memory.total).map(tenth)
}

/// The fullest mounted volume's fill. Real filesystems only: a read-only image or an empty
/// mount has no fill to watch.
pub(super) fn disk_percent(mounts: &[MountUsage]) -> Option<f64> {
    mounts
        .iter()
        .filter(|m| m.size > 0 && m.available > 0 && m.mounted_on != "/")
        .filter(|m| m.filesystem.starts_with("/dev/"))
        .filter_map(|m| percent_of(m.size - m.available.min(m.size), m.size))
        .max_by(f64::total_cmp)
        .map(tenth)
}

/// A node's figures, judged by the gauges' thresholds.
pub(super) fn judged(
    id: &NodeIdentity,
    cpu_percent: Option<f64>,
    memory_percent: Option<f64>,
    disk_percent: Option<f64>,
) -> NodeUsage {
    let level = [
        memory_percent.map(memory_level),
        disk_percent.map(volume_level),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(Level::Ok);
    NodeUsage {
        node: line(&id.name),
        address: line(&id.address),
        cpu_percent,
        memory_percent,
        disk_percent,
        level,
        error: None,
    }
}

/// A node whose usage could not be read: why, and no figures.
pub(super) fn unread(id: &NodeIdentity, why: &TalosError) -> NodeUsage {
    NodeUsage {
        node: line(&id.name),
        address: line(&id.address),
        cpu_percent: None,
        memory_percent: None,
        disk_percent: None,
        level: Level::Ok,
        error: Some(line(&why.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::talos::machine_reads::CpuTimes;

    fn id() -> NodeIdentity {
        NodeIdentity {
            name: "w-1".into(),
            address: "127.10.0.4".into(),
            machine_type: "worker".into(),
        }
    }

    fn stat(busy: f64, idle: f64) -> Reading {
        Reading::SystemStat(SystemStatSample {
            boot_time: 1,
            total: CpuTimes {
                user: busy,
                idle,
                ..CpuTimes::default()
            },
            cpus: Vec::new(),
        })
    }

    fn memory(total: u64, available: u64) -> Reading {
        Reading::Memory(MemoryFigures {
            total,
            available,
            ..MemoryFigures::default()
        })
    }

    fn ephemeral(size: u64, available: u64) -> Reading {
        Reading::Mounts(vec![MountUsage {
            filesystem: "/dev/sda6".into(),
            mounted_on: "/var".into(),
            size,
            available,
        }])
    }

    #[test]
    fn the_cpu_counters_are_read_every_other_refresh_and_the_others_in_turn() {
        let mut held = RollingUsage::default();
        let mut turns = Vec::new();
        for reading in [stat(0.0, 0.0), ephemeral(100, 50), stat(1.0, 1.0)] {
            turns.push(held.next_measure());
            held = held.fold(reading);
        }
        for _ in 0..5 {
            turns.push(held.next_measure());
            held = held.fold(memory(100, 50));
        }
        use Measure::*;
        assert_eq!(
            turns,
            [
                SystemStat, Mounts, SystemStat, Memory, SystemStat, Mounts, SystemStat, Memory
            ]
        );
    }

    #[test]
    fn each_figure_is_kept_until_its_measure_is_read_again() {
        let held = RollingUsage::default().fold(stat(100.0, 900.0));
        assert_eq!(
            held.usage(&id()).cpu_percent,
            None,
            "one sample: no CPU % yet"
        );
        let held = held.fold(ephemeral(1000, 30));
        let usage = held.usage(&id());
        assert_eq!(usage.disk_percent, Some(97.0));
        assert_eq!(usage.level, Level::Failing);
        let held = held.fold(stat(130.0, 970.0));
        assert_eq!(held.usage(&id()).cpu_percent, Some(30.0));
        let held = held.fold(memory(1000, 250));
        let usage = held.usage(&id());
        assert_eq!(
            (usage.cpu_percent, usage.memory_percent, usage.disk_percent),
            (Some(30.0), Some(75.0), Some(97.0))
        );
        assert_eq!(usage.error, None);
    }

    #[test]
    fn counters_that_went_back_leave_the_cpu_unknown() {
        let held = RollingUsage::default()
            .fold(stat(100.0, 900.0))
            .fold(ephemeral(1000, 500))
            .fold(stat(1.0, 2.0));
        assert_eq!(held.usage(&id()).cpu_percent, None);
    }

    #[test]
    fn the_fill_is_the_fullest_real_volume() {
        let mount = |filesystem: &str, mounted_on: &str, size: u64, available: u64| MountUsage {
            filesystem: filesystem.into(),
            mounted_on: mounted_on.into(),
            size,
            available,
        };
        let mounts = [
            mount("/dev/loop0", "/", 100, 1),
            mount("overlay", "/etc/cni", 100, 1),
            mount("/dev/sda5", "/system/state", 100, 80),
            mount("/dev/sda6", "/var", 100, 40),
        ];
        assert_eq!(disk_percent(&mounts), Some(60.0));
        assert_eq!(disk_percent(&[]), None);
    }
}
