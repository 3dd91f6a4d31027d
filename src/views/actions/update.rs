//! The actions screen on the one plan screen, and its update step: the menu handed over, its
//! keys, a choice's plan (a node's asks the console for its survey first; a snapshot asks for
//! its file), the guards read again on every status change, and what the approved plan runs.
//! Pure.
use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::plan::{ChoicePlan, ChoicePlanScreen, SurveyNode, Surveyed};
use super::{ActionsScreen, NAME};
use crate::app::action::Effect;
use crate::app::actions::{ActionChoice, ActionRun, MenuOpened, fix_menu};
use crate::app::binding::{Binding, Key, Move, bind};
use crate::app::message::Message;
use crate::app::screen::Screen;
use crate::app::screens::{Ask, Opening, ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::approval::EtcdAction;
use crate::capi_doctor::diagnose;
use crate::etcd_maintenance::EtcdRequest;
use crate::node_actions::NodeActionPlan;
use crate::operation::forget::ForgetPlan;
use crate::tui::Look;
use crate::views::plan::PlanOperation;
use crate::views::plan::{closed_with, refresh_step, reread_guards};

/// What the input line says while a snapshot's file is typed.
const SNAPSHOT_PROMPT: &str = "snapshot to> ";

/// The menu's key intents (the plan's are the one gate's every plan has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuKey {
    Move(Move),
    Choose,
    Close,
}

#[rustfmt::skip]
static MENU: &[Binding<MenuKey, ActionsScreen>] = &[
    bind(&[Key::char('j'), Key::DOWN], MenuKey::Move(Move::Down), "next action"),
    bind(&[Key::char('k'), Key::UP], MenuKey::Move(Move::Up), "previous action"),
    bind(&[Key::ENTER], MenuKey::Choose, "the chosen action's plan and guards (nothing runs yet)").footer("plan"),
    bind(&[Key::ESC, Key::char('q')], MenuKey::Close, "close the menu").footer("close"),
];

impl PlanOperation for ChoicePlan {
    const NAME: ScreenName = NAME;
    const TITLE: &'static str = "Actions (a on nodes, node detail, etcd)";
    type Kept = super::ActionsMenu;
    type Key = MenuKey;

    /// The menu's keys while no plan shows.
    fn own_keys(screen: &ActionsScreen) -> &'static [Binding<MenuKey, ActionsScreen>] {
        if screen.plan.is_none() { MENU } else { &[] }
    }

    fn before_plan(screen: &ActionsScreen) -> bool {
        screen.plan.is_none()
    }

    /// Opened by the shell's menu (`MenuOpened`), or by `:capi`'s `f` (word `fix`): the menu
    /// of the doctor's fixes of the cluster in use.
    fn open(
        screen: &mut ActionsScreen,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message> {
        if opening.words.first().is_some_and(|w| w == "fix") {
            let cluster = shared.current.unwrap_or_default();
            let menu = fix_menu(shared.fleet, cluster).map_err(Message::warn)?;
            screen.plan = None;
            (screen.kept.menu, screen.kept.over) = (Some(menu), Some(opening.from));
            return Ok(Step::default());
        }
        match (&screen.kept.menu, &screen.plan) {
            (None, None) => Err(Message::warn(
                "a on the nodes pane, node detail or the etcd pane opens the actions",
            )),
            _ => Ok(Step::default()),
        }
    }

    fn on_key(screen: &mut ActionsScreen, key: MenuKey, shared: &Shared) -> Step {
        match key {
            MenuKey::Move(to) => {
                if let Some(menu) = screen.kept.menu.as_mut() {
                    let last = menu.items.len().saturating_sub(1);
                    menu.selected = to.from(menu.selected, last, 1);
                }
                Step::default()
            }
            MenuKey::Choose => screen.choose(shared),
            MenuKey::Close => {
                (screen.kept.menu, screen.plan) = (None, None);
                Step::close()
            }
        }
    }

    fn on_news(screen: &mut ActionsScreen, news: &ScreenNews, shared: &Shared) -> bool {
        if let Some(opened) = news.get::<MenuOpened>() {
            screen.opened(opened);
            return true;
        }
        news.get::<Surveyed>()
            .is_some_and(|surveyed| screen.surveyed(surveyed, shared))
    }

    /// Enter on the snapshot's file.
    fn on_input(screen: &mut ActionsScreen, text: &str, shared: &Shared) -> Step {
        screen.snapshot_typed(text, shared)
    }

    /// `r`: the cluster polled, and a node plan's survey read again.
    fn refresh(screen: &mut ActionsScreen, _: &Shared) -> Step {
        let Some(plan) = screen.plan.as_mut() else {
            return Step::default();
        };
        let mut step = refresh_step(&plan.cluster);
        if let ChoicePlan::Node { plan, .. } = &plan.plan {
            step.effects.push(survey_task(plan));
        }
        step
    }

    /// A fix needs the Cluster object that owns its cluster.
    fn run(plan: &ChoicePlanScreen, shared: &Shared) -> Result<ActionRun, String> {
        let owner = shared.fleet.capi.owner(&plan.cluster);
        plan.plan.run(&plan.cluster, owner)
    }

    fn drawn_over(screen: &ActionsScreen) -> Option<Screen> {
        screen.plan.is_none().then_some(screen.kept.over).flatten()
    }

    fn draw(screen: &ActionsScreen, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        super::view::draw(screen, area, buf, shared, look);
    }
}

