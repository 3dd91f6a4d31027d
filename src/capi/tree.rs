//! One workload cluster's Cluster API tree, as `clusterctl describe cluster` groups it:
//! Cluster → TalosControlPlane → control-plane Machines; MachineDeployments → MachineSets →
//! Machines; each with replicas / ready / up-to-date / available. Pure: built from the model.
use serde::Serialize;

use crate::kube::{
    CapiCluster, CapiCondition, CapiObjects, InfraMachine, Machine, MachineDeployment, MachineSet,
    ObjectMeta, TalosControlPlane,
};

/// Conditions whose `True` is the unusual state (CAPI v1beta2's negative polarity).
const TRUE_MEANS_ATTENTION: [&str; 8] = [
    "Deleting",
    "Paused",
    "ScalingUp",
    "ScalingDown",
    "Remediating",
    "RollingOut",
    "Updating",
    "Deleted",
];

/// Whether a condition is worth the operator's eye: a positive one not True, or a
/// negative-polarity one (Deleting, RollingOut…) True.
pub fn needs_attention(c: &CapiCondition) -> bool {
    if TRUE_MEANS_ATTENTION.contains(&c.kind.as_str()) {
        c.status == "True"
    } else {
        c.status != "True"
    }
}

/// Counts of one node of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// `spec.replicas`.
    pub replicas: u32,
    /// Machines that exist now (`status.replicas`).
    pub current: u32,
    pub ready: u32,
    pub up_to_date: u32,
    pub available: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneNode {
    pub kind: String,
    pub name: String,
    #[serde(flatten)]
    pub counts: Counts,
    pub version: String,
    pub infrastructure_template: String,
    pub rollout_strategy: String,
    pub conditions: Vec<CapiCondition>,
    /// The names of its Machines, in name order.
    pub machines: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetNode {
    pub name: String,
    #[serde(flatten)]
    pub counts: Counts,
    pub version: String,
    pub conditions: Vec<CapiCondition>,
    pub machines: Vec<String>,
    /// Which of its Machines a scale-down deletes first ("Random", "Newest", "Oldest"; empty
    /// means Random).
    #[serde(skip)]
    pub deletion_order: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentNode {
    pub name: String,
    #[serde(flatten)]
    pub counts: Counts,
    pub phase: String,
    pub version: String,
    pub infrastructure_template: String,
    pub conditions: Vec<CapiCondition>,
    pub machine_sets: Vec<MachineSetNode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MachineRole {
    Controlplane,
    Worker,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineNode {
    pub name: String,
    pub role: MachineRole,
    /// The TalosControlPlane or MachineSet that owns it; empty when none of the cluster's does.
    pub owner: String,
    pub phase: String,
    pub version: String,
    /// The Kubernetes node it became; empty until it has one.
    pub node: String,
    pub ready: bool,
    pub up_to_date: bool,
    pub available: bool,
    pub deleting: bool,
    /// The infrastructure template its machine was cloned from, when the provider says.
    pub infrastructure_template: String,
    pub conditions: Vec<CapiCondition>,
    /// When the API server created it (Unix seconds); the providers replace the oldest first.
    #[serde(skip)]
    pub created_unix: Option<u64>,
}

/// One workload cluster as its management cluster sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterTree {
    /// The management cluster's kube context.
    pub management: String,
    pub cluster: String,
    pub namespace: String,
    /// The `cluster.x-k8s.io` version read.
    pub api_version: String,
    pub phase: String,
    /// `spec.controlPlaneEndpoint` as `host:port`.
    pub endpoint: String,
    pub version: String,
    pub control_plane: Option<ControlPlaneNode>,
    pub machine_deployments: Vec<DeploymentNode>,
    /// Every Machine of the cluster, control planes first, in name order.
    pub machines: Vec<MachineNode>,
    pub conditions: Vec<CapiCondition>,
    /// What pauses the control plane's reconcile, when something does: the Cluster's
    /// `spec.paused` or the `cluster.x-k8s.io/paused` annotation on the Cluster or the
    /// TalosControlPlane (cluster-api util/annotations/helpers.go `IsPaused`, which
    /// cluster-api-control-plane-provider-talos controllers/taloscontrolplane_controller.go
    /// checks before anything else).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<String>,
}

impl ClusterTree {
    /// The Cluster object this tree is of.
    pub fn owner(&self) -> super::CapiOwner {
        super::CapiOwner {
            management: self.management.clone(),
            namespace: self.namespace.clone(),
            name: self.cluster.clone(),
        }
    }

    pub fn machine(&self, name: &str) -> Option<&MachineNode> {
        self.machines.iter().find(|m| m.name == name)
    }

    /// The control plane's endpoint as `capi status` and the console's CAPI screen say it:
    /// `(none yet)` until the provider set it.
    pub fn endpoint_text(&self) -> &str {
        match self.endpoint.as_str() {
            "" => "(none yet)",
            endpoint => endpoint,
        }
    }

    /// Machines owned by neither the control plane nor a MachineSet of the tree.
    pub fn unowned_machines(&self) -> impl Iterator<Item = &MachineNode> {
        self.machines.iter().filter(|m| m.owner.is_empty())
    }
}

fn of_cluster<'a, T>(
    items: &'a [T],
    meta: fn(&T) -> &ObjectMeta,
    cluster: &'a CapiCluster,
) -> impl Iterator<Item = &'a T> {
    items.iter().filter(move |i| {
        let m = meta(i);
        m.namespace == cluster.meta.namespace && m.cluster_name == cluster.meta.name
    })
}

/// The trees of every Cluster in `objects`, in namespace/name order.
pub fn cluster_trees(management: &str, objects: &CapiObjects) -> Vec<ClusterTree> {
    let mut clusters: Vec<&CapiCluster> = objects.clusters.iter().collect();
    clusters
        .sort_by(|a, b| (&a.meta.namespace, &a.meta.name).cmp(&(&b.meta.namespace, &b.meta.name)));
    clusters
        .into_iter()
        .map(|c| cluster_tree(management, objects, c))
        .collect()
}

/// The tree of one Cluster.
pub fn cluster_tree(management: &str, objects: &CapiObjects, cluster: &CapiCluster) -> ClusterTree {
    let control_plane = control_plane_of(objects, cluster);
    let sets: Vec<&MachineSet> = of_cluster(&objects.machine_sets, |s| &s.meta, cluster).collect();
    let deployments: Vec<&MachineDeployment> =
        of_cluster(&objects.machine_deployments, |d| &d.meta, cluster).collect();
    let mut machines: Vec<MachineNode> = of_cluster(&objects.machines, |m| &m.meta, cluster)
        .map(|m| {
            machine_node(
                m,
                control_plane,
                &sets,
                &deployments,
                &objects.infra_machines,
            )
        })
        .collect();
    machines.sort_by(|a, b| {
        let workers_after = |m: &MachineNode| m.role != MachineRole::Controlplane;
        workers_after(a)
            .cmp(&workers_after(b))
            .then_with(|| crate::natural::natural_cmp(&a.name, &b.name))
    });
    let control_plane_node = control_plane.map(|tcp| control_plane_node(tcp, &machines));
    let mut deployment_nodes: Vec<DeploymentNode> = deployments
        .iter()
        .map(|d| deployment_node(d, &sets, &machines))
        .collect();
    deployment_nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let version = match control_plane {
        Some(tcp) => tcp.version.clone(),
        None => cluster.topology_version.clone(),
    };
    ClusterTree {
        management: management.to_string(),
        cluster: cluster.meta.name.clone(),
        namespace: cluster.meta.namespace.clone(),
        api_version: objects
            .version
            .map(|v| v.as_str().to_string())
            .unwrap_or_default(),
        phase: cluster.phase.clone(),
        endpoint: endpoint_text(cluster),
        version,
        control_plane: control_plane_node,
        machine_deployments: deployment_nodes,
        machines,
        conditions: cluster.meta.conditions.clone(),
        paused: paused_by(cluster, control_plane),
    }
}

/// What pauses the Cluster's control plane, in the operator's words.
fn paused_by(cluster: &CapiCluster, control_plane: Option<&TalosControlPlane>) -> Option<String> {
    let name = format!("Cluster {}/{}", cluster.meta.namespace, cluster.meta.name);
    if cluster.spec_paused {
        return Some(format!("{name} has spec.paused: true"));
    }
    if cluster.meta.paused {
        return Some(format!("{name} has the cluster.x-k8s.io/paused annotation"));
    }
    control_plane.filter(|tcp| tcp.meta.paused).map(|tcp| {
        format!(
            "TalosControlPlane {} has the cluster.x-k8s.io/paused annotation",
            tcp.meta.name
        )
    })
}

/// `NS/NAME` of each tree, comma-separated ("none" when there is none).
pub fn tree_names(trees: &[ClusterTree]) -> String {
    let names: Vec<String> = trees
        .iter()
        .map(|t| format!("{}/{}", t.namespace, t.cluster))
        .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The trees `wanted` names (`NS/NAME`, or a `NAME` one namespace has), else all; the error
/// says what management cluster `context` has.
pub fn trees_named(
    trees: Vec<ClusterTree>,
    wanted: Option<&str>,
    context: &str,
) -> Result<Vec<ClusterTree>, String> {
    let Some(wanted) = wanted else {
        return Ok(trees);
    };
    let matches = |t: &ClusterTree| match wanted.split_once('/') {
        Some((ns, name)) => t.namespace == ns && t.cluster == name,
        None => t.cluster == wanted,
    };
    let chosen: Vec<ClusterTree> = trees.iter().filter(|t| matches(t)).cloned().collect();
    match chosen.len() {
        0 => Err(format!(
            "management cluster {context} has no Cluster {wanted:?} (it has: {})",
            tree_names(&trees)
        )),
        1 => Ok(chosen),
        _ => Err(format!(
            "--cluster {wanted:?} is in several namespaces; say NAMESPACE/NAME ({})",
            tree_names(&trees)
        )),
    }
}

/// `host:port` of the control-plane endpoint; empty until the provider sets it.
pub fn endpoint_text(cluster: &CapiCluster) -> String {
    match (cluster.endpoint_host.as_str(), cluster.endpoint_port) {
        ("", _) => String::new(),
        (host, 0) => host.to_string(),
        (host, port) if host.contains(':') => format!("[{host}]:{port}"),
        (host, port) => format!("{host}:{port}"),
    }
}

/// The TalosControlPlane `spec.controlPlaneRef` names, in the cluster's namespace.
fn control_plane_of<'a>(
    objects: &'a CapiObjects,
    cluster: &CapiCluster,
) -> Option<&'a TalosControlPlane> {
    let wanted = cluster.control_plane.as_ref()?;
    objects.control_planes.iter().find(|t| {
        t.meta.namespace == cluster.meta.namespace
            && t.meta.name == wanted.name
            && wanted.kind == "TalosControlPlane"
    })
}

