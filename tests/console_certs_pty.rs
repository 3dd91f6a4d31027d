//! End-to-end, the console at 80x24 in a pseudo-terminal against the sim's `healthy` cluster
//! served from the test process, NO_COLOR=1 LANG=C: `C` on the fleet opens the certificates
//! screen once the pollers read them, the `healthy-expiring` context's client certificate (10
//! days left) first with its fix; `:certs` opens it from the cluster view and Esc goes back
//! there.
mod pty_support;

use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn certs_soonest_first_from_the_fleet_and_the_command_line() {
    let sim = BackgroundSim::start("healthy", BOUND);
    let home = tempfile::tempdir().unwrap();
    let mut s = PtySession::start(24, 80, home.path(), &[], &sim.console_env());
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy") && t.contains("Enter open")
    });
    s.send(b"C");
    s.wait_for(
        "the expiring client certificate first, with its fix",
        BOUND,
        |t| {
            let first_row = t
                .lines()
                .skip_while(|row| !row.contains("LEFT  CERTIFICATE"))
                .nth(1)
                .unwrap_or_default();
            first_row.contains("talos client")
                && first_row.contains("healthy/healthy-expiring")
                && t.contains("renew: talos client of healthy/healthy-expiring")
                && t.contains("config new FILE")
        },
    );
    s.send(b"\x1b");
    s.wait_for("the fleet again", BOUND, |t| t.contains("Enter open"));
    s.send(b":ctx healthy\r");
    s.wait_for("the nodes pane", BOUND, |t| {
        t.contains("+ Nodes (") && t.contains("cp-1")
    });
    s.send(b":certs\r");
    s.wait_for("the certificates", BOUND, |t| {
        t.contains("Certificates: ") && t.contains("talos CA")
    });
    s.send(b"\x1b");
    s.wait_for("the nodes pane again", BOUND, |t| t.contains("+ Nodes ("));
    assert_eq!(s.quit(BOUND), Some(0));
}
