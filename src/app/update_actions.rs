//! The node and etcd actions in the update step: `a` opens the menu of the selection, a
//! choice opens its plan (a node's asks the event loop to read its survey first; a snapshot
//! asks for its file), the guards are evaluated again on every status change, `s` goes to the
//! dispatcher (or is refused, audited, when a guard blocks), and the approved action runs
//! while its progress lines arrive. Pure.
use std::path::PathBuf;

use super::action::{Action, Effect, PollerRequest, not_run};
use super::actions::{
    ActionChoice, ActionMenu, ActionPlan, ActionPlanScreen, ActionRun, ActionUpdate, etcd_choices,
    node_choices,
};
use super::message::Message;
use super::plan_keys::{moved, not_approved, plan_key, read_guards};
use super::screen::{Pane, Screen, TableKind};
use super::state::{AppState, InputKind};
use crate::approval::{ApprovedAction, EtcdAction};
use crate::etcd_maintenance::EtcdRequest;
use crate::node_actions::{NodeActionPlan, NodeSurvey};

/// `a`: the menu of the actions on the selected node (nodes pane, node detail) or on etcd
/// and the selected member (etcd pane); the progress instead while an action runs here.
pub fn open_menu(state: &mut AppState) -> Vec<Effect> {
    if shows_running(state) {
        return Vec::new();
    }
    let Some(cluster) = state.current.clone() else {
        state.message = Some(Message::warn(
            "no cluster in use: Enter on the fleet or :ctx NAME",
        ));
        return Vec::new();
    };
    let menu = match state.screen {
        Screen::Cluster(Pane::Nodes) | Screen::NodeDetail => node_menu(state, cluster),
        Screen::Cluster(Pane::Etcd) => member_menu(state, cluster),
        Screen::Capi => super::queries::fix_menu(state, cluster),
        _ => Err("actions are on the nodes pane, node detail and the etcd pane".to_string()),
    };
    match menu {
        Ok(menu) => {
            state.actions.back = Some(state.screen);
            state.actions.menu = Some(menu);
        }
        Err(why) => state.message = Some(Message::warn(why)),
    }
    Vec::new()
}

/// While an action runs here, its progress is shown instead of a new one; true when it was.
pub fn shows_running(state: &mut AppState) -> bool {
    if !state.actions.running() {
        return false;
    }
    state.message = Some(Message::info(
        "an action runs from this console: its progress is shown",
    ));
    state.screen = Screen::Action;
    true
}

fn node_menu(state: &AppState, cluster: String) -> Result<ActionMenu, String> {
    let address = super::update_panes::detail_node_key(state)
        .ok_or_else(|| format!("no node of {cluster} selected"))?;
    let live = state.fleet.cluster(&cluster);
    let node = live
        .and_then(|l| l.status.node(&address))
        .ok_or_else(|| format!("no status for {address} yet"))?;
    // Node detail lists the node's services: each one Talos restarts is offered.
    let services: Vec<String> = match (state.screen, live.and_then(|l| l.services.get(&address))) {
        (Screen::NodeDetail, Some((Ok(list), _))) => list.iter().map(|s| s.id.clone()).collect(),
        _ => Vec::new(),
    };
    let mut items = node_choices(node, &services);
    let left_behind = state
        .actions
        .left_cordoned
        .iter()
        .any(|(c, kube_node, _)| c == &cluster && (kube_node == &node.name));
    if left_behind && let Some(at) = items.iter().position(|i| *i == uncordon()) {
        items.remove(at);
        items.insert(0, uncordon());
    }
    Ok(ActionMenu {
        cluster,
        subject: node.name.clone(),
        member_id: None,
        items,
        selected: 0,
    })
}

fn uncordon() -> ActionChoice {
    ActionChoice::Node(crate::approval::NodeOperation::Uncordon)
}

fn member_menu(state: &AppState, cluster: String) -> Result<ActionMenu, String> {
    let data = super::tables::table(state, TableKind::Etcd);
    let id = data
        .selected_key(state.tables.get(TableKind::Etcd))
        .map(String::from)
        .ok_or_else(|| format!("no etcd member of {cluster} reported yet"))?;
    let status = &state
        .fleet
        .cluster(&cluster)
        .ok_or_else(|| format!("no status of {cluster} yet"))?
        .status;
    let hostname = status
        .etcd
        .members
        .iter()
        .find(|m| m.id == id)
        .map(|m| m.hostname.clone())
        .unwrap_or_else(|| id.clone());
    let items = etcd_choices(status, &id);
    Ok(ActionMenu {
        cluster,
        subject: hostname,
        member_id: Some(id),
        items,
        selected: 0,
    })
}