fn machine_node(
    m: &Machine,
    control_plane: Option<&TalosControlPlane>,
    sets: &[&MachineSet],
    deployments: &[&MachineDeployment],
    infra: &[InfraMachine],
) -> MachineNode {
    let template = infra
        .iter()
        .find(|i| {
            i.namespace == m.meta.namespace
                && i.name == m.infrastructure.name
                && i.kind == m.infrastructure.kind
        })
        .map(|i| i.cloned_from_name.clone())
        .unwrap_or_default();
    let owned_by = |kind: &str, name: &str| {
        m.meta
            .owner
            .as_ref()
            .is_some_and(|o| o.kind == kind && o.name == name)
    };
    let (role, owner, up_to_date) = if m.control_plane {
        let tcp = control_plane.filter(|t| owned_by("TalosControlPlane", &t.meta.name));
        let up = tcp
            .is_some_and(|t| same_spec(m, &template, &t.version, &t.infrastructure_template.name));
        (
            MachineRole::Controlplane,
            tcp.map(|t| t.meta.name.clone()),
            up,
        )
    } else {
        let set = sets
            .iter()
            .find(|s| s.meta.name == m.machine_set || owned_by("MachineSet", &s.meta.name));
        let deployment = set.and_then(|s| deployments.iter().find(|d| d.meta.name == s.deployment));
        let derived = deployment
            .is_some_and(|d| same_spec(m, &template, &d.version, &d.infrastructure_template));
        let up = condition(&m.meta.conditions, "UpToDate").map_or(derived, CapiCondition::is_true);
        (MachineRole::Worker, set.map(|s| s.meta.name.clone()), up)
    };
    let ready = condition(&m.meta.conditions, "Ready").is_some_and(CapiCondition::is_true);
    let available =
        condition(&m.meta.conditions, "Available").map_or(ready, CapiCondition::is_true);
    MachineNode {
        name: m.meta.name.clone(),
        role,
        owner: owner.unwrap_or_default(),
        phase: m.phase.clone(),
        version: m.version.clone(),
        node: m.node.clone(),
        ready,
        up_to_date: up_to_date && !m.meta.deleting,
        available,
        deleting: m.meta.deleting,
        infrastructure_template: template,
        conditions: m.meta.conditions.clone(),
        created_unix: m.meta.created_unix,
    }
}

