//! Unit tests of the wizard's guards: evaluated over the fleet model's status and again when it
//! changes, a failing quorum guard blocking Start and a confirmed start, the even-count warning
//! waiting for its typed acknowledgement, the acknowledgements reaching the runner's effect, and
//! `?` on a guard.
use super::*;
use crate::guards::{GuardId, Verdict as GuardVerdict};
use crate::provision::guards::EVEN_MEMBERS_ACK;

/// One new control plane for `lab` from its own control-plane template.
fn control_plane_plan() -> ProvisionPlan {
    ProvisionPlan {
        role: MachineRole::Controlplane,
        source: PlanSource::Template {
            id: 7,
            name: "talos-cp".into(),
        },
        machine_config: Some("/s/cp.yaml".into()),
        vm_names: vec!["lab-controlplane-1".into()],
        room: Default::default(),
        ..plan(1)
    }
}

/// The wizard with the control-plane plan ready.
fn planned_control_plane() -> AppState {
    let mut s = wizard();
    press(&mut s, KeyCode::Enter);
    answer_plan(&mut s, 1, control_plane_plan(), LAB_ENDPOINT);
    s
}

fn verdict_of(s: &AppState, id: GuardId) -> GuardVerdict {
    let w = wizard_of(s);
    let shown = &w.guards.shown;
    shown.iter().find(|g| g.id == id).unwrap().verdict
}

fn message(s: &AppState) -> String {
    s.message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

/// `a`, then `text` typed on the input line and Enter.
fn acknowledge(s: &mut AppState, text: &str) {
    press(s, KeyCode::Char('a'));
    assert_eq!(
        s.input.as_ref().unwrap().kind,
        InputKind::Screen(ACK_PROMPT)
    );
    for c in text.chars() {
        update(s, Action::Insert(c));
    }
    update(s, Action::Submit);
}

#[test]
fn the_plans_guards_are_the_commands_list_over_live_status() {
    let s = planned(2);
    let w = wizard_of(&s);
    let ids: Vec<GuardId> = w.guards.shown.iter().map(|g| g.id).collect();
    assert_eq!(ids.len(), GuardId::PROVISION.len(), "{ids:?}");
    assert!(GuardId::PROVISION.iter().all(|id| ids.contains(id)));
    assert!(
        w.guards
            .shown
            .iter()
            .all(|g| g.verdict == GuardVerdict::Pass),
        "{:?}",
        w.guards.shown
    );
    assert_eq!(w.start_refused(), None);
}

#[test]
fn a_failing_quorum_guard_blocks_start_and_follows_the_status() {
    let mut s = planned_control_plane();
    update(&mut s, etcd_event(3, 2));
    assert_eq!(verdict_of(&s, GuardId::JoinQuorum), GuardVerdict::Fail);
    let w = wizard_of(&s);
    assert_eq!(w.guards.shown[0].id, GuardId::JoinQuorum, "worst first");
    let effects = press(&mut s, KeyCode::Char('s'));
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    assert!(message(&s).contains("guard failing: "), "{}", message(&s));
    assert!(message(&s).contains(GuardId::JoinQuorum.title()));

    // etcd recovers: the quorum guard passes again on the next status.
    update(&mut s, etcd_event(3, 3));
    assert_eq!(verdict_of(&s, GuardId::JoinQuorum), GuardVerdict::Pass);
}

#[test]
fn a_confirmed_start_is_not_run_when_a_guard_fails_by_then() {
    let mut s = planned(1);
    let action = gated(press(&mut s, KeyCode::Char('s')));
    // The machine config now points elsewhere: its guard fails.
    answer_plan(&mut s, 1, plan(1), "https://127.99.0.1:6443");
    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { why, .. }] if why.contains("guards")),
        "{effects:?}"
    );
}

#[test]
fn an_even_member_count_waits_for_its_acknowledgement() {
    let mut s = planned_control_plane();
    assert_eq!(verdict_of(&s, GuardId::OddMembers), GuardVerdict::Warn);
    let w = wizard_of(&s);
    assert_eq!(w.guards.ack_prompt(), Some(EVEN_MEMBERS_ACK));
    let effects = press(&mut s, KeyCode::Char('s'));
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    assert!(message(&s).contains(EVEN_MEMBERS_ACK), "{}", message(&s));

    acknowledge(&mut s, "an even count");
    assert!(
        message(&s).starts_with("not acknowledged"),
        "{}",
        message(&s)
    );
    assert!(wizard_of(&s).guards.acks.is_empty());

    acknowledge(&mut s, EVEN_MEMBERS_ACK);
    let w = wizard_of(&s);
    assert_eq!(w.guards.missing_ack(), None);
    assert_eq!(w.start_refused(), None);
    gated(press(&mut s, KeyCode::Char('s')));

    // A changed field drops the plan and the acknowledgements typed for it.
    press(&mut s, KeyCode::Char('+'));
    assert!(wizard_of(&s).guards.acks.is_empty());
}

#[test]
fn the_typed_acknowledgements_reach_the_runners_effect() {
    let mut s = planned_control_plane();
    acknowledge(&mut s, EVEN_MEMBERS_ACK);
    let action = gated(press(&mut s, KeyCode::Char('s')));
    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    let [Effect::RunAction { run, acks, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let ActionRun::Provision(plan) = &**run else {
        panic!("{run:?}");
    };
    assert_eq!(acks, &vec![EVEN_MEMBERS_ACK.to_string()]);
    assert_eq!(plan.role, MachineRole::Controlplane);
}

#[test]
fn question_mark_on_a_guard_explains_it_as_the_upgrade_plan_does() {
    let mut s = planned_control_plane();
    press(&mut s, KeyCode::Char('?'));
    assert!(
        matches!(s.overlay, Some(Overlay::Help { .. })),
        "fields: help"
    );
    s.overlay = None;

    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Down);
    let w = wizard_of(&s);
    let second = w.guards.shown[1].clone();
    assert_eq!(w.guards.selected, Some(second.id));
    assert_eq!(w.form.field, Field::Provider, "the fields keep their place");
    press(&mut s, KeyCode::Char('?'));
    let Some(Overlay::Explain { title, text, .. }) = &s.overlay else {
        panic!("{:?}", s.overlay);
    };
    assert_eq!(title, second.id.title());
    assert_eq!(text, &crate::app::plan_screen::explain_guard(&second));
}
