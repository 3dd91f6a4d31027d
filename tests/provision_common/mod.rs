//! Shared by the provision tests against the sim: `taloscope` run as a process with the sim's
//! talosconfig, kubeconfig and OpenNebula config, a state dir of its own, an edited copy of
//! the config, and the audit log.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::talos_common::{Sim, within};

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn state_dir(sim: &Sim) -> PathBuf {
    let dir = sim.dir.path().join("taloscope-state");
    std::fs::create_dir_all(&dir).expect("state dir");
    dir
}

pub fn config_file(sim: &Sim) -> PathBuf {
    sim.fleet
        .opennebula()
        .expect("the sim runs OpenNebula")
        .config_file()
}

pub fn command(sim: &Sim, config: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_taloscope"));
    cmd.args(args)
        .arg("--config")
        .arg(config)
        .env("HOME", sim.dir.path())
        .env("TALOSCOPE_STATE_DIR", state_dir(sim))
        .env("TALOSCONFIG", sim.fleet.talosconfig_path())
        .env("KUBECONFIG", sim.fleet.kubeconfig_path())
        .env_remove("TALOSCOPE_CONFIG")
        .env_remove("ONE_AUTH")
        .env_remove("ONE_XMLRPC")
        .env_remove("ONEFLOW_URL")
        .kill_on_drop(true);
    cmd
}

pub async fn run(sim: &Sim, config: &Path, args: &[&str]) -> Run {
    run_command(command(sim, config, args)).await
}

/// A [`command`] the caller changed (another environment), run to its end.
pub async fn run_command(mut cmd: tokio::process::Command) -> Run {
    let out: Output = within(120, "taloscope", cmd.output())
        .await
        .expect("taloscope runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `provision --context healthy --role worker`, then `more`.
pub fn provision_worker<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["provision", "--context", "healthy", "--role", "worker"];
    args.extend_from_slice(more);
    args
}

/// The sim's taloscope.yaml with one text replaced, written beside it.
pub fn edited_config(sim: &Sim, name: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(config_file(sim)).expect("sim config");
    assert!(text.contains(from), "{from} in the sim's config:\n{text}");
    let path = sim.dir.path().join(name);
    std::fs::write(&path, text.replace(from, to)).expect("write config");
    path
}

pub fn audit(sim: &Sim) -> String {
    std::fs::read_to_string(state_dir(sim).join("audit.log")).unwrap_or_default()
}

/// A client of the sim's OpenNebula, as the sim's one_auth names its user.
pub fn one_client(sim: &Sim) -> taloscope::opennebula::OneClient {
    use taloscope::opennebula::{Credentials, OneClient};
    let one = sim.fleet.opennebula().expect("the sim runs OpenNebula");
    let auth = std::fs::read_to_string(one.auth_file()).expect("one_auth");
    let creds = Credentials::parse_one_auth(&auth).expect("user:password");
    OneClient::new(
        "sim",
        one.xmlrpc_url(),
        creds,
        std::time::Duration::from_secs(5),
    )
    .expect("client")
}

/// Every VM the sim's OpenNebula holds that is not gone, by id.
pub async fn live_vms(sim: &Sim) -> Vec<u64> {
    use taloscope::opennebula::VmState;
    let vms = one_client(sim).vms().await.expect("the VM pool");
    vms.into_iter()
        .filter(|v| v.state != VmState::DONE)
        .map(|v| v.id)
        .collect()
}
