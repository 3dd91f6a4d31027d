//! The one gate of every plan screen, whatever it plans: `a` and the typed acknowledgement,
//! `s` (refused and audited while a guard blocks, else the dispatcher's typed confirmation),
//! the dispatcher's approval checked against the plan as it stands, and the keys the plan
//! screens share (moves through the guards, `?`, refresh, help, the command line). Each kind
//! gives its plan through [`GuardedPlan`]. Pure.
use super::action::{Action, Effect, PollerRequest, not_run};
use super::message::Message;
use super::plan_screen::{GuardReading, GuardedPlan, PlanFocus, PlanGuards, explain_guard};
use super::screen::Screen;
use super::state::{AppState, InputKind, Overlay};
use crate::approval::ApprovedAction;
use crate::upgrade::Guard;

/// The plan `screen` shows, whatever it plans; `None` for a screen without one.
fn plan_in(state: &mut AppState, screen: Screen) -> Option<&mut dyn GuardedPlan> {
    fn open<P: GuardedPlan>(plan: &mut Option<P>) -> Option<&mut dyn GuardedPlan> {
        plan.as_mut().map(|p| p as &mut dyn GuardedPlan)
    }
    match screen {
        Screen::Action => open(&mut state.actions.plan),
        Screen::ProvisionWizard => open(&mut state.provision.wizard),
        Screen::UpgradePlan => open(&mut state.upgrade),
        Screen::KubernetesPlan => open(&mut state.kube_upgrade),
        Screen::CapiUpgrade => open(&mut state.capi_upgrade),
        _ => None,
    }
}

fn plan_on_screen(state: &mut AppState) -> Option<&mut dyn GuardedPlan> {
    plan_in(state, state.screen)
}

/// The keys every plan screen answers alike, for the plan on screen: the move keys on its
/// guards while they have them, `?` on the selected guard (help otherwise), `a`, `s`, `r` (a
/// poll), help and the command line. `None` for any other key, and on a screen without a plan.
pub(super) fn plan_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    let plan = plan_on_screen(state)?;
    let (cluster, needs_ack) = (plan.cluster().to_string(), plan.missing_ack().is_some());
    let guard = plan
        .guards_focused()
        .then(|| plan.guards().selected_guard().cloned());
    match (action, guard) {
        (
            Action::MoveUp
            | Action::MoveDown
            | Action::MoveFirst
            | Action::MoveLast
            | Action::PageUp
            | Action::PageDown,
            Some(_),
        ) => {
            let page = state.page();
            if let Some(plan) = plan_on_screen(state) {
                move_guard(plan.guards_mut(), action, page);
            }
        }
        (Action::Explain, Some(Some(guard))) => {
            explain_selected(state, PlanFocus::Guards, Some(&guard), None);
        }
        (Action::Explain, _) => state.overlay = Some(Overlay::Help { scroll: 0 }),
        (Action::StartPlan, _) => return Some(start(state)),
        (Action::Acknowledge | Action::Refresh | Action::OpenHelp | Action::OpenCommandLine, _) => {
            return Some(shared_key(state, action, cluster, needs_ack));
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// Enter on the acknowledgement field: kept only when it is the text the plan on screen asks
/// for; the plans of its cluster then evaluate their guards again.
pub(super) fn acknowledge(state: &mut AppState, text: &str) {
    let Some((cluster, needed)) = plan_on_screen(state)
        .and_then(|p| Some((p.cluster().to_string(), p.missing_ack()?.to_string())))
    else {
        return;
    };
    if !take_ack(state, &needed, text) {
        return;
    }
    if let Some(plan) = plan_on_screen(state) {
        plan.guards_mut().acks.push(needed);
    }
    read_guards(state, Some(&cluster));
}

/// The open plans of `cluster` (every open plan, with `None`) read their guards again over
/// live status; whether what one shows changed.
pub(super) fn read_guards(state: &mut AppState, cluster: Option<&str>) -> bool {
    fn again<P: GuardedPlan>(
        state: &mut AppState,
        slot: impl Fn(&mut AppState) -> &mut Option<P>,
        cluster: Option<&str>,
    ) -> bool {
        let Some(mut plan) = slot(state).take_if(|p| cluster.is_none_or(|c| p.cluster() == c))
        else {
            return false;
        };
        let before = (plan.guards().shown.clone(), plan.approval());
        plan.read_guards(&guard_reading(state, plan.cluster()));
        let changed = before != (plan.guards().shown.clone(), plan.approval());
        *slot(state) = Some(plan);
        changed
    }
    let actions = again(state, |s| &mut s.actions.plan, cluster);
    let provision = again(state, |s| &mut s.provision.wizard, cluster);
    let talos = again(state, |s| &mut s.upgrade, cluster);
    let kube = again(state, |s| &mut s.kube_upgrade, cluster);
    let capi_upgrade = again(state, |s| &mut s.capi_upgrade, cluster);
    actions || provision || talos || kube || capi_upgrade
}

/// What the plans of `cluster` read their guards over, from the console's state.
pub(super) fn guard_reading<'a>(state: &'a AppState, cluster: &str) -> GuardReading<'a> {
    GuardReading {
        live: state.fleet.cluster(cluster),
        discovered: state.clusters.iter().find(|c| c.name == cluster),
        other_rollout: super::update_upgrade::other_rollout_read(state, cluster),
        capi_owner: state.fleet.capi.owner(cluster),
        capi_tree: super::queries::tree_of(state, cluster),
        config: &state.provision.config,
    }
}