/// Keys while the menu is open: move, Enter chooses, Esc closes.
pub fn on_menu(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(menu) = state.actions.menu.as_mut() else {
        return Vec::new();
    };
    match action {
        Action::MoveUp | Action::MoveDown | Action::MoveFirst | Action::MoveLast => {
            if let Some(to) = moved(menu.items.len(), menu.selected, &action, 1) {
                menu.selected = to;
            }
        }
        Action::Back => state.actions.menu = None,
        Action::Submit | Action::OpenSelected => {
            let menu = state.actions.menu.take();
            if let Some(menu) = menu
                && let Some(choice) = menu.items.get(menu.selected).cloned()
            {
                return choose(state, &menu, choice);
            }
        }
        _ => {}
    }
    Vec::new()
}

/// A menu choice: its plan, or first the snapshot's file.
fn choose(state: &mut AppState, menu: &ActionMenu, choice: ActionChoice) -> Vec<Effect> {
    match choice {
        ActionChoice::Node(operation) => {
            open_node_plan(state, &menu.cluster, &menu.subject, operation)
        }
        ActionChoice::Forget => open_forget_plan(state, &menu.cluster, &menu.subject),
        ActionChoice::Etcd(EtcdAction::Snapshot) => {
            let file = state
                .actions
                .snapshot_dir
                .join(format!("{}-{}.snapshot", menu.cluster, menu.subject));
            state.actions.snapshot_of = Some((menu.cluster.clone(), menu.subject.clone()));
            state.open_input(InputKind::SnapshotPath, file.display().to_string());
            Vec::new()
        }
        ActionChoice::Etcd(EtcdAction::Disarm) => {
            open_etcd_plan(state, &menu.cluster, EtcdRequest::Disarm)
        }
        ActionChoice::Etcd(EtcdAction::Defragment) => {
            open_etcd_plan(state, &menu.cluster, EtcdRequest::Defragment { node: None })
        }
        ActionChoice::Etcd(EtcdAction::ForfeitLeadership) => {
            let request = EtcdRequest::ForfeitLeadership {
                node: menu.subject.clone(),
            };
            open_etcd_plan(state, &menu.cluster, request)
        }
        ActionChoice::Etcd(EtcdAction::RemoveMember) => {
            let member = menu
                .member_id
                .clone()
                .unwrap_or_else(|| menu.subject.clone());
            open_etcd_plan(state, &menu.cluster, EtcdRequest::RemoveMember { member })
        }
        ActionChoice::CapiFix(id) => {
            if let Some(screen) = super::update_capi::fix_plan_screen(state, &menu.cluster, &id) {
                show_plan(state, screen);
            }
            Vec::new()
        }
    }
}

/// Enter on the snapshot's file: the snapshot plan, writing there.
pub fn set_snapshot_path(state: &mut AppState, text: &str) -> Vec<Effect> {
    let Some((cluster, node)) = state.actions.snapshot_of.take() else {
        return Vec::new();
    };
    let text = text.trim();
    if text.is_empty() {
        state.message = Some(Message::warn("no file named: the snapshot needs one"));
        return Vec::new();
    }
    let request = EtcdRequest::Snapshot {
        node: Some(node),
        out: PathBuf::from(text),
        overwrite: false,
    };
    open_etcd_plan(state, &cluster, request)
}

fn open_node_plan(
    state: &mut AppState,
    cluster: &str,
    node: &str,
    operation: crate::approval::NodeOperation,
) -> Vec<Effect> {
    let Some(live) = state.fleet.cluster(cluster).filter(|l| l.has_data()) else {
        state.message = Some(Message::warn(format!("no status for {cluster} yet")));
        return Vec::new();
    };
    let kube_paired = state
        .clusters
        .iter()
        .any(|c| c.name == cluster && c.kube.is_some());
    match NodeActionPlan::new(&live.status, node, operation, kube_paired) {
        Ok(plan) => {
            let node = ActionPlan::Node {
                plan: plan.clone(),
                survey: None,
            };
            show_plan(state, ActionPlanScreen::new(cluster, node));
            vec![Effect::SurveyNode(Box::new(plan))]
        }
        Err(e) => {
            state.message = Some(Message::warn(e.to_string()));
            Vec::new()
        }
    }
}

