//! What every plan screen holds, whatever it plans ([`GuardedPlan`]: its cluster, its guards
//! worst first with the acknowledgements typed, why Start is refused, the approval Start asks
//! for), a plan asked of a planner and answered later ([`AskedPlan`]), and the plan screen of
//! every upgrade rollout, parameterised by its kind ([`PlanKind`]). Pure.
use std::fmt::Debug;
use std::ops::{Deref, DerefMut};

use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, ClusterTree};
use crate::config::Config;
use crate::discovery::Cluster;
use crate::fleet::{ClusterLive, ClusterStatus};
use crate::rollout::LeaseReading;
use crate::talos::{Role, Roles};
use crate::upgrade::{
    Guard, GuardId, InPlaceUpgrade, LearnedReleases, RolloutInProgress, UpgradeKind, Verdict,
    blocking, capi_owned,
};
use crate::versions::Version;

/// The plan of a rollout, by kind.
#[derive(Debug, Clone)]
pub enum PlannedRollout {
    Talos(crate::upgrade::UpgradePlan),
    Kubernetes(crate::upgrade::kubernetes::KubernetesUpgradePlan),
}

impl PlannedRollout {
    /// Its steps as its progress starts with them, before the runner reports: the runner's own
    /// first steps (`UpgradeKind::initial_steps`).
    pub fn steps(&self) -> Vec<crate::rollout::StepProgress> {
        match self {
            PlannedRollout::Talos(plan) => crate::upgrade::TalosOs::initial_steps(plan),
            PlannedRollout::Kubernetes(plan) => {
                crate::upgrade::kubernetes::Kubernetes::initial_steps(plan)
            }
        }
    }
}

/// What every plan screen holds, whatever it plans: the cluster it acts on, its guards and the
/// acknowledgements typed against them, why its plan cannot start yet, and the approval its
/// Start asks the dispatcher for. The one gate of the plan screens (`plan_keys`) takes `a`,
/// the typed acknowledgement, `s` and the dispatcher's answer through it for every kind.
pub trait GuardedPlan {
    /// The cluster the plan acts on, as refusals name it.
    fn cluster(&self) -> &str;
    fn guards(&self) -> &PlanGuards;
    fn guards_mut(&mut self) -> &mut PlanGuards;
    /// Why the plan itself cannot start (not read, not made, failed), before any guard.
    fn unready(&self) -> Option<String>;
    /// Its guards read again over live status and whatever else the kind looks at.
    fn read_guards(&mut self, reading: &GuardReading<'_>);
    /// What Start asks the dispatcher to approve; `None` while there is no plan.
    fn approval(&self) -> Option<MutatingAction>;
    /// Whether an approval the dispatcher gave is for this plan as it stands.
    fn approves(&self, approved: &MutatingAction) -> bool {
        self.approval().as_ref() == Some(approved)
    }
    /// Whether the guards, rather than the plan's own list, have the move keys and `?`.
    fn guards_focused(&self) -> bool {
        true
    }
    /// The acknowledgement still to type (`a` opens the field for it).
    fn missing_ack(&self) -> Option<&str> {
        self.guards().missing_ack()
    }
    /// The acknowledgement the last line prompts for: only when it is the one thing left.
    fn ack_prompt(&self) -> Option<&str> {
        self.guards().ack_prompt()
    }
    /// Why Start is refused (the failing guard named), or `None` when it is offered.
    fn start_refused(&self) -> Option<String> {
        self.unready()
            .or_else(|| self.guards().refusal(self.cluster()))
    }
}

/// What a plan's guards are read over: its cluster as the console knows it, gathered from the
/// console's state by the one caller (`plan_keys::read_guards`), so a plan never reads the
/// whole state.
pub struct GuardReading<'a> {
    /// The cluster as the pollers last reported it.
    pub live: Option<&'a ClusterLive>,
    /// The cluster as discovery paired it (its endpoints and nodes).
    pub discovered: Option<&'a Cluster>,
    /// A rollout another run (or this console) holds on the cluster, or why its Lease could
    /// not be read.
    pub other_rollout: LeaseReading,
    /// The management cluster's Cluster object owning it, if any, and its tree.
    pub capi_owner: Option<&'a CapiOwner>,
    pub capi_tree: Option<ClusterTree>,
    /// taloscope's own configuration (providers).
    pub config: &'a Config,
}

