//! Unit tests of the provision wizard and progress pane: opening from a
//! cluster, the fields, the plan asked for and answered, Start through the
//! dispatcher (confirm, cancel, read-only), the runner's events folded, a
//! failed VM offering terminate, and a journal found at startup.
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::action::AppEvent;
use crate::app::keymap;
use crate::app::provision::{SourceChoice, VmRow};
use crate::app::test_fixtures::{console_of, discovered};
use crate::app::update::update;
use crate::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use crate::config::{Config, NameOrId, ProviderKind};
use crate::fleet::{EtcdReport, FleetEvent, Quorum};
use crate::provision::{JournalEntry, PlanSource, ProvisionPlan, ProvisionSummary, VmProgress};

const CONFIG: &str = "
providers:
  cloud-a:
    kind: oneflow
    endpoint: http://127.0.0.1:2474
  lab-one:
    kind: opennebula
    endpoint: http://127.0.0.1:2633/RPC2
clusters:
  lab:
    provider: lab-one
    templates:
      worker: talos-worker
      controlplane: 7
    machine_configs:
      worker: /s/worker.yaml
";

/// `lab`'s etcd as the fleet model reports it: `members` members, `healthy` of them healthy.
fn etcd_event(members: usize, healthy: usize) -> Action {
    Action::Event(AppEvent::Fleet(FleetEvent::Etcd {
        cluster: "lab".into(),
        etcd: EtcdReport {
            quorum: Quorum::from_counts(members, healthy),
            ..EtcdReport::default()
        },
        at: Instant::now(),
    }))
}

/// The console on `lab`, its status known: three healthy etcd members.
fn state() -> AppState {
    let mut s = console_of(vec![discovered("lab")]);
    s.provision.config = Arc::new(Config::parse(Path::new("/c/taloscope.yaml"), CONFIG).unwrap());
    s.use_cluster("lab");
    s.screen = Screen::Cluster(Pane::Nodes);
    update(&mut s, etcd_event(3, 3));
    let finished = FleetEvent::PollFinished {
        cluster: "lab".into(),
        at: Instant::now(),
    };
    update(&mut s, Action::Event(AppEvent::Fleet(finished)));
    s
}

/// What `lab`'s machine configs point at: one of its addresses.
const LAB_ENDPOINT: &str = "https://127.10.0.2:6443";

fn templates() -> Vec<SourceChoice> {
    [(3, "talos-base"), (5, "talos-worker"), (7, "talos-cp")]
        .into_iter()
        .map(|(id, name)| SourceChoice {
            id,
            name: name.into(),
            roles: Vec::new(),
        })
        .collect()
}

fn event(s: &mut AppState, update: ProvisionUpdate) -> Vec<Effect> {
    super::super::update::update(s, Action::Event(AppEvent::Provision(Box::new(update))))
}

/// The wizard open, the templates listed.
fn wizard() -> AppState {
    let mut s = state();
    update(&mut s, Action::Provision(ProvisionKey::Open));
    event(
        &mut s,
        ProvisionUpdate::Sources {
            cluster: "lab".into(),
            provider: "lab-one".into(),
            result: Ok(templates()),
        },
    );
    s
}

fn plan(count: usize) -> ProvisionPlan {
    ProvisionPlan {
        cluster: "lab".into(),
        provider: "lab-one".into(),
        provider_kind: ProviderKind::Opennebula,
        endpoint: "http://127.0.0.1:2633/RPC2".into(),
        role: MachineRole::Worker,
        count,
        source: PlanSource::Template {
            id: 5,
            name: "talos-worker".into(),
        },
        machine_config: Some("/s/worker.yaml".into()),
        name_pattern: DEFAULT_NAME_PATTERN.into(),
        vm_names: (1..=count).map(|n| format!("lab-worker-{n}")).collect(),
        room: Default::default(),
    }
}

