//! The findings: the known deadlocks of the Talos control-plane provider found by comparing
//! the etcd members read over the Talos API with the workload cluster's Machines, each with
//! its explanation and the fix that is safe to automate. Pure.
use serde::Serialize;

use crate::capi::{ClusterTree, MachineNode, MachineRole, tree::condition};
use crate::fleet::{ClusterStatus, EtcdMemberReport, FleetModel, NodeStatus};

/// The TalosControlPlane condition the provider's etcd health check writes
/// (siderolabs/cluster-api-control-plane-provider-talos api/v1alpha3/conditions.go).
const ETCD_HEALTHY: &str = "EtcdClusterHealthyCondition";

/// Which deadlock a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A control-plane rollout or scale-down waits "for etcd to become healthy before scaling
    /// down" while one of its Machines' etcd member keeps failing (controllers/scale.go).
    StuckRollout,
    /// An etcd member no control-plane Machine's node is: its Machine was deleted behind the
    /// provider's back, and the health check counts one member too many (controllers/etcd.go).
    OrphanedMember,
    /// The only control plane's etcd member stopped: no quorum, and the provider can neither
    /// scale down to zero nor join a replacement; a reboot starts etcd again.
    #[serde(rename = "etcd-stopped")]
    StoppedSingleMember,
    /// A control-plane Machine that is not being deleted whose node's etcd member already left
    /// (a scale-down's `gracefulEtcdLeave` ran, the Machine's deletion did not): the health
    /// check counts one member too few, forever (CACPPT #237, #225, #193).
    EtcdLeft,
    /// A rollout's surge Machine that never got a node: the provider waits for every node to
    /// boot before it scales down, and cannot reach the Machine ("no addresses were found for
    /// node", controllers/configs.go).
    NoNodeRef,
    /// A Machine being deleted whose node's drain is refused (a PodDisruptionBudget allows no
    /// eviction): the machine controller retries it forever unless the Machine sets
    /// `nodeDrainTimeout` (cluster-api machine_controller.go `reconcileDelete`).
    DrainBlocked,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::StuckRollout => "stuck-rollout",
            FindingKind::OrphanedMember => "orphaned-member",
            FindingKind::StoppedSingleMember => "etcd-stopped",
            FindingKind::EtcdLeft => "etcd-left",
            FindingKind::NoNodeRef => "no-node-ref",
            FindingKind::DrainBlocked => "drain-blocked",
        }
    }
}

/// What a finding's fix does; `None` on a finding means no fix is safe to automate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "fix",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Fix {
    /// Remove the member by id (EtcdRemoveMemberByID), as `taloscope etcd remove-member`.
    RemoveEtcdMember { member_id: String, hostname: String },
    /// Delete the Machine; its owner (the TalosControlPlane) replaces it.
    DeleteMachine {
        namespace: String,
        machine: String,
        /// Its node, and the node's etcd member (16 hex digits) when it has one.
        node: String,
        member_id: Option<String>,
    },
    /// Reboot the only control plane's node: Talos starts etcd at every boot, from the data
    /// it keeps in /var/lib/etcd, and starts or restarts etcd through no API call.
    RebootNode { machine: String, node: String },
}

impl Fix {
    /// The fix in the operator's words.
    pub fn describe(&self) -> String {
        match self {
            Fix::RemoveEtcdMember {
                member_id,
                hostname,
            } => format!("remove etcd member {hostname} ({member_id})"),
            Fix::DeleteMachine {
                namespace, machine, ..
            } => format!("delete Machine {namespace}/{machine}"),
            Fix::RebootNode { node, .. } => {
                format!("reboot node {node}: etcd starts again at boot")
            }
        }
    }
}

/// One deadlock found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// What `--fix` takes: `<kind>/<machine or member>`.
    pub id: String,
    pub kind: FindingKind,
    /// The Machine or etcd member it is about.
    pub subject: String,
    /// One line.
    pub summary: String,
    /// Why it is stuck, and what the fix (or the operator) does about it.
    pub explanation: String,
    pub fix: Option<Fix>,
}

/// The stuck states of `cluster` as the fleet model shows them now; none while its tree or
/// status is not read yet.
pub fn findings_of(fleet: &FleetModel, cluster: &str) -> Vec<Finding> {
    let Some((_, tree)) = fleet.capi.owned_tree(cluster) else {
        return Vec::new();
    };
    match fleet.cluster(cluster).filter(|l| l.has_data()) {
        Some(live) => diagnose(&tree, &live.status),
        None => Vec::new(),
    }
}