/// A Machine matches its owner's spec: its version, and the template its infrastructure
/// machine was cloned from (when the provider recorded it), as the Talos control-plane
/// provider's MachinesNeedingRollout compares them (controllers/controlplane.go).
fn same_spec(m: &Machine, cloned_from: &str, version: &str, template: &str) -> bool {
    m.version == version
        && (cloned_from.is_empty() || template.is_empty() || cloned_from == template)
}

pub fn condition<'a>(conditions: &'a [CapiCondition], kind: &str) -> Option<&'a CapiCondition> {
    conditions.iter().find(|c| c.kind == kind)
}

/// The TalosControlPlane's counts: its status has replicas and ready ones; up-to-date and
/// available are counted over its Machines.
fn control_plane_node(tcp: &TalosControlPlane, machines: &[MachineNode]) -> ControlPlaneNode {
    let own: Vec<&MachineNode> = machines
        .iter()
        .filter(|m| m.role == MachineRole::Controlplane && m.owner == tcp.meta.name)
        .collect();
    ControlPlaneNode {
        kind: "TalosControlPlane".to_string(),
        name: tcp.meta.name.clone(),
        counts: Counts {
            replicas: tcp.desired,
            current: tcp.replicas,
            ready: tcp.ready_replicas,
            up_to_date: own.iter().filter(|m| m.up_to_date).count() as u32,
            available: own.iter().filter(|m| m.available && !m.deleting).count() as u32,
        },
        version: tcp.version.clone(),
        infrastructure_template: tcp.infrastructure_template.name.clone(),
        rollout_strategy: tcp.rollout_strategy.clone(),
        conditions: tcp.meta.conditions.clone(),
        machines: own.iter().map(|m| m.name.clone()).collect(),
    }
}

