//! The cluster plan on the one plan screen, and its update step: the replica count typed
//! (digits only), the plan asked of the console and read again on `r`, an upgrade's phases
//! moved through and explained, and the approved plan handed to the one runner (the one gate's
//! keys are every plan's). Pure: the reads are asked for as screen tasks and answered as news.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{
    Asked, ClusterPlan, ClusterPlanHolder, ClusterPlanKept, ClusterPlanNews, ClusterPlanScreen,
    ClusterPlanTask, MAX_DIGITS, NAME,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, bind};
use crate::app::message::Message;
use crate::app::screen::Screen;
use crate::app::screens::{Opening, ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::capi_scale::scale_target;
use crate::tui::Look;
use crate::upgrade::{ReleasesLearned, explain};
use crate::views::plan::{PlanOperation, closed_with};

/// The replica count's key intents (the plan's are the one gate's every plan has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanKey {
    /// The plan of the replica count typed.
    MakePlan,
    /// The last digit typed erased.
    Erase,
    Back,
}

#[rustfmt::skip]
static REPLICAS: &[Binding<PlanKey, ClusterPlanScreen>] = &[
    bind(&[Key::ENTER], PlanKey::MakePlan, "the plan and guards of the count typed (nothing runs yet)").footer("plan"),
    bind(&[Key::BACKSPACE], PlanKey::Erase, "erase the last digit"),
    bind(&[Key::ESC], PlanKey::Back, "cancel: nothing is scaled").footer("cancel"),
];

/// `plan` on the screen, its read asked of the console.
fn plan_of(cluster: &str, asked: Asked) -> (ClusterPlanHolder, Effect) {
    let task = ClusterPlanTask {
        cluster: cluster.to_string(),
        asked: asked.clone(),
    };
    let plan = ClusterPlan {
        asked,
        read: None,
        phase: 0,
    };
    let read = Effect::Screen(ScreenTask::new(NAME, task));
    (ClusterPlanHolder::new(cluster, plan), read)
}

impl PlanOperation for ClusterPlan {
    const NAME: ScreenName = NAME;
    const TITLE: &'static str = "Delete, CAPI scale or CAPI-way upgrade plan";
    type Kept = ClusterPlanKept;
    type Key = PlanKey;

