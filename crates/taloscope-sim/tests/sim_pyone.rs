//! pyone, OpenNebula's own Python client, against the OpenNebula sim (`tests/sim_pyone.py`).
//! The README's test command (scripts/test) installs pyone; without it this test fails and
//! says how to get it, rather than passing without having checked anything.
mod sim_common;

use std::process::Command;

use sim_common::start_builtin;
use taloscope_sim::NodeRole;

fn pyone_available() -> bool {
    Command::new("python3")
        .args(["-c", "import pyone"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyone_drives_the_xmlrpc_sim() {
    assert!(
        pyone_available(),
        "pyone is not installed: run scripts/test (it installs it), or python3 -m pip install pyone"
    );
    let sim = start_builtin("healthy", 100.0).await;
    let one = sim.fleet.opennebula().expect("OpenNebula sim");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sim_pyone.py");
    let url = one.xmlrpc_url().to_string();
    let auth = one.auth_file();
    let config = one.machine_config_file("healthy", NodeRole::Worker);
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .arg(url)
            .arg(auth)
            .arg("talos-healthy-worker")
            .arg(config)
            .output()
    })
    .await
    .expect("joins")
    .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pyone script failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("pyone ok 127.10.0.6"), "{stdout}");
}