/// The forget's plan, made by the function `taloscope node forget` calls, over the cluster's
/// talosconfig context and live status.
fn open_forget_plan(state: &mut AppState, cluster: &str, node: &str) -> Vec<Effect> {
    let Some(live) = state.fleet.cluster(cluster).filter(|l| l.has_data()) else {
        state.message = Some(Message::warn(format!("no status for {cluster} yet")));
        return Vec::new();
    };
    let context = state.clusters.iter().find(|c| c.name == cluster);
    let kept_backups = (state.actions.context_files.as_ref())
        .map_or(crate::config::DEFAULT_KEPT_BACKUPS, |f| f.kept_backups);
    let plan = crate::operation::forget::ForgetPlan::new(
        cluster,
        context.and_then(|c| c.talos.as_ref()),
        &live.status,
        node,
        kept_backups,
    )
    .map_err(|e| e.to_string());
    let forget = ActionPlan::Forget {
        node: node.to_string(),
        plan,
    };
    show_plan(state, ActionPlanScreen::new(cluster, forget));
    Vec::new()
}

fn open_etcd_plan(state: &mut AppState, cluster: &str, request: EtcdRequest) -> Vec<Effect> {
    if state.fleet.cluster(cluster).is_none_or(|l| !l.has_data()) {
        state.message = Some(Message::warn(format!("no status for {cluster} yet")));
        return Vec::new();
    }
    let etcd = ActionPlan::Etcd {
        request,
        plan: Err(String::new()),
    };
    show_plan(state, ActionPlanScreen::new(cluster, etcd));
    Vec::new()
}

/// Puts `screen` up with its guards evaluated over live status.
pub(super) fn show_plan(state: &mut AppState, screen: ActionPlanScreen) {
    let cluster = screen.cluster.clone();
    state.actions.plan = Some(screen);
    state.screen = Screen::Action;
    state.message = None;
    read_guards(state, Some(&cluster));
}

/// Keys on the action screen: the plan's while one is open, else the progress's.
pub fn on_screen(state: &mut AppState, action: Action) -> Vec<Effect> {
    if state.actions.plan.is_none() {
        return super::update_progress::on_key(state, action);
    }
    let cluster = state
        .actions
        .plan
        .as_ref()
        .map(|p| p.cluster.clone())
        .unwrap_or_default();
    match action {
        Action::StartPlan if state.actions.running() => {
            state.message = Some(Message::warn(
                "Start refused: an action already runs from this console",
            ));
        }
        Action::Refresh => return refresh(state, cluster),
        Action::Back => {
            state.actions.plan = None;
            state.screen = back(state);
        }
        other => return plan_key(state, &other).unwrap_or_default(),
    }
    Vec::new()
}

/// The screen the menu was opened on.
fn back(state: &AppState) -> Screen {
    state.actions.back.unwrap_or(Screen::Cluster(Pane::Nodes))
}

/// `r`: poll the cluster now, and read a node plan's survey again.
fn refresh(state: &mut AppState, cluster: String) -> Vec<Effect> {
    state.message = Some(Message::info(format!("refreshing {cluster}")));
    if super::update_delete::is_delete(state) {
        return vec![Effect::PlanDelete(cluster)];
    }
    if let Some(read_again) = super::update_capi_scale::refresh(state) {
        return vec![read_again];
    }
    let mut effects = vec![Effect::Poller(PollerRequest::Refresh(cluster))];
    if let Some(ActionPlan::Node { plan, .. }) = state.actions.plan.as_ref().map(|p| &p.plan) {
        effects.push(Effect::SurveyNode(Box::new(plan.clone())));
    }
    effects
}

