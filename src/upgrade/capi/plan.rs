//! The CAPI-way upgrade's plan, pure: which objects of the management cluster are patched
//! (the TalosControlPlane first, then each MachineDeployment), the machine template created for
//! a Talos upgrade and the references pointed at it, and the Machines each phase replaces in the
//! order the providers take them. No existing template's spec is edited (the bootstrap
//! provider's webhook refuses it) and `talosVersion` is never raised (it is the machine-config
//! contract, set once: the Talos version comes from the VM template).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, ClusterTree, MachineNode};

/// What the rollout changes: the Kubernetes version or the Talos OS (by machine template).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapiProduct {
    Kubernetes,
    TalosOs,
}

impl CapiProduct {
    /// What the CAPI way changes for the in-place upgrade `kind`.
    pub fn of(kind: crate::capi::owned::InPlaceUpgrade) -> CapiProduct {
        match kind {
            crate::capi::owned::InPlaceUpgrade::Kubernetes => CapiProduct::Kubernetes,
            crate::capi::owned::InPlaceUpgrade::TalosOs => CapiProduct::TalosOs,
        }
    }
}

/// The product as `MutatingAction::CapiUpgrade` names it.
pub fn product_name(product: CapiProduct) -> &'static str {
    match product {
        CapiProduct::Kubernetes => "Kubernetes",
        CapiProduct::TalosOs => "Talos",
    }
}

/// The approval of the CAPI-way upgrade of `plan`'s product.
pub fn capi_action(plan: &CapiUpgradePlan) -> MutatingAction {
    MutatingAction::CapiUpgrade {
        cluster: plan.cluster.clone(),
        owner: plan.owner().to_string(),
        product: product_name(plan.product).to_string(),
        target: plan.target.clone(),
    }
}

/// The kind of object one phase patches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PhaseObject {
    TalosControlPlane,
    MachineDeployment,
}

/// Where an object's infrastructure template reference points, and (for a Talos upgrade) the
/// VM template that template names; read from the management cluster before planning.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InfraFacts {
    pub group: String,
    pub kind: String,
    pub name: String,
    /// `spec.template.spec.templateName` of the machine template (the OpenNebula VM template).
    pub vm_template: String,
}

/// The copy of a machine template a Talos upgrade points its owner at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateCopy {
    pub group: String,
    pub kind: String,
    pub from: String,
    pub to: String,
    pub vm_template_from: String,
    pub vm_template_to: String,
}

/// A reference of one object pointed at a new object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repoint {
    /// "TalosControlPlane/capi-work-cp".
    pub object: String,
    /// The field holding the reference's name ("spec.infrastructureTemplate.name").
    pub field: String,
    pub from: String,
    pub to: String,
}

/// An object the upgrade creates ("ONEMachineTemplate/capi-work-cp-v1.12.0").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedObject {
    pub kind: String,
    pub name: String,
    /// The object whose spec it copies.
    pub copy_of: String,
}

/// One phase: one object patched, and its Machines replaced one at a time (maxSurge 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapiPhase {
    pub object: PhaseObject,
    pub name: String,
    pub replicas: u32,
    /// The JSON merge patch the phase applies to the object.
    pub patch: Value,
    pub template: Option<TemplateCopy>,
    /// Every object the phase creates; existing objects' specs stay as they are.
    pub created: Vec<CreatedObject>,
    /// Every reference the phase points at a created object.
    pub repointed: Vec<Repoint>,
    /// The object's `rolloutStrategy.type` is OnDelete: its provider replaces a Machine only
    /// once it is deleted (cluster-api-control-plane-provider-talos controllers/controlplane.go
    /// `MachinesNeedingRollout` is empty then), so the run deletes them one at a time.
    pub on_delete: bool,
    /// The Machines not yet on the target, in the order they are replaced.
    pub replace: Vec<String>,
}

