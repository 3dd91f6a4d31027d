//! The actions screen's update step: the menu handed over, its keys, a choice's plan (a
//! node's asks the console for its survey first; a snapshot asks for its file), the guards
//! read again on every status change, the one gate's keys, and the approved plan handed to the
//! one runner. Pure.
use std::path::PathBuf;

use super::keys::ActionsKey;
use super::plan::{
    ChoicePlan, ChoicePlanScreen, SurveyNode, Surveyed, etcd_request, snapshot_request,
};
use super::{ActionsScreen, NAME};
use crate::app::action::{Effect, not_run};
use crate::app::actions::{ActionChoice, MenuOpened};
use crate::app::message::Message;
use crate::app::plan_keys::{GateKey, ack_step, gate_step, refused_approval, reread_guards};
use crate::app::screens::{Ask, ScreenTask, Shared, Step};
use crate::approval::{ApprovedAction, EtcdAction};
use crate::capi_doctor::diagnose;
use crate::node_actions::NodeActionPlan;
use crate::operation::forget::ForgetPlan;

/// What the input line says while a snapshot's file is typed.
const SNAPSHOT_PROMPT: &str = "snapshot to> ";

impl ActionsScreen {
    /// `a` on a pane: the menu the shell made of the selection.
    pub(super) fn opened(&mut self, opened: &MenuOpened) {
        self.menu = Some(opened.menu.clone());
        self.plan = None;
        self.over = Some(opened.over);
        self.snapshot_dir = opened.snapshot_dir.clone();
        self.kept_backups = opened.kept_backups;
    }

    pub(super) fn on_intent(&mut self, key: ActionsKey, shared: &Shared) -> Step {
        let page = usize::from(shared.size.1.saturating_sub(8)).max(1);
        match (key, self.plan.as_mut()) {
            (ActionsKey::Menu(to), _) => {
                if let Some(menu) = self.menu.as_mut() {
                    let last = menu.items.len().saturating_sub(1);
                    menu.selected = to.from(menu.selected, last, 1);
                }
                Step::default()
            }
            (ActionsKey::Choose, _) => self.choose(shared),
            (ActionsKey::Back, _) => {
                (self.menu, self.plan) = (None, None);
                Step::close()
            }
            (ActionsKey::Gate(key), Some(plan)) => gate_step(plan, key, page, shared.readonly),
            (ActionsKey::Refresh, Some(plan)) => {
                let mut step = gate_step(plan, GateKey::Refresh, page, shared.readonly);
                if let ChoicePlan::Node { plan, .. } = &plan.plan {
                    step.effects.push(survey_task(plan));
                }
                step
            }
            (ActionsKey::Gate(_) | ActionsKey::Refresh, None) => Step::default(),
        }
    }

    /// Enter on the menu: the chosen action's plan, or first the snapshot's file.
    fn choose(&mut self, shared: &Shared) -> Step {
        let Some(menu) = self.menu.take() else {
            return Step::default();
        };
        let Some(choice) = menu.items.get(menu.selected).cloned() else {
            return Step::close();
        };
        let (cluster, subject) = (menu.cluster.as_str(), menu.subject.as_str());
        let Some(status) = shared
            .fleet
            .cluster(cluster)
            .filter(|l| l.has_data())
            .map(|l| &l.status)
        else {
            return Step {
                message: Some(Message::warn(format!("no status for {cluster} yet"))),
                ..Step::close()
            };
        };
        let plan = match choice {
            ActionChoice::Node(operation) => {
                let kube_paired =
                    (shared.clusters.iter()).any(|c| c.name == cluster && c.kube.is_some());
                match NodeActionPlan::new(status, subject, operation, kube_paired) {
                    Ok(plan) => ChoicePlan::Node { plan, survey: None },
                    Err(e) => {
                        return Step {
                            message: Some(Message::warn(e.to_string())),
                            ..Step::close()
                        };
                    }
                }
            }
            ActionChoice::Forget => {
                let context = shared.clusters.iter().find(|c| c.name == cluster);
                let talos = context.and_then(|c| c.talos.as_ref());
                let plan = ForgetPlan::new(cluster, talos, status, subject, self.kept_backups);
                ChoicePlan::Forget {
                    node: subject.to_string(),
                    plan: plan.map_err(|e| e.to_string()),
                }
            }
            ActionChoice::Etcd(EtcdAction::Snapshot) => {
                let file = (self.snapshot_dir).join(format!("{cluster}-{subject}.snapshot"));
                self.snapshot_of = Some((cluster.to_string(), subject.to_string()));
                self.menu = Some(menu.clone());
                return Step::ask(Ask::Input {
                    prompt: SNAPSHOT_PROMPT,
                    text: file.display().to_string(),
                });
            }
            ActionChoice::Etcd(action) => {
                match etcd_request(&action, subject, menu.member_id.as_deref()) {
                    Some(request) => ChoicePlan::Etcd {
                        request,
                        plan: Err(String::new()),
                    },
                    None => return Step::close(),
                }
            }
            ActionChoice::CapiFix(id) => {
                let tree = shared.guards.guard_reading(cluster).capi_tree;
                let found =
                    tree.and_then(|t| diagnose(&t, status).into_iter().find(|f| f.id == id));
                match found {
                    Some(finding) => ChoicePlan::CapiFix {
                        finding,
                        plan: Err(String::new()),
                    },
                    None => {
                        return Step {
                            message: Some(Message::warn(format!(
                                "{id} no longer holds in {cluster}"
                            ))),
                            ..Step::close()
                        };
                    }
                }
            }
        };
        self.show(cluster, plan, shared)
    }