/// The dispatcher approved an action: run it when it is still the plan on screen and no
/// guard blocks now (the guards evaluated again over the latest status).
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    let cluster = approved.action().cluster().to_string();
    read_guards(state, Some(&cluster));
    if let Some(refused) = not_approved(state, Screen::Action, &approved) {
        return refused;
    }
    let Some(screen) = state.actions.plan.as_ref() else {
        return Vec::new();
    };
    let run = match &screen.plan {
        ActionPlan::Node { plan, .. } => ActionRun::Node(plan.clone()),
        ActionPlan::Etcd { plan: Ok(plan), .. } => ActionRun::Etcd(plan.clone()),
        ActionPlan::Etcd { plan: Err(e), .. } => return not_run(&approved, e.clone()),
        ActionPlan::CapiFix {
            plan: Ok(plan),
            finding,
        } => match state.fleet.capi.owner(&cluster) {
            Some(owner) => ActionRun::CapiFix(Box::new(super::actions::CapiFixRun {
                plan: plan.clone(),
                finding: finding.clone(),
                owner: owner.clone(),
            })),
            None => {
                return not_run(
                    &approved,
                    format!("{cluster} is no longer owned by Cluster API"),
                );
            }
        },
        ActionPlan::CapiFix { plan: Err(e), .. } => return not_run(&approved, e.clone()),
        ActionPlan::Delete {
            plan: Some(Ok(plan)),
            ..
        } => ActionRun::Delete(plan.clone()),
        ActionPlan::Delete { .. } => {
            return not_run(&approved, "there is no delete plan".to_string());
        }
        ActionPlan::Forget { plan: Ok(plan), .. } => ActionRun::Forget(Box::new(plan.clone())),
        ActionPlan::Forget { plan: Err(e), .. } => return not_run(&approved, e.clone()),
        ActionPlan::CapiScale(plan) => {
            match super::update_capi_scale::run_of(plan, &screen.guards.acks) {
                Ok(run) => run,
                Err(why) => return not_run(&approved, why),
            }
        }
    };
    let acks = screen.guards.acks.clone();
    // A delete's title names its cluster ("delete cluster lab: terminate 5 VM(s), ...").
    let what = match run {
        ActionRun::Delete(_) => screen.title(),
        _ => approved.action().describe(),
    };
    super::update_progress::start(state, &approved, &run, &what);
    if let ActionRun::Node(plan) = &run
        && plan.operation == crate::approval::NodeOperation::Uncordon
    {
        let node = plan.node.clone();
        state
            .actions
            .left_cordoned
            .retain(|(c, n, _)| !(c == &cluster && n == &node));
    }
    state.actions.plan = None;
    state.screen = Screen::Action;
    state.message = Some(Message::info(format!("{what}: started")));
    vec![Effect::RunAction {
        approved,
        run: Box::new(run),
        acks,
    }]
}

/// A survey or a plan read, or a node an interrupted action left cordoned.
pub fn on_update(state: &mut AppState, update: ActionUpdate) -> Vec<Effect> {
    match update {
        ActionUpdate::Surveyed {
            cluster,
            node,
            survey,
        } => {
            let Some(screen) = state.actions.plan.as_mut().filter(|p| p.cluster == cluster) else {
                return Vec::new();
            };
            if let ActionPlan::Node { plan, survey: slot } = &mut screen.plan
                && plan.node == node
            {
                *slot = Some(survey.unwrap_or_else(|e| unread(plan, e)));
                read_guards(state, Some(&cluster));
            }
        }
        ActionUpdate::DeletePlanned { cluster, plan } => {
            super::update_delete::planned(state, &cluster, plan);
        }
        ActionUpdate::CapiScalePlanned { cluster, read } => {
            super::update_capi_scale::planned(state, &cluster, *read);
        }
        ActionUpdate::LeftCordoned { cluster, node, by } => {
            state.actions.left_cordoned.push((cluster, node, by));
        }
    }
    Vec::new()
}

/// The survey of a cluster that could not be reached: every read fails with `why`, so the
/// guards that need them fail.
fn unread(plan: &NodeActionPlan, why: String) -> NodeSurvey {
    NodeSurvey {
        kube_node: None,
        workloads: plan.drains().then(|| Err(why.clone())),
        services: matches!(
            plan.operation,
            crate::approval::NodeOperation::ServiceRestart(_)
        )
        .then(|| Err(why)),
    }
}

#[cfg(test)]
#[path = "update_actions_tests.rs"]
mod tests;
