//! The CAPI-way upgrade's guards, pure: the version path the in-place upgrades check, no
//! rollout of the providers already under way (other than this plan's own, when resumed),
//! the VM template for the target in the provider, and etcd's quorum while Machines are
//! replaced. Cluster health reuses the Kubernetes upgrade's step guards.
use super::plan::{CapiPhase, CapiProduct, CapiUpgradePlan, PhaseObject, phase_machines};
use crate::capi::ClusterTree;
use crate::fleet::{ClusterStatus, Quorum};
use crate::upgrade::guards::{
    Guard, GuardId, RolloutInProgress, no_other_rollout, talos_path_text,
};
use crate::upgrade::kubernetes::kubernetes_step_guards;
use crate::upgrade::plan::running_talos_versions;
use crate::versions::{
    PathError, Version, check_fleet_talos_upgrade, check_kubernetes_supported,
    check_kubernetes_upgrade,
};

/// The VM templates the cluster's provider has, or why they could not be listed; `None`
/// when no provider is configured for the cluster.
pub type VmTemplates = Option<Result<Vec<String>, String>>;

/// What the plan guards look at besides the plan.
pub struct CapiGuardInput<'a> {
    pub tree: &'a ClusterTree,
    pub status: &'a ClusterStatus,
    pub other_rollout: Option<&'a RolloutInProgress>,
    pub vm_templates: &'a VmTemplates,
}

/// The status of the nodes the cluster's Machines became: Talos discovery still lists the
/// nodes of Machines the providers deleted for a while, and those no longer answer.
pub fn machines_only(status: &ClusterStatus, tree: &ClusterTree) -> ClusterStatus {
    let mut status = status.clone();
    let names: Vec<&str> = tree
        .machines
        .iter()
        .flat_map(|m| [m.name.as_str(), m.node.as_str()])
        .filter(|n| !n.is_empty())
        .collect();
    status.nodes.retain(|n| names.contains(&n.name.as_str()));
    status
}

/// Every guard of the plan, before the first patch.
pub fn capi_plan_guards(plan: &CapiUpgradePlan, input: &CapiGuardInput<'_>) -> Vec<Guard> {
    let status = &machines_only(input.status, input.tree);
    let mut guards = vec![
        no_other_rollout(&plan.cluster, input.other_rollout),
        version_path(plan, input.tree, status),
        rollout_settled(plan, input.tree),
    ];
    if plan.product == CapiProduct::TalosOs {
        guards.push(vm_templates(plan, input.vm_templates));
    }
    guards.push(phase_wait_can_finish(plan, 0, input.tree, status));
    // A run killed mid-phase left its own rollout under way: the resumed run follows it with
    // etcd's quorum, as the re-check before that phase does.
    if plan.phases.iter().any(|p| is_patched(plan, p, input.tree)) {
        guards.push(quorum_kept(status));
    } else {
        guards.extend(kubernetes_step_guards(status));
    }
    guards
}

/// Every guard of the plan over what was read for it: the tree and the workload cluster's
/// status, or why they could not be read (then the rollout cannot be seen settled).
pub fn capi_read_guards(
    plan: &CapiUpgradePlan,
    read: Result<(&ClusterTree, &ClusterStatus), &str>,
    other_rollout: Option<&RolloutInProgress>,
    vm_templates: &VmTemplates,
) -> Vec<Guard> {
    match read {
        Ok((tree, status)) => capi_plan_guards(
            plan,
            &CapiGuardInput {
                tree,
                status,
                other_rollout,
                vm_templates,
            },
        ),
        Err(e) => vec![Guard::fail(
            GuardId::CapiRolloutSettled,
            format!("cannot read {}: {e}", plan.owner()),
        )],
    }
}

/// The re-check before phase `index` is patched: no other rollout of the providers, its wait
/// able to finish, and the cluster healthy (nodes, etcd, control plane) unless the phase's object already carries the
/// patch (a resumed run follows its own rollout, with etcd's quorum).
pub fn capi_phase_guards(
    plan: &CapiUpgradePlan,
    index: usize,
    tree: &ClusterTree,
    status: &ClusterStatus,
) -> Vec<Guard> {
    let status = &machines_only(status, tree);
    let mut guards = vec![
        rollout_settled(plan, tree),
        phase_wait_can_finish(plan, index, tree, status),
    ];
    match plan.phases.get(index) {
        Some(phase) if is_patched(plan, phase, tree) => guards.push(quorum_kept(status)),
        _ => guards.extend(kubernetes_step_guards(status)),
    }
    guards
}

