//! `taloscope etcd` as a process against the sim: on `alarm`, disarm defragments the member
//! over quota and then clears NOSPACE for good (status agrees); a disarm alone brings the
//! alarm straight back, as etcd does; defrag refuses on `cp2-down` naming its guard and runs
//! the leader last on `healthy`; snapshot writes a 0600 file whose size and SHA-256 are what
//! it reports, and refuses a FIFO, a symlink or an existing file (unless --overwrite) as its
//! target; forfeit and remove-member pass and fail their guards; every action is refused
//! with --readonly and with a reader context, each leaving an audit line.
mod upgrade_common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};

use upgrade_common::*;

fn json(stdout: &str, stderr: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stdout}\n{stderr}"))
}

fn etcd_calls(fx: &Fixture) -> Vec<(String, &'static str)> {
    fx.sim
        .state()
        .mutating_calls()
        .into_iter()
        .filter(|c| c.method.contains("Etcd"))
        .map(|c| (c.node, c.method))
        .collect()
}

async fn leader(fx: &Fixture, context: &str) -> String {
    let status = fx.status(context).await;
    status.etcd.leader().expect("a leader").hostname.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disarm_on_alarm_defragments_then_clears_nospace_and_status_turns_healthy() {
    let fx = start(builtin("alarm")).await;
    let mut cmd = fx.taloscope("alarm", "etcd");
    cmd.arg("alarms");
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "an active alarm: {stdout}\n{stderr}");
    assert!(stdout.contains("NOSPACE on cp-3"), "{stdout}");

    let mut cmd = fx.taloscope("alarm", "etcd");
    cmd.args(["disarm", "--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan = json(&stdout, &stderr);
    let steps: Vec<(String, String)> = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["node"].as_str().unwrap().into(),
                s["call"]["call"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        steps[0],
        ("cp-3".to_string(), "defragment".to_string()),
        "{stdout}"
    );
    assert_eq!(steps.last().unwrap().1, "disarm", "{stdout}");
    let space = plan["guards"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["id"] == "etcd_space"))
        .expect("the space guard");
    let reason = space["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("cp-3 2.0 GiB of 2.0 GiB"),
        "DB size against quota: {reason}"
    );

    let mut cmd = fx.taloscope("alarm", "etcd");
    cmd.args(["disarm", "--yes", "--confirm", "alarm"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("cp-3: defragment: 2.0 GiB -> 312.0 MiB"),
        "{stdout}"
    );
    assert!(stdout.contains("disarmed NOSPACE"), "{stdout}");
    let calls = etcd_calls(&fx);
    assert_eq!(
        calls.iter().map(|c| c.1).collect::<Vec<_>>(),
        [
            "MachineService.EtcdDefragment",
            "MachineService.EtcdAlarmDisarm"
        ]
    );
    assert_eq!(calls[0].0, "cp-3");

    let mut cmd = fx.taloscope("alarm", "status");
    cmd.args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let status = json(&stdout, &stderr);
    let etcd = &status["clusters"][0]["etcd"];
    assert_eq!(etcd["alarms"], serde_json::json!([]), "{etcd}");
    assert!(
        etcd["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["healthy"] == true),
        "{etcd}"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    assert!(
        audit.contains("disarm etcd alarms on cp-3") && audit.contains("outcome=\"succeeded\""),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disarm_without_a_defragment_comes_straight_back() {
    let fx = start(builtin("alarm")).await;
    let talos = fx.talos("alarm");
    let status = fx.status("alarm").await;
    let cp1 = status.node("cp-1").expect("cp-1").address.clone();
    let disarmed = talos.etcd_alarm_disarm(&cp1).await.expect("disarm");
    assert_eq!(disarmed.len(), 1);
    let again = talos.etcd_alarm_list(&cp1).await.expect("alarms");
    assert_eq!(again.len(), 1, "cp-3 is still over its quota");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defrag_refuses_while_a_member_is_down_and_runs_the_leader_last() {
    let fx = start(builtin("cp2-down")).await;
    let mut cmd = fx.taloscope("cp2-down", "etcd");
    cmd.args(["defrag", "--yes", "--confirm", "cp2-down"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("guard \"etcd healthy\""),
        "names the guard: {stderr}"
    );
    assert!(stderr.contains("cp-2"), "{stderr}");
    assert!(etcd_calls(&fx).is_empty());
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    assert!(audit.contains("refused by its guards: guard"), "{audit}");
    drop(fx);

    let fx = start(builtin("healthy")).await;
    let lead = leader(&fx, "healthy").await;
    let mut cmd = fx.taloscope("healthy", "etcd");
    cmd.args(["defrag", "--node", &lead, "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "the leader alone first: {stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("one member at a time")),
        "{stdout}"
    );

    let mut cmd = fx.taloscope("healthy", "etcd");
    cmd.args(["defrag", "--yes", "--confirm", "healthy"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let order: Vec<String> = etcd_calls(&fx).into_iter().map(|c| c.0).collect();
    assert_eq!(order.len(), 3);
    assert_eq!(order.last(), Some(&lead), "leader last: {order:?}");
    let status = fx.status("healthy").await;
    for m in &status.etcd.members {
        assert_eq!(m.db_size, m.db_size_in_use, "{} defragmented", m.hostname);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_writes_an_owner_only_file_whose_size_and_hash_it_reports() {
    let fx = start(builtin("healthy")).await;
    let out = fx.dir.path().join("backup/etcd.db");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut cmd = fx.taloscope("healthy", "etcd");
    cmd.args([
        "snapshot",
        "--node",
        "cp-2",
        "--yes",
        "--confirm",
        "healthy",
        "--output",
        "json",
    ])
    .arg("--out")
    .arg(&out);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report = json(&stdout, &stderr);
    let bytes = std::fs::read(&out).expect("the snapshot file");
    assert_eq!(report["snapshot"]["size"], bytes.len() as u64);
    let sha: String = ring::digest::digest(&ring::digest::SHA256, &bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(report["snapshot"]["sha256"], sha);
    assert_eq!(
        &bytes[16..20],
        &0xED0C_DAEDu32.to_le_bytes(),
        "a bbolt file"
    );
    let status = fx.status("healthy").await;
    let db = status
        .etcd
        .members
        .iter()
        .find(|m| m.hostname == "cp-2")
        .unwrap();
    let pages = db.db_size.unwrap() as usize / 4096 * 4096;
    assert_eq!(bytes.len(), pages + 32, "the database and etcd's SHA-256");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_dir(out.parent().unwrap()).unwrap().count(), 1);
}

/// `etcd snapshot --out` at a FIFO, a symlink and an existing file: each refused by the
/// "snapshot file" guard before a byte is asked of etcd, the path left as it was; the
/// existing file is replaced only with --overwrite. Every node lives in the test's own
/// directory (the device case is in snapshot_file's unit tests, made there with mknod).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_refuses_a_fifo_a_symlink_and_an_existing_file_unless_overwrite() {
    let fx = start(builtin("healthy")).await;
    let dir = fx.dir.path().join("backup");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.db");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let existing = dir.join("etcd.db");
    std::fs::write(&existing, b"last week's snapshot").unwrap();
    let link = dir.join("latest.db");
    std::os::unix::fs::symlink(&existing, &link).unwrap();

    let snapshot = |out: &std::path::Path, extra: &[&str]| {
        let mut cmd = fx.taloscope("healthy", "etcd");
        cmd.args([
            "snapshot",
            "--node",
            "cp-2",
            "--yes",
            "--confirm",
            "healthy",
        ])
        .args(extra)
        .arg("--out")
        .arg(out);
        cmd
    };
    let cases = [
        (&fifo, "FIFO", &["--overwrite"][..]),
        (&link, "symlink", &["--overwrite"][..]),
        (&existing, "--overwrite", &[][..]),
    ];
    for (out, said, extra) in cases {
        let (code, stdout, stderr) = output(snapshot(out, extra)).await;
        assert_eq!(code, Some(1), "{}: {stdout}\n{stderr}", out.display());
        assert!(
            stderr.contains("guard \"snapshot file\"") && stderr.contains(said),
            "{}: {stderr}",
            out.display()
        );
    }
    assert!(etcd_calls(&fx).is_empty(), "etcd was not asked");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&existing).unwrap(), b"last week's snapshot");

    let (code, stdout, stderr) = output(snapshot(&existing, &["--overwrite"])).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let bytes = std::fs::read(&existing).unwrap();
    assert_eq!(
        &bytes[16..20],
        &0xED0C_DAEDu32.to_le_bytes(),
        "a bbolt file"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "no part file left: {names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forfeit_needs_the_leader_and_remove_member_a_member_without_a_running_node() {
    let fx = start(builtin("cp2-down")).await;
    let lead = leader(&fx, "cp2-down").await;
    let follower = if lead == "cp-1" { "cp-3" } else { "cp-1" };
    let mut cmd = fx.taloscope("cp2-down", "etcd");
    cmd.args(["forfeit", "--node", follower, "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("is not the leader"), "{stdout}");

    let mut cmd = fx.taloscope("cp2-down", "etcd");
    cmd.args(["remove-member", "--member", follower, "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "a running node: {stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("member has no node")),
        "{stdout}"
    );

    let mut cmd = fx.taloscope("cp2-down", "etcd");
    cmd.args([
        "remove-member",
        "--member",
        "cp-2",
        "--yes",
        "--confirm",
        "cp2-down",
    ]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 member(s) left"), "{stdout}");

    // The plan names the member leadership goes to.
    let mut cmd = fx.taloscope("cp2-down", "etcd");
    cmd.args(["forfeit", "--node", &lead, "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("forfeit leadership to cp-"), "{stdout}");

    let mut cmd = fx.taloscope("cp2-down", "etcd");
    cmd.args(["forfeit", "--node", &lead, "--yes", "--confirm", "cp2-down"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_ne!(leader(&fx, "cp2-down").await, lead, "leadership moved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_action_is_refused_read_only_and_to_a_reader_with_an_audit_line() {
    let fx = start(builtin("alarm")).await;
    let out = fx.dir.path().join("etcd.db");
    let out = out.to_str().unwrap();
    let actions: [&[&str]; 5] = [
        &["disarm"],
        &["defrag"],
        &["snapshot", "--node", "cp-1", "--out", out],
        &["forfeit", "--node", "cp-1"],
        &["remove-member", "--member", "cp-2"],
    ];
    for action in actions {
        let mut cmd = fx.taloscope("alarm", "etcd");
        cmd.arg("--readonly")
            .args(action)
            .args(["--yes", "--confirm", "alarm"]);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(1), "{action:?}: {stdout}\n{stderr}");
        assert!(stderr.contains("read-only"), "{action:?}: {stderr}");

        let mut cmd = fx.taloscope("alarm-reader", "etcd");
        cmd.args(action).args(["--yes", "--confirm", "alarm"]);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(1), "{action:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("guard \"client role\"") && stderr.contains("os:reader"),
            "{action:?}: {stderr}"
        );
    }
    assert!(etcd_calls(&fx).is_empty(), "no etcd call was made");
    assert!(!std::path::Path::new(out).exists());
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    let lines: Vec<&str> = audit.lines().collect();
    let refused_ro = lines
        .iter()
        .filter(|l| l.contains("refused: read-only"))
        .count();
    let refused_role = lines
        .iter()
        .filter(|l| l.contains("refused by its guards: guard") && l.contains("client role"))
        .count();
    assert_eq!((refused_ro, refused_role), (5, 5), "{audit}");
}

/// Issue 27: a defragment while an upgrade holds the cluster's rollout Lease would collide with
/// the member it reboots; it is refused, naming the holder, and no member is touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defrag_during_an_upgrade_is_refused_naming_the_holder() {
    let fx = start(builtin("healthy")).await;
    let kube = fx.kube("healthy").await;
    let _upgrade = kube
        .acquire_rollout_lease(
            "healthy",
            "bob@jump2",
            None,
            (taloscope::rollout::RolloutKind::TalosUpgrade, "v1.12.0", 5),
            std::time::Duration::from_secs(600),
        )
        .await
        .expect("bob's upgrade takes the Lease");
    let mut cmd = fx.taloscope("healthy", "etcd");
    cmd.args(["defrag", "--yes", "--confirm", "healthy"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("bob@jump2"), "names the holder: {stderr}");
    assert!(etcd_calls(&fx).is_empty(), "no member defragmented");
}