impl CapiPhase {
    /// The kind of the object patched.
    pub fn kind(&self) -> &'static str {
        match self.object {
            PhaseObject::TalosControlPlane => "TalosControlPlane",
            PhaseObject::MachineDeployment => "MachineDeployment",
        }
    }

    /// "TalosControlPlane/capi-work-cp".
    pub fn label(&self) -> String {
        format!("{}/{}", self.kind(), self.name)
    }

    /// How the phase's Machines get replaced, in one line.
    pub fn replace_text(&self) -> String {
        if self.replace.is_empty() {
            return "none (already on the target)".to_string();
        }
        let names = self.replace.join(", ");
        if self.on_delete {
            format!(
                "{names} (rolloutStrategy OnDelete: the provider replaces a Machine only once it is deleted; taloscope deletes them one at a time in this order, each once every Machine is Ready and every etcd member healthy)"
            )
        } else {
            names
        }
    }

    /// What the phase changes, in one line (`version` as the plan names its target).
    pub fn patch_text(&self, version: &str) -> String {
        match (&self.template, self.object) {
            (None, PhaseObject::TalosControlPlane) => format!("spec.version {version}"),
            (None, PhaseObject::MachineDeployment) => {
                format!("spec.template.spec.version {version}")
            }
            (Some(t), _) => {
                let mut text = format!(
                    "new {} {} (copy of {}, VM template {})",
                    t.kind, t.to, t.from, t.vm_template_to
                );
                for r in &self.repointed {
                    text.push_str(&format!("; {} {} -> {}", r.field, r.from, r.to));
                }
                text
            }
        }
    }
}

/// The whole CAPI-way upgrade of one workload cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapiUpgradePlan {
    /// The discovered cluster (its contexts); the name the operator confirms.
    pub cluster: String,
    /// The management cluster's kube context, the Cluster object's namespace and name.
    pub management: String,
    pub namespace: String,
    pub capi_cluster: String,
    pub product: CapiProduct,
    /// What the Machines run now, and the target as `spec.version` or the template name it.
    pub from: String,
    pub version: String,
    /// The target as the journal and the dispatcher name it ("1.34.2", "v1.12.0").
    pub target: String,
    /// The longest one Machine's replacement may go without progress.
    pub machine_timeout_secs: u64,
    pub phases: Vec<CapiPhase>,
}

impl CapiUpgradePlan {
    pub fn owner(&self) -> CapiOwner {
        CapiOwner {
            management: self.management.clone(),
            namespace: self.namespace.clone(),
            name: self.capi_cluster.clone(),
        }
    }

    /// Whether `m` runs what the plan asks of the phase's Machines.
    pub fn is_on_target(&self, phase: &CapiPhase, m: &MachineNode) -> bool {
        match (&self.product, &phase.template) {
            (CapiProduct::TalosOs, Some(t)) => m.infrastructure_template == t.to,
            (CapiProduct::TalosOs, None) => true,
            (CapiProduct::Kubernetes, _) => m.version == self.version,
        }
    }
}

/// What a plan is made from besides the tree.
#[derive(Debug, Clone, Default)]
pub struct PlanFacts {
    /// By phase label ("TalosControlPlane/capi-work-cp").
    pub infra: BTreeMap<String, InfraFacts>,
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapiPlanError {
    #[error(
        "Cluster {0} has no TalosControlPlane; taloscope upgrades the CAPI way only through the Talos control-plane provider"
    )]
    NoControlPlane(String),
    #[error(
        "{why}: Cluster API reconciles nothing of a paused cluster, so no Machine would be replaced; unpause it first"
    )]
    Paused { why: String },
    #[error("every Machine of {cluster} already runs {target}; nothing to upgrade")]
    NothingToUpgrade { cluster: String, target: String },
    #[error("{object}: cannot read its machine template's VM template name ({kind} {name})")]
    UnknownVmTemplate {
        object: String,
        kind: String,
        name: String,
    },
}

/// A name with any `-v<semver>` suffix of an earlier upgrade taken off.
fn base_name(name: &str) -> &str {
    match name.rsplit_once("-v") {
        Some((base, version)) if crate::versions::Version::parse(version).is_ok() => base,
        _ => name,
    }
}