/// The wizard with a plan of `count` workers ready.
fn planned(count: usize) -> AppState {
    let mut s = wizard();
    for _ in 1..count {
        update(&mut s, Action::Provision(ProvisionKey::More));
    }
    let effects = update(&mut s, Action::Provision(ProvisionKey::MakePlan));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Provision(e)] if matches!(**e, ProvisionEffect::Plan { asked: 1, .. })
    ));
    answer_plan(&mut s, 1, plan(count), LAB_ENDPOINT);
    s
}

/// The plan asked for as `asked` answered with `plan`, its machine config joining `endpoint`.
fn answer_plan(s: &mut AppState, asked: u64, plan: ProvisionPlan, endpoint: &str) {
    event(
        s,
        ProvisionUpdate::Planned {
            cluster: "lab".into(),
            asked,
            result: Ok(Box::new(plan)),
            machine_config_endpoint: Some(endpoint.into()),
        },
    );
}

fn gated(effects: Vec<Effect>) -> MutatingAction {
    match effects.as_slice() {
        [Effect::Gate(a)] => a.clone(),
        other => panic!("expected a gate, got {other:?}"),
    }
}

fn approved_by_dispatcher(action: MutatingAction, typed: &str) -> ApprovedAction {
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("expected a confirmation");
    };
    match d.answer(pending, Answer::Typed(typed.into())) {
        Verdict::Proceed(a) => a,
        Verdict::Cancelled(m) => panic!("cancelled: {m}"),
    }
}

fn vm(id: u64, name: &str, lcm: &str, stage: ProvisionStage) -> VmProgress {
    VmProgress {
        id: Some(id),
        name: name.into(),
        state: if lcm == "LCM_INIT" {
            "PENDING"
        } else {
            "ACTIVE"
        }
        .into(),
        lcm_state: lcm.into(),
        ip: None,
        stage,
        reason: None,
    }
}

/// Two workers started through the dispatcher: the progress pane.
fn running() -> AppState {
    let mut s = planned(2);
    let action = gated(update(&mut s, Action::StartPlan));
    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    assert!(matches!(
        effects.as_slice(),
        [Effect::Provision(e)] if matches!(**e, ProvisionEffect::Start { .. })
    ));
    s
}

fn run_event(s: &mut AppState, e: ProvisionEvent) {
    event(
        s,
        ProvisionUpdate::Run {
            cluster: "lab".into(),
            provider: "lab-one".into(),
            role: "worker".into(),
            event: e,
        },
    );
}

#[test]
fn p_on_a_cluster_opens_the_wizard_with_the_clusters_provider_first() {
    let mut s = state();
    let p = KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE);
    let action = keymap::action_for(&s, &p).unwrap();
    assert!(matches!(action, Action::Provision(ProvisionKey::Open)));
    // p provisions and Space pauses, on every screen that has them.
    let space = KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE);
    assert!(matches!(
        keymap::action_for(&s, &space),
        Some(Action::TogglePause)
    ));
    let effects = update(&mut s, action);
    assert_eq!(s.screen, Screen::ProvisionWizard);
    let w = s.provision.wizard.as_ref().unwrap();
    assert_eq!(w.providers[0].name, "lab-one");
    assert_eq!(w.providers[1].name, "cloud-a");
    assert_eq!(w.sources, SourceList::Loading);
    assert!(matches!(
        effects.as_slice(),
        [Effect::Provision(e)] if matches!(&**e, ProvisionEffect::ListSources { provider, .. } if provider == "lab-one")
    ));
}

#[test]
fn provision_command_opens_it_too_and_no_providers_is_said() {
    let mut s = state();
    update(&mut s, Action::OpenCommandLine);
    for c in "provision".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::ProvisionWizard);

    let mut s = state();
    s.provision.config = Arc::new(Config::default());
    update(&mut s, Action::Provision(ProvisionKey::Open));
    assert_ne!(s.screen, Screen::ProvisionWizard);
    let m = s.message.unwrap();
    assert!(m.text.contains("no providers"), "{}", m.text);
}