impl GuardReading<'_> {
    /// The other rollout, an unread Lease taken for none (for guards that only warn).
    pub fn other_rollout(&self) -> Option<RolloutInProgress> {
        self.other_rollout.clone().ok().flatten()
    }
}

/// The accessors of [`GuardedPlan`] for a plan screen that holds its `cluster` and `guards`
/// as fields of those names.
macro_rules! cluster_and_guards {
    () => {
        fn cluster(&self) -> &str {
            &self.cluster
        }

        fn guards(&self) -> &$crate::app::plan_screen::PlanGuards {
            &self.guards
        }

        fn guards_mut(&mut self) -> &mut $crate::app::plan_screen::PlanGuards {
            &mut self.guards
        }
    };
}
pub(crate) use cluster_and_guards;

/// Where the plans read their guards over any cluster: the console's state, as the shell
/// lends it to the screen modules (so a module reads no more of it than this).
pub trait GuardSource: Debug {
    fn guard_reading(&self, cluster: &str) -> GuardReading<'_>;
}

/// What one kind of plan says of itself on the one plan holder ([`PlanHolder`]): only what
/// differs between kinds.
pub trait PlanSubject: Debug + Clone {
    /// Why the plan itself cannot start (not read, not made, failed), before any guard.
    fn unready(&self) -> Option<String>;
    /// The plan made again over `reading` of `cluster`, and its guards evaluated (`acks`: the
    /// acknowledgements typed so far, for the guards that read them).
    fn evaluate(
        &mut self,
        cluster: &str,
        reading: &GuardReading<'_>,
        acks: &[String],
    ) -> Vec<Guard>;
    /// What Start asks the dispatcher to approve for `cluster`; `None` while there is no plan.
    fn approval(&self, cluster: &str) -> Option<MutatingAction>;
    /// Whether the guards, rather than the plan's own list, have the move keys and `?`.
    fn guards_focused(&self) -> bool {
        true
    }
    /// The acknowledgement still to type among `guards` (a warning's, unless the kind says).
    fn missing_ack<'a>(&self, guards: &'a PlanGuards) -> Option<&'a str> {
        guards.missing_ack()
    }
    /// The acknowledgement the last line prompts for (only when no guard fails, unless the
    /// kind says).
    fn ack_prompt<'a>(&self, guards: &'a PlanGuards) -> Option<&'a str> {
        guards.ack_prompt()
    }
}

/// The one plan holder: a plan of kind `K` on `cluster` with its guards and the
/// acknowledgements typed against them, read fresh through [`GuardedPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanHolder<K> {
    pub cluster: String,
    pub plan: K,
    pub guards: PlanGuards,
}

impl<K: PlanSubject> PlanHolder<K> {
    /// The plan screen of `plan` in `cluster`, its guards not evaluated yet.
    pub fn new(cluster: &str, plan: K) -> PlanHolder<K> {
        PlanHolder {
            cluster: cluster.to_string(),
            plan,
            guards: PlanGuards::default(),
        }
    }

    /// Its guards evaluated now over what `reading` holds, live status or not (a plan just
    /// read; [`GuardedPlan::read_guards`] keeps them while there is no live status).
    pub fn evaluate_guards(&mut self, reading: &GuardReading<'_>) {
        let guards = self
            .plan
            .evaluate(&self.cluster, reading, &self.guards.acks);
        self.guards.set(guards);
    }
}

impl<K> Deref for PlanHolder<K> {
    type Target = K;
    fn deref(&self) -> &K {
        &self.plan
    }
}

