//! How the upgrade runner sees the cluster: the same status collection the fleet view uses
//! (Talos nodes, etcd, and the Kubernetes nodes when a kube context is paired), and when a
//! node counts as done: back, running and ready on the target, Kubernetes Ready, etcd healthy,
//! and booted again (its boot id changed, where the client may read it).
use crate::fleet::{
    ClusterStatus, CollectOptions, KubeSource, NodeStatus, TalosSide, collect_status,
};
use crate::kube::KubeClient;
use crate::talos::{MachineStage, TalosClient, TalosError};
use crate::versions::{TalosVersion, Version};

use super::plan::PlanStep;

/// One cluster's live status, read on demand.
#[derive(Clone)]
pub struct ClusterObserver {
    pub cluster: String,
    pub talos: TalosClient,
    /// `None` when the cluster has no paired kube context: Kubernetes readiness is not checked.
    pub kube: Option<KubeClient>,
    /// The talosconfig context's nodes (empty: its endpoints).
    pub nodes: Vec<String>,
    pub options: CollectOptions,
}

impl ClusterObserver {
    /// Status of every node, etcd and (when paired) Kubernetes: the one collector's round,
    /// as `status` and the console's poller see it.
    pub async fn status(&self) -> ClusterStatus {
        let talos = TalosSide::with_client(self.talos.clone(), &self.nodes);
        let kube = self
            .kube
            .clone()
            .map_or(KubeSource::None, KubeSource::Client);
        collect_status(&self.cluster, Some(talos), kube, self.options).await
    }
}

/// The node of a step in a status, by name or address.
pub fn step_node<'a>(status: &'a ClusterStatus, step: &PlanStep) -> Option<&'a NodeStatus> {
    status
        .node(&step.node)
        .or_else(|| status.node(&step.address))
}

/// The node's Talos version, when it reports a valid one.
pub fn running_version(node: &NodeStatus) -> Option<TalosVersion> {
    node.talos_version
        .as_deref()
        .and_then(|v| Version::parse(v).ok())
}

/// `Ok` when the step's node is done; otherwise what it still waits for, in the operator's
/// words ("Kubernetes node NotReady").
pub fn node_done(
    status: &ClusterStatus,
    step: &PlanStep,
    target: &TalosVersion,
    kube_checked: bool,
) -> Result<(), String> {
    let Some(node) = step_node(status, step) else {
        return Err("not in the cluster status".into());
    };
    if let Some(error) = &node.error {
        return Err(super::downtime::talos_api_down(error));
    }
    match running_version(node) {
        Some(v) if &v == target => {}
        Some(v) => return Err(format!("runs {v}, not {target} yet")),
        None => return Err("no Talos version reported yet".into()),
    }
    node_back(status, node, step.etcd_member.as_deref(), kube_checked)
}

/// `Ok` when a node that went down is back: running and ready, Kubernetes Ready (when
/// checked) and its etcd member (when it has one) healthy; otherwise what it still waits for.
/// An upgraded node must also run the target ([`node_done`]); a rebooted one need not.
pub fn node_back(
    status: &ClusterStatus,
    node: &NodeStatus,
    etcd_member: Option<&str>,
    kube_checked: bool,
) -> Result<(), String> {
    if let Some(error) = &node.error {
        return Err(super::downtime::talos_api_down(error));
    }
    match node.stage {
        Some(MachineStage::Running) => {}
        Some(stage) => return Err(format!("stage {stage}")),
        None => return Err("stage unknown".into()),
    }
    if !node.ready {
        let unmet = node.unmet_names();
        return Err(if unmet.is_empty() {
            "Talos not ready".into()
        } else {
            format!("Talos not ready (unmet: {})", unmet.join(", "))
        });
    }
    if kube_checked {
        match node.k8s_ready {
            Some(true) => {}
            Some(false) => return Err("Kubernetes node NotReady".into()),
            None => return Err("Kubernetes node not seen yet".into()),
        }
    }
    if let Some(id) = etcd_member {
        let member = status.etcd.members.iter().find(|m| m.id == id);
        match member {
            Some(m) if m.healthy => {}
            Some(_) => return Err("etcd member not healthy yet".into()),
            None => return Err("etcd member not listed yet".into()),
        }
    }
    Ok(())
}

/// talosctl's `BootIDChangedPostCheckFn`: the boot id read before the upgrade call; the node
/// is only done once it answers with another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootIdCheck {
    Before(String),
    /// Not readable, so not checked; why, in the operator's words.
    Skipped(String),
}

impl BootIdCheck {
    /// From the read before the upgrade call. A refusal for the client's role (Read needs
    /// os:admin) or a node that does not serve Read skips the check, as talosctl does; any
    /// other failure is the step's.
    pub fn from_read(read: Result<String, TalosError>) -> Result<BootIdCheck, TalosError> {
        match read {
            Ok(id) if !id.is_empty() => Ok(BootIdCheck::Before(id)),
            Ok(_) => Ok(BootIdCheck::Skipped(
                "boot id check skipped: the node reported an empty boot id".into(),
            )),
            Err(TalosError::PermissionDenied { .. }) => Ok(BootIdCheck::Skipped(
                "boot id check skipped: the client role may not read it (needs os:admin)".into(),
            )),
            Err(TalosError::Rpc {
                code: tonic::Code::Unimplemented,
                ..
            }) => Ok(BootIdCheck::Skipped(
                "boot id check skipped: the node does not serve MachineService.Read".into(),
            )),
            Err(e) => Err(e),
        }
    }