#[test]
fn sources_select_the_configured_template_and_role_changes_it() {
    let mut s = wizard();
    let w = s.provision.wizard.as_ref().unwrap();
    assert_eq!(w.chosen_source().unwrap().name, "talos-worker");
    // A late answer for another provider changes nothing.
    event(
        &mut s,
        ProvisionUpdate::Sources {
            cluster: "lab".into(),
            provider: "cloud-a".into(),
            result: Err("refused".into()),
        },
    );
    assert!(matches!(
        s.provision.wizard.as_ref().unwrap().sources,
        SourceList::Ready(_)
    ));
    update(&mut s, Action::MoveDown);
    update(&mut s, Action::Provision(ProvisionKey::NextValue));
    let w = s.provision.wizard.as_ref().unwrap();
    assert_eq!(w.role, MachineRole::Controlplane);
    assert_eq!(
        w.chosen_source().unwrap().id,
        7,
        "controlplane: 7 in the config"
    );
    // The planner is handed the chosen template for the chosen role.
    update(&mut s, Action::MoveDown);
    update(&mut s, Action::Provision(ProvisionKey::PreviousValue));
    let w = s.provision.wizard.as_ref().unwrap();
    let config = w.planning_config(&s.provision.config);
    assert_eq!(
        config.clusters["lab"].templates.controlplane,
        Some(NameOrId::Id(5))
    );
}

#[test]
fn count_stays_in_bounds_and_a_provider_change_lists_again() {
    let mut s = wizard();
    update(&mut s, Action::Provision(ProvisionKey::Less));
    assert_eq!(s.provision.wizard.as_ref().unwrap().count, 1);
    for _ in 0..30 {
        update(&mut s, Action::Provision(ProvisionKey::More));
    }
    assert_eq!(s.provision.wizard.as_ref().unwrap().count, MAX_COUNT);
    update(&mut s, Action::MoveFirst);
    let effects = update(&mut s, Action::Provision(ProvisionKey::NextValue));
    let w = s.provision.wizard.as_ref().unwrap();
    assert_eq!(w.provider().unwrap().name, "cloud-a");
    assert_eq!(w.source_title(), "Service");
    assert_eq!(w.sources, SourceList::Loading);
    assert_eq!(effects.len(), 1);
}

#[test]
fn the_plan_answers_only_the_latest_question_and_edits_drop_it() {
    let mut s = wizard();
    update(&mut s, Action::Provision(ProvisionKey::MakePlan));
    update(&mut s, Action::Provision(ProvisionKey::MakePlan));
    answer_plan(&mut s, 1, plan(1), LAB_ENDPOINT);
    assert_eq!(
        s.provision.wizard.as_ref().unwrap().plan,
        AskedPlan::Planning(2)
    );
    let error = "/s/worker.yaml: machine.type is \"controlplane\", not worker";
    event(
        &mut s,
        ProvisionUpdate::Planned {
            cluster: "lab".into(),
            asked: 2,
            result: Err(error.into()),
            machine_config_endpoint: None,
        },
    );
    assert_eq!(
        s.provision.wizard.as_ref().unwrap().plan,
        AskedPlan::Failed(error.into())
    );
    assert!(update(&mut s, Action::StartPlan).is_empty());
    assert!(
        s.message
            .as_ref()
            .unwrap()
            .text
            .contains("Enter makes the plan")
    );

    let mut s = planned(2);
    update(&mut s, Action::Provision(ProvisionKey::More));
    assert_eq!(s.provision.wizard.as_ref().unwrap().plan, AskedPlan::None);
}

#[test]
fn name_pattern_is_typed_on_the_input_line() {
    let mut s = wizard();
    update(&mut s, Action::Provision(ProvisionKey::EditPattern));
    assert_eq!(s.input.as_ref().unwrap().kind, InputKind::NamePattern);
    for _ in 0..DEFAULT_NAME_PATTERN.len() {
        update(&mut s, Action::DeleteBack);
    }
    for c in "talos-{n}".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.provision.wizard.as_ref().unwrap().pattern, "talos-{n}");
}