fn deployment_node(
    d: &MachineDeployment,
    sets: &[&MachineSet],
    machines: &[MachineNode],
) -> DeploymentNode {
    let mut own_sets: Vec<MachineSetNode> = sets
        .iter()
        .filter(|s| {
            s.deployment == d.meta.name
                || s.meta.owner.as_ref().is_some_and(|o| o.name == d.meta.name)
        })
        .map(|s| MachineSetNode {
            name: s.meta.name.clone(),
            counts: counts(s.replicas),
            version: s.version.clone(),
            conditions: s.meta.conditions.clone(),
            machines: machines
                .iter()
                .filter(|m| m.owner == s.meta.name)
                .map(|m| m.name.clone())
                .collect(),
            deletion_order: s.deletion_order.clone(),
        })
        .collect();
    own_sets.sort_by(|a, b| a.name.cmp(&b.name));
    DeploymentNode {
        name: d.meta.name.clone(),
        counts: counts(d.replicas),
        phase: d.phase.clone(),
        version: d.version.clone(),
        infrastructure_template: d.infrastructure_template.clone(),
        conditions: d.meta.conditions.clone(),
        machine_sets: own_sets,
    }
}

fn counts(r: crate::kube::Replicas) -> Counts {
    Counts {
        replicas: r.desired,
        current: r.current,
        ready: r.ready,
        up_to_date: r.up_to_date,
        available: r.available,
    }
}
