//! The CAPI-way upgrade plan screen's update step: opened for the target the in-place plan
//! would choose, the plan the console read shown with its guards, the phases with the move
//! keys and `?` when focused, the one gate's keys, and the approval handed to the one
//! operation runner (its progress screen follows the phases). Pure.
use super::keys::CapiUpgradeKey;
use super::{CapiPlanRead, CapiPlanRequest, CapiUpgradeScreen, CapiWay, NAME};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::Move;
use crate::app::message::Message;
use crate::app::plan_keys::{approved_step, explain_step, gate_step, list_move, reread_guards};
use crate::app::plan_screen::{PlanHolder, PlanKind};
use crate::app::screens::{Opening, ScreenTask, Shared, Step};
use crate::approval::ApprovedAction;
use crate::upgrade::TalosOs;
use crate::upgrade::capi::{CapiProduct, CapiUpgradePlan, PhaseObject, product_name};
use crate::upgrade::kubernetes::Kubernetes;

fn read_task(request: CapiPlanRequest) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, request))
}

/// The request for the plan `opening` names (the product's word, then the target, if any)
/// on the cluster in use, which Cluster API owns; or why there is none.
fn request_of(opening: &Opening, shared: &Shared) -> Result<CapiPlanRequest, String> {
    let cluster = shared
        .current
        .ok_or("no cluster in use: Enter on the fleet or :ctx NAME")?;
    let owner = shared.fleet.capi.owner(cluster).cloned();
    let owner = owner.ok_or_else(|| format!("{cluster} is not owned by Cluster API"))?;
    let status = shared.fleet.cluster(cluster).filter(|l| l.has_data());
    let status = &status
        .ok_or_else(|| format!("no status for {cluster} yet"))?
        .status;
    let named = opening.words.get(1).map(String::as_str);
    let kubernetes =
        opening.words.first().map(String::as_str) == Some(product_name(CapiProduct::Kubernetes));
    let (product, chosen) = if kubernetes {
        (
            CapiProduct::Kubernetes,
            Kubernetes::targets(status, named)?.1,
        )
    } else {
        (CapiProduct::TalosOs, TalosOs::targets(status, named)?.1)
    };
    let version = format!("v{}", chosen.to_string().trim_start_matches('v'));
    let target = match product {
        CapiProduct::Kubernetes => version.trim_start_matches('v').to_string(),
        CapiProduct::TalosOs => version.clone(),
    };
    Ok(CapiPlanRequest {
        cluster: cluster.to_string(),
        owner,
        product,
        version,
        target,
    })
}

/// What `?` says about `phase` of `plan`: its patch, then how the provider replaces its
/// Machines and in which order.
fn explain_phase(plan: &CapiUpgradePlan, phase: usize) -> Option<(String, String)> {
    let p = plan.phases.get(phase)?;
    let machines = if p.replace.is_empty() {
        "none: every Machine already runs the target".to_string()
    } else {
        p.replace.join(", ")
    };
    let patch = p.patch_text(&plan.version);
    let text = if p.on_delete {
        format!(
            "{patch}\n\nrolloutStrategy OnDelete: the provider replaces a Machine only once it \
             is deleted. taloscope deletes them one at a time, each once every Machine is \
             Ready and every etcd member healthy; the provider then creates its \
             replacement. In this order: {machines}."
        )
    } else {
        let etcd = if p.object == PhaseObject::TalosControlPlane {
            " after its etcd member leaves; etcd must stay healthy throughout"
        } else {
            ""
        };
        format!(
            "{patch}\n\nThen the provider replaces its Machines one at a time (maxSurge 1): a new \
             Machine is created, its node joins and becomes Ready, then the old Machine is \
             deleted{etcd}. In this order: {machines}."
        )
    };
    Some((p.label(), text))
}

impl CapiUpgradeScreen {
    /// `u` / `U` on a cluster Cluster API owns: the CAPI-way plan to the target the in-place
    /// plan would choose (the one named, else its default), asked of the console.
    pub(super) fn opened(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        let request = request_of(opening, shared).map_err(Message::warn)?;
        let way = CapiWay {
            request: request.clone(),
            read: None,
            on_guards: false,
        };
        *self = CapiUpgradeScreen {
            plan: Some(PlanHolder::new(&request.cluster, way)),
            phase: 0,
        };
        Ok(Step::effects(vec![read_task(request)]))
    }

    /// The console read the plan: shown with its guards, when it is the plan on screen.
    pub(super) fn planned(&mut self, read: &CapiPlanRead, shared: &Shared) -> bool {
        let Some(plan) = self.plan.as_mut() else {
            return false;
        };
        if plan.plan.request != read.request || plan.plan.read.is_some() {
            return false;
        }
        plan.plan.read = Some(read.clone());
        reread_guards(plan, shared);
        true
    }

    /// A move key: through the phases, or the guards when they are focused.
    pub(super) fn moved(&mut self, to: Move, shared: &Shared) -> Step {
        let Some(plan) = self.plan.as_mut() else {
            return Step::default();
        };
        let phases = plan.plan.plan().and_then(|p| p.as_ref().ok());
        let phases = phases.map_or(0, |p| p.phases.len());
        let moved = list_move(plan, to, (self.phase, phases), shared);
        self.phase = moved.unwrap_or(self.phase);
        Step::default()
    }

    pub(super) fn on_intent(&mut self, key: CapiUpgradeKey, shared: &Shared) -> Step {
        let page = shared.page();
        let Some(plan) = self.plan.as_mut() else {
            return Step::close();
        };
        match key {
            CapiUpgradeKey::Focus => plan.on_guards = !plan.on_guards,
            CapiUpgradeKey::Explain => {
                let explained = match plan.plan.plan() {
                    Some(Ok(read)) => explain_phase(read, self.phase),
                    Some(Err(e)) => Some(("no plan".to_string(), e.clone())),
                    None => None,
                };
                return explain_step(plan, explained, shared);
            }
            CapiUpgradeKey::Gate(key) => return gate_step(plan, key, page, shared.readonly),
            CapiUpgradeKey::Reread => {
                plan.plan.read = None;
                plan.guards.shown.clear();
                return Step::effects(vec![read_task(plan.plan.request.clone())]);
            }
            CapiUpgradeKey::Back => {
                self.plan = None;
                return Step::close();
            }
        }
        Step::default()
    }

    /// The dispatcher approved the plan on screen: it runs on the one operation runner when it
    /// still is that plan and no guard blocks now (read again over the latest status); the
    /// screen closes for the progress.
    pub(super) fn approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        let step = approved_step(self.plan.as_mut(), approved, shared, |plan, _| {
            let run = plan.plan.plan()?.clone().ok()?;
            Some(ActionRun::CapiUpgrade(Box::new(run)))
        })?;
        if step.close {
            self.plan = None;
        }
        Some(step)
    }
}