impl ActionsScreen {
    /// `a` on a pane: the menu the shell made of the selection.
    fn opened(&mut self, opened: &MenuOpened) {
        self.plan = None;
        self.kept = super::ActionsMenu {
            menu: Some(opened.menu.clone()),
            over: Some(opened.over),
            snapshot_dir: opened.snapshot_dir.clone(),
            kept_backups: opened.kept_backups,
            snapshot_of: None,
        };
    }

    /// Enter on the menu: the chosen action's plan, or first the snapshot's file.
    fn choose(&mut self, shared: &Shared) -> Step {
        let Some(menu) = self.kept.menu.take() else {
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
            return closed_with(format!("no status for {cluster} yet"));
        };
        let plan = match choice {
            ActionChoice::Node(operation) => {
                let kube_paired =
                    (shared.clusters.iter()).any(|c| c.name == cluster && c.kube.is_some());
                match NodeActionPlan::new(status, subject, operation, kube_paired) {
                    Ok(plan) => ChoicePlan::Node { plan, survey: None },
                    Err(e) => return closed_with(e.to_string()),
                }
            }
            ActionChoice::Forget => {
                let context = shared.clusters.iter().find(|c| c.name == cluster);
                let talos = context.and_then(|c| c.talos.as_ref());
                let backups = self.kept.kept_backups;
                let plan = ForgetPlan::new(cluster, talos, status, subject, backups);
                ChoicePlan::Forget {
                    node: subject.to_string(),
                    plan: plan.map_err(|e| e.to_string()),
                }
            }
            ActionChoice::Etcd(action) => {
                // About the menu's node (its member, when the menu names one); a snapshot's
                // file is asked first.
                let (node, member) = (subject.to_string(), menu.member_id.clone());
                let request = match action {
                    EtcdAction::Disarm => EtcdRequest::Disarm,
                    EtcdAction::Defragment => EtcdRequest::Defragment { node: None },
                    EtcdAction::ForfeitLeadership => EtcdRequest::ForfeitLeadership { node },
                    EtcdAction::RemoveMember => EtcdRequest::RemoveMember {
                        member: member.unwrap_or(node),
                    },
                    EtcdAction::Snapshot => {
                        let file =
                            (self.kept.snapshot_dir).join(format!("{cluster}-{node}.snapshot"));
                        self.kept.snapshot_of = Some((cluster.to_string(), node));
                        self.kept.menu = Some(menu.clone());
                        return Step::ask(Ask::Input {
                            prompt: SNAPSHOT_PROMPT,
                            text: file.display().to_string(),
                        });
                    }
                };
                ChoicePlan::Etcd {
                    request,
                    plan: Err(String::new()),
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
                    None => return closed_with(format!("{id} no longer holds in {cluster}")),
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
        self.kept.menu = None;
        Step::effects(survey)
    }

    /// Enter on the snapshot's file: its plan.
    fn snapshot_typed(&mut self, text: &str, shared: &Shared) -> Step {
        let Some((cluster, node)) = self.kept.snapshot_of.take() else {
            return Step::default();
        };
        let text = text.trim();
        if text.is_empty() {
            return Step::message(Message::warn("no file named: the snapshot needs one"));
        }
        if shared.fleet.cluster(&cluster).is_none_or(|l| !l.has_data()) {
            return closed_with(format!("no status for {cluster} yet"));
        }
        let request = EtcdRequest::Snapshot {
            node: Some(node),
            out: PathBuf::from(text),
            overwrite: false,
        };
        let etcd = ChoicePlan::Etcd {
            request,
            plan: Err(String::new()),
        };
        self.show(&cluster, etcd, shared)
    }

    /// The survey of the node plan on screen, when it is the one asked for.
    fn surveyed(&mut self, surveyed: &Surveyed, shared: &Shared) -> bool {
        let Some(plan) = self.plan.as_mut().filter(|p| p.cluster == surveyed.cluster) else {
            return false;
        };
        plan.plan.take_survey(surveyed) && {
            reread_guards(plan, shared);
            true
        }
    }
}

fn survey_task(plan: &NodeActionPlan) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, SurveyNode(plan.clone())))
}
