use std::path::Path;
use std::sync::Arc;

use crossterm::event::KeyCode;

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::actions::ActionRun;
use crate::app::message::Level;
use crate::app::plan_screen::{AskedPlan, PlanHolder};
use crate::app::screen::Screen;
use crate::app::state::{AppState, InputKind, Overlay};
use crate::app::test_fixtures::{console_of, discovered, press};
use crate::app::update::update;
use crate::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use crate::cluster_lifecycle::guards::tests::plan;
use crate::cluster_lifecycle::{
    CreateFacts, CreatePhase, CreatePlan, Delivery, EndpointChoice, LifecycleEvent,
    MAX_CONTROLPLANES, PhaseState, RunSummary, UnfinishedCreate, context_names, create_guards,
};
use crate::config::Config;
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::operation::runner_events;

const CONFIG: &str = "
providers:
  one:
    kind: opennebula
    endpoint: http://127.0.0.1:2633/RPC2
  flow:
    kind: oneflow
    endpoint: http://127.0.0.1:2474
";

fn key(state: &mut AppState, c: char) -> Vec<Effect> {
    press(state, KeyCode::Char(c))
}

fn act(state: &mut AppState, a: Action) -> Vec<Effect> {
    update(state, a)
}

fn event(state: &mut AppState, news: CreateNews) -> Vec<Effect> {
    let news = crate::app::screens::ScreenNews::new(NAME, news);
    act(state, Action::Event(AppEvent::Screen(news)))
}

fn screen(state: &AppState) -> &CreateScreen {
    state.screens.find().expect("the create screen")
}

fn wizard_of(state: &mut AppState) -> &mut PlanHolder<CreateWizard> {
    let screen: &mut CreateScreen = state.screens.find_mut().expect("the create screen");
    screen.plan.as_mut().expect("the wizard")
}

/// The create task an effect asks for.
fn task_of(effect: &Effect) -> Option<&CreateTask> {
    match effect {
        Effect::Screen(task) => task.get(),
        _ => None,
    }
}

/// The fleet with one cluster, `healthy`, and the wizard opened with `n`.
fn wizard() -> AppState {
    let mut s = console_of(vec![discovered("healthy")]);
    s.provision.config =
        Arc::new(Config::parse(Path::new("/t/taloscope.yaml"), CONFIG).expect("config"));
    let effects = key(&mut s, 'n');
    assert!(
        matches!(effects.as_slice(), [e] if matches!(task_of(e), Some(CreateTask::ReadUnfinished))),
        "{effects:?}"
    );
    assert_eq!(s.screen, Screen::Module(NAME));
    s
}

fn type_field(s: &mut AppState, field: CreateField, text: &str) {
    wizard_of(s).form.field = field;
    key(s, 'e');
    assert_eq!(
        s.input.as_ref().map(|l| l.kind),
        Some(InputKind::Screen("value> "))
    );
    s.input.as_mut().unwrap().text = text.into();
    act(s, Action::Submit);
}

/// The plan of `cps` control planes named lab, with the guards the CLI evaluates over the
/// console's clusters.
fn planned(s: &mut AppState, cps: usize) -> CreatePlan {
    let effects = press(s, KeyCode::Enter);
    let Some(CreateTask::Plan { asked, .. }) = effects.first().and_then(task_of) else {
        panic!("{effects:?}");
    };
    let asked = *asked;
    let p = plan(
        cps,
        Delivery::Maintenance,
        EndpointChoice::FirstControlPlane,
    );
    let (talos, kube) = context_names(&s.clusters);
    let guards = create_guards(&CreateFacts {
        plan: &p,
        talos_contexts: &talos,
        kube_contexts: &kube,
    });
    let result = Ok((Box::new(p.clone()), guards));
    event(s, CreateNews::Planned { asked, result });
    p
}

fn approved_by_dispatcher(action: MutatingAction, name: &str) -> ApprovedAction {
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("expected a confirmation");
    };
    let Verdict::Proceed(approved) = d.answer(pending, Answer::Typed(name.into())) else {
        panic!("the typed name matched");
    };
    approved
}

