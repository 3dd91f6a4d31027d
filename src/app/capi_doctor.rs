//! The doctor on the CAPI screen: the stuck states of a cluster as the fleet model shows them
//! (the doctor's own `diagnose`), the fixes offered for them, and a fix's guards evaluated by
//! the functions `capi doctor --fix` calls. Pure; the screen is `views::capi`, the menu and
//! a fix's plan `views::actions`.
use super::actions::{ActionChoice, ActionMenu};
use crate::capi::ClusterTree;
use crate::capi_doctor::{Finding, FixPlan, diagnose, fix_guards};
use crate::fleet::{ClusterStatus, FleetModel};
use crate::guards::Guard;

/// The stuck states of `cluster` now; none while its tree or status is not read yet.
pub fn findings_of(fleet: &FleetModel, cluster: &str) -> Vec<Finding> {
    let Some((_, tree)) = fleet.capi.owned_tree(cluster) else {
        return Vec::new();
    };
    match fleet.cluster(cluster).filter(|l| l.has_data()) {
        Some(live) => diagnose(&tree, &live.status),
        None => Vec::new(),
    }
}

/// The fix menu's entries: one per finding that has a fix.
pub fn fix_choices(findings: &[Finding]) -> Vec<ActionChoice> {
    findings
        .iter()
        .filter(|f| f.fix.is_some())
        .map(|f| ActionChoice::CapiFix(f.id.clone()))
        .collect()
}

/// `f` (or `a`) on the CAPI screen: the menu of the fixes of `cluster`, or why there is none.
pub fn fix_menu(fleet: &FleetModel, cluster: &str) -> Result<ActionMenu, String> {
    let findings = findings_of(fleet, cluster);
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
        subject: cluster.to_string(),
        cluster: cluster.to_string(),
        member_id: None,
        items,
        selected: 0,
    })
}

/// The finding found again over the latest tree and status, its plan made again and its
/// guards evaluated; a finding that no longer holds leaves no plan.
pub fn evaluate_fix(
    finding: &mut Finding,
    plan: &mut Result<FixPlan, String>,
    tree: Option<&ClusterTree>,
    status: &ClusterStatus,
    roles: &crate::talos::Roles,
    other: &crate::rollout::LeaseReading,
) -> Vec<Guard> {
    let Some(tree) = tree else {
        *plan = Err(format!("{}: the Cluster API tree is not read", finding.id));
        return Vec::new();
    };
    match diagnose(tree, status)
        .into_iter()
        .find(|f| f.id == finding.id)
    {
        Some(now) => *finding = now,
        None => {
            *plan = Err(format!("{} no longer holds: nothing to fix", finding.id));
            return Vec::new();
        }
    }
    *plan = FixPlan::new(finding, tree, status);
    match plan {
        Ok(p) => fix_guards(p, tree, status, roles, other),
        Err(_) => Vec::new(),
    }
}
