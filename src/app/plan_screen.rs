//! What every plan screen holds, whatever it plans ([`PlanHolder`]: its cluster, its guards
//! worst first with the acknowledgements typed, why Start is refused, the approval Start asks
//! for, over what a kind of plan says of itself, [`PlanSubject`]), a plan asked
//! of a planner and answered later ([`AskedPlan`]), and the plan of a rollout the one runner
//! runs ([`PlannedRollout`]). Pure.
use std::fmt::Debug;
use std::ops::{Deref, DerefMut};

use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, ClusterTree};
use crate::config::Config;
use crate::discovery::Cluster;
use crate::fleet::{ClusterLive, ClusterStatus};
use crate::rollout::LeaseReading;
use crate::talos::{Role, Roles};
use crate::upgrade::{Guard, GuardId, RolloutInProgress, Verdict, blocking};

pub use crate::operation::planned::PlannedRollout;

/// What a plan's guards are read over: its cluster as the console knows it, gathered from the
/// console's state by the one caller (`views::plan::reread_guards`), so a plan never reads
/// the whole state.
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
    /// It has a list of its own beside its guards (steps, phases, a request's fields), which
    /// has the move keys and `?` while the holder's `on_guards` does not say the guards have.
    const OWN_LIST: bool = false;
    /// Whether this plan has that list (a kind where only some plans have one says which).
    fn has_list(&self) -> bool {
        Self::OWN_LIST
    }
    /// Its plan shows apart from its own list (a wizard's, from its request): it is approved
    /// only while it shows (`on_guards`), and Tab does not switch.
    const APART: bool = false;
}

/// The one plan holder: a plan of kind `K` on `cluster` with its guards and the
/// acknowledgements typed against them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanHolder<K> {
    pub cluster: String,
    pub plan: K,
    pub guards: PlanGuards,
    /// Whether the guards, rather than the plan's own list, have the move keys and `?` (Tab
    /// switches; a plan apart has them while it shows).
    pub on_guards: bool,
}

impl<K: PlanSubject> PlanHolder<K> {
    /// The plan screen of `plan` in `cluster`, its guards not evaluated yet.
    pub fn new(cluster: &str, plan: K) -> PlanHolder<K> {
        PlanHolder {
            cluster: cluster.to_string(),
            plan,
            guards: PlanGuards::default(),
            on_guards: false,
        }
    }

    /// Its guards evaluated now over what `reading` holds, live status or not (a plan just
    /// read; [`PlanHolder::read_guards`] keeps them while there is no live status).
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

/// What every plan screen asks of its plan, whatever it plans: the one gate of the plan
/// screen (`views::plan`) takes `a`, the typed acknowledgement, `s` and the dispatcher's
/// answer through these for every kind.
impl<K: PlanSubject> PlanHolder<K> {
    /// Its guards read again over live status (kept while there is none).
    pub fn read_guards(&mut self, reading: &GuardReading<'_>) {
        if reading.live.is_some() {
            self.evaluate_guards(reading);
        }
    }

    /// What Start asks the dispatcher to approve; `None` while there is no plan.
    pub fn approval(&self) -> Option<MutatingAction> {
        let shown = !K::APART || self.on_guards;
        self.plan.approval(&self.cluster).filter(|_| shown)
    }

    /// Whether the guards, rather than the plan's own list, have the move keys and `?`.
    pub fn guards_focused(&self) -> bool {
        !self.plan.has_list() || self.on_guards
    }

    /// Why Start is refused (the failing guard named), or `None` when it is offered. The
    /// acknowledgement the last line prompts for comes before the guards' refusal: a guard
    /// that fails until it is acknowledged asks for it first.
    pub fn start_refused(&self) -> Option<String> {
        let ack = self.guards.ack_prompt();
        (self.plan.unready())
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

    /// The acknowledgement still to type: a warning's, else one a guard fails until it is
    /// typed (the Kubernetes upgrade's removed-API count).
    pub fn missing_ack(&self) -> Option<&str> {
        let typed = |needed: &&str| self.acks.iter().any(|a| a.trim() == *needed);
        let needing = |verdict| {
            (self.shown.iter())
                .filter(move |g| g.verdict == verdict)
                .filter_map(|g| g.needs_ack.as_deref())
        };
        (needing(Verdict::Warn).chain(needing(Verdict::Fail))).find(|needed| !typed(needed))
    }

    /// The acknowledgement the last line prompts for: only when no guard fails that it would
    /// not clear.
    pub fn ack_prompt(&self) -> Option<&str> {
        let failing =
            (self.shown.iter()).any(|g| g.verdict == Verdict::Fail && g.needs_ack.is_none());
        self.missing_ack().filter(|_| !failing)
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