/// `<name>-<version>`: a machine template or VM template name for the target, named the way
/// the VM templates of each Talos version are (`talos-capi-work-worker-v1.12.0`).
pub fn versioned_name(name: &str, version: &str) -> String {
    format!("{}-{version}", base_name(name))
}

/// The Machines of a phase, in the tree's order.
pub fn phase_machines<'a>(tree: &'a ClusterTree, phase: &CapiPhase) -> Vec<&'a MachineNode> {
    let names: Vec<&String> = match phase.object {
        PhaseObject::TalosControlPlane => tree
            .control_plane
            .iter()
            .flat_map(|cp| cp.machines.iter())
            .collect(),
        PhaseObject::MachineDeployment => tree
            .machine_deployments
            .iter()
            .filter(|d| d.name == phase.name)
            .flat_map(|d| d.machine_sets.iter().flat_map(|s| s.machines.iter()))
            .collect(),
    };
    names.into_iter().filter_map(|n| tree.machine(n)).collect()
}

/// The outdated Machines of a phase in the order the providers replace them. The Talos
/// control-plane provider deletes the oldest outdated Machine after each surge
/// (controllers/scale.go `selectMachineForScaleDown`: `collections.Machines.Oldest`, by
/// creation time, then name). A MachineDeployment's old MachineSet scales down by its deletion
/// order (cluster-api core/reconcilers/machineset/machineset_deletion_order.go): Random, the
/// default, ranks healthy Machines alike and breaks ties by name; Oldest and Newest by creation
/// time (a Machine without one last for Oldest, first for Newest), ties by name.
pub fn replacement_order<'a>(
    tree: &ClusterTree,
    phase: &CapiPhase,
    mut outdated: Vec<&'a MachineNode>,
) -> Vec<&'a MachineNode> {
    let by_name = |a: &&MachineNode, b: &&MachineNode| a.name.cmp(&b.name);
    let order = match phase.object {
        PhaseObject::TalosControlPlane => {
            outdated.sort_by(|a, b| {
                (a.created_unix.unwrap_or(0), &a.name).cmp(&(b.created_unix.unwrap_or(0), &b.name))
            });
            return outdated;
        }
        PhaseObject::MachineDeployment => deletion_order(tree, &outdated),
    };
    let created = |m: &MachineNode| m.created_unix.unwrap_or(u64::MAX);
    match order {
        "Oldest" => outdated.sort_by(|a, b| created(a).cmp(&created(b)).then(by_name(a, b))),
        "Newest" => outdated.sort_by(|a, b| created(b).cmp(&created(a)).then(by_name(a, b))),
        _ => outdated.sort_by(by_name),
    }
    outdated
}

/// The deletion order of the MachineSet the first of `machines` belongs to ("" is Random).
fn deletion_order<'a>(tree: &'a ClusterTree, machines: &[&MachineNode]) -> &'a str {
    let Some(first) = machines.first() else {
        return "";
    };
    tree.machine_deployments
        .iter()
        .flat_map(|d| d.machine_sets.iter())
        .find(|s| s.name == first.owner)
        .map_or("", |s| s.deletion_order.as_str())
}