/// Every deadlock of `tree` (the workload cluster as its management cluster sees it) against
/// `status` (the same cluster over the Talos API). When etcd could not be read, only the
/// stopped single member (found by its answering node).
pub fn diagnose(tree: &ClusterTree, status: &ClusterStatus) -> Vec<Finding> {
    let mut findings = drain_blocked(tree);
    let machines: Vec<&MachineNode> = tree
        .machines
        .iter()
        .filter(|m| m.role == MachineRole::Controlplane && !m.deleting)
        .collect();
    if machines.is_empty() {
        return findings;
    }
    // A stopped etcd answers nothing: the only member is found by its node, not by etcd.
    if machines.len() == 1 {
        findings.extend(stopped_single_member(machines[0], status));
    }
    if status.etcd.members.is_empty() {
        return findings;
    }
    if machines.len() > 1 {
        findings.extend(stuck_rollout(tree, &machines, status));
        findings.extend(etcd_left(tree, &machines, status));
        findings.extend(no_node_ref(tree, &machines));
    }
    findings.extend(orphaned_members(tree, &machines, status));
    findings
}

/// The name an etcd member of `node` carries: the node name cut at the first `.`, as the
/// provider's `auditEtcd` matches members to Machines (etcd.go: "break apart the noderef name
/// in case it's an fqdn (like in AWS)"); compared without case.
pub fn member_name(node: &str) -> &str {
    node.split('.').next().unwrap_or(node)
}

/// Whether etcd member `hostname` is the member of `node`.
pub fn is_member_of(hostname: &str, node: &str) -> bool {
    !node.is_empty() && member_name(hostname).eq_ignore_ascii_case(member_name(node))
}

/// The etcd member of a Machine's node.
fn member_of<'a>(machine: &MachineNode, status: &'a ClusterStatus) -> Option<&'a EtcdMemberReport> {
    status
        .etcd
        .members
        .iter()
        .find(|m| is_member_of(&m.hostname, &machine.node))
}

/// The provider's own words about etcd, when its health check fails.
fn provider_says(tree: &ClusterTree) -> String {
    tree.control_plane
        .as_ref()
        .and_then(|cp| condition(&cp.conditions, ETCD_HEALTHY))
        .filter(|c| !c.is_true() && !c.message.is_empty())
        .map(|c| {
            format!(
                " The provider says: \"{}\".",
                crate::printable::line(&c.message)
            )
        })
        .unwrap_or_default()
}

fn errors_text(member: &EtcdMemberReport) -> String {
    match member.errors.first() {
        Some(e) => crate::printable::line(e),
        None => "does not answer".to_string(),
    }
}

/// scale.go `scaleDownControlPlane`: with more Machines than replicas (a rollout's surge, or
/// a scale-down) the provider waits for a healthy etcd first, and etcd.go `etcdHealthcheck`
/// fails as long as one Machine's member fails: nothing changes until that Machine goes.
fn stuck_rollout(
    tree: &ClusterTree,
    machines: &[&MachineNode],
    status: &ClusterStatus,
) -> Vec<Finding> {
    let Some(cp) = tree.control_plane.as_ref() else {
        return Vec::new();
    };
    let outdated = machines.iter().filter(|m| !m.up_to_date).count();
    if outdated == 0 && machines.len() <= cp.counts.replicas as usize {
        return Vec::new();
    }
    let mut stuck: Vec<(&MachineNode, &EtcdMemberReport)> = machines
        .iter()
        .filter_map(|m| member_of(m, status).map(|member| (*m, member)))
        .filter(|(_, member)| !member.healthy)
        .collect();
    // The outdated ones first: they are the ones the scale-down would pick.
    stuck.sort_by_key(|(m, _)| m.up_to_date);
    let waiting = if outdated > 0 {
        format!(
            "The rollout of {} to {} ({outdated} Machine(s) outdated, {} of {} replicas)",
            cp.name,
            cp.version,
            machines.len(),
            cp.counts.replicas
        )
    } else {
        format!(
            "The scale-down of {} to {} replicas ({} Machines)",
            cp.name,
            cp.counts.replicas,
            machines.len()
        )
    };
    stuck
        .into_iter()
        .map(|(m, member)| Finding {
            id: format!("{}/{}", FindingKind::StuckRollout.as_str(), m.name),
            kind: FindingKind::StuckRollout,
            subject: m.name.clone(),
            summary: format!(
                "rollout stuck: etcd member {} of Machine {} is unhealthy ({})",
                member.hostname,
                m.name,
                errors_text(member)
            ),
            explanation: format!(
                "{waiting} waits \"for etcd to become healthy before scaling down\", and etcd cannot become healthy while the member of Machine {} fails: the provider never deletes a Machine on its own here.{} Deleting Machine {} takes its node and member away; the provider removes the member left behind, etcd is healthy again, and the rollout goes on machine by machine. (The cluster.x-k8s.io/delete-machine annotation only chooses which Machine goes first; it does not get past the wait.)",
                m.name,
                provider_says(tree),
                m.name
            ),
            fix: Some(Fix::DeleteMachine {
                namespace: tree.namespace.clone(),
                machine: m.name.clone(),
                node: m.node.clone(),
                member_id: Some(member.id.clone()),
            }),
        })
        .collect()
}