/// Whether what phase `index` waits for can happen at all: the providers replace no Machine
/// of a paused Cluster (cluster-api-control-plane-provider-talos
/// controllers/taloscontrolplane_controller.go does not reconcile one), and
/// the control-plane provider removes an outdated control-plane Machine only while its
/// `EtcdClusterHealthy` condition holds (controllers/scale.go `scaleDownControlPlane`), which
/// an etcd alarm (NOSPACE, CORRUPT) keeps false whatever the Machines do.
pub fn phase_wait_can_finish(
    plan: &CapiUpgradePlan,
    index: usize,
    tree: &ClusterTree,
    status: &ClusterStatus,
) -> Guard {
    let id = GuardId::WaitCanFinish;
    let Some(phase) = plan.phases.get(index) else {
        return Guard::fail(
            id,
            format!("the plan of {} has no phase {}", plan.cluster, index + 1),
        );
    };
    let label = phase.label();
    if let Some(why) = &tree.paused {
        return Guard::fail(
            id,
            format!(
                "{why}: Cluster API reconciles nothing of a paused cluster, so {label}'s Machines would never be replaced and the phase would wait until its timeout; unpause it first"
            ),
        );
    }
    let to_replace = !is_patched(plan, phase, tree)
        || phase_machines(tree, phase)
            .iter()
            .any(|m| !plan.is_on_target(phase, m));
    let alarm = status.etcd.alarms.first();
    match alarm {
        Some(a) if phase.object == PhaseObject::TalosControlPlane && to_replace => {
            let on = a.hostname.as_deref().unwrap_or(a.member_id.as_str());
            Guard::fail(
                id,
                format!(
                    "etcd has a {alarm} alarm on {on}: the control-plane provider deletes an outdated Machine only while etcd is healthy, so {label} would wait until its timeout; disarm the {alarm} alarm first (etcd pane: a, disarm alarms; or taloscope etcd disarm --context {cluster})",
                    alarm = a.alarm,
                    cluster = plan.cluster
                ),
            )
        }
        _ => Guard::pass(
            id,
            format!(
                "{label}: the providers reconcile it and nothing keeps its Machines from being replaced"
            ),
        ),
    }
}

/// Whether the object of `phase` already asks for the plan's target.
pub fn is_patched(plan: &CapiUpgradePlan, phase: &CapiPhase, tree: &ClusterTree) -> bool {
    let (version, template) = match phase.object {
        PhaseObject::TalosControlPlane => match &tree.control_plane {
            Some(cp) => (&cp.version, &cp.infrastructure_template),
            None => return false,
        },
        PhaseObject::MachineDeployment => {
            match tree
                .machine_deployments
                .iter()
                .find(|d| d.name == phase.name)
            {
                Some(d) => (&d.version, &d.infrastructure_template),
                None => return false,
            }
        }
    };
    match (&plan.product, &phase.template) {
        (CapiProduct::Kubernetes, _) => *version == plan.version,
        (CapiProduct::TalosOs, Some(t)) => *template == t.to,
        (CapiProduct::TalosOs, None) => true,
    }
}

/// The in-place upgrades' version path: Kubernetes from the TalosControlPlane's version to the
/// target on the nodes' Talos; Talos from the nodes' versions to the target, which must run
/// the cluster's Kubernetes.
pub fn version_path(plan: &CapiUpgradePlan, tree: &ClusterTree, status: &ClusterStatus) -> Guard {
    let talos = running_talos_versions(status);
    let parse = |text: &str| Version::parse(text).map_err(|e| format!("{text:?}: {e}"));
    let checked = match plan.product {
        CapiProduct::Kubernetes => {
            let id = GuardId::KubernetesPath;
            let result = parse(&plan.from).and_then(|from| {
                let to = parse(&plan.version)?;
                match check_kubernetes_upgrade(&from, &to, &talos) {
                    // Resumed after the control planes moved: the rest is the same path.
                    Err(PathError::AlreadyRunning { .. }) => Ok(()),
                    other => other.map_err(|e| e.to_string()),
                }
            });
            (id, result)
        }
        CapiProduct::TalosOs => {
            let id = GuardId::VersionPath;
            let result = parse(&plan.version).and_then(|to| {
                match check_fleet_talos_upgrade(&talos, &to, false) {
                    Ok(()) | Err(PathError::AlreadyRunning { .. }) => {}
                    Err(e) => return Err(e.to_string()),
                }
                let kube = parse(&tree.version)?;
                check_kubernetes_supported(&to, &kube).map_err(|e| e.to_string())
            });
            (id, result)
        }
    };
    match checked {
        // A Talos upgrade's `from` is the machine template: the guard names what the nodes run.
        (id, Ok(())) if plan.product == CapiProduct::TalosOs => Guard::pass(
            id,
            format!(
                "{} (machine template {})",
                talos_path_text(&talos, &plan.version),
                plan.from
            ),
        ),
        (id, Ok(())) => Guard::pass(id, format!("{} -> {}", plan.from, plan.version)),
        (id, Err(reason)) => Guard::fail(id, reason),
    }
}

