//! The node, etcd and delete actions in the update step: `a` opens the actions screen
//! (`views::actions`) on the menu of the selection; the delete's and the CAPI scale's plans
//! (`D`, `s` on `:capi`) on the action screen, their guards evaluated again on every status
//! change, `s` through the one gate; and any approved action handed to the one runner while
//! its progress shows. Pure.
use super::action::{Action, Effect, PollerRequest, not_run};
use super::actions::{
    ActionChoice, ActionMenu, ActionPlan, ActionRun, ActionUpdate, MenuOpened, etcd_choices,
    node_choices,
};
use super::message::Message;
use super::plan_keys::{not_approved, plan_key, read_guards};
use super::screen::{Pane, Screen, TableKind};
use super::screens::ScreenNews;
use super::state::AppState;
use crate::approval::{ApprovedAction, NodeOperation};

/// The actions screen's name (`views::actions`).
const ACTIONS: &str = "actions";

/// `a`: the actions screen on the menu of the actions on the selected node (nodes pane, node
/// detail), on etcd and the selected member (etcd pane) or of the CAPI doctor's fixes; the
/// progress instead while an action runs here.
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
    let menu = match menu {
        Ok(menu) => menu,
        Err(why) => {
            state.message = Some(Message::warn(why));
            return Vec::new();
        }
    };
    state.actions.back = Some(state.screen);
    let kept_backups = (state.actions.context_files.as_ref())
        .map_or(crate::config::DEFAULT_KEPT_BACKUPS, |f| f.kept_backups);
    let opened = MenuOpened {
        menu,
        over: state.screen,
        snapshot_dir: state.actions.snapshot_dir.clone(),
        kept_backups,
    };
    super::shell::on_news(state, &ScreenNews::new(ACTIONS, opened));
    super::shell::open(state, ACTIONS)
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
    ActionChoice::Node(NodeOperation::Uncordon)
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

/// `r`: poll the cluster now, or read the delete's or the scale's plan again.
fn refresh(state: &mut AppState, cluster: String) -> Vec<Effect> {
    state.message = Some(Message::info(format!("refreshing {cluster}")));
    if super::update_delete::is_delete(state) {
        return vec![Effect::PlanDelete(cluster)];
    }
    if let Some(read_again) = super::update_capi_scale::refresh(state) {
        return vec![read_again];
    }
    vec![Effect::Poller(PollerRequest::Refresh(cluster))]
}

/// The dispatcher approved an action: the actions screen's plan runs when it is still the
/// plan on screen and no guard blocks now (its guards read again over the latest status), and
/// likewise the delete's or the scale's on the action screen.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    if let Some(effects) = super::shell::on_approved(state, &approved) {
        return started(state, None, effects);
    }
    let cluster = approved.action().cluster().to_string();
    read_guards(state, Some(&cluster));
    if let Some(refused) = not_approved(state, Screen::Action, &approved) {
        return refused;
    }
    let Some(screen) = state.actions.plan.take() else {
        return Vec::new();
    };
    let run = match &screen.plan {
        ActionPlan::Delete {
            plan: Some(Ok(plan)),
            ..
        } => ActionRun::Delete(plan.clone()),
        ActionPlan::Delete { .. } => {
            return not_run(&approved, "there is no delete plan".to_string());
        }
        ActionPlan::CapiScale(plan) => {
            match super::update_capi_scale::run_of(plan, &screen.guards.acks) {
                Ok(run) => run,
                Err(why) => return not_run(&approved, why),
            }
        }
    };
    // A delete's title names its cluster ("delete cluster lab: terminate 5 VM(s), ...").
    let what = matches!(run, ActionRun::Delete(_)).then(|| screen.title());
    let effects = vec![Effect::RunAction {
        approved,
        run: Box::new(run),
        acks: screen.guards.acks.clone(),
    }];
    started(state, what, effects)
}

/// The approved runs among `effects` handed to the one runner: each one's progress shown from
/// its start, under `what` (else its approval's words); an uncordon clears what an interrupted
/// action left cordoned on its node.
fn started(state: &mut AppState, what: Option<String>, effects: Vec<Effect>) -> Vec<Effect> {
    for effect in &effects {
        let Effect::RunAction { approved, run, .. } = effect else {
            continue;
        };
        let what = what.clone().unwrap_or_else(|| approved.action().describe());
        super::update_progress::start(state, approved, run, &what);
        if let ActionRun::Node(plan) = run.as_ref()
            && plan.operation == NodeOperation::Uncordon
        {
            let cluster = approved.action().cluster();
            (state.actions.left_cordoned).retain(|(c, n, _)| !(c == cluster && n == &plan.node));
        }
        state.screen = Screen::Action;
        state.message = Some(Message::info(format!("{what}: started")));
    }
    effects
}

/// A plan read, or a node an interrupted action left cordoned.
pub fn on_update(state: &mut AppState, update: ActionUpdate) -> Vec<Effect> {
    match update {
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

#[cfg(test)]
#[path = "update_actions_tests.rs"]
mod tests;