#[test]
fn start_goes_through_the_dispatcher_and_opens_the_progress_pane() {
    let mut s = planned(2);
    let action = gated(update(&mut s, Action::StartPlan));
    assert_eq!(action, plan(2).action());

    // Read-only refuses in the dispatcher; a wrong name cancels.
    let dir = tempfile::tempdir().unwrap();
    let ro = Dispatcher::new(true, AuditLog::new(dir.path().join("a.log")));
    assert!(matches!(ro.request(action.clone()), Gate::Refused(m) if m.contains("read-only")));
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("b.log")));
    let Gate::Confirm(pending) = d.request(action.clone()) else {
        panic!("expected a confirmation");
    };
    assert!(matches!(
        d.answer(pending.clone(), Answer::Typed("la".into())),
        Verdict::Cancelled(_)
    ));
    assert!(matches!(
        d.answer(pending, Answer::Cancel),
        Verdict::Cancelled(_)
    ));

    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    let [Effect::Provision(e)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(&**e, ProvisionEffect::Start { plan, .. } if plan.count == 2));
    assert_eq!(s.screen, Screen::Provision);
    assert!(s.provision.views["lab"].running);
    assert!(s.provision.wizard.is_none());
}

#[test]
fn an_approval_for_a_changed_plan_is_not_run() {
    let mut s = planned(2);
    let action = gated(update(&mut s, Action::StartPlan));
    update(&mut s, Action::Provision(ProvisionKey::More));
    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    assert!(matches!(effects.as_slice(), [Effect::NotRun { .. }]));
    assert_eq!(s.screen, Screen::ProvisionWizard);
}

#[test]
fn runner_events_fold_into_rows_notes_and_the_outcome() {
    let mut s = running();
    s.wall_clock = Some(1_000);
    run_event(
        &mut s,
        ProvisionEvent::Vm(vm(5, "lab-worker-1", "LCM_INIT", ProvisionStage::Creating)),
    );
    run_event(
        &mut s,
        ProvisionEvent::Vm(vm(6, "lab-worker-2", "LCM_INIT", ProvisionStage::Creating)),
    );
    s.wall_clock = Some(1_030);
    let mut up = vm(5, "lab-worker-1", "RUNNING", ProvisionStage::Joined);
    up.ip = Some("127.10.0.9".into());
    run_event(&mut s, ProvisionEvent::Vm(up.clone()));
    run_event(&mut s, ProvisionEvent::Note("a note".into()));
    let view = &s.provision.views["lab"];
    assert_eq!(view.vms.len(), 2);
    assert_eq!(view.vms[0].progress, up);
    assert_eq!(view.vms[0].seen_unix, Some(1_000));
    assert_eq!(view.vms[0].final_unix, Some(1_030));
    assert_eq!(view.joined(), 1);
    assert!(
        view.notes
            .iter()
            .any(|n| n == "lab-worker-1: creating -> joined")
    );
    assert_eq!(view.notes.last().unwrap(), "a note");

    let summary = ProvisionSummary {
        cluster: "lab".into(),
        requested: 2,
        vms: vec![up],
        error: None,
    };
    run_event(&mut s, ProvisionEvent::Finished(summary));
    event(
        &mut s,
        ProvisionUpdate::Ended {
            cluster: "lab".into(),
            approved: None,
            result: Err("lab: 1 of 2 new node(s) joined".into()),
        },
    );
    let view = &s.provision.views["lab"];
    assert!(!view.running);
    assert_eq!(view.succeeded, Some(false));
    assert!(view.outcome.as_ref().unwrap().contains("1 of 2"));
}

