//! What a rollout's plan screen edits and shows beyond every plan's guards, whatever its kind:
//! the targets, the plan made for the one chosen, the list with the keys, the selected step and
//! the kind's settings; made again from live status, its guards the kind's with the refusal of a
//! cluster Cluster API owns. Pure.
use std::fmt::Debug;
use std::ops::{Deref, DerefMut};

use ratatui::layout::Rect;
use ratatui::text::Line;

use super::{RolloutKey, RolloutPlanModule};
use crate::app::action::Effect;
use crate::app::binding::Binding;
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject, PlannedRollout};
use crate::app::screen::Pane;
use crate::app::screens::{ScreenName, ScreenNews, Shared, Step};
use crate::app::tables::{Column, TableRow};
use crate::approval::MutatingAction;
use crate::capi::CapiOwner;
use crate::fleet::ClusterStatus;
use crate::tui::Look;
use crate::upgrade::{Guard, LearnedReleases, RolloutInProgress, UpgradeKind, capi_owned};
use crate::versions::Version;

/// What a kind of rollout puts on the plan screen beyond what every plan has: its plan, its
/// screen's keys and news, its pane; only what differs between kinds.
pub trait PlanKind:
    UpgradeKind<Plan: Debug + Clone + PartialEq + Eq + Send + Sync> + Debug + Clone
{
    /// The kind's own choices and findings (options, image, pre-pull, removed-API count).
    type Settings: Debug + Clone + PartialEq + Eq + Send + Sync;

    /// The offered targets (plus one named on the command line) and the one chosen, from the
    /// `learned` releases (a kind that learns none ignores them).
    fn targets_among(
        status: &ClusterStatus,
        named: Option<&str>,
        learned: &LearnedReleases,
    ) -> Result<(Vec<Version>, Version), String>;
    fn settings(status: &ClusterStatus, learned: &LearnedReleases) -> Self::Settings;
    /// The plan from live status with the screen's settings (which a rebuild may adjust).
    fn make_plan(
        status: &ClusterStatus,
        target: &Version,
        settings: &mut Self::Settings,
    ) -> Result<Self::Plan, String>;
    /// Every guard of the plan over live status, as the console shows it (`acks`: those typed).
    fn guards(
        rollout: &RolloutPlan<Self>,
        plan: &Self::Plan,
        status: &ClusterStatus,
        other: Option<&RolloutInProgress>,
        acks: &[String],
    ) -> Vec<Guard>;
    /// A reason of the kind's own why its plan cannot start yet.
    fn unready(_rollout: &RolloutPlan<Self>) -> Option<String> {
        None
    }
    fn planned(plan: Self::Plan) -> PlannedRollout;
    /// `?` on a step: its title and what happens to it.
    fn explain_step(plan: &Self::Plan, index: usize) -> Option<(String, String)>;

    // Its screen: name, keys, news.
    const NAME: ScreenName;
    const TITLE: &'static str;
    /// The pane the screen goes back to when it was opened from nowhere else.
    const HOME: Pane;
    /// The kind's own key intents.
    type Key: Debug + Copy + PartialEq + Eq + Send + Sync + 'static;
    /// What the screen keeps beyond its plan, across plans.
    type Kept: Debug + Clone + Default + Send + Sync;
    /// The kind's own keys (the target's first, then its options').
    fn own_keys() -> &'static [Binding<RolloutKey<Self::Key>, RolloutPlanModule<Self>>];
    /// The releases a plan of `cluster` is offered from (the built-in table, unless the kind
    /// learns them).
    fn releases(_kept: &Self::Kept, _cluster: &str) -> LearnedReleases {
        LearnedReleases::built_in("no registry was asked")
    }
    /// What the plan asks of the console once it was made (again).
    fn asks(_plan: &mut RolloutPlanScreen<Self>) -> Vec<Effect> {
        Vec::new()
    }
    /// One of its own keys on the open plan.
    fn on_own_key(plan: &mut RolloutPlanScreen<Self>, key: Self::Key, shared: &Shared) -> Step;
    /// News from its IO task; whether it changed what the screen shows.
    fn on_news(module: &mut RolloutPlanModule<Self>, news: &ScreenNews, shared: &Shared) -> bool;
    /// Enter on the field one of its own keys asked for, on the open plan.
    fn on_input(_plan: &mut RolloutPlanScreen<Self>, _text: &str, _shared: &Shared) -> Step {
        Step::default()
    }

    // Its pane (`view`).
    /// What the step table says with no rows.
    const NO_STEPS: &'static str;
    const STEP_COLUMNS: &'static [Column];
    /// The lines above the steps (target, options, findings).
    fn summary(screen: &RolloutPlanScreen<Self>, look: &Look, width: usize) -> Vec<Line<'static>>;
    /// The plan's step table; a step is selected by its row's key (kept across rebuilds).
    fn step_rows(plan: &Self::Plan) -> Vec<TableRow>;
    /// The step table's title.
    fn steps_title(screen: &RolloutPlanScreen<Self>) -> String;
    /// Summary, steps, guards and last line, from top to bottom.
    fn layout(screen: &RolloutPlanScreen<Self>, summary_lines: usize, area: Rect) -> [Rect; 4];
}

