//! The console's node, etcd and cluster-delete actions: the action menu of the selection (`a`),
//! the plan screen of one action (built by node_actions', etcd_maintenance's and
//! cluster_lifecycle's own plan and guard functions, the ones the headless commands call) and
//! the progress of the one that runs.
use std::path::PathBuf;

use crate::approval::{EtcdAction, MutatingAction, NodeOperation};
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{DeletePlan, delete_guards};
use crate::etcd_maintenance::{EtcdPlan, EtcdRequest, plan_guards};
use crate::fleet::{ClusterStatus, NodeStatus};
use crate::node_actions::{NodeActionPlan, NodeSurvey, action_guards};
use crate::operation::forget::{ForgetPlan, forget_guards};
use crate::operation::progress::OperationProgress;
use crate::rollout::LeaseReading;

use super::plan_screen::{GuardReading, GuardedPlan, PlanGuards, cluster_and_guards};

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

/// The node actions the menu offers for `node`, only those whose subject exists: cordon when
/// its Kubernetes node is schedulable, uncordon when it is cordoned, drain when it has one;
/// then a restart of each service Talos restarts through its API (node detail lists them). A
/// node that is not a member is offered only its removal from the talosconfig, when the
/// talosconfig names it.
pub fn node_choices(node: &NodeStatus, services: &[String]) -> Vec<ActionChoice> {
    if node.not_a_member {
        return match node.source {
            crate::fleet::NodeSource::Talosconfig => vec![ActionChoice::Forget],
            _ => Vec::new(),
        };
    }
    let mut ops = vec![NodeOperation::Reboot, NodeOperation::Shutdown];
    match node.cordoned {
        Some(false) => ops.extend([NodeOperation::Cordon, NodeOperation::Drain]),
        Some(true) => ops.extend([NodeOperation::Uncordon, NodeOperation::Drain]),
        None => {}
    }
    let mut items: Vec<ActionChoice> = ops.into_iter().map(ActionChoice::Node).collect();
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

/// What a plan screen plans.
#[derive(Debug, Clone)]
pub enum ActionPlan {
    /// A node action, and what its survey read (`None` until the console has read it).
    Node {
        plan: NodeActionPlan,
        survey: Option<NodeSurvey>,
    },
    /// An etcd action: the request, and its plan made again from every new status.
    Etcd {
        request: EtcdRequest,
        plan: Result<EtcdPlan, String>,
    },
    /// A CAPI doctor's fix: the finding and its plan, both made again from every new status.
    CapiFix {
        finding: crate::capi_doctor::Finding,
        plan: Result<crate::capi_doctor::FixPlan, String>,
    },
    /// A whole cluster's deletion (`D`): `None` until the event loop has read its create
    /// journal, provider and rollout Lease (`prepare_delete`, as `taloscope delete` does).
    Delete {
        plan: Option<Result<DeletePlan, String>>,
        /// What could not be read (the Lease), shown above the guards.
        warnings: Vec<String>,
    },
    /// A CAPI scale (`s` on `:capi`): `read` is `None` until the event loop has read both
    /// sides (`prepare_scale`, as `taloscope scale` does).
    CapiScale(Box<super::capi_scale::CapiScalePlan>),
    /// A node that is no longer a member removed from the talosconfig context (`node` as the
    /// menu named it); its guards evaluated over every new status.
    Forget {
        node: String,
        plan: Result<ForgetPlan, String>,
    },
}

/// The plan screen of one action.
#[derive(Debug, Clone)]
pub struct ActionPlanScreen {
    pub cluster: String,
    pub plan: ActionPlan,
    /// Its guards and the acknowledgements typed (a delete's "this destroys the cluster and
    /// its data").
    pub guards: PlanGuards,
}

impl ActionPlanScreen {
    /// The plan screen of `plan` in `cluster`, its guards not evaluated yet.
    pub fn new(cluster: &str, plan: ActionPlan) -> ActionPlanScreen {
        ActionPlanScreen {
            cluster: cluster.to_string(),
            plan,
            guards: PlanGuards::default(),
        }
    }

    /// The screen's title: the action in the operator's words.
    pub fn title(&self) -> String {
        match (&self.plan, self.approval()) {
            (ActionPlan::Delete { .. }, Some(action)) => {
                format!(
                    "delete cluster {}: {}",
                    self.cluster,
                    delete_effect(&action)
                )
            }
            (ActionPlan::Delete { .. }, None) => format!("delete cluster {}", self.cluster),
            (_, Some(action)) => format!("{} in {}", action.describe(), self.cluster),
            (ActionPlan::Etcd { request, .. }, None) => {
                format!("{} in {}", etcd_action_of(request).as_str(), self.cluster)
            }
            (ActionPlan::Node { .. }, None) => self.cluster.clone(),
            (ActionPlan::CapiFix { finding, .. }, None) => {
                format!("fix {} in {}", finding.id, self.cluster)
            }
            (ActionPlan::Forget { node, .. }, None) => {
                format!("forget node {node} in {}", self.cluster)
            }
            (ActionPlan::CapiScale(p), None) => format!(
                "scale {} to {} replicas (Cluster API) in {}",
                p.target.object, p.request.replicas, self.cluster
            ),
        }
    }

    /// Makes the etcd plan (or the CAPI fix, over `tree`) again from `status` and evaluates
    /// every guard over it, with the same functions the headless commands call; `other` is
    /// what the cluster's rollout Lease said, or why it could not be read.
    pub fn evaluate(
        &mut self,
        status: &ClusterStatus,
        other: &LeaseReading,
        tree: Option<&crate::capi::ClusterTree>,
    ) {
        let roles = super::plan_screen::roles_of(status);
        let guards = match &mut self.plan {
            ActionPlan::Node { plan, survey } => match survey {
                Some(survey) => action_guards(plan, status, &roles, other, survey),
                None => Vec::new(),
            },
            ActionPlan::Etcd { request, plan } => {
                *plan = EtcdPlan::new(status, request).map_err(|e| e.to_string());
                match plan {
                    Ok(plan) => plan_guards(plan, status, &roles, other),
                    Err(_) => Vec::new(),
                }
            }
            ActionPlan::CapiFix { finding, plan } => {
                super::capi_doctor::evaluate_fix(finding, plan, tree, status, &roles, other)
            }
            ActionPlan::Delete { plan, .. } => plan
                .as_ref()
                .and_then(|p| p.as_ref().ok())
                .map(delete_guards)
                .unwrap_or_default(),
            ActionPlan::CapiScale(p) => super::capi_scale::guards_of(p),
            ActionPlan::Forget { plan: Ok(plan), .. } => forget_guards(plan, status),
            ActionPlan::Forget { plan: Err(_), .. } => Vec::new(),
        };
        self.guards.set(guards);
    }
}

impl GuardedPlan for ActionPlanScreen {
    cluster_and_guards!();

    fn unready(&self) -> Option<String> {
        match &self.plan {
            ActionPlan::Node { survey: None, .. } => {
                Some("reading the node's pods and services first".into())
            }
            ActionPlan::Etcd { plan: Err(e), .. }
            | ActionPlan::CapiFix { plan: Err(e), .. }
            | ActionPlan::Forget { plan: Err(e), .. }
            | ActionPlan::Delete {
                plan: Some(Err(e)), ..
            } => Some(e.clone()),
            ActionPlan::Delete { plan: None, .. } => Some(
                "reading the cluster's create journal, provider and rollout Lease first".into(),
            ),
            ActionPlan::CapiScale(p) => super::capi_scale::unready(p),
            _ => None,
        }
    }

    fn read_guards(&mut self, reading: &GuardReading<'_>) {
        if let Some(live) = reading.live {
            self.evaluate(
                &live.status,
                &reading.other_rollout,
                reading.capi_tree.as_ref(),
            );
        }
    }

    fn approval(&self) -> Option<MutatingAction> {
        match &self.plan {
            ActionPlan::Node { plan, .. } => Some(MutatingAction::Node {
                cluster: plan.cluster.clone(),
                node: plan.node.clone(),
                operation: plan.operation.clone(),
            }),
            ActionPlan::Etcd { plan, .. } => plan.as_ref().ok().map(EtcdPlan::mutating_action),
            ActionPlan::CapiFix { plan, .. } => plan.as_ref().ok().map(|p| p.mutating_action()),
            ActionPlan::Delete { plan, .. } => plan
                .as_ref()
                .and_then(|p| p.as_ref().ok())
                .map(DeletePlan::action),
            ActionPlan::CapiScale(p) => p.prepared().map(|p| p.plan.action()),
            ActionPlan::Forget { plan, .. } => plan.as_ref().ok().map(ForgetPlan::action),
        }
    }
}

/// What a delete does, from its approval's words ("terminate 5 VM(s), remove its contexts").
fn delete_effect(action: &MutatingAction) -> String {
    let described = action.describe();
    described
        .strip_prefix("delete cluster: ")
        .map_or(described.clone(), str::to_string)
}

/// The etcd action a request asks for.
pub fn etcd_action_of(request: &EtcdRequest) -> EtcdAction {
    match request {
        EtcdRequest::Disarm => EtcdAction::Disarm,
        EtcdRequest::Defragment { .. } => EtcdAction::Defragment,
        EtcdRequest::Snapshot { .. } => EtcdAction::Snapshot,
        EtcdRequest::ForfeitLeadership { .. } => EtcdAction::ForfeitLeadership,
        EtcdRequest::RemoveMember { .. } => EtcdAction::RemoveMember,
    }
}

/// Everything of the actions the console shows.
#[derive(Debug, Clone, Default)]
pub struct ActionsState {
    pub menu: Option<ActionMenu>,
    pub plan: Option<ActionPlanScreen>,
    /// The operation running (or last run) from this console, as its runner's events built it.
    pub progress: Option<OperationProgress>,
    /// Where snapshots go unless the operator types another path (the state dir's
    /// `snapshots/`, set by the event loop).
    pub snapshot_dir: PathBuf,
    /// The screen the menu was opened on: where Esc goes back to.
    pub back: Option<super::screen::Screen>,
    /// The cluster and node whose snapshot's file is being typed.
    pub snapshot_of: Option<(String, String)>,
    /// The operator's talosconfig and kubeconfig a delete removes contexts from (the first of
    /// each, as `taloscope delete` takes them; set by commands/).
    pub context_files: Option<ContextFiles>,
    /// Nodes interrupted actions left cordoned: (cluster, Kubernetes node, the action's words).
    pub left_cordoned: Vec<(String, String, String)>,
}

impl ActionsState {
    /// Whether an action runs here now.
    pub fn running(&self) -> bool {
        self.progress
            .as_ref()
            .is_some_and(OperationProgress::running)
    }
}

/// What a runner reports about the action it runs, or the survey read for a plan.
#[derive(Debug, Clone)]
pub enum ActionUpdate {
    /// What the node's guards need, read for the plan of `node`; `Err` when the cluster
    /// could not be reached.
    Surveyed {
        cluster: String,
        node: String,
        survey: Result<NodeSurvey, String>,
    },
    /// The delete plan of `cluster` read by `prepare_delete`, and what could not be read.
    DeletePlanned {
        cluster: String,
        plan: Result<(DeletePlan, Vec<String>), String>,
    },
    /// The CAPI scale plan of `cluster` read by `prepare_scale`.
    CapiScalePlanned {
        cluster: String,
        read: Box<Result<crate::capi_scale::PreparedScale, String>>,
    },
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
    CapiScale(Box<super::capi_scale::CapiScaleRun>),
    /// A new cluster (its journal resumes a killed run of it).
    Create(Box<crate::cluster_lifecycle::CreatePlan>),
    /// A node that is no longer a member removed from the talosconfig context.
    Forget(Box<ForgetPlan>),
    /// The CAPI-way upgrade of a cluster Cluster API owns.
    CapiUpgrade(Box<crate::upgrade::capi::CapiUpgradePlan>),
    /// A Talos or Kubernetes upgrade, in place, of the plan as the operator saw it.
    Upgrade(Box<super::plan_screen::PlannedRollout>),
    /// The in-place upgrade a run that did not end left in its journal, resumed.
    ResumeUpgrade,
}

impl ActionRun {
    /// The most the run may take, when its runner bounds it: a node action the console's node
    /// timeout, a snapshot the stream's bound.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        match self {
            ActionRun::Node(_) => {
                Some(crate::node_actions::NodeActionOptions::console().node_timeout)
            }
            ActionRun::Etcd(plan) if plan.action == EtcdAction::Snapshot => Some(SNAPSHOT_BOUND),
            ActionRun::CapiUpgrade(plan) => Some(
                plan.phases
                    .iter()
                    .map(|p| crate::operation::capi_upgrade::phase_bound(plan, p))
                    .sum(),
            ),
            _ => None,
        }
    }
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