/// Machines with a node but no etcd member, while etcd answers: their member left (a
/// scale-down's `gracefulEtcdLeave`, or `etcd leave` by hand) and the Machine stayed. etcd.go
/// `etcdHealthcheck` then fails ("expected to have 3 members, got 2", or the node's etcd
/// `not in expected state "Running"`) and holds every rollout and scale-down; upstream's way
/// out is deleting the Machine (CACPPT #237, #193; v0.5.13 marks such a Machine with the
/// `etcd-leaving` annotation).
fn etcd_left(
    tree: &ClusterTree,
    machines: &[&MachineNode],
    status: &ClusterStatus,
) -> Vec<Finding> {
    let members = status.etcd.members.len();
    machines
        .iter()
        .filter(|m| !m.node.is_empty() && member_of(m, status).is_none())
        .map(|m| Finding {
            id: format!("{}/{}", FindingKind::EtcdLeft.as_str(), m.name),
            kind: FindingKind::EtcdLeft,
            subject: m.name.clone(),
            summary: format!(
                "Machine {} is not being deleted, yet its node {} left etcd: {members} members for {} control-plane Machines",
                m.name,
                m.node,
                machines.len()
            ),
            explanation: format!(
                "The etcd member of {} is gone while its Machine stays, as when a scale-down made the member leave and the Machine's deletion never followed. The provider's health check expects one member per Machine and etcd running on every node, so it fails on every pass and holds every rollout and scale-down.{} Deleting Machine {} ends it: it has no member to lose, so etcd keeps its quorum, and the provider creates a replacement that joins etcd.",
                m.node,
                provider_says(tree),
                m.name
            ),
            fix: Some(Fix::DeleteMachine {
                namespace: tree.namespace.clone(),
                machine: m.name.clone(),
                node: m.node.clone(),
                member_id: None,
            }),
        })
        .collect()
}

/// A control-plane Machine without a node while the control plane has more Machines than
/// replicas (a rollout's surge) and every other Machine has one: scale.go
/// `scaleDownControlPlane` waits "for all nodes to finish boot sequence", and configs.go
/// `talosconfigForMachines` cannot reach it ("no addresses were found for node"). A surge
/// Machine still booting looks the same for a few minutes, which the explanation says.
fn no_node_ref(tree: &ClusterTree, machines: &[&MachineNode]) -> Vec<Finding> {
    let Some(cp) = tree.control_plane.as_ref() else {
        return Vec::new();
    };
    let nodeless: Vec<&&MachineNode> = machines.iter().filter(|m| m.node.is_empty()).collect();
    if machines.len() <= cp.counts.replicas as usize || nodeless.len() != 1 {
        return Vec::new();
    }
    nodeless
        .into_iter()
        .map(|m| Finding {
            id: format!("{}/{}", FindingKind::NoNodeRef.as_str(), m.name),
            kind: FindingKind::NoNodeRef,
            subject: m.name.clone(),
            summary: format!(
                "surge Machine {} has no node: {} Machines for {} replicas",
                m.name,
                machines.len(),
                cp.counts.replicas
            ),
            explanation: format!(
                "{} made Machine {} to roll its control plane, but the Machine never got a node (its VM did not boot or never joined). The provider scales down only once every node finished booting, and cannot even reach the Machine (\"no addresses were found for node\"), so the rollout waits forever.{} If it has been so for minutes (a booting Machine looks the same at first), deleting Machine {} ends it: it has no etcd member, and the provider makes a new surge Machine.",
                cp.name,
                m.name,
                provider_says(tree),
                m.name
            ),
            fix: Some(Fix::DeleteMachine {
                namespace: tree.namespace.clone(),
                machine: m.name.clone(),
                node: String::new(),
                member_id: None,
            }),
        })
        .collect()
}

