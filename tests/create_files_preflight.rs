//! Issue 27's "plan what the merge will do", end to end on the sim: everything the merge of the
//! new contexts could refuse at the end of a create (kubectl's `config.lock` held, a read-only
//! kubeconfig, a full disk) is refused by the plan's `context_files` guard before any VM is
//! made, and a missing directory in `KUBECONFIG` is made, as kubectl makes it, by a create
//! that succeeds.
mod create_common;
mod provision_common;
mod talos_common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use create_common::create_args;
use provision_common::{Run, command, config_file, state_dir};
use talos_common::{Sim, scenario, start};

/// `taloscope ARGS` with `KUBECONFIG` set to `kubeconfig`.
async fn run_with(sim: &Sim, kubeconfig: &str, args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = command(sim, &config_file(sim), &args);
    cmd.env("KUBECONFIG", kubeconfig);
    provision_common::run_command(cmd).await
}

fn plan_args() -> Vec<String> {
    let run = create_args("sim-opennebula", 1, 0, "v1.11.3", &["--plan", "-o", "json"]);
    let confirm = run.iter().position(|a| a == "--yes").expect("--yes");
    // The plan alone: no --yes --confirm lab.
    [&run[..confirm], &run[confirm + 3..]].concat()
}

/// The `context_files` guard of a plan's JSON: its verdict and reason.
fn context_files_guard(r: &Run) -> (String, String) {
    let plan: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", r.stdout, r.stderr));
    let guard = plan["guards"]
        .as_array()
        .expect("guards")
        .iter()
        .find(|g| g["id"] == "context_files")
        .unwrap_or_else(|| panic!("the context_files guard: {plan}"))
        .clone();
    let text = |k: &str| guard[k].as_str().unwrap_or_default().to_string();
    (text("verdict"), text("reason"))
}

/// A refused plan, and a run that stops at the same guard before anything is made: no create
/// journal, no VM.
async fn refused_before_any_vm(sim: &Sim, kubeconfig: &str, expect: &str) {
    let r = run_with(sim, kubeconfig, &plan_args()).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let (verdict, reason) = context_files_guard(&r);
    assert_eq!(verdict, "fail", "{reason}");
    assert!(reason.contains(expect), "{expect:?} in {reason}");
    let run = create_args("sim-opennebula", 1, 0, "v1.11.3", &[]);
    let r = run_with(sim, kubeconfig, &run).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        !state_dir(sim).join("clusters/lab.json").exists(),
        "no create started: {}{}",
        r.stdout,
        r.stderr
    );
    let vms = provision_common::one_client(sim)
        .vms()
        .await
        .expect("the sim's VMs");
    assert!(
        !vms.iter().any(|vm| vm.name.starts_with("lab-")),
        "no VM of lab: {vms:?}"
    );
}

/// A small tmpfs mounted for the test, unmounted when dropped.
struct SmallTmpfs(PathBuf);

impl SmallTmpfs {
    /// `None` where the test may not mount one (no privilege, no mount(8)).
    fn mount(at: &Path) -> Option<SmallTmpfs> {
        std::fs::create_dir_all(at).ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallTmpfs(at.to_path_buf()))
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_merge_would_refuse_the_plan_refuses_and_a_missing_directory_is_made() {
    let sim = start(scenario("healthy")).await;
    let kube = sim.fleet.kubeconfig_path();
    let kube_env = kube.display().to_string();

    // kubectl's lock held.
    let mut lock = kube.as_os_str().to_owned();
    lock.push(".lock");
    std::fs::write(&lock, "").unwrap();
    refused_before_any_vm(&sim, &kube_env, ".lock exists").await;
    std::fs::remove_file(&lock).unwrap();

    // A read-only kubeconfig.
    let mode = std::fs::metadata(&kube).unwrap().permissions().mode();
    std::fs::set_permissions(&kube, std::fs::Permissions::from_mode(0o400)).unwrap();
    refused_before_any_vm(&sim, &kube_env, "read-only (mode 0400)").await;
    std::fs::set_permissions(&kube, std::fs::Permissions::from_mode(mode)).unwrap();

    // A full disk, where the test can mount a small tmpfs.
    if let Some(tmpfs) = SmallTmpfs::mount(&sim.dir.path().join("small")) {
        let on_tmpfs = tmpfs.0.join("config");
        std::fs::copy(&kube, &on_tmpfs).unwrap();
        let filler = vec![0u8; 4096];
        let mut fill = std::fs::File::create(tmpfs.0.join("filler")).unwrap();
        while std::io::Write::write_all(&mut fill, &filler).is_ok() {}
        drop(fill);
        let env = format!("{}:{kube_env}", on_tmpfs.display());
        refused_before_any_vm(&sim, &env, "too little free space").await;
    } else {
        eprintln!("skipped the full-disk case: this test may not mount a tmpfs");
    }

    // A missing directory first in KUBECONFIG: the plan passes, and the create makes it.
    let missing = sim.dir.path().join("kube/work/config");
    let env = format!("{}:{kube_env}", missing.display());
    let r = run_with(&sim, &env, &plan_args()).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (verdict, reason) = context_files_guard(&r);
    assert_eq!(verdict, "pass", "{reason}");
    assert!(
        !missing.parent().unwrap().exists(),
        "the plan writes nothing"
    );
    let run = create_args("sim-opennebula", 1, 0, "v1.11.3", &[]);
    let r = run_with(&sim, &env, &run).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let made = std::fs::read_to_string(&missing).expect("the new kubeconfig");
    assert!(made.contains("name: admin@lab"), "{made}");
}
