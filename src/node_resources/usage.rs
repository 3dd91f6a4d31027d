//! The arithmetic of usage: CPU % from two `SystemStat` samples, a process's CPU % from two
//! `Processes` samples over the same span, memory used and its pressure, a volume's fill and
//! the thresholds that make each a warning or a failure. Pure.
use serde::Serialize;

use crate::talos::machine_reads::{CpuTimes, MemoryFigures, ProcessSample};

/// Where a gauge turns from ok to warning and from warning to failing, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub warning: f64,
    pub failing: f64,
}

/// What fills up on a node, each with its thresholds: the one table the nodes pane, the
/// resources screen, `node info` and `top` all judge by, and whose failing level joins the
/// fleet's problems (`fleet::problems`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gauge {
    /// Memory in use, what is not available: at 90% the kernel is about to reclaim hard or kill.
    Memory,
    /// A volume's (a mount's) fill: at 95% writes are about to fail.
    Volume,
}

impl Gauge {
    pub const fn thresholds(self) -> Thresholds {
        match self {
            Gauge::Memory => Thresholds {
                warning: 80.0,
                failing: 90.0,
            },
            Gauge::Volume => Thresholds {
                warning: 85.0,
                failing: 95.0,
            },
        }
    }

    /// How `percent` stands against this gauge's thresholds.
    pub fn level(self, percent: f64) -> Level {
        let t = self.thresholds();
        Level::of(percent, t.warning, t.failing)
    }
}

/// How a figure stands against its thresholds; the derived order is worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Warning,
    Failing,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warning => "warning",
            Level::Failing => "failing",
        }
    }

    fn of(percent: f64, warning: f64, failing: f64) -> Level {
        if percent >= failing {
            Level::Failing
        } else if percent >= warning {
            Level::Warning
        } else {
            Level::Ok
        }
    }
}

/// The share of CPU time spent busy between two readings of the same CPUs, in percent of
/// all of them; `None` when no time passed (or the counters went back: a reboot between).
pub fn cpu_percent(before: &CpuTimes, after: &CpuTimes) -> Option<f64> {
    let total = after.total() - before.total();
    let busy = after.busy() - before.busy();
    if total <= 0.0 || busy < 0.0 {
        return None;
    }
    Some((busy / total * 100.0).clamp(0.0, 100.0))
}

/// Seconds that passed on the node between two readings, from its CPU times: all CPUs'
/// time over their count (as `top` counts the interval in jiffies, not by our clock).
pub fn elapsed_seconds(before: &CpuTimes, after: &CpuTimes, cpus: usize) -> Option<f64> {
    let total = after.total() - before.total();
    (cpus > 0 && total > 0.0).then(|| total / cpus as f64)
}

/// A process's CPU use over `elapsed` seconds, in percent of one CPU (as `top` shows it: a
/// process keeping two CPUs busy is 200%). A process absent from the first reading started
/// during the span: its whole CPU time counts.
pub fn process_cpu_percent(
    before: Option<&ProcessSample>,
    after: &ProcessSample,
    elapsed: f64,
) -> f64 {
    if elapsed <= 0.0 {
        return 0.0;
    }
    let spent = after.cpu_time - before.map(|p| p.cpu_time).unwrap_or(0.0);
    (spent.max(0.0) / elapsed * 100.0).max(0.0)
}

/// Memory in use: what is not available (MemTotal − MemAvailable), as `free` and the
/// kubelet's eviction signal count it.
pub fn memory_used(m: &MemoryFigures) -> u64 {
    m.total.saturating_sub(m.available)
}

pub fn percent_of(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64 * 100.0)
}

pub fn memory_level(used_percent: f64) -> Level {
    Gauge::Memory.level(used_percent)
}

pub fn volume_level(used_percent: f64) -> Level {
    Gauge::Volume.level(used_percent)
}

/// A percent rounded to one decimal, as the JSON carries it.
pub fn tenth(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(busy: f64, idle: f64) -> CpuTimes {
        CpuTimes {
            user: busy * 0.75,
            system: busy * 0.25,
            idle,
            ..CpuTimes::default()
        }
    }

    #[test]
    fn cpu_percent_is_the_busy_share_of_the_delta() {
        let before = times(100.0, 900.0);
        let after = times(130.0, 970.0);
        assert_eq!(cpu_percent(&before, &after), Some(30.0));
    }

    #[test]
    fn cpu_percent_without_time_or_after_a_reboot_is_unknown() {
        let a = times(100.0, 900.0);
        assert_eq!(cpu_percent(&a, &a), None);
        assert_eq!(cpu_percent(&a, &times(1.0, 2.0)), None);
    }

    #[test]
    fn elapsed_is_counted_in_the_nodes_own_time() {
        // 4 CPUs, 40 CPU-seconds passed: 10 seconds on the node.
        let before = times(0.0, 0.0);
        let after = times(8.0, 32.0);
        assert_eq!(elapsed_seconds(&before, &after, 4), Some(10.0));
        assert_eq!(elapsed_seconds(&before, &after, 0), None);
    }

    #[test]
    fn process_cpu_is_percent_of_one_cpu() {
        let p = |t: f64| ProcessSample {
            cpu_time: t,
            ..ProcessSample::default()
        };
        assert_eq!(process_cpu_percent(Some(&p(5.0)), &p(15.0), 10.0), 100.0);
        assert_eq!(process_cpu_percent(Some(&p(5.0)), &p(25.0), 10.0), 200.0);
        assert_eq!(process_cpu_percent(None, &p(2.0), 10.0), 20.0);
        assert_eq!(process_cpu_percent(Some(&p(9.0)), &p(5.0), 10.0), 0.0);
        assert_eq!(process_cpu_percent(Some(&p(1.0)), &p(5.0), 0.0), 0.0);
    }

    #[test]
    fn memory_used_is_what_is_not_available() {
        let m = MemoryFigures {
            total: 1000,
            available: 250,
            ..MemoryFigures::default()
        };
        assert_eq!(memory_used(&m), 750);
        assert_eq!(percent_of(750, 1000), Some(75.0));
        assert_eq!(percent_of(1, 0), None);
    }

    #[test]
    fn thresholds_warn_at_85_and_fail_at_95_for_volumes() {
        assert_eq!(volume_level(84.9), Level::Ok);
        assert_eq!(volume_level(85.0), Level::Warning);
        assert_eq!(volume_level(94.99), Level::Warning);
        assert_eq!(volume_level(95.0), Level::Failing);
        assert_eq!(volume_level(96.0), Level::Failing);
    }

    #[test]
    fn thresholds_warn_at_80_and_fail_at_90_for_memory() {
        assert_eq!(memory_level(79.9), Level::Ok);
        assert_eq!(memory_level(80.0), Level::Warning);
        assert_eq!(memory_level(90.0), Level::Failing);
        assert!(Level::Failing > Level::Warning && Level::Warning > Level::Ok);
    }
}