/// Machines being deleted whose drain is refused: cluster-api's machine controller
/// (machine_controller.go `reconcileDelete`) drains a Machine's node before anything else goes,
/// and says so in the `Deleting` condition (reason `DrainingNode`, a message listing each pod
/// still on the node and why). It retries until the evictions pass, or until the Machine's
/// `spec.nodeDrainTimeout` when one is set (`isNodeDrainAllowed`). No fix is automated: the
/// ways out change the workload's availability, which is the operator's call.
fn drain_blocked(tree: &ClusterTree) -> Vec<Finding> {
    tree.machines
        .iter()
        .filter(|m| m.deleting)
        .filter_map(|m| {
            let deleting = condition(&m.conditions, "Deleting")?;
            if deleting.reason != "DrainingNode" || !deleting.message.contains("* Pod ") {
                return None;
            }
            let node = if m.node.is_empty() { &m.name } else { &m.node };
            Some(Finding {
                id: format!("{}/{}", FindingKind::DrainBlocked.as_str(), m.name),
                kind: FindingKind::DrainBlocked,
                subject: m.name.clone(),
                summary: format!(
                    "Machine {} is stuck deleting: the drain of node {node} is refused",
                    m.name
                ),
                explanation: format!(
                    "Machine {}/{} is being deleted, and the machine controller drains its node {node} before the Machine, its VM and its Node go. Evictions are refused: {} It retries them until they pass (or until the Machine's spec.nodeDrainTimeout, when set), so the Machine stays, and whatever waits on it (a scale-down, a rollout) waits too. Let the budget allow a pod down (scale its workload up, or relax the PodDisruptionBudget); or, accepting the disruption, annotate the Machine machine.cluster.x-k8s.io/exclude-node-draining to skip the drain.",
                    tree.namespace,
                    m.name,
                    deleting.message.replace('\n', " ")
                ),
                fix: None,
            })
        })
        .collect()
}

/// etcd.go `etcdHealthcheck` expects one member per Machine and `auditEtcd` removes the rest,
/// but only from a provider that audits (and never while a Machine has no nodeRef).
fn orphaned_members(
    tree: &ClusterTree,
    machines: &[&MachineNode],
    status: &ClusterStatus,
) -> Vec<Finding> {
    if machines.iter().any(|m| m.node.is_empty()) {
        return Vec::new();
    }
    let count = status.etcd.members.len();
    status
        .etcd
        .members
        .iter()
        .filter(|member| {
            !tree.machines.iter().any(|m| {
                m.role == MachineRole::Controlplane && is_member_of(&member.hostname, &m.node)
            })
        })
        .map(|member| {
            let name = if member.hostname.is_empty() {
                member.id.clone()
            } else {
                member.hostname.clone()
            };
            Finding {
                id: format!("{}/{name}", FindingKind::OrphanedMember.as_str()),
                kind: FindingKind::OrphanedMember,
                subject: name.clone(),
                summary: format!(
                    "etcd member {name} ({}) has no Machine: {count} members for {} control-plane Machines",
                    member.id,
                    machines.len()
                ),
                explanation: format!(
                    "No control-plane Machine of {}/{} has a node named {name}, yet etcd still lists it: its Machine was deleted without the member leaving (out of band, or by a provider release that does not audit etcd). The provider's health check expects {} members and finds {count}, so it holds every scale-down and rollout.{} Removing the member by its id (EtcdRemoveMemberByID, as `taloscope etcd remove-member` does) ends it; the guards check that no running node is that member and that etcd keeps its quorum.",
                    tree.namespace,
                    tree.cluster,
                    machines.len(),
                    provider_says(tree)
                ),
                fix: Some(Fix::RemoveEtcdMember {
                    member_id: member.id.clone(),
                    hostname: member.hostname.clone(),
                }),
            }
        })
        .collect()
}

/// What Talos reports (`MachineStatus` unmet conditions, machine_status.go `servicesCheck`)
/// when a control plane's etcd service is not running.
const ETCD_NOT_RUNNING: &str = "etcd not running";

