//! Unit tests of the provision wizard and its run: opening from a cluster, the fields, the
//! plan asked for and answered, Start through the dispatcher (confirm, cancel, read-only) onto
//! the one runner, the runner's events folded into the one progress, a failed VM offering
//! terminate, and a journal's unfinished VMs followed at startup.
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::actions::ActionRun;
use crate::app::keymap;
use crate::app::plan_screen::{AskedPlan, PlanHolder};
use crate::app::provision::JournalVms;
use crate::app::screen::{Pane, Screen, TableKind};
use crate::app::screens::ScreenNews;
use crate::app::state::{AppState, InputKind, Overlay};
use crate::app::test_fixtures::{console_of, discovered, press};
use crate::app::update::update;
use crate::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use crate::config::{Config, NameOrId, ProviderKind};
use crate::fleet::{EtcdReport, FleetEvent, Quorum};
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::operation::runner_events::ProvisionSteps;
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::provision::{
    MAX_COUNT, PlanSource, ProvisionEvent, ProvisionPlan, ProvisionStage, VmProgress,
};
use crate::views::plan::ACK_PROMPT;

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

fn event(s: &mut AppState, u: JournalVms) -> Vec<Effect> {
    update(
        s,
        Action::Event(crate::app::actions::ProgressNews::Provisions(Box::new(u)).told()),
    )
}

/// What the wizard's IO tasks tell it.
fn news(s: &mut AppState, news: ProvisionNews) -> Vec<Effect> {
    update(
        s,
        Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
    )
}

fn screen_of(s: &AppState) -> &ProvisionScreen {
    s.screens.find::<ProvisionScreen>().unwrap()
}

fn wizard_of(s: &AppState) -> &PlanHolder<Wizard> {
    screen_of(s).plan.as_ref().unwrap()
}

/// The wizard's task among `effects`.
fn task_of(effects: &[Effect]) -> Option<&ProvisionTask> {
    match effects {
        [Effect::Screen(task)] => task.get::<ProvisionTask>(),
        _ => None,
    }
}