/// The plan of `product` to `version` (`target` as the dispatcher names it).
pub fn capi_plan(
    cluster: &str,
    tree: &ClusterTree,
    product: CapiProduct,
    (version, target): (&str, &str),
    facts: &PlanFacts,
) -> Result<CapiUpgradePlan, CapiPlanError> {
    let Some(cp) = &tree.control_plane else {
        return Err(CapiPlanError::NoControlPlane(tree.cluster.clone()));
    };
    if let Some(why) = &tree.paused {
        return Err(CapiPlanError::Paused { why: why.clone() });
    }
    let from = match product {
        CapiProduct::Kubernetes => cp.version.clone(),
        CapiProduct::TalosOs => cp.infrastructure_template.clone(),
    };
    let mut plan = CapiUpgradePlan {
        cluster: cluster.to_string(),
        management: tree.management.clone(),
        namespace: tree.namespace.clone(),
        capi_cluster: tree.cluster.clone(),
        product,
        from,
        version: version.to_string(),
        target: target.to_string(),
        machine_timeout_secs: 900,
        phases: Vec::new(),
    };
    let mut objects = vec![(
        PhaseObject::TalosControlPlane,
        cp.name.clone(),
        cp.counts.replicas,
        cp.rollout_strategy == "OnDelete",
    )];
    objects.extend(tree.machine_deployments.iter().map(|d| {
        (
            PhaseObject::MachineDeployment,
            d.name.clone(),
            d.counts.replicas,
            false,
        )
    }));
    for (object, name, replicas, on_delete) in objects {
        let mut phase = CapiPhase {
            object,
            name,
            replicas,
            patch: Value::Null,
            template: None,
            created: Vec::new(),
            repointed: Vec::new(),
            on_delete,
            replace: Vec::new(),
        };
        let facts = facts.infra.get(&phase.label()).cloned().unwrap_or_default();
        fill_phase(&mut phase, product, version, &facts)?;
        let outdated = phase_machines(tree, &phase)
            .into_iter()
            .filter(|m| !plan.is_on_target(&phase, m))
            .collect();
        phase.replace = replacement_order(tree, &phase, outdated)
            .into_iter()
            .map(|m| m.name.clone())
            .collect();
        plan.phases.push(phase);
    }
    if plan.phases.iter().all(|p| p.replace.is_empty()) {
        return Err(CapiPlanError::NothingToUpgrade {
            cluster: tree.cluster.clone(),
            target: version.to_string(),
        });
    }
    Ok(plan)
}

/// The patch of a phase (and for a Talos upgrade, its template copy).
fn fill_phase(
    phase: &mut CapiPhase,
    product: CapiProduct,
    version: &str,
    facts: &InfraFacts,
) -> Result<(), CapiPlanError> {
    if product == CapiProduct::Kubernetes {
        phase.patch = match phase.object {
            PhaseObject::TalosControlPlane => json!({"spec": {"version": version}}),
            PhaseObject::MachineDeployment => {
                json!({"spec": {"template": {"spec": {"version": version}}}})
            }
        };
        return Ok(());
    }
    if facts.vm_template.is_empty() {
        return Err(CapiPlanError::UnknownVmTemplate {
            object: phase.label(),
            kind: facts.kind.clone(),
            name: facts.name.clone(),
        });
    }
    let copy = TemplateCopy {
        group: facts.group.clone(),
        kind: facts.kind.clone(),
        from: facts.name.clone(),
        to: versioned_name(&facts.name, version),
        vm_template_from: facts.vm_template.clone(),
        vm_template_to: versioned_name(&facts.vm_template, version),
    };
    // Only the infrastructure reference moves: the TalosConfigTemplate and the
    // controlPlaneConfig keep their spec and talosVersion (cluster-api-bootstrap-provider-talos
    // api/v1alpha3/talosconfigtemplate_webhook.go refuses a changed spec; talosVersion is the
    // config contract of talosconfig_types.go, siderolabs/sidero#1101).
    let field = match phase.object {
        PhaseObject::TalosControlPlane => "spec.infrastructureTemplate.name",
        PhaseObject::MachineDeployment => "spec.template.spec.infrastructureRef.name",
    };
    phase.patch = match phase.object {
        PhaseObject::TalosControlPlane => {
            json!({"spec": {"infrastructureTemplate": {"name": copy.to}}})
        }
        PhaseObject::MachineDeployment => {
            json!({"spec": {"template": {"spec": {"infrastructureRef": {"name": copy.to}}}}})
        }
    };
    phase.created = vec![CreatedObject {
        kind: copy.kind.clone(),
        name: copy.to.clone(),
        copy_of: copy.from.clone(),
    }];
    phase.repointed = vec![Repoint {
        object: phase.label(),
        field: field.to_string(),
        from: copy.from.clone(),
        to: copy.to.clone(),
    }];
    phase.template = Some(copy);
    Ok(())
}

#[cfg(test)]
#[path = "plan_tests.rs"]
pub(crate) mod tests;