    /// The replica count's keys while one is typed.
    fn own_keys(screen: &ClusterPlanScreen) -> &'static [Binding<PlanKey, ClusterPlanScreen>] {
        if screen.kept.scale.is_some() {
            REPLICAS
        } else {
            &[]
        }
    }

    fn before_plan(screen: &ClusterPlanScreen) -> bool {
        screen.kept.scale.is_some()
    }

    /// `D` (words `delete [CLUSTER]`): the delete plan of the cluster named, else of the one
    /// selected where it was pressed (the fleet's row, the cluster in use), asked of the console;
    /// `s` on `:capi` (words `scale ROW`): the replica count of the object scaling the tree's
    /// row `ROW` of the cluster in use scales, asked first; `u` / `U` on a cluster Cluster API
    /// owns (words `upgrade PRODUCT [TARGET]`): the CAPI-way plan to the target the in-place
    /// plan would choose (the one named, else its default), asked of the console.
    fn open(
        screen: &mut ClusterPlanScreen,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message> {
        let (cluster, asked) = match opening.words.as_slice() {
            [kind, named @ ..] if kind == "delete" && named.len() < 2 => {
                let cluster = named.first().or(opening.cluster.as_ref());
                let cluster = cluster.ok_or_else(|| {
                    Message::warn(
                        "no cluster selected: D deletes the fleet's selected cluster or the one in use",
                    )
                })?;
                (cluster.clone(), Asked::Delete)
            }
            [kind, words @ ..] if kind == "upgrade" => {
                let request = super::upgrade::request_of(words, shared, &screen.kept.releases)?;
                (request.cluster.clone(), Asked::Upgrade(request))
            }
            [kind, row] if kind == "scale" => {
                let cluster = shared.cluster_in_use()?;
                let target = match shared.fleet.capi.owned_tree(cluster) {
                    Some((_, tree)) => scale_target(cluster, &tree, row),
                    None => Err(format!("{cluster}: its Cluster API tree is not read yet")),
                };
                let target =
                    target.map_err(|why| Message::warn(format!("nothing to scale: {why}")))?;
                (screen.plan, screen.kept.scale) = (None, Some((target, String::new())));
                return Ok(Step::default());
            }
            _ => {
                return Err(Message::warn(
                    "D on the fleet or a cluster plans its delete; s on :capi its scale",
                ));
            }
        };
        let (plan, read) = plan_of(&cluster, asked);
        (screen.plan, screen.kept.scale) = (Some(plan), None);
        Ok(Step::effects(vec![read]))
    }

    fn on_key(screen: &mut ClusterPlanScreen, key: PlanKey, _: &Shared) -> Step {
        match key {
            PlanKey::Back => {
                (screen.kept.scale, screen.plan) = (None, None);
                Step::close()
            }
            PlanKey::MakePlan => make_plan(screen),
            PlanKey::Erase => {
                if let Some((_, typed)) = screen.kept.scale.as_mut() {
                    typed.pop();
                }
                Step::default()
            }
        }
    }

    /// A plan read, shown when it answers the plan on screen; the releases learned for a
    /// cluster, kept for its next CAPI-way upgrade.
    fn on_news(screen: &mut ClusterPlanScreen, news: &ScreenNews, shared: &Shared) -> bool {
        if let Some(ReleasesLearned { cluster, learned }) = news.get::<ReleasesLearned>() {
            screen
                .kept
                .releases
                .insert(cluster.clone(), learned.clone());
            return false;
        }
        news.get::<ClusterPlanNews>()
            .is_some_and(|news| planned(screen, news, shared))
    }

    fn typing(screen: &ClusterPlanScreen) -> Option<(&'static str, &'static str)> {
        (screen.kept.scale.as_ref()).map(|_| ("0-9", "the new replica count (digits only)"))
    }

    /// A key typed on the replica count: a digit is kept, up to [`MAX_DIGITS`].
    fn on_char(screen: &mut ClusterPlanScreen, c: char) -> Step {
        let Some((_, typed)) = screen.kept.scale.as_mut() else {
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

    fn list(&self) -> (usize, usize) {
        (self.phase, self.upgrade().map_or(0, |p| p.phases.len()))
    }

    fn select(&mut self, at: usize) {
        self.phase = at;
    }

    /// `?` on an upgrade's phase: what it patches and the Machines it replaces, in order.
    fn explain(&self) -> Option<(String, String)> {
        if let Some(Err(e)) = &self.read {
            return Some(("no plan".to_string(), e.clone()));
        }
        let plan = self.upgrade()?;
        let phase = plan.phases.get(self.phase)?;
        Some((phase.label(), explain::capi_phase(plan, phase)))
    }

    /// `r`: the plan read again.
    fn refresh(screen: &mut ClusterPlanScreen, _: &Shared) -> Step {
        let Some(holder) = screen.plan.as_ref() else {
            return Step::default();
        };
        Step {
            message: Some(Message::info(format!("refreshing {}", holder.cluster))),
            ..Step::effects(vec![plan_of(&holder.cluster, holder.plan.asked.clone()).1])
        }
    }

    fn run(holder: &ClusterPlanHolder, _: &Shared) -> Result<ActionRun, String> {
        let planned = holder
            .plan
            .planned()
            .ok_or("the plan is still being read")?;
        Ok(planned.run())
    }

    fn home() -> Screen {
        Screen::Fleet
    }

    fn drawn_over(screen: &ClusterPlanScreen) -> Option<Screen> {
        screen.kept.scale.as_ref().map(|_| Screen::Module("capi"))
    }

    fn draw(
        screen: &ClusterPlanScreen,
        area: Rect,
        buf: &mut Buffer,
        shared: &Shared,
        look: &Look,
    ) {
        match (&screen.kept.scale, &screen.plan) {
            (Some((target, typed)), _) => super::replicas::draw(target, typed, area, buf, look),
            (None, Some(plan)) => super::view::draw(plan, area, buf, shared.readonly, look),
            (None, None) => {}
        }
    }
}

/// Enter on the replica count: its plan, read by the console.
fn make_plan(screen: &mut ClusterPlanScreen) -> Step {
    let Some((target, typed)) = screen.kept.scale.take() else {
        return Step::default();
    };
    let Ok(replicas) = typed.parse::<u32>() else {
        let text = format!(
            "no replica count typed: {} stays at {}",
            target.object, target.replicas
        );
        return closed_with(text);
    };
    let cluster = target.cluster.clone();
    let request = target.request(replicas);
    let (plan, read) = plan_of(&cluster, Asked::Scale { target, request });
    screen.plan = Some(plan);
    Step::effects(vec![read])
}

/// A plan the console read, with its guards; ignored unless it answers the plan on screen
/// (its cluster, and what was asked: a delete, a scale or an upgrade to its target).
fn planned(screen: &mut ClusterPlanScreen, news: &ClusterPlanNews, shared: &Shared) -> bool {
    let Some(holder) = screen.plan.as_mut() else {
        return false;
    };
    if news.task.cluster != holder.cluster || news.task.asked != holder.plan.asked {
        return false;
    }
    holder.plan.read = Some(news.read.clone());
    holder.evaluate_guards(&shared.guards.guard_reading(&holder.cluster));
    true
}
