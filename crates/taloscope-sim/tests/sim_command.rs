//! `taloscope-sim sim` as a process: prints the ready line once listening, serves the talosconfig it
//! wrote, stops on SIGTERM; a bad scenario file names the file and line and exits 2. Also the
//! 5,000-node `fleet` scenario starts and answers.
mod sim_common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sim_common::{machine, with_meta};

fn taloscope_sim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_taloscope-sim"))
}

#[test]
fn bad_scenario_file_names_file_and_line_and_exits_2() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "clusters:\n  - name: lab\n    nodes:\n      - name: cp-1\n        role: controlplane\n        address: 192.168.1.10\n",
    )
    .expect("write");
    let out = taloscope_sim()
        .args(["sim", "--scenario"])
        .arg(&path)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml") && stderr.contains("line 6"),
        "{stderr}"
    );
    assert!(stderr.contains("127.0.0.0/8"), "{stderr}");
}

#[test]
fn sim_prints_ready_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().expect("dir");
    let mut child = taloscope_sim()
        .args([
            "sim",
            "--scenario",
            "single-cp",
            "--time-scale",
            "100",
            "--state-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("ready line in time");
    let expected = format!(
        "ready talosconfig={}\n",
        dir.path().join("talosconfig").display()
    );
    assert_eq!(line, expected);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        sim_common::install_crypto_provider();
        let text = std::fs::read_to_string(dir.path().join("talosconfig")).expect("talosconfig");
        let config: sim_common::TalosConfig = serde_saphyr::from_str(&text).expect("parses");
        let ctx = config.contexts.get("single-cp").expect("context").clone();
        let mut client = machine(&ctx, &ctx.endpoints[0]).await;
        let v = client
            .version(with_meta((), "node", "127.10.0.2"))
            .await
            .expect("version");
        assert_eq!(
            v.into_inner().messages[0].version.as_ref().expect("v").tag,
            "v1.11.3"
        );
    });
    // SAFETY: sending SIGTERM to the child this test spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{status:?}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sim did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn fleet_scenario_starts_5000_nodes_and_answers() {
    let started = Instant::now();
    let sim = sim_common::start_builtin("fleet", 100.0).await;
    eprintln!("fleet of 5000 nodes started in {:?}", started.elapsed());
    let state = sim.fleet.state();
    assert_eq!(state.clusters().len(), 20);
    assert!(
        state
            .clusters()
            .iter()
            .all(|c| c.nodes().len() == 250 && c.nodes().iter().all(|n| n.status().up))
    );
    let ctx = sim.context("fleet-20");
    assert_eq!(ctx.nodes.len(), 250);
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let last = client
        .hostname(with_meta((), "node", "127.10.19.250"))
        .await
        .expect("last node")
        .into_inner();
    assert_eq!(last.messages[0].hostname, "w-247");
    sim.fleet.shutdown().await;
}