#[test]
fn the_wizard_starts_from_the_cli_defaults_and_its_fields_make_the_cli_request() {
    let mut s = wizard();
    let w = wizard_of(&mut s);
    assert_eq!((w.controlplanes, w.workers), (3, 2));
    assert_eq!(w.provider(), Some("flow"));
    assert_eq!(
        w.talos,
        crate::cluster_lifecycle::offered_talos_releases()[0]
    );
    assert_eq!(w.request().kubernetes, None, "the CLI's default Kubernetes");
    type_field(&mut s, CreateField::Name, " lab ");
    type_field(
        &mut s,
        CreateField::Patches,
        "all.yaml, cp:cp.yaml, worker:w.yaml",
    );
    type_field(&mut s, CreateField::Endpoint, "10.0.0.5");
    wizard_of(&mut s).form.field = CreateField::Provider;
    key(&mut s, 'l');
    wizard_of(&mut s).form.field = CreateField::Delivery;
    key(&mut s, 'l');
    wizard_of(&mut s).form.field = CreateField::ControlPlanes;
    for _ in 0..20 {
        key(&mut s, '+');
    }
    wizard_of(&mut s).form.field = CreateField::Workers;
    for _ in 0..5 {
        key(&mut s, '-');
    }
    let r = wizard_of(&mut s).request();
    assert_eq!(r.cluster, "lab");
    assert_eq!(r.provider, "one");
    assert_eq!((r.controlplanes, r.workers), (MAX_CONTROLPLANES, 0));
    assert_eq!(r.delivery, Delivery::UserData);
    assert_eq!(r.endpoint.as_deref(), Some("10.0.0.5"));
    assert_eq!(r.patches.all, [Path::new("all.yaml")]);
    assert_eq!(r.patches.controlplane, [Path::new("cp.yaml")]);
    assert_eq!(r.patches.worker, [Path::new("w.yaml")]);
    assert_eq!(patch_files(&patch_text(&r.patches)), r.patches);
}

#[test]
fn an_unfinished_create_fills_the_wizard_so_its_run_resumes() {
    let mut s = wizard();
    let old = plan(
        3,
        Delivery::UserData,
        EndpointChoice::Given("10.0.0.9".into()),
    );
    let u = UnfinishedCreate {
        cluster: "lab".into(),
        reached: Some(CreatePhase::Booted),
        request: crate::cluster_lifecycle::CreateRequest::from_plan(&old),
    };
    event(
        &mut s,
        CreateNews::Unfinished {
            found: vec![u.clone()],
            errors: vec![],
        },
    );
    let w = wizard_of(&mut s);
    assert_eq!(w.name, "lab");
    assert_eq!(w.delivery, Delivery::UserData);
    assert_eq!(w.endpoint, "10.0.0.9");
    assert_eq!(w.resuming.as_ref(), Some(&u));
    assert_eq!(s.message.as_ref().map(|m| m.level), Some(Level::Warn));
    // Another name starts afresh; typing the stopped one's name takes its request again.
    type_field(&mut s, CreateField::Name, "other");
    assert_eq!(wizard_of(&mut s).resuming, None);
    wizard_of(&mut s).delivery = Delivery::Maintenance;
    type_field(&mut s, CreateField::Name, "lab");
    let w = wizard_of(&mut s);
    assert_eq!(
        (w.resuming.as_ref(), w.delivery),
        (Some(&u), Delivery::UserData)
    );
}

#[test]
fn an_even_count_needs_its_acknowledgement_before_start_goes_to_the_dispatcher() {
    let mut s = wizard();
    type_field(&mut s, CreateField::Name, "lab");
    let p = planned(&mut s, 2);
    assert!(wizard_of(&mut s).on_guards, "the plan shows");
    let w = wizard_of(&mut s);
    assert_eq!(
        w.guards.shown[0].verdict,
        crate::guards::Verdict::Warn,
        "worst first"
    );
    let effects = key(&mut s, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    let refused = s.message.clone().unwrap();
    assert!(refused.text.contains("acknowledgement"), "{refused:?}");
    key(&mut s, '?');
    assert!(matches!(&s.overlay, Some(Overlay::Explain { text, .. }) if text.contains("warn")));
    press(&mut s, KeyCode::Esc);
    key(&mut s, 'a');
    assert_eq!(
        s.input.as_ref().map(|l| l.kind),
        Some(InputKind::Screen("acknowledge> "))
    );
    s.input.as_mut().unwrap().text = crate::provision::guards::EVEN_MEMBERS_ACK.into();
    act(&mut s, Action::Submit);
    let effects = key(&mut s, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Gate(a)] if *a == p.action()),
        "{effects:?}"
    );
    // A field changed after the plan: the plan and its acknowledgement are gone.
    press(&mut s, KeyCode::Esc);
    wizard_of(&mut s).form.field = CreateField::ControlPlanes;
    key(&mut s, '+');
    assert!(wizard_of(&mut s).guards.acks.is_empty());
    assert_eq!(wizard_of(&mut s).form.plan, AskedPlan::None);
}

