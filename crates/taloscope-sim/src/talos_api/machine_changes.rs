//! The bodies of the MachineService calls that change a node: the legacy
//! Upgrade, ImagePull and the reboot sequence, each as the upstream handler it
//! cites; `machine` routes the calls here (ApplyConfiguration: apply_configuration.rs).
use std::sync::Arc;
use std::time::Instant;

use tonic::Status;

use super::apid::Target;
use super::image_pull;
use super::machine_etcd::validate_etcd_for_upgrade;
use crate::model::clock::actor_id;
use crate::model::core::Core;
use crate::model::scenario::{NodeRole, parse_version};
use crate::node_life::node::{Sequence, spawn_reboot};
use taloscope_proto::machine::*;

/// The installer tag an image reference asks for (`ghcr.io/siderolabs/installer:v1.11.5`).
pub(crate) fn image_version(image: &str) -> Option<String> {
    let last = image.rsplit('/').next()?;
    let tag = last.split('@').next()?.rsplit_once(':')?.1;
    parse_version(tag).map(|_| tag.to_string())
}

pub(super) fn locked() -> Status {
    Status::failed_precondition("locked: another sequence is already running")
}

/// The legacy upgrade as upstream's `Upgrade` handler runs it
/// (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go, v1.10
/// to v1.13, deprecated in v1.13 but still served): pull and validate the installer image under
/// the caller's context, then the etcd check on control planes unless `force` (`preserve` plays
/// no part), then start the sequence and answer with the ack.
pub(super) async fn upgrade(
    core: &Arc<Core>,
    t: &Target,
    req: &UpgradeRequest,
    deadline: Option<Instant>,
) -> Result<Upgrade, Status> {
    let invalid = |reason: String| {
        Status::unknown(format!(
            "error validating installer image {:?}: {reason}",
            req.image
        ))
    };
    let Some(version) = image_version(&req.image) else {
        return Err(invalid("no version tag".into()));
    };
    image_pull::pull(core, t, &req.image, deadline)
        .await
        .map_err(|e| match e.code() {
            tonic::Code::DeadlineExceeded => e,
            _ => invalid(e.message().to_string()),
        })?;
    if t.node.role() == NodeRole::ControlPlane && !req.force {
        validate_etcd_for_upgrade(t)
            .map_err(|e| Status::unknown(format!("error validating etcd for upgrade: {e}")))?;
    }
    if t.node.lock().busy {
        return Err(locked());
    }
    t.node.lock().staged_version = Some(version);
    let actor = actor_id();
    if !spawn_reboot(core, &t.cluster, &t.node, actor.clone(), Sequence::Upgrade) {
        return Err(locked());
    }
    record(core, t, "MachineService.Upgrade");
    core.fleet
        .record
        .upgrade_started(t.cluster.name(), t.node.name(), t.node.role());
    Ok(Upgrade {
        metadata: None,
        ack: "Upgrade request received".into(),
        actor_id: actor,
    })
}

/// `Rollback` as upstream's handler runs it (siderolabs/talos
/// internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go `Rollback`): the
/// bootloader's default entry reverted to the other one (grub/revert.go: A and B flipped, and
/// a node never upgraded has nothing there: `cannot rollback to "", label does not exist`),
/// then the reboot sequence, answered before it runs. Upstream runs that sequence
/// WithTakeover; the sim's node runs one sequence at a time, so a busy node answers locked.
pub(super) fn rollback(core: &Arc<Core>, t: &Target) -> Result<Rollback, Status> {
    let previous = t.node.lock().previous_version.clone();
    let Some(previous) = previous else {
        return Err(Status::unknown(
            "cannot rollback to \"\", label does not exist",
        ));
    };
    if t.node.lock().busy {
        return Err(locked());
    }
    t.node.lock().staged_version = Some(previous);
    if !spawn_reboot(core, &t.cluster, &t.node, actor_id(), Sequence::Reboot) {
        t.node.lock().staged_version = None;
        return Err(locked());
    }
    record(core, t, "MachineService.Rollback");
    Ok(Rollback { metadata: None })
}

/// `ImagePull` into the CRI containerd, as upstream's handler
/// (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_images.go).
pub(super) async fn image_pull_one(
    core: &Arc<Core>,
    t: &Target,
    req: &ImagePullRequest,
    deadline: Option<Instant>,
) -> Result<ImagePull, Status> {
    image_pull::check_namespace(req.namespace)?;
    image_pull::pull(core, t, &req.reference, deadline).await?;
    record(core, t, "MachineService.ImagePull");
    Ok(ImagePull { metadata: None })
}

/// The sequence a reboot request runs. `FORCE` exists from v1.12 (api/machine/machine.proto,
/// `RebootRequest.Mode`); an older node does not know the value and reboots as by default
/// (v1.11 v1alpha1_sequencer.go `Reboot` checks no mode). POWERCYCLE only changes how the
/// machine restarts, not what the sim shows.
pub(super) fn reboot_sequence(t: &Target, mode: i32) -> Sequence {
    let knows_force = parse_version(&t.node.status.borrow().talos_version)
        .is_some_and(|(major, minor, _)| (major, minor) >= (1, 12));
    if knows_force && mode == reboot_request::Mode::Force as i32 {
        Sequence::ForceReboot
    } else {
        Sequence::Reboot
    }
}

/// Writes an accepted mutating call into the sim's record.
pub(crate) fn record(core: &Core, t: &Target, method: &'static str) {
    core.fleet
        .record
        .call(t.cluster.name(), t.node.name(), method);
}