#[test]
fn a_failed_vm_offers_terminate_through_the_dispatcher() {
    let mut s = running();
    let mut failed = vm(6, "lab-worker-2", "BOOT_FAILURE", ProvisionStage::Failed);
    failed.reason = Some("BOOT_FAILURE: the VM did not boot".into());
    run_event(
        &mut s,
        ProvisionEvent::Vm(vm(5, "lab-worker-1", "BOOT", ProvisionStage::Booting)),
    );
    run_event(&mut s, ProvisionEvent::Vm(failed));
    // The booting one is not offered.
    assert!(update(&mut s, Action::Provision(ProvisionKey::Terminate)).is_empty());
    assert!(
        s.message
            .as_ref()
            .unwrap()
            .text
            .contains("only a failed VM")
    );
    update(&mut s, Action::MoveDown);
    let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    let action = keymap::action_for(&s, &x).unwrap();
    let terminate = gated(update(&mut s, action));
    assert_eq!(
        terminate,
        MutatingAction::TerminateVm {
            cluster: "lab".into(),
            provider: "lab-one".into(),
            vm: "6".into(),
        }
    );
    let approved = approved_by_dispatcher(terminate, "lab");
    let effects = update(&mut s, Action::Approved(approved.clone()));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Provision(e)] if matches!(&**e, ProvisionEffect::Terminate { cluster, .. } if cluster == "lab")
    ));
    let mut gone = vm(6, "lab-worker-2", "SHUTDOWN", ProvisionStage::Terminated);
    gone.reason = Some("terminated".into());
    event(
        &mut s,
        ProvisionUpdate::Terminated {
            cluster: "lab".into(),
            approved,
            result: Ok(gone),
        },
    );
    let row: &VmRow = &s.provision.views["lab"].vms[1];
    assert_eq!(row.progress.stage, ProvisionStage::Terminated);
    assert_eq!(row.role, "worker");
}

/// A failed VM terminated, then a new run of one that joins: the tally counts the new run as
/// its summary does (`1 of 1`, not `1 of 2`), and the terminated VM gives up the selection.
#[test]
fn a_terminated_vm_leaves_the_tally_and_the_selection() {
    let mut view = crate::app::provision::ProvisionView::new("prod", "prod", "1 worker".into(), 1);
    let mut failed = vm(6, "prod-worker-1", "BOOT_FAILURE", ProvisionStage::Failed);
    failed.reason = Some("BOOT_FAILURE: the VM did not boot".into());
    view.fold_vm("lab-one", "worker", failed, None);
    assert_eq!(view.selected.as_deref(), Some("prod-worker-1"));
    let mut gone = vm(6, "prod-worker-1", "SHUTDOWN", ProvisionStage::Terminated);
    gone.reason = Some("terminated at the request of the operator".into());
    view.fold_vm("lab-one", "worker", gone, None);
    assert_eq!((view.joined(), view.total()), (0, 1));

    view.start_run("1 worker".into(), 1);
    let joined = vm(7, "prod-worker-2", "RUNNING", ProvisionStage::Joined);
    view.fold_vm(
        "lab-one",
        "worker",
        vm(7, "prod-worker-2", "LCM_INIT", ProvisionStage::Creating),
        None,
    );
    assert_eq!(
        view.selected.as_deref(),
        Some("prod-worker-2"),
        "the terminated VM is not kept selected"
    );
    view.fold_vm("lab-one", "worker", joined.clone(), None);
    assert_eq!((view.joined(), view.total()), (1, 1));
    let summary = ProvisionSummary {
        cluster: "prod".into(),
        requested: 1,
        vms: vec![joined],
        error: None,
    };
    assert!(
        summary
            .line()
            .starts_with("prod: 1 of 1 new node(s) joined")
    );

    // In one run of two: the selected VM terminated hands the selection to the one left.
    let mut view = crate::app::provision::ProvisionView::new("prod", "prod", "2 workers".into(), 2);
    view.fold_vm(
        "lab-one",
        "worker",
        vm(8, "prod-worker-3", "BOOT", ProvisionStage::Booting),
        None,
    );
    view.fold_vm(
        "lab-one",
        "worker",
        vm(9, "prod-worker-4", "BOOT_FAILURE", ProvisionStage::Failed),
        None,
    );
    view.selected = Some("prod-worker-4".into());
    view.fold_vm(
        "lab-one",
        "worker",
        vm(9, "prod-worker-4", "SHUTDOWN", ProvisionStage::Terminated),
        None,
    );
    assert_eq!(view.selected.as_deref(), Some("prod-worker-3"));
    assert_eq!((view.joined(), view.total()), (0, 2));
}