/// What a rollout's plan screen edits and shows beyond every plan's guards: the targets, the
/// plan made for the one chosen, the list with the keys, the selected step, the kind's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutPlan<K: PlanKind> {
    /// Only these may be chosen (plus one named explicitly).
    pub targets: Vec<Version>,
    pub target: Version,
    /// The plan, or why none could be made (one line).
    pub made: Result<K::Plan, String>,
    /// The selected step, by its row's key ([`PlanKind::step_rows`]).
    pub step: Option<String>,
    pub settings: K::Settings,
}

/// The plan of a rollout of kind `K` on the one plan holder.
pub type RolloutPlanScreen<K> = PlanHolder<RolloutPlan<K>>;

impl<K: PlanKind> Deref for RolloutPlan<K> {
    type Target = K::Settings;
    fn deref(&self) -> &K::Settings {
        &self.settings
    }
}

impl<K: PlanKind> DerefMut for RolloutPlan<K> {
    fn deref_mut(&mut self) -> &mut K::Settings {
        &mut self.settings
    }
}

impl<K: PlanKind> RolloutPlan<K> {
    /// The plan for `status`, on `target` when given, else the one the kind offers first among
    /// the `learned` releases, on the one plan holder. Errors are one line for the message line.
    pub fn open_among(
        status: &ClusterStatus,
        target: Option<&str>,
        learned: &LearnedReleases,
    ) -> Result<RolloutPlanScreen<K>, String> {
        let (targets, target) = K::targets_among(status, target, learned)?;
        let mut rollout = RolloutPlan::<K> {
            targets,
            target,
            made: Err(String::new()),
            step: None,
            settings: K::settings(status, learned),
        };
        rollout.rebuild(status);
        Ok(PlanHolder::new(&status.name, rollout))
    }

    /// Makes the plan again from live status with the screen's settings; the selected step
    /// stays while it is still a row, else the row where it was (the last, if fewer) is.
    pub fn rebuild(&mut self, status: &ClusterStatus) {
        let at = self.step_index();
        self.made = K::make_plan(status, &self.target, &mut self.settings);
        let keys = self.step_keys();
        let kept = self.step.take().filter(|step| keys.contains(step));
        self.step = kept.or_else(|| keys.get(at.min(keys.len().saturating_sub(1))).cloned());
    }

    /// The keys of the step table's rows, in order (none without a plan).
    pub fn step_keys(&self) -> Vec<String> {
        let rows = self.made.as_ref().map(K::step_rows).unwrap_or_default();
        rows.into_iter().map(|row| row.key).collect()
    }

    /// Every guard of the plan made, with the refusal of a cluster Cluster API owns; none
    /// without a plan.
    pub fn guards(
        &self,
        status: &ClusterStatus,
        other: Option<&RolloutInProgress>,
        capi: Option<&CapiOwner>,
        acks: &[String],
    ) -> Vec<Guard> {
        let Ok(plan) = &self.made else {
            return Vec::new();
        };
        let mut guards = K::guards(self, plan, status, other, acks);
        guards.extend(capi_owned(capi, K::IN_PLACE));
        guards
    }

    /// The index of the selected step.
    pub fn step_index(&self) -> usize {
        let keys = self.step_keys();
        self.step
            .as_ref()
            .and_then(|key| keys.iter().position(|k| k == key))
            .unwrap_or(0)
    }

    /// The target as the dispatcher and the journal name it.
    pub fn target_text(&self) -> String {
        K::version_text(&self.target)
    }
}

impl<K: PlanKind> PlanSubject for RolloutPlan<K> {
    const OWN_LIST: bool = true;

    fn unready(&self) -> Option<String> {
        match &self.made {
            Err(e) => Some(e.clone()),
            Ok(_) => K::unready(self),
        }
    }

    fn evaluate(&mut self, _: &str, reading: &GuardReading<'_>, acks: &[String]) -> Vec<Guard> {
        let Some(live) = reading.live else {
            return Vec::new();
        };
        let other = reading.other_rollout();
        self.guards(&live.status, other.as_ref(), reading.capi_owner, acks)
    }

    fn approval(&self, cluster: &str) -> Option<MutatingAction> {
        Some(K::action(cluster.to_string(), self.target_text()))
    }
}
