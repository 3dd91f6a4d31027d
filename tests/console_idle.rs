//! When nothing changes, the console writes nothing: the real binary in an
//! 80x24 pseudo-terminal on the simulated `healthy` fleet, polling every
//! second, must write zero bytes to the terminal over 10 seconds once its
//! screen is complete.
mod pty_support;

use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

const BOUND: Duration = Duration::from_secs(60);

#[test]
fn an_unchanging_fleet_costs_zero_bytes_of_terminal_output() {
    let sim = BackgroundSim::start("healthy", BOUND);
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("TALOSCONFIG", sim.talosconfig()),
        ("KUBECONFIG", sim.kubeconfig()),
        ("LANG", "C.UTF-8".to_string()),
    ];
    let mut console = PtySession::start(
        24,
        80,
        home.path(),
        &["--context", "healthy", "--refresh", "1"],
        &env,
    );
    console.wait_for(
        "every node with its Talos and kubelet versions",
        BOUND,
        |screen| {
            ["cp-1", "cp-2", "cp-3", "w-1", "w-2"]
                .iter()
                .all(|n| screen.contains(n))
                && screen.matches("v1.11.3").count() >= 5
                && screen.matches("v1.34.1").count() >= 5
        },
    );
    // Let the first rounds settle: two quiet seconds in a row, within the bound.
    let start = std::time::Instant::now();
    while console.bytes_during(Duration::from_secs(2)) != 0 {
        assert!(
            start.elapsed() < BOUND,
            "the console never went quiet; screen:\n{}",
            console.text()
        );
    }
    let written = console.bytes_during(Duration::from_secs(10));
    assert_eq!(
        written,
        0,
        "bytes written while nothing changed; screen:\n{}",
        console.text()
    );
    assert_eq!(console.quit(BOUND), Some(0));
}
