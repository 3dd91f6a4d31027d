//! The node and etcd actions in the update step: `a` opens the actions screen
//! (`views::actions`) on the menu of the selection; any approved action of a screen module
//! (the actions', the cluster plan's, the provision wizard's...) handed to the one runner
//! while the one progress screen (`views::progress`) shows it. Pure.
use super::action::Effect;
use super::actions::{ActionChoice, ActionMenu, ActionRun, MenuOpened, ProgressNews, node_choices};
use super::message::Message;
use super::screen::{Pane, Screen, TableKind};
use super::screens::{ScreenName, ScreenNews, Step};
use super::state::AppState;
use crate::approval::{ApprovedAction, MutatingAction, NodeOperation};

/// `a`: the actions screen (`views::actions`, named `screen`) on the menu of the actions on the
/// selected node (nodes pane, node detail), on etcd and the selected member (etcd pane) or of
/// the CAPI doctor's fixes; the progress instead while an action runs here.
pub fn open_menu(state: &mut AppState, screen: ScreenName) -> Vec<Effect> {
    if super::shell::shows_running(state) {
        return Vec::new();
    }
    let Some(cluster) = super::update_panes::cluster_in_use(state) else {
        return Vec::new();
    };
    let menu = match state.screen {
        Screen::Cluster(Pane::Nodes) | Screen::NodeDetail => node_menu(state, cluster),
        Screen::Cluster(Pane::Etcd) => member_menu(state, cluster),
        _ => Err("actions are on the nodes pane, node detail and the etcd pane".to_string()),
    };
    let menu = match menu {
        Ok(menu) => menu,
        Err(why) => {
            state.message = Some(Message::warn(why));
            return Vec::new();
        }
    };
    let kept_backups = (state.actions.context_files.as_ref())
        .map_or(crate::config::DEFAULT_KEPT_BACKUPS, |f| f.kept_backups);
    let opened = MenuOpened {
        menu,
        over: state.screen,
        snapshot_dir: state.actions.snapshot_dir.clone(),
        kept_backups,
    };
    super::shell::on_news(state, &ScreenNews::new(screen, opened));
    super::shell::open_with(state, screen, Vec::new())
}

fn node_menu(state: &AppState, cluster: String) -> Result<ActionMenu, String> {
    let address = super::tables::selected_key(state, TableKind::Nodes)
        .ok_or_else(|| format!("no node of {cluster} selected"))?;
    let live = state.fleet.cluster(&cluster);
    let (status, node) = live
        .and_then(|l| Some((&l.status, l.status.node(&address)?)))
        .ok_or_else(|| format!("no status for {address} yet"))?;
    // Node detail lists the node's services: each one Talos restarts is offered.
    let services: Vec<String> = match (state.screen, live.and_then(|l| l.services.get(&address))) {
        (Screen::NodeDetail, Some((Ok(list), _))) => list.iter().map(|s| s.id.clone()).collect(),
        _ => Vec::new(),
    };
    let mut items = node_choices(status, node, &services);
    let left_behind = state
        .actions
        .left_cordoned
        .iter()
        .any(|(c, kube_node, _)| c == &cluster && (kube_node == &node.name));
    // The uncordon of a node an interrupted action left cordoned comes first.
    let uncordon = ActionChoice::Node(NodeOperation::Uncordon);
    if left_behind && let Some(at) = items.iter().position(|i| *i == uncordon) {
        items[..=at].rotate_right(1);
    }
    Ok(ActionMenu {
        cluster,
        subject: node.name.clone(),
        member_id: None,
        items,
        selected: 0,
    })
}

fn member_menu(state: &AppState, cluster: String) -> Result<ActionMenu, String> {
    let id = super::tables::selected_key(state, TableKind::Etcd)
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
    let offered = crate::etcd_maintenance::offered(status, &id);
    let items = offered.into_iter().map(ActionChoice::Etcd).collect();
    Ok(ActionMenu {
        cluster,
        subject: hostname,
        member_id: Some(id),
        items,
        selected: 0,
    })
}

/// The dispatcher approved an action: an upgrade's rollout resumed from the journal the
/// progress shows; else the plan of the screen module on top runs when it is still the plan
/// on screen and no guard blocks now (its guards read again over the latest status), an
/// upgrade, a CAPI-way upgrade, a configuration patch or a create only while no other runs
/// here, and the progress screen shows it as its plan describes it.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    let action = approved.action();
    let rollout = matches!(
        action,
        MutatingAction::UpgradeTalos { .. } | MutatingAction::UpgradeKubernetes { .. }
    );
    // Says what happens now, in place of the plan's "acknowledged; s starts".
    let starting = match action {
        MutatingAction::UpgradeTalos { cluster, target } => {
            Some(format!("starting the upgrade of {cluster} to {target}"))
        }
        _ => None,
    };
    if rollout
        && state.screen == Screen::Module(super::shell::PROGRESS)
        && let Some(resumed) = super::shell::on_approved(state, &approved)
    {
        return resumed;
    }
    let alone = rollout
        || matches!(
            action,
            MutatingAction::CapiUpgrade { .. }
                | MutatingAction::ConfigPatch { .. }
                | MutatingAction::CreateCluster { .. }
        );
    if alone && state.operation_running() {
        return super::action::not_run(&approved, "an action already runs from this console");
    }
    // Esc on the progress of a plan of these screens: where the plan was opened from.
    let mut back = Screen::Cluster(Pane::Nodes);
    if let Screen::Module(name) = state.screen
        && super::shell::RUN_HERE.contains(&name)
        && let Some(from) = state.screens.opened_from.get(name)
    {
        back = *from;
    }
    // A failed VM's terminate, offered on the progress itself, runs as approved.
    let terminate = matches!(approved.action(), MutatingAction::TerminateVm { .. });
    let effects = match super::shell::on_approved(state, &approved) {
        Some(effects) => effects,
        None if terminate => vec![Effect::RunAction {
            approved,
            run: Box::new(ActionRun::TerminateVm),
            acks: Vec::new(),
        }],
        None => {
            let refused = Step::closed_approval(&approved);
            state.message = refused.message;
            return refused.effects;
        }
    };
    let mut shown = Vec::new();
    for effect in &effects {
        let Effect::RunAction { approved, run, .. } = effect else {
            continue;
        };
        let cluster = state.current.clone().unwrap_or_default();
        let progress = run.progress(approved, &cluster, state.wall_clock);
        // An uncordon clears what an interrupted action left cordoned on its node.
        if let ActionRun::Node(plan) = run.as_ref()
            && plan.operation == NodeOperation::Uncordon
        {
            let cluster = approved.action().cluster();
            (state.actions.left_cordoned).retain(|(c, n, _)| !(c == cluster && n == &plan.node));
        }
        if !matches!(
            run.as_ref(),
            ActionRun::Provision(_) | ActionRun::TerminateVm
        ) {
            let started = starting.clone();
            let started = started.unwrap_or_else(|| format!("{}: started", progress.what));
            state.message = Some(Message::info(started));
        }
        let progress = Box::new(progress);
        shown.extend(super::shell::show_progress(
            state,
            ProgressNews::Started { progress, back },
        ));
    }
    [effects, shown].concat()
}

#[cfg(test)]
#[path = "update_actions_tests.rs"]
mod tests;