    /// Puts the plan of `plan` in `cluster` up, its guards evaluated over live status; a node
    /// plan asks the console for its survey.
    fn show(&mut self, cluster: &str, plan: ChoicePlan, shared: &Shared) -> Step {
        let survey = match &plan {
            ChoicePlan::Node { plan, .. } => vec![survey_task(plan)],
            _ => Vec::new(),
        };
        let mut screen = ChoicePlanScreen::new(cluster, plan);
        reread_guards(&mut screen, shared);
        self.plan = Some(screen);
        self.menu = None;
        Step::effects(survey)
    }

    /// Enter on the input line: the acknowledgement of the plan, or the snapshot's file.
    pub(super) fn typed(&mut self, text: &str, shared: &Shared) -> Step {
        if let Some(plan) = self.plan.as_mut() {
            return ack_step(plan, text, shared);
        }
        let Some((cluster, node)) = self.snapshot_of.take() else {
            return Step::default();
        };
        let text = text.trim();
        if text.is_empty() {
            return Step::message(Message::warn("no file named: the snapshot needs one"));
        }
        if shared.fleet.cluster(&cluster).is_none_or(|l| !l.has_data()) {
            let why = Message::warn(format!("no status for {cluster} yet"));
            return Step {
                message: Some(why),
                ..Step::close()
            };
        }
        let request = snapshot_request(&node, PathBuf::from(text));
        let etcd = ChoicePlan::Etcd {
            request,
            plan: Err(String::new()),
        };
        self.show(&cluster, etcd, shared)
    }

    /// The survey of the node plan on screen, when it is the one asked for.
    pub(super) fn surveyed(&mut self, surveyed: &Surveyed, shared: &Shared) -> bool {
        let Some(plan) = self.plan.as_mut().filter(|p| p.cluster == surveyed.cluster) else {
            return false;
        };
        plan.plan.take_survey(surveyed) && {
            reread_guards(plan, shared);
            true
        }
    }

    /// The dispatcher approved the plan on screen: it runs when it still is that plan and no
    /// guard blocks now (read again over the latest status); the screen closes for the
    /// progress. `None` without a plan.
    pub(super) fn approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        let plan = self.plan.as_mut()?;
        reread_guards(plan, shared);
        if let Some(refused) = refused_approval(Some(&*plan), approved) {
            return Some(refused);
        }
        let owner = shared.fleet.capi.owner(&plan.cluster);
        let run = match plan.plan.run(&plan.cluster, owner) {
            Ok(run) => run,
            Err(why) => return Some(Step::effects(not_run(approved, why))),
        };
        let acks = plan.guards.acks.clone();
        self.plan = None;
        Some(Step {
            effects: vec![Effect::RunAction {
                approved: approved.clone(),
                run: Box::new(run),
                acks,
            }],
            ..Step::close()
        })
    }
}

fn survey_task(plan: &NodeActionPlan) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, SurveyNode(plan.clone())))
}