#[test]
fn a_journal_at_startup_shows_its_vms_and_says_when_they_are_followed() {
    let mut s = state();
    let entry = |id, stage| JournalEntry {
        provider: "lab-one".into(),
        endpoint: "http://127.0.0.1:2633/RPC2".into(),
        role: "worker".into(),
        started: "2026-01-01T00:00:00Z".into(),
        progress: vm(id, &format!("lab-worker-{id}"), "BOOT", stage),
    };
    event(
        &mut s,
        ProvisionUpdate::Journal {
            cluster: "lab".into(),
            key: "lab".into(),
            entries: vec![
                entry(1, ProvisionStage::Joined),
                entry(2, ProvisionStage::Booting),
            ],
            following: true,
        },
    );
    let view = &s.provision.views["lab"];
    assert!(view.running);
    assert_eq!(view.unfinished().len(), 1);
    assert!(s.message.as_ref().unwrap().text.contains(":provisions"));
    update(&mut s, Action::OpenCommandLine);
    for c in "provisions".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Provision);
    // While it is followed, p shows it rather than a new wizard.
    update(&mut s, Action::Provision(ProvisionKey::Open));
    assert_eq!(s.screen, Screen::Provision);
    assert!(s.provision.wizard.is_none());
}

#[path = "update_provision_guards_tests.rs"]
mod guards;

/// Issue 16 item 1: the notes are a log that scrolls. Tab gives them the move
/// keys (the footer offers it), k/g/PgUp leave the newest line, and Tab again
/// hands j/k back to the VMs.
#[test]
fn tab_gives_the_move_keys_to_the_notes_and_back() {
    let mut s = running();
    run_event(
        &mut s,
        ProvisionEvent::Vm(vm(41, "lab-worker-1", "LCM_INIT", ProvisionStage::Creating)),
    );
    run_event(
        &mut s,
        ProvisionEvent::Vm(vm(42, "lab-worker-2", "LCM_INIT", ProvisionStage::Creating)),
    );
    for i in 0..30 {
        run_event(&mut s, ProvisionEvent::Note(format!("note {i:02}")));
    }
    let press = |s: &mut AppState, code: KeyCode| {
        let action = keymap::action_for(s, &KeyEvent::new(code, KeyModifiers::NONE));
        update(s, action.expect("the key is bound on the progress pane"));
    };
    assert!(
        keymap::footer_hints(&s)
            .iter()
            .any(|(_, label)| *label == "focus")
    );
    let view = |s: &AppState| s.provision.views["lab"].clone();
    let notes = view(&s).notes.len();
    assert!(notes >= 30, "{notes}");
    assert_eq!(view(&s).notes_scroll.at(notes, notes - 1), notes - 1);

    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Char('k'));
    assert_eq!(view(&s).notes_scroll.at(notes, notes - 1), notes - 2);
    press(&mut s, KeyCode::Char('g'));
    assert_eq!(view(&s).notes_scroll.at(notes, notes - 1), 0);
    press(&mut s, KeyCode::PageDown);
    assert_eq!(view(&s).notes_scroll.at(notes, notes - 1), 5);
    // The VM selection did not move while the notes had the keys.
    assert_eq!(view(&s).selected.as_deref(), Some("lab-worker-1"));

    press(&mut s, KeyCode::Tab);
    press(&mut s, KeyCode::Char('j'));
    assert_eq!(view(&s).selected.as_deref(), Some("lab-worker-2"));
    assert_eq!(view(&s).notes_scroll.at(notes, notes - 1), 5);
}
