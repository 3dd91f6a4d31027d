//! The console's node, etcd and cluster-delete actions as the shell knows them: the action
//! menu of the selection (`a`; its screen is `views::actions`), a delete's headline (its plan
//! is `views::cluster_plan`'s), what the one runner runs, and what the shell tells the one
//! progress screen (`views::progress`) of it.
use std::path::PathBuf;

use crate::approval::{ApprovedAction, EtcdAction, MutatingAction, NodeOperation};
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::DeletePlan;
use crate::etcd_maintenance::EtcdPlan;
use crate::fleet::{ClusterStatus, NodeStatus};
use crate::node_actions::NodeActionPlan;
use crate::operation::OperationKind;
use crate::operation::forget::ForgetPlan;
use crate::operation::progress::ProgressEvent;
use crate::rollout::RolloutSummary;

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

/// The node actions the menu offers for `node`, only those whose subject exists (each one's
/// `MenuOffer`: cordon when its Kubernetes node is schedulable, uncordon when it is cordoned,
/// drain when it has one); then a restart of each service Talos restarts through its API
/// (node detail lists them). A
/// node that is not a member is offered only its removal from the talosconfig, when the
/// talosconfig names it.
pub fn node_choices(node: &NodeStatus, services: &[String]) -> Vec<ActionChoice> {
    if node.not_a_member {
        return match node.source {
            crate::fleet::NodeSource::Talosconfig => vec![ActionChoice::Forget],
            _ => Vec::new(),
        };
    }
    let mut items: Vec<ActionChoice> = (NodeOperation::ON_NODE.into_iter())
        .filter(|op| op.facts().menu.offered(node.cordoned))
        .map(ActionChoice::Node)
        .collect();
    items.extend(
        services
            .iter()
            .filter(|s| crate::node_actions::guards::api_restartable(s))
            .map(|s| ActionChoice::Node(NodeOperation::ServiceRestart(s.clone()))),
    );
    items
}

/// The etcd actions the menu offers about member `member_id` of `status`, in the menu's
/// order, only those whose subject exists: disarm while an alarm is active, forfeit on the
/// leader, remove-member for a member no answering node runs.
pub fn etcd_choices(status: &ClusterStatus, member_id: &str) -> Vec<ActionChoice> {
    let member = status.etcd.members.iter().find(|m| m.id == member_id);
    let mut actions = Vec::new();
    if !status.etcd.alarms.is_empty() {
        actions.push(EtcdAction::Disarm);
    }
    actions.extend([EtcdAction::Defragment, EtcdAction::Snapshot]);
    if member.is_some_and(|m| m.leader) {
        actions.push(EtcdAction::ForfeitLeadership);
    }
    let runs_on_a_node = member.is_some_and(|m| {
        status
            .nodes
            .iter()
            .any(|n| n.error.is_none() && (n.name == m.hostname || n.address == m.hostname))
    });
    if !runs_on_a_node {
        actions.push(EtcdAction::RemoveMember);
    }
    actions.into_iter().map(ActionChoice::Etcd).collect()
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

/// The headline of a delete approved as `action`: the cluster and what it does
/// ("delete cluster lab: terminate 5 VM(s), remove its contexts").
pub fn delete_headline(action: &MutatingAction) -> String {
    let described = action.describe();
    let effect = described
        .strip_prefix("delete cluster: ")
        .map_or(described.as_str(), |e| e);
    format!("delete cluster {}: {effect}", action.cluster())
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

/// What the shell tells the one progress screen (`views::progress`), as its news.
#[derive(Debug, Clone)]
pub enum ProgressNews {
    /// An approved run starts on the one runner: its progress from now, headed `what`; Esc
    /// leads to `back`.
    Started {
        approved: ApprovedAction,
        run: Box<ActionRun>,
        what: String,
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

/// What an interrupted action left behind.
#[derive(Debug, Clone)]
pub enum ActionUpdate {
    /// An interrupted action (`by`, in its words) left Kubernetes node `node` of `cluster`
    /// cordoned: the node's menu offers its uncordon first.
    LeftCordoned {
        cluster: String,
        node: String,
        by: String,
    },
}

/// What the event loop runs for an approved action.
#[derive(Debug, Clone)]
pub enum ActionRun {
    Node(NodeActionPlan),
    Etcd(EtcdPlan),
    /// A CAPI doctor's fix, then the cluster followed until its finding clears.
    CapiFix(Box<CapiFixRun>),
    Delete(DeletePlan),
    CapiScale(Box<CapiScaleRun>),
    /// A new cluster (its journal resumes a killed run of it).
    Create(Box<crate::cluster_lifecycle::CreatePlan>),
    /// A node that is no longer a member removed from the talosconfig context.
    Forget(Box<ForgetPlan>),
    /// The CAPI-way upgrade of a cluster Cluster API owns.
    CapiUpgrade(Box<crate::upgrade::capi::CapiUpgradePlan>),
    /// New VMs of a cluster, each followed until its node joined.
    Provision(Box<crate::provision::ProvisionPlan>),
    /// A VM a provision left failed, terminated (the approval names it).
    TerminateVm,
    /// A Talos or Kubernetes upgrade, in place, of the plan as the operator saw it.
    Upgrade(Box<super::plan_screen::PlannedRollout>),
    /// The in-place upgrade a run that did not end left in its journal, resumed.
    ResumeUpgrade,
    /// A machine-configuration patch of the plan read from each target node's dry run.
    ConfigPatch(Box<crate::operation::config_patch::ConfigPatchPlan>),
}

/// How long a snapshot may take to stream (`etcd snapshot --timeout`'s default).
pub const SNAPSHOT_BOUND: std::time::Duration = std::time::Duration::from_secs(600);

/// What the console runs for a CAPI doctor's fix.
#[derive(Debug, Clone)]
pub struct CapiFixRun {
    pub plan: crate::capi_doctor::FixPlan,
    pub finding: crate::capi_doctor::Finding,
    /// The Cluster object, and its management cluster's kube context.
    pub owner: crate::capi::CapiOwner,
}

/// What the console runs for an approved CAPI scale: the plan confirmed and the
/// acknowledgements typed (the runner checks the guards again with them).
#[derive(Debug, Clone)]
pub struct CapiScaleRun {
    pub plan: crate::capi_scale::ScalePlan,
    pub acks: Vec<String>,
}
