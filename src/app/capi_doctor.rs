//! The doctor on the CAPI screen: the stuck states of the cluster in use (its tree against
//! its status, by the doctor's own `diagnose`), `f` opening the menu of their fixes, and a
//! fix's plan and guards made by the functions `capi doctor --fix` calls. Pure.
use super::action::Effect;
use super::actions::{ActionChoice, ActionMenu, ActionPlan, ActionPlanScreen};
use super::message::Message;
use super::screen::Screen;
use super::state::AppState;
use crate::capi::ClusterTree;
use crate::capi_doctor::{Finding, FixPlan, diagnose, fix_guards};
use crate::fleet::ClusterStatus;
use crate::guards::Guard;

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

/// The fix menu's entries: one per finding that has a fix.
pub fn fix_choices(findings: &[Finding]) -> Vec<ActionChoice> {
    findings
        .iter()
        .filter(|f| f.fix.is_some())
        .map(|f| ActionChoice::CapiFix(f.id.clone()))
        .collect()
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

/// The plan screen of the fix of finding `id`.
pub fn fix_plan_screen(state: &mut AppState, cluster: &str, id: &str) -> Option<ActionPlanScreen> {
    let Some(finding) = findings_of(state, cluster).into_iter().find(|f| f.id == id) else {
        state.message = Some(Message::warn(format!("{id} no longer holds in {cluster}")));
        return None;
    };
    Some(ActionPlanScreen {
        cluster: cluster.to_string(),
        plan: ActionPlan::CapiFix {
            finding,
            plan: Err(String::new()),
        },
        guards: Vec::new(),
        guard: None,
        acks: Vec::new(),
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

/// The management cluster was read again: an open fix plan is evaluated again.
pub fn on_capi_change(state: &mut AppState) -> bool {
    let cluster = match state.actions.plan.as_ref() {
        Some(p) if matches!(p.plan, ActionPlan::CapiFix { .. }) => p.cluster.clone(),
        _ => return false,
    };
    super::update_actions::on_status_change(state, &cluster)
}

/// `C` on the cluster panes: the CAPI screen (`:capi`).
pub fn open_from_cluster(state: &mut AppState) -> Vec<Effect> {
    let effects = super::capi::open(state);
    if state.screen == Screen::Capi {
        state.capi.selected = None;
    }
    effects
}