/// `s` on a plan: read-only mode goes to the dispatcher (which refuses and audits, as the
/// command line's does); a guard that blocks refuses here, audited; a plan not made or read
/// yet says why; otherwise the dispatcher asks for the typed name.
fn start(state: &mut AppState) -> Vec<Effect> {
    let readonly = state.readonly;
    let Some(plan) = plan_on_screen(state) else {
        return Vec::new();
    };
    let (effects, message) = start_plan(plan, readonly);
    if message.is_some() {
        state.message = message;
    }
    effects
}

/// `s` on `plan` (see `start`), for a plan held anywhere: the effects, and what the message
/// line says.
pub(crate) fn start_plan(plan: &dyn GuardedPlan, readonly: bool) -> (Vec<Effect>, Option<Message>) {
    let (action, refused) = (plan.approval(), plan.start_refused());
    let guarded = !plan.guards().shown.is_empty();
    match (action, refused) {
        (Some(action), _) if readonly => (vec![Effect::Gate(action)], None),
        (Some(action), None) => (vec![Effect::Gate(action)], None),
        (action, why) => {
            let why = why.unwrap_or_else(|| "there is no plan".into());
            let message = Some(Message::warn(format!("Start refused: {why}")));
            match action {
                Some(action) if guarded => (vec![Effect::Refuse { action, why }], message),
                _ => (Vec::new(), message),
            }
        }
    }
}

/// The dispatcher approved `approved` for the plan `screen` shows: the audited "not run" when
/// that plan was closed or changed since, or a guard refuses it now (evaluated again first by
/// the caller); the message line says it. `None` when it may run.
pub(super) fn not_approved(
    state: &mut AppState,
    screen: Screen,
    approved: &ApprovedAction,
) -> Option<Vec<Effect>> {
    let plan = plan_in(state, screen).map(|p| &*p);
    let (message, effects) = refusal_of_approved(plan, approved)?;
    state.message = Some(message);
    Some(effects)
}

/// [`not_approved`] for a plan held anywhere (`None`: no plan open): the message line's words
/// and the audited "not run", or `None` when it may run.
pub(crate) fn refusal_of_approved(
    plan: Option<&dyn GuardedPlan>,
    approved: &ApprovedAction,
) -> Option<(Message, Vec<Effect>)> {
    let why = match plan {
        Some(plan) if plan.approves(approved.action()) => {
            format!("refused by its guards: {}", plan.start_refused()?)
        }
        _ => "the plan was closed or changed before it was confirmed".to_string(),
    };
    let message = Message::warn(format!("not started: {why}"));
    Some((message, not_run(approved, why)))
}