/// The Talos disaster recovery, for when etcd does not come back: the next step after the fix.
pub fn recovery_steps(node: &str) -> String {
    format!(
        "Recovery, as Talos documents it (disaster recovery): 1) read the etcd service's log (`taloscope logs --node {node} etcd`); 2) take the database (`taloscope etcd snapshot` if the member still answers, else `talosctl cp /var/lib/etcd/member/snap/db`); 3) reset the node's EPHEMERAL partition and `talosctl bootstrap --recover-from` the snapshot."
    )
}

/// How the only member shows that it stopped: its errors, or (when etcd answers nothing) Talos
/// saying the service does not run; `None` while it answers healthy, or while etcd is merely
/// not read yet (no answer is no evidence).
pub(super) fn stopped_evidence(
    node: &NodeStatus,
    member: Option<&EtcdMemberReport>,
) -> Option<String> {
    if let Some(m) = member {
        return (!m.healthy).then(|| format!("reports errors ({})", errors_text(m)));
    }
    node.unmet_conditions
        .iter()
        .any(|c| c.reason.contains(ETCD_NOT_RUNNING))
        .then(|| {
            format!("service is not running (Talos: \"{ETCD_NOT_RUNNING}\"); etcd answers no call")
        })
}

/// One control plane whose etcd stopped while its node answers the Talos API: etcd has no
/// quorum and the Kubernetes API is down. Talos starts etcd at boot, so a reboot brings the
/// member back when its data is intact; the disaster recovery is the step after.
fn stopped_single_member(machine: &MachineNode, status: &ClusterStatus) -> Option<Finding> {
    let node = status
        .node(&machine.node)
        .filter(|n| !machine.node.is_empty() && n.error.is_none())?;
    let member = member_of(machine, status);
    if member.is_none() && !status.etcd.members.is_empty() {
        return None;
    }
    let evidence = stopped_evidence(node, member)?;
    let name = &node.name;
    Some(Finding {
        id: format!(
            "{}/{}",
            FindingKind::StoppedSingleMember.as_str(),
            machine.name
        ),
        kind: FindingKind::StoppedSingleMember,
        subject: machine.name.clone(),
        summary: format!(
            "the only etcd member ({name}, Machine {}) stopped: no quorum (its etcd {evidence})",
            machine.name
        ),
        explanation: format!(
            "Machine {} is the cluster's only control plane and its etcd {evidence}: with one member there is no quorum without it, so the Kubernetes API is down. The provider cannot help: it never scales the control plane to zero, and a replacement could not join an etcd without quorum. Talos neither starts nor restarts etcd through its API (only the kubelet and extensions), but it starts etcd at every boot: with the data in /var/lib/etcd intact, rebooting {name} brings the member back, and the fix follows until etcd answers with one healthy member and a leader. A reboot changes no data; if etcd does not come back, the data is what failed. {} Run more than one control plane so one member's failure keeps quorum.",
            machine.name,
            recovery_steps(name)
        ),
        fix: Some(Fix::RebootNode {
            machine: machine.name.clone(),
            node: name.clone(),
        }),
    })
}

/// Whether `finding` no longer holds: it is not found again, and what it held up finished
/// (the control plane's Machines all up to date, ready and as many as its replicas; the
/// orphaned member gone from the list).
pub fn cleared(finding: &Finding, tree: &ClusterTree, status: &ClusterStatus) -> bool {
    if status.etcd.members.is_empty() || diagnose(tree, status).iter().any(|f| f.id == finding.id) {
        return false;
    }
    match &finding.fix {
        Some(Fix::RemoveEtcdMember { member_id, .. }) => {
            !status.etcd.members.iter().any(|m| &m.id == member_id)
        }
        Some(Fix::DeleteMachine { machine, .. }) => {
            tree.machine(machine).is_none() && control_plane_settled(tree, status)
        }
        Some(Fix::RebootNode { .. }) => {
            status.etcd.leader().is_some() && control_plane_settled(tree, status)
        }
        None => control_plane_settled(tree, status),
    }
}

/// Every control-plane Machine up to date and ready, as many as the replicas, and every etcd
/// member healthy.
pub fn control_plane_settled(tree: &ClusterTree, status: &ClusterStatus) -> bool {
    let Some(cp) = tree.control_plane.as_ref() else {
        return false;
    };
    let c = cp.counts;
    c.current == c.replicas
        && c.up_to_date == c.replicas
        && c.ready == c.replicas
        && status.etcd.members.iter().all(|m| m.healthy)
}
