//! The cluster plan as a screen module, and its update step: the replica count typed (digits
//! only), the plan asked of the console and read again on `r`, `a`, `s` and the dispatcher's
//! approval through the plan screens' one gate (`app::plan_keys`), and the approved plan handed
//! to the one runner. Pure: the reads are asked for as screen tasks and answered as news.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::keys::{self, PlanKey};
use super::{
    Asked, ClusterPlan, ClusterPlanHolder, ClusterPlanNews, ClusterPlanScreen, ClusterPlanTask,
    MAX_DIGITS, NAME,
};
use crate::app::action::Effect;
use crate::app::binding::{KeyLine, intent, key_lines};
use crate::app::capi_scale::ScaleTarget;
use crate::app::message::Message;
use crate::app::plan_keys::{ack_input, gate_step, refused_approval};
use crate::app::plan_screen::GuardedPlan;
use crate::app::screen::Screen;
use crate::app::screens::{
    Opening, ScreenModule, ScreenName, ScreenNews, ScreenTask, Shared, Step,
};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::tui::Look;

/// `plan` on the screen, its read asked of the console.
fn plan_of(cluster: &str, asked: Asked) -> (ClusterPlanHolder, Effect) {
    let task = ClusterPlanTask {
        cluster: cluster.to_string(),
        asked: asked.clone(),
    };
    let plan = ClusterPlan { asked, read: None };
    let read = Effect::Screen(ScreenTask::new(NAME, task));
    (ClusterPlanHolder::new(cluster, plan), read)
}

/// The character a plain key types, if it types one.
fn typed_char(event: &KeyEvent) -> Option<char> {
    match event.code {
        KeyCode::Char(c) if (event.modifiers - KeyModifiers::SHIFT).is_empty() => Some(c),
        _ => None,
    }
}

impl ScreenModule for ClusterPlanScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Delete or CAPI scale plan"
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(keys::of(self), self);
        if self.asking.is_some() {
            lines.insert(
                0,
                KeyLine {
                    keys: "0-9".into(),
                    help: "the new replica count (digits only)",
                    footer: None,
                },
            );
        }
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        let typing = self.asking.is_some() && typed_char(event).is_some();
        typing || intent(keys::of(self), event).is_some()
    }

    fn open(&mut self, _shared: &Shared) -> Result<Step, Message> {
        Err(Message::warn(
            "D on the fleet or a cluster plans its delete; s on :capi its scale",
        ))
    }

    /// `D` (words `delete CLUSTER`): the delete plan of the cluster, asked of the console;
    /// `s` on `:capi` (word `scale`): the replica count of the object handed over first.
    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        match opening.words.as_slice() {
            [kind, cluster] if kind == "delete" => {
                let (plan, read) = plan_of(cluster, Asked::Delete);
                (self.plan, self.asking) = (Some(plan), None);
                Ok(Step::effects(vec![read]))
            }
            [kind] if kind == "scale" && self.asking.is_some() => Ok(Step::default()),
            _ => self.open(shared),
        }
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match (intent(keys::of(self), event), typed_char(event)) {
            (Some(key), _) => self.on_intent(*key, shared),
            (None, Some(c)) => self.typed(c),
            (None, None) => Step::default(),
        }
    }

    fn on_news_step(&mut self, news: &ScreenNews, shared: &Shared) -> (bool, Step) {
        if let Some(target) = news.get::<ScaleTarget>() {
            self.asking = Some((target.clone(), String::new()));
            self.plan = None;
            return (true, Step::default());
        }
        let Some(news) = news.get::<ClusterPlanNews>() else {
            return (false, Step::default());
        };
        (self.planned(news, shared), Step::default())
    }

    /// Enter on the acknowledgement typed.
    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        ack_input(self.plan.as_mut(), text, shared)
    }

    /// The dispatcher approved a delete or a scale: it runs when it is still the plan on
    /// screen and no guard blocks now; the screen closes for the progress.
    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        if !matches!(
            approved.action(),
            MutatingAction::DeleteCluster { .. } | MutatingAction::ScaleCapi { .. }
        ) {
            return None;
        }
        let Some(plan) = self.plan.as_mut() else {
            return refused_approval(None, approved);
        };
        plan.read_guards(&shared.guards.guard_reading(&plan.cluster));
        if let Some(refused) = refused_approval(Some(&*plan), approved) {
            return Some(refused);
        }
        let acks = plan.guards.acks.clone();
        let run = plan.plan.planned()?.run(&acks);
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

    fn drawn_over(&self) -> Option<Screen> {
        self.asking.as_ref().map(|_| Screen::Capi)
    }

    fn of_cluster_in_use(&self) -> bool {
        true
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        match (&self.asking, &self.plan) {
            (Some((target, typed)), _) => super::replicas::draw(target, typed, area, buf, look),
            (None, Some(plan)) => super::view::draw(plan, area, buf, shared.readonly, look),
            (None, None) => {}
        }
    }
}

impl ClusterPlanScreen {
    fn on_intent(&mut self, key: PlanKey, shared: &Shared) -> Step {
        match (key, self.plan.as_mut()) {
            (PlanKey::Back, _) => {
                (self.asking, self.plan) = (None, None);
                Step::close()
            }
            (PlanKey::MakePlan, _) => self.make_plan(),
            (PlanKey::Erase, _) => {
                if let Some((_, typed)) = self.asking.as_mut() {
                    typed.pop();
                }
                Step::default()
            }
            (PlanKey::Gate(key), Some(plan)) => {
                let page = usize::from(shared.size.1.saturating_sub(8)).max(1);
                gate_step(plan, key, page, shared.readonly)
            }
            (PlanKey::ReadAgain, Some(plan)) => Step {
                message: Some(Message::info(format!("refreshing {}", plan.cluster))),
                ..Step::effects(vec![plan_of(&plan.cluster, plan.plan.asked.clone()).1])
            },
            (_, None) => Step::default(),
        }
    }

    /// A key typed on the replica count: a digit is kept, up to [`MAX_DIGITS`].
    fn typed(&mut self, c: char) -> Step {
        let Some((_, typed)) = self.asking.as_mut() else {
            return Step::default();
        };
        if !c.is_ascii_digit() {
            return Step::message(Message::warn("the replica count takes digits only"));
        }
        if typed.len() < MAX_DIGITS {
            typed.push(c);
        }
        Step::default()
    }

    /// Enter on the replica count: its plan, read by the console.
    fn make_plan(&mut self) -> Step {
        let Some((target, typed)) = self.asking.take() else {
            return Step::default();
        };
        let Ok(replicas) = typed.parse::<u32>() else {
            let text = format!(
                "no replica count typed: {} stays at {}",
                target.object, target.replicas
            );
            return Step {
                message: Some(Message::warn(text)),
                ..Step::close()
            };
        };
        let cluster = target.cluster.clone();
        let request = target.request(replicas);
        let (plan, read) = plan_of(&cluster, Asked::Scale { target, request });
        self.plan = Some(plan);
        Step::effects(vec![read])
    }

    /// A plan the console read, with its guards; ignored unless it is the plan on screen.
    fn planned(&mut self, news: &ClusterPlanNews, shared: &Shared) -> bool {
        let Some(holder) = self.plan.as_mut() else {
            return false;
        };
        let answers = news
            .read
            .as_ref()
            .map_or(true, |p| p.answers(&holder.plan.asked));
        if news.cluster != holder.cluster || !answers {
            return false;
        }
        holder.plan.read = Some(news.read.clone());
        holder.evaluate_guards(&shared.guards.guard_reading(&holder.cluster));
        true
    }
}
