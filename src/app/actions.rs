//! The console's node, etcd and cluster-delete actions as the shell knows them: the action
//! menu of the selection (`a`; its screen is `views::actions`) or of the CAPI doctor's fixes, and what the shell and the
//! one runner tell the one progress screen (`views::progress`). What the runner runs is
//! `operation::planned`'s.
use std::path::PathBuf;

use crate::approval::{EtcdAction, NodeOperation};
use crate::capi_doctor::{Finding, findings_of};
use crate::cluster_config::ContextFiles;
use crate::fleet::{ClusterStatus, FleetModel, NodeStatus};
use crate::operation::OperationKind;
use crate::operation::progress::{OperationProgress, ProgressEvent};
use crate::rollout::RolloutSummary;

pub use crate::operation::planned::{ActionRun, CapiFixRun, delete_headline};

/// One entry of the action menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionChoice {
    /// An action on the selected node.
    Node(NodeOperation),
    /// An etcd action; the member ones are about the selected member.
    Etcd(EtcdAction),
    /// The CAPI doctor's fix of a finding, by its id.
    CapiFix(String),
    /// The selected node, no longer a member, removed from the talosconfig context.
    Forget,
}

impl ActionChoice {
    /// The menu's words for it, about `subject` (a node or member name).
    pub fn label(&self, subject: &str) -> String {
        match self {
            ActionChoice::Node(NodeOperation::ServiceRestart(service)) => {
                format!("restart service {service}")
            }
            ActionChoice::Node(op) => format!("{} {subject}", op.verb()),
            ActionChoice::Etcd(EtcdAction::Disarm) => {
                "disarm alarms (defragment over quota first)".into()
            }
            ActionChoice::Etcd(EtcdAction::Defragment) => {
                "defragment every member, leader last".into()
            }
            ActionChoice::Etcd(EtcdAction::Snapshot) => format!("snapshot {subject} to a file"),
            ActionChoice::Etcd(EtcdAction::ForfeitLeadership) => {
                format!("forfeit leadership of {subject}")
            }
            ActionChoice::Etcd(EtcdAction::RemoveMember) => format!("remove member {subject}"),
            ActionChoice::CapiFix(id) => format!("fix {id}"),
            ActionChoice::Forget => format!("forget {subject}: remove it from the talosconfig"),
        }
    }
}

/// The menu `a` opens over the nodes pane, node detail or the etcd pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionMenu {
    pub cluster: String,
    /// The selected node (name) or etcd member (hostname).
    pub subject: String,
    /// The etcd member's id, on the etcd pane.
    pub member_id: Option<String>,
    pub items: Vec<ActionChoice>,
    pub selected: usize,
}

/// The node actions the menu offers for `node` of `status` (`node_actions::offered`); a node
/// that is not a member is offered only its removal from the talosconfig, when the
/// talosconfig names it.
pub fn node_choices(
    status: &ClusterStatus,
    node: &NodeStatus,
    services: &[String],
) -> Vec<ActionChoice> {
    if node.not_a_member {
        return match node.source {
            crate::fleet::NodeSource::Talosconfig => vec![ActionChoice::Forget],
            _ => Vec::new(),
        };
    }
    let offered = crate::node_actions::offered(status, node, services);
    offered.into_iter().map(ActionChoice::Node).collect()
}

/// The CAPI doctor's fix menu entries: one per finding that has a fix.
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

/// The node, etcd and delete actions' menu as the shell hands it to the actions screen
/// (`views::actions`), with what its plans need of the console's configuration.
#[derive(Debug, Clone)]
pub struct MenuOpened {
    pub menu: ActionMenu,
    /// The screen it pops up over.
    pub over: super::screen::Screen,
    /// Where snapshots go unless the operator types another path.
    pub snapshot_dir: PathBuf,
    /// How many backups of the talosconfig a forget keeps.
    pub kept_backups: usize,
}

/// What the console keeps for its actions.
#[derive(Debug, Clone, Default)]
pub struct ActionsState {
    /// Where snapshots go unless the operator types another path (the state dir's
    /// `snapshots/`, set by the event loop).
    pub snapshot_dir: PathBuf,
    /// The operator's talosconfig and kubeconfig a delete removes contexts from (the first of
    /// each, as `taloscope delete` takes them; set by commands/).
    pub context_files: Option<ContextFiles>,
    /// Nodes interrupted actions left cordoned: (cluster, Kubernetes node, the action's words).
    pub left_cordoned: Vec<(String, String, String)>,
}

/// What the shell and the runners tell the one progress screen (`views::progress`), as its
/// news.
#[derive(Debug, Clone)]
pub enum ProgressNews {
    /// An approved run starts on the one runner, with the progress its plan starts with
    /// (`ActionRun::progress`); Esc leads to `back`.
    Started {
        progress: Box<OperationProgress>,
        back: super::screen::Screen,
    },
    /// One event of the running operation of a kind.
    Event(OperationKind, ProgressEvent),
    /// A rollout journal that did not end, found at startup.
    Journal(Box<RolloutSummary>),
    /// What a killed console's provision journals left.
    Provisions(Box<super::provision::JournalVms>),
    /// Brought on top again; Esc leads to `back`.
    Shown { back: super::screen::Screen },
}
