//! Scaling the CAPI way from the `:capi` screen, its state: the object `s` scales (the
//! selected MachineDeployment, else the TalosControlPlane) while its new replica count is
//! typed, the plan `prepare_scale` read for the action screen, and the running scale's tally.
use crate::capi::MachineRole;
use crate::capi_scale::{MachineChange, PreparedScale, ScaleEvent, ScalePlan, ScaleRequest};
use crate::kube::ScaledKind;

use super::state::AppState;

/// The most digits the replica count takes (the bounds guard refuses above 100 anyway).
pub const MAX_DIGITS: usize = 3;

/// What `s` scales: one object of the cluster in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleTarget {
    pub cluster: String,
    pub role: MachineRole,
    /// The MachineDeployment, for workers.
    pub deployment: Option<String>,
    /// "TalosControlPlane default/w-cp", as the plan names it.
    pub object: String,
    /// `spec.replicas` as the tree on screen shows it.
    pub replicas: u32,
    /// Why this object when the selected row is not it ("the selected row is a Machine").
    pub note: Option<String>,
}

impl ScaleTarget {
    pub fn request(&self, replicas: u32) -> ScaleRequest {
        ScaleRequest {
            role: self.role,
            deployment: self.deployment.clone(),
            replicas,
        }
    }
}

/// The action screen's plan of one scale: `None` until the event loop has read both sides
/// (`prepare_scale`, as `taloscope scale` does).
#[derive(Debug, Clone)]
pub struct CapiScalePlan {
    pub target: ScaleTarget,
    pub request: ScaleRequest,
    pub read: Option<Result<PreparedScale, String>>,
}

impl CapiScalePlan {
    pub fn prepared(&self) -> Option<&PreparedScale> {
        self.read.as_ref().and_then(|r| r.as_ref().ok())
    }
}

/// What the event loop reads for a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapiScaleAsk {
    pub cluster: String,
    pub request: ScaleRequest,
}

/// What the event loop runs for an approved scale: the plan confirmed and the
/// acknowledgements typed (the runner checks the guards again with them).
#[derive(Debug, Clone)]
pub struct CapiScaleRun {
    pub plan: ScalePlan,
    pub acks: Vec<String>,
}

/// The running (or last) scale's tally, from its runner's events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScaleProgress {
    pub cluster: String,
    /// The action's words, as the action progress names it.
    pub what: String,
    pub object: String,
    pub role: Option<MachineRole>,
    pub from: u32,
    pub to: u32,
    pub created: u32,
    pub got_node: u32,
    pub ready: u32,
    pub deleting: u32,
    pub deleted: u32,
    /// Polls that read etcd, and how many found it healthy (control planes).
    pub polls: u32,
    pub healthy_polls: u32,
    /// The last poll's etcd verdict.
    pub etcd: Option<(bool, String)>,
    pub waiting: Option<String>,
}

impl ScaleProgress {
    pub fn of(plan: &ScalePlan, what: String) -> ScaleProgress {
        ScaleProgress {
            cluster: plan.cluster.clone(),
            what,
            object: plan.object(),
            role: Some(plan.role),
            from: plan.from,
            to: plan.to,
            ..ScaleProgress::default()
        }
    }

    /// Folds one event in; the line for the progress log, when it earns one (an etcd poll
    /// only when its verdict changed).
    pub fn fold(&mut self, event: &ScaleEvent) -> Option<String> {
        match event {
            ScaleEvent::Machine(change) => {
                let count = match change {
                    MachineChange::Created { .. } => &mut self.created,
                    MachineChange::GotNode { .. } => &mut self.got_node,
                    MachineChange::Ready { .. } => &mut self.ready,
                    MachineChange::Deleting { .. } => &mut self.deleting,
                    MachineChange::Deleted { .. } => &mut self.deleted,
                };
                *count += 1;
            }
            ScaleEvent::Etcd {
                healthy, reason, ..
            } => {
                self.polls += 1;
                self.healthy_polls += u32::from(*healthy);
                let same = self.etcd.as_ref().is_some_and(|(_, r)| r == reason);
                self.etcd = Some((*healthy, reason.clone()));
                if same {
                    return None;
                }
            }
            ScaleEvent::Waiting { reason } => self.waiting = Some(reason.clone()),
            ScaleEvent::Note { .. } => {}
        }
        Some(event.line())
    }
}

/// The scale state of the console.
#[derive(Debug, Clone, Default)]
pub struct CapiScaleState {
    /// The object whose replica count is being typed.
    pub asking: Option<ScaleTarget>,
    /// The scale run here last (kept after it ends).
    pub progress: Option<ScaleProgress>,
}

/// The object `s` scales on the `:capi` screen: the selected MachineDeployment, else the
/// TalosControlPlane (saying so when another row is selected).
pub fn target_of(state: &AppState) -> Result<ScaleTarget, String> {
    let cluster = state
        .current
        .clone()
        .ok_or_else(|| "no cluster in use".to_string())?;
    let (_, tree) = super::capi::shown_tree(state)
        .ok_or_else(|| format!("{cluster}: its Cluster API tree is not read yet"))?;
    let (rows, index) = super::capi::rows_and_selection(state);
    let selected = rows
        .get(index)
        .map(|r| r.object.clone())
        .unwrap_or_default();
    let object =
        |kind: ScaledKind, name: &str| format!("{} {}/{name}", kind.as_str(), tree.namespace);
    if let Some(name) = selected.strip_prefix("MachineDeployment/")
        && let Some(md) = tree.machine_deployments.iter().find(|d| d.name == name)
    {
        return Ok(ScaleTarget {
            cluster,
            role: MachineRole::Worker,
            deployment: Some(md.name.clone()),
            object: object(ScaledKind::MachineDeployment, &md.name),
            replicas: md.counts.replicas,
            note: None,
        });
    }
    let cp = tree.control_plane.as_ref().ok_or_else(|| {
        format!(
            "{}/{} has no TalosControlPlane: select a MachineDeployment to scale its workers",
            tree.namespace, tree.cluster
        )
    })?;
    let note = (!selected.starts_with("TalosControlPlane/")).then(|| {
        let kind = selected.split('/').next().unwrap_or("no");
        format!(
            "the selected row is a {kind}, not a MachineDeployment: the control plane is scaled"
        )
    });
    Ok(ScaleTarget {
        cluster,
        role: MachineRole::Controlplane,
        deployment: None,
        object: object(ScaledKind::TalosControlPlane, &cp.name),
        replicas: cp.counts.replicas,
        note,
    })
}

/// Whether the `:capi` screen offers `s`: the cluster in use has something to scale.
pub fn offers_scale(state: &AppState) -> bool {
    super::capi::shown_tree(state)
        .is_some_and(|(_, t)| t.control_plane.is_some() || !t.machine_deployments.is_empty())
}

/// The scale progress to show on the action screen: the one whose run is the action's.
pub fn shown_progress(state: &AppState) -> Option<&ScaleProgress> {
    let scale = state.capi_scale.progress.as_ref()?;
    let action = state.actions.progress.as_ref()?;
    (action.cluster == scale.cluster && action.what == scale.what).then_some(scale)
}
