//! The calls that make a cluster from booted machines, as v1alpha1_server.go answers them:
//! `Bootstrap` (etcd forms on the first control plane: node_life/formation.rs) and `Kubeconfig`
//! (the admin kubeconfig from the formed cluster's CA).
use std::sync::Arc;

use tonic::Status;

use super::apid::Target;
use crate::kube_api::kubeconfig::{KubeconfigEntry, build};
use crate::model::clock::now_unix;
use crate::model::core::Core;
use crate::model::formed_cluster::FormationStage;
use crate::model::scenario::NodeRole;

/// `MachineService.Bootstrap`, its answer recorded whatever it is (upstream logs "bootstrap
/// request received" before any check: v1alpha1_server.go `Bootstrap`).
pub(crate) fn bootstrap(core: &Arc<Core>, t: &Target) -> Result<(), Status> {
    let answer = answer_bootstrap(core, t);
    let code = answer
        .as_ref()
        .map_or_else(Status::code, |()| tonic::Code::Ok);
    core.fleet
        .record
        .bootstrap_answered(t.cluster.name(), t.node.name(), code);
    answer
}

/// Bootstrap as v1alpha1_server.go `Bootstrap` checks it, in its order: CRI up
/// (`IsBootstrapAllowed`), a control plane, then an empty etcd data directory.
fn answer_bootstrap(core: &Arc<Core>, t: &Target) -> Result<(), Status> {
    let status = t.node.status();
    let cri_up = status.up && !status.rebooting;
    if !cri_up {
        return Err(Status::failed_precondition(
            "bootstrap is not available yet",
        ));
    }
    if t.node.role() != NodeRole::ControlPlane {
        return Err(Status::failed_precondition(
            "bootstrap can only be performed on a control plane node",
        ));
    }
    let not_empty = || Status::already_exists("etcd data directory is not empty");
    // A cluster the sim started with was bootstrapped long ago: every control plane has data.
    let Some(f) = t.cluster.formation.clone() else {
        return Err(not_empty());
    };
    {
        let mut p = f.progress();
        if !p.booted.contains(&t.node.node_index) {
            return Err(Status::failed_precondition(
                "bootstrap is not available yet",
            ));
        }
        if !p.etcd_data.insert(t.node.node_index) {
            return Err(not_empty());
        }
    }
    super::machine_changes::record(core, t, "MachineService.Bootstrap");
    if f.stage() == FormationStage::AwaitingBootstrap {
        f.set_stage(FormationStage::EtcdStarting);
        tokio::spawn(crate::node_life::formation::form(
            core.clone(),
            t.cluster.clone(),
            t.node.clone(),
            f.clone(),
        ));
    }
    // A control plane still waiting to join a cluster already bootstrapped elsewhere starts a
    // second etcd upstream; the sim records the call and lets the node join the first one.
    Ok(())
}

/// `MachineService.Kubeconfig` as v1alpha1_server.go `Kubeconfig`: control planes only; the
/// admin kubeconfig (`kubeconfig.GenerateAdmin`: client certificate CN=admin,
/// O=system:masters from the cluster CA, server = `controlPlane.endpoint`) in a .tar.gz holding
/// one file `kubeconfig`, sent as one `common.Data`.
pub(crate) fn kubeconfig(t: &Target) -> Result<Vec<u8>, Status> {
    if t.node.role() != NodeRole::ControlPlane {
        return Err(Status::unimplemented(
            "kubeconfig is only available on control plane nodes",
        ));
    }
    let Some(f) = t.cluster.formation.clone() else {
        return Err(Status::unavailable(
            "this sim cluster has no cluster CA key (it was not formed from a machine config)",
        ));
    };
    let internal = |e: String| Status::internal(e);
    let client = f
        .kube
        .client_cert("admin", "system:masters", false)
        .map_err(|e| internal(e.to_string()))?;
    let name = t.cluster.name();
    let config = build(&[KubeconfigEntry {
        cluster: name.to_string(),
        context: format!("admin@{name}"),
        server: f.endpoint.clone(),
        ca_b64: f.kube.ca_b64(),
        client,
    }]);
    let text = serde_saphyr::to_string(&config).map_err(|e| internal(e.to_string()))?;
    tar_gz_one_file("kubeconfig", text.as_bytes()).map_err(|e| internal(e.to_string()))
}

fn tar_gz_one_file(name: &str, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(data.len() as u64);
    header.set_mode(0o600);
    header.set_mtime(now_unix().max(0) as u64);
    header.set_cksum();
    tar.append_data(&mut header, name, data)?;
    tar.into_inner()?.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_holds_one_file() {
        let gz = tar_gz_one_file("kubeconfig", b"apiVersion: v1\n").unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]));
        let entries: Vec<(String, u64)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.path().unwrap().display().to_string(), e.size())
            })
            .collect();
        assert_eq!(entries, [("kubeconfig".to_string(), 15)]);
    }
}