/// The wizard open, the templates listed.
fn wizard() -> AppState {
    let mut s = state();
    update(&mut s, Action::Open("provision"));
    news(
        &mut s,
        ProvisionNews::Sources {
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
        press(&mut s, KeyCode::Char('+'));
    }
    let effects = press(&mut s, KeyCode::Enter);
    assert!(matches!(
        task_of(&effects),
        Some(ProvisionTask::Plan { asked: 1, .. })
    ));
    answer_plan(&mut s, 1, plan(count), LAB_ENDPOINT);
    s
}

/// The plan asked for as `asked` answered with `plan`, its machine config joining `endpoint`.
fn answer_plan(s: &mut AppState, asked: u64, plan: ProvisionPlan, endpoint: &str) {
    news(
        s,
        ProvisionNews::Planned {
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

/// Two workers started through the dispatcher: the progress on the one progress screen.
fn running() -> AppState {
    let mut s = planned(2);
    let action = gated(press(&mut s, KeyCode::Char('s')));
    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    assert!(matches!(
        effects.as_slice(),
        [Effect::RunAction { run, .. }] if matches!(**run, ActionRun::Provision(_))
    ));
    s
}

/// The runner's event as the console's one runner tells it (`steps` keeps the VMs' order).
fn told(s: &mut AppState, steps: &mut ProvisionSteps, e: ProvisionEvent) {
    for event in steps.events(&e) {
        update(
            s,
            Action::Event(crate::app::action::progress(
                OperationKind::Provision,
                event,
            )),
        );
    }
}

fn lab_steps() -> ProvisionSteps {
    ProvisionSteps::new("lab", "lab-one", plan(2).vm_names)
}

#[test]
fn p_on_a_cluster_opens_the_wizard_with_the_clusters_provider_first() {
    let mut s = state();
    let p = KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE);
    let action = keymap::action_for(&s, &p).unwrap();
    assert!(matches!(action, Action::Open("provision")));
    // p provisions and Space pauses, on every screen that has them.
    let space = KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE);
    assert!(matches!(
        keymap::action_for(&s, &space),
        Some(Action::TogglePause)
    ));
    let effects = update(&mut s, action);
    assert_eq!(s.screen, Screen::Module(NAME));
    let w = wizard_of(&s);
    assert_eq!(w.providers[0].name, "lab-one");
    assert_eq!(w.providers[1].name, "cloud-a");
    assert_eq!(w.sources, SourceList::Loading);
    assert!(matches!(
        task_of(&effects),
        Some(ProvisionTask::ListSources { provider, .. }) if provider == "lab-one"
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
    assert_eq!(s.screen, Screen::Module(NAME));

    let mut s = state();
    s.provision.config = Arc::new(Config::default());
    update(&mut s, Action::Open("provision"));
    assert_ne!(s.screen, Screen::Module(NAME));
    let m = s.message.unwrap();
    assert!(m.text.contains("no providers"), "{}", m.text);
}

#[test]
fn provision_command_on_the_fleet_is_for_the_cluster_selected_there() {
    let mut s = console_of(vec![discovered("edge"), discovered("lab")]);
    s.provision.config = Arc::new(Config::parse(Path::new("/c/taloscope.yaml"), CONFIG).unwrap());
    s.screen = Screen::Fleet;
    s.select(TableKind::Fleet, "lab");
    s.select(TableKind::Clusters, "edge");
    update(&mut s, Action::Open("provision"));
    assert_eq!(s.screen, Screen::Module(NAME));
    assert_eq!(s.current.as_deref(), Some("lab"));
}

#[test]
fn sources_select_the_configured_template_and_role_changes_it() {
    let mut s = wizard();
    let w = wizard_of(&s);
    assert_eq!(w.chosen_source().unwrap().name, "talos-worker");
    // A late answer for another provider changes nothing.
    news(
        &mut s,
        ProvisionNews::Sources {
            cluster: "lab".into(),
            provider: "cloud-a".into(),
            result: Err("refused".into()),
        },
    );
    assert!(matches!(wizard_of(&s).sources, SourceList::Ready(_)));
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Char('l'));
    let w = wizard_of(&s);
    assert_eq!(w.role, MachineRole::Controlplane);
    assert_eq!(
        w.chosen_source().unwrap().id,
        7,
        "controlplane: 7 in the config"
    );
    // The planner is handed the chosen template for the chosen role.
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Char('h'));
    let w = wizard_of(&s);
    let config = w.planning_config(&s.provision.config);
    assert_eq!(
        config.clusters["lab"].templates.controlplane,
        Some(NameOrId::Id(5))
    );
}

#[test]
fn count_stays_in_bounds_and_a_provider_change_lists_again() {
    let mut s = wizard();
    press(&mut s, KeyCode::Char('-'));
    assert_eq!(wizard_of(&s).count, 1);
    for _ in 0..MAX_COUNT + 10 {
        press(&mut s, KeyCode::Char('+'));
    }
    assert_eq!(wizard_of(&s).count, MAX_COUNT);
    press(&mut s, KeyCode::Char('g'));
    let effects = press(&mut s, KeyCode::Char('l'));
    let w = wizard_of(&s);
    assert_eq!(w.provider().unwrap().name, "cloud-a");
    assert_eq!(w.source_title(), "Service");
    assert_eq!(w.sources, SourceList::Loading);
    assert_eq!(effects.len(), 1);
}

#[test]
fn the_plan_answers_only_the_latest_question_and_edits_drop_it() {
    let mut s = wizard();
    press(&mut s, KeyCode::Enter);
    press(&mut s, KeyCode::Enter);
    answer_plan(&mut s, 1, plan(1), LAB_ENDPOINT);
    assert_eq!(wizard_of(&s).form.plan, AskedPlan::Planning(2));
    let error = "/s/worker.yaml: machine.type is \"controlplane\", not worker";
    news(
        &mut s,
        ProvisionNews::Planned {
            cluster: "lab".into(),
            asked: 2,
            result: Err(error.into()),
            machine_config_endpoint: None,
        },
    );
    assert_eq!(wizard_of(&s).form.plan, AskedPlan::Failed(error.into()));
    assert!(press(&mut s, KeyCode::Char('s')).is_empty());
    assert!(
        s.message
            .as_ref()
            .unwrap()
            .text
            .contains("Enter makes the plan")
    );

    let mut s = planned(2);
    press(&mut s, KeyCode::Char('+'));
    assert_eq!(wizard_of(&s).form.plan, AskedPlan::None);
}

#[test]
fn name_pattern_is_typed_on_the_input_line() {
    let mut s = wizard();
    press(&mut s, KeyCode::Char('n'));
    assert_eq!(s.input.as_ref().unwrap().kind, InputKind::Screen("names> "));
    for _ in 0..DEFAULT_NAME_PATTERN.len() {
        update(&mut s, Action::DeleteBack);
    }
    for c in "talos-{n}".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(wizard_of(&s).pattern, "talos-{n}");
}

#[test]
fn start_goes_through_the_dispatcher_and_opens_the_progress_pane() {
    let mut s = planned(2);
    let action = gated(press(&mut s, KeyCode::Char('s')));
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
    let [Effect::RunAction { run, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(matches!(&**run, ActionRun::Provision(plan) if plan.count == 2));
    assert_eq!(s.screen, Screen::Module("progress"));
    assert_eq!(keymap::context(&s), keymap::KeyContext::Screen("progress"));
    let progress = s.progress().unwrap();
    assert!(progress.running() && progress.kind == OperationKind::Provision);
    assert_eq!(
        progress.headline,
        "Provision of lab, 2 worker node(s) via lab-one"
    );
    let vms: Vec<&str> = progress.steps.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(vms, ["lab-worker-1", "lab-worker-2"]);
    assert!(screen_of(&s).plan.is_none());
    // While it runs, p shows it rather than a new wizard, and quitting asks first.
    s.screen = Screen::Cluster(Pane::Nodes);
    update(&mut s, Action::Open("provision"));
    assert_eq!(s.screen, Screen::Module("progress"));
    assert!(screen_of(&s).plan.is_none());
    update(&mut s, Action::Quit);
    let question = s.quit_question.clone().unwrap();
    assert!(question.contains("a provision"), "{question}");
    // Its end arriving before the answer leaves the question on the message line.
    let end = ProgressEvent::Finished(Ok("lab: 2 of 2 new node(s) joined".into()));
    update(
        &mut s,
        Action::Event(crate::app::action::progress(OperationKind::Provision, end)),
    );
    assert_eq!(s.message.as_ref().unwrap().text, question);
}

#[test]
fn an_approval_for_a_changed_plan_is_not_run() {
    let mut s = planned(2);
    let action = gated(press(&mut s, KeyCode::Char('s')));
    press(&mut s, KeyCode::Char('+'));
    let effects = update(
        &mut s,
        Action::Approved(approved_by_dispatcher(action, "lab")),
    );
    assert!(matches!(effects.as_slice(), [Effect::NotRun { .. }]));
    assert_eq!(s.screen, Screen::Module(NAME));
}

#[test]
fn runner_events_fold_into_the_vms_steps_and_the_outcome() {
    let mut s = running();
    let mut steps = lab_steps();
    let creating = |id, n| {
        vm(
            id,
            &format!("lab-worker-{n}"),
            "LCM_INIT",
            ProvisionStage::Creating,
        )
    };
    told(&mut s, &mut steps, ProvisionEvent::Vm(creating(5, 1)));
    told(&mut s, &mut steps, ProvisionEvent::Vm(creating(6, 2)));
    let mut up = vm(5, "lab-worker-1", "RUNNING", ProvisionStage::Joined);
    up.ip = Some("127.10.0.9".into());
    told(&mut s, &mut steps, ProvisionEvent::Vm(up));
    told(&mut s, &mut steps, ProvisionEvent::Note("a note".into()));
    let progress = s.progress().unwrap();
    assert_eq!(progress.steps_done(), 1);
    assert_eq!(
        progress.steps[0].state.detail(),
        "joined (ACTIVE/RUNNING) 127.10.0.9"
    );
    assert_eq!(progress.steps[1].state.word(), "running");
    assert!(
        progress
            .lines
            .iter()
            .any(|l| l.ends_with("vm 5 lab-worker-1: joined (ACTIVE/RUNNING) ip 127.10.0.9"))
    );
    assert!(progress.lines.back().unwrap().ends_with("a note"));
    let end = ProgressEvent::Finished(Err("lab: 1 of 2 new node(s) joined".into()));
    update(
        &mut s,
        Action::Event(crate::app::action::progress(OperationKind::Provision, end)),
    );
    assert!(!s.progress().unwrap().running());
    assert!(s.message.as_ref().unwrap().text.contains("1 of 2"));
}

#[test]
fn a_failed_vm_offers_terminate_through_the_dispatcher() {
    let mut s = running();
    let mut steps = lab_steps();
    let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    let offered = |s: &AppState| {
        keymap::footer_hints(s)
            .iter()
            .any(|(_, l)| *l == "terminate")
    };
    told(
        &mut s,
        &mut steps,
        ProvisionEvent::Vm(vm(5, "lab-worker-1", "BOOT", ProvisionStage::Booting)),
    );
    // A booting VM is not offered.
    assert!(!offered(&s));
    let take = keymap::action_for(&s, &x).unwrap();
    assert!(update(&mut s, take.clone()).is_empty());
    assert_eq!(s.message.as_ref().unwrap().text, "nothing is offered here");
    let mut failed = vm(6, "lab-worker-2", "BOOT_FAILURE", ProvisionStage::Failed);
    failed.reason = Some("BOOT_FAILURE: the VM did not boot".into());
    told(&mut s, &mut steps, ProvisionEvent::Vm(failed));
    assert!(offered(&s));
    let terminate = gated(update(&mut s, take));
    assert_eq!(
        terminate,
        MutatingAction::TerminateVm {
            cluster: "lab".into(),
            provider: "lab-one".into(),
            vm: "6".into(),
        }
    );
    let approved = approved_by_dispatcher(terminate, "lab");
    let effects = update(&mut s, Action::Approved(approved));
    assert!(matches!(
        effects.as_slice(),
        [Effect::RunAction { run, .. }] if matches!(**run, ActionRun::TerminateVm)
    ));
    let progress = s.progress().unwrap();
    assert_eq!(progress.kind, OperationKind::Terminate);
    assert_eq!(s.screen, Screen::Module("progress"));
}

#[test]
fn a_journals_unfinished_vms_are_followed_on_the_progress_screen() {
    let mut s = state();
    let entry = |id, stage| {
        let progress = vm(id, &format!("lab-worker-{id}"), "BOOT", stage);
        let entry = crate::provision::JournalEntry {
            provider: "lab-one".into(),
            endpoint: "http://127.0.0.1:2633/RPC2".into(),
            role: "worker".into(),
            started: "2026-01-01T00:00:00Z".into(),
            progress,
        };
        ("lab".to_string(), entry)
    };
    event(
        &mut s,
        JournalVms {
            clusters: vec!["lab".into()],
            vms: vec![
                entry(1, ProvisionStage::Failed),
                entry(2, ProvisionStage::Booting),
            ],
        },
    );
    let progress = s.progress().unwrap();
    assert!(progress.running() && progress.kind == OperationKind::Provision);
    let states: Vec<&str> = progress.steps.iter().map(|r| r.state.word()).collect();
    assert_eq!(states, ["FAILED", "running"]);
    assert_eq!(progress.offers.len(), 1, "the failed one's terminate");
    assert!(s.message.as_ref().unwrap().text.contains(":provisions"));
    update(&mut s, Action::OpenCommandLine);
    for c in "provisions".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Module("progress"));
    let names = vec!["lab-worker-1".into(), "lab-worker-2".into()];
    let mut steps = ProvisionSteps::new("lab", "lab-one", names);
    let joined = vm(2, "lab-worker-2", "RUNNING", ProvisionStage::Joined);
    told(&mut s, &mut steps, ProvisionEvent::Vm(joined));
    assert_eq!(s.progress().unwrap().steps_done(), 1);
}

/// A journal with only a failed VM left: its progress has ended, offering the terminate.
#[test]
fn a_journals_failed_vm_offers_its_terminate() {
    let mut s = state();
    let entry = crate::provision::JournalEntry {
        provider: "lab-one".into(),
        endpoint: "http://127.0.0.1:2633/RPC2".into(),
        role: "worker".into(),
        started: "2026-01-01T00:00:00Z".into(),
        progress: vm(7, "lab-worker-7", "BOOT_FAILURE", ProvisionStage::Failed),
    };
    let vms = vec![("lab".to_string(), entry)];
    event(
        &mut s,
        JournalVms {
            clusters: vec!["lab".into()],
            vms,
        },
    );
    let progress = s.progress().unwrap();
    assert!(!progress.running());
    let offer = &progress.offers[0];
    assert_eq!(
        offer.action,
        MutatingAction::TerminateVm {
            cluster: "lab".into(),
            provider: "lab-one".into(),
            vm: "7".into(),
        }
    );
}

#[path = "guards_tests.rs"]
mod guards;