impl<K> DerefMut for PlanHolder<K> {
    fn deref_mut(&mut self) -> &mut K {
        &mut self.plan
    }
}

impl<K: PlanSubject> GuardedPlan for PlanHolder<K> {
    cluster_and_guards!();

    fn unready(&self) -> Option<String> {
        self.plan.unready()
    }

    fn read_guards(&mut self, reading: &GuardReading<'_>) {
        if reading.live.is_some() {
            self.evaluate_guards(reading);
        }
    }

    fn approval(&self) -> Option<MutatingAction> {
        self.plan.approval(&self.cluster)
    }

    fn guards_focused(&self) -> bool {
        self.plan.guards_focused()
    }

    fn missing_ack(&self) -> Option<&str> {
        self.plan.missing_ack(&self.guards)
    }

    fn ack_prompt(&self) -> Option<&str> {
        self.plan.ack_prompt(&self.guards)
    }

    /// The acknowledgement the last line prompts for comes before the guards' refusal: a
    /// guard that fails until it is acknowledged asks for it first.
    fn start_refused(&self) -> Option<String> {
        let ack = self.ack_prompt();
        self.unready()
            .or_else(|| ack.map(|needed| format!("type the acknowledgement first (a): {needed}")))
            .or_else(|| self.guards.refusal(&self.cluster))
    }
}

/// A plan asked of a planner (the provider, the CLI's own) and answered later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskedPlan<P> {
    /// Nothing asked yet, or a field changed since.
    None,
    /// Asked as the given number: only the latest answer is kept.
    Planning(u64),
    Ready(Box<P>),
    Failed(String),
}

impl<P> AskedPlan<P> {
    pub fn ready(&self) -> Option<&P> {
        match self {
            AskedPlan::Ready(plan) => Some(plan),
            _ => None,
        }
    }

    /// Why there is no plan to start; `make` says how one is made.
    pub fn unready(&self, make: &str) -> Option<String> {
        match self {
            AskedPlan::Ready(_) => None,
            AskedPlan::Planning(_) => Some("the plan is on its way".into()),
            AskedPlan::None | AskedPlan::Failed(_) => Some(format!("nothing to start: {make}")),
        }
    }
}

/// Which list of the plan screen has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFocus {
    Nodes,
    Guards,
}

/// What a kind of rollout puts on the plan screen beyond what every plan has.
pub trait PlanKind: UpgradeKind<Plan: Debug + Clone> + Debug + Clone {
    /// The kind's own choices and findings (options, image, pre-pull, removed-API count).
    type Settings: Debug + Clone + PartialEq + Eq;
    /// One row of the plan's step table.
    type Step: Clone;
    /// Which in-place upgrade this is, for the refusal of a cluster Cluster API owns.
    const IN_PLACE: InPlaceUpgrade;