#[test]
fn a_failing_name_guard_refuses_start() {
    let mut s = console_of(vec![discovered("lab")]);
    s.provision.config =
        Arc::new(Config::parse(Path::new("/t/taloscope.yaml"), CONFIG).expect("config"));
    key(&mut s, 'n');
    planned(&mut s, 3);
    let effects = key(&mut s, 's');
    assert!(
        matches!(effects.as_slice(), [Effect::Refuse { .. }]),
        "audited: {effects:?}"
    );
    assert!(s.message.unwrap().text.contains("name free"));
}

#[test]
fn the_approved_plan_runs_its_progress_folds_and_success_reloads_the_fleet() {
    let mut s = wizard();
    let p = planned(&mut s, 3);
    let stale = approved_by_dispatcher(
        MutatingAction::CreateCluster {
            cluster: "lab".into(),
            provider: "one".into(),
            controlplanes: 5,
            workers: 2,
            talos: "v1.11.3".into(),
        },
        "lab",
    );
    let effects = act(&mut s, Action::Approved(stale));
    assert!(
        matches!(effects.as_slice(), [Effect::NotRun { .. }]),
        "{effects:?}"
    );
    let effects = act(
        &mut s,
        Action::Approved(approved_by_dispatcher(p.action(), "lab")),
    );
    assert!(
        matches!(effects.as_slice(), [Effect::RunAction { run, .. }] if matches!(**run, ActionRun::Create(_))),
        "{effects:?}"
    );
    assert_eq!(
        s.screen,
        Screen::Module("progress"),
        "the one progress screen"
    );
    assert!(screen(&s).plan.is_none(), "the wizard closed");
    assert!(s.operation_running());
    // The runner's events at `at`, as the console's runner tells them.
    let run = |s: &mut AppState, events: Vec<ProgressEvent>, at| {
        act(s, Action::Event(AppEvent::Tick(at)));
        let progress = |e| {
            act(
                s,
                Action::Event(crate::app::action::progress(OperationKind::Create, e)),
            )
        };
        events.into_iter().flat_map(progress).collect::<Vec<_>>()
    };
    let phase = |phase, state| runner_events::lifecycle(&LifecycleEvent::Phase { phase, state });
    run(
        &mut s,
        phase(CreatePhase::Vms, PhaseState::Waiting("asking".into())),
        100,
    );
    run(
        &mut s,
        phase(CreatePhase::Vms, PhaseState::Done("VM ids 1, 2".into())),
        107,
    );
    let row = &s.progress().unwrap().steps[0];
    assert_eq!((row.started, row.ended), (Some(100), Some(107)));
    // A fingerprint question: y confirms it to the run.
    let ask = runner_events::fingerprint_question(1, "lab-controlplane-1", "127.0.0.1", "ab:cd");
    run(&mut s, vec![ask], 108);
    let effects = key(&mut s, 'y');
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::AnswerAction {
                id: 1,
                trust: true,
                ..
            }]
        ),
        "{effects:?}"
    );
    assert!(key(&mut s, 'y').is_empty(), "answered once");
    let summary = RunSummary {
        cluster: "lab".into(),
        what: "create".into(),
        reached: Some(CreatePhase::ContextsWritten),
        error: None,
    };
    let mut told = runner_events::lifecycle(&LifecycleEvent::Finished { summary });
    told.push(ProgressEvent::Finished(runner_events::create_end(
        "lab",
        Ok(()),
    )));
    let effects = run(&mut s, told, 200);
    assert!(
        matches!(effects.as_slice(), [Effect::ReloadDiscovery]),
        "{effects:?}"
    );
    let p = s.progress().unwrap();
    assert!(!p.running());
    assert!(
        matches!(&p.outcome, Some(Ok(up)) if up.starts_with("lab is up")),
        "{:?}",
        p.outcome
    );
}

#[test]
fn quitting_while_a_create_runs_asks_first() {
    let mut s = wizard();
    *crate::app::test_fixtures::progress_mut(&mut s) =
        Some(crate::operation::progress::OperationProgress::start(
            crate::operation::OperationKind::Create,
            "lab",
            "create",
            "create".into(),
            crate::operation::CancelRule::RunsToItsEnd,
            None,
        ));
    assert!(act(&mut s, Action::Quit).is_empty());
    assert!(
        s.quit_question
            .as_deref()
            .unwrap()
            .contains("journal resumes")
    );
}
