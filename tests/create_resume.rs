//! Issue 18's "a second bootstrap is never sent": `taloscope create` killed (SIGKILL) at every
//! phase of a 3+2 cluster in turn — while the VMs are asked for, at each phase boundary, midway
//! through applying configs, and right after the Bootstrap request was journaled and answered —
//! and run again each time. The sim saw exactly one Bootstrap, one set of VMs exists, and
//! `taloscope status --context lab` shows every node Ready and etcd with a leader.
mod create_common;
mod provision_common;
mod talos_common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use create_common::{create_args, lab_status};
use provision_common::{command, config_file, live_vms, state_dir};
use talos_common::{Sim, TIME_SCALE, scenario, start, within};
use tokio::io::{AsyncBufReadExt, BufReader};

const CONTROL_PLANES: usize = 3;
const WORKERS: usize = 2;

/// Where a run is killed.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// The journal says the VMs were asked for and the provider made the first (the run is
    /// between asking and journaling their ids).
    FirstVmMade,
    /// A line of the run's own output starts with this (a phase done, a config applied).
    Line(&'static str),
    /// The sim accepted the Bootstrap request (the journal said "sent" before it went).
    BootstrapAccepted,
}

/// Every kill, in the order the phases reach them.
const KILLS: [KillAt; 10] = [
    KillAt::FirstVmMade,
    KillAt::Line("VMs: done"),
    KillAt::Line("booted: done"),
    KillAt::Line("lab-controlplane-2"),
    KillAt::Line("configured: done"),
    KillAt::BootstrapAccepted,
    KillAt::Line("bootstrapped: done"),
    KillAt::Line("etcd: done"),
    KillAt::Line("API: done"),
    KillAt::Line("nodes Ready: done"),
];

fn lab_args() -> Vec<String> {
    let more = ["--deliver", "maintenance", "--phase-timeout", "60"];
    create_args("sim-opennebula", CONTROL_PLANES, WORKERS, "v1.11.3", &more)
}

fn journal(sim: &Sim) -> PathBuf {
    state_dir(sim).join("clusters/lab.json")
}

/// The line without its time stamp (`HH:MM:SS `), as the runner wrote it.
fn unstamped(line: &str) -> &str {
    line.split_once(' ').map_or(line, |(_, rest)| rest)
}

/// Whether `line` is the kill point: a phase done (by this run, or found done by an earlier
/// one: the boundary all the same), or the VM's config applied.
fn line_hits(line: &str, at: &str) -> bool {
    let text = unstamped(line);
    text.starts_with(at) && (!at.starts_with("lab-") || text.ends_with("config applied"))
}

/// Resolves once the kill point (other than a line) is reached.
async fn reached(sim: &Sim, at: KillAt, vms_before: usize) {
    loop {
        let hit = match at {
            KillAt::FirstVmMade => {
                std::fs::read_to_string(journal(sim))
                    .ok()
                    .and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok())
                    .is_some_and(|j| j["vms_requested"] == true)
                    && live_vms(sim).await.len() > vms_before
            }
            KillAt::BootstrapAccepted => bootstraps(sim).1 > 0,
            KillAt::Line(_) => false,
        };
        if hit {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The Bootstrap requests lab's nodes answered: (all, accepted).
fn bootstraps(sim: &Sim) -> (usize, usize) {
    let all: Vec<_> = sim
        .fleet
        .state()
        .bootstrap_requests()
        .into_iter()
        .filter(|b| b.cluster == "lab")
        .collect();
    let accepted = all.iter().filter(|b| b.answer == tonic::Code::Ok).count();
    (all.len(), accepted)
}

/// Runs `taloscope create` and kills it at `at`; the lines it printed.
async fn run_and_kill(sim: &Sim, at: KillAt, vms_before: usize) -> Vec<String> {
    let args = lab_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = command(sim, &config_file(sim), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("taloscope starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    let killed = within(60, &format!("the run reaching {at:?}"), async {
        loop {
            tokio::select! {
                line = lines.next_line() => match line.expect("stdout reads") {
                    Some(line) => {
                        let hit = matches!(at, KillAt::Line(l) if line_hits(&line, l));
                        seen.push(line);
                        if hit {
                            return true;
                        }
                    }
                    None => return false,
                },
                () = reached(sim, at, vms_before) => return true,
            }
        }
    })
    .await;
    child.start_kill().expect("SIGKILL");
    let status = child.wait().await.expect("the run ends");
    assert!(
        killed,
        "the run ended ({status}) before {at:?}:\n{}",
        seen.join("\n")
    );
    seen
}

/// `taloscope status --context lab`: every node Ready, etcd with every control plane and a
/// leader.
async fn assert_lab_formed(sim: &Sim) {
    let (lab, shown) = lab_status(sim).await;
    assert_eq!(lab.nodes.len(), CONTROL_PLANES + WORKERS, "{shown}");
    for node in &lab.nodes {
        assert!(node.ready && node.error.is_none(), "{node:?}");
        assert_eq!(node.k8s_ready, Some(true), "{node:?}");
    }
    let quorum = &lab.etcd.quorum;
    assert_eq!((quorum.members, quorum.healthy), (3, 3), "{shown}");
    assert!(lab.etcd.leader().is_some(), "{shown}");
}

#[tokio::test]
async fn killed_at_every_phase_and_resumed_sends_bootstrap_once_and_makes_one_set_of_vms() {
    let started = Instant::now();
    let sim = start(scenario("healthy")).await;
    let before = live_vms(&sim).await;
    let planned = CONTROL_PLANES + WORKERS;
    for at in KILLS {
        let lines = run_and_kill(&sim, at, before.len()).await;
        let now = live_vms(&sim).await;
        assert!(
            now.len() <= before.len() + planned,
            "after the kill at {at:?}: {} VMs, at most {planned} new:\n{}",
            now.len(),
            lines.join("\n")
        );
        assert!(bootstraps(&sim).1 <= 1, "after the kill at {at:?}");
    }
    let last = create_common::run(&sim, &lab_args()).await;
    assert_eq!(last.code, 0, "{}{}", last.stdout, last.stderr);
    assert!(
        last.stdout
            .contains("bootstrapped: done: done by an earlier run"),
        "{}",
        last.stdout
    );
    assert_eq!(live_vms(&sim).await.len(), before.len() + planned);
    let (all, accepted) = bootstraps(&sim);
    assert_eq!(accepted, 1, "Bootstrap accepted once");
    let refused_after = sim
        .fleet
        .state()
        .bootstrap_requests()
        .into_iter()
        .filter(|b| b.cluster == "lab" && b.answer == tonic::Code::AlreadyExists)
        .count();
    assert_eq!(
        refused_after, 0,
        "a second Bootstrap was sent ({all} in all)"
    );
    assert_lab_formed(&sim).await;
    let real = started.elapsed().as_secs_f64();
    println!(
        "{} kills and resumes: {real:.1} s real ({:.0} s simulated at time scale {TIME_SCALE})",
        KILLS.len(),
        real * TIME_SCALE
    );
}