    /// The offered targets (plus one named on the command line) and the one chosen, from the
    /// built-in release table.
    fn targets(
        status: &ClusterStatus,
        named: Option<&str>,
    ) -> Result<(Vec<Version>, Version), String> {
        let table = LearnedReleases::built_in("no registry was asked");
        Self::targets_among(status, named, &table)
    }
    /// [`PlanKind::targets`] among the releases learned at run time (a kind that learns none
    /// ignores them).
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
    fn steps(plan: &Self::Plan) -> &[Self::Step];
    /// The key a step is selected by (kept across rebuilds).
    fn step_key(index: usize, step: &Self::Step) -> String;
    /// The selection after a rebuild, given the one before.
    fn reselect(previous: Option<String>, keys: &[String]) -> Option<String>;
    /// Every guard of the plan over live status, as the console shows it (`acks`: those typed).
    fn guards(
        rollout: &RolloutPlan<Self>,
        plan: &Self::Plan,
        status: &ClusterStatus,
        other: Option<&RolloutInProgress>,
        acks: &[String],
    ) -> Vec<Guard>;
    /// The acknowledgement still to type.
    fn missing_ack(guards: &PlanGuards) -> Option<&str> {
        guards.missing_ack()
    }
    /// The acknowledgement the last line prompts for: only when no guard fails.
    fn ack_prompt(guards: &PlanGuards) -> Option<&str> {
        guards.ack_prompt()
    }
    /// A reason of the kind's own why its plan cannot start yet.
    fn unready(_rollout: &RolloutPlan<Self>) -> Option<String> {
        None
    }
    /// The target the dispatcher is asked to approve.
    fn gate_target(rollout: &RolloutPlan<Self>) -> String;
    /// The approval this plan's Start asks the dispatcher for.
    fn gate(cluster: String, target: String) -> MutatingAction;
    fn planned(plan: Self::Plan) -> PlannedRollout;
    /// `?` on a step: its title and what happens to it.
    fn explain_step(plan: &Self::Plan, index: usize) -> Option<(String, String)>;
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
    pub focus: PlanFocus,
    /// The selected step, by [`PlanKind::step_key`].
    pub step: Option<String>,
    pub settings: K::Settings,
}

/// The plan screen of a rollout of kind `K`: the one plan holder over its [`RolloutPlan`].
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

impl<K: PlanKind> RolloutPlanScreen<K> {
    /// The plan screen for `status`, on `target` when given, else the one the kind offers
    /// first among the built-in table's releases. Errors are one line for the message line.
    pub fn open(status: &ClusterStatus, target: Option<&str>) -> Result<Self, String> {
        let table = LearnedReleases::built_in("no registry was asked");
        Self::open_among(status, target, &table)
    }

    /// [`RolloutPlanScreen::open`] among the `learned` releases.
    pub fn open_among(
        status: &ClusterStatus,
        target: Option<&str>,
        learned: &LearnedReleases,
    ) -> Result<Self, String> {
        let (targets, target) = K::targets_among(status, target, learned)?;
        let mut rollout = RolloutPlan::<K> {
            targets,
            target,
            made: Err(String::new()),
            focus: PlanFocus::Nodes,
            step: None,
            settings: K::settings(status, learned),
        };
        rollout.rebuild(status);
        Ok(PlanHolder {
            cluster: status.name.clone(),
            plan: rollout,
            guards: PlanGuards::default(),
        })
    }
}

impl<K: PlanKind> RolloutPlan<K> {
    /// Makes the plan again from live status with the screen's settings.
    pub fn rebuild(&mut self, status: &ClusterStatus) {
        self.made = K::make_plan(status, &self.target, &mut self.settings);
        let keys = self.step_keys();
        self.step = K::reselect(self.step.take(), &keys);
    }

    fn step_keys(&self) -> Vec<String> {
        let steps = self.steps();
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| K::step_key(i, s))
            .collect()
    }

    pub fn steps(&self) -> &[K::Step] {
        self.made.as_ref().map(K::steps).unwrap_or(&[])
    }

    pub fn steps_len(&self) -> usize {
        self.steps().len()
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
        K::gate_target(self)
    }
}

impl<K: PlanKind> PlanSubject for RolloutPlan<K> {
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
        Some(K::gate(cluster.to_string(), self.target_text()))
    }

    fn guards_focused(&self) -> bool {
        self.focus == PlanFocus::Guards
    }

    fn missing_ack<'a>(&self, guards: &'a PlanGuards) -> Option<&'a str> {
        K::missing_ack(guards)
    }

    fn ack_prompt<'a>(&self, guards: &'a PlanGuards) -> Option<&'a str> {
        K::ack_prompt(guards)
    }
}

/// A plan's guards as every plan screen holds them: worst first, the one selected, and the
/// acknowledgements typed against them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanGuards {
    /// Worst first (fail, warn, pass), each group in the guards' own order; empty while none
    /// was evaluated.
    pub shown: Vec<Guard>,
    pub selected: Option<GuardId>,
    /// Acknowledgements typed so far; the runner checks them again.
    pub acks: Vec<String>,
}