/// No rollout of the providers under way: every Machine of every phase up to date, ready and
/// not deleting, as many as wanted. A phase whose object already carries this plan's patch
/// is this plan's own rollout, resumed.
pub fn rollout_settled(plan: &CapiUpgradePlan, tree: &ClusterTree) -> Guard {
    let id = GuardId::CapiRolloutSettled;
    let mut busy = Vec::new();
    for phase in &plan.phases {
        if is_patched(plan, phase, tree) {
            continue;
        }
        let machines = phase_machines(tree, phase);
        let mut unsettled: Vec<String> = machines
            .iter()
            .filter(|m| !m.up_to_date || !m.ready || m.deleting)
            .map(|m| m.name.clone())
            .collect();
        if phase.object == PhaseObject::TalosControlPlane
            && let Some(why) = control_plane_rolling(tree)
        {
            unsettled.push(why);
        }
        if !unsettled.is_empty() || machines.len() as u32 != phase.replicas {
            busy.push(format!(
                "{} ({} of {} Machines; not settled: {})",
                phase.label(),
                machines.len(),
                phase.replicas,
                if unsettled.is_empty() {
                    "-".to_string()
                } else {
                    unsettled.join(", ")
                }
            ));
        }
    }
    if busy.is_empty() {
        Guard::pass(id, "no rollout of the providers under way")
    } else {
        Guard::fail(
            id,
            format!("a rollout is already under way: {}", busy.join("; ")),
        )
    }
}

/// What the TalosControlPlane itself says of a rollout under way: its MachinesSpecUpToDate
/// condition False (cluster-api-control-plane-provider-talos api/v1alpha3/conditions.go), set
/// from `MachinesNeedingRollout`, which also compares `controlPlaneConfig` with each Machine's
/// TalosConfig (controllers/controlplane.go `MatchesControlPlaneConfig`) where the tree sees
/// only versions and templates.
fn control_plane_rolling(tree: &ClusterTree) -> Option<String> {
    let cp = tree.control_plane.as_ref()?;
    let c = crate::capi::tree::condition(&cp.conditions, "MachinesSpecUpToDate")?;
    (c.status == "False").then(|| {
        let message = crate::printable::line(&c.message);
        if message.is_empty() {
            "MachinesSpecUpToDate is False".to_string()
        } else {
            format!("MachinesSpecUpToDate is False: {message}")
        }
    })
}

/// The provider has the VM template each copied machine template names.
pub fn vm_templates(plan: &CapiUpgradePlan, found: &VmTemplates) -> Guard {
    let id = GuardId::CapiVmTemplate;
    let wanted: Vec<&str> = plan
        .phases
        .iter()
        .filter_map(|p| p.template.as_ref())
        .map(|t| t.vm_template_to.as_str())
        .collect();
    match found {
        None => Guard::fail(
            id,
            format!(
                "cluster {} names no provider in taloscope's config: cannot check that VM template(s) {} exist; add its provider under clusters:",
                plan.cluster,
                wanted.join(", ")
            ),
        ),
        Some(Err(e)) => Guard::fail(id, format!("cannot list the provider's VM templates: {e}")),
        Some(Ok(names)) => {
            let missing: Vec<&str> = wanted
                .iter()
                .copied()
                .filter(|w| !names.iter().any(|n| n == w))
                .collect();
            if missing.is_empty() {
                Guard::pass(id, format!("VM template(s) {} found", wanted.join(", ")))
            } else {
                Guard::fail(
                    id,
                    format!(
                        "no VM template {} in the provider: create it with the Talos {} image first",
                        missing.join(", "),
                        plan.version
                    ),
                )
            }
        }
    }
}

/// etcd keeps its quorum while Machines come and go: enough healthy voting members. A read
/// that got no member list (the endpoint asked was a Machine going away) is a warning: the
/// next poll asks again, and the Machine's bound holds the wait.
pub fn quorum_kept(status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdQuorum;
    let members = &status.etcd.members;
    if members.is_empty() {
        return Guard::warn(id, "no etcd members reported");
    }
    let q = Quorum::of_members(members.iter().map(|m| (m.is_learner, m.healthy)));
    let counts = format!(
        "{} of {} members healthy, {} needed",
        q.healthy, q.members, q.needed
    );
    if q.healthy >= q.needed {
        Guard::pass(id, counts)
    } else {
        Guard::fail(id, format!("etcd lost its quorum: {counts}"))
    }
}

#[cfg(test)]
#[path = "guards_tests.rs"]
pub(crate) mod tests;
