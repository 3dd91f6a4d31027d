//! The doctor on the CAPI screen: the fixes offered for the stuck states found (by the doctor's
//! own `diagnose`, read in `queries`), and a fix's guards evaluated by the functions
//! `capi doctor --fix` calls. Pure; `f` opening the menu and a fix's plan are `update_capi`'s.
use super::actions::ActionChoice;
use crate::capi::ClusterTree;
use crate::capi_doctor::{Finding, FixPlan, diagnose, fix_guards};
use crate::fleet::ClusterStatus;
use crate::guards::Guard;

/// The fix menu's entries: one per finding that has a fix.
pub fn fix_choices(findings: &[Finding]) -> Vec<ActionChoice> {
    findings
        .iter()
        .filter(|f| f.fix.is_some())
        .map(|f| ActionChoice::CapiFix(f.id.clone()))
        .collect()
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