impl PlanGuards {
    /// Freshly evaluated guards, worst first, keeping the selection by guard.
    pub fn set(&mut self, guards: Vec<Guard>) {
        set_guards(&mut self.shown, &mut self.selected, guards);
    }

    /// The acknowledgement still to type, when a warning needs one.
    pub fn missing_ack(&self) -> Option<&str> {
        let typed = |needed: &&str| self.acks.iter().any(|a| a.trim() == *needed);
        self.shown
            .iter()
            .filter(|g| g.verdict == Verdict::Warn)
            .filter_map(|g| g.needs_ack.as_deref())
            .find(|needed| !typed(needed))
    }

    /// The acknowledgement the last line prompts for: only when no guard fails.
    pub fn ack_prompt(&self) -> Option<&str> {
        self.missing_ack().filter(|_| self.counts().2 == 0)
    }

    /// Why the guards refuse Start on `cluster`, or `None` when they allow it.
    pub fn refusal(&self, cluster: &str) -> Option<String> {
        if self.shown.is_empty() {
            return Some(format!("no status for {cluster} yet"));
        }
        let failing: Vec<&str> = (self.shown.iter())
            .filter(|g| g.verdict == Verdict::Fail)
            .map(|g| g.id.title())
            .collect();
        if !failing.is_empty() {
            return Some(format!("guard failing: {}", failing.join(", ")));
        }
        if let Some(needed) = self.missing_ack() {
            return Some(format!("type the acknowledgement first (a): {needed}"));
        }
        blocking(&self.shown, &self.acks).then(|| "a guard blocks the start".to_string())
    }

    /// How many guards pass, warn and fail.
    pub fn counts(&self) -> (usize, usize, usize) {
        verdict_counts(&self.shown)
    }

    /// The index of the selected guard (the first when none is).
    pub fn index(&self) -> usize {
        self.selected
            .and_then(|id| self.shown.iter().position(|g| g.id == id))
            .unwrap_or(0)
    }

    pub fn selected_guard(&self) -> Option<&Guard> {
        self.shown.get(self.index())
    }

    /// Selects the guard at `index`, when there is one.
    pub fn select(&mut self, index: usize) {
        if let Some(guard) = self.shown.get(index) {
            self.selected = Some(guard.id);
        }
    }
}

/// Puts freshly evaluated guards on a plan screen, worst first (fail, warn, pass, each group in
/// the guards' own order), keeping the selection by guard.
pub fn set_guards(shown: &mut Vec<Guard>, selected: &mut Option<GuardId>, mut guards: Vec<Guard>) {
    guards.sort_by_key(|g| match g.verdict {
        Verdict::Fail => 0,
        Verdict::Warn => 1,
        Verdict::Pass => 2,
    });
    *shown = guards;
    if selected.is_none_or(|id| !shown.iter().any(|g| g.id == id)) {
        *selected = shown.first().map(|g| g.id);
    }
}

/// How many guards pass, warn and fail.
pub fn verdict_counts(guards: &[Guard]) -> (usize, usize, usize) {
    let n = |v: Verdict| guards.iter().filter(|g| g.verdict == v).count();
    (n(Verdict::Pass), n(Verdict::Warn), n(Verdict::Fail))
}

/// The client certificate's roles as the status reports them (`os:admin`).
pub fn roles_of(status: &ClusterStatus) -> Roles {
    Roles(
        status
            .role
            .split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(Role::parse)
            .collect(),
    )
}

/// What `?` says about one guard: its title and explanation, then its verdict.
pub fn explain_guard(guard: &Guard) -> String {
    format!(
        "{}\n\nNow: {} - {}",
        guard.id.explain(),
        verdict_word(guard.verdict),
        guard.reason
    )
}

pub fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Warn => "warn",
        Verdict::Fail => "fail",
    }
}
