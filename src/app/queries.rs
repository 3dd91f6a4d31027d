//! What the screens read off the console's state beyond one field: the CAPI tree shown and its
//! selected row, what `s` scales, the scale progress shown, and the doctor's findings and fixes.
//! Read by the views, the key tables' offers and the update step. Pure.
use super::actions::ActionMenu;
use super::capi_doctor::fix_choices;
use super::capi_scale::ScaleTarget;
use super::state::AppState;
use crate::capi::{CapiOwner, ClusterTree, MachineRole, TreeRow, tree_rows};
use crate::capi_doctor::{Finding, diagnose};
use crate::kube::ScaledKind;

/// The owner and tree of the cluster in use, when a management cluster owns it.
pub fn shown_tree(state: &AppState) -> Option<(&CapiOwner, ClusterTree)> {
    let cluster = state.current.as_deref()?;
    let owner = state.fleet.capi.owner(cluster)?;
    Some((owner, state.fleet.capi.tree(owner)?))
}

/// The rows on screen and the selected one's index.
pub fn rows_and_selection(state: &AppState) -> (Vec<TreeRow>, usize) {
    let rows = shown_tree(state)
        .map(|(_, t)| tree_rows(&t))
        .unwrap_or_default();
    let index = state
        .capi
        .selected
        .as_ref()
        .and_then(|s| rows.iter().position(|r| &r.object == s))
        .unwrap_or(0);
    (rows, index)
}

/// The object `s` scales on the `:capi` screen: the selected MachineDeployment, else the
/// TalosControlPlane (saying so when another row is selected).
pub fn target_of(state: &AppState) -> Result<ScaleTarget, String> {
    let cluster = state
        .current
        .clone()
        .ok_or_else(|| "no cluster in use".to_string())?;
    let (_, tree) = shown_tree(state)
        .ok_or_else(|| format!("{cluster}: its Cluster API tree is not read yet"))?;
    let (rows, index) = rows_and_selection(state);
    let selected = rows
        .get(index)
        .map(|r| r.object.clone())
        .unwrap_or_default();
    let object =
        |kind: ScaledKind, name: &str| format!("{} {}/{name}", kind.as_str(), tree.namespace);
    if let Some(name) = selected.strip_prefix("MachineDeployment/")
        && let Some(md) = tree.machine_deployments.iter().find(|d| d.name == name)
    {
        return Ok(ScaleTarget {
            cluster,
            role: MachineRole::Worker,
            deployment: Some(md.name.clone()),
            object: object(ScaledKind::MachineDeployment, &md.name),
            replicas: md.counts.replicas,
            note: None,
        });
    }
    let cp = tree.control_plane.as_ref().ok_or_else(|| {
        format!(
            "{}/{} has no TalosControlPlane: select a MachineDeployment to scale its workers",
            tree.namespace, tree.cluster
        )
    })?;
    let note = (!selected.starts_with("TalosControlPlane/")).then(|| {
        let kind = selected.split('/').next().unwrap_or("no");
        format!(
            "the selected row is a {kind}, not a MachineDeployment: the control plane is scaled"
        )
    });
    Ok(ScaleTarget {
        cluster,
        role: MachineRole::Controlplane,
        deployment: None,
        object: object(ScaledKind::TalosControlPlane, &cp.name),
        replicas: cp.counts.replicas,
        note,
    })
}

/// Whether the `:capi` screen offers `s`: the cluster in use has something to scale.
pub fn offers_scale(state: &AppState) -> bool {
    shown_tree(state)
        .is_some_and(|(_, t)| t.control_plane.is_some() || !t.machine_deployments.is_empty())
}

/// The CAPI tree of discovered cluster `cluster`, as its management cluster was last read.
pub fn tree_of(state: &AppState, cluster: &str) -> Option<ClusterTree> {
    let owner = state.fleet.capi.owner(cluster)?;
    state.fleet.capi.tree(owner)
}

/// The stuck states of `cluster` now; none while its tree or status is not read yet.
pub fn findings_of(state: &AppState, cluster: &str) -> Vec<Finding> {
    let Some(tree) = tree_of(state, cluster) else {
        return Vec::new();
    };
    match state.fleet.cluster(cluster).filter(|l| l.has_data()) {
        Some(live) => diagnose(&tree, &live.status),
        None => Vec::new(),
    }
}

/// Whether the cluster in use has a stuck state with a fix (the footer offers `f`).
pub fn offers_fix(state: &AppState) -> bool {
    state
        .current
        .as_deref()
        .is_some_and(|c| !fix_choices(&findings_of(state, c)).is_empty())
}

/// `f` (or `a`) on the CAPI screen: the menu of the fixes, or why there is none.
pub fn fix_menu(state: &AppState, cluster: String) -> Result<ActionMenu, String> {
    let findings = findings_of(state, &cluster);
    let items = fix_choices(&findings);
    if items.is_empty() {
        return Err(match findings.first() {
            None => format!("no stuck state found in {cluster}"),
            Some(f) => format!(
                "{}: no fix is safe to automate (Enter on it explains)",
                f.id
            ),
        });
    }
    Ok(ActionMenu {
        subject: cluster.clone(),
        cluster,
        member_id: None,
        items,
        selected: 0,
    })
}
