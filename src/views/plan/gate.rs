//! The one gate of every plan screen, whatever it plans: `a` and the typed acknowledgement,
//! `s` (refused and audited while a guard blocks, else the dispatcher's typed confirmation),
//! the dispatcher's approval checked against the plan as it stands, and the keys the plan
//! screens share (moves through the guards, `?`, refresh, help). Each kind gives its plan
//! on the one [`PlanHolder`]; the one plan screen takes the gate as a [`Step`]
//! ([`start_step`], [`ack_step`], [`approved_step`]). Pure.
use crate::app::action::{Effect, PollerCommand, not_run};
use crate::app::actions::ActionRun;
use crate::app::binding::Move;
use crate::app::message::Message;
use crate::app::plan_screen::{PlanHolder, PlanSubject, explain_guard};
use crate::app::screens::{Ask, Shared, Step};
use crate::approval::ApprovedAction;

/// `s` on a plan: read-only mode goes to the dispatcher (which refuses and audits, as the
/// command line's does); a guard that blocks refuses here, audited; a plan not made or read
/// yet says why; otherwise the dispatcher asks for the typed name.
pub fn start_step<K: PlanSubject>(plan: &PlanHolder<K>, readonly: bool) -> Step {
    let (action, refused) = (plan.approval(), plan.start_refused());
    let guarded = !plan.guards.shown.is_empty();
    match (action, refused) {
        (Some(action), _) if readonly => Step::effects(vec![Effect::Gate(action)]),
        (Some(action), None) => Step::effects(vec![Effect::Gate(action)]),
        (action, why) => {
            let why = why.unwrap_or_else(|| "there is no plan".into());
            let message = Message::warn(format!("Start refused: {why}"));
            let effects = match action {
                Some(action) if guarded => vec![Effect::Refuse { action, why }],
                _ => Vec::new(),
            };
            Step {
                message: Some(message),
                ..Step::effects(effects)
            }
        }
    }
}

/// The dispatcher approved `approved` for the plan a screen module holds: its guards read
/// again over `shared`, the audited refusal when that plan was closed or changed since or a
/// guard refuses it now, the audited "not run" when `run` cannot make a run of it; else the
/// step that hands the run (with the acknowledgements typed) to the one runner and closes the
/// screen for the progress.
pub fn approved_step<K: PlanSubject>(
    plan: Option<&mut PlanHolder<K>>,
    approved: &ApprovedAction,
    shared: &Shared,
    run: impl FnOnce(&PlanHolder<K>) -> Result<ActionRun, String>,
) -> Step {
    let Some(plan) = plan else {
        return Step::closed_approval(approved);
    };
    reread_guards(plan, shared);
    if plan.approval().as_ref() != Some(approved.action()) {
        return Step::closed_approval(approved);
    }
    if let Some(refused) = plan.start_refused() {
        return Step::not_started(approved, format!("refused by its guards: {refused}"));
    }
    let run = match run(plan) {
        Ok(run) => run,
        Err(why) => return Step::effects(not_run(approved, why)),
    };
    let acks = plan.guards.acks.clone();
    Step {
        effects: vec![Effect::RunAction {
            approved: approved.clone(),
            run: Box::new(run),
            acks,
        }],
        ..Step::close()
    }
}

/// What the input line says while the acknowledgement is typed.
pub const ACK_PROMPT: &str = "acknowledge> ";

/// `a`: the input line for the acknowledgement a guard needs, when one does.
pub fn acknowledge_step<K: PlanSubject>(plan: &PlanHolder<K>) -> Step {
    match plan.guards.missing_ack() {
        Some(_) => Step::ask(Ask::Input {
            prompt: ACK_PROMPT,
            text: String::new(),
        }),
        None => Step::message(Message::info("no acknowledgement is needed")),
    }
}

/// `r`: the plan's cluster polled now.
pub fn refresh_step(cluster: &str) -> Step {
    Step {
        message: Some(Message::info(format!("refreshing {cluster}"))),
        ..Step::effects(vec![Effect::Poller(PollerCommand::Refresh(cluster.into()))])
    }
}

/// A move key on a plan screen: through the guards while they have the keys (`None`), else
/// where the selection at `at` of its own list of `len` goes (`None` in an empty list).
pub fn list_move<K: PlanSubject>(
    plan: &mut PlanHolder<K>,
    to: Move,
    (at, len): (usize, usize),
    page: usize,
) -> Option<usize> {
    if plan.guards_focused() {
        let guards = &mut plan.guards;
        if let Some(last) = guards.shown.len().checked_sub(1) {
            guards.select(to.from(guards.index(), last, page));
        }
        return None;
    }
    Some(to.from(at, len.checked_sub(1)?, page))
}

/// `?` on a plan screen: the selected guard explained while the guards have the keys, else
/// `item` (its own list's selection, its title and text); the help when there is neither.
pub fn explain_step<K: PlanSubject>(plan: &PlanHolder<K>, item: Option<(String, String)>) -> Step {
    let item = match plan.guards_focused() {
        true => (plan.guards.selected_guard())
            .map(|guard| (guard.id.title().to_string(), explain_guard(guard))),
        false => item,
    };
    Step::ask(item.map_or(Ask::Help, |(title, text)| Ask::Explain { title, text }))
}

/// `plan`'s guards read again over what `shared` lends; whether what it shows changed.
pub fn reread_guards<K: PlanSubject>(plan: &mut PlanHolder<K>, shared: &Shared) -> bool {
    let before = (plan.guards.shown.clone(), plan.approval());
    plan.read_guards(&shared.guards.guard_reading(&plan.cluster));
    before != (plan.guards.shown.clone(), plan.approval())
}

/// The screen closed with `why` said as a warning: what was asked cannot be planned (now).
pub fn closed_with(why: impl Into<String>) -> Step {
    Step {
        message: Some(Message::warn(why)),
        ..Step::close()
    }
}

/// Enter on the acknowledgement `text` typed for `plan`: kept only when it is the text the
/// plan asks for, its guards then read again over `shared`.
pub fn ack_step<K: PlanSubject>(plan: &mut PlanHolder<K>, text: &str, shared: &Shared) -> Step {
    let Some(needed) = plan.guards.missing_ack().map(String::from) else {
        return Step::default();
    };
    if text.trim() != needed {
        let typed = format!("not acknowledged: type exactly \"{needed}\"");
        return Step::message(Message::error(typed));
    }
    plan.guards.acks.push(needed);
    plan.read_guards(&shared.guards.guard_reading(&plan.cluster));
    Step::message(Message::info("acknowledged; s starts"))
}
