//! The plan of one action the menu offers (a node's, an etcd one, a CAPI doctor's fix, the
//! forget of a node no longer a member), made and guarded by the functions the headless
//! commands call, on the one plan holder (`app::plan_screen::PlanHolder`); the survey a node
//! plan's guards need, read by the console; and what the approved plan runs.
use crate::app::actions::{ActionRun, CapiFixRun};
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject, roles_of};
use crate::approval::MutatingAction;
use crate::capi::CapiOwner;
use crate::capi_doctor::{Finding, FixPlan, evaluate_fix};
use crate::etcd_maintenance::{EtcdPlan, EtcdRequest, plan_guards};
use crate::node_actions::{NodeActionPlan, NodeSurvey, action_guards};
use crate::operation::forget::{ForgetPlan, forget_guards};
use crate::upgrade::Guard;

/// What a menu choice plans.
#[derive(Debug, Clone)]
pub enum ChoicePlan {
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
        finding: Finding,
        plan: Result<FixPlan, String>,
    },
    /// A node that is no longer a member removed from the talosconfig context (`node` as the
    /// menu named it); its guards evaluated over every new status.
    Forget {
        node: String,
        plan: Result<ForgetPlan, String>,
    },
}

/// The plan screen of one menu choice.
pub type ChoicePlanScreen = PlanHolder<ChoicePlan>;

/// The node plan whose survey the console reads (a `ScreenTask` of the actions screen).
#[derive(Debug, Clone)]
pub struct SurveyNode(pub NodeActionPlan);

/// What the node's guards need, read for the plan of `node`; `Err` when the cluster could not
/// be reached (the news the survey task sends back).
#[derive(Debug, Clone)]
pub struct Surveyed {
    pub cluster: String,
    pub node: String,
    pub survey: Result<NodeSurvey, String>,
}

impl PlanSubject for ChoicePlan {
    fn unready(&self) -> Option<String> {
        match self {
            ChoicePlan::Node { survey: None, .. } => {
                Some("reading the node's pods and services first".into())
            }
            ChoicePlan::Etcd { plan: Err(e), .. }
            | ChoicePlan::CapiFix { plan: Err(e), .. }
            | ChoicePlan::Forget { plan: Err(e), .. } => Some(e.clone()),
            _ => None,
        }
    }

    /// Makes the etcd plan (or the CAPI fix, over the tree) again from live status and
    /// evaluates every guard over it, with the same functions the headless commands call.
    fn evaluate(&mut self, _cluster: &str, reading: &GuardReading<'_>, _: &[String]) -> Vec<Guard> {
        let Some(live) = reading.live else {
            return Vec::new();
        };
        let (status, other) = (&live.status, &reading.other_rollout);
        let roles = roles_of(status);
        match self {
            ChoicePlan::Node { plan, survey } => survey.as_ref().map_or_else(Vec::new, |survey| {
                action_guards(plan, status, &roles, other, survey)
            }),
            ChoicePlan::Etcd { request, plan } => {
                *plan = EtcdPlan::new(status, request).map_err(|e| e.to_string());
                (plan.as_ref())
                    .map_or_else(|_| Vec::new(), |p| plan_guards(p, status, &roles, other))
            }
            ChoicePlan::CapiFix { finding, plan } => {
                let tree = reading.capi_tree.as_ref();
                evaluate_fix(finding, plan, tree, status, &roles, other)
            }
            ChoicePlan::Forget { plan, .. } => {
                (plan.as_ref()).map_or_else(|_| Vec::new(), |p| forget_guards(p, status))
            }
        }
    }

    fn approval(&self, _: &str) -> Option<MutatingAction> {
        match self {
            ChoicePlan::Node { plan, .. } => Some(MutatingAction::Node {
                cluster: plan.cluster.clone(),
                node: plan.node.clone(),
                operation: plan.operation.clone(),
            }),
            ChoicePlan::Etcd { plan, .. } => plan.as_ref().ok().map(EtcdPlan::mutating_action),
            ChoicePlan::CapiFix { plan, .. } => plan.as_ref().ok().map(|p| p.mutating_action()),
            ChoicePlan::Forget { plan, .. } => plan.as_ref().ok().map(ForgetPlan::action),
        }
    }
}

impl ChoicePlan {
    /// The screen's title, in `cluster`: the action in the operator's words.
    pub fn title(&self, cluster: &str) -> String {
        match (self, self.approval(cluster)) {
            (_, Some(action)) => format!("{} in {cluster}", action.describe()),
            (ChoicePlan::Etcd { request, .. }, None) => {
                format!("{} in {cluster}", request.action().as_str())
            }
            (ChoicePlan::Node { .. }, None) => cluster.to_string(),
            (ChoicePlan::CapiFix { finding, .. }, None) => {
                format!("fix {} in {cluster}", finding.id)
            }
            (ChoicePlan::Forget { node, .. }, None) => format!("forget node {node} in {cluster}"),
        }
    }

    /// What the one runner runs for the approved plan; a fix needs the Cluster object that
    /// owns its cluster (`owner`), the reason it cannot run otherwise.
    pub fn run(&self, cluster: &str, owner: Option<&CapiOwner>) -> Result<ActionRun, String> {
        match self {
            ChoicePlan::Node { plan, .. } => Ok(ActionRun::Node(plan.clone())),
            ChoicePlan::Etcd { plan, .. } => plan.clone().map(ActionRun::Etcd),
            ChoicePlan::CapiFix { plan, finding } => {
                let plan = plan.clone()?;
                let owner =
                    owner.ok_or_else(|| format!("{cluster} is no longer owned by Cluster API"))?;
                Ok(ActionRun::CapiFix(Box::new(CapiFixRun {
                    plan,
                    finding: finding.clone(),
                    owner: owner.clone(),
                })))
            }
            ChoicePlan::Forget { plan, .. } => plan.clone().map(|p| ActionRun::Forget(Box::new(p))),
        }
    }

    /// The node plan's survey, when it is `surveyed`'s node: read, or every read failing with
    /// why the cluster could not be reached (so the guards that need them fail).
    pub fn take_survey(&mut self, surveyed: &Surveyed) -> bool {
        let ChoicePlan::Node { plan, survey } = self else {
            return false;
        };
        if plan.node != surveyed.node {
            return false;
        }
        *survey =
            Some((surveyed.survey.clone()).unwrap_or_else(|why| NodeSurvey::unread(plan, why)));
        true
    }
}