/// The list that gets the keys after `Tab`.
pub(super) fn other_focus(focus: PlanFocus) -> PlanFocus {
    match focus {
        PlanFocus::Nodes => PlanFocus::Guards,
        PlanFocus::Guards => PlanFocus::Nodes,
    }
}

/// Where a move key takes the selection at `i` of a list of `len` (PgUp/PgDn
/// by `page`); none in an empty list.
pub(super) fn moved(len: usize, i: usize, action: &Action, page: usize) -> Option<usize> {
    let last = len.checked_sub(1)?;
    Some(match action {
        Action::MoveDown => (i + 1).min(last),
        Action::MoveUp => i.saturating_sub(1),
        Action::MoveFirst => 0,
        Action::PageDown => (i + page.max(1)).min(last),
        Action::PageUp => i.saturating_sub(page.max(1)),
        _ => last,
    })
}

/// A move key on a plan's guards: the selection follows it (PgUp/PgDn by `page`).
pub(super) fn move_guard(guards: &mut PlanGuards, action: &Action, page: usize) {
    if let Some(to) = moved(guards.shown.len(), guards.index(), action, page) {
        guards.select(to);
    }
}

/// The target after `current` (or before it, for `PreviousTarget`), wrapping around.
pub(super) fn cycled<'a, T: PartialEq>(
    targets: &'a [T],
    current: &T,
    action: &Action,
) -> Option<&'a T> {
    let n = targets.len().max(1);
    let i = targets.iter().position(|t| t == current).unwrap_or(0);
    let next = if matches!(action, Action::NextTarget) {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    targets.get(next)
}

/// The keys every plan screen answers the same way: `a` (`needs_ack` says whether the plan
/// still needs one), `r`, `?` and `:`.
pub(super) fn shared_key(
    state: &mut AppState,
    action: &Action,
    cluster: String,
    needs_ack: bool,
) -> Vec<Effect> {
    match action {
        Action::Acknowledge if needs_ack => state.open_input(InputKind::Acknowledge, String::new()),
        Action::Acknowledge => state.message = Some(Message::info("no acknowledgement is needed")),
        Action::Refresh => {
            state.message = Some(Message::info(format!("refreshing {cluster}")));
            return vec![Effect::Poller(PollerRequest::Refresh(cluster))];
        }
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

/// Checks the typed acknowledgement against the one the plan asks for; true when it was kept.
pub(super) fn take_ack(state: &mut AppState, needed: &str, text: &str) -> bool {
    let (kept, message) = ack_answer(needed, text);
    state.message = Some(message);
    kept
}

/// Whether `text` is the acknowledgement `needed`, and what the message line says of it.
pub(crate) fn ack_answer(needed: &str, text: &str) -> (bool, Message) {
    if text.trim() == needed {
        (true, Message::info("acknowledged; s starts"))
    } else {
        let message = format!("not acknowledged: type exactly \"{needed}\"");
        (false, Message::error(message))
    }
}

/// `?` on a plan: the selected guard explained, or `step` (the selected step's title and
/// explanation, none with nothing selected), in the explanation overlay.
pub(super) fn explain_selected(
    state: &mut AppState,
    focus: PlanFocus,
    guard: Option<&Guard>,
    step: Option<(String, String)>,
) {
    if let Some(overlay) = explained(focus, guard, step) {
        state.overlay = Some(overlay);
    }
}

/// The overlay of [`explain_selected`], for a plan held anywhere.
pub(crate) fn explained(
    focus: PlanFocus,
    guard: Option<&Guard>,
    step: Option<(String, String)>,
) -> Option<Overlay> {
    let (title, text) = match focus {
        PlanFocus::Guards => guard.map(|g| (g.id.title().to_string(), explain_guard(g))),
        PlanFocus::Nodes => step,
    }?;
    Some(Overlay::Explain {
        title,
        text,
        scroll: 0,
    })
}