    /// `Ok` once the node booted again: the boot id `now` (`None`: not readable yet) differs
    /// from the one before. A skipped check always passes.
    pub fn verdict(&self, now: Option<&str>) -> Result<(), String> {
        match (self, now) {
            (BootIdCheck::Skipped(_), _) => Ok(()),
            (BootIdCheck::Before(_), None) => Err("boot id not readable yet".into()),
            (BootIdCheck::Before(before), Some(now)) if now.trim() == before => {
                Err("boot id unchanged: the node has not booted again yet".into())
            }
            (BootIdCheck::Before(_), Some(_)) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{EtcdMemberReport, EtcdReport, NodeRole};
    use crate::upgrade::plan::StepState;

    fn step() -> PlanStep {
        PlanStep {
            node: "cp-1".into(),
            address: "127.10.0.1".into(),
            role: NodeRole::Controlplane,
            from: Version::parse("v1.11.3").ok(),
            api: None,
            etcd_member: Some("00000000000000aa".into()),
            forfeit_leadership: false,
            state: StepState::Upgrade,
            batch: Some(0),
        }
    }

    fn status(version: &str, k8s: Option<bool>, healthy: bool) -> ClusterStatus {
        ClusterStatus {
            name: "lab".into(),
            nodes: vec![NodeStatus {
                name: "cp-1".into(),
                address: "127.10.0.1".into(),
                talos_version: Some(version.into()),
                stage: Some(MachineStage::Running),
                ready: true,
                k8s_ready: k8s,
                ..Default::default()
            }],
            etcd: EtcdReport {
                members: vec![EtcdMemberReport {
                    id: "00000000000000aa".into(),
                    hostname: "cp-1".into(),
                    healthy,
                    ..Default::default()
                }],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn boot_id_must_change_unless_it_cannot_be_read() {
        let before = BootIdCheck::from_read(Ok("b-1".into())).expect("read");
        assert_eq!(before, BootIdCheck::Before("b-1".into()));
        assert!(before.verdict(Some("b-1")).is_err(), "same boot");
        assert!(before.verdict(None).is_err(), "not readable yet");
        assert_eq!(before.verdict(Some("b-2\n")), Ok(()));
        let denied = BootIdCheck::from_read(Err(TalosError::PermissionDenied {
            node: "cp-1".into(),
            call: "Read",
            message: "not authorized".into(),
        }))
        .expect("skipped, not failed");
        assert!(matches!(&denied, BootIdCheck::Skipped(why) if why.contains("os:admin")));
        assert_eq!(denied.verdict(None), Ok(()));
        let old = BootIdCheck::from_read(Err(TalosError::Rpc {
            node: "cp-1".into(),
            call: "Read",
            code: tonic::Code::Unimplemented,
            message: "unknown method".into(),
        }))
        .expect("skipped");
        assert!(matches!(old, BootIdCheck::Skipped(_)));
        let down = BootIdCheck::from_read(Err(TalosError::Unreachable {
            node: "cp-1".into(),
            reason: "refused".into(),
        }));
        assert!(down.is_err(), "an unreachable node fails the step");
    }

    #[test]
    fn a_rebooting_node_that_does_not_answer_is_said_as_expected_downtime() {
        let mut down = status("v1.11.3", Some(true), true);
        down.nodes[0].error = Some(
            "node cp-1 is unreachable: transport error: tcp connect error: Connection refused (os error 111)"
                .into(),
        );
        let why = node_back(&down, &down.nodes[0], None, true).expect_err("down");
        assert_eq!(
            why,
            "its Talos API is not answering yet (connection refused): expected while the node reboots"
        );
        let target = Version::parse("v1.12.0").unwrap();
        assert_eq!(node_done(&down, &step(), &target, true), Err(why));
    }

    #[test]
    fn done_needs_target_version_kubernetes_ready_and_healthy_etcd() {
        let target = Version::parse("v1.12.0").unwrap();
        let s = step();
        assert_eq!(
            node_done(&status("v1.12.0", Some(true), true), &s, &target, true),
            Ok(())
        );
        let old = node_done(&status("v1.11.3", Some(true), true), &s, &target, true);
        assert_eq!(old, Err("runs v1.11.3, not v1.12.0 yet".into()));
        let notready = node_done(&status("v1.12.0", Some(false), true), &s, &target, true);
        assert_eq!(notready, Err("Kubernetes node NotReady".into()));
        let sick = node_done(&status("v1.12.0", Some(true), false), &s, &target, true);
        assert_eq!(sick, Err("etcd member not healthy yet".into()));
        assert_eq!(
            node_done(&status("v1.12.0", None, true), &s, &target, false),
            Ok(()),
            "without a kube context Kubernetes readiness is not checked"
        );
    }
}
